// See kmsg_reader.h.
#include "sources/kmsg_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace aimem {

KmsgReader::~KmsgReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool KmsgReader::open(const std::string& root, bool from_start) {
  path_ = root == "/" || root.empty() ? "/dev/kmsg" : root + "/dev/kmsg";
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    errno_ = errno;
    return false;
  }
  struct stat st{};
  ::fstat(fd_, &st);
  device_ = !S_ISREG(st.st_mode);
  if (device_ && !from_start) ::lseek(fd_, 0, SEEK_END);
  return true;
}

Result<bool> KmsgReader::read_ready(const OnRecord& on_record, uint64_t max_records, bool at_end) {
  bytes_read_ = 0;
  if (fd_ < 0) return make_error(fmt::format("{}: not open", path_));
  uint64_t records = 0;
  if (device_) {
    std::string buf(16384, '\0');
    while (records < max_records) {
      ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: overwritten records, go on with the oldest left
        if (errno == EAGAIN) return true;
        return make_error(fmt::format("reading {}: {}", path_, std::strerror(errno)));
      }
      if (n == 0) return true;
      bytes_read_ += static_cast<uint64_t>(n);
      on_record(std::string_view(buf.data(), static_cast<size_t>(n)));
      ++records;
    }
    return true;
  }
  auto emit = [&](std::string_view line) {
    if (line.size() > kMaxLine) line = line.substr(0, kMaxLine);
    if (!line.empty() && line[0] != ' ') on_record(line), ++records;
  };
  char buf[65536];
  for (;;) {
    size_t start = 0, nl;
    while (records < max_records && (nl = partial_.find('\n', start)) != std::string::npos) {
      if (skipping_)
        skipping_ = false;  // the end of a line already handed on, cut
      else
        emit(std::string_view(partial_).substr(start, nl - start));
      start = nl + 1;
    }
    partial_.erase(0, start);
    if (records >= max_records) return true;
    if (partial_.size() > kMaxLine) {  // a line longer than any record: handed on cut, its rest skipped
      if (!skipping_) emit(partial_);
      skipping_ = true;
      partial_.clear();
    }
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return make_error(fmt::format("reading {}: {}", path_, std::strerror(errno)));
    }
    if (n == 0) break;
    bytes_read_ += static_cast<uint64_t>(n);
    partial_.append(buf, static_cast<size_t>(n));
  }
  if (at_end && !partial_.empty()) {
    if (!skipping_) emit(partial_);
    partial_.clear();
    skipping_ = false;
  }
  return true;
}

void KmsgReader::poll(int timeout_ms, const OnRecord& on_record, uint64_t max_records) {
  if (fd_ < 0) return;
  if (device_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return;
    (void)read_ready(on_record, max_records, false);
    return;
  }
  // A growing capture: no inotify (files are a test and replay path, not the
  // live one), so when nothing was new the timeout is slept.
  (void)read_ready(on_record, max_records, false);
  if (bytes_read_ == 0 && timeout_ms > 0) ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
}

}  // namespace aimem
