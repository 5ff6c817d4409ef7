// Stripping a collector's or a forum's framing from pasted evidence
// (deframe.h). Written by hand: no Debian library knows these log framings
// as a set; the JSON records are parsed with nlohmann/json (core/doc_reader.h)
// and the times with core/time.
#include "recognize/deframe.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "core/doc_reader.h"
#include "core/time.h"
#include "core/units.h"

namespace aimem {
namespace {

constexpr size_t kMaxLines = 100000;
constexpr int kRounds = 3;  // nested framings: a quote around a stamp around the line

bool digit(std::string_view s, size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

bool digits(std::string_view s, size_t from, size_t count) {
  for (size_t i = from; i < from + count; ++i)
    if (!digit(s, i)) return false;
  return true;
}

// ESC [ params intermediates final (CSI), ESC ] ... BEL or ESC \ (OSC), and
// any other two-byte ESC sequence.
std::string strip_ansi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\x1b') {
      out.push_back(s[i++]);
      continue;
    }
    if (i + 1 >= s.size()) break;
    char k = s[i + 1];
    i += 2;
    if (k == '[') {
      while (i < s.size() && static_cast<unsigned char>(s[i]) >= 0x20 && static_cast<unsigned char>(s[i]) <= 0x3F) ++i;
      if (i < s.size() && static_cast<unsigned char>(s[i]) >= 0x40 && static_cast<unsigned char>(s[i]) <= 0x7E) ++i;
    } else if (k == ']') {
      while (i < s.size() && s[i] != '\a' && !(s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\')) ++i;
      i += i < s.size() && s[i] == '\a' ? 1 : 2;
    }
  }
  return out;
}

// Characters a browser, a chat client or an editor put where the program
// printed ASCII: no-break and other Unicode spaces, typographic quotes,
// dashes and the minus sign, zero-width marks and a byte-order mark; and
// HTML's entities where a page's source was copied ("&lt;module&gt;",
// "&#39;"). Written by hand: the set is a dozen fixed sequences (iconv's
// transliteration depends on the locale and keeps U+00A0 a space only in
// some); each becomes the ASCII the program wrote, never longer.
struct Plain {
  std::string_view from;
  std::string_view to;
};
constexpr Plain kTypography[] = {
    {"\xc2\xa0", " "},     {"\xe2\x80\x80", " "},  {"\xe2\x80\x81", " "},  {"\xe2\x80\x82", " "},  {"\xe2\x80\x83", " "},
    {"\xe2\x80\x84", " "}, {"\xe2\x80\x85", " "},  {"\xe2\x80\x86", " "},  {"\xe2\x80\x87", " "},  {"\xe2\x80\x88", " "},
    {"\xe2\x80\x89", " "}, {"\xe2\x80\x8a", " "},  {"\xe2\x80\xaf", " "},  {"\xe2\x81\x9f", " "},  {"\xe3\x80\x80", " "},
    {"\xe2\x80\x8b", ""},  {"\xe2\x80\x8c", ""},   {"\xe2\x80\x8d", ""},   {"\xe2\x81\xa0", ""},   {"\xef\xbb\xbf", ""},
    {"\xe2\x80\x90", "-"}, {"\xe2\x80\x91", "-"},  {"\xe2\x80\x92", "-"},  {"\xe2\x80\x93", "-"},  {"\xe2\x80\x94", "-"},
    {"\xe2\x80\x95", "-"}, {"\xe2\x88\x92", "-"},  {"\xe2\x80\x98", "'"},  {"\xe2\x80\x99", "'"},  {"\xe2\x80\x9a", "'"},
    {"\xe2\x80\x9b", "'"}, {"\xe2\x80\x9c", "\""}, {"\xe2\x80\x9d", "\""}, {"\xe2\x80\x9e", "\""}, {"\xe2\x80\x9f", "\""},
};
// Decoded only where the paste carries the entities a page's source writes
// for the characters a log line holds (`&lt;`, `&gt;`, `&quot;`, `&#39;`): a
// log's own "&amp;" in a URL alone is not a page's source.
constexpr Plain kEntities[] = {{"&lt;", "<"},   {"&gt;", ">"},    {"&quot;", "\""}, {"&#39;", "'"},  {"&#x27;", "'"},
                               {"&apos;", "'"}, {"&nbsp;", " "},  {"&#34;", "\""},  {"&#x22;", "\""}, {"&amp;", "&"}};

bool has_entities(std::string_view s) {
  for (std::string_view e : {"&lt;", "&gt;", "&quot;", "&#39;", "&#x27;"})
    if (s.find(e) != std::string_view::npos) return true;
  return false;
}

bool has_typography(std::string_view s) {
  for (unsigned char c : s)
    if (c == 0xc2 || c == 0xe2 || c == 0xe3 || c == 0xef) {
      for (const Plain& p : kTypography)
        if (s.find(p.from) != std::string_view::npos) return true;
      return false;
    }
  return false;
}

// `s` with each sequence of kTypography (and of kEntities when `entities`)
// in its ASCII: never longer than `s`.
std::string plain(std::string_view s, bool entities) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const Plain* hit = nullptr;
    if (c == 0xc2 || c == 0xe2 || c == 0xe3 || c == 0xef) {
      for (const Plain& p : kTypography)
        if (s.compare(i, p.from.size(), p.from) == 0) hit = &p;
    } else if (c == '&' && entities) {
      for (const Plain& p : kEntities)
        if (s.compare(i, p.from.size(), p.from) == 0) hit = &p;
    }
    if (!hit) {
      out.push_back(s[i++]);
      continue;
    }
    out += hit->to;
    i += hit->from.size();
  }
  return out;
}

// A line that holds a whole paste with its line breaks escaped: a JSON
// string or a Python repr printed on one line (an API's {"detail": "Traceback
// (most recent call last):\n  File ...\nRuntimeError: CUDA out of memory.
// ..."}, a task result's repr of an exception). Three escaped breaks or more
// make it such a line; a Windows path's "C:\new\node_modules" or
// "D:\nltk_data" (a name after the "\n" that another backslash ends, or a
// drive's colon before it) does not: in an escaped string a path's
// backslashes are doubled. Its pieces become lines, each numbered as it,
// with \t \" \' \\ unescaped.
constexpr size_t kEscapedBreaks = 3;

// Whether the "\n" at `i` is a raw Windows path's separator (not an escaped
// break): in a word that opens with a drive, or before a lower-case name that
// another backslash ends ("src\nodes\x").
bool path_separator(std::string_view l, size_t i) {
  // Any "\n" inside a word that opens with a drive ("C:\tmp\nightly\n1").
  size_t b = i;
  while (b > 0 && i - b < 260 && !std::isspace(static_cast<unsigned char>(l[b - 1])) && l[b - 1] != '"' && l[b - 1] != '\'' &&
         l[b - 1] != '(' && l[b - 1] != '=')
    --b;
  if (i - b >= 2 && std::isalpha(static_cast<unsigned char>(l[b])) && l[b + 1] == ':') return true;
  if (i + 2 >= l.size() || l[i + 2] < 'a' || l[i + 2] > 'z') return false;
  size_t j = i + 2;
  while (j < l.size() && (std::isalnum(static_cast<unsigned char>(l[j])) || l[j] == '_' || l[j] == '-' || l[j] == '.')) ++j;
  return j < l.size() && l[j] == '\\' && !(j + 1 < l.size() && l[j + 1] == 'n');
}

size_t escaped_breaks(std::string_view l) {
  size_t n = 0;
  for (size_t i = 0; i + 1 < l.size(); ++i) {
    if (l[i] != '\\') continue;
    if (l[i + 1] == 'n' && !path_separator(l, i)) ++n;
    ++i;  // the escaped character, whatever it is ("\\n" is a backslash and an n)
  }
  return n;
}

// `l` cut at its escaped breaks, each piece unescaped; never longer than `l`.
std::vector<std::string> split_escaped(std::string_view l) {
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] != '\\' || i + 1 == l.size()) {
      pieces.back().push_back(l[i]);
      continue;
    }
    const char e = l[++i];
    if (e == 'n') pieces.emplace_back();
    else if (e == 't') pieces.back().push_back('\t');
    else if (e == 'r') continue;
    else if (e == '"' || e == '\'' || e == '\\') pieces.back().push_back(e);
    else pieces.back().append({'\\', e});
  }
  return pieces;
}

// RFC 3339 as a collector stamps each line it keeps ("2024-05-01T12:00:00.123456789Z",
// "...+02:00", "...+0200"): its length, or 0. `min_fraction` digits of a
// second at least: Docker and the kubelet write nine (CRI lines), GitHub
// Actions seven, CloudWatch, Cloud Logging and Loki's exports three or none.
// A zone is required: a program's own stamp ("2024-05-01T12:00:00,123",
// "2024-05-01 12:00:00") is left to the program's recognizer.
size_t rfc3339_stamp(std::string_view s, size_t min_fraction) {
  if (!(digits(s, 0, 4) && s.size() > 20 && s[4] == '-' && digits(s, 5, 2) && s[7] == '-' && digits(s, 8, 2) && s[10] == 'T' &&
        digits(s, 11, 2) && s[13] == ':' && digits(s, 14, 2) && s[16] == ':' && digits(s, 17, 2)))
    return 0;
  size_t i = 19;
  if (s[i] == '.') {
    while (digit(s, i + 1)) ++i;
    if (i == 19) return 0;
    ++i;
  }
  if ((i == 19 ? 0 : i - 20) < min_fraction) return 0;
  if (i < s.size() && s[i] == 'Z') return i + 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-') && digits(s, i + 1, 2)) {
    if (i + 3 < s.size() && s[i + 3] == ':' && digits(s, i + 4, 2)) return i + 6;
    if (digits(s, i + 3, 2)) return i + 5;
  }
  return 0;
}

std::optional<int64_t> stamp_time(std::string_view stamp, int64_t reference_us) {
  return timeutil::parse_line_time(stamp, reference_us).unix_us;
}

// The English month whose abbreviation opens `s` and a space after it ("Mar ",
// as syslog and Kibana write it): 1..12, or 0.
int opening_month(std::string_view s) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (s.size() < 4 || s[3] != ' ') return 0;
  const size_t at = kMonths.find(s.substr(0, 3));
  return at != std::string_view::npos && at % 3 == 0 ? static_cast<int>(at / 3) + 1 : 0;
}
bool opens_with_month(std::string_view s) { return opening_month(s) != 0; }

// A date and a clock at the start, "2025-03-04 10:00:01" or with a 'T'
// (CloudWatch's, Grafana's and Datadog's consoles write either).
bool opens_with_date_time(std::string_view s) {
  return s.size() >= 19 && digits(s, 0, 4) && s[4] == '-' && digits(s, 5, 2) && s[7] == '-' && digits(s, 8, 2) &&
         (s[10] == ' ' || s[10] == 'T') && digits(s, 11, 2) && s[13] == ':' && digits(s, 14, 2) && s[16] == ':' && digits(s, 17, 2);
}

// A syslog or `journalctl` short prefix ("Dec  4 12:00:01 gpu-1 python3[4242]: ",
// short-precise's "Dec 04 12:00:01.123456 gpu-1 python3[4242]: "),
// or rsyslog's with an RFC 3339 stamp (its high-precision template, the
// default of Debian 13 and Ubuntu 24.04: "2025-03-04T10:00:01.123456+00:00
// gpu-1 python3[4242]: "; `journalctl -o short-iso`'s "2025-03-04T10:00:01+0000"):
// its length and the ident's, or 0. The kernel's, systemd's and the
// userspace OOM killers' own lines keep theirs: their recognizers read the
// ident ("kernel:", "systemd-oomd[..]:").
size_t syslog_prefix(std::string_view s) {
  size_t i = rfc3339_stamp(s, 0);
  if (!i) {
    if (s.size() < 20 || !opens_with_month(s)) return 0;
    i = 4;
    if (s[i] == ' ') ++i;
    while (digit(s, i)) ++i;
    if (!(i < s.size() && s[i] == ' ' && digits(s, i + 1, 2) && s[i + 3] == ':' && digits(s, i + 4, 2) && s[i + 6] == ':' &&
          digits(s, i + 7, 2)))
      return 0;
    i += 9;
    // `journalctl -o short-precise`: microseconds after the seconds.
    if (i + 1 < s.size() && s[i] == '.' && digit(s, i + 1)) {
      ++i;
      while (digit(s, i)) ++i;
    }
  }
  if (i >= s.size() || s[i] != ' ') return 0;
  size_t host = i + 1, sp = s.find(' ', host);
  if (sp == std::string_view::npos || sp == host) return 0;
  // A host name is no program's level or bracket ("2025-...Z WARN vllm.engine: ...",
  // "2025-...Z [main] app: ..." are a program's own line after its stamp).
  const std::string_view host_name = s.substr(host, sp - host);
  if (host_name.front() == '[' || host_name.back() == ':' ||
      std::all_of(host_name.begin(), host_name.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); }) ||
      host_name == "info" || host_name == "warn" || host_name == "error" || host_name == "debug")
    return 0;
  size_t colon = s.find(": ", sp + 1);
  if (colon == std::string_view::npos) return 0;
  std::string_view ident = s.substr(sp + 1, colon - sp - 1);
  if (ident.empty() || ident.find(' ') != std::string_view::npos) return 0;
  if (size_t b = ident.find('['); b != std::string_view::npos) ident = ident.substr(0, b);
  if (ident == "kernel" || ident.substr(0, 7) == "systemd" || ident.find("oom") != std::string_view::npos) return 0;
  // Heroku's own router and dynos ("heroku/router", "heroku/web.1") are read by
  // their recognizer; an app's process through Papertrail ("app/worker.1") is the app's.
  if (ident.substr(0, 7) == "heroku/") return 0;
  return colon + 2;
}

// A logger's prefix before the line a supervisor or a task runner re-logs
// from its child: Python logging's documented "%(asctime)s - %(name)s -
// %(levelname)s - %(message)s" ("2025-03-04 10:00:01,123 - worker - INFO - "),
// Airflow's task log ("[2025-03-04, 10:00:01 UTC] {subprocess.py:93} INFO - ",
// "[2025-03-04T10:00:01.123+0000] {subprocess.py:93} INFO - "), Celery's
// "[2025-03-04 10:00:01,123: WARNING/ForkPoolWorker-3] ". A clock in
// the first bytes, then a level word between a space and " - " within 160
// bytes: the prefix's length, or 0. A program's own line with its level
// before its time ("INFO 05-01 12:00:01 llm_engine.py:1]") is none.
size_t logger_prefix(std::string_view s) {
  size_t clock = std::string_view::npos;
  for (size_t i = 0; i + 5 <= s.size() && i < 48; ++i)
    if (digits(s, i, 2) && s[i + 2] == ':' && digits(s, i + 3, 2)) {
      clock = i + 5;
      break;
    }
  if (clock == std::string_view::npos) return 0;
  const std::string_view head = s.substr(0, std::min<size_t>(s.size(), 160));
  // Celery's worker log, where a task's prints go as warnings: "[2025-03-04
  // 10:00:01,123: WARNING/ForkPoolWorker-3] " (its worker_task_log_format).
  if (s[0] == '[')
    for (std::string_view level : {": INFO/", ": WARNING/", ": ERROR/", ": DEBUG/", ": CRITICAL/"})
      if (size_t at = head.find(level, clock); at != std::string_view::npos && at < clock + 12)
        if (size_t close = head.find("] ", at); close != std::string_view::npos) return close + 2;
  size_t best = 0;
  for (std::string_view level : {" INFO - ", " WARNING - ", " WARN - ", " ERROR - ", " DEBUG - ", " CRITICAL - ", " FATAL - "}) {
    const size_t at = head.find(level, clock);
    if (at != std::string_view::npos && (!best || at + level.size() < best)) best = at + level.size();
  }
  return best;  // an empty message ("... INFO - ") is the child's empty line
}

struct Cut {
  std::string rest;  // may hold several lines (a record's stack trace)
  std::optional<int64_t> time;
};

// A launcher's tag for the worker a line came from, each worker its own:
// PyTorch's "[rank0]: " (torchrun, 2.4 and later, before each line of a
// rank's traceback), torchrun --tee's "[default0]:", Open MPI
// --tag-output's "[1,0]<stderr>:", Ray's "(RayWorkerWrapper pid=2957,
// ip=10.0.0.5) " and "(pid=2957) " before a task's or an actor's output. Its
// length with the one space its launcher writes after it (torchrun --tee and
// Open MPI write none), or 0. Ray's own "(raylet)" lines are its recognizer's.
size_t worker_tag(std::string_view s) {
  if (s.size() < 5) return 0;
  size_t i = 0;
  auto space = [&](size_t n) { return n < s.size() && s[n] == ' ' ? n + 1 : n; };
  if (s[0] == '[') {
    for (std::string_view w : {std::string_view("rank"), std::string_view("default")}) {
      if (s.substr(1, w.size()) != w) continue;
      i = 1 + w.size();
      const size_t d = i;
      while (digit(s, i)) ++i;
      if (i == d || i - d > 6 || s.substr(i, 2) != "]:") return 0;
      return w == "rank" ? space(i + 2) : i + 2;
    }
    i = 1;
    while (digit(s, i)) ++i;
    if (i == 1 || i >= s.size() || s[i] != ',') return 0;
    const size_t d = ++i;
    while (digit(s, i)) ++i;
    if (i == d) return 0;
    for (std::string_view stream : {std::string_view("]<stdout>:"), std::string_view("]<stderr>:")})
      if (s.substr(i, stream.size()) == stream) return i + stream.size();
    return 0;
  }
  if (s[0] != '(') return 0;
  const size_t close = s.find(')');
  if (close == std::string_view::npos || close > 120 || close + 1 >= s.size() || s[close + 1] != ' ') return 0;
  std::string_view in = s.substr(1, close - 1);
  size_t at = in.starts_with("pid=") ? 0 : in.find(" pid=");
  if (at == std::string_view::npos) return 0;
  if (at > 0)
    for (char c : in.substr(0, at))
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return 0;
  at += at > 0 ? 5 : 4;
  const size_t d = at;
  while (digit(in, at)) ++at;
  if (at == d || (at < in.size() && in.substr(at, 5) != ", ip=")) return 0;
  return close + 2;
}

// In the order a tie is settled: the more particular framing first (a CRI
// line's or an rsyslog line's stamp is an RFC 3339 stamp too).
enum Framing : size_t {
  kJsonRecord, kCri, kSyslog, kLoggerPrefix, kConsoleFields, kStamp, kPodPrefix, kQuote, kCompose, kBracketStamp, kClock, kGrepFile, kLineNumber, kWorkerTag,
  kKibana, kExportStamp, kFramings
};
constexpr std::array<std::string_view, kFramings> kNames = {"JSON log records", "CRI log lines",    "syslog prefixes",
                                                            "a logger's prefixes", "a log console's fields",
                                                            "RFC 3339 timestamps", "kubectl --prefix", "Markdown quotes",
                                                            "docker compose service prefixes", "bracketed timestamps",
                                                            "clock times", "grep's file names", "line numbers",
                                                            "a launcher's worker tags", "Kibana's table stamps",
                                                            "a log console's export stamps"};

// grep's file name before each line (-H, -r: "/var/log/app/server.log:...",
// "logs/train.txt-..." on a context line): a path with a slash or a log's
// extension, no spaces; its length with the separator, or 0.
size_t grep_file(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && i < 256 && s[i] != ':' && s[i] != ' ' && s[i] != '\t') ++i;
  if (i < 2 || i >= s.size() || s[i] != ':') return 0;
  std::string_view path = s.substr(0, i);
  const bool looks = path.find('/') != std::string_view::npos || path.ends_with(".log") || path.ends_with(".txt") ||
                     path.ends_with(".out") || path.ends_with(".err");
  if (!looks || path.find("://") != std::string_view::npos || (s.size() > i + 1 && s[i + 1] == '/')) return 0;
  return i + 1;
}

// A line number before each line: grep -n's "123:" (and "124-" on a context
// line), cat -n's right-aligned number and tab, a viewer's gutter ("  12 | ",
// bat's "  12 │ "): its length, or 0. Not a
// clock ("10:00:01"), which the clock framing reads.
size_t line_number(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  const size_t start = i;
  while (i < s.size() && digit(s, i)) ++i;
  if (i == start || i - start > 7 || i >= s.size()) return 0;
  if (s[i] == '\t') return i == 6 ? i + 1 : 0;  // cat -n: "%6d\t" (a table's "31877\t6.12" is not)
  // A viewer's gutter: bat's "   1 │ " and the "  12 | " of an editor's or a
  // code view's copy: the number right-aligned, a bar, the line.
  if (s[i] == ' ' && start > 0) {
    if (s.substr(i, 3) == " | ") return i + 3;
    if (s.substr(i, 5) == " \xe2\x94\x82 ") return i + 5;  // U+2502
    if (s.substr(i + 1) == "|" || s.substr(i + 1) == "\xe2\x94\x82") return s.size();  // an empty line
    return 0;
  }
  if (start != 0 || (s[i] != ':' && s[i] != '-')) return 0;
  if (s[i] == ':' && digits(s, i + 1, 2) && !digit(s, i + 3)) return 0;  // a clock, "10:02" or "10:02:41"
  if (s[i] == '-' && digit(s, i + 1)) return 0;                                            // a date, "2015-06-18"
  return i + 1;
}

// A clock time at the start: "10:00:01", "10:00:01.234" (Jenkins'
// Timestamper by default, moreutils' ts "%H:%M:%S", an elapsed time in the
// same shape): its length, or 0.
size_t clock_time(std::string_view s) {
  if (!(s.size() > 8 && digits(s, 0, 2) && s[2] == ':' && digits(s, 3, 2) && s[5] == ':' && digits(s, 6, 2))) return 0;
  size_t i = 8;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    size_t j = i + 1;
    while (digit(s, j)) ++j;
    if (j == i + 1) return 0;
    i = j;
  }
  return i;
}

// Figures and their units only ("18.4 GiB", "6384112 kB  3.5", "72%"): a
// sampler's row after its clock.
bool figures_only(std::string_view s) {
  static constexpr std::string_view kUnitLetters = "KMGTPkmgtpiBb";
  bool figure = false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) figure = true;
    else if (std::isalpha(static_cast<unsigned char>(c)) && kUnitLetters.find(c) == std::string_view::npos) return false;
    else if (!std::isalpha(static_cast<unsigned char>(c)) && std::string_view(" \t.,%/").find(c) == std::string_view::npos) return false;
  }
  return figure;
}

// A collector's stamp in brackets (Jenkins' Timestamper in its ISO form,
// "[2025-03-04T10:00:00.123Z] ", or its clock, "[10:00:01] "): the length of
// the bracket and the space after it, or 0; `iso` says which. A kernel's
// "[ 4410.117230]" and rich's "[11/28/24 13:24:44]" are neither.
size_t bracketed_stamp(std::string_view s, bool* iso = nullptr) {
  if (s.size() < 4 || s[0] != '[') return 0;
  std::string_view in = s.substr(1);
  size_t n = rfc3339_stamp(in, 0);
  if (iso) *iso = n != 0;
  if (!n) n = clock_time(in);
  if (!n || n + 2 >= s.size() || in[n] != ']' || s[n + 2] != ' ') return 0;
  return n + 3;
}

// A log console's export, its stamp without a zone and a tab before the
// message: CloudWatch Logs Insights' @timestamp column ("2025-03-04
// 10:00:01.123\t..."), Grafana's and Loki's downloads. A program's own stamp
// has a space or its level after it, not a tab. Milliseconds at least; the
// stamp's length with the tab, or 0.
size_t export_stamp(std::string_view s) {
  if (s.size() <= 24 || !opens_with_date_time(s) || s[19] != '.') return 0;
  size_t i = 20;
  while (digit(s, i)) ++i;
  if (i < 23 || i >= s.size() || s[i] != '\t') return 0;
  return i + 1;
}

// A log console's stamp and the fields it shows before the message, copied
// from its list or printed by its command line: Grafana Loki's logcli
// ("2025-03-04T10:00:01Z {app=\"vllm\", pod=\"vllm-7d9c\"} "), `aws logs tail`
// ("2025-03-04T10:00:01.123000+00:00 ecs/worker/5f2c9a1e "), Datadog's and
// similar exports ("2025-03-04 10:00:01 UTC | gpu-3 | vllm | "). A date and
// a clock, then a label set in braces, a stream's path (two slashes or more), fields
// between " | ": the length, or 0. (Google Cloud's Logs Explorer, "<stamp>
// UTC  " then the message, is not read: a table whose first column is such a
// stamp, padded, looks the same, and its rows are read whole.) The stamp's
// own length goes in `stamp`.
bool level_word(std::string_view w);

size_t console_fields(std::string_view s, size_t* stamp = nullptr) {
  if (s.size() <= 22 || !opens_with_date_time(s)) return 0;
  size_t i = 19;
  if (s[i] == '.' || s[i] == ',') {
    while (digit(s, i + 1)) ++i;
    ++i;
  }
  bool zone = false;
  if (i < s.size() && s[i] == 'Z') ++i, zone = true;
  else if (i + 5 < s.size() && (s[i] == '+' || s[i] == '-') && digits(s, i + 1, 2)) {
    i += s[i + 3] == ':' && digits(s, i + 4, 2) ? 6 : digits(s, i + 3, 2) ? 5 : 0;
    zone = true;
  } else if (s.substr(i, 4) == " UTC") i += 4, zone = true;
  if (stamp) *stamp = i;
  if (i + 2 >= s.size() || s[i] != ' ') return 0;
  const std::string_view rest = s.substr(i + 1);
  if (rest[0] == '{') {  // logcli's labels: "{k=\"v\", ...} "
    const size_t close = rest.find("} ");
    return close != std::string_view::npos && close < 400 && rest.find('=') < close ? i + 1 + close + 2 : 0;
  }
  if (rest.substr(0, 2) == "| ") {  // fields between " | ", each a word
    // A level first is a program's own format (loguru's "<time> | INFO     | mod:fn:12 - "), which
    // stays: its logger's name may be what says the figures are memory ("memory_usage_tracker").
    const size_t w = rest.find_first_of(" |", 2);
    if (level_word(rest.substr(2, w == std::string_view::npos ? std::string_view::npos : w - 2))) return 0;
    size_t j = i;  // at " | "
    for (int fields = 0; fields < 4; ++fields) {
      const size_t next = s.find(" | ", j + 3);
      if (next == std::string_view::npos || next - (j + 3) > 64 || s.substr(j + 3, next - j - 3).find(' ') != std::string_view::npos) break;
      j = next;
    }
    return j + 3 <= s.size() ? j + 3 : 0;
  }
  if (zone && rest[0] == '[') {  // Cloud Foundry's `cf logs`: "[APP/PROC/WEB/0] OUT ", "[App/0]   ERR "
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close > 64 || rest.substr(1, close).find('/') == std::string_view::npos) return 0;
    size_t k = close + 1;
    while (k < rest.size() && rest[k] == ' ') ++k;
    if (rest.substr(k, 4) != "OUT " && rest.substr(k, 4) != "ERR ") return 0;
    return i + 1 + k + 4;
  }
  if (zone) {  // Fly.io's `fly logs`: "app[e784079b] iad [info]" (the machine, its region, the level)
    const size_t close = rest.find("] ");
    if (close != std::string_view::npos && close < 48 && rest.substr(0, close).find('[') != std::string_view::npos &&
        rest.substr(0, close).find(' ') == std::string_view::npos) {
      size_t k = close + 2;
      const size_t region = k;
      while (k < rest.size() && std::islower(static_cast<unsigned char>(rest[k]))) ++k;
      if (k - region >= 3 && k - region <= 4 && rest.substr(k, 2) == " [") {
        const size_t end = rest.find(']', k + 2);
        if (end != std::string_view::npos && end - (k + 2) <= 8) return i + 1 + end + 1 + (end + 1 < rest.size() && rest[end + 1] == ' ');
      }
    }
  }
  if (zone) {  // a stream's path: "ecs/worker/5f2c9a1e", "/aws/lambda/fn", "2025/03/04/[$LATEST]ab12"
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos || sp < 4 || sp > 160) return 0;
    const std::string_view path = rest.substr(0, sp);
    if (std::count(path.begin(), path.end(), '/') < 2 || path.back() == ':' || path.back() == '/') return 0;
    return i + 1 + sp + 1;
  }
  return 0;
}

// Kibana's Discover, rows copied from its table: "Mar 4, 2025 @ 10:00:01.123"
// then a tab (or spaces) and the document's message. Its length with the
// separator, or 0.
size_t kibana_stamp(std::string_view s) {
  if (s.size() < 24 || !opens_with_month(s)) return 0;
  size_t i = 4;
  const size_t d = i;
  while (digit(s, i)) ++i;
  if (i == d || i - d > 2 || s.substr(i, 2) != ", " || !digits(s, i + 2, 4) || s.substr(i + 6, 3) != " @ ") return 0;
  i += 9;
  const size_t c = clock_time(s.substr(i));
  if (!c) return 0;
  i += c;
  if (i >= s.size() || (s[i] != '\t' && s[i] != ' ')) return 0;
  if (s[i] == '\t') return i + 1;  // the message's own indentation stays (a traceback's "  File")
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// The time of a Kibana stamp (kibana_stamp says it is one): "Mar 4, 2025 @ 10:00:01.123", UTC as the table shows it.
std::optional<int64_t> kibana_time(std::string_view s) {
  auto number = [&](size_t at, size_t n) {
    int v = 0;
    for (size_t k = at; k < at + n; ++k) v = v * 10 + (s[k] - '0');
    return v;
  };
  size_t i = 4;
  while (digit(s, i)) ++i;
  const int day = number(4, i - 4), year = number(i + 2, 4);
  i += 9;
  const int h = number(i, 2), mi = number(i + 3, 2), sec = number(i + 6, 2);
  int64_t us = 0, scale = 100000;
  if (size_t j = i + 8; j < s.size() && (s[j] == '.' || s[j] == ','))
    for (++j; digit(s, j) && scale; ++j, scale /= 10) us += (s[j] - '0') * scale;
  return timeutil::make_unix_us(year, opening_month(s), day, h, mi, sec, us);
}

// GitLab's job log with timestamps puts its stream after the stamp ("00O ",
// "01E ", "00O+" where a line continues): its length, or 0.
size_t gitlab_stream(std::string_view s) {
  if (s.size() < 4 || !digits(s, 0, 2) || (s[2] != 'O' && s[2] != 'E')) return 0;
  size_t i = s[3] == '+' ? 4 : 3;
  return i < s.size() && s[i] == ' ' ? i + 1 : 0;
}

// `docker compose logs` (and `docker-compose up`): the service's container
// name, padded to the widest, then "| " ("weaviate-1  | panic: ...",
// "web_1     | Killed"); an empty line of the service is "weaviate-1  |".
// `docker service logs` names the task and its node the same way
// ("ml_worker.1.x8k2p9q4m1ab@node-3    | ..."), and `pm2 logs` the process's
// id and name ("0|api      | ...").
// The length of the prefix, or 0.
size_t compose_prefix(std::string_view l) {
  size_t i = 0;
  while (i < l.size() && i < 8 && digit(l, i)) ++i;
  if (i > 0 && i < l.size() && l[i] == '|') ++i;  // pm2: "<id>|<name>"
  else i = 0;
  while (i < l.size() && i < 96 &&
         (std::isalnum(static_cast<unsigned char>(l[i])) || l[i] == '_' || l[i] == '-' || l[i] == '.' || l[i] == '@'))
    ++i;
  if (i == 0 || i == l.size() || l[i] != ' ') return 0;
  while (i < l.size() && l[i] == ' ') ++i;
  if (i == l.size() || l[i] != '|') return 0;
  if (i + 1 == l.size()) return i + 1;
  return l[i + 1] == ' ' ? i + 2 : 0;
}

// A record's time: an RFC 3339 string, or seconds (milliseconds above 1e12)
// since the epoch as a number.
std::optional<int64_t> record_time(const nlohmann::json& j, int64_t reference_us) {
  for (const char* k : {"time", "ts", "timestamp", "@timestamp"}) {
    if (!j.contains(k)) continue;
    const auto& t = j[k];
    if (t.is_string()) return stamp_time(t.get<std::string>(), reference_us);
    if (t.is_number() && t.get<double>() > 0 && t.get<double>() < 1e13) {
      double s = t.get<double>();
      if (s > 1e12) s /= 1000.0;
      return static_cast<int64_t>(s * 1e6);
    }
  }
  return std::nullopt;
}

// One JSON object per line with the program's line in a message field:
// Docker's json-file ("log"), structured loggers ("msg", "message": zap,
// logrus, pino, structlog; "fields.message": Rust's tracing), Cloud Logging ("textPayload"); a stack trace or
// an exception in its own field follows as lines of its own. A journal
// record ("MESSAGE") is read by the scanner itself.
std::optional<Cut> json_record(std::string_view l, int64_t reference_us) {
  if (l.empty() || l[0] != '{' || l.back() != '}') return std::nullopt;
  auto j = doc::parse_json_or_discarded(l);
  if (j.is_discarded() && l.find('\t') != std::string_view::npos) {
    // A logger that writes tabs raw inside its strings (strict JSON escapes
    // them; hand-rolled printf loggers and some pastes do not): read them
    // as the escape they stand for.
    std::string escaped;
    for (char ch : l) escaped += ch == '\t' ? std::string("\\t") : std::string(1, ch);
    j = doc::parse_json_or_discarded(escaped);
  }
  if (!j.is_object() || j.contains("MESSAGE")) return std::nullopt;
  Cut c;
  bool found = false;
  for (const char* k : {"log", "msg", "message", "textPayload"}) {
    if (j.contains(k) && j[k].is_string()) {
      c.rest = j[k].get<std::string>();
      found = true;
      break;
    }
  }
  // Rust's tracing JSON format (tracing-subscriber; TGI's launcher, many
  // Rust services): {"timestamp":..,"level":..,"fields":{"message":..},"target":..}.
  if (!found && j.contains("fields") && j["fields"].is_object() && j["fields"].contains("message") && j["fields"]["message"].is_string()) {
    c.rest = j["fields"]["message"].get<std::string>();
    found = true;
  }
  if (!found) return std::nullopt;
  while (!c.rest.empty() && (c.rest.back() == '\n' || c.rest.back() == '\r')) c.rest.pop_back();
  for (const char* k : {"error", "err", "exception", "exc_info", "stack", "stack_trace", "stacktrace"}) {
    if (!j.contains(k) || !j[k].is_string()) continue;
    std::string extra = j[k].get<std::string>();
    while (!extra.empty() && (extra.back() == '\n' || extra.back() == '\r')) extra.pop_back();
    if (!extra.empty()) c.rest += "\n" + extra;
  }
  // The record's own figures after its message ("rss":44302336 in a pino or
  // bunyan stats record whose "msg" is empty): a series the program logged
  // as fields, read as name=value, in the record's own order (the parsed
  // object sorts its keys). Bookkeeping numbers are left out.
  std::vector<std::pair<size_t, std::string>> fields;
  for (const auto& [k, val] : j.items()) {
    if (fields.size() >= 16) break;
    // A size written as a string ("rss":"612MB") is a figure too.
    bool size_string = false;
    if (val.is_string()) {
      const auto& str = val.get_ref<const std::string&>();
      size_string = !str.empty() && str.size() <= 24 && str[0] >= '0' && str[0] <= '9' && units::parse_log_size(str).has_value();
    }
    if (!val.is_number() && !size_string) continue;
    static constexpr std::string_view kSkip[] = {"time", "ts", "timestamp", "level", "lvl", "severity", "pid", "tid",
                                                 "v", "line", "lineno", "port", "status", "code", "hostname"};
    if (std::find(std::begin(kSkip), std::end(kSkip), std::string_view(k)) != std::end(kSkip)) continue;
    const size_t at = l.find("\"" + k + "\"");
    fields.emplace_back(at == std::string_view::npos ? l.size() : at,
                        k + "=" + (size_string ? val.get<std::string>() : val.is_number_float() ? fmt::format("{:g}", val.get<double>()) : val.dump()));
  }
  std::stable_sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string figures;
  for (const auto& f : fields) figures += " " + f.second;
  if (!figures.empty()) {
    // After a message, "; " ends it: the first figure's name is not read
    // as the message's last word and its own ("heap-monitor heapUsed").
    size_t eol = c.rest.find('\n');
    c.rest.insert(eol == std::string::npos ? c.rest.size() : eol, c.rest.empty() || eol == 0 ? figures.substr(1) : ";" + figures);
  }
  c.time = record_time(j, reference_us);
  return c;
}

std::optional<Cut> cut(Framing f, std::string_view l, int64_t reference_us) {
  switch (f) {
    case kJsonRecord:
      return json_record(l, reference_us);
    case kCri:
    case kStamp: {
      // Docker's and the kubelet's stamps (six digits and more: CRI lines
      // have no other) are a collector's whatever follows them.
      size_t n = rfc3339_stamp(l, 6);
      const bool fine = n != 0;
      if (!fine && f == kStamp) n = rfc3339_stamp(l, 0);
      if (!n || n >= l.size() || (l[n] != ' ' && (f == kCri || l[n] != '\t'))) return std::nullopt;
      // A stamp of seconds or milliseconds then figures only is a metric's row
      // (the AWS CLI's datapoints as text, "2025-05-12T08:00:00+00:00\t31.2"):
      // the series reader's, whole.
      if (!fine && figures_only(l.substr(n + 1))) return std::nullopt;
      std::string_view rest = l.substr(n + 1);
      if (f == kCri) {
        if (rest.substr(0, 7) != "stdout " && rest.substr(0, 7) != "stderr ") return std::nullopt;
        if (rest.size() < 9 || (rest[7] != 'F' && rest[7] != 'P') || rest[8] != ' ') return std::nullopt;
        rest = rest.substr(9);
      } else {
        rest = rest.substr(gitlab_stream(rest));
      }
      return Cut{std::string(rest), stamp_time(l.substr(0, n), reference_us)};
    }
    case kPodPrefix: {
      if (l.substr(0, 5) != "[pod/") return std::nullopt;
      size_t close = l.find("] ");
      if (close == std::string_view::npos || l.substr(0, close).find(' ') != std::string_view::npos) return std::nullopt;
      return Cut{std::string(l.substr(close + 2)), std::nullopt};
    }
    case kQuote:
      if (l == ">") return Cut{};
      if (l.substr(0, 2) != "> ") return std::nullopt;
      return Cut{std::string(l.substr(2)), std::nullopt};
    case kCompose: {
      size_t n = compose_prefix(l);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), std::nullopt};
    }
    case kBracketStamp: {
      bool iso = false;
      size_t n = bracketed_stamp(l, &iso);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), iso ? stamp_time(l.substr(1, n - 3), reference_us) : std::nullopt};
    }
    case kGrepFile: {
      size_t n = grep_file(l);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), std::nullopt};
    }
    case kLineNumber: {
      size_t n = line_number(l);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), std::nullopt};
    }
    case kClock: {
      // No date: the time is left to the lines' own stamps (it may be an elapsed time).
      // A figure right after the clock is a sampler's row ("09:16:02 18.4 GiB",
      // a loop of `date +%T` and ps): the row is the program's, read whole.
      size_t n = clock_time(l);
      if (!n || n + 1 >= l.size() || (l[n] != ' ' && l[n] != '\t') || figures_only(l.substr(n + 1))) return std::nullopt;
      return Cut{std::string(l.substr(n + 1)), std::nullopt};
    }
    case kExportStamp: {
      size_t n = export_stamp(l);
      // A stamp then figures only is a metric's row, the series reader's whole.
      if (!n || figures_only(l.substr(n))) return std::nullopt;
      return Cut{std::string(l.substr(n)), stamp_time(l.substr(0, n - 1), reference_us)};
    }
    case kKibana: {
      size_t n = kibana_stamp(l);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), kibana_time(l)};
    }
    case kWorkerTag: {
      size_t n = worker_tag(l);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), std::nullopt};
    }
    case kConsoleFields: {
      size_t stamp = 0, n = console_fields(l, &stamp);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), stamp_time(l.substr(0, stamp), reference_us)};
    }
    case kLoggerPrefix: {
      size_t n = logger_prefix(l);
      if (!n) return std::nullopt;
      // Airflow's "[2025-03-04, 10:00:01 UTC]" has a comma after the date.
      std::string stamp(l.substr(0, n));
      if (size_t c = stamp.find(", "); c >= 10 && c < 24 && digit(stamp, c - 1) && digit(stamp, c + 2)) stamp.erase(c, 1);
      return Cut{std::string(l.substr(n)), stamp_time(stamp, reference_us)};
    }
    case kSyslog: {
      size_t n = syslog_prefix(l);
      if (!n) return std::nullopt;
      return Cut{std::string(l.substr(n)), stamp_time(l.substr(0, n), reference_us)};
    }
    default:
      return std::nullopt;
  }
}

bool blank(std::string_view l) { return l.find_first_not_of(" \t\r") == std::string_view::npos; }

bool level_word(std::string_view w) {
  static constexpr std::string_view kLevels[] = {"INFO", "WARN", "WARNING", "ERROR", "DEBUG", "TRACE", "FATAL", "CRITICAL", "NOTICE",
                                                 "info", "warn", "warning", "error", "debug", "trace", "fatal", "I", "W", "E", "F", "D"};
  return std::find(std::begin(kLevels), std::end(kLevels), w) != std::end(kLevels);
}

// A source's name as a gatherer puts it before each line: "[worker-3]" (a
// supervisor, a runner, a task), "app[web.1]:" (Heroku, its stamp off
// first), or a bare pod name with a dash ("vllm-7d9c5b6f4-x2k8p", stern's,
// its container's name after it). Not a program's own first word: a level, a
// ring buffer's "[ 4410.1]", an ident the recognizers read ("kernel:",
// "systemd[1]:", an OOM killer's).
bool source_name(std::string_view t, bool* bare) {
  *bare = false;
  if (t.size() < 3 || t.size() > 80) return false;
  auto has_alpha = [](std::string_view v) {
    return std::any_of(v.begin(), v.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  };
  auto has_digit = [](std::string_view v) {
    return std::any_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  // An instance's tag carries its number ("[worker-3]", "[gpu-7]"); a
  // program's own logger name ("[indexer]") is its format, read with it.
  // A platform's path ("[APP/PROC/WEB/0]", "[pod/...]") is read elsewhere.
  if (t.front() == '[' && t.back() == ']') {
    std::string_view in = t.substr(1, t.size() - 2);
    return has_alpha(in) && has_digit(in) && !level_word(in) && in.find('[') == std::string_view::npos &&
           in.find('/') == std::string_view::npos;
  }
  // "app[web.1]:"; the platform's own "heroku[web.1]:" lines are its recognizer's.
  if (t.back() == ':' && t.size() > 4 && t[t.size() - 2] == ']' && t.find('[') != std::string_view::npos) {
    std::string_view ident = t.substr(0, t.find('['));
    return has_alpha(ident) && ident != "kernel" && ident != "heroku" && ident.substr(0, 7) != "systemd" &&
           ident.find("oom") == std::string_view::npos;
  }
  // pdsh's host before each line of a remote command's output (DeepSpeed's
  // multi-node launcher: "worker-1: ", "10.0.0.5: "): a host's name with a
  // digit and a dash or a dot, then a colon.
  if (t.back() == ':' && t.size() > 3) {
    std::string_view host = t.substr(0, t.size() - 1);
    return has_digit(host) && host.find_first_of("-.") != std::string_view::npos && std::isalnum(static_cast<unsigned char>(host[0])) &&
           std::all_of(host.begin(), host.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.'; });
  }
  if (t.find('-') == std::string_view::npos || !std::isalpha(static_cast<unsigned char>(t[0]))) return false;
  for (char c : t)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  *bare = true;
  return true;
}

// The prefix most lines share when a gatherer put a source's name there
// (source_name; a bare pod name only with the same second word after it, as
// stern prints "<pod> <container> "): at least 3 in 5 of the non-blank
// lines, and three lines, begin with it; empty when none does.
template <class Range>
std::string common_prefix(const Range& lines) {
  std::vector<std::string_view> firsts;
  size_t nonblank = 0;
  for (const auto& l : lines) {
    std::string_view s = l;
    if (blank(s)) continue;
    ++nonblank;
    size_t sp = s.find(' ');
    if (sp != std::string_view::npos && sp > 0) firsts.push_back(s.substr(0, sp + 1));
  }
  if (firsts.size() < 3) return {};
  std::sort(firsts.begin(), firsts.end());
  std::string_view best;
  size_t best_n = 0;
  for (size_t i = 0; i < firsts.size();) {
    size_t j = i;
    while (j < firsts.size() && firsts[j] == firsts[i]) ++j;
    if (j - i > best_n) best = firsts[i], best_n = j - i;
    i = j;
  }
  bool bare = false;
  if (best_n < 3 || best_n * 5 < nonblank * 3 || !source_name(best.substr(0, best.size() - 1), &bare)) return {};
  if (!bare) return std::string(best);
  // stern: the container's name, the same word after the pod's on those lines.
  std::string_view second;
  size_t same = 0;
  for (const auto& l : lines) {
    std::string_view s = l;
    if (s.substr(0, best.size()) != best) continue;
    std::string_view rest = s.substr(best.size());
    size_t sp = rest.find(' ');
    if (sp == std::string_view::npos || sp == 0) continue;
    std::string_view w = rest.substr(0, sp + 1);
    if (second.empty()) second = w;
    same += w == second;
  }
  std::string_view word = second.empty() ? second : second.substr(0, second.size() - 1);
  if (second.empty() || same < best_n || level_word(word) ||
      !std::all_of(word.begin(), word.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }))
    return {};
  return std::string(best) + std::string(second);
}

// The stream a runner tags each line with ("stderr: ", "[stdout] ",
// "<stderr> "): a gatherer's note of where the line came from, the two
// streams mixed. Its length with the blank after it, or 0.
size_t stream_tag(std::string_view l) {
  static constexpr std::string_view kTags[] = {"stderr:", "stdout:", "STDERR:", "STDOUT:", "[stderr]", "[stdout]", "[STDERR]",
                                               "[STDOUT]", "(stderr)", "(stdout)", "<stderr>", "<stdout>"};
  for (std::string_view t : kTags)
    if (l.size() > t.size() && l.compare(0, t.size(), t) == 0 && l[t.size()] == ' ') return t.size() + 1;
  return 0;
}

// Whether at least 3 in 5 of the non-blank lines, and three lines, are `such`.
template <class Range, class Such>
bool most_lines(const Range& lines, Such such) {
  size_t nonblank = 0, n = 0;
  for (const auto& l : lines) {
    std::string_view s = l;
    if (blank(s)) continue;
    ++nonblank;
    n += such(s);
  }
  return n >= 3 && n * 5 >= nonblank * 3;
}

// Most lines carry a stream's tag.
template <class Range>
bool stream_tagged(const Range& lines) {
  return most_lines(lines, [](std::string_view s) { return stream_tag(s) > 0; });
}

// A terminal's copy padded to its width: at least 3 in 5 of the non-blank
// lines, and three lines, end in blanks. They are padding, not the program's.
template <class Range>
bool padded(const Range& lines) {
  return most_lines(lines, [](std::string_view s) { return s.back() == ' ' || s.back() == '\t'; });
}

struct Lines {
  std::vector<std::string> text;
  std::vector<uint64_t> origin;  // 1-based input line
};

// The framing most of `lines` carry, if at least 3 in 5 of the non-blank
// ones do; kFramings when none does.
template <class Range>
size_t dominant(const Range& lines, int64_t reference_us) {
  size_t nonblank = 0;
  std::array<size_t, kFramings> carried{};
  for (const auto& l : lines) {
    if (blank(l)) continue;
    ++nonblank;
    for (size_t f = 0; f < kFramings; ++f) carried[f] += cut(static_cast<Framing>(f), l, reference_us).has_value();
  }
  size_t best = kFramings;
  // A JSON record is one whole object on a line with a message field: no
  // program's own line has that shape by chance, so a third of the lines
  // carrying it is enough (a paste of the commands typed, then the records).
  auto enough = [&](size_t f) {
    return carried[f] >= 2 && (f == kJsonRecord ? carried[f] * 3 >= nonblank : carried[f] * 5 >= nonblank * 3);
  };
  for (size_t f = 0; f < kFramings; ++f)
    if (enough(f) && (best == kFramings || carried[f] > carried[best])) best = f;
  // An rsyslog file's lines all carry the stamp, its services' also the
  // ident (the kernel's keep theirs, syslog_prefix): the services' come off
  // whole, the kernel's keep the stamp its recognizer reads past.
  if (best == kStamp && enough(kSyslog)) best = kSyslog;
  return best;
}

// Indentation every non-blank line shares, the same characters on each (a
// Markdown code block, a paste indented in an editor, a tab before each line
// of a document's quote, above the program's own indentation); 0 when there
// is none.
template <class Range>
size_t common_indent(const Range& lines) {
  std::string_view common;
  bool first = true;
  for (const auto& l : lines) {
    if (blank(l)) continue;
    std::string_view s = l;
    std::string_view lead = s.substr(0, s.find_first_not_of(" \t"));
    if (lead.empty()) return 0;
    if (first) common = lead, first = false;
    size_t k = 0;
    while (k < common.size() && k < lead.size() && common[k] == lead[k]) ++k;
    common = common.substr(0, k);
    if (common.empty()) return 0;
  }
  return common.size();
}

// A line's time for the order check below, on one of two clocks: the wall
// clock (the framing's time, else the line's own stamp) or seconds since boot
// (dmesg). Times on different clocks are not compared.
struct Clocked {
  int64_t us = 0;
  bool wall = false;
};
std::optional<Clocked> clocked(std::string_view l, std::optional<int64_t> framed, int64_t reference_us) {
  if (framed) return Clocked{*framed, true};
  const auto t = timeutil::parse_line_time(l, reference_us);
  if (t.unix_us) return Clocked{*t.unix_us, true};
  if (t.uptime_s) return Clocked{static_cast<int64_t>(*t.uptime_s * 1e6), false};
  return std::nullopt;
}

// Newest first: a console that lists its latest line on top (Kibana's
// Discover and Grafana's log panels by default, `journalctl -r`, CloudWatch
// Logs Insights sorted by @timestamp desc, a `tac`). Of the steps between
// consecutive stamped lines on one clock, at least two go back in time and
// none forward, or at least five back against one in four forward (a clock
// adjusted once, two stamps in one second out of order). Equal times say
// nothing. `time(i)` is line i's time, if it has one.
template <class TimeOf>
bool newest_first(size_t count, TimeOf time) {
  size_t back = 0, forward = 0;
  std::optional<Clocked> last;
  for (size_t i = 0; i < count; ++i) {
    const auto t = time(i);
    if (!t) continue;
    if (last && last->wall == t->wall) back += t->us < last->us, forward += t->us > last->us;
    last = t;
  }
  return (back >= 2 && forward == 0) || (back >= 5 && forward * 4 <= back);
}

// The lines of a newest-first paste in the order they were written: each
// stamped line with the unstamped lines after it (a record's traceback,
// printed under its stamp in the order written) is one entry, and the
// entries go in reverse; lines before the first stamp (the command typed, a
// column header) stay first.
void oldest_first(Lines& ls, const std::vector<bool>& stamped) {
  std::vector<std::pair<size_t, size_t>> entries;  // [from, to) of ls
  size_t head = 0;
  while (head < ls.text.size() && !stamped[head]) ++head;
  for (size_t i = head; i < ls.text.size();) {
    size_t j = i + 1;
    while (j < ls.text.size() && !stamped[j]) ++j;
    entries.emplace_back(i, j);
    i = j;
  }
  Lines next;
  next.text.reserve(ls.text.size());
  next.origin.reserve(ls.text.size());
  auto take = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) next.text.push_back(std::move(ls.text[k])), next.origin.push_back(ls.origin[k]);
  };
  take(0, head);
  for (auto e = entries.rbegin(); e != entries.rend(); ++e) take(e->first, e->second);
  ls = std::move(next);
}

// Each line with escaped breaks (see escaped_breaks) as its pieces, all
// numbered as it; whether any was.
bool unescape_lines(Lines& ls) {
  Lines next;
  bool any = false;
  for (size_t i = 0; i < ls.text.size(); ++i) {
    if (escaped_breaks(ls.text[i]) < kEscapedBreaks || next.text.size() >= kMaxLines) {
      next.text.push_back(std::move(ls.text[i]));
      next.origin.push_back(ls.origin[i]);
      continue;
    }
    any = true;
    for (std::string& piece : split_escaped(ls.text[i])) {
      if (next.text.size() >= kMaxLines) break;
      next.text.push_back(std::move(piece));
      next.origin.push_back(ls.origin[i]);
    }
  }
  ls = std::move(next);
  return any;
}

// The framings of `ls`, outermost first, each taken off every line that
// carries it (at most kRounds); what came off is noted in `d`.
void strip_framings(Lines& ls, Deframed& d, int64_t reference_us) {
  for (int round = 0; round < kRounds; ++round) {
    const size_t best = dominant(ls.text, reference_us);
    if (best == kFramings) break;
    Lines next;
    for (size_t i = 0; i < ls.text.size(); ++i) {
      auto c = cut(static_cast<Framing>(best), ls.text[i], reference_us);
      if (!c) {
        next.text.push_back(std::move(ls.text[i]));
        next.origin.push_back(ls.origin[i]);
        continue;
      }
      if (c->rest.find('\x1b') != std::string::npos) c->rest = strip_ansi(c->rest);
      if (c->time && !d.time[ls.origin[i] - 1]) d.time[ls.origin[i] - 1] = c->time;
      // A record's own lines (a stack trace in one JSON string) each become a
      // line, each showing the record's input line (first_line), numbered as
      // read (split); bounded by the input's size.
      for (size_t pos = 0;;) {
        size_t nl = c->rest.find('\n', pos);
        std::string piece = c->rest.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (!piece.empty() && piece.back() == '\r') piece.pop_back();
        next.text.push_back(std::move(piece));
        next.origin.push_back(ls.origin[i]);
        if (nl == std::string::npos || next.text.size() >= kMaxLines) break;
        d.split = true;  // a record's lines: numbered as read
        pos = nl + 1;
      }
    }
    ls = std::move(next);
    d.framings.emplace_back(kNames[best]);
    d.chain.push_back(static_cast<uint8_t>(best));
  }
}

}  // namespace

std::optional<Deframed> deframe(std::string_view input, int64_t reference_us) {
  std::vector<std::string_view> views;
  for (size_t pos = 0; pos < input.size() && views.size() < kMaxLines;) {
    size_t nl = input.find('\n', pos);
    std::string_view l = input.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    views.push_back(l);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (views.empty() || views.size() >= kMaxLines) return std::nullopt;
  // Most inputs carry nothing: decided on the input itself, before any copy.
  const bool ansi = input.find('\x1b') != std::string_view::npos;
  // Windows line ends (a paste from a Windows editor or console, a log
  // written there): each line's "\r" goes, as if the program had written "\n".
  const bool crlf = input.find("\r\n") != std::string_view::npos;
  const bool entities = has_entities(input);
  const bool typography = entities || has_typography(input);
  const bool escaped = std::any_of(views.begin(), views.end(), [](std::string_view l) { return escaped_breaks(l) >= kEscapedBreaks; });
  // A source's name before most lines, as the input has it (read again below
  // only where the lines were changed first).
  std::string prefix = common_prefix(views);
  const bool streams = stream_tagged(views);
  const bool pad = padded(views);
  if (!ansi && !crlf && !typography && !escaped && dominant(views, reference_us) == kFramings && common_indent(views) == 0 &&
      prefix.empty() && !streams && !pad && !newest_first(views.size(), [&](size_t i) { return clocked(views[i], std::nullopt, reference_us); }))
    return std::nullopt;

  Lines ls;
  for (std::string_view l : views) {
    if (pad)
      while (!l.empty() && (l.back() == ' ' || l.back() == '\t')) l.remove_suffix(1);
    std::string line = ansi ? strip_ansi(l) : std::string(l);
    ls.text.push_back(typography ? plain(line, entities) : std::move(line));
    ls.origin.push_back(ls.text.size());
  }

  Deframed d;
  d.input_lines = ls.text.size();
  d.time.resize(ls.text.size());
  d.ansi = ansi;
  d.typography = typography;
  d.entities = entities;
  if (crlf) d.framings.emplace_back("Windows line ends");
  if (pad) d.framings.emplace_back("a terminal's padding after each line");
  if (ansi) d.framings.emplace_back("ANSI escape sequences");
  if (typography) d.framings.emplace_back(entities ? "HTML entities" : "typographic characters");
  // The framings, outermost first; a paste whose breaks were escaped is read
  // again once unescaped (its own lines may carry a framing: a compose prefix,
  // a stamp).
  strip_framings(ls, d, reference_us);
  if (escaped && unescape_lines(ls)) {
    d.framings.emplace_back("escaped line breaks");
    d.split = true;
    strip_framings(ls, d, reference_us);
  }
  {
    std::vector<std::optional<Clocked>> times(ls.text.size());
    // A record's lines after its first (a JSON record's stack trace) are its own, whatever they hold.
    for (size_t i = 0; i < ls.text.size(); ++i)
      if (i == 0 || ls.origin[i] != ls.origin[i - 1]) times[i] = clocked(ls.text[i], d.time[ls.origin[i] - 1], reference_us);
    if (newest_first(times.size(), [&](size_t i) { return times[i]; })) {
      std::vector<bool> stamped(times.size());
      for (size_t i = 0; i < times.size(); ++i) stamped[i] = times[i].has_value();
      oldest_first(ls, stamped);
      d.newest_first = true;
      d.framings.emplace_back("newest line first");
    }
  }
  if (stream_tagged(ls.text)) {  // before a source's name: "stderr: worker-1: ..." comes off tag first
    for (auto& l : ls.text) l.erase(0, stream_tag(l));
    d.framings.emplace_back("a stream's tag before each line");
  }
  if (ansi || typography || escaped || streams || !d.chain.empty()) prefix = common_prefix(ls.text);  // the lines changed
  if (!prefix.empty()) {
    for (auto& l : ls.text)
      if (l.compare(0, prefix.size(), prefix) == 0) l.erase(0, prefix.size());
    d.framings.emplace_back("a source's name before each line");
  }
  if (size_t indent = common_indent(ls.text)) {
    for (auto& l : ls.text) l.erase(0, std::min(indent, l.size()));
    d.framings.emplace_back("common indentation");
  }
  if (d.framings.empty()) return std::nullopt;
  d.text.reserve(input.size());
  for (size_t i = 0; i < ls.text.size(); ++i) {
    if (i) d.text += '\n';
    d.text += ls.text[i];
  }
  if (input.back() == '\n') d.text += '\n';
  d.first_line = std::move(ls.origin);
  return d;
}

bool StreamDeframer::learn(std::string_view sample, int64_t reference_us) {
  chain_.clear();
  reference_us_ = reference_us;
  auto d = deframe(sample, reference_us);
  if (!d) return false;
  chain_ = d->chain;
  ansi_ = d->ansi;
  typography_ = d->typography;
  entities_ = d->entities;
  return ansi_ || typography_ || !chain_.empty();
}

void StreamDeframer::apply(std::string_view block, std::string& out, std::vector<std::pair<uint32_t, int64_t>>& times) const {
  out.clear();
  times.clear();
  out.reserve(block.size());
  uint32_t index = 0;
  for (size_t pos = 0; pos < block.size(); ++index) {
    size_t nl = block.find('\n', pos);
    std::string_view raw = block.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string line = ansi_ && raw.find('\x1b') != std::string_view::npos ? strip_ansi(raw) : std::string(raw);
    if (typography_) line = plain(line, entities_);
    bool timed = false;
    for (uint8_t f : chain_) {
      auto c = cut(static_cast<Framing>(f), line, reference_us_);
      if (!c) continue;
      if (c->rest.find('\x1b') != std::string::npos) c->rest = strip_ansi(c->rest);
      for (char& ch : c->rest)
        if (ch == '\n' || ch == '\r') ch = ' ';  // line for line
      line = std::move(c->rest);
      if (c->time && !timed) times.emplace_back(index, *c->time), timed = true;
    }
    // Never longer than the line it came from (a cut only removes; a JSON
    // string's escapes only shrink), so the block's bound holds.
    if (line.size() > raw.size()) line.resize(raw.size());
    out += line;
    if (nl == std::string_view::npos) break;
    out += '\n';
    pos = nl + 1;
  }
}

}  // namespace aimem
