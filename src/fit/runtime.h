// Internal to fit: each runtime's allocation model (one file per runtime) and
// helpers they share. plan.cc drives them.
#pragma once

#include <string>
#include <vector>

#include "fit/layout.h"
#include "fit/plan.h"

namespace aimem::fit {

inline constexpr uint64_t kMiB = 1024ULL * 1024;
inline constexpr uint64_t kGiB = 1024ULL * kMiB;

// Bytes of a KV row of `width` elements at a KV type name ("f16", "q8_0",
// "fp8", "auto" = the model's dtype); 0 when the type is unknown.
uint64_t kv_row_bytes(const std::string& kv_type, uint64_t width, uint32_t dtype_bytes);
bool kv_type_known(const std::string& kv_type);
bool kv_type_quantized(const std::string& kv_type);

// Adds a term and keeps devices' totals in step.
void add_term(Plan& p, const std::string& device, const std::string& component, const std::string& what,
              uint64_t bytes, bool exact, double band = 0.0);

void plan_llamacpp(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
                   const std::vector<Extra>& extras, Plan& p);
void plan_vllm(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
               const std::vector<Extra>& extras, Plan& p);
void plan_hf(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
             const std::vector<Extra>& extras, Plan& p);  // TGI and transformers
void plan_sglang(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
                 const std::vector<Extra>& extras, Plan& p);

// One engine version's memory rules, as data (fit/engine_rules.cc). Each row
// names the upstream files and the version they were read from; a runtime's
// rows are ordered oldest first and the last is the default.
struct EngineRules {
  Runtime runtime = Runtime::kVllm;
  const char* version = "";          // "0.6": what --runtime vllm@0.6 names
  const char* covers = "";           // the releases that share these rules
  const char* label = "";            // the plan's engine line
  const char* source = "";           // upstream files and version read
  uint32_t block_size = 16;          // tokens per KV block (vLLM, TGI); page size (SGLang)
  // vLLM
  bool v1 = false;                   // V1 engine (gpu_worker.py, kv_cache_utils.py)
  uint32_t chunked_auto_above = 0;   // V0: chunked prefill turned on by default when max_model_len > this
  uint32_t chunked_batched = 0;      // max_num_batched_tokens with chunked prefill (0: by GPU size, 2048 / 8192)
  uint32_t unchunked_min = 2048;     // without chunked prefill: max(max_model_len, this) tokens in the profile run
  bool gpu_size_defaults = false;    // 0.10+: API-server max_num_batched_tokens / max_num_seqs by GPU size
  bool hybrid_kv = false;            // hybrid KV cache manager (sliding-window groups)
  // The profile run's activation peak and non-torch memory, calibrated per
  // engine generation on the corpus (tests/fixtures/corpus/fit_engine_logs.json):
  // peak = factor x tokens x per-token intermediates + max_num_seqs x vocab x
  // sampler_bytes + fixed; non-torch by GPU class and tp.
  double act_factor = 0.6;
  uint32_t sampler_bytes = 16;
  uint32_t act_fixed_mib = 400;
  // V0: the sampler runs on the driver rank alone, over the whole vocabulary
  // (logits gathered to rank 0), after the forward pass has freed its
  // activations: its peak is max(forward, sampler), not their sum, and the
  // engine keeps the least of the ranks' budgets, the driver's.
  bool sampler_on_driver = false;
  uint32_t non_torch_mib = 400, non_torch_tp_mib = 1536;        // GPUs >= 70 GiB (or all GPUs when the
  uint32_t non_torch_small_mib = 0;                              // small figure is 0), tp 1 / tp > 1
  // SGLang
  bool mem_fraction_by_tp = false;   // mem_fraction_static default 0.88/0.87/0.85/0.81/0.79 by tp size
  uint32_t chunked_prefill_small = 0, chunked_prefill_big = 0;  // chunked_prefill_size default (GPU < / >= 25 GB)
  uint32_t cuda_graph_max_bs = 0;
  // TGI
  double wiggle_room = 0;            // TGI_WIGGLE_ROOM: share of the free memory that becomes KV blocks
  uint32_t prefill_tokens = 0;       // max_batch_prefill_tokens default (the warm-up batch)
  // The warm-up asks for every prompt token's logprob, so the lm_head runs
  // over the whole prefill in the model's dtype; before
  // huggingface/text-generation-inference#2661 the log_softmax of those
  // logits was a second tensor of the same size, not done in place.
  bool logits_softmax_copy = false;
  // AWQ layers through llm-awq's gemm_forward_cuda (utils/awq/quantize/qmodule.py
  // WQLinear): the kernel writes split_k_iters partial outputs and sums them
  // (0: AWQ not run this way).
  uint32_t awq_split_k = 0;
};
// The rules for a runtime at a version ("" = newest); nullptr when unknown.
const EngineRules* engine_rules(Runtime r, std::string_view version);
// The version a log's banner names ("0.6.4.post1", "v0.11.0") mapped to a rules row.
const EngineRules* engine_rules_for_release(Runtime r, std::string_view release);

// The llama-family worst-case graph, replayed through ggml-alloc's allocator
// (llamacpp_graph.cc); exact for llama.cpp's CPU backend.
struct GraphShape {
  uint64_t n_embd = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_ff = 0, n_vocab = 0, n_layer = 0;
  uint64_t n_ubatch = 0;  // min(n_ctx, n_ubatch)
  uint64_t n_kv = 0;      // n_ctx_seq: the cells one stream holds
  uint64_t n_seq = 1;
  bool flash_attn = false, k_quant = false, v_quant = false;
  bool has_output = true; // the logits are computed on this backend
  uint64_t alignment = 32;
  // Sliding-window layers (llama_kv_cache_iswa): their cache's cells and a
  // flag per layer (true: the layer attends through the SWA cache).
  uint64_t n_kv_swa = 0;
  std::vector<bool> swa;
  // Mixture of experts (build_moe_ffn): n_expert routed experts, n_expert_used
  // per token of width n_ff_exp, a shared expert of width n_ff_shexp (0: none)
  // behind a sigmoid gate when shexp_gate, weights normalised when norm_w.
  uint64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
  bool shexp_gate = false, norm_w = false;
};
uint64_t llamacpp_graph_replay(const GraphShape& g);

// llama.cpp's graph metadata (llamacpp_meta.cc): ggml_tensor_overhead(),
// ggml_graph_overhead_custom(size, false), graph_max_nodes() and the bytes of
// one llm_graph_result's buf_compute_meta, as the bundled engine computes them.
uint64_t ggml_tensor_overhead_bytes();
uint64_t ggml_graph_overhead_bytes(uint64_t size);
uint32_t llamacpp_max_nodes(const std::string& arch, uint64_t n_tensors, uint32_t n_tokens);
uint64_t llamacpp_graph_meta_bytes(uint32_t max_nodes);
inline constexpr uint32_t kLlamaCppGraphResults = 3;  // gf_res_reserve + gf_res_prev[2]

}  // namespace aimem::fit
