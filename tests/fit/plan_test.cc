// The runtime models and the planner on hand-built architectures. Every
// expected figure is worked out in the comment next to it from the
// architecture numbers (bytes; KiB/MiB/GiB are powers of two).
#include <gtest/gtest.h>

#include "fit/inputs.h"
#include "fit/plan.h"

namespace aimem::fit {
namespace {

constexpr uint64_t MiB = 1024ULL * 1024, GiB = 1024 * MiB;

// A dense decoder without a tensor table: weights from the parameter count.
ModelSpec dense(uint32_t layers, uint32_t embd, uint32_t heads, uint32_t kv_heads, uint32_t head_dim, uint32_t ff,
                uint32_t vocab, uint64_t params) {
  ModelSpec m;
  m.name = "test";
  m.source = "config";
  m.architecture = "llama";
  m.weights_format = "BF16";
  m.n_layer = layers;
  m.n_embd = embd;
  m.n_head = heads;
  m.n_head_kv.assign(layers, kv_heads);
  m.head_dim_k = m.head_dim_v = head_dim;
  m.n_ff = ff;
  m.n_vocab = vocab;
  m.n_ctx_train = 131072;
  m.n_params = m.n_params_active = params;
  m.weight_bytes = params * 2;
  m.dtype_bytes = 2;
  return m;
}

ModelSpec llama8b() { return dense(32, 4096, 32, 8, 128, 14336, 128256, 8030261248ULL); }

TEST(FitQuant, GgufFileTypeNamesAreOneSpelling) {
  // llama.cpp prints general.file_type as "Q4_K - Medium"; users type q4_k_m or q4-k-m.
  EXPECT_EQ(normalize_ftype("Q4_K - Medium"), "q4_k_m");
  EXPECT_EQ(normalize_ftype("Q3_K - Large"), "q3_k_l");
  EXPECT_EQ(normalize_ftype("q4-k-s"), "q4_k_s");
  EXPECT_EQ(normalize_ftype("Q8_0"), "q8_0");
}

TEST(FitKv, BytesPerTokenForMhaGqaMqa) {
  // Llama 3.1 8B (GQA 32/8, head 128): 32 layers x 2 (K,V) x 8 x 128 x 2 B = 131072 B/token.
  EXPECT_EQ(kv_bytes_per_token(llama8b(), "f16"), 131072u);
  // The same at q8_0: rows of 1024 elements are 32 blocks x 34 B = 1088 B; x 2 x 32 = 69632.
  EXPECT_EQ(kv_bytes_per_token(llama8b(), "q8_0"), 69632u);
  // MHA (CodeLlama-13B: 40 layers, 40 heads of 128): 40 x 2 x 5120 x 2 = 819200.
  EXPECT_EQ(kv_bytes_per_token(dense(40, 5120, 40, 40, 128, 13824, 32016, 13e9), "f16"), 819200u);
  // MQA (Falcon-7B: 32 layers, 1 KV head of 64): 32 x 2 x 64 x 2 = 8192.
  EXPECT_EQ(kv_bytes_per_token(dense(32, 4544, 71, 1, 64, 18176, 65024, 7e9), "f16"), 8192u);
  // Tensor parallel 2 splits the 8 KV heads: 65536 per rank; at tp 16 a head is replicated: 16384.
  EXPECT_EQ(kv_bytes_per_token(llama8b(), "auto", 2), 65536u);
  EXPECT_EQ(kv_bytes_per_token(llama8b(), "auto", 16), 16384u);
}

TEST(FitKv, MlaCachesTheLatentOnly) {
  // DeepSeek V3: 61 layers, kv_lora_rank 512 + rope 64 = 576 values per token per layer,
  // f16: 61 x 576 x 2 = 70272 B/token, the same on every tensor-parallel rank.
  ModelSpec m = dense(61, 7168, 128, 128, 192, 18432, 129280, 671e9);
  m.kv_lora_rank = 512;
  m.n_rot = 64;
  EXPECT_EQ(kv_bytes_per_token(m, "f16"), 70272u);
  EXPECT_EQ(kv_bytes_per_token(m, "auto", 8), 70272u);
  // llama.cpp: a K-only cache of 576 per layer: 70272 x 4096 cells.
  FitSettings s;
  s.ctx = 4096;
  s.device_cpu = true;
  Plan p = plan_once(m, s, Hardware{}, {});
  uint64_t kv = 0;
  for (const Term& t : p.terms)
    if (t.component == "kv_cache") kv += t.bytes;
  EXPECT_EQ(kv, 70272ULL * 4096);
}

TEST(FitKv, SlidingWindowLayersHoldOnlyTheWindow) {
  // Gemma-2-like: 4 layers, even ones local with a 4096 window, head 256, 8 KV heads.
  ModelSpec m = dense(4, 3584, 16, 8, 256, 14336, 256000, 9e9);
  m.n_swa = 4096;
  m.swa_layer = {true, false, true, false};
  FitSettings s;
  s.ctx = 32768;
  s.ubatch = 512;
  s.device_cpu = true;
  s.flash_attn = true;
  Plan p = plan_once(m, s, Hardware{}, {});
  // Row per layer: K + V = 2 x 8 x 256 x 2 B = 8192 B per cell.
  // Global layers: 32768 cells; SWA layers: pad256(min(32768, 4096 x 1 + 512)) = 4608 cells.
  // 2 x 8192 x 32768 + 2 x 8192 x 4608 = 536870912 + 75497472 = 612368384.
  uint64_t kv = 0;
  for (const Term& t : p.terms)
    if (t.component == "kv_cache") kv += t.bytes;
  EXPECT_EQ(kv, 612368384u);
}

TEST(FitLlamaCppPlan, PerSequenceStreamsAndPadding) {
  // 1000 tokens x 3 sequences, one stream each: n_ctx = pad256(3000) = 3072,
  // n_ctx_seq = pad256(3072 / 3) = 1024 cells per stream.
  FitSettings s;
  s.ctx = 1000;
  s.concurrency = 3;
  s.unified_kv = false;
  s.device_cpu = true;
  Plan p = plan_once(llama8b(), s, Hardware{}, {});
  EXPECT_EQ(p.kv_cells, 1024u);
  EXPECT_EQ(p.kv_streams, 3u);
  // Unified (llama-server): one stream of pad256(3000) = 3072 cells.
  s.unified_kv = true;
  p = plan_once(llama8b(), s, Hardware{}, {});
  EXPECT_EQ(p.kv_cells, 3072u);
  EXPECT_EQ(p.kv_streams, 1u);
  // The output buffer is host memory for n_seq_max rows: 128256 x 3 x 4 B.
  uint64_t out = 0;
  for (const Term& t : p.terms)
    if (t.what.rfind("output buffer", 0) == 0) out = t.bytes;
  EXPECT_EQ(out, 128256ULL * 3 * 4);
}

TEST(FitLlamaCppPlan, QuantizedVNeedsFlashAttention) {
  FitSettings s;
  s.ctx = 4096;
  s.kv_type = "q4_0";
  s.flash_attn = false;
  s.device_cpu = true;
  Plan p = plan_once(llama8b(), s, Hardware{}, {});
  EXPECT_TRUE(p.flash_attn);
  EXPECT_FALSE(p.assumptions.empty());
}

TEST(FitLlamaCppPlan, LayerOffloadCountsTheOutputLayerFirst) {
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = 80 * GiB;
  hw.gpu_name = "test";
  FitSettings s;
  s.ctx = 4096;
  s.gpu_layers = 1;  // only the output layer: every block and the embedding on the CPU
  Plan p = plan_once(llama8b(), s, hw, {});
  uint64_t gpu_weights = 0;
  for (const Term& t : p.terms)
    if (t.device == "GPU0" && t.component == "weights") gpu_weights += t.bytes;
  // The output matrix 128256 x 4096 x 2 B = 1050673152 B, nothing else.
  EXPECT_EQ(gpu_weights, 128256ULL * 4096 * 2);
  // 33 layers (32 blocks + output) put everything but the embedding on the GPU.
  s.gpu_layers = 33;
  p = plan_once(llama8b(), s, hw, {});
  uint64_t host_weights = 0;
  for (const Term& t : p.terms)
    if (t.device == "host" && t.component == "weights") host_weights += t.bytes;
  EXPECT_EQ(host_weights, 128256ULL * 4096 * 2);
}

TEST(FitLlamaCppPlan, MoeExpertsStayOnTheCpuWithNCpuMoe) {
  // A Mixtral-like MoE without a tensor table: 32 blocks, 8 experts of 14336,
  // 46.7e9 parameters in bf16. Expert share of a block: 8 x 3 x 4096 x 14336 x 32
  // / 46.7e9 = 0.965, so --n-cpu-moe 16 moves about half the expert bytes
  // (16/32 x 0.965 x the block bytes) from the GPU to the host.
  ModelSpec m = dense(32, 4096, 32, 8, 128, 0, 32000, 46700000000ULL);
  m.n_expert = 8;
  m.n_expert_used = 2;
  m.n_ff_exp = 14336;
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = 80 * GiB;
  FitSettings s;
  s.ctx = 4096;
  Plan all = plan_once(m, s, hw, {});
  s.n_cpu_moe = 16;
  Plan half = plan_once(m, s, hw, {});
  auto weights_on = [](const Plan& p, const std::string& d) {
    uint64_t b = 0;
    for (const Term& t : p.terms)
      if (t.device == d && t.component == "weights") b += t.bytes;
    return b;
  };
  uint64_t moved = weights_on(all, "GPU0") - weights_on(half, "GPU0");
  EXPECT_EQ(moved, weights_on(half, "host") - weights_on(all, "host"));
  uint64_t blocks = m.weight_bytes - 2ULL * 32000 * 4096 * 2;  // minus embedding and output
  EXPECT_NEAR(double(moved), 0.5 * 0.965 * double(blocks), 0.01 * double(blocks));
}

TEST(FitOllamaPlan, ReservesItsOwnGraphEstimate) {
  // Ollama's llama-family estimate with full offload, num_batch 512, context 4096:
  // max(4*512*(1 + 4*4096 + 4096*(1+32)), 4*512*(4096 + 128256))
  //   = max(2048 * 151553, 2048 * 132352) = 310380544 B = 296 MiB.
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = 24 * GiB;
  FitSettings s;
  s.runtime = Runtime::kOllama;
  s.flash_attn = true;  // llama.cpp's own buffer is then far smaller than Ollama's figure
  Plan p = plan_once(llama8b(), s, hw, {});
  EXPECT_EQ(p.ctx, 4096u);  // Ollama's default num_ctx
  uint64_t gpu_compute = 0;
  for (const Term& t : p.terms)
    if (t.device == "GPU0" && t.component == "compute") gpu_compute += t.bytes;
  EXPECT_EQ(gpu_compute, 310380544u);
  bool said = false;
  for (const std::string& a : p.assumptions) said |= a.find("graph estimate") != std::string::npos && a.find("296 MiB") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(FitVllm, KvBudgetTokensAndConcurrency) {
  // Llama 3.1 8B on a 23.58 GiB GPU at 0.9, max_model_len 20000, profile of 20000 tokens
  // (corpus case e005, vLLM printed 1952 blocks = 31232 tokens).
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = uint64_t(23.58 * GiB);
  FitSettings s;
  s.runtime = Runtime::kVllm;
  s.ctx = 20000;
  s.batch = 20000;
  s.gpu_mem_util = 0.9;
  Plan p = plan_once(llama8b(), s, hw, {});
  ASSERT_TRUE(p.kv_cache_tokens);
  EXPECT_EQ(*p.kv_cache_tokens % 16, 0u);  // whole blocks of 16
  EXPECT_NEAR(double(*p.kv_cache_tokens), 31232.0, 31232 * 0.05);
  EXPECT_NEAR(*p.kv_max_concurrency, double(*p.kv_cache_tokens) / 20000, 1e-9);
  EXPECT_TRUE(p.fits);
  // Two sequences of 20000 do not fit the budget; the planner says why and what flips it.
  s.concurrency = 2;
  Plan q = plan(llama8b(), s, hw, {});
  EXPECT_FALSE(q.fits);
  EXPECT_EQ(q.binding, "GPU0 kv_cache");
  EXPECT_EQ(q.max_concurrency, 1u);
  ASSERT_FALSE(q.suggestions.empty());
  EXPECT_TRUE(q.suggestions.front().flips);
  EXPECT_NE(q.suggestions.front().action.find("1 sequences at once"), std::string::npos) << q.suggestions.front().action;
}

TEST(FitPlanner, MaxContextIsTheLargestThatFitsAndSuggestionsFlip) {
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = 24 * GiB;
  hw.gpu_name = "24 GiB";
  FitSettings s;
  s.ctx = 131072;
  Plan p = plan(llama8b(), s, hw, {});  // 16 GiB of bf16 weights + 16 GiB of KV: does not fit
  EXPECT_FALSE(p.fits);
  ASSERT_GT(p.max_context, 0u);
  EXPECT_LT(p.max_context, 131072u);
  EXPECT_EQ(p.max_context % 256, 0u);
  FitSettings at = s;
  at.ctx = p.max_context;
  EXPECT_TRUE(plan_once(llama8b(), at, hw, {}).fits);
  at.ctx = p.max_context + 256;
  EXPECT_FALSE(plan_once(llama8b(), at, hw, {}).fits);
  bool has_ctx = false, has_kv = false;
  for (const Suggestion& g : p.suggestions) {
    if (g.action.find("cap the context") != std::string::npos) has_ctx = g.flips;
    if (g.action.find("q8_0") != std::string::npos) has_kv = g.saves_bytes > 0;
  }
  EXPECT_TRUE(has_ctx);
  EXPECT_TRUE(has_kv);
}

TEST(FitPlanner, ModelsBesideItAndOtherProcessesShareTheGpu) {
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = 24 * GiB;
  FitSettings s;
  s.ctx = 8192;
  Plan alone = plan_once(llama8b(), s, hw, {});
  ModelSpec embed = dense(12, 768, 12, 12, 64, 3072, 30522, 110000000);
  embed.name = "embedder";
  Plan with = plan_once(llama8b(), s, hw, {{embed, "loaded beside it"}});
  EXPECT_EQ(with.devices[0].used - alone.devices[0].used, embed.weight_bytes + 0u);
  hw.gpu_in_use = 8 * GiB;  // another process holds 8 GiB
  Plan crowded = plan_once(llama8b(), s, hw, {});
  EXPECT_EQ(crowded.devices[0].others, 8 * GiB);
  EXPECT_EQ(crowded.devices[0].headroom(), alone.devices[0].headroom() - int64_t(8 * GiB));
}

TEST(FitPlanner, RollingDeploymentNeedsTwoCopiesOnTheHost) {
  Hardware hw;
  hw.ram_total = 20 * GiB;
  FitSettings s;
  s.ctx = 4096;
  s.device_cpu = true;
  s.mmap = false;
  Plan one = plan_once(llama8b(), s, hw, {});  // ~15 GiB private copy: fits in 20 GiB
  EXPECT_TRUE(one.fits);
  s.rolling = true;
  Plan two = plan_once(llama8b(), s, hw, {});  // two copies: does not
  EXPECT_FALSE(two.fits);
  EXPECT_EQ(two.binding.rfind("host", 0), 0u);
}

TEST(FitPlanner, EveryRuntimeGivesAPlan) {
  Hardware hw;
  hw.gpu_count = 1;
  hw.gpu_total = 80 * GiB;
  for (Runtime r : {Runtime::kLlamaCpp, Runtime::kOllama, Runtime::kVllm, Runtime::kTgi, Runtime::kTransformers}) {
    FitSettings s;
    s.runtime = r;
    s.ctx = 8192;
    Plan p = plan(llama8b(), s, hw, {});
    EXPECT_TRUE(p.fits) << to_string(r);
    EXPECT_FALSE(p.flags.empty()) << to_string(r);
    EXPECT_FALSE(p.engine.empty()) << to_string(r);
    uint64_t weights = 0;
    for (const Term& t : p.terms)
      if (t.component == "weights") weights += t.bytes;
    // bf16 weights are 16.06e9 B whichever runtime loads them (llama.cpp duplicates nothing: untied).
    EXPECT_NEAR(double(weights), 16.06e9, 16.06e9 * 0.01) << to_string(r);
  }
  EXPECT_EQ(parse_runtime("llama-server"), Runtime::kLlamaCpp);
  EXPECT_EQ(parse_runtime("TGI"), Runtime::kTgi);
  EXPECT_FALSE(parse_runtime("sglang-but-not-yet"));
}

}  // namespace
}  // namespace aimem::fit
