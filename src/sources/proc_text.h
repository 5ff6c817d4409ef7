// Pure parsers of the /proc and cgroup files whose text more than one reader
// takes apart (the diagnosis's procfs.cc, the sampler, cgroup_memory.cc):
// bytes in, values out, testable with inline strings. Sizes in meminfo and
// status are in kB (KiB) and come out in bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/text.h"

namespace aimem::proc_text {

// f(line) for each line text::split(content, '\n') would give, in order,
// without the vector: the parsers the watch runs every sample (status,
// vmstat, memory.stat) allocated one per file read.
template <typename F>
void for_each_line(std::string_view content, F&& f) {
  for (;;) {
    const size_t at = content.find('\n');
    f(content.substr(0, at));
    if (at == std::string_view::npos) return;
    content.remove_prefix(at + 1);
  }
}

// Calls f(key, value) for each "key value" or "key: value" line (the value trimmed).
template <typename F>
void for_each_kv(std::string_view content, F&& f) {
  for_each_line(content, [&f](std::string_view line) {
    size_t sp = line.find_first_of(" \t:");
    if (sp != std::string_view::npos) f(line.substr(0, sp), text::trim(line.substr(sp + 1)));
  });
}

inline std::optional<uint64_t> u64(std::string_view s) { return text::parse_u64(text::trim(s)); }
// "123 kB" in bytes; nullopt when it is no number or would overflow.
inline std::optional<uint64_t> kib(std::string_view s) {
  auto v = u64(s);
  return v && *v <= UINT64_MAX / 1024 ? std::optional<uint64_t>(*v * 1024) : std::nullopt;
}

// A PSI file (proc/pressure/memory, a cgroup's memory.pressure):
// "some avg10=0.12 avg60=0 avg300=0 total=123" and the same for "full";
// avg10 in percent, total in microseconds stalled.
struct Psi {
  std::optional<double> some_avg10, full_avg10;
  std::optional<uint64_t> some_total_us, full_total_us;
};
Psi parse_psi(std::string_view content);

// proc/meminfo, in bytes.
struct Meminfo {
  std::optional<uint64_t> total, available, free, cached, buffers, swap_total, swap_free;
};
Meminfo parse_meminfo(std::string_view content);

// One "key value" counter of proc/vmstat.
std::optional<uint64_t> vmstat_field(std::string_view vmstat, std::string_view key);

}  // namespace aimem::proc_text
