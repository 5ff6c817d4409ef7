// The generic limit reader: a memory limit reported exceeded, in words no
// family knows. Platforms, CI services, job runners and worker pools each
// print their own sentence when they stop a process at its memory cap; the
// families read the ones collected so far (YARN, Slurm, Heroku, Cloud Run,
// Lambda, HTCondor, Dask, Ray, ...). An unseen one still says three things in
// one clause, whatever its wording:
//
//   a memory word    memory, mem, RSS, RAM, resident, working set (or one token: memory_limit, mem_limit)
//   a limit word     limit, quota, budget, cap, threshold, allowance, ceiling, maximum (or "max" right
//                    before the memory word: PM2's "exceeds --max-memory-restart value")
//   that it was passed:
//     a verb         exceeded, exceeds, over, above, reached, hit, surpassed, beyond, breached
//     arithmetic     "4211MB > 4096MB", "used 2.1 GB of 2 GB", "(155256KiB / 150000KiB)": the use at the cap
//
//   Container 'Build' exceeded memory limit.                                       (Bitbucket Pipelines)
//   Process: Worker_10 (PID: 139) killed because it exceeded the memory limit: 2147483648.   (plaso's worker pool)
//   worker-3 terminated: memory usage 4096MB exceeds limit 4000MB
//   The build was terminated because it used more than 7.5 GB of memory.
//
// and it reports an event: something was killed, terminated, stopped, held,
// failed, or the line is an error. A warning that use is near a cap, a
// setting ("memory limit: 2GiB"), a rule ("must not exceed the memory
// limit"), a prediction ("would exceed") or a worker recycled by design
// (Celery's max-memory-per-child, a queue consumer's --memory-limit logged at
// INFO) is no failure.
//
// Who enforced the cap is the layer: an application's own worker pool or
// watchdog (the line names a worker, a supervisor, a nanny, a monitor) is a
// user-space killer; a pod a Kubernetes limit; an accelerator a device cap;
// a database's cap on one query or operator no layer (the program's own);
// anything else a limit outside Kubernetes (container_limit: a CI container,
// a job, a platform's instance). Facts carry Family::generic, so the
// scanner's ShadowingSink drops them wherever a family read the same failure.
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless | kCompanion;

// The gate of this reader: a memory word and a limit word near each other, or
// "more than N of memory". The clause test is in on_line.
constexpr Pattern kPatterns[] = {
    {"(memory|\\bmem|rss|\\bram\\b|resident|working.set)[^;\\n]{0,40}(limit|quota|budget|\\bcap\\b|threshold|allowance|ceiling|maximum)", kCi},
    {"(limit|quota|budget|\\bcap\\b|threshold|allowance|ceiling|maximum)[^;\\n]{0,24}(memory|\\bmem\\b|rss|\\bram\\b)", kCi},
    {"more than [0-9.]+ ?[kmgt]i?b of (memory|ram)", kCi},
    // A flag that names the cap in two words: PM2's "--max-memory-restart".
    {"max[-_ ]memory", kCi},
};

struct Word {
  std::string text;  // lower case
  size_t at = 0;     // offset in the line
  bool number = false;
};

bool any_of(std::string_view w, std::initializer_list<std::string_view> set) {
  for (auto x : set)
    if (w == x) return true;
  return false;
}

// The line as lower-case words (letters, digits, '_'), at most kMaxWords.
constexpr size_t kMaxWords = 96;
std::vector<Word> words_of(std::string_view s) {
  std::vector<Word> out;
  size_t i = 0;
  while (i < s.size() && out.size() < kMaxWords) {
    auto c = static_cast<unsigned char>(s[i]);
    if (!std::isalnum(c) && c != '_') {
      ++i;
      continue;
    }
    size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    std::string t = text::lower(s.substr(b, i - b));
    // A figure or the unit after one ("15.8 GiB") is no word between two others.
    bool figure = std::isdigit(c) != 0 || (!out.empty() && out.back().number && any_of(t, {"b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib", "bytes"}));
    Word w{std::move(t), b, figure};
    out.push_back(std::move(w));
  }
  return out;
}

bool memory_word(const std::string& w) {
  return any_of(w, {"memory", "mem", "rss", "ram", "resident", "vmrss"}) ||
         (w.size() > 6 && (w.starts_with("memory_") || w.starts_with("mem_") || w.ends_with("_memory") || w.ends_with("memory")));
}

bool limit_word(const std::string& w) {
  return any_of(w, {"limit", "limits", "quota", "budget", "cap", "threshold", "allowance", "ceiling", "maximum"});
}

// One token that names both: memory_limit, mem_limit, memorylimit, max_memory, memory_quota.
bool memory_limit_token(const std::string& w) {
  bool mem = w.find("mem") != std::string::npos;
  bool lim = w.find("limit") != std::string::npos || w.find("quota") != std::string::npos || w.starts_with("max_mem") ||
             w.starts_with("maxmem") || w.find("budget") != std::string::npos;
  return mem && lim && w.size() > 6;
}

bool exceed_word(const std::string& w) {
  return w.starts_with("exceed") || w.starts_with("surpass") || w.starts_with("breach") ||
         any_of(w, {"over", "above", "reached", "reaching", "hit", "hits", "beyond", "overran", "overrun", "crossed", "past"});
}

// An event: the process was acted on, or the line is an error.
bool event_word(const std::string& w) {
  return w.starts_with("kill") || w.starts_with("terminat") || w.starts_with("abort") || w.starts_with("fail") ||
         w.starts_with("crash") || w.starts_with("evict") || w.starts_with("cancel") || w.starts_with("restart") ||
         any_of(w, {"stopped", "stopping", "shutting", "shut", "exited", "died", "dead", "error", "fatal", "held", "hold",
                    "removed", "interrupted", "sigkill", "oom", "panic", "exception"});
}

// A verb in the past tense is the report itself ("Container 'Build' exceeded
// memory limit."); the present ("exceeds", "is above") needs an event beside it.
bool passed_tense(const std::string& w) {
  return any_of(w, {"exceeded", "surpassed", "breached", "overran", "crossed", "reached", "hit"});
}

// A share of the cap below 95% ("exceeded 80% of its memory limit"): a threshold warning.
bool below_cap_share(std::string_view s) {
  for (size_t p = s.find('%'); p != std::string_view::npos; p = s.find('%', p + 1)) {
    size_t b = p;
    while (b > 0 && (std::isdigit(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '.')) --b;
    if (b == p) continue;
    auto v = text::parse_double(s.substr(b, p - b));
    if (v && *v < 95.0) return true;
  }
  return false;
}

// Words that make the clause something other than a report of a limit passed.
bool reads_as_no_event(std::string_view s) {
  static constexpr std::string_view kWords[] = {
      // predictions, rules, negations
      "would exceed", "will exceed", "may exceed", "might exceed", "could exceed", "about to exceed", "going to exceed",
      "not exceed", "n't exceed", "never exceed", "without exceed", "to exceed", "approaching", "nearing", "close to",
      "may have", "might have", "possibly", "perhaps", "likely",
      "below the", "within the", "under the", "if the", "when the", "before the",
      // a worker recycled by design
      "recycl", "exiting after exceeding", "max_memory_per_child", "max-memory-per-child", "max_requests",
      // the scheduler's after-the-fact note (Slurm: the job finished)
      "at some point",
      // an admission refusal: nothing ran
      "forbidden", "is invalid", "exceeded quota:", "admission",
      // not a pool of the machine
      "memlock", "locked memory", "shared memory", "shm", "heap", "virtual memory", "swap", "log length", "log size"};
  for (auto w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

// A log level of INFO or DEBUG on the line: a planned stop, reported as such.
bool informational(std::string_view s) {
  for (std::string_view w : {".INFO", "[INFO]", " INFO ", "INFO:", "level=info", "\"level\":\"info\"", "DEBUG"})
    if (text::contains(s, w)) return true;
  return false;
}

// The first two sizes with units in the line: the use and the cap when the
// first is at least 95% of the second ("4211MB > 4096MB", "used 2.1 GB of 2 GB").
struct Sizes {
  std::optional<uint64_t> usage, limit;
  bool passed = false;
};
Sizes sizes_of(std::string_view s) {
  Sizes out;
  std::vector<uint64_t> found;
  for (size_t i = 0; i < s.size() && found.size() < 3; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])) || (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '.')))
      continue;
    std::string_view rest;
    if (auto v = units::parse_log_size(s.substr(i), &rest); v && *v >= units::MiB) found.push_back(*v);
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    i = j;
  }
  if (found.size() == 1) out.limit = found[0];
  if (found.size() >= 2) {
    out.usage = found[0];
    out.limit = found[1];
    if (*out.usage * 100 >= *out.limit * 95) out.passed = true;
    else std::swap(*out.usage, *out.limit), out.usage.reset();  // "limit 4096MB, used 1.2GB": not passed
  }
  return out;
}

class GenericLimit final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (s.size() > 2000 || guards::is_advice_line(s) || guards::is_command_line(s) || reads_as_no_event(s) || informational(s))
      return;
    // A container's resources as an object ({"limits":{"cpu":"200m","memory":"1Gi"},"requests":{...}}):
    // a specification, whose two sizes are a limit and a request, not a usage over a limit.
    if ((text::contains(s, "\"limits\"") || text::contains(s, "limits:")) && text::contains(s, "requests")) return;
    auto w = words_of(s);
    // The memory-limit phrase: one token, or a memory word and a limit word
    // within four words of each other (figures between them not counted).
    size_t phrase = SIZE_MAX;
    for (size_t i = 0; i < w.size() && phrase == SIZE_MAX; ++i) {
      if (memory_limit_token(w[i].text)) phrase = i;
      if (!memory_word(w[i].text)) continue;
      for (size_t j = 0, seen = 0; j < w.size() && phrase == SIZE_MAX; ++j) {
        size_t lo = std::min(i, j), hi = std::max(i, j);
        seen = 0;
        for (size_t k = lo + 1; k < hi; ++k) seen += w[k].number ? 0 : 1;
        // "max" right before the memory word names its cap ("--max-memory-restart").
        const bool cap = limit_word(w[j].text) || (w[j].text == "max" && j + 1 == i);
        if (j != i && cap && seen <= 3) phrase = std::min(i, j);
      }
    }
    bool more_than = text::icontains(s, "more than") && (text::icontains(s, "of memory") || text::icontains(s, "of ram"));
    if (phrase == SIZE_MAX && !more_than) return;
    Sizes sz = sizes_of(s);
    bool passed = more_than || sz.passed;
    bool event = false;
    for (const Word& x : w) {
      passed = passed || exceed_word(x.text);
      event = event || event_word(x.text) || passed_tense(x.text);
    }
    if (!passed || !event || below_cap_share(s)) return;
    // A pinned staging buffer over the device's per-buffer size (ggml's Vulkan
    // backend, which then takes pageable memory; llamacpp.cc): no cap on a pool.
    if (guards::names_pinned_host_memory(s) && text::icontains(s, "buffer size limit")) return;
    if (repeat_.repeated(repeat_key(s), line.number)) return;
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::generic);
    f.strength = 0.55f;
    f.limit = sz.limit;
    f.usage = sz.usage;
    bool device = false, worker = false, pod = false, query = false;
    for (const Word& x : w) {
      device = device || any_of(x.text, {"gpu", "vram", "cuda", "device", "hbm"});
      worker = worker || x.text.starts_with("worker") || any_of(x.text, {"supervisor", "nanny", "watchdog", "monitor"});
      pod = pod || any_of(x.text, {"pod", "kubernetes", "k8s", "kubelet"});
      query = query || any_of(x.text, {"query", "queries", "statement", "aggregation", "operator"});
    }
    query = query || text::contains(s, "for $");  // a MongoDB stage: "Exceeded memory limit for $group"
    if (query && !device && !pod) {
      // A database's cap on one query or one operator (MongoDB's "Exceeded
      // memory limit for $group", a per-query limit): the program's own
      // budget for a unit of work, which no layer of the taxonomy names (as
      // PHP's memory_limit): layer unknown, the cap the cause.
      f.kind = FactKind::host_alloc_failure;
      f.layer = Layer::unknown;
      f.cause = Cause::limit_too_low;
      f.detail = "a query's own memory limit was exceeded (the program's cap on one unit of work)";
    } else if (device) {
      f.kind = FactKind::gpu_oom;
      f.layer = Layer::gpu_vram;
      f.detail = "a device memory cap was exceeded";
    } else if (pod) {
      f.layer = Layer::k8s_pod_limit;
      f.detail = "a memory limit was exceeded (the line names a pod)";
    } else if (worker && (text::contains(s, "Worker exceeded memory limit") || text::contains(s, "exceededMemory"))) {
      // Cloudflare Workers: a "Worker" is the deployed script, each isolate
      // held to the platform's memory limit (128 MB; outcome "exceededMemory").
      f.layer = Layer::container_limit;
      f.detail = "the platform's memory limit on the Worker's isolate was exceeded (Cloudflare Workers)";
    } else if (worker) {
      f.kind = FactKind::userspace_kill;
      f.layer = Layer::userspace_oom_killer;
      f.detail = "the program's own worker supervisor stopped a worker over its memory limit";
    } else {
      f.layer = Layer::container_limit;
      f.detail = "a memory limit was exceeded (the enforcer is not named)";
    }
    out.add(std::move(f));
  }

 private:
  RepeatFilter repeat_{200};
};

}  // namespace

const RecognizerEntry kGenericLimitEntry{
    "generic_limit", Family::generic, kPatterns, [] { return std::unique_ptr<Recognizer>(new GenericLimit); }};

}  // namespace aimem
