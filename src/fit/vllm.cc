// vLLM: the KV cache gets what is left of total x gpu_memory_utilization after
// the weights, the activation peak of a profile run at max_num_batched_tokens,
// and non-torch memory (CUDA context, NCCL); blocks of 16 tokens. The same
// figures vLLM logs ("model weights take", "# GPU blocks" / "GPU KV cache
// size: N tokens", "Maximum concurrency for L tokens per request"), per
// tensor-parallel rank. Mirrors vllm/worker/worker.py determine_num_available_blocks
// (V0) and vllm/v1/worker/gpu_worker.py + kv_cache_utils.py (V1); the budget
// becomes blocks through vLLM's KV cache groups (fit/vllm_kv.h), where
// sliding-window layers keep only window + max_num_batched_tokens tokens.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "fit/runtime.h"
#include "fit/vllm_kv.h"

namespace aimem::fit {

namespace {

// Weights per tensor-parallel rank: split across ranks (vocab-parallel
// embeddings too); norms are replicated but tiny.
uint64_t rank_weights(const ModelSpec& m, uint32_t tp, Plan& p) {
  uint64_t weights = m.weight_bytes / tp;
  if (m.weights_format.find("MXFP4") != std::string::npos || m.weights_format.find("mxfp4") != std::string::npos) {
    // vLLM's MXFP4 MoE kernels pad the expert intermediate size to a multiple
    // of 256 (gpt-oss: 2880 -> 3072), so the experts take 3072/2880 of their
    // stored size (corpus case e007: 64.38 GiB loaded for gpt-oss-120b).
    if (m.n_ff_exp && m.n_ff_exp % 256) {
      const WeightLayout w = weight_layout(m);
      uint64_t experts = 0;
      for (uint64_t e : w.experts) experts += e;
      uint64_t padded = (m.n_ff_exp + 255) / 256 * 256;
      weights += uint64_t(double(experts) * (double(padded) / m.n_ff_exp - 1.0)) / tp;
      p.assumptions.push_back(fmt::format("MXFP4 experts padded to intermediate size {} as vLLM's MoE kernels do", padded));
    }
  }
  return weights;
}

// Activation peak of the profile run: per-token intermediates of one layer
// (the MLP's gate_up output dominates) plus the sampler's fp32 logits.
uint64_t profile_activation(const ModelSpec& m, const EngineRules& R, uint32_t tp, uint32_t max_batched,
                            uint32_t max_seqs) {
  const uint64_t dt = m.dtype_bytes ? m.dtype_bytes : 2;
  uint64_t ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * std::max<uint32_t>(1, m.n_expert_used);
  uint64_t q_width = uint64_t(m.n_head) * m.head_dim_k;
  // Calibrated on the corpus's vLLM logs (tests/fit/corpus_fit_test.cc): the
  // caching allocator's peak is ~0.6 of the live per-token intermediates
  // (gate_up output, hidden states, q) plus the dummy sampler run over
  // max_num_seqs rows of fp32 logits and its copies (~16 bytes per entry) and
  // ~0.4 GiB of fixed workspace.
  uint64_t per_token = (2 * ff / tp + 4 * uint64_t(m.n_embd) + 2 * q_width / tp) * dt;
  const uint64_t forward = uint64_t(double(max_batched) * double(per_token) * R.act_factor) +
                           uint64_t(R.act_fixed_mib) * kMiB;
  // V0: the driver samples the whole vocabulary once the forward's
  // activations are freed, and its budget, the least, is the engine's.
  if (R.sampler_on_driver) return std::max(forward, uint64_t(max_seqs) * m.n_vocab * R.sampler_bytes);
  return forward + uint64_t(max_seqs) * m.n_vocab * R.sampler_bytes / tp;
}

// The KV term's line, kept under the table's 59-character column: the rule
// itself is in the assumptions.
std::string kv_term_text(const VllmKvLayout& kl, const ModelSpec& m, const std::string& kv, uint32_t block) {
  return kl.rule == VllmKvLayout::Rule::kHybrid
          ? fmt::format("KV (hybrid, {} groups): {} blocks, {} tokens, {}", kl.groups.size(), kl.num_blocks,
                        kl.tokens, kv)
      : kl.sliding_as_full ? fmt::format("KV (sliding as full): {} blocks, {} tokens, {}", kl.num_blocks,
                                         kl.tokens, kv)
      : kl.sliding_layers  ? fmt::format("KV (window {}): {} blocks, {} tokens, {}", m.n_swa, kl.num_blocks,
                                         kl.tokens, kv)
                           : fmt::format("KV cache: {} blocks of {} tokens ({} tokens, {})", kl.num_blocks, block,
                                         kl.tokens, kv);
}

// What the defaults of this version made of the profile run.
std::string defaults_text(const EngineRules& R, bool chunked, bool big_gpu, uint32_t max_batched,
                          uint32_t max_seqs_default) {
  return !chunked ? fmt::format("chunked prefill off (vLLM {}): the profile run takes max(max_model_len, {}) = {} "
                               "tokens at once, max_num_seqs {}",
                               R.covers, R.unchunked_min, max_batched, max_seqs_default)
        : R.gpu_size_defaults
            ? fmt::format("max_num_batched_tokens {} and max_num_seqs {} are vLLM's API-server defaults for a GPU "
                          "{} 70 GiB",
                          max_batched, max_seqs_default, big_gpu ? ">=" : "<")
            : fmt::format("chunked prefill on (vLLM {}): max_num_batched_tokens {}, max_num_seqs {}", R.covers,
                          max_batched, max_seqs_default);
}

// How the sliding-window layers were sized, and why not by window where not.
std::string sliding_text(const VllmKvLayout& kl, const EngineRules& R, bool no_hybrid, bool on_gpu, bool chunked_local) {
  std::string why = !R.hybrid_kv       ? fmt::format("vLLM {} has no hybrid KV cache manager", R.covers)
                    : no_hybrid ? "--disable-hybrid-kv-cache-manager"
                    : !on_gpu            ? "the CPU platform has no hybrid KV cache manager"
                    : chunked_local     ? "vLLM turns the hybrid manager off for chunked local attention by default"
                                        : "";
  std::string rule = vllm_kv_rule_text(kl);
  return kl.sliding_as_full && !why.empty() ? rule + " — " + why : rule;
}

// What is left for the KV cache: total x gpu_memory_utilization less what the
// plan holds so far on the first rank; on CPU, VLLM_CPU_KVCACHE_SPACE (4 GiB).
int64_t kv_budget(const Hardware& hw, double util, uint64_t used, bool on_gpu, Plan& p) {
  if (!on_gpu) return int64_t(4 * kGiB);
  if (hw.gpu_in_use && double(hw.gpu_in_use) > double(hw.gpu_total) * (1 - util))
    p.assumptions.push_back("other processes hold more of the GPU than 1 - gpu_memory_utilization leaves; "
                            "vLLM refuses to start when free memory is below its share");
  return int64_t(double(hw.gpu_total) * util) - int64_t(used);
}

}  // namespace

void plan_vllm(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
               const std::vector<Extra>& extras, Plan& p) {
  const EngineRules* rules = engine_rules(Runtime::kVllm, s.engine_version);
  if (!rules) rules = engine_rules(Runtime::kVllm, "");
  const EngineRules& R = *rules;
  p.rules = fmt::format("vllm@{}", R.version);
  p.rules_source = R.source;
  p.engine = fmt::format("{} [rules {}]", R.label, p.rules);
  const uint32_t tp = std::max<uint32_t>(1, s.tp);
  // arg_utils.py: the large defaults are for GPUs of >= 70 GiB other than the
  // A100 (a larger batch lowered its throughput, vLLM PR #17885).
  std::string gpu_name = hw.gpu_name;
  for (char& c : gpu_name) c = char(std::tolower(static_cast<unsigned char>(c)));
  const bool big_gpu = hw.gpu_total >= 70 * kGiB && gpu_name.find("a100") == std::string::npos;
  uint32_t ctx = s.ctx ? s.ctx : (m.n_ctx_train ? m.n_ctx_train : 4096);
  // Chunked prefill: always on in V1; in V0 off unless asked for or, for the
  // API server, turned on for contexts above 32K (arg_utils.py).
  const bool chunked =
      s.chunked_prefill.value_or(R.v1 || (R.chunked_auto_above && ctx > R.chunked_auto_above));
  // The profile run's token count: V0 without chunked prefill runs
  // max(max_model_len, 2048) tokens at once (SchedulerConfig); with it, the
  // version's chunk; 0.10+ picks the API server's defaults by GPU size.
  uint32_t max_batched = s.batch               ? s.batch
                         : !chunked            ? std::max<uint32_t>(ctx, R.unchunked_min)
                         : R.gpu_size_defaults ? (big_gpu ? 8192 : 2048)
                                               : R.chunked_batched;
  uint32_t max_seqs_default = s.max_seqs ? s.max_seqs : R.gpu_size_defaults && big_gpu ? 1024 : 256;
  uint32_t seqs = s.concurrency ? s.concurrency : 1;
  double util = s.gpu_mem_util > 0 ? s.gpu_mem_util : 0.9;
  std::string kv = s.kv_type.empty() ? "auto" : s.kv_type;
  p.ctx = ctx;
  p.concurrency = seqs;
  p.batch = max_batched;
  p.tp = tp;
  p.gpu_mem_util = util;
  p.kv_type = kv;
  p.flash_attn = true;

  const uint32_t n_dev = s.device_cpu || hw.gpu_count == 0 ? 0 : tp;
  const std::string dev = n_dev ? "GPU0" : "host";
  uint64_t weights = rank_weights(m, tp, p);
  uint64_t qmeta = m.quant_metadata_bytes / tp;
  add_term(p, dev, "weights", fmt::format("model weights per rank (1/{} of {})", tp, m.weights_format), weights - qmeta,
           m.weights_exact, m.weights_exact ? 0.01 : 0.05);
  if (qmeta) add_term(p, dev, "quant_metadata", "quantization scales / zero points per rank", qmeta, m.weights_exact);
  for (const Extra& e : extras)
    add_term(p, dev, "extra_models", fmt::format("{} ({})", e.spec.name, e.role), e.spec.weight_bytes, e.spec.weights_exact);

  uint32_t max_seqs = std::min<uint32_t>(max_seqs_default, max_batched);
  uint64_t activation = profile_activation(m, R, tp, max_batched, max_seqs);
  add_term(p, dev, "compute", fmt::format("activation peak of the profile run ({} tokens)", max_batched), activation,
           false, 0.4);
  const bool small_class = R.non_torch_small_mib && !big_gpu;
  uint64_t non_torch = uint64_t(small_class ? R.non_torch_small_mib : tp > 1 ? R.non_torch_tp_mib : R.non_torch_mib) * kMiB;
  add_term(p, dev, "runtime_overhead", tp > 1 ? "non-torch memory: CUDA context, NCCL and all-reduce buffers (assumed)"
                                             : "non-torch memory: CUDA context (assumed)",
           non_torch, false, 0.6);

  // KV: per token per rank, all layers, K and V (MLA: the latent only).
  uint64_t per_tok = kv_bytes_per_token(m, kv, tp);
  p.kv_bytes_per_token = per_tok;
  int64_t budget = kv_budget(hw, util, n_dev ? p.devices[0].used : 0, n_dev > 0, p);
  // The budget becomes blocks through vLLM's KV cache groups (fit/vllm_kv.cc).
  // vllm/config VllmConfig.__post_init__ (0.10-0.11) turns the hybrid KV cache
  // manager off on platforms without support_hybrid_kv_cache() (the CPU
  // platform does not declare it), for Llama 4's chunked local attention
  // unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1, and on
  // --disable-hybrid-kv-cache-manager.
  p.kv_budget = budget;
  if (n_dev && budget <= 0)
    p.assumptions.push_back(fmt::format(
        "vLLM stops at start-up: no memory is left for the KV cache ({:.2f} GiB after the weights, the profile "
        "run's activations and non-torch memory); raise --gpu-memory-utilization, lower max_model_len or "
        "max_num_batched_tokens, or shard the model",
        double(budget) / double(kGiB)));
  VllmKvInputs kin;
  kin.budget = budget > 0 ? uint64_t(budget) : 0;
  kin.max_model_len = ctx;
  kin.max_num_batched_tokens = max_batched;
  const bool chunked_local = m.architecture.rfind("llama4", 0) == 0;
  kin.hybrid_allowed = !s.vllm_no_hybrid_kv && n_dev && !chunked_local && R.hybrid_kv;
  kin.block_size = R.block_size;
  VllmKvLayout kl = vllm_kv_layout(m, kv, tp, kin);
  if (kl.sliding_layers) p.assumptions.push_back(sliding_text(kl, R, s.vllm_no_hybrid_kv, n_dev > 0, chunked_local));
  const uint32_t block = kl.groups.empty() ? kin.block_size : kl.groups[0].block_size;
  p.kv_cache_tokens = kl.tokens;
  p.kv_max_concurrency = kl.max_concurrency;
  p.kv_blocks = kl.num_blocks;
  p.kv_block_bytes = kl.block_bytes();
  p.kv_blocks_per_request = kl.blocks_per_request;
  p.kv_max_model_len = vllm_kv_max_model_len(kl, seqs, max_batched,
                                             std::max<uint32_t>(ctx, m.n_ctx_train ? m.n_ctx_train : 131072));
  if (kl.rule == VllmKvLayout::Rule::kUnsupported) p.assumptions.push_back("vLLM refuses to start: " + kl.why);
  if (kin.budget > 0 && kl.request_bytes > kin.budget && kl.rule != VllmKvLayout::Rule::kUnsupported) {
    // kv_cache_utils._check_enough_kv_cache_memory: the engine stops at start-up.
    p.assumptions.push_back(fmt::format(
        "vLLM refuses to start: one request of max_model_len {} needs {:.2f} GiB of KV cache, more than the {:.2f} "
        "GiB available; the longest that fits is {} tokens",
        ctx, double(kl.request_bytes) / double(kGiB), double(kin.budget) / double(kGiB),
        vllm_kv_max_model_len(kl, 1, max_batched, ctx)));
  }
  // The block arithmetic is vLLM's; the budget it divides rests on the
  // approximate activation and non-torch terms, hence the band.
  std::string what = kv_term_text(kl, m, kv, block);
  add_term(p, dev, "kv_cache", what,
           kl.bytes, false, 0.1);
  if (n_dev) {
    // CUDA graphs are captured after the budget is fixed: outside it.
    add_term(p, dev, "runtime_overhead", "CUDA graphs (captured after KV sizing; assumed)", 512 * kMiB, false, 0.6);
  }
  add_term(p, "host", "runtime_overhead", "API server and engine processes (Python, torch, CUDA libraries; assumed)",
           3 * kGiB, false, 0.5);
  p.load_peak_host_bytes = p.host_bytes + std::min<uint64_t>(m.weight_bytes, 5 * kGiB);
  if (!s.batch || !s.max_seqs) p.assumptions.push_back(defaults_text(R, chunked, big_gpu, max_batched, max_seqs_default));
  p.assumptions.push_back(fmt::format("rules: {} ({}), read from {}", p.rules, R.covers, R.source));
  p.assumptions.push_back("weights load one safetensors shard at a time through host memory (peak ~ one shard)");
  p.flags = fmt::format("vllm serve {} --max-model-len {} --max-num-seqs {} --gpu-memory-utilization {:.2f}{}{}",
                        m.path.empty() ? m.name : m.path, ctx, seqs, util,
                        tp > 1 ? fmt::format(" --tensor-parallel-size {}", tp) : "",
                        kv != "auto" ? " --kv-cache-dtype " + kv : "");
}

}  // namespace aimem::fit
