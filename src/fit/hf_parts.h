// The parts of fit's Hugging Face reader that its files share (hf_weights.cc:
// storage formats and the weights counted from shapes; hf_config.cc: a
// config.json object -> ModelSpec; hf_folder.cc: model folders). Internal to
// fit: the interface is fit/hf.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/result.h"
#include "fit/model.h"

namespace aimem::fit::hf {

using json = nlohmann::json;

std::optional<uint64_t> as_u64(const json& v);
// "8.03B"
std::string gb(uint64_t params);

// Reads fields from the text config of a multimodal model first, then from
// the top level; the first type error is kept and reported.
class Fields {
 public:
  Fields(const json& top, const json* text, std::string where)
      : top_(top), text_(text), where_(std::move(where)) {}

  const json* find(std::string_view key) const {
    for (const json* o : {text_, &top_}) {
      if (!o) continue;
      auto it = o->find(key);
      if (it != o->end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }

  std::optional<uint64_t> u64(std::initializer_list<std::string_view> keys) {
    for (auto key : keys) {
      const json* v = find(key);
      if (!v) continue;
      if (auto n = as_u64(*v)) return n;
      if (v->is_number_float()) {
        double d = v->get<double>();
        if (d >= 0 && d < 1.8e19 && std::floor(d) == d) return static_cast<uint64_t>(d);
      }
      fail(fmt::format("'{}' is {}, expected a non-negative integer", key, describe(*v)));
      return std::nullopt;
    }
    return std::nullopt;
  }
  // A count that sizes arrays: also capped, so a hostile config cannot ask
  // for a 2^40-element per-layer vector.
  std::optional<uint32_t> count(std::initializer_list<std::string_view> keys, uint64_t cap,
                                std::string_view label = {}) {
    auto v = u64(keys);
    if (!v) return std::nullopt;
    if (*v > cap) {
      fail(fmt::format("'{}' is {}, more than {} is not a real model",
                       label.empty() ? *keys.begin() : label, *v, cap));
      return std::nullopt;
    }
    return static_cast<uint32_t>(*v);
  }
  std::optional<double> number(std::string_view key) {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_number()) return v->get<double>();
    fail(fmt::format("'{}' is {}, expected a number", key, describe(*v)));
    return std::nullopt;
  }
  std::optional<bool> boolean(std::string_view key) {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    fail(fmt::format("'{}' is {}, expected true or false", key, describe(*v)));
    return std::nullopt;
  }
  std::optional<std::string> string(std::string_view key) {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_string()) return v->get<std::string>();
    fail(fmt::format("'{}' is {}, expected a string", key, describe(*v)));
    return std::nullopt;
  }

  void fail(std::string msg) {
    if (error_.empty()) error_ = fmt::format("{}: {}", where_, msg);
  }
  void missing(std::string_view what) { fail(fmt::format("missing '{}'", what)); }
  const std::string& error() const { return error_; }
  const std::string& where() const { return where_; }

  static std::string describe(const json& v) {
    std::string d = v.dump();
    if (d.size() > 40) d = d.substr(0, 37) + "...";
    return fmt::format("{} {}", v.type_name(), d);
  }

 private:
  const json& top_;
  const json* text_;
  std::string where_;
  std::string error_;
};

// How the linear layers of the decoder are stored.
struct Quant {
  std::string method;          // "", gptq, awq, bnb4, bnb8, fp8, int8, mxfp4, ct
  uint32_t bits = 16;
  uint64_t group = 0;          // 0: one scale per output channel (or per tensor)
  bool zeros = false;          // zero points stored
  bool g_idx = false;          // GPTQ act-order index
  bool double_quant = false;   // bnb nested absmax
  bool per_tensor = false;     // one scale per tensor
  bool static_input = false;   // an input_scale per tensor
  uint64_t block0 = 0, block1 = 0;  // block-wise scales [out, in]
  uint32_t scale_bytes = 2;
  bool float_type = false;     // compressed-tensors "float" (fp8/fp4) vs "int"
  bool experts_only = false;   // gpt-oss MXFP4: only the MoE experts
  bool attention = true;       // attention projections quantized too
  std::string label;           // weights_format
};

// Sums parameters and bytes by kind.
struct Tally {
  uint64_t params = 0, expert_params = 0, bytes = 0, meta = 0;
  uint64_t vision_params = 0;
};

struct Arch {
  uint32_t n_layer = 0, n_embd = 0, n_head = 0, n_vocab = 0;
  uint32_t head_dim = 0, n_ff = 0;
  std::vector<uint32_t> n_kv;
  // MLA
  bool mla = false;
  uint32_t q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v_dim = 0;
  // MoE
  uint32_t n_expert = 0, n_used = 0, ff_exp = 0, n_shared = 0;
  uint64_t shared_width = 0;  // total width of the shared expert(s)
  bool shared_gate = false;   // Qwen2-MoE sigmoid gate on the shared expert
  bool expert_bias = false;   // gpt-oss
  bool router_bias = false;
  std::vector<bool> moe_layer;
  // Shapes
  bool gated_mlp = true;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  uint32_t norms_per_layer = 2;
  bool qk_norm = false;
  bool sinks = false;
  bool tied = false;
};

Tally count_weights(const Arch& a, const Quant& q, uint32_t db);

// A rough count of a multimodal model's vision encoder and projector (0 when
// the numbers describe no real tower).
uint64_t vision_params(const json& vc, uint64_t text_embd, bool llava_projector);
// A torch dtype's size in bytes; `where` names the input in the error.
Result<uint32_t> dtype_size(const std::string& s, const std::string& where);
// "BF16", "F32", ... for a size in bytes.
std::string dtype_label(uint32_t bytes);
// A CLI --quant value (or --dtype fp8/int8) as a storage format.
Result<Quant> quant_from_name(const std::string& name);
// quantization_config (or the older compression_config) of the checkpoint.
Quant quant_from_config(const json& qc, uint32_t dtype_bytes, std::vector<std::string>& notes);

// A ModelSpec from a config.json object; `where` names it in errors.
Result<ModelSpec> spec_from_config_at(const json& config, const std::string& name,
                                      const std::string& where, const std::string& dtype_override,
                                      const std::string& quant_override);

}  // namespace aimem::fit::hf
