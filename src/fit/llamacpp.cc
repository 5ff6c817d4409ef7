// llama.cpp (and Ollama on top of it): how the engine allocates, mirrored from
// its source (src/llama-context.cpp, src/llama-kv-cache.cpp,
// src/llama-kv-cache-iswa.cpp, src/llama-model.cpp) at the version node-llama-cpp
// bundles, and checked against the buffer sizes that engine logs
// (docs/fit-llamacpp.md has the measurements).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "fit/ggml_types.h"
#include "fit/runtime.h"

namespace aimem::fit {
namespace {

uint32_t pad(uint64_t x, uint32_t n) { return uint32_t((x + n - 1) / n * n); }

std::string gpu_name(uint32_t i) { return fmt::format("GPU{}", i); }

}  // namespace

// Weights per buffer from the tensor table, as llama.cpp's loader assigns
// them (src/llama-model.cpp load_tensors, src/llama-model-loader.cpp):
//  - token_embd stays on the CPU; blocks and the output layer go to the
//    device their layer index is placed on; --n-cpu-moe keeps experts on the CPU;
//  - on an AMX CPU, blocks' and the output's 2-D matmul weights of the
//    supported types move to the AMX buffer (ggml-cpu/amx: supports_op and
//    get_alloc_size; Q8_0 gains 4 bytes per block, Q4_K/Q5_K 4 and IQ4_XS 2
//    per 256);
//  - with mmap the CPU_Mapped buffer is the file span from the first to the
//    end of the last tensor left in the CPU buffer (get_mapping_range), so
//    it includes the repacked tensors that lie between; without mmap the CPU
//    buffer is the sum of those tensors, each padded to 32 bytes.
// Measured equal to the engine's logged buffers (docs/fit-llamacpp.md §4).
// dev_of(il) is the index of layer il's device (n_gpus: the host). Called
// for every tensor in every plan of fit's searches, so it avoids strings.
template <typename DevOf>
void place_tensors(const ModelSpec& m, const FitSettings& s, const Hardware& hw, uint32_t n_layer,
                   DevOf dev_of, uint32_t n_gpus, Plan& p, std::vector<uint64_t>& on) {
  uint64_t amx = 0, cpu_sum = 0, span_lo = UINT64_MAX, span_hi = 0;
  uint64_t token_embd = 0;
  for (const Tensor& t : m.tensors) {
    const bool is_embd = t.layer < 0 && (t.name.rfind("token_embd", 0) == 0 || t.name.rfind("position_embd", 0) == 0 ||
                                         t.name.rfind("token_types", 0) == 0);
    uint32_t d;
    if (is_embd) d = n_gpus;
    else if (t.layer >= 0 && uint32_t(t.layer) < n_layer) d = (t.expert && uint32_t(t.layer) < s.n_cpu_moe) ? n_gpus : dev_of(uint32_t(t.layer));
    else d = dev_of(n_layer);  // output layer (and MTP blocks, loaded with it)
    if (d != n_gpus) {
      on[d] += t.bytes;
      continue;
    }
    if (is_embd && t.name.rfind("token_embd.weight", 0) == 0) token_embd = t.bytes;
    uint64_t repacked = 0;
    if (hw.cpu_amx && !is_embd && t.n_dims == 2 && !t.expert && !t.vision && t.ne[1] % 32 == 0) {
      const std::string& ty = t.dtype;
      uint64_t k = t.ne[0], n = t.ne[1], align = 0, extra = 0;
      if (ty == "F16") align = 16;
      else if (ty == "Q4_0" || ty == "Q4_1") align = 32;
      else if (ty == "Q8_0") { align = 32; extra = 4 * (k / 32) * n; }
      else if (ty == "Q4_K" || ty == "Q5_K") { align = 256; extra = 4 * (k / 256) * n; }
      else if (ty == "Q6_K") align = 256;
      else if (ty == "IQ4_XS") { align = 256; extra = 2 * (k / 256) * n; }
      if (align && k % align == 0) repacked = t.bytes + extra;
    }
    if (repacked) {
      amx += repacked;
      continue;
    }
    cpu_sum += (t.bytes + 31) / 32 * 32;
    span_lo = std::min(span_lo, t.offset);
    span_hi = std::max(span_hi, t.offset + t.bytes);
  }
  uint64_t cpu = s.mmap ? (span_hi > span_lo ? span_hi - span_lo : 0) : cpu_sum;
  on[n_gpus] = cpu + amx;
  for (uint32_t g = 0; g < n_gpus; ++g)
    if (on[g]) add_term(p, "GPU" + std::to_string(g), "weights", "model buffer (offloaded layers)", on[g], true);
  std::string what = s.mmap ? (cpu > token_embd + 64 * 1024 ? "CPU_Mapped: mmap'ed file span (page cache)"
                                                            : "CPU_Mapped: token embedding (mmap, page cache)")
                            : "CPU buffer (private copy)";
  add_term(p, "host", "weights", what, cpu, true);
  if (amx)
    add_term(p, "host", "weights", s.mmap ? "AMX: matmul weights repacked (anonymous copy beside the mmap)"
                                          : "AMX: matmul weights repacked", amx, true);
}

namespace {

// The settings as the engine resolves them, and the device of each layer.
struct Setup {
  bool ollama = false;
  uint32_t seqs = 1, ctx = 0, n_ctx = 0;  // n_ctx: llama-server -c, every slot together
  bool unified = true;
  uint32_t cells = 0, streams = 1, batch = 0, ubatch = 0;
  std::string type_k, type_v;
  bool fa = false;
  uint32_t n_layer = 1, n_gpus = 0;
  int ngl = 0, i_gpu_start = 0;

  // il == n_layer: the output layer; n_gpus: the host.
  uint32_t dev_of(uint32_t il) const {
    if (n_gpus == 0 || int(il) < i_gpu_start) return n_gpus;
    uint32_t act = n_layer + 1 - i_gpu_start;
    return std::min<uint32_t>(n_gpus - 1, uint32_t(uint64_t(il - i_gpu_start) * n_gpus / act));
  }
  std::string device_of(uint32_t il) const {
    uint32_t d = dev_of(il);
    return d == n_gpus ? std::string("host") : gpu_name(d);
  }
};

Setup resolve_setup(const ModelSpec& m, const FitSettings& s, const Hardware& hw, Plan& p) {
  Setup k;
  const bool ollama = k.ollama = s.runtime == Runtime::kOllama;
  p.engine = ollama ? "Ollama (llama.cpp runner; defaults of Ollama 0.12: num_ctx 4096, num_parallel 1)"
                    : "llama.cpp v0.5.0 as bundled by node-llama-cpp 3.22.1 (llama-server defaults)";
  // --- settings, as the engine resolves them ---
  k.seqs = s.concurrency ? s.concurrency : 1;
  k.ctx = s.ctx ? s.ctx : (ollama ? 4096 : (m.n_ctx_train ? m.n_ctx_train : 4096));
  k.n_ctx = pad(uint64_t(k.ctx) * k.seqs, 256);  // llama-server -c covers every slot
  k.unified = s.unified_kv;
  k.cells = k.unified ? k.n_ctx : pad(k.n_ctx / k.seqs, 256);
  k.streams = k.unified ? 1 : k.seqs;
  k.batch = std::min(s.batch ? s.batch : 2048u, k.n_ctx);
  k.ubatch = std::min(s.ubatch ? s.ubatch : 512u, k.batch);
  k.type_k = s.kv_type.empty() ? "f16" : s.kv_type;
  k.type_v = k.type_k;
  k.fa = s.flash_attn.value_or(!ollama);  // -fa auto enables it where supported
  if (kv_type_quantized(k.type_v) && !k.fa) {
    k.fa = true;
    p.assumptions.push_back("a quantized V cache needs flash attention; it is counted as on");
  }
  p.ctx = k.ctx;
  p.concurrency = k.seqs;
  p.batch = k.batch;
  p.ubatch = k.ubatch;
  p.kv_type = k.type_k;
  p.flash_attn = k.fa;
  p.kv_cells = k.cells;
  p.kv_streams = k.streams;

  // --- devices and layer placement ---
  k.n_layer = std::max<uint32_t>(1, m.n_layer);
  k.n_gpus = s.device_cpu ? 0 : std::max<uint32_t>(hw.gpu_count ? s.gpus : 0, hw.gpu_count ? 1 : 0);
  k.ngl = k.n_gpus == 0 ? 0 : (s.gpu_layers < 0 ? int(k.n_layer) + 1 : std::min<int>(s.gpu_layers, k.n_layer + 1));
  p.gpu_layers = k.ngl;
  p.n_layer_total = k.n_layer + 1;
  k.i_gpu_start = std::max<int>(int(k.n_layer) + 1 - k.ngl, 0);
  return k;
}

// The cells of the sliding-window cache (src/llama-kv-cache-iswa.cpp):
// GGML_PAD(min(n_ctx_seq, n_swa * (unified ? n_seq_max : 1) + n_ubatch), 256),
// one set per stream like the base cache (n_stream = unified ? 1 : n_seq_max).
// n_ctx_seq is a multiple of 256, so padding before the min is the same.
uint32_t swa_cells_of(const ModelSpec& m, const Setup& k) {
  return std::min<uint32_t>(k.cells, pad(uint64_t(m.n_swa) * (k.unified ? k.seqs : 1) + k.ubatch, 256));
}

// Weights per device (the last is the host), from the tensor table when
// there is one, else from the layer layout.
std::vector<uint64_t> plan_weights(const ModelSpec& m, const FitSettings& s, const Hardware& hw, const Setup& k,
                                   const WeightLayout& w, Plan& p) {
  const uint32_t n_gpus = k.n_gpus, n_layer = k.n_layer;
  const bool exact_w = w.exact;
  std::vector<uint64_t> on(n_gpus + 1, 0);  // weights per device (last = host)
  auto idx = [&](const std::string& d) { return d == "host" ? n_gpus : uint32_t(std::stoul(d.substr(3))); };
  if (m.source == "gguf" && !m.tensors.empty()) {
    place_tensors(m, s, hw, n_layer, [&k](uint32_t il) { return k.dev_of(il); }, n_gpus, p, on);
  } else {
    // No tensor table: the input embedding stays on the CPU, blocks and the
    // output layer go where the layer count puts them.
    on[n_gpus] += w.input;
    for (uint32_t il = 0; il < n_layer && il < w.dense.size(); ++il) {
      std::string d = k.device_of(il);
      bool experts_on_cpu = il < s.n_cpu_moe;
      on[idx(d)] += w.dense[il];
      on[experts_on_cpu ? n_gpus : idx(d)] += w.experts[il];
    }
    on[idx(k.device_of(n_layer))] += w.output;
    for (uint32_t g = 0; g <= n_gpus; ++g) {
      if (!on[g]) continue;
      std::string d = g == n_gpus ? "host" : gpu_name(g);
      add_term(p, d, "weights",
               g == n_gpus ? (s.mmap ? "weights kept on the CPU (mmap, page cache)" : "weights kept on the CPU")
                           : "model buffer (offloaded layers)",
               on[g], exact_w, 0.03);
    }
  }
  if (w.vision) add_term(p, n_gpus ? gpu_name(0) : "host", "extra_models", "vision tower in the same file", w.vision, exact_w);
  if (w.quant_metadata) p.assumptions.push_back("quantization scales are inside the GGUF blocks (counted in weights)");
  return on;
}

// KV cache (and recurrent state) per layer, on its layer's device.
void plan_kv_cache(const ModelSpec& m, const Setup& k, bool exact_w, Plan& p) {
  const uint32_t n_gpus = k.n_gpus, n_layer = k.n_layer, cells = k.cells, seqs = k.seqs, streams = k.streams;
  const bool fa = k.fa;
  const std::string &type_k = k.type_k, &type_v = k.type_v;
  auto dev_of = [&k](uint32_t il) { return k.dev_of(il); };
  std::vector<uint64_t> kv(n_gpus + 1, 0);
  uint64_t kv_token_full = 0;  // bytes per cell over full-attention layers
  const uint32_t width_v_max = [&] {
    uint32_t mx = 0;
    for (uint32_t il = 0; il < n_layer; ++il) {
      bool swa = il < m.swa_layer.size() && m.swa_layer[il];
      uint32_t hv = swa && m.head_dim_v_swa ? m.head_dim_v_swa : m.head_dim_v;
      mx = std::max(mx, hv * head_kv(m, il));
    }
    return mx;
  }();
  const bool mla = m.kv_lora_rank > 0;
  uint32_t swa_cells = 0;
  for (uint32_t il = 0; il < n_layer; ++il) {
    uint32_t nkv = head_kv(m, il);
    // A hybrid's recurrent layers have no KV (llama-memory-hybrid.cpp: the
    // default filter_attn is !is_recr(il)); MLA layers are cached whatever
    // head_count_kv says, but in Kimi-Linear the KDA layers between them are
    // recurrent and cache nothing.
    const bool recurrent_only = nkv == 0 && ((il < m.recurrent_r.size() && m.recurrent_r[il] > 0) ||
                                             (il < m.recurrent_s.size() && m.recurrent_s[il] > 0));
    if (nkv == 0 && (!mla || recurrent_only)) continue;
    bool swa = m.n_swa > 0 && il < m.swa_layer.size() && m.swa_layer[il];
    uint32_t c = cells;
    if (swa) swa_cells = c = swa_cells_of(m, k);
    uint64_t wk, wv;
    if (mla) {  // K-only cache of the latent (kv_lora_rank + rope dims), one head
      wk = uint64_t(m.kv_lora_rank) + m.n_rot;
      wv = 0;
    } else {
      wk = uint64_t(swa && m.head_dim_k_swa ? m.head_dim_k_swa : m.head_dim_k) * nkv;
      wv = fa ? uint64_t(swa && m.head_dim_v_swa ? m.head_dim_v_swa : m.head_dim_v) * nkv : width_v_max;
    }
    uint64_t row = kv_row_bytes(type_k, wk, m.dtype_bytes) + (wv ? kv_row_bytes(type_v, wv, m.dtype_bytes) : 0);
    kv[dev_of(il)] += row * c * streams;
    if (!swa) kv_token_full += row;
  }
  // Recurrent state (src/llama-memory-recurrent.cpp, llama_memory_recurrent):
  // per recurrent layer an F32 row of n_embd_r (conv state) and one of n_embd_s
  // (SSM / WKV state) for each of mem_size * (1 + n_rs_seq) cells, with
  // mem_size = max(1, n_seq_max) and n_rs_seq = 0 (no partial rollback;
  // neither llama-server nor node-llama-cpp sets it); one "RS buffer" per device.
  std::vector<uint64_t> rs(n_gpus + 1, 0);
  for (uint32_t il = 0; il < n_layer && il < m.recurrent_r.size(); ++il) {
    const uint64_t r = m.recurrent_r[il], st = il < m.recurrent_s.size() ? m.recurrent_s[il] : 0;
    rs[dev_of(il)] += (r + st) * 4 * seqs;
  }
  p.kv_bytes_per_token = kv_token_full;
  for (uint32_t g = 0; g <= n_gpus; ++g) {
    if (!kv[g]) continue;
    std::string what = fmt::format("KV cache ({}, {} cells x {} stream{}{})", type_k, cells, streams,
                                   streams == 1 ? "" : "s",
                                   swa_cells ? fmt::format(", SWA layers {} cells", swa_cells) : "");
    add_term(p, g == n_gpus ? "host" : gpu_name(g), "kv_cache", what, kv[g], exact_w || !m.n_head_kv.empty());
  }
  for (uint32_t g = 0; g <= n_gpus; ++g) {
    if (!rs[g]) continue;
    add_term(p, g == n_gpus ? "host" : gpu_name(g), "kv_cache",
             fmt::format("recurrent state (f32, {} sequence{}, RS buffer)", seqs, seqs == 1 ? "" : "s"), rs[g], true);
  }

}

// The worst-case graph llama.cpp reserves, as the replay reads it (the
// MLA, sliding-window and MoE variants); dense_ff > 0 asks for a second replay
// of the dense FFN layers of a model that has both.
GraphShape graph_shape(const ModelSpec& m, const Setup& k, uint64_t& dense_ff) {
  const bool mla = m.kv_lora_rank > 0;
  GraphShape gs;
  gs.n_embd = m.n_embd;
  gs.n_head = m.n_head;
  gs.n_head_kv = mla ? 1 : std::max<uint32_t>(1, head_kv(m, 0));
  gs.head_dim = mla ? m.kv_lora_rank + m.n_rot : m.head_dim_k;
  gs.n_ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * (std::max<uint32_t>(1, m.n_expert_used) + m.n_expert_shared);
  gs.n_vocab = m.n_vocab;
  gs.n_ubatch = std::min(k.n_ctx, k.ubatch);
  gs.n_kv = k.cells;
  gs.n_seq = k.seqs;
  gs.flash_attn = k.fa;
  gs.k_quant = kv_type_quantized(k.type_k);
  gs.v_quant = kv_type_quantized(k.type_v);
  if (m.n_swa > 0 && std::find(m.swa_layer.begin(), m.swa_layer.end(), true) != m.swa_layer.end()) {
    gs.n_kv_swa = swa_cells_of(m, k);
    gs.swa.assign(m.swa_layer.begin(), m.swa_layer.begin() + std::min<size_t>(m.swa_layer.size(), k.n_layer));
  }
  // The MoE replay models gated experts (ffn_gate_exps); ungated ones
  // (Nemotron-H MoE's squared-ReLU experts) keep the dense llama stand-in
  // their band was measured with (tests/fit/llamacpp_linear_test.cc). A
  // model that also has dense FFN layers (LFM2-MoE, DeepSeek's first layers)
  // is replayed both ways and the larger peak kept: the peak is one layer's.
  bool gated = m.tensors.empty(), dense_layers = false;
  for (const Tensor& t : m.tensors) {
    if (t.layer < 0) continue;
    gated |= t.name.find("ffn_gate_exps") != std::string::npos || t.name.find("ffn_gate_up_exps") != std::string::npos;
    const size_t n = t.name.size();
    dense_layers |= n > 14 && t.name.compare(n - 14, 14, ".ffn_up.weight") == 0;
  }
  if (m.tensors.empty()) dense_layers = m.n_ff > 0 && m.n_ff_exp > 0 && m.n_ff != m.n_ff_exp;
  if (m.n_expert > 0 && !mla && gated) {
    if (dense_layers && m.n_ff) dense_ff = m.n_ff;
    gs.n_expert = m.n_expert;
    gs.n_expert_used = std::max<uint32_t>(1, m.n_expert_used);
    gs.n_ff_exp = m.n_ff_exp ? m.n_ff_exp : m.n_ff;
    // The shared expert's width and gate from the tensor table (Qwen2-MoE:
    // ffn_up_shexp and ffn_gate_inp_shexp), else from the shared-expert count.
    for (const Tensor& t : m.tensors) {
      if (t.layer != 0) continue;
      if (t.name.find("ffn_up_shexp.weight") != std::string::npos && t.n_dims >= 2) gs.n_ff_shexp = t.ne[1];
      if (t.name.find("ffn_gate_inp_shexp.weight") != std::string::npos) gs.shexp_gate = true;
    }
    if (!gs.n_ff_shexp && m.tensors.empty() && m.n_expert_shared) gs.n_ff_shexp = uint64_t(m.n_expert_shared) * gs.n_ff_exp;
    if (m.tensors.empty()) gs.shexp_gate = gs.n_ff_shexp && m.architecture == "qwen2moe";
    gs.norm_w = m.architecture == "llama";  // build_moe_ffn(..., norm_w = true) in src/models/llama.cpp
  }
  return gs;
}

// Ollama decides how many layers to offload from its own graph estimate
// (fs/ggml/ggml.go GraphSize; llama family and Qwen2/3 formulas), not from
// what llama.cpp allocates, so its plan reserves the larger of the two.
uint64_t ollama_graph_estimate(const ModelSpec& m, uint32_t n_ctx, bool full_offload, Plan& p) {
  const uint64_t batch_o = 512, context = uint64_t(n_ctx), E = m.n_embd, H = m.n_head, V = m.n_vocab;
  const uint64_t HKV = std::max<uint32_t>(1, head_kv(m, 0)), dh = m.head_dim_k ? m.head_dim_k : (H ? E / H : 0);
  const bool qwen = m.architecture.rfind("qwen2", 0) == 0 || m.architecture.rfind("qwen3", 0) == 0;
  uint64_t full, part;
  if (qwen) {
    full = std::max(4 * batch_o * (E + V), 4 * batch_o * (1 + 2 * E + context + context * H));
    part = std::max(4 * batch_o * (E + V) + E * V * 105 / 128,
                    4 * (batch_o * (1 + 2 * E + context * (1 + H)) + E * (1 + context)));
  } else {
    full = std::max(4 * batch_o * (1 + 4 * E + context * (1 + H)), 4 * batch_o * (E + V));
    part = 4 * batch_o * E + std::max(4 * batch_o * (1 + E + std::max(context, E)) + E * E * 9 / 16 +
                                          4 * context * (batch_o * H + dh * HKV),
                                      4 * batch_o * (E + V) + E * V * 105 / 128);
  }
  const uint64_t graph = full_offload ? full : part;
  p.assumptions.push_back(fmt::format(
      "Ollama's own graph estimate ({} offload, num_batch 512, context {} = num_ctx x num_parallel): {} MiB; "
      "it offloads layers by that figure",
      full_offload ? "full" : "partial", n_ctx, graph / kMiB));
  return graph;
}

// Compute buffers, the output buffer and the graph metadata.
void plan_compute(const ModelSpec& m, const Setup& k, Plan& p) {
  const bool ollama = k.ollama, fa = k.fa;
  const uint32_t n_gpus = k.n_gpus, n_layer = k.n_layer, cells = k.cells, seqs = k.seqs, ubatch = k.ubatch,
                 n_ctx = k.n_ctx;
  const int ngl = k.ngl;
  const bool mla = m.kv_lora_rank > 0;
  auto device_of = [&k](uint32_t il) { return k.device_of(il); };
  // --- compute buffers: one per backend in use, by replaying ggml-alloc over
  // the worst-case graph (llamacpp_graph.cc): exact for dense llama-family
  // graphs on the CPU backend; other architectures and CUDA are approximate.
  uint64_t dense_ff = 0;  // > 0: also replay the dense layers
  GraphShape gs = graph_shape(m, k, dense_ff);
  auto replay = [dense_ff](const GraphShape& g) {
    uint64_t b = llamacpp_graph_replay(g);
    if (dense_ff) {
      GraphShape d = g;
      d.n_expert = 0;
      d.n_ff = dense_ff;
      b = std::max(b, llamacpp_graph_replay(d));
    }
    return b;
  };
  const bool dense_llama = m.n_expert == 0 && !mla && m.n_swa == 0 && m.recurrent_r.empty();
  // Recurrent and linear-attention graphs (Mamba, RWKV's time mix
  // (src/models/rwkv6-base.cpp: five E x T mixes at once), the gated
  // delta-net hybrids) are not replayed: the llama replay stands in for
  // them. Against the bundled engine (tests/fit/llamacpp_linear_test.cc) it
  // was -43% to +19% off, so the band says +/-50%, not the 15% of the
  // attention-only variants.
  const double band = dense_llama ? 0.02 : m.recurrent_r.empty() ? 0.15 : 0.5;
  const bool partial = n_gpus > 0 && ngl < int(n_layer) + 1;
  const uint32_t gpu_block_layers = std::min<uint32_t>(n_layer, uint32_t(std::max(0, ngl - 1)));
  const uint64_t ollama_graph = ollama ? ollama_graph_estimate(m, n_ctx, n_gpus > 0 && ngl >= int(n_layer) + 1, p) : 0;
  // MiniMax-01's lightning attention (src/models/minimax-01.cpp) multiplies a
  // T x T x n_head decay input into q.k^T: the input, its exp(scale()) and
  // qk are live together, 3 F32 T^2 x n_head tensors the llama replay lacks;
  // sched_reserve reserves it with one sequence, so T is the whole ubatch
  // ([TAG_RESERVE_DIAG_DECAY] in src/llama-context.cpp).
  const uint64_t diag_decay =
      m.architecture == "minimax-01" ? 3ull * gs.n_ubatch * gs.n_ubatch * m.n_head * 4 : 0;
  for (uint32_t g = 0; g < n_gpus && ngl > 0; ++g) {
    GraphShape gg = gs;
    gg.n_layer = std::max<uint32_t>(1, gpu_block_layers / n_gpus);
    gg.has_output = device_of(n_layer) == gpu_name(g);
    gg.alignment = 256;  // CUDA buffer alignment
    uint64_t b = replay(gg) + diag_decay;
    if (ollama && g == 0 && ollama_graph > b) b = ollama_graph;
    add_term(p, gpu_name(g), "compute",
             fmt::format("compute buffer (ubatch {}, {})", gs.n_ubatch, fa ? "flash attention" : "no flash attention"), b,
             false, partial ? 0.5 : 0.1);
  }
  {
    uint64_t b;
    std::string what = "compute buffer (replay of ggml-alloc over the worst-case graph)";
    if (n_gpus == 0 || partial) {
      GraphShape gh = gs;
      gh.n_layer = n_gpus == 0 ? n_layer : std::max<uint32_t>(1, n_layer - gpu_block_layers);
      gh.has_output = device_of(n_layer) == "host";
      b = replay(gh) + diag_decay;
    } else {
      // Full offload: the host buffer holds the embedding lookup and the inputs.
      b = uint64_t(m.n_embd) * gs.n_ubatch * 4 + uint64_t(cells) * ((gs.n_ubatch + 63) / 64 * 64) * 4;
      what = "host compute buffer (pinned: embeddings lookup, inputs)";
    }
    add_term(p, "host", "compute", what, b, false, n_gpus ? 0.3 : band);
  }
  // Output (logits) buffer: host memory, sized for n_seq_max outputs.
  add_term(p, "host", "request_buffers", fmt::format("output buffer (logits for {} sequences)", seqs),
           uint64_t(m.n_vocab) * seqs * 4, true);

  // Graph metadata (llamacpp_meta.cc): the tensor structs and cgraphs of the
  // reserve graph and the two kept for reuse, in host memory.
  {
    // n_tensors() counts the file's tensors: a tied output (TENSOR_DUPLICATED)
    // adds none (measured: 146-tensor tied file, max_nodes 1168).
    const uint64_t n_tensors = m.tensors.size();
    // Without a tensor table (config.json, catalog) the count is the llama
    // layout's: 9 per block, embedding, output norm and output.
    const uint64_t n_t = n_tensors ? n_tensors : 9ull * n_layer + 3;
    const uint32_t max_nodes = llamacpp_max_nodes(m.architecture, n_t, std::min(n_ctx, ubatch));
    add_term(p, "host", "runtime_overhead",
             fmt::format("graph metadata ({} graphs x {} nodes)", kLlamaCppGraphResults, max_nodes),
             // exact for the bundled engine's rule; Ollama's runner is another llama.cpp build
             kLlamaCppGraphResults * llamacpp_graph_meta_bytes(max_nodes), n_tensors != 0 && !ollama, 0.2);
  }
}

// Other models, runtime overhead, the load-time host peak and the flags.
void plan_rest(const ModelSpec& m, const FitSettings& s, const Setup& k, const WeightLayout& w,
               const std::vector<uint64_t>& on, const std::vector<Extra>& extras, Plan& p) {
  const bool ollama = k.ollama, fa = k.fa;
  const uint32_t n_gpus = k.n_gpus, ctx = k.ctx, seqs = k.seqs, batch = k.batch, ubatch = k.ubatch;
  const int ngl = k.ngl;
  const std::string &type_k = k.type_k, &type_v = k.type_v;
  // --- other models on the same devices ---
  for (const Extra& e : extras) {
    std::string d = n_gpus ? gpu_name(0) : "host";
    add_term(p, d, "extra_models", fmt::format("{} ({})", e.spec.name, e.role), e.spec.weight_bytes,
             e.spec.weights_exact, 0.05);
  }
  // --- runtime overhead ---
  for (uint32_t g = 0; g < n_gpus; ++g)
    add_term(p, gpu_name(g), "runtime_overhead", "CUDA context and cuBLAS workspace (assumed)",
             s.cuda_overhead ? s.cuda_overhead : 400 * kMiB, false, 0.5);
  add_term(p, "host", "runtime_overhead", "process baseline (code, libraries, tokenizer; assumed)",
           (n_gpus ? 300 : 60) * kMiB + uint64_t(m.n_vocab) * 64, false, 0.5);
  if (n_gpus) p.assumptions.push_back("CUDA context and cuBLAS workspace taken as 400 MiB per GPU (measured 250-650 MiB across drivers)");
  if (!ollama && n_gpus == 0)
    p.assumptions.push_back("llama-server's prompt cache (--cache-ram, 8192 MiB by default) grows with use and is not counted");

  // --- load-time host peak ---
  uint64_t gpu_weights = 0;
  for (uint32_t g = 0; g < n_gpus; ++g) gpu_weights += on[g];
  uint64_t file_pages = s.mmap ? w.total() : 0;  // pass through the page cache, reclaimable
  p.load_peak_host_bytes = s.mmap ? std::max<uint64_t>(p.host_bytes, 0) + std::min<uint64_t>(gpu_weights, 256 * kMiB)
                                  : p.host_bytes + std::min<uint64_t>(gpu_weights, 1 * kGiB);
  if (s.mmap && file_pages)
    p.assumptions.push_back("weights are mmap'ed: host pages are file cache the kernel can drop; --no-mmap makes them a private copy");

  std::string model_arg = m.path.empty() ? m.name : m.path;
  if (ollama) {
    p.flags = fmt::format("ollama: num_ctx {} (per request), OLLAMA_NUM_PARALLEL={}{}{}", ctx, seqs,
                          fa ? " OLLAMA_FLASH_ATTENTION=1" : "",
                          type_k != "f16" ? " OLLAMA_KV_CACHE_TYPE=" + type_k : "");
  } else {
    p.flags = fmt::format("llama-server -m {} -c {} -np {} -b {} -ub {} -ngl {} -fa {}{}{}", model_arg,
                          uint64_t(ctx) * seqs, seqs, batch, ubatch, ngl, fa ? "on" : "off",
                          type_k != "f16" ? fmt::format(" -ctk {} -ctv {}", type_k, type_v) : "",
                          s.n_cpu_moe ? fmt::format(" --n-cpu-moe {}", s.n_cpu_moe) : "");
  }
}


}  // namespace

// One job per step, in the order the terms are listed.
void plan_llamacpp(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
                   const std::vector<Extra>& extras, Plan& p) {
  const Setup k = resolve_setup(m, s, hw, p);
  const WeightLayout w = weight_layout(m);
  const std::vector<uint64_t> on = plan_weights(m, s, hw, k, w, p);
  plan_kv_cache(m, k, w.exact, p);
  plan_compute(m, k, p);
  plan_rest(m, s, k, w, on, extras, p);
}

}  // namespace aimem::fit
