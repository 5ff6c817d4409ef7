// The alerting rules, one row each in kRules: what fires, over which series,
// at which policy threshold. Series and labels are aimem watch's
// (watch/exporter.cc): pool = host_ram | swap | cgroup | gpu, with `cgroup`
// or `gpu` naming the pool; inference series carry `target`. Restarts come
// from kube-state-metrics, as aimem exports none (it samples memory, not
// container lifecycles).
//
// The fleet group (RulesOptions::fleet) reads the labels the Kubernetes
// DaemonSet puts on every series (deploy/kubernetes: `node` from --label,
// `namespace`/`pod`/`container` on the pods' cgroups) and kube-state-metrics'
// requests, owners and allocatable memory; its names follow Prometheus'
// level:metric:operations convention so a federating Prometheus can pull the
// `aimem:*`, `node:*` and `namespace_*:*` series alone.
//
// The thresholds mirror aimem watch's own alerts (watch/alerts.cc), so a
// Prometheus that scrapes many hosts alerts as watch does on one:
//   - host RAM and cgroup limits: warning at warn_used_ratio, critical at the
//     lower of critical_used_ratio and 1 - headroom (the policy's headroom is
//     the room the service must keep; a warning at or above it is dropped);
//   - GPUs: warning at gpu_warn_used_ratio only, since vLLM and SGLang
//     preallocate ~90% of VRAM by design and a headroom rule would always fire;
//   - swap: no headroom or exhaustion rule (stale pages sit in swap for days).
#include "check/rules_gen.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "core/time.h"

namespace aimem::check {
namespace {

// A threshold as PromQL and people read it: 0.85, 900 (no 0.8500000000000001).
std::string num(double v) { return fmt::format("{:.6g}", v); }
std::string pct(double ratio) { return fmt::format("{:.4g}%", ratio * 100); }

// A double-quoted PromQL string literal's body.
std::string promql_quoted(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

// A literal in an RE2 pattern.
std::string re2_literal(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

struct Ctx {
  const Policy& p;
  std::string job;  // ",job=..." or ""
  double critical;  // min(critical_used_ratio, 1 - headroom)

  // metric{matchers,job}
  std::string sel(std::string_view metric, std::string_view matchers = {}) const {
    std::string m{matchers};
    std::string j = job;
    if (m.empty() && !j.empty()) j.erase(0, 1);
    if (m.empty() && j.empty()) return std::string(metric);
    return fmt::format("{}{{{}{}}}", metric, m, j);
  }
  std::string tte() const { return timeutil::format_duration(p.time_to_exhaustion_s); }
  std::string tte_critical() const { return timeutil::format_duration(p.time_to_exhaustion_s / 5); }
};

// Template pieces: "cgroup /kubepods/pod1", "host_ram".
constexpr const char* kPool = "{{ $labels.pool }}{{ with $labels.cgroup }} {{ . }}{{ end }}";
constexpr const char* kMemoryRunbook =
    "Run `aimem diagnose` on {{ $labels.instance }} to see which process holds the memory and `aimem fit` to size "
    "the limit; then raise the limit or cut context, concurrency or batch size.";

std::string headroom_expr(const Ctx& c, double ratio) {
  const char* pools = "pool=~\"host_ram|cgroup\"";
  return fmt::format("{} / ({} > 0) >= {}", c.sel("aimem_memory_used_bytes", pools),
                     c.sel("aimem_memory_limit_bytes", pools), num(ratio));
}

std::string headroom_description(const Ctx& c, const char* duration) {
  return fmt::format(
      "{} has used {{{{ $value | humanizePercentage }}}} of its capacity (the cgroup limit, or MemTotal for host "
      "RAM) for {}: warning at {}, critical at {}. The policy keeps {} free for bursts and deployment overlap.",
      kPool, duration, pct(c.p.warn_used_ratio), pct(c.critical), pct(c.p.headroom_pct / 100));
}

using Build = std::function<std::optional<AlertRule>(const Ctx&)>;

struct RuleDef {
  const char* group;
  Build build;
};

const RuleDef kRules[] = {
    {"aimem-memory",
     [](const Ctx& c) -> std::optional<AlertRule> {
       if (c.p.warn_used_ratio >= c.critical) return std::nullopt;  // the critical rule covers it
       return AlertRule{"AimemMemoryHeadroomLow", headroom_expr(c, c.p.warn_used_ratio), "5m", "warning",
                        fmt::format("{} memory at {{{{ $value | humanizePercentage }}}} on {{{{ $labels.instance }}}}", kPool),
                        headroom_description(c, "5m"), kMemoryRunbook};
     }},
    {"aimem-memory",
     [](const Ctx& c) -> std::optional<AlertRule> {
       return AlertRule{"AimemMemoryHeadroomCritical", headroom_expr(c, c.critical), "2m", "critical",
                        fmt::format("{} memory at {{{{ $value | humanizePercentage }}}} on {{{{ $labels.instance }}}}: "
                                    "the policy's headroom is gone",
                                    kPool),
                        headroom_description(c, "2m"), kMemoryRunbook};
     }},
    {"aimem-memory",
     [](const Ctx& c) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemGpuMemoryHeadroomLow",
           fmt::format("{} / ({} > 0) >= {}", c.sel("aimem_gpu_memory_used_bytes"), c.sel("aimem_gpu_memory_total_bytes"),
                       num(c.p.gpu_warn_used_ratio)),
           "5m", "warning",
           "GPU {{ $labels.gpu }} memory at {{ $value | humanizePercentage }} on {{ $labels.instance }}",
           fmt::format("GPU {{{{ $labels.gpu }}}} has used {{{{ $value | humanizePercentage }}}} of its memory for 5m "
                       "(warning at {}). vLLM and SGLang preallocate about 90% for the KV cache by design, so use "
                       "above that is a second process on the GPU or an allocation spike.",
                       pct(c.p.gpu_warn_used_ratio)),
           "Run `aimem diagnose` on {{ $labels.instance }} to see each process's GPU memory and `aimem fit` to "
           "check the plan (weights, KV cache, activations) against the GPU."};
     }},
    {"aimem-memory",
     [](const Ctx& c) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemMemoryExhaustionSoon",
           fmt::format("{} < {}", c.sel("aimem_time_to_exhaustion_seconds", "pool!=\"swap\""), num(c.p.time_to_exhaustion_s)),
           "2m", "warning",
           fmt::format("{} memory full in {{{{ $value | humanizeDuration }}}} on {{{{ $labels.instance }}}}", kPool),
           fmt::format("At its recent growth rate {} reaches its limit in {{{{ $value | humanizeDuration }}}} "
                       "(warning under {}, critical under {}): a leak, a growing cache or a queue of long prompts.",
                       kPool, c.tte(), c.tte_critical()),
           kMemoryRunbook};
     }},
    {"aimem-memory",
     [](const Ctx& c) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemMemoryExhaustionImminent",
           fmt::format("{} < {}", c.sel("aimem_time_to_exhaustion_seconds", "pool!=\"swap\""),
                       num(c.p.time_to_exhaustion_s / 5)),
           "1m", "critical",
           fmt::format("{} memory full in {{{{ $value | humanizeDuration }}}} on {{{{ $labels.instance }}}}", kPool),
           fmt::format("At its recent growth rate {} reaches its limit in {{{{ $value | humanizeDuration }}}} "
                       "(critical under {}): the kernel's OOM killer or the runtime's allocator fails next.",
                       kPool, c.tte_critical()),
           kMemoryRunbook};
     }},
    {"aimem-memory",
     [](const Ctx& c) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemOOMKill", fmt::format("increase({}[10m]) > 0", c.sel("aimem_oom_kills_total")), "0m", "critical",
           fmt::format("OOM kill in {} on {{{{ $labels.instance }}}}", kPool),
           fmt::format("The kernel killed a process for memory in {} within the last 10 minutes "
                       "({{{{ printf \"%.0f\" $value }}}} counted).",
                       kPool),
           "Run `aimem diagnose` on {{ $labels.instance }} (it reads the kernel log) to see which pool ran out, "
           "which process died and why; `aimem check` then keeps the fix in the manifests."};
     }},
    {"aimem-inference",
     [](const Ctx& c) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemKvCacheNearFull",
           fmt::format("{} >= {}", c.sel("aimem_inference_kv_cache_usage_ratio"), num(c.p.kv_warn_ratio)), "5m", "warning",
           "KV cache of {{ $labels.target }} at {{ $value | humanizePercentage }}",
           fmt::format("The inference server's KV cache has been at least {} full for 5m: new requests queue or "
                       "running ones are preempted.",
                       pct(c.p.kv_warn_ratio)),
           "Cap the context or concurrency, or give the KV cache more memory; `aimem fit` shows the budget and "
           "`aimem probe` the measured envelope."};
     }},
    {"aimem-kubernetes",
     [](const Ctx&) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemContainerOOMKilled",
           "increase(kube_pod_container_status_restarts_total[10m]) > 0 and on (namespace, pod, container) "
           "kube_pod_container_status_last_terminated_reason{reason=\"OOMKilled\"} == 1",
           "0m", "critical",
           "Container {{ $labels.namespace }}/{{ $labels.pod }}/{{ $labels.container }} restarted after an OOM kill",
           "Kubernetes restarted container {{ $labels.container }} of pod {{ $labels.pod }} within the last 10 "
           "minutes and its last termination was OOMKilled: its memory limit is below its peak.",
           "Run `aimem diagnose` on the node's kernel log or `kubectl describe pod` output to see which pool ran "
           "out; `aimem check` lints the manifest against the model's memory plan."};
     }},
    {"aimem-kubernetes",
     [](const Ctx&) -> std::optional<AlertRule> {
       return AlertRule{
           "AimemContainerRestarting", "increase(kube_pod_container_status_restarts_total[30m]) >= 3", "0m", "warning",
           "Container {{ $labels.namespace }}/{{ $labels.pod }}/{{ $labels.container }} is restarting",
           "Container {{ $labels.container }} of pod {{ $labels.pod }} restarted {{ printf \"%.0f\" $value }} times "
           "in 30 minutes. A model server that restarts before it is ready is often killed for memory during load "
           "or by a probe that does not wait for the model.",
           "Run `aimem diagnose` on the container's logs and the node's kernel log; `aimem check` finds probes "
           "that pass before the model is loaded and limits below the load peak."};
     }},
};

// The fleet's recording rules: per container, per pod, per node, per GPU.
std::vector<RecordingRule> fleet_records(const Ctx& c) {
  const char* pods = "pool=\"cgroup\",container!=\"\"";
  return {
      {"namespace_pod_container:aimem_memory_headroom_ratio",
       fmt::format("1 - max by (node, namespace, pod, container) ({} / ({} > 0))", c.sel("aimem_memory_used_bytes", pods),
                   c.sel("aimem_memory_limit_bytes", pods))},
      {"namespace_pod:aimem_time_to_exhaustion_seconds:min",
       fmt::format("min by (node, namespace, pod) ({})", c.sel("aimem_time_to_exhaustion_seconds", "pool=\"cgroup\",pod!=\"\""))},
      {"namespace_pod_container:aimem_oom_kills:increase10m",
       fmt::format("sum by (node, namespace, pod, container) (increase({}[10m]))",
                   c.sel("aimem_oom_kills_total", "pool=\"cgroup\",pod!=\"\""))},
      {"node:aimem_memory_headroom_ratio",
       fmt::format("1 - max by (node) ({} / ({} > 0))", c.sel("aimem_memory_used_bytes", "pool=\"host_ram\""),
                   c.sel("aimem_memory_limit_bytes", "pool=\"host_ram\""))},
      {"node_gpu:aimem_gpu_memory_headroom_ratio",
       fmt::format("1 - max by (node, gpu) ({} / ({} > 0))", c.sel("aimem_gpu_memory_used_bytes"),
                   c.sel("aimem_gpu_memory_total_bytes"))},
      {"node:aimem_time_to_exhaustion_seconds:min",
       fmt::format("min by (node) ({})", c.sel("aimem_time_to_exhaustion_seconds", "pool=\"host_ram\""))},
      {"node_gpu:aimem_time_to_exhaustion_seconds:min",
       fmt::format("min by (node, gpu) ({})", c.sel("aimem_time_to_exhaustion_seconds", "pool=\"gpu\""))},
      // One pod's memory request per Deployment (kube-state-metrics: the
      // pod's ReplicaSet owner, that ReplicaSet's Deployment owner).
      {"namespace_deployment:aimem_pod_memory_request_bytes:max",
       "max by (namespace, deployment) (label_replace(max by (namespace, owner_name) (sum by (namespace, pod) "
       "(kube_pod_container_resource_requests{resource=\"memory\"}) * on (namespace, pod) group_left (owner_name) "
       "kube_pod_owner{owner_kind=\"ReplicaSet\"}), \"replicaset\", \"$1\", \"owner_name\", \"(.*)\") * on (namespace, "
       "replicaset) group_left (deployment) max by (namespace, replicaset, deployment) (label_replace("
       "kube_replicaset_owner{owner_kind=\"Deployment\"}, \"deployment\", \"$1\", \"owner_name\", \"(.*)\")))"},
      // The most memory any one node can still promise a new pod.
      {"aimem:node_memory_unrequested_bytes:max",
       "max(sum by (node) (kube_node_status_allocatable{resource=\"memory\"}) - sum by (node) "
       "(kube_pod_container_resource_requests{resource=\"memory\"}))"},
  };
}

constexpr const char* kPodName = "{{ $labels.namespace }}/{{ $labels.pod }}";

std::vector<AlertRule> fleet_alerts(const Ctx& c) {
  std::vector<AlertRule> out;
  if (c.p.warn_used_ratio < c.critical)
    out.push_back(AlertRule{
        "AimemPodMemoryHeadroomLow",
        fmt::format("namespace_pod_container:aimem_memory_headroom_ratio <= {}", num(1 - c.p.warn_used_ratio)), "5m", "warning",
        fmt::format("Container {}/{{{{ $labels.container }}}} has {{{{ $value | humanizePercentage }}}} of its memory limit left on "
                    "{{{{ $labels.node }}}}",
                    kPodName),
        fmt::format("The container has used more than {} of its memory limit for 5m (the policy keeps {} free).",
                    pct(c.p.warn_used_ratio), pct(c.p.headroom_pct / 100)),
        "Run `aimem diagnose` on {{ $labels.node }} and `aimem fit` to size the limit; `aimem check` keeps the manifest in "
        "line."});
  out.push_back(AlertRule{
      "AimemPodMemoryExhaustionSoon",
      fmt::format("namespace_pod:aimem_time_to_exhaustion_seconds:min < {}", num(c.p.time_to_exhaustion_s)), "2m", "warning",
      fmt::format("Pod {} reaches its memory limit in {{{{ $value | humanizeDuration }}}} on {{{{ $labels.node }}}}", kPodName),
      fmt::format("At its recent growth rate one of the pod's cgroups is full in {{{{ $value | humanizeDuration }}}} (warning "
                  "under {}): a leak, a growing cache or a queue of long prompts.",
                  c.tte()),
      "Run `aimem diagnose` on {{ $labels.node }} to see which process holds the memory and `aimem fit` to size the limit; "
      "then raise the limit or cut context, concurrency or batch size."});
  out.push_back(AlertRule{
      "AimemPodOOMKilled", "namespace_pod_container:aimem_oom_kills:increase10m > 0", "0m", "critical",
      fmt::format("OOM kill in {}/{{{{ $labels.container }}}} on {{{{ $labels.node }}}}", kPodName),
      "The kernel killed a process of the container for memory within the last 10 minutes ({{ printf \"%.0f\" $value }} "
      "counted); aimem's recording on the node holds the timeline before it.",
      "Run `aimem diagnose` on {{ $labels.node }} (it reads the kernel log and the recording) to see which pool ran out "
      "and why; `aimem check` then keeps the fix in the manifests."});
  out.push_back(AlertRule{
      "AimemRollingUpdateCannotFit",
      "namespace_deployment:aimem_pod_memory_request_bytes:max > scalar(aimem:node_memory_unrequested_bytes:max) and on "
      "(namespace, deployment) kube_deployment_spec_strategy_rollingupdate_max_surge > 0",
      "15m", "warning",
      "Deployment {{ $labels.namespace }}/{{ $labels.deployment }}: a second copy fits on no node",
      "A pod of this Deployment requests {{ $value | humanize1024 }}B of memory, more than any node has unrequested, and "
      "its rolling update surges a new pod beside the old ones: the next rollout hangs Pending.",
      "Set maxSurge: 0 (or strategy Recreate) for model servers that fill a node, or keep a node's worth of memory free; "
      "`aimem check` flags rolling-overlap in the manifest."});
  return out;
}

}  // namespace

Result<std::vector<RuleGroup>> build_rules(const Policy& policy, const RulesOptions& options) {
  Ctx c{policy, "", std::min(policy.critical_used_ratio, (100 - policy.headroom_pct) / 100)};
  for (const auto& j : options.jobs) {
    if (j.empty()) return make_error("--job: a job name is empty");
    if (std::any_of(j.begin(), j.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }))
      return make_error(fmt::format("--job '{}': a job name has no control characters", j));
  }
  if (options.jobs.size() == 1) {
    c.job = fmt::format(",job=\"{}\"", promql_quoted(options.jobs[0]));
  } else if (!options.jobs.empty()) {
    std::string alt;
    for (const auto& j : options.jobs) alt += (alt.empty() ? "" : "|") + re2_literal(j);
    c.job = fmt::format(",job=~\"{}\"", promql_quoted(alt));
  }
  std::vector<RuleGroup> groups;
  for (const auto& def : kRules) {
    auto rule = def.build(c);
    if (!rule) continue;
    if (groups.empty() || groups.back().name != def.group) groups.push_back({def.group, {}});
    groups.back().rules.push_back(std::move(*rule));
  }
  if (options.fleet) groups.push_back({"aimem-fleet", fleet_records(c), fleet_alerts(c)});
  return groups;
}

std::string render_rules(const std::vector<RuleGroup>& groups, const Policy& policy) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : groups) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << g.name;
    out << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : g.records) {
      out << YAML::BeginMap;
      out << YAML::Key << "record" << YAML::Value << r.record;
      out << YAML::Key << "expr" << YAML::Value << r.expr;
      out << YAML::EndMap;
    }
    for (const auto& r : g.rules) {
      out << YAML::BeginMap;
      out << YAML::Key << "alert" << YAML::Value << r.alert;
      out << YAML::Key << "expr" << YAML::Value << r.expr;
      out << YAML::Key << "for" << YAML::Value << r.for_;
      out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key << "severity" << YAML::Value
          << r.severity << YAML::EndMap;
      out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
      out << YAML::Key << "summary" << YAML::Value << r.summary;
      out << YAML::Key << "description" << YAML::Value << r.description;
      out << YAML::Key << "runbook" << YAML::Value << r.runbook;
      out << YAML::EndMap << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;

  double critical = std::min(policy.critical_used_ratio, (100 - policy.headroom_pct) / 100);
  std::string warn = policy.warn_used_ratio < critical ? pct(policy.warn_used_ratio) : "none (at or above critical)";
  std::string head = fmt::format(
      "{} from {}; regenerate it rather than edit it.\n"
      "# Thresholds: memory warning {}, critical {} (headroom {}), GPU memory {}, KV cache {},\n"
      "# time to exhaustion {}. Check it with `promtool check rules`; docs/rules.md describes each alert.\n",
      kRulesHeader, policy.file.empty() ? "the default policy" : policy.file, warn, pct(critical),
      pct(policy.headroom_pct / 100), pct(policy.gpu_warn_used_ratio), pct(policy.kv_warn_ratio),
      timeutil::format_duration(policy.time_to_exhaustion_s));
  return head + out.c_str() + "\n";
}

bool is_generated_rules(std::string_view text) { return text.substr(0, kRulesHeader.size()) == kRulesHeader; }

}  // namespace aimem::check
