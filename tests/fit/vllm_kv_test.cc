// vLLM V1's KV cache groups and block arithmetic (fit/vllm_kv.h) on
// hand-built architectures. Every expected figure is worked out in the
// comment beside it with vLLM's formulas (kv_cache_utils.py, v0.10-v0.11):
//   page      = 2 x block_size(16) x kv_heads x head_dim x 2 B (bf16)
//   blocks    = budget // page // group_size
//   tokens    = blocks // groups x 16                 ('GPU KV cache size')
//   per req.  = full: cdiv(len, 16); sliding: cdiv(min(w - 1 + mbt, len), 16) + 1
//   conc.     = blocks / per-request blocks           ('Maximum concurrency')
#include <gtest/gtest.h>

#include "fit/catalog.h"
#include "fit/hf.h"
#include "fit/plan.h"
#include "fit/vllm_kv.h"

namespace aimem::fit {
namespace {

constexpr uint64_t GiB = 1024ULL * 1024 * 1024;

// A decoder whose layers slide where `sliding(il)` says.
template <typename F>
ModelSpec swa_model(uint32_t layers, uint32_t kv_heads, uint32_t head_dim, uint32_t window, F sliding) {
  ModelSpec m;
  m.name = "test";
  m.architecture = "test";
  m.n_layer = layers;
  m.n_head_kv.assign(layers, kv_heads);
  m.head_dim_k = m.head_dim_v = head_dim;
  m.dtype_bytes = 2;
  m.n_ctx_train = 131072;
  m.n_swa = window;
  for (uint32_t il = 0; il < layers; ++il) m.swa_layer.push_back(sliding(il));
  return m;
}

// gpt-oss-120b: 36 layers, sliding_attention on even layers (window 128), 8 KV heads of 64.
ModelSpec gpt_oss_120b() { return swa_model(36, 8, 64, 128, [](uint32_t il) { return il % 2 == 0; }); }

VllmKvInputs inputs(uint64_t budget, uint32_t len, uint32_t mbt, bool hybrid = true) {
  VllmKvInputs in;
  in.budget = budget;
  in.max_model_len = len;
  in.max_num_batched_tokens = mbt;
  in.hybrid_allowed = hybrid;
  return in;
}

TEST(FitVllmKv, GptOssTwoGroupsOfEighteen) {
  // page = 2 x 16 x 8 x 64 x 2 = 32768 B. 18 sliding + 18 full: group size 18, one group of each.
  VllmKvLayout l = vllm_kv_layout(gpt_oss_120b(), "auto", 1, inputs(4 * GiB, 131072, 8192));
  EXPECT_EQ(l.rule, VllmKvLayout::Rule::kHybrid);
  EXPECT_EQ(l.page_bytes, 32768u);
  EXPECT_EQ(l.group_size, 18u);
  ASSERT_EQ(l.groups.size(), 2u);
  EXPECT_TRUE(l.groups[0].sliding);  // layer 0 slides: its type comes first
  EXPECT_EQ(l.groups[0].window, 128u);
  EXPECT_FALSE(l.groups[1].sliding);
  // 4 GiB = 4294967296 / 32768 = 131072 pages / 18 = 7281 blocks.
  EXPECT_EQ(l.num_blocks, 7281u);
  EXPECT_EQ(l.bytes, 7281ULL * 32768 * 18);
  // 7281 // 2 groups = 3640 x 16 = 58240 tokens.
  EXPECT_EQ(l.tokens, 58240u);
  // Full: 131072 / 16 = 8192; sliding: min(127 + 8192, 131072) = 8319 -> cdiv 520, + 1 = 521. Sum 8713.
  EXPECT_EQ(l.blocks_per_request, 8713u);
  EXPECT_NEAR(l.max_concurrency, 7281.0 / 8713.0, 1e-12);  // 0.84x
  // One request needs 8713 x 32768 x 18 B = 4.79 GiB > 4 GiB: vLLM refuses to start.
  EXPECT_EQ(l.request_bytes, 8713ULL * 32768 * 18);
  // Longest len for one request: cdiv(len, 16) + 521 <= 7281 -> 6760 blocks = 108160 tokens.
  EXPECT_EQ(vllm_kv_max_model_len(l, 1, 8192, 131072), 108160u);
  // Two requests: 2 x (cdiv(len,16) + 521) <= 7281 -> cdiv(len,16) <= 3119 -> 49904 tokens.
  EXPECT_EQ(vllm_kv_max_model_len(l, 2, 8192, 131072), 49904u);
}

TEST(FitVllmKv, HybridDisabledCountsEveryLayerAsFull) {
  // unify_hybrid_kv_cache_specs: 36 full layers in one group. 131072 pages / 36 = 3640 blocks,
  // 3640 x 16 = 58240 tokens, a request 8192 blocks: 3640 / 8192 = 0.444x.
  VllmKvLayout l = vllm_kv_layout(gpt_oss_120b(), "auto", 1, inputs(4 * GiB, 131072, 8192, false));
  EXPECT_EQ(l.rule, VllmKvLayout::Rule::kUniformSpec);
  EXPECT_TRUE(l.sliding_as_full);
  EXPECT_EQ(l.group_size, 36u);
  EXPECT_EQ(l.num_blocks, 3640u);
  EXPECT_EQ(l.tokens, 58240u);
  EXPECT_EQ(l.blocks_per_request, 8192u);
  EXPECT_NEAR(l.max_concurrency, 3640.0 / 8192.0, 1e-12);
  EXPECT_NE(vllm_kv_rule_text(l).find("full attention"), std::string::npos);
}

TEST(FitVllmKv, Gemma3SevenGroupsWithPadding) {
  // Gemma 3 27B: 62 layers, every 6th full (5, 11, ..., 59: 10 full, 52 sliding), window 1024,
  // 16 KV heads of 128: page = 2 x 16 x 16 x 128 x 2 = 131072 B. Group size min(10, 52) = 10
  // (52 >= 1.25 x 10): cdiv(52, 10) = 6 sliding groups (9,9,9,9,8,8 layers) + 1 full = 7.
  ModelSpec m = swa_model(62, 16, 128, 1024, [](uint32_t il) { return (il + 1) % 6 != 0; });
  VllmKvLayout l = vllm_kv_layout(m, "auto", 1, inputs(10 * GiB, 131072, 8192));
  EXPECT_EQ(l.rule, VllmKvLayout::Rule::kHybrid);
  EXPECT_EQ(l.group_size, 10u);
  ASSERT_EQ(l.groups.size(), 7u);
  EXPECT_EQ(l.groups[0].layers, 9u);
  EXPECT_EQ(l.groups[5].layers, 8u);
  EXPECT_FALSE(l.groups[6].sliding);
  EXPECT_EQ(l.groups[6].layers, 10u);
  // 10 GiB / 131072 = 81920 pages / 10 = 8192 blocks; 8192 // 7 = 1170 x 16 = 18720 tokens.
  EXPECT_EQ(l.num_blocks, 8192u);
  EXPECT_EQ(l.tokens, 18720u);
  // Full 8192 + 6 x (cdiv(min(1023 + 8192, 131072), 16) + 1 = 576 + 1) = 8192 + 3462 = 11654.
  EXPECT_EQ(l.blocks_per_request, 11654u);
  EXPECT_NEAR(l.max_concurrency, 8192.0 / 11654.0, 1e-12);  // 0.70x; all-full would give 0.16x
}

TEST(FitVllmKv, AllSlidingIsOneGroupWithAWindowPerRequest) {
  // Mistral v0.1 style: 32 layers all sliding (4096), 8 KV heads of 128: page 65536 B, one group of 32.
  ModelSpec m = swa_model(32, 8, 128, 4096, [](uint32_t) { return true; });
  for (bool hybrid : {true, false}) {  // nothing to unify: the same either way
    VllmKvLayout l = vllm_kv_layout(m, "auto", 1, inputs(8 * GiB, 32768, 2048, hybrid));
    EXPECT_EQ(l.rule, VllmKvLayout::Rule::kUniformSpec);
    EXPECT_FALSE(l.sliding_as_full);
    // 8 GiB / 65536 / 32 = 4096 blocks = 65536 tokens.
    EXPECT_EQ(l.num_blocks, 4096u);
    EXPECT_EQ(l.tokens, 65536u);
    // cdiv(min(4095 + 2048, 32768), 16) + 1 = 384 + 1 = 385: 4096 / 385 = 10.64x.
    EXPECT_EQ(l.blocks_per_request, 385u);
    EXPECT_NEAR(l.max_concurrency, 4096.0 / 385.0, 1e-12);
  }
}

TEST(FitVllmKv, NearlyEqualCountsUseTheLargerGroupSize) {
  // 12 sliding + 13 full (vLLM's gpt-oss-20b + EAGLE example): 13 < 1.25 x 12, so groups of 13;
  // the sliding group holds 12 layers and one padding slot.
  ModelSpec m = swa_model(25, 8, 64, 128, [](uint32_t il) { return il < 12; });
  VllmKvLayout l = vllm_kv_layout(m, "auto", 1, inputs(1 * GiB, 4096, 2048));
  EXPECT_EQ(l.group_size, 13u);
  ASSERT_EQ(l.groups.size(), 2u);
  EXPECT_EQ(l.groups[0].layers, 12u);
  // 1 GiB / 32768 = 32768 pages / 13 = 2520 blocks.
  EXPECT_EQ(l.num_blocks, 2520u);
}

TEST(FitVllmKv, SmallerPagesGetLargerBlocks) {
  // Sliding layers with head_dim 64 (page 16384 B) beside full layers of 128 (32768 B, 4 KV heads):
  // unify_kv_cache_spec_page_size doubles the sliding block size to 32 tokens.
  ModelSpec m = swa_model(4, 4, 128, 256, [](uint32_t il) { return il % 2 == 0; });
  m.head_dim_k_swa = m.head_dim_v_swa = 64;
  VllmKvLayout l = vllm_kv_layout(m, "auto", 1, inputs(1 * GiB, 1024, 512));
  EXPECT_EQ(l.rule, VllmKvLayout::Rule::kHybrid);
  EXPECT_EQ(l.page_bytes, 32768u);
  ASSERT_EQ(l.groups.size(), 2u);
  EXPECT_EQ(l.groups[0].block_size, 32u);
  EXPECT_EQ(l.groups[1].block_size, 16u);
  // 1 GiB / 32768 / 2 = 16384 blocks; tokens use the smallest block: 16384 // 2 x 16 = 131072.
  EXPECT_EQ(l.tokens, 131072u);
  // Per request: full cdiv(1024, 16) = 64; sliding cdiv(min(255 + 512, 1024), 32) + 1 = 24 + 1 = 25.
  EXPECT_EQ(l.blocks_per_request, 89u);
  // A page that does not divide the largest: vLLM raises NotImplementedError.
  m.head_dim_k_swa = m.head_dim_v_swa = 96;
  VllmKvLayout bad = vllm_kv_layout(m, "auto", 1, inputs(1 * GiB, 1024, 512));
  EXPECT_EQ(bad.rule, VllmKvLayout::Rule::kUnsupported);
  EXPECT_EQ(bad.num_blocks, 0u);
  EXPECT_NE(bad.why.find("NotImplementedError"), std::string::npos);
}

TEST(FitVllmKv, FullAttentionMatchesTheOldPerTokenCount) {
  // Llama 3.1 8B: 32 full layers, page 2 x 16 x 8 x 128 x 2 = 65536; 3.81 GiB of budget ->
  // floor(4090956922 / 65536 / 32) = 1950 blocks = 31200 tokens, as budget // (16 x 131072 B/token).
  ModelSpec m = swa_model(32, 8, 128, 0, [](uint32_t) { return false; });
  uint64_t budget = uint64_t(3.81 * double(GiB));
  VllmKvLayout l = vllm_kv_layout(m, "auto", 1, inputs(budget, 20000, 20000));
  EXPECT_EQ(l.num_blocks, budget / (16 * 131072));
  EXPECT_EQ(l.tokens, l.num_blocks * 16);
  EXPECT_EQ(l.blocks_per_request, 1250u);  // 20000 / 16
}

TEST(FitVllmKv, PlanUsesTheHybridAllocatorForGptOss) {
  // The catalog's gpt-oss-120b on an H100: the plan names the rule, counts the blocks as vLLM does,
  // and its verdict follows the per-request block need, not tokens x context.
  auto spec = catalog_spec("openai/gpt-oss-120b");
  ASSERT_TRUE(spec) << spec.error().message;
  Hardware hw;
  hw.gpu_count = 1;
  const GpuInfo* h100 = find_gpu("H100");
  ASSERT_NE(h100, nullptr);
  hw.gpu_total = h100->memory_bytes;
  FitSettings s;
  s.runtime = Runtime::kVllm;
  s.ctx = 131072;
  Plan p = plan_once(*spec, s, hw, {});
  ASSERT_GT(p.kv_blocks, 0u);
  bool said = false;
  for (const std::string& a : p.assumptions) said |= a.find("hybrid KV cache manager, 2 groups of 18") != std::string::npos;
  EXPECT_TRUE(said);
  // 8192 full blocks + 521 sliding (max_num_batched_tokens 8192 on a >= 70 GiB GPU).
  EXPECT_EQ(p.kv_blocks_per_request, 8713u);
  ASSERT_TRUE(p.kv_max_concurrency);
  EXPECT_NEAR(*p.kv_max_concurrency, double(p.kv_blocks) / 8713.0, 1e-12);
  EXPECT_EQ(*p.kv_cache_tokens, p.kv_blocks / 2 * 16);
  EXPECT_EQ(p.fits, p.kv_blocks >= 8713 && p.devices[0].headroom() >= 0);
  // Turned off, the same budget holds half the blocks per group and a request needs 8192 of them.
  s.vllm_no_hybrid_kv = true;
  Plan q = plan_once(*spec, s, hw, {});
  EXPECT_EQ(q.kv_blocks_per_request, 8192u);
  EXPECT_LE(q.kv_blocks, p.kv_blocks / 2 + 1);
  EXPECT_LT(*q.kv_max_concurrency, *p.kv_max_concurrency);
}

TEST(FitVllmKv, HfConfigSlidingLayersReachThePlan) {
  // Gemma 2 config.json (sliding_window 4096, no layer_types): alternating layers slide, so a
  // 42-layer model has 21 + 21 layers and two groups of 21.
  auto spec = spec_from_config(nlohmann::json::parse(R"({"model_type":"gemma2","hidden_size":3584,
      "num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,
      "intermediate_size":14336,"vocab_size":256000,"max_position_embeddings":8192,"sliding_window":4096,
      "torch_dtype":"bfloat16"})"),
                               "gemma2-test", "", "");
  ASSERT_TRUE(spec) << spec.error().message;
  // page = 2 x 16 x 8 x 256 x 2 = 131072; 4 GiB / 131072 / 21 = 1560 blocks (32768 / 21 = 1560.4).
  VllmKvLayout l = vllm_kv_layout(*spec, "auto", 1, inputs(4 * GiB, 8192, 2048));
  EXPECT_EQ(l.rule, VllmKvLayout::Rule::kHybrid);
  EXPECT_EQ(l.group_size, 21u);
  EXPECT_EQ(l.num_blocks, 1560u);
  // Full 8192 / 16 = 512; sliding min(4095 + 2048, 8192) = 6143 -> 384 + 1 = 385; 897 per request.
  EXPECT_EQ(l.blocks_per_request, 897u);
}

}  // namespace
}  // namespace aimem::fit
