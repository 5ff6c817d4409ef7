// The architecture of a model as `aimem fit` needs it: the numbers that size
// the KV cache and the compute buffers, and (where the files give it) the
// tensor table that sizes the weights exactly. Every reader (GGUF,
// safetensors + config.json, config.json alone, the built-in catalog) fills
// one ModelSpec; the runtime models read only this.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace aimem::fit {

struct Tensor {
  std::string name;
  std::string dtype;              // ggml type name ("Q4_K") or safetensors dtype ("BF16")
  uint32_t ggml_type = UINT32_MAX;  // GGUF only
  std::array<uint64_t, 4> ne{1, 1, 1, 1};  // GGUF order: ne[0] is the row length
  uint32_t n_dims = 0;
  uint64_t bytes = 0;             // exact storage size in the file
  uint64_t offset = 0;            // GGUF: offset in the data section
  int layer = -1;                 // blk.N / model.layers.N; -1 outside the blocks
  bool quant_metadata = false;    // scales, zero points, g_idx, absmax (not weights)
  bool expert = false;            // a MoE expert tensor (ffn_*_exps, experts.N.*)
  bool vision = false;            // vision tower / projector tensor
};

struct ModelSpec {
  std::string name;               // file name, folder name or catalog id
  std::string source;             // "gguf", "safetensors", "config", "catalog"
  std::string path;               // what the user named ("" for the catalog)
  std::string architecture;       // gguf general.architecture or HF model_type
  std::string weights_format;     // "Q4_K - Medium", "BF16", "GPTQ int4 g128", "FP8"
  uint64_t n_params = 0;          // total parameters (all experts)
  uint64_t n_params_active = 0;   // per token (MoE); = n_params for dense

  uint32_t n_layer = 0;           // decoder blocks that run (excl. MTP/nextn)
  uint32_t n_embd = 0;
  uint32_t n_head = 0;
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  uint32_t n_ff = 0;              // dense FFN width (0 if every layer is MoE)
  std::vector<uint32_t> n_head_kv;  // per layer; 0 = a layer without KV (recurrent)
  uint32_t head_dim_k = 0, head_dim_v = 0;          // per head
  uint32_t head_dim_k_swa = 0, head_dim_v_swa = 0;  // SWA layers when they differ (else 0)
  uint32_t n_swa = 0;             // sliding window in tokens (0: none)
  std::vector<bool> swa_layer;    // per layer: true = sliding-window layer

  uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_expert_shared = 0;
  uint32_t kv_lora_rank = 0;      // MLA (DeepSeek V2/V3, Kimi): latent KV width
  uint32_t n_rot = 0;             // rope dims (MLA K width = kv_lora_rank + n_rot)

  // Recurrent state per layer, f32 elements per sequence (Mamba, RWKV, LFM2).
  std::vector<uint64_t> recurrent_r, recurrent_s;

  bool tied_embeddings = false;
  bool is_projector = false;      // an mmproj / vision encoder file
  bool causal = true;             // false for embedding / reranker models

  std::vector<Tensor> tensors;    // empty for config.json alone and the catalog
  uint64_t weight_bytes = 0;      // everything stored, quant metadata included
  uint64_t quant_metadata_bytes = 0;
  // Without a tensor table: the token embedding and output matrix as stored
  // (0 = at dtype_bytes per element), for llama.cpp's layer placement.
  uint64_t input_bytes = 0, output_bytes = 0;
  bool weights_exact = false;     // summed from a tensor table
  uint32_t dtype_bytes = 2;       // the checkpoint's float dtype ('auto' KV type in vLLM)

  std::vector<std::string> notes; // assumptions made while reading (shown to the user)
  std::string citation;           // catalog entries: where the numbers come from
};

// n_head_kv of layer il, or 0 when il is out of range.
inline uint32_t head_kv(const ModelSpec& m, uint32_t il) {
  return il < m.n_head_kv.size() ? m.n_head_kv[il] : 0;
}

}  // namespace aimem::fit
