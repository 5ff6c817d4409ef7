// vLLM V1's KV cache grouping and block arithmetic. Each step names the vLLM
// function it mirrors (vllm/v1/core/kv_cache_utils.py and
// vllm/v1/kv_cache_interface.py, v0.10-v0.11).
#include "fit/vllm_kv.h"

#include <algorithm>
#include <fmt/format.h>

#include "fit/runtime.h"

namespace aimem::fit {
namespace {

uint64_t cdiv(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

// One attention layer's KVCacheSpec as vLLM builds it per rank.
struct LayerSpec {
  bool sliding = false;
  uint32_t window = 0;
  uint32_t block_size = 16;
  uint64_t page = 0;  // page_size_bytes
  bool same_kind(const LayerSpec& o) const {
    return sliding == o.sliding && window == o.window && block_size == o.block_size && page == o.page;
  }
};

// AttentionSpec.page_size_bytes: 2 (K and V) x block_size x num_kv_heads x
// head_size x dtype size, KV heads split over the ranks (replicated when tp >
// n_kv_heads); MLAAttentionSpec: block_size x (kv_lora_rank + rope dims) x dtype.
uint64_t layer_bytes_per_token(const ModelSpec& m, uint32_t il, const std::string& kv, uint32_t tp) {
  if (m.kv_lora_rank > 0) return kv_row_bytes(kv, uint64_t(m.kv_lora_rank) + m.n_rot, m.dtype_bytes);
  uint32_t nkv = head_kv(m, il);
  if (!nkv) return 0;
  uint64_t heads = (nkv + tp - 1) / tp;
  bool swa = il < m.swa_layer.size() && m.swa_layer[il];
  uint32_t hk = swa && m.head_dim_k_swa ? m.head_dim_k_swa : m.head_dim_k;
  uint32_t hv = swa && m.head_dim_v_swa ? m.head_dim_v_swa : m.head_dim_v;
  return kv_row_bytes(kv, heads * hk, m.dtype_bytes) + kv_row_bytes(kv, heads * hv, m.dtype_bytes);
}

// max_memory_usage_bytes / page_size_bytes of one group's spec:
// FullAttentionSpec: cdiv(max_model_len, block_size);
// SlidingWindowSpec: cdiv(min(sliding_window - 1 + max_num_batched_tokens,
// max_model_len), block_size) + 1 (the window may start mid-block).
uint64_t group_blocks(const VllmKvGroup& g, uint32_t max_model_len, uint32_t mbt) {
  if (!g.sliding) return cdiv(max_model_len, g.block_size);
  uint64_t tokens = std::min<uint64_t>(uint64_t(g.window) - 1 + mbt, max_model_len);
  return cdiv(tokens, g.block_size) + 1;
}

}  // namespace

uint64_t vllm_kv_blocks_per_request(const VllmKvLayout& l, uint32_t max_model_len, uint32_t mbt) {
  uint64_t n = 0;
  for (const VllmKvGroup& g : l.groups) n += group_blocks(g, max_model_len, mbt);
  return n;
}

uint32_t vllm_kv_max_model_len(const VllmKvLayout& l, uint32_t seqs, uint32_t mbt, uint32_t upper) {
  if (l.groups.empty() || !seqs) return 0;
  auto ok = [&](uint32_t len) { return uint64_t(seqs) * vllm_kv_blocks_per_request(l, len, mbt) <= l.num_blocks; };
  if (!ok(1)) return 0;
  uint32_t lo = 1, hi = std::max<uint32_t>(1, upper);
  if (ok(hi)) return hi;
  while (lo + 1 < hi) {  // ok(lo), !ok(hi); blocks per request grow with the length
    uint32_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

VllmKvLayout vllm_kv_layout(const ModelSpec& m, const std::string& kv, uint32_t tp, const VllmKvInputs& in) {
  tp = std::max<uint32_t>(1, tp);
  const uint32_t bs = std::max<uint32_t>(1, in.block_size);
  VllmKvLayout out;
  std::vector<LayerSpec> layers;
  for (uint32_t il = 0; il < m.n_layer; ++il) {
    uint64_t per_tok = layer_bytes_per_token(m, il, kv, tp);
    if (!per_tok) continue;  // no attention KV (recurrent layers are not modelled here)
    LayerSpec s;
    // Attention(per_layer_sliding_window=...) gives a SlidingWindowSpec to the
    // sliding layers only (MLA has no sliding variant in these versions).
    s.sliding = m.kv_lora_rank == 0 && m.n_swa > 0 && il < m.swa_layer.size() && m.swa_layer[il];
    s.window = s.sliding ? m.n_swa : 0;
    s.block_size = bs;
    s.page = per_tok * bs;
    (s.sliding ? out.sliding_layers : out.full_layers)++;
    layers.push_back(s);
  }
  if (layers.empty()) return out;

  // unify_hybrid_kv_cache_specs (disable_hybrid_kv_cache_manager): with both
  // full and sliding layers, every SlidingWindowSpec becomes a
  // FullAttentionSpec, which keeps the whole context.
  if (!in.hybrid_allowed && out.sliding_layers && out.full_layers) {
    for (LayerSpec& s : layers) s.sliding = false, s.window = 0;
    out.sliding_as_full = true;
  }

  // Distinct specs in order of first appearance (same_type_layers).
  auto distinct = [](const std::vector<LayerSpec>& ls) {
    std::vector<std::pair<LayerSpec, uint32_t>> kinds;
    for (const LayerSpec& s : ls) {
      auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first.same_kind(s); });
      if (it == kinds.end()) kinds.push_back({s, 1});
      else ++it->second;
    }
    return kinds;
  };
  auto kinds = distinct(layers);
  bool one_type = std::all_of(kinds.begin(), kinds.end(), [&](const auto& k) {
    return k.first.sliding == kinds[0].first.sliding && k.first.window == kinds[0].first.window;
  });

  if (kinds.size() == 1) {
    // is_kv_cache_spec_uniform -> _get_kv_cache_groups_uniform_spec: one group of every layer.
    out.rule = VllmKvLayout::Rule::kUniformSpec;
    out.page_bytes = kinds[0].first.page;
    out.group_size = uint32_t(layers.size());
    out.groups.push_back({kinds[0].first.sliding, kinds[0].first.window, bs, uint32_t(layers.size())});
  } else if (one_type) {
    // UniformTypeKVCacheSpecs: one type, different page sizes; one group,
    // each layer's tensor sized by its own page (num_blocks = budget //
    // sum of the pages).
    out.rule = VllmKvLayout::Rule::kUniformType;
    for (const LayerSpec& s : layers) out.page_bytes += s.page;
    out.group_size = 1;
    out.groups.push_back({kinds[0].first.sliding, kinds[0].first.window, bs, uint32_t(layers.size())});
  } else {
    // unify_kv_cache_spec_page_size: smaller pages get a larger block_size so
    // every page matches the largest; vLLM raises NotImplementedError when
    // the largest is not a multiple.
    uint64_t max_page = 0;
    for (const LayerSpec& s : layers) max_page = std::max(max_page, s.page);
    for (LayerSpec& s : layers) {
      if (s.page == max_page) continue;
      if (max_page % s.page) {
        out.rule = VllmKvLayout::Rule::kUnsupported;
        out.why = "vLLM cannot unify the layers' page sizes (the largest is not a multiple of the others: "
                  "NotImplementedError in unify_kv_cache_spec_page_size)";
        return out;
      }
      s.block_size = uint32_t(s.block_size * (max_page / s.page));
      s.page = max_page;
    }
    kinds = distinct(layers);
    // _get_kv_cache_groups_uniform_page_size: the group size is the fewest
    // layers of any type, or the most when the counts are within 1.25x of
    // each other (v0.11; 1.5x from v0.12). Each type is split into
    // cdiv(count, group_size) groups; the last is padded.
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const auto& k : kinds) lo = std::min(lo, k.second), hi = std::max(hi, k.second);
    uint32_t group_size = double(hi) < double(lo) * 1.25 ? hi : lo;
    out.rule = VllmKvLayout::Rule::kHybrid;
    out.page_bytes = max_page;
    out.group_size = group_size;
    for (const auto& k : kinds) {
      uint32_t n_groups = uint32_t(cdiv(k.second, group_size));
      for (uint32_t g = 0; g < n_groups; ++g) {
        // layers[i::num_groups]: the first (count % n_groups) groups get one more.
        uint32_t real = k.second / n_groups + (g < k.second % n_groups ? 1 : 0);
        out.groups.push_back({k.first.sliding, k.first.window, k.first.block_size, real});
      }
    }
  }

  // get_num_blocks: available_memory // page_size // num_layers (group size);
  // the uniform-type case divides by the summed page.
  out.num_blocks = out.page_bytes && out.group_size ? in.budget / out.page_bytes / out.group_size : 0;
  out.bytes = out.num_blocks * out.page_bytes * out.group_size;
  // _report_kv_cache_config: num_blocks // len(groups) * min block_size.
  uint32_t min_bs = UINT32_MAX;
  for (const VllmKvGroup& g : out.groups) min_bs = std::min(min_bs, g.block_size);
  out.tokens = out.num_blocks / out.groups.size() * min_bs;
  // get_max_concurrency_for_kv_cache_config: num_blocks / cdiv(group_size x
  // sum of the groups' max_memory_usage_bytes, page x group_size); every
  // group's usage is a whole number of pages, so the quotient is the summed blocks.
  out.blocks_per_request = vllm_kv_blocks_per_request(out, in.max_model_len, in.max_num_batched_tokens);
  out.max_concurrency = out.blocks_per_request ? double(out.num_blocks) / double(out.blocks_per_request) : 0.0;
  // _max_memory_usage_bytes_from_groups (the start-up check): group_size x page x blocks.
  out.request_bytes = out.blocks_per_request * out.page_bytes * out.group_size;
  return out;
}

std::string vllm_kv_rule_text(const VllmKvLayout& l) {
  using R = VllmKvLayout::Rule;
  switch (l.rule) {
    case R::kNone: return "no attention KV cache";
    case R::kUnsupported: return l.why;
    case R::kUniformSpec:
    case R::kUniformType:
      if (l.sliding_as_full)
        return fmt::format("KV allocator: all {} layers as full attention (hybrid KV cache manager disabled: "
                           "{} sliding-window layers keep the whole context)",
                           l.full_layers + l.sliding_layers, l.sliding_layers);
      if (!l.groups.empty() && l.groups[0].sliding)
        return fmt::format("KV allocator: one group of {} sliding-window layers (window {}): a request keeps "
                           "window - 1 + max_num_batched_tokens tokens",
                           l.sliding_layers, l.groups[0].window);
      return fmt::format("KV allocator: one group of {} full-attention layers", l.full_layers);
    case R::kHybrid: {
      uint32_t full = 0, sliding = 0;
      for (const VllmKvGroup& g : l.groups) (g.sliding ? sliding : full)++;
      uint32_t window = 0;
      for (const VllmKvGroup& g : l.groups)
        if (g.sliding) window = g.window;
      return fmt::format("KV allocator: hybrid KV cache manager, {} groups of {} layers ({} full-attention, {} "
                         "sliding-window of window {}) sharing one pool of blocks; a sliding group keeps "
                         "window - 1 + max_num_batched_tokens tokens of a request",
                         l.groups.size(), l.group_size, full, sliding, window);
    }
  }
  return "";
}

}  // namespace aimem::fit
