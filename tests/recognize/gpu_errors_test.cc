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

// A status printed as its number (modelled on TensorRT Inference Server
// 19.02's runtime error, as a writer of the forty-fourth batch rendered it,
// and on tinygrad's "CUDA Error 2, out of memory"; values ours): 2 is the
// allocation failure in CUDA's runtime and driver APIs; another number or a
// file's line number is not.
TEST(GpuErrors, StatusTwoPrintedAsANumberIsTheAllocationFailure) {
  for (const char* text : {"E0311 14:15:06.405117 1 logging.cc:43] runtime.cpp (24) - Cuda Error in allocate: 2\n"
                           "terminate called after throwing an instance of 'nvinfer1::CudaError'\n  what():  std::exception\n",
                           "RuntimeError: CUDA Error 2, out of memory\n", "[worker 3] CUDA error = 2 in cudaMalloc(&buf, 1073741824)\n"}) {
    auto o = of_kind(text, FactKind::gpu_oom);
    ASSERT_FALSE(o.empty()) << text;
    EXPECT_EQ(test::diagnose_text(text).layer, Layer::gpu_vram) << text;
  }
  for (const char* text : {"E0311 14:15:06.405117 1 logging.cc:43] runtime.cpp (24) - Cuda Error in execute: 700\n",
                           "CUDA error at ggml-cuda.cu:2571\n", "RuntimeError: CUDA error 2.5 seconds after launch\n"})
    EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty()) << text;
}

// Pinned host memory fails with CUDA's allocation error, yet it is host RAM
// (page-locked for the device): the scan's sink (scanner.cc) turns any
// family's device failure on such a line into a host one. Written in the
// shapes of NVIDIA/TensorRT-LLM and pytorch/pytorch pin-memory reports, our values.
TEST(GpuErrors, PinnedHostMemoryIsHostRamWhateverTheErrorIsCalled) {
  const char* text =
      "[TensorRT-LLM][ERROR] Could not allocate 4294967296 bytes of pinned host memory: cudaErrorMemoryAllocation: out of memory\n";
  auto host = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_FALSE(host.empty());  // TensorRT-LLM's reader and the CUDA error's both read the line
  for (const Fact& f : host) {
    EXPECT_EQ(f.layer, Layer::host_ram);
    EXPECT_EQ(f.detail.rfind("pinned (page-locked) host memory", 0), 0u) << f.detail;
  }
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::host_ram);
  const char* torch =
      "RuntimeError: cudaHostAlloc failed for 268435456 bytes: CUDA error: out of memory\n";
  EXPECT_EQ(test::diagnose_text(torch).layer, Layer::host_ram);
  // The device's own allocation stays the GPU's.
  EXPECT_EQ(test::diagnose_text("RuntimeError: CUDA error: out of memory\n").layer, Layer::gpu_vram);
}

TEST(GpuErrors, OtherCudaFaults) {
  EXPECT_EQ(of_kind("RuntimeError: CUDA error: misaligned address\n", FactKind::not_memory_failure).size(), 1u);
  EXPECT_EQ(of_kind("RuntimeError: CUDA error: device-side assert triggered\n", FactKind::not_memory_failure).size(), 1u);
  EXPECT_EQ(of_kind("RuntimeError: CUDA error: unspecified launch failure\n", FactKind::not_memory_failure).size(), 1u);
  // cudaErrorLaunchOutOfResources: registers or shared memory per block, a launch limit.
  auto launch = of_kind("RuntimeError: CUDA error: too many resources requested for launch\n", FactKind::not_memory_failure);
  ASSERT_EQ(launch.size(), 1u);
  EXPECT_NE(launch[0].detail.find("launch limit"), std::string::npos) << launch[0].detail;
  EXPECT_EQ(test::diagnose_text("RuntimeError: CUDA error: too many resources requested for launch\n").layer, Layer::not_memory);
  // ROCm's bad access, its illegal memory access: not an allocation failure.
  EXPECT_EQ(test::diagnose_text("Memory access fault by GPU node-1 (Agent handle: 0x55d1a2b3c4d0) on address 0x7f1200000000. "
                                "Reason: Page not present or supervisor privilege.\nAborted (core dumped)\n")
                .layer,
            Layer::not_memory);
  // Without CUDA in sight "misaligned address" is someone else's message.
  EXPECT_TRUE(of_kind("kernel: alignment exception: misaligned address 0x1234\n", FactKind::not_memory_failure).empty());
}

// Any other message after "CUDA error: " (modelled on a ggml kernel launch
// failing in an Ollama runner, ollama/ollama threads; our own lines) names
// what failed, and it is not memory. An allocation in the same wording stays
// one (the generic reader reads it), and "unknown error" names nothing.
TEST(GpuErrors, AnyOtherCudaErrorMessageIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "ggml_cuda_compute_forward: SOFT_MAX failed\n"
      "CUDA error: invalid configuration argument\n"
      "  current device: 0, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:2451\n"
      "ggml-cuda.cu:75: CUDA error\n"
      "SIGABRT: abort\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].reasons.at(0).find("invalid configuration argument"), std::string::npos) << d.incidents[0].reasons.at(0);
  Diagnosis alloc = test::diagnose_text(
      "terminate called after throwing an instance of 'thrust::system::system_error'\n"
      "  what():  CUDA error: build/src/device_helpers.cuh(386): out of memory\n"
      "Aborted (core dumped)\n");
  EXPECT_EQ(alloc.layer, Layer::gpu_vram);
  EXPECT_TRUE(of_kind("RuntimeError: CUDA error: unknown error\n", FactKind::not_memory_failure).empty());
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
  EXPECT_EQ(n[0].detail, "NVIDIA Xid 79: GPU has fallen off the bus");
  EXPECT_EQ(n[0].pid, 1234);
  EXPECT_EQ(n[0].process, "python");
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

// A container that lost its GPU devices (modelled on ollama/ollama#3930: the
// host's systemd reload re-applied the device rules; our values): the engine
// then reports no GPU and 0 B available, which is no memory failure.
TEST(GpuErrors, AContainerThatLostItsGpuIsNoMemoryFailure) {
  const std::string text =
      "time=2024-05-02T07:41:10.512Z level=INFO source=gpu.go:343 msg=\"Unable to load cudart CUDA management library "
      "/tmp/ollama1203/runners/cuda_v11/libcudart.so.11.0: cudart init failure: 999\"\n"
      "time=2024-05-02T07:41:10.513Z level=INFO source=routes.go:1044 msg=\"no GPU detected\"\n"
      "time=2024-05-02T07:41:10.790Z level=INFO source=server.go:127 msg=\"offload to gpu\" reallayers=0 layers=0 "
      "required=\"4.7 GiB\" used=\"0 B\" available=\"0 B\" kv=\"256.0 MiB\"\n"
      "$ docker exec ollama nvidia-smi\n"
      "Failed to initialize NVML: Unknown Error\n";
  auto n = of_kind(text, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].detail.find("NVML cannot initialize"), std::string::npos);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::not_memory);
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

// The Xid numbers of NVIDIA's catalogue, as the kernel log prints them (the kmsg lines quoted
// in leptonai/gpud#1174, e.g. "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3,
// Contained ECC error"; meanings from the driver's Xid documentation). Values are ours.
TEST(GpuErrors, XidCatalogueNamesEachFailure) {
  struct Case {
    const char* line;
    const char* words;
  };
  const Case cases[] = {
      {"NVRM: Xid (PCI:0000:ca:00): 48, pid=2811, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x4f0a0000.",
       "NVIDIA Xid 48: double-bit ECC error"},
      {"NVRM: Xid (PCI:0000:ca:00): 94, pid=2811, name=python3, Contained: SM (0x1). RST: No, D-RST: No", "NVIDIA Xid 94: contained uncorrectable ECC error"},
      {"NVRM: Xid (PCI:0000:ca:00): 95, pid='<unknown>', name=<unknown>, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
       "NVIDIA Xid 95: uncontained uncorrectable ECC error"},
      {"NVRM: Xid (PCI:0000:ca:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: (0x0000000ffa0c0000) - All reserved rows for bank are remapped",
       "NVIDIA Xid 64: ECC page retirement or row remapping failed"},
      {"NVRM: Xid (PCI:0000:ca:00): 13, pid=9001, name=train.py, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address",
       "NVIDIA Xid 13: graphics engine exception"},
      {"NVRM: Xid (PCI:0000:ca:00): 43, pid=9001, name=train.py, Ch 00000010", "NVIDIA Xid 43: GPU stopped processing"},
      {"NVRM: Xid (PCI:0000:ca:00): 74, pid=9001, name=train.py, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
       "NVIDIA Xid 74: NVLink error"},
  };
  for (const Case& c : cases) {
    auto n = of_kind(std::string(c.line) + "\n", FactKind::not_memory_failure);
    ASSERT_EQ(n.size(), 1u) << c.line;
    EXPECT_EQ(n[0].layer, Layer::not_memory);
    EXPECT_EQ(n[0].detail.rfind(c.words, 0), 0u) << n[0].detail;
  }
  auto app = of_kind("NVRM: Xid (PCI:0000:ca:00): 13, pid=9001, name=train.py, Graphics Exception\n", FactKind::not_memory_failure);
  ASSERT_EQ(app.size(), 1u);
  EXPECT_EQ(app[0].pid, 9001);
  EXPECT_EQ(app[0].process, "train.py");
  auto unknown = of_kind("NVRM: Xid (PCI:0000:ca:00): 95, pid='<unknown>', name=<unknown>, Uncontained\n", FactKind::not_memory_failure);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_FALSE(unknown[0].pid);
  EXPECT_TRUE(unknown[0].process.empty());
  // The retirement that follows an uncorrectable error is named, but weaker than the error.
  auto retire = of_kind("NVRM: Xid (PCI:0000:ca:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000000ffa0c0000) marked for remapping, reset gpu to activate.\n",
                        FactKind::not_memory_failure);
  ASSERT_EQ(retire.size(), 1u);
  EXPECT_LT(retire[0].strength, 0.6f);
  // Corrected single-bit errors at a high rate: bookkeeping, not a failure.
  EXPECT_TRUE(of_kind("NVRM: Xid (PCI:0000:ca:00): 92, pid='<unknown>', name=<unknown>, High single-bit ECC error rate\n",
                      FactKind::not_memory_failure).empty());
}

// The kernel's own "fallen off the bus" line beside its Xid 79 is one failure; alone it is
// the same failure (the NVRM line pair of an Xid 79 as leptonai/gpud#1174 parses kmsg).
TEST(GpuErrors, FallenOffTheBusLineIsXid79) {
  const char* both = R"([ 7731.2] NVRM: GPU at PCI:0000:3b:00: GPU-4f1e0d2a-8c1b-4d7e-9a3f-1b2c3d4e5f60
[ 7731.2] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[ 7731.2] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
)";
  auto n = of_kind(both, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].detail, "NVIDIA Xid 79: GPU has fallen off the bus");
  auto alone = of_kind("[ 7731.2] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n", FactKind::not_memory_failure);
  ASSERT_EQ(alone.size(), 1u);
  Diagnosis d = test::diagnose_text(both);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
}

// CUDA errors that clients read as "the GPU ran out" and that name something else: ECC
// (vllm-project/vllm#5222, jade-hpc-gpu/jade-hpc-gpu.github.io#194), driver too old
// (nagadomi/nunif#702), no device (janhq/jan#3782 shows the wording), missing kernels
// (vllm-project/vllm#18835), busy devices, bad ordinals, watchdog timeouts, no driver. Each
// names what failed, and the diagnosis quotes it.
TEST(GpuErrors, CudaLookAlikesNameWhatFailed) {
  struct Case {
    const char* line;
    const char* detail_part;
  };
  const Case cases[] = {
      {"RuntimeError: CUDA error: uncorrectable ECC error encountered", "uncorrectable ECC error"},
      // the THC form of NVIDIA/semantic-segmentation#33
      {"RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
       "uncorrectable ECC error"},
      {"RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", "driver older than the CUDA runtime"},
      {"RuntimeError: CUDA error: no CUDA-capable device is detected", "no CUDA-capable GPU"},
      {"RuntimeError: CUDA error: no kernel image is available for execution on the device", "architecture"},
      {"RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "busy or unavailable"},
      {"RuntimeError: CUDA error: invalid device ordinal", "GPU index that does not exist"},
      {"RuntimeError: CUDA error: the launch timed out and was terminated", "watchdog"},
      {"RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
       "no NVIDIA driver"},
  };
  for (const Case& c : cases) {
    std::string text = std::string(c.line) + "\nCUDA kernel errors might be asynchronously reported at some other API call.\n";
    auto n = of_kind(text, FactKind::not_memory_failure);
    ASSERT_EQ(n.size(), 1u) << c.line;
    EXPECT_NE(n[0].detail.find(c.detail_part), std::string::npos) << n[0].detail;
    Diagnosis d = test::diagnose_text(text);
    EXPECT_EQ(d.layer, Layer::not_memory) << c.line;
    ASSERT_FALSE(d.incidents.empty());
    EXPECT_NE(d.incidents[0].reasons[0].find(c.detail_part), std::string::npos) << d.incidents[0].reasons[0];
  }
}

TEST(GpuErrors, LookAlikeMentionsAndPinnedWarningsDoNotFire) {
  const char* text = R"(# If you see "CUDA error: no CUDA-capable device is detected", check the container runtime.
Troubleshooting: when you get 'CUDA driver version is insufficient for CUDA runtime version', update the driver.
ggml_cuda_host_malloc: failed to allocate 1034.00 MiB of pinned memory: no CUDA-capable device is detected
)";
  EXPECT_TRUE(of_kind(text, FactKind::not_memory_failure).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// A fault the program caught, warned of and went on from without the GPU
// (modelled on AUTOMATIC1111's start-up inside a CPU-only container, its
// memory monitor off; PyTorch's UserWarning at import): what fails after it
// is not the driver, here a SIGKILL while the weights load on the CPU.
TEST(GpuErrors, AFaultWarnedOfAndCaughtIsNotTheFailure) {
  const std::string warned =
      "webui-1  | Warning: caught exception 'Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
      "installed a driver from http://www.nvidia.com/Download/index.aspx', memory monitor disabled\n"
      "/usr/lib/python3/site-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: Found no NVIDIA driver on your "
      "system. Please check that you have an NVIDIA GPU and installed a driver\n";
  EXPECT_TRUE(of_kind(warned, FactKind::not_memory_failure).empty());
  Diagnosis d = test::diagnose_text(warned + "webui-1  | Loading weights [e1441589a6] from /models/v1-5-pruned.ckpt\nwebui-1 exited with code 137\n");
  EXPECT_EQ(d.layer, Layer::unknown);  // exit 137 alone: whose memory, nothing says
  EXPECT_EQ(d.cause, Cause::model_load);  // but it died while the weights loaded
  // The same words as the error that stopped it are still the look-alike.
  EXPECT_EQ(test::diagnose_text("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU\n").layer,
            Layer::not_memory);
}

// ROCm builds of PyTorch report the runtime OOM as HIP (ollama/ollama#3765 shows the HIP side
// of the same failure); values are ours.
TEST(GpuErrors, HipRuntimeOutOfMemory) {
  auto g = of_kind("RuntimeError: HIP error: out of memory\nHIP kernel errors might be asynchronously reported at some other API call\n", FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].detail, "HIP runtime");
  EXPECT_EQ(test::diagnose_text("RuntimeError: HIP error: out of memory\n").layer, Layer::gpu_vram);
}

// cuDNN and cuBLAS allocate on the device: an allocation status is the GPU
// pool; a handle that could not be made usually is too (modelled on
// FlexFlow's "CUDNN failure: CUDNN_STATUS_NOT_INITIALIZED" and TensorFlow's
// "Could not create cudnn handle").
TEST(GpuErrors, CudnnAndCublasStatusesAreTheGpuPool) {
  for (const char* line : {"CUDNN failure: CUDNN_STATUS_NOT_INITIALIZED (/src/runtime/model.cu, line 213)\n",
                           "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n",
                           // TF 1.4 and before wrote it in lower case (modelled on horovod/horovod#67)
                           "E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n",
                           "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::gpu_vram) << line;
  }
  auto alloc = test::facts_of_kind("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n", FactKind::gpu_oom);
  ASSERT_EQ(alloc.size(), 1u);
  auto init = test::facts_of_kind("CUDNN failure: CUDNN_STATUS_NOT_INITIALIZED (model.cu, line 213)\n", FactKind::gpu_oom);
  ASSERT_EQ(init.size(), 1u);
  EXPECT_GT(alloc[0].strength, init[0].strength);  // an allocation status says more than a failed handle
  // Other statuses are not memory.
  EXPECT_TRUE(test::facts_of_kind("CUDNN_STATUS_BAD_PARAM in conv2d\n", FactKind::gpu_oom).empty());
}

// Torch7 and PyTorch before 0.4 print the CUDA runtime's error number
// (modelled on torch/cutorch threads; our own paths): code 2 is the
// allocation failure, any other code names a fault that is not memory.
TEST(GpuErrors, AnOldCudaRuntimeErrorOtherThanTwoIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "luajit: cuda runtime error (30) : unknown error at /tmp/luarocks_cutorch-scm-1-1234/cutorch/lib/THC/THCStorage.c:113\n"
      "stack traceback:\n"
      "        [C]: in function 'resize'\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  Diagnosis oom = test::diagnose_text(
      "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory\n"
      "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:66\n");
  EXPECT_EQ(oom.layer, Layer::gpu_vram);
}

// PyTorch's "driver too old" names what failed (modelled on
// defilantech/LLMKube#1424's crash-looping pod; our own versions): a look-alike.
TEST(GpuErrors, ADriverTooOldIsALookAlike) {
  Diagnosis d = test::diagnose_text(
      "qwen-predictor-7d9c6b5f48-xk2lp   0/1     CrashLoopBackOff   6 (2m14s ago) 14m\n"
      "RuntimeError: The NVIDIA driver on your system is too old (found version 11080). Please update your GPU driver.\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
}

// TorchServe's worker after a device-side assert (modelled on
// pytorch/serve#3114; paths, sizes and times ours): the CUDA out-of-memory
// that follows still sees most of the device free. The fault is the failure;
// without the fault, or with the device really full, the OOM stands.
TEST(GpuErrors, AnOutOfMemoryAfterAStickyCudaFaultWithRoomToSpareIsTheFaults) {
  const std::string fault =
      "MODEL_LOG - ../aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectLargeIndex: block: [211,0,0], thread: [64,0,0] "
      "Assertion `srcIndex < srcSelectDimSize` failed.\n"
      "MODEL_LOG - RuntimeError: CUDA error: device-side assert triggered\n"
      "MODEL_LOG - Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n";
  auto oom = [](const std::string& free) {
    return "MODEL_LOG - torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
           "22.04 GiB of which " + free + " is free. Process 1882 has 6.01 GiB memory in use. Of the allocated memory 351.90 MiB is "
           "allocated by PyTorch, and 30.10 MiB is reserved by PyTorch but unallocated.\n";
  };
  Diagnosis echo = test::diagnose_text(fault + oom("16.01 GiB"));
  EXPECT_EQ(echo.layer, Layer::not_memory);
  EXPECT_EQ(echo.cause, Cause::not_memory);
  EXPECT_EQ(test::diagnose_text(oom("16.01 GiB")).layer, Layer::gpu_vram);          // no fault before it
  EXPECT_EQ(test::diagnose_text(fault + oom("12.00 MiB")).layer, Layer::gpu_vram);  // the device really was full
  EXPECT_EQ(test::diagnose_text(oom("16.01 GiB") + fault).layer, Layer::gpu_vram);  // the fault came after
}

// ROCm's HSA runtime aborting a queue for an access past the legal addresses
// is a bad access, not memory running out (modelled on ROCm/ROCm issue
// reports of HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION under JAX; our figures).
TEST(GpuErrors, AnHsaApertureViolationIsABadAccess) {
  Diagnosis d = test::diagnose_text(
      ":0:rocdevice.cpp            :2984: 2210348711 us: [pid:51210 tid:0x7f1a2bfff640] Callback: Queue 0x7f0e88400000 aborting "
      "with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal "
      "address. code: 0x29\nAborted (core dumped)\n");
  EXPECT_EQ(d.layer, Layer::not_memory) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("aperture"), std::string::npos) << test::reason_text(d);
}

// Libraries' and toolkits' own words for a failed device allocation, and
// the driver API's name for a fault (modelled on a Faiss GPU benchmark, a
// CuPy FFT after a large free, and a renderer's CUDA device, 2017-2019; our
// own sizes and paths).
TEST(GpuErrors, FaissCufftAndTheDriversIllegalAddressAreReadByTheirNames) {
  Diagnosis faiss = test::diagnose_text(
      "WARN: increase temp memory to avoid cudaMalloc, or decrease query/add size (alloc 1280000000 B, highwater 1280000000 B)\n"
      "Faiss assertion 'err == cudaSuccess' failed in char* faiss::gpu::StackDeviceMemory::Stack::getAlloc(size_t, cudaStream_t) "
      "at utils/StackDeviceMemory.cpp:71\nAborted (core dumped)\n");
  EXPECT_EQ(faiss.layer, Layer::gpu_vram) << test::reason_text(faiss);
  Diagnosis fft = test::diagnose_text(
      "  File \"cupy/cuda/cufft.pyx\", line 71, in cupy.cuda.cufft.check_result\ncupy.cuda.cufft.CuFftError: CUFFT_ALLOC_FAILED\n");
  EXPECT_EQ(fft.layer, Layer::gpu_vram) << test::reason_text(fft);
  auto ffts = test::facts_of_kind("cupy.cuda.cufft.CuFftError: CUFFT_ALLOC_FAILED\n", FactKind::gpu_oom);
  ASSERT_EQ(ffts.size(), 1u);
  EXPECT_NE(ffts[0].detail.find("cuFFT"), std::string::npos) << ffts[0].detail;
  Diagnosis fault = test::diagnose_text("CUDA error: ILLEGAL_ADDRESS in cuMemAlloc(&device_pointer, size)\n"
                                        "CUDA error: ILLEGAL_ADDRESS in cuCtxSynchronize()\n");
  EXPECT_EQ(fault.layer, Layer::not_memory) << test::reason_text(fault);
  // "cuda error: out of memory" in lower case (Isaac Gym's PhysX plugin)
  // before the illegal access it left behind: the allocation failed first.
  Diagnosis gym = test::diagnose_text(
      "[Error] [carb.gym.plugin] Gym cuda error: out of memory: ../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1721\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(gym.layer, Layer::gpu_vram) << test::reason_text(gym);
  // A Faiss assertion about something else is no allocation failure.
  EXPECT_NE(test::diagnose_text("Faiss assertion 'k <= 2048' failed in void faiss::gpu::GpuIndex::search(...) at GpuIndex.cu:102\n").layer,
            Layer::gpu_vram);
}

}  // namespace
}  // namespace aimem
