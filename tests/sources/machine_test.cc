// sources/machine.h over captured trees: what `aimem fit` plans against on
// this machine (MemAvailable, the own cgroup's room through the one cgroup
// reader, the AMX flags).
#include <gtest/gtest.h>

#include <cstdlib>

#include "sources/machine.h"
#include "support/test_support.h"

namespace aimem {
namespace {

void mkdirs(const std::string& p) { ASSERT_EQ(std::system(("mkdir -p '" + p + "'").c_str()), 0); }

TEST(Machine, TheOwnCgroupsRoomIsItsLimitLessItsUse) {
  std::string root = test::temp_dir("machine-v2");
  mkdirs(root + "/proc/self");
  mkdirs(root + "/sys/fs/cgroup/app.slice/aimem.scope");
  test::write_file(root + "/proc/self/cgroup", "0::/app.slice/aimem.scope\n");
  // A v2 hierarchy lists its controllers at its root, as every real one does.
  test::write_file(root + "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  test::write_file(root + "/sys/fs/cgroup/app.slice/aimem.scope/memory.max", "8589934592\n");
  test::write_file(root + "/sys/fs/cgroup/app.slice/aimem.scope/memory.current", "1073741824\n");
  EXPECT_EQ(own_cgroup_room(root), std::optional<uint64_t>(7ull << 30));
  // "max" is no limit.
  test::write_file(root + "/sys/fs/cgroup/app.slice/aimem.scope/memory.max", "max\n");
  EXPECT_EQ(own_cgroup_room(root), std::nullopt);
}

TEST(Machine, CgroupV1sUnlimitedValueIsNoLimit) {
  std::string root = test::temp_dir("machine-v1");
  mkdirs(root + "/proc/self");
  mkdirs(root + "/sys/fs/cgroup/memory/docker/abc");
  test::write_file(root + "/proc/self/cgroup", "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n");
  // A v1 memory hierarchy has the controller's files at its root.
  test::write_file(root + "/sys/fs/cgroup/memory/memory.usage_in_bytes", "1073741824\n");
  test::write_file(root + "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
  test::write_file(root + "/sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "4096\n");
  EXPECT_EQ(own_cgroup_room(root), std::nullopt);
  test::write_file(root + "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "4096\n");
  test::write_file(root + "/sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "8192\n");
  EXPECT_EQ(own_cgroup_room(root), std::optional<uint64_t>(0));  // over its limit: no room, not a wrap
}

TEST(Machine, MemAvailableAndAmx) {
  std::string root = test::temp_dir("machine-proc");
  mkdirs(root + "/proc");
  EXPECT_EQ(host_mem_available(root), std::nullopt);
  EXPECT_FALSE(cpu_has_amx(root));
  test::write_file(root + "/proc/meminfo", "MemTotal:       65536000 kB\nMemFree:         1000000 kB\nMemAvailable:   30000000 kB\n");
  test::write_file(root + "/proc/cpuinfo", "flags\t\t: fpu sse2 amx_bf16 amx_tile amx_int8\n");
  EXPECT_EQ(host_mem_available(root), std::optional<uint64_t>(30000000ull * 1024));
  EXPECT_TRUE(cpu_has_amx(root));
}

}  // namespace
}  // namespace aimem
