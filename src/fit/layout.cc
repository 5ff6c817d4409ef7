#include "fit/layout.h"

#include <algorithm>
#include <numeric>

namespace aimem::fit {

uint64_t WeightLayout::total() const {
  return input + output + vision + std::accumulate(dense.begin(), dense.end(), uint64_t{0}) +
         std::accumulate(experts.begin(), experts.end(), uint64_t{0});
}

namespace {

bool is_input(const std::string& n) {
  return n.rfind("token_embd", 0) == 0 || n.rfind("position_embd", 0) == 0 ||
         n.find("embed_tokens") != std::string::npos || n.rfind("token_types", 0) == 0;
}

WeightLayout from_tensors(const ModelSpec& m) {
  WeightLayout w;
  w.exact = m.weights_exact;
  w.dense.assign(m.n_layer, 0);
  w.experts.assign(m.n_layer, 0);
  uint64_t embd = 0;
  bool has_output_matrix = false;
  for (const Tensor& t : m.tensors) {
    if (t.quant_metadata) w.quant_metadata += t.bytes;
    if (t.vision) {
      w.vision += t.bytes;
    } else if (t.layer >= 0 && uint32_t(t.layer) < m.n_layer) {
      (t.expert ? w.experts : w.dense)[t.layer] += t.bytes;
    } else if (t.layer >= 0) {
      // MTP / nextn blocks beyond n_layer: stored but not run; llama.cpp
      // still loads them with the output layer's device.
      w.output += t.bytes;
    } else if (is_input(t.name)) {
      w.input += t.bytes;
      if (t.name.rfind("token_embd.weight", 0) == 0 || t.name.find("embed_tokens.weight") != std::string::npos)
        embd += t.bytes;
    } else {
      if (t.name == "output.weight" || t.name.find("lm_head.weight") != std::string::npos)
        has_output_matrix = true;
      w.output += t.bytes;
    }
  }
  // Tied embeddings: llama.cpp loads token_embd a second time as the output
  // matrix (TENSOR_DUPLICATED) on the output layer's device.
  if (!has_output_matrix && !m.is_projector) w.output += embd;
  return w;
}

// Without a tensor table: the embedding and output matrices at the checkpoint
// dtype, the rest spread over the blocks in proportion to their parameters.
WeightLayout from_numbers(const ModelSpec& m) {
  WeightLayout w;
  w.exact = false;
  const uint32_t nl = std::max<uint32_t>(1, m.n_layer);
  w.dense.assign(nl, 0);
  w.experts.assign(nl, 0);
  const uint64_t embd = m.input_bytes ? m.input_bytes : uint64_t(m.n_vocab) * m.n_embd * m.dtype_bytes;
  w.input = std::min<uint64_t>(embd, m.weight_bytes);
  // Tied: the embedding duplicated on the output device; untied: its own matrix.
  w.output = m.tied_embeddings ? w.input : (m.output_bytes ? m.output_bytes : w.input);
  uint64_t stored_output = m.tied_embeddings ? 0 : w.output;
  uint64_t rest = m.weight_bytes > w.input + stored_output ? m.weight_bytes - w.input - stored_output : 0;
  // Share of expert parameters in a block: routed experts x 3 matrices.
  double expert_share = 0;
  if (m.n_expert > 0 && m.n_ff_exp > 0 && m.n_params > 0) {
    double expert_params = double(m.n_expert) * 3.0 * m.n_embd * m.n_ff_exp * nl;
    expert_share = std::min(0.98, expert_params / double(m.n_params));
  }
  uint64_t per = rest / nl;
  for (uint32_t il = 0; il < nl; ++il) {
    w.experts[il] = uint64_t(per * expert_share);
    w.dense[il] = per - w.experts[il];
  }
  w.quant_metadata = m.quant_metadata_bytes;
  return w;
}

}  // namespace

WeightLayout weight_layout(const ModelSpec& m) {
  return m.tensors.empty() ? from_numbers(m) : from_tensors(m);
}

}  // namespace aimem::fit
