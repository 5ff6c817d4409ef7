// The BPF task iterator (src/sources/task_runs.h), on this machine's kernel:
// every task is listed with its thread group, kernel threads are marked, a
// thread that runs has its run time move while a sleeping process's stays,
// a process's start time identifies it across reads, and the walk's page
// counts agree with statm as far as the kernel's per-CPU counters let them.
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
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"
#include "sources/sampler.h"
#include "sources/task_runs.h"

namespace aimem::watch {
namespace {

const TaskRun* find(const std::vector<TaskRun>& runs, uint32_t tid) {
  for (auto& r : runs)
    if (r.tid == tid) return &r;
  return nullptr;
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

TEST(TaskRuns, ListsEveryTaskWithItsProcessAndRunTime) {
  if (::geteuid() != 0 || !task_runs_built()) GTEST_SKIP() << "needs root and a build with the BPF task iterator";
  auto opened = TaskRuns::open();
  std::string why = test::error_of(opened);
  auto it = opened ? std::move(*opened) : nullptr;
  // A machine that forbids BPF (a container without CAP_BPF, a seccomp
  // filter) or has no kernel BTF is skipped; any other failure (the verifier
  // rejecting the program, a relocation that does not resolve) fails.
  if (!it && test::bpf_refused(why)) GTEST_SKIP() << why;
  ASSERT_NE(it, nullptr) << why;

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) ::pause();
  }
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
  while (!spinner_tid) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the child is asleep in pause()

  std::vector<TaskRun> a, b;
  ASSERT_TRUE(it->read(a)) << it->why();
  const uint32_t self = static_cast<uint32_t>(::getpid());
  const TaskRun* c = find(a, static_cast<uint32_t>(child));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->tgid, static_cast<uint32_t>(child));
  EXPECT_EQ(c->kernel, 0u);
  EXPECT_GT(c->start_ns, 0u);
  const TaskRun* t = find(a, static_cast<uint32_t>(spinner_tid.load()));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tgid, self);  // a thread names its process
  size_t own = 0;
  for (auto& r : a) own += r.tgid == self;
  EXPECT_GE(own, 2u);
  const TaskRun* kthreadd = find(a, 2);  // pid 2 is kthreadd on Linux
  ASSERT_NE(kthreadd, nullptr);
  EXPECT_EQ(kthreadd->kernel, 1u);
  for (size_t i = 1; i < a.size(); ++i) EXPECT_LT(a[i - 1].tid, a[i].tid);  // tid order, each once
  const TaskRun before_child = *c, before_spinner = *t;

  spin = 1;
  while (spin != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(it->read(b)) << it->why();
  c = find(b, static_cast<uint32_t>(child));
  t = find(b, static_cast<uint32_t>(spinner_tid.load()));
  ASSERT_NE(c, nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_GT(t->run_ns, before_spinner.run_ns);  // it ran
  EXPECT_EQ(c->run_ns, before_child.run_ns);     // it slept throughout
  EXPECT_EQ(c->switches, before_child.switches);
  EXPECT_EQ(c->start_ns, before_child.start_ns);  // the same process

  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(it->read(b)) << it->why();
  EXPECT_EQ(find(b, static_cast<uint32_t>(child)), nullptr);  // reaped: gone from the list

  // A cap on the records kept is reported, not overrun.
  EXPECT_FALSE(it->read(b, 3));
  EXPECT_EQ(b.size(), 3u);
  stop = true;
  spinner.join();
}

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

  // A process of its own that sleeps throughout: both list it, the same.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<TaskRun> walked, listed;
  ASSERT_TRUE((*small)->read(walked)) << (*small)->why();
  EXPECT_GT((*small)->table_size(), 4u);  // grown to the host's tasks
  EXPECT_GE((*small)->table_size(), walked.size());
  ASSERT_TRUE((*per_task)->read(listed)) << (*per_task)->why();
  for (size_t i = 1; i < walked.size(); ++i) EXPECT_LT(walked[i - 1].tid, walked[i].tid);  // tid order, each once
  const TaskRun* a = find(walked, static_cast<uint32_t>(child));
  const TaskRun* b = find(listed, static_cast<uint32_t>(child));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->tgid, b->tgid);
  EXPECT_EQ(a->start_ns, b->start_ns);
  EXPECT_EQ(a->run_ns, b->run_ns);
  EXPECT_EQ(a->switches, b->switches);
  const TaskRun* kthreadd = find(walked, 2);
  ASSERT_NE(kthreadd, nullptr);
  EXPECT_EQ(kthreadd->kernel, 1u);
  EXPECT_EQ(find(walked, 0), nullptr);  // not the idle task the kernel's list starts from
  // Tasks come and go between the two reads (this machine builds while the
  // test runs): most are in both.
  size_t both = 0;
  for (const TaskRun& r : walked) both += find(listed, r.tid) != nullptr;
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
// Only leaders with memory carry them: not threads, not kernel threads.
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

  std::vector<TaskRun> runs;
  ASSERT_TRUE(it->read(runs)) << it->why();
  auto statm = [](uint32_t pid, uint64_t& resident, uint64_t& shared) {
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/statm").c_str(), "r");
    if (!f) return false;
    unsigned long long size, r, s;
    bool ok = std::fscanf(f, "%llu %llu %llu", &size, &r, &s) == 3;
    std::fclose(f);
    resident = r, shared = s;
    return ok;
  };
  const long cpus = std::max(::sysconf(_SC_NPROCESSORS_CONF), 1L);
  const int64_t batch = std::max<int64_t>(32, 2 * cpus);
  const int64_t slack = batch * cpus;  // per counter
  auto pos = [](int64_t v) { return v < 0 ? 0 : v; };  // percpu_counter_read_positive

  const TaskRun* r = find(runs, static_cast<uint32_t>(child));
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
  std::vector<TaskRun> again;
  ASSERT_TRUE(it->read(again)) << it->why();
  const TaskRun* r2 = find(again, static_cast<uint32_t>(child));
  ASSERT_NE(r2, nullptr);
  EXPECT_TRUE(std::equal(std::begin(r->pages), std::end(r->pages), r2->pages));

  // Every other leader with memory on the host agrees with its statm as far
  // (those that allocate between the two reads aside: most do not).
  size_t leaders = 0, within = 0;
  for (const TaskRun& t : runs) {
    if (t.kernel || t.tid != t.tgid || !t.has_pages) continue;
    uint64_t res, sh;
    if (!statm(t.tid, res, sh)) continue;  // gone
    ++leaders;
    within += std::llabs(static_cast<int64_t>(res) - (pos(t.pages[0]) + pos(t.pages[1]) + pos(t.pages[3]))) <= 3 * slack;
  }
  EXPECT_GE(within * 10, leaders * 9) << within << " of " << leaders;
  for (const TaskRun& t : runs) {
    if (t.kernel) {
      EXPECT_EQ(t.has_pages, 0u) << "kernel thread " << t.tid;
    }
    if (t.tid != t.tgid) {
      EXPECT_EQ(t.has_pages, 0u) << "thread " << t.tid << " of " << t.tgid;
    }
  }
  sleeper.join();
  // The kernel's per-task iterator (the fallback) reads no counts.
  auto per_task = TaskRuns::open(TaskRuns::kTable, false);
  ASSERT_TRUE(per_task) << test::error_of(per_task);
  ASSERT_TRUE((*per_task)->read(runs)) << (*per_task)->why();
  for (const TaskRun& t : runs) EXPECT_EQ(t.has_pages, 0u);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace aimem::watch
