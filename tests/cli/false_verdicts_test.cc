// Verdicts that say what the evidence says, through the real binary:
//  - `aimem run` of a command that fails on its own far below its limit is
//    "not memory" (one line; nothing with -q), not a page of "unknown";
//  - a --unit that matches nothing says so and shows nothing outside it;
//  - an incident --since left out is named, not hidden behind "OK";
//  - live, an unreadable kernel log is never "OK" (run as nobody through
//    setpriv, over a captured tree whose dev/kmsg only root may read).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "sources/cgroup_ctl.h"

namespace aimem {
namespace {

using nlohmann::json;

bool cgroups_writable() {
  auto h = find_memory_hierarchy("/");
  if (h.version == 0) return false;
  std::string own = own_memory_cgroup("/");
  return access((h.mount + (own == "/" ? "" : own)).c_str(), W_OK) == 0;
}

TEST(FalseVerdicts, RunThatFailsFarBelowItsLimitIsNotMemory) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable memory cgroup here";
  auto quiet = test::run_aimem({"run", "-q", "--memory-limit", "64M", "--no-gpus", "--", "/bin/ls", "/nonexist"});
  EXPECT_EQ(quiet.status, 2);
  EXPECT_NE(quiet.err.find("/nonexist"), std::string::npos) << quiet.err;  // ls's own message passes through
  EXPECT_EQ(quiet.err.find("Memory pool"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.err.find("not memory"), std::string::npos) << quiet.err;  // -q: nothing of aimem's
  EXPECT_EQ(quiet.err.find("docker"), std::string::npos) << quiet.err;

  auto told = test::run_aimem({"run", "--memory-limit", "64M", "--no-gpus", "--", "/bin/ls", "/nonexist"});
  EXPECT_EQ(told.status, 2);
  EXPECT_NE(told.err.find("not memory: peak "), std::string::npos) << told.err;
  EXPECT_NE(told.err.find("% of the limit, no OOM kill"), std::string::npos) << told.err;
  EXPECT_EQ(told.err.find("Memory pool"), std::string::npos) << told.err;
  EXPECT_EQ(told.err.find("kubectl"), std::string::npos) << told.err;

  auto js = test::run_aimem({"run", "--json", "--memory-limit", "64M", "--no-gpus", "--", "/bin/ls", "/nonexist"});
  EXPECT_EQ(js.status, 2);
  json j = json::parse(js.out.substr(js.out.rfind("\n{") == std::string::npos ? 0 : js.out.rfind("\n{") + 1));
  EXPECT_EQ(j["diagnosis"]["layer"], "not_memory") << js.out;
  EXPECT_NE(j["verdict"].get<std::string>().find("no OOM kill"), std::string::npos) << js.out;
}

// A container's OOM kill, in the kernel's words.
const char* kDockerKill =
    "[  100.000000] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
    "[  100.000200] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
    "oom_memcg=/docker/4f2a9c1e7b3d,task_memcg=/docker/4f2a9c1e7b3d,task=python3,pid=2531,uid=0\n"
    "[  100.000300] Memory cgroup out of memory: Killed process 2531 (python3) total-vm:100000kB, anon-rss:60000kB, "
    "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:200kB oom_score_adj:0\n";

TEST(FalseVerdicts, UnitThatMatchesNothingSaysSoAndShowsNothingElse) {
  std::string dir = test::temp_dir("unit");
  test::write_file(dir + "/dmesg.txt", kDockerKill);
  auto r = test::run_aimem({"diagnose", "--unit", "nosuch.service", dir + "/dmesg.txt"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("docker"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("python3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing in the evidence matched --unit nosuch.service (1 incident outside"), std::string::npos) << r.out;
  auto js = test::run_aimem({"diagnose", "--json", "--unit", "nosuch.service", dir + "/dmesg.txt"});
  json j = json::parse(js.out);
  EXPECT_TRUE(j["incidents"].empty()) << js.out;

  // The unit's own kill is still shown.
  std::string own = kDockerKill;
  for (size_t at; (at = own.find("/docker/4f2a9c1e7b3d")) != std::string::npos;)
    own.replace(at, 20, "/system.slice/vllm.service");
  test::write_file(dir + "/unit.txt", own);
  auto mine = test::run_aimem({"diagnose", "--json", "--unit", "vllm", dir + "/unit.txt"});
  json m = json::parse(mine.out);
  ASSERT_EQ(m["incidents"].size(), 1u) << mine.out;
  EXPECT_EQ(m["layer"], "container_limit");
}

TEST(FalseVerdicts, IncidentBeforeSinceIsNamedNotHidden) {
  std::string dir = test::temp_dir("since");
  test::write_file(dir + "/kern.log",
                   "2025-01-01T10:00:00+00:00 host kernel: Out of memory: Killed process 4242 (python3) total-vm:11964kB, "
                   "anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB\n");
  auto all = test::run_aimem({"diagnose", "--json", dir + "/kern.log"});
  ASSERT_EQ(json::parse(all.out)["incidents"].size(), 1u) << all.out;  // the incident is there ...
  auto r = test::run_aimem({"diagnose", "--since", "1h", dir + "/kern.log"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("1 incident before --since"), std::string::npos) << r.out;  // ... and its exclusion is said
  EXPECT_NE(r.out.find("was left out"), std::string::npos) << r.out;
}

TEST(FalseVerdicts, UnreadableKernelLogIsNeverOk) {
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no setpriv to run aimem as an unprivileged user";
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to nobody";
  std::string root = test::temp_dir("kmsg-unreadable");
  ASSERT_EQ(std::system(("mkdir -p " + root + "/proc " + root + "/dev").c_str()), 0);
  test::write_file(root + "/proc/meminfo", "MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n");
  test::write_file(root + "/proc/stat", "btime 1764400000\n");
  test::write_file(root + "/proc/vmstat", "pgfault 100\noom_kill 12\n");
  test::write_file(root + "/dev/kmsg", "6,1,100,-;Out of memory: Killed process 4242 (python3)\n");
  chmod((root + "/dev/kmsg").c_str(), 0600);
  ASSERT_EQ(std::system(("chmod -R a+rX " + root + " && chmod 0600 " + root + "/dev/kmsg").c_str()), 0);
  auto as_nobody = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", AIMEM_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run(argv, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  };
  auto r = as_nobody({"diagnose", "--root", root});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("OK:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12 OOM kills"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Permission denied"), std::string::npos) << r.out;
  auto js = as_nobody({"diagnose", "--json", "--root", root});
  json j = json::parse(js.out);
  EXPECT_EQ(j["layer"], "unknown") << js.out;
}

}  // namespace
}  // namespace aimem
