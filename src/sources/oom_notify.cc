// See oom_notify.h. v1 protocol (Documentation/admin-guide/cgroup-v1/
// memory.rst, "OOM Control"): open memory.oom_control, create an eventfd,
// write "<event_fd> <oom_control_fd>" to cgroup.event_control; the eventfd
// then counts OOM notifications. v2: inotify IN_MODIFY on memory.events.
#include "sources/oom_notify.h"

#include <linux/magic.h>
#include <sys/vfs.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <fmt/format.h>

namespace aimem::watch {

OomNotifier::OomNotifier() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (epoll_ >= 0 && inotify_ >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = inotify_;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, inotify_, &ev);
  }
}

OomNotifier::~OomNotifier() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [path, w] : by_path_)
    if (w.event_fd >= 0) ::close(w.event_fd);
  if (inotify_ >= 0) ::close(inotify_);
  if (psi_ >= 0) ::close(psi_);
  if (epoll_ >= 0) ::close(epoll_);
}

Result<bool> OomNotifier::add_pressure_trigger(const std::string& root, int64_t stall_us, int64_t window_us) {
  std::lock_guard<std::mutex> lock(mu_);
  if (psi_ >= 0) return true;
  std::string path = (root == "/" || root.empty() ? "" : root) + "/proc/pressure/memory";
  int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return make_error(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  // Only the kernel's file takes a trigger: under a captured tree (--root of
  // a copied /proc) the write would overwrite the capture.
  struct statfs fs{};
  if (::fstatfs(fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) {
    ::close(fd);
    return make_error(fmt::format("{}: not the kernel's procfs (a captured tree?): no pressure trigger", path));
  }
  std::string trigger = fmt::format("some {} {}", stall_us, window_us);
  // The trigger string includes its NUL, as the kernel's documentation writes it.
  if (::write(fd, trigger.c_str(), trigger.size() + 1) < 0) {
    Error failed = make_error(fmt::format("{}: trigger '{}' refused: {}", path, trigger, std::strerror(errno)));
    ::close(fd);
    return failed;
  }
  epoll_event ev{};
  ev.events = EPOLLPRI;
  ev.data.fd = fd;
  if (epoll_ < 0 || ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    Error failed = make_error(fmt::format("{}: cannot poll the trigger: {}", path, std::strerror(errno)));
    ::close(fd);
    return failed;
  }
  psi_ = fd;
  return true;
}

Result<bool> OomNotifier::add(const std::string& dir, const std::string& path, int version) {
  std::lock_guard<std::mutex> lock(mu_);
  if (by_path_.count(path)) return true;
  if (epoll_ < 0) {
    return make_error(fmt::format("{}: epoll is not available", dir));
  }
  if (by_path_.size() >= kMaxWatched) {
    return make_error(fmt::format("{}: already watching {} cgroups", dir, kMaxWatched));
  }
  Watch w;
  w.path = path;
  if (version == 1) {
    int control = ::open((dir + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
    if (control < 0) {
      return make_error(fmt::format("{}/memory.oom_control: {}", dir, std::strerror(errno)));
    }
    int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int ctl = ::open((dir + "/cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
    std::string line = fmt::format("{} {}", efd, control);
    bool ok = efd >= 0 && ctl >= 0 && ::write(ctl, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    int err = errno;
    if (ctl >= 0) ::close(ctl);
    ::close(control);  // the kernel holds its own reference once registered
    if (!ok) {
      if (efd >= 0) ::close(efd);
      return make_error(fmt::format("{}/cgroup.event_control: {}", dir, std::strerror(err)));
    }
    w.event_fd = efd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = efd;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, efd, &ev);
    by_fd_[efd] = path;
  } else {
    if (inotify_ < 0) {
      return make_error(fmt::format("{}: inotify is not available", dir));
    }
    int wd = ::inotify_add_watch(inotify_, (dir + "/memory.events").c_str(), IN_MODIFY);
    if (wd < 0) {
      return make_error(fmt::format("{}/memory.events: {}", dir, std::strerror(errno)));
    }
    w.wd = wd;
    by_wd_[wd] = path;
  }
  by_path_.emplace(path, std::move(w));
  return true;
}

void OomNotifier::drop(std::map<std::string, Watch>::iterator it) {
  Watch& w = it->second;
  if (w.event_fd >= 0) {
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, w.event_fd, nullptr);
    ::close(w.event_fd);
    by_fd_.erase(w.event_fd);
  }
  if (w.wd >= 0) {
    ::inotify_rm_watch(inotify_, w.wd);
    by_wd_.erase(w.wd);
  }
  by_path_.erase(it);
}

void OomNotifier::keep_only(const std::vector<std::string>& present) {
  std::set<std::string> keep(present.begin(), present.end());
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = by_path_.begin(); it != by_path_.end();) {
    auto next = std::next(it);
    if (!keep.count(it->first)) drop(it);
    it = next;
  }
}

size_t OomNotifier::watched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_path_.size();
}

std::vector<std::string> OomNotifier::wait(int timeout_ms) {
  std::vector<std::string> out;
  if (epoll_ < 0) return out;
  epoll_event events[32];
  int n = ::epoll_wait(epoll_, events, 32, timeout_ms);
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < n; ++i) {
    int fd = events[i].data.fd;
    if (fd == psi_ && psi_ >= 0) {
      if (events[i].events & EPOLLERR) {  // the pressure file went away: stop
        ::epoll_ctl(epoll_, EPOLL_CTL_DEL, psi_, nullptr);
        ::close(psi_);
        psi_ = -1;
      } else {
        out.emplace_back(kPressure);
      }
    } else if (fd == inotify_) {
      alignas(inotify_event) char buf[4096];
      for (;;) {
        ssize_t len = ::read(inotify_, buf, sizeof buf);
        if (len <= 0) break;
        for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= len;) {
          auto* e = reinterpret_cast<inotify_event*>(buf + off);
          if (auto it = by_wd_.find(e->wd); it != by_wd_.end()) out.push_back(it->second);
          off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        }
      }
    } else if (auto it = by_fd_.find(fd); it != by_fd_.end()) {
      uint64_t count = 0;
      ssize_t r = ::read(fd, &count, sizeof count);
      (void)r;
      out.push_back(it->second);
    }
  }
  return out;
}

}  // namespace aimem::watch
