// Follows the kernel log as it is written (a blocking /dev/kmsg reader with a
// timeout) and assembles each OOM-killer report, from "invoked oom-killer" to
// "Killed process", so `aimem watch` can diagnose a kill the moment it
// happens and read the cgroup's counters before the container is gone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sources/kmsg_reader.h"

namespace aimem::watch {

struct KernelOomReport {
  int64_t time_us = 0;             // wall time of the "Killed process" record
  std::vector<std::string> lines;  // the report's records, bounded (kMaxReportLines)
  std::string oom_memcg, task_memcg;  // from the "oom-kill:" summary line (empty: global OOM or old kernel)
  std::string constraint;          // CONSTRAINT_MEMCG, CONSTRAINT_NONE, ...
  std::optional<int> pid;
  std::string comm;
};

class KmsgFollower {
 public:
  static constexpr size_t kMaxReportLines = 400;
  static constexpr uint64_t kMaxRecordsPerPoll = 100000;

  // Opens ROOT/dev/kmsg; positioned after the newest record unless from_start.
  // A regular file (a capture in kmsg framing) is read from its start and then
  // followed as it grows, as `tail -f` does.
  Result<bool> open(const std::string& root, bool from_start);
  // Waits at most timeout_ms for new records, reads all that are ready, and
  // returns the OOM reports they completed.
  // poll(0) reads what is ready without waiting.
  std::vector<KernelOomReport> poll(int timeout_ms);
  // What to wait on for new records (an event loop's epoll set); -1 for a
  // capture file, which has no wakeup: read it with poll(0) at each tick.
  int wait_fd() const { return reader_.wait_fd(); }
  // Feeds one record's text (for tests and for captured files).
  std::optional<KernelOomReport> feed(std::string_view text, int64_t wall_us);
  uint64_t records() const { return records_; }

 private:
  KmsgReader reader_;
  int64_t boot_us_ = 0;
  uint64_t records_ = 0;
  bool in_report_ = false;
  KernelOomReport current_;
};

// Parses "oom-kill:constraint=...,oom_memcg=...,task_memcg=...,task=...,pid=..."
// into `report`; false when the line is not one.
bool parse_oom_summary(std::string_view line, KernelOomReport& report);

}  // namespace aimem::watch
