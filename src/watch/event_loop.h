// What `aimem watch` sleeps on between samples: one epoll set holding a
// timerfd (the next sample, the end of --duration, the next OOM signal due),
// the stop descriptor, /dev/kmsg and the OOM notifier's own epoll set (cgroup
// eventfds, inotify, the PSI trigger). The loop wakes only when one of them
// is ready: an idle watch at a 1 s interval wakes about once a second,
// where sleeping in 20 ms slices woke it fifty times.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/result.h"

namespace aimem::watch {

// Ends a running watch from another thread or from a signal handler:
// request() sets the flag and writes an eventfd the loop polls (both
// async-signal-safe), so the loop ends at once rather than at its next wake-up.
class StopToken {
 public:
  StopToken();
  ~StopToken();
  StopToken(const StopToken&) = delete;
  StopToken& operator=(const StopToken&) = delete;
  void request() noexcept;
  bool requested() const noexcept { return flag_.load(std::memory_order_relaxed); }
  int fd() const { return fd_; }  // readable once requested; -1 when no eventfd could be made

 private:
  std::atomic<bool> flag_{false};
  int fd_ = -1;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // An error when epoll or the timerfd cannot be made.
  Result<bool> ready() const;
  // Watches fd for input (EPOLLIN, or EPOLLPRI with `priority`); wait() then
  // returns `tag` when it is ready. The caller keeps the descriptor open.
  Result<bool> add(int fd, int tag, bool priority = false);
  // Arms the timer for CLOCK_MONOTONIC time `at_us` (monotonic_us()); wait()
  // returns kTimer then. Re-arming replaces the earlier time.
  void wake_at(int64_t at_us);
  // Sleeps until a descriptor or the timer is ready; the tags of those that
  // are (kTimer for the timer, whose expiry is consumed). Empty on EINTR.
  std::vector<int> wait();

  static constexpr int kTimer = -1;
  static int64_t monotonic_us();

 private:
  int epoll_ = -1, timer_ = -1;
  int64_t armed_us_ = -1;
};

}  // namespace aimem::watch
