// What aimem_cuda_oom (tests/gpu/cuda_oom.cc) prints, read by `aimem diagnose`:
// tests/gpu/device_check.sh asks diagnose about the program's output on a real
// GPU, so the format must read as a GPU out-of-memory here first. The lines are
// written as the program prints them; the figures are an illustration for a
// 141 GiB device (143771 MiB, filled in 256 MiB chunks), not a capture: no GPU
// has run it yet. The failure line is the form of NVIDIA's cuda-samples
// checkCudaErrors (NVIDIA/cuda-samples:Common/helper_cuda.h, "CUDA error at
// FILE:LINE code=N(NAME) "CALL""), with the driver's string from
// cuGetErrorString, prefixed by the program and pid as journald shows them.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

constexpr const char* kOomOutput =
    "aimem_cuda_oom[48213]: 1 CUDA device(s); device 0 is NVIDIA H200 (libcuda.so.1)\n"
    "aimem_cuda_oom[48213]: GPU 0: 150083731456 bytes free of 150754820096 before allocating\n"
    "aimem_cuda_oom[48213]: CUDA error at cuda_oom.cc:209 code=2(CUDA_ERROR_OUT_OF_MEMORY) "
    "\"cuMemAlloc_v2(&ptr, 268435456)\": out of memory\n"
    "aimem_cuda_oom[48213]: GPU 0 out of memory after 559 allocations of 256 MiB: holding 150055583744 bytes "
    "(139.75 GiB)\n"
    "aimem_cuda_oom[48213]: GPU 0: 28147712 bytes free of 150754820096 while holding\n"
    "aimem_cuda_oom[48213]: holding for 15 s\n"
    "aimem_cuda_oom[48213]: freed 150055583744 bytes; exit 2\n";

TEST(CudaOomMessage, WholeOutputIsGpuVramNamingTheProcess) {
  Diagnosis d = test::diagnose_text(kOomOutput);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(inc.layer, Layer::gpu_vram);
  // One out-of-memory, one incident: the lines around it are no second failure.
  EXPECT_EQ(d.incidents.size(), 1u);
  // The evidence quoted is the driver's failure, which names the program and its pid.
  bool quoted = false;
  for (const EvidenceItem& e : inc.evidence)
    if (e.text.find("aimem_cuda_oom[48213]: CUDA error at cuda_oom.cc:209 code=2(CUDA_ERROR_OUT_OF_MEMORY)") !=
        std::string::npos)
      quoted = true;
  EXPECT_TRUE(quoted) << "the failure line is not among the incident's evidence";
}

TEST(CudaOomMessage, FailureLineAloneIsGpuVram) {
  Diagnosis d = test::diagnose_text(
      "aimem_cuda_oom[48213]: CUDA error at cuda_oom.cc:209 code=2(CUDA_ERROR_OUT_OF_MEMORY) "
      "\"cuMemAlloc_v2(&ptr, 268435456)\": out of memory\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

// The skip lines name driver errors that are not memory: they must never read
// as an out-of-memory (device_check.sh's logs are what someone may feed in).
TEST(CudaOomMessage, SkipLinesAreNoGpuOom) {
  for (const char* text : {
           "aimem_cuda_oom[311]: SKIP: cannot load libcuda.so.1 (libcuda.so.1: cannot open shared object file: No "
           "such file or directory): no NVIDIA driver here\n",
           "aimem_cuda_oom[312]: SKIP: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected): no CUDA "
           "device here\n",
           "aimem_cuda_oom[313]: 1 CUDA device(s); device 0 is NVIDIA H200 (libcuda.so.1)\n"
           "aimem_cuda_oom[313]: SKIP: not filling GPU 0: set AIMEM_GPU_DEVICE_CHECK=1 to let it fill the GPU\n",
       }) {
    Diagnosis d = test::diagnose_text(text);
    EXPECT_NE(d.layer, Layer::gpu_vram) << text;
  }
}

}  // namespace
}  // namespace aimem
