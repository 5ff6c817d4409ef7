// The allocator's own figures (src/recognize/families/allocator_stats.cc) and
// the fragmentation they show. Inputs written here in each program's format
// with our own values, modelled on: glibc malloc_stats() and mallinfo2()
// output pasted in BasedHardware/omi#6938, a Python service's memory probe;
// jemalloc's malloc_stats_print() summary line (jemalloc/jemalloc
// doc/jemalloc.xml.in, "stats.resident"); Redis INFO memory fields
// (redis/redis src/server.c genRedisInfoString).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;
using test::facts_of_kind;

const Fact* allocator_fact(const std::vector<Fact>& facts) {
  for (const Fact& f : facts)
    if (f.detail.rfind("allocator (", 0) == 0) return &f;
  return nullptr;
}

const char* kPodKill =
    "Apr 22 09:41:08 node-7 kernel: Memory cgroup out of memory: Killed process 3718822 (python3) total-vm:9873412kB, "
    "anon-rss:4702120kB, file-rss:14832kB, shmem-rss:0kB, UID:0 pgtables:10224kB oom_score_adj:873\n"
    "Apr 22 09:41:08 node-7 kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-4c0e91d7.scope,"
    "mems_allowed=0,oom_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2f8d1c4e_77a2.slice/"
    "cri-containerd-4c0e91d7.scope,task_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2f8d1c4e_77a2.slice/"
    "cri-containerd-4c0e91d7.scope,task=python3,pid=3718822,uid=0\n";

TEST(AllocatorStats, MallocStatsTotalIsReadOverTheArenas) {
  std::string text =
      "Arena 0:\nsystem bytes     =  608174080\nin use bytes     =  283115520\n"
      "Arena 1:\nsystem bytes     =  135168000\nin use bytes     =   61972480\n"
      "Total (incl. mmap):\nsystem bytes     = 3891265536\nin use bytes     = 1417658368\n"
      "max mmap regions =        41\n";
  auto facts = facts_of_kind(text, FactKind::memory_usage);
  const Fact* a = allocator_fact(facts);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*a->total, 3891265536u);
  EXPECT_EQ(*a->allocated, 1417658368u);
  EXPECT_NE(a->detail.find("malloc_stats"), std::string::npos);
}

TEST(AllocatorStats, ArenasAreSummedWhenNoTotalIsPrinted) {
  std::string text =
      "Arena 0:\nsystem bytes     =  412876800\nin use bytes     =  171034624\n"
      "Arena 1:\nsystem bytes     =  398458880\nin use bytes     =  120725504\n";
  auto facts = facts_of_kind(text, FactKind::memory_usage);
  const Fact* a = allocator_fact(facts);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*a->total, 412876800u + 398458880u);
  EXPECT_EQ(*a->allocated, 171034624u + 120725504u);
}

TEST(AllocatorStats, MallinfoJemallocRedisAndAnApplicationsFigures) {
  auto one = [](const std::string& text) {
    auto facts = facts_of_kind(text, FactKind::memory_usage);
    const Fact* a = allocator_fact(facts);
    return a ? std::make_pair(a->total.value_or(0), a->allocated.value_or(0)) : std::make_pair(uint64_t{0}, uint64_t{0});
  };
  // mmapped chunks (hblkhd) count on both sides.
  EXPECT_EQ(one("mallinfo2: arena=3126853632 uordblks=1470103552 fordblks=1656750080 hblkhd=41943040 keepcost=135168\n"),
            std::make_pair(uint64_t{3126853632 + 41943040}, uint64_t{1470103552 + 41943040}));
  EXPECT_EQ(one("Allocated: 1417658368, active: 1510432768, metadata: 61277184 (n_thp 0), resident: 3891265536, mapped: "
                "3942645760, retained: 812646400\n"),
            std::make_pair(uint64_t{3891265536}, uint64_t{1417658368}));
  EXPECT_EQ(one("# Memory\r\nused_memory:1417658368\r\nused_memory_human:1.32G\r\nused_memory_rss:3891265536\r\n"),
            std::make_pair(uint64_t{3891265536}, uint64_t{1417658368}));
  // The latest of an application's samples.
  auto app = one(
      "2026-08-24T20:58:10Z INFO diag mem: rss=1.31GB arena=0.92GB live=0.71GB free_in_arena=23%\n"
      "2026-08-25T07:55:42Z INFO diag mem: rss=11.48GB arena=10.83GB live=1.02GB free_in_arena=91%\n");
  EXPECT_NEAR(static_cast<double>(app.first), 10.83 * 1073741824.0, 1e6);
  EXPECT_NEAR(static_cast<double>(app.second), 1.02 * 1073741824.0, 1e6);
  // Not an allocator's figures: a query's "Allocated:" without a resident size.
  EXPECT_EQ(one("Query exceeded per-node user memory limit of 1.20GB [Allocated: 1.20GB, Delta: 4.02MB]\n").first, 0u);
}

// The cause turns on the gap: an allocator holding 2.7x what is in use
// explains a pod's kill as fragmentation; one holding about what is in use
// does not.
TEST(AllocatorStats, AHeldButUnusedGapIsFragmentationAndASmallOneIsNot) {
  auto stats = [](const std::string& held, const std::string& used) {
    return "Total (incl. mmap):\nsystem bytes     = " + held + "\nin use bytes     = " + used + "\n";
  };
  Diagnosis frag = diagnose_text(stats("3891265536", "1417658368") + kPodKill);
  EXPECT_EQ(frag.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(frag.cause, Cause::fragmentation);
  ASSERT_FALSE(frag.incidents.empty());
  bool said = false;
  for (const std::string& r : frag.incidents[0].reasons) said |= r.find("stranded") != std::string::npos;
  EXPECT_TRUE(said);
  Diagnosis tight = diagnose_text(stats("3891265536", "3791265536") + kPodKill);
  EXPECT_EQ(tight.layer, Layer::k8s_pod_limit);
  EXPECT_NE(tight.cause, Cause::fragmentation);
}

// Retained memory that grew looks like a leak in RSS alone; beside the
// allocator's figures the growth is the retained part.
TEST(AllocatorStats, GrowthWithLiveDataFlatIsFragmentationNotALeak) {
  std::string series;
  const char* rows[] = {"rss=1.31GB arena=0.92GB live=0.71GB", "rss=3.06GB arena=2.61GB live=0.98GB",
                        "rss=4.87GB arena=4.37GB live=1.11GB", "rss=6.42GB arena=5.90GB live=0.87GB",
                        "rss=8.11GB arena=7.55GB live=1.20GB", "rss=10.92GB arena=10.29GB live=1.04GB"};
  int h = 10;
  for (const char* r : rows) series += "2026-08-24T" + std::to_string(h++) + ":00:00Z INFO tiles::diag mem: " + r + "\n";
  std::string kill =
      "Aug 25 07:58:19 rig kernel: Out of memory: Killed process 48211 (tiles) total-vm:14937420kB, anon-rss:11904312kB, "
      "file-rss:5120kB, shmem-rss:0kB, UID:1000 pgtables:24312kB oom_score_adj:200\n";
  Diagnosis d = diagnose_text(series + kill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  // The same growth with live data growing along: accumulation.
  std::string growing;
  h = 10;
  for (const char* r : {"rss=1.31GB arena=0.92GB live=0.85GB", "rss=3.06GB arena=2.61GB live=2.50GB",
                        "rss=4.87GB arena=4.37GB live=4.20GB", "rss=6.42GB arena=5.90GB live=5.70GB",
                        "rss=8.11GB arena=7.55GB live=7.30GB", "rss=10.92GB arena=10.29GB live=9.90GB"})
    growing += "2026-08-24T" + std::to_string(h++) + ":00:00Z INFO tiles::diag mem: " + std::string(r) + "\n";
  EXPECT_EQ(diagnose_text(growing + kill).cause, Cause::leak_or_accumulation);
}

// mallinfo's figures as a program may print them, with a unit after a blank
// (modelled on scikit-hep/coffea#249; values ours), and a managed runtime's
// live data beside its heap (modelled on dotnet/runtime#50414's GC test
// output; values ours): the allocator's account either way.
TEST(AllocatorStats, SizesWithAUnitAfterABlankAndAHeapBesideLiveData) {
  const std::string kill =
      "Mar 02 04:11:19 rig kernel: Out of memory: Killed process 20117 (python) total-vm:30417420kB, anon-rss:27904312kB, "
      "file-rss:5120kB, shmem-rss:0kB, UID:1000 pgtables:54312kB oom_score_adj:0\n";
  Diagnosis mallinfo = diagnose_text("[chunk 300/600] rss= 21.8 GiB  tracemalloc current= 0.52 GiB\n"
                                     "mallinfo: arena=22016.0 MiB  uordblks=611.5 MiB  fordblks=21404.5 MiB  keepcost=0.1 MiB\n" +
                                     kill);
  EXPECT_EQ(mallinfo.cause, Cause::fragmentation);
  std::string managed;
  const char* rows[] = {"live=1402MB heap=1511MB", "live=1410MB heap=2012MB", "live=1399MB heap=2488MB", "live=1404MB heap=2870MB"};
  for (int k = 0; k < 4; ++k) managed += "t=" + std::to_string(5 * k + 1) + "s " + rows[k] + " committed=3000MB gen2=" + std::to_string(3 * k) + "\n";
  managed += "Unhandled exception. System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n";
  EXPECT_EQ(diagnose_text(managed).cause, Cause::fragmentation);
}

// Go's runtime as its Prometheus client exports it: idle spans kept, less
// those released to the OS, beside the spans in use. A small pod's limit
// makes a stranded share of half the limit count: the runtime's retained
// heap is what filled it (modelled on golang/go#42330's MADV_FREE shape and
// client_golang's go_memstats_* names; our figures).
TEST(AllocatorStats, GosIdleHeapSpansUnderASmallPodLimitAreFragmentation) {
  const std::string pod =
      "$ kubectl get pod ctl-7c9d -o jsonpath='{.spec.containers[0].resources.limits.memory}{\"\\n\"}"
      "{.status.containerStatuses[0].lastState.terminated.reason}{\"\\n\"}'\n192Mi\nOOMKilled\n";
  const std::string scrape =
      "go_memstats_heap_idle_bytes 1.51003136e+08\ngo_memstats_heap_inuse_bytes 2.4379392e+07\n"
      "go_memstats_heap_released_bytes 3.145728e+06\n";
  auto f = facts_of_kind(scrape, FactKind::memory_usage);
  const Fact* a = allocator_fact(f);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->total, std::optional<uint64_t>(24379392ULL + 151003136ULL - 3145728ULL));
  EXPECT_EQ(a->allocated, std::optional<uint64_t>(24379392ULL));
  Diagnosis d = diagnose_text(pod + scrape);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  // The idle spans mostly released to the OS: nothing stranded.
  Diagnosis released = diagnose_text(pod +
                                     "go_memstats_heap_idle_bytes 1.51003136e+08\ngo_memstats_heap_inuse_bytes 2.4379392e+07\n"
                                     "go_memstats_heap_released_bytes 1.48897792e+08\n");
  EXPECT_NE(released.cause, Cause::fragmentation);
}

// dotnet-counters' "GC Fragmentation (%)" (.NET 7+) at half the heap or more
// beside a pod killed at its limit: free space between the GC's objects
// filled it, not live data. A low share says nothing (modelled on a .NET
// LOH fragmentation thread; our figures).
TEST(AllocatorStats, DotnetsGcFragmentationShareIsRetention) {
  const std::string counters = "[System.Runtime]\n    GC Fragmentation (%)                                          81.4\n"
                               "    GC Heap Size (MB)                                            802\n";
  const std::string kill =
      "$ kubectl get pod api-1 -o jsonpath='{.spec.containers[0].resources.limits.memory}{\"\\n\"}"
      "{.status.containerStatuses[0].lastState.terminated.reason}{\"\\n\"}'\n8Gi\nOOMKilled\n";
  Diagnosis d = diagnose_text(counters + kill);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  std::string low = counters;
  low.replace(low.find("81.4"), 4, "12.0");
  EXPECT_NE(diagnose_text(low + kill).cause, Cause::fragmentation);
}

}  // namespace
}  // namespace aimem
