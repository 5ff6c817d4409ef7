// The sampler's per-process cache and its shortcuts (src/sources/sampler.cc, top
// of file): a reused pid is a new process, an exec is caught by its new name,
// a command line changed without one by the periodic identity refresh, gone
// processes leave the cache, and a process that did not run (schedstat) is not
// re-read unless something else could have moved its memory. Fixture trees in
// the kernel's formats, written and rewritten by each test; then a real
// sleeping process, and a thread of one, that wake and allocate.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "sources/sampler.h"
#include "sources/task_runs.h"
#include "watch/exporter.h"

namespace aimem::watch {
namespace {

using namespace std::string_literals;

const ProcessSample* find_process(const Sample& s, int pid) {
  for (auto& p : s.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

// A /proc under a temporary root, one process at a time.
struct ProcTree {
  std::string root;
  explicit ProcTree(const std::string& tag) : root(test::temp_dir(tag)) {
    put("proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 500 kB\n");
    put("proc/vmstat", "pgsteal_anon 0\npgsteal_file 10\npswpin 0\npswpout 0\noom_kill 0\n");
  }
  ~ProcTree() { std::filesystem::remove_all(root); }
  void put(const std::string& rel, const std::string& content) const {
    std::string path = root + "/" + rel;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    test::write_file(path, content);  // rewritten in place: a held descriptor sees the new content
  }
  // stat, statm (resident pages), status, cmdline, cgroup of one process.
  void process(int pid, const std::string& comm, uint64_t start, uint64_t resident_pages, const std::string& cmdline,
               const std::string& cgroup, int threads = 1) const {
    std::string d = "proc/" + std::to_string(pid);
    put(d + "/stat", fmt(pid, comm, start));
    put(d + "/statm", "1000 " + std::to_string(resident_pages) + " 10 1 0 100 0\n");
    put(d + "/status", "Name:\t" + comm + "\nTgid:\t" + std::to_string(pid) + "\nPPid:\t1\nThreads:\t" + std::to_string(threads) + "\nVmHWM:\t" +
                           std::to_string(resident_pages * 4) + " kB\nVmRSS:\t" + std::to_string(resident_pages * 4) +
                           " kB\nVmSwap:\t0 kB\n");
    put(d + "/cmdline", cmdline);
    put(d + "/cgroup", "0::" + cgroup + "\n");
  }
  static std::string fmt(int pid, const std::string& comm, uint64_t start) {
    std::string s = std::to_string(pid) + " (" + comm + ") S 1";
    for (int field = 5; field <= 21; ++field) s += " 0";
    return s + " " + std::to_string(start) + " 4096 100\n";  // field 22: starttime
  }
  SamplerOptions options(std::optional<size_t> max_open_files = std::nullopt) const {
    SamplerOptions o;
    o.root = root;
    o.gpus = false;
    o.max_open_files = max_open_files;
    return o;
  }
};

const uint64_t kPage = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));

// Without held files every sample checks the start time: the same pid with
// another start time is another process, read afresh even where its statm is
// byte for byte the old one's; the same start time keeps what was cached.
TEST(SamplerCache, ReusedPidWithAnotherStartTimeIsReRead) {
  ProcTree t("sampler-cache-reuse");
  t.process(42, "python3", 1000, 50, "python3\0-m\0vllm.entrypoints.openai.api_server\0"s, "/a");
  Sampler s(t.options(0));
  Sample x = s.sample();
  ASSERT_TRUE(find_process(x, 42));
  EXPECT_EQ(find_process(x, 42)->role, "vllm");
  EXPECT_EQ(find_process(x, 42)->cgroup, "/a");

  // Same process (same start time): the cached command line stands even
  // though the fixture's changed, as nothing says it exec'd.
  t.put("proc/42/cmdline", "node\0server.js\0"s);
  x = s.sample();
  EXPECT_EQ(find_process(x, 42)->role, "vllm");

  // Pid 42 reused: new start time, same statm, same name.
  t.process(42, "python3", 2000, 50, "node\0server.js\0"s, "/b");
  t.put("proc/42/status", "Name:\tnode\nPPid:\t7\nThreads:\t1\nVmRSS:\t200 kB\n");
  x = s.sample();
  ASSERT_TRUE(find_process(x, 42));
  EXPECT_EQ(find_process(x, 42)->role, "node");
  EXPECT_EQ(find_process(x, 42)->comm, "node");
  EXPECT_EQ(find_process(x, 42)->cgroup, "/b");
  EXPECT_EQ(find_process(x, 42)->ppid, 7);
  EXPECT_EQ(s.cached_processes(), 1u);
}

// exec keeps the start time but changes the name (status Name, stat comm):
// a new name re-reads the command line. A command line that changes under the
// same name (python3 exec'ing python3) is caught by the identity refresh,
// within kIdentityRefresh (300) samples.
TEST(SamplerCache, ExecIsCaughtByItsNewNameOrTheIdentityRefresh) {
  ProcTree t("sampler-cache-exec");
  t.process(77, "bash", 500, 30, "bash\0-c\0run.sh\0"s, "/jobs/1");
  Sampler s(t.options());
  EXPECT_EQ(find_process(s.sample(), 77)->role, "");

  t.process(77, "python3", 500, 90, "python3\0train.py\0"s, "/jobs/1");
  Sample x = s.sample();
  EXPECT_EQ(find_process(x, 77)->comm, "python3");
  EXPECT_EQ(find_process(x, 77)->role, "python");
  EXPECT_EQ(find_process(x, 77)->rss, 90 * kPage);

  t.process(77, "python3", 500, 120, "python3\0-m\0sglang.launch_server\0"s, "/jobs/2");
  x = s.sample();
  EXPECT_EQ(find_process(x, 77)->rss, 120 * kPage);
  EXPECT_EQ(find_process(x, 77)->role, "python");  // same name: not re-read yet
  EXPECT_EQ(find_process(x, 77)->cgroup, "/jobs/2");  // statm moved: the cgroup is re-read with status
  int samples = 0;
  while (find_process(x, 77)->role != "sglang" && samples < 400) x = s.sample(), ++samples;
  EXPECT_EQ(find_process(x, 77)->role, "sglang");
  EXPECT_LE(samples, 300);
}

// A process moved to another cgroup while it sleeps (statm unchanged) is seen
// in its new cgroup within the identity refresh.
TEST(SamplerCache, SleeperMovedToAnotherCgroupIsSeenThere) {
  ProcTree t("sampler-cache-move");
  t.process(90, "worker", 100, 10, "worker\0"s, "/old");
  Sampler s(t.options());
  EXPECT_EQ(find_process(s.sample(), 90)->cgroup, "/old");
  t.put("proc/90/cgroup", "0::/new\n");
  int samples = 0;
  Sample x = s.sample();
  while (find_process(x, 90)->cgroup != "/new" && samples < 400) x = s.sample(), ++samples;
  EXPECT_EQ(find_process(x, 90)->cgroup, "/new");
  EXPECT_LE(samples, 300);
}

TEST(SamplerCache, VanishedPidsAreEvicted) {
  ProcTree t("sampler-cache-evict");
  for (int pid : {10, 11, 12}) t.process(pid, "p" + std::to_string(pid), 100 + pid, 5, "p\0"s, "/");
  for (std::optional<size_t> budget : {std::optional<size_t>(), std::optional<size_t>(0)}) {
    t.process(11, "p11", 111, 5, "p\0"s, "/");
    Sampler s(t.options(budget));
    EXPECT_EQ(s.sample().processes.size(), 3u);
    EXPECT_EQ(s.cached_processes(), 3u);
    std::filesystem::remove_all(t.root + "/proc/11");
    Sample x = s.sample();
    EXPECT_EQ(x.processes.size(), 2u);
    EXPECT_FALSE(find_process(x, 11));
    EXPECT_EQ(s.cached_processes(), 2u);
  }
}

// After a complete walk, the pids handed out since (proc/loadavg's last
// field) are looked up one by one rather than listing proc/: a new process is
// found, a new thread (status Tgid another pid) is not a process. Past 256 new
// pids, or every 20th sample, proc/ is listed.
TEST(SamplerCache, NewPidsAreLookedUpRatherThanListed) {
  ProcTree t("sampler-cache-probe");
  t.put("proc/loadavg", "0.00 0.01 0.05 1/90 50\n");
  t.process(10, "old", 1, 5, "old\0"s, "/");
  Sampler s(t.options());
  s.sample();
  EXPECT_EQ(s.proc_listings(), 1u);
  t.process(51, "new", 9, 5, "python3\0x.py\0"s, "/");
  t.process(52, "new", 9, 5, "python3\0x.py\0"s, "/");
  t.put("proc/52/status", "Name:\tnew\nTgid:\t51\nPid:\t52\nThreads:\t2\nVmRSS:\t20 kB\n");  // a thread of 51
  t.put("proc/loadavg", "0.00 0.01 0.05 1/92 52\n");
  Sample x = s.sample();
  EXPECT_EQ(s.proc_listings(), 1u) << "looked up, not listed";
  ASSERT_TRUE(find_process(x, 51));
  EXPECT_EQ(find_process(x, 51)->role, "python");
  EXPECT_FALSE(find_process(x, 52)) << "a thread is not a process";
  EXPECT_TRUE(find_process(x, 10));
  EXPECT_EQ(s.cached_processes(), 2u);

  t.process(400, "many", 9, 5, "many\0"s, "/");
  t.put("proc/loadavg", "0.00 0.01 0.05 1/92 400\n");  // 348 handed out
  x = s.sample();
  EXPECT_EQ(s.proc_listings(), 2u);
  EXPECT_TRUE(find_process(x, 400));
}

// proc/loadavg speaks of the reader's pid namespace: under a proc/ of
// another (proc/self names another pid) it is not trusted and proc/ is listed
// every sample.
TEST(SamplerCache, LoadavgOfAnotherPidNamespaceIsNotTrusted) {
  ProcTree t("sampler-cache-pidns");
  t.put("proc/loadavg", "0.00 0.01 0.05 1/90 50\n");
  t.process(10, "old", 1, 5, "old\0"s, "/");
  std::filesystem::create_directory_symlink(std::to_string(::getpid() + 1), t.root + "/proc/self");
  Sampler s(t.options());
  for (int i = 0; i < 3; ++i) s.sample();
  EXPECT_EQ(s.proc_listings(), 3u);
  t.process(51, "new", 9, 5, "new\0"s, "/");  // no pid handed out in our namespace: found all the same
  EXPECT_TRUE(find_process(s.sample(), 51));
}

// The schedstat shortcut: an unchanged schedstat (the process did not run) of
// a single-threaded process keeps its memory from the last read, unless the
// host reclaimed, swapped, collapsed or OOM-killed since (proc/vmstat), the
// process has more threads, or its periodic full read is due.
TEST(SamplerCache, SchedstatShortcutAndWhatOverridesIt) {
  ProcTree t("sampler-cache-sched");
  // pid 1000: (1000 + generation) % 20 is 0 first at generation 20, so
  // samples 2..19 are not due for the periodic read.
  t.process(1000, "sleeper", 5, 100, "sleeper\0"s, "/");
  t.put("proc/1000/schedstat", "5000 100 7\n");
  t.process(1001, "threads", 6, 100, "threads\0"s, "/", 2);
  t.put("proc/1001/schedstat", "5000 100 7\n");
  Sampler s(t.options());
  Sample x = s.sample();  // generation 1
  EXPECT_EQ(find_process(x, 1000)->rss, 100 * kPage);

  // Neither ran: the single-threaded one is not re-read, the other is.
  t.process(1000, "sleeper", 5, 200, "sleeper\0"s, "/");
  t.process(1001, "threads", 6, 200, "threads\0"s, "/", 2);
  x = s.sample();  // 2
  EXPECT_EQ(find_process(x, 1000)->rss, 100 * kPage) << "did not run: not re-read";
  EXPECT_EQ(find_process(x, 1001)->rss, 200 * kPage) << "another thread may have run";

  t.put("proc/1000/schedstat", "5100 100 8\n");  // it ran
  x = s.sample();  // 3
  EXPECT_EQ(find_process(x, 1000)->rss, 200 * kPage);
  EXPECT_EQ(find_process(x, 1000)->hwm.value_or(0), std::max<uint64_t>(800 * 1024, 200 * kPage));  // status re-read with statm

  t.process(1000, "sleeper", 5, 150, "sleeper\0"s, "/");
  x = s.sample();  // 4
  EXPECT_EQ(find_process(x, 1000)->rss, 200 * kPage);
  t.put("proc/vmstat", "pgsteal_anon 0\npgsteal_file 11\npswpin 0\npswpout 0\noom_kill 0\n");  // reclaim ran
  x = s.sample();  // 5
  EXPECT_EQ(find_process(x, 1000)->rss, 150 * kPage) << "reclaim may have unmapped its pages";

  t.process(1000, "sleeper", 5, 160, "sleeper\0"s, "/");
  t.put("proc/vmstat", "pgsteal_anon 0\npgsteal_file 11\npswpin 0\npswpout 1\noom_kill 0\n");
  EXPECT_EQ(find_process(s.sample(), 1000)->rss, 160 * kPage) << "swap-out";  // 6

  // Nothing moves from here: the periodic full read (generation 20) still
  // finds a change the shortcut could not see.
  t.process(1000, "sleeper", 5, 170, "sleeper\0"s, "/");
  int samples = 0;
  for (x = s.sample(); find_process(x, 1000)->rss != 170 * kPage && samples < 40; ++samples) x = s.sample();
  EXPECT_EQ(find_process(x, 1000)->rss, 170 * kPage);
  EXPECT_EQ(samples, 13);  // generations 7..19 kept the old value, 20 read it

  // Gone while not running: no longer listed, dropped (on a real proc/ the
  // held schedstat fails to read as well).
  std::filesystem::remove_all(t.root + "/proc/1000");
  EXPECT_FALSE(find_process(s.sample(), 1000));
}

// "0 0 0": the kernel keeps no run counts (sched_info off); nothing is skipped.
TEST(SamplerCache, ZeroSchedstatIsNoEvidence) {
  ProcTree t("sampler-cache-sched-off");
  t.process(1000, "sleeper", 5, 100, "sleeper\0"s, "/");
  t.put("proc/1000/schedstat", "0 0 0\n");
  Sampler s(t.options());
  s.sample();
  t.process(1000, "sleeper", 5, 300, "sleeper\0"s, "/");
  EXPECT_EQ(find_process(s.sample(), 1000)->rss, 300 * kPage);
}

// Reclaim told per memory cgroup (sampler.cc, top of file): in a sample where
// the host's reclaim counters moved, a process that did not run keeps its
// memory when its own cgroup's memory.stat counters of pages leaving or
// charged did not move since they were last read (v1: total_pgpgout,
// total_pgpgin; v2: pgscan, pgsteal, thp_collapse_alloc, anon, file); a
// process in a cgroup whose counters moved, or in the root cgroup, is read in
// full; and the periodic full read still comes. memory.stat in the kernel's
// format (Documentation/admin-guide/cgroup-v1/memory.rst, cgroup-v2.rst),
// values our own. With every cgroup walked (their memory.stat read by the
// walk) and with none (read for the processes).
struct CgroupTree {
  const ProcTree& t;
  int version;
  std::string dir(const std::string& cgroup) const {
    return (version == 1 ? "sys/fs/cgroup/memory" : "sys/fs/cgroup") + (cgroup == "/" ? "" : cgroup);
  }
  // out: pages uncharged or reclaimed; in: pages charged (or collapsed).
  void stat(const std::string& cgroup, uint64_t out, uint64_t in) const {
    std::string o = std::to_string(out), i = std::to_string(in);
    if (version == 1) {
      t.put(dir(cgroup) + "/memory.usage_in_bytes", "12288\n");
      t.put(dir(cgroup) + "/memory.limit_in_bytes", "9223372036854771712\n");
      t.put(dir(cgroup) + "/memory.stat", "cache 4096\nrss 8192\npgpgin " + i + "\npgpgout " + o +
                                              "\ntotal_cache 4096\ntotal_rss 8192\ntotal_pgpgin " + i +
                                              "\ntotal_pgpgout " + o + "\n");
    } else {
      if (cgroup == "/") t.put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
      t.put(dir(cgroup) + "/memory.current", "12288\n");
      t.put(dir(cgroup) + "/memory.max", "max\n");
      t.put(dir(cgroup) + "/memory.stat", "anon 8192\nfile 4096\nshmem 0\npgfault 90\npgscan " + o + "\npgsteal " + o +
                                              "\nthp_collapse_alloc " + i + "\n");
    }
  }
};

void reclaim_told_per_cgroup(int version, bool all_cgroups) {
  ProcTree t("sampler-cache-cgroup-reclaim");
  CgroupTree c{t, version};
  c.stat("/", 100, 100);
  c.stat("/idle", 10, 5);
  c.stat("/busy", 10, 5);
  // Full reads due at generations 20 (pid 1000), 19 (1001) and 18 (1002).
  const std::pair<int, std::string> procs[] = {{1000, "/idle"}, {1001, "/busy"}, {1002, "/"}};
  auto all = [&](uint64_t pages) {
    for (const auto& [pid, cgroup] : procs) t.process(pid, "p" + std::to_string(pid), 5, pages, "sleeper\0"s, cgroup);
  };
  all(100);
  for (const auto& [pid, cgroup] : procs) t.put("proc/" + std::to_string(pid) + "/schedstat", "5000 100 7\n");  // none runs
  uint64_t steal = 10;
  auto reclaim = [&] {  // somewhere on the host
    t.put("proc/vmstat", "pgsteal_anon 0\npgsteal_file " + std::to_string(++steal) + "\npswpin 0\npswpout 0\noom_kill 0\n");
  };
  auto pages = [](const Sample& x, int pid) { return find_process(x, pid)->rss / kPage; };
  SamplerOptions o = t.options();
  o.all_cgroups = all_cgroups;
  Sampler s(o);
  ASSERT_EQ(s.cgroup_version(), version);
  Sample x = s.sample();  // generation 1

  all(200);
  reclaim();
  x = s.sample();  // 2: no cgroup was read before: each process is read in full
  EXPECT_EQ(pages(x, 1000), 200u);
  EXPECT_EQ(pages(x, 1001), 200u);
  EXPECT_EQ(pages(x, 1002), 200u);

  all(300);
  reclaim();
  c.stat("/busy", 11, 5);  // a page left /busy
  x = s.sample();  // 3
  EXPECT_EQ(pages(x, 1000), 200u) << "its cgroup lost no page: not re-read";
  EXPECT_EQ(pages(x, 1001), 300u) << "its cgroup lost a page: re-read";
  EXPECT_EQ(pages(x, 1002), 300u) << "the root cgroup: read as before";

  all(400);
  reclaim();
  c.stat("/idle", 10, 6);  // a page charged to /idle (swapped in by swapoff, or collapsed)
  x = s.sample();  // 4
  EXPECT_EQ(pages(x, 1000), 400u);
  EXPECT_EQ(pages(x, 1001), 300u) << "/busy did not move since the last sample";
  EXPECT_EQ(pages(x, 1002), 400u);

  all(500);
  c.stat("/idle", 11, 6);  // the host's counters stand: no cgroup is looked at
  x = s.sample();  // 5
  EXPECT_EQ(pages(x, 1000), 400u);
  EXPECT_EQ(pages(x, 1002), 400u);
  reclaim();
  x = s.sample();  // 6: /idle moved since it was last read (4), though not since 5
  EXPECT_EQ(pages(x, 1000), 500u);
  EXPECT_EQ(pages(x, 1001), 300u);
  EXPECT_EQ(pages(x, 1002), 500u);

  // The host reclaims at every sample, /idle loses nothing: its periodic full
  // read (generation 20) still finds the change.
  all(700);
  uint64_t generation = 6;
  do {
    reclaim();
    x = s.sample();
    ++generation;
    if (generation < 19) {
      EXPECT_EQ(pages(x, 1001), 300u) << generation;
    }
  } while (pages(x, 1000) != 700 && generation < 40);
  EXPECT_EQ(generation, 20u);
}

TEST(SamplerCache, ReclaimToldPerCgroupV1) { EXPECT_NO_FATAL_FAILURE(reclaim_told_per_cgroup(1, true)); }
TEST(SamplerCache, ReclaimToldPerCgroupV1Unwalked) { EXPECT_NO_FATAL_FAILURE(reclaim_told_per_cgroup(1, false)); }
TEST(SamplerCache, ReclaimToldPerCgroupV2) { EXPECT_NO_FATAL_FAILURE(reclaim_told_per_cgroup(2, true)); }
TEST(SamplerCache, ReclaimToldPerCgroupV2Unwalked) { EXPECT_NO_FATAL_FAILURE(reclaim_told_per_cgroup(2, false)); }

// ---- this machine ---------------------------------------------------------------

// A real process sleeps through samples (the shortcut applies), then wakes,
// maps and touches 64 MiB and sleeps again: the next sample has it. Then a
// thread it starts does the same while the first thread sleeps in join, which
// the main thread's schedstat does not show. Run with the sample scoped to the
// process tree (schedstat) and of the whole host with the BPF task iterator.
void sleeper_that_wakes_and_allocates_is_seen(SamplerOptions o) {
  constexpr size_t kBytes = 64 << 20;
  int go[2], done[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(done), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto touch = [] {
      auto* p = static_cast<char*>(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) _exit(1);
      std::memset(p, 1, kBytes);
    };
    char c;
    if (::read(go[0], &c, 1) != 1) _exit(1);
    touch();
    if (::write(done[1], "1", 1) != 1) _exit(1);
    if (::read(go[0], &c, 1) != 1) _exit(1);
    static int fds[2] = {go[0], done[1]};
    pthread_t th;
    auto body = [](void*) -> void* {
      char c;
      if (::write(fds[1], "2", 1) != 1) _exit(1);  // started: the sampler may look now
      if (::read(fds[0], &c, 1) != 1) _exit(1);
      auto* p = static_cast<char*>(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) _exit(1);
      std::memset(p, 1, kBytes);
      if (::write(fds[1], "3", 1) != 1) _exit(1);
      for (;;) ::pause();
    };
    if (::pthread_create(&th, nullptr, body, nullptr) != 0) _exit(1);
    ::pthread_join(th, nullptr);
    _exit(0);
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      if (pid < 0) return;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{child};
  if (o.root_pid) o.root_pid = child;
  Sampler s(o);
  if (o.task_iterator) {
    if (std::string why = s.task_iterator_problem(); !why.empty() && test::bpf_refused(why)) GTEST_SKIP() << why;
    ASSERT_STREQ(s.run_source(), "bpf") << s.task_iterator_problem();
  }
  const ProcessSample* p = nullptr;
  Sample x;
  for (int i = 0; i < 5; ++i) x = s.sample();
  ASSERT_TRUE(p = find_process(x, child));
  uint64_t before = p->rss;

  char c;
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ASSERT_EQ(::read(done[0], &c, 1), 1);
  x = s.sample();
  ASSERT_TRUE(p = find_process(x, child));
  EXPECT_GE(p->rss, before + kBytes - (1 << 20));
  uint64_t one = p->rss;
  for (int i = 0; i < 3; ++i) x = s.sample();  // asleep again

  ASSERT_EQ(::write(go[1], "g", 1), 1);  // start the thread; it waits
  ASSERT_EQ(::read(done[0], &c, 1), 1);
  for (int i = 0; i < 3; ++i) x = s.sample();  // the main thread ran (pthread_create), then blocks in join
  ASSERT_EQ(::write(go[1], "g", 1), 1);  // the thread allocates
  ASSERT_EQ(::read(done[0], &c, 1), 1);
  x = s.sample();
  ASSERT_TRUE(p = find_process(x, child));
  EXPECT_GE(p->rss, one + kBytes - (1 << 20));
  // Gone: the next sample no longer lists it.
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  x = s.sample();
  EXPECT_EQ(find_process(x, child), nullptr);
  reap.pid = -1;
}

TEST(SamplerLive, SleeperThatWakesAndAllocatesIsSeen) {
  SamplerOptions o;
  o.gpus = false;
  o.root_pid = -1;  // set to the child by the body
  o.all_cgroups = false;
  ASSERT_NO_FATAL_FAILURE(sleeper_that_wakes_and_allocates_is_seen(o));
}

// The same with runs told by the BPF task iterator (src/sources/task_runs.h):
// a sample of the whole host, as aimem watch takes by default. It needs root
// and a build with clang and libbpf-dev (CI has both); elsewhere it is skipped
// with the reason.
TEST(SamplerLive, SleeperThatWakesAndAllocatesIsSeenThroughTheTaskIterator) {
  SamplerOptions o;
  o.gpus = false;
  o.task_iterator = true;
  if (::geteuid() != 0 || !task_runs_built())
    GTEST_SKIP() << "needs root and a build with the BPF task iterator";
  ASSERT_NO_FATAL_FAILURE(sleeper_that_wakes_and_allocates_is_seen(o));
}

// Memory moved into a process that does not run: another process writes
// 16 MiB into its untouched mapping (process_vm_writev faults the pages in
// under the sleeper's mm). None of its threads ran and the host's reclaim
// counters need not move, so only the task walk's page counts tell: the
// very next sample sees the new RSS, not the full read kStatmRefresh (or,
// with the counts, kIdentityRefresh) samples later.
TEST(SamplerLive, MemoryWrittenIntoASleeperIsSeenByThePageCounts) {
  if (::geteuid() != 0 || !task_runs_built()) GTEST_SKIP() << "needs root and a build with the BPF task iterator";
  constexpr size_t kBytes = 16 << 20;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(1);
    if (::write(ready[1], &p, sizeof p) != sizeof p) _exit(1);
    for (;;) ::pause();
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{child};
  void* at = nullptr;
  ASSERT_EQ(::read(ready[0], &at, sizeof at), static_cast<ssize_t>(sizeof at));
  ::close(ready[0]), ::close(ready[1]);
  SamplerOptions o;
  o.gpus = false;
  o.task_iterator = true;
  Sampler s(o);
  if (std::string why = s.task_iterator_problem(); !why.empty() && test::bpf_refused(why)) GTEST_SKIP() << why;
  ASSERT_STREQ(s.run_source(), "bpf") << s.task_iterator_problem();
  Sample x;
  for (int i = 0; i < 3; ++i) x = s.sample();
  const ProcessSample* p = find_process(x, child);
  ASSERT_TRUE(p);
  const uint64_t before = p->rss;

  std::vector<char> bytes(kBytes, 1);
  iovec local{bytes.data(), kBytes}, remote{at, kBytes};
  ASSERT_EQ(::process_vm_writev(child, &local, 1, &remote, 1, 0), static_cast<ssize_t>(kBytes)) << std::strerror(errno);
  x = s.sample();
  ASSERT_TRUE(p = find_process(x, child));
  EXPECT_GE(p->rss, before + kBytes - (1 << 20));
}

// kept_processes (the watch's 50) picks on the cache entries what
// notable_processes picks from the whole sample, in its order: the largest by
// RSS, ties by pid, then every process with a role, however small.
TEST(SamplerCache, KeptProcessesAreNotableProcessesPick) {
  ProcTree t("sampler-cache-kept");
  t.process(10, "a", 100, 50, "a\0"s, "/x");
  t.process(11, "b", 100, 70, "b\0"s, "/x");
  t.process(12, "c", 100, 50, "c\0"s, "/x");
  t.process(13, "d", 100, 50, "d\0"s, "/x");
  t.process(14, "python3", 100, 5, "python3\0train.py\0"s, "/x");
  t.process(15, "e", 100, 90, "e\0"s, "/x");
  t.process(16, "f", 100, 1, "f\0"s, "/x");
  Sampler whole(t.options());
  SamplerOptions o = t.options();
  o.kept_processes = 3;
  Sampler kept(o);
  o.kept_processes = 7;
  Sampler roomy(o);
  auto pids = [](const Sample& x) {
    std::vector<int> v;
    for (const ProcessSample& p : x.processes) v.push_back(p.pid);
    return v;
  };
  for (int round = 0; round < 2; ++round) {
    Sample all = whole.sample();
    ASSERT_EQ(all.processes.size(), 7u);
    std::vector<int> want;
    for (const ProcessSample* p : notable_processes(all, 3)) want.push_back(p->pid);
    std::vector<int> got = pids(kept.sample());
    EXPECT_EQ(got, want);
    const std::vector<int> expected = round == 0 ? std::vector<int>{15, 11, 10, 14} : std::vector<int>{16, 15, 11, 14};
    EXPECT_EQ(got, expected);
    EXPECT_EQ(pids(roomy.sample()), (std::vector<int>{10, 11, 12, 13, 14, 15, 16})) << "no more than kept: all, in pid order";
    t.process(16, "f", 100, 200, "f\0"s, "/x");  // grows past the rest: kept at the next sample
  }
}

// A process whose memory moves at every sample has its status and cgroup
// held open (refresh in sampler.cc): read through them it is still followed
// (a new name shows), they are let go within 2 * kStatmRefresh (20) samples
// once it sleeps, and at once when it exits.
TEST(SamplerCache, BusyProcessStatusHeldOpenStaysFresh) {
  int cmd[2];
  ASSERT_EQ(::pipe(cmd), 0);
  ASSERT_EQ(::fcntl(cmd[0], F_SETFL, O_NONBLOCK), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    char b = 0;
    for (int i = 0; i < 4000 && b != 's'; ++i) {  // 64 KiB more every 5 ms, for 20 s at most
      if (::read(cmd[0], &b, 1) == 1 && b == 'n') ::prctl(PR_SET_NAME, "renamed");
      char* m = static_cast<char*>(std::malloc(64 << 10));
      if (m) std::memset(m, 1, 64 << 10);
      ::usleep(5000);
    }
    for (;;) ::pause();
  }
  SamplerOptions o;
  o.gpus = false;
  o.root_pid = child;
  Sampler s(o);
  const std::string mine = "/proc/" + std::to_string(child) + "/";
  auto held = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      std::string target = std::filesystem::read_symlink(e.path(), ec).string();
      n += target == mine + "status" || target == mine + "cgroup";
    }
    return n;
  };
  auto sample = [&]() -> ProcessSample {
    ::usleep(30000);
    Sample x = s.sample();
    const ProcessSample* p = find_process(x, child);
    return p ? *p : ProcessSample{};
  };
  uint64_t last = 0;
  for (int i = 0; i < 4; ++i) {
    ProcessSample p = sample();
    EXPECT_EQ(p.pid, child);
    EXPECT_GT(p.rss, last) << "sample " << i;
    last = p.rss;
  }
  EXPECT_EQ(held(), 2) << "status and cgroup of a process busy at every sample";
  ASSERT_EQ(::write(cmd[1], "n", 1), 1);
  ::usleep(50000);
  EXPECT_EQ(sample().comm, "renamed") << "read through the held status";
  ASSERT_EQ(::write(cmd[1], "s", 1), 1);
  ::usleep(50000);
  for (int i = 0; i < 45 && held() > 0; ++i) s.sample();
  EXPECT_EQ(held(), 0) << "let go once it sleeps";
  EXPECT_EQ(sample().pid, child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(cmd[0]);
  ::close(cmd[1]);
  s.sample();
  EXPECT_EQ(s.cached_processes(), 0u);
}

}  // namespace
}  // namespace aimem::watch
