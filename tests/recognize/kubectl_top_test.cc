// One `kubectl top pods` table (src/recognize/families/kubectl_top.cc) and
// the neighbour the diagnosis reads from it (classify.cc,
// cause_from_pod_table). Inputs written here in kubectl's and oc's table
// formats with our own pods and figures, modelled on evictions pasted with
// the node's top pods (kubernetes/kubernetes threads on BestEffort pods
// evicted beside an unlimited neighbour; k3s and OpenShift node OOM threads).
#include <gtest/gtest.h>

#include <string>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> rows(const std::string& text) {
  std::vector<Fact> out;
  for (Fact& f : test::facts_of_kind(text, FactKind::memory_usage))
    if (f.detail == kPodTableDetail) out.push_back(std::move(f));
  return out;
}

const std::string kEviction =
    "$ kubectl -n shop describe pod cart-api-5d9f8c7b6-x2kqp | grep -E '^(Status|Reason|Message)'\n"
    "Status:         Failed\n"
    "Reason:         Evicted\n"
    "Message:        The node was low on resource: memory. Container cart-api was using 2468006Ki, which exceeds its request of 1Gi.\n";

std::string top(const std::string& hog) {
  return "$ kubectl top pods -A --sort-by=memory | head -4\n"
         "NAMESPACE   NAME                              CPU(cores)   MEMORY(bytes)\n"
         "batch       " + hog + "\n"
         "shop        cart-api-5d9f8c7b6-x2kqp          310m         2402Mi\n"
         "monitoring  prometheus-k8s-0                  190m         1210Mi\n";
}

TEST(KubectlTop, RowsAreReadByTheirHeader) {
  auto r = rows(top("report-builder-6c4d8b9f7-q7wzt    2950m        7310Mi"));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].pod, "report-builder-6c4d8b9f7-q7wzt");
  EXPECT_EQ(*r[0].usage, 7310 * units::MiB);
  EXPECT_EQ(r[2].pod, "prometheus-k8s-0");
  EXPECT_EQ(r[0].where.line, 2u);  // the header's line
  // --containers: a pod's containers are one pod.
  auto c = rows("POD                        NAME          CPU(cores)   MEMORY(bytes)\n"
                "vision-7f6d9c5b8-2kq9w     model         5120m        18204Mi\n"
                "vision-7f6d9c5b8-2kq9w     sidecar       20m          310Mi\n");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(*c[0].usage, (18204 + 310) * units::MiB);
  // The same pod twice without --containers is a loop over time, not a table;
  // `kubectl top nodes` is the node's.
  EXPECT_TRUE(rows("NAME        CPU(cores)   MEMORY(bytes)\n"
                   "api-0       120m         900Mi\n"
                   "api-0       130m         1400Mi\n")
                  .empty());
  EXPECT_TRUE(rows("NAME      CPU(cores)   CPU%   MEMORY(bytes)   MEMORY%\n"
                   "node-a    3811m        50%    15431Mi         98%\n")
                  .empty());
}

// The evicted pod was over its request, but a neighbour with five times its
// share filled the node; a neighbour of about its own size says nothing.
TEST(KubectlTop, ANeighbourHoldingTwiceTheEvictedPodsShareFilledTheNode) {
  Diagnosis d = test::diagnose_text(kEviction + top("report-builder-6c4d8b9f7-q7wzt    2950m        7310Mi"));
  EXPECT_EQ(d.layer, Layer::k8s_eviction);
  EXPECT_EQ(d.cause, Cause::other_process);
  bool said = false;
  for (const std::string& r : d.incidents.at(0).reasons) said = said || r.find("pod report-builder-6c4d8b9f7-q7wzt held") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_NE(test::diagnose_text(kEviction + top("report-builder-6c4d8b9f7-q7wzt    2950m        3210Mi")).cause, Cause::other_process);
}

// The largest row is the failed pod itself (its name on the eviction's
// line): not a neighbour.
TEST(KubectlTop, TheFailedPodsOwnRowIsNoNeighbour) {
  const std::string log =
      "2026-03-02T10:12:44Z   ci-runner-8x2lq   The node was low on resource: memory. Threshold quantity: 400Mi, available: 380112Ki. "
      "Container dind was using 1211304Ki, request is 0, has larger consumption of memory.\n"
      "NAME                CPU(cores)   MEMORY(bytes)\n"
      "ci-runner-8x2lq     2810m        6120Mi\n"
      "coredns-5d78c9869d  4m           21Mi\n";
  EXPECT_NE(test::diagnose_text(log).cause, Cause::other_process);
}

// A node's own OOM kill (no cgroup limit) of a small pod's process beside a
// large neighbour.
TEST(KubectlTop, ANodeOomKillBesideALargeNeighbourIsTheNeighbours) {
  const std::string log =
      "$ kubectl top pods -A --sort-by=memory | head -3\n"
      "NAMESPACE   NAME                        CPU(cores)   MEMORY(bytes)\n"
      "qa          soak-load-6b7c8d9f5-p2x4m   990m         5012Mi\n"
      "apps        api-7d8f9c6b5-k2m4q         35m          580Mi\n"
      "[88211.412093] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
      "task_memcg=/kubepods/burstable/pod1c2d3e4f,task=api,pid=41877,uid=1000\n"
      "[88211.412160] Out of memory: Killed process 41877 (api) total-vm:1821244kB, anon-rss:590112kB, file-rss:10212kB, "
      "shmem-rss:0kB, UID:1000 pgtables:2048kB oom_score_adj:980\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.cause, Cause::other_process);
}

}  // namespace
}  // namespace aimem
