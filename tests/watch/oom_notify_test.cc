// OOM notifications: v2's inotify on memory.events (a file in a fixture tree
// stands in for the cgroupfs file: the kernel's counter step is an IN_MODIFY),
// and v1's eventfd on memory.oom_control with a real OOM kill in a real cgroup.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "sources/cgroup_ctl.h"
#include "sources/oom_notify.h"

namespace aimem {
namespace {

TEST(OomNotifier, V2MemoryEventsChangeWakesIt) {
  std::string dir = test::temp_dir("notify-v2");
  test::write_file(dir + "/memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
  watch::OomNotifier n;
  std::string err;
  ASSERT_EQ(test::error_of(n.add(dir, "/kubepods/pod1/c1", 2)), "");
  ASSERT_EQ(test::error_of(n.add(dir, "/kubepods/pod1/c1", 2)), "");  // idempotent
  EXPECT_EQ(n.watched(), 1u);
  EXPECT_TRUE(n.wait(50).empty());
  test::write_file(dir + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
  auto got = n.wait(2000);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0], "/kubepods/pod1/c1");
  n.keep_only({});
  EXPECT_EQ(n.watched(), 0u);
  err = test::error_of(n.add(dir + "/missing", "/gone", 2));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("memory.events"), std::string::npos) << err;
}

TEST(OomNotifier, V1EventfdFiresOnARealOom) {
  auto h = find_memory_hierarchy("/");
  if (h.version != 1) GTEST_SKIP() << "needs a cgroup v1 memory hierarchy";
  auto created = watch::RunCgroup::create("/", "aimem-test-notify-" + std::to_string(getpid()), 32ull << 20);
  if (!created) GTEST_SKIP() << created.error().message;
  auto cg = std::move(*created);
  watch::OomNotifier n;
  ASSERT_EQ(test::error_of(n.add(cg->dir(), cg->path(), 1)), "");
  EXPECT_TRUE(n.wait(50).empty());
  pid_t child = fork();
  if (child == 0) {
    std::ofstream(cg->dir() + "/cgroup.procs") << getpid();
    execl(AIMEM_TEST_ALLOC, AIMEM_TEST_ALLOC, "4", "5", "400", (char*)nullptr);
    _exit(126);
  }
  std::vector<std::string> got;
  auto t0 = std::chrono::steady_clock::now();
  while (got.empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) got = n.wait(200);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_FALSE(got.empty()) << "no OOM notification";
  EXPECT_EQ(got[0], cg->path());
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  n.keep_only({});
}

TEST(OomNotifier, PressureTriggerArmsWherePermitted) {
  watch::OomNotifier n;
  std::string err;
  // A root without PSI says so, naming the file.
  err = test::error_of(n.add_pressure_trigger(test::temp_dir("no-psi"), 150000, 2000000));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("/proc/pressure/memory"), std::string::npos) << err;
  if (access("/proc/pressure/memory", W_OK) != 0) GTEST_SKIP() << "PSI is not writable here";
  // The kernel checks the trigger: a window outside 500 ms..10 s is refused, with the reason.
  watch::OomNotifier bad;
  err = test::error_of(bad.add_pressure_trigger("/", 150000, 60000000));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("refused"), std::string::npos) << err;
  ASSERT_EQ(test::error_of(n.add_pressure_trigger("/", 150000, 2000000)), "");
  // Armed: an idle host does not fire it within 100 ms.
  for (const auto& p : n.wait(100)) EXPECT_EQ(p, watch::OomNotifier::kPressure);
}

}  // namespace
}  // namespace aimem
