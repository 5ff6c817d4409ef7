// One record of the kernel ring buffer as /dev/kmsg frames it
// (Documentation/ABI/testing/dev-kmsg):
//   "<prio>,<seq>,<usec since boot>,<flags>[,...];<text>[\n KEY=VALUE...]"
// e.g. "6,1234,518050606,-;Out of memory: Killed process 77 (python3)".
// The one parser of that prefix: the /dev/kmsg readers (sources/) and the
// scanner (a pasted raw record among other lines) both use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace aimem {

struct KmsgRecord {
  int64_t uptime_us = 0;  // CLOCK_MONOTONIC at the record, microseconds
  std::string_view text;  // the message, without the dictionary lines and trailing newline
};
// nullopt when `raw` does not start with the three numbers, each followed by a
// ',', and a ';' within the next 16 bytes (the flags).
std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw);

}  // namespace aimem
