// User-space OOM killers: daemons that kill on memory pressure before the
// kernel does (systemd-oomd.service(8); rfjakob/earlyoom; hakavlad/nohang;
// facebookincubator/oomd). Each kill becomes
// a userspace_kill fact: process and pid of the victim (or its cgroup), its RSS,
// and detail = the killer ("systemd-oomd", "earlyoom", "nohang", "oomd").
//
// systemd-oomd (journal lines, any locale's date prefix; or bare with -o cat):
//   systemd-oomd[93234]: Killed /user.slice/.../app-x.scope due to memory pressure for /user.slice/user-1000.slice
//     being 75.12% > 60.00% for > 30s with reclaim activity
//   systemd-oomd[3562]: Killed /user.slice/... due to memory used (16109408256) / total (16474247168) and
//     swap used (1982627840) / total (2147479552) being more than 90.00%
//   systemd-oomd[..]: Marked /user.slice/... for killing due to ...           (newer wording)
//   systemd-oomd[1003]: Memory pressure for /user.slice/user-1000.slice/user@1000.service is greater than 10 for
//     more than 10 seconds and there was reclaim activity                     (247-248: the kill, by its rule)
//   app-x.scope: systemd-oomd killed 12 process(es) in this unit.               (PID 1, systemd >= 252)
//   systemd-oomd[..]: Considered 19 cgroups for killing, top candidates were:    (then per candidate:)
//   systemd-oomd[..]:         Path: /system.slice/x.service  ...  Current Memory Usage: 55.5M
//   (the victim's usage from its candidate entry is the kill's rss)
//   The "Considered N cgroups for killing, top candidates were:" block lists candidates, not victims.
// earlyoom (with or without the "earlyoom[pid]: " prefix):
//   mem avail:   888 of 55597 MiB ( 1.60%), swap free:    0 of 8191 MiB ( 0.00%)   -> host_state
//   low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%
//   sending SIGTERM to process 696 uid 1001 "ipfs": badness 757, VmRSS 637 MiB
//   sending SIGTERM to process 906175 uid 1000 "java": oom_score 1170, VmRSS 43912 MiB, cmdline "..."
//   sending SIGKILL to process ... / escalating to SIGKILL after 0.500 seconds
//   (before 1.0: stderr, the victim's name as /proc/<pid>/stat gives it)
//   Out of memory! avail: 313 MiB < min: 314 MiB
//   Killing process 8437 (chrome) with badness 332 time_running=5698.4m      (or "Killing process 8437 (chrome)")
// nohang:
//   Victim status (found in 4ms):
//     PID:       9828, name: stress, state: R, EUID: 1000, ...
//     Vm, MiB:   Size: 3080, RSS: 485, Swap: 0
//   Implementing a corrective action:                  (0.2+: "Implement a corrective action:"
//     Sending SIGTERM to the victim                      "Send SIGTERM to the victim; total response time: 111ms")
//   (old) Preventing OOM: trying to send the SIGTERM signal to stress,
//         Pid: 9828, Badness: 82, VmRSS: 485 MiB, VmSwap: 0 MiB
// Facebook oomd:
//   Trying to kill /sys/fs/cgroup/workload.slice/x.service
//   Killed 2: 1234(python) 1235(bash)
//   oomd kill: 0.25 0.10 0.05 /workload.slice/x.service 1073741824 ruleset:[..] detectorgroup:[..] killer:kill_by_... v2
// Android lmkd (system/memory/lmkd/lmkd.cpp, Android 10+; logcat):
//   lowmemorykiller: Kill 'com.example.app' (12345), uid 10123, oom_score_adj 900 to free 81234kB rss, 2048kB swap; reason: ...
//   lmkd    : Reclaim 'com.example.app' (591), uid 10112, oom_score_adj 975, state 19 to free 19252kB rss, ...; reason: ...
//     (later releases log the kill as "Reclaim" under the lmkd tag)
//   2024-10-02 21:07:59.014   495-495   lowmemorykiller   lmkd   I  Kill 'com.example.app' (21877), uid 10342, ...
//     (Android Studio's logcat view since 2022: tag, process and level in columns)
// Android's in-kernel lowmemorykiller (drivers/staging/android/lowmemorykiller.c, before lmkd):
//   lowmemorykiller: Killing 'com.android.browser' (2544), adj 1000,                  (3.10+)
//   send sigkill to 2544 (Gallery), adj 8, size 6890                                   (2.6-3.4; size in pages)
// Android's ApplicationExitInfo (API 30+, `adb shell dumpsys activity exit-info PKG`):
//   process=com.example.app reason=3 (LOW_MEMORY) subreason=0 (UNKNOWN) status=0
// Dask's nanny (distributed/nanny.py, worker memory management):
//   distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting
//   distributed.nanny.memory - WARNING - Worker tcp://10.0.0.5:40121 (pid=4242) exceeded 95% memory budget. Restarting...
//   (the worker's budget from "Memory: 2.67 GB" / "Worker memory limit: 2.67 GB" lines before it)
// Talos's OOM controller (siderolabs/talos, internal/app/machined/pkg/controllers/runtime/oom.go):
//   [talos] Sending SIGKILL to cgroup {"component": ..., "cgroup": "/sys/fs/cgroup/kubepods/burstable/pod..."}
#include <algorithm>
#include <map>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"systemd-oomd"},
    {"due to memory pressure for", kCompanion},
    {"due to memory used (", kCompanion},
    {"sending SIGTERM to process"},
    {"sending SIGKILL to process"},
    {"mem avail:", kContext},
    {"Killing process: [^,]+, pid: [0-9]+, badness", kRegex},  // earlyoom up to 1.1
    {"Out of memory! avail: "},                                  // earlyoom before 1.0
    {"Killing process ", kContext},
    {"a corrective action", kCompanion},
    {" to the victim", kCompanion},
    {"Preventing OOM: trying to send"},
    {"Badness: ", kContext},
    {"PID: +[0-9]+, [Nn]ame: ", kRegex | kContext},
    {"Vm, MiB:", kContext},
    {"Trying to kill /"},
    {"Killed [0-9]+: [0-9]+\\(", kRegex},
    {"oomd kill:"},
    {"lowmemorykiller: Kill"},
    {"lmkd +: (Kill|Reclaim) '", kRegex},
    {"lowmemorykiller +[^ ]+ +[VDIWEF] +(Kill|Reclaim) '", kRegex},
    {"lowmemorykiller: Killing '"},
    {"send sigkill to [0-9]+ \\(", kRegex},
    // "... budget. Restarting" (older releases: two blanks before Restarting); the nanny's "Worker process N was killed by signal" gates it
    {"memory budget.", kCompanion},
    {"Worker memory limit: ", kContext},
    {"Sending SIGKILL to cgroup"},
    {" reason=3 (LOW_MEMORY)", kCompanion},  // Android's ApplicationExitInfo (dumpsys activity exit-info)
};

// "... 19 of   950 MiB ..." -> (19 MiB, 950 MiB)
bool amount_of(std::string_view s, std::optional<uint64_t>& part, std::optional<uint64_t>& whole) {
  std::string_view rest;
  auto a = text::parse_u64(platform::skip(s), &rest);
  if (!a || !text::starts_with(rest, " of ")) return false;
  auto b = text::parse_u64(platform::skip(rest.substr(4)), &rest);
  if (!b) return false;
  rest = platform::skip(rest);
  uint64_t unit = text::starts_with(rest, "MiB") ? units::MiB : text::starts_with(rest, "KiB") ? units::KiB : 0;
  if (!unit) return false;
  part = *a * unit;
  whole = *b * unit;
  return true;
}

class UserspaceKillers final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_ && line.number > pending_line_ + 12) flush(out);
    if (size_t p = s.find("sending SIG"); p != std::string_view::npos && text::contains(s, " to process ")) {
      earlyoom_kill(line, s.substr(p), out);
    } else if (size_t kp = s.find("Killing process: "); kp != std::string_view::npos && text::contains(s, ", badness")) {
      earlyoom_old_kill(line, s.substr(kp + 17), out);
    } else if (text::contains(s, "Out of memory! avail: ") && text::contains(s, " < min: ")) {
      if (guards::is_mention(s, s.find("Out of memory! avail: "), 22)) return;
      flush(out);
      pending_ = kill_fact(line, "earlyoom", out);
      pending_line_ = line.number;
      early_zero_ = true;
    } else if (size_t kq = s.find("Killing process "); kq != std::string_view::npos) {
      if (pending_ && early_zero_) earlyoom_zero_victim(s.substr(kq + 16), out);
    } else if (size_t m = s.find("mem avail:"); m != std::string_view::npos) {
      earlyoom_state(line, s.substr(m + 10));
    } else if (text::contains(s, "systemd-oomd") || text::contains(s, "due to memory pressure for") ||
               text::contains(s, "due to memory used (")) {
      oomd_systemd(line, out);
    } else if (size_t ki = s.find("lowmemorykiller: Killing"); ki != std::string_view::npos) {
      lmkd(line, s.substr(ki + 24), out, "Android lowmemorykiller (in-kernel)");
    } else if (size_t k = s.find("lowmemorykiller: Kill"); k != std::string_view::npos) {
      lmkd(line, s.substr(k + 21), out);
    } else if (size_t sk = s.find("send sigkill to "); sk != std::string_view::npos && killer_prefix(s.substr(0, sk))) {
      old_lowmemorykiller(line, s.substr(sk + 16), out);
    } else if (size_t ak = s.find(" Kill '"); ak != std::string_view::npos && text::contains(s, "lowmemorykiller ")) {
      lmkd(line, s.substr(ak + 5), out);
    } else if (size_t ar = s.find(" Reclaim '"); ar != std::string_view::npos && text::contains(s, "lowmemorykiller ")) {
      lmkd(line, s.substr(ar + 8), out);
    } else if (size_t r = s.find(": Reclaim '"); r != std::string_view::npos && text::contains(s, "lmkd")) {
      lmkd(line, s.substr(r + 10), out);
    } else if (size_t kk = s.find(": Kill '"); kk != std::string_view::npos && text::contains(s, "lmkd")) {
      lmkd(line, s.substr(kk + 7), out);
    } else if (size_t lm = s.find(" reason=3 (LOW_MEMORY)"); lm != std::string_view::npos) {
      exit_info(line, s, out);
    } else if (size_t b = s.find("memory budget."); b != std::string_view::npos && text::contains(s.substr(b), "Restarting")) {
      dask_nanny(line, out);
    } else if (auto lim = text::after(s, "Worker memory limit: ")) {
      dask_limit_ = units::parse_log_size(*lim);
    } else if (size_t t = s.find("Sending SIGKILL to cgroup"); t != std::string_view::npos) {
      talos(line, s.substr(t), out);
    } else if (text::contains(s, "oomd kill:") || text::contains(s, "Trying to kill /") || text::contains(s, "Killed ")) {
      oomd_facebook(line, out);
    } else {
      nohang(line, out);
    }
  }

  void finish(FactSink& out) override {
    flush(out);
    flush_host(out);
  }

 private:
  std::optional<Fact> pending_;  // a kill whose victim details follow on later lines
  std::optional<Fact> host_;     // earlyoom's latest "mem avail" reading
  uint64_t pending_line_ = 0;
  uint64_t last_kill_line_ = 0;
  std::string last_kill_who_;
  // nohang prints the victim before the action: remember it.
  std::string nohang_name_;
  std::optional<int64_t> nohang_pid_;
  std::optional<uint64_t> nohang_rss_;
  uint64_t nohang_line_ = 0;
  // systemd-oomd's candidate list: the cgroup named last and each one's usage.
  std::string oomd_candidate_;
  std::map<std::string, uint64_t> candidate_usage_;
  // oomd: "Trying to kill <cgroup>" precedes "Killed N: pid(comm)".
  std::string oomd_cgroup_;
  uint64_t oomd_line_ = 0;

  void flush(FactSink& out) {
    if (pending_) out.add(std::move(*pending_));
    pending_.reset();
  }

  Fact kill_fact(const Line& line, std::string_view killer, FactSink& out) {
    flush_host(out);  // the host's state just before this kill
    Fact f = make_fact(line, FactKind::userspace_kill, Family::userspace_killer);
    f.layer = Layer::userspace_oom_killer;
    f.strength = 0.9f;
    f.detail = std::string(killer);
    return f;
  }

  // The same kill is often printed twice (oomd's line and PID 1's line).
  bool repeated(const Line& line, const std::string& who) {
    bool rep = last_kill_line_ && line.number <= last_kill_line_ + 20 && who == last_kill_who_;
    last_kill_line_ = line.number;
    last_kill_who_ = who;
    return rep;
  }

  std::optional<uint64_t> dask_limit_;  // the Dask worker's memory limit, when logged

  // What may stand before the in-kernel killer's words: nothing, the kernel's
  // "<4>[ 2207.480419]" or its tag; not a sentence.
  static bool killer_prefix(std::string_view before) {
    before = text::trim(before);
    return before.empty() || before.back() == ']' || text::ends_with(before, "lowmemorykiller:");
  }

  // The in-kernel killer of Android 2.x-4.x: "2544 (Gallery), adj 8, size 6890" (size in 4 KiB pages).
  void old_lowmemorykiller(const Line& line, std::string_view s, FactSink& out) {
    std::string_view rest;
    auto pid = text::parse_i64(s, &rest);
    if (!pid || !text::starts_with(rest, " (")) return;
    Fact f = kill_fact(line, "Android lowmemorykiller (in-kernel)", out);
    f.pid = pid;
    f.process = std::string(text::take_until(rest.substr(2), ")").substr(0, 128));
    if (auto sz = text::after(rest, "size ")) {
      if (auto pages = text::parse_u64(*sz); pages && *pages < (1ULL << 32)) f.rss = *pages * 4 * units::KiB;
    }
    if (repeated(line, f.process + std::to_string(*pid))) return;
    out.add(std::move(f));
  }

  // " 'com.example.app' (12345), uid 10123, oom_score_adj 900 to free 81234kB rss, ..."
  void lmkd(const Line& line, std::string_view s, FactSink& out, std::string_view killer = "lmkd") {
    Fact f = kill_fact(line, killer, out);
    if (size_t q = s.find('\''); q != std::string_view::npos && q < 4) {
      std::string_view name = s.substr(q + 1);
      name = name.substr(0, std::min<size_t>(name.find('\''), 128));
      f.process = std::string(name);
    }
    if (auto p = text::after(s, "' (")) f.pid = text::parse_i64(*p);
    if (auto r = text::after(s, "to free ")) {
      std::string_view unit;
      if (auto kb = text::parse_u64(*r, &unit); kb && text::starts_with(unit, "kB")) f.rss = *kb * units::KiB;
    }
    if (auto why = text::after(s, "reason: ")) f.detail += ", " + std::string(text::trim(why->substr(0, 80)));
    if (repeated(line, f.process + std::to_string(f.pid.value_or(0)))) return;
    out.add(std::move(f));
  }

  // Android's record of why a process ended (ApplicationExitInfo, API 30+,
  // as `dumpsys activity exit-info` prints it): REASON_LOW_MEMORY (3) is the
  // low-memory killer's kill.
  void exit_info(const Line& line, std::string_view s, FactSink& out) {
    Fact f = kill_fact(line, "Android low-memory killer (ApplicationExitInfo LOW_MEMORY)", out);
    if (auto p = text::after(s, "process=")) f.process = std::string(text::first_word(*p).substr(0, 128));
    if (repeated(line, f.process)) return;
    out.add(std::move(f));
  }

  // The nanny restarts a worker that passed its share of the memory budget.
  void dask_nanny(const Line& line, FactSink& out) {
    Fact f = kill_fact(line, "Dask nanny", out);
    f.process = "dask-worker";
    if (auto p = text::after(line.text, "(pid=")) f.pid = text::parse_i64(*p);
    f.limit = dask_limit_;
    // "exceeded 95% memory budget": the terminate threshold, as a share of the worker's limit.
    if (size_t b = line.text.find("% memory budget"); b != std::string_view::npos) {
      size_t start = b;
      while (start > 0 && (platform::is_digit(line.text[start - 1]) || line.text[start - 1] == '.')) --start;
      if (auto pct = text::parse_double(line.text.substr(start, b - start)); pct && *pct >= 0 && *pct <= 100) f.ratio = *pct / 100.0;
    }
    if (repeated(line, "dask" + std::to_string(f.pid.value_or(0)))) return;
    out.add(std::move(f));
  }

  // "Sending SIGKILL to cgroup {..., "cgroup": "/sys/fs/cgroup/kubepods/..."}"
  void talos(const Line& line, std::string_view s, FactSink& out) {
    if (!text::contains(line.text, "talos") && !text::contains(line.text, "OOMController")) return;
    Fact f = kill_fact(line, "Talos OOM controller", out);
    if (auto c = text::after(s, "\"cgroup\": \"")) f.cgroup = std::string(c->substr(0, std::min<size_t>(c->find('"'), 256)));
    if (repeated(line, f.cgroup)) return;
    out.add(std::move(f));
  }

  // "sending SIGTERM to process 696 uid 1001 "ipfs": badness 757, VmRSS 637 MiB"
  void earlyoom_kill(const Line& line, std::string_view s, FactSink& out) {
    if (guards::is_mention(line.text, line.text.find("sending SIG"), 11)) return;
    auto rest = text::after(s, " to process ");
    if (!rest) return;
    std::string_view after;
    auto pid = text::parse_i64(*rest, &after);
    if (!pid) return;
    Fact f = kill_fact(line, "earlyoom", out);
    f.pid = *pid;
    if (size_t q = after.find('"'); q != std::string_view::npos && q < 24) {
      std::string_view name = after.substr(q + 1);
      size_t close = name.find("\":");
      if (close == std::string_view::npos) close = name.find('"');
      if (close != std::string_view::npos) f.process = std::string(name.substr(0, std::min<size_t>(close, 64)));
    }
    if (auto v = text::after(s, "VmRSS ")) {
      std::string_view r;
      if (auto mib = text::parse_u64(*v, &r); mib && text::starts_with(r, " MiB")) f.rss = *mib * units::MiB;
    }
    f.detail += text::contains(s, "SIGKILL") ? " (SIGKILL)" : " (SIGTERM)";
    out.add(std::move(f));
  }

  // earlyoom before 1.0: "Killing process 8437 (chrome) with badness 332 ..."
  // after its "Out of memory! avail:" line names the victim of that kill.
  bool early_zero_ = false;
  void earlyoom_zero_victim(std::string_view s, FactSink& out) {
    std::string_view rest;
    auto pid = text::parse_i64(s, &rest);
    if (!pid || *pid <= 0) return;
    std::string_view name = text::first_word(text::trim_left(rest));
    if (name.size() > 2 && name.front() == '(' && name.back() == ')') name = name.substr(1, name.size() - 2);
    pending_->pid = *pid;
    pending_->process = std::string(name.substr(0, 64));
    early_zero_ = false;
    flush(out);
  }

  // earlyoom up to 1.1: "Killing process: tail, pid: 5476, badness: 781, VmRSS: 6187 MiB".
  void earlyoom_old_kill(const Line& line, std::string_view s, FactSink& out) {
    if (guards::is_mention(line.text, line.text.find("Killing process: "), 17)) return;
    size_t comma = s.find(", pid: ");
    if (comma == std::string_view::npos) return;
    auto pid = text::parse_i64(s.substr(comma + 7));
    if (!pid) return;
    Fact f = kill_fact(line, "earlyoom", out);
    f.pid = *pid;
    f.process = std::string(s.substr(0, std::min<size_t>(comma, 64)));
    if (auto v = text::after(s, "VmRSS: ")) {
      std::string_view r;
      if (auto mib = text::parse_u64(*v, &r); mib && text::starts_with(r, " MiB")) f.rss = *mib * units::MiB;
    }
    f.detail += " (SIGTERM)";
    out.add(std::move(f));
  }

  // "mem avail:   19 of   950 MiB ( 2.10%), swap free:  153 of 1023 MiB (14.96%)"
  // earlyoom can print this every second: only the reading before each kill
  // (and the last one) becomes a fact.
  void earlyoom_state(const Line& line, std::string_view s) {
    std::optional<uint64_t> avail, total;
    if (!amount_of(s, avail, total)) return;
    Fact f = make_fact(line, FactKind::host_state, Family::userspace_killer);
    f.total = total;
    f.free = avail;
    f.detail = "host RAM";
    host_ = std::move(f);
  }

  void flush_host(FactSink& out) {
    if (host_) out.add(std::move(*host_));
    host_.reset();
  }

  void oomd_systemd(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    // The candidate list before a kill (systemd >= 248, "Considered N cgroups
    // for killing, top candidates were:"): "Path: <cgroup>" then "Current
    // Memory Usage: 55.5M"; the victim's usage is its own size.
    if (auto v = text::after(s, "Path: /")) {
      oomd_candidate_ = "/" + std::string(text::first_word(*v).substr(0, 511));
      return;
    }
    if (auto v = text::after(s, "Current Memory Usage: ")) {
      auto bytes = units::parse_log_size(*v);
      if (bytes && !oomd_candidate_.empty() && candidate_usage_.size() < 32) candidate_usage_[oomd_candidate_] = *bytes;
      return;
    }
    // PID 1: "app-x.scope: systemd-oomd killed 12 process(es) in this unit."
    if (size_t k = s.find("systemd-oomd killed"); k != std::string_view::npos) {
      std::string_view head = text::trim(s.substr(0, k));
      if (!head.empty() && head.back() == ':') head.remove_suffix(1);
      size_t sp = head.find_last_of(" \t");
      std::string unit(sp == std::string_view::npos ? head : head.substr(sp + 1));
      if (repeated(line, unit)) return;
      Fact f = kill_fact(line, "systemd-oomd", out);
      f.unit = unit;
      f.cgroup = unit;
      if (auto n = text::parse_u64(s.substr(k + 20))) f.count = *n;
      out.add(std::move(f));
      return;
    }
    // systemd 247-248 logged its kill by the rule that fired, not the victim:
    // "Memory pressure for /user.slice/user-1000.slice/user@1000.service is
    // greater than 10 for more than 10 seconds and there was reclaim activity"
    // (the victim is one of that cgroup's children, named by PID 1's
    // "Deactivated" line after it).
    if (size_t m = s.find("Memory pressure for /"); m != std::string_view::npos && text::contains(s, "there was reclaim activity")) {
      if (guards::is_mention(s, m, 16)) return;
      std::string cgroup(text::first_word(s.substr(m + 20)).substr(0, 512));
      if (repeated(line, cgroup)) return;
      Fact f = kill_fact(line, "systemd-oomd", out);
      f.detail += " (memory pressure for " + cgroup + ", a unit under it)";
      out.add(std::move(f));
      return;
    }
    size_t p = s.find("Killed /");
    constexpr size_t verb = 7;  // "Killed " / "Marked "
    if (p == std::string_view::npos) p = s.find("Marked /");
    if (p == std::string_view::npos) return;
    if (guards::is_mention(s, p, verb)) return;
    std::string_view path = s.substr(p + verb);
    // "Killed <path> due to ...", "Marked <path> for killing due to ...": the first of the two ends it.
    size_t end = std::min(path.find(" due to "), path.find(" for killing"));
    // The path ends at " due to" (it may contain escaped spaces); a cut line ends it anywhere.
    std::string cgroup(end == std::string_view::npos ? text::first_word(path).substr(0, 512)
                                                     : text::trim(path.substr(0, std::min<size_t>(end, 512))));
    // PID 1 reports the same kill by unit name; compare by the last component.
    std::string last = cgroup.substr(cgroup.rfind('/') + 1);
    if (repeated(line, last)) return;
    Fact f = kill_fact(line, "systemd-oomd", out);
    f.cgroup = cgroup;
    if (auto it = candidate_usage_.find(cgroup); it != candidate_usage_.end()) f.rss = it->second;
    // The largest other candidate: oomd picks by pressure and reclaim, not size,
    // so what held the memory may be a neighbour it listed and spared.
    for (const auto& [path, bytes] : candidate_usage_)
      if (path != cgroup && (!f.other_processes || bytes > *f.other_processes)) f.other_processes = bytes;
    if (auto v = text::after(s, "memory used (")) f.usage = text::parse_u64(*v);
    if (auto v = text::after(s, ") / total (")) f.total = text::parse_u64(*v);
    if (text::contains(s, "memory pressure")) f.detail += " (memory pressure)";
    else if (text::contains(s, "swap used")) f.detail += " (memory and swap used)";
    out.add(std::move(f));
    last_kill_who_ = last;
  }

  void oomd_facebook(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (auto v = text::after(s, "Trying to kill /")) {
      oomd_cgroup_ = "/" + std::string(text::first_word(*v).substr(0, 511));
      oomd_line_ = line.number;
      return;
    }
    if (auto v = text::after(s, "oomd kill: ")) {
      // "<p10> <p60> <p300> <cgroup> <usage> ruleset:[..] ..."
      std::vector<std::string_view> tok;
      std::string_view rest = *v;
      while (tok.size() < 5) {
        std::string_view w = text::first_word(rest);
        if (w.empty()) break;
        tok.push_back(w);
        rest = rest.substr(static_cast<size_t>(w.data() + w.size() - rest.data()));
      }
      // The cgroup, with or without its leading "/" ("user.slice/user-1000.slice/session-2.scope").
      if (tok.size() < 4 || tok[3].empty() || (tok[3][0] != '/' && !text::contains(tok[3], ".slice") && !text::contains(tok[3], ".scope") &&
                                               !text::contains(tok[3], ".service")))
        return;
      std::string cg = tok[3][0] == '/' ? std::string(tok[3].substr(0, 512)) : "/" + std::string(tok[3].substr(0, 511));
      if (repeated(line, cg.substr(cg.rfind('/') + 1))) return;
      Fact f = kill_fact(line, "oomd", out);
      f.cgroup = cg;
      if (tok.size() >= 5) f.usage = text::parse_u64(tok[4]);
      out.add(std::move(f));
      return;
    }
    // "Killed 2: 1234(python) 1235(bash)" after "Trying to kill <cgroup>"
    size_t p = s.find("Killed ");
    if (p == std::string_view::npos) return;
    bool oomd_context = text::contains(s, "oomd") || (oomd_line_ && line.number <= oomd_line_ + 40);
    if (!oomd_context) return;
    std::string_view rest;
    auto n = text::parse_u64(s.substr(p + 7), &rest);
    if (!n || !text::starts_with(rest, ": ")) return;
    rest = platform::skip(rest.substr(2));
    std::string_view after;
    auto pid = text::parse_i64(rest, &after);
    std::string cg = oomd_cgroup_;
    if (repeated(line, cg.substr(cg.rfind('/') + 1))) return;
    Fact f = kill_fact(line, "oomd", out);
    f.cgroup = cg;
    f.count = *n;
    if (pid) f.pid = *pid;
    if (text::starts_with(after, "(")) f.process = std::string(text::take_until(after.substr(1), ")").substr(0, 64));
    out.add(std::move(f));
  }

  void nohang(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    // Victim details, printed before the action (new) or after it (old).
    if (auto v = text::after(s, "PID: ")) {
      std::string_view rest;
      auto pid = text::parse_i64(platform::skip(*v), &rest);
      auto name = text::iafter(rest, "name: ");
      if (!pid || !name) return;
      nohang_pid_ = *pid;
      nohang_name_ = std::string(text::take_until(*name, ", ").substr(0, 64));
      nohang_rss_.reset();
      nohang_line_ = line.number;
      return;
    }
    if (auto v = text::after(s, "Vm, MiB:")) {
      if (auto r = text::after(*v, "RSS: ")) {
        if (auto mib = text::parse_u64(*r)) nohang_rss_ = *mib * units::MiB;
      }
      return;
    }
    if (auto v = text::after(s, "Pid: ")) {
      // old: "Pid: 9828, Badness: 82, VmRSS: 485 MiB, VmSwap: 0 MiB" after "Preventing OOM"
      if (!pending_ || pending_->detail != "nohang") return;
      pending_->pid = text::parse_i64(*v);
      if (auto r = text::after(s, "VmRSS: ")) {
        if (auto mib = text::parse_u64(*r)) pending_->rss = *mib * units::MiB;
      }
      flush(out);
      return;
    }
    if (auto v = text::after(s, "Preventing OOM: trying to send the ")) {
      // "... SIGTERM signal to stress,"
      flush(out);
      Fact f = kill_fact(line, "nohang", out);
      if (auto name = text::after(*v, " signal to ")) {
        std::string_view n = text::trim(*name);
        if (!n.empty() && n.back() == ',') n.remove_suffix(1);
        f.process = std::string(n.substr(0, 64));
      }
      pending_ = std::move(f);
      pending_line_ = line.number;
      return;
    }
    // "Implementing a corrective action:" + "  Sending SIGTERM to the victim"
    if ((text::contains(s, "Sending SIG") || text::contains(s, "Send SIG")) && text::contains(s, " to the victim")) {
      if (!text::contains(s, "nohang") && !(nohang_line_ && line.number <= nohang_line_ + 60) && !corrective_near(line)) return;
      Fact f = kill_fact(line, "nohang", out);
      if (nohang_line_ && line.number <= nohang_line_ + 60) {
        f.pid = nohang_pid_;
        f.process = nohang_name_;
        f.rss = nohang_rss_;
      }
      if (repeated(line, f.process)) return;
      out.add(std::move(f));
      return;
    }
    if (text::contains(s, "a corrective action")) corrective_line_ = line.number;
  }

  uint64_t corrective_line_ = 0;
  bool corrective_near(const Line& line) const { return corrective_line_ && line.number <= corrective_line_ + 3; }
};

}  // namespace

const RecognizerEntry kUserspaceKillersEntry{"userspace_killers", Family::userspace_killer, kPatterns,
                                             [] { return std::unique_ptr<Recognizer>(new UserspaceKillers); }};

}  // namespace aimem
