// Where `aimem run` puts its cgroup, on captured-shape trees under a root
// directory: cgroup v2 (this machine has v1, tested for real in run_cli_test):
// under aimem's own cgroup when it delegates the memory controller, else under
// the hierarchy root when that does, else a clear error that says what to do.
// Also v1 placement and the mount table.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "support/test_support.h"
#include "sources/cgroup_ctl.h"

namespace aimem {
namespace {

namespace fs = std::filesystem;

std::string v2_tree(const std::string& tag, bool own_delegates, bool root_delegates) {
  std::string root = test::temp_dir(tag);
  fs::create_directories(root + "/proc/self");
  fs::create_directories(root + "/sys/fs/cgroup/user.slice/session-1.scope");
  test::write_file(root + "/proc/self/mounts",
                   "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
                   "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot 0 0\n");
  test::write_file(root + "/proc/self/cgroup", "0::/user.slice/session-1.scope\n");
  test::write_file(root + "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  test::write_file(root + "/sys/fs/cgroup/cgroup.subtree_control", root_delegates ? "cpu io memory pids\n" : "cpu pids\n");
  test::write_file(root + "/sys/fs/cgroup/user.slice/session-1.scope/cgroup.subtree_control",
                   own_delegates ? "memory\n" : "\n");
  return root;
}

TEST(RunCgroupPlacement, FindsTheV2HierarchyAndOwnCgroup) {
  std::string root = v2_tree("cg-v2-find", false, true);
  auto h = find_memory_hierarchy(root);
  EXPECT_EQ(h.version, 2);
  EXPECT_EQ(h.mount, root + "/sys/fs/cgroup");
  EXPECT_EQ(own_memory_cgroup(root), "/user.slice/session-1.scope");
}

TEST(RunCgroupPlacement, V2UnderOwnCgroupWhenItDelegatesMemory) {
  std::string root = v2_tree("cg-v2-own", true, true);
  auto cg = test::take(watch::RunCgroup::create(root, "aimem-run-1", std::nullopt));
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->version(), 2);
  EXPECT_EQ(cg->path(), "/user.slice/session-1.scope/aimem-run-1");
  EXPECT_TRUE(fs::is_directory(cg->dir()));
  ASSERT_EQ(test::error_of(cg->remove()), "");
  EXPECT_FALSE(fs::exists(root + "/sys/fs/cgroup/user.slice/session-1.scope/aimem-run-1"));
}

TEST(RunCgroupPlacement, V2UnderTheRootWhenOnlyItDelegates) {
  std::string root = v2_tree("cg-v2-root", false, true);
  auto cg = test::take(watch::RunCgroup::create(root, "aimem-run-2", std::nullopt));
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->path(), "/aimem-run-2");
}

TEST(RunCgroupPlacement, V2WithoutDelegationIsAClearErrorAndLeavesNothing) {
  std::string root = v2_tree("cg-v2-none", false, false);
  std::string err;
  err = test::error_of(watch::RunCgroup::create(root, "aimem-run-3", 64ull << 20));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("systemd-run"), std::string::npos) << err;
  EXPECT_NE(err.find("/user.slice/session-1.scope"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(root + "/sys/fs/cgroup/aimem-run-3"));
}

TEST(RunCgroupPlacement, ALimitThatCannotBeWrittenRemovesTheCgroup) {
  // A plain directory tree has no memory.max file: the write fails, and the
  // half-made cgroup must not be left behind.
  std::string root = v2_tree("cg-v2-nolimit", true, true);
  std::string err;
  err = test::error_of(watch::RunCgroup::create(root, "aimem-run-4", 64ull << 20));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("memory.max"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(root + "/sys/fs/cgroup/user.slice/session-1.scope/aimem-run-4"));
}

TEST(RunCgroupPlacement, NoMemoryControllerIsSaid) {
  std::string root = test::temp_dir("cg-none");
  fs::create_directories(root + "/proc/self");
  test::write_file(root + "/proc/self/mounts", "proc /proc proc rw 0 0\n");
  std::string err;
  err = test::error_of(watch::RunCgroup::create(root, "x", std::nullopt));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("no memory cgroup controller"), std::string::npos) << err;
  EXPECT_EQ(find_memory_hierarchy(root).version, 0);
}

TEST(RunCgroupPlacement, V1FromTheMountTable) {
  std::string root = test::temp_dir("cg-v1");
  fs::create_directories(root + "/proc/self");
  fs::create_directories(root + "/sys/fs/cgroup/memory/docker/ab12");
  test::write_file(root + "/proc/self/mounts",
                   "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,nodev,noexec,relatime,cpu,cpuacct 0 0\n"
                   "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0\n");
  test::write_file(root + "/proc/self/cgroup", "12:pids:/docker/ab12\n9:memory:/docker/ab12\n1:name=systemd:/docker/ab12\n");
  auto h = find_memory_hierarchy(root);
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.mount, root + "/sys/fs/cgroup/memory");
  EXPECT_EQ(own_memory_cgroup(root), "/docker/ab12");
  auto cg = test::take(watch::RunCgroup::create(root, "aimem-run-5", std::nullopt));
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->path(), "/docker/ab12/aimem-run-5");
}

}  // namespace
}  // namespace aimem
