#include "sources/readfile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace aimem {

std::optional<std::string> read_small_file(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() >= max_bytes) {
      out.resize(max_bytes);
      break;
    }
  }
  ::close(fd);
  return out;
}

}  // namespace aimem
