// A memory cgroup's own files as a user pastes them: `cat` of the files with
// its output under it, or `grep . memory.*` with each file's name before its
// value. cgroup v2 and v1:
//
//   $ cat /sys/fs/cgroup/memory.max                      (v1: memory.limit_in_bytes)
//   8589934592                                           ("max": no limit)
//   $ cat memory.current memory.peak                     (v1: memory.usage_in_bytes, memory.max_usage_in_bytes)
//   8588017664
//   8589934592
//   $ cat /sys/fs/cgroup/memory.events                   (v1: memory.oom_control, "oom_kill N" since 4.13)
//   low 0
//   high 0
//   max 1843
//   oom 12
//   oom_kill 12
//   /sys/fs/cgroup/memory.max:2147483648                 (grep . memory.*)
//   $ docker exec nb sh -c 'cat memory.limit_in_bytes memory.max_usage_in_bytes; grep oom_kill memory.oom_control'
//   4294967296                                           (a grep of the events file after the cat: its lines)
//   4294967296
//   oom_kill 1
//
// The limit is a configured limit (memory_limit, detail the file), the usage
// and peak are memory_usage; an oom_kill count above zero is the cgroup's own
// record of OOM kills inside it (cgroup_oom_counter: a failure whose time is
// not known), in a pod's cgroup (a path under kubepods) the pod's limit; so
// is "max" counted kThrashEvents times or more with no kill, beside
// memory.pressure's "full avg10" of kThrashFullAvg10 or more (the cgroup held
// at its limit, every task stalled on reclaim: a hang, not an exit). v1's
// "no limit" (a page-rounded 2^63) is no limit. Values are read only on the
// lines right after the command that printed them.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"memory\\.(max|current|peak|events|limit_in_bytes|usage_in_bytes|max_usage_in_bytes|oom_control)", kRegex | kContext},
    {"^[ \t]*full avg10=[0-9]", kRegex | kContext},  // memory.pressure
    {"cd /sys/fs/cgroup/", kContext},  // the directory a later `cat memory.events` reads in
    {"^[ \t]*[0-9]+\\s*$", kRegex | kContext},
    {"^[ \t]*max\\s*$", kRegex | kContext},
    {"^[ \t]*(low|high|max|oom|oom_kill|oom_group_kill|oom_kill_disable|under_oom) [0-9]+\\s*$", kRegex | kContext},
};

constexpr uint64_t kOutputLines = 12;  // a cat's output follows it at once
constexpr uint64_t kNoLimit = uint64_t(1) << 62;  // v1 prints 2^63 rounded down to a page for "no limit"

enum class File { none, limit, usage, peak, events };

File file_of(std::string_view name) {
  if (name == "memory.max" || name == "memory.limit_in_bytes") return File::limit;
  if (name == "memory.current" || name == "memory.usage_in_bytes") return File::usage;
  if (name == "memory.peak" || name == "memory.max_usage_in_bytes") return File::peak;
  if (name == "memory.events" || name == "memory.oom_control") return File::events;
  return File::none;
}

// "/sys/fs/cgroup/kubepods.slice/x/memory.max" -> ("memory.max", "/kubepods.slice/x").
std::pair<std::string_view, std::string_view> split_path(std::string_view word) {
  size_t slash = word.rfind('/');
  std::string_view base = slash == std::string_view::npos ? word : word.substr(slash + 1);
  std::string_view dir = slash == std::string_view::npos ? std::string_view{} : word.substr(0, slash);
  for (std::string_view root : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup"})
    if (text::starts_with(dir, root)) {
      dir = dir.substr(root.size());
      break;
    }
  return {base, dir};
}

class CgroupFiles final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    // memory.pressure's "full avg10=88.90 avg60=... total=...": every task stalled on memory.
    if (text::starts_with(t, "full avg10=")) {
      auto v = text::parse_double(t.substr(11));
      if (v && *v >= kThrashFullAvg10) stalled_ = true;
      return;
    }
    // "cd /sys/fs/cgroup/kubepods.slice/...pod<uid>.slice": the group the
    // files a later cat names without a path belong to.
    if (auto cd = text::after(t, "cd /sys/fs/cgroup/")) {
      std::string_view dir = text::take_until(*cd, " ;&|");
      if (text::starts_with(dir, "memory/")) dir.remove_prefix(7);
      cwd_ = "/" + std::string(dir.substr(0, 255));
      while (cwd_.size() > 1 && cwd_.back() == '/') cwd_.pop_back();
      return;
    }
    if (text::contains(t, "cat ") && text::contains(t, "memory.")) {
      flush(out);
      return command(line, t);
    }
    // "grep . memory.*": "<path>/memory.max:8589934592"
    if (size_t c = t.find(':'); c != std::string_view::npos && c < 512 && t.find(' ') == std::string_view::npos) {
      auto [base, dir] = split_path(t.substr(0, c));
      if (File f = file_of(base); f != File::none && f != File::events) {
        cgroup_ = std::string(dir.substr(0, 256));
        return value(line, f, t.substr(c + 1), out);
      }
    }
    if (files_.empty() || line.number > command_line_ + kOutputLines) return;
    if (lead_) {
      // Output of the commands before the cat comes first: hold the values
      // while they run on line after line; the last ones are the files'.
      if (line.number != command_line_ + 1 + held_.size()) return flush(out);
      held_.push_back({std::string(t), line.number, line.time, line.source});
      return;
    }
    // The lead commands' output (nproc's "16") fills the lines right under the
    // command, whether or not this reader was shown them: not a file's value.
    if (line.number - command_line_ - 1 < skip_) return;
    if (files_.front() == File::events) return event_line(line, t, out);
    if (files_.front() == File::none) {
      std::string_view rest;
      if (!text::parse_u64(t, &rest) || !rest.empty()) files_.clear();
      else files_.erase(files_.begin());
      return;
    }
    value(line, files_.front(), t, out);
    if (!files_.empty()) files_.erase(files_.begin());  // value() clears the list when the line is not the file's output
  }

 private:
  std::vector<File> files_;  // the files the last cat is still to print, in order
  uint64_t command_line_ = 0;
  std::string cgroup_;
  std::string cwd_;  // the cgroup directory a `cd` entered, for files named without a path
  bool counted_ = false;

  // `nproc; cat memory.limit_in_bytes memory.failcnt`: every file keeps its
  // place (an unknown one as File::none), and a command before the cat
  // (after ";" or "&&") prints first.
  void command(const Line& line, std::string_view t) {
    files_.clear();
    cgroup_.clear();
    held_.clear();
    std::string_view before = t.substr(0, t.find("cat "));
    // The commands before the cat (`nproc; date; cat ...`), one line of output each.
    skip_ = platform::commands_before(before);
    lead_ = skip_ > 0;
    // A word without the quotes and ';' that close an `sh -c '...'` around it.
    auto bare = [](std::string_view w) {
      while (!w.empty() && (w.back() == '\'' || w.back() == '"' || w.back() == ';')) w.remove_suffix(1);
      return w;
    };
    auto words = platform::words(t.substr(t.find("cat ") + 4), 16);
    for (size_t k = 0; k < words.size(); ++k) {
      std::string_view w = bare(words[k]);
      if (words[k] == "|" || words[k] == ">") break;
      // The cat ends at ";" or "&&" ("memory.max_usage_in_bytes;" inside
      // sh -c '...'); a `grep oom_kill memory.oom_control` after it prints
      // that file's lines.
      const bool last = words[k] == "&&" || words[k].find(';') != std::string_view::npos;
      if (!w.empty() && w[0] != '-' && w != "&&") {
        auto [base, dir] = split_path(w);
        File f = file_of(base);
        files_.push_back(f);
        if (f != File::none && cgroup_.empty()) cgroup_ = dir.empty() ? cwd_ : std::string(dir.substr(0, 256));
      }
      if (!last) continue;
      if (k + 3 < words.size() && words[k + 1] == "grep" && file_of(split_path(bare(words[k + 3])).first) == File::events)
        files_.push_back(File::events);
      break;
    }
    // The events file's lines are not one value each: the commands before the
    // cat are skipped a line each instead of counting back from the end.
    if (std::find(files_.begin(), files_.end(), File::events) != files_.end()) lead_ = false;
    else skip_ = 0;
    command_line_ = line.number;
  }

  struct Held {
    std::string text;
    uint64_t number;
    timeutil::LineTime time;
    const SourceContext* source;
  };
  std::vector<Held> held_;
  bool lead_ = false;
  uint64_t skip_ = 0;  // lines of the lead commands' output under the command

  void flush(FactSink& out) {
    if (!lead_ || held_.size() < files_.size()) {
      held_.clear();
      return;
    }
    std::vector<File> files = std::move(files_);
    files_.clear();
    const size_t first = held_.size() - files.size();
    for (size_t i = 0; i < files.size(); ++i) {
      const Held& h = held_[first + i];
      Line l{h.text, h.number, h.time, h.source};
      if (files[i] != File::none) value(l, files[i], h.text, out);
    }
    held_.clear();
  }

  void value(const Line& line, File f, std::string_view v, FactSink& out) {
    v = text::trim(v);
    if (v == "max") return;  // no limit
    std::string_view rest;
    auto n = text::parse_u64(v, &rest);
    if (!n || !rest.empty()) {
      files_.clear();  // not the file's output: the cat is over
      return;
    }
    if (f == File::limit) {
      // Under a page is no memory limit a workload ran in: another command's number.
      if (*n < 4096 || *n >= kNoLimit) return;
      Fact fact = make_fact(line, FactKind::memory_limit, Family::cgroup);
      fact.limit = n;
      fact.cgroup = cgroup_;
      fact.detail = "the cgroup's memory limit (memory.max)";
      out.add(std::move(fact));
      return;
    }
    Fact fact = make_fact(line, FactKind::memory_usage, Family::cgroup);
    fact.usage = n;
    fact.cgroup = cgroup_;
    fact.detail = f == File::peak ? "the cgroup's peak usage (memory.peak)" : "the cgroup's usage (memory.current)";
    out.add(std::move(fact));
  }

  void finish(FactSink& out) override {
    flush(out);
    if (thrash_ && stalled_) out.add(std::move(*thrash_));
    thrash_.reset();
  }

  static constexpr uint64_t kThrashEvents = 1000;
  static constexpr double kThrashFullAvg10 = 50;  // percent of time every task stalled on memory
  uint64_t max_events_ = 0;
  std::optional<Fact> thrash_;
  bool stalled_ = false;

  // memory.events / memory.oom_control: "oom_kill 12" above zero is a record
  // of kills; the other counters only say how close it came.
  void event_line(const Line& line, std::string_view t, FactSink& out) {
    std::string_view rest;
    auto words = platform::words(t, 3);
    if (words.size() != 2 || !text::parse_u64(words[1], &rest) || !rest.empty()) {
      files_.erase(files_.begin());
      return;
    }
    if (words[0] == "max") max_events_ = text::parse_u64(words[1]).value_or(0);
    if (words[0] != "oom_kill" || counted_) return;
    auto n = text::parse_u64(words[1]);
    if (n && *n == 0 && max_events_ >= kThrashEvents && !thrash_) {
      // Held at memory.max again and again without a kill: with the stall
      // memory.pressure shows (finish), the kernel reclaims and the cgroup
      // thrashes at its limit (a failure a client sees as a hang, not an exit).
      thrash_ = make_fact(line, FactKind::cgroup_oom_counter, Family::cgroup);
      thrash_->count = max_events_;
      thrash_->cgroup = cgroup_;
      thrash_->layer = text::contains(cgroup_, "kubepods") ? Layer::k8s_pod_limit : Layer::container_limit;
      thrash_->strength = 0.5f;
      thrash_->detail = fmt::format("held at its memory.max {} times with no OOM kill, stalled on memory: thrashing at the limit", max_events_);
      return;
    }
    if (n && *n == 0) {
      // The cgroup counted no OOM kill (cgroup v2's oom_kill counts a kill by
      // any OOM killer, the global one's too): a SIGKILL of its process came
      // from elsewhere. Context, read by the diagnosis beside a bare kill.
      Fact z = make_fact(line, FactKind::memory_usage, Family::cgroup);
      z.count = 0;
      z.cgroup = cgroup_;
      z.detail = std::string(kNoOomKill);
      out.add(std::move(z));
      return;
    }
    if (!n) return;
    counted_ = true;
    Fact f = make_fact(line, FactKind::cgroup_oom_counter, Family::cgroup);
    f.count = n;
    f.cgroup = cgroup_;
    f.layer = text::contains(cgroup_, "kubepods") ? Layer::k8s_pod_limit : Layer::container_limit;
    f.strength = 0.6f;
    f.detail = fmt::format("{} OOM kills counted by the cgroup (time unknown)", *n);
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kCgroupFilesEntry{"cgroup_files", Family::cgroup, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new CgroupFiles); }};

}  // namespace aimem
