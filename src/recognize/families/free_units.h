// What a figure in `free`'s table means, from the options of the `free`
// command shown before it: bare numbers are KiB unless -b, -k, -m, -g (and
// the long --bytes, --kibi, --mebi, --gibi, --kilo, --mega, --giga) chose
// another unit; -h prints units (Ki, Mi, Gi, or K, M, G), binary unless
// --si. Shared by the `free` table reader (host_tools.cc) and the series of
// `free` rows taken again and again (memory_series.cc). Header-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/text.h"
#include "core/units.h"

namespace aimem {

class FreeUnits {
 public:
  // The options after "free" ("-m", "-h --si", "--giga -w", clustered "-mt").
  void command(std::string_view args) {
    for (auto a = text::first_word(args); !a.empty(); a = text::first_word(args)) {
      args = args.substr(static_cast<size_t>(a.data() + a.size() - args.data()));
      if (a == "-b" || a == "--bytes") unit_ = 1;
      else if (a == "-k" || a == "--kibi") unit_ = units::KiB;
      else if (a == "-m" || a == "--mebi") unit_ = units::MiB;
      else if (a == "-g" || a == "--gibi") unit_ = units::GiB;
      else if (a == "--kilo") unit_ = 1000;
      else if (a == "--mega") unit_ = 1000000;
      else if (a == "--giga") unit_ = 1000000000;
      else if (a == "--si") si_ = true;
      else if (a[0] == '-' && a.size() > 2 && a[1] != '-') {
        for (char c : a.substr(1)) {
          if (c == 'b') unit_ = 1;
          else if (c == 'k') unit_ = units::KiB;
          else if (c == 'm') unit_ = units::MiB;
          else if (c == 'g') unit_ = units::GiB;
        }
      }
    }
  }

  // One figure of the table: "157" (in the command's unit), "15Gi", "1.2G", "0B".
  std::optional<uint64_t> size_of(std::string_view v) const {
    std::string_view rest;
    auto n = text::parse_double(v, &rest);
    if (!n || *n < 0) return std::nullopt;
    // A figure past what 64 bits hold (a garbled row) is no size, not an overflow.
    auto bytes = [](double b) -> std::optional<uint64_t> {
      if (!(b >= 0) || b >= 1.8e19) return std::nullopt;
      return static_cast<uint64_t>(b + 0.5);
    };
    if (rest.empty()) return bytes(*n * static_cast<double>(unit_));
    double mult = 0;
    switch (rest[0]) {
      case 'B': mult = 1; break;
      case 'K': case 'k': mult = si_ ? 1e3 : 1024.0; break;
      case 'M': mult = si_ ? 1e6 : 1048576.0; break;
      case 'G': mult = si_ ? 1e9 : 1073741824.0; break;
      case 'T': mult = si_ ? 1e12 : 1099511627776.0; break;
      default: return std::nullopt;
    }
    return bytes(*n * mult);
  }

 private:
  uint64_t unit_ = units::KiB;  // what a bare number means
  bool si_ = false;
};

// top's summary lines (procps-ng 3.3 and later; the unit first, -E changes it):
//   KiB Mem : 33554432 total,  22671044 free,  10215380 used,    668008 buff/cache
//   KiB Swap:  2097148 total,   2097148 free,         0 used.  23086324 avail Mem
// Shared by the host reader (host_tools.cc) and the series of summaries taken
// again and again (memory_series.cc).
struct TopSummary {
  bool swap = false;  // the Swap line (its "avail Mem" is the host's available memory)
  std::optional<uint64_t> total, free, used, cache, avail;
};

inline std::optional<TopSummary> top_summary(std::string_view t) {
  t = text::trim_left(t);
  if (t.size() < 8 || t.substr(1, 3) != "iB ") return std::nullopt;
  TopSummary r;
  r.swap = t.substr(4, 4) == "Swap";
  if (!r.swap && t.substr(4, 3) != "Mem") return std::nullopt;
  const uint64_t unit = t[0] == 'K' ? units::KiB : t[0] == 'M' ? units::MiB : t[0] == 'G' ? units::GiB : t[0] == 'T' ? units::TiB : 0;
  if (!unit) return std::nullopt;
  // "N <name>": the figure just before the name.
  auto figure = [&](std::string_view name) -> std::optional<uint64_t> {
    for (size_t p = t.find(name); p != std::string_view::npos; p = t.find(name, p + 1)) {
      size_t e = p;
      while (e > 0 && t[e - 1] == ' ') --e;
      size_t b = e;
      while (b > 0 && ((t[b - 1] >= '0' && t[b - 1] <= '9') || t[b - 1] == '.')) --b;
      if (b == e) continue;
      auto v = text::parse_double(t.substr(b, e - b));
      if (v && *v >= 0 && *v < 1e15) return static_cast<uint64_t>(*v * static_cast<double>(unit));
    }
    return std::nullopt;
  };
  r.total = figure(" total");
  r.free = figure(" free");
  r.used = figure(" used");
  r.cache = figure(" buff/cache");
  r.avail = figure(" avail Mem");
  return r;
}

}  // namespace aimem
