// The memory plan of a model under one runtime: what each component takes on
// each device and in host RAM, whether it fits, the largest context and
// concurrency that fit, and the cheapest changes that flip the verdict.
// Pure: the model and the hardware come in as data (readers and hardware
// detection live elsewhere), so every term is testable on numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "fit/model.h"

namespace aimem::fit {

enum class Runtime { kLlamaCpp, kOllama, kVllm, kTgi, kTransformers, kSglang };
std::string_view to_string(Runtime r);
std::optional<Runtime> parse_runtime(std::string_view s);

// `--runtime vllm@0.6`: a runtime and the version of its rules ("" = the
// newest aimem knows). Unknown runtimes and versions come back as an error
// text naming what is accepted (fit/engine_rules.cc).
struct RuntimeSpec {
  Runtime runtime = Runtime::kVllm;
  std::string version;
};
Result<RuntimeSpec> parse_runtime_spec(std::string_view s);
// The versions with a rules table for a runtime, newest last ("0.6, 0.8, 0.11").
std::string rule_versions(Runtime r);

struct FitSettings {
  Runtime runtime = Runtime::kLlamaCpp;
  uint32_t ctx = 0;               // tokens per sequence; 0 = runtime default
  uint32_t concurrency = 0;       // sequences at once; 0 = runtime default
  uint32_t batch = 0;             // llama.cpp n_batch / vLLM max_num_batched_tokens; 0 = default
  uint32_t ubatch = 0;            // llama.cpp n_ubatch; 0 = default
  std::string kv_type;            // "" = runtime default ("f16"/"auto")
  std::optional<bool> flash_attn; // unset = runtime default
  int gpu_layers = -1;            // -1 = all ("auto": planned as all; plan() suggests a count that fits)
  uint32_t n_cpu_moe = 0;         // llama.cpp --n-cpu-moe
  uint32_t tp = 1;                // tensor-parallel ranks (vLLM, TGI num_shard)
  uint32_t gpus = 1;              // GPUs in use
  double gpu_mem_util = 0.0;      // vLLM gpu_memory_utilization; 0 = default 0.9
  bool device_cpu = false;        // everything in host RAM
  bool unified_kv = true;         // llama-server's unified KV cache (default since b6000s)
  bool mmap = true;
  bool rolling = false;           // two copies on the host during a rolling deployment
  uint64_t cuda_overhead = 0;     // per GPU; 0 = the runtime's assumed figure
  bool vllm_no_hybrid_kv = false; // vLLM --disable-hybrid-kv-cache-manager: sliding layers kept as full attention
  std::string engine_version;     // rules of this engine version ("0.6"); "" = the newest aimem knows
  double mem_fraction = 0.0;      // SGLang --mem-fraction-static / TGI --cuda-memory-fraction; 0 = default
  std::optional<bool> chunked_prefill; // vLLM --enable-chunked-prefill; unset = the version's default
  uint32_t max_total_tokens = 0;  // SGLang --max-total-tokens / TGI --max-batch-total-tokens cap; 0 = none
  uint32_t max_seqs = 0;          // vLLM --max-num-seqs (profile run rows); 0 = default
};

struct Hardware {
  std::string gpu_name;           // "" with no GPU
  uint32_t gpu_count = 0;
  uint64_t gpu_total = 0;         // per GPU, bytes
  uint64_t gpu_in_use = 0;        // held by other processes per GPU (NVML), bytes
  std::string gpu_source;         // "catalog L4", "--vram", "NVML"
  uint64_t ram_total = 0;         // host RAM available to the workload (0 = unknown)
  std::string ram_source;         // "/proc/meminfo MemAvailable", "cgroup limit", "--ram"
  bool cpu_amx = false;           // the host CPU has AMX: llama.cpp repacks CPU matmul weights
};

// One component on one device.
struct Term {
  std::string device;             // "GPU0", "host"
  std::string component;          // weights, quant_metadata, kv_cache, compute, runtime_overhead,
                                  // extra_models, request_buffers
  std::string what;               // "KV cache (f16, 8192 cells x 1 stream)"
  uint64_t bytes = 0;
  bool exact = false;
  double band = 0.0;              // relative error band when approximate (0.1 = +/-10%)
};

struct Suggestion {
  std::string action;             // "set --ctx 16384 (llama-server -c 16384)"
  int64_t saves_bytes = 0;        // on the binding device
  bool flips = false;             // makes the plan fit
  int rank = 0;                   // DESIGN 1: least destructive first
};

struct DeviceUse {
  std::string name;               // "GPU0 (L4)", "host"
  uint64_t capacity = 0;          // 0 = unknown
  uint64_t used = 0;              // by this plan
  uint64_t others = 0;            // held by other processes
  int64_t headroom() const { return int64_t(capacity) - int64_t(used) - int64_t(others); }
};

struct Plan {
  Runtime runtime = Runtime::kLlamaCpp;
  std::string engine;             // the engine version whose rules this mirrors
  std::string rules;              // "vllm@0.6": the rules table used (fit/engine_rules.cc)
  std::string rules_source;       // the upstream files and version those rules were read from
  // Settings as resolved (defaults filled in).
  uint32_t ctx = 0, concurrency = 0, batch = 0, ubatch = 0;
  std::string kv_type;
  bool flash_attn = false;
  int gpu_layers = 0;             // layers on GPUs (llama.cpp counting, output layer first)
  uint32_t n_layer_total = 0;     // n_layer + 1 (the output layer)
  uint32_t tp = 1;
  double gpu_mem_util = 0;
  uint32_t kv_cells = 0;          // llama.cpp: cells per stream (padded)
  uint32_t kv_streams = 1;
  std::vector<Term> terms;
  std::vector<DeviceUse> devices; // GPUs then host
  uint64_t host_bytes = 0;        // steady-state host RAM
  uint64_t load_peak_host_bytes = 0;
  uint64_t total_bytes = 0;
  bool fits = false;
  std::string binding;            // the device and component that decide it
  uint64_t kv_bytes_per_token = 0;
  std::optional<uint64_t> kv_cache_tokens;  // vLLM 'GPU KV cache size', SGLang max_total_num_tokens,
                                            // TGI max_batch_total_tokens: tokens the budget holds
  std::optional<double> kv_max_concurrency; // vLLM: 'Maximum concurrency' at ctx
  // vLLM's block pool (fit/vllm_kv.h): blocks, bytes of one block id across a
  // group's layers, blocks one ctx-token request needs over all KV cache
  // groups, and the longest context `concurrency` requests fit in.
  uint64_t kv_blocks = 0, kv_block_bytes = 0, kv_blocks_per_request = 0;
  uint32_t kv_max_model_len = 0;
  // vLLM 'Available KV cache memory' / SGLang's pool / TGI's KV share before
  // it becomes blocks; negative when the engine would not start.
  std::optional<int64_t> kv_budget;
  uint32_t max_context = 0;       // at the requested concurrency (0 = none fits)
  uint32_t max_concurrency = 0;   // at the requested context
  std::string flags;              // equivalent runtime command line
  std::vector<Suggestion> suggestions;
  std::vector<std::string> assumptions;
};

// Models loaded beside the main one (draft, projector, embedding, reranker).
struct Extra {
  ModelSpec spec;
  std::string role;               // "also", "projector"
};

// One runtime's plan for fixed settings (no search, no suggestions).
Plan plan_once(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
               const std::vector<Extra>& extras);
// The full answer: plan, verdict, max context / concurrency, layers to
// offload, suggestions ranked least destructive first.
Plan plan(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
          const std::vector<Extra>& extras);

// Bytes of the KV cache per token at a KV type (all layers, K and V),
// for full-attention layers (SWA layers are capped separately).
uint64_t kv_bytes_per_token(const ModelSpec& m, const std::string& kv_type, uint32_t tp = 1);

}  // namespace aimem::fit
