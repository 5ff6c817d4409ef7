// aimem fit against real deployments: tests/fixtures/corpus/fit_cases.jsonl
// holds the settings and the figures vLLM, SGLang, llama.cpp, Ollama and TGI
// printed in public issue threads. Each case's architecture numbers become a
// config.json, its quantization and settings become aimem's inputs, and the
// prediction is compared with every figure the engine printed. The test prints
// the error table and fails where the weights are off by more than 5%.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "fit/catalog.h"
#include "fit/hf.h"
#include "fit/inputs.h"
#include "fit/plan.h"
#include "fit/vllm_kv.h"

namespace aimem::fit {
namespace {

using nlohmann::json;
constexpr double kGiBd = 1024.0 * 1024 * 1024;


// The first number in a JSON value that may be a string like
// "default (8192 from config)" or "2048 (derived: ...)".
std::optional<double> num(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  std::string s = v.get<std::string>();
  size_t i = s.find_first_of("0123456789");
  if (i == std::string::npos) return std::nullopt;
  return std::stod(s.substr(i));
}

std::string model_type(const std::string& model) {
  std::string m = text::lower(model);
  if (m.find("gpt-oss") != std::string::npos) return "gpt_oss";
  if (m.find("gemma2") != std::string::npos || m.find("gemma-2") != std::string::npos) return "gemma2";
  if (m.find("qwen3") != std::string::npos && m.find("a22b") != std::string::npos) return "qwen3_moe";
  if (m.find("phi4") != std::string::npos || m.find("phi-4") != std::string::npos) return "phi3";
  if (m.find("qwen2") != std::string::npos) return "qwen2";
  return "llama";
}

json config_of(const json& c) {
  const json& a = c["arch"];
  json cfg = {{"model_type", model_type(c["model"].get<std::string>())}};
  for (const char* k : {"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                        "vocab_size", "intermediate_size", "max_position_embeddings"})
    if (a.contains(k) && a[k].is_number()) cfg[k] = a[k];
  cfg["tie_word_embeddings"] = a.value("tie_word_embeddings", false) == true;
  cfg["torch_dtype"] = "bfloat16";
  if (a.contains("moe") && a["moe"].is_object()) {
    const json& m = a["moe"];
    if (m.contains("num_experts")) cfg["num_experts"] = m["num_experts"];
    if (m.contains("num_local_experts")) cfg["num_local_experts"] = m["num_local_experts"];
    cfg["num_experts_per_tok"] = m.contains("num_experts_per_tok") ? m["num_experts_per_tok"] : json(2u);
    if (m.contains("moe_intermediate_size")) cfg["moe_intermediate_size"] = m["moe_intermediate_size"];
  }
  if (cfg["model_type"] == "gpt_oss") {
    cfg["sliding_window"] = 128;
    json types = json::array();
    for (int i = 0; i < cfg["num_hidden_layers"].get<int>(); ++i)
      types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
    cfg["layer_types"] = types;
  }
  if (cfg["model_type"] == "gemma2") {
    cfg["sliding_window"] = 4096;
    cfg["query_pre_attn_scalar"] = 256;
  }
  return cfg;
}

// Quantization as the case states it: a GGUF type, or an HF quant method.
std::string quant_of(const json& c) {
  std::string q = text::lower(c["quant"].get<std::string>());
  for (const char* t : {"q4_k_m", "q8_0", "q4_0", "q5_k_m", "q6_k"})
    if (q.find(t) != std::string::npos) return t;
  if (q.find("q4_k - medium") != std::string::npos) return "q4_k_m";
  if (q.find("mxfp4") != std::string::npos) return "mxfp4";
  if (q.find("bitsandbytes") != std::string::npos) return "bnb-4bit";
  if (q.find("fp8") != std::string::npos) return "fp8";
  return "";
}

struct Outcome {
  std::string id, runtime, component;
  double measured, predicted;
  double err() const { return (predicted - measured) / measured; }
};

std::vector<json> cases() {
  std::ifstream in(std::string(AIMEM_SOURCE_DIR) + "/tests/fixtures/corpus/fit_cases.jsonl");
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

TEST(FitCorpus, PredictionsAgainstWhatEnginesPrinted) {
  std::vector<json> all = cases();
  ASSERT_GE(all.size(), 13u);
  std::vector<Outcome> rows;
  std::vector<std::string> skipped, outcomes;
  int start_checks = 0;
  for (const json& c : all) {
    const std::string id = c["id"], rt = c["runtime"];
    const json& s = c["settings"];
    const json& meas = c["measured"];
    const json& other = meas.contains("other") ? meas["other"] : json::object();
    auto spec = spec_from_config(config_of(c), c["model"].get<std::string>(), "",
                                 rt == "vllm" || rt == "sglang" || rt == "tgi" ? quant_of(c) : "");
    ASSERT_TRUE(spec) << id << ": " << spec.error().message;
    std::string q = quant_of(c);
    if ((rt == "llama.cpp" || rt == "ollama") && !q.empty()) {
      ASSERT_TRUE(apply_gguf_ftype(*spec, q)) << id;
    }
    if (rt == "sglang") {
      // SGLang is not modelled as a runtime; its KV cell matches vLLM's per-rank layout.
      uint32_t tp = uint32_t(num(s["tensor_parallel_size"]).value_or(1));
      double kv = double(kv_bytes_per_token(*spec, "auto", tp)) * meas["kv_cache_tokens"].get<double>();
      rows.push_back({id, rt, "KV cache (per rank)", meas["kv_cache_gib"].get<double>() * kGiBd, kv});
      continue;
    }
    FitSettings fs;
    Hardware hw;
    hw.gpu_count = 1;
    hw.gpu_total = uint64_t(c["gpu_mem_gib"].is_number() ? c["gpu_mem_gib"].get<double>() * kGiBd : 80 * kGiBd);
    if (!c["gpu_mem_gib"].is_number()) {
      std::string g = c["gpu"];
      for (const char* name : {"RTX 3090", "RTX 4090", "A100 80GB", "A100-PCIE-40GB", "H100"})
        if (g.find(name) != std::string::npos)
          if (const GpuInfo* info = find_gpu(name)) hw.gpu_total = info->memory_bytes;
    }
    if (rt == "vllm" || rt == "tgi") {
      fs.runtime = rt == "vllm" ? Runtime::kVllm : Runtime::kTgi;
      fs.tp = uint32_t(num(s.value("tensor_parallel_size", json(s.value("num_shard", json(1))))).value_or(1));
      fs.gpu_mem_util = num(s.value("gpu_memory_utilization", json(0.9))).value_or(0.9);
      fs.ctx = uint32_t(num(s.value("max_model_len", json(nullptr))).value_or(spec->n_ctx_train));
      if (s.contains("max_num_batched_tokens")) fs.batch = uint32_t(*num(s["max_num_batched_tokens"]));
      // V0 engine without chunked prefill profiles max(max_model_len, 2048) tokens.
      if (c["runtime_version"].get<std::string>().find("V0") != std::string::npos)
        fs.batch = std::max<uint32_t>(fs.ctx, 2048);
    } else {
      fs.runtime = rt == "ollama" ? Runtime::kOllama : Runtime::kLlamaCpp;
      uint32_t seqs = uint32_t(num(s.value("parallel", json(s.value("n_seq_max", json(1))))).value_or(1));
      double n_ctx = num(s.value("n_ctx", json(s.value("num_ctx_total", json(4096))))).value_or(4096);
      fs.concurrency = seqs;
      fs.ctx = uint32_t(n_ctx / seqs);
      fs.unified_kv = seqs == 1;  // runners of that era: one stream per slot
      fs.ubatch = uint32_t(num(s.value("n_ubatch", json(512))).value_or(512));
      fs.flash_attn = s.value("flash_attn", json(false)) == true;
      if (s.contains("type_k")) fs.kv_type = s["type_k"];
      fs.gpus = c["gpu"].get<std::string>().rfind("2x", 0) == 0 ? 2 : 1;
      hw.gpu_count = fs.gpus;
    }
    Plan p = plan_once(*spec, fs, hw, {});
    auto sum = [&](std::string_view comp, bool gpu_only = false) {
      double b = 0;
      for (const Term& t : p.terms)
        if (t.component == comp && (!gpu_only || t.device != "host")) b += double(t.bytes);
      return b;
    };
    auto add = [&](const std::string& comp, const json& v, double scale, double predicted) {
      if (v.is_number() && v.get<double>() > 0) rows.push_back({id, rt, comp, v.get<double>() * scale, predicted});
    };
    if (rt == "vllm") {
      add("weights (per rank)", meas["weights_gib"], kGiBd, sum("weights") + sum("quant_metadata"));
      add("activation peak", meas["activation_peak_gib"], kGiBd, sum("compute"));
      if (meas["kv_cache_gib"].is_number() && meas["kv_cache_gib"].get<double>() > 0)
        add("KV cache", meas["kv_cache_gib"], kGiBd, sum("kv_cache"));
      if (meas["kv_cache_tokens"].is_number() && meas["kv_cache_tokens"].get<double>() > 0)
        add("KV tokens", meas["kv_cache_tokens"], 1, double(p.kv_cache_tokens.value_or(0)));
      // What vLLM would log from aimem's own budget ('GPU KV cache size', 'Maximum concurrency').
      std::string said = other.value("outcome", "");
      outcomes.push_back(fmt::format("{} vllm, aimem's budget: {} tokens, {:.2f}x at {} tokens ({} blocks/request){}",
                                     id, p.kv_cache_tokens.value_or(0), p.kv_max_concurrency.value_or(0), p.ctx,
                                     p.kv_blocks_per_request, said.empty() ? "" : "; engine: " + said));
      // The allocator alone, from the KV memory vLLM printed (2 decimals of GiB: +/-0.005): the
      // tokens it logged must lie between the counts at the two ends, and below 1x one
      // max_model_len request does not fit, which stops the engine at start-up.
      if (meas["kv_cache_gib"].is_number() && meas["kv_cache_gib"].get<double>() > 0) {
        auto layout = [&](double gib) {
          VllmKvInputs in;
          in.budget = uint64_t(gib * kGiBd);
          in.max_model_len = p.ctx;
          in.max_num_batched_tokens = p.batch;
          return vllm_kv_layout(*spec, "auto", fs.tp, in);
        };
        double gib = meas["kv_cache_gib"].get<double>();
        VllmKvLayout mid = layout(gib), lo = layout(gib - 0.005), hi = layout(gib + 0.005);
        outcomes.push_back(fmt::format("{} vllm, engine's budget {:.2f} GiB: {} tokens ({}..{}), {:.2f}x, {} group(s)",
                                       id, gib, mid.tokens, lo.tokens, hi.tokens, mid.max_concurrency,
                                       mid.groups.size()));
        if (meas["kv_cache_tokens"].is_number()) {
          ++start_checks;
          double t = meas["kv_cache_tokens"].get<double>();
          EXPECT_TRUE(t >= double(lo.tokens) && t <= double(hi.tokens)) << id << ": vLLM logged " << t << " tokens";
        }
        if (other.contains("max_concurrency")) {
          EXPECT_NEAR(mid.max_concurrency, other["max_concurrency"].get<double>(), 0.01) << id;
        }
        if (said.find("KV cache too small") != std::string::npos) {
          ++start_checks;
          EXPECT_LT(hi.max_concurrency, 1.0) << id << ": vLLM did not start, the allocator says one request fits";
        }
      }
    } else if (rt == "tgi") {
      skipped.push_back(id + " (TGI: only max_batch_total_tokens printed; aimem sizes KV for the requested load)");
    } else {
      double weights = sum("weights");
      if (other.contains("cuda0_model_buffer_mib"))
        add("model buffers", json(other["cuda0_model_buffer_mib"].get<double>() +
                                  other.value("cpu_model_buffer_mib", other.value("cpu_mapped_model_buffer_mib", 0.0))),
            1024.0 * 1024, weights);
      add("KV cache", meas["kv_cache_gib"], kGiBd, sum("kv_cache"));
      if (other.contains("compute_cuda0_mib") && !other.contains("compute_cuda1_mib"))
        add("compute (GPU)", other["compute_cuda0_mib"], 1024.0 * 1024, sum("compute", true));
      else if (meas["compute_buffer_mib"].is_number() && !other.contains("compute_cuda1_mib"))
        add("compute (GPU)", meas["compute_buffer_mib"], 1024.0 * 1024, sum("compute", true));
    }
  }
  std::string table = fmt::format("\n{:<5} {:<10} {:<20} {:>14} {:>14} {:>8}\n", "case", "runtime", "component",
                                  "engine", "aimem", "error");
  int weights_checked = 0;
  for (const Outcome& o : rows) {
    bool count = o.component == "KV tokens";
    table += fmt::format("{:<5} {:<10} {:<20} {:>14} {:>14} {:>+7.1f}%\n", o.id, o.runtime, o.component,
                         count ? fmt::format("{:.0f}", o.measured) : fmt::format("{:.3f} GiB", o.measured / kGiBd),
                         count ? fmt::format("{:.0f}", o.predicted) : fmt::format("{:.3f} GiB", o.predicted / kGiBd),
                         o.err() * 100);
  }
  for (const std::string& s : skipped) table += "not compared: " + s + "\n";
  for (const std::string& s : outcomes) table += s + "\n";
  std::cout << table;
  for (const Outcome& o : rows) {
    if (o.component.rfind("weights", 0) == 0 || o.component == "model buffers") {
      ++weights_checked;
      EXPECT_LE(std::fabs(o.err()), 0.05) << o.id << " " << o.component << " off by " << o.err() * 100 << "%";
    }
  }
  EXPECT_GE(weights_checked, 5);
  EXPECT_GE(start_checks, 2);
}

}  // namespace
}  // namespace aimem::fit
