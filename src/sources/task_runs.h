// Every process on the host in one read: a BPF task iterator
// (bpf/task_runs.bpf.c) that gives each process's run time and context
// switches, summed over its threads, and its start time. The
// watch sampler uses it, when it loads, to tell which processes ran since the
// last sample (and which exist) without reading a proc/PID/schedstat per
// process: with 1,000 sleeping processes that per-process read was most of a
// sample's cost. It needs root (CAP_BPF and CAP_PERFMON), kernel BTF
// (/sys/kernel/btf/vmlinux) and libbpf.so.1; without any of them open() says
// why and the sampler reads /proc as before.
//
// libbpf is dlopen'ed, and only in a short-lived child process: loading
// relocates the program against the kernel's BTF, which libbpf reads whole
// (5 MiB and more), and that peak would stay in aimem watch's VmHWM. The child
// hands the iterator's link back over a socket (SCM_RIGHTS) and exits; each
// read then is one bpf(BPF_ITER_CREATE) and a few read()s, no libbpf.
//
// Two ways to walk (bpf/task_runs.bpf.c). On Linux 6.7+ the program runs once
// per read and walks the task list itself, into a table (an array map) that
// is mapped here: per task that costs a list step, where the kernel's own
// iterator, the fallback on older kernels, looks up each pid and takes a
// reference on its task. The walk sums each process's threads itself (they
// follow their leader in the list) and leaves kernel threads out, so the
// table holds one record per process, in creation order; the per-task
// iterator's thread records are summed here. The table holds `table`
// processes; a read that finds more loads a table twice their number (in a
// child, as above) and reads again.
// The walk also reads each process's resident page counts (ProcessRun::pages),
// which tell the sampler that nothing moved a sleeping process's memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace aimem::watch {

// One process: its live threads' run times and context switches summed (as
// the walk writes it; the per-task iterator's records are summed here).
struct ProcessRun {
  uint32_t pid = 0;        // the thread group (its leader's tid)
  uint32_t threads = 0;    // live threads summed, the leader included
  uint64_t start_ns = 0;   // the leader's start, ns since boot: a reused pid reads differently
  uint64_t run_ns = 0;     // CPU time its threads have run
  uint64_t switches = 0;   // their voluntary + involuntary context switches
  uint32_t has_pages = 0;  // pages was read (the walk, a leader with memory)
  uint32_t reserved = 0;
  // With has_pages, the process's resident page counts as the kernel keeps
  // them (mm->rss_stat[i].count; MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS,
  // MM_SHMEMPAGES): the numbers statm prints less each CPU's unfolded part,
  // less than max(32, 2 * CPUs) pages per CPU (bpf/task_runs.bpf.c). Only
  // compared from one read to the next: statm still gives the values.
  int64_t pages[4] = {};
};
static_assert(sizeof(ProcessRun) == 72, "ProcessRun must match the BPF program's record");

class TaskRuns {
 public:
  // Loads the iterator; an error saying why when it cannot (not built in,
  // no libbpf, no permission, no BTF, another pid namespace).
  static constexpr size_t kTable = 8192;  // processes: 576 KiB of kernel memory
  // walk false: the kernel's per-task iterator even where the walk loads.
  static Result<std::unique_ptr<TaskRuns>> open(size_t table = kTable, bool walk = true);
  ~TaskRuns();
  TaskRuns(const TaskRuns&) = delete;
  TaskRuns& operator=(const TaskRuns&) = delete;

  // Every process on the host but kernel threads, replacing out's contents
  // (pid order, each once). False, with why() set, when the read fails; at
  // most max_processes records are kept (the rest are read and dropped, and
  // the call returns false).
  bool read(std::vector<ProcessRun>& out, size_t max_processes = 1 << 20);
  const std::string& why() const { return why_; }
  // "walk" (the program walks the task list into the table, summed per
  // process) or "per-task" (a record per thread, summed here).
  const char* mode() const { return table_ ? "walk" : "per-task"; }
  size_t table_size() const { return capacity_; }

 private:
  TaskRuns(int link_fd, int map_fd, size_t capacity);
  bool read_walk(std::vector<ProcessRun>& out, size_t max_processes);
  bool read_per_task(std::vector<ProcessRun>& out, size_t max_processes);
  int create_iter();
  void take(TaskRuns& other);  // other's link and table, replacing this one's
  int link_fd_;
  int map_fd_ = -1;                 // the table (walk), or -1
  const ProcessRun* table_ = nullptr;  // mapped, capacity_ records
  size_t capacity_ = 0, mapped_ = 0;
  std::string why_;
  std::vector<char> buf_;  // one read's worth, kept across samples
  std::vector<ProcessRun> scratch_;  // the walk's radix sort, kept across samples
};

bool task_runs_built();  // the BPF program was compiled into this binary

}  // namespace aimem::watch
