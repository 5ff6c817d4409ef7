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
#include <functional>
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
// A signal that came before CMD was forked (while the cgroup and the
// recording were being set up): delivered to CMD as soon as it exists, so
// that a SIGTERM at start-up ends the run as it would a moment later.
std::atomic<int> g_pending{0};

void forward(int sig, siginfo_t* info, void*) {
  if ((sig == SIGINT || sig == SIGQUIT) && info && info->si_code == SI_KERNEL) return;  // from the tty
  pid_t child = g_child.load();
  if (child <= 0) {
    if (sig != SIGCONT && sig != SIGWINCH) g_pending = sig;
    return;
  }
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
    g_pending = 0;
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

std::string join_command(const std::vector<std::string>& cmd) {
  std::string out;
  for (const auto& a : cmd) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\"'\\$`;&|<>()") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return text::printable(out);
}

namespace {

// The run's own cgroup: stale ones of killed runs removed, this one created
// with the limit and guarded. False (with the problem in `r`) when the run
// cannot go on: --memory-limit without a cgroup that can hold it.
bool prepare_cgroup(const RunOptions& o, RunResult& r, std::unique_ptr<RunCgroup>& cg) {
  if (!o.cgroup) {
    if (!o.memory_limit) return true;
    r.problem = "--memory-limit needs a cgroup; it cannot be combined with --no-cgroup";
    r.exit_status = 2;
    return false;
  }
  // A run killed outright (SIGKILL) whose guard was killed too left its
  // cgroup, limit and processes behind: its name says whose it was.
  std::vector<std::string> errs;
  for (const auto& path : RunCgroup::remove_stale(o.root, kCgroupPrefix, &errs))
    r.warnings.push_back(fmt::format("removed the cgroup {} left behind by an aimem run that was killed (its pid is gone)", path));
  for (auto& e : errs) r.warnings.push_back(std::move(e));
  auto created = RunCgroup::create(o.root, fmt::format("{}{}", kCgroupPrefix, ::getpid()), o.memory_limit);
  if (!created) {
    if (o.memory_limit) {
      r.problem = fmt::format("cannot apply --memory-limit: {}", created.error().message);
      r.exit_status = 2;
      return false;
    }
    r.warnings.push_back(fmt::format("running without a cgroup of its own ({}); sampling the process tree only",
                                     created.error().message));
    return true;
  }
  cg = std::move(*created);
  r.cgroup_path = cg->path();
  r.cgroup_limit = o.memory_limit;
  // If aimem is killed outright, the guard empties and removes the cgroup.
  if (auto guard = cg->start_guard(); !guard) r.warnings.push_back(guard.error().message);
  return true;
}

// --record: the store, with what the run is. An empty pointer without --record.
Result<std::unique_ptr<Store>> open_recording(const RunOptions& o, const RunCgroup* cg) {
  if (o.record.empty()) return std::unique_ptr<Store>();
  auto opened = Store::open(o.record, Retention{});
  if (!opened) return opened;
  Store& store = **opened;
  store.set_meta("command", join_command(o.command));
  if (o.memory_limit) store.set_meta("memory_limit", std::to_string(*o.memory_limit));
  if (cg) store.set_meta("cgroup", cg->path());
  return opened;
}

// Lets CMD exec (one byte on `go`) with SIGPIPE held: a CMD killed from
// outside before it read the byte leaves the write without a reader, which
// must not end aimem (the pending SIGPIPE is taken before it is let through).
void hand_over(int go) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  ssize_t w = ::write(go, "g", 1);
  if (w < 0 && errno == EPIPE) {
    timespec none{};
    ::sigtimedwait(&pipe_only, nullptr, &none);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// Forks CMD, puts it in the cgroup, then lets it exec: it never runs outside
// the cgroup. -1 (with the problem in `r`) when it could not be forked;
// r.started says whether exec succeeded. `err_read` is the read end of CMD's
// stderr when it is captured, else -1.
pid_t start_child(const RunOptions& o, RunCgroup* cg, RunResult& r, int& err_read) {
  int go[2], exec_err[2], err_pipe[2] = {-1, -1};
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(exec_err, O_CLOEXEC) != 0 ||
      (o.capture_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    r.problem = fmt::format("pipe: {}", std::strerror(errno));
    r.exit_status = 2;
    return -1;
  }
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  r.start_us = timeutil::now_us();
  const pid_t self = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    r.problem = fmt::format("fork: {}", std::strerror(errno));
    r.exit_status = 2;
    return -1;
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
  ::close(go[0]);
  ::close(exec_err[1]);
  if (err_pipe[1] >= 0) ::close(err_pipe[1]);
  err_read = err_pipe[0];
  if (cg) {
    if (auto added = cg->add_process(child); !added) r.warnings.push_back(added.error().message);
  }
  hand_over(go[1]);
  ::close(go[1]);
  int e = 0;
  if (::read(exec_err[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e)) {
    r.problem = fmt::format("cannot run {}: {}", o.command[0], std::strerror(e));
    r.exit_status = e == ENOENT ? 127 : 126;
  } else {
    r.started = true;
  }
  ::close(exec_err[0]);
  // Signals reach CMD from here on; one kept from the set-up or the hand-over
  // is delivered now that CMD runs. Forwarded earlier, a signal could end CMD
  // before it read `go`, and aimem's write there died of SIGPIPE (the
  // sanitizer suite caught it: a SIGTERM just after the fork).
  g_child = child;
  if (int sig = g_pending.exchange(0)) ::kill(child, sig);
  return child;
}

// Samples at the interval until CMD ends, then records how it ended.
void wait_for_child(pid_t child, int64_t interval_us, const std::function<void()>& take_sample, RunResult& r) {
  int status = 0;
  rusage usage{};
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
  int64_t next = timeutil::now_us();
  for (;;) {
    int64_t now = timeutil::now_us();
    if (now >= next) {
      take_sample();
      next += interval_us;
      if (next < now) next = now + interval_us;  // a slow sample: skip, do not burst
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
}

// The trend of the command's own pools (its cgroup, GPUs; host RAM only
// without a cgroup), over the samples while it ran: the one after its exit
// shows an emptied cgroup, not the workload.
void own_trend(const RunCgroup* cg, RunResult& r) {
  std::vector<Sample> running(r.samples.begin(), r.samples.end() - (r.started && !r.samples.empty() ? 1 : 0));
  for (auto& f : analyse(running))
    if ((cg && f.pool_id == "cgroup:" + cg->path()) || text::starts_with(f.pool_id, "gpu:") ||
        (!cg && f.pool_id == "host_ram"))
      r.trend.push_back(std::move(f));
}

// Why CMD ended abnormally: its stderr (already in `facts`), the kernel log
// since the start, the cgroup's counters and the trend.
void diagnose_run(const RunOptions& o, const RunCgroup* cg, FactStore& facts, RunResult& r) {
  LiveOptions lo;
  lo.root = o.root;
  lo.since_us = r.start_us - 1000000;
  lo.cgroup = cg ? cg->path() : "";
  lo.journal = false;
  lo.gpus = o.gpus;
  LiveReport live = collect_live(lo, facts, line_scanners());
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

// The recording's last word: how CMD ended, and the diagnosis.
void record_exit(const RunOptions& o, const RunResult& r, Store& store) {
  store.set_meta("exit_status", std::to_string(r.exit_status));
  store.set_meta("start_us", std::to_string(r.start_us));
  store.set_meta("end_us", std::to_string(r.end_us));
  Event ev;
  ev.time_us = r.end_us;
  ev.kind = "exit";
  ev.key = r.cgroup_path.empty() ? "" : "cgroup:" + r.cgroup_path;
  ev.summary = r.signal ? fmt::format("{} was killed by signal {}", o.command[0], *r.signal)
                        : fmt::format("{} exited with status {}", o.command[0], r.exit_status);
  nlohmann::json body = {{"exit_status", r.exit_status}};
  if (r.diagnosis) body["diagnosis"] = diagnosis_body(o.diagnosis_json, *r.diagnosis);
  ev.body = body.dump();
  store.append(ev);
}

}  // namespace

RunResult run_command(const RunOptions& o) {
  RunResult r;
  if (o.command.empty()) {
    r.problem = "no command given: aimem run [OPTIONS] -- CMD [ARGS...]";
    r.exit_status = 2;
    return r;
  }
  SignalForwarding forwarding;  // before the set-up: a signal during it is kept for CMD
  std::unique_ptr<RunCgroup> cg;
  if (!prepare_cgroup(o, r, cg)) return r;
  auto recording = open_recording(o, cg.get());
  if (!recording) {
    r.problem = recording.error().message;
    r.exit_status = 2;
    return r;
  }
  std::unique_ptr<Store> store = std::move(*recording);

  int err_read = -1;
  pid_t child = start_child(o, cg.get(), r, err_read);
  if (child < 0) return r;

  FactStore facts;
  std::unique_ptr<StderrTee> tee;
  if (err_read >= 0) tee = std::make_unique<StderrTee>(err_read, facts);

  SamplerOptions so;
  so.root = o.root;
  so.root_pid = child;
  so.cgroup = cg ? cg->path() : "";
  so.all_cgroups = false;
  so.gpus = o.gpus;
  Sampler sampler(so);
  std::vector<ScrapeTarget> targets;
  for (const auto& spec : o.scrape) {
    auto t = parse_target(spec);
    if (t) targets.push_back(std::move(*t));
    else r.warnings.push_back(t.error().message);
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
  wait_for_child(child, o.interval_us, take_sample, r);

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

  own_trend(cg.get(), r);
  if (r.started && r.exit_status != 0) diagnose_run(o, cg.get(), facts, r);
  if (store) record_exit(o, r, *store);
  if (cg) {
    if (auto removed = cg->remove(); !removed) r.warnings.push_back(removed.error().message);
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

}  // namespace aimem::watch
