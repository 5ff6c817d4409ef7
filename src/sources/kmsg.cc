// The kernel ring buffer through /dev/kmsg: one record per read(), framed as
// "<prio>,<seq>,<usec since boot>,<flags>;<text>" with optional "\n KEY=VALUE"
// continuation lines. EPIPE means the ring overwrote records we had not read
// yet: reading continues from the oldest one left. Opened O_NONBLOCK so the
// read stops at the newest record. A regular file with the same framing (a
// capture) is read line by line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <cstring>
#include <fstream>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "recognize/scanner.h"
#include "sources/live.h"

namespace aimem {
namespace {

}  // namespace

std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw) {
  size_t semi = raw.find(';');
  if (semi == std::string_view::npos || semi > 64) return std::nullopt;
  auto fields = text::split(raw.substr(0, semi), ',');
  if (fields.size() < 3) return std::nullopt;
  KmsgRecord r;
  if (auto us = text::parse_u64(fields[2])) r.uptime_us = static_cast<int64_t>(*us);
  std::string_view body = raw.substr(semi + 1);
  // Drop dictionary continuation lines (" SUBSYSTEM=..."); keep the message.
  if (size_t nl = body.find("\n "); nl != std::string_view::npos) body = body.substr(0, nl);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
  r.text = body;
  return r;
}

std::optional<int64_t> boot_time_us(const std::string& root) {
  std::ifstream in(root + "/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (text::starts_with(line, "btime ")) {
      if (auto v = text::parse_u64(text::trim(std::string_view(line).substr(6)))) return static_cast<int64_t>(*v) * 1000000;
    }
  }
  return std::nullopt;
}

KmsgResult read_kmsg(const std::string& root, std::optional<int64_t> boot_us, FactSink& sink) {
  KmsgResult result;
  std::string path = root == "/" ? "/dev/kmsg" : root + "/dev/kmsg";
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    result.error = errno;
    result.problem = fmt::format("cannot read the kernel log {}: {}{}", path, std::strerror(errno),
                                 errno == EACCES || errno == EPERM ? " (run as root, or pass `dmesg -T` output as a file)" : "");
    return result;
  }
  SourceContext ctx;
  ctx.name = path;
  ctx.reference_us = timeutil::now_us();
  ctx.boot_us = boot_us;
  LineScanner scanner(ctx, sink);
  auto feed = [&](std::string_view raw) {
    auto rec = parse_kmsg_record(raw);
    if (!rec) return;
    timeutil::LineTime t;
    if (rec->uptime_us) t.uptime_s = static_cast<double>(*rec->uptime_us) / 1e6;
    if (rec->uptime_us && boot_us) {
      int64_t wall = *boot_us + *rec->uptime_us;
      if (!result.first_us) result.first_us = wall;
    }
    scanner.feed_record(rec->text, t);
    ++result.records;
  };
  struct stat st{};
  ::fstat(fd, &st);
  if (S_ISCHR(st.st_mode) && root == "/") {
    // The ring buffer's clock is the monotonic clock: anchor it to the wall
    // clock now rather than to /proc/stat btime, which counts suspended time.
    boot_us = timeutil::monotonic_epoch_us();
    ctx.boot_us = boot_us;
  }
  if (S_ISCHR(st.st_mode)) {
    std::string buf(16384, '\0');
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) continue;  // overwritten records: go on with the oldest left
        if (errno == EAGAIN) break;
        result.problem = fmt::format("reading {}: {}", path, std::strerror(errno));
        break;
      }
      if (n == 0) break;
      feed(std::string_view(buf.data(), static_cast<size_t>(n)));
      if (result.records > 5'000'000) break;
    }
  } else {
    ::close(fd);
    fd = -1;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == ' ') continue;
      if (line.size() > LineScanner::kMaxLine) line.resize(LineScanner::kMaxLine);
      feed(line);
    }
  }
  if (fd >= 0) ::close(fd);
  scanner.finish();
  result.read = true;
  return result;
}

}  // namespace aimem
