// ONNX Runtime BFC arena failures: the arena decides the pool.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

// Verbose session log of triton-inference-server/server#3776 (the CUDA arena growing), then a
// failure of the same size as its last extension (the 1.1x message of
// triton-inference-server/onnxruntime_backend#249). Values are ours.
TEST(OnnxRuntime, CudaArenaThatWasGrowingIsGpuMemory) {
  const char* text = R"(2026-01-07 07:17:51.913799887 [I:onnxruntime:log, bfc_arena.cc:26 BFCArena] Creating BFCArena for Cuda with following configs: initial_chunk_size_bytes: 1048576 max_dead_bytes_per_chunk: 134217728 initial_growth_chunk_size_bytes: 2097152 memory limit: 18446744073709551615 arena_extend_strategy: 0
2026-01-07 07:17:51.915486867 [I:onnxruntime:log, bfc_arena.cc:306 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:20 (requested) num_bytes: 1610612736 (actual) rounded_bytes:1610612736
2026-01-07 07:17:51.916460004 [E:onnxruntime:log, cuda_call.cc:118 CudaCall] CUDA failure 2: out of memory ; GPU=0 ; hostname=trt-0 ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)&p, size);
2026-01-07 07:17:51.917000000 [E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] Non-zero status code returned while running MatMul node. Name:'/encoder/layer.11/attention/MatMul' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 1610612736
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 2u);  // the CUDA call and the arena's report of it
  EXPECT_EQ(g[0].gpu, 0);   // "GPU=0"
  EXPECT_NE(g[0].detail.find("cudaMalloc"), std::string::npos);
  EXPECT_EQ(g[1].family, Family::onnxruntime);
  EXPECT_EQ(g[1].layer, Layer::gpu_vram);
  EXPECT_EQ(g[1].requested, 1610612736u);
  EXPECT_GE(g[1].strength, 0.9f);
  EXPECT_NE(g[1].detail.find("GPU arena"), std::string::npos);
  EXPECT_TRUE(of_kind(text, FactKind::host_alloc_failure).empty());
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  ASSERT_EQ(d.incidents.size(), 1u);
}

// A CUDA arena created with a finite memory limit (the session's
// gpu_mem_limit) whose size after its last extension plus the request pass
// that limit: the configured limit ran out, whatever the failure's wording
// (modelled on microsoft/onnxruntime#16303; values ours).
TEST(OnnxRuntime, ArenaSizePlusRequestPastItsConfiguredLimitIsTheLimit) {
  const char* text = R"(2024-02-01 09:00:00.100 [I:onnxruntime:log, bfc_arena.cc:26 BFCArena] Creating BFCArena for Cuda with following configs: initial_chunk_size_bytes: 1048576 max_dead_bytes_per_chunk: 134217728 initial_growth_chunk_size_bytes: 2097152 max_power_of_two_extend_bytes: 1073741824 memory limit: 1073741824
2024-02-01 09:00:01.200 [I:onnxruntime:log, bfc_arena.cc:317 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:20 (requested) num_bytes: 536870912 (actual) rounded_bytes:536870912
2024-02-01 09:00:01.201 [I:onnxruntime:log, bfc_arena.cc:200 Extend] Total allocated bytes: 805306368
2024-02-01 09:00:01.300 [I:onnxruntime:log, bfc_arena.cc:317 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:19 (requested) num_bytes: 402653184 (actual) rounded_bytes:402653184
2024-02-01 09:00:01.301 [E:onnxruntime:, sequential_executor.cc:514 ExecuteKernel] Non-zero status code returned while running MatMul node. Name:'/enc/MatMul' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 402653184
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The same failure under the default (unbounded) limit says nothing of a cap.
  std::string unbounded = text;
  unbounded.replace(unbounded.find("memory limit: 1073741824"), 24, "memory limit: 18446744073709551615");
  EXPECT_NE(test::diagnose_text(unbounded).cause, Cause::limit_too_low);
}

// DayBreak-u/chineseocr_lite#355: a CPU-only NCHWc node (Windows, CPU package) whose arena
// could not grow is host memory. Values are ours.
TEST(OnnxRuntime, NchwcNodeIsTheCpuArena) {
  const char* text = R"(2026-02-08 01:27:55.7944269 [E:onnxruntime:, sequential_executor.cc:339 onnxruntime::SequentialExecutor::Execute] Non-zero status code returned while running Conv node. Name:'512_nchwc' Status Message: D:\a\_work\1\s\onnxruntime\core\framework\bfc_arena.cc:330 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 402653184
)";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].layer, Layer::host_ram);
  EXPECT_EQ(h[0].requested, 402653184u);
  EXPECT_NE(h[0].detail.find("CPU arena"), std::string::npos);
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::host_ram);
}

// microsoft/onnxruntime#23121: an arena capped with OrtArenaCfg max_mem on the default CPU
// provider ("Reserving memory in BFCArena for Cpu" as in microsoft/onnxruntime-genai#974):
// the arena's limit, not the host, ran out. Values are ours.
TEST(OnnxRuntime, CpuArenaLimitIsTheLimit) {
  const char* text = R"(2026-03-16 16:48:18.300000 [I:onnxruntime:Default, bfc_arena.cc:281 onnxruntime::BFCArena::Reserve] Reserving memory in BFCArena for Cpu size: 18874462
2026-03-16 16:48:18.323840 [E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] Non-zero status code returned while running TfIdfVectorizer node. Name:'TfIdfVectorizer' Status Message: /Users/runner/work/1/s/onnxruntime/core/framework/bfc_arena.cc:376 void *onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream *, bool, onnxruntime::WaitNotificationFn) Available memory of 1024 is smaller than requested bytes of 4096
)";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].requested, 4096u);
  EXPECT_EQ(h[0].free, 1024u);
  EXPECT_EQ(h[0].cause, Cause::limit_too_low);
  EXPECT_NE(h[0].detail.find("memory limit"), std::string::npos);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// infiniflow/ragflow#10295 ("Available memory of 0 is smaller than requested bytes of
// 135383040", fixed by raising gpu_mem_limit) with the CUDA arena's configured limit.
TEST(OnnxRuntime, CudaArenaLimitIsGpuMemLimit) {
  const char* text = R"(2026-04-01 10:00:00.100000 [I:onnxruntime:, bfc_arena.cc:29 BFCArena] Creating BFCArena for Cuda with following configs: initial_chunk_size_bytes: 1048576 max_dead_bytes_per_chunk: 134217728 initial_growth_chunk_size_bytes: 2097152 max_power_of_two_extend_bytes: 1073741824 memory limit: 2147483648 arena_extend_strategy: 0
onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'/det/backbone/conv1/Conv' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Available memory of 0 is smaller than requested bytes of 94371840
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].requested, 94371840u);
  EXPECT_EQ(g[0].free, 0u);
  EXPECT_EQ(g[0].limit, 2147483648u);
  EXPECT_NE(g[0].detail.find("gpu_mem_limit"), std::string::npos);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// hacksider/Deep-Live-Cam#547: no arena log, but the session's providers are in the input
// (the progress line of hacksider/Deep-Live-Cam#584); the failure is held until they decide.
TEST(OnnxRuntime, ProvidersDecideWhenTheArenaIsNotNamed) {
  const char* gpu = R"(Processing:  12%|#2        | 212/1744 [01:03<07:40,  3.33frame/s, execution_providers=['CUDAExecutionProvider'], execution_threads=8, max_memory=16]
2026-05-09 15:15:49.9522079 [E:onnxruntime:, sequential_executor.cc:514 onnxruntime::ExecuteKernel] Non-zero status code returned while running FusedConv node. Name:'Conv_3' Status Message: D:\a\_work\1\s\onnxruntime\core\framework\bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 655360
)";
  auto g = of_kind(gpu, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].requested, 655360u);
  EXPECT_NE(g[0].detail.find("activation"), std::string::npos);  // a running node
  EXPECT_EQ(test::diagnose_text(gpu).cause, Cause::concurrency_batch);
  // The provider named only after the failure, in the traceback.
  const char* later = R"(Status Message: bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 655360
  File "run.py", line 12, in <module>
    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
)";
  auto h = of_kind(later, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(of_kind(later, FactKind::gpu_oom).empty());
  // Nothing to decide it: a GPU arena, weakly.
  auto weak = of_kind("onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 1048576\n", FactKind::gpu_oom);
  ASSERT_EQ(weak.size(), 1u);
  EXPECT_LT(weak[0].strength, 0.7f);
  EXPECT_NE(weak[0].detail.find("does not name its device"), std::string::npos);
}

TEST(OnnxRuntime, ArenaInfoLinesAndMentionsDoNotFire) {
  const char* text = R"(2026-01-07 07:17:51.913839024 [I:onnxruntime:log, bfc_arena.cc:306 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:9 (requested) num_bytes: 160000 (actual) rounded_bytes:160000
2026-01-07 07:17:51.914845468 [I:onnxruntime:log, bfc_arena.cc:186 Extend] Extended allocation by 1048576 bytes.
# if you see 'Failed to allocate memory for requested buffer of size N', lower the batch size
)";
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_TRUE(of_kind(text, FactKind::host_alloc_failure).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}


// The arena's size printed before any extension line, under a configured
// gpu_mem_limit: modelled on microsoft/onnxruntime threads with
// gpu_mem_limit set (bfc_arena.cc's config and Extend lines); values ours.
TEST(OnnxRuntime, TheOnlyGpuArenasSizeBeforeItsExtensionMeetsItsLimit) {
  const char* text = R"(2022-03-01 09:00:01.100 [I:onnxruntime:det, bfc_arena.cc:23 BFCArena] Creating BFCArena for Cuda with following configs: initial_chunk_size_bytes: 1048576 max_dead_bytes_per_chunk: 134217728 initial_growth_chunk_size_bytes: 2097152 memory limit: 1073741824 arena_extend_strategy: 0
2022-03-01 09:00:03.200 [I:onnxruntime:det, bfc_arena.cc:183 Extend] Total allocated bytes: 943718400
2022-03-01 09:00:03.210 [E:onnxruntime:det, sequential_executor.cc:339 Execute] Non-zero status code returned while running Conv node. Name:'Conv_12' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:309 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool) Failed to allocate memory for requested buffer of size 209715200
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);  // 900 MiB + 200 MiB past the 1 GiB cap
}

}  // namespace
}  // namespace aimem
