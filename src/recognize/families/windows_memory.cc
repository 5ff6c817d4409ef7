// Windows running out of commit (RAM plus the page file), as its
// Resource-Exhaustion-Detector logs it (System log, event 2004, as
// Get-WinEvent, wevtutil or Event Viewer print it):
//
//   Windows successfully diagnosed a low virtual memory condition. The following programs consumed
//   the most virtual memory: CBZOptimizer.exe (20412) consumed 58826702848 bytes, MsMpEng.exe (4412)
//   consumed 371195904 bytes, and explorer.exe (6120) consumed 201326592 bytes.
//
// At that point the commit limit is reached and allocations fail across the
// machine: the host's memory ran out, the programs named are who held it
// (largest first). A kernel_oom_event with layer host_ram, `process` and
// `rss` the largest consumer, and the list as a process table
// (process_name.h). Get-WinEvent prints the newest event first; the first
// one read is the failure (later ones repeat it). The largest consumer's
// figure, event after event, is a series: the same PID whose commit moved one
// way only over kSeriesEvents events or more, by kSeriesMin at least (newest
// first or oldest first), is a memory_usage "growing" fact, as a log's rss=
// series is (memory_series.cc).
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"
#include "recognize/process_name.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"diagnosed a low virtual memory condition", kCompanion},  // no gate word: read in full pastes and near other failures
};

constexpr size_t kMaxPrograms = 16;

class WindowsMemory final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    size_t p = s.find("diagnosed a low virtual memory condition");
    if (p == std::string_view::npos || guards::is_command_line(s) || guards::is_mention(s, p, 40)) return;
    process_name::TableBuilder table;
    table.start(line, Family::runtime);
    std::string top;
    std::optional<uint64_t> top_bytes;
    // "<name> (<pid>) consumed <N> bytes", comma-separated, the last after "and ".
    std::string_view rest = s.substr(p);
    if (auto list = text::after(rest, "the most virtual memory:")) rest = *list;
    for (size_t n = 0; n < kMaxPrograms; ++n) {
      size_t c = rest.find(" consumed ");
      if (c == std::string_view::npos) break;
      std::string_view head = rest.substr(0, c);
      size_t open = head.rfind(" (");
      // The name runs from the last ", " or ": " before its "(pid)".
      std::string_view name = open == std::string_view::npos ? std::string_view{} : head.substr(0, open);
      size_t start = name.rfind(", ");
      if (size_t colon = name.rfind(": "); colon != std::string_view::npos && (start == std::string_view::npos || colon > start))
        name = name.substr(colon + 2);
      else if (start != std::string_view::npos)
        name = name.substr(start + 2);
      name = text::trim(name);
      if (text::starts_with(name, "and ")) name.remove_prefix(4);
      auto pid = open == std::string_view::npos ? std::nullopt : text::parse_i64(head.substr(open + 2));
      std::string_view after;
      auto bytes = text::parse_u64(rest.substr(c + 10), &after);
      rest = bytes ? after : rest.substr(c + 10);
      if (!bytes || name.empty() || name.size() > 128) continue;
      table.add(name, *bytes, pid);
      if (!top_bytes) {
        top = std::string(name), top_bytes = bytes;
        if (pid && (tops_.empty() || tops_.front().pid == *pid) && tops_.size() < 64) tops_.push_back({*pid, *bytes, std::string(name)});
      }
    }
    if (said_) return;  // later events repeat the condition; the first read is the failure
    said_ = true;
    at_ = line;
    at_text_ = std::string(line.text.substr(0, 240));
    Fact f = make_fact(line, FactKind::kernel_oom_event, Family::runtime);
    f.layer = Layer::host_ram;
    f.strength = 0.8f;
    f.process = top;
    f.rss = top_bytes;
    f.detail = top.empty() ? std::string("Windows diagnosed a low virtual memory condition (the commit limit, RAM and page file, was reached)")
                           : fmt::format("Windows diagnosed a low virtual memory condition (the commit limit, RAM and page file, was "
                                         "reached); {} held the most ({})",
                                         text::printable(top), units::format_bytes(*top_bytes));
    out.add(std::move(f));
    table.flush(out);
  }

  void finish(FactSink& out) override {
    if (tops_.size() < kSeriesEvents || !at_) return;
    bool up = true, down = true;
    for (size_t k = 1; k < tops_.size(); ++k) {
      up = up && tops_[k].bytes > tops_[k - 1].bytes;
      down = down && tops_[k].bytes < tops_[k - 1].bytes;
    }
    uint64_t first = up ? tops_.front().bytes : tops_.back().bytes, last = up ? tops_.back().bytes : tops_.front().bytes;
    if (!(up || down) || last - first < kSeriesMin) return;
    Line at = *at_;
    at.text = at_text_;
    Fact f = make_fact(at, FactKind::memory_usage, Family::runtime);
    f.strength = 0.7f;
    f.usage = last;
    f.count = tops_.size();
    f.detail = fmt::format("growing commit of {} (pid {}) from {} to {} over {} low-memory events", text::printable(tops_.front().name),
                           tops_.front().pid, units::format_bytes(first), units::format_bytes(last), tops_.size());
    out.add(std::move(f));
  }

 private:
  struct Top {
    int64_t pid;
    uint64_t bytes;
    std::string name;
  };
  static constexpr size_t kSeriesEvents = 3;
  static constexpr uint64_t kSeriesMin = 64 * units::MiB;
  bool said_ = false;
  std::vector<Top> tops_;  // the largest consumer of each event read, while it is one PID
  std::optional<Line> at_;
  std::string at_text_;
};

}  // namespace

const RecognizerEntry kWindowsMemoryEntry{"windows_memory", Family::runtime, kPatterns,
                                          [] { return std::unique_ptr<Recognizer>(new WindowsMemory); }};

}  // namespace aimem
