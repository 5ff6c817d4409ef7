// Engine versions as data (fit/engine_rules.cc): `--runtime NAME@VERSION`,
// the rules each version applies (vLLM V0's profile run, SGLang's
// mem_fraction_static pool, TGI's warm-up), and `fit --against` reading the
// version and the settings from a log. Expected figures are worked out in the
// comments from the engines' formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fit/against.h"
#include "fit/catalog.h"
#include "fit/hf.h"
#include "fit/plan.h"
#include "sources/files.h"
#include "support/test_support.h"

namespace aimem::fit {
namespace {

using test::read_file;
using test::RunResult;
using test::run_aimem;
using test::source_dir;

constexpr uint64_t GiB = 1024ULL * 1024 * 1024, MiB = 1024ULL * 1024;

ModelSpec llama31_8b() {
  auto spec = catalog_spec("meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_TRUE(spec);
  return *spec;
}

Hardware gpu(double gib, uint32_t n = 1) {
  Hardware hw;
  hw.gpu_count = n;
  hw.gpu_total = uint64_t(gib * double(GiB));
  return hw;
}

uint64_t term_sum(const Plan& p, std::string_view comp) {
  uint64_t b = 0;
  for (const Term& t : p.terms)
    if (t.component == comp && t.device != "host") b += t.bytes;
  return b;
}

TEST(FitEngineRules, RuntimeSpecParsesNamesVersionsAndReleases) {
  auto v = parse_runtime_spec("vllm@0.6");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->runtime, Runtime::kVllm);
  EXPECT_EQ(v->version, "0.6");
  // A release maps to the row that covers it.
  EXPECT_EQ(parse_runtime_spec("vllm@0.6.4.post1")->version, "0.6");
  // Chunked prefill by default for long contexts arrived in 0.5.3 (vllm#6666).
  EXPECT_EQ(parse_runtime_spec("vllm@0.4.3")->version, "0.4");
  EXPECT_EQ(parse_runtime_spec("vllm@0.5.2")->version, "0.4");
  EXPECT_EQ(parse_runtime_spec("vllm@0.5.3.post1")->version, "0.6");
  EXPECT_EQ(parse_runtime_spec("vllm@0.9.2")->version, "0.8");
  EXPECT_EQ(parse_runtime_spec("vllm@v0.11.0")->version, "0.11");
  EXPECT_EQ(parse_runtime_spec("vllm@0.14.1")->version, "0.11");
  EXPECT_EQ(parse_runtime_spec("tgi@2.4.1")->version, "2");
  EXPECT_EQ(parse_runtime_spec("tgi@1.0")->version, "1");
  EXPECT_EQ(parse_runtime_spec("tgi@1.4")->version, "2");  // 1.1-1.4 keep 5% back like 2.x
  EXPECT_EQ(parse_runtime_spec("tgi@0.9.4")->version, "1");
  auto sg = parse_runtime_spec("SGLang");
  ASSERT_TRUE(sg);
  EXPECT_EQ(sg->runtime, Runtime::kSglang);
  EXPECT_EQ(sg->version, "");  // newest
  // Errors say what is accepted.
  auto newest = parse_runtime_spec("vllm@newest");
  ASSERT_FALSE(newest);
  EXPECT_NE(newest.error().message.find("known: 0.4, 0.6, 0.8, 0.11"), std::string::npos) << newest.error().message;
  auto b4000 = parse_runtime_spec("llama.cpp@b4000");
  ASSERT_FALSE(b4000);
  EXPECT_NE(b4000.error().message.find("has no version rules"), std::string::npos) << b4000.error().message;
  auto mlc = parse_runtime_spec("mlc");
  ASSERT_FALSE(mlc);
  EXPECT_NE(mlc.error().message.find("sglang"), std::string::npos) << mlc.error().message;
  EXPECT_EQ(rule_versions(Runtime::kTgi), "1, 2, 3");
}

TEST(FitEngineRules, DefaultIsNewestAndThePlanNamesItsRules) {
  FitSettings s;
  s.runtime = Runtime::kVllm;
  s.ctx = 8192;
  Plan p = plan_once(llama31_8b(), s, gpu(79.2), {});
  EXPECT_EQ(p.rules, "vllm@0.11");
  EXPECT_NE(p.engine.find("[rules vllm@0.11]"), std::string::npos) << p.engine;
  EXPECT_NE(p.rules_source.find("vllm/v1/core/kv_cache_utils.py"), std::string::npos);
  s.runtime = Runtime::kSglang;
  EXPECT_EQ(plan_once(llama31_8b(), s, gpu(79.2), {}).rules, "sglang@0.4");
  s.runtime = Runtime::kTgi;
  EXPECT_EQ(plan_once(llama31_8b(), s, gpu(79.2), {}).rules, "tgi@3");
}

TEST(FitEngineRules, V0ProfilesTheWholeContextUntilChunkedPrefillTurnsOn) {
  // vllm-project/vllm#10517 (RTX 3090, 0.90): 20k started, 29k did not, 35k did. V0 profiles
  // max(max_model_len, 2048) tokens without chunked prefill, and turns chunked prefill on (512
  // tokens) above 32K; V1 profiles its fixed 2048-token chunk whatever the context.
  FitSettings s;
  s.runtime = Runtime::kVllm;
  s.engine_version = "0.6";
  auto at = [&](uint32_t ctx) {
    s.ctx = ctx;
    return plan_once(llama31_8b(), s, gpu(23.58), {});
  };
  Plan p20 = at(20000), p29 = at(29000), p35 = at(35000);
  EXPECT_EQ(p20.batch, 20000u);
  EXPECT_EQ(p29.batch, 29000u);
  EXPECT_EQ(p35.batch, 512u);
  EXPECT_GT(*p20.kv_cache_tokens, *p29.kv_cache_tokens);  // a longer profile run leaves fewer blocks
  EXPECT_GT(*p35.kv_cache_tokens, *p20.kv_cache_tokens);  // chunked prefill: a 512-token profile run
  EXPECT_TRUE(p20.fits);
  EXPECT_FALSE(p29.fits);  // fewer tokens than one 29000-token request
  EXPECT_TRUE(p35.fits);
  // --chunked-prefill on changes the V0 profile run; V1 ignores the context.
  s.chunked_prefill = true;
  EXPECT_EQ(at(29000).batch, 512u);
  s.chunked_prefill.reset();
  s.engine_version = "0.11";
  Plan v1a = at(20000), v1b = at(29000);
  EXPECT_EQ(v1a.batch, 2048u);
  EXPECT_EQ(*v1a.kv_cache_tokens, *v1b.kv_cache_tokens);
}

TEST(FitEngineRules, V08HasNoHybridAllocator) {
  // gpt-oss: sliding and full layers. 0.11 groups them (2 groups of 18); 0.8 keeps every layer
  // as full attention.
  auto spec = catalog_spec("openai/gpt-oss-120b");
  ASSERT_TRUE(spec);
  FitSettings s;
  s.runtime = Runtime::kVllm;
  s.ctx = 131072;
  s.engine_version = "0.11";
  Plan a = plan_once(*spec, s, gpu(79.65), {});
  s.engine_version = "0.8";
  Plan b = plan_once(*spec, s, gpu(79.65), {});
  EXPECT_EQ(a.kv_blocks_per_request, 8192u + 521u);
  EXPECT_EQ(b.kv_blocks_per_request, 8192u);
  bool said = false;
  for (const std::string& x : b.assumptions) said |= x.find("has no hybrid KV cache manager") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(FitEngineRules, SglangPoolIsWhatTheFractionLeavesAfterTheWeights) {
  // profile_max_num_token: rest = (total - weights - context) - total x (1 - fraction);
  // tokens = rest // (8 KV heads x 128 x 32 layers x 2 x 2 B = 131072 B).
  ModelSpec m = llama31_8b();
  FitSettings s;
  s.runtime = Runtime::kSglang;
  s.ctx = 8192;
  Hardware hw = gpu(80);
  Plan p = plan_once(m, s, hw, {});
  EXPECT_DOUBLE_EQ(p.gpu_mem_util, 0.88);  // tp 1 default
  const int64_t weights = int64_t(term_sum(p, "weights"));
  const int64_t rest = int64_t(80 * GiB) - weights - int64_t(512 * MiB) - int64_t(double(80 * GiB) * (1 - 0.88));
  EXPECT_EQ(*p.kv_cache_tokens, uint64_t(rest) / 131072);
  EXPECT_EQ(p.kv_bytes_per_token, 131072u);
  EXPECT_EQ(term_sum(p, "kv_cache"), *p.kv_cache_tokens * 131072);
  EXPECT_TRUE(p.fits);
  // --max-total-tokens lowers it; tp 4 splits the heads and the default fraction drops to 0.85.
  s.max_total_tokens = 100000;
  EXPECT_EQ(*plan_once(m, s, hw, {}).kv_cache_tokens, 100000u);
  s.max_total_tokens = 0;
  s.tp = 4;
  Plan q = plan_once(m, s, gpu(80, 4), {});
  EXPECT_DOUBLE_EQ(q.gpu_mem_util, 0.85);
  EXPECT_EQ(q.kv_bytes_per_token, 131072u / 4);
  // A fraction below what the weights need: SGLang stops at start-up.
  s.tp = 1;
  s.mem_fraction = 0.15;
  Plan r = plan_once(m, s, hw, {});
  EXPECT_EQ(*r.kv_cache_tokens, 0u);
  EXPECT_FALSE(r.fits);
  bool said = false;
  for (const std::string& x : r.assumptions) said |= x.find("increase --mem-fraction-static") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(FitEngineRules, TgiMaxBatchTotalTokensFromTheWarmup) {
  // warmup: free = total x fraction - (weights + context + prefill workspace); blocks = free x
  // wiggle // (16 x 131072 B) + cdiv(prefill, 16); tokens = blocks x 16 (tgi@2: wiggle 0.95).
  ModelSpec m = llama31_8b();
  FitSettings s;
  s.runtime = Runtime::kTgi;
  s.engine_version = "2";
  s.ctx = 4096;
  Hardware hw = gpu(80);
  Plan p = plan_once(m, s, hw, {});
  // The compute terms hold the prefill workspace and its logits: every prompt token over the
  // vocabulary in the model's dtype (the router's warm-up asks for prefill logprobs), and in
  // 2.x their log_softmax copy (flash_causal_lm.py; in place from 3.x): 4096 x 128256 x 2 x 2 B.
  bool logits = false;
  for (const Term& t : p.terms)
    if (t.component == "compute" && t.bytes == 4096ULL * 128256 * 2 * 2) logits = true;
  EXPECT_TRUE(logits);
  const uint64_t warm = 4096ULL * 131072;  // the warm-up batch's blocks, allocated before the reading
  const uint64_t used = term_sum(p, "weights") + term_sum(p, "compute") + 800 * MiB + warm;
  const uint64_t blocks = uint64_t(double(80 * GiB - used) * 0.95) / (16 * 131072) + 4096 / 16;
  EXPECT_EQ(*p.kv_cache_tokens, blocks * 16);
  // --cuda-memory-fraction 0.5 leaves the KV what half the GPU holds after the weights.
  s.mem_fraction = 0.5;
  Plan h = plan_once(m, s, hw, {});
  EXPECT_LT(*h.kv_cache_tokens, *p.kv_cache_tokens);
  const uint64_t blocks_h = uint64_t(double(40 * GiB - used) * 0.95) / (16 * 131072) + 4096 / 16;
  EXPECT_EQ(*h.kv_cache_tokens, blocks_h * 16);
  // tgi@3: blocks of one token, and the log_softmax in place (one copy of the logits less).
  s.mem_fraction = 0;
  s.engine_version = "3";
  Plan t3 = plan_once(m, s, hw, {});
  const uint64_t used3 = used - 4096ULL * 128256 * 2 - warm + 4096ULL * 131072;
  EXPECT_EQ(*t3.kv_cache_tokens, uint64_t(double(80 * GiB - used3) * 0.95) / 131072 + 4096);
}

TEST(FitEngineRules, AgainstAFailedVllm011StartReadsTheArgsDict) {
  const std::string text =
      read_file(source_dir() + "/tests/fixtures/fit_logs/vllm-0.11-qwen25-32b-failed.log");
  EngineLog g = parse_engine_log(text);
  EXPECT_EQ(g.engine, "vllm");
  EXPECT_EQ(g.version, "0.11.0");
  EXPECT_EQ(g.model_path, "/models/qwen2.5-32b");
  ASSERT_TRUE(g.gpu_mem_util);
  EXPECT_DOUBLE_EQ(*g.gpu_mem_util, 0.8);
  EXPECT_EQ(g.n_ctx.value_or(0), 32768u);
  ASSERT_TRUE(g.kv_available);
  EXPECT_NEAR(double(*g.kv_available), -0.62 * double(GiB), 2.0);
  ASSERT_TRUE(g.weights);
  FitSettings s = settings_from_log(g);
  EXPECT_EQ(s.engine_version, "0.11");
  EXPECT_DOUBLE_EQ(s.gpu_mem_util, 0.8);
  // The local path is neither here nor in the catalog: the model comes from the command line.
  auto none = model_from_log(local_files(), g, "");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("aimem fit MODEL --against LOG"), std::string::npos);
  testing::internal::CaptureStdout();
  int rc = run_against(local_files(), "vllm.log", text, "Qwen/Qwen2.5-32B-Instruct", false);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;  // weights within 5%, the budget at or below zero like the engine's
  EXPECT_NE(out.find("[rules vllm@0.11]"), std::string::npos) << out;
  EXPECT_NE(out.find("available KV memory"), std::string::npos) << out;
  EXPECT_NE(out.find("-0.62 GiB"), std::string::npos) << out;
  EXPECT_NE(out.find("vLLM stops at start-up"), std::string::npos) << out;
  EXPECT_NE(out.find("assumed 80 GiB"), std::string::npos) << out;
}

TEST(FitEngineRules, AgainstASglangStartPredictsMaxTotalNumTokens) {
  const std::string text = read_file(source_dir() + "/tests/fixtures/fit_logs/sglang-0.4-llama31-8b-h100.log");
  EngineLog g = parse_engine_log(text);
  EXPECT_EQ(g.engine, "sglang");
  EXPECT_EQ(g.kv_tokens.value_or(0), 444075u);
  EXPECT_DOUBLE_EQ(g.mem_fraction.value_or(0), 0.88);
  FitSettings s = settings_from_log(g);
  EXPECT_EQ(s.runtime, Runtime::kSglang);
  EXPECT_EQ(s.batch, 8192u);
  testing::internal::CaptureStdout();
  int rc = run_against(local_files(), "sglang.log", text, "", true);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["rules_version"], "sglang@0.4");
  bool tokens = false;
  for (const auto& c : j["components"])
    if (c["component"] == "max_total_num_tokens") {
      tokens = true;
      EXPECT_LT(std::fabs(c["error"].get<double>()), 0.01) << out;  // the formula, on the log's own figures
    }
  EXPECT_TRUE(tokens);
}

TEST(FitEngineRules, CliShowsTheVersionSyntaxAndRefusesUnknownVersions) {
  RunResult help = run_aimem({"fit", "--help"});
  EXPECT_NE(help.out.find("vllm@0.6"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("NAME@VERSION"), std::string::npos) << help.out;
  RunResult bad = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "--runtime", "vllm@newest"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("known: 0.4, 0.6, 0.8, 0.11"), std::string::npos) << bad.err;
  RunResult v0 = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "--runtime", "vllm@0.6",
                            "--ctx", "8192"});
  EXPECT_NE(v0.out.find("[rules vllm@0.6]"), std::string::npos) << v0.out;
  RunResult against = run_aimem({"fit", "Qwen/Qwen2.5-32B-Instruct", "--against",
                                 source_dir() + "/tests/fixtures/fit_logs/vllm-0.11-qwen25-32b-failed.log"});
  EXPECT_EQ(against.status, 0) << against.out << against.err;
  EXPECT_NE(against.out.find("engine: vllm 0.11.0"), std::string::npos) << against.out;
}

}  // namespace
}  // namespace aimem::fit
