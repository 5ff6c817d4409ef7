#include "core/units.h"

#include <cmath>
#include <fmt/format.h>

#include "core/text.h"

namespace aimem::units {
namespace {

struct Suffix {
  std::string_view text;
  double multiplier;
};

// Longest suffixes first so that "GiB" is not read as "G".
constexpr Suffix kUserSuffixes[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
    {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"k", 1024.0}, {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0},
    {"B", 1.0}, {"", 1.0},
};

constexpr Suffix kK8sSuffixes[] = {
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0}, {"Ei", 1152921504606846976.0},
    {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
    {"m", 1e-3}, {"", 1.0},
};

constexpr Suffix kLogSuffixes[] = {
    {"bytes", 1.0}, {"byte", 1.0},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    // A petabyte or an exabyte is never memory that ran out, but a size computed
    // wrong is printed in them (Paddle's "Cannot allocate 1048575.999023PB").
    {"PiB", 1125899906842624.0}, {"EiB", 1152921504606846976.0}, {"PB", 1125899906842624.0}, {"EB", 1152921504606846976.0},
    {"kiB", 1024.0},
    {"kB", 1024.0}, {"KB", 1024.0}, {"MB", 1048576.0}, {"GB", 1073741824.0}, {"TB", 1099511627776.0},
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
    {"kb", 1024.0}, {"mb", 1048576.0}, {"gb", 1073741824.0},
    {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0},
    {"k", 1024.0}, {"B", 1.0},
};

std::optional<uint64_t> to_bytes(double value, double multiplier) {
  double bytes = value * multiplier;
  // Up to 2^64 (exclusive): a wrapped size ("Cannot allocate 18446744071562067968
  // bytes", 2^64 - 2^31) is a reading of its own. llround stops at 2^63.
  if (!(bytes >= 0) || bytes >= 18446744073709551616.0) return std::nullopt;
  if (bytes >= 9223372036854775808.0) return static_cast<uint64_t>(bytes);
  return static_cast<uint64_t>(std::llround(bytes));
}

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

Result<uint64_t> parse_size(std::string_view text) {
  std::string_view s = text::trim(text);
  std::string_view rest;
  auto value = text::parse_double(s, &rest);
  if (!value || *value < 0)
    return make_error(fmt::format("'{}' is not a size; write it as 24GiB, 24G (= GiB), 80GB or 512MiB", text));
  rest = text::trim(rest);
  for (const auto& suffix : kUserSuffixes) {
    if (rest == suffix.text) {
      auto bytes = to_bytes(*value, suffix.multiplier);
      if (!bytes) return make_error(fmt::format("size '{}' is out of range", text));
      return *bytes;
    }
  }
  return make_error(fmt::format("'{}' has an unknown unit; use B, KiB, MiB, GiB, TiB, K, M, G, T (binary) or KB, MB, GB, TB (decimal)", text));
}

std::optional<uint64_t> parse_k8s_quantity(std::string_view textv) {
  std::string_view s = text::trim(textv);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  std::string_view rest;
  auto value = text::parse_double(s, &rest);
  if (!value || *value < 0) return std::nullopt;
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E') && rest.size() > 1 && rest[1] >= '0' && rest[1] <= '9') {
    std::string_view after_exp;
    auto exp = text::parse_u64(rest.substr(1), &after_exp);
    if (!exp || *exp > 18 || !text::trim(after_exp).empty()) return std::nullopt;
    return to_bytes(*value * std::pow(10.0, static_cast<double>(*exp)), 1.0);
  }
  rest = text::trim(rest);
  for (const auto& suffix : kK8sSuffixes)
    if (rest == suffix.text) return to_bytes(*value, suffix.multiplier);
  return std::nullopt;
}

std::optional<double> log_unit(std::string_view s, std::string_view* rest) {
  if (!s.empty() && s[0] == ' ') s = s.substr(1);
  for (const auto& suffix : kLogSuffixes) {
    if (!text::starts_with(s, suffix.text)) continue;
    // The unit must end there: "4.00 GiB," yes, "12 Gigs" no, "3 Mark" no.
    std::string_view tail = s.substr(suffix.text.size());
    if (!tail.empty() && is_alpha(tail[0])) continue;
    if (rest) *rest = tail;
    return suffix.multiplier;
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_log_size(std::string_view s, std::string_view* rest, bool allow_bare) {
  s = text::trim_left(s);
  std::string_view after_number;
  auto value = text::parse_double(s, &after_number);
  if (!value || *value < 0) return std::nullopt;
  if (auto m = log_unit(after_number, rest)) return to_bytes(*value, *m);
  if (allow_bare) {
    if (rest) *rest = after_number;
    return to_bytes(*value, 1.0);
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_log_size_saturating(std::string_view s) {
  if (auto v = parse_log_size(s)) return v;
  std::string_view after_number;
  auto value = text::parse_double(text::trim_left(s), &after_number);
  if (!value || !(*value > 0)) return std::nullopt;
  if (auto m = log_unit(after_number)) return *value * *m >= 18446744073709551616.0 ? std::optional<uint64_t>(UINT64_MAX) : std::nullopt;
  return std::nullopt;
}

Result<uint64_t> parse_count(std::string_view text, std::string_view what, uint64_t max) {
  std::string_view t = text;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  uint64_t mult = 1;
  if (!t.empty() && (t.back() == 'k' || t.back() == 'K')) {
    mult = 1024;
    t.remove_suffix(1);
  }
  uint64_t v = 0;
  bool digits = !t.empty() && t.size() <= 12;
  for (char c : t) {
    if (c < '0' || c > '9') digits = false;
    if (digits) v = v * 10 + uint64_t(c - '0');
  }
  if (!digits) return make_error(fmt::format("{} '{}': not a count (write e.g. 8192 or 8k)", what, text));
  v *= mult;
  if (v < 1 || v > max) return make_error(fmt::format("{} '{}': must be between 1 and {}", what, text, max));
  return v;
}

std::string format_bytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 6) {
    v /= 1024.0;
    ++unit;
  }
  if (v >= 100.0) return fmt::format("{:.0f} {}", v, kUnits[unit]);
  if (v >= 10.0) return fmt::format("{:.1f} {}", v, kUnits[unit]);
  return fmt::format("{:.2f} {}", v, kUnits[unit]);
}

std::string format_bytes_signed(int64_t bytes) {
  if (bytes < 0) return "-" + format_bytes(static_cast<uint64_t>(-(bytes + 1)) + 1);
  return format_bytes(static_cast<uint64_t>(bytes));
}

}  // namespace aimem::units
