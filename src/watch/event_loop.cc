// See event_loop.h.
#include "watch/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>

namespace aimem::watch {

StopToken::StopToken() { fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

StopToken::~StopToken() {
  if (fd_ >= 0) ::close(fd_);
}

void StopToken::request() noexcept {
  flag_.store(true, std::memory_order_relaxed);
  if (fd_ >= 0) {
    const int saved = errno;  // a signal handler must leave errno as it found it
    uint64_t one = 1;
    ssize_t n = ::write(fd_, &one, sizeof one);
    (void)n;
    errno = saved;
  }
}

EventLoop::EventLoop() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  timer_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_ >= 0 && timer_ >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = static_cast<uint64_t>(static_cast<int64_t>(kTimer));
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, timer_, &ev);
  }
}

EventLoop::~EventLoop() {
  if (timer_ >= 0) ::close(timer_);
  if (epoll_ >= 0) ::close(epoll_);
}

Result<bool> EventLoop::ready() const {
  if (epoll_ < 0 || timer_ < 0) return make_error(fmt::format("cannot make the watch's epoll set or timer: {}", std::strerror(errno)));
  return true;
}

Result<bool> EventLoop::add(int fd, int tag, bool priority) {
  epoll_event ev{};
  ev.events = priority ? EPOLLPRI : EPOLLIN;
  ev.data.u64 = static_cast<uint64_t>(static_cast<int64_t>(tag));
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0)
    return make_error(fmt::format("cannot poll descriptor {}: {}", fd, std::strerror(errno)));
  return true;
}

int64_t EventLoop::monotonic_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void EventLoop::wake_at(int64_t at_us) {
  if (at_us == armed_us_ || timer_ < 0) return;
  itimerspec spec{};
  at_us = std::max<int64_t>(at_us, 1);  // 0 would disarm it
  spec.it_value.tv_sec = at_us / 1000000;
  spec.it_value.tv_nsec = (at_us % 1000000) * 1000;
  ::timerfd_settime(timer_, TFD_TIMER_ABSTIME, &spec, nullptr);
  armed_us_ = at_us;
}

std::vector<int> EventLoop::wait() {
  std::vector<int> tags;
  epoll_event events[16];
  int n = ::epoll_wait(epoll_, events, 16, -1);
  for (int i = 0; i < n; ++i) {
    int tag = static_cast<int>(static_cast<int64_t>(events[i].data.u64));
    if (tag == kTimer) {
      uint64_t expirations = 0;
      ssize_t r = ::read(timer_, &expirations, sizeof expirations);
      (void)r;
      armed_us_ = -1;  // it fired: the same time armed again must arm it again
    }
    tags.push_back(tag);
  }
  return tags;
}

}  // namespace aimem::watch
