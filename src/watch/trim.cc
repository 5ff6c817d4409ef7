// See trim.h.
#include "watch/trim.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "sources/readfile.h"

namespace aimem::watch {

TrimResult trim_startup_pages() {
  TrimResult r;
  // smaps of a process with ~40 mappings is ~20 KiB; 4 MiB bounds a strange one.
  auto smaps = read_small_file("/proc/self/smaps", 4 << 20);
  if (!smaps) return r;
  struct Range {
    uintptr_t begin = 0, end = 0;
    bool candidate = false;
    uint64_t rss_kb = 0, dirty_kb = 0, anon_kb = 0;
  };
  std::vector<Range> ranges;
  for (std::string_view line : text::split(*smaps, '\n')) {
    if (line.empty()) continue;
    // A mapping's header: "START-END PERMS OFFSET DEV INODE [PATH]".
    if (size_t dash = line.find('-'); dash != std::string_view::npos && dash > 0 && dash <= 16 &&
                                      line.find_first_not_of("0123456789abcdef") == dash) {
      Range m;
      m.begin = std::strtoull(std::string(line.substr(0, dash)).c_str(), nullptr, 16);
      size_t sp = line.find(' ', dash);
      if (sp == std::string_view::npos) continue;
      m.end = std::strtoull(std::string(line.substr(dash + 1, sp - dash - 1)).c_str(), nullptr, 16);
      std::string_view perms = line.substr(sp + 1, 4);
      // File-backed (a path that is not [heap], [stack], [vdso]...), private,
      // not writable.
      size_t path = line.find('/');
      m.candidate = path != std::string_view::npos && (perms == "r-xp" || perms == "r--p");
      ranges.push_back(m);
      continue;
    }
    if (ranges.empty()) continue;
    auto field = [&](std::string_view key) -> std::optional<uint64_t> {
      if (!text::starts_with(line, key)) return std::nullopt;
      std::string_view rest = text::trim(line.substr(key.size()));
      return text::parse_u64(rest.substr(0, rest.find(' ')));
    };
    if (auto v = field("Rss:")) ranges.back().rss_kb = *v;
    else if (auto v = field("Private_Dirty:")) ranges.back().dirty_kb = *v;
    else if (auto v = field("Anonymous:")) ranges.back().anon_kb = *v;
  }
  for (const Range& m : ranges) {
    if (!m.candidate || m.dirty_kb || m.anon_kb || !m.rss_kb || m.end <= m.begin) continue;
    if (::madvise(reinterpret_cast<void*>(m.begin), m.end - m.begin, MADV_DONTNEED) == 0) {
      ++r.mappings;
      r.bytes += m.rss_kb * 1024;
    }
  }
  return r;
}

}  // namespace aimem::watch
