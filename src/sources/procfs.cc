// /proc: meminfo (host headroom), vmstat oom_kill (kernel kills since boot,
// host-wide even inside a container), pressure/memory (PSI), and the largest
// processes by resident memory. Values in meminfo and status are in kB (KiB).
#include <dirent.h>

#include <algorithm>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "sources/live.h"
#include "sources/proc_text.h"
#include "sources/readfile.h"

namespace aimem {
std::string memory_cgroup_of(std::string_view content) {
  std::string v2;
  for (auto line : text::split(content, '\n')) {
    size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view controllers = line.substr(a + 1, b - a - 1), path = text::trim(line.substr(b + 1));
    if (controllers.empty()) {
      if (line.substr(0, a) == "0") v2 = std::string(path);
      continue;
    }
    for (auto c : text::split(controllers, ','))
      if (c == "memory") return std::string(path);
  }
  return v2;
}

ProcSummary read_proc(const std::string& root, std::optional<int64_t> pid, FactSink& sink) {
  ProcSummary s;
  const std::string proc = (root == "/" ? "" : root) + "/proc";
  if (auto mi = read_small_file(proc + "/meminfo")) {
    const proc_text::Meminfo m = proc_text::parse_meminfo(*mi);
    auto total = m.total;
    auto avail = m.available;
    if (!avail && m.free) avail = *m.free + m.cached.value_or(0) + m.buffers.value_or(0);
    if (total) {
      s.meminfo = true;
      Fact f;
      f.kind = FactKind::host_state;
      f.family = Family::procfs;
      f.where.source = proc + "/meminfo";
      f.detail = "host RAM";
      f.total = total;
      f.free = avail;
      f.text = fmt::format("MemTotal {}, MemAvailable {}", units::format_bytes(*total), avail ? units::format_bytes(*avail) : "?");
      sink.add(f);
      auto swap_total = m.swap_total, swap_free = m.swap_free;
      if (swap_total && *swap_total > 0) {
        Fact w = f;
        w.detail = "swap";
        w.total = swap_total;
        w.free = swap_free;
        w.text = fmt::format("SwapTotal {}, SwapFree {}", units::format_bytes(*swap_total), swap_free ? units::format_bytes(*swap_free) : "?");
        sink.add(std::move(w));
      }
    }
  }
  if (auto vm = read_small_file(proc + "/vmstat")) s.vmstat_oom_kills = proc_text::vmstat_field(*vm, "oom_kill");
  if (auto psi = read_small_file(proc + "/pressure/memory")) {
    const proc_text::Psi p = proc_text::parse_psi(*psi);
    s.psi_some_avg10 = p.some_avg10;
    s.psi_full_avg10 = p.full_avg10;
  }

  // Largest processes by RSS (bounded scan).
  std::vector<std::pair<uint64_t, std::string>> procs;
  if (DIR* d = ::opendir(proc.c_str())) {
    size_t seen = 0;
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      if (++seen > 200000) break;
      if (pid && std::to_string(*pid) != e->d_name) continue;
      auto st = read_small_file(proc + "/" + e->d_name + "/status", 16384);
      if (!st) continue;  // gone between listing and reading
      std::string name;
      std::optional<uint64_t> rss;
      proc_text::for_each_kv(*st, [&](std::string_view k, std::string_view v) {
        if (k == "Name") name = std::string(v);
        else if (k == "VmRSS") rss = proc_text::kib(v);
      });
      if (!rss) continue;
      procs.emplace_back(*rss, fmt::format("{} (pid {}) {}", name, e->d_name, units::format_bytes(*rss)));
    }
    ::closedir(d);
  }
  std::sort(procs.begin(), procs.end(), [](auto& a, auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < procs.size() && i < 5; ++i) s.largest.push_back(procs[i].second);
  return s;
}

}  // namespace aimem
