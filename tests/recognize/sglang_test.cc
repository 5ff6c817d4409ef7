// SGLang start-up: a KV pool that the static memory fraction leaves no room for,
// and the pool figures a healthy start prints.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

// Modelled on sgl-project/sglang#7691 (DeepSeek on 8 ranks: the weights leave a negative
// profile on every rank, then the RuntimeError) with the newer "Current value" wording of
// the error (python/sglang/srt/model_executor/pool_configurator.py); values are ours.
const char* kNegativeProfile = R"([2026-03-02 10:15:20 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=12.40 GB, mem usage=118.25 GB.
[2026-03-02 10:15:21 DP0 TP0] max_total_tokens=65536 is larger than the profiled value -204800. Use the profiled value instead.
[2026-03-02 10:15:21 DP1 TP1] max_total_tokens=65536 is larger than the profiled value -204800. Use the profiled value instead.
[2026-03-02 10:15:21 DP2 TP2] max_total_tokens=65536 is larger than the profiled value -204800. Use the profiled value instead.
[2026-03-02 10:15:21 DP0 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1402, in init_memory_pool
    raise RuntimeError(msg)
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.93
)";

TEST(Sglang, NegativeProfiledTokensAreOneKvShortageOfTheWeights) {
  auto k = of_kind(kNegativeProfile, FactKind::kv_cache_shortage);
  ASSERT_EQ(k.size(), 1u);  // three ranks and the RuntimeError: one failure
  EXPECT_EQ(k[0].family, Family::sglang);
  EXPECT_EQ(k[0].layer, Layer::gpu_vram);
  EXPECT_NE(k[0].detail.find("negative"), std::string::npos);
  EXPECT_NE(k[0].detail.find("204800"), std::string::npos);
  EXPECT_EQ(k[0].where.line, 2u);
  // After the weights: what they use and what was left.
  auto g = of_kind(kNegativeProfile, FactKind::gpu_state);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].free, static_cast<uint64_t>(12.40 * 1073741824.0 + 0.5));
  EXPECT_EQ(g[0].usage, static_cast<uint64_t>(118.25 * 1073741824.0 + 0.5));
  // The fraction the error reports.
  auto s = of_kind(kNegativeProfile, FactKind::runtime_setting);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(*s[0].ratio, 0.93);
  Diagnosis d = test::diagnose_text(kNegativeProfile);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);  // the weights and the reserve leave no KV room
  ASSERT_EQ(d.incidents.size(), 1u);
}

// The error alone, in the wordings of sgl-project/sglang#4330 and #4895 (0.4.x) and of the
// 0.1.x model_runner.py with its typo ("Not enought memory"; sgl-project/sglang#322 era).
TEST(Sglang, NotEnoughMemoryAloneIsNoCacheBlocks) {
  for (const char* text : {"[2026-01-05 08:00:01 TP0] Scheduler hit an exception: RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n",
                           "RuntimeError: Not enought memory. Please try to increase --mem-fraction-static.\n",
                           "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.7\n"}) {
    auto k = of_kind(text, FactKind::kv_cache_shortage);
    ASSERT_EQ(k.size(), 1u) << text;
    EXPECT_NE(k[0].detail.find("no cache blocks"), std::string::npos);
    Diagnosis d = test::diagnose_text(text);
    EXPECT_EQ(d.layer, Layer::gpu_vram) << text;
    EXPECT_EQ(d.cause, Cause::model_load) << text;
  }
  auto k = of_kind("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.7\n",
                   FactKind::kv_cache_shortage);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_DOUBLE_EQ(*k[0].ratio, 0.7);
}

// A healthy start: the pool lines of sgl-project/sglang#4840 (older "K size:" form) and of
// the newer "K 5.22 GB" form, and a positive profile below --max-total-tokens
// (Blackwellboy/model-serving-minefield#109: a clamp, not a failure). Values are ours.
TEST(Sglang, HealthyPoolLinesAreContext) {
  const char* text = R"([2026-02-10 09:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', tokenizer_path='Qwen/Qwen2.5-7B-Instruct', mem_fraction_static=0.88, max_running_requests=None, max_total_tokens=200000, chunked_prefill_size=8192, max_prefill_tokens=16384, context_length=32768, tp_size=1)
[2026-02-10 09:00:31 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=63.10 GB, mem usage=14.32 GB.
[2026-02-10 09:00:31 TP0] max_total_tokens=200000 is larger than the profiled value 181234. Use the profiled value instead.
[2026-02-10 09:00:32 TP0] KV Cache is allocated. #tokens: 181234, K size: 4.84 GB, V size: 4.84 GB
[2026-02-10 09:00:32 TP0] Memory pool end. avail mem=7.95 GB
[2026-02-10 09:00:40 TP0] max_total_num_tokens=181234, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=32768, available_gpu_mem=6.80 GB
[2026-02-10 09:00:41] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)
)";
  EXPECT_TRUE(of_kind(text, FactKind::kv_cache_shortage).empty());
  auto cap = of_kind(text, FactKind::kv_capacity);
  ASSERT_EQ(cap.size(), 3u);
  EXPECT_EQ(cap[0].kv_tokens, 181234u);  // the clamp
  EXPECT_NE(cap[0].detail.find("200000"), std::string::npos);
  EXPECT_EQ(cap[1].kv_tokens, 181234u);
  EXPECT_EQ(cap[1].kv_bytes, 2 * static_cast<uint64_t>(4.84 * 1073741824.0 + 0.5));
  EXPECT_EQ(cap[2].max_model_len, 32768u);
  EXPECT_EQ(cap[2].sequences, 2048u);
  EXPECT_EQ(cap[2].batch_tokens, 8192u);
  auto set = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_DOUBLE_EQ(*set[0].ratio, 0.88);
  EXPECT_EQ(set[0].max_model_len, 32768u);
  EXPECT_EQ(set[0].batch_tokens, 8192u);
  EXPECT_EQ(set[0].kv_tokens, 200000u);
  EXPECT_FALSE(set[0].sequences);  // max_running_requests=None
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
  // The newer pool line.
  auto newer = of_kind("[2026-02-10 09:00:32 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 171008, K 5.22 GB, V 5.22 GB\n",
                       FactKind::kv_capacity);
  ASSERT_EQ(newer.size(), 1u);
  EXPECT_EQ(newer[0].kv_tokens, 171008u);
  EXPECT_EQ(newer[0].kv_bytes, 2 * static_cast<uint64_t>(5.22 * 1073741824.0 + 0.5));
}

TEST(Sglang, AdviceAndHelpTextDoNotFire) {
  const char* text = R"(usage: launch_server.py [--mem-fraction-static MEM_FRACTION_STATIC]
  --mem-fraction-static MEM_FRACTION_STATIC
                        The fraction of the memory used for static allocation (model weights and KV cache memory pool). Use a smaller value if you see out-of-memory errors.
Tip: if you see "Not enough memory. Please try to increase --mem-fraction-static", raise it a step.
)";
  EXPECT_TRUE(of_kind(text, FactKind::kv_cache_shortage).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// The scheduler's KV token pool cannot hold the next batch (modelled on
// sgl-project/sglang#4602 and #7353, schedule_batch.py's alloc_token_slots;
// values ours): a GPU failure whose cause is the requests running at once;
// with only a few running (#14972's shape), the pool is too small for their
// context. The exception repeats the log line: one failure.
TEST(Sglang, ABatchTheTokenPoolCannotHoldIsTheBatchUnlessFewRun) {
  auto log = [](int running) {
    return "[2025-05-02 11:20:41 TP0] Decode batch. #running-req: " + std::to_string(running) +
           ", #token: 60110, token usage: 0.99, gen throughput (token/s): 1210.40, #queue-req: 37\n"
           "[2025-05-02 11:20:42 TP0] Decode out of memory. Try to lower your batch size.\n"
           "Try to allocate 96 tokens.\n"
           "[2025-05-02 11:20:42 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/schedule_batch.py\", line 1201, in prepare_for_decode\n"
           "RuntimeError: Decode out of memory. Try to lower your batch size.\n";
  };
  auto many = of_kind(log(48), FactKind::gpu_oom);
  ASSERT_EQ(many.size(), 1u);
  EXPECT_EQ(many[0].layer, Layer::gpu_vram);
  EXPECT_EQ(many[0].cause, Cause::concurrency_batch);
  Diagnosis d = test::diagnose_text(log(48));
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text(log(5)).cause, Cause::kv_cache_context);
  // Quoted in prose, the message is no failure.
  EXPECT_TRUE(of_kind("the docs say \"Decode out of memory. Try to lower your batch size\" means the pool is full\n", FactKind::gpu_oom).empty());
}

// The scheduler's idle self-check (scheduler.py's check_memory; our counts):
// with nothing running, free and evictable tokens short of the pool's size
// are slots that finished requests never gave back: a leak of the GPU's KV
// pool, reported by the engine itself. A log line that only mentions the
// check is not one.
TEST(Sglang, TheIdleSelfChecksShortfallIsALeakOfTheKvPool) {
  Diagnosis d = test::diagnose_text(
      "[2025-10-22 08:14:03] Scheduler hit an exception: Traceback (most recent call last):\n"
      "ValueError: token_to_kv_pool_allocator memory leak detected! self.max_total_num_tokens=301220, available_size=2048, "
      "evictable_size=298901, protected_size=0\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("leaking"), std::string::npos) << d.incidents[0].summary;
  EXPECT_EQ(test::diagnose_text("# the check raises \"token_to_kv_pool_allocator memory leak detected!\" when slots are lost\n").layer,
            Layer::none);
}


// Modelled on sgl-project/sglang#393 (2024's router: "Prefill out of memory.
// This should never happen." with the radix tree printed after it); values ours.
TEST(Sglang, TheOldRoutersPrefillOutOfMemoryIsTheBatchsKvPool) {
  const char* text = R"(new fill batch. #seq: 1. #cached_token: 512. #new_token: 2048. #remaining_req: 7. #running_req: 13. tree_cache_hit_rate: 58.10%.
#running-req: 14, #token: 29900, token usage: 0.97, #queue-req: 7
new fill batch. #seq: 2. #cached_token: 300. #new_token: 3100. #remaining_req: 5. #running_req: 14. tree_cache_hit_rate: 57.92%.
Prefill out of memory. This should never happen.
(root) [3100] [0]
Exception in ModelRpcClient:
)";
  auto g = test::facts_of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::sglang);
  EXPECT_NE(g[0].text.find("Prefill out of memory"), std::string::npos);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);  // 14 requests running: the batch, not one context
}

// SGLang bounds a request by its KV pool too: refused for its length under a
// pool far smaller than the announced context, the request met the cache the
// GPU had room for (modelled on sgl-project/sglang threads with speculative
// decoding squeezing the pool; own model and figures). Under a pool as large
// as the context the same refusal is the model's limit, not memory.
TEST(Sglang, ARequestRefusedUnderAPoolSmallerThanTheContextIsTheKvCache) {
  const std::string pool_small =
      "[2026-03-02 10:00:01 TP0] KV Cache is allocated. #tokens: 3120, K size: 0.05 GB, V size: 0.05 GB\n"
      "[2026-03-02 10:00:09 TP0] max_total_num_tokens=3120, chunked_prefill_size=8192, max_prefill_tokens=16384, "
      "max_running_requests=64, context_len=32768, available_gpu_mem=30.12 GB\n";
  const std::string refused =
      "[2026-03-02 10:02:40] Error in request: Input length (6000 tokens) exceeds the maximum allowed length (3114 tokens). "
      "Use a shorter input or enable --allow-auto-truncate.\n";
  Diagnosis d = test::diagnose_text(pool_small + refused);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  const std::string pool_full =
      "[2026-03-02 10:00:09 TP0] max_total_num_tokens=400000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
      "max_running_requests=64, context_len=32768, available_gpu_mem=3.12 GB\n";
  EXPECT_EQ(test::diagnose_text(pool_full +
                                "[2026-03-02 10:02:40] Error in request: Input length (40000 tokens) exceeds the maximum allowed "
                                "length (32762 tokens). Use a shorter input or enable --allow-auto-truncate.\n")
                .layer,
            Layer::none);
  EXPECT_EQ(test::diagnose_text(refused).layer, Layer::none);  // no pool shown: nothing to weigh it against
}

}  // namespace
}  // namespace aimem
