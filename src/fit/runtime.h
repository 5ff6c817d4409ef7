// Internal to fit: each runtime's allocation model (one file per runtime) and
// helpers they share. plan.cc drives them.
#pragma once

#include <string>

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
