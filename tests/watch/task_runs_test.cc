// The BPF task iterator (src/sources/task_runs.h), on this machine's kernel:
// every process is listed once with its threads' run times and context
// switches summed (by the walk's program itself, or from the per-task
// iterator's thread records), kernel threads are not, a sleeping process's
// sums stay while a running one's move, its start time identifies it across
// reads, and the walk's page counts agree with statm as far as the kernel's
// per-CPU counters let them.
// Needs root and a build with clang and libbpf-dev (CI installs both);
// elsewhere skipped, and a build without them is checked to say why.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <functional>

#include "support/test_support.h"
#include "sources/sampler.h"
#include "sources/task_runs.h"

namespace aimem::watch {
namespace {

const ProcessRun* find(const std::vector<ProcessRun>& runs, uint32_t pid) {
  for (auto& r : runs)
    if (r.pid == pid) return &r;
  return nullptr;
}

// What proc/ says of a process's threads: schedstat's first field (the
// scheduler's run time, ns) and status's context switches, summed.
struct ProcSums {
  uint64_t threads = 0, run_ns = 0, switches = 0;
};
ProcSums proc_sums(pid_t pid) {
  ProcSums s;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream sched(e.path() / "schedstat");
    uint64_t run = 0;
    if (!(sched >> run)) continue;
    ++s.threads;
    s.run_ns += run;
    std::ifstream status(e.path() / "status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
        s.switches += std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
  }
  return s;
}

// A child process of two threads, both asleep once this returns.
pid_t sleeping_two_threads() {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  pid_t child = ::fork();
  if (child == 0) {
    std::thread([] {
      for (;;) ::pause();
    }).detach();
    if (::write(ready[1], "1", 1) != 1) _exit(1);
    for (;;) ::pause();
  }
  char c;
  if (child > 0 && ::read(ready[0], &c, 1) != 1) child = -1;
  ::close(ready[0]), ::close(ready[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // both in pause()
  return child;
}

// The sampler uses the iterator only for a sample of the whole live host; a
// scoped sample, or proc/ under another root (a fixture, a host's proc/
// mounted in a container), reads proc/ and says why. Without the build (no
// clang or libbpf-dev) open() says that instead.
TEST(TaskRuns, SamplerSaysWhyItReadsProcInstead) {
  SamplerOptions o;
  o.gpus = false;
  o.task_iterator = true;
  o.root_pid = ::getpid();
  {
    Sampler s(o);
    EXPECT_STREQ(s.run_source(), "schedstat");
    EXPECT_NE(s.task_iterator_problem().find("scoped"), std::string::npos) << s.task_iterator_problem();
  }
  o.root_pid.reset();
  o.root = test::temp_dir("task-runs-root");
  {
    Sampler s(o);
    EXPECT_STREQ(s.run_source(), "schedstat");
    EXPECT_NE(s.task_iterator_problem().find("another root"), std::string::npos) << s.task_iterator_problem();
  }
  std::filesystem::remove_all(o.root);
  if (!task_runs_built()) {
    auto opened = TaskRuns::open();
    EXPECT_FALSE(opened);
    std::string why = test::error_of(opened);
    EXPECT_NE(why.find("clang"), std::string::npos) << why;
  }
}

// Both ways of reading (the walk, which sums in its program; the per-task
// iterator, whose records are summed by the reader) list each process once,
// in pid order, with every thread's run time and context switches in its
// sums, and leave kernel threads out.
class TaskRunsBothWays : public ::testing::TestWithParam<bool> {};

TEST_P(TaskRunsBothWays, ListEveryProcessWithItsThreadsSummed) {
  const bool walk = GetParam();
  if (::geteuid() != 0 || !task_runs_built()) GTEST_SKIP() << "needs root and a build with the BPF task iterator";
  auto opened = TaskRuns::open(TaskRuns::kTable, walk);
  std::string why = test::error_of(opened);
  auto it = opened ? std::move(*opened) : nullptr;
  // A machine that forbids BPF (a container without CAP_BPF, a seccomp
  // filter) or has no kernel BTF is skipped; any other failure (the verifier
  // rejecting the program, a relocation that does not resolve) fails.
  if (!it && test::bpf_refused(why)) GTEST_SKIP() << why;
  ASSERT_NE(it, nullptr) << why;
  if (walk && std::string(it->mode()) != "walk") GTEST_SKIP() << "the kernel has no open-coded task iterator (before 6.7)";

  pid_t child = sleeping_two_threads();
  ASSERT_GT(child, 0);
  // Two threads of this process: one spins on request, one sleeps.
  std::atomic<int> spin{0};
  std::atomic<bool> stop{false};
  std::atomic<pid_t> spinner_tid{0};
  std::thread spinner([&] {
    spinner_tid = ::gettid();
    while (!stop) {
      if (spin.load() == 1) {
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
        while (std::chrono::steady_clock::now() < until) {
        }
        spin = 2;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  // An assertion that ends the test early still stops the thread and the child.
  struct Cleanup {
    std::function<void()> run;
    ~Cleanup() { run(); }
  } cleanup{[&] {
    stop = true;
    if (spinner.joinable()) spinner.join();
    if (child > 0 && ::kill(child, SIGKILL) == 0) ::waitpid(child, nullptr, 0);
  }};
  while (!spinner_tid) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::vector<ProcessRun> a, b;
  ASSERT_TRUE(it->read(a)) << it->why();
  const uint32_t self = static_cast<uint32_t>(::getpid());
  const ProcessRun* c = find(a, static_cast<uint32_t>(child));
  ASSERT_NE(c, nullptr);
  EXPECT_GT(c->start_ns, 0u);
  // Asleep throughout: its sums are proc/'s, to the nanosecond.
  const ProcSums cs = proc_sums(child);
  EXPECT_EQ(c->threads, 2u);
  EXPECT_EQ(cs.threads, 2u);
  EXPECT_EQ(c->run_ns, cs.run_ns);
  EXPECT_EQ(c->switches, cs.switches);
  const ProcessRun* own = find(a, self);
  ASSERT_NE(own, nullptr);
  EXPECT_GE(own->threads, 2u);
  EXPECT_EQ(find(a, 2), nullptr);  // kthreadd (pid 2 on Linux): a kernel thread
  EXPECT_EQ(find(a, 0), nullptr);  // nor the idle task the kernel's list starts from
  EXPECT_EQ(find(a, static_cast<uint32_t>(spinner_tid.load())), nullptr);  // a thread is no process
  for (size_t i = 1; i < a.size(); ++i) EXPECT_LT(a[i - 1].pid, a[i].pid);  // pid order, each once
  const ProcessRun before_child = *c;

  spin = 1;
  while (spin != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The spinner's own run time, read before the process's sum: that sum
  // holds it (and the main thread's), which the leader's alone would not.
  const std::string task = "/proc/self/task/";
  uint64_t spinner_ns = 0, main_ns = 0;
  std::ifstream(task + std::to_string(spinner_tid.load()) + "/schedstat") >> spinner_ns;
  std::ifstream(task + std::to_string(self) + "/schedstat") >> main_ns;
  ASSERT_GT(spinner_ns, 0u);
  ASSERT_TRUE(it->read(b)) << it->why();
  c = find(b, static_cast<uint32_t>(child));
  own = find(b, self);
  ASSERT_NE(c, nullptr);
  ASSERT_NE(own, nullptr);
  EXPECT_GE(own->run_ns, spinner_ns + main_ns);
  EXPECT_EQ(c->run_ns, before_child.run_ns);  // it slept throughout
  EXPECT_EQ(c->switches, before_child.switches);
  EXPECT_EQ(c->start_ns, before_child.start_ns);  // the same process

  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const pid_t reaped = child;
  child = 0;
  ASSERT_TRUE(it->read(b)) << it->why();
  EXPECT_EQ(find(b, static_cast<uint32_t>(reaped)), nullptr);  // reaped: gone from the list

  // A cap on the records kept is reported, not overrun.
  EXPECT_FALSE(it->read(b, 3));
  EXPECT_EQ(b.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(TaskRuns, TaskRunsBothWays, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Walk" : "PerTaskIterator"; });

// The walk (Linux 6.7+, bpf/task_runs.bpf.c's task_walk) lists what the
// kernel's per-task iterator lists, and a table too small for the host is
// replaced by a larger one at the read that finds it short, not truncated.
TEST(TaskRuns, WalkListsWhatThePerTaskIteratorListsAndGrowsItsTable) {
  if (::geteuid() != 0 || !task_runs_built()) GTEST_SKIP() << "needs root and a build with the BPF task iterator";
  auto small = TaskRuns::open(4);
  std::string why = test::error_of(small);
  if (!small && test::bpf_refused(why)) GTEST_SKIP() << why;
  ASSERT_TRUE(small) << why;
  if (std::string((*small)->mode()) != "walk") GTEST_SKIP() << "the kernel has no open-coded task iterator (before 6.7)";
  auto per_task = TaskRuns::open(TaskRuns::kTable, false);
  ASSERT_TRUE(per_task) << test::error_of(per_task);
  EXPECT_STREQ((*per_task)->mode(), "per-task");

  // A process of its own of two threads that sleep throughout: both list
  // it, the same.
  pid_t child = sleeping_two_threads();
  ASSERT_GT(child, 0);
  std::vector<ProcessRun> walked, listed;
  ASSERT_TRUE((*small)->read(walked)) << (*small)->why();
  EXPECT_GT((*small)->table_size(), 4u);  // grown to the host's processes
  EXPECT_GE((*small)->table_size(), walked.size());
  ASSERT_TRUE((*per_task)->read(listed)) << (*per_task)->why();
  for (size_t i = 1; i < walked.size(); ++i) EXPECT_LT(walked[i - 1].pid, walked[i].pid);  // pid order, each once
  const ProcessRun* a = find(walked, static_cast<uint32_t>(child));
  const ProcessRun* b = find(listed, static_cast<uint32_t>(child));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->threads, 2u);
  EXPECT_EQ(a->threads, b->threads);
  EXPECT_EQ(a->start_ns, b->start_ns);
  EXPECT_EQ(a->run_ns, b->run_ns);
  EXPECT_EQ(a->switches, b->switches);
  EXPECT_EQ(find(walked, 2), nullptr);  // kthreadd: a kernel thread
  EXPECT_EQ(find(walked, 0), nullptr);  // not the idle task the kernel's list starts from
  // Processes come and go between the two reads (this machine builds while
  // the test runs): most are in both.
  size_t both = 0;
  for (const ProcessRun& r : walked) both += find(listed, r.pid) != nullptr;
  EXPECT_GE(both * 10, walked.size() * 9) << both << " of " << walked.size();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

// The walk's page counts (TaskRun::pages) against what proc/PID/statm prints
// for the same sleeping process: statm's resident is file + anon + shmem and
// its shared file + shmem (fs/proc/task_mmu.c task_statm). statm sums each
// CPU's unfolded part of the counters (Linux 6.16+), which the walk does not
// read: they agree within the counter's batch, max(32, 2 * CPUs) pages, per
// CPU and counter. On this machine they differ for nearly every process,
// which is why the sampler compares the counts only with their last reading.
// A process's record carries its leader's (kernel threads have none and are
// not listed).
TEST(TaskRuns, WalkPageCountsAreStatmsLessEachCpusUnfoldedPart) {
  if (::geteuid() != 0 || !task_runs_built()) GTEST_SKIP() << "needs root and a build with the BPF task iterator";
  auto opened = TaskRuns::open();
  std::string why = test::error_of(opened);
  if (!opened && test::bpf_refused(why)) GTEST_SKIP() << why;
  ASSERT_TRUE(opened) << why;
  auto& it = *opened;
  if (std::string(it->mode()) != "walk") GTEST_SKIP() << "the kernel has no open-coded task iterator (before 6.7)";

  constexpr size_t kBytes = 8 << 20;  // 2,048 pages: far past any batch's slack on this machine
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto* p = static_cast<char*>(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) _exit(1);
    std::memset(p, 1, kBytes);
    if (::write(ready[1], "1", 1) != 1) _exit(1);
    for (;;) ::pause();
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]), ::close(ready[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // asleep in pause()
  std::thread sleeper([] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); });

  auto statm = [](uint32_t pid, uint64_t& resident, uint64_t& shared) {
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/statm").c_str(), "r");
    if (!f) return false;
    unsigned long long size, r, s;
    bool ok = std::fscanf(f, "%llu %llu %llu", &size, &r, &s) == 3;
    std::fclose(f);
    resident = r, shared = s;
    return ok;
  };
  // Every process's statm just before the walk: those whose statm is the
  // same after it did not allocate in between (below).
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> before;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    uint64_t res, sh;
    const auto pid = static_cast<uint32_t>(std::stoul(name));
    if (statm(pid, res, sh)) before[pid] = {res, sh};
  }
  std::vector<ProcessRun> runs;
  ASSERT_TRUE(it->read(runs)) << it->why();
  const long cpus = std::max(::sysconf(_SC_NPROCESSORS_CONF), 1L);
  const int64_t batch = std::max<int64_t>(32, 2 * cpus);
  const int64_t slack = batch * cpus;  // per counter
  auto pos = [](int64_t v) { return v < 0 ? 0 : v; };  // percpu_counter_read_positive

  const ProcessRun* r = find(runs, static_cast<uint32_t>(child));
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->has_pages, 1u);
  uint64_t resident = 0, shared = 0;
  ASSERT_TRUE(statm(static_cast<uint32_t>(child), resident, shared));
  const int64_t anon = pos(r->pages[1]), file = pos(r->pages[0]), shmem = pos(r->pages[3]);
  EXPECT_GE(anon, static_cast<int64_t>(kBytes / ::sysconf(_SC_PAGESIZE)) - slack);
  EXPECT_LE(std::llabs(static_cast<int64_t>(resident) - (file + anon + shmem)), 3 * slack)
      << "statm resident " << resident << ", counts file " << file << " anon " << anon << " shmem " << shmem;
  EXPECT_LE(std::llabs(static_cast<int64_t>(shared) - (file + shmem)), 2 * slack) << "statm shared " << shared;
  // Read again with the child still asleep: the same counts.
  std::vector<ProcessRun> again;
  ASSERT_TRUE(it->read(again)) << it->why();
  const ProcessRun* r2 = find(again, static_cast<uint32_t>(child));
  ASSERT_NE(r2, nullptr);
  // The same counts, within a batch: the child allocates nothing, but the
  // kernel may still touch its counters from another CPU (khugepaged
  // collapsing its pages into a huge page, reclaim).
  for (size_t k = 0; k < std::size(r->pages); ++k)
    EXPECT_LE(std::llabs(r->pages[k] - r2->pages[k]), slack) << "counter " << k << ": " << r->pages[k] << " then " << r2->pages[k];

  // Every other leader with memory on the host agrees with its statm as far.
  // Only those whose statm did not change across the walk count: on a host
  // running a parallel build or test suite, many processes allocate between
  // the two reads (this test failed once on that alone).
  size_t leaders = 0, within = 0;
  for (const ProcessRun& t : runs) {
    if (!t.has_pages) continue;
    uint64_t res, sh;
    if (!statm(t.pid, res, sh)) continue;  // gone
    auto was = before.find(t.pid);
    if (was == before.end() || was->second != std::make_pair(res, sh)) continue;  // new, or allocating
    ++leaders;
    within += std::llabs(static_cast<int64_t>(res) - (pos(t.pages[0]) + pos(t.pages[1]) + pos(t.pages[3]))) <= 3 * slack;
  }
  EXPECT_GE(leaders, 5u);  // a host has many steady processes: the check is not vacuous
  EXPECT_GE(within * 10, leaders * 9) << within << " of " << leaders;
  sleeper.join();
  // The kernel's per-task iterator (the fallback) reads no counts.
  auto per_task = TaskRuns::open(TaskRuns::kTable, false);
  ASSERT_TRUE(per_task) << test::error_of(per_task);
  ASSERT_TRUE((*per_task)->read(runs)) << (*per_task)->why();
  for (const ProcessRun& t : runs) EXPECT_EQ(t.has_pages, 0u);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace aimem::watch
