// text-generation-inference warmup failures and launcher settings.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

const char* kWarmupFailure = R"(2023-09-26T21:47:10.000Z  INFO text_generation_launcher: Args { model_id: "tiiuae/falcon-40b", max_input_length: 2048, max_total_tokens: 4096, max_batch_prefill_tokens: 4096, max_batch_total_tokens: None, cuda_memory_fraction: 1.0 }
  File "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", line 755, in warmup
    raise RuntimeError(
RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`

2023-09-26T21:48:00.969072Z ERROR text_generation_launcher: Method Warmup encountered an error.
2023-09-26T21:48:01.100000Z ERROR text_generation_launcher: Error: Warmup(Generation("Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"))
)";

TEST(Tgi, WarmupPrefillFailureIsTheBatch) {
  auto g = of_kind(kWarmupFailure, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);  // the router's repeat is the same failure
  EXPECT_EQ(g[0].batch_tokens, 4096u);
  EXPECT_NE(g[0].detail.find("prefill"), std::string::npos);
  auto set = of_kind(kWarmupFailure, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].max_model_len, 4096u);
  EXPECT_EQ(set[0].batch_tokens, 4096u);
  EXPECT_DOUBLE_EQ(*set[0].ratio, 1.0);
  Diagnosis d = test::diagnose_text(kWarmupFailure);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  ASSERT_FALSE(d.incidents.empty());
  bool halves = false;
  for (auto& fix : d.incidents[0].fixes) halves |= fix.action.find("--max-batch-prefill-tokens 4096 -> 2048") != std::string::npos;
  EXPECT_TRUE(halves);
}

TEST(Tgi, TotalTokensVariant) {
  auto g = of_kind("RuntimeError: Not enough memory to handle 20000 total tokens with 4096 prefill tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].batch_tokens, 4096u);
}

TEST(Tgi, HealthyStartIsContextOnly) {
  const char* text = R"(2026-11-26T08:00:01.120Z  INFO text_generation_launcher: Args { model_id: "meta-llama/Llama-3.1-8B-Instruct", max_concurrent_requests: 128, max_input_tokens: Some(8191), max_total_tokens: Some(8192), max_batch_prefill_tokens: Some(8192), cuda_memory_fraction: 1.0 }
2026-11-26T08:00:44.511Z  INFO text_generation_launcher: Shard ready in 43.1s rank=0
2026-11-26T08:00:47.902Z  INFO text_generation_router: Warming up model
2026-11-26T08:00:52.004Z  INFO text_generation_router: Setting max batch total tokens to 412960
)";
  auto set = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].max_model_len, 8192u);  // Some(8192)
  EXPECT_EQ(set[0].batch_tokens, 8192u);
  auto cap = of_kind(text, FactKind::kv_capacity);
  ASSERT_EQ(cap.size(), 1u);
  EXPECT_EQ(cap[0].kv_tokens, 412960u);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

TEST(Tgi, ShardFailingToStartMarksLoading) {
  const char* text = R"(2024-01-01T00:00:00Z ERROR text_generation_launcher: Error when initializing model
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.50 GiB memory in use. Of the allocated memory 23.10 GiB is allocated by PyTorch, and 50.00 MiB is reserved by PyTorch but unallocated.
2024-01-01T00:00:01Z ERROR text_generation_launcher: Shard 0 failed to start
)";
  // TGI's own two lines, and ml_phase's cue in "initializing model".
  EXPECT_EQ(of_kind(text, FactKind::phase_load).size(), 3u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

// The router's panic with the shard's raw allocation error on one line, newlines escaped
// (huggingface/text-generation-inference#563, TGI 0.9); values are ours. The warmup was the
// max-size prefill batch.
TEST(Tgi, WarmupPanicWithTheAllocatorsFigures) {
  const char* text = R"(2026-07-07T17:55:40.000000Z  INFO text_generation_router: router/src/main.rs:208: Warming up model
thread 'main' panicked at 'Unable to warmup model: Generation("Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : 17.20 GiB\nRequested               : 3.75 GiB\nDevice limit            : 22.20 GiB\nFree (according to CUDA): 8.50 MiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB")', router/src/main.rs:216:18
2026-07-07T17:55:43.805488Z ERROR text_generation_launcher: Webserver Crashed
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].allocated, static_cast<uint64_t>(17.20 * 1073741824.0 + 0.5));
  EXPECT_EQ(g[0].requested, static_cast<uint64_t>(3.75 * 1073741824.0));
  EXPECT_EQ(g[0].total, static_cast<uint64_t>(22.20 * 1073741824.0 + 0.5));
  EXPECT_EQ(g[0].free, static_cast<uint64_t>(8.50 * 1048576.0));
  EXPECT_FALSE(g[0].limit);
  EXPECT_NE(g[0].detail.find("prefill"), std::string::npos);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

// The router's warmup span with the shard's CUDA OOM (the span format of
// huggingface/text-generation-inference#1164); values are ours.
TEST(Tgi, WarmupSpanCarriesTheBudgets) {
  const char* text =
      "2026-09-03T00:45:16.041862Z ERROR warmup{max_input_length=8191 max_prefill_tokens=8192 max_total_tokens=8192 max_batch_size=None}:warmup: text_generation_client: router/client/src/lib.rs:46: Server error: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.43 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 180.00 MiB is reserved by PyTorch but unallocated.\n"
      "Error: WebServer(Warmup(Generation(\"CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.43 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 180.00 MiB is reserved by PyTorch but unallocated.\")))\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  auto phase = of_kind(text, FactKind::phase_serve);
  std::erase_if(phase, [](const Fact& f) { return f.family != Family::tgi; });  // ml_phase's cues read the same line
  ASSERT_EQ(phase.size(), 1u);
  EXPECT_NE(phase[0].detail.find("warmup"), std::string::npos);
  std::vector<Fact> set;
  for (auto& f : of_kind(text, FactKind::runtime_setting))
    if (f.family == Family::tgi) set.push_back(f);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].batch_tokens, 8192u);
  EXPECT_EQ(set[0].max_model_len, 8192u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  // The prefill budget (8192) is one sequence of the longest input (8191):
  // the input length sized the warm-up batch, and TGI refuses a prefill
  // budget below it, so the fix lowers the input length first.
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  ASSERT_FALSE(d.incidents.empty());
  bool halves = false;
  for (auto& fix : d.incidents[0].fixes) halves |= fix.action.find("--max-total-tokens (total 8192 -> 4096)") != std::string::npos;
  EXPECT_TRUE(halves);
  // A warmup span with an unrelated error is context only.
  const char* other = "2026-09-03T00:45:16.041862Z ERROR warmup{max_input_length=4095 max_prefill_tokens=4145 max_total_tokens=4096 max_batch_size=None}:warmup: text_generation_client: router/client/src/lib.rs:46: Server error: CANCELLED\n";
  EXPECT_TRUE(of_kind(other, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(other).layer, Layer::none);
}

}  // namespace
}  // namespace aimem
