// Helpers shared by tests: diagnose inline text, run the real binary.
#pragma once

#include <string>
#include <vector>

#include "diagnose/diagnosis.h"

namespace aimem::test {

// Facts from one in-memory input.
std::vector<Fact> facts_of(const std::string& text, const std::string& name = "input.log");
// Facts of one kind from one in-memory input.
std::vector<Fact> facts_of_kind(const std::string& text, FactKind kind);
// Diagnosis of in-memory inputs (each a separate input).
Diagnosis diagnose_texts(const std::vector<std::string>& texts, const DiagnoseOptions& options = {});
Diagnosis diagnose_text(const std::string& text, const DiagnoseOptions& options = {});

struct RunResult {
  int status = -1;  // exit status, or 128+signal
  std::string out;
  std::string err;
};
// Runs argv (argv[0] a path) with optional stdin text and extra environment.
RunResult run(const std::vector<std::string>& argv, const std::string& stdin_text = {},
              const std::vector<std::string>& env = {}, int timeout_s = 60);
RunResult run_aimem(const std::vector<std::string>& args, const std::string& stdin_text = {},
                    const std::vector<std::string>& env = {});

std::string source_dir();
std::string read_file(const std::string& path);
// A fresh temporary directory, removed by the caller or left in /tmp.
std::string temp_dir(const std::string& tag);
// A reason TaskRuns::open gave that is the machine's, not aimem's: BPF not
// permitted, no kernel BTF, no libbpf1. Tests of the task iterator skip then.
bool bpf_refused(const std::string& why);

// A TCP socket bound to 127.0.0.1 on a port the kernel chose (written to
// *port), not listening yet; -1 on failure. The tests' servers, silent peers
// and refused ports start from it.
int bound_loopback_socket(int* port);
void write_file(const std::string& path, const std::string& content);

}  // namespace aimem::test
