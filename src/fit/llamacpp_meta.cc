// llama.cpp's graph metadata: the host memory that holds the ggml tensor
// structs and the cgraph of each graph the context builds (not the tensors'
// data, which is the compute buffer). Mirrored from the llama.cpp build that
// node-llama-cpp 3.22.1 bundles (tag v0.5.0, tree de3ff815):
//
//   src/llama-context.cpp  sched_reserve:  max_nodes = graph_max_nodes(min(n_ctx, n_ubatch))
//                          graph_max_nodes: max(1024, 8 n_tensors) for most
//                            architectures; max(40 n_tokens, 32 n_tensors) for the
//                            delta-net / linear-attention hybrids (qwen3next, qwen35,
//                            kimi-linear, minimax-01, ...); kimi-k3 and hrm_text larger;
//                            plus the nodes of backend samplers (none when the caller
//                            sets none, as node-llama-cpp and llama-server do by default)
//   src/llama-graph.cpp    llm_graph_result::reset: buf_compute_meta.resize(
//                            ggml_tensor_overhead() * max_nodes +
//                            ggml_graph_overhead_custom(max_nodes, false))
//   ggml/src/ggml.c        ggml_tensor_overhead = sizeof(ggml_object) + sizeof(ggml_tensor)
//                          ggml_graph_overhead_custom(n) = sizeof(ggml_object) +
//                            GGML_PAD(ggml_graph_nbytes(n), GGML_MEM_ALIGN)
//                          ggml_graph_nbytes: the cgraph struct, nodes[n], leafs[n],
//                            use_counts[h], hash keys[h], a bitset of h bits, with
//                            h = ggml_hash_size(2 n) (the next prime of a table)
//
// A context holds three such results once it has decoded: the reserve graph
// (gf_res_reserve) and the previous graphs kept for reuse, one for ubatches
// with outputs and one for those without (gf_res_prev[2]); a std::vector
// resize zero-fills them, so they are resident. The scheduler's own per-node
// arrays (ggml_backend_sched_new: about 61 x max_nodes ints per array and a
// context buffer of 60 tensor structs per node) are malloc/calloc'ed and
// touched only as far as a graph needs, so they are not counted here.
//
// Struct sizes are those of x86-64 / aarch64 Linux (LP64): ggml_object 32,
// ggml_tensor 336, ggml_cgraph 96, GGML_MEM_ALIGN 16. tests/fit/
// llamacpp_recurrent_test.cc checks them against the engine's own
// libggml-base.so and max_nodes against its log.
#include <algorithm>
#include <string_view>

#include "fit/runtime.h"

namespace aimem::fit {
namespace {

constexpr uint64_t kObjectSize = 32;   // struct ggml_object: offs, size, next, type, padding[4]
constexpr uint64_t kTensorSize = 336;  // struct ggml_tensor (GGML_MAX_DIMS 4, GGML_MAX_SRC 10,
                                       // GGML_MAX_OP_PARAMS 64, GGML_MAX_NAME 64)
constexpr uint64_t kCgraphSize = 96;   // struct ggml_cgraph
constexpr uint64_t kMemAlign = 16;     // GGML_MEM_ALIGN

// ggml_hash_size: the smallest of these primes >= n, else n | 1.
uint64_t hash_size(uint64_t n) {
  static constexpr uint64_t kPrimes[] = {
      2, 3, 5, 11, 17, 37, 67, 131, 257, 521, 1031, 2053, 4099, 8209, 16411, 32771, 65537, 131101,
      262147, 524309, 1048583, 2097169, 4194319, 8388617, 16777259, 33554467, 67108879, 134217757,
      268435459, 536870923, 1073741827, 2147483659};
  const uint64_t* p = std::lower_bound(std::begin(kPrimes), std::end(kPrimes), n);
  return p == std::end(kPrimes) ? (n | 1) : *p;
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// ggml_graph_nbytes(size, grads = false): incr_ptr_aligned over the parts.
uint64_t graph_nbytes(uint64_t size) {
  const uint64_t h = hash_size(size * 2);
  uint64_t p = kCgraphSize;
  p = align_up(p, 8) + size * 8;              // nodes
  p = align_up(p, 8) + size * 8;              // leafs
  p = align_up(p, 4) + h * 4;                 // use_counts
  p = align_up(p, 8) + h * 8;                 // hash keys
  p = align_up(p, 4) + (h + 31) / 32 * 4;     // visited bitset (uint32_t words)
  return p;
}

struct NodeRule {
  std::string_view arch;
  uint32_t per_token, per_tensor;  // max(per_token * n_tokens, per_tensor * n_tensors)
};
constexpr NodeRule kNodeRules[] = {
    {"kimi-k3", 160, 64},    {"hrm_text", 80, 64},    {"qwen3next", 40, 32},  {"kimi-linear", 40, 32},
    {"bailingmoe3", 40, 32}, {"qwen35", 40, 32},      {"qwen35moe", 40, 32},  {"qwen4exp", 40, 32},
    {"deepseek4", 40, 32},   {"nanbeige", 40, 32},    {"minimax-01", 40, 32}, {"minimax-m3", 40, 32},
    {"hy_v4", 40, 32},
};

}  // namespace

uint64_t ggml_tensor_overhead_bytes() { return kObjectSize + kTensorSize; }

uint64_t ggml_graph_overhead_bytes(uint64_t size) { return kObjectSize + align_up(graph_nbytes(size), kMemAlign); }

uint32_t llamacpp_max_nodes(const std::string& arch, uint64_t n_tensors, uint32_t n_tokens) {
  for (const NodeRule& r : kNodeRules) {
    if (r.arch == arch) return uint32_t(std::max<uint64_t>(uint64_t(r.per_token) * n_tokens, r.per_tensor * n_tensors));
  }
  return uint32_t(std::max<uint64_t>(1024, 8 * n_tensors));
}

uint64_t llamacpp_graph_meta_bytes(uint32_t max_nodes) {
  return ggml_tensor_overhead_bytes() * max_nodes + ggml_graph_overhead_bytes(max_nodes);
}

}  // namespace aimem::fit
