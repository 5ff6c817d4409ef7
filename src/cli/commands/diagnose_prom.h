// aimem diagnose --prometheus URL: the post-mortem of a pod or a node from a
// central Prometheus (sources/prom_diagnose.h), through the same diagnosis.
#pragma once

#include <string>

namespace aimem {
struct Diagnosis;
}

namespace aimem::cli {

struct PromDiagnoseArgs {
  std::string url;
  std::string pod;        // NS/NAME
  std::string container;
  std::string node;
  std::string since;      // a length ("1h") back from --at, or a time
  std::string at;         // the window's end (default now)
  bool json = false;
  bool verbose = false;
};

// Exit status: 0 a diagnosis, 2 bad usage, an unusable server or nothing found.
int run_diagnose_prometheus(const PromDiagnoseArgs& args);

// The diagnosis to stdout (text, or --json), its warnings to stderr; the exit
// status. Shared by the log path (diagnose_cmd.cc, where it is defined) and
// the Prometheus path.
int print_diagnosis(Diagnosis& d, bool json, bool verbose);

}  // namespace aimem::cli
