#include "fit/layout.h"

#include <algorithm>
#include <numeric>

#include "fit/ggml_types.h"

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

namespace aimem::fit {

namespace {

// Bytes of a [ne0 x rows] matrix of ggml type `type` after llama-quant.cpp's
// tensor_type_fallback; counts the fallback.
uint64_t quantized_bytes(std::string_view type, uint64_t ne0, uint64_t rows, uint32_t& fallbacks) {
  const GgmlTypeInfo* t = ggml_type_by_name(type);
  if (ne0 % t->block_size != 0) {
    ++fallbacks;
    std::string_view fb = type == "Q4_K" ? "Q5_0" : type == "Q5_K" ? "Q5_1" : type == "Q6_K" ? "Q8_0"
                        : type == "IQ4_XS" ? "IQ4_NL" : "Q4_0";  // Q2_K, Q3_K
    t = ggml_type_by_name(fb);
    if (ne0 % t->block_size != 0) t = ggml_type_by_name("F16");
  }
  return ne0 / t->block_size * t->type_size * rows;
}

}  // namespace

std::optional<MixBytes> llamacpp_kquant_mix_bytes(const ModelSpec& m, std::string_view ftype) {
  // base: the mix's default type (llama_model_quantize_impl's switch)
  struct Mix {
    std::string_view name, base;
  };
  static constexpr Mix kMixes[] = {{"q2_k", "Q2_K"},   {"q3_k_s", "Q3_K"}, {"q3_k_m", "Q3_K"}, {"q3_k_l", "Q3_K"},
                                   {"q4_k_s", "Q4_K"}, {"q4_k_m", "Q4_K"}, {"q5_k_s", "Q5_K"}, {"q5_k_m", "Q5_K"},
                                   {"q6_k", "Q6_K"},   {"iq4_xs", "IQ4_XS"}};
  const Mix* mix = nullptr;
  for (const Mix& x : kMixes)
    if (x.name == ftype) mix = &x;
  if (!mix || m.kv_lora_rank > 0 || !m.recurrent_r.empty() || m.n_layer == 0 || m.n_embd == 0 || m.n_head == 0)
    return std::nullopt;
  const std::string_view f = ftype, base = mix->base;
  const uint64_t E = m.n_embd, L = m.n_layer, V = m.n_vocab;
  const uint64_t hd_k = m.head_dim_k ? m.head_dim_k : E / m.n_head, hd_v = m.head_dim_v ? m.head_dim_v : hd_k;
  const bool moe = m.n_expert > 0;
  const uint64_t ff_exp = m.n_ff_exp ? m.n_ff_exp : m.n_ff;
  const uint64_t n_gqa = head_kv(m, 0) ? m.n_head / head_kv(m, 0) : 1;
  auto more_bits = [](uint64_t i, uint64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; };
  MixBytes r;
  uint64_t counted_params = 0;
  auto add = [&](std::string_view type, uint64_t ne0, uint64_t rows) {
    r.total += quantized_bytes(type, ne0, rows, r.fallback_tensors);
    counted_params += ne0 * rows;
  };
  for (uint64_t il = 0; il < L; ++il) {
    const uint64_t kv = head_kv(m, uint32_t(il));
    // attn_v (llama_tensor_get_type_impl, category_is_attn_v)
    std::string_view tv = base;
    if (f == "q2_k") tv = n_gqa >= 4 ? "Q4_K" : "Q3_K";
    else if (f == "q3_k_m") tv = il < 2 ? "Q5_K" : "Q4_K";
    else if (f == "q3_k_l") tv = "Q5_K";
    else if (f == "iq4_xs" && n_gqa >= 4) tv = "Q5_K";
    else if ((f == "q4_k_m" || f == "q5_k_m") && more_bits(il, L)) tv = "Q6_K";
    else if (f == "q4_k_s" && il < 4) tv = "Q5_K";
    if (m.n_expert == 8) tv = "Q8_0";
    // attn_output
    std::string_view to = base;
    if (m.n_expert == 8) {
      if (f != "q5_k_s" && f != "q5_k_m" && f != "q6_k" && f != "q3_k_l") to = "Q5_K";
    } else if (f == "q2_k") to = "Q3_K";
    else if (f == "q3_k_m") to = "Q4_K";
    else if (f == "q3_k_l") to = "Q5_K";
    // ffn_down (dense layers count one per layer; experts share the layer's index)
    std::string_view td = base;
    if (f == "q2_k") td = "Q3_K";
    else if (f == "q3_k_m") td = il < L / 16 ? "Q5_K" : "Q4_K";
    else if (f == "q3_k_l") td = "Q5_K";
    else if (f == "q4_k_m") td = more_bits(il, L) ? "Q6_K" : base;
    else if (f == "iq4_xs" && il < L / 8) td = "Q5_K";
    else if (f == "q5_k_m" && more_bits(il, L)) td = "Q6_K";
    else if (f == "q4_k_s" && il < L / 8) td = "Q5_K";
    add(base, E, m.n_head * hd_k);                                   // attn_q
    add(m.n_expert == 8 ? std::string_view("Q8_0") : base, E, kv * hd_k);  // attn_k
    add(tv, E, kv * hd_v);                                           // attn_v
    add(to, m.n_head * hd_v, E);                                     // attn_output
    if (moe) {
      add(base, E, ff_exp * m.n_expert);  // ffn_gate_exps
      add(base, E, ff_exp * m.n_expert);  // ffn_up_exps
      add(td, ff_exp, E * m.n_expert);        // ffn_down_exps
      if (m.n_expert_shared) {
        const uint64_t sh = ff_exp * m.n_expert_shared;
        add(base, E, sh);
        add(base, E, sh);
        add(td, sh, E);
      }
      r.total += E * m.n_expert * 4;  // router (F32: rows of n_embd, 1-D per expert)
      counted_params += E * m.n_expert;
    } else {
      add(base, E, m.n_ff);  // ffn_gate
      add(base, E, m.n_ff);  // ffn_up
      add(td, m.n_ff, E);                  // ffn_down
    }
    r.total += 2 * E * 4;  // attn_norm, ffn_norm (F32)
    counted_params += 2 * E;
  }
  // token_embd at the base type (the output's type when tied), output.weight
  // Q6_K, or Q8_0 when its rows are not a multiple of the block.
  const std::string_view out_type = E % 256 == 0 ? "Q6_K" : "Q8_0";
  uint32_t none = 0;
  r.input = quantized_bytes(m.tied_embeddings ? out_type : base, E, V, r.fallback_tensors);
  r.output = m.tied_embeddings ? 0 : quantized_bytes(out_type, E, V, none) + E * 4;
  r.total += r.input + r.output;
  counted_params += E * V * (m.tied_embeddings ? 1 : 2);
  // Whatever the layout above does not name: biases and extra norms (F32)
  // when that is little, else unmodelled matrices at the base type.
  if (m.n_params > counted_params) {
    const uint64_t rest = m.n_params - counted_params;
    const GgmlTypeInfo* b = ggml_type_by_name(base);
    r.total += rest * 100 < counted_params ? rest * 4 : rest * b->type_size / b->block_size;
  }
  return r;
}

}  // namespace aimem::fit
