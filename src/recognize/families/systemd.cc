// systemd's view of a unit that ran out of memory (systemd.resource-control(5),
// systemd-oomd.service(8); the messages of src/core/unit.c). Journal lines from PID 1:
//   erigon.service: A process of this unit has been killed by the OOM killer.
//   erigon.service: Main process exited, code=killed, status=9/KILL
//   erigon.service: Failed with result 'oom-kill'.
//   tmux-spawn-x.scope: Consumed 10min 23.721s CPU time, 29.0G memory peak, 0B memory swap peak.
//   model-api.service: State 'stop-sigterm' timed out. Killing.       (stop_or_restart: a slow
//   model-api.service: Processing ... / Killing process 2211 (python3) with signal SIGKILL.   shutdown's kill)
//   foo.service: start operation timed out. Terminating.
// `systemctl status` output:
//   × vllm.service - vLLM server                        (● on older releases)
//        Active: failed (Result: oom-kill) since Tue 2026-11-24 10:00:00 UTC; 3min ago
//        Memory: 1.2G (max: 2.0G available: 0B peak: 2.0G)    / Memory: 1.2G (limit: 2.0G)
// Unit files, `systemctl show`, `systemd-run -p`:
//   MemoryMax=2G  MemoryMax=2147483648  MemoryMax=infinity  MemoryLimit=2G (cgroup v1)  MemoryHigh=1.5G
//
// The oom-kill result only says the kernel (or systemd-oomd) killed a process of
// the unit; whether the unit's own MemoryMax or the host ran out is decided by
// the diagnosis from the memory_limit facts (detail "MemoryMax") this file
// emits. MemoryHigh throttles instead of killing, so it is a runtime setting,
// not a limit. Sizes are binary (systemd's K, M, G, T are 1024-based).
#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"has been killed by the OOM killer"},
    {"Failed with result 'oom-kill'"},
    {"(Result: oom-kill)"},
    {"Main process exited, code=", kCaseless},  // "main process exited" before systemd 220 (CentOS 7)
    {"timed out. Killing"},
    {"operation timed out. Terminating", kCompanion},
    {" memory peak", kContext},
    {"^[ \t]+Memory: [0-9]", kRegex | kContext},
    {"MemoryMax=", kContext},
    {"MemoryLimit=", kContext},
    {"MemoryHigh=", kContext},
    {"\xe2\x97\x8f ", kContext},  // "● unit - description" (systemctl status)
    {"Active: active \\(running\\) since [^;]*; [0-9]", kRegex | kContext},  // how long the unit has run
    {"\xc3\x97 ", kContext},      // "× unit - description" (failed unit, systemd >= 247)
};

// "host systemd[1]: foo.service: <phrase>" -> "foo.service"
std::string unit_before(std::string_view s, size_t phrase) {
  std::string_view head = s.substr(0, phrase);
  while (!head.empty() && (head.back() == ' ' || head.back() == ':')) head.remove_suffix(1);
  size_t sp = head.find_last_of(" \t");
  std::string_view unit = sp == std::string_view::npos ? head : head.substr(sp + 1);
  if (unit.find('.') == std::string_view::npos) return {};  // units have a type suffix
  return std::string(unit.substr(0, 256));
}

class Systemd final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (size_t p = s.find("has been killed by the OOM killer"); p != std::string_view::npos) {
      size_t a = s.find("A process of this unit");
      oom_result(line, a != std::string_view::npos ? unit_before(s, a) : std::string(), p, out);
    } else if (size_t q = s.find("Failed with result 'oom-kill'"); q != std::string_view::npos) {
      oom_result(line, unit_before(s, q), q, out);
    } else if (size_t r = s.find("(Result: oom-kill)"); r != std::string_view::npos) {
      if (!text::contains(s.substr(0, r), "Active:")) return;
      oom_result(line, !status_unit_.empty() && line.number <= status_line_ + 40 ? status_unit_ : std::string(), r, out);
    } else if (size_t t = s.find("timed out. Killing"); t != std::string_view::npos) {
      timed_out(line, s, t, "systemd killed the unit when its stop timed out (a slow shutdown)", out);
    } else if (size_t u = s.find("operation timed out. Terminating"); u != std::string_view::npos) {
      timed_out(line, s, u, "systemd stopped the unit when its start timed out", out);
    } else if (size_t e = text::ifind(s, "Main process exited, code="); e != std::string_view::npos) {
      main_exit(line, unit_before(s, e), s.substr(e + 26), out);
    } else if (size_t a = s.find("Active: active (running) since "); a != std::string_view::npos) {
      running_for(line, s.substr(a), out);
    } else if (size_t m = s.find(" memory peak"); m != std::string_view::npos) {
      consumed(line, m, out);
    } else if (text::starts_with(text::trim_left(s), "Memory: ")) {
      status_memory(line, out);
    } else if (text::contains(s, "MemoryMax=") || text::contains(s, "MemoryLimit=") || text::contains(s, "MemoryHigh=")) {
      property(line, out);
    } else {
      status_header(line);
    }
  }

 private:
  std::string status_unit_;  // the unit of the `systemctl status` block being read
  uint64_t status_line_ = 0;
  std::string last_oom_unit_;
  uint64_t last_oom_line_ = 0;
  bool platform_sent_ = false;

  void platform(const Line& line, FactSink& out) {
    if (platform_sent_) return;
    platform_sent_ = true;
    Fact f = make_fact(line, FactKind::platform, Family::systemd);
    f.detail = "systemd";
    out.add(std::move(f));
  }

  void status_header(const Line& line) {
    // "● vllm.service - vLLM server" / "× vllm.service - ..."
    std::string_view t = text::trim_left(line.text);
    size_t sp = t.find(' ');
    if (sp == std::string_view::npos || sp > 2) return;
    std::string_view unit = text::first_word(t.substr(sp));
    if (unit.find('.') == std::string_view::npos || !text::contains(t, " - ")) return;
    status_unit_ = std::string(unit.substr(0, 256));
    status_line_ = line.number;
  }

  void oom_result(const Line& line, std::string unit, size_t at, FactSink& out) {
    if (guards::is_mention(line.text, at, 20)) return;
    platform(line, out);
    // The kill and the result are two lines of one event.
    if (last_oom_line_ && line.number <= last_oom_line_ + 20 && (unit == last_oom_unit_ || unit.empty())) {
      last_oom_line_ = line.number;
      return;
    }
    last_oom_unit_ = unit;
    last_oom_line_ = line.number;
    Fact f = make_fact(line, FactKind::systemd_oom_result, Family::systemd);
    f.unit = std::move(unit);
    f.strength = 0.85f;
    f.detail = "oom-kill";
    out.add(std::move(f));
  }

  // "State 'stop-sigterm' timed out. Killing." / "start operation timed out. Terminating."
  // "Active: active (running) since Mon 2023-01-30 08:14:52 UTC; 5 weeks 3 days ago": how long the
  // unit's main process has run (systemd's timespan: months, weeks, days, h, min, s), a context fact
  // (runtime_setting "running for", uptime_at_failure_s) the diagnosis reads when a heap fills.
  void running_for(const Line& line, std::string_view s, FactSink& out) {
    size_t semi = s.find("; ");
    if (semi == std::string_view::npos) return;
    std::string_view span = s.substr(semi + 2);
    size_t ago = span.find(" ago");
    if (ago == std::string_view::npos) return;
    span = span.substr(0, ago);
    double total = 0;
    int parts = 0;
    while (!span.empty() && parts < 6) {
      span = text::trim_left(span);
      std::string_view rest;
      auto n = text::parse_double(span, &rest);
      if (!n) return;
      rest = text::trim_left(rest);
      std::string_view unit = text::take_until(rest, " ");
      double mult = 0;
      if (text::starts_with(unit, "month")) mult = 30.44 * 86400;
      else if (text::starts_with(unit, "week")) mult = 7 * 86400;
      else if (text::starts_with(unit, "day")) mult = 86400;
      else if (unit == "h") mult = 3600;
      else if (unit == "min") mult = 60;
      else if (unit == "s") mult = 1;
      else if (text::starts_with(unit, "year") || unit == "y") mult = 365.25 * 86400;
      else return;
      total += *n * mult;
      span = rest.substr(unit.size());
      ++parts;
    }
    if (total <= 0) return;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::systemd);
    f.uptime_at_failure_s = total;
    f.detail = "running for";
    out.add(std::move(f));
  }

  void timed_out(const Line& line, std::string_view s, size_t at, std::string_view detail, FactSink& out) {
    if (guards::is_mention(s, at, 18)) return;
    Fact f = make_fact(line, FactKind::stop_or_restart, Family::systemd);
    f.detail = std::string(detail);
    size_t colon = s.rfind(": ", at);
    f.unit = colon == std::string_view::npos ? std::string() : unit_before(s, colon + 2);
    out.add(std::move(f));
  }

  // "code=killed, status=9/KILL" / "code=exited, status=1/FAILURE" / "code=dumped, status=6/ABRT"
  void main_exit(const Line& line, std::string unit, std::string_view rest, FactSink& out) {
    std::string_view code = text::take_until(rest, ",");
    auto st = text::after(rest, "status=");
    if (!st) return;
    auto n = text::parse_i64(*st);
    if (!n || (*n == 0 && code == "exited")) return;  // a clean exit
    Fact f = make_fact(line, FactKind::exit_status, Family::systemd);
    f.unit = std::move(unit);
    if (code == "killed" || code == "dumped") f.signal = static_cast<int>(*n);
    else f.exit_code = static_cast<int>(*n);
    f.strength = 0.3f;
    f.detail = "systemd main process " + std::string(code.substr(0, 16));
    platform(line, out);
    out.add(std::move(f));
  }

  // "foo.scope: Consumed 10min 23.721s CPU time, 29.0G memory peak, 0B memory swap peak."
  void consumed(const Line& line, size_t m, FactSink& out) {
    std::string_view s = line.text;
    if (!text::contains(s, "Consumed ")) return;
    std::string_view head = s.substr(0, m);
    size_t comma = head.rfind(", ");
    std::string_view value = comma == std::string_view::npos ? text::first_word(head.substr(head.rfind(' ') + 1))
                                                             : head.substr(comma + 2);
    auto peak = platform::parse_binary_size(text::trim(value));
    if (!peak) return;
    Fact f = make_fact(line, FactKind::memory_usage, Family::systemd);
    f.usage = peak;
    f.unit = unit_before(s, s.find("Consumed "));
    f.detail = "systemd memory peak";
    platform(line, out);
    out.add(std::move(f));
  }

  // "Memory: 1.2G (max: 2.0G available: 0B peak: 2.0G)" / "Memory: 1.2G (limit: 2.0G)"
  void status_memory(const Line& line, FactSink& out) {
    std::string_view t = text::trim_left(line.text).substr(8);
    std::string_view rest;
    auto current = platform::parse_binary_size(t, 1, &rest);
    if (!current) return;
    std::optional<uint64_t> peak, max;
    if (auto v = text::after(rest, "peak: ")) peak = platform::parse_binary_size(*v);
    if (auto v = text::after(rest, "max: ")) max = platform::parse_binary_size(*v);
    if (!max) {
      if (auto v = text::after(rest, "limit: ")) max = platform::parse_binary_size(*v);
    }
    std::string unit = !status_unit_.empty() && line.number <= status_line_ + 40 ? status_unit_ : std::string();
    Fact f = make_fact(line, FactKind::memory_usage, Family::systemd);
    f.usage = peak ? peak : current;
    f.limit = max;
    f.unit = unit;
    f.detail = peak ? "systemd memory peak" : "systemd memory current";
    platform(line, out);
    out.add(std::move(f));
    if (max && *max > 0) {
      Fact l = make_fact(line, FactKind::memory_limit, Family::systemd);
      l.limit = max;
      l.unit = unit;
      l.detail = "MemoryMax";
      out.add(std::move(l));
    }
  }

  // "MemoryMax=2G", "EffectiveMemoryMax=2147483648", "-p MemoryMax=2G", "MemoryLimit=2G", "MemoryHigh=1G"
  void property(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    for (std::string_view key : {"MemoryMax=", "MemoryLimit=", "MemoryHigh="}) {
      size_t p = s.find(key);
      if (p == std::string_view::npos) continue;
      if (p > 0) {
        char c = s[p - 1];
        bool ok = c == ' ' || c == '\t' || c == '=' || c == '"' || c == '\'' || text::ends_with(s.substr(0, p), "Effective");
        if (!ok) continue;
      }
      std::string_view value = text::take_until(s.substr(p + key.size()), " \t\"';,");
      if (value.empty() || value == "infinity" || value.back() == '%') continue;
      auto bytes = platform::parse_binary_size(value);
      if (!bytes || *bytes == 0) continue;
      bool high = key == "MemoryHigh=";
      Fact f = make_fact(line, high ? FactKind::runtime_setting : FactKind::memory_limit, Family::systemd);
      f.limit = bytes;
      f.detail = high ? "MemoryHigh" : key == "MemoryMax=" ? "MemoryMax" : "MemoryMax (MemoryLimit=)";
      if (!status_unit_.empty() && line.number <= status_line_ + 60) f.unit = status_unit_;
      platform(line, out);
      out.add(std::move(f));
    }
  }
};

}  // namespace

const RecognizerEntry kSystemdEntry{"systemd", Family::systemd, kPatterns,
                                    [] { return std::unique_ptr<Recognizer>(new Systemd); }};

}  // namespace aimem
