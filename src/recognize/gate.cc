#include "recognize/gate.h"

#include "core/text.h"

namespace aimem {
namespace {

// Chosen to be present in every failure message family and rare in healthy
// logs ("memory" alone is not: it is everywhere). Under ~32 literals, so that
// vectorscan uses its fastest small-set engine. "oom" also matches "room":
// harmless, it only makes a block hot.
constexpr std::string_view kGate[] = {
    // kernel, cgroup and runtime OOMs
    "oom", "kill", "of memory", "ofmemory", "memoryerror", "devicememory", "alloc", "exhaust", "enough memory",
    "insufficient memory", "system memory", "cache blocks", "larger than", "less than desired",
    // orchestrators, user-space killers, exits
    "evict", "memorypressure", "crashloop", "probe", "sigterm", "exit", "terminated", "abort", "segmentation", "died",
    // look-alikes
    "xid", "nccl", "cuda error", "illegal", "device handle", "gpu is lost",
};

}  // namespace

std::span<const std::string_view> gate_words() { return kGate; }

bool gate_covers(std::string_view pattern) {
  for (std::string_view w : kGate)
    if (text::icontains(pattern, w)) return true;
  return false;
}

}  // namespace aimem
