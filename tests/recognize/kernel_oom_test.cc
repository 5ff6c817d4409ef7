// Kernel OOM reports across kernel versions (Linux mm/oom_kill.c and mm/memcontrol.c).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> kills(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::kernel_oom_kill || f.kind == FactKind::kernel_oom_event) out.push_back(f);
  return out;
}

// Captured on this project's machine (6.18 kernel, cgroup v1) from a real 32 MiB limit.
const char* kMemcgV1Report = R"([   59.713562] RIP: 0033:0x7f74fe78c0ba
[   59.713500] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[   59.713520]  mem_cgroup_out_of_memory+0x13a/0x150
[   59.713590] memory: usage 32768kB, limit 32768kB, failcnt 307
[   59.713596] memory+swap: usage 32768kB, limit 9007199254740988kB, failcnt 0
[   59.713598] kmem: usage 188kB, limit 9007199254740988kB, failcnt 0
[   59.713599] Memory cgroup stats for /process_api/15d29da2/aimem-probe:
[   59.713630] cache 0
[   59.713681] Tasks state (memory values in pages):
[   59.713682] [  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name
[   59.713684] [   2079]     0  2079    10823     9783     8128     1655         0   131072        0             0 python3
[   59.713689] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/process_api/15d29da2/aimem-probe,task_memcg=/process_api/15d29da2/aimem-probe,task=python3,pid=2079,uid=0
[   59.713707] Memory cgroup out of memory: Killed process 2079 (python3) total-vm:43292kB, anon-rss:32512kB, file-rss:6620kB, shmem-rss:0kB, UID:0 pgtables:128kB oom_score_adj:0
)";

TEST(KernelOom, AssemblesANewFormatMemcgReportIntoOneKill) {
  auto k = kills(kMemcgV1Report);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kind, FactKind::kernel_oom_kill);
  EXPECT_EQ(k[0].pid, 2079);
  EXPECT_EQ(k[0].process, "python3");
  EXPECT_EQ(k[0].layer, Layer::container_limit);
  EXPECT_EQ(k[0].cgroup, "/process_api/15d29da2/aimem-probe");
  EXPECT_EQ(k[0].limit, 32768u * 1024);
  EXPECT_EQ(k[0].usage, 32768u * 1024);
  EXPECT_EQ(k[0].rss, (32512u + 6620u) * 1024);
  EXPECT_GE(k[0].strength, 0.9f);
  // memory+swap's unlimited limit is not mistaken for the memory limit.
  Diagnosis d = test::diagnose_text(kMemcgV1Report);
  EXPECT_EQ(d.layer, Layer::container_limit);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents[0].pool.limit_bytes, 32u << 20);
  EXPECT_NE(d.incidents[0].summary.find("python3 (pid 2079)"), std::string::npos);
}

TEST(KernelOom, GlobalOomWithLoneVictimLinesIsHostRam) {
  const char* log = R"(May 15 23:09:30 droplet kernel: [  518.050606] Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB
May 15 23:09:30 droplet kernel: [  518.053407] oom_reaper: reaped process 15784 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
May 15 23:09:30 droplet kernel: [  518.061172] Out of memory: Killed process 15925 ((resolved)) total-vm:168424kB, anon-rss:4064kB, file-rss:3584kB, shmem-rss:0kB
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 2u);  // the reaper line is not a kill
  EXPECT_EQ(k[0].layer, Layer::host_ram);
  EXPECT_EQ(k[1].process, "(resolved)");  // a comm with parentheses
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.incidents.size(), 1u);  // one burst, one incident
}

TEST(KernelOom, SplitSummaryFragmentIsRejoined) {
  const char* log = R"([   23.346000] stress invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0
[   23.346650] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0
[   23.346691] ,global_oom,task_memcg=/user.slice,task=stress,pid=1888,uid=1001
[   23.346700] Out of memory: Killed process 1888 (stress) total-vm:2000000kB, anon-rss:1900000kB, file-rss:0kB, shmem-rss:0kB, UID:1001
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].layer, Layer::host_ram);
  EXPECT_EQ(k[0].task_cgroup, "/user.slice");
}

TEST(KernelOom, Kernel414SelectionLineDecidesMemcg) {
  const char* log = R"([   13.957383] mem invoked oom-killer: gfp_mask=0x14200ca(GFP_HIGHUSER_MOVABLE), nodemask=(null),  order=0, oom_score_adj=0
[   13.957570] mem cpuset=609e7ec068ac mems_allowed=0
[   13.958013] Task in /docker/609e7ec068ac killed as a result of limit of /docker/609e7ec068ac
[   13.958100] memory: usage 524288kB, limit 524288kB, failcnt 42
[   13.958200] Memory cgroup out of memory: Kill process 93 (mem) score 990 or sacrifice child
[   13.958300] Killed process 93 (mem) total-vm:520000kB, anon-rss:510000kB, file-rss:4kB, shmem-rss:0kB
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].layer, Layer::container_limit);
  EXPECT_EQ(k[0].cgroup, "/docker/609e7ec068ac");
  EXPECT_EQ(k[0].limit, 512u << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(KernelOom, Rhel6VictimLineWithUid) {
  auto k = kills("Mar  2 17:35:10 server1 kernel: [2858609.598568] Killed process 11726, UID 498, (mysqld) total-vm:7823732kB, anon-rss:2539268kB, file-rss:768kB\n");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].pid, 11726);
  EXPECT_EQ(k[0].process, "mysqld");
  EXPECT_EQ(test::diagnose_text("Killed process 11726, UID 498, (mysqld) total-vm:7823732kB, anon-rss:2539268kB, file-rss:768kB\n").layer,
            Layer::host_ram);
}

TEST(KernelOom, KubepodsPathsTellPodFromNode) {
  const std::string pod =
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=ef8074,mems_allowed=0,oom_memcg=/kubepods/burstable/podfbdfe8e3-1a2b-4c3d-9e8f-001122334455,"
      "task_memcg=/kubepods/burstable/podfbdfe8e3-1a2b-4c3d-9e8f-001122334455/ef8074aa,task=manager,pid=966,uid=0\n"
      "Memory cgroup out of memory: Killed process 966 (manager) total-vm:753508kB, anon-rss:58776kB, file-rss:29400kB, shmem-rss:0kB, UID:0 pgtables:288kB oom_score_adj:999\n";
  EXPECT_EQ(test::diagnose_text(pod).layer, Layer::k8s_pod_limit);
  const std::string node =
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=ef8074,mems_allowed=0,oom_memcg=/kubepods.slice,"
      "task_memcg=/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/cri-containerd-abc.scope,task=java,pid=77,uid=0\n"
      "Memory cgroup out of memory: Killed process 77 (java) total-vm:753508kB, anon-rss:58776kB, file-rss:29400kB, shmem-rss:0kB\n";
  Diagnosis d = test::diagnose_text(node);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_NE(d.incidents[0].summary.find("node allocatable"), std::string::npos);
}

TEST(KernelOom, ProseMentioningKilledProcessIsNotAKill) {
  EXPECT_TRUE(kills("we grep for 'Killed process' in the logs every morning\n").empty());
  EXPECT_TRUE(kills("The Killed process list is empty.\n").empty());
}

TEST(KernelOom, ReportWithoutVictimStillCountsAsMemcgOom) {
  const char* cut = R"(Jun 29 07:24:44 compute-11 kernel: memory: usage 1048576kB, limit 1048576kB, failcnt 141
Jun 29 07:24:44 compute-11 kernel: swap: usage 0kB, limit 9007199254740988kB, failcnt 0
Jun 29 07:24:44 compute-11 kernel: Memory cgroup stats for /kubepods.slice/kubepods-burstable.slice/kubepods)";
  auto k = kills(cut);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kind, FactKind::kernel_oom_event);
  EXPECT_EQ(k[0].limit, 1u << 30);
  EXPECT_EQ(test::diagnose_text(cut).layer, Layer::k8s_pod_limit);
}

TEST(KernelOom, GroupKillGivesOneIncidentWithSeveralVictims) {
  const char* log = R"(2026-11-29T10:00:00.100Z kernel: node invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
2026-11-29T10:00:00.101Z kernel: memory: usage 2097152kB, limit 2097152kB, failcnt 9
2026-11-29T10:00:00.102Z kernel: Tasks in /system.slice/api.service are going to be killed due to memory.oom.group set
2026-11-29T10:00:00.103Z kernel: Memory cgroup out of memory: Killed process 100 (node) total-vm:3000000kB, anon-rss:1900000kB, file-rss:0kB, shmem-rss:0kB
2026-11-29T10:00:00.104Z kernel: Memory cgroup out of memory: Killed process 101 (sidecar) total-vm:30000kB, anon-rss:10000kB, file-rss:0kB, shmem-rss:0kB
)";
  EXPECT_EQ(kills(log).size(), 2u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.incidents.size(), 1u);
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(KernelOom, KillsHoursApartAreSeparateIncidentsAndTheLatestIsPrimary) {
  const char* log = R"(2026-11-29T10:00:00Z kernel: Out of memory: Killed process 100 (a) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB
2026-11-29T13:00:00Z kernel: Out of memory: Killed process 200 (b) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB
)";
  Diagnosis d = test::diagnose_text(log);
  ASSERT_EQ(d.incidents.size(), 2u);
  EXPECT_EQ(d.incidents[0].pid, 200);  // independent failures: the latest is what the client just saw
  EXPECT_EQ(d.incidents[1].pid, 100);
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(KernelOom, CallTraceWithoutHeaderIsAMemcgOomOfTheCommThatRanIntoIt) {
  const char* log = R"(Nov 23 15:36:25 localhost kernel: CPU: 0 PID: 5117 Comm: stress Kdump: loaded Tainted: G           OE    5.14.0-285.el9.x86_64
Nov 23 15:36:25 localhost kernel: Call Trace:
Nov 23 15:36:25 localhost kernel: dump_header+0x4a/0x201
Nov 23 15:36:25 localhost kernel: out_of_memory.cold+0xa/0x7e
Nov 23 15:36:25 localhost kernel: mem_cgroup_out_of_memory+0x13a/0x150
Nov 23 15:36:25 localhost kernel: try_charge_memcg+0x6df/0x7a0
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kind, FactKind::kernel_oom_event);
  EXPECT_EQ(k[0].process, "stress");
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
  // An ordinary stack trace without the OOM killer is nothing.
  EXPECT_TRUE(kills("CPU: 1 PID: 77 Comm: kworker/1:1\nCall Trace:\n dump_stack+0x5c/0x78\n warn_slowpath_fmt+0x1/0x2\n").empty());
}

// A summary line pasted from a narrow terminal, wrapped inside the pod's
// cgroup path, once and then twice (Yelp/paasta#2713 shows a kernel cgroup path
// wrapped mid-word this way; values ours). The continuation has no prefix.
TEST(KernelOom, SummaryWrappedByANarrowTerminalIsJoined) {
  const char* once = R"([ 9021.118243] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=969
[ 9021.118390] memory: usage 8388608kB, limit 8388608kB, failcnt 5121
[ 9021.118452] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-ab12cd34ef56.scope,mems_allowed=0,oom_memcg=/kubepods/burstable/pod1234abcd-
5678-90ab-cdef-1234567890ab/ab12cd34ef56,task_memcg=/kubepods/burstable/pod1234abcd-5678-90ab-cdef-1234567890ab/ab12cd34ef56,task=python3,pid=4242,uid=0
[ 9021.118501] Memory cgroup out of memory: Killed process 4242 (python3) total-vm:9437184kB, anon-rss:8290304kB, file-rss:61440kB, shmem-rss:0kB, UID:0 pgtables:16684kB oom_score_adj:969
)";
  const std::string path = "/kubepods/burstable/pod1234abcd-5678-90ab-cdef-1234567890ab/ab12cd34ef56";
  auto k = kills(once);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].cgroup, path);
  EXPECT_EQ(k[0].task_cgroup, path);
  EXPECT_EQ(k[0].pid, 4242);
  EXPECT_EQ(k[0].limit, 8388608ULL * 1024);
  Diagnosis d = test::diagnose_text(once);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);

  // Wrapped twice, and without the victim line: the summary alone names the kill.
  const char* twice = R"([ 9021.118452] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-ab12cd34ef56.scope,mems_allowed=0,oom_memcg=/kubepods/burstable/pod1234abcd-
5678-90ab-cdef-1234567890ab/ab12cd34ef56,task_memcg=/kubepods/burs
table/pod1234abcd-5678-90ab-cdef-1234567890ab/ab12cd34ef56,task=python3,pid=4242,uid=0
)";
  k = kills(twice);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kind, FactKind::kernel_oom_kill);
  EXPECT_EQ(k[0].cgroup, path);
  EXPECT_EQ(k[0].task_cgroup, path);
  EXPECT_EQ(k[0].pid, 4242);
  EXPECT_EQ(k[0].process, "python3");
}

// A 4.x report's "limit of" path cut where a terminal wrapped it: the task's
// path it begins is the limit's (modelled on a Spark-on-Kubernetes driver
// report of 2017 with the kubelet's old /docker/<id> naming; values ours). On
// a node that kubectl output shows to be Kubernetes, that container is a pod's.
TEST(KernelOom, AWrappedLimitPathIsTheTasksAndOnAKubernetesNodeAPods) {
  const char* report = R"([48213.990730] Task in /docker/af2844a8a7be killed as a result of limit of /docker/
af2844a8a7be
[48213.990731] memory: usage 11534336kB, limit 11534336kB, failcnt 297004
[48213.990799] Memory cgroup out of memory: Kill process 17720 (python) score 1920 or sacrifice child
[48213.990800] Killed process 17694 (python) total-vm:12290412kB, anon-rss:11402240kB, file-rss:5264kB
)";
  auto k = kills(report);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].cgroup, "/docker/af2844a8a7be");
  EXPECT_EQ(test::diagnose_text(report).layer, Layer::container_limit);
  const std::string on_node = std::string("$ kubectl describe pod pyspark-pi-driver | grep -A3 Limits\n    Limits:\n      cpu:      1\n"
                                          "      memory:   11Gi\n") + report;
  EXPECT_EQ(test::diagnose_text(on_node).layer, Layer::k8s_pod_limit);
}

// A global OOM whose Mem-Info shows the kernel's unreclaimable slab holding
// most of the machine, processes almost nothing (modelled on a stress-ng
// oom-pipe run reported on a 16 GB sparc64 box, 2022; values ours): kernel
// memory accumulated. The same report with the slab small says nothing.
TEST(KernelOom, UnreclaimableSlabHoldingTheMachineIsKernelAccumulation) {
  auto report = [](const std::string& slab) {
    return "[ 3321.771204] kworker/7:1 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
           "[ 3321.771690] Mem-Info:\n"
           "[ 3321.771702] active_anon:12 inactive_anon:9 isolated_anon:0\n"
           "[ 3321.771702]  slab_reclaimable:281405 slab_unreclaimable:" + slab + "\n"
           "[ 3321.772129] 2095568 pages RAM\n"
           "[ 3321.772480] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
           "task_memcg=/user.slice/user-1000.slice/session-3.scope,task=stress-ng,pid=2231,uid=1000\n"
           "[ 3321.772533] Out of memory: Killed process 2231 (stress-ng) total-vm:47232kB, anon-rss:976kB, file-rss:720kB, "
           "shmem-rss:0kB, UID:1000 pgtables:48kB oom_score_adj:1000\n";
  };
  Diagnosis d = test::diagnose_text(report("1609330"));
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  ASSERT_FALSE(d.incidents.empty());
  bool said = false;
  for (const std::string& r : d.incidents[0].reasons) said |= r.find("unreclaimable kernel slab") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_NE(test::diagnose_text(report("20133")).cause, Cause::leak_or_accumulation);
}

// The join is only for a cut summary: a complete one is left alone, and the
// next line of the log (with its own prefix, or another message) is not glued on.
TEST(KernelOom, CompleteSummaryIsNotJoinedWithTheNextLine) {
  const char* log = R"(oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=stress,pid=1888,uid=1001
task=other,pid=99,uid=0 appears in an unrelated tool's output
[   23.346700] Out of memory: Killed process 1888 (stress) total-vm:2000000kB, anon-rss:1900000kB, file-rss:0kB, shmem-rss:0kB, UID:1001
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].pid, 1888);
  EXPECT_EQ(k[0].task_cgroup, "/user.slice");
  EXPECT_EQ(k[0].layer, Layer::host_ram);
}

TEST(KernelOom, HelpTextQuotingAVictimLineIsNotAKill) {
  EXPECT_TRUE(kills("  --watch-kernel        Report lines such as 'Out of memory: Killed process 1234 (python3)' from dmesg.\n").empty());
}

// A global OOM for an order-3 request (32 kB contiguous) while over a
// gigabyte lies free in 4 and 8 kB blocks: fragmentation, read from the
// zones' free-block lines; the same report with free 32 kB blocks is not
// (modelled on raspberrypi/linux#3872; values ours).
TEST(KernelOom, HighOrderRequestWithNoBlockOfItsSizeIsFragmentation) {
  std::string report = R"([ 9120.100001] kworker/u8:1 invoked oom-killer: gfp_mask=0x40cc0(GFP_KERNEL|__GFP_COMP), order=3, oom_score_adj=0
[ 9120.100050] Mem-Info:
[ 9120.100060] active_anon:20144 inactive_anon:38211 isolated_anon:0
[ 9120.100070]  free:289000 free_pcp:290 free_cma:0
[ 9120.100080] DMA: 1400*4kB (UME) 900*8kB (UME) 1*16kB (M) 0*32kB 0*64kB 0*128kB 0*256kB 0*512kB 0*1024kB 0*2048kB 0*4096kB = 12816kB
[ 9120.100090] HighMem: 130100*4kB (UM) 77001*8kB (UM) 3*16kB (M) 0*32kB 0*64kB 0*128kB 0*256kB 0*512kB 0*1024kB 0*2048kB 0*4096kB = 1136456kB
[ 9120.100200] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/cam.service,task=camd,pid=733,uid=0
[ 9120.100210] Out of memory: Killed process 733 (camd) total-vm:301234kB, anon-rss:120332kB, file-rss:2048kB, shmem-rss:0kB, UID:0 pgtables:300kB oom_score_adj:0
)";
  auto k = kills(report);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].cause, Cause::fragmentation);
  EXPECT_NE(k[0].detail.find("order=3"), std::string::npos) << k[0].detail;
  Diagnosis d = test::diagnose_text(report);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  std::string whole = report;
  whole.replace(whole.find("0*32kB 0*64kB 0*128kB 0*256kB"), 29, "9*32kB 0*64kB 0*128kB 0*256kB");
  EXPECT_EQ(kills(whole)[0].cause, Cause::unknown);
  std::string order0 = report;
  order0.replace(order0.find("order=3"), 7, "order=0");
  EXPECT_EQ(kills(order0)[0].cause, Cause::unknown);
}

// An excerpt cut at the task table (`dmesg | grep -A12 'Tasks state'`,
// modelled on dotnet/source-build#1687; our pids and sizes): the table opens
// the report, so its rows are the kill's, and five copies of one program
// filling a container's limit are parallel work.
TEST(KernelOom, ATaskTableWithoutItsHeaderIsStillTheKillsTable) {
  Diagnosis d = test::diagnose_text(
      "$ docker run --rm -m 4g -v $PWD:/src -w /src builder:7 ./build.sh\n"
      "[880211.401220] Tasks state (memory values in pages):\n"
      "[880211.401221] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n"
      "[880211.401222] [  41002]  1000 41002     1005      688    40960        0             0 bash\n"
      "[880211.401224] [  41020]  1000 41020   841102   210488  2101248        0             0 dotnet\n"
      "[880211.401225] [  41033]  1000 41033   893310   199102  1990656        0             0 dotnet\n"
      "[880211.401226] [  41050]  1000 41050   842001   204110  2043904        0             0 dotnet\n"
      "[880211.401227] [  41061]  1000 41061   931877   240880  2412544        0             0 dotnet\n"
      "[880211.401228] [  41072]  1000 41072   880015   189004  1888256        0             0 dotnet\n"
      "[880211.401260] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=5b1e,mems_allowed=0,oom_memcg=/docker/5b1e,"
      "task_memcg=/docker/5b1e,task=dotnet,pid=41061,uid=1000\n"
      "[880211.401290] Memory cgroup out of memory: Killed process 41061 (dotnet) total-vm:3727508kB, anon-rss:957704kB, "
      "file-rss:5816kB, shmem-rss:0kB, UID:1000 pgtables:2356kB oom_score_adj:0\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

// Rows a grep kept without any heading (modelled on
// dionysius/vaultwarden-deb#13: `dmesg | grep` for the compiler's rows and
// the kill; our pids and pages): still the kill's table, five copies of the
// victim's program.
TEST(KernelOom, RowsAGrepKeptWithoutAHeadingAreStillTheTable) {
  const std::string rows =
      "[ 2210.443107] [   9120]     0  9120   902417   590115  5246976        0             0 rustc\n"
      "[ 2210.443112] [   9131]     0  9131   771204   512842  4608000        0             0 rustc\n"
      "[ 2210.443115] [   9140]     0  9140   694561   388233  3751936        0             0 rustc\n"
      "[ 2210.443118] [   9152]     0  9152   412118   258104  2383872        0             0 rustc\n"
      "[ 2210.443121] [   9170]     0  9170   351005   211756  2002944        0             0 rustc\n";
  const std::string kill =
      "[ 2210.443379] Out of memory: Killed process 9120 (rustc) total-vm:3609668kB, anon-rss:2358264kB, file-rss:2196kB, shmem-rss:0kB, "
      "UID:0 pgtables:6128kB oom_score_adj:0\n";
  auto f = test::facts_of_kind(rows + kill, FactKind::kernel_oom_kill);
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f[0].sequences);
  EXPECT_EQ(*f[0].sequences, 5u);
  Diagnosis d = test::diagnose_text(rows + kill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  // Without the rows the kill alone says nothing of the copies.
  EXPECT_EQ(test::diagnose_text(kill).cause, Cause::unknown);
  // A line of numbers that is not a task row opens nothing.
  EXPECT_TRUE(test::facts_of_kind("[ 2210.443107] [ok] 1 2 3 4 5 6 7 rustc\n", FactKind::kernel_oom_kill).empty());
}

// The kernel's OOM seen only by its panic (modelled on a SONiC switch's
// console with vm.panic_on_oom = 2, Azure/sonic-buildimage threads; our own
// times and pids). panic_on_oom=2 ("compulsory") panics for a memory
// cgroup's OOM too: with no header in view the pool is not named, but the
// failure is not "none". The same panic after SysRq's "Manual OOM
// execution" (echo f > /proc/sysrq-trigger) is an OOM run by hand.
TEST(KernelOom, APanicOnOomWithoutItsHeaderIsAnUnnamedPoolAndSysrqIsByHand) {
  const std::string panic =
      "[ 5120.330121] Kernel panic - not syncing: Out of memory: compulsory panic_on_oom is enabled\n"
      "[ 5120.330409] CPU: 1 PID: 3310 Comm: syncd Not tainted 4.19.0-12-2-amd64 #1 Debian 4.19.152-1\n";
  Diagnosis d = test::diagnose_text(panic);
  EXPECT_EQ(d.layer, Layer::unknown);
  EXPECT_FALSE(test::facts_of_kind(panic, FactKind::kernel_oom_event).empty());
  Diagnosis manual = test::diagnose_text("[ 5119.901220] sysrq: SysRq : Manual OOM execution\n" + panic);
  EXPECT_EQ(manual.layer, Layer::not_memory);
  // "system-wide" (panic_on_oom=1) is the host's own OOM.
  EXPECT_EQ(test::diagnose_text("[ 88.1] Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled\n").layer,
            Layer::host_ram);
  // The sysctl's echo is no failure.
  EXPECT_EQ(test::diagnose_text("vm.panic_on_oom = 2\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
