// Alert delivery: a line on stderr, a JSON line appended to the log, the
// user's --on-alert command and a webhook POST. The command and the webhook run
// on one worker thread behind a bounded queue, each cut off after timeout_ms,
// so the sampler never waits on them, and the exit never waits on a command
// (its supervisor process cuts it off; see run_command). The webhook's name lookup (getaddrinfo)
// is not bounded by the timeout; it delays only the worker. A failing channel is reported once on
// stderr (again only after it has worked in between), never fatal.
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "net/http_client.h"
#include "net/tls_post.h"
#include "watch/alerts.h"

extern char** environ;

namespace aimem::watch {
namespace {

constexpr size_t kMaxQueue = 64;

// Writes all of `s` to fd (a short write is retried; EINTR too).
bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

void close_from(int first) {
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
  rlimit rl{};
  int top = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? int(rl.rlim_cur) : 65536;
  for (int fd = first; fd < top; ++fd) ::close(fd);
}

// The supervisor (see run_command), in the child of fork(): async-signal-safe
// calls only. stdin becomes `in`, the result pipe fd 3, stdout a copy of
// stderr; nothing else of aimem's stays open (the command's output goes to
// aimem's stderr).
[[noreturn]] void supervise(int in, int result, char* const argv[], char* const envp[], int timeout_ms) {
  ::setpgid(0, 0);  // out of aimem's process group: a ^C at aimem's terminal is aimem's
  if (::dup2(in, 0) < 0 || ::dup2(result, 3) < 0) ::_exit(1);
  if (in == 0) ::fcntl(0, F_SETFD, 0);  // dup2 onto itself keeps close-on-exec
  ::dup2(2, 1);  // not aimem's stdout: whoever reads it must not wait on a hook
  close_from(4);
  auto report = [](int how, int value) {
    int out[2] = {how, value};
    ssize_t ignored = ::write(3, out, sizeof out);
    (void)ignored;
    ::_exit(0);
  };
  int started[2];
  if (::pipe2(started, O_CLOEXEC) != 0) report(3, errno);
  pid_t cmd = ::fork();
  if (cmd < 0) report(3, errno);
  if (cmd == 0) {
    ::setpgid(0, 0);  // its own group, so a timeout kills whatever it started
    ::close(3);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);  // the HTTP server's SIG_IGN is no business of the command's
    ::execve("/bin/sh", argv, envp);
    int e = errno;
    ssize_t ignored = ::write(started[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::close(started[1]);
  int exec_errno = 0;
  if (::read(started[0], &exec_errno, sizeof exec_errno) == ssize_t(sizeof exec_errno)) {
    ::waitpid(cmd, nullptr, 0);
    report(3, exec_errno);
  }
  ::close(started[0]);
  auto now_ms = [] {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
  };
  const int64_t deadline_ms = now_ms() + timeout_ms;
  const timespec step{0, 5 * 1000000};
  for (;;) {
    int status = 0;
    pid_t w = ::waitpid(cmd, &status, WNOHANG);
    if (w == cmd) {
      if (WIFEXITED(status)) report(0, WEXITSTATUS(status));
      report(1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    if (w < 0 && errno != EINTR) report(3, errno);
    if (now_ms() >= deadline_ms) {
      ::kill(-cmd, SIGKILL);
      while (::waitpid(cmd, &status, 0) < 0 && errno == EINTR) {
      }
      report(2, 0);
    }
    ::nanosleep(&step, nullptr);
  }
}

}  // namespace

AlertSink::AlertSink(Delivery d) : d_(std::move(d)) {
  if (!d_.on_alert_cmd.empty() || !d_.webhook_url.empty()) thread_ = std::thread([this] { worker(); });
}

AlertSink::~AlertSink() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    stop_deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(d_.timeout_ms);
  }
  stopping_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool AlertSink::stopping() const { return stopping_.load(); }

void AlertSink::report_failure(const std::string& channel, const std::string& what) {
  {
    std::lock_guard lock(mu_);
    if (failing_[channel]) return;
    failing_[channel] = true;
  }
  std::fprintf(stderr, "aimem: alert delivery to %s failed: %s (not reported again until it works)\n",
               channel.c_str(), what.c_str());
}

void AlertSink::report_success(const std::string& channel) {
  std::lock_guard lock(mu_);
  failing_[channel] = false;
}

void AlertSink::deliver(const Alert& a) {
  if (d_.to_stderr) std::fprintf(stderr, "aimem alert [%s] %s\n", a.severity.c_str(), a.message.c_str());
  if (!d_.log_path.empty()) {
    // O_APPEND and one write per line: lines from concurrent writers do not interleave.
    int fd = ::open(d_.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      report_failure("log " + d_.log_path, std::strerror(errno));
    } else {
      bool ok = write_all(fd, alert_json(a).dump() + "\n");
      int err = errno;
      ::close(fd);
      ok ? report_success("log " + d_.log_path) : report_failure("log " + d_.log_path, std::strerror(err));
    }
  }
  if (!thread_.joinable()) return;
  bool dropped_first = false;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueue) {
      queue_.pop_front();
      dropped_first = dropped_++ == 0;
    }
    queue_.push_back(a);
  }
  if (dropped_first)
    std::fprintf(stderr, "aimem: alert delivery is falling behind; the oldest queued alerts are dropped\n");
  cv_.notify_all();
}

void AlertSink::flush() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void AlertSink::worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with nothing left
    Alert a = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    if (!d_.on_alert_cmd.empty()) run_command(a);
    // Past the stop deadline the webhooks still queued are given up (said
    // once): the exit waits at most one timeout for all of them together.
    if (!d_.webhook_url.empty()) {
      if (!stopping() || std::chrono::steady_clock::now() < stop_deadline_) post_webhook(a);
      else if (!webhook_abandoned_) {
        webhook_abandoned_ = true;
        std::fprintf(stderr, "aimem: exiting: alerts still queued for the webhook are not sent\n");
      }
    }
    lock.lock();
    busy_ = false;
    idle_cv_.notify_all();
  }
}

// The command runs under a small supervisor process of its own (a fork that
// never execs: only async-signal-safe calls), which enforces the timeout and
// reports the command's end on a pipe. The worker waits on that pipe, not on
// the command: when aimem stops, it stops waiting and exits at once, and the
// supervisor, left behind, still kills a command that outlives its timeout.
// It holds none of aimem's descriptors (the /metrics socket, the store, the
// pipes of whoever reads aimem's output), only the command's stdin and stderr.
void AlertSink::run_command(const Alert& a) {
  const std::string channel = "command '" + d_.on_alert_cmd + "'";
  // The JSON goes into a pipe before the command starts (an alert is far below
  // the 64 KiB pipe buffer), so a command that never reads stdin cannot block us
  // and no SIGPIPE can reach this process.
  std::string body = alert_json(a).dump() + "\n";
  int in[2], result[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return report_failure(channel, std::strerror(errno));
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);
  bool wrote = write_all(in[1], body);
  ::close(in[1]);
  if (!wrote) {
    ::close(in[0]);
    return report_failure(channel, "the alert JSON did not fit the pipe");
  }
  if (::pipe2(result, O_CLOEXEC) != 0) {
    ::close(in[0]);
    return report_failure(channel, std::strerror(errno));
  }

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "AIMEM_ALERT_", 12) != 0) env.emplace_back(*e);
  env.push_back("AIMEM_ALERT_KEY=" + a.key);
  env.push_back("AIMEM_ALERT_SEVERITY=" + a.severity);
  env.push_back("AIMEM_ALERT_POOL=" + a.pool_id);
  env.push_back("AIMEM_ALERT_MESSAGE=" + a.message);
  env.push_back("AIMEM_ALERT_TIME=" + timeutil::format_iso(a.time_us));
  if (a.used) env.push_back(fmt::format("AIMEM_ALERT_USED_BYTES={}", *a.used));
  if (a.limit) env.push_back(fmt::format("AIMEM_ALERT_LIMIT_BYTES={}", *a.limit));
  if (a.tte_s) env.push_back(fmt::format("AIMEM_ALERT_TTE_SECONDS={:.0f}", *a.tte_s));
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", cmd = d_.on_alert_cmd;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  const int timeout_ms = d_.timeout_ms;

  pid_t supervisor = ::fork();
  if (supervisor < 0) {
    int err = errno;
    ::close(in[0]);
    ::close(result[0]);
    ::close(result[1]);
    return report_failure(channel, std::strerror(err));
  }
  if (supervisor == 0) supervise(in[0], result[1], argv, envp.data(), timeout_ms);  // never returns
  ::close(in[0]);
  ::close(result[1]);

  // Outcome: {how, value}: 0 exited with value, 1 killed by signal value,
  // 2 timed out and killed, 3 could not start (errno value).
  int outcome[2] = {3, 0};
  size_t got = 0;
  while (got < sizeof outcome) {
    if (stopping()) {  // aimem is exiting: the supervisor finishes alone
      ::close(result[0]);
      return;
    }
    pollfd p{result[0], POLLIN, 0};
    int rc = ::poll(&p, 1, 50);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    ssize_t n = ::read(result[0], reinterpret_cast<char*>(outcome) + got, sizeof outcome - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  ::close(result[0]);
  while (::waitpid(supervisor, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (got < sizeof outcome) return report_failure(channel, "its supervisor ended without a result");
  switch (outcome[0]) {
    case 0:
      if (outcome[1] == 0) return report_success(channel);
      return report_failure(channel, fmt::format("exit status {}", outcome[1]));
    case 1: return report_failure(channel, fmt::format("killed by signal {}", outcome[1]));
    case 2: return report_failure(channel, fmt::format("still running after {} ms, killed", timeout_ms));
    default: return report_failure(channel, std::strerror(outcome[1]));
  }
}

void AlertSink::post_webhook(const Alert& a) {
  const std::string channel = "webhook " + d_.webhook_url;
  const std::string& url = d_.webhook_url;
  if (!text::starts_with(url, "http://") && !text::starts_with(url, "https://"))
    return report_failure(channel, "the URL must start with http:// or https://");
  auto u = net::split_url(url);
  if (!u) return report_failure(channel, "cannot parse the host and port: " + u.error().message);
  const bool tls = u->tls;
  const std::string& host = u->host;
  const int port = u->port;
  const std::string path = u->path.empty() ? "/" : u->path;
  const std::string body = alert_json(a).dump();
  if (tls) {
    int timeout_ms = d_.timeout_ms;
    if (stopping())
      timeout_ms = int(std::clamp<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(stop_deadline_ - std::chrono::steady_clock::now()).count(), 1, timeout_ms));
    auto r = net::post_tls(host, port, path, "application/json", body, timeout_ms);
    if (!r) return report_failure(channel, r.error().message);
    if (*r < 200 || *r >= 300) return report_failure(channel, fmt::format("HTTP {}", *r));
    return report_success(channel);
  }
  net::Options opt;
  int timeout_ms = d_.timeout_ms;
  if (stopping())  // the exit waits for what is left of the stop deadline, no more
    timeout_ms = int(std::clamp<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(stop_deadline_ - std::chrono::steady_clock::now()).count(), 1, timeout_ms));
  opt.connect_timeout_s = opt.read_timeout_s = opt.write_timeout_s = timeout_ms / 1000.0;
  net::Request req;
  req.method = "POST";
  req.target = path;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = body;
  req.headers.emplace_back("Connection", "close");
  // Only the status matters: reading stops after the head, so a webhook that
  // answers with an endless body cannot hold the worker.
  net::Connection conn(host, port, opt);
  net::Outcome res = conn.exchange(req, {[](const net::Head&) { return false; }, nullptr});
  if (!res.got_head) return report_failure(channel, fmt::format("{} ({})", net::failure_name(res.failure), res.detail));
  if (res.head.status < 200 || res.head.status >= 300) return report_failure(channel, fmt::format("HTTP {}", res.head.status));
  report_success(channel);
}

}  // namespace aimem::watch
