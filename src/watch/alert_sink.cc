// Alert delivery: a line on stderr, a JSON line appended to the log, the
// user's --on-alert command and a webhook POST. The command and the webhook run
// on one worker thread behind a bounded queue, each cut off after timeout_ms,
// so the sampler never waits on them. The webhook's name lookup (getaddrinfo)
// is not bounded by the timeout; it delays only the worker. A failing channel is reported once on
// stderr (again only after it has worked in between), never fatal.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace

AlertSink::AlertSink(Delivery d) : d_(std::move(d)) {
  if (!d_.on_alert_cmd.empty() || !d_.webhook_url.empty()) thread_ = std::thread([this] { worker(); });
}

AlertSink::~AlertSink() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

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
    if (!d_.webhook_url.empty()) post_webhook(a);
    lock.lock();
    busy_ = false;
    idle_cv_.notify_all();
  }
}

void AlertSink::run_command(const Alert& a) {
  const std::string channel = "command '" + d_.on_alert_cmd + "'";
  // The JSON goes into a pipe before the command starts (an alert is far below
  // the 64 KiB pipe buffer), so a command that never reads stdin cannot block us
  // and no SIGPIPE can reach this process.
  std::string body = alert_json(a).dump() + "\n";
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return report_failure(channel, std::strerror(errno));
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);
  bool wrote = write_all(in[1], body);
  ::close(in[1]);
  if (!wrote) {
    ::close(in[0]);
    return report_failure(channel, "the alert JSON did not fit the pipe");
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

  // Own process group, so a timeout kills the command and whatever it started.
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);  // its output goes to our stderr, never our stdout
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  if (rc != 0) return report_failure(channel, std::strerror(rc));

  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(d_.timeout_ms);
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return report_failure(channel, std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return report_failure(channel, fmt::format("still running after {} ms, killed", d_.timeout_ms));
    }
    ::usleep(5000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return report_success(channel);
  report_failure(channel, WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                            : fmt::format("killed by signal {}", WTERMSIG(status)));
}

void AlertSink::post_webhook(const Alert& a) {
  const std::string channel = "webhook " + d_.webhook_url;
  const std::string& url = d_.webhook_url;
  if (!text::starts_with(url, "http://") && !text::starts_with(url, "https://"))
    return report_failure(channel, "the URL must start with http:// or https://");
  std::string err;
  std::optional<net::Url> u = net::split_url(url, &err);
  if (!u) return report_failure(channel, "cannot parse the host and port: " + err);
  const bool tls = u->tls;
  const std::string& host = u->host;
  const int port = u->port;
  const std::string path = u->path.empty() ? "/" : u->path;
  const std::string body = alert_json(a).dump();
  if (tls) {
    auto r = net::post_tls(host, port, path, "application/json", body, d_.timeout_ms);
    if (!r) return report_failure(channel, r.error().message);
    if (*r < 200 || *r >= 300) return report_failure(channel, fmt::format("HTTP {}", *r));
    return report_success(channel);
  }
  net::Options opt;
  opt.connect_timeout_s = opt.read_timeout_s = opt.write_timeout_s = d_.timeout_ms / 1000.0;
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
