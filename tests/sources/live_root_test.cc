// Live diagnosis over captured trees under --root: cgroup v2 and v1 memory
// files written from the kernel's documented formats, a /dev/kmsg capture, and
// a stand-in NVML library.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

using nlohmann::json;

void mkdirs(const std::string& p) { ASSERT_EQ(std::system(("mkdir -p '" + p + "'").c_str()), 0); }

const char* kPod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0330b2c1_a15b_4cdd_b5e5_72d4a90bee82.slice";
const char* kCtr = "cri-containerd-b27201334a41cd0749d053b18378d7ea65617b8e26277197ea25c974da1a5a8a.scope";

// A cgroup v2 node with one pod whose container was OOM-killed.
std::string v2_tree(bool with_kmsg) {
  std::string root = test::temp_dir("v2");
  mkdirs(root + "/proc");
  mkdirs(root + "/dev");
  test::write_file(root + "/proc/meminfo", "MemTotal:       65536000 kB\nMemFree:         1000000 kB\nMemAvailable:   30000000 kB\n");
  test::write_file(root + "/proc/stat", "cpu  1 2 3\nbtime 1764400000\n");
  test::write_file(root + "/proc/vmstat", "nr_free_pages 100\noom_kill 1\n");
  std::string cg = root + "/sys/fs/cgroup";
  std::string ctr = cg + "/" + kPod + "/" + kCtr;
  mkdirs(ctr);
  test::write_file(cg + "/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  test::write_file(cg + "/" + kPod + "/memory.max", "1073741824\n");
  test::write_file(cg + "/" + kPod + "/memory.current", "1073610752\n");
  test::write_file(cg + "/" + kPod + "/memory.events", "low 0\nhigh 0\nmax 31\noom 1\noom_kill 1\noom_group_kill 0\n");
  test::write_file(ctr + "/memory.max", "1073741824\n");
  test::write_file(ctr + "/memory.current", "1073610752\n");
  test::write_file(ctr + "/memory.peak", "1073741824\n");
  test::write_file(ctr + "/memory.events", "low 0\nhigh 0\nmax 31\noom 1\noom_kill 1\noom_group_kill 0\n");
  if (with_kmsg) {
    std::string path = std::string("/") + kPod + "/" + kCtr;
    std::string kmsg =
        "4,1001,9000000000,-;vllm invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=968\n"
        "6,1002,9000000100,-;memory: usage 1048576kB, limit 1048576kB, failcnt 31\n"
        "6,1003,9000000200,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=" + std::string(kCtr) +
        ",mems_allowed=0,oom_memcg=" + path + ",task_memcg=" + path + ",task=vllm,pid=4242,uid=0\n"
        "3,1004,9000000300,-;Memory cgroup out of memory: Killed process 4242 (vllm) total-vm:9000000kB, anon-rss:1040000kB, file-rss:8000kB, shmem-rss:0kB, UID:0 pgtables:2100kB oom_score_adj:968\n";
    test::write_file(root + "/dev/kmsg", kmsg);
  }
  return root;
}

TEST(LiveRoot, CgroupV2PodKillFromKmsgCapture) {
  std::string root = v2_tree(true);
  auto r = test::run_aimem({"diagnose", "--root", root, "--since", "2020-01-01", "--json"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "k8s_pod_limit");
  const json& inc = j["incidents"][0];
  EXPECT_EQ(inc["process"]["pid"], 4242);
  EXPECT_EQ(inc["process"]["name"], "vllm");
  EXPECT_EQ(inc["pool"]["limit_bytes"], 1073741824);
  // boot time 1764400000 + 9000 s of uptime
  EXPECT_EQ(inc["time"], "2025-11-29T09:36:40Z");
  EXPECT_EQ(j["incidents"].size(), 1u);  // the cgroup's counters join the kernel's kill, not a second incident
}

TEST(LiveRoot, CountersAloneWhenTheKernelLogIsUnreadable) {
  std::string root = v2_tree(false);
  auto r = test::run_aimem({"diagnose", "--root", root, "--json"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "k8s_pod_limit");
  std::string all = j.dump();
  EXPECT_NE(all.find("memory.events"), std::string::npos);
  EXPECT_NE(all.find("cannot read the kernel log"), std::string::npos);
}

TEST(LiveRoot, HealthyV1TreeShowsHeadroomPerPool) {
  std::string root = test::temp_dir("v1");
  mkdirs(root + "/proc");
  mkdirs(root + "/dev");
  test::write_file(root + "/proc/meminfo", "MemTotal:       16000000 kB\nMemAvailable:    4000000 kB\n");
  test::write_file(root + "/proc/stat", "btime 1764400000\n");
  test::write_file(root + "/dev/kmsg", "6,1,1000,-;Linux version 6.1.0\n");
  std::string m = root + "/sys/fs/cgroup/memory";
  mkdirs(m + "/docker/4f1e2d3c4b5a");
  test::write_file(m + "/memory.limit_in_bytes", "9223372036854771712\n");
  test::write_file(m + "/memory.usage_in_bytes", "9000000000\n");
  test::write_file(m + "/docker/4f1e2d3c4b5a/memory.limit_in_bytes", "2147483648\n");
  test::write_file(m + "/docker/4f1e2d3c4b5a/memory.usage_in_bytes", "1073741824\n");
  test::write_file(m + "/docker/4f1e2d3c4b5a/memory.max_usage_in_bytes", "1610612736\n");
  test::write_file(m + "/docker/4f1e2d3c4b5a/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  auto r = test::run_aimem({"diagnose", "--root", root, "--json"}, {},
                           {"AIMEM_NVML_LIBRARY=" AIMEM_FAKE_NVML, "AIMEM_FAKE_NVML_DEVICES=NVIDIA L4:23034:20730:2"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "none");
  EXPECT_TRUE(j["incidents"].empty());
  bool host = false, cgroup = false, gpu = false;
  for (const auto& h : j["headroom"]) {
    std::string pool = h["pool"];
    if (pool == "host RAM") host = h["capacity_bytes"] == 16000000ULL * 1024 && h["available_bytes"] == 4000000ULL * 1024;
    if (pool == "cgroup /docker/4f1e2d3c4b5a") cgroup = h["capacity_bytes"] == 2147483648ULL && h["used_bytes"] == 1073741824ULL;
    if (pool.rfind("GPU 0", 0) == 0) gpu = h["capacity_bytes"] == 23034ULL << 20 && h["used_bytes"] == 20730ULL << 20;
  }
  EXPECT_TRUE(host) << j["headroom"];
  EXPECT_TRUE(cgroup) << j["headroom"];
  EXPECT_TRUE(gpu) << j["headroom"];
  // The human report says so too.
  auto t = test::run_aimem({"diagnose", "--root", root}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent", "NO_COLOR=1"});
  EXPECT_NE(t.out.find("no memory failure found since"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("AIMEM_NVML_LIBRARY=/nonexistent could not be loaded"), std::string::npos) << t.out;
}

TEST(LiveRoot, NvmlThatFailsToInitialiseIsANoteNotAnError) {
  std::string root = v2_tree(true);
  auto r = test::run_aimem({"diagnose", "--root", root, "--json"}, {},
                           {"AIMEM_NVML_LIBRARY=" AIMEM_FAKE_NVML, "AIMEM_FAKE_NVML_INIT_FAIL=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("NVML did not initialise: Driver Not Loaded"), std::string::npos);
}

TEST(LiveRoot, UnreadableRootIsExit2) {
  auto r = test::run_aimem({"diagnose", "--root", "/nonexistent-root"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("nothing readable under /nonexistent-root"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

// A real journal file, written by systemd-journal-remote from the journal
// export format, read through sd-journal under --root, narrowed by --unit.
TEST(LiveRoot, UnitJournalThroughSdJournal) {
  const char* tool = "/lib/systemd/systemd-journal-remote";
  if (access(tool, X_OK) != 0) GTEST_SKIP() << "systemd-journal-remote is not installed (Debian package systemd-journal-remote)";
  std::string root = test::temp_dir("journal");
  mkdirs(root + "/var/log/journal");
  int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto entry = [&](int64_t t, const std::string& unit, const std::string& msg) {
    return "__REALTIME_TIMESTAMP=" + std::to_string(t) + "\n__MONOTONIC_TIMESTAMP=1000\n_BOOT_ID=0123456789abcdef0123456789abcdef\n" +
           "_TRANSPORT=journal\nSYSLOG_IDENTIFIER=systemd\n_PID=1\nUNIT=" + unit + "\nMESSAGE=" + msg + "\n\n";
  };
  std::string exported = entry(now - 60'000'000, "vllm.service", "vllm.service: A process of this unit has been killed by the OOM killer.") +
                         entry(now - 59'000'000, "vllm.service", "vllm.service: Failed with result 'oom-kill'.") +
                         entry(now - 58'000'000, "other.service", "other.service: Failed with result 'oom-kill'.");
  test::write_file(root + "/export.txt", exported);
  auto w = test::run({tool, "-o", root + "/var/log/journal/remote.journal", root + "/export.txt"});
  ASSERT_EQ(w.status, 0) << w.err;

  auto r = test::run_aimem({"diagnose", "--root", root, "--unit", "vllm", "--since", "10m", "--json"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "host_ram");  // oom-kill result, no MemoryMax in evidence
  ASSERT_EQ(j["incidents"].size(), 1u) << r.out;  // other.service is not this unit's
  EXPECT_NE(j["incidents"][0]["summary"].get<std::string>().find("vllm.service"), std::string::npos);
  EXPECT_NE(j["incidents"][0]["evidence"][0]["where"].get<std::string>().find("journal (vllm)"), std::string::npos);
  // Outside the window: nothing.
  auto old = test::run_aimem({"diagnose", "--root", root, "--unit", "vllm", "--since", "30s", "--json"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  ASSERT_EQ(old.status, 0) << old.err;
  EXPECT_EQ(json::parse(old.out)["layer"], "none");
}

}  // namespace
}  // namespace aimem
