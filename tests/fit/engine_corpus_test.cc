// aimem fit against the KV token counts engines printed at start-up:
// tests/fixtures/corpus/fit_engine_logs.json records real start-ups from
// public issue threads and one public write-up (vLLM V0 and V1, SGLang, TGI,
// llama.cpp, Ollama) as data: the model's config.json figures, the GPU, the
// flags, the version, and what the engine printed. Each case runs plan_once()
// with the same settings and the rules of the version the thread names
// (fit/engine_rules.cc), and the test prints the table README.md shows.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fit/catalog.h"
#include "fit/hf.h"
#include "fit/inputs.h"
#include "fit/plan.h"

namespace aimem::fit {
namespace {

using nlohmann::json;
constexpr double kGiBd = 1024.0 * 1024 * 1024;

json corpus() {
  std::ifstream in(std::string(AIMEM_SOURCE_DIR) + "/tests/fixtures/corpus/fit_engine_logs.json");
  return json::parse(in);
}

Runtime runtime_of(const std::string& e) {
  if (e == "vllm") return Runtime::kVllm;
  if (e == "sglang") return Runtime::kSglang;
  if (e == "tgi") return Runtime::kTgi;
  if (e == "ollama") return Runtime::kOllama;
  return Runtime::kLlamaCpp;
}

struct Row {
  std::string id, engine, rules, what;
  double engine_v = 0, aimem_v = 0;
  bool tokens = false, hit = false;
  double err() const { return engine_v ? (aimem_v - engine_v) / std::fabs(engine_v) : 0; }
};

Plan plan_case(const json& all, const json& c) {
  const json& mdl = all["models"][c["model"].get<std::string>()];
  const std::string engine = c["engine"];
  const Runtime rt = runtime_of(engine);
  const bool gguf = rt == Runtime::kLlamaCpp || rt == Runtime::kOllama;
  const std::string quant = c.value("quant", "");
  Result<ModelSpec> spec = mdl.contains("catalog") ? catalog_spec(mdl["catalog"].get<std::string>())
                                                   : spec_from_config(mdl, c["name"], "", gguf ? "" : quant);
  EXPECT_TRUE(spec) << c["id"] << ": " << (spec ? "" : spec.error().message);
  if (!spec) return Plan{};
  if (gguf && !quant.empty()) EXPECT_TRUE(apply_gguf_ftype(*spec, quant)) << c["id"];
  const json& f = c["flags"];
  FitSettings s;
  s.runtime = rt;
  s.engine_version = c.value("rules", "");
  s.tp = f.value("tp", 1u);
  s.gpus = c.value("gpus", 1u);
  if (gguf) {
    s.ctx = f.value("n_ctx", 4096u);
    s.concurrency = 1;
    if (f.contains("type_k")) s.kv_type = f["type_k"];
    if (f.contains("flash_attn")) s.flash_attn = f["flash_attn"].get<bool>();
  } else {
    s.ctx = f.value("max_model_len", 0u);
    s.concurrency = 1;
    s.gpu_mem_util = f.value("gpu_memory_utilization", 0.0);
    s.mem_fraction = f.value("mem_fraction_static", f.value("cuda_memory_fraction", 0.0));
    s.batch = f.value("max_num_batched_tokens", f.value("max_batch_prefill_tokens", 0u));
    s.max_seqs = f.value("max_num_seqs", 0u);
    if (f.contains("kv_cache_dtype")) s.kv_type = f["kv_cache_dtype"];
  }
  Hardware hw;
  hw.gpu_count = s.gpus;
  hw.gpu_total = uint64_t(c["gpu_gib"].get<double>() * kGiBd);
  return plan_once(*spec, s, hw, {});
}

// A component's bytes on the GPUs, or on every device with `host` (llama.cpp
// keeps token_embd in host memory: its input layer is always on the CPU).
double sum(const Plan& p, std::string_view comp, bool host = false) {
  double b = 0;
  for (const Term& t : p.terms)
    if (t.component == comp && (host || t.device != "host")) b += double(t.bytes);
  return b;
}

TEST(FitEngineCorpus, KvTokensAndWeightsAgainstWhatEnginesPrinted) {
  const json all = corpus();
  ASSERT_GE(all["cases"].size(), 55u);  // issue 17 asks for at least 30 real start-ups; the corpus holds 55
  std::vector<Row> kv_rows, weight_rows;
  for (const json& c : all["cases"]) {
    const std::string id = c["id"], engine = c["engine"];
    SCOPED_TRACE(id);
    Plan p = plan_case(all, c);
    const json& pr = c["printed"];
    const std::string rules = p.rules.empty() ? engine : p.rules;
    if (runtime_of(engine) == Runtime::kVllm || runtime_of(engine) == Runtime::kSglang ||
        runtime_of(engine) == Runtime::kTgi)
      EXPECT_EQ(p.rules, fmt::format("{}@{}", engine, c["rules"].get<std::string>())) << "the case's rules were not used";
    // The engine's KV figure: its token count where printed, else its KV memory.
    if (pr.contains("kv_tokens")) {
      Row r{id, engine, rules, "KV tokens", pr["kv_tokens"].get<double>(), double(p.kv_cache_tokens.value_or(0)), true};
      r.hit = std::fabs(r.err()) <= 0.10;
      kv_rows.push_back(r);
    } else if (pr.contains("kv_gib")) {
      double e = pr["kv_gib"].get<double>() * kGiBd;
      double a = p.kv_budget ? double(*p.kv_budget) : sum(p, "kv_cache");
      Row r{id, engine, rules, e <= 0 ? "KV budget (failed start)" : "KV memory", e, a, false};
      // A failed start is matched when aimem's budget is not positive either.
      r.hit = e <= 0 ? a <= 0 : std::fabs(r.err()) <= 0.10;
      kv_rows.push_back(r);
    }
    if (pr.contains("weights_gib")) {
      // vLLM prints one rank's weights; llama.cpp and Ollama print the whole
      // model ("file size", "model size", or the sum of every model buffer,
      // the host's included).
      const bool whole = runtime_of(engine) == Runtime::kLlamaCpp || runtime_of(engine) == Runtime::kOllama;
      Row r{id, engine, rules, whole ? "weights (whole model)" : "weights per rank",
            pr["weights_gib"].get<double>() * kGiBd,
            sum(p, "weights", whole) + sum(p, "quant_metadata", whole), false};
      r.hit = std::fabs(r.err()) <= 0.02;
      weight_rows.push_back(r);
    }
  }
  auto show = [](const Row& r, double v) {
    return r.tokens ? fmt::format("{:.0f}", v) : fmt::format("{:.2f} GiB", v / kGiBd);
  };
  std::string table = fmt::format("\n{:<4} {:<10} {:<12} {:<24} {:>14} {:>14} {:>8}\n", "case", "engine", "rules",
                                  "figure", "engine", "aimem", "error");
  int kv_hits = 0, w_hits = 0;
  for (const auto* rows : {&kv_rows, &weight_rows})
    for (const Row& r : *rows) {
      table += fmt::format("{:<4} {:<10} {:<12} {:<24} {:>14} {:>14} {:>+7.1f}% {}\n", r.id, r.engine, r.rules, r.what,
                           show(r, r.engine_v), show(r, r.aimem_v), r.err() * 100, r.hit ? "" : "MISS");
    }
  for (const Row& r : kv_rows) kv_hits += r.hit;
  for (const Row& r : weight_rows) w_hits += r.hit;
  table += fmt::format("KV within 10%: {}/{}; weights within 2%: {}/{}\n", kv_hits, kv_rows.size(), w_hits,
                       weight_rows.size());
  std::cout << table;
  ASSERT_GE(kv_rows.size(), 44u);
  ASSERT_GE(weight_rows.size(), 27u);
  // The bar is 80% of KV figures within 10% and weights within 2%.
  // Both meet it (KV 36/44, weights 24/27; README.md gives each miss its
  // reason) and the test asserts the 80%; the measured counts are floors as
  // well: a change that loses a case fails here.
  EXPECT_GE(kv_hits * 5, int(kv_rows.size()) * 4) << "KV within 10% fell below 80%";
  EXPECT_GE(w_hits * 5, int(weight_rows.size()) * 4) << "weights within 2% fell below 80%";
  EXPECT_GE(w_hits, 24) << "weights within 2% fell below the measured 24/27";
  EXPECT_GE(kv_hits, 36) << "KV within 10% fell below the measured 36/44";
  // The engine-side arithmetic that needs no calibration stays exact: the
  // llama.cpp and Ollama KV buffers, and SGLang's pool on its printed fraction.
  for (const Row& r : kv_rows)
    if (r.engine == "llama.cpp" || r.engine == "ollama") EXPECT_LT(std::fabs(r.err()), 0.005) << r.id;
}

}  // namespace
}  // namespace aimem::fit
