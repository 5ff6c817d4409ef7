// Who held the memory at one moment: a table of processes with a memory
// column, as a user pastes it beside a failure or a killer prints it.
//
//   PID	MEM(GB)	COMMAND                              Ray's memory monitor (2.2+): its top users,
//   4812	14.61	ray::Worker.__init__                    GB (10^9 bytes), tab- or space-separated
//   PID	MEM	COMMAND   /   9112	11.2GB	ray_Accumulator:alloc()     (Ray before 1.0: the unit on the value,
//                        /   20112	4.71GiB	ray::ImplicitFunc.train()    GB or GiB)
//   $ ps -eo pid,rss,comm --sort=-rss | head          ps with -o: the header names the columns;
//     PID   RSS COMMAND                                 RSS (also RSZ, "RSS(kB)") in KiB
//    4411 2871304 firefox
//   USER  PID %CPU %MEM    VSZ   RSS TTY STAT START TIME COMMAND      ps aux (BSD columns)
//   app  1234 12.0 31.5 9123456 5210332 ?  Sl  Mar01 80:12 java -jar app.jar
//     PID USER  PR NI    VIRT    RES   SHR S %CPU %MEM   TIME+ COMMAND  top (procps-ng): RES in KiB,
//    9173 app   20  0   12.3g   5.1g  21m S 96.1 65.4  12:01.3 java    or with a unit suffix (m, g, t)
//   51873 root   1 103  0  2144M  1923M CPU0  0  1:12 99.12% c++     FreeBSD's top: RES with K, M, G
//
// The rows are grouped by program (process_name.h: ray::Class, an
// interpreter's script, else the executable's name); the table becomes one
// memory_usage fact per program, largest first (process_name::TableBuilder): `process`
// the program, `usage` what its rows held together, `sequences` how many
// rows, `total` the whole table's sum, detail kTableDetail. All of one table
// carry its header's line. A PID seen twice is not a snapshot (a ps loop
// sampling one process over time: memory_series.cc reads that) and the
// table is dropped. A table is only what the killer or the command printed:
// the processes left out of a `head` are not in the sum.
//
// A table that says when each process started (ps's ETIME / ELAPSED,
// ETIMES in seconds, or STARTED as lstart prints it, "Thu May 14 01:05:22
// 2026"; a memory column is not needed then) can show two generations of one
// program alive at once: the same command line (its figures aside: a port,
// a rank), 2 to kMaxGenerations copies,
// started at least kGenerationGapS apart and never two in the same minute
// (a pool forks its workers together), no copy the child of another (a
// master and its recycled workers):
//    PID    STARTED                  RSS CMD
//   47718 Thu May 14 01:05:22 2026 1512204 node /srv/api/dist/server.js
//   48390 Thu May 14 03:12:51 2026 1468876 node /srv/api/dist/server.js
// The earlier copy outlived a restart or a deploy: one context fact,
// runtime_setting with cause deployment_overlap, as a rolling update gives
// (rollout.cc).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/process_name.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // Headers: a PID or memory column and a command column.
    {"MEM(\\(GB\\))?\\s+COMMAND", kRegex | kContext},
    {"\\b(RSS|RSZ|RES|RSS\\(kB\\))\\s+.*\\b(COMMAND|CMD|COMM|Command)\\s*$", kRegex | kContext},  // htop: "Command"
    // A header that says when each process started, without a memory column.
    {"\\b(ELAPSED|ETIMES?|STARTED)\\s+.*\\b(COMMAND|CMD)\\s*$", kRegex | kContext},
    // Rows with an elapsed time ("21877  1  06:12:40 1431988 node ...") or a start date ("... Sat Jun  7 14:06:35 2025 ...").
    {"^[ \t]*[0-9]+\\s+([0-9]+\\s+)*([0-9]+-)?[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?\\s+[^\\s]", kRegex | kContext},
    // (led by the weekday, not by a ".*" after the PID: that form made the scan of a large log 18% slower)
    {"\\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4} ", kRegex | kContext},
    // ps with an -o list and grep after it: the list is the header.
    {"\\bps\\s.*-[a-zA-Z]*o\\s*[a-z,]*(args|cmd|comm|command)\\b", kRegex | kContext},
    // Rows: "<pid> <size> <command>", "<rss> <command>", ps aux's and top's.
    {"^[ \t]*[0-9]+\\s+[0-9]+(\\.[0-9]+)?([kmgt]|[KMG]i?B)?\\s+[^\\s0-9]", kRegex | kContext},
    {"^[ \t]*[0-9]{3,}\\s+[A-Za-z/\\[]", kRegex | kContext},
    {"^[a-z_][a-z0-9_+.-]*\\s+[0-9]+\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9]+\\s+[0-9]+\\s", kRegex | kContext},
    // ps -o with the user first ("user,pid,rss,etime,comm"): a name, a PID, a figure.
    {"^[a-z_][a-z0-9_+.-]*\\s+[0-9]+\\s+[0-9]+(\\.[0-9]+)?[kmgtKMG]?\\s", kRegex | kContext},
    {"^[ \t]*[0-9]+\\s+[a-z_][a-z0-9_+.-]*\\s+(rt|-?[0-9]+)\\s+-?[0-9]+\\s+[0-9.]+[kmgtp]?\\s+[0-9.]+[kmgtp]?\\s", kRegex | kContext},
};

constexpr size_t kMaxColumns = 24;
constexpr size_t kNoColumn = size_t(-1);
constexpr size_t kMaxGenerations = 4;
constexpr int64_t kGenerationGapS = 1800, kSameStartS = 60;
constexpr size_t kStartedRows = 64;
constexpr size_t kCommandChars = 256;

enum class Unit { kib, gb, kib_or_suffix, with_unit };
enum class Age { none, etime, etimes, lstart };

// One row's start (seconds: since the epoch for lstart, else minus its age).
struct Started {
  std::string command;  // its figures masked (same_program_key)
  std::string program;  // process_name::program of the command as printed
  int64_t start = 0;
  std::optional<int64_t> pid, ppid;
};

class ProcessTable final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = text::trim(line.text);
    if (header(line, s, out)) return;
    if (mem_col_ == kNoColumn && age_col_ == kNoColumn) return;
    if (line.number != last_line_ + 1 || !row(s)) return flush(out);
    last_line_ = line.number;
  }
  void finish(FactSink& out) override { flush(out); }

 private:
  process_name::TableBuilder table_;
  size_t pid_col_ = kNoColumn, mem_col_ = kNoColumn, cmd_col_ = kNoColumn, age_col_ = kNoColumn, ppid_col_ = kNoColumn,
         lstart_col_ = kNoColumn;
  Unit unit_ = Unit::kib;
  Age age_ = Age::none;
  uint64_t last_line_ = 0;
  std::optional<Line> header_;
  std::string header_text_;
  std::vector<Started> started_;

  // The columns a `ps -o` list names, as ps would head them, when grep took
  // the header away: "ps -eo pid,ppid,etime,rss,args | grep ..." (the
  // command column last, as ps prints it).
  static std::vector<std::string> ps_list(std::string_view s) {
    std::vector<std::string> out;
    size_t p = s.find("ps ");
    if (p == std::string_view::npos || (p > 0 && s[p - 1] != ' ' && s[p - 1] != '$' && s[p - 1] != '#')) return out;
    std::string_view r = s.substr(p + 3);
    size_t o = r.find("o ");
    if (o == 0 || o == std::string_view::npos || r[o - 1] == ' ' || r.substr(0, o).find('-') == std::string_view::npos) return out;
    std::string_view list = text::take_until(text::trim(r.substr(o + 2)), " |;&");
    if (list.find('=') != std::string_view::npos) return out;
    while (!list.empty() && out.size() < kMaxColumns) {
      std::string_view col = text::take_until(list, ",");
      std::string up;
      for (char c : col) up += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
      if (up == "ARGS" || up == "CMD") up = "COMMAND";
      if (up == "RSSIZE") up = "RSS";
      out.push_back(up);
      list.remove_prefix(std::min(list.size(), col.size() + 1));
    }
    return out;
  }

  bool header(const Line& line, std::string_view s, FactSink& out) {
    std::vector<std::string> listed = ps_list(s);
    std::vector<std::string_view> w;
    if (!listed.empty()) w.assign(listed.begin(), listed.end());
    else w = platform::words(s, kMaxColumns);
    size_t pid = kNoColumn, mem = kNoColumn, cmd = kNoColumn, age_col = kNoColumn, ppid = kNoColumn, lstart_col = kNoColumn;
    Unit unit = Unit::kib;
    Age age = Age::none;
    for (size_t k = 0; k < w.size(); ++k) {
      if (w[k] == "PID") pid = k;
      else if (w[k] == "PPID") ppid = k;
      else if (w[k] == "ELAPSED" || w[k] == "ETIME") age_col = k, age = Age::etime;  // preferred to lstart: one word
      else if (w[k] == "ETIMES") age_col = k, age = Age::etimes;
      else if (w[k] == "STARTED" || w[k] == "LSTART") {
        lstart_col = k;
        if (age == Age::none) age_col = k, age = Age::lstart;
      }
      else if (w[k] == "RSS" || w[k] == "RSZ" || w[k] == "RSS(kB)") mem = k;
      else if (w[k] == "RES") mem = k, unit = Unit::kib_or_suffix;
      else if (w[k] == "MEM(GB)") mem = k, unit = Unit::gb;
      else if (w[k] == "MEM") mem = k, unit = Unit::with_unit;  // Ray before 1.0: "11.2GB"
      else if ((w[k] == "COMMAND" || w[k] == "CMD" || w[k] == "COMM" || w[k] == "Command") && k + 1 == w.size()) cmd = k;
    }
    if (cmd == kNoColumn || (mem != kNoColumn && mem > cmd)) return false;
    if (mem == kNoColumn && (age_col == kNoColumn || pid == kNoColumn)) return false;
    flush(out);
    pid_col_ = pid, mem_col_ = mem, cmd_col_ = cmd, unit_ = unit, age_col_ = age_col, age_ = age, ppid_col_ = ppid;
    lstart_col_ = lstart_col;
    if (mem != kNoColumn) table_.start(line, Family::procfs);
    header_ = line;
    header_text_ = std::string(line.text.substr(0, 512));
    header_->text = header_text_;
    last_line_ = line.number;
    return true;
  }

  // lstart's five words ("Thu May 14 01:05:22 2026") as seconds since the
  // epoch. By hand: core/time reads this shape only inside dmesg's brackets.
  static std::optional<int64_t> lstart(const std::vector<std::string_view>& w, size_t at) {
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (at + 5 > w.size() || w[at].size() != 3) return std::nullopt;
    int mon = 0;
    for (int m = 0; m < 12; ++m)
      if (w[at + 1] == kMonths[m]) mon = m + 1;
    auto day = text::parse_u64(w[at + 2]);
    auto year = text::parse_u64(w[at + 4]);
    std::string_view c = w[at + 3];
    if (!mon || !day || !year || c.size() != 8 || c[2] != ':' || c[5] != ':') return std::nullopt;
    auto h = text::parse_u64(c.substr(0, 2)), mi = text::parse_u64(c.substr(3, 2)), sec = text::parse_u64(c.substr(6, 2));
    if (!h || !mi || !sec || *day > 31 || *year < 1970 || *year > 9999) return std::nullopt;
    auto us = timeutil::make_unix_us(static_cast<int>(*year), mon, static_cast<int>(*day), static_cast<int>(*h), static_cast<int>(*mi),
                                     static_cast<int>(*sec));
    return us ? std::optional<int64_t>(*us / 1000000) : std::nullopt;
  }

  // Where the row's columns after STARTED sit: lstart is five words.
  size_t shifted(size_t col, const std::vector<std::string_view>& w) const {
    return lstart_col_ != kNoColumn && col != kNoColumn && col > lstart_col_ && lstart(w, lstart_col_) ? col + 4 : col;
  }

  std::optional<int64_t> start_of(const std::vector<std::string_view>& w) const {
    if (age_col_ == kNoColumn) return std::nullopt;
    const size_t col = shifted(age_col_, w);
    if (col >= w.size()) return std::nullopt;
    std::string_view v = w[col];
    if (age_ == Age::etime) {
      auto a = platform::parse_ps_etime(v);
      return a ? std::optional<int64_t>(-static_cast<int64_t>(*a)) : std::nullopt;
    }
    if (age_ == Age::etimes) {
      std::string_view rest;
      auto a = text::parse_u64(v, &rest);
      return a && rest.empty() && *a < (uint64_t(1) << 40) ? std::optional<int64_t>(-static_cast<int64_t>(*a)) : std::nullopt;
    }
    return lstart(w, age_col_);
  }

  // One row under the header; false when the line is not one.
  bool row(std::string_view s) {
    auto w = platform::words(s, cmd_col_ + 6);
    const size_t cmd = shifted(cmd_col_, w), mem = shifted(mem_col_, w);
    if (w.size() <= cmd) return false;
    std::optional<uint64_t> bytes;
    if (mem_col_ != kNoColumn) {
      bytes = size_of(w[mem]);
      if (!bytes) return false;
    }
    auto id = [&](size_t col) -> std::optional<int64_t> {
      if (col == kNoColumn) return std::nullopt;
      std::string_view rest;
      auto n = text::parse_u64(w[col], &rest);
      if (!n || !rest.empty() || *n > (uint64_t(1) << 32)) return std::nullopt;
      return static_cast<int64_t>(*n);
    };
    std::optional<int64_t> pid = id(pid_col_);
    if (pid_col_ != kNoColumn && !pid) return false;
    // The command is the rest of the line from its column on.
    std::string_view command = s.substr(static_cast<size_t>(w[cmd].data() - s.data()));
    auto start = start_of(w);
    if (age_col_ != kNoColumn && !start && !bytes) return false;
    if (bytes) table_.add(command, *bytes, pid);
    if (start && started_.size() < kStartedRows)
      started_.push_back({same_program_key(command), process_name::program(command.substr(0, kCommandChars)), *start, pid,
                          id(shifted(ppid_col_, w))});
    return true;
  }

  // A command line with its figures masked: a relaunch on another port
  // ("--port 40047", "--port 40112") is the same program.
  static std::string same_program_key(std::string_view command) {
    std::string key;
    for (char c : command.substr(0, kCommandChars)) {
      if (platform::is_digit(c)) {
        if (key.empty() || key.back() != '#') key += '#';
      } else {
        key += c;
      }
    }
    return key;
  }

  // Two generations of one program in the table (see the top of the file).
  void generations(FactSink& out) {
    if (!header_) return;
    std::vector<bool> done(started_.size());
    for (size_t i = 0; i < started_.size(); ++i) {
      if (done[i]) continue;
      std::vector<const Started*> same;
      for (size_t j = i; j < started_.size(); ++j)
        if (!done[j] && started_[j].command == started_[i].command) same.push_back(&started_[j]), done[j] = true;
      if (same.size() < 2 || same.size() > kMaxGenerations) continue;
      std::sort(same.begin(), same.end(), [](const Started* a, const Started* b) { return a->start < b->start; });
      bool apart = same.back()->start - same.front()->start >= kGenerationGapS;
      for (size_t k = 1; k < same.size(); ++k) apart = apart && same[k]->start - same[k - 1]->start >= kSameStartS;
      for (const Started* a : same)
        for (const Started* b : same)
          if (a->ppid && b->pid && *a->ppid == *b->pid) apart = false;
      if (!apart) continue;
      Fact f = make_fact(*header_, FactKind::runtime_setting, Family::procfs);
      f.cause = Cause::deployment_overlap;
      f.detail = fmt::format("{} copies of {} alive at once, started {} apart: an earlier generation outlived its replacement's start",
                             same.size(), same.front()->program,
                             timeutil::format_duration(static_cast<double>(same.back()->start - same.front()->start)));
      out.add(std::move(f));
      return;
    }
  }

  std::optional<uint64_t> size_of(std::string_view v) const {
    std::string_view rest;
    if (unit_ == Unit::gb) {
      auto gb = text::parse_double(v, &rest);
      if (!gb || !rest.empty() || *gb < 0 || *gb > 1e6) return std::nullopt;
      return static_cast<uint64_t>(std::llround(*gb * 1e9));
    }
    if (unit_ == Unit::with_unit) {
      auto b = units::parse_log_size(v, &rest);
      if (!b || !rest.empty()) return std::nullopt;
      return b;
    }
    auto n = text::parse_double(v, &rest);
    if (!n || *n < 0 || *n > 1e12) return std::nullopt;
    // KiB, or top's lower-case suffixes ("12.3g", "512m"), which
    // units::parse_log_size does not take as binary units.
    double mult = 1024.0;
    if (!rest.empty()) {
      if (unit_ != Unit::kib_or_suffix || rest.size() != 1) return std::nullopt;
      switch (rest[0]) {  // procps-ng's lower case; FreeBSD's top prints "1923M", "512K"
        case 'K': mult = double(units::KiB); break;
        case 'm': case 'M': mult = double(units::MiB); break;
        case 'g': case 'G': mult = double(units::GiB); break;
        case 't': case 'T': mult = double(units::TiB); break;
        default: return std::nullopt;
      }
    }
    return static_cast<uint64_t>(std::llround(*n * mult));
  }

  void flush(FactSink& out) {
    if (table_.started()) table_.flush(out);
    generations(out);
    started_.clear();
    header_.reset();
    pid_col_ = mem_col_ = cmd_col_ = age_col_ = ppid_col_ = lstart_col_ = kNoColumn;
    age_ = Age::none;
  }
};

}  // namespace

const RecognizerEntry kProcessTableEntry{"process_table", Family::procfs, kPatterns,
                                         [] { return std::unique_ptr<Recognizer>(new ProcessTable); }};

}  // namespace aimem
