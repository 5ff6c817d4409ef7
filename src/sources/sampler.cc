// The watch sampler (see sampler.h). What it reads, all under options.root:
//   host:    proc/meminfo (kB), proc/pressure/memory ("some avg10=.. total=US"),
//            proc/vmstat oom_kill
//   cgroups: the memory hierarchy and every file of each cgroup in it through
//            cgroup_memory.h (CgroupFields::all), which says what they hold
//   processes: proc/PID/schedstat ("RUN_NS WAIT_NS TIMESLICES": the thread
//            group leader's) every sample; statm when that moved (or the
//            process has other threads, or see below); stat (not with the
//            task iterator and statm held), status, cmdline
//            and cgroup when a process is first seen or has changed. Which pids: with a
//            cgroup, the cgroup.procs of each cgroup in its subtree ("PID\n"
//            lines; v1 lists thread group ids too); with only a root pid,
//            proc/PID/task/TID/children of each process in the tree ("PID PID "
//            on one line, no newline; CONFIG_PROC_CHILDREN: without it, all of
//            proc/ is listed); else every proc/PID directory, or, when
//            proc/loadavg's last pid ("0.00 0.01 0.05 1/90 LAST") moved by at
//            most 256 since a complete walk, each pid handed out since (a
//            thread's proc/TID resolves too: told apart by status Tgid).
//   host, for the shortcut below: proc/vmstat pgsteal_anon, pgsteal_file,
//            pgsteal_kswapd, pgsteal_direct, pswpin, pswpout, thp_collapse_alloc
//
// Why the cost stays flat and low: with 1,000 processes a sample is 1,000 file
// reads, so each process keeps its statm and schedstat files open (pread at 0
// regenerates them; once the process is gone the read fails, so a reused pid
// is a new entry) and status (~6 us to generate) is re-read only when statm
// changed: RSS can only move, swap out or exec when the resident/size counts
// in statm move, and VmHWM is max(hiwater, rss). Entries of processes not seen
// in a walk are dropped, so the cache holds only live processes. Cgroup files
// are held open the same way. Open files stay under half of RLIMIT_NOFILE (or
// options.max_open_files); past that, files are opened per read and pid
// identity is checked by start time (stat field 22).
//
// The schedstat shortcut. Since Linux 6.16 statm sums per-CPU counters under a
// lock for each of three counts (~1 us with 1,000 processes, 2 CPUs, and more
// with more CPUs); schedstat is a plain print (~0.4 us). A process none of
// whose threads ran cannot have faulted, mapped, unmapped or exec'd, so with
// one thread and an unchanged schedstat (its run time and its count of times
// put on a CPU) its memory is as last read, unless the kernel moved it from
// outside: reclaim, swap, khugepaged or the OOM reaper, whose proc/vmstat
// counters (read every sample for oom_kill anyway) then disable the shortcut
// for that sample, except where the process's own memory cgroup tells that
// none of its pages went (below). Threads are counted from status, or from proc/PID/task's
// link count when a process ran but statm did not move; a process with more
// than one is read in full, as a thread's runs do not show in the leader's
// schedstat. What the shortcut cannot see (another process writing into it
// with process_vm_writev or userfaultfd, a shared file truncated under its
// mapping, a thread started and ended within one read, a process running on a
// CPU without a tick since the last sample) is bounded: every process gets a
// full statm read at least every kStatmRefresh samples, staggered by pid.
// Its own process is always read in full (it is running while it reads).
//
// Reclaim told per cgroup. On a host where some cgroup hits its limit every
// second, the host's counters move at every sample. Then each memory cgroup's
// memory.stat (read once per sample: the cgroup walk's own read when it made
// one, else the file held open like the other cgroup files; only in samples
// where the host's counters moved) tells whether a page left it or was
// charged to it since it was last read; its sleeping processes keep the
// shortcut when nothing did. The counters, which move whenever a page leaves
// the cgroup or is charged to it:
//   v1 (Documentation/admin-guide/cgroup-v1/memory.rst, 5.2 stat file):
//      total_pgpgin and total_pgpgout, charging and uncharging events (a page
//      reclaimed, freed by the OOM reaper or swapped out is uncharged; one
//      swapped in by swapoff or a huge page khugepaged collapses into is
//      charged), total_swap where swap is accounted.
//   v2 (Documentation/admin-guide/cgroup-v2.rst, memory.stat): pgscan and
//      pgsteal (reclaim scanned, and so may have unmapped, or reclaimed),
//      pswpin and pswpout (6.15+), thp_collapse_alloc, and the anon and file
//      amounts (swap-in, pages freed by the OOM reaper, a file truncated under
//      a mapping), there being no charge event counter in v2.
// A process in the root cgroup, or with no cgroup or memory.stat to read, is
// read in full as before. What this cannot see: a page charged to another
// cgroup (a shared library's page cache first read by another cgroup, pages
// left in the old cgroup of a process moved without them) reclaimed from
// under the process; bounded like the rest by the full read every
// kStatmRefresh samples.
//
// The task iterator (options.task_iterator, a sample of the whole live host,
// task_runs.h). One read lists every task with its run time and context
// switches; summed per process over all its threads, an unchanged sum is the
// shortcut's "did not run" for multi-threaded processes too (a thread started
// and ended between samples shows in the run time of the thread that started
// it), the leaders are the process listing (no proc/ walk, no loadavg probe),
// and the leader's start time tells a reused pid. schedstat is then neither
// held nor read. A pid last sample's table had and this one lacks is a
// process that exited: its entry is dropped by pid, so a sample in which some
// process exited (every one, on a host where anything runs) does not pass
// over the whole cache to find it. How the iterator itself walks the tasks
// (one pass over the kernel's task list on Linux 6.7+): task_runs.h.
//
// Page counts from the walk. On Linux 6.7+ the walk also reads each
// process's resident page counts (file, anon, swap, shmem: the counters
// statm sums), and whatever moves a process's memory from outside (reclaim,
// swap, the OOM reaper, khugepaged, process_vm_writev, a truncated file)
// moves them. A process that did not run and whose counts did not move
// keeps its memory without a statm read, whatever the host's or its
// cgroup's counters say, and the full read every kStatmRefresh samples is
// not made: the counts are a better check than a read every 20 samples
// (all that the 1,000 sleeping processes of bench/watch_vs_node_exporter.sh
// then cost in statm reads). What they do not show: a change smaller than
// the counter's per-CPU batch (max(32, 2 * CPUs) pages), which the kernel
// holds per CPU until it passes the batch (statm sums those since Linux
// 6.16; before, statm did not show them either). The full read at every
// kIdentityRefresh samples bounds that; values always come from statm.
//
// Cached identity: the command line (and the role read from it) is re-read
// when the name changes, which exec does (exec keeps the start time); the
// cgroup with every status read. A sleeping process moved to another cgroup,
// or one that exec'd a program of the same name, is re-read every
// kIdentityRefresh samples (cmdline only if it ran since): cgroup.procs of
// every cgroup each sample to catch moves would cost more than the rest of the
// sample, and moves come almost always at a process's start, with an exec.
//
// A scoped sample (one service's tree or cgroup on a host with 1,000 other
// processes) reads only the scope: listing proc/ and reading the statm of every
// process just to filter them cost 1.5% of a core at 10 Hz.
//
// The cgroup listing. Listing every cgroup directory each sample (opendir and
// readdir of each, most of them unchanged for hours) was half of what the
// cgroups cost. A cgroup directory appears only by mkdir and goes only by
// rmdir (or a rename within the hierarchy), each of which inotify reports to a
// watch on the parent directory (dir_watch.h); so each directory listed is
// watched first, then listed, and while no event came the last listing is
// walked again, each cgroup's files still read every sample (a directory that
// listing did not reach is listed, and watched, when it is first read). A
// cgroup made or removed shows in the next sample, as with a listing. Not seen by inotify:
// a cgroup made through another mount of the hierarchy with its own
// superblock (a mount in another cgroup namespace: the event goes to that
// mount's inodes). The safety net for that, and for anything else missed, is
// a full listing every kCgroupRelist samples whatever inotify said. Without
// inotify (not available, more than kMaxWatchedCgroups directories, a watch
// that could not be added) every sample lists, as before.
//
// The processes kept (options.kept_processes, the watch's store and
// /metrics): the selection is made on the cache entries, so a host's
// thousand processes are not each copied into a record (with its cgroup
// path) only for all but fifty to be thrown away.
#include "sources/sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "core/cgroup_path.h"
#include "sources/cgroup_memory.h"
#include "sources/dir_watch.h"
#include "sources/proc_text.h"
#include "sources/readfile.h"
#include "sources/gpu.h"
#include "sources/kube_names.h"
#include "sources/task_runs.h"

namespace aimem::watch {
namespace {

constexpr size_t kMaxCgroups = 20000;
constexpr int kMaxDepth = 32;
constexpr size_t kMaxTreeDepth = 128;  // generations below root_pid
constexpr uint64_t kStatmRefresh = 20;      // samples: 2 s at 10 Hz
constexpr uint64_t kIdentityRefresh = 300;  // samples: 30 s at 10 Hz
constexpr uint64_t kMaxProbes = 256;        // pids looked up one by one rather than listing proc/
// Watches are the user's, shared with every other program (default limit
// 8192 on older kernels): past this many cgroups, list instead.
constexpr size_t kMaxWatchedCgroups = 4096;

std::string join(std::string_view root, std::string_view path) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  return std::string(root) + std::string(path);
}

bool all_digits(const char* s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

using proc_text::for_each_kv;
using proc_text::kib;
using proc_text::u64;

// Pids in a cgroup.procs ("1\n2\n") or children ("1 2 ") file, appended
// while out has fewer than cap; garbage tokens are skipped.
void append_pids(std::string_view content, std::vector<int>& out, size_t cap) {
  size_t i = 0;
  while (i < content.size() && out.size() < cap) {
    while (i < content.size() && (content[i] == ' ' || content[i] == '\n')) ++i;
    size_t j = i;
    while (j < content.size() && content[j] != ' ' && content[j] != '\n') ++j;
    std::string_view rest;
    auto v = text::parse_u64(content.substr(i, j - i), &rest);
    if (v && rest.empty() && *v > 0 && *v <= 0x7fffffff) out.push_back(static_cast<int>(*v));
    i = j;
  }
}

std::string basename(std::string_view s) {
  size_t slash = s.rfind('/');
  return std::string(slash == std::string_view::npos ? s : s.substr(slash + 1));
}

}  // namespace

// ---- pure parsers -----------------------------------------------------------

std::string role_from_cmdline(std::string_view cmdline) {
  std::vector<std::string_view> args;
  size_t i = 0;
  while (i < cmdline.size() && args.size() < 64) {
    while (i < cmdline.size() && (cmdline[i] == '\0' || text::is_space(cmdline[i]))) ++i;
    size_t j = i;
    while (j < cmdline.size() && cmdline[j] != '\0' && !text::is_space(cmdline[j])) ++j;
    if (j > i) args.push_back(cmdline.substr(i, j - i));
    i = j;
  }
  if (args.empty()) return "";
  std::string exe = basename(args[0]);
  bool python = text::starts_with(exe, "python");
  std::string module, script;
  if (python) {
    for (size_t k = 1; k < args.size(); ++k) {
      if (args[k] == "-m" && k + 1 < args.size()) {
        module = std::string(args[k + 1]);
        break;
      }
      if (args[k] == "-c") break;
      if (!text::starts_with(args[k], "-")) {
        script = basename(args[k]);  // a console script run by the interpreter: python3 /usr/bin/vllm serve
        break;
      }
    }
  }
  auto is = [&](std::string_view name) {
    return exe == name || script == name || module == name || text::starts_with(module, std::string(name) + ".");
  };
  if (is("vllm")) return "vllm";
  if (is("sglang")) return "sglang";
  if (text::starts_with(exe, "llama-server")) return "llama-server";
  if (exe == "ollama" || exe == "ollama_llama_server") return "ollama";
  if (text::starts_with(exe, "text-generation-") || text::starts_with(script, "text-generation-")) return "tgi";
  if (python) return "python";
  if (exe == "node" || exe == "nodejs") return "node";
  if (exe == "java") return "java";
  return "";
}


// ---- the sampler --------------------------------------------------------------

struct Sampler::Proc {
  int pid = 0;
  int fd = -1;         // proc/PID/statm held open (see the top of this file)
  int sched_fd = -1;   // proc/PID/schedstat held open: did it run since the last sample
  int status_fd = -1, cgroup_fd = -1;  // held while its memory moves at every sample (see refresh)
  uint64_t status_read = 0;            // the generation status was last read at
  uint64_t start = 0;  // stat starttime: identity when no file is held
  int ppid = 0;
  int threads = 0;     // Threads: in status (0: not known); the schedstat shortcut needs 1
  std::string comm, role, cgroup, statm, sched;
  bool ran_lately = false;  // schedstat moved since the command line was last read
  bool user = false;  // has an address space (kernel threads do not)
  uint64_t bpf_start = 0;  // the leader's start, from the BPF task iterator
  uint64_t rss = 0;
  std::optional<uint64_t> hwm, swap;
  uint64_t seen = 0, born = 0;  // generations
};

namespace {

// Reads a whole small file through a descriptor kept open across samples when
// the budget allows; "gone" (the process or cgroup disappeared) is nullopt.
std::optional<std::string> pread_all(int fd) {
  std::string out;
  char buf[4096];
  for (off_t off = 0; off < (1 << 20);) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
    if (static_cast<size_t>(n) < sizeof buf) break;  // proc and cgroup files come whole: a short read is the end
  }
  return out;
}

struct StatLine {
  int ppid = 0;
  uint64_t start = 0;
  std::string comm;
};
// proc/PID/stat: "PID (COMM) S PPID ... field 22 starttime"; COMM may hold
// spaces and parentheses, so fields are counted after the last ')'.
std::optional<StatLine> parse_stat(std::string_view s) {
  size_t open = s.find('('), close = s.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  StatLine st;
  st.comm = std::string(s.substr(open + 1, close - open - 1));
  std::string_view rest = s.substr(close + 1);
  int field = 2;  // the ')' ends field 2
  size_t i = 0;
  while (i < rest.size() && field < 22) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t j = rest.find(' ', i);
    if (j == std::string_view::npos) j = rest.size();
    ++field;
    std::string_view tok = rest.substr(i, j - i);
    if (field == 4) st.ppid = static_cast<int>(text::parse_u64(tok).value_or(0));
    if (field == 22) st.start = text::parse_u64(tok).value_or(0);
    i = j;
  }
  if (field < 22) return std::nullopt;
  return st;
}

// What can change a process's resident or swapped memory while none of its
// threads runs: reclaim unmapping its pages (pgsteal_anon and pgsteal_file
// count every reclaimer, memory cgroup limits included; pgsteal_kswapd and
// _direct are their split on kernels before 5.8 that lack them), swap-in by
// swapoff and swap-out (pswpin, pswpout), khugepaged collapsing pages into a
// huge page (thp_collapse_alloc), the OOM reaper (oom_kill). Their sum moves
// when any of them moves; nullopt when none is there (no basis for skipping).
std::optional<uint64_t> unmapping_events(std::string_view vmstat) {
  static constexpr std::string_view kKeys[] = {"pgsteal_anon", "pgsteal_file", "pgsteal_kswapd", "pgsteal_direct",
                                               "pswpin", "pswpout", "thp_collapse_alloc", "oom_kill"};
  std::optional<uint64_t> sum;
  proc_text::for_each_line(vmstat, [&sum](std::string_view line) {
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) return;
    std::string_view key = line.substr(0, sp);
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) return;
    sum = sum.value_or(0) + u64(line.substr(sp + 1)).value_or(0);  // wraps harmlessly: only change is looked at
  });
  return sum;
}

// The memory.stat counters of one cgroup that move when a page leaves it or
// is charged to it (see the top of this file), in a fixed order (an absent
// optional one is UINT64_MAX); empty when the ones needed are not there.
std::vector<uint64_t> cgroup_page_counters(int version, std::string_view stat) {
  static constexpr std::string_view kV1[] = {"total_pgpgin", "total_pgpgout", "total_swap"};
  static constexpr std::string_view kV2[] = {"pgscan", "pgsteal", "anon", "file", "pswpin", "pswpout", "thp_collapse_alloc"};
  const std::string_view* keys = version == 1 ? kV1 : kV2;
  const size_t n = version == 1 ? std::size(kV1) : std::size(kV2), needed = version == 1 ? 2 : 4;
  std::vector<uint64_t> out(n, UINT64_MAX);
  proc_text::for_each_line(stat, [&](std::string_view line) {
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) return;
    std::string_view key = line.substr(0, sp);
    for (size_t k = 0; k < n; ++k)
      if (keys[k] == key) {
        out[k] = u64(line.substr(sp + 1)).value_or(UINT64_MAX);
        break;
      }
  });
  for (size_t k = 0; k < needed; ++k)
    if (out[k] == UINT64_MAX) return {};
  return out;
}

// Of procs (in pid order), the `keep` largest by RSS and every one with a
// role or GPU memory, largest first: what notable_processes (watch/exporter.h)
// picks from the whole sample, picked before any of them is copied.
template <typename P>
void keep_notable(std::vector<const P*>& procs, size_t keep, const std::vector<GpuProcessSample>& gpu) {
  // Ties by pid: notable_processes's stable sort of a sample in pid order.
  auto larger = [](const P* a, const P* b) { return a->rss != b->rss ? a->rss > b->rss : a->pid < b->pid; };
  auto notable = [&gpu](const P* p) {
    if (!p->role.empty()) return true;
    for (const GpuProcessSample& g : gpu)
      if (g.pid == p->pid && g.used > 0) return true;
    return false;
  };
  std::nth_element(procs.begin(), procs.begin() + static_cast<std::ptrdiff_t>(keep), procs.end(), larger);
  procs.erase(std::remove_if(procs.begin() + static_cast<std::ptrdiff_t>(keep), procs.end(),
                             [&notable](const P* p) { return !notable(p); }),
              procs.end());
  std::sort(procs.begin(), procs.end(), larger);
}

std::optional<StatLine> read_stat(const std::string& dir) {
  auto s = read_small_file(dir + "/stat", 4096);
  return s ? parse_stat(*s) : std::nullopt;
}

// proc/PID/status fields the sampler keeps.
void parse_status(std::string_view s, int& ppid, std::string& name, bool& user, uint64_t& rss,
                  std::optional<uint64_t>& hwm, std::optional<uint64_t>& swap, int* threads = nullptr) {
  user = false;
  hwm.reset();
  swap.reset();
  if (threads) *threads = 0;
  for_each_kv(s, [&](std::string_view k, std::string_view v) {
    if (k == "Name") name = std::string(v);
    else if (k == "Threads" && threads) *threads = static_cast<int>(std::min<uint64_t>(u64(v).value_or(0), 1 << 30));
    else if (k == "PPid") ppid = static_cast<int>(u64(v).value_or(0));
    else if (k == "VmRSS") rss = u64(v).value_or(0) * 1024, user = true;
    else if (k == "VmHWM") hwm = kib(v);
    else if (k == "VmSwap") swap = kib(v);
  });
}

}  // namespace

Sampler::Sampler(SamplerOptions options) : opt_(std::move(options)) {
  proc_ = join(opt_.root, "/proc");
  rlimit rl{};
  size_t nofile = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 1024;
  fd_budget_ = opt_.max_open_files.value_or(nofile / 2);
  // proc/loadavg's last pid is of the reader's pid namespace, whatever proc/
  // it is read from: with another namespace's proc/ under root (a container
  // reading the host's without hostPID), where proc/self names another pid,
  // it says nothing about the pids listed there.
  char self[32];
  ssize_t n = ::readlink((proc_ + "/self").c_str(), self, sizeof self - 1);
  if (n > 0 && text::parse_u64(std::string_view(self, static_cast<size_t>(n))) != static_cast<uint64_t>(::getpid()))
    own_pid_namespace_ = false;
  find_hierarchy();
  if (version_ && opt_.watch_cgroups && (opt_.all_cgroups || !opt_.cgroup.empty()))
    cgroup_watch_ = DirWatch::open();  // null: every sample lists
  kube_ = std::make_unique<KubeNames>(opt_.root);
  if (opt_.gpus) gpu_ = std::make_unique<GpuReader>();
  if (opt_.task_iterator) {
    std::string root = opt_.root;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (!opt_.processes || !opt_.cgroup.empty() || opt_.root_pid)
      task_runs_why_ = "the sample is scoped: only its own processes are read";
    else if (root != "/" && !root.empty())
      task_runs_why_ = "proc/ is read under another root";
    else if (!own_pid_namespace_)
      task_runs_why_ = "proc/ is of another pid namespace";
    else
      if (auto opened = TaskRuns::open())
        task_runs_ = std::move(*opened);
      else
        task_runs_why_ = opened.error().message;
  }
}

const char* Sampler::run_source() const { return task_runs_ ? "bpf" : "schedstat"; }

Sampler::~Sampler() {
  for (auto& [pid, p] : cache_)
    for (int fd : {p->fd, p->sched_fd, p->status_fd, p->cgroup_fd})
      if (fd >= 0) ::close(fd);
  for (auto& [path, f] : files_) ::close(f.fd);
}

void Sampler::warn(std::string message) {
  if (std::find(warnings_.begin(), warnings_.end(), message) == warnings_.end()) warnings_.push_back(std::move(message));
}

std::optional<std::string> Sampler::read_file(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    if (fds_held_ >= fd_budget_) return read_small_file(path);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    ++fds_held_;
    it = files_.emplace(path, File{fd, 0}).first;
  }
  it->second.seen = generation_;
  auto content = pread_all(it->second.fd);
  if (!content) {  // the cgroup was removed: forget the file
    ::close(it->second.fd);
    --fds_held_;
    files_.erase(it);
  }
  return content;
}

void Sampler::find_hierarchy() {
  MemoryHierarchy h = find_memory_hierarchy(opt_.root);
  version_ = h.version, mount_ = h.mount;
  if (!version_)
    warn(fmt::format("no memory cgroup hierarchy under {} (not in proc/self/mounts, not at sys/fs/cgroup): cgroups not sampled",
                     opt_.root));
}

Sample Sampler::sample() {
  ++generation_;
  Sample s;
  s.time_us = timeutil::now_us();
  read_host(s.host);
  read_cgroups(s.cgroups);
  // GPUs before processes: which processes hold GPU memory is part of the
  // selection of those kept (options.kept_processes).
  std::optional<GpuReading> reading;
  if (gpu_) {
    std::string problem;
    reading = gpu_->read(problem);
    if (!problem.empty()) warn(problem);
    if (reading) {
      s.gpus = std::move(reading->gpus);
      s.gpu_processes = std::move(reading->processes);
    }
  }
  if (opt_.processes) read_processes(s.processes, s.gpu_processes);
  // Cgroup files not read this time belong to removed cgroups or filtered ones.
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->second.seen == generation_) {
      ++it;
      continue;
    }
    ::close(it->second.fd);
    --fds_held_;
    it = files_.erase(it);
  }
  for (auto& gp : s.gpu_processes) {
    auto it = cache_.find(gp.pid);
    if (it != cache_.end()) {
      gp.cgroup = it->second->cgroup;
    } else if (auto c = read_small_file(fmt::format("{}/{}/cgroup", proc_, gp.pid), 64 << 10)) {
      gp.cgroup = memory_cgroup_of(*c);  // a pid outside the sampled processes (or another container)
    }
    if (!gp.cgroup.empty()) {
      auto info = parse_cgroup_path(gp.cgroup);
      gp.pod_uid = info.pod_uid;
      gp.container_id = info.container_id;
    }
    for (auto& p : s.processes)
      if (p.pid == gp.pid) p.gpu_bytes = p.gpu_bytes.value_or(0) + gp.used;
  }
  name_pods(s);
  return s;
}

void Sampler::name_pods(Sample& s) {
  const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  // One lookup per cgroup path this sample (processes share their cgroup's).
  std::unordered_map<std::string, std::optional<KubeName>> by_path;
  auto names_of = [&](const std::string& path, const std::string& uid, const std::string& id) -> const std::optional<KubeName>& {
    auto it = by_path.find(path);
    if (it == by_path.end()) it = by_path.emplace(path, kube_->lookup(uid, id, now_s)).first;
    return it->second;
  };
  auto apply = [](const std::optional<KubeName>& n, std::string& ns, std::string& pod, std::string& container) {
    if (!n) return;
    ns = n->ns, pod = n->pod, container = n->container;
  };
  for (auto& c : s.cgroups)
    if (!c.pod_uid.empty() || !c.container_id.empty())
      apply(names_of(c.path, c.pod_uid, c.container_id), c.k8s_namespace, c.k8s_pod, c.k8s_container);
  // A cgroup of no pod or container is remembered as such too: a host's
  // thousand processes share a few cgroups, and parsing each one's path at
  // every sample was a quarter of the watch's sampling time.
  for (auto& p : s.processes) {
    if (p.cgroup.empty()) continue;
    auto it = by_path.find(p.cgroup);
    if (it == by_path.end()) {
      auto info = parse_cgroup_path(p.cgroup);
      std::optional<KubeName> name;
      if (!info.pod_uid.empty() || !info.container_id.empty()) name = kube_->lookup(info.pod_uid, info.container_id, now_s);
      it = by_path.emplace(p.cgroup, std::move(name)).first;
    }
    apply(it->second, p.k8s_namespace, p.k8s_pod, p.k8s_container);
  }
  for (auto& gp : s.gpu_processes)
    if (!gp.pod_uid.empty() || !gp.container_id.empty())
      apply(names_of(gp.cgroup, gp.pod_uid, gp.container_id), gp.k8s_namespace, gp.k8s_pod, gp.k8s_container);
}

void Sampler::read_host(HostSample& h) {
  if (auto m = read_file(proc_ + "/meminfo")) {
    const proc_text::Meminfo mi = proc_text::parse_meminfo(*m);
    h.mem_total = mi.total;
    h.mem_available = mi.available;
    h.swap_total = mi.swap_total;
    h.swap_free = mi.swap_free;
    if (!h.mem_total) warn(fmt::format("{}/meminfo has no MemTotal line: host memory not sampled", proc_));
  } else {
    warn(fmt::format("{}/meminfo could not be read: host memory not sampled", proc_));
  }
  if (auto p = read_file(proc_ + "/pressure/memory")) {  // absent before 4.20 or with psi=0: normal
    const proc_text::Psi psi = proc_text::parse_psi(*p);
    h.psi_some_avg10 = psi.some_avg10;
    h.psi_full_avg10 = psi.full_avg10;
    h.psi_some_total_us = psi.some_total_us;
    h.psi_full_total_us = psi.full_total_us;
  }
  unmapping_before_ = unmapping_now_;
  unmapping_now_.reset();
  if (auto v = read_file(proc_ + "/vmstat")) {
    h.oom_kills = proc_text::vmstat_field(*v, "oom_kill");
    unmapping_now_ = unmapping_events(*v);
  }
  by_cgroup_ = opt_.processes && version_ != 0 && unmapping_now_ && unmapping_before_ && *unmapping_now_ != *unmapping_before_;
}

void Sampler::read_cgroups(std::vector<CgroupSample>& out) {
  if (version_ == 0) return;
  std::string start = opt_.cgroup.empty() ? "/" : opt_.cgroup;
  if (start.front() != '/') start.insert(start.begin(), '/');
  while (start.size() > 1 && start.back() == '/') start.pop_back();
  bool walk = !opt_.cgroup.empty() || opt_.all_cgroups;
  size_t visited = 0;
  scope_dirs_.clear();

  static constexpr std::string_view kStat = "/memory.stat";
  const CgroupFileReader read = [this](const std::string& path) {
    auto content = read_file(path);
    if (content && by_cgroup_ && text::ends_with(path, kStat))  // the mark of reclaim per cgroup, from the same read
      mark_cgroup(path.substr(0, path.size() - kStat.size()), *content);
    return content;
  };
  auto read_one = [&](const std::string& dir, const std::string& rel) -> bool {
    CgroupSample c;
    c.path = rel;
    c.version = version_;
    if (!read_cgroup_memory(version_, dir, read, CgroupFields::all, c) && rel != "/") return false;  // removed between listing and reading: gone
    auto info = parse_cgroup_path(rel);
    c.pod_uid = info.pod_uid;
    c.container_id = info.container_id;
    out.push_back(std::move(c));
    return true;
  };

  // The last listing stands while inotify saw no directory come or go (see
  // "The cgroup listing" at the top of this file). Drained every sample,
  // before any listing: an event during the listing lists again next time.
  const bool changed = cgroup_watch_ && cgroup_watch_->changed();
  const bool list = walk && (!cgroup_watch_ || changed || !cgroups_listed_ || generation_ % kCgroupRelist == 0);
  if (list) {
    cgroup_children_.clear();
    ++cgroup_listings_;
    cgroups_listed_ = true;
  }

  // Depth-first, children sorted so the order is stable between samples.
  std::vector<std::pair<std::string, int>> stack{{start, 0}};
  while (!stack.empty() && visited < kMaxCgroups) {
    auto [rel, depth] = stack.back();
    stack.pop_back();
    ++visited;
    std::string dir = rel == "/" ? mount_ : mount_ + rel;
    if (!read_one(dir, rel)) {
      if (rel == start) warn(fmt::format("cgroup {} not found under {}", rel, mount_));
      continue;
    }
    if (!opt_.cgroup.empty()) scope_dirs_.push_back(dir);
    if (!walk || depth >= kMaxDepth) continue;
    // A directory the last listing did not reach (the scope's cgroup made
    // since, one removed and made again between its listing and its read) is
    // listed, and watched, now.
    const std::vector<std::string>* children = nullptr;
    if (!list)
      if (auto it = cgroup_children_.find(rel); it != cgroup_children_.end()) children = &it->second;
    if (!children) children = &list_cgroup(dir, rel);
    // Pushed in descending order: popped in ascending order, stable between samples.
    for (auto c = children->rbegin(); c != children->rend(); ++c) stack.emplace_back((rel == "/" ? "" : rel) + "/" + *c, depth + 1);
  }
  if (visited >= kMaxCgroups) warn(fmt::format("more than {} cgroups under {}: the rest not sampled", kMaxCgroups, mount_));
}

// The child cgroups of dir (rel in the hierarchy), kept for the samples that
// reuse this listing. Watched before it is listed: a child made after the
// listing is then reported, one made before is in it.
const std::vector<std::string>& Sampler::list_cgroup(const std::string& dir, const std::string& rel) {
  if (cgroup_watch_ && (cgroup_children_.size() >= kMaxWatchedCgroups || !cgroup_watch_->add(dir)))
    cgroup_watch_.reset();  // from now on every sample lists
  auto& children = cgroup_children_[rel];
  children = child_cgroups(dir, kMaxCgroups);
  return children;
}

// The counters of pages leaving or charged of the cgroup at dir (its
// memory.stat), against those of the last read (see the top of this file).
void Sampler::mark_cgroup(const std::string& dir, std::string_view stat) {
  if (marks_.size() >= kMaxCgroups)  // removed cgroups: forget those not read in this sample
    std::erase_if(marks_, [&](const auto& m) { return m.second.read != generation_; });
  std::vector<uint64_t> counters = cgroup_page_counters(version_, stat);
  CgroupMark& m = marks_[dir];
  m.kept = !counters.empty() && m.read != 0 && counters == m.counters;
  m.counters = std::move(counters);
  m.read = generation_;
}

// In a sample where the host's counters moved: no page left the memory
// cgroup (a process's, as proc/PID/cgroup names it) nor was charged to it
// since it was last read. Its memory.stat is read at most once per sample.
bool Sampler::cgroup_kept(const std::string& cgroup) {
  if (!by_cgroup_ || cgroup.empty() || cgroup == "/" || cgroup.front() != '/') return false;
  std::string dir = mount_ + cgroup;
  auto it = marks_.find(dir);
  if (it == marks_.end() || it->second.read != generation_) {
    if (auto stat = read_file(dir + "/memory.stat"))
      mark_cgroup(dir, *stat);
    else
      marks_.erase(dir);  // no cgroup there (or not readable): read in full
    it = marks_.find(dir);
    if (it == marks_.end() || it->second.read != generation_) return false;
  }
  return it->second.kept;
}

// What the parts of one walk over the processes (read_processes) share.
struct Sampler::Walk {
  bool members = false;  // listed from the scope's cgroup.procs
  bool bpf = false;      // listed, and runs told, by the task iterator
  bool still = false;    // nothing unmapped since the last sample (see the top of this file)
  int self = 0;          // always read in full: it is running while it reads
  bool complete = true;  // every process listed was read, with its statm held
  size_t dropped = 0, born = 0;  // this sample: whether anyone can have been re-parented
  size_t seen_now = 0;           // distinct entries seen this sample
  std::vector<int> listed;
  std::vector<Proc*> hints;  // with bpf, parallel to listed: the entry of the same process last sample
  std::vector<Proc*> live;   // the entries seen, in listing order
  std::vector<int> gone;     // with bpf: pids of last sample's table that this one lacks
};

Sampler::ProcCache::iterator Sampler::drop(Walk& w, ProcCache::iterator it) {
  ++w.dropped;
  // An entry dropped after it was seen in this walk must not stay in w.live
  // nor in the next table: the sanitizer run found one read after its free
  // under load. Taken out by address now, while it is still this entry's.
  if (Proc* p = it->second.get(); p->seen == generation_) {
    std::erase(w.live, p);
    for (RunSig& e : next_sigs_)
      if (e.proc == p) e.proc = nullptr;
  }
  for (int fd : {it->second->fd, it->second->sched_fd, it->second->status_fd, it->second->cgroup_fd})
    if (fd >= 0) ::close(fd), --fds_held_;
  return cache_.erase(it);
}

// Each process is read in full (statm) at least every kStatmRefresh samples
// (every kIdentityRefresh where the task walk's page counts are read), its
// command line and cgroup every kIdentityRefresh: the bound on what the
// shortcut and the cached identity can miss (see the top of this file).
// Staggered by pid so each sample does an even share.
void Sampler::read_processes(std::vector<ProcessSample>& out, const std::vector<GpuProcessSample>& gpu) {
  Walk w;
  w.self = ::getpid();
  // No reclaim, swap, collapse or OOM kill since the last sample: a process
  // none of whose threads ran kept its memory (see the top of this file).
  w.still = unmapping_now_ && unmapping_before_ && *unmapping_now_ == *unmapping_before_;
  if (!list_processes(w)) return;
  w.live.reserve(w.listed.size());
  for (size_t i = 0; i < w.listed.size(); ++i)
    if (!read_process(w, i)) break;
  complete_walk_ = w.complete && !w.members && !w.bpf;  // the quiet shortcut is for tree and proc/ walks
  if (w.bpf) sigs_.swap(next_sigs_);  // entries it points to were all seen: the sweep keeps them
  sweep(w);
  emit_processes(w, out, gpu);
}

// Which pids to read this sample. The last pid the kernel handed out
// (proc/loadavg's last field): when it did not move, no process or thread was
// created, and the exits show as failed reads of the held statm files, so
// listing /proc (a fifth of the cost of a sample with 1,000 processes) can be
// skipped. A cgroup's members are listed every sample (a process can be moved
// in without a new pid being handed out); a tree or all of proc/ only then.
// False when nothing can be listed.
bool Sampler::list_processes(Walk& w) {
  w.listed.reserve(cache_.size() + 64);
  bool scoped_cgroup = !opt_.cgroup.empty() && version_ != 0;
  w.members = scoped_cgroup && list_cgroup_members(w.listed);
  if (task_runs_ && !w.members) w.bpf = merge_task_runs(w);
  if (w.members || w.bpf) return true;
  std::string last_pid;
  if (auto l = read_file(proc_ + "/loadavg")) last_pid = std::string(text::trim(std::string_view(*l).substr(l->rfind(' ') + 1)));
  bool quiet = own_pid_namespace_ && complete_walk_ && !last_pid.empty() && last_pid == last_pid_;
  auto before = text::parse_u64(last_pid_), now = text::parse_u64(last_pid);
  last_pid_ = last_pid;
  bool tree = opt_.root_pid && !scoped_cgroup && children_files_ != 0;
  // A few pids handed out since a complete walk: the new processes are among
  // them (pids are handed out in increasing order until they wrap), so those
  // are looked up instead of listing proc/, whose readdir instantiates a
  // dentry per process (a third of a sample's cost when processes come and
  // go between samples). proc/ is still listed every kStatmRefresh samples:
  // the bound should pid_max be wrapped all the way round between two samples.
  bool probe = own_pid_namespace_ && !quiet && !tree && complete_walk_ && before && now && *now > *before &&
               *now - *before <= kMaxProbes && generation_ % kStatmRefresh != 0;
  if (quiet) {
    for (auto& [pid, p] : cache_) w.listed.push_back(pid);
  } else if (probe) {
    for (auto& [pid, p] : cache_) w.listed.push_back(pid);
    probe_pids(static_cast<int>(*before) + 1, static_cast<int>(*now), w.listed);
  } else if (bool truncated = false; tree && list_tree(w.listed, truncated)) {
    w.complete = !truncated;
  } else if (!list_proc(w.listed)) {
    return false;
  }
  return true;
}

// The task iterator lists every process with its run time summed over its
// threads, so a process ran since the last sample iff a sum moved.
//
// The sums go into a flat table in pid order (sigs_), compared with the last
// sample's by a merge: a process that did not run is passed over without
// touching its cache entry, whose lookups (hash bucket, node, entry) were
// cache misses that cost more than the iterator itself. False when the
// iterator failed (it is then given up on).
bool Sampler::merge_task_runs(Walk& w) {
  if (task_runs_->read(runs_, opt_.max_processes * 64)) {
    next_sigs_.clear();
    next_sigs_.reserve(runs_.size());
    for (const ProcessRun& r : runs_) {  // in pid order, threads summed, no kernel threads
      RunSig& e = next_sigs_.emplace_back();
      e.pid = static_cast<int>(r.pid), e.start = r.start_ns, e.run = r.run_ns, e.switches = r.switches, e.threads = r.threads;
      if (r.has_pages) std::copy(std::begin(r.pages), std::end(r.pages), e.pages), e.has_pages = true;
    }
    // Merge with the last sample's table: the same pid and start is the same
    // process, and its entry is known; unchanged sums: it did not run.
    size_t j = 0;
    w.hints.reserve(next_sigs_.size());
    for (RunSig& e : next_sigs_) {
      for (; j < sigs_.size() && sigs_[j].pid < e.pid; ++j)
        if (sigs_[j].proc) w.gone.push_back(sigs_[j].pid);  // exited (its entry is dropped by the sweep)
      w.listed.push_back(e.pid);
      if (j < sigs_.size() && sigs_[j].pid == e.pid && sigs_[j].start == e.start && sigs_[j].proc) {
        w.hints.push_back(sigs_[j].proc);
        e.ran = sigs_[j].run != e.run || sigs_[j].switches != e.switches || sigs_[j].threads != e.threads;
        e.kept = e.has_pages && sigs_[j].has_pages && std::equal(std::begin(e.pages), std::end(e.pages), sigs_[j].pages);
      } else {
        w.hints.push_back(nullptr);
        e.ran = true;  // new to the table: read in full
      }
      if (j < sigs_.size() && sigs_[j].pid == e.pid) ++j;  // still listed (a reused pid: read_process drops it)
    }
    for (; j < sigs_.size(); ++j)
      if (sigs_[j].proc) w.gone.push_back(sigs_[j].pid);
    return true;
  }
  warn(fmt::format("the BPF task iterator stopped ({}): runs are told from proc/PID/schedstat", task_runs_->why()));
  task_runs_.reset();
  sigs_.clear();
  return false;
}

// Reads the process w.listed[i] into its cache entry (made when it is new):
// the schedstat shortcut, statm, and status, command line and cgroup when due
// (see the top of this file). The path taken for every process in every
// sample: its fast exits come first, before any allocation. False when the
// bound on processes is reached: the walk stops there.
bool Sampler::read_process(Walk& w, size_t i) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const int pid = w.listed[i];
  // With bpf: the cache entry the merge found (same pid, same start), and
  // whether the process ran. The table keeps the entry only if it stays.
  Proc* hint = w.bpf ? w.hints[i] : nullptr;
  std::string dir_;  // built only off the fast path
  auto dir = [&]() -> const std::string& {
    if (dir_.empty()) dir_ = proc_ + "/" + std::to_string(pid);
    return dir_;
  };
  // statm is read into a stack buffer on the fast path: no allocation per process.
  char buf[256];
  std::optional<std::string_view> statm;
  std::string holder;
  auto hold = [&](std::optional<std::string> s) {
    if (s) holder = std::move(*s), statm = holder;
  };
  auto pread_statm = [&](int fd) {
    ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    if (n > 0) statm = std::string_view(buf, static_cast<size_t>(n));
  };
  const uint64_t turn = static_cast<uint64_t>(pid) + generation_;
  const bool identity_due = turn % kIdentityRefresh == 0;
  bool ran = false;  // schedstat moved since the last sample
  // Its memory stands when no thread ran and nothing moved it from outside:
  // told by the iterator's page counts where the walk reads them (then no
  // periodic statm read either: see the top of this file), else by the
  // host's counters or its cgroup's, with a full read every kStatmRefresh.
  if (hint && !next_sigs_[i].ran && pid != w.self && !identity_due &&
      (next_sigs_[i].kept || (!next_sigs_[i].has_pages && turn % kStatmRefresh != 0 &&
                              (w.still || cgroup_kept(hint->cgroup))))) {
    Proc& p = *hint;
    w.seen_now += p.seen != generation_;
    p.seen = generation_;  // no thread ran, nothing unmapped: rss, hwm and swap stand
    w.live.push_back(&p);
    next_sigs_[i].proc = &p;
    return true;
  }
  auto it = cache_.find(pid);
  if (w.bpf && it != cache_.end() && it->second->bpf_start != next_sigs_[i].start) {
    drop(w, it);  // the pid names another process now
    it = cache_.end();
  }
  if (it != cache_.end()) {
    Proc& p = *it->second;
    bool alive = true;
    if (w.bpf) {
      ran = next_sigs_[i].ran;
      p.threads = static_cast<int>(std::min<uint64_t>(next_sigs_[i].threads, 1 << 30));
    } else if (p.sched_fd >= 0) {
      char sbuf[128];
      ssize_t n = ::pread(p.sched_fd, sbuf, sizeof sbuf, 0);
      if (n <= 0) {
        alive = false;  // gone: the held file fails once the process is reaped
      } else if (std::string_view sched(sbuf, static_cast<size_t>(n)); sched != p.sched) {
        ran = true;
        p.sched.assign(sched);
      } else if (p.threads == 1 && pid != w.self && turn % kStatmRefresh != 0 && !identity_due &&
                 (w.still || cgroup_kept(p.cgroup))) {
        w.seen_now += p.seen != generation_;
        p.seen = generation_;  // did not run, nothing unmapped (on the host or in its cgroup): rss, hwm and swap stand
        w.live.push_back(&p);
        return true;
      }
    }
    if (!alive) {
    } else if (p.fd >= 0) {
      pread_statm(p.fd);
    } else if (auto st = read_stat(dir()); st && st->start == p.start) {
      hold(read_small_file(dir() + "/statm", 4096));
    }
    if (!statm) {  // gone, or the pid now names another process
      drop(w, it);
      it = cache_.end();
    }
  }
  if (it == cache_.end()) {
    if (cache_.size() >= opt_.max_processes) {
      warn(fmt::format("more than {} processes: the rest not sampled", opt_.max_processes));
      w.complete = false;
      return false;
    }
    auto p = admit(w, i, pid, dir());
    if (!p) return true;  // gone
    if (p->fd < 0) w.complete = false;
    if (p->fd >= 0)
      pread_statm(p->fd);
    else
      hold(read_small_file(dir() + "/statm", 4096));
    if (!statm) {
      if (p->fd >= 0) ::close(p->fd), --fds_held_;
      if (p->sched_fd >= 0) ::close(p->sched_fd), --fds_held_;
      return true;
    }
    it = cache_.emplace(pid, std::move(p)).first;
    ++w.born;
  }
  Proc& p = *it->second;
  w.seen_now += p.seen != generation_;
  p.seen = generation_;
  w.live.push_back(&p);
  if (w.bpf) next_sigs_[i].proc = &p;
  // statm: size resident shared text lib data dt, in pages.
  std::string_view sv = *statm;
  text::parse_u64(sv, &sv);
  uint64_t resident = std::min<uint64_t>(text::parse_u64(text::trim_left(sv)).value_or(0), UINT64_MAX / page);
  p.ran_lately |= ran;
  refresh(w, p, *statm, ran, identity_due);
  p.rss = resident * page;
  if (p.hwm && *p.hwm < p.rss) p.hwm = p.rss;
  return true;
}

// A new cache entry for pid, its statm (and, without the task iterator,
// schedstat) held open while the budget allows; null when it is gone.
std::unique_ptr<Sampler::Proc> Sampler::admit(Walk& w, size_t i, int pid, const std::string& dir) {
  auto p = std::make_unique<Proc>();
  p->pid = pid;
  p->born = generation_;
  if (w.bpf) p->bpf_start = next_sigs_[i].start;
  if (fds_held_ < fd_budget_) {
    p->fd = ::open((dir + "/statm").c_str(), O_RDONLY | O_CLOEXEC);
    if (p->fd >= 0) ++fds_held_;
  }
  // stat gives the start time that tells a reused pid when no file is held,
  // and the name and parent until status is read (refresh reads it for every
  // new process). With the task iterator and statm held, the iterator's start
  // and the held file tell a reused pid: no stat (one open, read and close
  // of each process new to a busy host's samples).
  if (!w.bpf || p->fd < 0) {
    auto st = read_stat(dir);
    if (!st) {  // gone
      if (p->fd >= 0) ::close(p->fd), --fds_held_;
      return nullptr;
    }
    p->start = st->start;
    p->ppid = st->ppid;
    p->comm = st->comm;
  }
  if (p->fd >= 0 && fds_held_ < fd_budget_ && !w.bpf) {
    // The baseline is read before statm and status, so a run between
    // them shows as a moved schedstat at the next sample.
    p->sched_fd = ::open((dir + "/schedstat").c_str(), O_RDONLY | O_CLOEXEC);
    if (p->sched_fd >= 0) {
      ++fds_held_;
      char sbuf[128];
      ssize_t n = ::pread(p->sched_fd, sbuf, sizeof sbuf, 0);
      std::string_view sched(sbuf, n > 0 ? static_cast<size_t>(n) : 0);
      if (n > 0 && sched != "0 0 0\n") {  // "0 0 0": sched_info off, nothing to tell runs by
        p->sched.assign(sched);
      } else {
        ::close(p->sched_fd), --fds_held_;
        p->sched_fd = -1;
      }
    }
  }
  return p;
}

// After statm was read: status when statm moved (or the process is new),
// the command line and cgroup when they may have changed or are due, the
// thread count when it ran but statm did not move.
//
// A process whose memory moved at the last sample too (a busy server, aimem
// itself) has its status and cgroup read at every sample: those two are then
// held open like statm (pread at 0 regenerates them), as opening and closing
// them (a path walk and a pid lookup each) cost as much as reading them. They
// are let go at a read that finds its memory unmoved for kStatmRefresh
// samples (not at the first: a server busy every other sample would open and
// close them at each, which cost more than the reads they spared), so a
// sleeping process holds them at most twice that long, and take no more than
// half the budget of open files, which statm and schedstat need first.
void Sampler::refresh(const Walk& w, Proc& p, std::string_view statm, bool ran, bool identity_due) {
  std::string dir_;
  auto dir = [&]() -> const std::string& {
    if (dir_.empty()) dir_ = proc_ + "/" + std::to_string(p.pid);
    return dir_;
  };
  const bool busy = p.fd >= 0 && p.status_read + 1 == generation_;
  auto read_held = [&](int& fd, const char* name, size_t cap) -> std::optional<std::string> {
    if (fd < 0 && busy && fds_held_ + 2 <= fd_budget_ / 2) {
      fd = ::open((dir() + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) ++fds_held_;
    }
    return fd >= 0 ? pread_all(fd) : read_small_file(dir() + "/" + name, cap);
  };
  // The command line changes only by an exec, which the process runs; its
  // cgroup can change without it running (another process moves it).
  auto read_identity = [&] {
    if (p.ran_lately || (p.sched_fd < 0 && !w.bpf)) {
      auto cmd = read_small_file(dir() + "/cmdline", 4096);
      p.role = cmd ? role_from_cmdline(*cmd) : "";
    }
    p.ran_lately = false;
    if (auto cg = read_held(p.cgroup_fd, "cgroup", 64 << 10)) p.cgroup = memory_cgroup_of(*cg);
  };
  if (statm != p.statm || p.born == generation_) {
    std::string name = p.comm;
    if (auto status = read_held(p.status_fd, "status", 16 << 10))
      parse_status(*status, p.ppid, name, p.user, p.rss, p.hwm, p.swap, &p.threads);
    else if (p.born == generation_ && p.comm.empty())  // admitted without stat (see admit), status gone: stat's
      if (auto st = read_stat(dir())) name = st->comm, p.ppid = st->ppid;
    p.status_read = generation_;
    if (name != p.comm || p.born == generation_ || identity_due) {
      if (name != p.comm || p.born == generation_) p.ran_lately = true;  // new, or exec'd: the command line changed
      p.comm = name;
      read_identity();
    } else if (auto cg = read_held(p.cgroup_fd, "cgroup", 64 << 10)) {
      p.cgroup = memory_cgroup_of(*cg);
    }
    p.statm.assign(statm);
  } else {
    if (generation_ - p.status_read >= kStatmRefresh)  // not busy for a while: let go
      for (int* fd : {&p.status_fd, &p.cgroup_fd})
        if (*fd >= 0) ::close(*fd), *fd = -1, --fds_held_;
    if (ran && p.sched_fd >= 0 && !w.bpf) {
      // It ran but its memory did not move: did it start threads, whose runs
      // its own schedstat would not show? proc/PID/task's link count is 2 +
      // threads, one stat() where status would cost ten times more to generate.
      struct stat st{};
      p.threads = ::stat((dir() + "/task").c_str(), &st) == 0 && st.st_nlink > 2
                      ? static_cast<int>(std::min<nlink_t>(st.st_nlink - 2, 1 << 30))
                      : 0;
    }
    if (identity_due) read_identity();
  }
}

// Drops the entries of processes not seen in this walk, and refreshes the
// parent of those that were re-parented.
void Sampler::sweep(Walk& w) {
  // The processes the task iterator no longer lists are dropped by pid; when
  // the entries seen then number the cache, none else went unseen and the
  // pass over every entry (a cache miss each, every sample on a host where
  // any process exits) is skipped.
  for (int pid : w.gone)
    if (auto it = cache_.find(pid); it != cache_.end() && it->second->seen != generation_) drop(w, it);
  if (w.seen_now != cache_.size())
    for (auto it = cache_.begin(); it != cache_.end();)
      it = it->second->seen == generation_ ? std::next(it) : drop(w, it);

  // A process whose parent exited was re-parented: refresh its ppid. Only an
  // exit re-parents, and a parent can only have changed identity if a process
  // is new to the cache: in a sample with neither, the pass is skipped.
  // Siblings come together (pid order, and a parent's children are mostly
  // started in a row): the answer for the last parent looked up is kept.
  int last_ppid = 0;
  bool last_moved = false;
  for (Proc* p : w.live) {
    if (!w.dropped && !w.born) break;
    if (p->ppid <= 0 || p->born == generation_) continue;
    if (p->ppid != last_ppid) {
      // A parent outside the cache is outside the scope (or gone): it is
      // looked for only then, not its child's status read every sample.
      auto parent = cache_.find(p->ppid);
      last_ppid = p->ppid;
      last_moved = parent == cache_.end() ? ::access(fmt::format("{}/{}", proc_, p->ppid).c_str(), F_OK) != 0
                                          : parent->second->born == generation_;
    }
    if (!last_moved) continue;
    std::string name;
    bool user;
    uint64_t rss;
    std::optional<uint64_t> hwm, swap;
    if (auto status = read_small_file(fmt::format("{}/{}/status", proc_, p->pid), 16 << 10))
      parse_status(*status, p->ppid, name, user, rss, hwm, swap);
  }
}

// The walk's processes as samples, in pid order (or the tree's), kernel
// threads and processes outside the cgroup scope left out; with
// options.kept_processes, only those kept, largest first.
void Sampler::emit_processes(const Walk& w, std::vector<ProcessSample>& out, const std::vector<GpuProcessSample>& gpu) {
  std::vector<int> pids;  // the tree, from its root
  if (opt_.root_pid) {
    std::unordered_map<int, std::vector<int>> children;
    for (auto& [pid, p] : cache_) children[p->ppid].push_back(pid);
    if (cache_.count(*opt_.root_pid)) pids.push_back(*opt_.root_pid);
    for (size_t i = 0; i < pids.size() && pids.size() <= cache_.size(); ++i)  // bounded: stale ppids cannot loop it
      if (auto c = children.find(pids[i]); c != children.end())
        for (int child : c->second)
          if (child != *opt_.root_pid) pids.push_back(child);
  }
  std::vector<const Proc*> order;
  if (opt_.root_pid) {
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    order.reserve(pids.size());
    for (int pid : pids) order.push_back(cache_.at(pid).get());
  } else {
    // After the sweep the cache holds just what live lists (with the task
    // iterator, in pid order already): no lookups.
    order.assign(w.live.begin(), w.live.end());
    auto by_pid = [](const Proc* a, const Proc* b) { return a->pid < b->pid; };
    if (!std::is_sorted(order.begin(), order.end(), by_pid)) std::sort(order.begin(), order.end(), by_pid);
    order.erase(std::unique(order.begin(), order.end()), order.end());
  }
  std::string cg = opt_.cgroup;
  while (cg.size() > 1 && cg.back() == '/') cg.pop_back();
  const std::string below = cg + "/";
  std::vector<const Proc*> shown;
  shown.reserve(order.size());
  for (const Proc* p : order) {
    if (!p->user) continue;  // kernel threads own no memory of their own
    if (!cg.empty() && cg != "/" && p->cgroup != cg && !text::starts_with(p->cgroup, below)) continue;
    shown.push_back(p);
  }
  if (opt_.kept_processes && shown.size() > opt_.kept_processes) keep_notable(shown, opt_.kept_processes, gpu);
  out.reserve(shown.size());
  for (const Proc* pp : shown) {
    const Proc& p = *pp;
    ProcessSample& ps = out.emplace_back();
    ps.pid = p.pid;
    ps.ppid = p.ppid;
    ps.comm = p.comm;
    ps.role = p.role;
    ps.cgroup = p.cgroup;
    ps.rss = p.rss;
    ps.hwm = p.hwm;
    ps.swap = p.swap;
  }
}

// Members of the cgroup subtree read_cgroups found this sample, from each
// cgroup's cgroup.procs. Opened per read, not held: v1 keeps the pid list of
// an open file and a read at offset 0 within a second of the last one returns
// that list again, so a held file would never show a new member. False when
// no cgroup.procs could be read (not a cgroupfs): the caller lists proc/. A
// subtree that does not exist has no members.
bool Sampler::list_cgroup_members(std::vector<int>& pids) {
  const size_t cap = 4 * opt_.max_processes;
  bool any = scope_dirs_.empty();
  for (const auto& dir : scope_dirs_) {
    if (pids.size() >= cap) {
      warn(fmt::format("more than {} pids under cgroup {}: the rest not sampled", cap, opt_.cgroup));
      break;
    }
    auto procs = read_small_file(dir + "/cgroup.procs", 4 << 20);
    if (!procs) continue;  // removed since read_cgroups
    any = true;
    append_pids(*procs, pids, cap);
  }
  if (!any) return false;
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return true;
}

// The process tree under root_pid, breadth first through each thread's
// children file, bounded by generations and by 4 * max_processes pids and
// threads. False when the kernel has no children files (learnt once, from a
// root that exists): the caller lists proc/. Sets truncated when a bound cut
// the walk short.
bool Sampler::list_tree(std::vector<int>& pids, bool& truncated) {
  const size_t cap = 4 * opt_.max_processes;
  const std::string root_dir = fmt::format("{}/{}", proc_, *opt_.root_pid);
  if (children_files_ < 0) {
    if (::access(fmt::format("{}/task/{}/children", root_dir, *opt_.root_pid).c_str(), F_OK) == 0)
      children_files_ = 1;
    else if (::access((root_dir + "/stat").c_str(), F_OK) == 0)
      children_files_ = 0;
    else
      return true;  // no such process (yet, or any more): an empty tree
  }
  if (children_files_ == 0) return false;
  pids.push_back(*opt_.root_pid);
  std::vector<size_t> depth{0};
  std::unordered_set<int> seen{*opt_.root_pid};
  std::vector<int> found;
  size_t tasks = 0;
  std::string dir;
  for (size_t i = 0; i < pids.size(); ++i) {
    if (depth[i] >= kMaxTreeDepth) {
      warn(fmt::format("process tree under {} deeper than {} generations: the rest not sampled", *opt_.root_pid,
                       kMaxTreeDepth));
      truncated = true;
      continue;
    }
    dir = fmt::format("{}/{}/task", proc_, pids[i]);
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;  // gone
    while (dirent* e = ::readdir(d)) {
      if (!all_digits(e->d_name)) continue;
      if (++tasks > cap || pids.size() >= cap) {
        warn(fmt::format("more than {} processes or threads under {}: the rest not sampled", cap, *opt_.root_pid));
        truncated = true;
        break;
      }
      auto children = read_small_file(dir + "/" + e->d_name + "/children", 1 << 20);
      if (!children) continue;  // the thread exited
      found.clear();
      append_pids(*children, found, cap);
      for (int child : found)  // one reparented while the walk ran may be listed twice: walked once
        if (pids.size() < cap && seen.insert(child).second) pids.push_back(child), depth.push_back(depth[i] + 1);
    }
    ::closedir(d);
  }
  return true;
}

// The processes among pids first..last that are not cached: each looked up,
// a thread (whose proc/TID resolves too, though proc/ does not list it) told
// apart by its status Tgid.
void Sampler::probe_pids(int first, int last, std::vector<int>& pids) {
  for (int pid = first; pid <= last; ++pid) {
    if (cache_.count(pid)) continue;
    auto status = read_small_file(fmt::format("{}/{}/status", proc_, pid), 16 << 10);
    if (!status) continue;  // already gone
    size_t at = status->find("\nTgid:");
    if (at != std::string::npos && u64(std::string_view(*status).substr(at + 6, 24)) == static_cast<uint64_t>(pid))
      pids.push_back(pid);
  }
}

// Every proc/PID directory. False, with a warning, when proc/ cannot be listed.
bool Sampler::list_proc(std::vector<int>& pids) {
  DIR* d = ::opendir(proc_.c_str());
  if (!d) {
    warn(fmt::format("{} could not be listed: processes not sampled", proc_));
    return false;
  }
  ++proc_listings_;
  while (dirent* e = ::readdir(d))
    if (all_digits(e->d_name) && pids.size() < 4 * opt_.max_processes) pids.push_back(std::atoi(e->d_name));
  ::closedir(d);
  return true;
}

}  // namespace aimem::watch
