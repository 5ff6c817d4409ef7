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
namespace {

bool is_awq(const ModelSpec& m) { return m.weights_format.rfind("AWQ", 0) == 0; }

// What TGI's warm-up prefill of `prefill` tokens leaves reserved in the
// caching allocator when flash_causal_lm.py warmup reads the free memory
// (torch.cuda.mem_get_info after generate_token, no empty_cache between):
// - the forward's workspace (calibrated: ~3 x the FFN width + 4 x the hidden
//   size per token);
// - the logits: the router's warm-up requests set prefill_logprobs
//   (router/client/src/client.rs warmup), so the lm_head runs over every
//   prompt token, in the model's dtype. Sharded, TensorParallelHead.forward
//   (utils/layers.py, layers/tensor_parallel.py) writes its slice into a
//   [vocab/tp, tokens] buffer and all-gathers into [vocab, tokens]: both are
//   held at once. Before huggingface/text-generation-inference#2661,
//   generate_token's `torch.log_softmax(out, -1)` was a second [tokens, vocab]
//   tensor; since, it is done in place (`out=out`);
// - AWQ (WQLinear, llm-awq's gemm_forward_cuda with split_k_iters 8): the
//   kernel writes [split_k, tokens, out_features] partial sums before
//   summing them, for the widest layer the fused gate_up projection.
void add_tgi_warmup_terms(const ModelSpec& m, const EngineRules& R, uint32_t tp, uint32_t prefill,
                          const std::string& dev, Plan& p) {
  const uint64_t dt = m.dtype_bytes ? m.dtype_bytes : 2;
  const uint64_t ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * std::max<uint32_t>(1, m.n_expert_used);
  const uint64_t n = prefill;
  uint64_t work = n * (3 * ff / tp + 4 * uint64_t(m.n_embd)) * dt;
  add_term(p, dev, "compute", fmt::format("prefill workspace (max_batch_prefill_tokens {})", prefill), work, false, 0.4);
  uint64_t logits = n * m.n_vocab * dt;
  std::string what = "warm-up prefill logits (all tokens x vocabulary, model dtype";
  if (tp > 1 && m.n_vocab % tp == 0) {  // else the head is loaded whole and not gathered
    logits += n * (m.n_vocab / tp) * dt;
    what += fmt::format(", + the 1/{} slice the shard gathers from", tp);
  }
  if (R.logits_softmax_copy) {
    logits += n * m.n_vocab * dt;
    what += ", + their log_softmax copy";
  }
  add_term(p, dev, "compute", what + ")", logits, false, 0.3);
  if (R.awq_split_k && is_awq(m)) {
    add_term(p, dev, "compute",
             fmt::format("AWQ gemm split-k partial sums ({} x tokens x gate_up width)", R.awq_split_k),
             uint64_t(R.awq_split_k) * n * (2 * ff / tp) * dt, false, 0.3);
  }
}

}  // namespace

void plan_hf(const ModelSpec& m, const FitSettings& s, const Hardware& hw,
             const std::vector<Extra>& extras, Plan& p) {
  const bool tgi = s.runtime == Runtime::kTgi;
  const EngineRules* rules = tgi ? engine_rules(Runtime::kTgi, s.engine_version) : nullptr;
  if (tgi && !rules) rules = engine_rules(Runtime::kTgi, "");
  p.engine = tgi ? rules->label : "transformers 4.5x generate() with DynamicCache";
  if (tgi) {
    p.rules = fmt::format("tgi@{}", rules->version);
    p.rules_source = rules->source;
    p.engine = fmt::format("{} [rules {}]", rules->label, p.rules);
  }
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
  const uint64_t dt = m.dtype_bytes ? m.dtype_bytes : 2;
  uint64_t ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * std::max<uint32_t>(1, m.n_expert_used);
  if (tgi) {
    const EngineRules& R = *rules;
    uint32_t prefill = s.batch ? s.batch : R.prefill_tokens;
    add_tgi_warmup_terms(m, R, tp, prefill, dev, p);
    p.batch = prefill;
    if (gpu)
      add_term(p, dev, "runtime_overhead", "CUDA context and PyTorch caching-allocator slack (assumed)", 800 * kMiB,
               false, 0.5);
    // flash_causal_lm.py warmup: after a prefill of max_batch_prefill_tokens,
    // free = mem_get_info - (1 - cuda_memory_fraction) x total; KV blocks =
    // free x TGI_WIGGLE_ROOM // block bytes, plus the warm-up batch's own
    // blocks; "Setting max batch total tokens to N" = blocks x block size.
    const double frac = s.mem_fraction > 0 ? s.mem_fraction : 1.0;
    const uint64_t block_bytes = uint64_t(R.block_size) * per_tok;
    uint64_t tokens = 0;
    if (s.max_total_tokens) {
      tokens = s.max_total_tokens;  // --max-batch-total-tokens: no warm-up sizing
    } else if (gpu && block_bytes) {
      // The warm-up batch's blocks are allocated before the free memory is read.
      uint64_t warm_blocks = (uint64_t(prefill) + R.block_size - 1) / R.block_size;
      int64_t used = int64_t(p.devices.front().used) + int64_t(hw.gpu_in_use) + int64_t(warm_blocks * block_bytes);
      int64_t free = int64_t(double(hw.gpu_total) * frac) - used;
      uint64_t blocks = free > 0 ? uint64_t(double(free) * R.wiggle_room) / block_bytes + warm_blocks : 0;
      tokens = blocks * R.block_size;
    }
    if (gpu) {
      p.kv_cache_tokens = tokens;
      p.kv_max_concurrency = ctx ? double(tokens) / double(ctx) : 0.0;
      add_term(p, dev, "kv_cache", fmt::format("KV: max_batch_total_tokens {} ({})", tokens, kv), tokens * per_tok,
               false, 0.1);
      if (tokens < ctx)
        p.assumptions.push_back(fmt::format("TGI stops at start-up: max_batch_total_tokens {} is below "
                                            "max_total_tokens {} (one request must fit)",
                                            tokens, ctx));
    } else {
      add_term(p, dev, "kv_cache", fmt::format("KV cache ({} tokens x {} sequences, {})", ctx, seqs, kv),
               per_tok * ctx * seqs, false, 0.05);
    }
    p.assumptions.push_back(fmt::format("cuda_memory_fraction {:.2f}; blocks of {} tokens; {:.0f}% of the free "
                                        "memory after the warm-up becomes KV (TGI_WIGGLE_ROOM)",
                                        frac, R.block_size, R.wiggle_room * 100));
    p.assumptions.push_back(fmt::format("rules: {} ({}), read from {}", p.rules, R.covers, R.source));
  } else {
    add_term(p, dev, "kv_cache", fmt::format("KV cache ({} tokens x {} sequences, {})", ctx, seqs, kv),
             per_tok * ctx * seqs, false, 0.05);
    uint64_t tokens = uint64_t(ctx) * seqs;  // prefill of every prompt at once
    uint64_t work = tokens * (3 * ff + 4 * uint64_t(m.n_embd)) * dt / std::max<uint32_t>(1, m.n_layer) * 2 +
                    tokens * uint64_t(m.n_embd) * dt * 2 + uint64_t(seqs) * m.n_vocab * 4;
    add_term(p, dev, "compute", "prefill activations (SDPA attention, logits of the last token)", work, false, 0.5);
  }
  if (gpu && !tgi)
    add_term(p, dev, "runtime_overhead", "CUDA context and PyTorch caching-allocator slack (assumed)", 800 * kMiB, false, 0.5);
  add_term(p, "host", "runtime_overhead", "Python, torch and CUDA libraries (assumed)", 2 * kGiB, false, 0.5);
  // transformers loads the state dict through host memory (one shard at a
  // time with safetensors); TGI likewise per shard.
  p.load_peak_host_bytes = p.host_bytes + std::min<uint64_t>(m.weight_bytes, 5 * kGiB);
  std::string model_arg = m.path.empty() ? m.name : m.path;
  p.flags = tgi ? fmt::format("text-generation-launcher --model-id {} --max-input-tokens {} --max-total-tokens {} "
                              "--max-batch-size {}{}{}",
                              model_arg, ctx > 1 ? ctx - 1 : 1, ctx, seqs,
                              tp > 1 ? fmt::format(" --num-shard {}", tp) : "",
                              s.mem_fraction > 0 ? fmt::format(" --cuda-memory-fraction {:.2f}", s.mem_fraction) : "")
                : fmt::format("model.generate(inputs (batch {}), max_length={})", seqs, ctx);
}

}  // namespace aimem::fit
