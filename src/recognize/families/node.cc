// Node.js / V8 heap failures (the messages of V8's src/heap/heap.cc and Node's
// src/api/environment.cc; flags: https://nodejs.org/api/cli.html#--max-old-space-sizesize-in-mib).
//
// V8 aborts with one line naming where the allocation failed and which pool:
//   FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
//   FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory
//   FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory
//   FATAL ERROR: MarkCompactCollector: young object promotion failed Allocation failed - JavaScript heap out of memory
//   FATAL ERROR: Zone Allocation failed - process out of memory          (not the JS heap)
//   # Fatal javascript OOM in <location>  /  # Fatal process OOM in <location>   (embedders without a callback)
//   # Fatal JavaScript out of memory: <location>  /  # Fatal process out of memory: <location>   (newer V8, Deno)
//   FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - process out of memory   (V8 before Node 7 and
//   Fatal error in V8: CALL_AND_RETRY_LAST Allocation failed - process out of memory   old Electron: the heap)
//   [3214:0630/150627.236752:ERROR:v8_initializer.cc(753)] V8 javascript OOM (MarkCompactCollector: young object
//       promotion failed).                     Chromium and Electron's renderers (v8_initializer's OOM callback);
//   ... V8 process OOM (Oilpan: CagedHeap reservation.).                 "process" when it is not the heap
//   Error [ERR_WORKER_OUT_OF_MEMORY]: Worker terminated due to reaching memory limit: JS heap out of memory
//                                        a worker_threads Worker at its heap limit (its resourceLimits, or
//                                        the process's): the JavaScript heap
//   FATAL ERROR: Scavenger: semi-space copy                             (V8 before Node 7: the
//    Allocation failed - process out of memory                            scavenger could not copy or
//                                                                         promote a survivor: the heap,
//                                                                         whichever line the location is on)
// Otherwise "process out of memory" means V8 could not get memory from the OS (zone,
// semi-space commit, code range): that is the host or the container, not the
// heap limit. "MemoryChunk allocation failed" is labelled JavaScript by V8 but
// is the OS refusing to map a chunk, so it is read the same way.
//
// Before the abort V8 prints the last GCs, one or more per line (the real
// output of Node 20 runs two entries together on one line):
//   <--- Last few GCs --->
//   [398:0x58e8740]   191182 ms: Mark-sweep 949.5 (965.9) -> 948.3 (965.9) MB, 1464.6 / 0.0 ms ...
//   [6904:0000029E16A50000]  1889696 ms: Mark-Compact (reduce) 2045.8 (2050.3) -> 2042.3 (2046.8) MB, pooled: 0.0 MB, ...
// "N ms" is the time since the isolate started and the parenthesised figures
// are the committed heap in MB (V8's MB are MiB). The largest time becomes
// uptime_at_failure_s and the largest committed size heap_limit of the failure
// that follows: a heap that fills after half an hour is accumulation, one that
// fills in seconds is a limit below the work's need.
//
// `--max-old-space-size=N` (MiB) and `--max-old-space-size-percentage=P` in a
// command line or NODE_OPTIONS are runtime settings (context).
//
// A one-shot build, type check or lint run by a bundler, compiler or linter
// on V8 (webpack, vite, rollup, tsc, next/ng/nuxt/gatsby/umi build,
// react-scripts build, `npm run build`, eslint) is context too: a runtime_setting "build: <tool>", the first one
// seen. Its work is bounded, so a heap that fills at V8's default ceiling
// while it runs says the default is below what the build needs.
#include <algorithm>
#include <cctype>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Allocation failed - "},
    {"JavaScript heap out of memory"},
    {"Fatal javascript OOM in", kCaseless},
    {"Fatal process OOM in", kCaseless},
    {"Fatal JavaScript out of memory", kCaseless},
    {"Fatal process out of memory", kCaseless},
    {"V8 javascript OOM (", kCaseless},
    {"V8 process OOM (", kCaseless},
    {"Worker terminated due to reaching memory limit"},
    {"ERR_WORKER_OUT_OF_MEMORY"},
    {"Last few GCs", kContext},
    {"semi-space copy", kContext},
    {"promotion failed", kContext},
    {" ms: Mark-", kContext},
    {" ms: Scavenge", kContext},
    {" ms: Minor ", kContext},
    {"max-old-space-size", kContext},
    {"max_old_space_size", kContext},
    {"([Ww]ebpack|vite|rollup|tsc|react-scripts|esbuild|eslint)\\b|(next|ng|nuxt|gatsby|parcel|storybook|vue-cli-service|nx|turbo|umi|astro|docusaurus|vitepress) build|(npm|yarn|pnpm) (run )?build|building for production",
     kRegex | kContext},
};

// Build tools, as a command line or the tool's own banner names them.
constexpr std::string_view kBuildTools[] = {"webpack",     "vite build", "building for production",      "rollup",        "tsc",
                                            "next build", "ng build",    "nuxt build",    "gatsby build",
                                            "parcel build", "storybook build", "react-scripts build", "vue-cli-service build",
                                            "npm run build", "yarn build", "yarn run build", "pnpm build", "pnpm run build",
                                            "nx build", "turbo build", "turbo run build", "esbuild", "umi build",
                                            "Compiling Webpack", "astro build", "docusaurus build", "vitepress build",
                                            // A linter or type checker over the whole tree: bounded, one-shot work too.
                                            "eslint", "vue-tsc"};

// Locations that V8 reports as a JavaScript OOM but that are the OS refusing memory.
constexpr std::string_view kOsLocations[] = {"MemoryChunk allocation failed", "Committing semi space", "CodeRange",
                                             "virtual memory", "NewSpace::Rebalance"};

struct Trace {
  uint64_t last_line = 0;
  double max_ms = -1;
  double max_committed_mb = -1;
  std::optional<int64_t> pid;
  // The "<--- Last few GCs --->" heading: where the report starts.
  uint64_t header_line = 0;
  std::string header_text;
  const SourceContext* source = nullptr;
};

class Node final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "Last few GCs")) {
      trace_ = Trace{};
      trace_.last_line = trace_.header_line = line.number;
      trace_.header_text.assign(s.substr(0, 120));
      trace_.source = line.source;
      return;
    }
    if (text::contains(s, " ms: ") && parse_gc(s, line.number)) return;
    if (text::contains(s, "max-old-space-size") || text::contains(s, "max_old_space_size")) setting(line, out);
    if (!build_seen_) build(line, out);
    if (heap_location(s) && !text::contains(s, "Allocation failed")) heap_location_line_ = line.number;
    fatal(line, out);
  }

  // A location that names the heap's own collector failing to place a
  // survivor ("Scavenger: semi-space copy", "young object promotion failed"):
  // the heap was full, whatever V8 called the failure.
  static bool heap_location(std::string_view s) { return text::contains(s, "semi-space copy") || text::contains(s, "promotion failed"); }
  uint64_t heap_location_line_ = 0;

  // V8 prints its last collections ("<--- Last few GCs --->", then
  // "Mark-Compact 2047.5 (2083.2) -> 2046.9 (2083.7) MB, ...") only when the
  // heap has run out, just before its FATAL line. A paste cut before that
  // line still shows the failure: the heap at its ceiling.
  void finish(FactSink& out) override {
    if (!trace_.header_line || trace_.max_committed_mb <= 0 || last_fatal_ >= trace_.header_line) return;
    Line at{trace_.header_text, trace_.header_line, {}, trace_.source};
    Fact f = make_fact(at, FactKind::js_heap_oom, Family::node);
    f.layer = Layer::js_heap;
    f.strength = 0.8f;
    f.detail = "V8's report of its last collections, printed when the heap ran out (the FATAL line is not in the evidence)";
    f.heap_limit = static_cast<uint64_t>(trace_.max_committed_mb * static_cast<double>(units::MiB));
    if (trace_.max_ms >= 0) f.uptime_at_failure_s = trace_.max_ms / 1000.0;
    f.pid = trace_.pid;
    out.add(std::move(f));
  }

 private:
  Trace trace_;
  uint64_t last_fatal_ = 0;
  bool build_seen_ = false;

  void build(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    for (std::string_view tool : kBuildTools) {
      size_t p = s.find(tool);
      if (p == std::string_view::npos) continue;
      // A word of its own, not inside another ("rollups", "tscd", "my-webpack").
      auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
      if (p > 0 && word_char(s[p - 1])) continue;
      if (p + tool.size() < s.size() && word_char(tool.back()) && std::isalnum(static_cast<unsigned char>(s[p + tool.size()]))) continue;
      if (guards::is_advice_line(s)) return;
      build_seen_ = true;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::node);
      f.detail = "build: " + std::string(tool);
      out.add(std::move(f));
      return;
    }
  }

  // Reads every "<ms> ms: <kind> A (B) -> C (D) MB" entry on the line.
  bool parse_gc(std::string_view s, uint64_t number) {
    bool any = false;
    size_t pos = 0;
    while ((pos = s.find(" ms: ", pos)) != std::string_view::npos) {
      // The time: digits right before " ms: ".
      size_t end = pos, b = pos;
      while (b > 0 && (platform::is_digit(s[b - 1]) || s[b - 1] == '.')) --b;
      std::string_view rest = s.substr(pos + 5);
      pos += 5;
      if (b == end) continue;
      auto ms = text::parse_double(s.substr(b, end - b));
      if (!ms) continue;
      if (!(text::starts_with(rest, "Mark") || text::starts_with(rest, "Scavenge") || text::starts_with(rest, "Minor")))
        continue;
      // "A (B) -> C (D) MB" within the entry.
      std::string_view entry = rest.substr(0, std::min<size_t>(rest.size(), 160));
      size_t arrow = entry.find(" -> ");
      if (arrow == std::string_view::npos) continue;
      double committed = -1;
      size_t before = entry.substr(0, arrow).rfind('(');   // "A (B)": the last '(' before the arrow
      size_t after = entry.find('(', arrow);               // "C (D)": the first '(' after it
      for (size_t open : {before, after}) {
        if (open == std::string_view::npos) continue;
        std::string_view after_num;
        if (auto v = text::parse_double(entry.substr(open + 1), &after_num); v && text::starts_with(after_num, ")"))
          committed = std::max(committed, *v);
      }
      if (committed < 0) continue;
      if (trace_.max_ms >= 0 && number > trace_.last_line + 200) trace_ = Trace{};  // an older, unrelated trace
      // "[pid:0xisolate]" before the time.
      size_t from = b > 64 ? b - 64 : 0;  // bounded: a hostile line can hold many entries
      if (size_t open = s.substr(from, b - from).rfind('['); open != std::string_view::npos) {
        if (auto pid = text::parse_i64(s.substr(from + open + 1)); pid && *pid > 0) trace_.pid = *pid;
      }
      trace_.max_ms = std::max(trace_.max_ms, *ms);
      trace_.max_committed_mb = std::max(trace_.max_committed_mb, committed);
      trace_.last_line = number;
      any = true;
    }
    return any;
  }

  void setting(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = s.find("max-old-space-size");
    if (p == std::string_view::npos) p = s.find("max_old_space_size");
    std::string_view rest = s.substr(p + 18);
    bool percentage = text::starts_with(rest, "-percentage") || text::starts_with(rest, "_percentage");
    if (percentage) rest = rest.substr(11);
    if (rest.empty() || (rest[0] != '=' && rest[0] != ' ')) return;
    auto v = text::parse_double(rest.substr(1));
    if (!v || *v <= 0 || *v >= 1e13) return;  // past what 64 bits of bytes hold: no setting
    Fact f = make_fact(line, FactKind::runtime_setting, Family::node);
    if (percentage) {
      f.ratio = *v / 100.0;
      f.detail = "max-old-space-size-percentage";
    } else {
      f.heap_limit = static_cast<uint64_t>(*v * static_cast<double>(units::MiB));
      f.detail = "max-old-space-size";
    }
    out.add(std::move(f));
  }

  void fatal(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    bool js = false, os = false;
    size_t at = std::string_view::npos;
    std::string_view location;
    if (size_t p = s.find("Allocation failed - "); p != std::string_view::npos) {
      std::string_view what = s.substr(p + 20);
      if (text::starts_with(what, "JavaScript heap out of memory")) js = true;
      else if (text::starts_with(what, "process out of memory")) os = true;
      else return;
      at = p;
      size_t fe = s.rfind("FATAL ERROR:", p);
      if (fe != std::string_view::npos) location = text::trim(s.substr(fe + 12, p - fe - 12));
      // V8 before Node 7 (and the Chromium of Electron then) said "process
      // out of memory" for the heap limit too: CALL_AND_RETRY is the heap's
      // allocation retry, so it names the JavaScript heap in either wording.
      if (os && text::contains(s.substr(0, p), "CALL_AND_RETRY")) js = true, os = false;
      // The collector's location, on this line or the one above it.
      if (os && (heap_location(s.substr(0, p)) || (heap_location_line_ && heap_location_line_ + 1 == line.number))) js = true, os = false;
    } else if (size_t q = text::ifind(s, "Fatal javascript OOM in"); q != std::string_view::npos) {
      js = true, at = q, location = text::trim(s.substr(q + 23));
    } else if (size_t q2 = text::ifind(s, "Fatal JavaScript out of memory"); q2 != std::string_view::npos) {
      js = true, at = q2, location = text::trim(platform::skip(s.substr(q2 + 30), ": "));
    } else if (size_t q3 = text::ifind(s, "Fatal process OOM in"); q3 != std::string_view::npos) {
      os = true, at = q3, location = text::trim(s.substr(q3 + 20));
    } else if (size_t q4 = text::ifind(s, "Fatal process out of memory"); q4 != std::string_view::npos) {
      os = true, at = q4, location = text::trim(platform::skip(s.substr(q4 + 27), ": "));
    } else if (size_t q6 = text::ifind(s, "V8 javascript OOM ("); q6 != std::string_view::npos) {
      js = true, at = q6, location = text::trim(text::take_until(s.substr(q6 + 19), ")"));
    } else if (size_t q7 = text::ifind(s, "V8 process OOM ("); q7 != std::string_view::npos) {
      os = true, at = q7, location = text::trim(text::take_until(s.substr(q7 + 16), ")"));
    } else if (size_t q5 = s.find("JavaScript heap out of memory"); q5 != std::string_view::npos) {
      js = true, at = q5;
    } else if (size_t q8 = s.find("Worker terminated due to reaching memory limit"); q8 != std::string_view::npos) {
      js = true, at = q8, location = "a worker thread's heap limit (resourceLimits, ERR_WORKER_OUT_OF_MEMORY)";
    } else if (size_t q9 = s.find("ERR_WORKER_OUT_OF_MEMORY"); q9 != std::string_view::npos) {
      js = true, at = q9, location = "a worker thread's heap limit (resourceLimits, ERR_WORKER_OUT_OF_MEMORY)";
    }
    if (!js && !os) return;
    // V8 prints "# Fatal ..." itself; the "# " is its frame, not a comment.
    std::string_view judged = s;
    size_t lead = s.find_first_not_of(" \t");
    if (lead != std::string_view::npos && text::starts_with(s.substr(lead), "# ")) {
      judged = s.substr(lead + 2);
      at -= lead + 2;
    }
    if (guards::is_mention(judged, at, 20)) return;
    if (last_fatal_ && line.number <= last_fatal_ + 6) return;  // one abort, printed twice
    for (std::string_view l : kOsLocations)
      if (text::contains(location, l)) os = true, js = false;

    Fact f = make_fact(line, FactKind::js_heap_oom, Family::node);
    f.layer = js ? Layer::js_heap : Layer::host_ram;
    f.strength = js ? 0.95f : 0.85f;
    f.detail = std::string(location.substr(0, 80));
    if (f.detail.empty()) f.detail = js ? "JavaScript heap out of memory" : "process out of memory";
    if (trace_.last_line && line.number >= trace_.last_line && line.number - trace_.last_line <= 200) {
      if (trace_.max_ms >= 0) f.uptime_at_failure_s = trace_.max_ms / 1000.0;
      if (trace_.max_committed_mb > 0 && js)
        f.heap_limit = static_cast<uint64_t>(trace_.max_committed_mb * static_cast<double>(units::MiB));
      f.pid = trace_.pid;
      trace_ = Trace{};
    }
    last_fatal_ = line.number;
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kNodeEntry{"node", Family::node, kPatterns, [] { return std::unique_ptr<Recognizer>(new Node); }};

}  // namespace aimem
