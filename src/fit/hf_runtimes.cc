// TGI and transformers: weights plus the KV cache for the requested context
// and concurrency plus a workspace for one forward pass.
// - TGI (text-generation-launcher): shards weights over --num-shard; warms up
//   with max_batch_prefill_tokens, then gives the KV cache what is left
//   (max_batch_total_tokens).
// - transformers: DynamicCache grows with the sequence; prefill materialises
//   the hidden states of every token and (with logits_to_keep=1, the default
//   in generate() since 4.45) fp32 logits of the last token only.
#include <algorithm>
#include <fmt/format.h>

#include "fit/runtime.h"

namespace aimem::fit {

void plan_hf(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
             const std::vector<Extra>& extras, Plan& p) {
  const bool tgi = s.runtime == Runtime::kTgi;
  p.engine = tgi ? "TGI 3.x (text-generation-launcher)" : "transformers 4.5x generate() with DynamicCache";
  const uint32_t tp = tgi ? std::max<uint32_t>(1, s.tp) : 1;
  uint32_t ctx = s.ctx ? s.ctx : (tgi ? std::min<uint32_t>(m.n_ctx_train ? m.n_ctx_train : 4096, 4096)
                                      : (m.n_ctx_train ? m.n_ctx_train : 4096));
  uint32_t seqs = s.concurrency ? s.concurrency : 1;
  std::string kv = s.kv_type.empty() ? "auto" : s.kv_type;
  p.ctx = ctx;
  p.concurrency = seqs;
  p.tp = tp;
  p.kv_type = kv;
  p.flash_attn = tgi;
  const bool gpu = !s.device_cpu && hw.gpu_count > 0;
  // transformers with device_map="auto" spreads layers over the visible GPUs;
  // we count one device holding everything, the case that fails first.
  const std::string dev = gpu ? "GPU0" : "host";
  uint64_t qmeta = m.quant_metadata_bytes / tp;
  add_term(p, dev, "weights", tp > 1 ? fmt::format("weights per shard (1/{})", tp) : "weights",
           m.weight_bytes / tp - qmeta, m.weights_exact, m.weights_exact ? 0.01 : 0.05);
  if (qmeta) add_term(p, dev, "quant_metadata", "quantization scales / zero points", qmeta, m.weights_exact);
  for (const Extra& e : extras)
    add_term(p, dev, "extra_models", fmt::format("{} ({})", e.spec.name, e.role), e.spec.weight_bytes, e.spec.weights_exact);

  uint64_t per_tok = kv_bytes_per_token(m, kv, tp);
  p.kv_bytes_per_token = per_tok;
  add_term(p, dev, "kv_cache", fmt::format("KV cache ({} tokens x {} sequences, {})", ctx, seqs, kv),
           per_tok * ctx * seqs, false, 0.05);
  const uint64_t dt = m.dtype_bytes ? m.dtype_bytes : 2;
  uint64_t ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * std::max<uint32_t>(1, m.n_expert_used);
  if (tgi) {
    uint32_t prefill = s.batch ? s.batch : 4096;
    uint64_t work = uint64_t(prefill) * (3 * ff / tp + 4 * uint64_t(m.n_embd)) * dt + uint64_t(seqs) * m.n_vocab * 4;
    add_term(p, dev, "compute", fmt::format("prefill workspace (max_batch_prefill_tokens {})", prefill), work, false, 0.4);
    p.batch = prefill;
  } else {
    uint64_t tokens = uint64_t(ctx) * seqs;  // prefill of every prompt at once
    uint64_t work = tokens * (3 * ff + 4 * uint64_t(m.n_embd)) * dt / std::max<uint32_t>(1, m.n_layer) * 2 +
                    tokens * uint64_t(m.n_embd) * dt * 2 + uint64_t(seqs) * m.n_vocab * 4;
    add_term(p, dev, "compute", "prefill activations (SDPA attention, logits of the last token)", work, false, 0.5);
  }
  if (gpu)
    add_term(p, dev, "runtime_overhead", "CUDA context and PyTorch caching-allocator slack (assumed)", 800 * kMiB, false, 0.5);
  add_term(p, "host", "runtime_overhead", "Python, torch and CUDA libraries (assumed)", 2 * kGiB, false, 0.5);
  // transformers loads the state dict through host memory (one shard at a
  // time with safetensors); TGI likewise per shard.
  p.load_peak_host_bytes = p.host_bytes + std::min<uint64_t>(m.weight_bytes, 5 * kGiB);
  std::string model_arg = m.path.empty() ? m.name : m.path;
  p.flags = tgi ? fmt::format("text-generation-launcher --model-id {} --max-input-tokens {} --max-total-tokens {} "
                              "--max-batch-size {}{}",
                              model_arg, ctx > 1 ? ctx - 1 : 1, ctx, seqs,
                              tp > 1 ? fmt::format(" --num-shard {}", tp) : "")
                : fmt::format("model.generate(inputs (batch {}), max_length={})", seqs, ctx);
}

}  // namespace aimem::fit
