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

// The CPU/GPU compute buffer llama.cpp reserves for its worst-case graph.
struct ComputeShape {
  uint64_t n_vocab, n_embd, n_head, n_head_kv, head_dim_k, head_dim_v, n_ff, n_expert_used;
  uint64_t n_kv;       // KV cells the graph attends over (per stream)
  uint64_t n_tokens;   // min(n_ctx, n_ubatch)
  uint64_t n_outputs;  // logits rows in the reserve graph
  uint64_t n_seq;
  bool flash_attn;
  bool has_output;     // this device computes the output layer
};
uint64_t llamacpp_compute_bytes(const ComputeShape& c);

}  // namespace aimem::fit
