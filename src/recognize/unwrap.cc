// Rejoining hard-wrapped pastes (unwrap.h). Written by hand: no Debian
// library recognises a fixed-width wrap in log text.
#include "recognize/unwrap.h"

#include <algorithm>
#include <cctype>

namespace aimem {
namespace {

constexpr size_t kMinWidth = 64;    // narrower "wraps" are short lines, not a terminal's width
constexpr size_t kOpening = 12;     // two lines opening alike are two records of one program
constexpr size_t kMaxLines = 100000;

// Columns, not bytes: a terminal wraps at a column; UTF-8 continuation bytes take none.
size_t columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool digit(std::string_view s, size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

bool digits(std::string_view s, size_t from, size_t count) {
  for (size_t i = from; i < from + count; ++i)
    if (!digit(s, i)) return false;
  return true;
}

// A timestamp at the start: 2026-03-01, 2026/03/01, 03-01 19:52, 19:52:10, glog's I0301.
bool opens_with_time(std::string_view s) {
  if (digits(s, 0, 4) && s.size() > 6 && (s[4] == '-' || s[4] == '/' || s[4] == '.') && digits(s, 5, 2)) return true;
  if (digits(s, 0, 2) && s.size() > 5 && (s[2] == '-' || s[2] == '/') && digits(s, 3, 2) && (s[5] == ' ' || s[5] == 'T'))
    return true;
  size_t h = digits(s, 0, 2) ? 2 : digits(s, 0, 1) ? 1 : 0;
  if (h && s.size() > h + 2 && s[h] == ':' && digits(s, h + 1, 2)) return true;
  if (s.size() > 5 && std::string_view("IWEF").find(s[0]) != std::string_view::npos && digits(s, 1, 4) && s[5] == ' ') return true;
  static constexpr std::string_view kMonths[] = {"Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ",
                                                 "Jul ", "Aug ", "Sep ", "Oct ", "Nov ", "Dec "};
  for (std::string_view m : kMonths)
    if (s.substr(0, 4) == m && (digit(s, 4) || (s.size() > 5 && s[4] == ' ' && digit(s, 5)))) return true;
  return false;
}

bool opens_with_level(std::string_view s) {
  static constexpr std::string_view kLevels[] = {"INFO", "WARN", "WARNING", "ERROR", "DEBUG", "TRACE", "FATAL", "CRITICAL", "NOTICE"};
  for (std::string_view l : kLevels) {
    if (s.size() <= l.size() || s.substr(0, l.size()) != l) continue;
    char c = s[l.size()];
    if (c == ' ' || c == ':' || c == ']' || c == '|' || c == '\t') return true;
  }
  return false;
}

// Box drawing (U+2500-U+257F: rich's traceback panels, tables in a
// terminal UI) opens a framed row.
bool box_drawing(std::string_view s) { return s.size() >= 3 && s[0] == '\xE2' && (s[1] == '\x94' || s[1] == '\x95'); }

// The next line starts a record of its own, so the line before it was not cut.
bool starts_record(std::string_view next, std::string_view logical_start) {
  if (next.empty()) return true;
  if (next[0] == '\t' || next.substr(0, 2) == "  ") return true;  // indentation: a frame, a field
  if (next[0] == '[' || next[0] == '<' || next[0] == '{' || next[0] == '|' || next[0] == '+' || box_drawing(next)) return true;
  if (opens_with_time(next) || opens_with_level(next)) return true;
  if (next.size() < kOpening || logical_start.size() < kOpening) return false;
  // The same opening, its digits aside: the next of a run of numbered rows
  // (ps's " 118483 2605384 ...", " 118484 2604660 ...") is a record of its own.
  for (size_t i = 0; i < kOpening; ++i) {
    const bool a = digit(next, i), b = digit(logical_start, i);
    if (a != b || (!a && next[i] != logical_start[i])) return false;
  }
  return true;
}

// A shell's own report of how its child ended ("Killed", "Aborted (core
// dumped)", "Segmentation fault"): a line of its own, never the rest of a
// wrapped one.
bool shell_report(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  for (std::string_view w : {"Killed", "Aborted", "Terminated", "Segmentation fault", "Bus error"})
    if (s.substr(0, w.size()) == w && (s.size() == w.size() || s.substr(w.size()) == " (core dumped)" || s[w.size()] == ':'))
      return true;
  return false;
}

// A framed row ("| 0  NVIDIA H100 ... |", "+----+") or column padding (two
// runs of three spaces or more) makes a table row.
bool table_row(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '|' || s.front() == '+') && (s.back() == '|' || s.back() == '+')) return true;
  if (box_drawing(s)) return true;
  int runs = 0;
  for (size_t at = s.find("   "); at != std::string_view::npos; at = s.find("   ", at)) {
    ++runs;
    at = s.find_first_not_of(' ', at);
    if (at == std::string_view::npos) break;
  }
  return runs >= 2;
}

// A kernel ring buffer stamp opens the line: "[ 4410.117230] ".
bool opens_with_dmesg_stamp(std::string_view s) {
  if (s.empty() || s[0] != '[') return false;
  size_t i = s.find_first_not_of(' ', 1);
  if (i == std::string_view::npos || !digit(s, i)) return false;
  while (digit(s, i)) ++i;
  if (i >= s.size() || s[i] != '.' || !digit(s, i + 1)) return false;
  ++i;
  while (digit(s, i)) ++i;
  return i < s.size() && s[i] == ']';
}

// A shell prompt opens the line: "$ docker inspect ...", "# dmesg ...".
bool prompt_line(std::string_view s) {
  size_t i = s.find_first_not_of(' ');
  return i != std::string_view::npos && s.size() > i + 2 && (s[i] == '$' || s[i] == '#') && s[i + 1] == ' ';
}

// Python's rich logging handler (RichHandler) prints a record in columns: a
// time (blank when it repeats), the level, the message, and its source flush
// right. A message longer than its column wraps onto lines indented to the
// message's column, the right column blank:
//   ERROR    2024-11-28 13:24:44,248 app ERROR: CUDA     batch_handler.py:574
//            out of memory. Tried to allocate 2.75 GiB. GPU 0
//   [11/28/24 13:24:44] INFO     Loading weights ...            loader.py:88
// The column where the message starts, on a record that has the source
// column ("name.py:574" after two spaces or more); nothing otherwise.
std::optional<size_t> rich_message_column(std::string_view s) {
  static constexpr std::string_view kLevels[] = {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"};
  // The source column: "name.ext:digits" after a run of two spaces or more.
  std::string_view t = s;
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  size_t sp = t.rfind(' ');
  if (sp == std::string_view::npos || sp < 2 || t[sp - 1] != ' ') return std::nullopt;
  std::string_view src = t.substr(sp + 1);
  size_t colon = src.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= src.size() || src.substr(0, colon).find('.') == std::string_view::npos) return std::nullopt;
  for (size_t i = colon + 1; i < src.size(); ++i)
    if (!digit(src, i)) return std::nullopt;
  // The level: at the start, after a blank time column, or after a time.
  size_t at = s.find_first_not_of(' ');
  if (at == std::string_view::npos) return std::nullopt;
  if (s[at] == '[' || opens_with_time(s.substr(at))) {
    size_t close = s[at] == '[' ? s.find("] ", at) : std::string_view::npos;
    if (close == std::string_view::npos) {
      // "2025-04-12 21:03:11 INFO": the time is two words.
      close = s.find(' ', at);
      if (close != std::string_view::npos && digit(s, close + 1)) close = s.find(' ', close + 1);
      if (close == std::string_view::npos) return std::nullopt;
      --close;
    }
    at = s.find_first_not_of(' ', close + 2);
    if (at == std::string_view::npos) return std::nullopt;
  }
  for (std::string_view l : kLevels) {
    if (s.substr(at, l.size()) != l || at + l.size() >= s.size() || s[at + l.size()] != ' ') continue;
    size_t msg = s.find_first_not_of(' ', at + l.size());
    if (msg == std::string_view::npos || msg >= sp) return std::nullopt;
    return msg;
  }
  return std::nullopt;
}

// A rich record's message wrapped onto the lines below it (rich_message_column):
// each such line is indented by exactly the message's column. Joined with a
// space (rich breaks at spaces), the source column dropped.
std::optional<Unwrapped> unwrap_rich_columns(const std::vector<std::string_view>& lines) {
  Unwrapped u;
  u.input_lines = lines.size();
  for (size_t i = 0; i < lines.size();) {
    if (!u.text.empty()) u.text += '\n';
    u.first_line.push_back(i + 1);
    auto col = rich_message_column(lines[i]);
    if (!col) {
      u.text += lines[i++];
      continue;
    }
    std::string_view head = lines[i];
    while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
    head = head.substr(0, head.rfind(' '));  // the source column off
    while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
    u.text += head;
    for (++i; i < lines.size(); ++i) {
      std::string_view n = lines[i];
      if (n.size() <= *col || n.find_first_not_of(' ') != *col || rich_message_column(n)) break;
      n = n.substr(*col);
      while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
      u.text += ' ';
      u.text += n;
      ++u.joins;
    }
  }
  if (u.joins == 0) return std::nullopt;
  return u;
}

}  // namespace

std::optional<Unwrapped> unwrap_hard_wrapped(std::string_view input) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < input.size() && lines.size() < kMaxLines;) {
    size_t nl = input.find('\n', pos);
    std::string_view l = input.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (lines.size() < 2 || lines.size() >= kMaxLines) return std::nullopt;
  if (auto rich = unwrap_rich_columns(lines)) {
    if (!input.empty() && input.back() == '\n') rich->text += '\n';
    return rich;
  }

  std::vector<size_t> cols(lines.size());
  size_t width = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    cols[i] = columns(lines[i]);
    width = std::max(width, cols[i]);
  }
  size_t at_width = static_cast<size_t>(std::count(cols.begin(), cols.end(), width));
  // One line at the widest is a wrap only at a terminal's usual width.
  const bool usual = width == 80 || width == 100 || width == 120 || width == 132 || width == 160;
  if (width < kMinWidth || (at_width < 2 && !usual)) return std::nullopt;

  Unwrapped u;
  u.input_lines = lines.size();
  u.text.reserve(input.size());
  std::string_view logical_start;
  bool continuing = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!continuing) {
      if (!u.text.empty()) u.text += '\n';
      u.first_line.push_back(i + 1);
      logical_start = lines[i];
    }
    u.text += lines[i];
    // A command that alone reaches the widest length, exactly a terminal's
    // width, is as likely a command of that length with its output below it
    // ("$ docker inspect -f '...' web" then "exited OOMKilled=true ..."):
    // where no other line shows the wrap, a command line is not cut.
    // A row with column padding is a table's, unless it opens a timed record
    // (the kernel's task table in a syslog or dmesg paste: each row a record).
    // A cut inside its padding leaves the rest indented: still the same row.
    const bool record = opens_with_time(lines[i]) || opens_with_dmesg_stamp(lines[i]);
    const bool cut_in_padding = record && i + 1 < lines.size() && !lines[i].empty() && lines[i].back() == ' ' &&
                                !lines[i + 1].empty() && lines[i + 1][0] == ' ';
    continuing = cols[i] == width && i + 1 < lines.size() && (record || !table_row(lines[i])) && !shell_report(lines[i + 1]) &&
                 (cut_in_padding || !starts_record(lines[i + 1], logical_start)) && (at_width >= 2 || !prompt_line(lines[i]));
    u.joins += continuing;
  }
  if (!input.empty() && input.back() == '\n') u.text += '\n';
  // One join at an unusual width is as likely a record that happens to be the
  // longest, followed by a bare line ("... queueDepth=199" then "Killed").
  if (u.joins == 0 || (u.joins < 2 && !usual)) return std::nullopt;
  return u;
}

}  // namespace aimem
