// The watch sampler: one Sample of the host, its memory cgroups (v1 or v2),
// its processes and its GPUs, read under a root directory so tests can point
// it at a fixture tree. Built to be called every 100 ms for hours: the cost of
// a sample stays flat (per-process identity is cached and pruned each sample)
// and a wedged GPU driver never stalls it (NVML runs on its own thread with
// deadlines). Used by `aimem run` and `aimem watch`. A sample scoped to a
// cgroup subtree or a process tree reads only the processes in that scope.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sources/live.h"
#include "sources/sample.h"

namespace aimem {
class KubeNames;  // kube_names.h
class DirWatch;   // dir_watch.h
}

namespace aimem::watch {

struct SamplerOptions {
  std::string root = "/";        // /proc and /sys are read under root
  std::optional<int> root_pid;   // only this process and its descendants (max 128 generations deep)
  std::string cgroup;            // only this cgroup subtree ("/aimem-run-123"); "" = see all_cgroups
                                 // (with root_pid too: the tree as linked through the subtree's members)
  bool processes = true;         // per-process data
  bool all_cgroups = true;       // every memory cgroup (bounded: 20000 dirs, depth 32); false: only `cgroup` (or the root)
  bool gpus = true;              // NVML (dlopen; AIMEM_NVML_LIBRARY overrides the path); absent NVML is normal
  size_t max_processes = 20000;
  // Descriptors held open across samples (per-process statm and schedstat,
  // cgroup files); unset: half of RLIMIT_NOFILE. 0 makes every read open its
  // path, where a process's identity is checked by its start time (tests use
  // it: a fixture file, unlike a proc file, still reads once its "process" is gone).
  std::optional<size_t> max_open_files;
  // An unscoped sample (no cgroup, no root_pid) of the live host tells which
  // processes ran, and which exist, from a BPF task iterator (task_runs.h)
  // when it loads, instead of a proc/PID/schedstat read per process and
  // listings of proc/. Off by default; aimem watch turns it on.
  bool task_iterator = false;
  // An unchanged memory cgroup hierarchy is not listed again while inotify
  // reports no cgroup directory made or removed (sampler.cc, "The cgroup
  // listing"). Tests turn it off to check the listing without it.
  bool watch_cgroups = true;
  // 0: every process. Else only the kept_processes largest by RSS and every
  // one with a role or GPU memory, largest first: what notable_processes
  // (watch/exporter.h) would keep of the whole sample, without a record made
  // for each of the others. The watch keeps 50.
  size_t kept_processes = 0;
};

class GpuReader;  // gpu.cc
class TaskRuns;   // task_runs.h
struct ProcessRun;

class Sampler {
 public:
  explicit Sampler(SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  Sample sample();  // time_us, host, cgroups, processes, gpus, gpu_processes (not servers)
  const std::vector<std::string>& warnings() const { return warnings_; }
  int cgroup_version() const { return version_; }        // 1, 2, or 0: no memory controller found
  std::string cgroup_mount() const { return mount_; }    // memory hierarchy's mount, under root
  size_t cached_processes() const { return cache_.size(); }  // for the flat-cost and scope tests
  size_t proc_listings() const { return proc_listings_; }     // times all of proc/ was listed: for the scope tests
  // How runs are told: "bpf" (the task iterator) or "schedstat"; with
  // options.task_iterator and "schedstat", task_iterator_problem() says why.
  const char* run_source() const;
  const std::string& task_iterator_problem() const { return task_runs_why_; }
  // The memory cgroup hierarchy is listed at least this often (samples), even
  // while inotify reports no change: the bound on what it cannot see.
  static constexpr uint64_t kCgroupRelist = 30;
  size_t cgroup_listings() const { return cgroup_listings_; }     // times the hierarchy was listed: for the tests
  bool cgroup_watched() const { return cgroup_watch_ != nullptr; }  // inotify tells when to list it

 private:
  struct Proc;  // per (pid, start time): see sampler.cc
  struct Walk;  // one walk over the processes: see read_processes
  using ProcCache = std::unordered_map<int, std::unique_ptr<Proc>>;
  void find_hierarchy();
  void read_host(HostSample& h);
  void read_cgroups(std::vector<CgroupSample>& out);
  const std::vector<std::string>& list_cgroup(const std::string& dir, const std::string& rel);
  void read_processes(std::vector<ProcessSample>& out, const std::vector<GpuProcessSample>& gpu);
  bool list_processes(Walk& w);
  bool merge_task_runs(Walk& w);
  bool read_process(Walk& w, size_t i);
  std::unique_ptr<Proc> admit(Walk& w, size_t i, int pid, const std::string& dir);
  void refresh(const Walk& w, Proc& p, std::string_view statm, bool ran, bool identity_due);
  void sweep(Walk& w);
  void emit_processes(const Walk& w, std::vector<ProcessSample>& out, const std::vector<GpuProcessSample>& gpu);
  ProcCache::iterator drop(Walk& w, ProcCache::iterator it);
  bool list_cgroup_members(std::vector<int>& pids);
  bool list_tree(std::vector<int>& pids, bool& truncated);
  bool list_proc(std::vector<int>& pids);
  void probe_pids(int first, int last, std::vector<int>& pids);
  void warn(std::string message);
  std::optional<std::string> read_file(const std::string& path);  // through files_

  SamplerOptions opt_;
  std::string proc_;  // root + "/proc"
  int version_ = 0;
  std::string mount_;
  ProcCache cache_;
  struct File {
    int fd;
    uint64_t seen;  // generation
  };
  std::unordered_map<std::string, File> files_;  // host and cgroup files held open
  size_t fd_budget_ = 0, fds_held_ = 0;
  uint64_t generation_ = 0;
  // Sum of the proc/vmstat counters of what can change a sleeping process's
  // resident memory (reclaim, swap, THP collapse, OOM kills): see sampler.cc.
  std::optional<uint64_t> unmapping_now_, unmapping_before_;
  // When they moved, reclaim is told per memory cgroup instead: a process
  // that did not run keeps its memory if its cgroup's memory.stat counters of
  // pages leaving or charged (cgroup_reclaim_mark) did not move. By the
  // cgroup's directory; `read` is the generation its memory.stat was last read.
  struct CgroupMark {
    std::vector<uint64_t> counters;  // empty: the counters were not there
    uint64_t read = 0;
    bool kept = false;  // at `read`: the counters were read before and did not move
  };
  std::unordered_map<std::string, CgroupMark> marks_;
  bool by_cgroup_ = false;  // this sample: the host's counters moved, marks are read
  void mark_cgroup(const std::string& dir, std::string_view stat);
  bool cgroup_kept(const std::string& cgroup);  // a process's cgroup (proc/PID/cgroup): see sampler.cc
  std::string last_pid_;        // proc/loadavg's last pid at the previous walk
  bool own_pid_namespace_ = true;  // proc/ under root is of this process's pid namespace (or a fixture)
  bool complete_walk_ = false;  // every process then had its statm file held
  // The last listing of the hierarchy: each cgroup's (relative path) child
  // directories, walked again while cgroup_watch_ reports no change.
  std::unique_ptr<aimem::DirWatch> cgroup_watch_;
  std::unordered_map<std::string, std::vector<std::string>> cgroup_children_;
  bool cgroups_listed_ = false;
  size_t cgroup_listings_ = 0;
  std::vector<std::string> scope_dirs_;  // with options.cgroup: the subtree's cgroup directories this sample
  int children_files_ = -1;              // proc/PID/task/TID/children exist: 1, do not: 0, not known yet: -1
  size_t proc_listings_ = 0;
  void name_pods(Sample& s);  // Kubernetes names of the cgroups, processes and GPU processes
  std::unique_ptr<aimem::KubeNames> kube_;
  std::unique_ptr<GpuReader> gpu_;
  std::unique_ptr<TaskRuns> task_runs_;
  std::vector<ProcessRun> runs_;  // the last read, kept for its capacity
  // Per process, summed over its threads at the last sample (sigs_, in pid
  // order) and at this one (next_sigs_): see read_processes.
  struct RunSig {
    int pid = 0;
    Proc* proc = nullptr;  // its cache entry, when it stayed in the cache
    uint64_t start = 0, run = 0, switches = 0, threads = 0;
    int64_t pages[4] = {};   // the iterator's page counts (ProcessRun::pages), with has_pages
    bool has_pages = false;
    bool ran = true;  // this sample: the sums moved, or it is new to the table
    bool kept = false;  // this sample: its page counts were read now and last sample, and did not move
  };
  std::vector<RunSig> sigs_, next_sigs_;
  std::string task_runs_why_;
  std::vector<std::string> warnings_;
};

// Role from a command line (argv joined by NUL or spaces): "vllm", "llama-server",
// "ollama", "tgi", "sglang", "python", "node", "java" or "".
std::string role_from_cmdline(std::string_view cmdline);
// memory_cgroup_of (sources/live.h) reads a /proc/PID/cgroup.
using aimem::memory_cgroup_of;

}  // namespace aimem::watch
