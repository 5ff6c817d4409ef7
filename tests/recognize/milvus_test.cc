// Milvus's memory quota (src/recognize/families/milvus.cc). Inputs written
// here in the client's exception and the rootcoord's QuotaCenter log lines,
// our own node ids and figures, modelled on milvus-io/milvus threads of
// inserts denied with "memory quota exhausted" (2.2-2.4).
#include <gtest/gtest.h>

#include <string>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

constexpr const char* kDenied =
    "insert batch 486 rows=10000 FAILED: <MilvusException: (code=53, message=deny to write, reason: memory quota exhausted, "
    "please allocate more resources)>\n";

TEST(Milvus, AQuotaDenialIsTheServersGuardNotAPoolOfTheMachine) {
  auto f = test::facts_of_kind(std::string(kDenied) + kDenied, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);  // every denied insert repeats it
  Diagnosis d = test::diagnose_text(kDenied);
  EXPECT_EQ(d.layer, Layer::unknown) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("the server's own guard"), std::string::npos);
}

// With the QuotaCenter's water level after it and the pod's limit before it,
// the node's memory is the pod's limit: the pool is named.
TEST(Milvus, TheWaterLevelAgainstThePodsLimitNamesThePool) {
  const std::string log =
      "$ kubectl -n milvus get pod milvus-querynode-0 -o jsonpath='{.spec.containers[0].resources.limits.memory}'\n"
      "8Gi\n" + std::string(kDenied) +
      "[2024/03/02 07:29:51.307 +00:00] [WARN] [rootcoord/quota_center.go:422] [\"QuotaCenter: QueryNode memory to high water "
      "level\"] [nodeID=12] [memUsage=7802] [totalMem=8192] [memoryWaterLevel=0.95239] [highWaterLevel=0.95]\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].usage, 7802 * units::MiB);
  EXPECT_EQ(f[0].total, 8192 * units::MiB);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::k8s_pod_limit);
  // A limit that is not the guard's total leaves the pool open.
  std::string other = log;
  other.replace(other.find("8Gi\n"), 4, "32Gi\n");
  EXPECT_EQ(test::diagnose_text(other).layer, Layer::unknown);
}

TEST(Milvus, AdviceNamingTheQuotaIsNoFailure) {
  EXPECT_EQ(test::diagnose_text("If you see \"memory quota exhausted\", raise queryNode memory or lower the water level.\n").layer,
            Layer::none);
}

}  // namespace
}  // namespace aimem
