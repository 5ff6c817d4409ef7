#include "sources/readfile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aimem {
namespace {

// Reads `fd` to its end, or until `out` holds at least `limit` bytes (it may
// then hold up to one buffer more). False on a read error, errno kept.
bool read_until(int fd, size_t limit, std::string& out) {
  char buf[65536];
  while (out.size() < limit) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::optional<std::string> read_small_file(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string out;
  const bool read = read_until(fd, max_bytes, out);
  ::close(fd);
  if (!read) return std::nullopt;
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

Result<std::string> read_user_file(const std::string& path, size_t max_bytes, const std::string& what, bool regular_only) {
  // O_NONBLOCK: opening a FIFO without a writer would block here.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return make_error(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return make_error(fmt::format("{}: is a directory, not a {}", path, what));
  if (regular_only && !S_ISREG(st.st_mode))
    return make_error(fmt::format("{}: {}, not a regular file; aimem does not read a {} from it", path, kind_of(st.st_mode), what));
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes)
    return make_error(fmt::format("{}: {} bytes, more than the {} bytes a {} may have", path, st.st_size, max_bytes, what));
  if (!S_ISREG(st.st_mode)) {
    // A pipe the user gave: its writer decides when it ends (bounded below in bytes).
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  std::string out;
  if (!read_until(fd, max_bytes + 1, out))
    return make_error(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  if (out.size() > max_bytes)
    return make_error(fmt::format("{}: more than the {} bytes a {} may have", path, max_bytes, what));
  return out;
}

}  // namespace aimem
