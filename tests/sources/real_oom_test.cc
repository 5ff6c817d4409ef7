// Real failures on this machine, not captured text:
//  - a cgroup v1 OOM kill: a child of this process's own memory cgroup with a
//    48 MiB limit, an allocator in it, and `aimem diagnose --since 1m` (live)
//    must name container_limit, the pid, the process name and the limit. The
//    cgroup is removed afterwards. Skipped, saying why, where the memory
//    cgroup is not writable.
//  - a real V8 heap failure from `node --max-old-space-size=16`.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

using nlohmann::json;

std::string own_v1_memory_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    if (controllers == "memory" || controllers.find("memory,") != std::string::npos || controllers.find(",memory") != std::string::npos)
      return line.substr(b + 1);
  }
  return {};
}

TEST(RealOom, CgroupV1KillIsDiagnosedLive) {
  std::string own = own_v1_memory_cgroup();
  const std::string mount = "/sys/fs/cgroup/memory";
  if (own.empty() || access((mount + own).c_str(), W_OK) != 0)
    GTEST_SKIP() << "no writable cgroup v1 memory controller here (need root and a v1 memory hierarchy)";
  std::string rel = (own == "/" ? "" : own) + "/aimem-test-" + std::to_string(getpid());
  std::string dir = mount + rel;
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << std::strerror(errno);
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      for (int i = 0; i < 50 && rmdir(d.c_str()) != 0; ++i) usleep(100000);
    }
  } cleanup{dir};
  const uint64_t limit = 48ULL << 20;
  test::write_file(dir + "/memory.limit_in_bytes", std::to_string(limit));
  // Swap would let the allocator outlive the limit; the memsw file is absent without swap accounting.
  if (access((dir + "/memory.memsw.limit_in_bytes").c_str(), W_OK) == 0) test::write_file(dir + "/memory.memsw.limit_in_bytes", std::to_string(limit));

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "aimem-alloc");
    std::ofstream(dir + "/cgroup.procs") << getpid();
    // Touch 4 MiB at a time until the kernel kills us; stop at 512 MiB in any case.
    for (int i = 0; i < 128; ++i) {
      char* p = static_cast<char*>(malloc(4 << 20));
      if (!p) _exit(3);
      memset(p, i + 1, 4 << 20);
    }
    _exit(4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "allocator was not OOM-killed, status " << status;

  auto r = test::run_aimem({"diagnose", "--since", "1m", "--json"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  json mine;
  for (const auto& inc : j["incidents"])
    if (inc["process"].is_object() && inc["process"]["pid"] == child) mine = inc;
  ASSERT_FALSE(mine.is_null()) << r.out;
  EXPECT_EQ(mine["layer"], "container_limit");
  EXPECT_EQ(mine["process"]["name"], "aimem-alloc");
  EXPECT_EQ(mine["pool"]["limit_bytes"], limit);
  EXPECT_EQ(mine["pool"]["name"], "cgroup " + rel);
  EXPECT_EQ(j["layer"], "container_limit");
}

TEST(RealOom, NodeHeapLimitFailureIsJsHeap) {
  if (access("/usr/bin/node", X_OK) != 0 && access("/usr/local/bin/node", X_OK) != 0) GTEST_SKIP() << "node is not installed";
  std::string node = access("/usr/bin/node", X_OK) == 0 ? "/usr/bin/node" : "/usr/local/bin/node";
  auto run = test::run({node, "--max-old-space-size=16", "-e", "const a = []; for (;;) a.push(new Array(1e5).fill(1));"}, {}, {}, 120);
  ASSERT_NE(run.status, 0);
  ASSERT_NE(run.err.find("heap"), std::string::npos) << run.err;
  auto r = test::run_aimem({"diagnose", "--json", "-"}, run.err);
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "js_heap");
}

}  // namespace
}  // namespace aimem
