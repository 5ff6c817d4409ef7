// See kmsg_follow.h. /dev/kmsg yields one record per read(), framed as
// "<prio>,<seq>,<usec since boot>,<flags>;<text>"; lseek(SEEK_END) skips to
// the newest record; EPIPE means records were overwritten before we read them.
// The usec field is CLOCK_MONOTONIC, so wall time = now_real - now_mono + usec.
#include "watch/kmsg_follow.h"

#include <poll.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "sources/live.h"

namespace aimem::watch {
namespace {

std::string field(std::string_view line, std::string_view key) {
  auto v = text::after(line, key);
  if (!v) return {};
  return std::string(text::take_until(*v, ","));
}

}  // namespace

bool parse_oom_summary(std::string_view line, KernelOomReport& r) {
  size_t at = line.find("oom-kill:");
  if (at == std::string_view::npos) return false;
  line = line.substr(at + 9);
  r.constraint = field(line, "constraint=");
  r.oom_memcg = field(line, "oom_memcg=");
  r.task_memcg = field(line, "task_memcg=");
  if (auto t = field(line, "task="); !t.empty()) r.comm = t;
  if (auto p = text::parse_u64(field(line, "pid="))) r.pid = static_cast<int>(*p);
  return true;
}

KmsgFollower::~KmsgFollower() {
  if (fd_ >= 0) ::close(fd_);
}

bool KmsgFollower::open(const std::string& root, bool from_start, std::string* error) {
  std::string path = root == "/" || root.empty() ? "/dev/kmsg" : root + "/dev/kmsg";
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    *error = fmt::format("cannot follow the kernel log {}: {}", path, std::strerror(errno));
    return false;
  }
  struct stat st{};
  ::fstat(fd_, &st);
  regular_ = S_ISREG(st.st_mode);
  boot_us_ = timeutil::monotonic_epoch_us();
  if (!regular_ && !from_start) ::lseek(fd_, 0, SEEK_END);
  return true;
}

std::optional<KernelOomReport> KmsgFollower::feed(std::string_view text, int64_t wall_us) {
  ++records_;
  if (text::contains(text, "invoked oom-killer")) {
    in_report_ = true;
    current_ = KernelOomReport{};
  }
  if (!in_report_) return std::nullopt;
  // Keep the head of the report and every line that names the kill; a global
  // OOM's task dump can list thousands of processes.
  bool key = text::contains(text, "oom-kill:") || text::contains(text, "Killed process") ||
             text::contains(text, "invoked oom-killer") || text::contains(text, "memory: usage") ||
             text::contains(text, "Memory cgroup");
  if (current_.lines.size() < kMaxReportLines || key) {
    if (current_.lines.size() < kMaxReportLines + 64) current_.lines.emplace_back(text);
  }
  parse_oom_summary(text, current_);
  if (text::contains(text, "Killed process")) {
    in_report_ = false;
    current_.time_us = wall_us;
    if (!current_.pid)
      if (auto p = text::after(text, "Killed process "))
        if (auto v = text::parse_u64(*p)) current_.pid = static_cast<int>(*v);
    return std::move(current_);
  }
  return std::nullopt;
}

std::vector<KernelOomReport> KmsgFollower::poll(int timeout_ms) {
  std::vector<KernelOomReport> out;
  if (fd_ < 0) return out;
  auto handle = [&](std::string_view raw) {
    auto rec = parse_kmsg_record(raw);
    if (!rec || !rec->uptime_us) return;
    if (auto r = feed(rec->text, boot_us_ + *rec->uptime_us)) out.push_back(std::move(*r));
  };
  if (regular_) {
    // A growing capture: read what is new, then wait the timeout (no inotify:
    // files are a test and replay path, not the live one).
    char buf[65536];
    bool any = false;
    for (int i = 0; i < 1024; ++i) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      any = true;
      partial_.append(buf, static_cast<size_t>(n));
      size_t start = 0, nl;
      while ((nl = partial_.find('\n', start)) != std::string::npos) {
        std::string_view line(partial_.data() + start, nl - start);
        if (!line.empty() && line[0] != ' ') handle(line);
        start = nl + 1;
      }
      partial_.erase(0, start);
      if (partial_.size() > (1 << 20)) partial_.clear();
    }
    if (!any && timeout_ms > 0) ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
    return out;
  }
  pollfd p{fd_, POLLIN, 0};
  int rc = ::poll(&p, 1, timeout_ms);
  if (rc <= 0) return out;
  std::string buf(16384, '\0');
  for (int i = 0; i < 100000; ++i) {
    ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) continue;
      break;  // EAGAIN: all ready records read
    }
    if (n == 0) break;
    handle(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  return out;
}

}  // namespace aimem::watch
