// A figure that climbs across lines of one shape (template_series.h).
// Hand-written: the key is the line with its figures masked, which no
// library's tokenizer gives; one pass, no regex, bounded state.
#include "recognize/template_series.h"

#include <algorithm>
#include <array>
#include <optional>
#include <cctype>
#include <unordered_map>

#include "core/text.h"
#include "core/units.h"

namespace aimem {
namespace {

constexpr size_t kMaxLine = 400;     // longer lines are prose or dumps, not samples
constexpr size_t kMaxSlots = 12;     // more figures on a line: a table of many columns
constexpr size_t kMaxKeys = 4096;    // distinct shapes kept; later new shapes are not
constexpr size_t kMinSamples = 3;
constexpr double kGrowth = 1.5;      // the last sample against the first
constexpr size_t kMaxFound = 4;

// Words of a line whose sizes grow by design, or whose growth is another
// cause than memory kept: a load or a transfer in progress, a longer context
// or a larger batch, a disk's figures.
bool by_design(std::string_view key) {
  static constexpr std::string_view kWords[] = {"load",  "download", "upload",  "progress", "fetch", "extract", "token",
                                                "prompt", "context", "ctx",     "seq",      "batch", "request", "disk",
                                                "file",  "wrote",    "written", "saving",   "saved", "checkpoint", "/s",
                                                "speed", "copied",   "transfer", "read ",   "eta",   "%|",       "it/s",    "prefill",
                                                "->"};
  return std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return text::icontains(key, w); });
}

// A free or available figure: it falls as memory is used, and falls by
// design while a program loads and reserves (an engine's "avail mem=" before
// each pool): not read as growth.
bool names_free(std::string_view before) {
  return text::icontains(before, "free") || text::icontains(before, "avail") || text::icontains(before, "remaining") ||
         text::icontains(before, "headroom");
}

// A peak only rises ("max_memory_allocated", "Peak", "maxrss", "high water").
bool names_peak(std::string_view before) {
  return text::icontains(before, "peak") || text::icontains(before, "max") || text::icontains(before, "highest") ||
         text::icontains(before, "hwm") || text::icontains(before, "high water");
}

// A figure as bytes: a paste's absurd figure ("9.9e35 GB") is held at the
// largest, not converted past what 64 bits hold.
uint64_t bytes_of(double v) { return v <= 0 ? uint64_t{0} : v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v); }

struct Slot {
  double first = 0, prev = 0, last = 0, max = 0;
  size_t ups = 0;
  bool sized = true;  // every sample had a unit
};

struct Group {
  std::string key;
  uint64_t first_line = 0, last_line = 0;
  std::string_view last_text;
  size_t samples = 0;
  size_t slots = 0;
  bool skipped = false;  // a line of it was the caller's to skip
  std::array<Slot, kMaxSlots> slot{};
  std::array<size_t, kMaxSlots> key_pos{};  // where each slot's mask is in the key
};

// One line's figures: `key` the line with them masked, each figure in bytes
// where a unit follows it. Nothing when the line is no sample (too many
// figures, none, or too short a shape).
struct Masked {
  size_t n = 0;
  std::array<double, kMaxSlots> values{};
  std::array<bool, kMaxSlots> sized{};
  std::array<size_t, kMaxSlots> pos{};  // where each figure's mask is in the key
};

bool mask(std::string_view line, std::string& key, Masked& m) {
  key.clear();
  m.n = 0;
  for (size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (c == '0' && i + 1 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X')) {  // an address: masked, no figure
      i += 2;
      while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
      key += '@';
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      key += c;
      ++i;
      continue;
    }
    std::string_view rest;
    auto v = text::parse_double(line.substr(i), &rest);
    size_t end = line.size() - rest.size();
    if (!v || end <= i) end = i + 1;
    // Thousands grouped by commas ("9,633,908"): one figure.
    if (auto g = text::parse_grouped_u64(line.substr(i), &rest); g && line.size() - rest.size() > end) {
      v = static_cast<double>(*g);
      end = line.size() - rest.size();
    }
    // A figure glued to a word ("rp-node3", "v2") is part of a name.
    const bool in_word = i > 0 && std::isalpha(static_cast<unsigned char>(line[i - 1]));
    if (in_word) {
      key += '#';
    } else {
      if (m.n == kMaxSlots) return false;
      // A size unit right after the figure, as logs' units are read ("402G",
      // "1711.47MB", "5214 M,"); a letter after it makes it a word ("3 GPUs").
      std::string_view after_unit;
      const double mult = units::log_unit(line.substr(end), &after_unit).value_or(0);
      m.pos[m.n] = key.size();
      m.values[m.n] = v.value_or(0) * (mult > 0 ? mult : 1);
      m.sized[m.n] = mult > 0;
      ++m.n;
      key += mult > 0 ? "#U" : "#";
      if (mult > 0) end = line.size() - after_unit.size();
    }
    i = end;
  }
  return m.n > 0 && key.size() >= 4;
}

// A line's figures as the next sample of its shape's group.
void add_sample(Group& g, const Masked& m, uint64_t line_no, std::string_view line) {
  for (size_t k = 0; k < g.slots; ++k) {
    Slot& s = g.slot[k];
    const double v = m.values[k];
    if (g.samples == 0) s.first = s.max = v;
    else s.ups += v > s.prev;
    s.prev = s.last = v;
    s.max = std::max(s.max, v);
    s.sized = s.sized && m.sized[k];
  }
  ++g.samples;
  g.last_line = line_no;
  g.last_text = line;
}

// The group's first sized figure that climbed (template_series.h), if any.
std::optional<TemplateSeries> climb(const Group& g) {
  if (g.samples < kMinSamples || g.skipped || by_design(g.key)) return std::nullopt;
  const size_t steps = g.samples - 1;
  for (size_t k = 0; k < g.slots; ++k) {
    const Slot& s = g.slot[k];
    if (!s.sized || s.first <= 0) continue;
    std::string_view before = std::string_view(g.key).substr(g.key_pos[k] >= 24 ? g.key_pos[k] - 24 : 0,
                                                               g.key_pos[k] >= 24 ? 24 : g.key_pos[k]);
    if (names_free(before) || names_peak(before)) continue;
    if (s.ups * 5 < steps * 4 || s.last < kGrowth * s.first || s.last < 0.8 * s.max) continue;
    TemplateSeries t;
    t.key = g.key.substr(0, 80);
    t.first_line = g.first_line;
    t.last_line = g.last_line;
    t.last_text = std::string(g.last_text);
    t.first = bytes_of(s.first);
    t.last = bytes_of(s.last);
    t.samples = g.samples;
    return t;
  }
  return std::nullopt;
}

}  // namespace

std::vector<TemplateSeries> template_series(std::string_view text, const std::function<bool(uint64_t)>& skip_line) {
  std::unordered_map<std::string, size_t> index;
  std::vector<Group> groups;
  std::string key;
  Masked m;
  uint64_t line_no = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(start, nl - start);
    ++line_no;
    start = nl + 1;
    if (line.empty() || line.size() > kMaxLine || !mask(line, key, m)) continue;
    auto it = index.find(key);
    if (it == index.end()) {
      if (groups.size() == kMaxKeys) continue;
      it = index.emplace(key, groups.size()).first;
      Group g;
      g.key = key;
      g.first_line = line_no;
      g.slots = m.n;
      for (size_t k = 0; k < m.n; ++k) g.key_pos[k] = m.pos[k];
      groups.push_back(std::move(g));
    }
    Group& g = groups[it->second];
    g.skipped = g.skipped || (skip_line && skip_line(line_no));
    add_sample(g, m, line_no, line);
  }
  std::vector<TemplateSeries> out;
  for (const Group& g : groups) {
    if (auto t = climb(g)) out.push_back(std::move(*t));
    if (out.size() == kMaxFound) break;
  }
  return out;
}

}  // namespace aimem
