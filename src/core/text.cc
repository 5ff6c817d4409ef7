#include "core/text.h"

#include <algorithm>

#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstring>

namespace aimem::text {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string_view trim_left(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

std::string_view trim(std::string_view s) {
  s = trim_left(s);
  size_t n = s.size();
  while (n > 0 && is_space(s[n - 1])) --n;
  return s.substr(0, n);
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

static inline char lower_ascii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

size_t ifind(std::string_view hay, std::string_view needle, size_t from) {
  if (needle.empty()) return from <= hay.size() ? from : std::string_view::npos;
  if (hay.size() < needle.size()) return std::string_view::npos;
  const char first_l = lower_ascii(needle[0]);
  const char first_u = (first_l >= 'a' && first_l <= 'z') ? static_cast<char>(first_l - 32) : first_l;
  const size_t last = hay.size() - needle.size();
  size_t i = from;
  while (i <= last) {
    // memchr for either case of the first byte keeps long lines fast.
    const void* pl = std::memchr(hay.data() + i, first_l, last - i + 1);
    const void* pu = first_u == first_l ? nullptr : std::memchr(hay.data() + i, first_u, last - i + 1);
    size_t cand = std::string_view::npos;
    if (pl) cand = static_cast<const char*>(pl) - hay.data();
    if (pu) {
      size_t c2 = static_cast<const char*>(pu) - hay.data();
      if (c2 < cand) cand = c2;
    }
    if (cand == std::string_view::npos) return std::string_view::npos;
    if (iequals(hay.substr(cand, needle.size()), needle)) return cand;
    i = cand + 1;
  }
  return std::string_view::npos;
}

bool icontains(std::string_view hay, std::string_view needle) { return ifind(hay, needle) != std::string_view::npos; }
bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

std::optional<std::string_view> after(std::string_view s, std::string_view label) {
  size_t p = s.find(label);
  if (p == std::string_view::npos) return std::nullopt;
  return s.substr(p + label.size());
}

std::optional<std::string_view> iafter(std::string_view s, std::string_view label) {
  size_t p = ifind(s, label);
  if (p == std::string_view::npos) return std::nullopt;
  return s.substr(p + label.size());
}

std::optional<uint64_t> parse_u64(std::string_view s, std::string_view* rest) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  if (rest) *rest = s.substr(static_cast<size_t>(ptr - s.data()));
  return v;
}

std::optional<int64_t> parse_i64(std::string_view s, std::string_view* rest) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  if (rest) *rest = s.substr(static_cast<size_t>(ptr - s.data()));
  return v;
}

std::optional<double> parse_fraction(std::string_view s) {
  auto r = parse_double(trim_left(s));
  if (!r || *r <= 0 || *r > 1.0) return std::nullopt;
  return r;
}

std::optional<double> parse_double(std::string_view s, std::string_view* rest) {
  // Digits, one dot, optional sign; no locale, no exponent, no inf/nan.
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (digits == 0 || i > 64) return std::nullopt;
  char buf[72];
  std::memcpy(buf, s.data(), i);
  buf[i] = '\0';
  double v = std::strtod(buf, nullptr);
  if (rest) *rest = s.substr(i);
  return v;
}

std::optional<double> parse_float_exp(std::string_view s, std::string_view* rest) {
  std::string_view r;
  auto mantissa = parse_double(s, &r);
  if (!mantissa) return std::nullopt;
  if (r.size() >= 2 && (r[0] == 'e' || r[0] == 'E')) {
    size_t i = 1;
    bool negative = r[i] == '-';
    if (r[i] == '-' || r[i] == '+') ++i;
    size_t start = i;
    int exponent = 0;
    while (i < r.size() && i - start < 3 && r[i] >= '0' && r[i] <= '9') exponent = exponent * 10 + (r[i++] - '0');
    if (i > start && !(i < r.size() && r[i] >= '0' && r[i] <= '9')) {
      *mantissa *= std::pow(10.0, negative ? -exponent : exponent);
      r.remove_prefix(i);
    }
  }
  if (rest) *rest = r;
  return mantissa;
}

std::optional<uint64_t> parse_grouped_u64(std::string_view s, std::string_view* rest) {
  uint64_t v = 0;
  size_t i = 0, digits = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      if (v > (UINT64_MAX - 9) / 10) return std::nullopt;
      v = v * 10 + static_cast<uint64_t>(c - '0');
      ++digits;
    } else if (c == ',' && digits > 0 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9') {
      // thousands separator
    } else {
      break;
    }
    ++i;
  }
  if (digits == 0) return std::nullopt;
  if (rest) *rest = s.substr(i);
  return v;
}

std::string_view take_until(std::string_view s, std::string_view stops) {
  size_t p = s.find_first_of(stops);
  return p == std::string_view::npos ? s : s.substr(0, p);
}

std::string_view first_word(std::string_view s) {
  s = trim_left(s);
  size_t i = 0;
  while (i < s.size() && !is_space(s[i])) ++i;
  return s.substr(0, i);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

namespace {

// The length of the valid UTF-8 sequence that starts at s[i] (1 for ASCII),
// or 0 when the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  bool valid = len > 0 && i + len <= s.size();
  for (size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
  if (valid && len == 2 && c < 0xc2) valid = false;  // overlong
  return valid ? len : 0;
}

// A terminal acts on C0 controls, DEL and, in UTF-8, on the C1 controls
// U+0080..U+009F (U+009B is CSI, the same as ESC [).
bool is_c1(std::string_view s, size_t i, size_t len) {
  return len == 2 && static_cast<unsigned char>(s[i]) == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
}

}  // namespace

std::string printable(std::string_view s) {
  bool plain = true;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = utf8_length(s, i);
    if (len == 1) {
      out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
    } else if (len == 0 || is_c1(s, i, len)) {
      out.push_back('?');
      len = len ? len : 1;
    } else {
      out.append(s.data() + i, len);
    }
    i += len;
  }
  return out;
}

std::string quote_line(std::string_view s, size_t max_bytes) {
  s = trim(s);
  std::string out;
  out.reserve(std::min(s.size(), max_bytes) + 4);
  size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = utf8_length(s, i);
    if (len == 1) {
      out.push_back((c < 0x20 && c != '\t') || c == 0x7f ? '?' : (c == '\t' ? ' ' : static_cast<char>(c)));
      ++i;
    } else if (len == 0 || is_c1(s, i, len)) {
      out.push_back('?');
      i += len ? len : 1;
    } else if (out.size() + len <= max_bytes) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      break;  // a multi-byte character is never cut in half
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string paint(bool on, std::string_view sgr, std::string_view s) {
  if (!on) return std::string(s);
  std::string out = "\033[";
  out.append(sgr).append("m").append(s).append("\033[0m");
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower_ascii(c);
  return out;
}

std::pair<size_t, size_t> line_col(std::string_view s, size_t offset) {
  offset = std::min(offset, s.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (s[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return {line, col};
}

}  // namespace aimem::text
