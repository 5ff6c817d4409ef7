#include "sources/live.h"

#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "sources/process.h"

namespace aimem {

LiveReport collect_live(const LiveOptions& o, FactSink& sink, const TextReaders& readers) {
  LiveReport report;
  std::string root = o.root.empty() ? "/" : o.root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  auto boot = boot_time_us(root);

  KmsgResult kmsg = read_kmsg(root, boot, sink, readers);
  report.kernel_log_read = kmsg.read;
  report.kernel_log_problem = kmsg.problem;
  report.kernel_log_errno = kmsg.error;
  if (!kmsg.read) report.warnings.push_back(kmsg.problem);
  else report.notes.push_back(fmt::format("kernel log: {} records read{}", kmsg.records,
                                          kmsg.first_us ? " back to " + timeutil::format_human(*kmsg.first_us) : ""));
  if (!boot && kmsg.read) report.notes.push_back("boot time unknown (no btime in proc/stat): kernel lines have no wall-clock time");

  bool journal_read = false;
  if (o.journal) {
    JournalResult j = read_journal(root, o.since_us, o.unit, kmsg.read ? kmsg.first_us : std::nullopt, sink, readers);
    journal_read = j.read;
    if (j.read) report.notes.push_back(fmt::format("journal: {} entries since {}", j.entries, timeutil::format_human(o.since_us)));
    else report.notes.push_back(j.problem);
  }

  std::string subtree = o.cgroup;
  if (subtree.empty() && o.pid) {
    // The process's own memory cgroup (v1 "N:memory:/path" or v2 "0::/path").
    if (auto cg = process_memory_cgroup(root, static_cast<int>(*o.pid))) {
      subtree = *cg;
    } else {
      report.warnings.push_back(fmt::format("process {} not found", *o.pid));
    }
  }
  if (subtree.empty() && !o.unit.empty()) {
    std::string name = o.unit.find('.') == std::string::npos ? o.unit + ".service" : o.unit;
    subtree = "/system.slice/" + name;
  }
  CgroupScan cg = scan_cgroups(root, subtree, !kmsg.read, sink);
  if (cg.found)
    report.notes.push_back(fmt::format("cgroup v{} memory controller: {} cgroups read, {} with a limit, {} with OOM kills recorded", cg.version,
                                       cg.cgroups, cg.limited, cg.with_oom_kills));
  if (!cg.problem.empty()) report.notes.push_back(cg.problem);

  ProcSummary proc = read_proc(root, o.pid, sink);
  if (!proc.meminfo) report.warnings.push_back(fmt::format("cannot read {}/proc/meminfo", root == "/" ? "" : root));
  report.vmstat_oom_kills = proc.vmstat_oom_kills;
  if (proc.vmstat_oom_kills) report.notes.push_back(fmt::format("kernel OOM kills since boot (/proc/vmstat oom_kill): {}", *proc.vmstat_oom_kills));
  if (proc.psi_some_avg10 && (*proc.psi_some_avg10 > 10.0 || proc.psi_full_avg10.value_or(0) > 5.0))
    report.notes.push_back(fmt::format("memory pressure now: PSI some avg10={:.2f}% full avg10={:.2f}%", *proc.psi_some_avg10, proc.psi_full_avg10.value_or(0)));
  if (!proc.largest.empty()) {
    std::string list;
    for (const auto& p : proc.largest) list += (list.empty() ? "" : ", ") + p;
    report.notes.push_back("largest processes: " + list);
  }

  if (o.gpus) {
    GpuScan g = scan_gpus(sink);
    if (g.library) report.notes.push_back(fmt::format("NVML: {} GPU(s)", g.devices));
    else report.notes.push_back(g.problem);
  }
  report.usable = kmsg.read || cg.found || proc.meminfo || journal_read;
  if (!report.usable) report.warnings.push_back(fmt::format("nothing readable under {}: is --root a captured tree with proc/, sys/ and dev/kmsg?", root));
  return report;
}

}  // namespace aimem
