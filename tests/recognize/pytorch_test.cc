// PyTorch allocator failures, every message generation (diagnosis.md §5.1).
#include <gtest/gtest.h>

#include <cmath>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::GiB;
using units::MiB;

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

uint64_t gib(double v) { return static_cast<uint64_t>(std::llround(v * static_cast<double>(GiB))); }
uint64_t mib(double v) { return static_cast<uint64_t>(std::llround(v * static_cast<double>(MiB))); }

TEST(PyTorch, ModernMessageGivesEveryFigureAndOtherProcesses) {
  const char* line =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 130.00 MiB. GPU 2 has a total capacity of 44.39 GiB "
      "of which 109.31 MiB is free. Process 6324 has 8.06 GiB memory in use. Including non-PyTorch memory, this process "
      "has 36.21 GiB memory in use. Of the allocated memory 35.70 GiB is allocated by PyTorch, and 69.68 MiB is reserved "
      "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].layer, Layer::gpu_vram);
  EXPECT_EQ(g[0].gpu, 2);
  EXPECT_EQ(g[0].requested, mib(130));
  EXPECT_EQ(g[0].total, gib(44.39));
  EXPECT_EQ(g[0].free, mib(109.31));
  EXPECT_EQ(g[0].other_processes, gib(8.06));
  EXPECT_EQ(g[0].this_process, gib(36.21));
  EXPECT_EQ(g[0].allocated, gib(35.70));
  EXPECT_EQ(g[0].reserved_unallocated, mib(69.68));
  Diagnosis d = test::diagnose_text(line);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::unknown);  // 8 GiB of 44 is not enough to blame the neighbour
}

TEST(PyTorch, LargeNeighbourOnTheGpuIsOtherProcess) {
  const char* line =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB "
      "of which 1.02 GiB is free. Process 1111 has 14.50 GiB memory in use. Including non-PyTorch memory, this process "
      "has 8.10 GiB memory in use. Of the allocated memory 7.60 GiB is allocated by PyTorch, and 120.00 MiB is reserved "
      "by PyTorch but unallocated.\n";
  Diagnosis d = test::diagnose_text(line);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::other_process);
}

TEST(PyTorch, SingleProcessEntryWithoutThisProcessPhraseIsThisProcess) {
  // Inside a container PyTorch prints its own host PID as "Process N has ...".
  const char* line =
      "ERROR 04-27 09:07:04 [engine.py:160] OutOfMemoryError('CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a "
      "total capacity of 44.53 GiB of which 263.25 MiB is free. Process 3438115 has 44.25 GiB memory in use. Of the "
      "allocated memory 40.62 GiB is allocated by PyTorch, with 324.00 MiB allocated in private pools (e.g., CUDA "
      "Graphs), and 1.57 GiB is reserved by PyTorch but unallocated.\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].this_process, gib(44.25));
  EXPECT_FALSE(g[0].other_processes.has_value());
  EXPECT_EQ(g[0].reserved_unallocated, gib(1.57));
  // The one entry holding far more than all this process's PyTorch memory
  // (0 bytes allocated and cached: a CPU job's stray CUDA context beside a
  // training run that fills the card; modelled on a torch.compile fake-tensor
  // init, our own figures) is another process.
  const char* stray =
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which "
      "4.56 MiB is free. Process 2211907 has 79.12 GiB memory in use. Of the allocated memory 0 bytes is allocated by "
      "PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n";
  auto o = of_kind(stray, FactKind::gpu_oom);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].other_processes, gib(79.12));
  EXPECT_FALSE(o[0].this_process.has_value());
  EXPECT_EQ(test::diagnose_text(stray).cause, Cause::other_process);
}

TEST(PyTorch, SeveralEntriesWithoutThisProcessGiveALowerBoundForOthers) {
  const char* line =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB "
      "of which 10.00 MiB is free. Process 11 has 50.00 GiB memory in use. Process 12 has 29.00 GiB memory in use. Of the "
      "allocated memory 28.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].other_processes, gib(29));
  EXPECT_FALSE(g[0].this_process.has_value());
}

TEST(PyTorch, Version21TypoAndAllowedFraction) {
  const char* line =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacty of 79.25 GiB "
      "of which 512.00 MiB is free. 40.00 GiB allowed; Of the allocated memory 39.00 GiB is allocated by PyTorch, and "
      "200.00 MiB is reserved by PyTorch but unallocated.\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].total, gib(79.25));
  EXPECT_EQ(g[0].limit, gib(40));
  EXPECT_EQ(g[0].allocated, gib(39));
}

TEST(PyTorch, OldMessageWithReservedInTotalFindsMemoryOutsideTheProcess) {
  const char* text =
      "RuntimeError\n"
      "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 2.81 GiB already allocated; 25.38 "
      "MiB free; 3.06 GiB reserved in total by PyTorch)\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].total, gib(7.93));
  EXPECT_EQ(g[0].allocated, gib(2.81));
  EXPECT_EQ(g[0].free, mib(25.38));
  EXPECT_EQ(g[0].reserved, gib(3.06));
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.cause, Cause::other_process);
}

TEST(PyTorch, OldestMessageWithCachedAndZeroBytesFree) {
  auto g = of_kind(
      "RuntimeError: CUDA out of memory. Tried to allocate 2.56 GiB (GPU 1; 15.90 GiB total capacity; 10.38 GiB already "
      "allocated; 0 bytes free; 2.99 GiB cached)\n",
      FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 1);
  EXPECT_EQ(g[0].free, 0u);
  EXPECT_EQ(g[0].reserved, gib(2.99));
  EXPECT_EQ(g[0].requested, gib(2.56));
}

TEST(PyTorch, HipAndNpuVariants) {
  auto hip = of_kind(
      "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of 15.98 GiB of "
      "which 630.00 MiB is free. Of the allocated memory 14.1 GiB is allocated by PyTorch, and 500.00 MiB is reserved by "
      "PyTorch but unallocated.\n",
      FactKind::gpu_oom);
  ASSERT_EQ(hip.size(), 1u);
  EXPECT_EQ(hip[0].detail, "HIP");
  EXPECT_EQ(hip[0].free, mib(630));
  auto npu = of_kind(
      "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; 60.97 GiB total capacity; 58.29 GiB already "
      "allocated; 58.29 GiB current active; 291.08 MiB free; 59.37 GiB reserved in total by PyTorch)\n",
      FactKind::gpu_oom);
  ASSERT_EQ(npu.size(), 1u);
  EXPECT_EQ(npu[0].gpu, 3);
  EXPECT_EQ(npu[0].free, mib(291.08));
  EXPECT_EQ(npu[0].reserved, gib(59.37));
}

TEST(PyTorch, MpsBackend) {
  auto g = of_kind(
      "RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.50 GB, max allowed: 18.13 "
      "GB). Tried to allocate 256.00 MB on private pool.\n",
      FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].allocated, gib(17));
  EXPECT_EQ(g[0].this_process, gib(18.5));
  EXPECT_EQ(g[0].limit, gib(18.13));
  EXPECT_EQ(g[0].requested, mib(256));
}

TEST(PyTorch, ThcTwoLinesAreOneFailure) {
  const char* text =
      "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory\n"
      "Traceback (most recent call last):\n"
      "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:66\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].where.line, 1u);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::gpu_vram);
}

TEST(PyTorch, RepeatedTracebackLineIsOneFact) {
  std::string line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which 1.00 MiB is free.\n";
  std::string text = line + "\nThe above exception was the direct cause of the following exception:\n\n" + "RuntimeError: " + line.substr(24);
  EXPECT_EQ(of_kind(text, FactKind::gpu_oom).size(), 1u);
  // A different allocation later is a second fact.
  text += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which 1.00 MiB is free.\n";
  EXPECT_EQ(of_kind(text, FactKind::gpu_oom).size(), 2u);
}

TEST(PyTorch, CublasAllocFailedIsAGpuOom) {
  auto g = of_kind("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n", FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].layer, Layer::gpu_vram);
  EXPECT_LT(g[0].strength, 0.9f);
}

TEST(PyTorch, CpuAllocatorIsAHostAllocationFailure) {
  const char* text =
      "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
      "to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)\n";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].layer, Layer::host_ram);
  EXPECT_EQ(h[0].requested, 1073741824u);
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::host_ram);
  auto win = of_kind("RuntimeError: [enforce fail at C:\\cb\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 9437184 bytes.\n",
                     FactKind::host_alloc_failure);
  ASSERT_EQ(win.size(), 1u);
  EXPECT_EQ(win[0].requested, 9437184u);
}

// PyTorch 1.0-1.4 printed the failed posix_memalign call instead of the size
// (modelled on pytorch/pytorch#31302 and, wrapped by the terminal after
// "gAlignment,", LaurentMazare/tch-rs#39; values are ours).
TEST(PyTorch, PosixMemalignEnomemIsAHostAllocationFailure) {
  const char* text =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 212, in <module>\n"
      "RuntimeError: [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0\n";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].layer, Layer::host_ram);
  EXPECT_FALSE(h[0].requested);  // this generation does not print the size
  EXPECT_GE(h[0].strength, 0.8f);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  // libtorch through tch-rs, the line cut before "12 vs 0".
  auto wrapped = of_kind("value: TorchError { c_error: \"[enforce fail at alloc_cpu.cpp:61] posix_memalign(&data, gAlignment,\n"
                         "nbytes) == 0. 12 vs 0\n",
                         FactKind::host_alloc_failure);
  ASSERT_EQ(wrapped.size(), 1u);
  EXPECT_LT(wrapped[0].strength, 0.8f);
  // 22 (EINVAL) is a bad alignment, not memory.
  EXPECT_TRUE(of_kind("[enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 22 vs 0\n",
                      FactKind::host_alloc_failure)
                  .empty());
}

// The DefaultCPUAllocator generations with their sizes (modelled on
// mxfold/mxfold2#20, JingyunLiang/VRT#49 and, on Windows,
// Comfy-Org/Nvidia_RTX_Nodes_ComfyUI#13).
TEST(PyTorch, CpuAllocatorGenerationsGiveTheRequestedBytes) {
  struct Case {
    const char* line;
    uint64_t requested;
  } cases[] = {
      {"RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to allocate "
       "6442450944 bytes. Error code 12 (Cannot allocate memory)\n",
       6442450944u},
      {"[rank3]: RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you tried to "
       "allocate 28311552000 bytes.\n",
       28311552000u},
  };
  for (const auto& c : cases) {
    auto h = of_kind(c.line, FactKind::host_alloc_failure);
    ASSERT_EQ(h.size(), 1u) << c.line;
    EXPECT_EQ(h[0].requested, c.requested) << c.line;
    EXPECT_EQ(test::diagnose_text(c.line).layer, Layer::host_ram) << c.line;
  }
}

TEST(PyTorch, AdviceAndProseAreNotFailures) {
  const char* text =
      "Tip: if you see 'CUDA out of memory', lower --batch-size.\n"
      "  --gradient-checkpointing   trade compute for memory to avoid \"CUDA out of memory\" errors\n"
      "I keep getting a CUDA out of memory error with this model, any idea?\n"
      "print(torch.cuda.memory_summary())  # helps with HIP out of memory errors\n";
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// A wrapper that quotes the exception it caught is reporting it, and the
// advice PyTorch's own message carries ("... to avoid fragmentation") does not
// make it a mention (modelled on MoonshotAI/Kimi-VL#54, vLLM's worker error;
// values are ours). Advice around the quote still does.
TEST(PyTorch, AQuotedExceptionWithItsOwnAdviceIsAFailure) {
  const std::string line =
      "ERROR 07-01 09:16:11 [core.py:515] RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 96.00 GiB. GPU 0 "
      "has a total capacity of 79.35 GiB of which 17.02 GiB is free. Process 8812 has 62.32 GiB memory in use. Of the allocated memory "
      "60.90 GiB is allocated by PyTorch, and 402.11 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
      "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.', please check the stack trace above\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].requested, 96 * GiB);
  EXPECT_EQ(test::diagnose_text(line).layer, Layer::gpu_vram);
  EXPECT_TRUE(of_kind("If you ever see 'CUDA out of memory. Tried to allocate 2.00 GiB', lower the batch size\n", FactKind::gpu_oom).empty());
}

// The caching allocator's "Allocation on device" report over several lines, as
// huggingface/text-generation-inference#574 shows it from a shard (each line of the shard's
// stderr suffixed " rank=0" by the launcher); values are ours. No fraction was set: the
// limit line shows 2^64 bytes.
TEST(PyTorch, AllocationOnDeviceReportReadsItsFigures) {
  const char* text = R"(    tensor = tensor.to(device=self.device)
torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)
Currently allocated     : 21.40 GiB
Requested               : 1.50 GiB
Device limit            : 22.05 GiB
Free (according to CUDA): 24.00 MiB
PyTorch limit (set by user-supplied memory fraction)
                        : 17179869184.00 GiB
 rank=0
2026-07-09T15:32:02.979796Z ERROR text_generation_launcher: Shard 0 failed to start
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].allocated, static_cast<uint64_t>(21.40 * GiB + 0.5));
  EXPECT_EQ(g[0].requested, static_cast<uint64_t>(1.50 * GiB));
  EXPECT_EQ(g[0].total, static_cast<uint64_t>(22.05 * GiB + 0.5));
  EXPECT_EQ(g[0].free, 24 * MiB);
  EXPECT_FALSE(g[0].limit);  // 2^64: no fraction set
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);  // the shard was loading
}

// The same report when set_per_process_memory_fraction capped the process below the device,
// which still had room (ComfyUI's reserve-VRAM setting; kijai/ComfyUI-FluxTrainer#98 shows
// the message): the configured limit is what ran out. Values are ours.
TEST(PyTorch, AllocationOnDeviceAboveTheFractionIsTheLimit) {
  const char* text = R"(!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)
Currently allocated     : 11.80 GiB
Requested               : 512.00 MiB
Device limit            : 23.99 GiB
Free (according to CUDA): 10.90 GiB
PyTorch limit (set by user-supplied memory fraction)
                        : 12.00 GiB
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].limit, 12 * GiB);
  EXPECT_EQ(g[0].cause, Cause::limit_too_low);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// ONNX Runtime's CudaCall form of the cuBLAS failure names the device (hacksider/Deep-Live-Cam#645).
TEST(PyTorch, CublasFailureWithDeviceIndex) {
  auto g = of_kind("Status Message: D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:114 onnxruntime::CudaCall CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=1 ; hostname=WS ; file=cuda_execution_provider.cc ; line=168 ; expr=cublasCreate(&cublas_handle_);\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 1);
}

// A request no device could hold (modelled on NVIDIA/nccl#1284's aborted
// broadcast and an NPU run's garbage sequence length): a corrupt size, a
// look-alike; a large real request is still the device's.
TEST(PyTorch, AnImpossibleRequestIsACorruptSizeNotMemory) {
  EXPECT_EQ(test::diagnose_text("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.\n").layer,
            Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2048.00 TiB. GPU 0 has a total capacity "
                                "of 79.10 GiB of which 61.00 GiB is free.\n")
                .layer,
            Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 96.00 GiB. GPU 0 has a total capacity "
                                "of 79.10 GiB of which 61.00 GiB is free.\n")
                .layer,
            Layer::gpu_vram);
}

// The 1.x-era message with a per-process fraction set (modelled on
// predibase/lorax runs with cuda_memory_fraction 0.5; our own figures):
// "X allowed" is the cap, and with half the device still free the cap ran
// out, not the GPU. Without the figure the same message says no cap.
TEST(PyTorch, TheOlderMessagesAllowedFigureIsTheCap) {
  auto oom = [](const std::string& allowed) {
    return "Server error: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 44.52 GiB total capacity; 22.14 GiB already "
           "allocated; 21.98 GiB free; " + allowed + "22.26 GiB reserved in total by PyTorch)\n";
  };
  Diagnosis capped = test::diagnose_text(oom("22.26 GiB allowed; "));
  EXPECT_EQ(capped.layer, Layer::gpu_vram);
  EXPECT_EQ(capped.cause, Cause::limit_too_low) << test::reason_text(capped);
  EXPECT_NE(test::diagnose_text(oom("")).cause, Cause::limit_too_low);
}

}  // namespace
}  // namespace aimem
