// rocm-smi's memory report (src/recognize/families/rocm_smi.cc). Written
// here in its format with our own figures, modelled on a TensorFlow-ROCm
// start-up that failed while another program held the card
// (ROCm/tensorflow-upstream#82).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(RocmSmi, ASnapshotBesideTheFailureIsMemoryOthersHold) {
  const std::string log =
      "2019-01-11 08:52:33.902114: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 14.26G (15311827712 "
      "bytes) from device: hipError_t(1002)\n"
      "$ /opt/rocm/bin/rocm-smi --showmeminfo vram\n"
      "GPU[0]          : vram Total Memory (B): 17163091968\n"
      "GPU[0]          : vram Total Used Memory (B): 12884901888\n";
  auto g = test::facts_of_kind(log, FactKind::gpu_state);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].total, 17163091968u);
  EXPECT_EQ(g[0].other_processes, 12884901888u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::other_process);
  // An idle card says nothing of other processes.
  auto idle = test::facts_of_kind("GPU[1]\t\t: VRAM Total Memory (B): 25753026560\nGPU[1]\t\t: VRAM Total Used Memory (B): 0\n",
                                  FactKind::gpu_state);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_FALSE(idle[0].other_processes);
}

}  // namespace
}  // namespace aimem
