// GPU look-alikes (illegal access, NCCL, Xid, lost GPU) and CUDA-level OOMs.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(GpuErrors, IllegalMemoryAccessIsNotMemory) {
  const char* text =
      "2024-08-09 07:19:19.929 | ERROR    | __main__:pdf_parse_main:135 - CUDA error: an illegal memory access was encountered\n"
      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  auto n = of_kind(text, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].detail, "a CUDA illegal memory access");
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
}

TEST(GpuErrors, OtherCudaFaults) {
  EXPECT_EQ(of_kind("RuntimeError: CUDA error: misaligned address\n", FactKind::not_memory_failure).size(), 1u);
  EXPECT_EQ(of_kind("RuntimeError: CUDA error: device-side assert triggered\n", FactKind::not_memory_failure).size(), 1u);
  EXPECT_EQ(of_kind("RuntimeError: CUDA error: unspecified launch failure\n", FactKind::not_memory_failure).size(), 1u);
  // Without CUDA in sight "misaligned address" is someone else's message.
  EXPECT_TRUE(of_kind("kernel: alignment exception: misaligned address 0x1234\n", FactKind::not_memory_failure).empty());
}

TEST(GpuErrors, NcclWatchdogTimeoutIsOneLookAlike) {
  std::string text;
  for (int r = 0; r < 3; ++r)
    text += "[rank" + std::to_string(r) + "]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank " + std::to_string(r) +
            "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
            "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n";
  auto n = of_kind(text, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].detail, "an NCCL collective timeout");
  EXPECT_EQ(n[0].family, Family::nccl);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::not_memory);
}

TEST(GpuErrors, NcclErrorThatIsAFailedAllocationIsAGpuOom) {
  const char* text =
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3\n"
      "ncclUnhandledCudaError: Call to CUDA function failed.\n"
      "Last error:\n"
      "Cuda failure 'out of memory'\n";
  EXPECT_TRUE(of_kind(text, FactKind::not_memory_failure).empty());
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::nccl);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::gpu_vram);
  // A plain system error stays a look-alike.
  auto sys = of_kind("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n",
                     FactKind::not_memory_failure);
  ASSERT_EQ(sys.size(), 1u);
  EXPECT_NE(sys[0].detail.find("NCCL"), std::string::npos);
}

TEST(GpuErrors, XidsNameWhatHappened) {
  auto n = of_kind("[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n", FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].detail, "NVIDIA Xid 79 (GPU fell off the bus)");
  auto mmu = of_kind("NVRM: Xid (PCI:0000:65:00): 31, pid=4242, name=python3, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12340000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n",
                     FactKind::not_memory_failure);
  ASSERT_EQ(mmu.size(), 1u);
  EXPECT_NE(mmu[0].detail.find("Xid 31"), std::string::npos);
  EXPECT_NE(mmu[0].detail.find("illegal memory access"), std::string::npos);
  // Clean-up after a process ended is not a failure.
  EXPECT_TRUE(of_kind("NVRM: Xid (PCI:0000:3b:00): 45, pid=1234, name=python, Ch 00000010\n", FactKind::not_memory_failure).empty());
}

TEST(GpuErrors, LostGpuAndBusErrors) {
  const char* text = R"(zeyer@cn-234 ~ % nvidia-smi
Unable to determine the device handle for GPU0000:03:00.0: Unknown Error
[  +0.000316] pcieport 0000:00:03.0: AER: Corrected error received: 0000:00:03.0
[  +0.000005] pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, (Transmitter ID)
)";
  auto n = of_kind(text, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].detail, "GPU lost (nvidia-smi cannot reach GPU0000:03:00.0)");
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::not_memory);
  // A corrected bus error on its own is routine.
  EXPECT_TRUE(of_kind("pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n", FactKind::not_memory_failure).empty());
  EXPECT_EQ(of_kind("Failed to initialize NVML: Driver/library version mismatch\n", FactKind::not_memory_failure).size(), 1u);
}

TEST(GpuErrors, CudaLevelOutOfMemory) {
  auto a = of_kind("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call\n", FactKind::gpu_oom);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].family, Family::cuda);
  auto b = of_kind("numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY\n", FactKind::gpu_oom);
  ASSERT_EQ(b.size(), 1u);
  // TF's start-up pool sizing retries with less: not a failure by itself.
  EXPECT_TRUE(of_kind("E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 3.39G (3643801600 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
                      FactKind::gpu_oom)
                  .empty());
}

}  // namespace
}  // namespace aimem
