#include "recognize/gate.h"

#include "core/text.h"

namespace aimem {
namespace {

// Chosen to be present in every failure message family and rare in healthy
// logs ("memory" alone is not: it is everywhere). Every literal costs scan
// time (measured: 30 literals scan a 1 GiB log in ~0.65 s, 50 longer ones in
// ~0.8 s), so the list is kept short; phrases that only ever appear beside a
// gated line of the same report are marked kCompanion instead. "oom" also
// matches "room": harmless, it only makes a block hot.
constexpr std::string_view kGate[] = {
    // kernel, cgroup and runtime OOMs
    "oom", "kill", "of memory", "ofmemory", "memoryerror", "alloc", "exhaust", "enough memory", "system memory",
    "cache blocks", "larger than", "less than desired",
    "insufficient",  // TensorRT-LLM "Executor creation failed due to insufficient GPU memory", driver too old
    "time limit",    // time-limit kills (not memory, but the failure to name)
    // Not "_out_of_" nor "exceeded": either cost a third of the large-log scan;
    // Level Zero's status codes and the cloud platforms' limits are companions.
    // platforms that enforce a size themselves (Cloud Run, App Engine, Heroku), and time-limit kills
    // orchestrators, user-space killers, exits
    "evict", "crashloop", "probe", "sigterm", "exit", "terminated", "abort", "segmentation fault", "died",
    // look-alikes
    "xid", "nccl", "cuda error", "illegal", "device handle",
    // cuDNN / cuBLAS handles that could not be made (the device had no memory left for them)
    "_status_not_initialized", "cudnn handle",
};

}  // namespace

std::span<const std::string_view> gate_words() { return kGate; }

bool gate_covers(std::string_view pattern) {
  for (std::string_view w : kGate)
    if (text::icontains(pattern, w)) return true;
  return false;
}

}  // namespace aimem
