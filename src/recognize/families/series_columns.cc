// The general table reader of the memory series: see series_columns.h.
#include "recognize/families/series_columns.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr uint64_t kRows = 400;    // lines a legend holds for
constexpr size_t kMaxColumns = 24;

bool digit(char c) { return c >= '0' && c <= '9'; }

// The cells of a row: blank-separated (runs of blanks), or split at `sep`
// and trimmed; at most `max`.
std::vector<std::string_view> split(std::string_view s, char sep, size_t max) {
  if (sep == ' ') return platform::words(s, max);
  auto cells = text::split(s, sep);
  if (cells.size() > max) cells.resize(max);
  for (auto& c : cells) c = text::trim(c);
  return cells;
}

// A figure as tables print it: "412388", "148.21", top's "3.9g" and "612m",
// "2.1GiB". The multiplier of its own unit, or 0 for none.
std::optional<double> figure(std::string_view t, double* own_unit) {
  *own_unit = 0;
  std::string_view rest;
  auto v = text::parse_double(t, &rest);
  if (!v || *v < 0) return std::nullopt;
  if (rest.empty()) return v;
  double m = 0;
  switch (std::tolower(static_cast<unsigned char>(rest[0]))) {
    case 'k': m = 1024.0; break;
    case 'm': m = 1048576.0; break;
    case 'g': m = 1073741824.0; break;
    case 't': m = 1099511627776.0; break;
    default: return std::nullopt;
  }
  rest.remove_prefix(1);
  if (!rest.empty() && (rest[0] == 'i' || rest[0] == 'I')) rest.remove_prefix(1);
  if (!rest.empty() && (rest[0] == 'b' || rest[0] == 'B')) rest.remove_prefix(1);
  if (!rest.empty()) return std::nullopt;
  *own_unit = m;
  return v;
}

// Whether a legend's column name is a memory figure, and its unit when the
// tool that prints it has one (KiB for ps and top).
bool memory_name(std::string_view n, bool* kib) {
  *kib = false;
  if (n == "RES" || n == "RSS" || n == "rss") {
    *kib = true;
    return true;
  }
  std::string l = text::lower(n);
  if (l.find("cpu") != std::string::npos || l.find("%") != std::string::npos || l.find("time") != std::string::npos) return false;
  for (std::string_view w : {"rss", "heap", "mem", "resident", "used", "usage", "external", "footprint", "arraybuffers"})
    if (l.find(w) != std::string::npos) return true;
  return false;
}

// The unit a legend gives its figures: "(MB)", ", MB", "MiB" as a word.
double legend_unit(std::string_view s) {
  for (auto [u, m] : {std::pair<std::string_view, double>{"GiB", 1073741824.0}, {"GB", 1073741824.0}, {"MiB", 1048576.0},
                      {"MB", 1048576.0}, {"KiB", 1024.0}, {"KB", 1024.0}, {"kB", 1024.0}, {"bytes", 1.0}}) {
    for (size_t p = s.find(u); p != std::string_view::npos; p = s.find(u, p + 1)) {
      bool before = p == 0 || !std::isalpha(static_cast<unsigned char>(s[p - 1]));
      size_t e = p + u.size();
      bool after = e >= s.size() || !std::isalpha(static_cast<unsigned char>(s[e]));
      if (before && after) return m;
    }
  }
  return 0;
}

}  // namespace

bool SeriesColumns::on_line(const Line& line, const Add& add) {
  // A legend is read and left to the other readers too (a ps -o list with a
  // header is memory_series' own); only rows are taken.
  if (legend(line)) return false;
  if (line.number > until_ || columns_.empty()) return false;
  // Another command at a prompt ends the rows of the last one ("% sysctl -n
  // hw.memsize" and its bare figure after a `ps -o rss=` loop).
  if (text::starts_with(line.text, "$ ") || text::starts_with(line.text, "% ")) {
    until_ = 0;
    return false;
  }
  return row(line, add);
}

bool SeriesColumns::legend(const Line& line) {
  std::string_view s = text::trim(line.text);
  if (s.empty() || digit(s[0])) return false;
  bool found = ps_list(s) || metric_command(s) || legend_list(s) || header_row(s) || top_rows_command(s);
  if (found) until_ = line.number + kRows;
  return found;
}

// "top -b -n1 -p 48728 | tail -1", "top -bn1 | grep milvus": top's rows with
// their header cut away, in top's own columns.
bool SeriesColumns::top_rows_command(std::string_view s) {
  size_t p = s.find("top -b");
  if (p == std::string_view::npos || (p > 0 && s[p - 1] != ' ' && s[p - 1] != '$')) return false;
  std::string_view rest = s.substr(p);
  if (!text::contains(rest, "| tail") && !text::contains(rest, "| grep") && !text::contains(rest, "|tail") && !text::contains(rest, "|grep"))
    return false;
  return header_row("PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND");
}

// "ps -o pid=,rss=,cmd= -p 31414", "ps -o etime=,rss=": the columns of rows
// printed without a header (a list with a header is read by memory_series).
bool SeriesColumns::ps_list(std::string_view s) {
  size_t p = s.find("ps ");
  if (p == std::string_view::npos || (p > 0 && s[p - 1] != ' ' && s[p - 1] != '"' && s[p - 1] != '$' && s[p - 1] != '\'')) return false;
  auto o = text::after(s.substr(p), " -o");
  if (!o) return false;
  std::string_view list = text::take_until(text::trim(*o), " |;&\"'");
  if (list.find('=') == std::string_view::npos) return false;
  std::vector<Column> cols;
  size_t pid = SIZE_MAX;
  for (std::string_view c : split(list, ',', kMaxColumns)) {
    if (!c.empty() && c.back() == '=') c.remove_suffix(1);
    if (c.empty()) continue;
    Column col{std::string(c)};
    col.memory = c == "rss" || c == "rsz";
    col.unit = col.memory ? 1024.0 : 0;
    if (c == "pid") pid = cols.size();
    cols.push_back(std::move(col));
  }
  bool any = false;
  for (const Column& c : cols) any = any || c.memory;
  if (!any) return false;
  columns_ = std::move(cols);
  sep_ = ' ';
  std::string_view last = columns_.back().name;
  rest_joined_ = last == "cmd" || last == "args" || last == "command" || last == "comm";
  time_value_ = false;
  pid_ = pid;
  return true;
}

// A command that names one metric ("--metric-name MemoryUtilization",
// "metric=container_memory_rss"), or a console's heading that names its
// metric type: its rows are a time and a value.
bool SeriesColumns::metric_command(std::string_view s) {
  std::optional<std::string_view> name = text::after(s, "--metric-name ");
  if (!name) name = text::after(s, "--metric-name=");
  // A monitoring console's metric type as a heading over its rows
  // ("run.googleapis.com/container/memory/utilizations", Cloud Monitoring's
  // "kubernetes.io/container/memory/used_bytes"): a path with memory in it.
  if (!name)
    if (size_t p = s.find("/memory/"); p != std::string_view::npos) {
      size_t b = p;
      while (b > 0 && s[b - 1] != ' ' && s[b - 1] != '\t' && s[b - 1] != '"' && s[b - 1] != '\'') --b;
      name = s.substr(b);
    }
  if (!name) return false;
  std::string_view m = text::take_until(*name, " \"'");
  bool kib = false;
  if (!memory_name(m, &kib) && !text::icontains(m, "memory")) return false;
  metric_ = std::string(m);
  columns_.assign(2, Column{});
  columns_[1].name = metric_;
  columns_[1].memory = true;
  columns_[1].unit = text::icontains(m, "bytes") ? 1.0 : 0;  // a utilization is a percentage
  sep_ = ' ';
  rest_joined_ = false;
  time_value_ = true;
  pid_ = SIZE_MAX;
  return true;
}

// "# memory logger: ts|rss|heapTotal|heapUsed|external, MB": three names or
// more joined by '|' (or ',' with no blank), the unit after them.
bool SeriesColumns::legend_list(std::string_view s) {
  if (text::contains(s, " -o")) return false;  // a command's option list, not a legend
  for (char sep : {'|', ','}) {
    size_t first = s.find(sep);
    if (first == std::string_view::npos) continue;
    size_t b = first;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '_' || s[b - 1] == '.')) --b;
    size_t e = first;
    while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_' || s[e] == '.' || s[e] == sep)) ++e;
    auto names = split(s.substr(b, e - b), sep, kMaxColumns);
    // Two names make a legend when they are a CSV's whole header and the
    // memory one carries its unit ("iteration,memory_usage_in_MiB").
    const bool whole_csv = sep == ',' && b == 0 && e == s.size();
    if (names.size() < (whole_csv ? 2 : 3)) continue;
    double unit = legend_unit(s.substr(e));
    std::vector<Column> cols;
    bool any = false, own_unit = false;
    for (std::string_view n : names) {
      if (n.empty() || digit(n[0])) return false;
      bool kib = false;
      Column c{std::string(n), 0, memory_name(n, &kib)};
      // A unit in the column's own name ("rss_MB", "memory_usage_in_MiB").
      const double named = unit > 0 || !c.memory ? 0 : legend_unit(n);
      c.unit = unit > 0 ? unit : named > 0 ? named : kib ? 1024.0 : 0;
      own_unit = own_unit || named > 0;
      any = any || c.memory;
      cols.push_back(std::move(c));
    }
    if (!any || (names.size() < 3 && !own_unit)) return false;
    columns_ = std::move(cols);
    sep_ = sep;
    rest_joined_ = time_value_ = false;
    pid_ = SIZE_MAX;
    return true;
  }
  return false;
}

// A header row of names over blank-separated columns: top's "PID USER ... RES
// ... COMMAND" (RSS headers are memory_series' own), jstat's "... OC OU MC MU ...",
// jstat -gcutil's "S0 S1 E O M CCS YGC ..." (O: the old generation's share used).
bool SeriesColumns::header_row(std::string_view s) {
  auto words = split(s, ' ', kMaxColumns + 1);
  if (words.size() < 4 || words.size() > kMaxColumns) return false;
  bool jstat = false, top = false, ygc = false, old_share = false;
  for (std::string_view w : words) {
    if (digit(w[0])) return false;
    jstat = jstat || w == "OC";
    top = top || w == "RES";
    ygc = ygc || w == "YGC";
    old_share = old_share || w == "O";
  }
  const bool gcutil = ygc && old_share && !jstat;  // jstat -gcutil: each space's share used, in percent
  if (!jstat && !top && !gcutil) return false;
  std::vector<Column> cols;
  size_t pid = SIZE_MAX;
  for (std::string_view w : words) {
    Column c{std::string(w)};
    if (top && w == "RES") c.memory = true, c.unit = 1024.0;
    if (jstat && (w == "OU" || w == "MU")) c.memory = true, c.unit = 1024.0;
    if (gcutil && w == "O") c.name = "O (old generation, % used)", c.memory = true;
    if (w == "PID") pid = cols.size();
    cols.push_back(std::move(c));
  }
  columns_ = std::move(cols);
  sep_ = ' ';
  rest_joined_ = top;  // top's COMMAND may hold blanks
  time_value_ = false;
  pid_ = pid;
  return true;
}

bool SeriesColumns::row(const Line& line, const Add& add) {
  std::string_view s = text::trim(line.text);
  if (s.empty() || !digit(s[0])) return false;
  auto cells = split(s, sep_, kMaxColumns + 8);
  if (time_value_) {
    if (cells.size() != 2 || cells[0].find_first_of(":-T") == std::string_view::npos) return false;
    double own = 0;
    auto v = figure(cells[1], &own);
    if (!v) return false;
    const Column& c = columns_[1];
    double unit = own > 0 ? own : c.unit;
    add("metric " + metric_, *v * (unit > 0 ? unit : 1.0), unit > 0, line);
    return true;
  }
  // A loop that prints the time before each sample ("while sleep 30; do
  // printf '%s ' \"$(date +%T)\"; ps -o pid=,rss=,comm= ...; done"): the row
  // has a clock time first that no column names.
  if (!columns_.empty() && columns_[0].name != "etime" && columns_[0].name != "time" && cells.size() > columns_.size() &&
      cells[0].size() >= 5 && cells[0].size() <= 8 && std::count(cells[0].begin(), cells[0].end(), ':') >= 1 &&
      std::all_of(cells[0].begin(), cells[0].end(), [](char c) { return digit(c) || c == ':'; }))
    cells.erase(cells.begin());
  if (cells.size() < columns_.size() || (!rest_joined_ && cells.size() != columns_.size())) return false;
  std::string whose = pid_ < cells.size() ? " of pid " + std::string(cells[pid_]) : std::string();
  bool any = false;
  for (size_t k = 0; k < columns_.size(); ++k) {
    const Column& c = columns_[k];
    if (!c.memory) continue;
    double own = 0;
    auto v = figure(cells[k], &own);
    if (!v) continue;
    double unit = own > 0 ? own : c.unit;
    add("column " + c.name + whose, *v * (unit > 0 ? unit : 1.0), unit > 0, line);
    any = true;
  }
  return any;
}

}  // namespace aimem
