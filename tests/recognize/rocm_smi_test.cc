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

// A loop of `rocm-smi --showmeminfo vram | grep Used` while a benchmark ran
// (modelled on an IREE HIP driver run on an MI300X; values ours): each
// reading is a snapshot of its own, of the device whose size the first full
// report gave, and rising into the failure they are the work's own growth,
// not memory other processes held.
TEST(RocmSmi, UsedReadingsInALoopAreSnapshotsOfOneDeviceThatGrew) {
  auto log = [](const char* third) {
    return std::string("$ rocm-smi --showmeminfo vram\n"
                       "GPU[0]          : VRAM Total Memory (B): 206141652992\n"
                       "GPU[0]          : VRAM Total Used Memory (B): 58203480576\n"
                       "[120/400] conv_bwd_8x56x56x256 ... 100 iters ok\n"
                       "$ rocm-smi --showmeminfo vram | grep Used\n"
                       "GPU[0]          : VRAM Total Used Memory (B): 131881527296\n"
                       "[240/400] conv_bwd_4x128x128x96 ... 100 iters ok\n"
                       "$ rocm-smi --showmeminfo vram | grep Used\n"
                       "GPU[0]          : VRAM Total Used Memory (B): ") +
           third +
           "\n"
           "[291/400] conv_bwd_4x235x363x224\n"
           ">>> ERROR: c/runtime/src/iree/hal/drivers/hip/hip_allocator.c:859: RESOURCE_EXHAUSTED; HIP driver error "
           "'hipErrorOutOfMemory' (2): out of memory\n";
  };
  auto g = test::facts_of_kind(log("199938067456"), FactKind::gpu_state);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[2].total, 206141652992u);
  EXPECT_EQ(g[2].usage, 199938067456u);
  Diagnosis grew = test::diagnose_text(log("199938067456"));
  EXPECT_EQ(grew.layer, Layer::gpu_vram);
  EXPECT_EQ(grew.cause, Cause::leak_or_accumulation) << test::reason_text(grew);
  // The last reading back down: no growth into the failure, the memory in use is read as before.
  EXPECT_NE(test::diagnose_text(log("60203480576")).cause, Cause::leak_or_accumulation);
}

}  // namespace
}  // namespace aimem
