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

}  // namespace aimem
