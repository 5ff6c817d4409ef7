#include "core/time.h"

#include <chrono>
#include <cstring>
#include <fmt/format.h>

#include "core/text.h"

namespace aimem::timeutil {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly n digits at s[pos].
std::optional<int> digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!digit(s[pos + i])) return std::nullopt;
    v = v * 10 + (s[pos + i] - '0');
  }
  return v;
}

int month_from_name(std::string_view s) {
  static constexpr const char* kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"};
  if (s.size() < 3) return 0;
  for (int i = 0; i < 12; ++i)
    if (text::iequals(s.substr(0, 3), kMonths[i])) return i + 1;
  return 0;
}

bool weekday_name(std::string_view s) {
  static constexpr const char* kDays[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  if (s.size() < 3) return false;
  for (auto d : kDays)
    if (text::iequals(s.substr(0, 3), d)) return true;
  return false;
}

}  // namespace

// civil_from_days (H. Hinnant): days since 1970-01-01 to a Gregorian date.
Civil civil_from_days(int64_t days) {
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  unsigned doe = static_cast<unsigned>(days - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  unsigned d = doy - (153 * mp + 2) / 5 + 1;
  unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

namespace {

int year_of(int64_t unix_us) { return static_cast<int>(civil_from_days(unix_us / 86400000000LL).y); }

// Picks the year for a month/day/time without one: the latest year that does
// not put the time after the reference (plus a day of clock slack).
std::optional<int64_t> without_year(int mon, int day, int h, int mi, int s, int64_t us, int64_t reference_us) {
  int year = year_of(reference_us);
  auto t = make_unix_us(year, mon, day, h, mi, s, us);
  if (!t) return std::nullopt;
  if (*t > reference_us + 86400000000LL) t = make_unix_us(year - 1, mon, day, h, mi, s, us);
  return t;
}

// hh:mm:ss[.frac] at pos; returns position after it.
std::optional<size_t> clock(std::string_view s, size_t pos, int& h, int& mi, int& sec, int64_t& us) {
  auto hh = digits(s, pos, 2);
  if (!hh || pos + 2 >= s.size() || s[pos + 2] != ':') return std::nullopt;
  auto mm = digits(s, pos + 3, 2);
  if (!mm || pos + 5 >= s.size() || s[pos + 5] != ':') return std::nullopt;
  auto ss = digits(s, pos + 6, 2);
  if (!ss) return std::nullopt;
  h = *hh, mi = *mm, sec = *ss, us = 0;
  size_t p = pos + 8;
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    int64_t scale = 100000;
    while (p < s.size() && digit(s[p])) {
      if (scale > 0) us += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
    }
  }
  if (h > 23 || mi > 59 || sec > 60) return std::nullopt;
  return p;
}

// Time-zone designator at pos: Z, +hh:mm, +hhmm, +hh. Returns offset seconds.
int zone(std::string_view s, size_t pos) {
  if (pos < s.size() && (s[pos] == ' ') && pos + 1 < s.size() && (s[pos + 1] == '+' || s[pos + 1] == '-')) ++pos;
  if (pos >= s.size()) return 0;
  if (s[pos] == 'Z') return 0;
  if (s[pos] != '+' && s[pos] != '-') return 0;
  int sign = s[pos] == '-' ? -1 : 1;
  auto hh = digits(s, pos + 1, 2);
  if (!hh) return 0;
  size_t p = pos + 3;
  if (p < s.size() && s[p] == ':') ++p;
  auto mm = digits(s, p, 2);
  return sign * (*hh * 3600 + (mm ? *mm * 60 : 0));
}

// ISO 8601 at exactly pos.
std::optional<int64_t> iso_at(std::string_view s, size_t pos) {
  auto y = digits(s, pos, 4);
  if (!y || pos + 10 > s.size() || (s[pos + 4] != '-' && s[pos + 4] != '/')) return std::nullopt;
  char sep = s[pos + 4];
  auto mo = digits(s, pos + 5, 2);
  if (!mo || s[pos + 7] != sep) return std::nullopt;
  auto d = digits(s, pos + 8, 2);
  if (!d) return std::nullopt;
  size_t p = pos + 10;
  int h = 0, mi = 0, sec = 0;
  int64_t us = 0;
  if (p < s.size() && (s[p] == 'T' || s[p] == ' ' || s[p] == '_')) {
    auto end = clock(s, p + 1, h, mi, sec, us);
    if (!end) return std::nullopt;
    p = *end;
  } else {
    return std::nullopt;
  }
  return make_unix_us(*y, *mo, *d, h, mi, sec, us, zone(s, p));
}

}  // namespace

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<int64_t> make_unix_us(int y, int mon, int day, int h, int min, int s, int64_t us, int tz_offset_s) {
  if (y < 1970 || y > 2200 || mon < 1 || mon > 12 || day < 1 || day > 31) return std::nullopt;
  int64_t days = days_from_civil(y, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  int64_t secs = days * 86400 + h * 3600 + min * 60 + s - tz_offset_s;
  return secs * 1000000 + us;
}

std::optional<int64_t> parse_datetime(std::string_view s) {
  s = text::trim_left(s);
  if (auto t = iso_at(s, 0)) return t;
  // RFC 1123: "Fri, 09 Aug 2024 09:51:17 +0200" (also without the weekday).
  size_t p = 0;
  if (weekday_name(s)) {
    p = s.find(' ');
    if (p == std::string_view::npos) return std::nullopt;
    ++p;
  }
  auto d = digits(s, p, 2);
  size_t dlen = 2;
  if (!d) {
    d = digits(s, p, 1);
    dlen = 1;
  }
  if (!d || p + dlen >= s.size() || s[p + dlen] != ' ') return std::nullopt;
  int mon = month_from_name(s.substr(p + dlen + 1));
  if (!mon) return std::nullopt;
  size_t yp = p + dlen + 5;
  auto y = digits(s, yp, 4);
  if (!y || yp + 4 >= s.size()) return std::nullopt;
  int h, mi, sec;
  int64_t us;
  auto end = clock(s, yp + 5, h, mi, sec, us);
  if (!end) return std::nullopt;
  return make_unix_us(*y, mon, *d, h, mi, sec, us, zone(s, *end));
}

LineTime parse_line_time(std::string_view line, int64_t reference_us) {
  LineTime out;
  std::string_view s = line.substr(0, 96);
  size_t lead = 0;
  while (lead < s.size() && (s[lead] == ' ' || s[lead] == '\t')) ++lead;
  std::string_view t = s.substr(lead);
  if (t.empty()) return out;

  // "[  518.050606] ..." (dmesg) or "[Mon Jan 26 01:49:41 2026] ..." (dmesg -T)
  if (t[0] == '[') {
    size_t i = 1;
    while (i < t.size() && t[i] == ' ') ++i;
    if (i < t.size() && digit(t[i])) {
      std::string_view rest;
      auto v = text::parse_double(t.substr(i), &rest);
      if (v && !rest.empty() && rest[0] == ']') out.uptime_s = *v;
      // TensorRT-LLM: "[07/08/2025-19:47:15] [TRT-LLM] [E] ..." (month first)
      auto mo = digits(t, i, 2), d = digits(t, i + 3, 2), y = digits(t, i + 6, 4);
      int h, mi, sec;
      int64_t us;
      if (mo && d && y && t[i + 2] == '/' && t[i + 5] == '/' && i + 10 < t.size() && t[i + 10] == '-' &&
          clock(t, i + 11, h, mi, sec, us)) {
        out.unix_us = make_unix_us(*y, *mo, *d, h, mi, sec, us);
        return out;
      }
      // fall through: "[2026-11-29 ...]" handled by the ISO scan below
    } else if (weekday_name(t.substr(i))) {
      // "Mon Jan 26 01:49:41 2026"
      std::string_view r = t.substr(i + 4);
      int mon = month_from_name(r);
      if (mon && r.size() > 20) {
        size_t dp = 4;
        while (dp < r.size() && r[dp] == ' ') ++dp;
        std::string_view dr;
        auto day = text::parse_u64(r.substr(dp), &dr);
        int h, mi, sec;
        int64_t us;
        size_t cp = dp + (r.size() - dp - dr.size()) + 1;
        auto end = day ? clock(r, cp, h, mi, sec, us) : std::nullopt;
        if (end) {
          auto y = digits(r, *end + 1, 4);
          if (y) out.unix_us = make_unix_us(*y, mon, static_cast<int>(*day), h, mi, sec, us);
        }
      }
      return out;
    }
  }

  // ISO date anywhere in the first bytes ("2026-...", "time=2026-...", "[2026-...").
  for (size_t i = 0; i + 19 <= t.size() && i < 48; ++i) {
    if (digit(t[i]) && (i == 0 || !digit(t[i - 1]))) {
      if (auto v = iso_at(t, i)) {
        out.unix_us = v;
        return out;
      }
    }
  }
  if (out.uptime_s) return out;

  // syslog / journal short: "May 15 23:09:30 host ..."
  if (int mon = month_from_name(t); mon && t.size() > 15 && t[3] == ' ') {
    size_t dp = 4;
    while (dp < t.size() && t[dp] == ' ') ++dp;
    std::string_view dr;
    auto day = text::parse_u64(t.substr(dp), &dr);
    if (day && !dr.empty() && dr[0] == ' ') {
      int h, mi, sec;
      int64_t us;
      size_t cp = t.size() - dr.size() + 1;
      if (clock(t, cp, h, mi, sec, us)) {
        out.unix_us = without_year(mon, static_cast<int>(*day), h, mi, sec, us, reference_us);
        out.year_guessed = true;
        return out;
      }
    }
  }

  // klog: "I1125 09:30:12.441" / "E0626 06:24:44.903881"
  if ((t[0] == 'I' || t[0] == 'W' || t[0] == 'E' || t[0] == 'F') && t.size() > 14 && t[5] == ' ') {
    auto mo = digits(t, 1, 2), d = digits(t, 3, 2);
    int h, mi, sec;
    int64_t us;
    if (mo && d && clock(t, 6, h, mi, sec, us)) {
      out.unix_us = without_year(*mo, *d, h, mi, sec, us, reference_us);
      out.year_guessed = true;
      return out;
    }
  }

  // vLLM: "INFO 04-27 09:07:04 [engine.py:160]" / "ERROR 04-27 09:07:04"
  for (std::string_view level : {"INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL "}) {
    size_t p = t.find(level);
    if (p != std::string_view::npos && p < 64) {
      size_t q = p + level.size();
      auto mo = digits(t, q, 2), d = digits(t, q + 3, 2);
      int h, mi, sec;
      int64_t us;
      if (mo && d && q + 2 < t.size() && t[q + 2] == '-' && clock(t, q + 6, h, mi, sec, us)) {
        out.unix_us = without_year(*mo, *d, h, mi, sec, us, reference_us);
        out.year_guessed = true;
        return out;
      }
    }
  }
  return out;
}

Result<int64_t> parse_since(std::string_view textv, int64_t now) {
  std::string_view s = text::trim(textv);
  if (s.empty()) return make_error("--since needs a value such as 1h, 20m, 2d or 2026-11-29 15:00");
  if (s == "today" || s == "yesterday") {
    int64_t day = now / 86400000000LL * 86400000000LL;
    return s == "today" ? day : day - 86400000000LL;
  }
  if (s[0] == '@') {
    auto v = text::parse_u64(s.substr(1));
    if (v) return static_cast<int64_t>(*v) * 1000000;
  }
  if (auto t = parse_datetime(s)) return *t;
  // A date alone, or date + hh:mm without seconds.
  if (s.size() >= 10) {
    std::string padded(s);
    if (padded.size() == 10) padded += "T00:00:00";
    else if (padded.size() == 16) padded += ":00";
    if (auto t = iso_at(padded, 0)) return *t;
  }
  // Relative: number + unit, optionally "ago".
  std::string_view rest;
  auto v = text::parse_double(s, &rest);
  if (v && *v >= 0) {
    std::string_view unit = text::trim(rest);
    if (text::ends_with(unit, "ago")) unit = text::trim(unit.substr(0, unit.size() - 3));
    double mult = 0;
    if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") mult = 1;
    else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes") mult = 60;
    else if (unit == "h" || unit == "hour" || unit == "hours") mult = 3600;
    else if (unit == "d" || unit == "day" || unit == "days") mult = 86400;
    else if (unit == "w" || unit == "week" || unit == "weeks") mult = 604800;
    if (mult > 0) return now - static_cast<int64_t>(*v * mult * 1e6);
  }
  return make_error(fmt::format("--since '{}' is not a time; write 1h, 20m, '20 minutes ago', 2d or 2026-11-29 15:00", textv));
}

Result<int64_t> parse_duration_us(std::string_view textv, std::string_view what) {
  std::string_view s = text::trim(textv);
  std::string_view rest;
  auto v = text::parse_double(s, &rest);
  std::string_view unit = text::trim(rest);
  double mult = 0;
  if (unit.empty() || unit == "s" || unit == "sec") mult = 1e6;
  else if (unit == "ms") mult = 1e3;
  else if (unit == "m" || unit == "min") mult = 60e6;
  else if (unit == "h") mult = 3600e6;
  else if (unit == "d") mult = 86400e6;
  if (!v || *v < 0 || mult == 0 || *v * mult > 9e18)
    return make_error(fmt::format("{} '{}' is not a duration; write 100ms, 5s, 2m, 1h or 7d", what, textv));
  return static_cast<int64_t>(*v * mult);
}

int64_t monotonic_epoch_us() {
  timespec mono{}, real{};
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  ::clock_gettime(CLOCK_REALTIME, &real);
  return (static_cast<int64_t>(real.tv_sec) - mono.tv_sec) * 1000000 + (real.tv_nsec - mono.tv_nsec) / 1000;
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string format_iso(int64_t unix_us) {
  int64_t secs = unix_us / 1000000;
  if (unix_us < 0 && unix_us % 1000000) --secs;
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) rem += 86400, --days;
  Civil c = civil_from_days(days);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.y, c.m, c.d, rem / 3600, (rem / 60) % 60, rem % 60);
}

std::string format_human(int64_t unix_us) {
  std::string iso = format_iso(unix_us);
  iso[10] = ' ';
  iso.pop_back();
  return iso + " UTC";
}

std::string format_duration(double seconds) {
  if (seconds < 0) seconds = 0;
  // Under a second (a 100 ms sampling interval) in milliseconds, not "0s".
  if (seconds > 0 && seconds < 0.9995) return fmt::format("{}ms", static_cast<int64_t>(seconds * 1000 + 0.5));
  int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return s % 60 ? fmt::format("{}m{:02}s", s / 60, s % 60) : fmt::format("{}m", s / 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  return fmt::format("{}d{:02}h", s / 86400, (s / 3600) % 24);
}

}  // namespace aimem::timeutil
