// `aimem run` never leaves its command behind, nor waits on an alert hook:
//  - SIGKILL of aimem (no handler runs): the command dies with it and the
//    guard process removes the limited cgroup, with what the command started;
//  - SIGKILL of aimem and of its guard: the command still dies
//    (PR_SET_PDEATHSIG), and the next `aimem run` removes the cgroup that
//    was left, killing what still ran in it;
//  - an --on-alert command that hangs does not hold aimem's exit; it is
//    still cut off at its timeout after aimem is gone.
// Real processes in a real cgroup v1 memory limit; skipped, saying why,
// where the memory cgroup is not writable.
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"
#include "sources/cgroup_ctl.h"

namespace aimem {
namespace {

using Clock = std::chrono::steady_clock;

std::string run_parent_dir() {
  auto h = find_memory_hierarchy("/");
  std::string own = own_memory_cgroup("/");
  return h.mount + (own == "/" ? "" : own);
}

bool cgroups_writable() {
  auto h = find_memory_hierarchy("/");
  return h.version == 1 && access(run_parent_dir().c_str(), W_OK) == 0;
}

// A process that exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

std::vector<pid_t> pids_in(const std::string& dir) {
  std::vector<pid_t> out;
  std::ifstream in(dir + "/cgroup.procs");
  pid_t p;
  while (in >> p) out.push_back(p);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0;
}

template <class F>
bool wait_until(F done, int ms) {
  auto end = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// aimem run ARGS in the background, its output to files under dir.
pid_t start_aimem(const std::vector<std::string>& args, const std::string& dir) {
  pid_t pid = fork();
  if (pid == 0) {
    int out = ::open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open((dir + "/err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv{const_cast<char*>(AIMEM_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(AIMEM_BINARY, argv.data());
    _exit(126);
  }
  return pid;
}

// The children of `parent` (from /proc/*/stat).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state;
    pid_t ppid = 0;
    if (sscanf(line.c_str() + close + 2, "%c %d", &state, &ppid) == 2 && ppid == parent) out.push_back(pid);
  }
  if (d) closedir(d);
  return out;
}

// Moves this test process into a child memory cgroup of its own for the
// test's length, so the `aimem run`s it starts make their cgroups there.
// Another test's `aimem run`, running in parallel under ctest -j, removes
// stale aimem-run-* cgroups of its own parent only, so it cannot sweep this
// test's stale cgroup before the test's own next run does (CI saw that race).
struct PrivateParent {
  std::string outer, dir;
  bool ok = false;
  PrivateParent() {
    outer = run_parent_dir();
    dir = outer + "/aimem-test-" + std::to_string(getpid());
    if (mkdir(dir.c_str(), 0755) != 0) return;
    std::ofstream procs(dir + "/cgroup.procs");
    procs << getpid() << std::flush;
    ok = bool(procs) && run_parent_dir() == dir;
  }
  ~PrivateParent() {
    { std::ofstream back(outer + "/cgroup.procs"); back << getpid() << std::flush; }
    for (int i = 0; i < 50 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) usleep(100000);
  }
};

// Kills whatever a failed test left: the command's pids and the cgroup.
struct Leftovers {
  std::string dir;
  std::vector<pid_t> pids;
  ~Leftovers() {
    for (pid_t p : pids) kill(p, SIGKILL);
    if (!dir.empty() && exists(dir)) {
      for (pid_t p : pids_in(dir)) kill(p, SIGKILL);
      for (int i = 0; i < 50 && rmdir(dir.c_str()) != 0; ++i) usleep(100000);
    }
  }
};

TEST(RunLifetime, SigkillOfAimemKillsTheCommandAndRemovesItsCgroup) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  std::string tmp = test::temp_dir("run-kill");
  pid_t aimem = start_aimem({"run", "--memory-limit", "64M", "--no-gpus", "--", "/bin/sh", "-c", "sleep 60; true"}, tmp);
  std::string cg = run_parent_dir() + "/aimem-run-" + std::to_string(aimem);
  Leftovers left{cg, {aimem}};
  // The shell and its sleep (a grandchild of aimem) are in the cgroup.
  ASSERT_TRUE(wait_until([&] { return pids_in(cg).size() >= 2; }, 5000)) << slurp(tmp + "/err");
  std::vector<pid_t> command = pids_in(cg);
  left.pids.insert(left.pids.end(), command.begin(), command.end());

  ASSERT_EQ(kill(aimem, SIGKILL), 0);
  int status = 0;
  waitpid(aimem, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  for (pid_t p : command) EXPECT_TRUE(wait_until([&] { return !alive(p); }, 3000)) << "pid " << p << " outlived aimem";
  EXPECT_TRUE(wait_until([&] { return !exists(cg); }, 3000)) << cg << " is still there";
}

TEST(RunLifetime, NextRunRemovesTheCgroupOfARunKilledWithItsGuard) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  PrivateParent parent;
  ASSERT_TRUE(parent.ok) << "could not move into " << parent.dir;
  std::string tmp = test::temp_dir("run-stale");
  pid_t aimem = start_aimem({"run", "--memory-limit", "64M", "--no-gpus", "--", "/bin/sh", "-c", "sleep 60; true"}, tmp);
  std::string cg = run_parent_dir() + "/aimem-run-" + std::to_string(aimem);
  Leftovers left{cg, {aimem}};
  ASSERT_TRUE(wait_until([&] { return pids_in(cg).size() >= 2; }, 5000)) << slurp(tmp + "/err");
  std::vector<pid_t> command = pids_in(cg);
  left.pids.insert(left.pids.end(), command.begin(), command.end());
  // Everything aimem forked that is not in the cgroup: its guard. Killed first.
  for (pid_t c : children_of(aimem))
    if (std::find(command.begin(), command.end(), c) == command.end()) {
      left.pids.push_back(c);
      kill(c, SIGKILL);
    }
  ASSERT_EQ(kill(aimem, SIGKILL), 0);
  waitpid(aimem, nullptr, 0);
  // The shell, aimem's child, dies with it (PR_SET_PDEATHSIG); its sleep,
  // a grandchild, is left in the cgroup, which is left too.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(exists(cg));
  ASSERT_FALSE(pids_in(cg).empty());

  auto next = test::run_aimem({"run", "--no-gpus", "--", "/bin/true"});
  ASSERT_EQ(next.status, 0) << next.err;
  EXPECT_FALSE(exists(cg)) << next.err;
  EXPECT_NE(next.err.find("aimem-run-" + std::to_string(aimem)), std::string::npos) << next.err;
  for (pid_t p : command) EXPECT_TRUE(wait_until([&] { return !alive(p); }, 3000)) << "pid " << p << " survived the cleanup";
}

TEST(RunLifetime, AHangingAlertCommandDoesNotHoldTheExit) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  std::string tmp = test::temp_dir("run-hook");
  // 28 MiB of a 32 MiB limit: past the 80% warning, then exit 0.
  const std::string hook = "echo $$ > " + tmp + "/hook.pid; exec sleep 30";
  auto t0 = Clock::now();
  pid_t aimem = start_aimem({"run", "--memory-limit", "32M", "--interval", "100ms", "--no-gpus", "--on-alert", hook,
                             "--", AIMEM_TEST_ALLOC, "4", "10", "28", "400"},
                            tmp);
  Leftovers left{"", {aimem}};
  int status = 0;
  waitpid(aimem, &status, 0);
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(status)) << slurp(tmp + "/err");
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(tmp + "/err");
  EXPECT_NE(slurp(tmp + "/err").find("aimem alert ["), std::string::npos) << slurp(tmp + "/err");
  // The command ran ~0.5 s; the hook's 5 s timeout is not waited for. (The
  // bound leaves room for a loaded CI machine: 3 s failed once there.)
  EXPECT_LT(secs, 4.5) << slurp(tmp + "/err");
  ASSERT_TRUE(wait_until([&] { return !slurp(tmp + "/hook.pid").empty(); }, 3000)) << "the hook never ran";
  pid_t hook_pid = std::atoi(slurp(tmp + "/hook.pid").c_str());
  left.pids.push_back(hook_pid);
  EXPECT_TRUE(alive(hook_pid));  // still running after aimem's exit ...
  EXPECT_TRUE(wait_until([&] { return !alive(hook_pid); }, 8000)) << "the hook outlived its timeout";  // ... until its timeout
}

}  // namespace
}  // namespace aimem
