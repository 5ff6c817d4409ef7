// The planner: runs one runtime's allocation model, decides the verdict, and
// searches the settings space (context, concurrency, KV type, flash attention,
// experts and layers on the CPU, bigger GPUs) for the cheapest change that
// flips it. Memory grows monotonically with context, concurrency and layers on
// the GPU, so each search is a bisection over plan_once().
#include "fit/plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "fit/catalog.h"
#include "fit/ggml_types.h"
#include "fit/runtime.h"

namespace aimem::fit {

std::string_view to_string(Runtime r) {
  switch (r) {
    case Runtime::kLlamaCpp: return "llama.cpp";
    case Runtime::kOllama: return "ollama";
    case Runtime::kVllm: return "vllm";
    case Runtime::kTgi: return "tgi";
    case Runtime::kTransformers: return "transformers";
    case Runtime::kSglang: return "sglang";
  }
  return "?";
}

std::optional<Runtime> parse_runtime(std::string_view s) {
  const std::string l = text::lower(s);
  if (l == "llama.cpp" || l == "llamacpp" || l == "llama-cpp" || l == "llama-server") return Runtime::kLlamaCpp;
  if (l == "ollama") return Runtime::kOllama;
  if (l == "vllm") return Runtime::kVllm;
  if (l == "sglang") return Runtime::kSglang;
  if (l == "tgi" || l == "text-generation-inference") return Runtime::kTgi;
  if (l == "transformers" || l == "hf" || l == "huggingface") return Runtime::kTransformers;
  return std::nullopt;
}

namespace {

std::optional<uint32_t> float_kv_bytes(const std::string& t) {
  if (t == "f32" || t == "fp32" || t == "float32") return 4;
  if (t == "f16" || t == "fp16" || t == "float16" || t == "bf16" || t == "bfloat16") return 2;
  if (t == "fp8" || t == "fp8_e4m3" || t == "fp8_e5m2" || t == "fp8_ds_mla" || t == "int8") return 1;
  return std::nullopt;
}

}  // namespace

bool kv_type_known(const std::string& kv_type) {
  std::string t = text::lower(kv_type);
  return t == "auto" || float_kv_bytes(t) || ggml_type_by_name(t);
}

bool kv_type_quantized(const std::string& kv_type) {
  std::string t = text::lower(kv_type);
  return !float_kv_bytes(t) && t != "auto" && ggml_type_by_name(t) != nullptr;
}

uint64_t kv_row_bytes(const std::string& kv_type, uint64_t width, uint32_t dtype_bytes) {
  std::string t = text::lower(kv_type);
  if (t == "auto") return width * (dtype_bytes ? dtype_bytes : 2);
  if (auto b = float_kv_bytes(t)) return width * *b;
  if (auto id = ggml_type_id(t)) {
    if (auto r = ggml_row_size(*id, width)) return *r;
    // Width not a multiple of the block: llama.cpp refuses; count it padded.
    const GgmlTypeInfo* info = ggml_type_info(*id);
    return (width + info->block_size - 1) / info->block_size * info->type_size;
  }
  return 0;
}

uint64_t kv_bytes_per_token(const ModelSpec& m, const std::string& kv_type, uint32_t tp) {
  tp = std::max<uint32_t>(1, tp);
  uint64_t total = 0;
  for (uint32_t il = 0; il < m.n_layer; ++il) {
    if (m.kv_lora_rank > 0) {  // MLA: one latent vector per token, replicated on every rank
      total += kv_row_bytes(kv_type, uint64_t(m.kv_lora_rank) + m.n_rot, m.dtype_bytes);
      continue;
    }
    uint32_t nkv = head_kv(m, il);
    if (!nkv) continue;
    uint64_t heads = (nkv + tp - 1) / tp;  // KV heads are replicated when tp > n_kv_heads
    bool swa = il < m.swa_layer.size() && m.swa_layer[il];
    uint32_t hk = swa && m.head_dim_k_swa ? m.head_dim_k_swa : m.head_dim_k;
    uint32_t hv = swa && m.head_dim_v_swa ? m.head_dim_v_swa : m.head_dim_v;
    total += kv_row_bytes(kv_type, heads * hk, m.dtype_bytes) + kv_row_bytes(kv_type, heads * hv, m.dtype_bytes);
  }
  return total;
}

void add_term(Plan& p, const std::string& device, const std::string& component, const std::string& what,
              uint64_t bytes, bool exact, double band) {
  if (bytes == 0) return;
  p.terms.push_back(Term{device, component, what, bytes, exact, exact ? 0.0 : band});
  auto it = std::find_if(p.devices.begin(), p.devices.end(), [&](const DeviceUse& d) { return d.name == device; });
  if (it == p.devices.end()) {
    p.devices.push_back(DeviceUse{device, 0, 0, 0});
    it = p.devices.end() - 1;
  }
  it->used += bytes;
  if (device == "host") p.host_bytes += bytes;
  p.total_bytes += bytes;
}

namespace {

// Capacities, verdict and the binding device.
void decide(Plan& p, const FitSettings& s, const Hardware& hw) {
  // GPUs first, host last.
  std::stable_sort(p.devices.begin(), p.devices.end(),
                   [](const DeviceUse& a, const DeviceUse& b) { return a.name != "host" && b.name == "host"; });
  for (DeviceUse& d : p.devices) {
    if (d.name == "host") {
      d.capacity = hw.ram_total;
    } else {
      d.capacity = hw.gpu_total;
      d.others = hw.gpu_in_use;
    }
  }
  p.fits = true;
  double worst = 1e300;
  for (const DeviceUse& d : p.devices) {
    if (!d.capacity) continue;
    uint64_t need = d.used + d.others;
    if (d.name == "host") {
      need = std::max(need, p.load_peak_host_bytes);
      if (s.rolling) need = d.used + std::max(d.used, p.load_peak_host_bytes);
    }
    double room = double(d.capacity) - double(need);
    if (need > d.capacity) p.fits = false;
    double rel = room / double(d.capacity);
    if (rel < worst) {
      worst = rel;
      // Weights when they alone overflow the device; else the largest term
      // that grows with the settings (KV cache, compute, models beside it).
      uint64_t weights = 0;
      const Term* big = nullptr;
      for (const Term& t : p.terms) {
        if (t.device != d.name) continue;
        if (t.component == "weights" || t.component == "quant_metadata") weights += t.bytes;
        else if (t.component != "runtime_overhead" && (!big || t.bytes > big->bytes)) big = &t;
      }
      bool weights_alone = d.capacity && weights + d.others > d.capacity;
      p.binding = d.name + (weights_alone || !big ? std::string(" weights") : " " + big->component);
    }
  }
  if (p.kv_cache_tokens) {  // vLLM: the blocks must hold the requested sequences
    // Counted in blocks over all KV cache groups (fit/vllm_kv.h): with
    // sliding-window groups a request needs fewer blocks than ctx / block_size
    // per group, so 'GPU KV cache size' tokens alone would misjudge it.
    bool short_of = p.kv_blocks_per_request
                        ? p.kv_blocks < uint64_t(p.concurrency) * p.kv_blocks_per_request
                        : *p.kv_cache_tokens < uint64_t(p.ctx) * p.concurrency;
    if (short_of) {
      p.fits = false;
      p.binding = (p.devices.empty() ? std::string("GPU0") : p.devices.front().name) + " kv_cache";
    }
  }
}

}  // namespace

Plan plan_once(const ModelSpec& m, const FitSettings& s, const Hardware& hw, const std::vector<Extra>& extras) {
  Plan p;
  p.runtime = s.runtime;
  // Devices in a fixed order so the table reads the same every time.
  const bool gpu = !s.device_cpu && hw.gpu_count > 0;
  if (gpu) p.devices.push_back(DeviceUse{"GPU0", 0, 0, 0});
  p.devices.push_back(DeviceUse{"host", 0, 0, 0});
  switch (s.runtime) {
    case Runtime::kLlamaCpp:
    case Runtime::kOllama: plan_llamacpp(m, s, hw, extras, p); break;
    case Runtime::kVllm: plan_vllm(m, s, hw, extras, p); break;
    case Runtime::kSglang: plan_sglang(m, s, hw, extras, p); break;
    case Runtime::kTgi:
    case Runtime::kTransformers: plan_hf(m, s, hw, extras, p); break;
  }
  decide(p, s, hw);
  return p;
}

namespace {

// Largest value in [lo, hi] for which ok() holds, assuming monotone; 0 if none.
template <typename F>
uint32_t bisect(uint32_t lo, uint32_t hi, F ok) {
  if (hi < lo || !ok(lo)) return 0;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (ok(mid)) lo = mid; else hi = mid - 1;
  }
  return lo;
}

const DeviceUse* device(const Plan& p, std::string_view name) {
  for (const DeviceUse& d : p.devices)
    if (d.name == name) return &d;
  return nullptr;
}

std::string binding_device(const Plan& p) {
  auto sp = p.binding.find(' ');
  return sp == std::string::npos ? p.binding : p.binding.substr(0, sp);
}

int64_t used_on(const Plan& p, const std::string& dev) {
  const DeviceUse* d = device(p, dev);
  return d ? int64_t(d->used) : 0;
}

// vLLM: how many bytes of KV the requested sequences lack in the budget.
int64_t kv_deficit(const Plan& p) {
  if (!p.kv_cache_tokens) return 0;
  if (p.kv_blocks_per_request) {
    int64_t want = int64_t(p.concurrency) * int64_t(p.kv_blocks_per_request);
    return std::max<int64_t>(0, (want - int64_t(p.kv_blocks)) * int64_t(p.kv_block_bytes));
  }
  int64_t want = int64_t(p.ctx) * p.concurrency * int64_t(p.kv_bytes_per_token);
  int64_t have = int64_t(*p.kv_cache_tokens) * int64_t(p.kv_bytes_per_token);
  return std::max<int64_t>(0, want - have);
}

bool llama_like(Runtime r) { return r == Runtime::kLlamaCpp || r == Runtime::kOllama; }

}  // namespace

Plan plan(const ModelSpec& m, const FitSettings& s_in, const Hardware& hw, const std::vector<Extra>& extras) {
  FitSettings s = s_in;
  Plan p = plan_once(m, s, hw, extras);
  const uint32_t ctx = p.ctx, seqs = p.concurrency;
  auto fits_with = [&](auto change) {
    FitSettings t = s;
    change(t);
    return plan_once(m, t, hw, extras).fits;
  };
  // Largest context at the requested concurrency, in llama.cpp's 256-cell steps.
  const uint32_t ctx_cap = std::max<uint32_t>(ctx, m.n_ctx_train ? m.n_ctx_train : 131072);
  const uint32_t step = 256;
  uint32_t k = bisect(1, std::max<uint32_t>(1, ctx_cap / step), [&](uint32_t n) {
    return fits_with([&](FitSettings& t) { t.ctx = n * step; t.concurrency = seqs; });
  });
  p.max_context = k * step;
  if (p.kv_cache_tokens && seqs) {  // vLLM: the budget does not depend on max_model_len
    uint32_t mc = p.kv_blocks_per_request ? std::min(p.kv_max_model_len, ctx_cap)
                                          : uint32_t(std::min<uint64_t>(*p.kv_cache_tokens / seqs, ctx_cap));
    p.max_context = mc > 0 && fits_with([&](FitSettings& t) { t.ctx = mc; }) ? mc : 0;
  }
  p.max_concurrency = bisect(1, 4096, [&](uint32_t n) {
    return fits_with([&](FitSettings& t) { t.ctx = ctx; t.concurrency = n; });
  });
  if (p.fits) {
    const std::string dev = binding_device(p);
    const DeviceUse* d = device(p, dev);
    if (d && d->capacity && d->headroom() < int64_t(d->capacity / 10))
      p.suggestions.push_back({fmt::format("headroom on {} is under 10%: a longer prompt or one more sequence may not fit", dev), 0, false, 0});
    return p;
  }

  // --- what flips the verdict, least destructive first (DESIGN 1) ---
  const std::string dev = binding_device(p);
  const int64_t before = used_on(p, dev);
  auto consider = [&](int rank, const std::string& action, auto change) {
    FitSettings t = s;
    change(t);
    Plan q = plan_once(m, t, hw, extras);
    int64_t saves = before - used_on(q, dev);
    if (q.kv_cache_tokens && p.kv_cache_tokens) saves = kv_deficit(p) - kv_deficit(q);
    if (saves <= 0 && !q.fits) return;
    p.suggestions.push_back({action, saves, q.fits, rank});
  };
  if (p.max_concurrency > 0 && p.max_concurrency < seqs)
    consider(1, fmt::format("serve {} sequences at once instead of {}", p.max_concurrency, seqs),
             [&](FitSettings& t) { t.concurrency = p.max_concurrency; });
  if (p.max_context >= 256 && p.max_context < ctx)
    consider(2, fmt::format("cap the context at {} tokens instead of {}", p.max_context, ctx),
             [&](FitSettings& t) { t.ctx = p.max_context; });
  if (llama_like(s.runtime)) {
    if (p.kv_type == "f16" || p.kv_type == "bf16" || p.kv_type == "f32")
      consider(3, "quantize the KV cache to q8_0 (-ctk q8_0 -ctv q8_0, with flash attention)",
               [&](FitSettings& t) { t.kv_type = "q8_0"; t.flash_attn = true; });
    if (!p.flash_attn)
      consider(4, "turn flash attention on (-fa on): no n_kv x n_head score matrix in the compute buffer",
               [&](FitSettings& t) { t.flash_attn = true; });
    if (m.n_expert > 0 && dev != "host") {
      uint32_t n = bisect(0, m.n_layer, [&](uint32_t x) {
        return !fits_with([&](FitSettings& t) { t.n_cpu_moe = x; });
      });
      uint32_t need = std::min<uint32_t>(m.n_layer, n + 1);
      consider(5, fmt::format("keep the experts of the first {} layers in host RAM (--n-cpu-moe {})", need, need),
               [&](FitSettings& t) { t.n_cpu_moe = need; });
    }
    if (dev != "host" && device(p, "GPU0")) {
      uint32_t ngl = bisect(0, m.n_layer + 1, [&](uint32_t x) {
        return fits_with([&](FitSettings& t) { t.gpu_layers = int(x); });
      });
      if (ngl > 0 && ngl <= m.n_layer)
        consider(6, fmt::format("offload {} of {} layers to the GPU (-ngl {}); the rest run on the CPU, slower", ngl,
                                m.n_layer + 1, ngl),
                 [&](FitSettings& t) { t.gpu_layers = int(ngl); });
    }
  } else if (s.runtime == Runtime::kVllm) {
    if (p.kv_type == "auto" && m.kv_lora_rank == 0)
      consider(3, "store the KV cache in fp8 (--kv-cache-dtype fp8): twice the tokens",
               [&](FitSettings& t) { t.kv_type = "fp8"; });
    if (p.gpu_mem_util < 0.95)
      consider(5, "raise --gpu-memory-utilization to 0.95 if nothing else uses the GPU",
               [&](FitSettings& t) { t.gpu_mem_util = 0.95; });
  }
  if (dev != "host" && device(p, "GPU0")) {
    if (s.runtime == Runtime::kVllm || s.runtime == Runtime::kTgi) {
      uint32_t tp = std::max<uint32_t>(1, s.tp);
      consider(8, fmt::format("shard over {} GPUs (tensor parallel {})", tp * 2, tp * 2),
               [&](FitSettings& t) { t.tp = tp * 2; });
    }
    // The smallest catalog GPU that holds it as asked.
    // Of the same vendor as the GPU in the plan (NVIDIA unless it says otherwise).
    const GpuInfo* now = find_gpu(hw.gpu_name);
    const std::string vendor = now ? now->vendor : "nvidia";
    std::vector<const GpuInfo*> gpus;
    for (const GpuInfo& g : gpu_catalog())
      if (g.memory_bytes > hw.gpu_total && g.vendor == vendor) gpus.push_back(&g);
    std::sort(gpus.begin(), gpus.end(), [](auto* a, auto* b) { return a->memory_bytes < b->memory_bytes; });
    for (const GpuInfo* g : gpus) {
      Hardware h2 = hw;
      h2.gpu_total = g->memory_bytes;
      h2.gpu_in_use = 0;
      if (plan_once(m, s, h2, extras).fits) {
        p.suggestions.push_back({fmt::format("a larger GPU: {} ({})", g->name, units::format_bytes(g->memory_bytes)),
                                 0, true, 9});
        break;
      }
    }
  }
  std::stable_sort(p.suggestions.begin(), p.suggestions.end(), [](const Suggestion& a, const Suggestion& b) {
    if (a.flips != b.flips) return a.flips;
    return a.rank < b.rank;
  });
  return p;
}

}  // namespace aimem::fit
