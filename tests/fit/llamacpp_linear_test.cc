// aimem fit against the real llama.cpp engine (node-llama-cpp 3.22.1, CPU;
// `make node-deps`) for the linear-attention and hybrid architectures:
// RWKV-6, RWKV-6 Qwen2, RWKV-7 and ARWKV-7 (every layer recurrent: a
// token-shift row and a WKV state per sequence), the gated delta-net hybrids
// Qwen3-Next and Qwen3.5 (dense and MoE), LFM2 and LFM2-MoE (short
// convolutions), Falcon-H1 (Mamba-2 and attention in every layer),
// Kimi-Linear and Ling-2.5 (bailingmoe3; KDA and MLA layers), Nemotron-H and
// Nemotron-H MoE (Mamba-2, attention and MLP or MoE layers), Granite-4.0-H
// (Mamba-2 and attention layers), PLaMo-2 (Mamba and attention layers) and
// MiniMax-01 (lightning attention). Mamba, Mamba-2 and Jamba are in
// llamacpp_recurrent_test.cc.
//
// Tiny GGUF files with random F32 weights are written with every tensor the
// bundled engine's loader requires (llama.cpp v0.5.0 as node-llama-cpp ships
// it: src/models/<arch>.cpp load_arch_tensors; names and shapes must match
// exactly or the load fails), loaded with two settings, and the engine's
// logged buffers are compared with aimem's plan: weights, KV and the
// recurrent-state (RS) buffer within 1% (to the engine's printed precision
// where that is coarser), the output buffer to that precision, the graph's
// max_nodes exactly, and the total without compute within 1%. aimem does not
// replay these graphs' compute buffers (llamacpp_graph.cc replays the llama
// graph and stands in for them): compute is held to the band the plan
// states, and the measured error is printed in the table.
//
// Recurrent or hybrid architectures of the bundled engine
// (llm_arch_is_recurrent / llm_arch_is_hybrid in src/llama-arch.cpp) not
// measured here or in llamacpp_recurrent_test.cc: kimi-k3, qwen4exp and
// deepseek4. The bundled engine has a loader for each of them;
// they are simply not written here yet.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fit/inputs.h"
#include "fit/plan.h"
#include "sources/files.h"
#include "support/tiny_model.h"

namespace aimem::fit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::TensorFiller;

constexpr uint32_t kVocab = 300;

void base_keys(GgufWriter& w, const std::string& a, uint32_t n_layer, uint32_t n_embd, uint32_t n_ff) {
  w.set_u32(a + ".context_length", 8192);
  w.set_u32(a + ".embedding_length", n_embd);
  w.set_u32(a + ".block_count", n_layer);
  if (n_ff) w.set_u32(a + ".feed_forward_length", n_ff);  // 0: per-layer array or MoE only
  w.set_u32(a + ".vocab_size", kVocab);
}

// --- RWKV ---------------------------------------------------------------
constexpr uint32_t kRwkvLayers = 2, kRwkvEmbd = 256, kRwkvHead = 64;

// What the RWKV-6 and RWKV-7 loaders share: embeddings and output, and each
// layer's attention norms. The original models use LayerNorm (weights and
// biases, an embedding norm, a second norm before the channel mix); the
// Qwen2-hybrid variants (rwkv6qwen2, arwkv7) one RMS norm per place.
void add_rwkv_outer(TensorFiller& t, uint64_t E, bool rms) {
  t.add("token_embd.weight", {E, kVocab});
  if (!rms) {
    t.add("token_embd_norm.weight", {E}, 1.0f);
    t.add("token_embd_norm.bias", {E}, 0.0f);
  }
  t.add("output_norm.weight", {E}, 1.0f);
  if (!rms) t.add("output_norm.bias", {E}, 0.0f);
  t.add("output.weight", {E, kVocab});
}

void add_rwkv_layer_norms(TensorFiller& t, const std::string& b, uint64_t E, bool rms) {
  t.add(b + "attn_norm.weight", {E}, 1.0f);
  if (!rms) {
    t.add(b + "attn_norm.bias", {E}, 0.0f);
    t.add(b + "attn_norm_2.weight", {E}, 1.0f);
    t.add(b + "attn_norm_2.bias", {E}, 0.0f);
  }
}

// src/models/rwkv6.cpp (layer norms with biases, channel-mix FFN) and
// rwkv6qwen2.cpp (RMS norm, SwiGLU FFN, one token shift, no time_mix_first).
GgufWriter rwkv6(int qwen2) {
  const std::string a = qwen2 ? "rwkv6qwen2" : "rwkv6";
  const uint64_t E = kRwkvEmbd, mix = 32, decay = 64, ff = qwen2 ? 512 : 896;
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kRwkvLayers, kRwkvEmbd, uint32_t(ff));
  w.set_u32(a + ".attention.head_count", 0);
  w.set_u32(a + ".wkv.head_size", kRwkvHead);
  w.set_u32(a + ".time_mix_extra_dim", uint32_t(mix));
  w.set_u32(a + ".time_decay_extra_dim", uint32_t(decay));
  w.set_u32(a + ".token_shift_count", qwen2 ? 1 : 2);
  w.set_u32(a + ".rescale_every_n_layers", 0);
  if (qwen2) w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-6f);
  else w.set_f32(a + ".attention.layer_norm_epsilon", 1e-5f);
  TensorFiller t{w};
  add_rwkv_outer(t, E, qwen2);
  for (uint32_t i = 0; i < kRwkvLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    add_rwkv_layer_norms(t, b, E, qwen2);
    t.add(b + "time_mix_w1.weight", {E, mix * 5});
    t.add(b + "time_mix_w2.weight", {mix, E, 5});
    t.add(b + "time_mix_lerp_x.weight", {E, 1, 1});
    t.add(b + "time_mix_lerp_fused.weight", {E, 1, 1, 5});
    if (!qwen2) t.add(b + "time_mix_first.weight", {kRwkvHead, E / kRwkvHead});
    t.add(b + "time_mix_decay.weight", {E}, -1.0f);
    t.add(b + "time_mix_decay_w1.weight", {E, decay});
    t.add(b + "time_mix_decay_w2.weight", {decay, E});
    t.add(b + "time_mix_key.weight", {E, E});
    t.add(b + "time_mix_value.weight", {E, E});
    t.add(b + "time_mix_receptance.weight", {E, E});
    t.add(b + "time_mix_gate.weight", {E, E});
    if (!qwen2) {
      t.add(b + "time_mix_ln.weight", {E}, 1.0f);
      t.add(b + "time_mix_ln.bias", {E}, 0.0f);
    }
    t.add(b + "time_mix_output.weight", {E, E});
    if (qwen2) {
      t.add(b + "ffn_norm.weight", {E}, 1.0f);
      t.add(b + "ffn_gate.weight", {E, ff});
      t.add(b + "ffn_down.weight", {ff, E});
      t.add(b + "ffn_up.weight", {E, ff});
    } else {
      t.add(b + "channel_mix_lerp_k.weight", {E, 1, 1});
      t.add(b + "channel_mix_lerp_r.weight", {E, 1, 1});
      t.add(b + "channel_mix_key.weight", {E, ff});
      t.add(b + "channel_mix_value.weight", {ff, E});
      t.add(b + "channel_mix_receptance.weight", {E, E});
    }
  }
  return w;
}

// src/models/rwkv7.cpp (layer norms with biases, channel-mix FFN) and
// arwkv7.cpp (RMS norm, SwiGLU FFN, one token shift).
GgufWriter rwkv7(int arwkv) {
  const std::string a = arwkv ? "arwkv7" : "rwkv7";
  const uint64_t E = kRwkvEmbd, decay = 32, iclr = 32, vres = 16, gate = 64, ff = arwkv ? 512 : 1024;
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kRwkvLayers, kRwkvEmbd, uint32_t(ff));
  w.set_u32(a + ".attention.head_count", 0);
  w.set_u32(a + ".wkv.head_size", kRwkvHead);
  w.set_u32(a + ".attention.decay_lora_rank", uint32_t(decay));
  w.set_u32(a + ".attention.iclr_lora_rank", uint32_t(iclr));
  w.set_u32(a + ".attention.value_residual_mix_lora_rank", uint32_t(vres));
  w.set_u32(a + ".attention.gate_lora_rank", uint32_t(gate));
  w.set_u32(a + ".token_shift_count", arwkv ? 1 : 2);
  if (arwkv) w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-6f);
  else w.set_f32(a + ".attention.layer_norm_epsilon", 1e-5f);
  TensorFiller t{w};
  add_rwkv_outer(t, E, arwkv);
  for (uint32_t i = 0; i < kRwkvLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    add_rwkv_layer_norms(t, b, E, arwkv);
    t.add(b + "time_mix_w0.weight", {E});
    t.add(b + "time_mix_w1.weight", {E, decay});
    t.add(b + "time_mix_w2.weight", {decay, E});
    t.add(b + "time_mix_a0.weight", {E});
    t.add(b + "time_mix_a1.weight", {E, iclr});
    t.add(b + "time_mix_a2.weight", {iclr, E});
    const uint64_t v = i == 0 ? iclr : vres;  // layer 0's value-mix LoRA has the ICLR rank
    t.add(b + "time_mix_v0.weight", {E});
    t.add(b + "time_mix_v1.weight", {E, v});
    t.add(b + "time_mix_v2.weight", {v, E});
    t.add(b + "time_mix_g1.weight", {E, gate});
    t.add(b + "time_mix_g2.weight", {gate, E});
    t.add(b + "time_mix_lerp_fused.weight", {E, 1, 1, 6});
    t.add(b + "time_mix_k_k.weight", {E});
    t.add(b + "time_mix_k_a.weight", {E});
    t.add(b + "time_mix_r_k.weight", {E});
    t.add(b + "time_mix_key.weight", {E, E});
    t.add(b + "time_mix_value.weight", {E, E});
    t.add(b + "time_mix_receptance.weight", {E, E});
    t.add(b + "time_mix_ln.weight", {E}, 1.0f);
    t.add(b + "time_mix_ln.bias", {E}, 0.0f);
    t.add(b + "time_mix_output.weight", {E, E});
    if (arwkv) {
      t.add(b + "ffn_norm.weight", {E}, 1.0f);
      t.add(b + "ffn_gate.weight", {E, ff});
      t.add(b + "ffn_down.weight", {ff, E});
      t.add(b + "ffn_up.weight", {E, ff});
    } else {
      t.add(b + "channel_mix_lerp_k.weight", {E, 1, 1});
      t.add(b + "channel_mix_key.weight", {E, ff});
      t.add(b + "channel_mix_value.weight", {ff, E});
    }
  }
  return w;
}

// --- gated delta-net hybrids ---------------------------------------------
// src/models/qwen3next.cpp, qwen35.cpp and qwen35moe.cpp: layers (il + 1) % 4 != 0 are
// gated delta-net layers (head dim ssm.state_size, n_group K heads,
// time_step_rank V heads, one conv over Q, K and V), the others gated
// attention (Q projection twice as wide: query and gate).
constexpr uint32_t kDnLayers = 8, kDnEmbd = 256, kDnHeads = 4, kDnKvHeads = 2, kDnHeadDim = 64;
constexpr uint32_t kDnState = 32, kDnGroups = 2, kDnVHeads = 4, kDnConv = 4;

enum DeltaNet { kQwen3Next, kQwen35, kQwen35Moe };

GgufWriter delta_net(int variant) {
  const std::string a = variant == kQwen3Next ? "qwen3next" : variant == kQwen35 ? "qwen35" : "qwen35moe";
  const bool moe = variant != kQwen35, fused_ba = variant == kQwen3Next;
  const uint64_t E = kDnEmbd, ff = 512, n_expert = 4, ff_exp = 128, ff_sh = 128;
  const uint64_t key_dim = uint64_t(kDnState) * kDnGroups, value_dim = uint64_t(kDnState) * kDnVHeads;
  const uint64_t conv_dim = 2 * key_dim + value_dim;
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kDnLayers, kDnEmbd, moe ? 0 : uint32_t(ff));
  w.set_u32(a + ".attention.head_count", kDnHeads);
  w.set_u32(a + ".attention.head_count_kv", kDnKvHeads);
  w.set_u32(a + ".attention.key_length", kDnHeadDim);
  w.set_u32(a + ".attention.value_length", kDnHeadDim);
  w.set_u32(a + ".rope.dimension_count", kDnHeadDim / 4);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-6f);
  w.set_u32(a + ".ssm.conv_kernel", kDnConv);
  w.set_u32(a + ".ssm.inner_size", uint32_t(value_dim));
  w.set_u32(a + ".ssm.state_size", kDnState);
  w.set_u32(a + ".ssm.time_step_rank", kDnVHeads);
  w.set_u32(a + ".ssm.group_count", kDnGroups);
  w.set_u32(a + ".full_attention_interval", 4);
  if (moe) {
    w.set_u32(a + ".expert_count", uint32_t(n_expert));
    w.set_u32(a + ".expert_used_count", 2);
    w.set_u32(a + ".expert_feed_forward_length", uint32_t(ff_exp));
    w.set_u32(a + ".expert_shared_feed_forward_length", uint32_t(ff_sh));
  }
  if (variant != kQwen3Next) w.set_arr_i32(a + ".rope.dimension_sections", {3, 3, 2, 0});  // M-RoPE over n_rot / 2 pairs
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kDnLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    t.add(b + "post_attention_norm.weight", {E}, 1.0f);
    if ((i + 1) % 4 == 0) {
      t.add(b + "attn_q.weight", {E, 2ull * kDnHeadDim * kDnHeads});
      t.add(b + "attn_k.weight", {E, uint64_t(kDnHeadDim) * kDnKvHeads});
      t.add(b + "attn_v.weight", {E, uint64_t(kDnHeadDim) * kDnKvHeads});
      t.add(b + "attn_output.weight", {uint64_t(kDnHeadDim) * kDnHeads, E});
      t.add(b + "attn_q_norm.weight", {kDnHeadDim}, 1.0f);
      t.add(b + "attn_k_norm.weight", {kDnHeadDim}, 1.0f);
    } else {
      t.add(b + "attn_qkv.weight", {E, conv_dim});
      t.add(b + "attn_gate.weight", {E, value_dim});
      t.add(b + "ssm_conv1d.weight", {kDnConv, conv_dim});
      t.add(b + "ssm_dt.bias", {kDnVHeads});
      t.add(b + "ssm_a", {kDnVHeads}, -1.0f);
      if (fused_ba) {
        t.add(b + "ssm_ba.weight", {E, 2ull * kDnVHeads});
      } else {
        t.add(b + "ssm_beta.weight", {E, kDnVHeads});
        t.add(b + "ssm_alpha.weight", {E, kDnVHeads});
      }
      t.add(b + "ssm_norm.weight", {kDnState}, 1.0f);
      t.add(b + "ssm_out.weight", {value_dim, E});
    }
    if (moe) {
      t.add(b + "ffn_gate_inp.weight", {E, n_expert});
      t.add(b + "ffn_gate_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_up_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_down_exps.weight", {ff_exp, E, n_expert});
      t.add(b + "ffn_gate_inp_shexp.weight", {E});
      t.add(b + "ffn_gate_shexp.weight", {E, ff_sh});
      t.add(b + "ffn_up_shexp.weight", {E, ff_sh});
      t.add(b + "ffn_down_shexp.weight", {ff_sh, E});
    } else {
      t.add(b + "ffn_gate.weight", {E, ff});
      t.add(b + "ffn_down.weight", {ff, E});
      t.add(b + "ffn_up.weight", {E, ff});
    }
  }
  return w;
}

// --- other hybrids ------------------------------------------------------
constexpr uint32_t kHyLayers = 4, kHyEmbd = 256, kHyHeads = 4, kHyKvHeads = 2, kHyFf = 512;

// src/models/lfm2.cpp and lfm2moe.cpp: layers with head_count_kv 0 are
// short-convolution layers (state: l_cache - 1 rows of n_embd), the others
// attention with Q/K norms; the output norm is stored as token_embd_norm.
// LFM2-MoE: after leading_dense_block_count dense blocks, routed experts.
GgufWriter lfm2(int moe) {
  const std::string a = moe ? "lfm2moe" : "lfm2";
  const uint64_t E = kHyEmbd, hd = kHyEmbd / kHyHeads, l_cache = 3, n_expert = 4, ff_exp = 128;
  const std::vector<int32_t> kv = {0, 0, int32_t(kHyKvHeads), 0};
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, kHyFf);
  w.set_u32(a + ".attention.head_count", kHyHeads);
  w.set_arr_i32(a + ".attention.head_count_kv", kv);
  w.set_u32(a + ".shortconv.l_cache", uint32_t(l_cache));
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  if (moe) {
    w.set_u32(a + ".expert_count", uint32_t(n_expert));
    w.set_u32(a + ".expert_used_count", 2);
    w.set_u32(a + ".expert_feed_forward_length", uint32_t(ff_exp));
    w.set_u32(a + ".leading_dense_block_count", 1);
    w.set_u32(a + ".expert_gating_func", 2);  // sigmoid
  }
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("token_embd_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "ffn_norm.weight", {E}, 1.0f);
    if (moe && i >= 1) {
      t.add(b + "ffn_gate_inp.weight", {E, n_expert});
      t.add(b + "ffn_gate_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_down_exps.weight", {ff_exp, E, n_expert});
      t.add(b + "ffn_up_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "exp_probs_b.bias", {n_expert}, 0.0f);
    } else {
      t.add(b + "ffn_gate.weight", {E, kHyFf});
      t.add(b + "ffn_down.weight", {kHyFf, E});
      t.add(b + "ffn_up.weight", {E, kHyFf});
    }
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if (kv[i] == 0) {
      t.add(b + "shortconv.conv.weight", {l_cache, E});
      t.add(b + "shortconv.in_proj.weight", {E, 3 * E});
      t.add(b + "shortconv.out_proj.weight", {E, E});
    } else {
      t.add(b + "attn_q_norm.weight", {hd}, 1.0f);
      t.add(b + "attn_k_norm.weight", {hd}, 1.0f);
      t.add(b + "attn_q.weight", {E, E});
      t.add(b + "attn_k.weight", {E, hd * kv[i]});
      t.add(b + "attn_v.weight", {E, hd * kv[i]});
      t.add(b + "attn_output.weight", {E, E});
    }
  }
  return w;
}

// src/models/falcon-h1.cpp: every layer has both a Mamba-2 mixer and
// attention, so both a KV cache and a recurrent state (filter_attn and
// filter_recr both true in llama_model::create_memory).
GgufWriter falcon_h1(int) {
  const std::string a = "falcon-h1";
  const uint64_t E = kHyEmbd, hd = kHyEmbd / kHyHeads, d_conv = 4, d_inner = 256, d_state = 16, heads = 4, groups = 1;
  const uint64_t conv_dim = d_inner + 2 * groups * d_state;
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, kHyFf);
  w.set_u32(a + ".attention.head_count", kHyHeads);
  w.set_u32(a + ".attention.head_count_kv", kHyKvHeads);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + ".ssm.conv_kernel", uint32_t(d_conv));
  w.set_u32(a + ".ssm.inner_size", uint32_t(d_inner));
  w.set_u32(a + ".ssm.state_size", uint32_t(d_state));
  w.set_u32(a + ".ssm.time_step_rank", uint32_t(heads));
  w.set_u32(a + ".ssm.group_count", uint32_t(groups));
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "ssm_in.weight", {E, d_inner + conv_dim + heads});
    t.add(b + "ssm_conv1d.weight", {d_conv, conv_dim});
    t.add(b + "ssm_conv1d.bias", {conv_dim});
    t.add(b + "ssm_dt.bias", {heads});
    t.add(b + "ssm_a", {1, heads}, -1.0f);
    t.add(b + "ssm_d", {1, heads}, 1.0f);
    t.add(b + "ssm_norm.weight", {d_inner / groups, groups}, 1.0f);
    t.add(b + "ssm_out.weight", {d_inner, E});
    t.add(b + "attn_q.weight", {E, hd * kHyHeads});
    t.add(b + "attn_k.weight", {E, hd * kHyKvHeads});
    t.add(b + "attn_v.weight", {E, hd * kHyKvHeads});
    t.add(b + "attn_output.weight", {hd * kHyHeads, E});
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    t.add(b + "ffn_norm", {E}, 1.0f);  // tn(LLM_TENSOR_FFN_NORM, i): no ".weight" in this loader
    t.add(b + "ffn_gate.weight", {E, kHyFf});
    t.add(b + "ffn_down.weight", {kHyFf, E});
    t.add(b + "ffn_up.weight", {E, kHyFf});
  }
  return w;
}

// src/models/kimi-linear.cpp: layers with head_count_kv 0 are Kimi Delta
// Attention (conv states of Q, K and V, a head_dim^2 state per head), the
// others MLA attention (split K/V up-projections: the latent KV cache);
// a dense first block, MoE after it.
GgufWriter kimi_linear(int) {
  const std::string a = "kimi-linear";
  const uint64_t E = kHyEmbd, H = kHyHeads, kda = 64, d_conv = 4, lora = 64, rope = 32, nope = 64, vdim = 64;
  const uint64_t n_expert = 4, ff_exp = 128;
  const std::vector<int32_t> kv = {0, 0, 0, 1};
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, kHyFf);
  w.set_u32(a + ".attention.head_count", uint32_t(H));
  w.set_arr_i32(a + ".attention.head_count_kv", kv);
  w.set_u32(a + ".attention.key_length", uint32_t(lora + rope));
  w.set_u32(a + ".attention.value_length", uint32_t(lora));
  w.set_u32(a + ".attention.key_length_mla", uint32_t(nope + rope));
  w.set_u32(a + ".attention.value_length_mla", uint32_t(vdim));
  w.set_u32(a + ".attention.kv_lora_rank", uint32_t(lora));
  w.set_u32(a + ".rope.dimension_count", uint32_t(rope));
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + ".ssm.conv_kernel", uint32_t(d_conv));
  w.set_u32(a + ".kda.head_dim", uint32_t(kda));
  w.set_u32(a + ".expert_count", uint32_t(n_expert));
  w.set_u32(a + ".expert_used_count", 2);
  w.set_u32(a + ".expert_feed_forward_length", uint32_t(ff_exp));
  w.set_u32(a + ".expert_shared_count", 1);
  w.set_u32(a + ".leading_dense_block_count", 1);
  w.set_u32(a + ".expert_gating_func", 2);  // sigmoid
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if (kv[i] == 0) {
      t.add(b + "ssm_conv1d_q.weight", {d_conv, 1, kda * H});
      t.add(b + "ssm_conv1d_k.weight", {d_conv, 1, kda * H});
      t.add(b + "ssm_conv1d_v.weight", {d_conv, 1, kda * H});
      t.add(b + "attn_q.weight", {E, kda * H});
      t.add(b + "attn_k.weight", {E, kda * H});
      t.add(b + "attn_v.weight", {E, kda * H});
      t.add(b + "ssm_f_a.weight", {E, kda});
      t.add(b + "ssm_f_b.weight", {kda, kda * H});
      t.add(b + "ssm_beta.weight", {E, H});
      t.add(b + "ssm_a", {1, H}, -1.0f);
      t.add(b + "ssm_dt.bias", {kda * H});
      t.add(b + "ssm_g_a.weight", {E, kda});
      t.add(b + "ssm_g_b.weight", {kda, kda * H});
      t.add(b + "ssm_norm.weight", {kda}, 1.0f);
      t.add(b + "attn_output.weight", {kda * H, E});
    } else {
      t.add(b + "attn_kv_a_norm.weight", {lora}, 1.0f);
      t.add(b + "attn_q.weight", {E, H * (nope + rope)});
      t.add(b + "attn_kv_a_mqa.weight", {E, lora + rope});
      t.add(b + "attn_k_b.weight", {nope, lora, H});
      t.add(b + "attn_v_b.weight", {lora, vdim, H});
      t.add(b + "attn_output.weight", {H * vdim, E});
    }
    t.add(b + "ffn_norm.weight", {E}, 1.0f);
    if (i == 0) {
      t.add(b + "ffn_gate.weight", {E, kHyFf});
      t.add(b + "ffn_down.weight", {kHyFf, E});
      t.add(b + "ffn_up.weight", {E, kHyFf});
    } else {
      t.add(b + "ffn_gate_inp.weight", {E, n_expert});
      t.add(b + "ffn_gate_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_down_exps.weight", {ff_exp, E, n_expert});
      t.add(b + "ffn_up_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_gate_shexp.weight", {E, ff_exp});
      t.add(b + "ffn_down_shexp.weight", {ff_exp, E});
      t.add(b + "ffn_up_shexp.weight", {E, ff_exp});
      t.add(b + "exp_probs_b.bias", {n_expert}, 0.0f);
    }
  }
  return w;
}

// src/models/bailingmoe3.cpp: Ling-2.5's KDA layers (head_count_kv 0; a
// full-rank forget gate, no f_b/g_b) and gated MLA layers, MoE after a
// dense first block; the same state and latent-cache rules as Kimi-Linear.
GgufWriter bailingmoe3(int) {
  const std::string a = "bailingmoe3";
  const uint64_t E = kHyEmbd, H = kHyHeads, kda = 64, d_inner = kda * H, d_conv = 4, lora = 64, rope = 32, nope = 64,
                 vdim = 64, n_expert = 4, ff_exp = 128;
  const std::vector<int32_t> kv = {0, 0, 0, 1};
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, kHyFf);
  w.set_u32(a + ".attention.head_count", uint32_t(H));
  w.set_arr_i32(a + ".attention.head_count_kv", kv);
  w.set_u32(a + ".attention.key_length", uint32_t(lora + rope));
  w.set_u32(a + ".attention.value_length", uint32_t(lora));
  w.set_u32(a + ".attention.key_length_mla", uint32_t(nope + rope));
  w.set_u32(a + ".attention.value_length_mla", uint32_t(vdim));
  w.set_u32(a + ".attention.kv_lora_rank", uint32_t(lora));
  w.set_u32(a + ".rope.dimension_count", uint32_t(rope));
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + ".ssm.conv_kernel", uint32_t(d_conv));
  w.set_u32(a + ".kda.head_dim", uint32_t(kda));
  w.set_f32(a + ".kda.gate_lower_bound", -5.0f);
  w.set_u32(a + ".expert_count", uint32_t(n_expert));
  w.set_u32(a + ".expert_used_count", 2);
  w.set_u32(a + ".expert_feed_forward_length", uint32_t(ff_exp));
  w.set_u32(a + ".expert_shared_count", 1);
  w.set_u32(a + ".leading_dense_block_count", 1);
  w.set_u32(a + ".expert_gating_func", 2);  // sigmoid
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if (kv[i] == 0) {
      t.add(b + "ssm_conv1d_q.weight", {d_conv, 1, d_inner, 1});
      t.add(b + "ssm_conv1d_k.weight", {d_conv, 1, d_inner, 1});
      t.add(b + "ssm_conv1d_v.weight", {d_conv, 1, d_inner, 1});
      t.add(b + "attn_q.weight", {E, d_inner});
      t.add(b + "attn_k.weight", {E, d_inner});
      t.add(b + "attn_v.weight", {E, d_inner});
      t.add(b + "ssm_f_a.weight", {E, d_inner});
      t.add(b + "ssm_beta.weight", {E, H});
      t.add(b + "ssm_a", {1, H}, -1.0f);
      t.add(b + "ssm_dt.bias", {d_inner});
      t.add(b + "ssm_g_a.weight", {E, d_inner});
      t.add(b + "ssm_norm.weight", {kda}, 1.0f);
      t.add(b + "attn_output.weight", {d_inner, E});
    } else {
      t.add(b + "attn_q.weight", {E, H * (nope + rope)});
      t.add(b + "attn_kv_a_mqa.weight", {E, lora + rope});
      t.add(b + "attn_kv_a_norm.weight", {lora}, 1.0f);
      t.add(b + "attn_k_b.weight", {nope, lora, H});
      t.add(b + "attn_v_b.weight", {lora, vdim, H});
      t.add(b + "attn_gate.weight", {E, H});
      t.add(b + "attn_output.weight", {H * vdim, E});
    }
    t.add(b + "ffn_norm.weight", {E}, 1.0f);
    if (i == 0) {
      t.add(b + "ffn_gate.weight", {E, kHyFf});
      t.add(b + "ffn_up.weight", {E, kHyFf});
      t.add(b + "ffn_down.weight", {kHyFf, E});
    } else {
      t.add(b + "ffn_gate_inp.weight", {E, n_expert});
      t.add(b + "exp_probs_b.bias", {n_expert}, 0.0f);
      t.add(b + "ffn_gate_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_up_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_down_exps.weight", {ff_exp, E, n_expert});
      t.add(b + "ffn_gate_shexp.weight", {E, ff_exp});
      t.add(b + "ffn_up_shexp.weight", {E, ff_exp});
      t.add(b + "ffn_down_shexp.weight", {ff_exp, E});
    }
  }
  return w;
}

// src/models/nemotron-h.cpp: three kinds of layer, told apart by
// head_count_kv and feed_forward_length: Mamba-2 (both 0), attention (KV
// heads, no FFN) and MLP (an FFN, no KV heads; neither state nor KV).
// Nemotron-H MoE (the same loader with expert_count set): the FFN layers
// are routed experts with a shared expert, up and down projections only.
GgufWriter nemotron_h(int moe) {
  const std::string a = moe ? "nemotron_h_moe" : "nemotron_h";
  const uint64_t n_expert = 4, ff_exp = 128, ff_sh = 128;
  const uint64_t E = kHyEmbd, hd = kHyEmbd / kHyHeads, d_conv = 4, d_inner = 512, d_state = 16, heads = 8, groups = 2;
  const uint64_t conv_dim = d_inner + 2 * groups * d_state;
  const std::vector<int32_t> kv = {0, int32_t(kHyKvHeads), 0, 0}, ff = {0, 0, int32_t(kHyFf), 0};
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, 0);
  w.set_arr_i32(a + ".feed_forward_length", ff);
  w.set_u32(a + ".attention.head_count", kHyHeads);
  w.set_arr_i32(a + ".attention.head_count_kv", kv);
  w.set_f32(a + ".attention.layer_norm_epsilon", 1e-5f);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + ".ssm.conv_kernel", uint32_t(d_conv));
  w.set_u32(a + ".ssm.inner_size", uint32_t(d_inner));
  w.set_u32(a + ".ssm.state_size", uint32_t(d_state));
  w.set_u32(a + ".ssm.time_step_rank", uint32_t(heads));
  w.set_u32(a + ".ssm.group_count", uint32_t(groups));
  if (moe) {
    w.set_u32(a + ".expert_count", uint32_t(n_expert));
    w.set_u32(a + ".expert_used_count", 2);
    w.set_u32(a + ".expert_feed_forward_length", uint32_t(ff_exp));
    w.set_u32(a + ".expert_shared_feed_forward_length", uint32_t(ff_sh));
  }
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if (moe && ff[i] != 0) {
      t.add(b + "ffn_gate_inp.weight", {E, n_expert});
      t.add(b + "exp_probs_b.bias", {n_expert}, 0.0f);
      t.add(b + "ffn_down_exps.weight", {ff_exp, E, n_expert});
      t.add(b + "ffn_up_exps.weight", {E, ff_exp, n_expert});
      t.add(b + "ffn_down_shexp.weight", {ff_sh, E});
      t.add(b + "ffn_up_shexp.weight", {E, ff_sh});
    } else if (kv[i] == 0 && ff[i] == 0) {
      t.add(b + "ssm_in.weight", {E, 2 * d_inner + 2 * groups * d_state + heads});
      t.add(b + "ssm_conv1d.weight", {d_conv, conv_dim});
      t.add(b + "ssm_conv1d.bias", {conv_dim});
      t.add(b + "ssm_dt.bias", {heads});
      t.add(b + "ssm_a", {1, heads}, -1.0f);
      t.add(b + "ssm_d", {1, heads}, 1.0f);
      t.add(b + "ssm_norm.weight", {d_inner / groups, groups}, 1.0f);
      t.add(b + "ssm_out.weight", {d_inner, E});
    } else if (ff[i] == 0) {
      t.add(b + "attn_q.weight", {E, hd * kHyHeads});
      t.add(b + "attn_k.weight", {E, hd * kv[i]});
      t.add(b + "attn_v.weight", {E, hd * kv[i]});
      t.add(b + "attn_output.weight", {hd * kHyHeads, E});
    } else {
      t.add(b + "ffn_down.weight", {uint64_t(ff[i]), E});
      t.add(b + "ffn_up.weight", {E, uint64_t(ff[i])});
    }
  }
  return w;
}

// src/models/minimax-01.cpp: lightning (linear) attention in every layer
// but each full_attention_interval-th (state: head_dim^2 per head, no conv),
// MoE FFN in every layer.
GgufWriter minimax_01(int) {
  const std::string a = "minimax-01";
  const uint64_t E = kHyEmbd, hd = kHyEmbd / kHyHeads, H = kHyHeads, n_expert = 4, ff = 128, layers = 8;
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, uint32_t(layers), kHyEmbd, uint32_t(ff));
  w.set_u32(a + ".attention.head_count", kHyHeads);
  w.set_u32(a + ".attention.head_count_kv", kHyKvHeads);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_f32(a + ".residual_scale", 1.0f);
  w.set_u32(a + ".full_attention_interval", 8);
  w.set_u32(a + ".expert_count", uint32_t(n_expert));
  w.set_u32(a + ".expert_used_count", 2);
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if ((i + 1) % 8 == 0) {
      t.add(b + "attn_q.weight", {E, hd * H});
      t.add(b + "attn_k.weight", {E, hd * kHyKvHeads});
      t.add(b + "attn_v.weight", {E, hd * kHyKvHeads});
    } else {
      t.add(b + "attn_norm_2.weight", {hd * H}, 1.0f);
      t.add(b + "attn_qkv.weight", {E, 3 * hd * H});
      t.add(b + "attn_gate.weight", {E, hd * H});
    }
    t.add(b + "attn_output.weight", {hd * H, E});
    t.add(b + "ffn_norm.weight", {E}, 1.0f);
    t.add(b + "ffn_gate_inp.weight", {E, n_expert});
    t.add(b + "ffn_gate_exps.weight", {E, ff, n_expert});
    t.add(b + "ffn_down_exps.weight", {ff, E, n_expert});
    t.add(b + "ffn_up_exps.weight", {E, ff, n_expert});
  }
  return w;
}

// src/models/granite-hybrid.cpp: layers with head_count_kv 0 are Mamba-2
// (d_inner = 2 n_embd), the others attention; a dense FFN in every layer.
GgufWriter granite_hybrid(int) {
  const std::string a = "granitehybrid";
  const uint64_t E = kHyEmbd, hd = kHyEmbd / kHyHeads, d_conv = 4, d_inner = 2 * kHyEmbd, d_state = 16, heads = 8, groups = 1;
  const uint64_t conv_dim = d_inner + 2 * groups * d_state;
  const std::vector<int32_t> kv = {0, 0, 0, int32_t(kHyKvHeads)};
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, kHyFf);
  w.set_u32(a + ".attention.head_count", kHyHeads);
  w.set_arr_i32(a + ".attention.head_count_kv", kv);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + ".ssm.conv_kernel", uint32_t(d_conv));
  w.set_u32(a + ".ssm.inner_size", uint32_t(d_inner));
  w.set_u32(a + ".ssm.state_size", uint32_t(d_state));
  w.set_u32(a + ".ssm.time_step_rank", uint32_t(heads));
  w.set_u32(a + ".ssm.group_count", uint32_t(groups));
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if (kv[i] == 0) {
      t.add(b + "ssm_in.weight", {E, 2 * d_inner + 2 * groups * d_state + heads});
      t.add(b + "ssm_conv1d.weight", {d_conv, conv_dim});
      t.add(b + "ssm_conv1d.bias", {conv_dim});
      t.add(b + "ssm_dt.bias", {heads});
      t.add(b + "ssm_a", {1, heads}, -1.0f);
      t.add(b + "ssm_d", {1, heads}, 1.0f);
      t.add(b + "ssm_norm.weight", {d_inner / groups, groups}, 1.0f);
      t.add(b + "ssm_out.weight", {d_inner, E});
    } else {
      t.add(b + "attn_q.weight", {E, hd * kHyHeads});
      t.add(b + "attn_k.weight", {E, hd * kv[i]});
      t.add(b + "attn_v.weight", {E, hd * kv[i]});
      t.add(b + "attn_output.weight", {hd * kHyHeads, E});
    }
    t.add(b + "ffn_norm.weight", {E}, 1.0f);
    t.add(b + "ffn_gate.weight", {E, kHyFf});
    t.add(b + "ffn_down.weight", {kHyFf, E});
    t.add(b + "ffn_up.weight", {E, kHyFf});
  }
  return w;
}

// src/models/plamo2.cpp: layers with head_count_kv 0 are Mamba layers with
// time_step_rank heads and one conv over d_inner (group_count 0), the
// others attention with a fused QKV and per-head Q/K norms; the norms named
// by tn(tensor, il) have no ".weight".
GgufWriter plamo2(int) {
  const std::string a = "plamo2";
  const uint64_t E = kHyEmbd, hd = kHyEmbd / kHyHeads, H = kHyHeads, d_conv = 4, d_inner = 512, d_state = 16, heads = 8;
  const uint64_t dt_dim = std::max<uint64_t>(64, E / 16);
  const std::vector<int32_t> kv = {0, int32_t(kHyKvHeads), 0, int32_t(kHyKvHeads)};
  GgufWriter w = test::tiny_writer(a, kVocab);
  base_keys(w, a, kHyLayers, kHyEmbd, kHyFf);
  w.set_u32(a + ".attention.head_count", kHyHeads);
  w.set_arr_i32(a + ".attention.head_count_kv", kv);
  w.set_u32(a + ".attention.key_length", uint32_t(hd));
  w.set_u32(a + ".attention.value_length", uint32_t(hd));
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-6f);
  w.set_u32(a + ".ssm.conv_kernel", uint32_t(d_conv));
  w.set_u32(a + ".ssm.inner_size", uint32_t(d_inner));
  w.set_u32(a + ".ssm.state_size", uint32_t(d_state));
  w.set_u32(a + ".ssm.time_step_rank", uint32_t(heads));
  w.set_u32(a + ".ssm.group_count", 0);
  TensorFiller t{w};
  t.add("token_embd.weight", {E, kVocab});
  t.add("output_norm.weight", {E}, 1.0f);
  t.add("output.weight", {E, kVocab});
  for (uint32_t i = 0; i < kHyLayers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {E}, 1.0f);
    if (kv[i] == 0) {
      t.add(b + "ssm_in.weight", {E, 2 * d_inner});
      t.add(b + "ssm_conv1d.weight", {d_conv, d_inner});
      t.add(b + "ssm_x.weight", {d_inner, dt_dim + 2 * d_state});
      t.add(b + "ssm_dt.weight", {dt_dim, heads});
      t.add(b + "ssm_dt.bias", {heads});
      t.add(b + "ssm_a", {heads}, -1.0f);
      t.add(b + "ssm_d", {heads}, 1.0f);
      t.add(b + "ssm_out.weight", {d_inner, E});
      t.add(b + "ssm_dt_norm", {dt_dim}, 1.0f);
      t.add(b + "ssm_b_norm", {d_state}, 1.0f);
      t.add(b + "ssm_c_norm", {d_state}, 1.0f);
    } else {
      t.add(b + "attn_qkv.weight", {E, hd * H + 2 * hd * kv[i]});
      t.add(b + "attn_q_norm.weight", {hd, H}, 1.0f);
      t.add(b + "attn_k_norm.weight", {hd, uint64_t(kv[i])}, 1.0f);
      t.add(b + "attn_output.weight", {H * hd, E});
    }
    t.add(b + "post_attention_norm", {E}, 1.0f);
    t.add(b + "ffn_norm.weight", {E}, 1.0f);
    t.add(b + "ffn_down.weight", {kHyFf, E});
    t.add(b + "ffn_up.weight", {E, 2ull * kHyFf});
    t.add(b + "post_ffw_norm", {E}, 1.0f);
  }
  return w;
}

// --- measuring --------------------------------------------------------------
// The recurrent-state buffer is not in measure.mjs's JSON; it is read from
// the engine's log (test::read_engine_log).

constexpr double kMiBd = 1024.0 * 1024.0;
// A figure printed with "%.2f MiB" is within half a unit of its last digit;
// the RS and output buffers of these tiny models are a fraction of a MiB, so
// they are compared at that precision (the 1% band is below it).
constexpr double kPrinted = 0.005 + 1e-9;

double mib_sum(const json& j) {
  double s = 0;
  if (j.is_object())
    for (auto& [k, v] : j.items()) s += v.get<double>();
  return s * 1024 * 1024;
}

// node-llama-cpp's context rules (docs/fit-llamacpp.md §1) as aimem settings.
// Flash attention: "auto" (llama.cpp enables it on the CPU) unless the K and
// V head sizes differ, where node-llama-cpp turns it off itself
// (GgufInsights.flashAttentionSupported).
FitSettings nlc_settings(uint32_t ctx, uint32_t seqs, uint32_t n_ctx_train, bool fa) {
  auto pad256 = [](uint32_t x) { return (x + 255) / 256 * 256; };
  FitSettings s;
  s.runtime = Runtime::kLlamaCpp;
  s.device_cpu = true;
  s.ctx = ctx <= n_ctx_train && pad256(ctx) < n_ctx_train ? pad256(ctx) : ctx;
  s.concurrency = seqs;
  s.batch = s.ubatch = std::max(std::min(s.ctx * seqs, 512u), seqs);
  s.unified_kv = false;
  s.flash_attn = fa;
  s.kv_type = "f16";
  return s;
}

struct Arch {
  const char* name;
  GgufWriter (*make)(int);
  int variant;
  bool has_kv;  // hybrid: attention layers with a KV cache
  bool fa = true;  // false: key_length != value_length (node-llama-cpp turns flash attention off)
};

TEST(FitLlamaCppLinear, RwkvAndDeltaNetMatchTheBuffersTheRealEngineLogs) {
  const std::string modules = AIMEM_NODE_MODULES;
  ASSERT_TRUE(fs::exists(modules + "/node-llama-cpp/package.json"))
      << "node-llama-cpp is not installed under " << modules << ": run `make node-deps`";
  char tmpl[] = "/tmp/aimem-nlc-lin-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const Arch archs[] = {
      {"rwkv6", rwkv6, 0, false},            {"rwkv6qwen2", rwkv6, 1, false},
      {"rwkv7", rwkv7, 0, false},            {"arwkv7", rwkv7, 1, false},
      {"qwen3next", delta_net, kQwen3Next, true}, {"qwen35", delta_net, kQwen35, true},
      {"qwen35moe", delta_net, kQwen35Moe, true},
      {"lfm2", lfm2, 0, true},               {"lfm2moe", lfm2, 1, true},
      {"falcon-h1", falcon_h1, 0, true},
      {"kimi-linear", kimi_linear, 0, true, false}, {"bailingmoe3", bailingmoe3, 0, true, false},
      {"nemotron_h", nemotron_h, 0, true},   {"nemotron_h_moe", nemotron_h, 1, true},
      {"minimax-01", minimax_01, 0, true},
      {"granitehybrid", granite_hybrid, 0, true}, {"plamo2", plamo2, 0, true},
  };
  const uint32_t settings[][2] = {{512, 1}, {2048, 3}};  // context, sequences
  Hardware hw;
  hw.cpu_amx = test::host_has_amx();
  auto err = [](double a, double b) { return b == 0 ? (a == 0 ? 0.0 : 1.0) : (a - b) / b; };
  std::string table = fmt::format("\n{:<14} {:>9} | {:>8} {:>7} | {:>7} {:>7} | {:>6} {:>7} | {:>7} {:>7} | {:>6} {:>7} | {:>8} {:>7}\n",
                                  "arch", "ctx x seq", "weights", "err", "KV", "err", "RS eng", "aimem", "compute", "err",
                                  "out eng", "aimem", "total", "err");
  // Every model is written first and every load measured in one node process.
  std::vector<test::MeasureJob> jobs;
  for (const Arch& arch : archs) {
    const std::string path = fmt::format("{}/{}.gguf", dir, arch.name);
    auto written = arch.make(arch.variant).write(path);
    ASSERT_TRUE(written) << arch.name << ": " << written.error().message;
    for (const auto& [ctx, seqs] : settings)
      jobs.push_back({path, json{{"contextSize", ctx}, {"sequences", seqs}, {"gpuLayers", 0}},
                      fmt::format("{}.{}x{}.log", path, ctx, seqs)});
  }
  const std::vector<test::Measured> measured = test::measure_batch(AIMEM_SOURCE_DIR, jobs, modules, dir + "/jobs.json");
  size_t job = 0;
  for (const Arch& arch : archs) {
    const std::string path = fmt::format("{}/{}.gguf", dir, arch.name);
    auto spec = load_model(local_files(), path, "", "");
    ASSERT_TRUE(spec) << arch.name << ": " << spec.error().message;
    ASSERT_FALSE(spec->recurrent_r.empty()) << arch.name << ": aimem found no recurrent layers";
    for (const auto& [ctx, seqs] : settings) {
      const std::string label = fmt::format("{} ctx {} x {}", arch.name, ctx, seqs);
      const std::string& log = jobs[job].log;
      const std::string& cmd = measured[job].command;
      json r = measured[job++].result;
      ASSERT_TRUE(r.is_object() && r.contains("engine")) << label << ": measure.mjs failed: " << cmd << "\n"
                                                         << (r.is_object() ? r.dump() : "");
      const json& e = r["engine"];
      const test::EngineLog rs_log = test::read_engine_log(log);
      ASSERT_TRUE(rs_log.rs_mib && rs_log.r_mib && rs_log.s_mib) << label << ": no RS buffer in the engine's log " << log;
      const double ew = mib_sum(e["model_buffers_mib"]), ekv = mib_sum(e["kv_buffers_mib"]);
      const double ers = *rs_log.rs_mib * kMiBd, eo = mib_sum(e["output_buffers_mib"]);
      const double ec = mib_sum(e.contains("compute_buffers_mib_4dp") && !e["compute_buffers_mib_4dp"].empty()
                                    ? e["compute_buffers_mib_4dp"] : e["compute_buffers_mib"]);
      EXPECT_EQ(ekv > 0, arch.has_kv) << label << ": the engine's KV buffer";

      Plan p = plan_once(*spec, nlc_settings(ctx, seqs, spec->n_ctx_train, arch.fa), hw, {});
      double w = 0, kv = 0, rs = 0, comp = 0, out = 0;
      for (const Term& t : p.terms) {
        if (t.component == "weights") w += double(t.bytes);
        if (t.component == "kv_cache") (t.what.rfind("recurrent state", 0) == 0 ? rs : kv) += double(t.bytes);
        if (t.component == "compute") comp += double(t.bytes);
        if (t.what.rfind("output buffer", 0) == 0) out += double(t.bytes);
      }
      const double etotal = ew + ekv + ers + ec + eo, total = w + kv + rs + comp + out;
      table += fmt::format("{:<14} {:>4} x {:<2} | {:>6.2f}Mi {:>+6.2f}% | {:>5.2f}Mi {:>+6.2f}% | {:>6.2f} {:>7.3f} | "
                           "{:>5.2f}Mi {:>+6.1f}% | {:>6.2f} {:>7.3f} | {:>6.2f}Mi {:>+6.2f}%\n",
                           arch.name, ctx, seqs, ew / kMiBd, err(w, ew) * 100, ekv / kMiBd, err(kv, ekv) * 100,
                           ers / kMiBd, rs / kMiBd, ec / kMiBd, err(comp, ec) * 100, eo / kMiBd, out / kMiBd,
                           etotal / kMiBd, err(total, etotal) * 100);
      EXPECT_LE(std::fabs(err(w, ew)), 0.01) << label << ": weights";
      // KV within 1%, or within the printed precision where that is coarser
      // (Kimi-Linear's one MLA layer caches 0.094 MiB at 512 cells).
      EXPECT_LE(std::fabs(kv - ekv), std::max(0.01 * ekv, kPrinted * kMiBd)) << label << ": KV cache";
      EXPECT_NEAR(rs / kMiBd, *rs_log.rs_mib, kPrinted) << label << ": recurrent state (RS buffer)";
      double r_bytes = 0, s_bytes = 0;
      for (size_t il = 0; il < spec->recurrent_r.size(); ++il) {
        r_bytes += double(spec->recurrent_r[il]) * 4 * seqs;
        s_bytes += double(spec->recurrent_s[il]) * 4 * seqs;
      }
      EXPECT_EQ(rs, r_bytes + s_bytes) << label;
      EXPECT_NEAR(r_bytes / kMiBd, *rs_log.r_mib, kPrinted) << label << ": R (conv / token-shift state)";
      EXPECT_NEAR(s_bytes / kMiBd, *rs_log.s_mib, kPrinted) << label << ": S (WKV / delta-net state)";
      // aimem does not replay these graphs (the llama replay stands in), so
      // compute is held to the band the plan states for it, not to the 10%
      // of the replayed llama graphs; everything else to 1%.
      double band = 0;
      for (const Term& t : p.terms)
        if (t.component == "compute") band = std::max(band, t.band);
      EXPECT_GE(band, std::fabs(err(comp, ec))) << label << ": compute outside the plan's own band";
      EXPECT_LE(std::fabs(err(total - comp, etotal - ec)), 0.01) << label << ": total without compute";
      EXPECT_LE(std::fabs(total - etotal), 0.03 * etotal + band * ec) << label << ": total";
      EXPECT_NEAR(out / kMiBd, eo / kMiBd, kPrinted) << label << ": output buffer";
      if (e.contains("max_nodes")) {
        const uint32_t nodes = e["max_nodes"].get<uint32_t>();
        bool found = false;
        for (const Term& t : p.terms)
          if (t.what.rfind("graph metadata", 0) == 0) {
            found = true;
            EXPECT_NE(t.what.find(fmt::format(" {} nodes", nodes)), std::string::npos)
                << label << ": engine max_nodes " << nodes << ", aimem: " << t.what;
          }
        EXPECT_TRUE(found) << label << ": no graph metadata term";
      }
    }
  }
  table += "(engine: llama.cpp v0.5.0 via node-llama-cpp 3.22.1, CPU; engine MiB as logged (RS and output: engine MiB to 2 decimals beside aimem to 3), err = aimem vs engine)\n";
  std::cout << table;
  if (!getenv("AIMEM_KEEP_ENGINE_LOGS")) fs::remove_all(dir);  // set it to read the engine's logs
}

}  // namespace
}  // namespace aimem::fit
