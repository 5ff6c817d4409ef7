// The rule table. Severities: error for a configuration that fails or is
// killed (a limit below what loading needs, a KV cache that cannot hold one
// sequence), warning for one that fails under load or during a rollout
// (eviction order, no drain where a rollout overlaps two copies, preemption):
// warnings are reserved for what can make memory fail or a failure recur.
// Notes are what could not be checked, or a risk that does not recur (a
// drain missing where the old copy stops first); they never fail the check.
#include "check/rules.h"

#include <fmt/format.h>

#include "check/rules_impl.h"
#include "core/units.h"

namespace aimem::check {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "note";
}

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> kRules = {
      {"no-memory-limit", Severity::kError, "Container without a memory limit",
       "Without a memory limit one leak or one long context takes the node's memory and the kernel picks the "
       "victim. Set a limit at the model's host-RAM peak plus headroom.",
       false, rule_no_memory_limit},
      {"request-below-limit", Severity::kWarning, "Model server's memory request below its limit",
       "A pod whose requests are below its limits is Burstable: under node memory pressure the kubelet evicts it "
       "before Guaranteed pods. A model server is slow to restart; set requests.memory equal to limits.memory.",
       false, rule_request_below_limit},
      {"limit-below-load-peak", Severity::kError, "Memory limit below the model's host-RAM peak while loading",
       "Loading stages weights, tokenizers and conversions in host RAM; a limit below that peak OOM-kills the "
       "server before it serves (aimem fit's load_peak_host_bytes). tmpfs (emptyDir medium Memory) counts "
       "against the limit.",
       true, rule_limit_below_load_peak},
      {"limit-above-node", Severity::kError, "Memory limit or request above the node's memory",
       "A request above node allocatable never schedules; a limit above it lets the container push the node "
       "into a global OOM or evictions instead of failing alone.",
       false, rule_limit_above_node},
      {"gpu-without-host-memory", Severity::kError, "GPU requested but host memory not sized for loading",
       "Weights pass through host RAM on their way to the GPU. A GPU pod without a memory request (or one "
       "below the load peak) can be placed on a node without the RAM to load it.",
       true, rule_gpu_without_host_memory},
      {"readiness-not-gated", Severity::kWarning, "Readiness not gated on the model being loaded",
       "Without a readiness or startup probe that fails until the model is loaded, traffic reaches a server "
       "that is still loading (or an old copy is stopped too early).",
       false, rule_readiness_not_gated},
      {"no-graceful-drain", Severity::kWarning, "No drain before termination where a rollout overlaps two copies",
       "In-flight requests (long generations) need time to finish: a preStop hook keeps the pod serving while "
       "endpoints update, and the grace period must cover the longest request. A warning where a rolling update "
       "(maxSurge > 0, a Deployment's default) runs the new copy beside the old, so that every rollout cuts "
       "requests; a note where the old copy stops first (Recreate, maxSurge 0, StatefulSet, Compose, systemd).",
       false, rule_no_graceful_drain},
      {"rolling-overlap", Severity::kError, "Rolling update runs two copies where the node cannot hold them",
       "With maxSurge > 0 a new copy loads before the old one stops; when the node cannot hold two copies the "
       "rollout OOMs or evicts (cause deployment_overlap). Use maxSurge 0 / Recreate or size for two copies.",
       false, rule_rolling_overlap},
      {"gpu-util-oversubscribed", Severity::kError, "GPU memory fractions of servers sharing a GPU add up above 1",
       "vLLM's gpu_memory_utilization, SGLang's mem_fraction_static and TGI's cuda_memory_fraction are each a "
       "share of the whole GPU; servers sharing one must add up to less than 1.",
       false, rule_gpu_util_oversubscribed},
      {"kv-over-budget", Severity::kError, "Context x concurrency needs more KV cache than the budget holds",
       "The KV cache gets what is left of the GPU after weights and activations (aimem fit). A max context "
       "above it fails at start; context x sequences above it queues or preempts requests.",
       true, rule_kv_over_budget},
      {"over-envelope", Severity::kError, "Context or concurrency above the measured envelope or the policy",
       "aimem probe --save-limits measures the (context, concurrency) steps that passed; a configuration "
       "outside them, or above the policy's max_context / max_concurrency, is untested at that load.",
       false, rule_over_envelope},
      {"heap-above-limit", Severity::kError, "Node heap limit above or near the container's memory limit",
       "V8 grows its heap up to --max-old-space-size before collecting hard; with the heap limit at or near "
       "the container limit the kernel kills the process before V8 reports heap exhaustion.",
       false, rule_heap_above_limit},
      {"invalid-suppression", Severity::kWarning, "Inline suppression without a reason or with an unknown rule",
       "A suppression must name a rule and say why: '# aimem: ignore RULE-ID because REASON'. One without a "
       "reason does not suppress anything.",
       false, rule_none},
      {"swap-for-weights", Severity::kWarning, "Swap relied on for model weights",
       "Weights that are swapped out stall every token. Keep weights in RAM: no swap for the container, "
       "--mlock with --no-mmap, and offloaded weights inside the memory limit.",
       false, rule_swap_for_weights},
  };
  return kRules;
}

const Rule* find_rule(std::string_view id) {
  for (const Rule& r : rule_table())
    if (id == r.id) return &r;
  return nullptr;
}

// Found while reading suppressions (suppress.cc), not by a pass over the subjects.
void rule_none(const Rule&, const std::vector<Subject>&, const Context&, Sink&) {}

void Sink::note(const std::string& rule, const Loc& at, const std::string& message) {
  for (const Note& n : notes)
    if (n.rule == rule && n.message == message) return;  // one note per reason, not per container
  notes.push_back({rule, at, message});
}

void run_rules(const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Rule& r : rule_table()) r.run(r, subjects, ctx, out);
}

Finding finding(const Rule& r, const Loc& at, std::string message, std::string fix) {
  return Finding{r.id, r.severity, at, std::move(message), std::move(fix), ""};
}

std::string subject_name(const Subject& s) {
  const Workload& w = *s.workload;
  switch (w.platform) {
    case Platform::kKubernetes: return fmt::format("container '{}' of {} '{}'", s.container->name, w.kind, w.name);
    case Platform::kCompose: return fmt::format("service '{}'", w.name);
    case Platform::kSystemd: return fmt::format("unit '{}'", w.name);
    case Platform::kCommand: return "the command line";
  }
  return w.name;
}

std::string limit_field(Platform p) {
  switch (p) {
    case Platform::kKubernetes: return "resources.limits.memory";
    case Platform::kCompose: return "mem_limit (or deploy.resources.limits.memory)";
    case Platform::kSystemd: return "MemoryMax=";
    case Platform::kCommand: return "the memory limit";
  }
  return "";
}

std::string request_field(Platform p) {
  switch (p) {
    case Platform::kKubernetes: return "resources.requests.memory";
    case Platform::kCompose: return "mem_reservation";
    default: return "the memory reservation";
  }
}

double headroom(const Context& ctx) { return std::max(0.0, ctx.policy.headroom_pct) / 100.0; }

std::string bytes(uint64_t b) { return units::format_bytes(b); }

}  // namespace aimem::check
