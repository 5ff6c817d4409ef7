// Operating-system limits that are not memory but fail the same calls
// (not_memory_failure facts: look-alikes that explain a runtime's "out of
// memory" when the machine had room):
//
// The per-process mapping count (vm.max_map_count, 65530 by default): every
// mmap'd index or segment is one area, and past the count mmap fails with
// ENOMEM, which the JVM reports as "java.lang.OutOfMemoryError: Map failed".
//   ERROR: [1] bootstrap checks failed
//   [1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]   (Elasticsearch, OpenSearch)
//   $ sysctl vm.max_map_count
//   vm.max_map_count = 65530                            (with "Map failed" in the same input)
//   $ cat /proc/sys/vm/max_map_count                    (the value on the next line; the failure in
//   65530                                                pyarrow's words: "Memory mapping file failed:
//                                                        Cannot allocate memory", or an mmap's ENOMEM)
//   $ find /var/lib/influxdb/data -name '*.tsm' | wc -l   (the areas a program maps, counted: mapped files or
//   71342                                                 /proc/PID/maps lines at the limit or past it make
//                                                         any "cannot allocate memory" the count's, as Go's
//                                                         "fatal error: runtime: cannot allocate memory",
//                                                         and the JVM's "unable to create new native thread":
//                                                         a thread's stack is one more area)
// The locked-memory limit (RLIMIT_MEMLOCK, `ulimit -l`; 64 KiB on many
// distributions): io_uring rings, RDMA buffers and mlock fail with ENOMEM past
// it. A small limit (kSmallMemlock or less) shown beside an ENOMEM that names
// io_uring, mlock or RDMA registration:
//   Max locked memory         65536                65536                bytes      (/proc/PID/limits)
// The kernel's pid limit (kernel.pid_max, 32768 by default before systemd
// raised it): every process and thread takes a pid, and past the limit fork
// and clone fail, which bash reports as "fork: Cannot allocate memory":
//   # sysctl kernel.pid_max          # ls -d /proc/[0-9]* | wc -l
//   kernel.pid_max = 32768           32741                       (within 1% of the limit)
// The per-user process and thread count (RLIMIT_NPROC, `ulimit -u`): a new
// thread past it fails with EAGAIN, which the JVM reports as
// "OutOfMemoryError: unable to create new native thread".
//   $ ulimit -u
//   709
//   $ ps -M -u $(whoami) | wc -l        (or ps -eLf | wc -l, ps -L ...)
//        706
// A container's pids limit is the same count (docker inspect's PidsLimit,
// `--pids-limit`), with the PIDS column of `docker stats` as the count in use:
//   pids_limit=4096 mem_limit=4126146560        (also a panel's "container_pid_limit: 512")
//   CONTAINER ID   NAME   CPU %   MEM USAGE / LIMIT     MEM %   NET I/O   BLOCK I/O   PIDS
//   4c1e9a7b2d3f   api    0.41%   538.2MiB / 3.843GiB   13.68%  9.1GB / 8.7GB   12.3MB / 0B   4096
// or the pids controller's files, and CRI-O's setting:
//   $ cat pids.max pids.current          pids_limit = 1024   (crio.conf)
//   1024
//   1024
// The process count is read only where the count of threads in use is shown
// near the limit (nine tenths of it or more), or, with no count shown, the limit is small (4096 or
// less), and only beside a refused thread; the mapping count beside "Map
// failed", or the bootstrap check itself.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"vm.max_map_count", kCompanion},
    {"/proc/sys/vm/max_map_count", kContext},
    {"(Memory mapping file failed|mmap.*(Cannot allocate memory|ENOMEM))", kRegex | kContext},
    {"(Max locked memory|ulimit -l|RLIMIT_MEMLOCK)", kRegex | kContext},
    {"(mlock|ibv_reg_mr|memlock)", kRegex | kContext},
    {"([Cc]annot allocate memory|os error 12|ENOMEM|Out Of Memory allocating)", kRegex | kContext},
    {"(io_uring|[Uu]ringReader)", kRegex | kContext},
    {"pid_limit", kContext},
    {"Map failed", kContext},
    {"ulimit -u", kContext},
    {"max user processes", kContext},  // `ulimit -a`'s row: "max user processes              (-u) 1024"
    {"nlwp", kContext},                // `ps -o nlwp= -p PID`: a process's threads
    {"pid_max", kContext},
    {"fork: Cannot allocate memory", kCompanion},
    {"fork: (retry: )?Resource temporarily unavailable", kRegex | kCompanion},
    {"wc -l", kContext},
    {"^[ \t]*[0-9]+\\s*$", kRegex | kContext},
    {"create new native thread", kContext},
    {"create native thread", kContext},
    {"pids_limit", kContext},
    {"PidsLimit", kContext},
    {"--pids-limit", kContext},
    {"pids.max", kContext},
    {"MEM USAGE / LIMIT", kContext},
    {"[0-9.]+ ?[KMGT]?i?B / [0-9.]+ ?[KMGT]?i?B ", kRegex | kContext},  // a docker stats row
};

constexpr uint64_t kDefaultMapCount = 65530;
constexpr uint64_t kSmallNproc = 4096;
constexpr uint64_t kSmallMemlock = 8 * 1024 * 1024;  // bytes: the distributions' 64 KiB / 8 MiB defaults

class OsLimits final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    source_ = line.source;
    if (auto v = text::after(s, "max virtual memory areas vm.max_map_count [")) {
      if (seen_bootstrap_ || guards::is_advice_line(s)) return;
      seen_bootstrap_ = true;
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.8f;
      auto n = text::parse_u64(*v);
      f.detail = fmt::format("the mapping count limit (vm.max_map_count {}) refused by a start-up check, not memory", n.value_or(0));
      out.add(std::move(f));
      return;
    }
    if (map_count_line(line)) return;
    if (fork_eagain(line, out)) return;
    // The locked-memory limit: /proc/PID/limits' row ("Max locked memory  65536  65536  bytes") or `ulimit -l` (KiB).
    if (auto v = text::after(s, "Max locked memory")) {
      if (auto n = text::parse_u64(text::trim_left(*v))) memlock_ = *n, memlock_line_ = line.number, memlock_text_ = std::string(text::trim(s).substr(0, 120));
      return;
    }
    // An ENOMEM that names io_uring, mlock or RDMA registration, or follows
    // a line that does ("Error while: Creating UringReader" / "... os error 12").
    const bool pinned = text::contains(s, "io_uring") || text::icontains(s, "uringreader") || text::contains(s, "mlock") ||
                        text::contains(s, "ibv_reg_mr") || text::contains(s, "memlock");
    if (pinned) pinned_line_ = line.number;
    if ((text::contains(s, "Cannot allocate memory") || text::contains(s, "os error 12") || text::contains(s, "ENOMEM")) &&
        pinned_line_ && line.number <= pinned_line_ + 3 && !locked_failed_)
      locked_failed_ = line.number;
    if (text::icontains(s, "cannot allocate memory") || text::contains(s, "os error 12") || text::contains(s, "ENOMEM") ||
        text::icontains(s, "out of memory allocating"))  // Redis/KeyDB's zmalloc: "Out Of Memory allocating 98104 bytes!"
      enomem_ = true;
    if (text::contains(s, "create new native thread") || text::contains(s, "create native thread")) {
      if (!thread_failed_) thread_failed_ = line.number;
    }
    std::string_view t = text::trim(s);
    // A container's task-count limit, as docker inspect or the run command
    // shows it ("pids_limit=4096", "\"PidsLimit\": 4096", "--pids-limit 512"),
    // and the PIDS column of docker stats: the same refusal of a new thread
    // as ulimit -u, counted against the container.
    for (std::string_view key : {"pids_limit=", "pids_limit = ", "\"PidsLimit\": ", "PidsLimit:", "--pids-limit=", "--pids-limit ", "pid_limit: "}) {
      if (auto v = text::after(s, key)) {
        if (auto n = text::parse_u64(text::trim_left(*v)); n && *n > 0) {
          nproc_ = n, nproc_line_ = line.number, nproc_text_ = std::string(t.substr(0, 64));
          nproc_is_pids_ = true;
        }
        return;
      }
    }
    if (text::contains(s, "MEM USAGE / LIMIT")) {
      stats_pids_ = text::ends_with(t, "PIDS");
      return;
    }
    if (stats_pids_) {
      // A row: "<id> <name> <cpu>% <usage> / <limit> <mem>% ... <pids>". The
      // first line that is not one ends the table, so a later "3 / 2048"
      // elsewhere in the log is not read as a count of tasks.
      if (text::contains(s, " / ") && text::contains(s, "%")) {
        size_t sp = t.find_last_of(" \t");
        std::string_view last = t.substr(sp == std::string_view::npos ? 0 : sp + 1);
        if (auto n = text::parse_u64(last); n && last.find_first_not_of("0123456789") == std::string_view::npos)
          threads_ = std::max(threads_.value_or(0), *n);
        return;
      }
      stats_pids_ = false;
    }
    // The pids controller's own files, printed by `cat pids.max pids.current`
    // (either order): the limit and the count in use, one number a line.
    if (text::contains(s, "cat ") && text::contains(s, "pids.max") && text::contains(s, "pids.current")) {
      pids_files_ = text::contains(s.substr(0, s.find("pids.current")), "pids.max") ? "mc" : "cm";
      expect_line_ = line.number;
      return;
    }
    if (!pids_files_.empty() && line.number <= expect_line_ + 3 && !t.empty() && platform::is_digit(t[0])) {
      auto n = text::parse_u64(t);
      if (n && t.find_first_not_of("0123456789") == std::string_view::npos) {
        if (pids_files_[0] == 'm') {
          nproc_ = n, nproc_line_ = line.number, nproc_is_pids_ = true;
          nproc_text_ = "pids.max " + std::string(t.substr(0, 20));
        } else {
          threads_ = n;
        }
        pids_files_.erase(0, 1);
        return;
      }
    }
    if (nproc_line(line)) return;
    if (pid_count_line(line)) return;
    // A listing of /proc/PID/task counts threads (below), not mapped areas.
    if (text::contains(s, "wc -l") && !text::contains(s, "/task") &&
        (text::contains(s, "/maps") || text::contains(s, "find ") || text::contains(s, "ls "))) {
      expect_ = Expect::areas;
      expect_line_ = line.number;
      return;
    }
    if (text::contains(s, "wc -l") && (text::contains(s, "ps -M") || text::contains(s, "ps -eLf") || text::contains(s, "ps -L") ||
                                       text::contains(s, "ps -T") || text::contains(s, "/task"))) {
      expect_ = Expect::threads;
      expect_line_ = line.number;
      return;
    }
    if (expect_ != Expect::none && line.number <= expect_line_ + 2 && !t.empty() && platform::is_digit(t[0])) {
      auto n = text::parse_u64(t);
      if (n && t.find_first_not_of("0123456789") == std::string_view::npos) {
        if (expect_ == Expect::nproc) nproc_ = n, nproc_line_ = line.number, nproc_text_ = std::string(t.substr(0, 32));
        else if (expect_ == Expect::map_count) map_count_ = n, map_line_ = line.number, map_time_ = line.time, map_text_ = std::string(t.substr(0, 32));
        else if (expect_ == Expect::areas) areas_ = n;
        else if (expect_ == Expect::pid_max) pid_max_ = n, pid_max_line_ = line.number, pid_max_text_ = std::string(t.substr(0, 32));
        else threads_ = n;
        expect_ = Expect::none;
      }
    }
  }

  void finish(FactSink& out) override {
    // Areas counted at the limit or past it (within half a percent below: the
    // count was taken a moment after the refusal, or a few areas are the
    // loader's): any refusal is the count's.
    // A new thread's stack is a mapping too: the JVM's "unable to create new
    // native thread" with the areas at the count is the same refusal.
    const bool past = map_count_ && areas_ && *areas_ * 1000 >= *map_count_ * 995 && (enomem_ || thread_failed_);
    if ((past || (map_failed_ && map_count_ && *map_count_ <= kDefaultMapCount)) && !seen_bootstrap_) {
      Line at{map_text_, map_line_, map_time_, source_};
      Fact f = make_fact(at, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.7f;
      f.detail = past ? fmt::format("the mapping count limit (vm.max_map_count {}, {} areas to map): mmap failed for the number of areas, not memory",
                                    *map_count_, *areas_)
                      : fmt::format("the mapping count limit (vm.max_map_count {}): mmap failed for the number of areas, not memory", *map_count_);
      out.add(std::move(f));
    }
    if (locked_failed_ && memlock_ && *memlock_ <= kSmallMemlock)
      look_alike(memlock_text_, memlock_line_, 0.75f,
                 fmt::format("the locked-memory limit (RLIMIT_MEMLOCK {} bytes) refusing pinned memory (io_uring, mlock, RDMA), not memory",
                             *memlock_),
                 out);
    // Tasks at the kernel's pid limit (within 1%): fork's ENOMEM ("fork:
    // Cannot allocate memory") or a refused thread is the pid count's.
    if ((enomem_ || thread_failed_) && pid_max_ && threads_ && *threads_ * 100 >= *pid_max_ * 99)
      return look_alike(pid_max_text_, pid_max_line_, 0.8f,
                        fmt::format("the kernel's pid limit (kernel.pid_max {}, {} tasks): fork refused for the number of tasks, not memory",
                                    *pid_max_, *threads_),
                        out);
    // The count in use decides where it is shown; else a small limit does.
    if (thread_failed_ && nproc_ && *nproc_ > 0 && (threads_ ? *threads_ * 10 >= *nproc_ * 9 : *nproc_ <= kSmallNproc)) {
      const char* which = nproc_is_pids_ ? "the container's task limit (pids limit" : "the per-user process limit (ulimit -u";
      look_alike(nproc_text_, nproc_line_, threads_ ? 0.8f : 0.65f,
                 threads_ ? fmt::format("{} {}, {} in use) refusing a new thread, not memory", which, *nproc_, *threads_)
                          : fmt::format("{} {}) refusing a new thread, not memory", which, *nproc_),
                 out);
    }
  }

  // One not_memory_failure fact at the line that showed the limit.
  void look_alike(const std::string& text, uint64_t line, float strength, std::string detail, FactSink& out) const {
    Line at{text, line, {}, source_};
    Fact f = make_fact(at, FactKind::not_memory_failure, Family::runtime);
    f.layer = Layer::not_memory;
    f.strength = strength;
    f.detail = std::move(detail);
    out.add(std::move(f));
  }

 private:
  // The per-user process limit and the threads in use: `ulimit -u` (its
  // value on the next lines), `ulimit -a`'s row (its limit after the flag;
  // "unlimited" is none), a process's own thread count (`ps -o nlwp= -p
  // PID`, or with its "NLWP" header, on the next lines). True when the line is done.
  bool nproc_line(const Line& line) {
    std::string_view s = line.text;
    if (text::contains(s, "ulimit -u")) {
      expect_ = Expect::nproc;
      expect_line_ = line.number;
      return true;
    }
    if (auto v = text::after(s, "max user processes"); v && !guards::is_advice_line(s)) {
      if (auto f = text::after(*v, "(-u)"))
        if (auto n = text::parse_u64(text::trim(*f)); n && *n > 0)
          nproc_ = n, nproc_line_ = line.number, nproc_text_ = std::string(text::trim(s).substr(0, 64));
      return true;
    }
    if (text::contains(s, "ps ") && text::icontains(s, "nlwp")) {
      expect_ = Expect::threads;
      expect_line_ = line.number;
      return true;
    }
    return false;
  }

  // The kernel's pid limit, as sysctl prints it or on the line after a cat
  // of /proc/sys/kernel/pid_max (every task, thread or process, takes one),
  // and all the tasks counted ("ls -d /proc/[0-9]* | wc -l"). True when the
  // line is done.
  bool pid_count_line(const Line& line) {
    std::string_view s = line.text;
    if (auto v = text::after(s, "kernel.pid_max = ")) {
      if (auto n = text::parse_u64(*v); n && *n > 0)
        pid_max_ = n, pid_max_line_ = line.number, pid_max_text_ = std::string(text::trim(s).substr(0, 48));
      return true;
    }
    if (text::contains(s, "/proc/sys/kernel/pid_max")) {
      expect_ = Expect::pid_max;
      expect_line_ = line.number;
      return true;
    }
    if (text::contains(s, "wc -l") && text::contains(s, "/proc/[0-9]")) {
      expect_ = Expect::threads;
      expect_line_ = line.number;
      return true;
    }
    return false;
  }

  // The mapping count's lines: its value (sysctl, or cat's next line), and a
  // refusal in its words ("Map failed", an mmap's ENOMEM). True when the line is done.
  bool map_count_line(const Line& line) {
    std::string_view s = line.text;
    if (auto v = text::after(s, "vm.max_map_count = ")) {
      map_count_ = text::parse_u64(*v);
      map_line_ = line.number;
      map_time_ = line.time;
      map_text_ = std::string(s.substr(0, 200));
      return true;
    }
    if (text::contains(s, "/proc/sys/vm/max_map_count") && text::contains(s, "cat ")) {
      expect_ = Expect::map_count;
      expect_line_ = line.number;
      return true;
    }
    if ((text::contains(s, "Map failed") || text::contains(s, "Memory mapping file failed") ||
         (text::contains(s, "mmap") && (text::contains(s, "Cannot allocate memory") || text::contains(s, "ENOMEM")))) &&
        !map_failed_)
      map_failed_ = line.number;
    return false;
  }

  enum class Expect { none, nproc, threads, map_count, areas, pid_max };
  std::optional<uint64_t> pid_max_;
  uint64_t pid_max_line_ = 0;
  std::string pid_max_text_;
  std::optional<uint64_t> memlock_;
  uint64_t memlock_line_ = 0, locked_failed_ = 0, pinned_line_ = 0;
  std::string memlock_text_;
  bool seen_bootstrap_ = false;
  bool fork_eagain_ = false;

  // The shell's fork refused with EAGAIN ("bash: fork: retry: Resource
  // temporarily unavailable"): a limit on the number of processes or
  // threads, not memory (that is ENOMEM, "fork: Cannot allocate memory").
  // A bare line names no counts: like the failure markers' look-alikes it is
  // of the generic family, an answer only where nothing else failed.
  bool fork_eagain(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (!text::contains(s, "fork: ") || !text::contains(s, "Resource temporarily unavailable")) return false;
    if (fork_eagain_ || guards::is_advice_line(s)) return true;
    fork_eagain_ = true;
    out.add(aimem::look_alike(line, Family::generic, 0.6f,
                              "fork refused for the number of processes or threads (EAGAIN: the user's process limit, the pids "
                              "cgroup or kernel.threads-max), not memory"));
    return true;
  }
  bool nproc_is_pids_ = false;  // the limit is a container's pids limit, not ulimit -u
  bool stats_pids_ = false;     // a docker stats table with its PIDS column
  std::string pids_files_;      // the files `cat` is still to print: 'm' pids.max, 'c' pids.current
  std::optional<uint64_t> map_count_, nproc_, threads_;
  uint64_t map_line_ = 0;
  timeutil::LineTime map_time_{};
  std::string map_text_, nproc_text_;
  const SourceContext* source_ = nullptr;
  bool enomem_ = false;
  std::optional<uint64_t> areas_;  // mapped areas or files counted (wc -l)
  uint64_t map_failed_ = 0, thread_failed_ = 0, nproc_line_ = 0, expect_line_ = 0;
  Expect expect_ = Expect::none;
};

}  // namespace

const RecognizerEntry kOsLimitsEntry{"os_limits", Family::runtime, kPatterns,
                                     [] { return std::unique_ptr<Recognizer>(new OsLimits); }};

}  // namespace aimem
