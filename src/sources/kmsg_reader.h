// The kernel log as /dev/kmsg hands it out: one record per read(), framed as
// "<prio>,<seq>,<usec since boot>,<flags>;<text>" (core/kmsg_record.h parses
// it), opened O_NONBLOCK so a read stops at the newest record. EPIPE means the
// ring overwrote records not read yet: reading goes on with the oldest one
// left. A regular file with the same framing (a capture) is read line by line,
// lines that start with a space (dictionary continuations) left out, and
// followed as it grows, as `tail -f` does. The one reader of /dev/kmsg: the
// scan of `aimem diagnose` (kmsg.cc) and `aimem watch`'s follower read it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace aimem {

class KmsgReader {
 public:
  KmsgReader() = default;
  ~KmsgReader();
  KmsgReader(const KmsgReader&) = delete;
  KmsgReader& operator=(const KmsgReader&) = delete;

  // Opens ROOT/dev/kmsg, at the oldest record, or (the device only) after the
  // newest unless from_start. False with errno kept in error_number.
  bool open(const std::string& root, bool from_start);
  const std::string& path() const { return path_; }
  int error_number() const { return errno_; }
  bool device() const { return device_; }  // the ring itself, not a capture
  // The descriptor to wait on (poll/epoll, POLLIN) for new records: the
  // device only; -1 for a capture, which is read at a caller's tick instead.
  int wait_fd() const { return device_ ? fd_ : -1; }

  using OnRecord = std::function<void(std::string_view raw)>;
  // Every record ready now, at most max_records. A capture's last line
  // without a newline is held for the next call unless `at_end`. Lines over
  // max_line are cut there. An error naming the file when a read failed
  // (the records before it were handed on).
  Result<bool> read_ready(const OnRecord& on_record, uint64_t max_records, bool at_end);
  // Waits at most timeout_ms for records, then reads those ready (a capture
  // has no wakeup: when nothing was new it sleeps the timeout).
  void poll(int timeout_ms, const OnRecord& on_record, uint64_t max_records);

  static constexpr size_t kMaxLine = 1 << 20;

 private:
  int fd_ = -1;
  int errno_ = 0;
  bool device_ = false;
  std::string path_;
  std::string partial_;  // a capture: the unterminated last line
  bool skipping_ = false;  // a capture: the rest of a line cut at kMaxLine
  uint64_t bytes_read_ = 0;  // by the last read_ready
};

}  // namespace aimem
