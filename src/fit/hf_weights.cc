// Storage formats (GPTQ, AWQ, bitsandbytes, FP8, compressed-tensors, MXFP4,
// int8) and the weights of a decoder counted from its shapes: every matrix
// (attention incl. MLA's low-rank projections, gated or plain MLP, MoE
// experts, router and shared experts), the embeddings, the norms and the
// lm_head unless tied, plus a rough vision tower where the config has one.
// Quantization formats change only the linear layers of the decoder blocks;
// embeddings, lm_head and norms stay in the torch dtype.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text.h"
#include "fit/hf_parts.h"

namespace aimem::fit::hf {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// [a, b] with both positive (block sizes).
std::optional<std::pair<uint64_t, uint64_t>> positive_pair(const json& v) {
  if (!v.is_array() || v.size() != 2) return std::nullopt;
  auto a = as_u64(v[0]), b = as_u64(v[1]);
  if (!a || !b || *a == 0 || *b == 0) return std::nullopt;
  return std::make_pair(*a, *b);
}

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

}  // namespace

// A non-negative integer whether nlohmann stored it signed or unsigned
// (parsed text is unsigned, values built in code are signed).
std::optional<uint64_t> as_u64(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

std::string gb(uint64_t params) { return fmt::format("{:.2f}B", static_cast<double>(params) / 1e9); }


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

}  // namespace aimem::fit::hf
