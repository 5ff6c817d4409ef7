// See dir_watch.h.
#include "sources/dir_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aimem {

std::unique_ptr<DirWatch> DirWatch::open() {
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::unique_ptr<DirWatch>(new DirWatch(fd));
}

DirWatch::~DirWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool DirWatch::add(const std::string& dir) {
  // Files made or removed inside a directory (a fixture's, or a v2 cgroup's
  // pressure files coming and going) are no change of the listing: only
  // directory events count (IN_ISDIR, checked in changed()).
  constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
  return ::inotify_add_watch(fd_, dir.c_str(), kMask) >= 0;
}

bool DirWatch::changed() {
  bool any = false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return any || errno != EAGAIN;  // EAGAIN: drained; anything else: cannot tell, so changed
    if (n == 0) return any;
    for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      inotify_event ev;
      std::memcpy(&ev, buf + off, sizeof ev);
      // A child directory made, removed or moved; the watched directory
      // itself gone (IN_IGNORED follows: its watch is no more); events lost.
      if ((ev.mask & IN_ISDIR) || (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW | IN_UNMOUNT)))
        any = true;
      off += static_cast<ssize_t>(sizeof(inotify_event)) + ev.len;
    }
  }
}

}  // namespace aimem
