// vLLM V1's KV cache manager as arithmetic: how the layers of a model are put
// into KV cache groups, how many blocks the KV budget buys, and the figures
// vLLM logs from them ("GPU KV cache size: N tokens", "Maximum concurrency
// for L tokens per request: X x"). Mirrors vllm/v1/core/kv_cache_utils.py and
// vllm/v1/kv_cache_interface.py (v0.10-v0.11; the grouping code is unchanged
// through v0.14 apart from the padding heuristic noted in vllm_kv.cc).
// Pure: a ModelSpec and numbers in, numbers out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fit/model.h"

namespace aimem::fit {

struct VllmKvInputs {
  uint64_t budget = 0;               // available KV cache memory per rank, bytes
  uint32_t max_model_len = 0;
  uint32_t max_num_batched_tokens = 0;
  uint32_t block_size = 16;          // CacheConfig.block_size (16 on CUDA and CPU without IPEX)
  bool hybrid_allowed = true;        // false: disable_hybrid_kv_cache_manager is set (flag, platform, Llama 4)
};

// One KV cache group: the layers that share one block table.
struct VllmKvGroup {
  bool sliding = false;              // SlidingWindowSpec (else FullAttentionSpec)
  uint32_t window = 0;               // sliding window, tokens
  uint32_t block_size = 16;          // tokens per block (raised when page sizes are unified)
  uint32_t layers = 0;               // real layers in the group (<= group_size; the rest is padding)
};

struct VllmKvLayout {
  // Which of kv_cache_utils.get_kv_cache_groups' branches applied.
  enum class Rule { kNone, kUniformSpec, kUniformType, kHybrid, kUnsupported };
  Rule rule = Rule::kNone;
  bool sliding_as_full = false;      // unify_hybrid_kv_cache_specs turned sliding layers into full attention
  uint32_t sliding_layers = 0, full_layers = 0;
  uint64_t page_bytes = 0;           // one block of one tensor: page_size_bytes (uniform type: sum over layers)
  uint32_t group_size = 0;           // layers per group = KV cache tensors (uniform type: 1)
  std::vector<VllmKvGroup> groups;
  uint64_t num_blocks = 0;           // get_num_blocks
  uint64_t tokens = 0;               // 'GPU KV cache size: N tokens'
  uint64_t blocks_per_request = 0;   // blocks one max_model_len request needs over all groups
  double max_concurrency = 0;        // 'Maximum concurrency for max_model_len tokens per request'
  uint64_t bytes = 0;                // KV cache tensors allocated: num_blocks x page x group_size
  uint64_t request_bytes = 0;        // KV one max_model_len request needs (the start-up check)
  std::string why;                   // kUnsupported: vLLM's error
  uint64_t block_bytes() const { return page_bytes * group_size; }
};

VllmKvLayout vllm_kv_layout(const ModelSpec& m, const std::string& kv_type, uint32_t tp, const VllmKvInputs& in);

// Blocks one request of `max_model_len` tokens needs across the groups
// (sum of each group's max_memory_usage_bytes / page_size_bytes).
uint64_t vllm_kv_blocks_per_request(const VllmKvLayout& l, uint32_t max_model_len, uint32_t max_num_batched_tokens);

// The longest max_model_len for which `seqs` requests fit in the blocks (0: none).
uint32_t vllm_kv_max_model_len(const VllmKvLayout& l, uint32_t seqs, uint32_t max_num_batched_tokens,
                               uint32_t upper);

// One line naming the rule, for the plan's assumptions.
std::string vllm_kv_rule_text(const VllmKvLayout& l);

}  // namespace aimem::fit
