// One event per OOM kill. `aimem watch` hears of one kill up to three ways:
// the kernel's report in /dev/kmsg (the victim, its cgroup and the cgroup
// whose limit was hit), a cgroup's counters stepping (oom_kill in v1
// memory.oom_control or v2 memory.events, oom in v2 memory.events), read by
// a sample or right after an OOM notification (v1 eventfd, v2 inotify). Each
// was stored as an event of its own, so one kill made "2 OOM events".
//
// The ledger matches them. The kernel report is the event (it is the
// richest); a counter step is an event of its own only when no report
// explains it within `grace` (a kernel log that cannot be read, an OOM that
// killed nothing). How a report explains steps: the kernel counts the kill
// (oom_kill) in the victim's cgroup and the OOM (oom) in the cgroup whose
// limit was hit, and v2 counts both in every ancestor too (v1 only in the
// cgroup itself). So a report credits one kill to task_memcg and each of
// its ancestors and one OOM to oom_memcg and each of its ancestors; a step
// takes from those credits, and credits a step never took expire after
// `match` (a kill in an ancestor later on is a kill of its own). Counter
// steps that no report explained are stored deepest cgroup first, and each
// one explains its ancestors' steps of the same size (v2's hierarchical
// counts of the same kill). Pure: times are handed in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace aimem::watch {

// A counter step that no kernel report explained: one OOM event.
struct OomSignal {
  std::string cgroup;
  uint64_t oom_delta = 0, kill_delta = 0;  // the steps, this cgroup's own
  uint64_t oom = 0, kills = 0;             // the counters when the step was seen
  int64_t seen_us = 0;                     // when it was first seen
};

class OomLedger {
 public:
  // grace: how long a step waits for a kernel report (a few seconds where
  // the kernel log is followed; the OOM notification's own sample must have
  // shown the whole subtree's steps, else). match: how long a report's
  // credits wait for the steps (more than two sample intervals: a cgroup
  // without notifications shows its step only at the next sample).
  OomLedger(int64_t grace_us, int64_t match_us) : grace_us_(grace_us), match_us_(match_us) {}

  // A kernel OOM report (the "oom-kill:" summary's cgroups; oom_memcg is
  // empty for a global OOM) processed at now_us.
  void kernel_report(std::string_view oom_memcg, std::string_view task_memcg, int64_t now_us);
  // A cgroup's counters as read at now_us (a sample or a notification). The
  // first reading of a cgroup is its baseline; counters that went back (a
  // cgroup removed and made again) are a new baseline. True when a counter
  // stepped.
  bool counters(const std::string& cgroup, uint64_t oom, uint64_t kills, int64_t now_us);
  // The steps past their grace that no report explained, one per kill seen
  // (ancestors' steps of the same kill folded into the deepest cgroup's).
  std::vector<OomSignal> due(int64_t now_us);
  // When the next step falls due (for the loop's timer); nullopt when none waits.
  std::optional<int64_t> next_due() const;
  // Forgets the baselines of cgroups not in `present` (removed ones; waiting
  // steps stay): bounded by the cgroups there are.
  void keep_only(const std::set<std::string>& present);
  size_t pending() const { return pending_.size(); }

 private:
  struct Credit {
    uint64_t kills = 0, ooms = 0;
    int64_t until_us = 0;
  };
  // Takes up to `want` from the credits of `cgroup` (kills or ooms); what is left.
  uint64_t take(std::map<std::string, Credit>& credits, const std::string& cgroup, uint64_t want, bool kills, int64_t now_us);
  void expire(int64_t now_us);

  int64_t grace_us_, match_us_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> last_;  // cgroup -> (oom, oom_kill) last read
  std::map<std::string, OomSignal> pending_;                    // unexplained steps, by cgroup
  std::map<std::string, Credit> credits_;                       // what reports (and emitted steps) explain
};

// "/a/b/c" -> {"/a/b/c", "/a/b", "/a"}: a cgroup and its ancestors below the root.
std::vector<std::string> cgroup_and_ancestors(std::string_view cgroup);

}  // namespace aimem::watch
