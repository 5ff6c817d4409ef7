// XGBoost's device allocation failure (src/recognize/families/xgboost.cc),
// written in the format of device_helpers.cuh's ThrowOOMError as
// dmlc/xgboost#8292 shows it through XGBoost4J-Spark; our own sizes.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

const char* kTwoWorkers =
    "ml.dmlc.xgboost4j.java.XGBoostError: [09:41:07] /workspace/src/tree/updater_gpu_hist.cu:712: Exception in gpu_hist: "
    "[09:41:07] /workspace/src/common/device_helpers.cuh:428: Memory allocation error on worker 0: Caching allocator\n"
    "- Free memory: 312475648\n"
    "- Requested memory: 1207959552\n"
    "\n"
    "xgboost.core.XGBoostError: [09:41:08] ../src/common/device_helpers.cuh:393: Memory allocation error on worker 2: "
    "std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n"
    "- Free memory: 1048576\n"
    "- Requested memory: 268435456\n";

TEST(XgBoost, EachWorkersFailureCarriesItsFreeAndRequestedBytes) {
  auto f = test::facts_of_kind(kTwoWorkers, FactKind::gpu_oom);
  ASSERT_GE(f.size(), 2u);
  const Fact* first = nullptr;
  const Fact* second = nullptr;
  for (const Fact& x : f) {
    if (x.where.line == 1 && x.family == Family::cuda) first = &x;
    if (x.where.line == 5 && x.family == Family::cuda && x.free) second = &x;
  }
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->free, 312475648u);
  EXPECT_EQ(first->requested, 1207959552u);
  EXPECT_EQ(second->free, 1048576u);
  EXPECT_EQ(second->requested, 268435456u);
  EXPECT_EQ(test::diagnose_text(kTwoWorkers).layer, Layer::gpu_vram);
}

// The figures' lines alone, or far from the message, are nothing.
TEST(XgBoost, TheFiguresAloneAreNoFailure) {
  EXPECT_EQ(test::diagnose_text("- Free memory: 1048576\n- Requested memory: 268435456\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
