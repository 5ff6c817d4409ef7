// macOS and iOS jetsam: the XNU kernel's memorystatus killing processes when
// the machine runs short of memory (the kernel OOM killer's counterpart).
//
// A JetsamEvent report (~/Library/Logs/DiagnosticReports/JetsamEvent-*.ips):
// JSON whose "processes" array holds one object a line, the killed ones with a
// "reason"; "memoryStatus" gives the page size the "rpages" counts are in:
//   "pageSize" : 16384,
//   {"pid" : 41877, "name" : "node", "rpages" : 41290, "reason" : "vm-compressor-space-shortage", ...}
// The kernel's own log line (log show / Console):
//   kernel: memorystatus: killing_specific_process pid 604 [node] (vm-pageshortage 1) 216928KB - memorystatus_available_pages: 3214
//   kernel: memorystatus: killing_top_process pid 812 [Ollama] (vm-compressor-thrashing 2) 7340032KB - ...
// Reasons of memory pressure (vm-pageshortage, vm-compressor-space-shortage,
// vm-compressor-thrashing, fc-thrashing, highwater, idle-exit, zone-map-exhaustion)
// are the machine running short: a kernel OOM kill on the host
// (kernel_oom_kill). "per-process-limit" is the process's own memory limit,
// which the OS sets per process: a kill at the app's own cap, a container's
// limit in all but name (layer container_limit); so are Xcode's "Terminated
// due to memory issue" and the limit raised as EXC_RESOURCE
// (RESOURCE_TYPE_MEMORY: limit=N MB).
// RAM and swap both full ("no paging space"): the kernel's "low swap:
// triggering no paging space action" and the app runningboardd terminates
// for it ("... explanation:no paging space action"), or the older "low swap:
// killing largest compressed process with pid N (name) and size N MB": the
// host's memory, as jetsam's pressure kills are.
// Reports pretty-printed one key a line ("pid" : 48213, / "name" : "Python",
// / "reason" : "vm-compressor-space-shortage", each alone on its line, as
// macOS 12 and later write them) are read key by key: an object's keys
// gather until one of them comes again.
// runningboardd terminating an app for any other reason (its "explanation:",
// e.g. CacheDeleteAppContainerCaches when the disk is full, a watchdog's
// timeout) is a kill that names no memory: a look-alike (not_memory_failure).
// The victim's resident memory is rpages x the page size (16 KiB on Apple
// silicon, 4 KiB before), or the KB the log line gives. Every row, killed or
// not, is also a row of the report's process table (process_name.h): who
// held the memory when jetsam acted.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"
#include "recognize/process_name.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"memorystatus: killing_", kCompanion},
    {"no paging space action", kCompanion},
    {"Terminating with context", kContext},
    {"low swap: killing ", kCompanion},
    {"run out of application memory", kCompanion},  // macOS's dialog when RAM and swap are full
    {"Terminated due to memory issue", kCompanion},  // Xcode's debugger on iOS: the app's own limit
    {"EXC_RESOURCE \\(?RESOURCE_TYPE_MEMORY", kRegex | kCompanion},  // the same limit as an exception (Xcode, crash reports)
    {"\"reason\" ?: ?\"(vm-|per-process-limit|highwater|idle-exit|fc-thrashing|zone-map)", kRegex | kCompanion},
    {"\"pageSize\" ?: ?[0-9]+", kRegex | kContext},
    {"\"rpages\" ?: ?[0-9]+", kRegex | kContext},
    {"^[ \t]*\"(pid|name)\" : ", kRegex | kContext},  // a pretty-printed report's keys (Apple writes " : ")
};

constexpr uint64_t kRowGap = 2;  // the processes array holds one object a line

class MacosJetsam final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto v = text::after(s, "\"pageSize\"")) {
      if (auto n = text::parse_u64(platform::skip(*v, " :")); n && (*n == 4096 || *n == 16384)) page_ = *n;
      return;
    }
    if (guards::is_command_line(s) || guards::is_advice_line(s)) return;
    if (size_t p = s.find("memorystatus: killing_"); p != std::string_view::npos) return log_line(line, s.substr(p), out);
    if (text::contains(s, "no paging space action") || text::contains(s, "low swap: killing ") ||
        text::contains(s, "run out of application memory"))
      return no_paging_space(line, s, out);
    if (text::contains(s, "Terminating with context")) return other_termination(line, s, out);
    // Xcode's "Message from debugger: Terminated due to memory issue": jetsam
    // killed the app at its per-process limit (iOS gives each app one).
    if (text::contains(s, "Terminated due to memory issue")) return kill(line, "app", std::nullopt, "per-process-limit", std::nullopt, out);
    // The same limit raised as an exception: "Thread 7: EXC_RESOURCE (RESOURCE_TYPE_MEMORY:
    // limit=6144 MB, unused=0x0)" in Xcode, "EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=2098 MB,
    // unused=0x0)" in a crash report's exception line.
    if (text::contains(s, "EXC_RESOURCE") && text::contains(s, "RESOURCE_TYPE_MEMORY"))
      return kill(line, "app", std::nullopt, "per-process-limit", std::nullopt, out);
    if (text::contains(s, "\"rpages\"") && text::contains(s, "\"name\"")) table_row(line, s, out);
    if (text::contains(s, "\"reason\"") && text::contains(s, "\"name\"") && text::contains(s, "\"pid\"")) report_row(line, s, out);
    pretty_key(line, text::trim(s), out);
  }
  void finish(FactSink& out) override {
    pretty_flush(out);
    table_.flush(out);
  }

 private:
  uint64_t page_ = 16384;
  size_t kills_ = 0;
  bool paging_event_ = false;
  process_name::TableBuilder table_;  // the report's processes, killed or not: who held the memory
  uint64_t last_row_ = 0;

  void table_row(const Line& line, std::string_view s, FactSink& out) {
    if (!table_.started() || line.number > last_row_ + kRowGap) {
      table_.flush(out);
      table_.start(line, Family::kernel);
    }
    last_row_ = line.number;
    auto pages = text::parse_u64(json_value(s, "\"rpages\""));
    if (pages && *pages < (uint64_t(1) << 40)) table_.add(json_value(s, "\"name\""), *pages * page_, text::parse_i64(json_value(s, "\"pid\"")));
  }

  static bool per_process(std::string_view reason) { return reason == "per-process-limit"; }

  // One object of a pretty-printed report, its keys gathered line by line.
  struct Pretty {
    std::string name, reason, reason_text;
    std::optional<int64_t> pid;
    std::optional<uint64_t> pages;
    uint64_t first_line = 0;
    Line first, reason_at;  // their text re-pointed at reason_text / empty when used
  };
  static constexpr uint64_t kPrettyObjectLines = 40;
  Pretty pretty_;
  bool pretty_started_ = false;

  void pretty_key(const Line& line, std::string_view t, FactSink& out) {
    if (t.empty() || t[0] != '"') return;
    std::string_view key = text::take_until(t.substr(1), "\"");
    if (key != "pid" && key != "name" && key != "rpages" && key != "reason") return;
    std::string_view rest = t.substr(key.size() + 2);
    if (!text::starts_with(rest, " : ")) return;  // Apple's spacing; a one-line object was read above
    std::string_view v = json_value(t, "\"" + std::string(key) + "\"");
    if (v.empty()) return;
    if (pretty_started_ && (line.number > pretty_.first_line + kPrettyObjectLines || (key == "pid" && pretty_.pid) ||
                            (key == "name" && !pretty_.name.empty()) || (key == "rpages" && pretty_.pages) ||
                            (key == "reason" && !pretty_.reason.empty())))
      pretty_flush(out);
    if (!pretty_started_) {
      pretty_ = Pretty{};
      pretty_.first_line = line.number;
      pretty_.first = line;
      pretty_.first.text = {};
      pretty_started_ = true;
    }
    if (key == "pid") {
      pretty_.pid = text::parse_i64(v);
      if (pretty_.pid && *pretty_.pid <= 0) pretty_.pid.reset();
    }
    if (key == "name") pretty_.name = std::string(v.substr(0, 128));
    if (key == "rpages") pretty_.pages = text::parse_u64(v);
    if (key == "reason") {
      pretty_.reason = std::string(v.substr(0, 64));
      pretty_.reason_at = line;
      pretty_.reason_text = std::string(line.text.substr(0, 240));
    }
  }

  void pretty_flush(FactSink& out) {
    if (!pretty_started_) return;
    pretty_started_ = false;
    std::optional<uint64_t> rss;
    if (pretty_.pages && *pretty_.pages < (uint64_t(1) << 40)) rss = *pretty_.pages * page_;
    if (!pretty_.name.empty() && rss) {
      if (!table_.started() || pretty_.first_line > last_row_ + kPrettyObjectLines) {
        table_.flush(out);
        table_.start(pretty_.first, Family::kernel);
      }
      last_row_ = pretty_.first_line;
      table_.add(pretty_.name, *rss, pretty_.pid);
    }
    if (pretty_.reason.empty()) return;
    Line at = pretty_.reason_at;
    at.text = pretty_.reason_text;
    kill(at, pretty_.name, pretty_.pid, pretty_.reason, rss, out);
  }

  // The value of a JSON key on a one-line object: "name" : "node" -> node; "rpages" : 41290 -> 41290.
  static std::string_view json_value(std::string_view s, std::string_view key) {
    size_t k = s.find(key);
    if (k == std::string_view::npos) return {};
    std::string_view v = platform::skip(s.substr(k + key.size()), " :");
    if (!v.empty() && v[0] == '"') return text::take_until(v.substr(1), "\"");
    return text::take_until(v, ", }");
  }

  void report_row(const Line& line, std::string_view s, FactSink& out) {
    std::string_view reason = json_value(s, "\"reason\"");
    if (reason.empty()) return;
    std::optional<uint64_t> rss;
    if (auto pages = text::parse_u64(json_value(s, "\"rpages\""))) rss = *pages * page_;
    kill(line, json_value(s, "\"name\""), text::parse_i64(json_value(s, "\"pid\"")), reason, rss, out);
  }

  // "memorystatus: killing_specific_process pid 604 [node] (vm-pageshortage 1) 216928KB - ..."
  void log_line(const Line& line, std::string_view s, FactSink& out) {
    auto pid = text::after(s, " pid ");
    size_t open = s.find(" ["), close = s.find("] (");
    if (!pid || open == std::string_view::npos || close == std::string_view::npos || close < open) return;
    std::string_view name = s.substr(open + 2, close - open - 2);
    std::string_view reason = text::take_until(s.substr(close + 3), " )");
    std::optional<uint64_t> rss;
    std::string_view after_reason = s.substr(close + 3);
    if (size_t paren = after_reason.find(") "); paren != std::string_view::npos) {
      std::string_view unit;
      if (auto kb = text::parse_u64(after_reason.substr(paren + 2), &unit); kb && text::starts_with(unit, "KB")) rss = *kb * units::KiB;
    }
    kill(line, name, text::parse_i64(*pid), reason, rss, out);
  }

  // RAM and swap both full: the kernel's "low swap: triggering no paging
  // space action" (runningboardd then terminates an app "with context ...
  // explanation:no paging space action"), or, before macOS 12, "low swap:
  // killing largest compressed process with pid 4412 (Xcode) and size 2104 MB".
  void no_paging_space(const Line& line, std::string_view s, FactSink& out) {
    if (auto v = text::after(s, "killing largest compressed process with pid ")) {
      std::string_view rest;
      auto pid = text::parse_u64(*v, &rest);
      std::string_view name = text::starts_with(rest, " (") ? text::take_until(rest.substr(2), ")") : std::string_view{};
      std::optional<uint64_t> rss;
      if (auto size = text::after(rest, " and size ")) rss = units::parse_log_size(*size);
      if (pid) kill(line, name, static_cast<int64_t>(*pid), "no paging space: RAM and swap full", rss, out);
      return;
    }
    if (text::contains(s, "Terminating") && text::contains(s, "explanation:no paging space action")) {
      // "[app<application.com.cmuxterm.app(501)>:4411] Terminating with context: ..."
      std::string_view name;
      std::optional<int64_t> pid;
      if (auto a = text::after(s, "<application.")) name = text::take_until(*a, "(>");
      if (size_t q = s.find(">:"); q != std::string_view::npos) pid = text::parse_i64(s.substr(q + 2));
      kill(line, name, pid, "no paging space: RAM and swap full", std::nullopt, out);
      return;
    }
    // The dialog the same condition raises: "Your system has run out of application memory."
    const bool dialog = text::contains(s, "run out of application memory");
    if ((!dialog && !text::contains(s, "triggering no paging space action")) || paging_event_) return;
    paging_event_ = true;
    Fact f = make_fact(line, FactKind::kernel_oom_event, Family::kernel);
    f.layer = Layer::host_ram;
    f.strength = 0.8f;
    f.detail = dialog ? "macOS ran out of RAM and swap (\"Your system has run out of application memory\")"
                      : "macOS ran out of RAM and swap (no paging space action)";
    out.add(std::move(f));
  }

  // "[app<application.com.x(501)>:18342] Terminating with context: <RBSTerminateContext| code:0xBADDD15C
  // explanation:CacheDeleteAppContainerCaches requesting termination ...>": not memory's.
  void other_termination(const Line& line, std::string_view s, FactSink& out) {
    auto why = text::after(s, "explanation:");
    if (!why || other_terminated_) return;
    std::string_view e = text::take_until(*why, " >|");
    if (e.empty() || text::icontains(e, "memory") || text::icontains(e, "jetsam") || text::icontains(e, "paging")) return;
    other_terminated_ = true;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::kernel);
    f.layer = Layer::not_memory;
    f.strength = 0.6f;
    f.detail = fmt::format("runningboardd terminated the app for {}, not memory", text::printable(e.substr(0, 60)));
    out.add(std::move(f));
  }
  bool other_terminated_ = false;

  void kill(const Line& line, std::string_view name, std::optional<int64_t> pid, std::string_view reason,
            std::optional<uint64_t> rss, FactSink& out) {
    if (reason.empty() || ++kills_ > 64) return;
    const bool own = per_process(reason);
    // The per-process limit: the OS's cap on one app's footprint, reached
    // (a container's limit in all but name: the app was killed at its own
    // cap while the device had memory to spare), as the corpus's readers of
    // Xcode's notice and EXC_RESOURCE have labelled it throughout.
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::kernel);
    f.layer = own ? Layer::container_limit : Layer::host_ram;
    f.strength = own ? 0.6f : 0.8f;
    f.process = std::string(name.substr(0, 128));
    f.pid = pid;
    f.rss = rss;
    f.signal = 9;
    f.detail = own ? std::string(kPerAppLimitKill)
                   : fmt::format("macOS jetsam killed it under memory pressure ({})", text::printable(reason.substr(0, 40)));
    // EXC_RESOURCE names the cap: "(RESOURCE_TYPE_MEMORY: limit=2098 MB, unused=0x0)".
    if (own)
      if (auto v = text::after(line.text, "limit=")) f.limit = units::parse_log_size(*v);
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kMacosJetsamEntry{"macos_jetsam", Family::kernel, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new MacosJetsam); }};

}  // namespace aimem
