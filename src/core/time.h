// Timestamps as logs print them. A line yields wall-clock time (UTC
// microseconds since the epoch) where its prefix says it, or only seconds since
// boot (dmesg without -T), which sources turn into wall time when they know the
// boot time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace aimem::timeutil {

struct LineTime {
  std::optional<int64_t> unix_us;  // wall clock, UTC
  std::optional<double> uptime_s;  // seconds since boot
  bool year_guessed = false;       // syslog / klog / vLLM prefixes carry no year
};

// Days since 1970-01-01 for a proleptic Gregorian date, and back.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d);
struct Civil {
  int64_t y;
  unsigned m, d;
};
Civil civil_from_days(int64_t days);
std::optional<int64_t> make_unix_us(int y, int mon, int day, int h, int min, int s, int64_t us = 0,
                                    int tz_offset_s = 0);

// Finds a timestamp in the first bytes of a log line. `reference_us` supplies
// the year for prefixes that have none (the year that puts the time at or
// before the reference).
LineTime parse_line_time(std::string_view line, int64_t reference_us);

// ISO 8601 or RFC 1123 date-time anywhere at the start of `s`.
std::optional<int64_t> parse_datetime(std::string_view s);

// --since: "1m", "90s", "24h", "2d", "20 minutes ago", "2026-11-29 15:00",
// "2026-11-29T15:00:00Z", "@1764428400", "today", "yesterday".
Result<int64_t> parse_since(std::string_view text, int64_t now_us);

int64_t now_us();
// Wall time (UTC us) at which CLOCK_MONOTONIC read zero: the kernel log's
// clock anchored now (unlike /proc/stat btime, it excludes suspended time).
int64_t monotonic_epoch_us();
// A length of time as users write it: "100ms", "1s", "1.5s", "2m", "1h", "7d";
// a bare number is seconds. `what` names the option in the error.
Result<int64_t> parse_duration_us(std::string_view text, std::string_view what);
std::string format_iso(int64_t unix_us);  // 2026-11-29T15:03:12Z
std::string format_human(int64_t unix_us);  // 2026-11-29 15:03:12 UTC
std::string format_duration(double seconds);  // "3m12s", "31m", "2h05m"

}  // namespace aimem::timeutil
