// The kernel ring buffer for `aimem diagnose`: every record /dev/kmsg (or a
// capture in its framing, kmsg_reader.h) holds, handed to the reader the
// caller opens (the line scanner) with its time since boot.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <fmt/format.h>

#include "core/kmsg_record.h"
#include "core/text.h"
#include "core/time.h"
#include "sources/kmsg_reader.h"
#include "sources/live.h"

namespace aimem {

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

KmsgResult read_kmsg(const std::string& root, std::optional<int64_t> boot_us, FactSink& sink,
                     const TextReaders& readers) {
  KmsgResult result;
  KmsgReader reader;
  if (!reader.open(root, true)) {
    int err = reader.error_number();
    result.error = err;
    result.problem = fmt::format("cannot read the kernel log {}: {}{}", reader.path(), std::strerror(err),
                                 err == EACCES || err == EPERM ? " (run as root, or pass `dmesg -T` output as a file)" : "");
    return result;
  }
  if (reader.device() && root == "/") {
    // The ring buffer's clock is the monotonic clock: anchor it to the wall
    // clock now rather than to /proc/stat btime, which counts suspended time.
    boot_us = timeutil::monotonic_epoch_us();
  }
  SourceContext ctx;
  ctx.name = reader.path();
  ctx.reference_us = timeutil::now_us();
  ctx.boot_us = boot_us;
  std::unique_ptr<TextReader> text_reader = readers(ctx, sink);
  TextReader& scanner = *text_reader;
  auto feed = [&](std::string_view raw) {
    auto rec = parse_kmsg_record(raw);
    if (!rec) return;
    timeutil::LineTime t;
    t.uptime_s = static_cast<double>(rec->uptime_us) / 1e6;
    if (boot_us && !result.first_us) result.first_us = *boot_us + rec->uptime_us;
    scanner.feed_record(rec->text, t);
    ++result.records;
  };
  // The live ring is bounded (a few MiB); a capture is read whole.
  if (auto done = reader.read_ready(feed, reader.device() ? 5'000'001 : UINT64_MAX, true); !done)
    result.problem = done.error().message;
  scanner.finish();
  result.read = true;
  return result;
}

}  // namespace aimem
