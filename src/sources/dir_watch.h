// Tells whether a subdirectory appeared or went in any of a set of
// directories since the last look, through inotify (IN_CREATE, IN_DELETE and
// moves of directories, and the watched directory itself going). The sampler
// uses it to skip re-listing the memory cgroup hierarchy in samples where no
// cgroup was made or removed: a cgroup directory appears only by mkdir and
// goes only by rmdir, which the kernel reports to a watch on its parent.
// Non-blocking: nothing waits on the descriptor, each look drains it.
#pragma once

#include <memory>
#include <string>

namespace aimem {

class DirWatch {
 public:
  // Null when inotify is not available (no kernel support, the per-user
  // instance limit reached): the caller lists every time.
  static std::unique_ptr<DirWatch> open();
  ~DirWatch();
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;

  // Watches dir (again: a no-op for one already watched). False when it
  // cannot be (the per-user watch limit, a file system without inotify, dir
  // gone): the caller can no longer trust changed() for it.
  bool add(const std::string& dir);
  // A directory was made, removed or moved in (or out of) a watched one, a
  // watched one went, or events were lost (the queue overflowed) since the
  // last call. Drains what the kernel queued.
  bool changed();

 private:
  explicit DirWatch(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace aimem
