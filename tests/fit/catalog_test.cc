// The built-in catalogs: every model entry parses through spec_from_config
// and lands within 3% of its published parameter count; GPUs resolve from
// the names users type and nvidia-smi prints.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "fit/catalog.h"
#include "fit/inputs.h"
#include "sources/files.h"

namespace aimem::fit {
namespace {

constexpr uint64_t MiB = 1ull << 20;

// Published sizes (model cards / Hugging Face "Model size"), in billions.
// Multimodal Gemma 3 sizes include the ~0.4B SigLIP tower; DeepSeek's 671B
// excludes the 14B multi-token-prediction module.
const std::map<std::string, double>& published() {
  static const std::map<std::string, double> p = {
      {"meta-llama/Llama-3.1-8B-Instruct", 8.03},
      {"meta-llama/Llama-3.1-70B-Instruct", 70.6},
      {"meta-llama/Llama-3.1-405B-Instruct", 406},
      {"meta-llama/Llama-3.2-1B-Instruct", 1.24},
      {"meta-llama/Llama-3.2-3B-Instruct", 3.21},
      {"meta-llama/Llama-3.3-70B-Instruct", 70.6},
      {"meta-llama/Meta-Llama-3-8B-Instruct", 8.03},
      {"mistralai/Mistral-7B-Instruct-v0.3", 7.25},
      {"mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7},
      {"mistralai/Mixtral-8x22B-Instruct-v0.1", 141},
      {"mistralai/Mistral-Small-24B-Instruct-2501", 23.6},
      {"Qwen/Qwen2.5-0.5B-Instruct", 0.494},
      {"Qwen/Qwen2.5-1.5B-Instruct", 1.54},
      {"Qwen/Qwen2.5-7B-Instruct", 7.62},
      {"Qwen/Qwen2.5-14B-Instruct", 14.7},
      {"Qwen/Qwen2.5-32B-Instruct", 32.5},
      {"Qwen/Qwen2.5-72B-Instruct", 72.7},
      {"Qwen/Qwen2.5-Coder-32B-Instruct", 32.5},
      {"Qwen/Qwen3-8B", 8.2},
      {"Qwen/Qwen3-32B", 32.8},
      {"Qwen/Qwen3-30B-A3B", 30.5},
      {"Qwen/Qwen3-235B-A22B", 235},
      {"google/gemma-2-9b-it", 9.24},
      {"google/gemma-2-27b-it", 27.2},
      {"google/gemma-3-4b-it", 4.3},
      {"google/gemma-3-12b-it", 12.2},
      {"google/gemma-3-27b-it", 27.4},
      {"microsoft/Phi-3.5-mini-instruct", 3.82},
      {"microsoft/phi-4", 14.7},
      {"deepseek-ai/DeepSeek-V3", 671},
      {"deepseek-ai/DeepSeek-R1", 671},
      {"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", 7.62},
      {"deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", 32.8},
      {"openai/gpt-oss-20b", 20.9},
      {"openai/gpt-oss-120b", 116.8},
  };
  return p;
}

TEST(CatalogModels, EveryEntryParsesWithinThreePercentOfItsPublishedSize) {
  ASSERT_GE(model_catalog().size(), 25u);
  for (const auto& m : model_catalog()) {
    SCOPED_TRACE(m.id);
    auto it = published().find(m.id);
    ASSERT_NE(it, published().end()) << "add the published size of " << m.id;
    auto s = catalog_spec(m.id);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_NEAR(s->n_params / 1e9, it->second, 0.03 * it->second);
    EXPECT_EQ(s->source, "catalog");
    EXPECT_EQ(s->name, m.id);
    EXPECT_EQ(s->citation, m.citation);
    EXPECT_NE(m.citation.find("https://huggingface.co/" + m.id), std::string::npos);
    EXPECT_FALSE(m.aliases.empty());
    EXPECT_GT(s->n_layer, 0u);
    EXPECT_GT(s->weight_bytes, 0u);
    EXPECT_EQ(s->n_head_kv.size(), s->n_layer);
    EXPECT_EQ(s->swa_layer.size(), s->n_layer);
    for (const auto& a : m.aliases) EXPECT_EQ(find_model(a), &m) << a;
  }
}

TEST(CatalogModels, ActiveParametersOfMoEModels) {
  auto q = catalog_spec("qwen3:30b-a3b");
  ASSERT_TRUE(q.ok());
  EXPECT_NEAR(q->n_params_active / 1e9, 3.3, 0.15);
  auto d = catalog_spec("deepseek-v3");
  ASSERT_TRUE(d.ok());
  EXPECT_NEAR(d->n_params_active / 1e9, 37.0, 1.0);
  // OpenAI's 5.1B active excludes the 0.58B embedding table; ours counts it.
  auto g = catalog_spec("gpt-oss:120b");
  ASSERT_TRUE(g.ok());
  EXPECT_NEAR((g->n_params_active - 201088ull * 2880) / 1e9, 5.13, 0.1);
  EXPECT_TRUE(g->weights_format.find("MXFP4") != std::string::npos);
  EXPECT_NEAR(g->weight_bytes / 1e9, 65.3, 1.5);  // the published checkpoint size
}

TEST(CatalogModels, FindModelByIdAliasAndOllamaTag) {
  const CatalogModel* l = find_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(find_model("META-LLAMA/llama-3.1-8b-instruct"), l);
  EXPECT_EQ(find_model("Llama-3.1-8B-Instruct"), l);
  EXPECT_EQ(find_model("llama3.1:8b"), l);
  EXPECT_EQ(find_model("llama3.1:8b-instruct-q4_K_M"), l);
  EXPECT_EQ(find_model("llama3.1"), l);
  EXPECT_EQ(find_model("hf.co/meta-llama/Llama-3.1-8B-Instruct"), l);
  EXPECT_EQ(find_model("qwen2.5:7b")->id, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(find_model("qwen2.5-coder:32b")->id, "Qwen/Qwen2.5-Coder-32B-Instruct");
  EXPECT_EQ(find_model("gemma3:27b")->id, "google/gemma-3-27b-it");
  EXPECT_EQ(find_model("deepseek-r1:7b")->id, "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
  EXPECT_EQ(find_model("gpt-oss:20b")->id, "openai/gpt-oss-20b");
  EXPECT_EQ(find_model("mixtral:8x7b")->id, "mistralai/Mixtral-8x7B-Instruct-v0.1");
  EXPECT_EQ(find_model("no-such-model"), nullptr);
  EXPECT_EQ(find_model(""), nullptr);
  EXPECT_EQ(find_model("llama3.1:"), nullptr);
  auto r = catalog_spec("no-such-model");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no-such-model"), std::string::npos);
}

TEST(CatalogModels, OverridesPassThrough) {
  auto bf = catalog_spec("llama3.1:8b");
  auto awq = catalog_spec("llama3.1:8b", "", "awq");
  ASSERT_TRUE(bf.ok() && awq.ok());
  EXPECT_LT(awq->weight_bytes, bf->weight_bytes / 2);
  EXPECT_FALSE(catalog_spec("llama3.1:8b", "", "bogus").ok());
}

TEST(CatalogGpus, FindGpuByTheNamesPeopleType) {
  const GpuInfo* h100 = find_gpu("H100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->memory_bytes, 81559 * MiB);
  EXPECT_EQ(find_gpu("h100-80gb"), h100);
  EXPECT_EQ(find_gpu("NVIDIA H100 80GB HBM3"), h100);  // as nvidia-smi names it
  const GpuInfo* l4 = find_gpu("NVIDIA L4");
  ASSERT_NE(l4, nullptr);
  EXPECT_EQ(l4->memory_bytes, 23034 * MiB);
  const GpuInfo* rtx = find_gpu("rtx4090");
  ASSERT_NE(rtx, nullptr);
  EXPECT_EQ(rtx->memory_bytes, 24564 * MiB);
  EXPECT_EQ(find_gpu("NVIDIA GeForce RTX 4090"), rtx);
  EXPECT_EQ(find_gpu("RTX_4090"), rtx);
  EXPECT_EQ(find_gpu("Tesla T4")->memory_bytes, 15360 * MiB);
  EXPECT_EQ(find_gpu("A100-SXM4-80GB")->memory_bytes, 81920 * MiB);
  EXPECT_EQ(find_gpu("a100")->memory_bytes, 40960 * MiB);
  EXPECT_EQ(find_gpu("H200")->memory_bytes, 143771 * MiB);
  EXPECT_EQ(find_gpu("L40S")->memory_bytes, 46068 * MiB);
  EXPECT_EQ(find_gpu("mi300x")->vendor, "amd");
  EXPECT_EQ(find_gpu("mi300x")->memory_bytes, 196592 * MiB);
  EXPECT_EQ(find_gpu("B200")->memory_bytes, 183359 * MiB);
  EXPECT_EQ(find_gpu("nvidia"), nullptr);
  EXPECT_EQ(find_gpu("Voodoo 2"), nullptr);
  EXPECT_EQ(find_gpu(""), nullptr);
}

TEST(CatalogGpus, EveryEntryIsSourcedAndReachable) {
  for (const auto& g : gpu_catalog()) {
    SCOPED_TRACE(g.name);
    EXPECT_FALSE(g.citation.empty());
    EXPECT_GT(g.memory_bytes, 8ull << 30);
    EXPECT_EQ(find_gpu(g.name), &g);
    for (const auto& a : g.aliases) EXPECT_EQ(find_gpu(a), &g) << a;
  }
}

}  // namespace
}  // namespace aimem::fit

namespace aimem::fit {
namespace {

// A k-quant mix for a catalog model, tensor by tensor with llama-quant.cpp's
// fallback types (tensor_type_fallback) for rows not a multiple of 256.
// Published GGUF file sizes (Hugging Face file listings; headers and the
// tokenizer add well under 1%): bartowski/Qwen2.5-72B-Instruct-GGUF
// Q4_K_M 47.42 GB (FFN width 29568 = 115.5 x 256: every ffn_down falls back,
// Q4_K -> Q5_0 and Q6_K -> Q8_0), bartowski/Qwen2.5-0.5B-Instruct-GGUF
// Q4_K_M 0.398 GB (n_embd 896 and 14 x 64 heads: q, k, v, attn_output, gate
// and up fall back in each of 24 layers; the tied output is Q8_0 outright), bartowski/Meta-Llama-3.1-8B-Instruct-GGUF Q4_K_M
// 4.92 GB (no fallback).
TEST(CatalogModels, KQuantMixFollowsLlamaCppFallbackTypes) {
  struct Case {
    const char* id;
    double file_gb;
    uint32_t fallbacks;  // tensors llama-quantize reports as "required fallback"
  };
  const Case cases[] = {{"Qwen/Qwen2.5-72B-Instruct", 47.42, 80},
                        {"Qwen/Qwen2.5-0.5B-Instruct", 0.398, 24 * 6},
                        {"meta-llama/Llama-3.1-8B-Instruct", 4.92, 0}};
  for (const Case& c : cases) {
    auto spec = load_model(local_files(), c.id, "", "q4_k_m");
    ASSERT_TRUE(spec) << c.id << ": " << spec.error().message;
    const double gb = double(spec->weight_bytes) / 1e9;
    EXPECT_NEAR(gb, c.file_gb, 0.02 * c.file_gb) << c.id;
    bool noted = false;
    for (const std::string& n : spec->notes)
      if (n.find("q4_k_m mix tensor by tensor") != std::string::npos) {
        noted = true;
        if (c.fallbacks)
          EXPECT_NE(n.find(std::to_string(c.fallbacks) + " tensors fall back"), std::string::npos) << c.id << ": " << n;
        else
          EXPECT_EQ(n.find("fall back"), std::string::npos) << c.id << ": " << n;
      }
    EXPECT_TRUE(noted) << c.id;
  }
  // Without the fallback (every repeating tensor at the mix's average) the
  // 72B estimate was 6.6% under its file; the per-tensor figure is larger.
  auto q = load_model(local_files(), "Qwen/Qwen2.5-72B-Instruct", "", "q4_k_m");
  auto q6 = load_model(local_files(), "Qwen/Qwen2.5-72B-Instruct", "", "q6_k");
  ASSERT_TRUE(q && q6);
  EXPECT_GT(q6->weight_bytes, q->weight_bytes);
}

}  // namespace
}  // namespace aimem::fit

namespace aimem::fit {
namespace {

// --quant f16 / bf16 name a dtype: the error says so, points at --dtype and
// lists what --quant accepts (checkpoint quantizations and GGUF mixes).
TEST(CatalogModels, QuantFloatErrorsPointAtDtype) {
  for (const char* q : {"f16", "bf16", "FP16", "float32"}) {
    auto spec = load_model(local_files(), "Qwen/Qwen2.5-7B-Instruct", "", q);
    ASSERT_FALSE(spec) << q;
    const std::string& e = spec.error().message;
    EXPECT_NE(e.find("--dtype"), std::string::npos) << e;
    EXPECT_NE(e.find("float dtype"), std::string::npos) << e;
    for (const char* accepted : {"awq", "gptq", "fp8", "q4_k_m", "q8_0", "iq4_xs"})
      EXPECT_NE(e.find(accepted), std::string::npos) << q << " -> " << e;
  }
  EXPECT_NE(load_model(local_files(), "Qwen/Qwen2.5-7B-Instruct", "", "bf16").error().message.find("--dtype bf16"),
            std::string::npos);
  auto unknown = load_model(local_files(), "Qwen/Qwen2.5-7B-Instruct", "", "q4km");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown quantization"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("q4_k_m"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("--dtype"), std::string::npos);
  // what it accepts still loads
  EXPECT_TRUE(load_model(local_files(), "Qwen/Qwen2.5-7B-Instruct", "", "awq"));
  EXPECT_TRUE(load_model(local_files(), "Qwen/Qwen2.5-7B-Instruct", "bf16", ""));
}

}  // namespace
}  // namespace aimem::fit
