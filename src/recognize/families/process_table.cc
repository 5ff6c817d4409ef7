// Who held the memory at one moment: a table of processes with a memory
// column, as a user pastes it beside a failure or a killer prints it.
//
//   PID	MEM(GB)	COMMAND                              Ray's memory monitor (2.2+): its top users,
//   4812	14.61	ray::Worker.__init__                    GB (10^9 bytes), tab- or space-separated
//   PID	MEM	COMMAND   /   9112	11.2GB	ray_Accumulator:alloc()     (Ray before 1.0: the unit on the value)
//   $ ps -eo pid,rss,comm --sort=-rss | head          ps with -o: the header names the columns;
//     PID   RSS COMMAND                                 RSS (also RSZ, "RSS(kB)") in KiB
//    4411 2871304 firefox
//   USER  PID %CPU %MEM    VSZ   RSS TTY STAT START TIME COMMAND      ps aux (BSD columns)
//   app  1234 12.0 31.5 9123456 5210332 ?  Sl  Mar01 80:12 java -jar app.jar
//     PID USER  PR NI    VIRT    RES   SHR S %CPU %MEM   TIME+ COMMAND  top (procps-ng): RES in KiB,
//    9173 app   20  0   12.3g   5.1g  21m S 96.1 65.4  12:01.3 java    or with a unit suffix (m, g, t)
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
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/process_name.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // Headers: a PID or memory column and a command column.
    {"MEM(\\(GB\\))?\\s+COMMAND", kRegex | kContext},
    {"\\b(RSS|RSZ|RES|RSS\\(kB\\))\\s+.*\\b(COMMAND|CMD|COMM)\\s*$", kRegex | kContext},
    // Rows: "<pid> <size> <command>", "<rss> <command>", ps aux's and top's.
    {"^\\s*[0-9]+\\s+[0-9]+(\\.[0-9]+)?([kmgt]|[KMG]B)?\\s+[^\\s0-9]", kRegex | kContext},
    {"^\\s*[0-9]{3,}\\s+[A-Za-z/\\[]", kRegex | kContext},
    {"^[a-z_][a-z0-9_+.-]*\\s+[0-9]+\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9]+\\s+[0-9]+\\s", kRegex | kContext},
    {"^\\s*[0-9]+\\s+[a-z_][a-z0-9_+.-]*\\s+(rt|-?[0-9]+)\\s+-?[0-9]+\\s+[0-9.]+[kmgtp]?\\s+[0-9.]+[kmgtp]?\\s", kRegex | kContext},
};

constexpr size_t kMaxColumns = 24;
constexpr size_t kNoColumn = size_t(-1);

enum class Unit { kib, gb, kib_or_suffix, with_unit };

class ProcessTable final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = text::trim(line.text);
    if (header(line, s, out)) return;
    if (mem_col_ == kNoColumn) return;
    if (line.number != last_line_ + 1 || !row(s)) return flush(out);
    last_line_ = line.number;
  }
  void finish(FactSink& out) override { flush(out); }

 private:
  process_name::TableBuilder table_;
  size_t pid_col_ = kNoColumn, mem_col_ = kNoColumn, cmd_col_ = kNoColumn;
  Unit unit_ = Unit::kib;
  uint64_t last_line_ = 0;

  bool header(const Line& line, std::string_view s, FactSink& out) {
    auto w = platform::words(s, kMaxColumns);
    size_t pid = kNoColumn, mem = kNoColumn, cmd = kNoColumn;
    Unit unit = Unit::kib;
    for (size_t k = 0; k < w.size(); ++k) {
      if (w[k] == "PID") pid = k;
      else if (w[k] == "RSS" || w[k] == "RSZ" || w[k] == "RSS(kB)") mem = k;
      else if (w[k] == "RES") mem = k, unit = Unit::kib_or_suffix;
      else if (w[k] == "MEM(GB)") mem = k, unit = Unit::gb;
      else if (w[k] == "MEM") mem = k, unit = Unit::with_unit;  // Ray before 1.0: "11.2GB"
      else if ((w[k] == "COMMAND" || w[k] == "CMD" || w[k] == "COMM") && k + 1 == w.size()) cmd = k;
    }
    if (mem == kNoColumn || cmd == kNoColumn || mem > cmd) return false;
    flush(out);
    pid_col_ = pid, mem_col_ = mem, cmd_col_ = cmd, unit_ = unit;
    table_.start(line, Family::procfs);
    last_line_ = line.number;
    return true;
  }

  // One row under the header; false when the line is not one.
  bool row(std::string_view s) {
    auto w = platform::words(s, cmd_col_ + 2);
    if (w.size() <= cmd_col_) return false;
    std::optional<uint64_t> bytes = size_of(w[mem_col_]);
    if (!bytes) return false;
    std::optional<int64_t> pid;
    if (pid_col_ != kNoColumn) {
      std::string_view rest;
      auto n = text::parse_u64(w[pid_col_], &rest);
      if (!n || !rest.empty() || *n > (uint64_t(1) << 32)) return false;
      pid = static_cast<int64_t>(*n);
    }
    // The command is the rest of the line from its column on.
    table_.add(s.substr(static_cast<size_t>(w[cmd_col_].data() - s.data())), *bytes, pid);
    return true;
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
      switch (rest[0]) {
        case 'm': mult = double(units::MiB); break;
        case 'g': mult = double(units::GiB); break;
        case 't': mult = double(units::TiB); break;
        default: return std::nullopt;
      }
    }
    return static_cast<uint64_t>(std::llround(*n * mult));
  }

  void flush(FactSink& out) {
    table_.flush(out);
    pid_col_ = mem_col_ = cmd_col_ = kNoColumn;
  }
};

}  // namespace

const RecognizerEntry kProcessTableEntry{"process_table", Family::procfs, kPatterns,
                                         [] { return std::unique_ptr<Recognizer>(new ProcessTable); }};

}  // namespace aimem
