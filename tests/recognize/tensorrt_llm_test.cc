// TensorRT-LLM executor creation failures, runtime allocation errors and the
// KV-cache figures its start-up prints.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

constexpr double kGiB = 1073741824.0;
uint64_t gib(double v) { return static_cast<uint64_t>(v * kGiB + 0.5); }

// Modelled on NVIDIA/TensorRT-LLM#5872 (trtllm-serve on 8 H200s: the executor's table names
// the KV cache), with the C++ runtime's "Rank N is using GPU N" of NVIDIA/TensorRT-LLM#2398,
// and the RuntimeError that repeats the table; values are ours.
const char* kKvCacheTable = R"([TensorRT-LLM][INFO] Rank 1 is using GPU 1
[03/14/2026-05:06:07] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to insufficient GPU memory.

The following component could not be created: KV cache
Total GPU memory (GiB): 79.11
Free GPU memory before component creation attempt (GiB): 61.50

Previously created components and free GPU memory before/after creation (GiB):
Model: 78.60 / 63.02
Sampler: 63.02 / 62.90
Initial KV cache (temporary for KV cache size estimation): 62.90 / 62.41
Additional executor resources (temporary for KV cache size estimation): 62.41 / 61.50

Please refer to the TensorRT LLM documentation for information on how to control the memory usage through TensorRT LLM configuration options. Possible options include:
  Model: reduce max_num_tokens and/or shard the model weights across GPUs by enabling pipeline and/or tensor parallelism
  KV cache: reduce free_gpu_memory_fraction
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/tensorrt_llm/executor/worker.py", line 364, in worker_main
RuntimeError: Executor creation failed due to insufficient GPU memory.

The following component could not be created: KV cache
Total GPU memory (GiB): 79.11
Free GPU memory before component creation attempt (GiB): 61.50
)";

TEST(TensorrtLlm, ExecutorTableNamesTheKvCache) {
  auto g = of_kind(kKvCacheTable, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);  // the logger's table and the RuntimeError's are one failure
  EXPECT_EQ(g[0].family, Family::tensorrt_llm);
  EXPECT_EQ(g[0].layer, Layer::gpu_vram);
  EXPECT_EQ(g[0].total, gib(79.11));
  EXPECT_EQ(g[0].free, gib(61.50));
  EXPECT_EQ(g[0].gpu, 1);  // rank 1 runs on GPU 1
  EXPECT_NE(g[0].detail.find("kv cache"), std::string::npos);
  EXPECT_NE(g[0].detail.find("'KV cache'"), std::string::npos);
  ASSERT_TRUE(g[0].where.unix_us);  // the "[MM/DD/YYYY-hh:mm:ss]" prefix
  Diagnosis d = test::diagnose_text(kKvCacheTable);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
}

// The component decides the cause: NVIDIA/TensorRT-LLM#5950 (DeepSeek-V3 W4A8 on H20s
// failing at "Additional executor resources") and the weights themselves ("Model").
TEST(TensorrtLlm, ComponentDecidesTheCause) {
  const char* resources = R"(RuntimeError: Executor creation failed due to insufficient GPU memory.

The following component could not be created: Additional executor resources
Total GPU memory (GiB): 95.00
Free GPU memory before component creation attempt (GiB): 9.80

Previously created components and free GPU memory before/after creation (GiB):
Model: 94.30 / 51.20
)";
  auto g = of_kind(resources, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].detail.find("activation"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(resources).cause, Cause::concurrency_batch);

  const char* model = R"([03/14/2026-05:06:07] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: Executor creation failed due to insufficient GPU memory.

The following component could not be created: Model
Total GPU memory (GiB): 23.64
Free GPU memory before component creation attempt (GiB): 23.20
)";
  Diagnosis d = test::diagnose_text(model);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
  // A table cut after its first line is still the failure.
  auto cut = of_kind("RuntimeError: Executor creation failed due to insufficient GPU memory.\n", FactKind::gpu_oom);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].detail, "TensorRT-LLM executor creation");
}

// The C++ runtime's allocation error as Triton's tensorrtllm backend shows it
// (triton-inference-server/tensorrtllm_backend#281), after the KV sizing line of
// NVIDIA/TensorRT-LLM's own docs; and TensorRT's "Cuda Runtime (out of memory)"
// (triton-inference-server/tensorrtllm_backend#438). Values are ours.
TEST(TensorrtLlm, RuntimeAllocationErrors) {
  const char* text = R"([TensorRT-LLM][INFO] Loaded engine size: 15388 MiB
[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 23.65 GiB, available: 0.04 GiB
E0314 05:06:07.123456 1 model_instance_state.cc:123] Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::tensorrt_llm);
  auto st = of_kind(text, FactKind::gpu_state);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].total, gib(23.65));
  EXPECT_EQ(st[0].free, gib(0.04));
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::gpu_vram);

  auto trt = of_kind("[TensorRT-LLM][ERROR] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)\n", FactKind::gpu_oom);
  ASSERT_EQ(trt.size(), 1u);
  auto req = of_kind("[03/14/2026-05:06:07] [TRT] [E] 2: [executionContext.cpp::ExecutionContext::123] Error Code 2: OutOfMemory (Requested amount of GPU memory (4294967296 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.)\n",
                     FactKind::gpu_oom);
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].requested, 4294967296u);
}

// A healthy start (the lines of NVIDIA/TensorRT-LLM's deployment guides, our values) is
// context: KV pool, sizing figures and settings, and no failure.
TEST(TensorrtLlm, HealthyStartIsContext) {
  const char* text = R"([TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB
[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 4060
[TensorRT-LLM][INFO] Number of tokens per block: 64.
[TensorRT-LLM][INFO] [MemUsageChange] Allocated 62.99 GiB for max tokens in paged KV cache (259840).
[03/14/2026-05:06:07] [TRT-LLM] [I] max_seq_len=131072, max_num_requests=2048, max_num_tokens=8192, max_batch_size=2048
[03/14/2026-05:06:07] [TRT-LLM] [I] KvCacheConfig(enable_block_reuse=True, max_tokens=None, free_gpu_memory_fraction=0.9)
[03/14/2026-05:06:08] [TRT-LLM] [I] Engine loaded and ready to serve...
)";
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  auto cap = of_kind(text, FactKind::kv_capacity);
  ASSERT_EQ(cap.size(), 1u);
  EXPECT_EQ(cap[0].kv_tokens, 259840u);
  EXPECT_EQ(cap[0].kv_bytes, gib(62.99));
  std::vector<Fact> set;
  for (auto& f : of_kind(text, FactKind::runtime_setting))
    if (f.family == Family::tensorrt_llm) set.push_back(f);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set[0].max_model_len, 131072u);
  EXPECT_EQ(set[0].batch_tokens, 8192u);
  EXPECT_EQ(set[0].sequences, 2048u);
  EXPECT_DOUBLE_EQ(*set[1].ratio, 0.9);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

TEST(TensorrtLlm, TuningHintsAndMentionsDoNotFire) {
  const char* text = R"(Possible options include:
  KV cache: reduce free_gpu_memory_fraction
Note: if you see "Executor creation failed due to insufficient GPU memory", lower max_num_tokens.
)";
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// TensorRT's builder gives up when no tactic fits its workspace: the failure,
// after the tactics it skipped. Modelled on TensorRT 8.x builder logs (own sizes).
TEST(TensorRtLlm, NoTacticFittingTheWorkspaceIsTheFailure) {
  const std::string skipped =
      "WARNING: [TRT]: Requested amount of GPU memory (2147483648 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n"
      "WARNING: [TRT]: Skipping tactic 5 due to insufficient memory on requested size of 2147483648 detected for tactic 0x0000000000000007.\n";
  Diagnosis failed = test::diagnose_text(
      skipped + "[TRT] [E] 10: [optimizer.cpp::computeCosts::3728] Error Code 10: Internal Error (Could not find any implementation for node "
                "/model.22/Concat_3 due to insufficient workspace. See verbose log for requested sizes.)\n");
  EXPECT_EQ(failed.layer, Layer::gpu_vram);
  // The builder's last word alone is read: no tactic fit.
  auto g = of_kind("[TRT] [E] 10: [optimizer.cpp::computeCosts::3728] Error Code 10: Internal Error (Could not find any implementation for "
                   "node /backbone/conv_41 due to insufficient workspace. See verbose log for requested sizes.)\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].detail, "TensorRT's builder found no tactic that fits its workspace");
}

// The batch manager's check that the paged KV pool holds one whole sequence
// of the engine's length (modelled on NVIDIA/TensorRT-LLM threads of 32k
// engines on 24 GB cards; our own sizes): the context's KV cache does not fit
// beside the weights.
TEST(TensorrtLlm, AKvPoolSmallerThanOneSequenceIsTheContext) {
  const char* log =
      "[TensorRT-LLM][INFO] Loaded engine size: 12980 MiB\n"
      "[TensorRT-LLM][INFO] Allocate 5905580032 bytes for k/v cache.\n"
      "[TensorRT-LLM][INFO] Using 14416 tokens in paged KV cache.\n"
      "[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] Assertion failed: maxTokensInPagedKvCache must be large enough to process at "
      "least 1 sequence to completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq) "
      "(/app/tensorrt_llm/cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp:187)\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  EXPECT_LT(d.confidence, 0.8);  // a lean: the weights or the pool's fraction may have left it small
}

// TensorRT 7's builder timing a tactic with no device memory left
// (NVIDIA/TensorRT#749's shape; our node names): a device allocation failure,
// and the engine's batch size beside it is the batch.
TEST(TensorrtLlm, ABuilderTacticThatCouldNotAllocateIsTheDevice) {
  const std::string log =
      "$ ./build_engine --weights seg.bin --maxBatchSize 12 --workspace 8192\n"
      "[03/02/2021-10:12:40] [W] [TRT] GPU memory allocation error during getBestTactic: conv7 + relu7\n"
      "[03/02/2021-10:12:40] [E] [TRT] Internal error: could not find any implementation for node conv7 + relu7, try increasing the "
      "workspace size with IBuilder::setMaxWorkspaceSize()\n"
      "[03/02/2021-10:12:40] [E] Engine creation failed\n";
  auto g = of_kind(log, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

}  // namespace
}  // namespace aimem
