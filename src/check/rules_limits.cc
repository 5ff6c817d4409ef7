// Rules about host-memory limits and what must fit inside them.
#include <fmt/format.h>

#include "check/rules_impl.h"
#include "core/units.h"

namespace aimem::check {
namespace {

uint64_t with_headroom(uint64_t b, const Context& ctx) { return uint64_t(double(b) * (1.0 + headroom(ctx))); }

// Bytes of tmpfs (emptyDir medium Memory) the container mounts; nullopt when
// one is unbounded. One at /dev/shm is not counted, sized or not: it is the
// shared memory that NCCL and PyTorch's worker processes exchange tensors
// through (vLLM, SGLang and TGI with tensor parallelism need it larger than
// Docker's 64 MiB), holding what they write there, not weights; its sizeLimit
// is a cap, not a use. Nearly every GPU manifest mounts one, and counting it
// made the rule fire on limits five times the load peak (tests/fixtures/check/corpus).
std::optional<uint64_t> tmpfs_bytes(const Container& c) {
  uint64_t sum = 0;
  for (const MemoryVolume& v : c.memory_volumes) {
    if (v.mount_path == "/dev/shm" || v.mount_path == "/dev/shm/") continue;
    if (v.size_limit == 0) return std::nullopt;
    sum += v.size_limit;
  }
  return sum;
}

void plan_missing(const Rule& r, const Subject& s, Sink& out) {
  out.note(r.id, s.server.at.line ? s.server.at : s.container->at,
           fmt::format("{} not checked for {}: {}", r.id, subject_name(s), s.plan.why_not));
}

}  // namespace

void rule_no_memory_limit(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const Platform p = s.workload->platform;
    if (p == Platform::kCommand || s.container->mem_limit) continue;
    std::string size = s.plan.plan ? fmt::format(" of at least {} (the load peak {} plus {:.0f}% headroom)",
                                                 bytes(with_headroom(s.plan.plan->load_peak_host_bytes, ctx)),
                                                 bytes(s.plan.plan->load_peak_host_bytes), ctx.policy.headroom_pct)
                                   : "";
    std::string extra = p == Platform::kSystemd ? " (MemoryHigh= throttles but does not cap)" : "";
    out.violation(finding(r, s.container->at, fmt::format("{} has no memory limit{}", subject_name(s), extra),
                          fmt::format("set {}{}", limit_field(p), size)));
  }
}

void rule_request_below_limit(const Rule& r, const std::vector<Subject>& subjects, const Context&, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    if (!s.model_server() || !c.mem_limit || !c.mem_request) continue;
    if (c.mem_request->value >= c.mem_limit->value) continue;
    const Platform p = s.workload->platform;
    std::string why = p == Platform::kKubernetes
                          ? "the pod is Burstable and is evicted before Guaranteed pods when the node runs low"
                          : "the reservation does not keep the memory the server needs under host pressure";
    out.violation(finding(r, c.mem_request->at,
                          fmt::format("memory request {} is below the limit {} for model server {}: {}",
                                      bytes(c.mem_request->value), bytes(c.mem_limit->value), subject_name(s), why),
                          fmt::format("set {} to {} (equal to the limit)", request_field(p), bytes(c.mem_limit->value))));
  }
}

void rule_limit_below_load_peak(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    if (s.server.server == Server::kNone || !c.mem_limit) continue;
    if (!s.plan.plan) {
      plan_missing(r, s, out);
      continue;
    }
    const uint64_t peak = s.plan.plan->load_peak_host_bytes;
    const uint64_t need = with_headroom(peak, ctx);
    auto tmpfs = tmpfs_bytes(c);
    uint64_t usable = c.mem_limit->value - std::min(c.mem_limit->value, tmpfs.value_or(0));
    std::string tmpfs_note;
    if (!tmpfs) tmpfs_note = "; an emptyDir with medium Memory and no sizeLimit can take the rest";
    else if (*tmpfs) tmpfs_note = fmt::format(" ({} of it taken by emptyDir medium Memory)", bytes(*tmpfs));
    if (usable >= need && tmpfs) continue;
    out.violation(finding(
        r, c.mem_limit->at,
        fmt::format("memory limit {}{} is below the host-RAM peak while loading {} ({}, {:.0f}% headroom: {}){}",
                    bytes(c.mem_limit->value), tmpfs && *tmpfs ? fmt::format(" less {} of tmpfs", bytes(*tmpfs)) : "",
                    s.plan.model, bytes(peak), ctx.policy.headroom_pct, bytes(need), tmpfs_note),
        fmt::format("raise {} to at least {}{}", limit_field(s.workload->platform),
                    bytes(need + tmpfs.value_or(0)), tmpfs ? "" : " and set a sizeLimit on the memory emptyDir")));
  }
}

void rule_limit_above_node(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    if (!c.mem_limit && !c.mem_request) continue;
    if (!ctx.policy.node_memory_bytes) {
      out.note(r.id, c.at, "limit-above-node not checked: the node's memory is unknown (policy node_memory or --node-memory)");
      continue;
    }
    const uint64_t node = *ctx.policy.node_memory_bytes;
    for (const auto* q : {&c.mem_request, &c.mem_limit}) {
      if (!*q || (*q)->value <= node) continue;
      const bool request = q == &c.mem_request;
      out.violation(finding(
          r, (*q)->at,
          fmt::format("memory {} {} of {} is above the node's {}{}", request ? "request" : "limit",
                      bytes((*q)->value), subject_name(s), bytes(node),
                      request ? ": the pod never schedules" : ": the container can push the whole node out of memory"),
          fmt::format("lower it to at most {} ({}% headroom below the node) or use a larger node",
                      bytes(uint64_t(double(node) * (1.0 - headroom(ctx)))), ctx.policy.headroom_pct)));
      break;
    }
  }
}

void rule_gpu_without_host_memory(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    if (!c.gpus || c.gpus->value == 0) continue;
    const Platform p = s.workload->platform;
    if (!c.mem_request && !c.mem_limit) {
      std::string size = s.plan.plan ? fmt::format(" of at least {}", bytes(with_headroom(s.plan.plan->load_peak_host_bytes, ctx)))
                                     : "";
      out.violation(finding(r, c.gpus->at,
                            fmt::format("{} requests a GPU but no host memory: weights pass through host RAM while "
                                        "loading, and the scheduler may place it on a node without that RAM",
                                        subject_name(s)),
                            fmt::format("set {} and {}{}", request_field(p), limit_field(p), size)));
      continue;
    }
    // A request written below the load peak (a limit alone is the request in Kubernetes).
    if (!c.mem_request || !c.mem_limit || c.mem_request->value >= c.mem_limit->value) continue;
    if (!s.plan.plan) {
      if (s.server.server != Server::kNone) plan_missing(r, s, out);
      continue;
    }
    const uint64_t peak = s.plan.plan->load_peak_host_bytes;
    if (c.mem_request->value >= peak) continue;
    out.violation(finding(r, c.mem_request->at,
                          fmt::format("memory request {} of GPU {} is below the host-RAM peak while loading {} ({}): "
                                      "it can be scheduled on a node that cannot load the model",
                                      bytes(c.mem_request->value), subject_name(s), s.plan.model, bytes(peak)),
                          fmt::format("set {} to at least {}", request_field(p), bytes(with_headroom(peak, ctx)))));
  }
}

void rule_heap_above_limit(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    if (!s.server.node_heap || !c.mem_limit) continue;
    const uint64_t heap = s.server.node_heap->value, limit = c.mem_limit->value;
    const uint64_t ceiling = uint64_t(double(limit) * (1.0 - headroom(ctx)));
    if (heap < ceiling) continue;
    Finding f = finding(r, s.server.node_heap->at,
                        fmt::format("--max-old-space-size {} is {} the memory limit {} of {}: the kernel kills the "
                                    "process before V8 reports 'heap out of memory'",
                                    bytes(heap), heap >= limit ? "at or above" : "near", bytes(limit), subject_name(s)),
                        fmt::format("set --max-old-space-size to at most {} MiB ({:.0f}% below the limit, leaving "
                                    "room for buffers, code and the young generation)",
                                    ceiling / units::MiB, ctx.policy.headroom_pct));
    if (heap < limit) f.severity = Severity::kWarning;
    out.violation(f);
  }
}

void rule_swap_for_weights(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    const ServerConfig& cfg = s.server;
    if (cfg.server == Server::kNone) continue;
    if (cfg.no_mmap && !cfg.mlock) {
      out.violation(finding(r, *cfg.no_mmap,
                            fmt::format("--no-mmap without --mlock in {}: the weights are anonymous memory the kernel "
                                        "may swap out, stalling every token",
                                        subject_name(s)),
                            "add --mlock (and a memory limit that holds the weights), or drop --no-mmap"));
    }
    if (c.swap_limit && (c.swap_limit->value < 0 || (c.mem_limit && uint64_t(c.swap_limit->value) > c.mem_limit->value &&
                                                     s.workload->platform == Platform::kCompose) ||
                         (s.workload->platform == Platform::kSystemd && c.swap_limit->value > 0))) {
      out.violation(finding(r, c.swap_limit->at,
                            fmt::format("{} may swap: model weights paged out to swap stall every token", subject_name(s)),
                            s.workload->platform == Platform::kSystemd ? "set MemorySwapMax=0"
                                                                       : "set memswap_limit equal to mem_limit"));
    }
    const double offload_gib = (cfg.cpu_offload_gib ? cfg.cpu_offload_gib->value : 0) +
                               (cfg.swap_space_gib ? cfg.swap_space_gib->value : 0);
    if (cfg.cpu_offload_gib && cfg.cpu_offload_gib->value > 0 && c.mem_limit) {
      const uint64_t pinned = uint64_t(offload_gib * double(units::GiB));
      const uint64_t room = uint64_t(double(c.mem_limit->value) * (1.0 - headroom(ctx)));
      if (pinned >= room)
        out.violation(finding(r, cfg.cpu_offload_gib->at,
                              fmt::format("--cpu-offload-gb {} (with --swap-space) keeps {} of weights and KV swap in host "
                                          "RAM, more than the memory limit {} leaves with headroom",
                                          cfg.cpu_offload_gib->value, bytes(pinned), bytes(c.mem_limit->value)),
                              fmt::format("raise {} above {} or lower --cpu-offload-gb", limit_field(s.workload->platform),
                                          bytes(uint64_t(double(pinned) * (1.0 + headroom(ctx)))))));
    }
  }
}

}  // namespace aimem::check
