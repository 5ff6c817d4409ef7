// See runner.h. The child waits on a pipe until the parent has put it in the
// cgroup, so not one page of CMD is charged elsewhere; then it execs. The
// parent waits on a pidfd with the sampling interval as the poll timeout, so a
// sample costs one wake-up and the exit is seen at once. Signals aimem gets
// are forwarded to CMD, except SIGINT/SIGQUIT typed at the terminal, which
// the kernel already sent to CMD's process group (forwarding would double
// them, as tini documents). However aimem ends, CMD does not outlive it: CMD
// has PR_SET_PDEATHSIG, and a guard process (RunCgroup::start_guard) kills
// what CMD started and removes the cgroup when aimem is killed outright; a
// later run removes a cgroup whose guard was killed too (remove_stale).
#include "watch/runner.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "evidence/store.h"
#include "recognize/scanner.h"
#include "render/diagnosis_json.h"
#include "render/diagnosis_text.h"
#include "sources/live.h"
#include "sources/cgroup_ctl.h"
#include "watch/sample_json.h"
#include "sources/sampler.h"
#include "watch/scrape.h"
#include "watch/store.h"
#include "watch/trend_diag.h"

namespace aimem::watch {
namespace {

constexpr size_t kMaxKeptSamples = 4000;  // in memory; the recording keeps all
constexpr const char* kCgroupPrefix = "aimem-run-";  // + aimem's pid: whose cgroup it is

std::atomic<pid_t> g_child{0};

void forward(int sig, siginfo_t* info, void*) {
  pid_t child = g_child.load();
  if (child <= 0) return;
  if ((sig == SIGINT || sig == SIGQUIT) && info && info->si_code == SI_KERNEL) return;  // from the tty
  ::kill(child, sig);
}

const int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH};

struct SignalForwarding {
  struct sigaction old[sizeof kForwarded / sizeof kForwarded[0]];
  SignalForwarding() {
    struct sigaction sa{};
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &sa, &old[i]);
  }
  ~SignalForwarding() {
    for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &old[i], nullptr);
    g_child = 0;
  }
};

// Tees CMD's stderr to ours and through the recognizers (streaming, bounded
// by FactStore's caps), on its own thread.
class StderrTee {
 public:
  StderrTee(int fd, FactStore& facts) : fd_(fd), facts_(facts) {
    ctx_.name = "stderr of the command";
    ctx_.reference_us = timeutil::now_us();
    thread_ = std::thread([this] { loop(); });
  }
  // Stops after what is already in the pipe has been read (bounded wait).
  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }

 private:
  void loop() {
    LineScanner scanner(ctx_, facts_);
    char buf[16384];
    int idle = 0, after_stop = 0;
    for (;;) {
      if (stop_ && ++after_stop > 20) break;  // a writer left behind: at most ~2 s more
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, 100);
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) {
        if (stop_ && ++idle > 3) break;  // writers gone or silent: done
        continue;
      }
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      idle = 0;
      for (ssize_t off = 0; off < n;) {
        ssize_t w = ::write(2, buf + off, static_cast<size_t>(n - off));
        if (w <= 0) break;
        off += w;
      }
      scanner.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
    scanner.finish();
  }

  int fd_;
  FactStore& facts_;
  SourceContext ctx_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void keep(std::vector<Sample>& kept, Sample s) {
  kept.push_back(std::move(s));
  if (kept.size() >= kMaxKeptSamples) {  // halve: keep every other sample, first and last kept
    std::vector<Sample> half;
    half.reserve(kept.size() / 2 + 1);
    for (size_t i = 0; i < kept.size(); i += 2) half.push_back(std::move(kept[i]));
    if (kept.size() % 2 == 0) half.push_back(std::move(kept.back()));
    kept = std::move(half);
  }
}

std::string join_command(const std::vector<std::string>& cmd) {
  std::string out;
  for (const auto& a : cmd) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\"'\\$`;&|<>()") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return text::printable(out);
}

const CgroupSample* find_cgroup(const Sample& s, const std::string& path) {
  for (const auto& c : s.cgroups)
    if (c.path == path) return &c;
  return nullptr;
}

// A command that exits with an error status of its own (no signal), in a
// cgroup that recorded no OOM kill and peaked well under its limit, with no
// memory failure in its stderr or the kernel log: the recording rules memory
// out, and saying "unknown" with a page of checks would send people the
// wrong way.
void rule_out_memory(RunResult& r) {
  Diagnosis& d = *r.diagnosis;
  if (r.signal || r.cgroup_path.empty() || !r.cgroup_oom_kills || *r.cgroup_oom_kills > 0) return;
  if (d.layer != Layer::unknown && d.layer != Layer::none) return;
  std::optional<uint64_t> peak = r.cgroup_peak;
  for (const auto& s : r.samples)
    if (const CgroupSample* c = find_cgroup(s, r.cgroup_path); c && c->usage) peak = std::max(peak.value_or(0), *c->usage);
  if (!peak) return;
  const bool limited = r.cgroup_limit && *r.cgroup_limit > 0 && *r.cgroup_limit < (1ULL << 62);
  const double ratio = limited ? double(*peak) / double(*r.cgroup_limit) : 0;
  if (limited && ratio >= 0.9) return;  // close to the limit: memory may well have been the trouble
  const double pct = std::round(ratio * 100);
  r.verdict = !limited ? fmt::format("not memory: peak {}, no OOM kill", units::format_bytes(*peak))
              : pct < 1 ? std::string("not memory: peak under 1% of the limit, no OOM kill")
                        : fmt::format("not memory: peak {:.0f}% of the limit, no OOM kill", pct);
  Incident inc;
  inc.layer = Layer::not_memory;
  inc.cause = Cause::not_memory;
  inc.confidence = 0.8;
  inc.summary = r.verdict;
  inc.time_us = r.end_us;
  inc.pool.name = "cgroup " + r.cgroup_path;
  inc.pool.used_bytes = peak;
  if (limited) inc.pool.limit_bytes = r.cgroup_limit;
  inc.reasons.push_back(fmt::format("the command exited with status {} of its own: no signal ended it", r.exit_status));
  inc.reasons.push_back("its cgroup recorded no OOM kill");
  inc.reasons.push_back(limited ? fmt::format("its memory peaked at {} of the {} limit", units::format_bytes(*peak), units::format_bytes(*r.cgroup_limit))
                                : fmt::format("its memory peaked at {}", units::format_bytes(*peak)));
  inc.fixes.push_back({"look at the command's own error output for why it failed", "the failure was not about memory"});
  d.incidents.clear();
  d.incidents.push_back(std::move(inc));
  d.layer = Layer::not_memory;
  d.cause = Cause::not_memory;
  d.confidence = 0.8;
}

}  // namespace

RunResult run_command(const RunOptions& o) {
  RunResult r;
  if (o.command.empty()) {
    r.problem = "no command given: aimem run [OPTIONS] -- CMD [ARGS...]";
    r.exit_status = 2;
    return r;
  }
  std::unique_ptr<RunCgroup> cg;
  if (o.cgroup) {
    // A run killed outright (SIGKILL) whose guard was killed too left its
    // cgroup, limit and processes behind: its name says whose it was.
    std::vector<std::string> errs;
    for (const auto& path : RunCgroup::remove_stale(o.root, kCgroupPrefix, &errs))
      r.warnings.push_back(fmt::format("removed the cgroup {} left behind by an aimem run that was killed (its pid is gone)", path));
    for (auto& e : errs) r.warnings.push_back(std::move(e));
    std::string err;
    cg = RunCgroup::create(o.root, fmt::format("{}{}", kCgroupPrefix, ::getpid()), o.memory_limit, &err);
    if (!cg) {
      if (o.memory_limit) {
        r.problem = fmt::format("cannot apply --memory-limit: {}", err);
        r.exit_status = 2;
        return r;
      }
      r.warnings.push_back(fmt::format("running without a cgroup of its own ({}); sampling the process tree only", err));
    } else {
      r.cgroup_path = cg->path();
      r.cgroup_limit = o.memory_limit;
      // If aimem is killed outright, the guard empties and removes the cgroup.
      if (!cg->start_guard(&err)) r.warnings.push_back(err);
    }
  } else if (o.memory_limit) {
    r.problem = "--memory-limit needs a cgroup; it cannot be combined with --no-cgroup";
    r.exit_status = 2;
    return r;
  }

  std::unique_ptr<Store> store;
  if (!o.record.empty()) {
    std::string err;
    store = Store::open(o.record, Retention{}, &err);
    if (!store) {
      r.problem = err;
      r.exit_status = 2;
      return r;
    }
    store->set_meta("command", join_command(o.command));
    if (o.memory_limit) store->set_meta("memory_limit", std::to_string(*o.memory_limit));
    if (cg) store->set_meta("cgroup", cg->path());
  }

  int go[2], exec_err[2], err_pipe[2] = {-1, -1};
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(exec_err, O_CLOEXEC) != 0 ||
      (o.capture_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    r.problem = fmt::format("pipe: {}", std::strerror(errno));
    r.exit_status = 2;
    return r;
  }
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  SignalForwarding forwarding;
  r.start_us = timeutil::now_us();
  const pid_t self = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    r.problem = fmt::format("fork: {}", std::strerror(errno));
    r.exit_status = 2;
    return r;
  }
  if (child == 0) {
    // Only async-signal-safe calls from here to exec.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : kForwarded) ::signal(sig, SIG_DFL);
    // CMD dies with aimem, however aimem ends (SIGKILL runs no handler); what
    // CMD started is the cgroup guard's to kill. Kept across exec, cleared
    // only by a set-user-ID program.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != self) ::_exit(127);  // aimem died before the line above
    char byte;
    ssize_t got;
    while ((got = ::read(go[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1) ::_exit(127);  // aimem is gone: CMD never starts outside its cgroup
    if (err_pipe[1] >= 0) ::dup2(err_pipe[1], 2);
    ::execvp(argv[0], argv.data());
    int e = errno;
    ssize_t ignored = ::write(exec_err[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  g_child = child;
  ::close(go[0]);
  ::close(exec_err[1]);
  if (err_pipe[1] >= 0) ::close(err_pipe[1]);
  if (cg) {
    std::string err;
    if (!cg->add_process(child, &err)) r.warnings.push_back(err);
  }
  ssize_t w = ::write(go[1], "g", 1);
  (void)w;
  ::close(go[1]);
  int e = 0;
  if (::read(exec_err[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e)) {
    r.problem = fmt::format("cannot run {}: {}", o.command[0], std::strerror(e));
    r.exit_status = e == ENOENT ? 127 : 126;
  } else {
    r.started = true;
  }
  ::close(exec_err[0]);

  FactStore facts;
  std::unique_ptr<StderrTee> tee;
  if (err_pipe[0] >= 0) tee = std::make_unique<StderrTee>(err_pipe[0], facts);

  SamplerOptions so;
  so.root = o.root;
  so.root_pid = child;
  so.cgroup = cg ? cg->path() : "";
  so.all_cgroups = false;
  so.gpus = o.gpus;
  Sampler sampler(so);
  std::vector<ScrapeTarget> targets;
  for (const auto& spec : o.scrape) {
    std::string err;
    auto t = parse_target(spec, &err);
    if (err.empty()) targets.push_back(t);
    else r.warnings.push_back(err);
  }
  AlertEngine alerts(o.policy);
  AlertSink sink(o.delivery);

  auto take_sample = [&] {
    Sample s = sampler.sample();
    for (const auto& t : targets) s.servers.push_back(scrape(t, 2000));
    for (auto& a : alerts.observe(s)) {
      sink.deliver(a);
      if (store) store->append(alert_event(a));
      r.alerts.push_back(std::move(a));
    }
    if (store) store->append(s);
    ++r.samples_recorded;
    keep(r.samples, std::move(s));
  };

  int status = 0;
  rusage usage{};
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
  int64_t next = timeutil::now_us();
  for (;;) {
    int64_t now = timeutil::now_us();
    if (now >= next) {
      take_sample();
      next += o.interval_us;
      if (next < now) next = now + o.interval_us;  // a slow sample: skip, do not burst
    }
    int timeout_ms = static_cast<int>(std::max<int64_t>(0, (next - timeutil::now_us()) / 1000));
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, timeout_ms);
    } else {
      ::usleep(static_cast<useconds_t>(std::min(timeout_ms, 50)) * 1000);
    }
    pid_t done = ::wait4(child, &status, WNOHANG, &usage);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
  }
  if (pidfd >= 0) ::close(pidfd);
  r.end_us = timeutil::now_us();
  g_child = 0;
  if (WIFEXITED(status)) {
    if (r.started) r.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_status = 128 + *r.signal;
  }
  if (usage.ru_maxrss > 0) r.max_rss = static_cast<uint64_t>(usage.ru_maxrss) * 1024;

  // The last sample, with the cgroup's peak and counters, before it goes.
  if (r.started) take_sample();
  if (cg && !r.samples.empty())
    if (const CgroupSample* c = find_cgroup(r.samples.back(), cg->path())) {
      r.cgroup_peak = c->peak;
      r.cgroup_oom_kills = c->oom_kill;
      r.cgroup_failcnt = c->failcnt ? c->failcnt : c->max_events;
      if (!r.cgroup_limit) r.cgroup_limit = c->limit;
    }
  if (cg) cg->kill_all();  // what CMD left behind in its cgroup
  if (tee) tee->finish();

  // The trend of the command's own pools (its cgroup, GPUs; host RAM only
  // without a cgroup), over the samples while it ran: the one after its exit
  // shows an emptied cgroup, not the workload.
  {
    std::vector<Sample> running(r.samples.begin(), r.samples.end() - (r.started && !r.samples.empty() ? 1 : 0));
    for (auto& f : analyse(running))
      if ((cg && f.pool_id == "cgroup:" + cg->path()) || text::starts_with(f.pool_id, "gpu:") ||
          (!cg && f.pool_id == "host_ram"))
        r.trend.push_back(std::move(f));
  }
  const bool abnormal = r.started && (r.exit_status != 0);
  if (abnormal) {
    LiveOptions lo;
    lo.root = o.root;
    lo.since_us = r.start_us - 1000000;
    lo.cgroup = cg ? cg->path() : "";
    lo.journal = false;
    lo.gpus = o.gpus;
    LiveReport live = collect_live(lo, facts);
    DiagnoseOptions d;
    d.exit_code = r.exit_status;
    d.since_us = lo.since_us;
    d.cgroup = lo.cgroup;
    d.live = true;
    Diagnosis diag = diagnose(std::move(facts.facts()), d);
    for (auto& w : live.warnings) diag.warnings.push_back(std::move(w));
    if (cg) apply_trend(diag, r.trend, "cgroup:" + cg->path());
    r.diagnosis = std::move(diag);
    rule_out_memory(r);
  }
  if (store) {
    store->set_meta("exit_status", std::to_string(r.exit_status));
    store->set_meta("start_us", std::to_string(r.start_us));
    store->set_meta("end_us", std::to_string(r.end_us));
    Event ev;
    ev.time_us = r.end_us;
    ev.kind = "exit";
    ev.key = r.cgroup_path.empty() ? "" : "cgroup:" + r.cgroup_path;
    ev.summary = r.signal ? fmt::format("{} was killed by signal {}", o.command[0], *r.signal)
                          : fmt::format("{} exited with status {}", o.command[0], r.exit_status);
    nlohmann::json body = {{"exit_status", r.exit_status}};
    if (r.diagnosis) body["diagnosis"] = diagnosis_to_json(*r.diagnosis);
    ev.body = body.dump();
    store->append(ev);
  }
  if (cg) {
    std::string err;
    if (!cg->remove(&err)) r.warnings.push_back(err);
  }
  return r;
}

std::vector<PoolPeak> pool_peaks(const RunResult& r) {
  std::vector<PoolPeak> out;
  auto bump = [&](const std::string& pool, uint64_t v, std::optional<uint64_t> limit) {
    for (auto& p : out)
      if (p.pool == pool) {
        p.peak = std::max(p.peak, v);
        if (limit) p.limit = limit;
        return;
      }
    out.push_back({pool, v, limit});
  };
  for (const auto& s : r.samples) {
    for (const auto& c : s.cgroups)
      if (c.path == r.cgroup_path && c.usage) bump("cgroup " + c.path, std::max(*c.usage, c.peak.value_or(0)), c.limit);
    if (s.host.mem_total && s.host.mem_available)
      bump("host RAM", *s.host.mem_total - std::min(*s.host.mem_total, *s.host.mem_available), s.host.mem_total);
    for (const auto& g : s.gpus)
      if (g.used && !g.unified) bump(fmt::format("GPU {}", g.index), *g.used, g.total);
    for (const auto& p : s.processes) {
      // A process names itself: its name can hold terminal escapes.
      const std::string comm = text::printable(p.comm);
      bump(fmt::format("process {} (pid {})", comm, p.pid), std::max(p.rss, p.hwm.value_or(0)), std::nullopt);
      if (p.gpu_bytes) bump(fmt::format("GPU memory of {} (pid {})", comm, p.pid), *p.gpu_bytes, std::nullopt);
    }
  }
  if (r.cgroup_peak && !r.cgroup_path.empty()) bump("cgroup " + r.cgroup_path, *r.cgroup_peak, r.cgroup_limit);
  // Processes: the largest few only.
  std::stable_sort(out.begin(), out.end(), [](const PoolPeak& a, const PoolPeak& b) {
    bool pa = text::starts_with(a.pool, "process"), pb = text::starts_with(b.pool, "process");
    if (pa != pb) return !pa;
    return pa && a.peak > b.peak;
  });
  size_t procs = 0;
  std::vector<PoolPeak> trimmed;
  for (auto& p : out)
    if (!text::starts_with(p.pool, "process") || ++procs <= 5) trimmed.push_back(std::move(p));
  return trimmed;
}

nlohmann::json run_result_json(const RunOptions& o, const RunResult& r) {
  using nlohmann::json;
  json j;
  j["command"] = o.command;
  j["exit_status"] = r.exit_status;
  j["signal"] = r.signal ? json(*r.signal) : json(nullptr);
  j["started"] = r.started;
  if (!r.problem.empty()) j["problem"] = r.problem;
  j["duration_s"] = static_cast<double>(r.end_us - r.start_us) / 1e6;
  json cgj = nullptr;
  if (!r.cgroup_path.empty()) {
    auto opt = [](const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); };
    cgj = {{"path", r.cgroup_path}, {"limit_bytes", opt(r.cgroup_limit)}, {"peak_bytes", opt(r.cgroup_peak)},
           {"oom_kills", opt(r.cgroup_oom_kills)}, {"limit_hits", opt(r.cgroup_failcnt)}};
  }
  j["cgroup"] = cgj;
  j["max_rss_bytes"] = r.max_rss ? json(*r.max_rss) : json(nullptr);
  json peaks = json::array();
  for (const auto& p : pool_peaks(r))
    peaks.push_back({{"pool", p.pool}, {"peak_bytes", p.peak}, {"limit_bytes", p.limit ? json(*p.limit) : json(nullptr)}});
  j["peaks"] = peaks;
  json alerts = json::array();
  for (const auto& a : r.alerts) alerts.push_back(alert_json(a));
  j["alerts"] = alerts;
  json trend = json::array();
  for (const auto& f : r.trend)
    trend.push_back({{"pool", f.pool_id}, {"shape", shape_name(f.shape)}, {"growth_bytes_per_s", f.growth_bytes_per_s},
                     {"dimension", f.dimension.empty() ? json(nullptr) : json(f.dimension)},
                     {"correlation", f.correlation}, {"summary", f.summary}});
  j["trend"] = trend;
  j["samples"] = r.samples_recorded;
  j["recording"] = o.record.empty() ? json(nullptr) : json(o.record);
  j["diagnosis"] = r.diagnosis ? diagnosis_to_json(*r.diagnosis) : json(nullptr);
  j["verdict"] = r.verdict.empty() ? json(nullptr) : json(r.verdict);
  j["warnings"] = r.warnings;
  return j;
}

std::string run_result_text(const RunOptions& o, const RunResult& r, bool color) {
  std::string out;
  double secs = static_cast<double>(r.end_us - r.start_us) / 1e6;
  if (r.signal)
    out += fmt::format("aimem run: `{}` was killed by signal {} ({}) after {}; exit status {}\n", join_command(o.command),
                       *r.signal, strsignal(*r.signal), timeutil::format_duration(secs), r.exit_status);
  else
    out += fmt::format("aimem run: `{}` exited with status {} after {}\n", join_command(o.command), r.exit_status,
                       timeutil::format_duration(secs));
  out += "peak memory:\n";
  for (const auto& p : pool_peaks(r)) {
    if (p.limit && *p.limit > 0)
      out += fmt::format("  {:<44} {:>10} of {} ({:.0f}%)\n", p.pool, units::format_bytes(p.peak), units::format_bytes(*p.limit),
                         100.0 * static_cast<double>(p.peak) / static_cast<double>(*p.limit));
    else
      out += fmt::format("  {:<44} {:>10}\n", p.pool, units::format_bytes(p.peak));
  }
  if (r.cgroup_oom_kills && *r.cgroup_oom_kills > 0)
    out += fmt::format("  the kernel OOM-killed {} process(es) in this cgroup\n", *r.cgroup_oom_kills);
  if (!r.alerts.empty())
    out += fmt::format("alerts: {} during the run (printed above as they fired), the first at +{}\n", r.alerts.size(),
                       timeutil::format_duration(static_cast<double>(r.alerts.front().time_us - r.start_us) / 1e6));
  for (const auto& f : r.trend)
    if (f.shape != Shape::flat && f.shape != Shape::unknown && !f.summary.empty()) out += "trend: " + f.summary + "\n";
  if (!r.verdict.empty()) {
    out += r.verdict + "\n";
  } else if (r.diagnosis) {
    TextStyle style;
    style.color = color;
    out += "\n" + render_text(*r.diagnosis, style);
  }
  for (const auto& w : r.warnings) out += "warning: " + text::printable(w) + "\n";
  if (!o.record.empty())
    out += fmt::format("recording: {} ({} samples); render it with `aimem report {}`\n", o.record, r.samples_recorded,
                       o.record);
  return out;
}

}  // namespace aimem::watch
