// ModelSpec from a GGUF header, reading the `{arch}.` keys the way
// llama.cpp does (src/llama-model.cpp load_hparams, src/models/*.cpp
// load_arch_hparams, src/llama-hparams.cpp), checked against llama.cpp
// de3ff815. Unknown architectures are read from the generic keys.
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "fit/ggml_types.h"
#include "fit/gguf.h"

namespace aimem::fit {
namespace {

constexpr uint32_t kMaxLayers = 16384;  // llama.cpp allows 512; leave headroom

// How an architecture lays out its sliding-window layers (the
// hparams.set_swa_pattern / load_swa_pattern calls of llama.cpp).
enum class SwaWhen {
  kAlways,      // SWA whatever the file says (window from the key or a default)
  kIfWindow,    // only when {arch}.attention.sliding_window > 0
  kUnlessZero,  // llama4: chunked unless the file sets the window to 0
};
struct SwaRule {
  std::string_view arch;
  uint32_t period;          // load_swa_pattern default; 0 = every layer
  bool dense_first;         // period starts with the full-attention layer
  bool array_only;          // pattern only from sliding_window_pattern (array)
  SwaWhen when;
  uint32_t default_window;  // used when the key is absent
  uint32_t forced_window;   // overrides the key (llama4 8192, smallthinker 4096)
};

constexpr SwaRule kSwaRules[] = {
    {"gemma2", 2, false, false, SwaWhen::kAlways, 4096, 0},
    {"gemma3", 6, false, false, SwaWhen::kIfWindow, 0, 0},
    {"gemma3n", 5, false, false, SwaWhen::kAlways, 0, 0},
    {"gemma4", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"gemma4-assistant", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"gemma-embedding", 6, false, false, SwaWhen::kAlways, 0, 0},
    {"cohere2", 4, false, false, SwaWhen::kAlways, 0, 0},
    {"cohere2moe", 4, true, false, SwaWhen::kAlways, 0, 0},
    {"afmoe", 4, false, false, SwaWhen::kIfWindow, 0, 0},
    {"llama4", 4, false, false, SwaWhen::kUnlessZero, 8192, 8192},
    {"gpt-oss", 2, false, false, SwaWhen::kAlways, 0, 0},
    {"mellum", 4, false, false, SwaWhen::kIfWindow, 0, 0},
    {"olmo2", 4, false, false, SwaWhen::kIfWindow, 0, 0},
    {"exaone4", 4, false, false, SwaWhen::kAlways, 4096, 0},  // 64-layer 32B only
    {"exaone-moe", 4, false, false, SwaWhen::kAlways, 128, 0},
    {"smallthinker", 4, true, false, SwaWhen::kIfWindow, 0, 4096},
    {"plamo3", 8, false, false, SwaWhen::kIfWindow, 0, 0},
    {"modern-bert", 3, true, false, SwaWhen::kIfWindow, 0, 0},
    {"muse-glimmer", 4, false, false, SwaWhen::kAlways, 0, 0},
    {"laguna", 4, true, false, SwaWhen::kIfWindow, 0, 0},
    {"deepseek4", 0, false, false, SwaWhen::kAlways, 0, 0},
    {"granite_swa", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"mimo2", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"step35", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"maple", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"spark2_5", 0, false, true, SwaWhen::kAlways, 0, 0},
    {"dots3note", 0, false, true, SwaWhen::kAlways, 0, 0},
};

// Recurrent (state-space / linear-attention) layers, llm_arch_is_recurrent
// and the is_recr_impl assignments of the hybrid models.
enum class Recurrence { kNone, kAll, kAllPlusAttention, kNoKvHeads, kNemotronH, kInterval };
struct RecurrentRule {
  std::string_view arch;
  Recurrence kind;
  uint32_t interval;  // kInterval: default full_attention_interval
};
constexpr RecurrentRule kRecurrentRules[] = {
    {"mamba", Recurrence::kAll, 0},        {"mamba2", Recurrence::kAll, 0},
    {"rwkv6", Recurrence::kAll, 0},        {"rwkv6qwen2", Recurrence::kAll, 0},
    {"rwkv7", Recurrence::kAll, 0},        {"arwkv7", Recurrence::kAll, 0},
    {"falcon-h1", Recurrence::kAllPlusAttention, 0},
    {"jamba", Recurrence::kNoKvHeads, 0},  {"granitehybrid", Recurrence::kNoKvHeads, 0},
    {"plamo2", Recurrence::kNoKvHeads, 0}, {"lfm2", Recurrence::kNoKvHeads, 0},
    {"lfm2moe", Recurrence::kNoKvHeads, 0}, {"kimi-linear", Recurrence::kNoKvHeads, 0},
    {"kimi-k3", Recurrence::kNoKvHeads, 0}, {"bailingmoe3", Recurrence::kNoKvHeads, 0},
    {"nemotron_h", Recurrence::kNemotronH, 0}, {"nemotron_h_moe", Recurrence::kNemotronH, 0},
    {"qwen3next", Recurrence::kInterval, 4}, {"qwen35", Recurrence::kInterval, 4},
    {"qwen35moe", Recurrence::kInterval, 4}, {"qwen4exp", Recurrence::kInterval, 4},
    {"minimax-01", Recurrence::kInterval, 8},
};

// Architectures for which llama.cpp creates no KV cache (create_memory
// returns nullptr): encoders, embedding and diffusion models.
constexpr std::string_view kNoCacheArchs[] = {
    "bert", "jina-bert-v2", "jina-bert-v3", "nomic-bert", "nomic-bert-moe", "neo-bert",
    "eurobert", "wavtokenizer-dec", "modern-bert", "gemma-embedding", "dream", "llada",
    "llada-moe", "rnd1", "t5encoder",
};

// general.file_type (llama_ftype) to llama_ftype_name's words.
const char* ftype_name(uint32_t ftype) {
  static const std::map<uint32_t, const char*> kNames = {
      {0, "all F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"},
      {9, "Q5_1"}, {10, "Q2_K - Medium"}, {11, "Q3_K - Small"}, {12, "Q3_K - Medium"},
      {13, "Q3_K - Large"}, {14, "Q4_K - Small"}, {15, "Q4_K - Medium"}, {16, "Q5_K - Small"},
      {17, "Q5_K - Medium"}, {18, "Q6_K"}, {19, "IQ2_XXS - 2.0625 bpw"},
      {20, "IQ2_XS - 2.3125 bpw"}, {21, "Q2_K - Small"}, {22, "IQ3_XS - 3.3 bpw"},
      {23, "IQ3_XXS - 3.0625 bpw"}, {24, "IQ1_S - 1.5625 bpw"}, {25, "IQ4_NL - 4.5 bpw"},
      {26, "IQ3_S - 3.4375 bpw"}, {27, "IQ3_S mix - 3.66 bpw"}, {28, "IQ2_S - 2.5 bpw"},
      {29, "IQ2_M - 2.7 bpw"}, {30, "IQ4_XS - 4.25 bpw"}, {31, "IQ1_M - 1.75 bpw"},
      {32, "BF16"}, {36, "TQ1_0 - 1.69 bpw ternary"}, {37, "TQ2_0 - 2.06 bpw ternary"},
      {38, "MXFP4 MoE"}, {39, "NVFP4"}, {40, "Q1_0"}, {41, "Q2_0"},
  };
  auto it = kNames.find(ftype & ~1024u);  // LLAMA_FTYPE_GUESSED
  return it == kNames.end() ? nullptr : it->second;
}

template <typename T, size_t N>
const T* find_rule(const T (&rules)[N], std::string_view arch) {
  for (const T& r : rules) {
    if (r.arch == arch) return &r;
  }
  return nullptr;
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Layer index of "blk.N.*", -1 otherwise.
int layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  long n = 0;
  size_t i = 4;
  for (; i < name.size() && i < 10 && name[i] >= '0' && name[i] <= '9'; ++i) {
    n = n * 10 + (name[i] - '0');
  }
  return (i > 4 && i < name.size() && name[i] == '.') ? static_cast<int>(n) : -1;
}

std::optional<uint32_t> as_u32(double d) {
  if (!(d >= 0) || d > UINT32_MAX || d != std::floor(d)) return std::nullopt;
  return static_cast<uint32_t>(d);
}

class SpecReader {
 public:
  explicit SpecReader(const GgufFile& f) : f_(f) {}

  Result<ModelSpec> run() {
    auto arch = f_.string("general.architecture");
    if (!arch) return make_error(f_.path + ": missing 'general.architecture'");
    arch_ = *arch;
    s_.name = base_name(f_.path);
    s_.source = "gguf";
    s_.path = f_.path;
    s_.architecture = arch_;
    tensors();
    weights_format();
    if (arch_ == "clip") {
      projector();
      return std::move(s_);
    }
    if (!hparams()) return make_error(err_);
    return std::move(s_);
  }

 private:
  // --- keys ---------------------------------------------------------------
  std::string k(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

  bool fail(const std::string& msg) {
    if (err_.empty()) err_ = f_.path + ": " + msg;
    return false;
  }

  // A u32 key: false with err_ set when it is required and missing or bad;
  // `found` says whether it was there.
  bool get(const std::string& key, uint32_t& out, bool required, bool* found = nullptr) {
    if (found) *found = false;
    const GgufValue* v = f_.find(key);
    if (!v) return !required || fail("missing '" + key + "'");
    auto d = v->number();
    if (!d) return fail("'" + key + "' is not a number");
    auto u = as_u32(*d);
    if (!u) return fail("'" + key + "' = " + std::to_string(*d) + " is not a count");
    out = *u;
    if (found) *found = true;
    return true;
  }

  // A scalar, or an array with one value per layer (get_key_or_arr).
  bool per_layer(const std::string& key, std::vector<uint32_t>& out, bool* found = nullptr) {
    if (found) *found = false;
    const GgufValue* v = f_.find(key);
    if (!v) return true;
    if (v->type != GgufType::kArray) {
      uint32_t x = 0;
      if (!get(key, x, true)) return false;
      std::fill(out.begin(), out.end(), x);
    } else {
      if (!v->kept || v->elem_type == GgufType::kString || v->count != out.size()) {
        return fail("'" + key + "' has " + std::to_string(v->count) +
                    " elements, expected one number per layer (" + std::to_string(out.size()) + ")");
      }
      for (size_t i = 0; i < out.size(); ++i) {
        auto u = as_u32(v->nums[i]);
        if (!u) return fail("'" + key + "' element " + std::to_string(i) + " is not a count");
        out[i] = *u;
      }
    }
    if (found) *found = true;
    return true;
  }

  // --- tensors ------------------------------------------------------------
  void tensors() {
    std::map<std::string, uint64_t> bytes_by_type;
    uint64_t expert_params = 0;
    bool has_output = false;
    for (const GgufTensorInfo& ti : f_.tensors) {
      Tensor t;
      t.name = ti.name;
      const GgmlTypeInfo* info = ggml_type_info(ti.type);
      t.dtype = info ? std::string(info->name) : "type " + std::to_string(ti.type);
      t.ggml_type = ti.type;
      t.ne = ti.ne;
      t.n_dims = ti.n_dims;
      t.bytes = ti.bytes;
      t.offset = ti.offset;
      t.offset = ti.offset;
      t.layer = layer_of(ti.name);
      t.expert = ti.name.find("_exps") != std::string::npos;
      t.vision = arch_ == "clip" || ti.name.rfind("v.", 0) == 0 || ti.name.rfind("mm.", 0) == 0;
      uint64_t elems = ti.ne[0] * ti.ne[1] * ti.ne[2] * ti.ne[3];  // < 2^63, checked by the reader
      s_.n_params += elems;
      if (t.expert) expert_params += elems;
      s_.weight_bytes += t.bytes;
      bytes_by_type[t.dtype] += t.bytes;
      if (ti.name == "output.weight") has_output = true;
      if (ti.name == "token_embd.weight") embd_rows_ = static_cast<uint32_t>(std::min<uint64_t>(ti.ne[1], UINT32_MAX));
      s_.tensors.push_back(std::move(t));
    }
    s_.weights_exact = !f_.tensors.empty();  // a vocab-only file has no weights to sum
    s_.tied_embeddings = !f_.tensors.empty() && !has_output;
    expert_params_ = expert_params;
    uint64_t best = 0;
    for (const auto& [type, bytes] : bytes_by_type) {
      if (bytes > best) best = bytes, main_type_ = type;
    }
  }

  void weights_format() {
    if (auto ft = f_.number("general.file_type")) {
      if (auto u = as_u32(*ft)) {
        if (const char* name = ftype_name(*u)) {
          s_.weights_format = name;
          return;
        }
      }
    }
    s_.weights_format = main_type_;
    if (main_type_ == "F32") s_.dtype_bytes = 4;
  }

  // An mmproj / vision encoder file: weights only, the clip.vision.* shape.
  void projector() {
    s_.is_projector = true;
    s_.n_params_active = s_.n_params;
    // The shape is informative only: a bad value is left at 0, not an error.
    get("clip.vision.block_count", s_.n_layer, false);
    get("clip.vision.embedding_length", s_.n_embd, false);
    get("clip.vision.attention.head_count", s_.n_head, false);
    get("clip.vision.feed_forward_length", s_.n_ff, false);
    err_.clear();
    s_.notes.push_back("multimodal projector (mmproj): weights only, no KV cache");
  }

  // --- hyperparameters ----------------------------------------------------
  bool hparams() {
    if (!get(k("block_count"), n_layer_all_, true) || !get(k("embedding_length"), s_.n_embd, true) ||
        !get(k("context_length"), s_.n_ctx_train, true)) {
      return false;
    }
    if (n_layer_all_ == 0 || n_layer_all_ > kMaxLayers) {
      return fail("'" + k("block_count") + "' = " + std::to_string(n_layer_all_) +
                  " is not a layer count (1 to " + std::to_string(kMaxLayers) + ")");
    }
    uint32_t nextn = 0;
    if (!get(k("nextn_predict_layers"), nextn, false)) return false;
    if (nextn >= n_layer_all_) {
      return fail("'" + k("nextn_predict_layers") + "' = " + std::to_string(nextn) +
                  " is not less than the block count " + std::to_string(n_layer_all_));
    }
    s_.n_layer = n_layer_all_ - nextn;
    if (nextn) {
      s_.notes.push_back(std::to_string(nextn) + " multi-token-prediction layer(s) not counted in n_layer");
    }
    return heads() && ffn_and_experts() && head_dims() && mla() && swa() && kv_sharing() &&
           recurrent() && finish();
  }

  bool heads() {
    n_head_.assign(n_layer_all_, 0);
    if (!per_layer(k("attention.head_count"), n_head_)) return false;
    n_head_kv_ = n_head_;  // head_count_kv defaults to head_count
    if (!per_layer(k("attention.head_count_kv"), n_head_kv_)) return false;
    s_.n_head = *std::max_element(n_head_.begin(), n_head_.end());
    return true;
  }

  bool ffn_and_experts() {
    n_ff_.assign(n_layer_all_, 0);
    std::vector<uint32_t> used(n_layer_all_, 0), ff_exp(n_layer_all_, 0);
    if (!per_layer(k("feed_forward_length"), n_ff_) || !get(k("expert_count"), s_.n_expert, false) ||
        !per_layer(k("expert_used_count"), used) ||
        !per_layer(k("expert_feed_forward_length"), ff_exp) ||
        !get(k("expert_shared_count"), s_.n_expert_shared, false)) {
      return false;
    }
    s_.n_ff = *std::max_element(n_ff_.begin(), n_ff_.end());
    s_.n_expert_used = *std::max_element(used.begin(), used.end());
    s_.n_ff_exp = *std::max_element(ff_exp.begin(), ff_exp.end());
    if (s_.n_expert_used > s_.n_expert) {
      return fail("'" + k("expert_used_count") + "' = " + std::to_string(s_.n_expert_used) +
                  " is more than '" + k("expert_count") + "' = " + std::to_string(s_.n_expert));
    }
    return true;
  }

  // Per-head K/V widths; llama.cpp defaults them to n_embd / n_head(0).
  bool head_dims() {
    const uint32_t h0 = n_head_[0];
    uint32_t kd = h0 ? s_.n_embd / h0 : 0, vd = kd;
    if (h0 && (!get(k("attention.key_length"), kd, false) ||
               !get(k("attention.value_length"), vd, false))) {
      return false;
    }
    s_.head_dim_k = kd;
    s_.head_dim_v = vd;
    s_.n_rot = kd;
    if (h0 && !get(k("rope.dimension_count"), s_.n_rot, false)) return false;
    uint32_t ks = kd, vs = vd;
    if (!get(k("attention.key_length_swa"), ks, false) ||
        !get(k("attention.value_length_swa"), vs, false)) {
      return false;
    }
    if (ks != kd || vs != vd) s_.head_dim_k_swa = ks, s_.head_dim_v_swa = vs;
    return true;
  }

  // MLA (DeepSeek V2/V3, Kimi K2, GLM-DSA, Mistral 4): files converted with
  // key_length_mla cache one latent of kv_lora_rank + n_rot per token and
  // no V; older files without it run as plain MHA in current llama.cpp.
  bool mla() {
    uint32_t rank = 0, kmla = 0, vmla = 0;
    bool has_rank = false;
    if (!get(k("attention.kv_lora_rank"), rank, false, &has_rank) ||
        !get(k("attention.key_length_mla"), kmla, false) ||
        !get(k("attention.value_length_mla"), vmla, false)) {
      return false;
    }
    if (!has_rank || rank == 0) return true;
    if (kmla == 0 || vmla == 0) {
      s_.notes.push_back("MLA weights without key_length_mla (an older conversion): llama.cpp "
                         "caches full per-head K and V; re-convert for the compressed MLA cache");
      return true;
    }
    s_.kv_lora_rank = rank;
    s_.notes.push_back("MLA: the KV cache holds one latent of " + std::to_string(rank) + " + " +
                       std::to_string(s_.n_rot) + " values per token and layer (no V)");
    return true;
  }

  // The sliding-window layers, as the architecture's load_arch_hparams sets them.
  bool swa() {
    swa_.assign(n_layer_all_, false);
    bool has_window = false;
    uint32_t window = 0;
    if (!get(k("attention.sliding_window"), window, false, &has_window)) return false;
    const SwaRule* rule = find_rule(kSwaRules, arch_);
    if (arch_ == "exaone4" && s_.n_layer != 64) rule = nullptr;
    if (arch_ == "lfm2") return lfm2_swa(window);
    if (!rule) return generic_swa(window);
    switch (rule->when) {
      case SwaWhen::kIfWindow:
        if (window == 0) return true;
        break;
      case SwaWhen::kUnlessZero:
        if (has_window && window == 0) return true;
        break;
      case SwaWhen::kAlways:
        break;
    }
    if (!has_window) window = rule->default_window;
    if (rule->forced_window) window = rule->forced_window;
    if (window == 0) {
      s_.notes.push_back("no '" + k("attention.sliding_window") + "': every layer assumed full attention");
      return true;
    }
    s_.n_swa = window;
    if (arch_ == "llama4") s_.notes.push_back("chunked attention (chunk " + std::to_string(window) + ") counted as a sliding window");
    return pattern(rule->period, rule->dense_first, rule->array_only);
  }

  // sliding_window_pattern: an array of per-layer flags, or a period.
  bool pattern(uint32_t period, bool dense_first, bool array_only) {
    const GgufValue* v = f_.find(k("attention.sliding_window_pattern"));
    if (v && v->type == GgufType::kArray) return pattern_array(*v);
    if (array_only) {
      s_.n_swa = 0;
      s_.notes.push_back("no '" + k("attention.sliding_window_pattern") + "' array: every layer assumed full attention");
      return true;
    }
    if (v && !get(k("attention.sliding_window_pattern"), period, true)) return false;
    for (uint32_t il = 0; il < s_.n_layer; ++il) {  // set_swa_pattern
      swa_[il] = dense_first ? (period == 0 || il % period != 0)
                             : (period == 0 || il % period < period - 1);
    }
    return true;
  }

  bool pattern_array(const GgufValue& v) {
    if (!v.kept || v.elem_type == GgufType::kString) {
      return fail("'" + k("attention.sliding_window_pattern") + "' is not an array of flags");
    }
    for (uint32_t il = 0; il < s_.n_layer && il < v.nums.size(); ++il) swa_[il] = v.nums[il] != 0;
    return true;
  }

  bool generic_swa(uint32_t window) {
    const GgufValue* v = f_.find(k("attention.sliding_window_pattern"));
    if (window == 0) return true;
    if (v && v->type == GgufType::kArray) {  // an explicit per-layer pattern is meant
      s_.n_swa = window;
      return pattern_array(*v);
    }
    s_.notes.push_back("'" + k("attention.sliding_window") + "' = " + std::to_string(window) +
                       " is not used by llama.cpp for " + arch_ + ": every layer counted as full attention");
    return true;
  }

  // LFM2: the attention layers are the sliding-window ones.
  bool lfm2_swa(uint32_t window) {
    if (window == 0) return true;
    s_.n_swa = window;
    for (uint32_t il = 0; il < s_.n_layer; ++il) swa_[il] = n_head_kv_[il] != 0;
    return true;
  }

  // Gemma 3n / Gemma 4: the last layers reuse the KV of earlier ones.
  bool kv_sharing() {
    uint32_t from = n_layer_all_;
    if (arch_ == "gemma3n") {
      from = 20;
    } else if (arch_ == "gemma4") {
      uint32_t shared = 0;
      if (!get(k("attention.shared_kv_layers"), shared, false)) return false;
      from = shared < n_layer_all_ ? n_layer_all_ - shared : 0;
    }
    if (from >= s_.n_layer) return true;
    for (uint32_t il = from; il < n_layer_all_; ++il) n_head_kv_[il] = 0;
    s_.notes.push_back("layers " + std::to_string(from) + "+ reuse the KV cache of earlier layers");
    return true;
  }

  // Which layers keep a recurrent state, and how large it is (n_embd_r,
  // n_embd_s of llama-hparams.cpp).
  bool recurrent() {
    std::vector<bool> recr(n_layer_all_, false);
    if (!recurrent_layers(recr)) return false;
    if (std::none_of(recr.begin(), recr.end(), [](bool b) { return b; })) return true;
    uint64_t r = 0, st = 0;
    if (!state_sizes(r, st)) return false;
    s_.recurrent_r.assign(s_.n_layer, 0);
    s_.recurrent_s.assign(s_.n_layer, 0);
    for (uint32_t il = 0; il < s_.n_layer; ++il) {
      if (recr[il]) s_.recurrent_r[il] = r, s_.recurrent_s[il] = st;
    }
    return true;
  }

  bool recurrent_layers(std::vector<bool>& recr) {
    const RecurrentRule* rule = find_rule(kRecurrentRules, arch_);
    Recurrence kind = rule ? rule->kind : Recurrence::kNone;
    if (!rule && (f_.find(k("ssm.state_size")) || f_.find(k("wkv.head_size")) ||
                  f_.find(k("shortconv.l_cache")))) {
      bool any_kv = std::any_of(n_head_kv_.begin(), n_head_kv_.end(), [](uint32_t h) { return h; });
      kind = any_kv ? Recurrence::kNoKvHeads : Recurrence::kAll;
      s_.notes.push_back(arch_ + ": recurrent layers guessed from the ssm/wkv keys");
    }
    for (uint32_t il = 0; il < s_.n_layer; ++il) {
      switch (kind) {
        case Recurrence::kNone: break;
        case Recurrence::kAll: case Recurrence::kAllPlusAttention: recr[il] = true; break;
        case Recurrence::kNoKvHeads: recr[il] = n_head_kv_[il] == 0; break;
        case Recurrence::kNemotronH: recr[il] = n_head_kv_[il] == 0 && n_ff_[il] == 0; break;
        case Recurrence::kInterval: break;
      }
    }
    if (kind == Recurrence::kInterval && !interval_layers(recr, rule->interval)) return false;
    // Only attention layers hold KV (falcon-h1 has both in every layer;
    // in nemotron-h the MLP layers have neither).
    for (uint32_t il = 0; il < n_layer_all_; ++il) {
      if (kind == Recurrence::kAllPlusAttention) break;
      if (recr[il] || (kind == Recurrence::kNemotronH && n_ff_[il] != 0)) n_head_kv_[il] = 0;
    }
    return true;
  }

  // Qwen3-Next / Qwen3.5 / MiniMax-01: recurrent_layers flags, or every
  // layer but each full_attention_interval-th.
  bool interval_layers(std::vector<bool>& recr, uint32_t interval) {
    const GgufValue* v = f_.find(k("attention.recurrent_layers"));
    if (v) {
      std::vector<uint32_t> flags(n_layer_all_, 0);
      if (!per_layer(k("attention.recurrent_layers"), flags)) return false;
      for (uint32_t il = 0; il < n_layer_all_; ++il) recr[il] = flags[il] != 0;
      return true;
    }
    if (!get(k("full_attention_interval"), interval, false)) return false;
    if (interval == 0) return fail("'" + k("full_attention_interval") + "' is 0");
    for (uint32_t il = 0; il < s_.n_layer; ++il) recr[il] = (il + 1) % interval != 0;
    return true;
  }

  bool state_sizes(uint64_t& r, uint64_t& st) {
    uint32_t wkv = 0, shift = 2, l_cache = 0, kda = 0, d_conv = 0, d_inner = 0, d_state = 0,
             n_group = 0;
    if (!get(k("wkv.head_size"), wkv, false) || !get(k("token_shift_count"), shift, false) ||
        !get(k("shortconv.l_cache"), l_cache, false) || !get(k("kda.head_dim"), kda, false) ||
        !get(k("ssm.conv_kernel"), d_conv, false) || !get(k("ssm.inner_size"), d_inner, false) ||
        !get(k("ssm.state_size"), d_state, false) || !get(k("ssm.group_count"), n_group, false)) {
      return false;
    }
    const uint64_t embd = s_.n_embd, h0 = n_head_[0];
    const uint64_t la = arch_ == "minimax-01" ? s_.head_dim_k : 0;
    if (wkv) {
      r = uint64_t{shift} * embd;
    } else if (l_cache) {
      r = embd * (l_cache - 1);
    } else if (kda) {
      r = 3ull * (d_conv > 0 ? d_conv - 1 : 3) * h0 * kda;
    } else {
      r = uint64_t{d_conv > 0 ? d_conv - 1 : 0} * (d_inner + 2ull * n_group * d_state);
    }
    if (wkv) {
      st = embd * wkv;
    } else if (kda) {
      st = uint64_t{kda} * kda * h0;
    } else if (la) {
      st = la * la * h0;
    } else {
      st = uint64_t{d_state} * d_inner;
    }
    return true;
  }

  bool finish() {
    s_.n_head_kv.assign(n_head_kv_.begin(), n_head_kv_.begin() + s_.n_layer);
    s_.swa_layer.assign(swa_.begin(), swa_.begin() + s_.n_layer);
    if (s_.n_swa == 0) std::fill(s_.swa_layer.begin(), s_.swa_layer.end(), false);
    vocab();
    causal();
    s_.n_params_active = s_.n_params;
    if (s_.n_expert > 0 && expert_params_ > 0) {
      uint64_t inactive = expert_params_ - expert_params_ / s_.n_expert * s_.n_expert_used;
      s_.n_params_active = s_.n_params - inactive;
    }
    return true;
  }

  void vocab() {
    const GgufValue* tokens = f_.find("tokenizer.ggml.tokens");
    uint32_t n = 0;
    if (tokens && tokens->type == GgufType::kArray) {
      n = static_cast<uint32_t>(std::min<uint64_t>(tokens->count, UINT32_MAX));
    }
    if (n == 0) {
      get(k("vocab_size"), n, false);
      err_.clear();
    }
    if (n == 0) n = embd_rows_;
    s_.n_vocab = n;
  }

  // Encoders, embedding and diffusion models run without a KV cache. A
  // pooling_type alone does not make a model non-causal: decoder-based
  // embedders (Qwen3-Embedding, last-token pooling) still get a KV cache.
  void causal() {
    const GgufValue* c = f_.find(k("attention.causal"));
    if (c && c->number() && *c->number() == 0) s_.causal = false;
    for (std::string_view a : kNoCacheArchs) {
      if (a == arch_) s_.causal = false;
    }
    auto pooling = f_.number(k("pooling_type"));
    if (pooling && *pooling != 0) {
      s_.notes.push_back("an embedding / reranker model (pooling type " +
                         (as_u32(*pooling) ? std::to_string(*as_u32(*pooling)) : std::string("?")) + ")");
    }
  }

  const GgufFile& f_;
  ModelSpec s_;
  std::string arch_;
  std::string err_;
  std::string main_type_;
  uint32_t n_layer_all_ = 0;
  uint32_t embd_rows_ = 0;
  uint64_t expert_params_ = 0;
  std::vector<uint32_t> n_head_, n_head_kv_, n_ff_;
  std::vector<bool> swa_;
};

}  // namespace

Result<ModelSpec> spec_from_gguf(const GgufFile& f) { return SpecReader(f).run(); }

}  // namespace aimem::fit
