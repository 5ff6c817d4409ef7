// Wakes `aimem watch` the moment a cgroup's OOM state changes, rather than at
// its next sample: v1 registers an eventfd on memory.oom_control through
// cgroup.event_control (the kernel signals it on every OOM in the cgroup, and
// when the cgroup is removed); v2 watches memory.events with inotify (the
// kernel sends IN_MODIFY when a counter in it steps). One epoll set holds
// them all; the number of cgroups watched is bounded.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"

namespace aimem::watch {

class OomNotifier {
 public:
  static constexpr size_t kMaxWatched = 512;

  OomNotifier();
  ~OomNotifier();
  OomNotifier(const OomNotifier&) = delete;
  OomNotifier& operator=(const OomNotifier&) = delete;

  // `dir` is the cgroup's directory, `path` its name relative to the
  // hierarchy (what events carry). Idempotent; an error naming the file when
  // the cgroup cannot be watched or the bound is reached.
  Result<bool> add(const std::string& dir, const std::string& path, int version);
  // A PSI trigger on ROOT/proc/pressure/memory: woken when tasks stalled on
  // memory for `stall_us` within `window_us` (the kernel wants the window
  // 500 ms..10 s, a multiple of 2 s for unprivileged users). wait() then
  // returns kPressure. An error (naming the file) where PSI or triggers are not
  // permitted: a kernel without CONFIG_PSI, psi=0, or no write access.
  static constexpr const char* kPressure = "<memory pressure>";
  Result<bool> add_pressure_trigger(const std::string& root, int64_t stall_us, int64_t window_us);
  // Stops watching cgroups not in `present` (removed ones).
  void keep_only(const std::vector<std::string>& present);
  // Waits at most timeout_ms (0: only what is ready); the paths of the
  // cgroups that signalled.
  std::vector<std::string> wait(int timeout_ms);
  // Readable when wait(0) has something: the set's own epoll descriptor, for
  // an event loop to hold in its set (-1 when epoll is not available).
  int wait_fd() const { return epoll_; }
  size_t watched() const;

 private:
  struct Watch {
    std::string path;
    int event_fd = -1;  // v1
    int wd = -1;        // v2 inotify watch
  };
  void drop(std::map<std::string, Watch>::iterator it);

  int epoll_ = -1, inotify_ = -1, psi_ = -1;
  mutable std::mutex mu_;
  std::map<std::string, Watch> by_path_;
  std::map<int, std::string> by_fd_, by_wd_;
};

}  // namespace aimem::watch
