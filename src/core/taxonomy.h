// The failure taxonomy of DESIGN.md §1: the pool that ran out (layer) and why
// (cause). The spellings are a contract with users and scripts.
#pragma once

#include <optional>
#include <string_view>

namespace aimem {

enum class Layer {
  none,
  host_ram,
  container_limit,
  k8s_pod_limit,
  k8s_eviction,
  gpu_vram,
  js_heap,
  jvm_heap,
  userspace_oom_killer,
  not_memory,
  unknown,
};

enum class Cause {
  none,
  model_load,
  kv_cache_context,
  concurrency_batch,
  leak_or_accumulation,
  fragmentation,
  other_process,
  limit_too_low,
  deployment_overlap,
  not_memory,
  unknown,
};

std::string_view to_string(Layer layer);
std::string_view to_string(Cause cause);
std::optional<Layer> parse_layer(std::string_view text);
std::optional<Cause> parse_cause(std::string_view text);

// A short phrase for people: "GPU memory (VRAM)", "a container's memory limit".
std::string_view describe(Layer layer);

}  // namespace aimem
