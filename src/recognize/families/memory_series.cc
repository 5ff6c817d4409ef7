// Numeric series in application logs: the memory figures a service prints
// periodically (rss=..., heapUsed: ..., external=..., "memory usage: 1.2 GB",
// queueDepth=...). One figure says little; a series that climbs without
// falling back, sample after sample, is what a leak or an accumulation looks
// like (every embedding kept, a queue that is never drained).
//
//   2024-05-02T10:00:00Z worker[311] stats rss=412MB heapUsed=210MB external=35MB queueDepth=12
//   {"level":"info","msg":"mem","rss":431234567,"heapUsed":221234567}
//   INFO memory usage: 1.21 GB (rss)           mem=1532M             RSS: 2.3 GiB
//
// The recognizer keeps, per key (rss, heapused, external, queuedepth, ...; at
// most kKeys), the first and last value, the largest, and how many steps rose,
// and at the end of the input reports each series that grew: at least
// kMinSamples samples (every step rising when there are only three), the last
// at least kGrowth times the first and within
// 20% of the largest, most steps rising. A flat series or a sawtooth (a GC heap
// that falls back) reports nothing. The fact is context (memory_usage with
// detail "growing ..."), attached to the incident nearest its last sample.
#include <array>
#include <fmt/format.h>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless | kContext;

constexpr Pattern kPatterns[] = {
    {"(rss|heap_?used|heap_?total|external|array_?buffers|queue_?depth|queue_?size|backlog|resident|mem(ory)?(_| )?(usage|used)?)(_?[kmg]i?b|_bytes)?\"?'? ?[=:] ?\"?'? ?[0-9]",
     kCi},
};

constexpr size_t kKeys = 8;
constexpr uint64_t kMinSamples = 3;
constexpr double kGrowth = 1.3;
constexpr double kMaxDrop = 0.25;

struct Series {
  std::string key;
  bool bytes = false;
  double first = 0, last = 0, max = 0;
  double worst_drop = 0;  // the largest fall between two samples, as a share of the first of them
  uint64_t samples = 0, rises = 0, last_line = 0;
  std::string last_text;
};

bool key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ' '; }

// The canonical key: lower case, without '_' and blanks ("heap_used" = "heapUsed").
std::string canonical(std::string_view k) {
  std::string out;
  for (char c : k) {
    if (c == '_' || c == ' ') continue;
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  if (out == "mem" || out == "memoryusage" || out == "memoryused" || out == "memusage" || out == "memused") out = "memory";
  return out;
}

bool known_key(std::string_view k) {
  static constexpr std::string_view kKnown[] = {"rss", "heapused", "heaptotal", "external", "arraybuffers", "queuedepth",
                                                "queuesize", "backlog", "resident", "memory"};
  for (auto w : kKnown)
    if (k == w) return true;
  return false;
}

class MemorySeries final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink&) override {
    std::string_view s = line.text;
    size_t i = 0;
    int found = 0;
    while (i < s.size() && found < 12) {
      size_t sep = s.find_first_of("=:", i);
      if (sep == std::string_view::npos) break;
      i = sep + 1;
      // The key: letters, '_' and one inner blank before the separator, quotes allowed.
      size_t e = sep;
      while (e > 0 && (s[e - 1] == '"' || s[e - 1] == '\'' || s[e - 1] == ' ')) --e;
      size_t b = e;
      while (b > 0 && key_char(s[b - 1]) && e - b < 24) --b;
      while (b < e && s[b] == ' ') ++b;
      // "anon-rss:", "file-rss:" (the kernel's victim line) are not a series.
      if (b > 0 && (s[b - 1] == '-' || s[b - 1] == '.')) continue;
      std::string key = canonical(s.substr(b, e - b));
      // A unit in the key ("rss_kb=22418832", "heap_mb: 512").
      double key_unit = 0;
      for (auto [suffix, unit] : {std::pair<std::string_view, double>{"kb", 1024.0}, {"kib", 1024.0}, {"mb", 1048576.0},
                                  {"mib", 1048576.0}, {"gb", 1073741824.0}, {"bytes", 1.0}}) {
        if (key.size() > suffix.size() && key.ends_with(suffix)) {
          key.resize(key.size() - suffix.size());
          key_unit = unit;
          break;
        }
      }
      // "memory usage" may end a longer phrase ("Current memory usage").
      if (!known_key(key)) {
        for (auto tail : {"memoryusage", "memoryused", "rss", "heapused"})
          if (key.size() > std::string_view(tail).size() && key.ends_with(tail)) key = canonical(tail);
        if (!known_key(key)) continue;
      }
      std::string_view v = s.substr(i);
      while (!v.empty() && (v[0] == ' ' || v[0] == '"' || v[0] == '\'')) v.remove_prefix(1);
      auto num = text::parse_double(v);
      if (!num || *num < 0) continue;
      bool bytes = false;
      double value = *num;
      if (auto sized = units::parse_log_size(v)) {
        value = static_cast<double>(*sized);
        bytes = true;
      } else if (key_unit > 0) {
        value *= key_unit;
        bytes = true;
      }
      add(key, value, bytes, line);
      ++found;
    }
  }

  void finish(FactSink& out) override {
    for (size_t k = 0; k < used_; ++k) {
      const Series& x = series_[k];
      if (x.samples < kMinSamples || x.first <= 0) continue;
      bool grew = x.last >= kGrowth * x.first && x.last >= 0.8 * x.max && x.rises * 10 >= (x.samples - 1) * 6;
      if (x.samples < 4 && x.rises + 1 < x.samples) grew = false;
      if (x.worst_drop > kMaxDrop) grew = false;  // it falls back: a sawtooth (GC, batches), not growth
      if (x.bytes && x.last - x.first < 16.0 * units::MiB) grew = false;
      if (!grew) continue;
      Line last{x.last_text, x.last_line, {}, source_};
      Fact f = make_fact(last, FactKind::memory_usage, Family::python);
      f.strength = 0.7f;
      auto fmt_v = [&](double v) { return x.bytes ? units::format_bytes(static_cast<uint64_t>(v)) : fmt::format("{:g}", v); };
      f.detail = fmt::format("growing {} from {} to {} over {} samples", x.key, fmt_v(x.first), fmt_v(x.last), x.samples);
      if (x.bytes) f.usage = static_cast<uint64_t>(x.last);
      f.count = x.samples;
      out.add(std::move(f));
    }
  }

 private:
  void add(const std::string& key, double value, bool bytes, const Line& line) {
    source_ = line.source;
    Series* x = nullptr;
    for (size_t k = 0; k < used_; ++k)
      if (series_[k].key == key) x = &series_[k];
    if (!x) {
      if (used_ == kKeys) return;
      x = &series_[used_++];
      x->key = key;
      x->bytes = bytes;
      x->first = value;
    }
    if (x->samples > 0 && value > x->last) ++x->rises;
    if (x->samples > 0 && x->last > 0 && value < x->last) x->worst_drop = std::max(x->worst_drop, (x->last - value) / x->last);
    x->last = value;
    x->max = std::max(x->max, value);
    ++x->samples;
    x->last_line = line.number;
    x->last_text.assign(line.text.substr(0, 300));
  }

  std::array<Series, kKeys> series_;
  size_t used_ = 0;
  const SourceContext* source_ = nullptr;
};

}  // namespace

const RecognizerEntry kMemorySeriesEntry{
    "memory_series", Family::python, kPatterns, [] { return std::unique_ptr<Recognizer>(new MemorySeries); }};

}  // namespace aimem
