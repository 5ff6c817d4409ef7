// The heap's pair on a collector's line (gc_pairs.h). No Debian library reads
// the JVM's GC log, so this is written here.
#include "recognize/families/gc_pairs.h"

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/platform_util.h"

namespace aimem {

namespace {

// "8015K" at the front of v: bytes, with rest after the unit letter.
std::optional<uint64_t> gc_size(std::string_view v, std::string_view* rest) {
  std::string_view r;
  auto n = text::parse_u64(v, &r);
  if (!n || r.empty() || *n > (uint64_t{1} << 40)) return std::nullopt;
  const uint64_t unit = r[0] == 'K' ? units::KiB : r[0] == 'M' ? units::MiB : r[0] == 'G' ? units::GiB : 0;
  if (!unit) return std::nullopt;
  *rest = r.substr(1);
  return *n * unit;
}

// ZGC's "6418M(52%)->1884M(15%)" at `arrow`: the sizes and the share of
// the heap each is, so the capacity is the after figure over its share.
std::optional<HeapPair> zgc_pair(std::string_view s, size_t arrow) {
  if (arrow < 6 || s[arrow - 1] != ')' || s[arrow - 2] != '%') return std::nullopt;
  size_t open = s.rfind('(', arrow);
  if (open == std::string_view::npos || open < 2) return std::nullopt;
  size_t b = open - 1;  // the unit; the figure before it
  while (b > 0 && platform::is_digit(s[b - 1])) --b;
  if (b + 1 == open || (b > 0 && s[b - 1] != ' ')) return std::nullopt;
  std::string_view rest;
  auto before = gc_size(s.substr(b), &rest);
  if (!before || !text::starts_with(rest, "(")) return std::nullopt;
  auto after = gc_size(s.substr(arrow + 2), &rest);
  if (!after || !text::starts_with(rest, "(")) return std::nullopt;
  auto share = text::parse_u64(rest.substr(1), &rest);
  if (!share || *share == 0 || *share > 100 || !text::starts_with(rest, "%)")) return std::nullopt;
  return HeapPair{*before, *after, *after * 100 / *share};
}

}  // namespace

std::optional<HeapPair> heap_pair(std::string_view s) {
  std::optional<HeapPair> best;
  for (size_t arrow = s.find("->"); arrow != std::string_view::npos; arrow = s.find("->", arrow + 2)) {
    if (auto z = zgc_pair(s, arrow)) {
      if (!best || z->capacity > best->capacity) best = z;
      continue;
    }
    if (arrow < 2 || (s[arrow - 1] != 'K' && s[arrow - 1] != 'M' && s[arrow - 1] != 'G')) continue;
    size_t b = arrow - 1;  // the unit; the figure before it
    while (b > 0 && platform::is_digit(s[b - 1])) --b;
    if (b + 1 == arrow || b == 0 || (s[b - 1] != ' ' && s[b - 1] != ':' && s[b - 1] != '[')) continue;
    size_t open = s.rfind('[', b);
    if (open != std::string_view::npos && text::starts_with(s.substr(open + 1), "Metaspace")) continue;
    std::string_view rest;
    auto before = gc_size(s.substr(b), &rest);
    if (!before || !text::starts_with(rest, "->")) continue;
    auto after = gc_size(rest.substr(2), &rest);
    if (!after || !text::starts_with(rest, "(")) continue;
    auto capacity = gc_size(rest.substr(1), &rest);
    if (!capacity || !text::starts_with(rest, ")")) continue;
    if (!best || *capacity > best->capacity) best = HeapPair{*before, *after, *capacity};
  }
  return best;
}

}  // namespace aimem
