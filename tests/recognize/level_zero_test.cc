// Intel GPUs: SYCL / Level Zero status codes, and PyTorch's XPU OOM.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

// The "UR backend failed. UR backend returns:N (CODE)" form of intel/torch-xpu-ops#1170, with
// the device-memory code of the Level Zero / Unified Runtime spec (oneapi-src/level-zero-spec#29).
TEST(LevelZero, OutOfDeviceMemoryIsAGpuOom) {
  const char* text = "RuntimeError: UR backend failed. UR backend returns:39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::level_zero);
  EXPECT_NE(g[0].detail.find("UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::gpu_vram);
  // The Level Zero code as llama.cpp's SYCL backend and ze tracing print it.
  EXPECT_EQ(of_kind("zeMemAllocDevice(hContext, &desc, size, alignment, hDevice, &ptr) = ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\n",
                    FactKind::gpu_oom).size(), 1u);
}

TEST(LevelZero, OutOfHostMemoryIsTheHost) {
  const char* text = "terminate called after throwing an instance of 'sycl::_V1::runtime_error'\n  what():  Native API failed. Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY)\n";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::host_ram);
}

// OUT_OF_RESOURCES is a launch limit as often as memory (oneapi-src/unified-runtime#1322),
// but blind writers read it as the device's memory four times in five on the
// training split: read so, weakly, the detail saying a launch limit reads the
// same (never a sure verdict). CUDA's launch-out-of-resources is a launch's.
// CL_INVALID_BUFFER_SIZE is one buffer over the per-allocation maximum.
TEST(LevelZero, OutOfResourcesIsAWeakDeviceReadingAndALaunchsIsNot) {
  const char* text = "RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].detail.find("a kernel launch limit reads the same"), std::string::npos);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_LT(d.confidence, 0.8f);
  EXPECT_TRUE(of_kind("CUDA error: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\n", FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text("opencl_device_api.cc:238: InternalError: Check failed: (err_code == CL_SUCCESS) is false: OpenCL Error, "
                                "code=-61: CL_INVALID_BUFFER_SIZE\n")
                .layer,
            Layer::gpu_vram);
}

// PyTorch's XPU wording without a free figure (intel/intel-extension-for-pytorch#851) and the
// IPEX form with the old body (intel/intel-extension-for-pytorch#629). Values are ours.
TEST(LevelZero, XpuOutOfMemoryReadsItsFigures) {
  auto g = of_kind("torch.OutOfMemoryError: XPU out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 15.11 GiB. Of the allocated memory 8.25 GiB is allocated by PyTorch, and 2.50 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].detail, "XPU");
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].requested, 3ULL << 30);
  EXPECT_EQ(g[0].total, static_cast<uint64_t>(15.11 * 1073741824.0 + 0.5));
  EXPECT_FALSE(g[0].free);
  EXPECT_EQ(g[0].reserved_unallocated, static_cast<uint64_t>(2.5 * 1073741824.0));
  auto old = of_kind("RuntimeError: XPU out of memory. Tried to allocate 1.00 GiB (GPU 0; 15.56 GiB total capacity; 12.10 GiB already allocated; 12.40 GiB reserved in total by PyTorch)\n",
                     FactKind::gpu_oom);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].allocated, static_cast<uint64_t>(12.10 * 1073741824.0 + 0.5));
}

}  // namespace
}  // namespace aimem
