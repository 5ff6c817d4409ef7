// config.json -> ModelSpec, and Hugging Face model folders (config.json plus
// the safetensors headers, sharded through model.safetensors.index.json).
//
// Without tensors the weights are computed from the architecture: every
// matrix of the decoder (attention incl. MLA's low-rank projections, gated or
// plain MLP, MoE experts, router and shared experts), the embeddings, the
// norms and the lm_head unless tied, plus a rough vision tower where the
// config has one. Quantization formats change only the linear layers of the
// decoder blocks; embeddings, lm_head and norms stay in the torch dtype.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/doc_reader.h"
#include "core/text.h"
#include "fit/hf.h"

namespace aimem::fit {
namespace {

using json = nlohmann::json;

uint64_t ceil_div(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// A non-negative integer whether nlohmann stored it signed or unsigned
// (parsed text is unsigned, values built in code are signed).
std::optional<uint64_t> as_u64(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

// [a, b] with both positive (block sizes).
std::optional<std::pair<uint64_t, uint64_t>> positive_pair(const json& v) {
  if (!v.is_array() || v.size() != 2) return std::nullopt;
  auto a = as_u64(v[0]), b = as_u64(v[1]);
  if (!a || !b || *a == 0 || *b == 0) return std::nullopt;
  return std::make_pair(*a, *b);
}

std::string gb(uint64_t params) { return fmt::format("{:.2f}B", static_cast<double>(params) / 1e9); }

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

struct Bytes {
  uint64_t weight = 0, meta = 0;
};

Bytes linear_bytes(const Quant& q, uint64_t out, uint64_t in, uint32_t dtype_bytes) {
  const uint64_t n = out * in;
  Bytes b;
  const std::string& m = q.method;
  if (m.empty()) {
    b.weight = n * dtype_bytes;
  } else if (m == "gptq") {
    // qweight int32 [in*bits/32, out]; scales fp16 [groups, out];
    // qzeros int32 [groups, out*bits/32]; g_idx int32 [in].
    uint64_t groups = ceil_div(in, q.group ? q.group : in);
    b.weight = ceil_div(in * q.bits, 32) * 4 * out;
    b.meta = groups * out * 2 + groups * ceil_div(out * q.bits, 32) * 4 + in * 4;
  } else if (m == "awq") {
    // qweight int32 [in, out*bits/32]; qzeros int32 [groups, out*bits/32]; scales fp16.
    uint64_t groups = ceil_div(in, q.group ? q.group : in);
    b.weight = in * ceil_div(out * q.bits, 32) * 4;
    b.meta = groups * out * 2 + (q.zeros ? groups * ceil_div(out * q.bits, 32) * 4 : 0);
  } else if (m == "bnb4") {
    // Packed 2 per byte, absmax per 64-element block (f32, or u8 with a
    // nested f32 absmax per 256 blocks), plus the 16-entry quant map.
    uint64_t blocks = ceil_div(n, 64);
    b.weight = ceil_div(n, 2);
    b.meta = q.double_quant ? blocks + ceil_div(blocks, 256) * 4 + 256 * 4 + 16 * 4
                            : blocks * 4 + 16 * 4;
  } else if (m == "bnb8") {
    b.weight = n;
    b.meta = out * 4;  // SCB: one f32 per row
  } else if (m == "mxfp4") {
    b.weight = ceil_div(n, 2);
    b.meta = ceil_div(n, 32);  // one E8M0 scale per 32 values
  } else {
    // fp8, int8, compressed-tensors: bits per value plus scales.
    b.weight = ceil_div(n * q.bits, 8);
    uint64_t scales;
    if (q.block0 && q.block1) scales = ceil_div(out, q.block0) * ceil_div(in, q.block1);
    else if (q.group) scales = out * ceil_div(in, q.group);
    else if (q.per_tensor) scales = 1;
    else scales = out;
    b.meta = scales * q.scale_bytes + (q.zeros ? scales * q.scale_bytes : 0) +
             (q.static_input ? 4 : 0);
    if (q.float_type && q.bits == 4) b.meta += 8;  // NVFP4 global scales
  }
  return b;
}

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

void add_linear(Tally& t, const Quant& q, bool quantized, uint64_t out, uint64_t in,
                uint32_t dtype_bytes, uint64_t count = 1, bool expert = false) {
  Bytes b = linear_bytes(quantized ? q : Quant{}, out, in, dtype_bytes);
  t.params += out * in * count;
  if (expert) t.expert_params += out * in * count;
  t.bytes += (b.weight + b.meta) * count;
  t.meta += b.meta * count;
}

void add_plain(Tally& t, uint64_t n, uint32_t dtype_bytes, bool expert = false) {
  t.params += n;
  if (expert) t.expert_params += n;
  t.bytes += n * dtype_bytes;
}

Tally count_weights(const Arch& a, const Quant& q, uint32_t db) {
  Tally t;
  const uint64_t E = a.n_embd;
  const bool qa = !q.method.empty() && !q.experts_only && q.attention;
  const bool qm = !q.method.empty() && !q.experts_only;
  const bool qe = !q.method.empty();
  add_plain(t, uint64_t(a.n_vocab) * E, db);                 // embeddings
  if (!a.tied) add_plain(t, uint64_t(a.n_vocab) * E, db);    // lm_head
  add_plain(t, E, db);                                       // final norm
  for (uint32_t il = 0; il < a.n_layer; ++il) {
    const uint64_t H = a.n_head, KV = il < a.n_kv.size() ? a.n_kv[il] : H, D = a.head_dim;
    add_plain(t, a.norms_per_layer * E, db);
    if (a.mla) {
      const uint64_t qk = a.nope + a.rope;
      if (a.q_lora) {
        add_linear(t, q, qa, a.q_lora, E, db);
        add_plain(t, a.q_lora, db);
        add_linear(t, q, qa, H * qk, a.q_lora, db);
      } else {
        add_linear(t, q, qa, H * qk, E, db);
      }
      add_linear(t, q, qa, a.kv_lora + a.rope, E, db);
      add_plain(t, a.kv_lora, db);
      add_linear(t, q, qa, H * (a.nope + a.v_dim), a.kv_lora, db);
      add_linear(t, q, qa, E, H * a.v_dim, db);
    } else {
      add_linear(t, q, qa, H * D, E, db);
      add_linear(t, q, qa, KV * D, E, db, 2);
      add_linear(t, q, qa, E, H * D, db);
      if (a.qkv_bias) add_plain(t, (H + 2 * KV) * D, db);
      if (a.o_bias) add_plain(t, E, db);
      if (a.qk_norm) add_plain(t, 2 * D, db);
      if (a.sinks) add_plain(t, H, db);
    }
    const bool moe = il < a.moe_layer.size() && a.moe_layer[il];
    const uint64_t mats = a.gated_mlp ? 3 : 2;
    if (moe) {
      const uint64_t F = a.ff_exp;
      // Per expert: gate/up [F, E] and down [E, F] (gpt-oss fuses gate_up).
      add_linear(t, q, qe, F, E, db, uint64_t(a.n_expert) * (mats - 1), true);
      add_linear(t, q, qe, E, F, db, a.n_expert, true);
      if (a.expert_bias) add_plain(t, uint64_t(a.n_expert) * ((mats - 1) * F + E), db, true);
      add_plain(t, uint64_t(a.n_expert) * E, db);  // router, kept in the torch dtype
      if (a.router_bias) add_plain(t, a.n_expert, db);
      if (a.shared_width) {
        add_linear(t, q, qm, a.shared_width, E, db, mats - 1);
        add_linear(t, q, qm, E, a.shared_width, db);
        if (a.shared_gate) add_plain(t, E, db);
      }
    } else if (a.n_ff) {
      add_linear(t, q, qm, a.n_ff, E, db, mats - 1);
      add_linear(t, q, qm, E, a.n_ff, db);
      if (a.mlp_bias) add_plain(t, (mats - 1) * a.n_ff + E, db);
    }
  }
  return t;
}

// A rough count of the vision encoder and projector of a multimodal model:
// ViT blocks, patch and position embeddings, projector. Enough to size them
// within a few percent; the exact layout differs per model.
uint64_t vision_params(const json& vc, uint64_t text_embd, bool llava_projector) {
  auto num = [&](std::initializer_list<const char*> keys) -> double {
    for (const char* k : keys) {
      auto it = vc.find(k);
      if (it != vc.end() && it->is_number() && it->get<double>() >= 0 && it->get<double>() < 1e7)
        return std::floor(it->get<double>());
    }
    return 0;
  };
  // In doubles: the fields are untrusted and their products can pass 2^64.
  const double h = num({"hidden_size", "embed_dim", "width"});
  const double layers = num({"num_hidden_layers", "depth", "num_layers"});
  if (h == 0 || layers == 0) return 0;
  double ff = num({"intermediate_size"});
  if (ff == 0) {
    double ratio = num({"mlp_ratio"});
    ff = h * (ratio > 0 ? ratio : 4);
  }
  bool gated = false;
  if (auto it = vc.find("hidden_act"); it != vc.end() && it->is_string())
    gated = it->get<std::string>() == "silu";
  const double per_layer = 4 * h * h + 4 * h + (gated ? 3 : 2) * h * ff + ff + h + 4 * h;
  double p = num({"patch_size"});
  if (p == 0) p = 14;
  double channels = num({"num_channels", "in_channels", "in_chans"});
  if (channels == 0) channels = 3;
  double temporal = num({"temporal_patch_size"});
  if (temporal == 0) temporal = 1;
  const double image = num({"image_size"});
  const double side = std::floor(image / p);
  const double embed = channels * p * p * temporal * h + side * side * h;
  const double merge = num({"spatial_merge_size"});
  double out = num({"out_hidden_size"});
  if (out == 0) out = static_cast<double>(text_embd);
  double projector;
  if (merge > 0) {
    const double m = h * merge * merge;
    projector = m * m + m * out;  // Qwen2-VL merger: MLP over merged patches
  } else {
    projector = h * out + (llava_projector ? out * out : 0);
  }
  const double total = layers * per_layer + embed + projector;
  if (!(total < 1e13)) return 0;  // not a real vision tower: ignored
  return static_cast<uint64_t>(total);
}

Result<uint32_t> dtype_size(const std::string& s, const std::string& where) {
  std::string d = text::lower(s);
  if (d == "bfloat16" || d == "bf16" || d == "float16" || d == "fp16" || d == "half" || d == "f16")
    return 2u;
  if (d == "float32" || d == "fp32" || d == "float" || d == "f32") return 4u;
  if (d == "float64" || d == "fp64" || d == "double") return 8u;
  if (d.rfind("float8", 0) == 0) return 1u;
  return make_error(fmt::format("{}: unknown dtype '{}' (bfloat16, float16, float32)", where, s));
}

std::string dtype_label(uint32_t bytes) {
  switch (bytes) {
    case 4: return "F32";
    case 8: return "F64";
    case 1: return "F8";
    default: return "BF16";
  }
}

// A CLI --quant value (or --dtype fp8/int8) as a storage format with the
// usual defaults: 4 bits, groups of 128.
Result<Quant> quant_from_name(const std::string& name) {
  Quant q;
  std::string n = text::lower(name);
  if (n == "gptq" || n == "gptq-int4") {
    q.method = "gptq"; q.bits = 4; q.group = 128; q.zeros = true; q.g_idx = true;
    q.label = "GPTQ int4 g128";
  } else if (n == "awq" || n == "int4" || n == "w4a16") {
    q.method = "awq"; q.bits = 4; q.group = 128; q.zeros = true;
    q.label = n == "awq" ? "AWQ int4 g128" : "int4 g128";
  } else if (n == "int8" || n == "w8a8") {
    q.method = "int8"; q.bits = 8; q.label = "int8 (per-channel scales)";
  } else if (n == "fp8") {
    q.method = "fp8"; q.bits = 8; q.per_tensor = true; q.scale_bytes = 4;
    q.label = "FP8 (per-tensor scales)";
  } else if (n == "bnb-4bit" || n == "bnb4" || n == "nf4" || n == "bitsandbytes") {
    q.method = "bnb4"; q.bits = 4; q.label = "bitsandbytes nf4";
  } else if (n == "bnb-8bit" || n == "bnb8") {
    q.method = "bnb8"; q.bits = 8; q.label = "bitsandbytes int8";
  } else if (n == "mxfp4") {
    q.method = "mxfp4"; q.bits = 4; q.label = "MXFP4";
  } else if (n == "none" || n.empty()) {
  } else {
    return make_error(fmt::format(
        "unknown quantization '{}' (awq, gptq, int4, int8, fp8, bnb-4bit, bnb-8bit, mxfp4, none)",
        name));
  }
  return q;
}

bool list_mentions(const json* list, std::initializer_list<std::string_view> keys) {
  if (!list || !list->is_array()) return false;
  for (const auto& e : *list) {
    if (!e.is_string()) continue;
    const auto& s = e.get_ref<const std::string&>();
    for (auto k : keys)
      if (s.find(k) != std::string::npos) return true;
  }
  return false;
}

// quantization_config (or the older compression_config) of the checkpoint.
Quant quant_from_config(const json& qc, uint32_t dtype_bytes, std::vector<std::string>& notes) {
  Quant q;
  auto str = [&](const char* k) -> std::string {
    auto it = qc.find(k);
    return it != qc.end() && it->is_string() ? it->get<std::string>() : "";
  };
  auto num = [&](const json& o, const char* k, int64_t def) -> int64_t {
    auto it = o.find(k);
    return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : def;
  };
  auto flag = [&](const char* k) {
    auto it = qc.find(k);
    return it != qc.end() && it->is_boolean() && it->get<bool>();
  };
  std::string method = text::lower(str("quant_method"));
  const json* skip = nullptr;
  for (const char* k : {"modules_to_not_convert", "ignore", "llm_int8_skip_modules"})
    if (auto it = qc.find(k); it != qc.end() && it->is_array()) skip = &*it;

  if (method == "gptq" || method == "awq") {
    q.method = method;
    q.bits = static_cast<uint32_t>(std::clamp<int64_t>(num(qc, "bits", num(qc, "w_bit", 4)), 2, 8));
    int64_t g = num(qc, "group_size", num(qc, "q_group_size", 128));
    q.group = g > 0 ? static_cast<uint64_t>(g) : 0;
    if (method == "gptq") {
      q.zeros = true;
      q.g_idx = true;
    } else {
      auto it = qc.find("zero_point");
      q.zeros = it == qc.end() || !it->is_boolean() || it->get<bool>();
    }
    q.label = fmt::format("{} int{} {}", method == "gptq" ? "GPTQ" : "AWQ", q.bits,
                          q.group ? fmt::format("g{}", q.group) : "per-channel");
    if (method == "gptq" && flag("desc_act")) q.label += " act-order";
  } else if (method == "bitsandbytes") {
    if (flag("load_in_8bit")) {
      q.method = "bnb8"; q.bits = 8; q.label = "bitsandbytes int8";
    } else {
      q.method = "bnb4"; q.bits = 4;
      q.double_quant = flag("bnb_4bit_use_double_quant");
      std::string type = str("bnb_4bit_quant_type");
      q.label = fmt::format("bitsandbytes {}{}", type.empty() ? "fp4" : type,
                            q.double_quant ? " (double quant)" : "");
    }
  } else if (method == "fp8" || method == "fbgemm_fp8") {
    q.method = "fp8"; q.bits = 8; q.scale_bytes = 4;
    auto it = qc.find("weight_block_size");
    auto block = it != qc.end() ? positive_pair(*it) : std::nullopt;
    if (block) {
      q.block0 = block->first;
      q.block1 = block->second;
      q.label = fmt::format("FP8 (block {}x{} scales)", q.block0, q.block1);
    } else if (method == "fbgemm_fp8") {
      q.label = "FP8 (per-channel scales)";
    } else {
      q.per_tensor = true;
      q.label = "FP8 (per-tensor scales)";
    }
    q.static_input = str("activation_scheme") == "static";
  } else if (method == "mxfp4") {
    q.method = "mxfp4"; q.bits = 4; q.experts_only = true;
    q.label = "MXFP4 experts, BF16 elsewhere";
  } else if (method == "compressed-tensors") {
    q.method = "ct";
    const json* weights = nullptr;
    if (auto g = qc.find("config_groups"); g != qc.end() && g->is_object()) {
      for (const auto& grp : *g)
        if (grp.is_object())
          if (auto w = grp.find("weights"); w != grp.end() && w->is_object()) {
            weights = &*w;
            break;
          }
    }
    if (!weights) {
      notes.push_back("compressed-tensors config without weight groups: weights counted as stored "
                      "in the torch dtype");
      return Quant{};
    }
    q.bits = static_cast<uint32_t>(std::clamp<int64_t>(num(*weights, "num_bits", 8), 1, 16));
    auto wstr = [&](const char* k) {
      auto it = weights->find(k);
      return it != weights->end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    q.float_type = wstr("type") == "float";
    std::string strategy = wstr("strategy");
    int64_t g = num(*weights, "group_size", 0);
    if (strategy == "group" && g > 0) q.group = static_cast<uint64_t>(g);
    if (strategy == "tensor") q.per_tensor = true;
    if (strategy == "block") {
      auto it = weights->find("block_structure");
      if (auto block = it != weights->end() ? positive_pair(*it) : std::nullopt) {
        q.block0 = block->first;
        q.block1 = block->second;
      }
    }
    auto sym = weights->find("symmetric");
    q.zeros = sym != weights->end() && sym->is_boolean() && !sym->get<bool>();
    q.scale_bytes = q.float_type && q.bits == 4 ? 1 : dtype_bytes;  // NVFP4: FP8 scales
    q.label = fmt::format("compressed-tensors {}{} {}", q.float_type ? "fp" : "int", q.bits,
                          q.group ? fmt::format("g{}", q.group)
                                  : (strategy.empty() ? std::string("channel") : strategy));
  } else if (!method.empty()) {
    notes.push_back(fmt::format("quant_method '{}' is not modelled: weights counted in the torch "
                                "dtype (an over-estimate)", method));
    return Quant{};
  } else {
    return Quant{};
  }
  if (list_mentions(skip, {"self_attn", "attn", "attention"}) && q.method != "mxfp4")
    q.attention = false;
  return q;
}

bool in_list(const json* list, uint32_t il) {
  if (!list || !list->is_array()) return false;
  for (const auto& e : *list)
    if (as_u64(e) == std::optional<uint64_t>(il)) return true;
  return false;
}

}  // namespace

namespace {

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

Result<ModelSpec> spec_from_config_at(const json& config, const std::string& name,
                                      const std::string& where, const std::string& dtype_override,
                                      const std::string& quant_override) {
  if (!config.is_object())
    return make_error(fmt::format("{}: expected a JSON object, got {}", where, config.type_name()));
  return ConfigSpec(config, name, where).build(dtype_override, quant_override);
}

// config.json is a few KB; a model.safetensors.index.json of ~90,000 tensors
// (DeepSeek-V3) about 9 MB.
constexpr size_t kMaxJsonFileBytes = 32u << 20;

Result<std::string> read_json_text(const FileSystem& files, const std::string& path) {
  // A regular file only: a FIFO in a model folder would block the read forever.
  return files.read(path, kMaxJsonFileBytes, "JSON file", /*regular_only=*/true);
}

Result<json> parse_json_text(const std::string& path, const std::string& s) {
  doc::Limits limits;
  limits.max_bytes = kMaxJsonFileBytes;
  return doc::parse_json(s, path, limits);
}

Result<json> read_json_file(const FileSystem& files, const std::string& path) {
  auto s = read_json_text(files, path);
  if (!s) return s.error();
  return parse_json_text(path, *s);
}

// model.safetensors.index.json's weight_map (tensor -> shard file) read by a
// SAX pass that builds no DOM: a 70B model's index has ~700 entries and is
// read on every `aimem fit` of its folder. It takes only an index whose
// weight_map is an object of strings, named once; anything else (invalid
// JSON, another type, a repeated key) gives nullopt and the DOM path reads it
// again to say what is wrong in the usual words.
class WeightMapSax final : public nlohmann::json_sax<json> {
 public:
  std::vector<std::pair<std::string, std::string>> entries;  // as written
  bool found = false;

  bool null() override { return other(); }
  bool boolean(bool) override { return other(); }
  bool number_integer(number_integer_t) override { return other(); }
  bool number_unsigned(number_unsigned_t) override { return other(); }
  bool number_float(number_float_t, const string_t&) override { return other(); }
  bool binary(binary_t&) override { return other(); }
  bool string(string_t& v) override {
    if (skip_ > 0 || (depth_ == 1 && !in_map_key_)) return true;
    if (depth_ != 2) return false;
    entries.back().second = std::move(v);
    return true;
  }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override {
    if (skip_ > 0 || (depth_ == 1 && !in_map_key_)) return ++skip_, true;
    return false;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (skip_ > 0) return true;
    if (depth_ == 1) {
      in_map_key_ = k == "weight_map";
      if (in_map_key_ && found) return false;  // a second weight_map: the DOM keeps the last
      found |= in_map_key_;
      return true;
    }
    if (depth_ != 2) return false;
    entries.emplace_back(std::move(k), std::string());
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // A scalar is ours only as the value of a key other than weight_map.
  bool other() { return skip_ > 0 || (depth_ == 1 && !in_map_key_); }
  bool open() {
    if (skip_ > 0 || (depth_ == 1 && !in_map_key_)) return ++skip_, true;
    if (depth_ == 0 || depth_ == 1) return ++depth_, true;
    return false;
  }
  bool close() {
    if (skip_ > 0) return --skip_, true;
    if (depth_ == 2) in_map_key_ = false;
    --depth_;
    return true;
  }

  int depth_ = 0;  // 1 inside the index, 2 inside weight_map
  int skip_ = 0;   // nesting depth inside a value being skipped
  bool in_map_key_ = false;
};

// weight_map's entries sorted by tensor name (the DOM's order), or nullopt
// where the DOM path must read the index.
std::optional<std::vector<std::pair<std::string, std::string>>> weight_map_sax(const std::string& text) {
  WeightMapSax sax;
  if (!json::sax_parse(text, &sax) || !sax.found) return std::nullopt;
  auto& e = sax.entries;
  std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < e.size(); ++i)
    if (e[i].first == e[i - 1].first) return std::nullopt;
  return std::move(e);
}

uint64_t elements(const Tensor& t) {
  uint64_t n = 1;
  for (uint64_t v : t.ne) n *= v;
  return n;
}

std::string base_name(const std::string& path) {
  std::filesystem::path p(path);
  std::string s = p.filename().string();
  if (s.empty()) s = p.parent_path().filename().string();
  return s;
}

// Replaces the computed weights with the tensor table's.
void apply_tensors(ModelSpec& m, std::vector<Tensor> tensors, const json& config, bool has_nextn) {
  // Multi-token-prediction blocks (layer >= num_hidden_layers) are not loaded.
  if (has_nextn) {
    uint64_t dropped = 0, n = 0;
    std::vector<Tensor> kept;
    kept.reserve(tensors.size());
    for (auto& t : tensors) {
      if (t.layer >= 0 && static_cast<uint32_t>(t.layer) >= m.n_layer) {
        dropped += t.bytes;
        ++n;
      } else {
        kept.push_back(std::move(t));
      }
    }
    tensors = std::move(kept);
    if (n)
      m.notes.push_back(fmt::format("{} tensors of the multi-token-prediction layer(s) ({:.2f} GiB) "
                                    "left out: not loaded unless speculative decoding uses them",
                                    n, static_cast<double>(dropped) / (1ull << 30)));
  }
  // Packed integer weights: elements per stored element.
  std::string method;
  uint32_t bits = 4;
  for (const char* k : {"quantization_config", "compression_config"})
    if (auto it = config.find(k); it != config.end() && it->is_object()) {
      if (auto mt = it->find("quant_method"); mt != it->end() && mt->is_string())
        method = text::lower(mt->get<std::string>());
      if (auto b = it->find("bits"); b != it->end() && as_u64(*b))
        bits = static_cast<uint32_t>(std::clamp<uint64_t>(*as_u64(*b), 1, 32));
      if (auto g = it->find("config_groups"); g != it->end() && g->is_object())
        for (const auto& grp : *g)
          if (grp.is_object())
            if (auto w = grp.find("weights"); w != grp.end() && w->is_object())
              if (auto nb = w->find("num_bits"); nb != w->end() && as_u64(*nb))
                bits = static_cast<uint32_t>(std::clamp<uint64_t>(*as_u64(*nb), 1, 32));
      break;
    }
  uint64_t bytes = 0, meta = 0, params = 0, expert_params = 0;
  bool unsure = false;
  std::map<std::string, uint64_t> by_dtype;
  for (const auto& t : tensors) {
    bytes += t.bytes;
    if (t.quant_metadata) {
      meta += t.bytes;
      continue;
    }
    uint64_t n = elements(t);
    const bool int_storage = t.dtype == "I32" || t.dtype == "U8" || t.dtype == "I8" || t.dtype == "U32";
    std::string_view name = t.name;
    if (int_storage && (t.dtype == "I32" || t.dtype == "U32") &&
        (text::ends_with(name, ".qweight") || text::ends_with(name, "weight_packed"))) {
      n *= 32 / bits;  // int32 holds 32/bits values
    } else if (t.dtype == "U8" && (method == "bitsandbytes" || method == "mxfp4") &&
               (text::ends_with(name, ".weight") || text::ends_with(name, "_blocks"))) {
      n *= 2;  // two 4-bit values per byte (bnb-8bit stores I8)
    } else if (int_storage && t.dtype != "I8" && n > 1'000'000) {
      unsure = true;
    }
    params += n;
    if (t.expert) expert_params += n;
    by_dtype[t.dtype] += t.bytes;
  }
  m.tensors = std::move(tensors);
  m.weight_bytes = bytes;
  m.quant_metadata_bytes = meta;
  m.weights_exact = true;
  m.source = "safetensors";
  const uint64_t computed = m.n_params;
  m.n_params = params;
  m.n_params_active = params;
  if (m.n_expert > 0 && expert_params > 0)
    m.n_params_active = params - expert_params + expert_params / m.n_expert * m.n_expert_used;
  if (unsure)
    m.notes.push_back("parameter count approximate: packed integer tensors of an unknown layout");
  if (computed && params &&
      (params > computed * 1.05 || params < computed * 0.95))
    m.notes.push_back(fmt::format("config.json shapes give {} parameters, the tensors hold {}",
                                  gb(computed), gb(params)));
  // Drop the "computed from shapes" note: the table is exact.
  m.notes.erase(std::remove_if(m.notes.begin(), m.notes.end(),
                               [](const std::string& s) {
                                 return s.rfind("weights computed from config.json", 0) == 0 ||
                                        s.find("estimated from vision_config") != std::string::npos;
                               }),
                m.notes.end());
  if (m.weights_format.empty() || m.weights_format == dtype_label(m.dtype_bytes)) {
    // Unquantized: name the dominant stored dtype.
    auto best = std::max_element(by_dtype.begin(), by_dtype.end(),
                                 [](const auto& x, const auto& y) { return x.second < y.second; });
    if (best != by_dtype.end()) m.weights_format = best->first;
  }
}

}  // namespace

Result<ModelSpec> spec_from_config(const nlohmann::json& config, const std::string& name,
                                   const std::string& dtype, const std::string& quant) {
  return spec_from_config_at(config, name, name.empty() ? "config.json" : name + ": config.json",
                             dtype, quant);
}

Result<ModelSpec> read_hf_config(const FileSystem& files, const std::string& path, const std::string& dtype,
                                 const std::string& quant) {
  auto j = read_json_file(files, path);
  if (!j) return make_error(j.error().message);
  std::filesystem::path p(path);
  std::string name = p.has_parent_path() ? p.parent_path().filename().string() : "";
  if (name.empty() || name == ".") name = base_name(path);
  auto m = spec_from_config_at(*j, name, path, dtype, quant);
  if (!m) return m;
  m->path = path;
  m->source = "config";
  return m;
}

Result<ModelSpec> read_hf_folder(const FileSystem& files, const std::string& dir) {
  namespace fs = std::filesystem;  // paths only: the files come from `files`
  fs::path root(dir);
  auto exists = [&](const fs::path& p) { return files.kind(p.string()) != FileKind::missing; };
  if (files.kind(dir) != FileKind::directory)
    return make_error(fmt::format("{}: not a directory", dir));
  const std::string config_path = (root / "config.json").string();
  if (!exists(root / "config.json"))
    return make_error(fmt::format("{}: missing (a Hugging Face model folder has one)", config_path));
  auto cfg = read_json_file(files, config_path);
  if (!cfg) return make_error(cfg.error().message);
  std::string name = base_name(dir);
  auto spec = spec_from_config_at(*cfg, name, config_path, "", "");
  if (!spec) return spec;
  ModelSpec& m = *spec;
  m.path = dir;

  // Shards: the index's weight_map, else model.safetensors, else every
  // *.safetensors in the folder.
  std::vector<std::string> shards;
  const fs::path index_path = root / "model.safetensors.index.json";
  if (exists(index_path)) {
    // One shard file per name, in the order of the tensors that name it.
    std::set<std::string> seen;
    auto take = [&](const std::string& tensor, const std::string& shard) -> std::optional<Error> {
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "..")
        return make_error(fmt::format("{}: weight_map['{}'] names '{}', not a file in the folder",
                                      index_path.string(), tensor, shard));
      if (seen.insert(shard).second) {
        if (!exists(root / shard))
          return make_error(fmt::format("{}: shard '{}' (holding '{}') is missing from {}",
                                        index_path.string(), shard, tensor, dir));
        shards.push_back(shard);
      }
      return std::nullopt;
    };
    auto text = read_json_text(files, index_path.string());
    if (!text) return make_error(text.error().message);
    if (auto entries = weight_map_sax(*text)) {
      for (const auto& [tensor, shard] : *entries)
        if (auto e = take(tensor, shard)) return *e;
    } else {
      auto idx = parse_json_text(index_path.string(), *text);
      if (!idx) return make_error(idx.error().message);
      auto wm = idx->find("weight_map");
      if (!idx->is_object() || wm == idx->end() || !wm->is_object())
        return make_error(fmt::format("{}: missing 'weight_map' object", index_path.string()));
      for (auto it = wm->begin(); it != wm->end(); ++it) {
        if (!it.value().is_string())
          return make_error(fmt::format("{}: weight_map['{}'] is {}, expected a file name",
                                        index_path.string(), it.key(), it.value().type_name()));
        if (auto e = take(it.key(), it.value().get_ref<const std::string&>())) return *e;
      }
    }
    std::sort(shards.begin(), shards.end());
  } else if (exists(root / "model.safetensors")) {
    shards.push_back("model.safetensors");
  } else {
    std::vector<std::string> all, consolidated;
    for (const std::string& fn : files.list(dir)) {
      if (!text::ends_with(fn, ".safetensors")) continue;
      (fn.rfind("consolidated", 0) == 0 ? consolidated : all).push_back(fn);
    }
    // Mistral repos ship both consolidated.safetensors and HF shards.
    if (all.empty()) all = consolidated;
    else if (!consolidated.empty())
      m.notes.push_back("consolidated*.safetensors skipped: the same weights as the HF shards");
    std::sort(all.begin(), all.end());
    shards = all;
  }

  if (shards.empty()) {
    m.notes.push_back(fmt::format("no safetensors files in {}: weights computed from config.json", dir));
    return spec;
  }
  std::vector<Tensor> tensors;
  for (const auto& s : shards) {
    auto r = read_safetensors_header(files, (root / s).string());
    if (!r) return make_error(r.error().message);
    for (auto& t : *r) tensors.push_back(std::move(t));
  }
  bool nextn = false;
  {
    Fields f(*cfg, nullptr, config_path);
    auto n = f.u64({"num_nextn_predict_layers"});
    nextn = n && *n > 0;
  }
  apply_tensors(m, std::move(tensors), *cfg, nextn);
  m.notes.push_back(fmt::format("weights summed from {} safetensors header(s)", shards.size()));
  return spec;
}

}  // namespace aimem::fit
