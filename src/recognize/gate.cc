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
    // platforms that enforce a size themselves (Cloud Run, App Engine, Heroku), and time-limit kills
    // orchestrators, user-space killers, exits
    "evict", "crashloop", "probe", "sigterm", "exit", "terminated", "abort", "segmentation fault", "died",
    // look-alikes
    "xid", "nccl", "cuda error", "illegal", "device handle", "gpu reset",
    // cuDNN / cuBLAS handles that could not be made (the device had no memory left for them)
    "_status_not_initialized", "cudnn handle",
    // Three more words, and a faster gate: at 33 caseless literals and more,
    // vectorscan 5.4 (Debian 12) builds this set with a different literal
    // matcher than at 30-32, and on bench/diagnose_vs_grep.sh's 1 GiB log
    // the gate's single-threaded pass fell from 0.23 s to 0.15-0.18 s
    // (measured 2026-12-05, 2-6 runs each; 33 words of any kind did it,
    // 30-32 did not). So the words once left out for their cost come back:
    // Level Zero's and the platforms' "_out_of_" and "exceeded", and ENOMEM.
    // A test holds the count at 33 or more.
    "_out_of_", "exceeded", "enomem",
    // And at 35, no more: 37 words (SIGFPE's "point exception" and Android's
    // "fatal signal" added, 2026-12-07) took the same log's whole run from
    // 0.25 to 0.32 s (paired, 7 runs: 1.27x), and swapping "less than
    // desired" for "gpu memory utilization" cost as much (1.24x): vectorscan
    // moved the set to its fat Teddy matcher. Phrases read without a word of
    // their own are marked kCompanion (read whole in a paste, near another
    // failure in a large log). A test holds the count at 35.
    // a server's own memory alarm (RabbitMQ's "memory resource limit alarm set", "Memory alarm on node")
    "alarm",
};

}  // namespace

std::span<const std::string_view> gate_words() { return kGate; }

bool gate_covers(std::string_view pattern) {
  for (std::string_view w : kGate)
    if (text::icontains(pattern, w)) return true;
  return false;
}

}  // namespace aimem
