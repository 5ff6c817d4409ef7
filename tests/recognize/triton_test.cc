// Triton Inference Server's CUDA memory pool (src/recognize/families/
// triton.cc). Lines written here in the server's log format
// (cuda_memory_manager.cc, memory.cc), with our own sizes, modelled on
// triton-inference-server/server#8177 (an ensemble's buffer larger than the
// default 64 MiB pool) and the pool sizes its threads paste.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

constexpr const char* kPool = "I0302 08:01:12.118402 1 cuda_memory_manager.cc:107] \"CUDA memory pool is created on device 0 with size 67108864\"\n";

TEST(Triton, ABufferLargerThanTheWholePoolIsThePoolSetTooSmall) {
  const std::string log = std::string(kPool) +
                          "I0302 08:01:15.902117 1 model_lifecycle.cc:849] \"successfully loaded 'pre_ensemble'\"\n"
                          "W0302 11:40:02.551207 1 memory.cc:212] Failed to allocate CUDA memory with byte size 150994944 on GPU 0: "
                          "CNMEM_STATUS_OUT_OF_MEMORY, falling back to pinned system memory\n"
                          "E0302 11:40:02.580331 1 pb_stub.cc:402] An error occurred while trying to load GPU buffers in the Python "
                          "backend stub: failed to copy data: invalid argument\n";
  auto oom = test::facts_of_kind(log, FactKind::gpu_oom);
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_EQ(*oom[0].requested, 150994944u);
  EXPECT_EQ(*oom[0].limit, 67108864u);
  EXPECT_EQ(oom[0].gpu, 0);
  // "falling back to pinned system memory" is where the buffer went next,
  // not a pinned host allocation that failed: still the device's pool.
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

TEST(Triton, ABufferThePoolCouldHoldFoundItFullAndAnotherDevicesPoolIsNotItsSize) {
  const std::string fits = std::string(kPool) +
                           "W0302 11:40:02.551207 1 memory.cc:212] Failed to allocate CUDA memory with byte size 8388608 on GPU 0: "
                           "CNMEM_STATUS_OUT_OF_MEMORY, falling back to pinned system memory\n";
  Diagnosis d = test::diagnose_text(fits);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_NE(d.cause, Cause::limit_too_low);
  auto other = test::facts_of_kind(std::string(kPool) +
                                       "W0302 11:40:02.551207 1 memory.cc:212] Failed to allocate CUDA memory with byte size 150994944 "
                                       "on GPU 1: CNMEM_STATUS_OUT_OF_MEMORY, falling back to pinned system memory\n",
                                   FactKind::gpu_oom);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_FALSE(other[0].limit);
  // The pool's creation alone is a healthy start-up.
  EXPECT_EQ(test::diagnose_text(kPool).layer, Layer::none);
}

}  // namespace
}  // namespace aimem
