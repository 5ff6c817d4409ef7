// See proc_text.h.
#include "sources/proc_text.h"

namespace aimem::proc_text {

Psi parse_psi(std::string_view content) {
  Psi p;
  for_each_line(content, [&p](std::string_view line) {
    bool some = text::starts_with(line, "some "), full = text::starts_with(line, "full ");
    if (!some && !full) return;
    if (auto avg = text::after(line, "avg10=")) (some ? p.some_avg10 : p.full_avg10) = text::parse_double(*avg);
    if (auto total = text::after(line, "total=")) (some ? p.some_total_us : p.full_total_us) = text::parse_u64(*total);
  });
  return p;
}

Meminfo parse_meminfo(std::string_view content) {
  Meminfo m;
  for_each_kv(content, [&](std::string_view k, std::string_view v) {
    if (k == "MemTotal") m.total = kib(v);
    else if (k == "MemAvailable") m.available = kib(v);
    else if (k == "MemFree") m.free = kib(v);
    else if (k == "Cached") m.cached = kib(v);
    else if (k == "Buffers") m.buffers = kib(v);
    else if (k == "SwapTotal") m.swap_total = kib(v);
    else if (k == "SwapFree") m.swap_free = kib(v);
  });
  return m;
}

std::optional<uint64_t> vmstat_field(std::string_view vmstat, std::string_view key) {
  // A search rather than a split: vmstat has ~180 lines and the sampler
  // reads it every sample.
  size_t at = 0;
  for (;;) {
    at = vmstat.find(key, at);
    if (at == std::string_view::npos) return std::nullopt;
    const bool line_start = at == 0 || vmstat[at - 1] == '\n';
    const size_t end = at + key.size();
    if (line_start && end < vmstat.size() && vmstat[end] == ' ') return u64(vmstat.substr(end + 1, 24));
    at = end;
  }
}

}  // namespace aimem::proc_text
