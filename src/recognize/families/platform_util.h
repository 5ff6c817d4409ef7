// Small parsing helpers shared by the platform recognizers (docker, systemd,
// kubernetes, host tools, exit status). Header-only; nothing here allocates
// more than the token it returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/text.h"

namespace aimem::platform {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Leading spaces, tabs and the given separator characters removed.
inline std::string_view skip(std::string_view s, std::string_view chars = " \t") {
  size_t i = 0;
  while (i < s.size() && chars.find(s[i]) != std::string_view::npos) ++i;
  return s.substr(i);
}

// The commands that stand before the end of `before` on one shell line,
// each ended by ";" or "&&" ("nproc; date && cat ..." has 2): they print
// their output first, a line each in the pastes the readers see.
inline uint64_t commands_before(std::string_view before) {
  uint64_t n = 0;
  for (size_t at = 0; at < before.size(); ++at)
    if (before[at] == ';' || (before[at] == '&' && at + 1 < before.size() && before[at + 1] == '&' && ++at)) ++n;
  return n;
}

// Indentation of a line (spaces; a tab counts as 8).
inline size_t indent_of(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if (c == ' ') ++n;
    else if (c == '\t') n += 8;
    else break;
  }
  return n;
}

// A size as container tools and systemd write it: "512m", "2g", "4G", "1.5GiB",
// "2048MB", "536870912". Every unit is binary (docker's go-units RAMInBytes and
// systemd both use 1024). A bare number is multiplied by `bare` (bytes for
// docker and systemd, MiB for hyper). The token must end after the unit.
inline std::optional<uint64_t> parse_binary_size(std::string_view s, uint64_t bare = 1, std::string_view* rest = nullptr) {
  std::string_view after;
  auto v = text::parse_double(s, &after);
  if (!v || *v < 0) return std::nullopt;
  double mult = static_cast<double>(bare);
  if (!after.empty() && !is_digit(after[0])) {
    char u = after[0];
    if (u >= 'A' && u <= 'Z') u = static_cast<char>(u + 32);
    size_t used = 1;
    switch (u) {
      case 'b': mult = 1.0, used = 1; break;
      case 'k': mult = 1024.0; break;
      case 'm': mult = 1048576.0; break;
      case 'g': mult = 1073741824.0; break;
      case 't': mult = 1099511627776.0; break;
      case 'p': mult = 1125899906842624.0; break;
      default: used = 0;
    }
    if (used && u != 'b') {
      // optional "b" or "ib"
      if (after.size() > 2 && (after[1] == 'i' || after[1] == 'I') && (after[2] == 'b' || after[2] == 'B')) used = 3;
      else if (after.size() > 1 && (after[1] == 'b' || after[1] == 'B')) used = 2;
    }
    after = after.substr(used);
    if (!after.empty() && is_alnum(after[0])) return std::nullopt;  // "512mx", "2 gigs"
  }
  double bytes = *v * mult;
  if (!(bytes >= 0) || bytes > 1.8e19) return std::nullopt;
  if (rest) *rest = after;
  return static_cast<uint64_t>(bytes + 0.5);
}

// A whitespace-separated token starting at `s` (after leading blanks).
inline std::string_view token(std::string_view s) { return text::first_word(s); }

// The first `max` whitespace-separated words of `s`.
inline std::vector<std::string_view> words(std::string_view s, size_t max) {
  std::vector<std::string_view> out;
  while (out.size() < max) {
    s = skip(s);
    if (s.empty()) break;
    std::string_view w = text::first_word(s);
    out.push_back(w);
    s = s.substr(w.size());
  }
  return out;
}

// The text after the first occurrence of `label` in `s` with blanks skipped.
inline std::optional<std::string_view> value_after(std::string_view s, std::string_view label) {
  auto v = text::after(s, label);
  if (!v) return std::nullopt;
  return skip(*v);
}

// ps's elapsed time: [[dd-]hh:]mm:ss.
inline std::optional<uint64_t> parse_ps_etime(std::string_view t) {
  uint64_t days = 0;
  if (size_t dash = t.find('-'); dash != std::string_view::npos) {
    auto d = text::parse_u64(t.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    t = t.substr(dash + 1);
  }
  uint64_t secs = 0;
  int parts = 0;
  while (!t.empty() && parts < 3) {
    size_t colon = t.find(':');
    std::string_view part = t.substr(0, colon);
    if (part.empty() || part.size() > 2 || part.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    secs = secs * 60 + *text::parse_u64(part);
    ++parts;
    if (colon == std::string_view::npos) break;
    t = t.substr(colon + 1);
  }
  if (parts < 2) return std::nullopt;
  return days * 86400 + secs;
}

}  // namespace aimem::platform
