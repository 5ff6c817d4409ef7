// A GPU pool's own figures (src/recognize/families/device_pools.cc) and the
// fragmentation the diagnosis reads from them (classify.cc,
// cause_from_device_pool). Inputs written here with our own figures in the
// formats the programs print: the RAPIDS Accelerator for Spark's
// GpuDeviceManager and DeviceMemoryEventHandler lines (their log strings in
// NVIDIA/spark-rapids, DeviceMemoryEventHandler.scala and
// GpuDeviceManager.scala; pasted in NVIDIA/spark-rapids threads on arena
// pools), and a CUDA stream-ordered pool's attributes as a replay tool
// prints them (rapidsai/rmm threads on the async resource).
#include <gtest/gtest.h>

#include <string>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

std::vector<Fact> pools(const std::string& text) {
  std::vector<Fact> out;
  for (Fact& f : test::facts_of_kind(text, FactKind::memory_usage))
    if (f.detail.rfind("device pool (", 0) == 0) out.push_back(std::move(f));
  return out;
}

std::string rapids(const std::string& allocated) {
  return "22/03/14 10:02:11 INFO GpuDeviceManager: Initializing RMM ARENA pool size = 30720.0 MiB on gpuId 0\n"
         "22/03/14 10:02:11 INFO GpuDeviceManager: Using per-thread default stream\n"
         "22/03/14 10:19:40 INFO DeviceMemoryEventHandler: Device allocation of 536870912 bytes failed, device store has 0 bytes. "
         "Total RMM allocated is " + allocated + " bytes.\n"
         "22/03/14 10:19:40 WARN DeviceMemoryEventHandler: Device store exhausted, unable to allocate 536870912 bytes. "
         "Total RMM allocated is " + allocated + " bytes.\n"
         "22/03/14 10:19:40 ERROR Executor: Exception in task 7.0 in stage 12.0 (TID 901)\n"
         "java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: RMM failure at:/build/_deps/rmm-src/include/"
         "rmm/mr/device/arena_memory_resource.hpp:157: Maximum pool size exceeded\n"
         "\tat ai.rapids.cudf.Table.innerJoin(Native Method)\n";
}

TEST(DevicePools, RapidsPoolSizeAndAllocatedAreRead) {
  auto p = pools(rapids("9663676416"));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].detail, "device pool (RMM ARENA)");
  EXPECT_EQ(*p[1].total, 30720 * units::MiB);
  EXPECT_EQ(*p[1].allocated, 9663676416u);
  EXPECT_EQ(*p[1].requested, 536870912u);
}

// 21 GiB of the 30 GiB arena free and a 512 MiB request refused: the free
// part was not in one piece. With the arena allocated to the brim, the
// same failure is a full pool, not fragmentation.
TEST(DevicePools, RoomInThePoolForTheRefusedRequestIsFragmentation) {
  Diagnosis d = diagnose_text(rapids("9663676416"));
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  bool said = false;
  for (const std::string& r : d.incidents.at(0).reasons) said = said || r.find("RMM ARENA's 30.0 GiB") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_NE(diagnose_text(rapids("31943819264")).cause, Cause::fragmentation);  // 29.75 GiB allocated: no room
}

// Older plugins print the initial and the maximum size; a maximum of 0 is
// none, and the initial size is the pool.
TEST(DevicePools, OlderInitialAndMaxSizesGiveThePool) {
  auto withmax = pools("INFO GpuDeviceManager: Initializing RMM  initial size = 8192.0 MB, max size = 16384.0 MB on gpuId 0\n"
                       "INFO DeviceMemoryEventHandler: Device allocation of 1048576 bytes failed, device store has 0 bytes. "
                       "Total RMM allocated is 1073741824 bytes.\n");
  ASSERT_EQ(withmax.size(), 1u);
  EXPECT_EQ(*withmax[0].total, 16384 * units::MiB);
  EXPECT_EQ(withmax[0].detail, "device pool (RMM)");
  auto nomax = pools("INFO GpuDeviceManager: Initializing RMM POOL initial size = 8192.0 MB, max size = 0.0 MB on gpuId 0\n"
                     "INFO DeviceMemoryEventHandler: Device allocation of 1048576 bytes failed, device store has 0 bytes. "
                     "Total RMM allocated is 1073741824 bytes.\n");
  ASSERT_EQ(nomax.size(), 1u);
  EXPECT_EQ(*nomax[0].total, 8192 * units::MiB);
  // Figures without the pool's size say nothing.
  EXPECT_TRUE(pools("INFO DeviceMemoryEventHandler: Device allocation of 1048576 bytes failed, device store has 0 bytes. "
                    "Total RMM allocated is 1073741824 bytes.\n")
                  .empty());
}

// A stream-ordered pool reserving far more than is live when a small
// request fails.
TEST(DevicePools, AStreamOrderedPoolReservingFarMoreThanIsLiveIsFragmentation) {
  const std::string log =
      "replayed 1,800,000 events, 281.40 GB allocated/deallocated in total, peak live 40.12 GB\n"
      "cudaMemPoolAttrReservedMemCurrent : 71,940,702,208\n"
      "cudaMemPoolAttrUsedMemCurrent     : 38,104,653,824\n"
      "failed to allocate 201,326,592 bytes on stream 0x5611a2b0c2f0\n"
      "C++ exception with description \"std::bad_alloc: out_of_memory: CUDA error at: /opt/rmm/include/rmm/mr/device/"
      "cuda_async_view_memory_resource.hpp:113: cudaErrorMemoryAllocation out of memory\" thrown in the test body.\n";
  auto p = pools(log);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(*p[0].total, 71940702208u);
  EXPECT_EQ(*p[0].allocated, 38104653824u);
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  // Reserved about what is live: nothing stranded.
  std::string full = log;
  full.replace(full.find("71,940,702,208"), 14, "38,900,000,000");
  EXPECT_NE(diagnose_text(full).cause, Cause::fragmentation);
}

}  // namespace
}  // namespace aimem
