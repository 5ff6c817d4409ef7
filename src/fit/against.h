// `aimem fit --against LOG`: read what a llama.cpp, Ollama, vLLM or SGLang log states
// about the model and the settings, predict with aimem's model, and print the
// prediction beside what the engine reported, per component.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/file_system.h"
#include "core/result.h"
#include "fit/model.h"
#include "fit/plan.h"

namespace aimem::fit {

// What one engine log states (every field optional: logs are often cut).
struct EngineLog {
  std::string engine;                 // "llama.cpp", "vllm"
  std::string model_path;             // the GGUF path / model id the log names
  // llama.cpp print_info / llm_load_print_meta
  std::string arch, file_type;
  std::optional<double> params_b, file_size_gib;
  std::optional<uint32_t> n_ctx_train, n_embd, n_layer, n_head, n_head_kv, head_k, head_v, n_ff, n_vocab, n_swa,
      n_expert, n_expert_used;
  // settings
  std::optional<uint32_t> n_ctx, n_seq, n_batch, n_ubatch, gpu_layers, tp, max_num_seqs, max_batched;
  std::optional<bool> flash_attn, kv_unified;
  std::string type_k, type_v, dtype, quantization;
  std::optional<double> gpu_mem_util;
  std::optional<uint64_t> gpu_total;  // bytes
  uint32_t gpu_devices = 0;
  // reported figures, bytes
  std::optional<uint64_t> weights, kv, compute, output, non_torch, activation;
  std::optional<uint64_t> kv_tokens;
  std::optional<double> max_concurrency;
  bool vllm_v0 = false;               // V0 engine lines ("# GPU blocks", "Memory profiling results")
  bool vllm_v1 = false;               // V1 engine lines (EngineCore, gpu_worker.py, "GPU KV cache size")
  std::string version;                // the release the log prints ("0.11.0")
  std::optional<int64_t> kv_available; // vLLM 'Available KV cache memory' (negative on a failed start), bytes
  std::optional<bool> chunked_prefill;
  // SGLang / TGI
  std::optional<double> mem_fraction; // --mem-fraction-static / --cuda-memory-fraction
  std::optional<uint32_t> max_total_tokens;
  std::optional<bool> mmap;           // load_mode / CPU_Mapped vs CPU model buffer
  bool cpu_amx = false;               // llama.cpp repacked weights into an AMX buffer
};

EngineLog parse_engine_log(const std::string& text);
// Builds the model from the log (the GGUF it names when it is in `files`, else
// its printed metadata, else the catalog) and the settings it states.
Result<ModelSpec> model_from_log(const FileSystem& files, const EngineLog& log, const std::string& model_override);
FitSettings settings_from_log(const EngineLog& log);
Hardware hardware_from_log(const EngineLog& log);

// The command over the log's text (read by the caller; log_path names it in
// messages): 0 when every compared component is within its band, 1 when one
// is off, 2 when the log cannot be used. `hw_override` (--gpu / --vram) is
// the GPU when the log does not print its size (vLLM V1 logs do not).
int run_against(const FileSystem& files, const std::string& log_path, const std::string& log_text,
                const std::string& model_override, bool json, const Hardware* hw_override = nullptr);

}  // namespace aimem::fit
