// config.json -> ModelSpec: the architecture's numbers (nested text configs
// of multimodal models, per-family defaults, MLA, MoE, sliding windows), the
// storage format, and the weights counted from the shapes (hf_weights.cc).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "fit/hf.h"
#include "fit/hf_parts.h"

namespace aimem::fit::hf {
namespace {

bool in_list(const json* list, uint32_t il) {
  if (!list || !list->is_array()) return false;
  for (const auto& e : *list)
    if (as_u64(e) == std::optional<uint64_t>(il)) return true;
  return false;
}

constexpr uint64_t kMaxLayers = 4096, kMaxWidth = 1u << 20, kMaxHeads = 1u << 16;

// Multimodal models keep the language model's numbers in a nested config.
const json* find_text_config(const json& config, std::string& key) {
  for (const char* k : {"text_config", "llm_config", "language_config", "text_model"}) {
    auto it = config.find(k);
    if (it != config.end() && it->is_object()) {
      key = k;
      return &*it;
    }
  }
  return nullptr;
}

// A ModelSpec from a config.json object, one job per step, in the order the
// steps read the config: the attention shape, the storage dtype, the MLP and
// MoE layout, the sliding window, the quantization, then the weights counted
// from the shapes. Fields keeps the first type error; each step returns at the
// same points as the one function it was split from, so that a config with
// several faults is named by the same first fault.
class ConfigSpec {
 public:
  ConfigSpec(const json& config, const std::string& name, const std::string& where)
      : config_(config), where_(where), text_cfg_(find_text_config(config, text_key_)),
        f_(config, text_cfg_, where) {
    m_.name = name;
    m_.source = "config";
  }

  Result<ModelSpec> build(const std::string& dtype_override, const std::string& quant_override) {
    model_types();
    if (auto e = attention()) return *e;
    if (auto e = storage_dtype()) return *e;
    arch_from_attention();
    if (auto e = mlp_and_experts()) return *e;
    if (auto e = layer_shapes()) return *e;
    if (auto e = sliding_window()) return *e;
    if (auto e = nextn_note()) return *e;
    auto q = quantization(dtype_override, quant_override);
    if (!q) return q.error();
    if (auto e = refuse_impossible_size()) return *e;
    weights_from_shapes(*q);
    if (!text_key_.empty())
      m_.notes.push_back(fmt::format("language model numbers read from '{}'", text_key_));
    return std::move(m_);
  }

 private:
  bool type_is(std::initializer_list<std::string_view> types) const {
    for (auto t : types)
      if (model_type_ == t || top_type_ == t) return true;
    return false;
  }
  // Fields that real Gemma 3 configs leave to Gemma3TextConfig's defaults.
  std::optional<uint32_t> defaulted(std::optional<uint32_t> v, uint32_t def, const char* key) {
    if (v || !gemma3_) return v;
    m_.notes.push_back(fmt::format("'{}' absent: transformers' Gemma3TextConfig default {}", key, def));
    return std::optional<uint32_t>(def);
  }
  std::optional<Error> field_error() const {
    if (f_.error().empty()) return std::nullopt;
    return make_error(f_.error());
  }

  void model_types() {
    model_type_ = f_.string("model_type").value_or("");
    if (auto it = config_.find("model_type"); it != config_.end() && it->is_string())
      top_type_ = it->get<std::string>();
    m_.architecture = top_type_.empty() ? model_type_ : top_type_;
    gemma3_ = type_is({"gemma3", "gemma3_text"});
  }

  // Layers, width, heads, vocabulary, KV heads, head size, training context.
  std::optional<Error> attention() {
    auto n_layer = f_.count({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, kMaxLayers,
                            "num_hidden_layers");
    auto n_embd = f_.count({"hidden_size", "n_embd", "d_model"}, kMaxWidth, "hidden_size");
    auto n_head = defaulted(f_.count({"num_attention_heads", "n_head", "num_heads"}, kMaxHeads,
                                     "num_attention_heads"), 8, "num_attention_heads");
    auto n_vocab = defaulted(f_.count({"vocab_size", "padded_vocab_size"}, 1u << 26, "vocab_size"),
                             262208, "vocab_size");
    if (auto e = field_error()) return e;
    if (!n_layer) return make_error(fmt::format("{}: missing 'num_hidden_layers'", where_));
    if (!n_embd) return make_error(fmt::format("{}: missing 'hidden_size'", where_));
    if (!n_head) return make_error(fmt::format("{}: missing 'num_attention_heads'", where_));
    if (!n_vocab) return make_error(fmt::format("{}: missing 'vocab_size'", where_));
    if (*n_layer == 0 || *n_embd == 0 || *n_head == 0)
      return make_error(fmt::format("{}: num_hidden_layers, hidden_size and num_attention_heads must "
                                    "be positive", where_));
    m_.n_layer = *n_layer;
    m_.n_embd = *n_embd;
    m_.n_head = *n_head;
    m_.n_vocab = *n_vocab;

    // KV heads: GQA field, Falcon's multi_query, ChatGLM's group count.
    uint32_t n_kv = m_.n_head;
    std::vector<uint32_t> kv_list;
    if (const json* v = f_.find("num_key_value_heads"); v && v->is_array()) {
      for (const auto& e : *v) {
        if (!as_u64(e) || *as_u64(e) > kMaxHeads)
          return make_error(fmt::format("{}: 'num_key_value_heads' holds {}, expected head counts",
                                        where_, Fields::describe(e)));
        kv_list.push_back(static_cast<uint32_t>(*as_u64(e)));
      }
      if (kv_list.size() != m_.n_layer)
        return make_error(fmt::format("{}: 'num_key_value_heads' lists {} layers, num_hidden_layers is {}",
                                      where_, kv_list.size(), m_.n_layer));
    } else if (auto kv = defaulted(f_.count({"num_key_value_heads", "n_head_kv", "num_kv_heads",
                                             "multi_query_group_num"}, kMaxHeads, "num_key_value_heads"),
                                   4, "num_key_value_heads")) {
      if (*kv > 0) n_kv = *kv;
    } else if (f_.boolean("multi_query").value_or(false)) {
      n_kv = 1;
    }
    if (auto e = field_error()) return e;
    if (kv_list.empty() && m_.n_head % n_kv != 0)
      m_.notes.push_back(fmt::format("num_attention_heads {} is not a multiple of num_key_value_heads {}",
                                     m_.n_head, n_kv));
    m_.n_head_kv = kv_list.empty() ? std::vector<uint32_t>(m_.n_layer, n_kv) : kv_list;
    if (kv_list.empty() && n_kv == 1 && m_.n_head > 1) m_.notes.push_back("multi-query attention (1 KV head)");

    auto head_dim = defaulted(f_.count({"head_dim", "kv_channels"}, kMaxWidth, "head_dim"), 256, "head_dim");
    if (auto e = field_error()) return e;
    head_dim_ = head_dim && *head_dim > 0 ? *head_dim : m_.n_embd / m_.n_head;
    m_.head_dim_k = m_.head_dim_v = head_dim_;

    auto ctx = defaulted(f_.count({"max_position_embeddings", "n_positions", "seq_length",
                                   "max_sequence_length", "max_seq_len", "model_max_length"},
                                  1ull << 31, "max_position_embeddings"),
                         131072, "max_position_embeddings");
    m_.n_ctx_train = ctx.value_or(0);
    if (!ctx) m_.notes.push_back("no max_position_embeddings: training context unknown");
    return std::nullopt;
  }

  // The dtype of the checkpoint's floats, and whether lm_head is the embedding.
  std::optional<Error> storage_dtype() {
    auto torch_dtype = f_.string("torch_dtype");
    if (!torch_dtype) torch_dtype = f_.string("dtype");
    if (auto e = field_error()) return e;
    if (torch_dtype) {
      auto r = dtype_size(*torch_dtype, where_);
      if (!r) return make_error(r.error().message);
      m_.dtype_bytes = *r;
    } else {
      m_.dtype_bytes = 2;
      m_.notes.push_back("no torch_dtype in config.json: assuming bfloat16");
    }

    // Tied embeddings: transformers' default is true, most decoder configs set
    // false; the classes that leave it at the base default tie.
    if (auto tied = f_.boolean("tie_word_embeddings")) {
      m_.tied_embeddings = *tied;
    } else {
      m_.tied_embeddings = type_is({"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "falcon",
                                    "gpt_bigcode", "bloom", "opt", "starcoder2"});
    }
    return field_error();
  }

  void arch_from_attention() {
    a_.n_layer = m_.n_layer;
    a_.n_embd = m_.n_embd;
    a_.n_head = m_.n_head;
    a_.n_vocab = m_.n_vocab;
    a_.head_dim = head_dim_;
    a_.n_kv = m_.n_head_kv;
    a_.tied = m_.tied_embeddings;
  }

  // MLA, the dense FFN width, and the experts: how many, which layers, shared ones.
  std::optional<Error> mlp_and_experts() {
    // MLA (DeepSeek V2/V3, Kimi K2): a latent KV of kv_lora_rank + rope dims.
    auto kv_lora = f_.count({"kv_lora_rank"}, kMaxWidth);
    if (kv_lora && *kv_lora > 0) {
      a_.mla = true;
      a_.kv_lora = *kv_lora;
      a_.q_lora = f_.count({"q_lora_rank"}, kMaxWidth).value_or(0);
      a_.rope = f_.count({"qk_rope_head_dim"}, kMaxWidth).value_or(64);
      a_.nope = f_.count({"qk_nope_head_dim"}, kMaxWidth).value_or(128);
      a_.v_dim = f_.count({"v_head_dim"}, kMaxWidth).value_or(128);
      m_.kv_lora_rank = a_.kv_lora;
      m_.n_rot = a_.rope;
      m_.head_dim_k = a_.nope + a_.rope;
      m_.head_dim_v = a_.v_dim;
    }

    // Dense FFN width (GPT-2 leaves n_inner null: 4 x hidden).
    auto ff = f_.count({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}, 1u << 24,
                       "intermediate_size");
    auto ff_mlp = f_.count({"intermediate_size_mlp"}, 1u << 24);  // Llama 4 dense layers
    if (auto e = field_error()) return e;
    uint32_t dense_ff = ff_mlp ? *ff_mlp : ff.value_or(4 * m_.n_embd);
    if (!ff) m_.notes.push_back(fmt::format("no intermediate_size: assuming 4 x hidden_size = {}", dense_ff));

    auto n_expert = f_.count({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"},
                             1u << 16, "num_experts");
    auto n_used = f_.count({"num_experts_per_tok", "num_experts_per_token", "experts_per_token",
                            "moe_top_k"}, 1u << 16, "num_experts_per_tok");
    auto moe_ff = f_.count({"moe_intermediate_size"}, 1u << 24);
    auto n_shared = f_.count({"n_shared_experts", "num_shared_experts"}, 1u << 10);
    auto shared_ff = f_.count({"shared_expert_intermediate_size"}, 1u << 24);
    auto first_dense = f_.count({"first_k_dense_replace"}, kMaxLayers);
    auto sparse_step = f_.count({"decoder_sparse_step"}, kMaxLayers);
    auto moe_freq = f_.count({"moe_layer_freq"}, kMaxLayers);
    auto interleave = f_.count({"interleave_moe_layer_step"}, kMaxLayers);
    if (auto e = field_error()) return e;
    const json* mlp_only = f_.find("mlp_only_layers");
    if (!n_expert || *n_expert <= 1) {
      a_.n_ff = dense_ff;
      m_.n_ff = a_.n_ff;
      return std::nullopt;
    }
    a_.n_expert = *n_expert;
    a_.n_used = n_used.value_or(2);
    if (!n_used) m_.notes.push_back("no num_experts_per_tok: assuming 2");
    a_.ff_exp = moe_ff ? *moe_ff : ff.value_or(dense_ff);
    a_.moe_layer.assign(m_.n_layer, true);
    for (uint32_t il = 0; il < m_.n_layer; ++il) {
      bool moe = true;
      if (first_dense && il < *first_dense) moe = false;
      if (moe_freq && *moe_freq > 1 && il % *moe_freq != 0) moe = false;
      if (sparse_step && *sparse_step > 1 && (il + 1) % *sparse_step != 0) moe = false;
      if (interleave && *interleave > 1 && (il + 1) % *interleave != 0) moe = false;
      if (in_list(mlp_only, il)) moe = false;
      a_.moe_layer[il] = moe;
    }
    if (n_shared && *n_shared > 0) {
      a_.n_shared = *n_shared;
      a_.shared_width = uint64_t(*n_shared) * a_.ff_exp;
    } else if (shared_ff && *shared_ff > 0) {
      a_.shared_width = *shared_ff;
      a_.shared_gate = true;
      a_.n_shared = a_.ff_exp && *shared_ff % a_.ff_exp == 0 ? *shared_ff / a_.ff_exp : 1;
    } else if (type_is({"llama4", "llama4_text"})) {
      a_.n_shared = 1;
      a_.shared_width = a_.ff_exp;
    }
    if (type_is({"gpt_oss"})) {
      a_.expert_bias = true;
      a_.router_bias = true;
    }
    bool any_dense = std::count(a_.moe_layer.begin(), a_.moe_layer.end(), false) > 0;
    a_.n_ff = any_dense ? dense_ff : 0;
    m_.n_expert = a_.n_expert;
    m_.n_expert_used = a_.n_used;
    m_.n_ff_exp = a_.ff_exp;
    m_.n_expert_shared = a_.n_shared;
    m_.n_ff = a_.n_ff;
    return std::nullopt;
  }

  // Layer shapes that differ per family.
  std::optional<Error> layer_shapes() {
    a_.gated_mlp = !type_is({"gpt2", "gpt_bigcode", "gpt_neox", "gptj", "gpt_neo", "falcon", "bloom",
                             "opt", "phi", "starcoder2", "mpt", "codegen", "bert", "roberta"});
    a_.qkv_bias = type_is({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "gpt2", "gpt_bigcode",
                           "starcoder2", "phi"}) || f_.boolean("attention_bias").value_or(false) ||
                  f_.boolean("qkv_bias").value_or(false);
    a_.o_bias = type_is({"gpt2", "gpt_bigcode", "starcoder2", "phi"}) ||
                f_.boolean("attention_bias").value_or(false);
    a_.mlp_bias = type_is({"gpt2", "gpt_bigcode", "starcoder2", "phi"}) ||
                  f_.boolean("mlp_bias").value_or(false);
    a_.norms_per_layer = type_is({"gemma2", "gemma3", "gemma3_text"}) ? 4 : 2;
    a_.qk_norm = type_is({"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2"});
    a_.sinks = type_is({"gpt_oss"});
    return field_error();
  }

  // Sliding-window attention: which layers slide. An explicit layer_types
  // list wins everywhere; otherwise the family's pattern.
  std::optional<Error> sliding_window() {
    auto window = f_.count({"sliding_window", "sliding_window_size", "attention_chunk_size"}, 1ull << 31,
                           "sliding_window");
    auto pattern = f_.count({"sliding_window_pattern"}, kMaxLayers);
    auto use_swa = f_.boolean("use_sliding_window");
    auto max_window_layers = f_.count({"max_window_layers"}, 1u << 20);
    if (auto e = field_error()) return e;
    const json* layer_types = f_.find("layer_types");
    m_.swa_layer.assign(m_.n_layer, false);
    if (layer_types && layer_types->is_array()) {
      if (auto e = sliding_from_layer_types(*layer_types, window)) return e;
    } else if (window && *window > 0 && use_swa.value_or(true)) {
      m_.n_swa = *window;
      sliding_from_family(pattern, use_swa, max_window_layers);
      if (m_.n_ctx_train && m_.n_swa >= m_.n_ctx_train) {
        // A window as long as the context (Phi-3.5, Qwen2.5) changes nothing.
        m_.swa_layer.assign(m_.n_layer, false);
      }
      if (std::count(m_.swa_layer.begin(), m_.swa_layer.end(), true) == 0) m_.n_swa = 0;
    }
    if (m_.n_swa == 0) m_.swa_layer.assign(m_.n_layer, false);
    return std::nullopt;
  }

  std::optional<Error> sliding_from_layer_types(const json& layer_types, std::optional<uint32_t> window) {
    if (layer_types.size() < m_.n_layer)
      return make_error(fmt::format("{}: 'layer_types' lists {} layers, num_hidden_layers is {}", where_,
                                    layer_types.size(), m_.n_layer));
    for (uint32_t il = 0; il < m_.n_layer; ++il) {
      const auto& t = layer_types[il];
      if (!t.is_string())
        return make_error(fmt::format("{}: 'layer_types' holds {}, expected strings", where_,
                                      Fields::describe(t)));
      const auto& s = t.get_ref<const std::string&>();
      m_.swa_layer[il] = s.find("sliding") != std::string::npos || s.find("chunked") != std::string::npos;
    }
    if (window && *window > 0) {
      m_.n_swa = *window;
    } else if (std::count(m_.swa_layer.begin(), m_.swa_layer.end(), true) > 0) {
      m_.notes.push_back("layer_types names sliding layers but no sliding_window is given: treated "
                         "as full attention");
      m_.swa_layer.assign(m_.n_layer, false);
    }
    return std::nullopt;
  }

  void sliding_from_family(std::optional<uint32_t> pattern, std::optional<bool> use_swa,
                           std::optional<uint32_t> max_window_layers) {
    if (type_is({"gemma2"})) {
      for (uint32_t il = 0; il < m_.n_layer; ++il) m_.swa_layer[il] = il % 2 == 0;
    } else if (gemma3_ || type_is({"cohere2"})) {
      uint32_t p = pattern.value_or(gemma3_ ? 6 : 4);
      for (uint32_t il = 0; il < m_.n_layer; ++il) m_.swa_layer[il] = p > 1 && (il + 1) % p != 0;
    } else if (type_is({"llama4", "llama4_text"})) {
      const json* nope = f_.find("no_rope_layers");
      for (uint32_t il = 0; il < m_.n_layer; ++il) {
        bool rope = (il + 1) % 4 != 0;
        if (nope && nope->is_array() && il < nope->size() && (*nope)[il].is_number())
          rope = (*nope)[il].get<double>() != 0;
        m_.swa_layer[il] = rope;  // chunked attention on the RoPE layers
      }
      m_.notes.push_back("Llama 4 chunked attention counted as a sliding window of attention_chunk_size");
    } else if (type_is({"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"})) {
      // Qwen slides only when use_sliding_window, on layers >= max_window_layers.
      if (use_swa.value_or(false)) {
        uint32_t first = max_window_layers.value_or(0);
        for (uint32_t il = first; il < m_.n_layer; ++il) m_.swa_layer[il] = true;
      }
    } else {
      m_.swa_layer.assign(m_.n_layer, true);  // Mistral v0.1 style: every layer
    }
  }

  // Multi-token-prediction layers are stored after the decoder blocks but
  // not run by default: not counted.
  std::optional<Error> nextn_note() {
    auto nextn = f_.count({"num_nextn_predict_layers"}, 64);
    if (auto e = field_error()) return e;
    if (nextn && *nextn > 0)
      m_.notes.push_back(fmt::format("{} multi-token-prediction layer(s) in the checkpoint are not "
                                     "counted (loaded only for speculative decoding)", *nextn));
    return std::nullopt;
  }

  // Storage format: the config's quantization_config unless --dtype or
  // --quant say otherwise. Sets the weights' format.
  Result<Quant> quantization(const std::string& dtype_override, const std::string& quant_override) {
    Quant q;
    const json* qc = nullptr;
    for (const char* k : {"quantization_config", "compression_config"})
      if (auto it = config_.find(k); it != config_.end() && it->is_object()) {
        qc = &*it;
        break;
      }
    if (!qc && text_cfg_)
      if (auto it = text_cfg_->find("quantization_config"); it != text_cfg_->end() && it->is_object())
        qc = &*it;
    if (qc) q = quant_from_config(*qc, m_.dtype_bytes, m_.notes);

    std::string dt = text::lower(dtype_override);
    std::string qo = quant_override;
    if (!dt.empty() && dt != "auto") {
      if (dt == "fp8" || dt == "int8") {
        if (qo.empty()) qo = dt;
      } else {
        auto r = dtype_size(dt, "--dtype");
        if (!r) return make_error(fmt::format("unknown --dtype '{}' (bf16, fp16, fp32, fp8, int8)",
                                              dtype_override));
        if (*r != m_.dtype_bytes)
          m_.notes.push_back(fmt::format("--dtype {}: weights and KV in {} bytes instead of the "
                                         "checkpoint's {}", dtype_override, *r, m_.dtype_bytes));
        m_.dtype_bytes = *r;
      }
    }
    if (!qo.empty()) {
      auto r = quant_from_name(qo);
      if (!r) return make_error(r.error().message);
      if (qc && r->method != q.method)
        m_.notes.push_back(fmt::format("--quant {} replaces the checkpoint's quantization_config", qo));
      q = *r;
      if (q.method == "mxfp4" && a_.n_expert > 0) {
        q.experts_only = true;
        q.label = "MXFP4 experts";
      }
      if (q.method == "int8") q.scale_bytes = m_.dtype_bytes;
    }
    if (!q.method.empty()) {
      m_.notes.push_back(fmt::format("{}: only the linear layers of the decoder blocks{} are "
                                     "quantized; embeddings, lm_head and norms stay {}",
                                     q.label, q.experts_only ? " (MoE experts)" : "",
                                     dtype_label(m_.dtype_bytes)));
    }
    m_.weights_format = q.method.empty() ? dtype_label(m_.dtype_bytes) : q.label;
    return q;
  }

  // Products of capped fields can still pass 2^64: refuse sizes no model has.
  std::optional<Error> refuse_impossible_size() const {
    const Arch& a = a_;
    const double E = a.n_embd, L = a.n_layer;
    const double kv = *std::max_element(a.n_kv.begin(), a.n_kv.end());
    const double attn = a.mla ? E * (a.q_lora + a.kv_lora + a.rope) +
                                    double(a.n_head) * (a.nope + a.rope) * (a.q_lora + E) +
                                    double(a.n_head) * (a.nope + a.v_dim) * a.kv_lora +
                                    double(a.n_head) * a.v_dim * E
                              : E * a.head_dim * (2.0 * a.n_head + 2.0 * kv);
    const double mlp = 3.0 * E * a.n_ff + 3.0 * E * a.ff_exp * (double(a.n_expert) + 1) +
                       3.0 * E * a.shared_width + E * a.n_expert;
    const double est = L * (attn + mlp) + 2.0 * E * a.n_vocab;
    if (est > 1e15)
      return make_error(fmt::format("{}: these numbers describe ~{:.3g} parameters, more than any "
                                    "real model", where_, est));
    return std::nullopt;
  }

  // Parameters and bytes from the shapes, with a vision tower's estimate.
  void weights_from_shapes(const Quant& q) {
    Tally t = count_weights(a_, q, m_.dtype_bytes);
    // A vision tower is loaded with the language model: estimate it.
    if (auto vc = config_.find("vision_config"); vc != config_.end() && vc->is_object()) {
      uint64_t vp = vision_params(*vc, m_.n_embd, config_.contains("projector_hidden_act"));
      if (vp) {
        t.params += vp;
        t.vision_params = vp;
        t.bytes += vp * m_.dtype_bytes;
        m_.notes.push_back(fmt::format("vision encoder ~{} parameters estimated from vision_config",
                                       gb(vp)));
      }
    }
    m_.n_params = t.params;
    m_.n_params_active = t.params;
    if (a_.n_expert > 0 && t.expert_params > 0)
      m_.n_params_active = t.params - t.expert_params + t.expert_params / a_.n_expert * a_.n_used;
    m_.weight_bytes = t.bytes;
    m_.quant_metadata_bytes = t.meta;
    m_.weights_exact = false;
    m_.notes.push_back(fmt::format("weights computed from config.json shapes ({} parameters{}): "
                                   "approximate, no tensor table",
                                   gb(m_.n_params),
                                   a_.n_expert ? fmt::format(", {} active", gb(m_.n_params_active)) : ""));
  }

  const json& config_;
  const std::string& where_;
  std::string text_key_;   // declared before text_cfg_: find_text_config fills it
  const json* text_cfg_;
  Fields f_;
  std::string model_type_, top_type_;
  bool gemma3_ = false;
  uint32_t head_dim_ = 0;
  ModelSpec m_;
  Arch a_;
};

}  // namespace

Result<ModelSpec> spec_from_config_at(const json& config, const std::string& name,
                                      const std::string& where, const std::string& dtype_override,
                                      const std::string& quant_override) {
  if (!config.is_object())
    return make_error(fmt::format("{}: expected a JSON object, got {}", where, config.type_name()));
  return ConfigSpec(config, name, where).build(dtype_override, quant_override);
}

}  // namespace aimem::fit::hf

namespace aimem::fit {

Result<ModelSpec> spec_from_config(const nlohmann::json& config, const std::string& name,
                                   const std::string& dtype, const std::string& quant) {
  return hf::spec_from_config_at(config, name, name.empty() ? "config.json" : name + ": config.json",
                             dtype, quant);
}

}  // namespace aimem::fit
