// Small string_view helpers for hand-written parsers. Recognizers parse
// untrusted log lines that can be megabytes long, so nothing here uses
// std::regex (backtracking, recursion) and nothing allocates per character.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aimem::text {

inline constexpr std::string_view npos_view{};

bool is_space(char c);
std::string_view trim(std::string_view s);
std::string_view trim_left(std::string_view s);

bool starts_with(std::string_view s, std::string_view prefix);
bool istarts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

// Case-insensitive (ASCII) search; returns std::string_view::npos if absent.
size_t ifind(std::string_view hay, std::string_view needle, size_t from = 0);
bool icontains(std::string_view hay, std::string_view needle);
bool contains(std::string_view hay, std::string_view needle);
bool iequals(std::string_view a, std::string_view b);

// The text after the first occurrence of `label` (case-sensitive), or empty
// optional if the label is absent.
std::optional<std::string_view> after(std::string_view s, std::string_view label);
std::optional<std::string_view> iafter(std::string_view s, std::string_view label);

// Parse a leading unsigned / signed integer or a decimal number (no exponent
// beyond what strtod accepts); `rest` receives the unparsed remainder.
std::optional<uint64_t> parse_u64(std::string_view s, std::string_view* rest = nullptr);
std::optional<int64_t> parse_i64(std::string_view s, std::string_view* rest = nullptr);
std::optional<double> parse_double(std::string_view s, std::string_view* rest = nullptr);
// parse_double with an exponent after it, as Go's and C's %g print large
// figures (Prometheus exposition: "3.1874112e+08"): at most three exponent digits.
std::optional<double> parse_float_exp(std::string_view s, std::string_view* rest = nullptr);
// A share in (0, 1] at the start of s after blanks ("0.4", ".15"): a setting's fraction.
std::optional<double> parse_fraction(std::string_view s);

// Integer with thousands separators, "93,760" -> 93760.
std::optional<uint64_t> parse_grouped_u64(std::string_view s, std::string_view* rest = nullptr);

// The token up to the first character in `stops` (or the end).
std::string_view take_until(std::string_view s, std::string_view stops);
// The run of characters not in whitespace.
std::string_view first_word(std::string_view s);

std::vector<std::string_view> split(std::string_view s, char sep);

// Make a line safe to quote: control characters (C0, DEL, C1) and invalid UTF-8 become '?',
// and the result is cut to at most `max_bytes` bytes (with "..." appended).
std::string quote_line(std::string_view s, size_t max_bytes = 300);

// A string from outside (a process, cgroup, unit or model name, a server's
// reply, a file name) made safe for a terminal or a log line: control
// characters (C0, DEL, C1) and invalid UTF-8 become '?'; nothing is cut or
// trimmed. Apply it where such a string enters text meant for people.
std::string printable(std::string_view s);
// 1-based line and column of a byte offset in `s` (clamped to its end).
std::pair<size_t, size_t> line_col(std::string_view s, size_t offset);

// `s` in an SGR colour ("31;1": bold red) when `on`, else `s` as it is.
std::string paint(bool on, std::string_view sgr, std::string_view s);

// Lower-case ASCII copy.
std::string lower(std::string_view s);

}  // namespace aimem::text
