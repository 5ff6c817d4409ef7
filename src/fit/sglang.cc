// SGLang: the token pool is what --mem-fraction-static leaves after the
// weights. model_runner.py profile_max_num_token measures the free memory
// right after loading and keeps total x (1 - mem_fraction_static) of the GPU
// for activations and CUDA graphs; the rest becomes KV cells of one token
// each (page_size 1), the start-up line "max_total_num_tokens=N". Rules per
// version: fit/engine_rules.cc.
#include <algorithm>
#include <fmt/format.h>

#include "fit/runtime.h"

namespace aimem::fit {

void plan_sglang(const ModelSpec& m, const FitSettings& s, const Hardware& hw, const std::vector<Extra>& extras,
                 Plan& p) {
  const EngineRules* rules = engine_rules(Runtime::kSglang, s.engine_version);
  if (!rules) rules = engine_rules(Runtime::kSglang, "");
  const EngineRules& R = *rules;
  p.engine = R.label;
  p.rules = fmt::format("sglang@{}", R.version);
  p.rules_source = R.source;
  p.engine = fmt::format("{} [rules {}]", R.label, p.rules);
  const uint32_t tp = std::max<uint32_t>(1, s.tp);
  const uint32_t ctx = s.ctx ? s.ctx : (m.n_ctx_train ? m.n_ctx_train : 4096);
  const uint32_t seqs = s.concurrency ? s.concurrency : 1;
  const std::string kv = s.kv_type.empty() ? "auto" : s.kv_type;
  // server_args.py: the default fraction shrinks as tp grows (more NCCL and
  // all-reduce workspace outside the pool).
  double frac = s.mem_fraction > 0 ? s.mem_fraction
                : tp >= 16       ? 0.79
                : tp >= 8        ? 0.81
                : tp >= 4        ? 0.85
                : tp >= 2        ? 0.87
                                 : 0.88;
  const bool small_gpu = hw.gpu_total < 25ULL * 1000 * 1000 * 1000;
  const uint32_t chunk = s.batch ? s.batch : small_gpu ? R.chunked_prefill_small : R.chunked_prefill_big;
  p.ctx = ctx;
  p.concurrency = seqs;
  p.batch = chunk;
  p.tp = tp;
  p.gpu_mem_util = frac;
  p.kv_type = kv;
  p.flash_attn = true;
  const bool gpu = !s.device_cpu && hw.gpu_count > 0;
  const std::string dev = gpu ? "GPU0" : "host";

  uint64_t qmeta = m.quant_metadata_bytes / tp;
  add_term(p, dev, "weights", fmt::format("model weights per rank (1/{} of {})", tp, m.weights_format),
           m.weight_bytes / tp - qmeta, m.weights_exact, m.weights_exact ? 0.01 : 0.05);
  if (qmeta) add_term(p, dev, "quant_metadata", "quantization scales / zero points per rank", qmeta, m.weights_exact);
  for (const Extra& e : extras)
    add_term(p, dev, "extra_models", fmt::format("{} ({})", e.spec.name, e.role), e.spec.weight_bytes,
             e.spec.weights_exact);
  // Held before the pool is sized: CUDA context, and with tp > 1 NCCL and the
  // custom all-reduce buffers (the same figures as vLLM's non-torch memory).
  const uint64_t context = (tp > 1 ? 1536 : 512) * kMiB;
  add_term(p, dev, "runtime_overhead",
           tp > 1 ? "CUDA context, NCCL and all-reduce buffers (assumed)" : "CUDA context (assumed)", context, false,
           0.6);

  // profile_max_num_token: rest = free after loading - total x (1 - fraction);
  // cells = rest // cell_size; --max-total-tokens only lowers it.
  const uint64_t cell = kv_bytes_per_token(m, kv, tp);
  p.kv_bytes_per_token = cell;
  const uint64_t total = gpu ? hw.gpu_total : 0;
  const int64_t free_after_load = int64_t(total) - int64_t(p.devices.empty() ? 0 : p.devices.front().used) -
                                  int64_t(hw.gpu_in_use);
  const int64_t rest = free_after_load - int64_t(double(total) * (1.0 - frac));
  p.kv_budget = rest;
  uint64_t tokens = rest > 0 && cell ? uint64_t(rest) / cell : 0;
  if (s.max_total_tokens && s.max_total_tokens < tokens) tokens = s.max_total_tokens;
  tokens = tokens / R.block_size * R.block_size;
  p.kv_cache_tokens = tokens;
  p.kv_max_concurrency = ctx ? double(tokens) / double(ctx) : 0.0;
  add_term(p, dev, "kv_cache", fmt::format("KV pool: max_total_num_tokens={} ({})", tokens, kv), tokens * cell, false,
           0.1);
  if (gpu && rest <= 0)
    p.assumptions.push_back(fmt::format(
        "SGLang stops at start-up: the weights leave {:.2f} GiB free, less than the {:.2f} GiB that "
        "--mem-fraction-static {:.2f} keeps outside the pool (\"Not enough memory. Please try to increase "
        "--mem-fraction-static\")",
        double(free_after_load) / double(kGiB), double(total) * (1.0 - frac) / double(kGiB), frac));
  if (tokens && tokens < ctx)
    p.assumptions.push_back(fmt::format("the pool ({} tokens) is shorter than the context ({}): SGLang caps "
                                        "requests at the pool's size",
                                        tokens, ctx));

  // Outside the pool, inside total x (1 - fraction): the prefill chunk's
  // activations (the same per-token model as vLLM's profile run) and the
  // CUDA graphs captured for batch sizes up to cuda_graph_max_bs.
  const uint64_t dt = m.dtype_bytes ? m.dtype_bytes : 2;
  uint64_t ff = m.n_ff ? m.n_ff : uint64_t(m.n_ff_exp) * std::max<uint32_t>(1, m.n_expert_used);
  uint64_t q_width = uint64_t(m.n_head) * m.head_dim_k;
  uint64_t per_token = (2 * ff / tp + 4 * uint64_t(m.n_embd) + 2 * q_width / tp) * dt;
  uint64_t activation = uint64_t(double(chunk) * double(per_token) * 0.6) + uint64_t(chunk) * m.n_vocab * 4 / tp +
                        400 * kMiB;
  add_term(p, dev, "compute", fmt::format("activations of a {}-token prefill chunk", chunk), activation, false, 0.4);
  if (gpu)
    add_term(p, dev, "runtime_overhead",
             fmt::format("CUDA graphs for batch sizes up to {} (assumed)", R.cuda_graph_max_bs), 768 * kMiB, false,
             0.6);
  add_term(p, "host", "runtime_overhead", "server, scheduler and detokenizer processes (Python, torch; assumed)",
           3 * kGiB, false, 0.5);
  p.load_peak_host_bytes = p.host_bytes + std::min<uint64_t>(m.weight_bytes, 5 * kGiB);
  p.assumptions.push_back(fmt::format("mem_fraction_static {:.2f}{}; page_size {}; chunked_prefill_size {}", frac,
                                      s.mem_fraction > 0 ? "" : " (SGLang's default for this tp size)", R.block_size,
                                      chunk));
  p.assumptions.push_back(fmt::format("rules: {} ({}), read from {}", p.rules, R.covers, R.source));
  p.flags = fmt::format("python -m sglang.launch_server --model-path {} --context-length {} --mem-fraction-static "
                        "{:.2f}{}{}",
                        m.path.empty() ? m.name : m.path, ctx, frac, tp > 1 ? fmt::format(" --tp {}", tp) : "",
                        kv != "auto" ? " --kv-cache-dtype " + kv : "");
}

}  // namespace aimem::fit
