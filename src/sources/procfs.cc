// /proc: meminfo (host headroom), vmstat oom_kill (kernel kills since boot,
// host-wide even inside a container), pressure/memory (PSI), and the largest
// processes by resident memory. Values in meminfo and status are in kB (KiB).
#include <dirent.h>

#include <algorithm>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "sources/live.h"
#include "sources/readfile.h"

namespace aimem {
namespace {

std::optional<uint64_t> kb_field(std::string_view content, std::string_view key) {
  for (auto line : text::split(content, '\n')) {
    if (text::starts_with(line, key) && line.size() > key.size() && line[key.size()] == ':') {
      auto v = text::parse_u64(text::trim(line.substr(key.size() + 1)));
      if (v) return *v * 1024;
    }
  }
  return std::nullopt;
}

std::optional<double> psi_avg10(std::string_view content, std::string_view kind) {
  for (auto line : text::split(content, '\n')) {
    if (text::starts_with(line, kind))
      if (auto v = text::after(line, "avg10=")) return text::parse_double(*v);
  }
  return std::nullopt;
}

}  // namespace

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
    auto total = kb_field(*mi, "MemTotal");
    auto avail = kb_field(*mi, "MemAvailable");
    if (!avail) {
      auto free = kb_field(*mi, "MemFree"), cached = kb_field(*mi, "Cached"), buffers = kb_field(*mi, "Buffers");
      if (free) avail = *free + cached.value_or(0) + buffers.value_or(0);
    }
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
      auto swap_total = kb_field(*mi, "SwapTotal"), swap_free = kb_field(*mi, "SwapFree");
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
  if (auto vm = read_small_file(proc + "/vmstat")) {
    for (auto line : text::split(*vm, '\n'))
      if (text::starts_with(line, "oom_kill ")) s.vmstat_oom_kills = text::parse_u64(line.substr(9));
  }
  if (auto psi = read_small_file(proc + "/pressure/memory")) {
    s.psi_some_avg10 = psi_avg10(*psi, "some");
    s.psi_full_avg10 = psi_avg10(*psi, "full");
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
      for (auto line : text::split(*st, '\n'))
        if (text::starts_with(line, "Name:")) name = std::string(text::trim(line.substr(5)));
      auto rss = kb_field(*st, "VmRSS");
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
