// The program a process belongs to, as a key that groups its copies: the
// rows of a process table (families/process_table.cc) and the process a
// failure names (the diagnosis compares them) read the same way.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace aimem::process_name
