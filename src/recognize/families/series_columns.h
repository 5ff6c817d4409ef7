// Columns of figures under a legend that names them: the general table
// reader of the memory series (memory_series.cc). A paste that samples a
// process again and again prints one row per sample; what the columns are
// is said once, above them, in one of a few ways:
//
//   PID USER  PR NI  VIRT  RES  SHR S %CPU %MEM  TIME+ COMMAND      a header row (top -b; RES "41m", "3.9g"),
//   $ top -b -n1 -p 48728 | tail -1                                   or top's command with its header cut away
//   1874 root 20  0  612m  41m 2204 S    2  0.4 3:12.55 discoverd
//   S0C S1C S0U S1U EC EU OC OU MC MU CCSC CCSU YGC ...              jstat -gc (KB: OU old, MU metaspace used)
//   Timestamp  S0   S1   E     O     M     CCS  YGC ...              jstat -gcutil -t (O: old generation, % used)
//   # memory logger: ts|rss|heapTotal|heapUsed|external, MB          a legend, its separator and unit
//   2019-12-09T08:00:00.112Z|148.21|71.55|52.40|3.12
//   $ while sleep 900; do ps -o pid=,rss=,cmd= -p 31414; done       a ps -o list without header (KiB)
//   31414  412388 pipelinedb: bgworker: trigger [pipeline]
//   $ aws cloudwatch get-metric-statistics --metric-name MemoryUtilization ...   a metric named by the command:
//   2026-09-03T13:20:00+00:00	38.6                                             a time, then its value
//
// Each memory column (RSS, RES, heapUsed, used, OU, MU, a metric named for
// memory) is a series of its own, per process where a PID column says whose
// row it is. Figures carry their unit ("3.9g"), the legend's ("MB"), or the
// tool's (KiB for ps and top, KB for jstat); a percentage is a plain figure.
// Rows that do not split into the legend's columns (the time a loop printed
// between samples, a blank) are skipped; a legend holds for kRows lines.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/line.h"

namespace aimem {

class SeriesColumns {
 public:
  // A sample: the series' key, its value, whether it is bytes.
  using Add = std::function<void(const std::string& key, double value, bool bytes, const Line& line)>;
  // True when the line was a row of a legend's table (a legend itself is
  // noted and left to the other readers).
  bool on_line(const Line& line, const Add& add);

 private:
  struct Column {
    std::string name;
    double unit = 0;  // bytes per unit of a bare figure; 0: a count or a percentage
    bool memory = false;
  };
  bool legend(const Line& line);
  bool row(const Line& line, const Add& add);
  bool ps_list(std::string_view s);
  bool metric_command(std::string_view s);
  bool header_row(std::string_view s);
  bool top_rows_command(std::string_view s);
  bool legend_list(std::string_view s);

  std::vector<Column> columns_;
  char sep_ = ' ';           // ' ' for runs of blanks, or '|', ',', '\t'
  bool rest_joined_ = false;  // the last column takes the rest of the row (ps's cmd)
  bool time_value_ = false;   // rows are "<time> <value>" for one named metric
  size_t pid_ = SIZE_MAX;     // the column that names the process, if any
  uint64_t until_ = 0;        // the legend's last row
  std::string metric_;        // the metric a command named
};

}  // namespace aimem
