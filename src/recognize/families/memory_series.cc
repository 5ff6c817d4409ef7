// Numeric series in application logs: the memory figures a service prints
// periodically (rss=..., heapUsed: ..., external=..., "memory usage: 1.2 GB",
// queueDepth=..., live threads=..., goroutines=...). One figure says little; a series that climbs without
// falling back, sample after sample, is what a leak or an accumulation looks
// like (every embedding kept, a queue that is never drained).
//
//   2024-05-02T10:00:00Z worker[311] stats rss=412MB heapUsed=210MB external=35MB queueDepth=12
//   {"level":"info","msg":"mem","rss":431234567,"heapUsed":221234567}
//   INFO memory usage: 1.21 GB (rss)           mem=1532M             RSS: 2.3 GiB
//
// Samples people take by hand read the same way:
//
//   $ ps -o etime,rss,cmd -p 20412          a header with an RSS column (KiB), then its rows:
//         09:58 2210440 ./scanner ...           the figure under RSS, row after row
//   $ while sleep 900; do ps -o rss= -p 48211; done      no header: each bare number after it
//    3921408
//   gc 600 @3602.881s 1%: ..., 2870->2931->1512 MB, 3024 MB goal, 8 P     (Go GODEBUG=gctrace=1:
//                                                         the live heap after the collection)
//
// The recognizer keeps, per key (rss, heapused, external, queuedepth, ...; at
// most kKeys), the first and last value, the largest, and how many steps rose,
// and at the end of the input reports each series that grew: at least
// kMinSamples samples (every step rising when there are only three), the last
// at least kGrowth times the first and within
// 20% of the largest, most steps rising. A flat series or a sawtooth (a GC heap
// that falls back) reports nothing. The fact is context (memory_usage with
// detail "growing ..."), attached to the incident nearest its last sample.
// A series that sat flat (within 15%) for kFlatSamples samples or more and
// then at least doubled is not a leak but one large piece of work arriving
// (a huge upload, one oversized request): memory_usage "jumped ...".
#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless | kContext;

constexpr Pattern kPatterns[] = {
    // ps: a header naming RSS, "-o rss=" without one, and the rows after them.
    {"(^|\\s)RSS(\\s|$)", kRegex | kContext},
    {"ps .*-o ?[a-z,]*rss=", kRegex | kContext},
    {"^\\s*([0-9][0-9:.\\-]*\\s+){0,4}[0-9]{4,}(\\s+\\S|\\s*$)", kRegex | kContext},
    // Go's gctrace: heap at start -> at end -> live, in MB.
    {"[0-9]+->[0-9]+->[0-9]+ MB", kRegex | kContext},
    {"(rss|heap_?used|heap_?total|external|array_?buffers|queue_?depth|queue_?size|backlog|resident|mem(ory)?(_| )?(usage|used)?|threads|goroutines)(_?[kmg]i?b|_bytes)?\"?'? ?[=:] ?\"?'? ?[0-9]",
     kCi},
};

constexpr size_t kKeys = 8;
constexpr uint64_t kMinSamples = 3;
constexpr double kGrowth = 1.3;
constexpr double kMaxDrop = 0.25;
constexpr uint64_t kFlatSamples = 3;
constexpr size_t kKept = 64;  // samples kept per series for the flat-then-jump test

struct Series {
  std::string key;
  bool bytes = false;
  double first = 0, last = 0, max = 0;
  double worst_drop = 0;  // the largest fall between two samples, as a share of the first of them
  uint64_t samples = 0, rises = 0, last_line = 0;
  std::string last_text;
  std::vector<double> kept;  // the first kKept samples
};

// How many samples from the start stay within 15% of the first, when the
// series then at least doubles past them by its end; 0 otherwise.
uint64_t flat_then_jump(const Series& x) {
  if (x.kept.size() < kFlatSamples + 1 || x.kept.size() != x.samples) return 0;
  double lo = x.kept[0], hi = x.kept[0];
  size_t k = 1;
  while (k < x.kept.size() && x.kept[k] <= 1.15 * lo && x.kept[k] >= lo / 1.15) {
    hi = std::max(hi, x.kept[k]);
    ++k;
  }
  if (k < kFlatSamples || k == x.kept.size()) return 0;
  return x.last >= 2.0 * hi ? k : 0;
}

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
  // Threads and goroutines too: each holds a stack, and a count that only
  // climbs is a leak of them ("unable to create native thread").
  static constexpr std::string_view kKnown[] = {"rss",       "heapused", "heaptotal", "external", "arraybuffers", "queuedepth",
                                                "queuesize", "backlog",  "resident",  "memory",   "threads",      "goroutines"};
  for (auto w : kKnown)
    if (k == w) return true;
  return false;
}

constexpr uint64_t kTableLines = 400;  // rows of a ps table or bare samples read after their header

bool digits(std::string_view t) { return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos; }

class MemorySeries final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink&) override {
    if (table(line)) return;
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
      // "anon-rss:", "file-rss:" (the kernel's victim line) are not a series;
      // "Status.JVM.Memory.Direct.MemoryUsed=" (a metric's last part) is.
      if (b > 0 && s[b - 1] == '-') continue;
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
        for (auto tail : {"memoryusage", "memoryused", "rss", "heapused", "threads", "goroutines"})
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

  // ps tables, bare "ps -o rss=" samples and Go gctrace lines; true when the
  // line was one of them.
  bool table(const Line& line) {
    std::string_view s = line.text;
    std::vector<std::string_view> words;
    for (size_t i = 0; i < s.size() && words.size() < 16;) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      size_t b = i;
      while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
      if (i > b) words.push_back(s.substr(b, i - b));
    }
    if (words.empty()) return false;
    if (size_t p = s.find("->"); p != std::string_view::npos && text::contains(s, " MB")) {
      // "4->4->1 MB": the third figure is the live heap.
      size_t q = s.find("->", p + 2);
      if (q != std::string_view::npos) {
        auto live = text::parse_u64(s.substr(q + 2));
        if (live) add("Go live heap", static_cast<double>(*live) * units::MiB, true, line);
        return true;
      }
    }
    for (size_t k = 0; k < words.size(); ++k) {
      if (words[k] == "RSS" && words.size() >= 2) {
        rss_column_ = k;
        table_until_ = line.number + kTableLines;
        bare_until_ = 0;
        return true;
      }
    }
    if (text::contains(s, "rss=") && text::contains(s, "ps ")) {
      bare_until_ = line.number + kTableLines;
      table_until_ = 0;
      return true;
    }
    if (line.number <= table_until_ && rss_column_ < words.size() && digits(words[rss_column_]) && digits(words[0].substr(0, 1))) {
      if (auto kib = text::parse_u64(words[rss_column_])) add("rss", static_cast<double>(*kib) * 1024.0, true, line);
      return true;
    }
    if (line.number <= bare_until_ && words.size() == 1 && digits(words[0])) {
      if (auto kib = text::parse_u64(words[0])) add("rss", static_cast<double>(*kib) * 1024.0, true, line);
      return true;
    }
    return false;
  }

  void finish(FactSink& out) override {
    for (size_t k = 0; k < used_; ++k) {
      const Series& x = series_[k];
      if (x.samples < kMinSamples || x.first <= 0) continue;
      bool grew = x.last >= kGrowth * x.first && x.last >= 0.8 * x.max && x.rises * 10 >= (x.samples - 1) * 6;
      if (x.samples < 4 && x.rises + 1 < x.samples) grew = false;
      if (x.worst_drop > kMaxDrop) grew = false;  // it falls back: a sawtooth (GC, batches), not growth
      if (x.bytes && x.last - x.first < 16.0 * units::MiB) grew = false;
      uint64_t flat = flat_then_jump(x);
      if (flat && !(x.bytes && x.last - x.first < 16.0 * units::MiB)) grew = true;
      if (!grew) continue;
      Line last{x.last_text, x.last_line, {}, source_};
      Fact f = make_fact(last, FactKind::memory_usage, Family::python);
      f.strength = 0.7f;
      auto fmt_v = [&](double v) { return x.bytes ? units::format_bytes(static_cast<uint64_t>(v)) : fmt::format("{:g}", v); };
      f.detail = flat ? fmt::format("jumped {}: flat at {} for {} samples, then {} in {} more", x.key, fmt_v(x.first), flat,
                                    fmt_v(x.last), x.samples - flat)
                      : fmt::format("growing {} from {} to {} over {} samples", x.key, fmt_v(x.first), fmt_v(x.last), x.samples);
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
    if (x->kept.size() < kKept) x->kept.push_back(value);
    x->max = std::max(x->max, value);
    ++x->samples;
    x->last_line = line.number;
    x->last_text.assign(line.text.substr(0, 300));
  }

  size_t rss_column_ = 0;
  uint64_t table_until_ = 0, bare_until_ = 0;
  std::array<Series, kKeys> series_;
  size_t used_ = 0;
  const SourceContext* source_ = nullptr;
};

}  // namespace

const RecognizerEntry kMemorySeriesEntry{
    "memory_series", Family::python, kPatterns, [] { return std::unique_ptr<Recognizer>(new MemorySeries); }};

}  // namespace aimem
