#include "core/taxonomy.h"

#include <array>
#include <utility>

namespace aimem {
namespace {

constexpr std::array<std::pair<Layer, std::string_view>, 11> kLayers{{
    {Layer::none, "none"},
    {Layer::host_ram, "host_ram"},
    {Layer::container_limit, "container_limit"},
    {Layer::k8s_pod_limit, "k8s_pod_limit"},
    {Layer::k8s_eviction, "k8s_eviction"},
    {Layer::gpu_vram, "gpu_vram"},
    {Layer::js_heap, "js_heap"},
    {Layer::jvm_heap, "jvm_heap"},
    {Layer::userspace_oom_killer, "userspace_oom_killer"},
    {Layer::not_memory, "not_memory"},
    {Layer::unknown, "unknown"},
}};

constexpr std::array<std::pair<Cause, std::string_view>, 11> kCauses{{
    {Cause::none, "none"},
    {Cause::model_load, "model_load"},
    {Cause::kv_cache_context, "kv_cache_context"},
    {Cause::concurrency_batch, "concurrency_batch"},
    {Cause::leak_or_accumulation, "leak_or_accumulation"},
    {Cause::fragmentation, "fragmentation"},
    {Cause::other_process, "other_process"},
    {Cause::limit_too_low, "limit_too_low"},
    {Cause::deployment_overlap, "deployment_overlap"},
    {Cause::not_memory, "not_memory"},
    {Cause::unknown, "unknown"},
}};

}  // namespace

std::string_view to_string(Layer layer) {
  for (const auto& [value, name] : kLayers)
    if (value == layer) return name;
  return "unknown";
}

std::string_view to_string(Cause cause) {
  for (const auto& [value, name] : kCauses)
    if (value == cause) return name;
  return "unknown";
}

std::optional<Layer> parse_layer(std::string_view text) {
  for (const auto& [value, name] : kLayers)
    if (name == text) return value;
  return std::nullopt;
}

std::optional<Cause> parse_cause(std::string_view text) {
  for (const auto& [value, name] : kCauses)
    if (name == text) return value;
  return std::nullopt;
}

std::string_view describe(Layer layer) {
  switch (layer) {
    case Layer::none: return "no memory failure";
    case Layer::host_ram: return "host RAM";
    case Layer::container_limit: return "a container or cgroup memory limit";
    case Layer::k8s_pod_limit: return "a Kubernetes container or pod memory limit";
    case Layer::k8s_eviction: return "kubelet eviction under node memory pressure";
    case Layer::gpu_vram: return "GPU memory (VRAM)";
    case Layer::js_heap: return "the Node.js V8 heap limit";
    case Layer::jvm_heap: return "the Java heap";
    case Layer::userspace_oom_killer: return "a user-space OOM killer";
    case Layer::not_memory: return "not a memory failure";
    case Layer::unknown: return "undecided";
  }
  return "undecided";
}

}  // namespace aimem
