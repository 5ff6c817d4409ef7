// The program a process belongs to, as a key that groups its copies: the
// rows of a process table (families/process_table.cc) and the process a
// failure names (the diagnosis compares them) read the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/fact.h"
#include "evidence/line.h"
#include "evidence/sink.h"

namespace aimem::process_name {

// The detail of process_table's facts (one per program of one table).
inline constexpr std::string_view kTableDetail = "process table";

// The detail of a runtime_setting whose `count` is a model's tensor-parallel
// size (vllm.cc): that many worker processes are one model's shards.
inline constexpr std::string_view kTensorParallel = "tensor_parallel_size";

// "ray::LLMRayActor.__init__" -> "LLMRayActor" (Ray's worker titles: the
// actor's class, whatever method it runs); "/usr/bin/python3 train.py --x"
// -> "python3 train.py" (an interpreter is the script it runs);
// "/usr/sbin/mysqld --user=mysql" -> "mysqld"; "[kworker/0:1]" -> "" (a
// kernel thread holds no user memory). Bounded: at most 64 characters.
std::string program(std::string_view command);

// One table of processes as its rows arrive: rows are grouped by program;
// flush() writes one memory_usage fact per program, largest first, at most
// kGroups (`process` the program, `usage` its rows' sum, `sequences` its
// rows, `total` the table's sum, detail kTableDetail), all at the line
// start() was given. Bounded: kMaxPrograms programs; a PID seen twice (a
// series, not a snapshot) drops the table.
class TableBuilder {
 public:
  static constexpr size_t kGroups = 6;
  static constexpr size_t kMaxPrograms = 64;
  static constexpr size_t kMaxPids = 256;

  void start(const Line& line, Family family);
  bool started() const { return at_.has_value(); }
  void add(std::string_view command, uint64_t bytes, std::optional<int64_t> pid);
  void flush(FactSink& out);

 private:
  struct Group {
    std::string name;
    uint64_t bytes = 0;
    uint64_t rows = 0;
  };
  std::optional<Fact> at_;
  std::vector<Group> groups_;
  std::vector<int64_t> pids_;
  bool broken_ = false;
};

}  // namespace aimem::process_name
