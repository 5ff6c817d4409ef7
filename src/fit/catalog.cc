// Built-in catalogs: GPU memory as the driver reports it, and the
// config.json numbers of widely deployed models, each with its source, so
// `aimem fit` works offline for the common cases.
#include "fit/catalog.h"

#include <fmt/format.h>

#include "core/text.h"
#include "fit/hf.h"

namespace aimem::fit {
namespace {

constexpr uint64_t MiB = 1ull << 20;

// Lower-case; drop "nvidia", "geforce", "tesla", spaces, '-' and '_'.
std::string gpu_key(std::string_view s) {
  std::string l = text::lower(s);
  for (std::string_view w : {"nvidia", "geforce", "tesla"}) {
    size_t p;
    while ((p = l.find(w)) != std::string::npos) l.erase(p, w.size());
  }
  std::string out;
  for (char c : l)
    if (c != ' ' && c != '-' && c != '_') out.push_back(c);
  return out;
}

}  // namespace

// memory_bytes is the total nvidia-smi (NVML) or rocm-smi prints, which is
// a little less than the marketing size: that total is what frameworks see.
const std::vector<GpuInfo>& gpu_catalog() {
  static const std::vector<GpuInfo> gpus = {
      {"H200 141GB", {"h200", "h200-141gb", "h200 sxm", "nvidia h200"}, 143771 * MiB, "nvidia",
       "nvidia-smi total 143771MiB as printed in H200 vLLM/SGLang logs (not located in the search "
       "index; NVIDIA datasheet: 141 GB HBM3e)"},
      {"H100 80GB SXM", {"h100", "h100-80gb", "h100-sxm", "h100 sxm5", "nvidia h100 80gb hbm3"},
       81559 * MiB, "nvidia",
       "nvidia-smi 'NVIDIA H100 80GB HBM3 ... 81559MiB': github.com/wilicc/gpu-burn/issues/114, "
       "github.com/modal-labs/modal-client/pull/2797"},
      {"H100 80GB PCIe", {"h100-pcie", "h100 pcie", "nvidia h100 pcie"}, 81559 * MiB, "nvidia",
       "assumed equal to the SXM part's 81559MiB (same 80 GB HBM; no PCIe nvidia-smi total found)"},
      {"H100 NVL 94GB", {"h100-nvl", "h100nvl", "h100 nvl", "nvidia h100 nvl"}, 99961274368ull,
       "nvidia", "NVML total 99961274368 bytes reported for 'NVIDIA H100 NVL': "
       "github.com/fastfetch-cli/fastfetch/issues/1658"},
      {"H20 96GB", {"h20", "nvidia h20"}, 97871 * MiB, "nvidia",
       "marketing size 96 GB HBM3; 97871MiB is the commonly printed nvidia-smi total (not located "
       "in the search index)"},
      {"GH200 96GB", {"gh200", "gh200-96gb", "nvidia gh200 480gb"}, 97871 * MiB, "nvidia",
       "marketing size 96 GB HBM3 (GPU side); nvidia-smi total assumed equal to H20's 97871MiB"},
      {"B200 192GB", {"b200", "b200-180gb", "b200-192gb", "nvidia b200"}, 183359 * MiB, "nvidia",
       "nvidia-smi 'NVIDIA B200 ... 183359MiB': github.com/NVIDIA/TensorRT-LLM/issues/10278"},
      {"A100 80GB", {"a100-80gb", "a100 80gb", "a100-sxm4-80gb", "a100-pcie-80gb", "a100 80gb pcie",
                     "a800-80gb", "a800 80gb pcie"},
       81920 * MiB, "nvidia",
       "nvidia-smi 81920MiB: github.com/modal-labs/modal-client/pull/2797; A800 80GB PCIe the "
       "same in github.com/vllm-project/vllm/issues/41519"},
      {"A100 40GB", {"a100", "a100-40gb", "a100 40gb", "a100-sxm4-40gb", "a100-pcie-40gb"},
       40960 * MiB, "nvidia", "nvidia-smi 40960MiB: github.com/modal-labs/modal-client/pull/2797"},
      {"L40S", {"l40s", "nvidia l40s"}, 46068 * MiB, "nvidia",
       "nvidia-smi 46068MiB: github.com/modal-labs/modal-client/pull/2797"},
      {"L40", {"l40", "nvidia l40"}, 46068 * MiB, "nvidia",
       "assumed equal to L40S/L20 (48 GB GDDR6, 46068MiB in github.com/vllm-project/vllm/issues/14011 "
       "for L20); no L40 nvidia-smi total found"},
      {"L20", {"l20", "nvidia l20"}, 46068 * MiB, "nvidia",
       "nvidia-smi 'NVIDIA L20 ... 46068MiB': github.com/vllm-project/vllm/issues/14011"},
      {"L4", {"l4", "nvidia l4"}, 23034 * MiB, "nvidia",
       "nvidia-smi 23034MiB: github.com/modal-labs/modal-client/pull/2797"},
      {"A10G", {"a10g", "nvidia a10g"}, 23028 * MiB, "nvidia",
       "nvidia-smi 'NVIDIA A10G ... 23028MiB': github.com/NVIDIA/DCGM/issues/232"},
      {"A10", {"a10", "nvidia a10"}, 23028 * MiB, "nvidia",
       "nvidia-smi 23028MiB: github.com/modal-labs/modal-client/pull/2797; NVML total 24146608128 B "
       "in github.com/mayooot/detect-gpu/issues/3"},
      {"T4", {"t4", "tesla t4"}, 15360 * MiB, "nvidia",
       "nvidia-smi 15360MiB: github.com/modal-labs/modal-client/pull/2797"},
      {"V100 16GB", {"v100", "v100-16gb", "v100-sxm2-16gb", "v100-pcie-16gb"}, 16384 * MiB, "nvidia",
       "nvidia-smi 'Tesla V100-SXM2-16GB ... 16384MiB': github.com/1CatAI/1Cat-vLLM/issues/85 "
       "(older drivers print 16160MiB)"},
      {"V100 32GB", {"v100-32gb", "v100-sxm2-32gb", "v100-pcie-32gb", "v100s"}, 32768 * MiB, "nvidia",
       "marketing size 32 GB HBM2; 32768MiB assumed by analogy with the 16 GB part (not located)"},
      {"RTX 3090", {"rtx3090", "rtx 3090", "3090", "geforce rtx 3090"}, 24576 * MiB, "nvidia",
       "nvidia-smi 'GeForce RTX 3090 ... 24576MiB': github.com/noonghunna/club-3090/issues/1127"},
      {"RTX 4090", {"rtx4090", "rtx 4090", "4090", "geforce rtx 4090"}, 24564 * MiB, "nvidia",
       "nvidia-smi 'GeForce RTX 4090 ... 24564MiB': github.com/RLinf/RLinf/issues/255"},
      {"RTX 5090", {"rtx5090", "rtx 5090", "5090", "geforce rtx 5090"}, 32607 * MiB, "nvidia",
       "nvidia-smi 'GeForce RTX 5090 ... 32607MiB': github.com/noonghunna/club-3090/issues/1261"},
      {"RTX A6000", {"a6000", "rtx-a6000", "rtx a6000"}, 49140 * MiB, "nvidia",
       "marketing size 48 GB GDDR6; 49140MiB is the commonly printed nvidia-smi total (not located "
       "in the search index)"},
      {"RTX 6000 Ada", {"rtx6000ada", "rtx 6000 ada", "6000 ada", "rtx 6000 ada generation"},
       49140 * MiB, "nvidia",
       "marketing size 48 GB GDDR6; 49140MiB assumed as for the RTX A6000 (not located)"},
      {"MI300X", {"mi300x", "instinct mi300x", "amd instinct mi300x"}, 206141652992ull, "amd",
       "rocm-smi 'VRAM Total Memory (B): 206141652992' (196592 MiB): "
       "github.com/ROCm/legacy-rocm-build/issues/4750"},
      {"MI250X (one GCD)", {"mi250x", "mi250", "instinct mi250x"}, 64 * 1024 * MiB, "amd",
       "AMD datasheet 128 GB HBM2e per package = 2 GCDs of 64 GB, each its own device; driver "
       "total not located"},
  };
  return gpus;
}

const GpuInfo* find_gpu(std::string_view name) {
  const std::string key = gpu_key(name);
  if (key.empty()) return nullptr;
  for (const auto& g : gpu_catalog()) {
    if (gpu_key(g.name) == key) return &g;
    for (const auto& a : g.aliases)
      if (gpu_key(a) == key) return &g;
  }
  return nullptr;
}

// config.json excerpts: only the fields spec_from_config reads. Kept whole:
// a data table, one entry per model, not steps. Every entry
// is parsed by a test, and its parameter count checked against the
// published size.
const std::vector<CatalogModel>& model_catalog() {
  static const std::vector<CatalogModel> models = {
    {"meta-llama/Llama-3.1-8B-Instruct",
     {"llama3.1:8b", "llama3.1", "llama-3.1-8b", "llama-3.1-8b-instruct", "meta-llama-3.1-8b-instruct"},
     R"J({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'llama3_1_8b')"},
    {"meta-llama/Llama-3.1-70B-Instruct",
     {"llama3.1:70b", "llama-3.1-70b", "llama-3.1-70b-instruct", "meta-llama-3.1-70b-instruct"},
     R"J({"model_type":"llama","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'llama3_1_70b')"},
    {"meta-llama/Llama-3.1-405B-Instruct",
     {"llama3.1:405b", "llama-3.1-405b", "llama-3.1-405b-instruct", "meta-llama-3.1-405b-instruct"},
     R"J({"model_type":"llama","hidden_size":16384,"num_hidden_layers":126,"num_attention_heads":128,"num_key_value_heads":8,"intermediate_size":53248,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct/blob/main/config.json"},
    {"meta-llama/Llama-3.2-1B-Instruct",
     {"llama3.2:1b", "llama-3.2-1b", "llama-3.2-1b-instruct"},
     R"J({"model_type":"llama","hidden_size":2048,"num_hidden_layers":16,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":8192,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":true,"torch_dtype":"bfloat16","head_dim":64})J",
     "bf16",
     "https://huggingface.co/meta-llama/Llama-3.2-1B-Instruct/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'llama3_2_1b')"},
    {"meta-llama/Llama-3.2-3B-Instruct",
     {"llama3.2:3b", "llama3.2", "llama-3.2-3b", "llama-3.2-3b-instruct"},
     R"J({"model_type":"llama","hidden_size":3072,"num_hidden_layers":28,"num_attention_heads":24,"num_key_value_heads":8,"intermediate_size":8192,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":true,"torch_dtype":"bfloat16","head_dim":128})J",
     "bf16",
     "https://huggingface.co/meta-llama/Llama-3.2-3B-Instruct/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'llama3_2_3b')"},
    {"meta-llama/Llama-3.3-70B-Instruct",
     {"llama3.3:70b", "llama3.3", "llama-3.3-70b", "llama-3.3-70b-instruct"},
     R"J({"model_type":"llama","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json"},
    {"meta-llama/Meta-Llama-3-8B-Instruct",
     {"llama3:8b", "llama3", "llama-3-8b", "meta-llama-3-8b", "meta-llama-3-8b-instruct", "meta-llama/meta-llama-3-8b"},
     R"J({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":8192,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'llama3_8b')"},
    {"mistralai/Mistral-7B-Instruct-v0.3",
     {"mistral:7b", "mistral", "mistral-7b", "mistral-7b-instruct-v0.3", "mistral-7b-v0.3"},
     R"J({"model_type":"mistral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32768,"max_position_embeddings":32768,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.3/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'mistral_7b_v03')"},
    {"mistralai/Mixtral-8x7B-Instruct-v0.1",
     {"mixtral:8x7b", "mixtral", "mixtral-8x7b", "mixtral-8x7b-instruct"},
     R"J({"model_type":"mixtral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"num_local_experts":8,"num_experts_per_tok":2,"vocab_size":32000,"max_position_embeddings":32768,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/mistralai/Mixtral-8x7B-Instruct-v0.1/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'Mixtral-8x7B-v0.1')"},
    {"mistralai/Mixtral-8x22B-Instruct-v0.1",
     {"mixtral:8x22b", "mixtral-8x22b", "mixtral-8x22b-instruct"},
     R"J({"model_type":"mixtral","hidden_size":6144,"num_hidden_layers":56,"num_attention_heads":48,"num_key_value_heads":8,"intermediate_size":16384,"num_local_experts":8,"num_experts_per_tok":2,"vocab_size":32768,"max_position_embeddings":65536,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/mistralai/Mixtral-8x22B-Instruct-v0.1/blob/main/config.json (same numbers in Lightning-AI/litgpt config.py 'Mixtral-8x22B')"},
    {"mistralai/Mistral-Small-24B-Instruct-2501",
     {"mistral-small:24b", "mistral-small", "mistral-small-24b", "mistral-small-3"},
     R"J({"model_type":"mistral","hidden_size":5120,"num_hidden_layers":40,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":32768,"vocab_size":131072,"max_position_embeddings":32768,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/mistralai/Mistral-Small-24B-Instruct-2501/blob/main/config.json"},
    {"Qwen/Qwen2.5-0.5B-Instruct",
     {"qwen2.5:0.5b", "qwen2.5-0.5b", "qwen2.5-0.5b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":896,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"intermediate_size":4864,"vocab_size":151936,"max_position_embeddings":32768,"sliding_window":32768,"use_sliding_window":false,"max_window_layers":24,"tie_word_embeddings":true,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/blob/main/config.json (same shape as mlc-ai/mlc-llm 'qwen2_0_5b')"},
    {"Qwen/Qwen2.5-1.5B-Instruct",
     {"qwen2.5:1.5b", "qwen2.5-1.5b", "qwen2.5-1.5b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":1536,"num_hidden_layers":28,"num_attention_heads":12,"num_key_value_heads":2,"intermediate_size":8960,"vocab_size":151936,"max_position_embeddings":32768,"sliding_window":32768,"use_sliding_window":false,"max_window_layers":28,"tie_word_embeddings":true,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct/blob/main/config.json (same shape as mlc-ai/mlc-llm 'qwen2_1_5b')"},
    {"Qwen/Qwen2.5-7B-Instruct",
     {"qwen2.5:7b", "qwen2.5", "qwen2.5-7b", "qwen2.5-7b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":3584,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"vocab_size":152064,"max_position_embeddings":32768,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":28,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json (same shape as mlc-ai/mlc-llm 'qwen2_7b')"},
    {"Qwen/Qwen2.5-14B-Instruct",
     {"qwen2.5:14b", "qwen2.5-14b", "qwen2.5-14b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":5120,"num_hidden_layers":48,"num_attention_heads":40,"num_key_value_heads":8,"intermediate_size":13824,"vocab_size":152064,"max_position_embeddings":32768,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":48,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-14B-Instruct/blob/main/config.json"},
    {"Qwen/Qwen2.5-32B-Instruct",
     {"qwen2.5:32b", "qwen2.5-32b", "qwen2.5-32b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":40,"num_key_value_heads":8,"intermediate_size":27648,"vocab_size":152064,"max_position_embeddings":32768,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":64,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-32B-Instruct/blob/main/config.json"},
    {"Qwen/Qwen2.5-72B-Instruct",
     {"qwen2.5:72b", "qwen2.5-72b", "qwen2.5-72b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":29568,"vocab_size":152064,"max_position_embeddings":32768,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":80,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-72B-Instruct/blob/main/config.json"},
    {"Qwen/Qwen2.5-Coder-32B-Instruct",
     {"qwen2.5-coder:32b", "qwen2.5-coder", "qwen2.5-coder-32b", "qwen2.5-coder-32b-instruct"},
     R"J({"model_type":"qwen2","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":40,"num_key_value_heads":8,"intermediate_size":27648,"vocab_size":152064,"max_position_embeddings":32768,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":64,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen2.5-Coder-32B-Instruct/blob/main/config.json (Qwen2.5-32B shape)"},
    {"Qwen/Qwen3-8B",
     {"qwen3:8b", "qwen3", "qwen3-8b"},
     R"J({"model_type":"qwen3","hidden_size":4096,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,"max_position_embeddings":40960,"sliding_window":null,"use_sliding_window":false,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'qwen3_8b')"},
    {"Qwen/Qwen3-32B",
     {"qwen3:32b", "qwen3-32b"},
     R"J({"model_type":"qwen3","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"intermediate_size":25600,"vocab_size":151936,"max_position_embeddings":40960,"sliding_window":null,"use_sliding_window":false,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json"},
    {"Qwen/Qwen3-30B-A3B",
     {"qwen3:30b-a3b", "qwen3:30b", "qwen3-30b-a3b"},
     R"J({"model_type":"qwen3_moe","hidden_size":2048,"num_hidden_layers":48,"num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,"vocab_size":151936,"max_position_embeddings":40960,"sliding_window":null,"use_sliding_window":false,"tie_word_embeddings":false,"torch_dtype":"bfloat16","moe_intermediate_size":768,"num_experts":128,"num_experts_per_tok":8,"decoder_sparse_step":1,"mlp_only_layers":[]})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json"},
    {"Qwen/Qwen3-235B-A22B",
     {"qwen3:235b-a22b", "qwen3:235b", "qwen3-235b-a22b"},
     R"J({"model_type":"qwen3_moe","hidden_size":4096,"num_hidden_layers":94,"num_attention_heads":64,"num_key_value_heads":4,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,"max_position_embeddings":40960,"sliding_window":null,"use_sliding_window":false,"tie_word_embeddings":false,"torch_dtype":"bfloat16","moe_intermediate_size":1536,"num_experts":128,"num_experts_per_tok":8,"decoder_sparse_step":1,"mlp_only_layers":[]})J",
     "bf16",
     "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json"},
    {"google/gemma-2-9b-it",
     {"gemma2:9b", "gemma2", "gemma-2-9b", "gemma-2-9b-it"},
     R"J({"model_type":"gemma2","hidden_size":3584,"num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"intermediate_size":14336,"vocab_size":256000,"max_position_embeddings":8192,"sliding_window":4096,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/google/gemma-2-9b-it/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'gemma2_9b'); tie_word_embeddings absent = Gemma2Config default true"},
    {"google/gemma-2-27b-it",
     {"gemma2:27b", "gemma-2-27b", "gemma-2-27b-it"},
     R"J({"model_type":"gemma2","hidden_size":4608,"num_hidden_layers":46,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"intermediate_size":36864,"vocab_size":256000,"max_position_embeddings":8192,"sliding_window":4096,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/google/gemma-2-27b-it/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'gemma2_27b')"},
    {"google/gemma-3-4b-it",
     {"gemma3:4b", "gemma3", "gemma-3-4b", "gemma-3-4b-it"},
     R"J({"model_type":"gemma3","torch_dtype":"bfloat16","text_config":{"model_type":"gemma3_text","hidden_size":2560,"num_hidden_layers":34,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,"intermediate_size":10240,"vocab_size":262208,"max_position_embeddings":131072,"sliding_window":1024,"sliding_window_pattern":6},"vision_config":{"model_type":"siglip_vision_model","hidden_size":1152,"intermediate_size":4304,"num_hidden_layers":27,"num_attention_heads":16,"patch_size":14,"image_size":896,"vision_use_head":false}})J",
     "bf16",
     "https://huggingface.co/google/gemma-3-4b-it/blob/main/config.json; text_config fields the file leaves out (heads, head_dim, vocab_size, sliding_window_pattern) are transformers' Gemma3TextConfig defaults"},
    {"google/gemma-3-12b-it",
     {"gemma3:12b", "gemma-3-12b", "gemma-3-12b-it"},
     R"J({"model_type":"gemma3","torch_dtype":"bfloat16","text_config":{"model_type":"gemma3_text","hidden_size":3840,"num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"intermediate_size":15360,"vocab_size":262208,"max_position_embeddings":131072,"sliding_window":1024,"sliding_window_pattern":6},"vision_config":{"model_type":"siglip_vision_model","hidden_size":1152,"intermediate_size":4304,"num_hidden_layers":27,"num_attention_heads":16,"patch_size":14,"image_size":896,"vision_use_head":false}})J",
     "bf16",
     "https://huggingface.co/google/gemma-3-12b-it/blob/main/config.json; text_config fields the file leaves out (heads, head_dim, vocab_size, sliding_window_pattern) are transformers' Gemma3TextConfig defaults"},
    {"google/gemma-3-27b-it",
     {"gemma3:27b", "gemma-3-27b", "gemma-3-27b-it"},
     R"J({"model_type":"gemma3","torch_dtype":"bfloat16","text_config":{"model_type":"gemma3_text","hidden_size":5376,"num_hidden_layers":62,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"intermediate_size":21504,"vocab_size":262208,"max_position_embeddings":131072,"sliding_window":1024,"sliding_window_pattern":6},"vision_config":{"model_type":"siglip_vision_model","hidden_size":1152,"intermediate_size":4304,"num_hidden_layers":27,"num_attention_heads":16,"patch_size":14,"image_size":896,"vision_use_head":false}})J",
     "bf16",
     "https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json; text_config fields the file leaves out (heads, head_dim, vocab_size, sliding_window_pattern) are transformers' Gemma3TextConfig defaults"},
    {"microsoft/Phi-3.5-mini-instruct",
     {"phi3.5:3.8b", "phi3.5", "phi-3.5-mini", "phi-3.5-mini-instruct"},
     R"J({"model_type":"phi3","hidden_size":3072,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,"intermediate_size":8192,"vocab_size":32064,"max_position_embeddings":131072,"sliding_window":262144,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/microsoft/Phi-3.5-mini-instruct/blob/main/config.json (same numbers in mlc-ai/mlc-llm model_preset.py 'phi-3_5')"},
    {"microsoft/phi-4",
     {"phi4:14b", "phi4", "phi-4"},
     R"J({"model_type":"phi3","hidden_size":5120,"num_hidden_layers":40,"num_attention_heads":40,"num_key_value_heads":10,"intermediate_size":17920,"vocab_size":100352,"max_position_embeddings":16384,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/microsoft/phi-4/blob/main/config.json"},
    {"deepseek-ai/DeepSeek-V3",
     {"deepseek-v3:671b", "deepseek-v3", "deepseek-v3-0324"},
     R"J({"model_type":"deepseek_v3","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,"first_k_dense_replace":3,"moe_layer_freq":1,"q_lora_rank":1536,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":129280,"max_position_embeddings":163840,"num_nextn_predict_layers":1,"tie_word_embeddings":false,"torch_dtype":"bfloat16","quantization_config":{"quant_method":"fp8","fmt":"e4m3","activation_scheme":"dynamic","weight_block_size":[128,128]}})J",
     "fp8",
     "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json"},
    {"deepseek-ai/DeepSeek-R1",
     {"deepseek-r1:671b", "deepseek-r1-671b", "deepseek-r1-0528"},
     R"J({"model_type":"deepseek_v3","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,"first_k_dense_replace":3,"moe_layer_freq":1,"q_lora_rank":1536,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":129280,"max_position_embeddings":163840,"num_nextn_predict_layers":1,"tie_word_embeddings":false,"torch_dtype":"bfloat16","quantization_config":{"quant_method":"fp8","fmt":"e4m3","activation_scheme":"dynamic","weight_block_size":[128,128]}})J",
     "fp8",
     "https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json (DeepSeek-V3 architecture)"},
    {"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
     {"deepseek-r1:7b", "deepseek-r1-distill-qwen-7b"},
     R"J({"model_type":"qwen2","hidden_size":3584,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"vocab_size":152064,"max_position_embeddings":131072,"sliding_window":4096,"use_sliding_window":false,"max_window_layers":28,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/blob/main/config.json (Qwen2.5-Math-7B shape)"},
    {"deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
     {"deepseek-r1:32b", "deepseek-r1-distill-qwen-32b"},
     R"J({"model_type":"qwen2","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":40,"num_key_value_heads":8,"intermediate_size":27648,"vocab_size":152064,"max_position_embeddings":131072,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":64,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})J",
     "bf16",
     "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B/blob/main/config.json (Qwen2.5-32B shape)"},
    {"openai/gpt-oss-20b",
     {"gpt-oss:20b", "gpt-oss-20b", "gpt-oss"},
     R"J({"model_type":"gpt_oss","hidden_size":2880,"num_hidden_layers":24,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"intermediate_size":2880,"num_local_experts":32,"num_experts_per_tok":4,"experts_per_token":4,"vocab_size":201088,"max_position_embeddings":131072,"sliding_window":128,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention"],"attention_bias":true,"tie_word_embeddings":false,"torch_dtype":"bfloat16","quantization_config":{"quant_method":"mxfp4","modules_to_not_convert":["model.layers.*.self_attn","model.layers.*.mlp.router","model.embed_tokens","lm_head"]}})J",
     "mxfp4",
     "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json"},
    {"openai/gpt-oss-120b",
     {"gpt-oss:120b", "gpt-oss-120b"},
     R"J({"model_type":"gpt_oss","hidden_size":2880,"num_hidden_layers":36,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"intermediate_size":2880,"num_local_experts":128,"num_experts_per_tok":4,"experts_per_token":4,"vocab_size":201088,"max_position_embeddings":131072,"sliding_window":128,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention"],"attention_bias":true,"tie_word_embeddings":false,"torch_dtype":"bfloat16","quantization_config":{"quant_method":"mxfp4","modules_to_not_convert":["model.layers.*.self_attn","model.layers.*.mlp.router","model.embed_tokens","lm_head"]}})J",
     "mxfp4",
     "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json"},
  };
  return models;
}

const CatalogModel* find_model(std::string_view name) {
  std::string key = text::lower(text::trim(name));
  if (key.empty()) return nullptr;
  if (key.rfind("hf.co/", 0) == 0) key = key.substr(6);
  if (key.rfind("huggingface.co/", 0) == 0) key = key.substr(15);
  if (auto p = key.find(":latest"); p != std::string::npos && p + 7 == key.size()) key.resize(p);
  const auto& all = model_catalog();
  for (const auto& m : all) {
    std::string id = text::lower(m.id);
    if (key == id || key == id.substr(id.find('/') + 1)) return &m;
    for (const auto& a : m.aliases)
      if (key == a) return &m;
  }
  // Ollama tags with a quantization suffix: "qwen2.5:7b-instruct-q4_K_M".
  if (key.find(':') != std::string::npos) {
    const CatalogModel* best = nullptr;
    size_t best_len = 0;
    for (const auto& m : all)
      for (const auto& a : m.aliases)
        if (a.find(':') != std::string::npos && a.size() > best_len &&
            key.size() > a.size() && key.compare(0, a.size(), a) == 0 && key[a.size()] == '-') {
          best = &m;
          best_len = a.size();
        }
    return best;
  }
  return nullptr;
}

Result<ModelSpec> catalog_spec(std::string_view name, const std::string& dtype,
                               const std::string& quant) {
  const CatalogModel* m = find_model(name);
  if (!m) return make_error(fmt::format("'{}' is not in the built-in model catalog", name));
  nlohmann::json j = nlohmann::json::parse(m->config_json, nullptr, false);
  if (j.is_discarded())
    return make_error(fmt::format("catalog entry {}: config_json is not valid JSON", m->id));
  auto spec = spec_from_config(j, m->id, dtype, quant);
  if (!spec) return spec;
  spec->name = m->id;
  spec->source = "catalog";
  spec->path = "";
  spec->citation = m->citation;
  spec->notes.push_back(fmt::format("architecture from the built-in catalog ({})", m->citation));
  return spec;
}

}  // namespace aimem::fit
