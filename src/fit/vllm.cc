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
#include <cmath>
#include <fmt/format.h>

#include "fit/runtime.h"
#include "fit/vllm_kv.h"

namespace aimem::fit {

void plan_vllm(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
               const std::vector<Extra>& extras, Plan& p) {
  p.engine = "vLLM V1 engine (0.10-0.11 rules: profile run, block_size 16)";
  const uint32_t tp = std::max<uint32_t>(1, s.tp);
  const bool big_gpu = hw.gpu_total >= 70 * kGiB;
  // vllm/engine/arg_utils.py _set_default_args: the API server's defaults by GPU size.
  uint32_t max_batched = s.batch ? s.batch : (big_gpu ? 8192 : 2048);
  uint32_t max_seqs_default = big_gpu ? 1024 : 256;
  uint32_t ctx = s.ctx ? s.ctx : (m.n_ctx_train ? m.n_ctx_train : 4096);
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
  // Weights: split across ranks (vocab-parallel embeddings too); norms are replicated but tiny.
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
  uint64_t qmeta = m.quant_metadata_bytes / tp;
  add_term(p, dev, "weights", fmt::format("model weights per rank (1/{} of {})", tp, m.weights_format), weights - qmeta,
           m.weights_exact, m.weights_exact ? 0.01 : 0.05);
  if (qmeta) add_term(p, dev, "quant_metadata", "quantization scales / zero points per rank", qmeta, m.weights_exact);
  for (const Extra& e : extras)
    add_term(p, dev, "extra_models", fmt::format("{} ({})", e.spec.name, e.role), e.spec.weight_bytes, e.spec.weights_exact);

  // Activation peak of the profile run: per-token intermediates of one layer
  // (the MLP's gate_up output dominates) plus the sampler's fp32 logits.
  const uint64_t dt = m.dtype_bytes ? m.dtype_bytes : 2;
  uint64_t ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * std::max<uint32_t>(1, m.n_expert_used);
  uint64_t q_width = uint64_t(m.n_head) * m.head_dim_k;
  // Calibrated on the corpus's vLLM logs (tests/fit/corpus_fit_test.cc): the
  // caching allocator's peak is ~0.6 of the live per-token intermediates
  // (gate_up output, hidden states, q) plus the dummy sampler run over
  // max_num_seqs rows of fp32 logits and its copies (~16 bytes per entry) and
  // ~0.4 GiB of fixed workspace.
  uint64_t per_token = (2 * ff / tp + 4 * uint64_t(m.n_embd) + 2 * q_width / tp) * dt;
  uint32_t max_seqs = std::min<uint32_t>(max_seqs_default, max_batched);
  uint64_t activation = uint64_t(double(max_batched) * double(per_token) * 0.6) +
                        uint64_t(max_seqs) * m.n_vocab * 16 / tp + 400 * kMiB;
  add_term(p, dev, "compute", fmt::format("activation peak of the profile run ({} tokens)", max_batched), activation,
           false, 0.4);
  uint64_t non_torch = (tp > 1 ? 1536 : 400) * kMiB;
  add_term(p, dev, "runtime_overhead", tp > 1 ? "non-torch memory: CUDA context, NCCL and all-reduce buffers (assumed)"
                                             : "non-torch memory: CUDA context (assumed)",
           non_torch, false, 0.6);

  // KV: per token per rank, all layers, K and V (MLA: the latent only).
  uint64_t per_tok = kv_bytes_per_token(m, kv, tp);
  p.kv_bytes_per_token = per_tok;
  int64_t budget = 0;
  if (n_dev) {
    int64_t requested = int64_t(double(hw.gpu_total) * util);
    budget = requested - int64_t(p.devices[0].used);
    if (hw.gpu_in_use && double(hw.gpu_in_use) > double(hw.gpu_total) * (1 - util)) {
      p.assumptions.push_back("other processes hold more of the GPU than 1 - gpu_memory_utilization leaves; "
                              "vLLM refuses to start when free memory is below its share");
    }
  } else {
    // vLLM on CPU: VLLM_CPU_KVCACHE_SPACE, default 4 GiB.
    budget = int64_t(4 * kGiB);
  }
  // The budget becomes blocks through vLLM's KV cache groups (fit/vllm_kv.cc).
  // vllm/config VllmConfig.__post_init__ (0.10-0.11) turns the hybrid KV cache
  // manager off on platforms without support_hybrid_kv_cache() (the CPU
  // platform does not declare it), for Llama 4's chunked local attention
  // unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1, and on
  // --disable-hybrid-kv-cache-manager.
  VllmKvInputs kin;
  kin.budget = budget > 0 ? uint64_t(budget) : 0;
  kin.max_model_len = ctx;
  kin.max_num_batched_tokens = max_batched;
  const bool chunked_local = m.architecture.rfind("llama4", 0) == 0;
  kin.hybrid_allowed = !s.vllm_no_hybrid_kv && n_dev && !chunked_local;
  VllmKvLayout kl = vllm_kv_layout(m, kv, tp, kin);
  if (kl.sliding_layers) {
    std::string why = s.vllm_no_hybrid_kv ? "--disable-hybrid-kv-cache-manager"
                      : !n_dev            ? "the CPU platform has no hybrid KV cache manager"
                      : chunked_local     ? "vLLM turns the hybrid manager off for chunked local attention by default"
                                          : "";
    std::string rule = vllm_kv_rule_text(kl);
    p.assumptions.push_back(kl.sliding_as_full && !why.empty() ? rule + " — " + why : rule);
  }
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
  // Kept under the table's 59-character column: the rule itself is in the assumptions.
  std::string what =
      kl.rule == VllmKvLayout::Rule::kHybrid
          ? fmt::format("KV (hybrid, {} groups): {} blocks, {} tokens, {}", kl.groups.size(), kl.num_blocks,
                        kl.tokens, kv)
      : kl.sliding_as_full ? fmt::format("KV (sliding as full): {} blocks, {} tokens, {}", kl.num_blocks,
                                         kl.tokens, kv)
      : kl.sliding_layers  ? fmt::format("KV (window {}): {} blocks, {} tokens, {}", m.n_swa, kl.num_blocks,
                                         kl.tokens, kv)
                           : fmt::format("KV cache: {} blocks of {} tokens ({} tokens, {})", kl.num_blocks, block,
                                         kl.tokens, kv);
  add_term(p, dev, "kv_cache", what,
           kl.bytes, false, 0.1);
  if (n_dev) {
    // CUDA graphs are captured after the budget is fixed: outside it.
    add_term(p, dev, "runtime_overhead", "CUDA graphs (captured after KV sizing; assumed)", 512 * kMiB, false, 0.6);
  }
  add_term(p, "host", "runtime_overhead", "API server and engine processes (Python, torch, CUDA libraries; assumed)",
           3 * kGiB, false, 0.5);
  p.load_peak_host_bytes = p.host_bytes + std::min<uint64_t>(m.weight_bytes, 5 * kGiB);
  p.assumptions.push_back(fmt::format(
      "max_num_batched_tokens {} and max_num_seqs {} are vLLM's API-server defaults for a GPU {} 70 GiB",
      max_batched, max_seqs_default, big_gpu ? ">=" : "<"));
  p.assumptions.push_back("weights load one safetensors shard at a time through host memory (peak ~ one shard)");
  p.flags = fmt::format("vllm serve {} --max-model-len {} --max-num-seqs {} --gpu-memory-utilization {:.2f}{}{}",
                        m.path.empty() ? m.name : m.path, ctx, seqs, util,
                        tp > 1 ? fmt::format(" --tensor-parallel-size {}", tp) : "",
                        kv != "auto" ? " --kv-cache-dtype " + kv : "");
}

}  // namespace aimem::fit
