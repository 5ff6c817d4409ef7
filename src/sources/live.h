// The live host as evidence: kernel ring buffer, systemd journal, cgroup memory
// files, /proc and GPUs. Every path is read under `root` so a captured tree can
// stand in for the host (as node_exporter's --path.procfs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evidence/sink.h"
#include "evidence/text_reader.h"

namespace aimem {

struct LiveOptions {
  std::string root = "/";
  int64_t since_us = 0;
  std::string unit;    // only this systemd unit's journal and cgroup
  std::string cgroup;  // only this cgroup subtree
  std::optional<int64_t> pid;
  bool journal = true;
  bool gpus = true;
};

struct LiveReport {
  bool usable = true;                 // false: nothing at all could be read
  bool kernel_log_read = false;
  std::string kernel_log_problem;     // why not
  int kernel_log_errno = 0;           // ENOENT: a captured tree without dev/kmsg
  std::optional<uint64_t> vmstat_oom_kills;  // kernel OOM kills since boot (/proc/vmstat)
  std::vector<std::string> warnings;  // a source that could not be read, and why
  std::vector<std::string> notes;     // what was read, in one line each
};

// The kernel log and the journal are handed to `readers` (the line scanner).
LiveReport collect_live(const LiveOptions& options, FactSink& sink, const TextReaders& readers);

// The parts, each usable alone (tests point them at fixture trees).
struct KmsgResult {
  bool read = false;
  std::string problem;
  int error = 0;  // errno of the failure, 0 when read
  uint64_t records = 0;
  std::optional<int64_t> first_us;  // wall time of the oldest record read
};
KmsgResult read_kmsg(const std::string& root, std::optional<int64_t> boot_us, FactSink& sink,
                     const TextReaders& readers);

struct CgroupScan {
  bool found = false;
  int version = 0;         // 1 or 2
  std::string mount;       // where the memory controller is mounted under root
  size_t cgroups = 0;      // directories read
  size_t limited = 0;      // with a memory limit
  size_t with_oom_kills = 0;
  std::string problem;
};
// `oom_counters_are_failures`: when the kernel log could not be read, a cgroup's
// OOM-kill counter is the only sign of a kill and becomes a failure fact.
CgroupScan scan_cgroups(const std::string& root, const std::string& only_subtree, bool oom_counters_are_failures,
                        FactSink& sink);

std::optional<int64_t> boot_time_us(const std::string& root);

// A process's memory cgroup from /proc/PID/cgroup: the v1 line whose
// controllers include memory ("N:...memory...:/path"), else the v2 line
// ("0::/path"); "" when neither is there.
std::string memory_cgroup_of(std::string_view proc_pid_cgroup);

struct ProcSummary {
  bool meminfo = false;
  std::optional<uint64_t> vmstat_oom_kills;
  std::optional<double> psi_some_avg10, psi_full_avg10;
  std::vector<std::string> largest;  // "python3 (pid 12) 1.20 GiB"
};
ProcSummary read_proc(const std::string& root, std::optional<int64_t> pid, FactSink& sink);

struct JournalResult {
  bool read = false;
  std::string problem;
  uint64_t entries = 0;
};
JournalResult read_journal(const std::string& root, int64_t since_us, const std::string& unit,
                           std::optional<int64_t> skip_kernel_after_us, FactSink& sink,
                           const TextReaders& readers);

struct GpuScan {
  bool library = false;   // NVML found and initialised
  std::string problem;    // why not
  unsigned devices = 0;
};
GpuScan scan_gpus(FactSink& sink);

}  // namespace aimem
