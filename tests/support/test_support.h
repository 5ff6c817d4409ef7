// Helpers shared by tests: diagnose inline text, run the real binary.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/result.h"
#include "diagnose/diagnosis.h"

namespace aimem::test {

// The binary under test is built like the test itself: `make test` runs the
// release build users get; `make test-sanitize` the same suite under ASan and
// UBSan. The sanitizers change what a memory or time bound can promise: ASan
// keeps shadow memory (an eighth of what is touched), redzones around every
// block and a quarantine of freed blocks (256 MiB by default), so an input
// the release binary reads in 20 MiB peaks near 200 MiB; and it runs several
// times slower. A test of aimem's own bounds asserts the release figure and,
// under a sanitizer, the scaled one below: still far under the unbounded
// growth each test was written against (GBs), so a regression is still caught
// there, and the exact promise is held by `make test`.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif
// The memory ceiling a bound of `release` bytes becomes in this build.
inline constexpr uint64_t memory_bound(uint64_t release) { return kSanitized ? release * 6 : release; }
// The wall-clock bound `release` seconds becomes in this build.
inline constexpr double time_bound(double release) { return kSanitized ? release * 3 : release; }

// Facts from one in-memory input.
std::vector<Fact> facts_of(const std::string& text, const std::string& name = "input.log");
// Facts of one kind from one in-memory input.
std::vector<Fact> facts_of_kind(const std::string& text, FactKind kind);
// The facts of `kind` that name `cause` (a rollout's or a leftover copy's deployment_overlap).
std::vector<Fact> facts_of_kind(const std::string& text, FactKind kind, Cause cause);
// Diagnosis of in-memory inputs (each a separate input).
Diagnosis diagnose_texts(const std::vector<std::string>& texts, const DiagnoseOptions& options = {});
Diagnosis diagnose_text(const std::string& text, const DiagnoseOptions& options = {});
// Every incident's reasons, a line each: what a test searches for the wording of a verdict.
std::string reason_text(const Diagnosis& d);

struct RunResult {
  int status = -1;  // exit status, or 128+signal
  std::string out;
  std::string err;
  int signal = 0;             // the signal that ended the child, if one did
  // The child's peak resident set (VmHWM, read every 20 ms while it runs; -1
  // if never read). Growth in its last 20 ms would be missed.
  int64_t peak_rss_kb = -1;
  bool timed_out = false;     // killed at timeout_s
  bool killed_for_memory = false;  // killed by the watch of RunOptions::kill_above_rss
};
// Runs argv (argv[0] a path) with optional stdin text and extra environment.
RunResult run(const std::vector<std::string>& argv, const std::string& stdin_text = {},
              const std::vector<std::string>& env = {}, int timeout_s = 60);

struct RunOptions {
  std::string stdin_text;
  std::vector<std::string> env;
  int timeout_s = 60;
  // Kill the child (SIGKILL) once its resident set passes this many bytes
  // (read from /proc every 20 ms): a test of a memory bound must not take the
  // machine down when the bound does not hold. 0: no watch.
  uint64_t kill_above_rss = 0;
  // Start the child inside this cgroup v1 directory (its pid written to
  // cgroup.procs before exec, through /bin/sh). "" none.
  std::string cgroup;
};
RunResult run(const std::vector<std::string>& argv, const RunOptions& options);
RunResult run_aimem(const std::vector<std::string>& args, const std::string& stdin_text = {},
                    const std::vector<std::string>& env = {});

std::string source_dir();
std::string read_file(const std::string& path);
// A fresh temporary directory under /tmp, removed with what it holds when the
// test process that made it exits.
std::string temp_dir(const std::string& tag);
// A reason TaskRuns::open gave that is the machine's, not aimem's: BPF not
// permitted, no kernel BTF, no libbpf1. Tests of the task iterator skip then.
bool bpf_refused(const std::string& why);

// A TCP socket bound to 127.0.0.1 on a port the kernel chose (written to
// *port), not listening yet; -1 on failure. The tests' servers, silent peers
// and refused ports start from it.
int bound_loopback_socket(int* port);
void write_file(const std::string& path, const std::string& content);

// The value of `r`; when it holds an error, the test fails with the error's
// message and a default value (an empty pointer) comes back.
template <typename T>
T take(Result<T> r) {
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return T{};
  }
  return std::move(*r);
}

// The message of `r`'s error; "" when it holds a value.
template <typename T>
std::string error_of(const Result<T>& r) {
  return r ? std::string() : r.error().message;
}

}  // namespace aimem::test
