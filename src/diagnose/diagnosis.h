// The diagnosis: facts in, incidents out. Pure logic over facts; nothing here
// reads the system. See DESIGN.md §1 (taxonomy) and §2 (diagnose --json).
//
// Steps: group failure facts into incidents (same report, same process or
// container, close in time or in the same input); attach context facts (limits,
// settings, GPU state) to the incidents they describe; classify each incident
// with explicit rules (classify.cc); pick the primary one (the root failure);
// advise fixes, least destructive first, and the checks that would decide
// what the evidence leaves open (advise.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/taxonomy.h"
#include "evidence/fact.h"

namespace aimem {

struct Fix {
  std::string action;
  std::string why;
};

struct EvidenceItem {
  std::string source;  // "kernel log", "PyTorch", ...
  std::string where;   // "dmesg.txt line 412"
  std::string text;
};

struct PoolState {
  std::string name;                 // "cgroup /docker/ab12", "GPU 0", "host RAM"
  std::optional<uint64_t> limit_bytes;
  std::optional<uint64_t> used_bytes;
};

// One entry of an incident's cause differential (diagnose --json `causes`).
struct CauseCandidate {
  Cause cause = Cause::unknown;
  double confidence = 0;
  std::vector<std::string> evidence;  // what in the evidence supports it
  std::string decide_with;            // the check that would tell it from the next one
};

struct Incident {
  Layer layer = Layer::unknown;
  Cause cause = Cause::unknown;
  double confidence = 0;
  std::string summary;
  std::optional<int64_t> time_us;
  std::string process;
  std::optional<int64_t> pid;
  PoolState pool;
  std::vector<EvidenceItem> evidence;
  std::vector<Fix> fixes;
  std::vector<std::string> next_checks;
  std::vector<std::string> reasons;  // why this layer/cause, for the human report
  std::vector<CauseCandidate> causes;  // ranked; the first is `cause`

  // The facts behind it (indices into the diagnosis' fact list).
  std::vector<size_t> failures;
  std::vector<size_t> context;
  int tier = 0;  // 3 memory failure, 2 look-alike, 1 exit status only
  uint64_t order = 0;  // input order of its first failure
};

struct Headroom {
  std::string pool;
  std::optional<uint64_t> capacity;
  std::optional<uint64_t> used;
  std::optional<uint64_t> available;
  std::string note;
};

struct Diagnosis {
  Layer layer = Layer::none;
  Cause cause = Cause::none;
  std::optional<double> confidence;
  std::vector<Incident> incidents;  // primary first
  std::vector<Headroom> headroom;
  std::optional<int64_t> since_us;
  bool live = false;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  std::vector<std::string> next_checks;  // when nothing was found and the client still saw a failure
  std::vector<Fact> facts;
};

struct DiagnoseOptions {
  std::optional<int> exit_code;       // what the client saw (--exit-code)
  std::optional<int64_t> since_us;    // ignore timed facts before this
  std::optional<int64_t> pid;         // --pid: only this process
  std::string cgroup;                 // --cgroup: only this cgroup subtree
  std::string unit;                   // --unit: only this systemd unit
  bool live = false;
};

Diagnosis diagnose(std::vector<Fact> facts, const DiagnoseOptions& options);


}  // namespace aimem
