// Kubernetes manifests: the pod template of each workload kind, its
// containers' resources, command and args, env, probes and preStop hook, the
// pod's grace period and node selection, and the controller's rolling-update
// surge. Defaults are Kubernetes' own (apps/v1): a Deployment rolls with
// maxSurge 25%, a DaemonSet with maxSurge 0, terminationGracePeriodSeconds 30.
// Beyond apps/v1: KServe's InferenceService and (Cluster)ServingRuntime, and
// the LeaderWorkerSet that multi-node vLLM and SGLang run on.
#include <fmt/format.h>

#include "check/readers.h"
#include "check/yaml_doc.h"
#include "core/units.h"

namespace aimem::check {
namespace {

// Where each kind keeps its pod spec (path of keys from the document root).
struct KindRow {
  const char* kind;
  std::vector<const char*> pod_spec;
};
const std::vector<KindRow>& kinds() {
  static const std::vector<KindRow> k = {
      {"Pod", {"spec"}},
      {"Deployment", {"spec", "template", "spec"}},
      {"StatefulSet", {"spec", "template", "spec"}},
      {"DaemonSet", {"spec", "template", "spec"}},
      {"ReplicaSet", {"spec", "template", "spec"}},
      {"Job", {"spec", "template", "spec"}},
      {"CronJob", {"spec", "jobTemplate", "spec", "template", "spec"}},
      // KServe: an InferenceService's predictor is a pod spec (containers, or the
      // one container `model:`); a (Cluster)ServingRuntime holds the containers
      // its InferenceServices run.
      {"InferenceService", {"spec", "predictor"}},
      {"ServingRuntime", {"spec"}},
      {"ClusterServingRuntime", {"spec"}},
  };
  return k;
}

// Kinds that hold no containers: skipped without a note.
constexpr const char* kNotWorkloads[] = {
    "Service", "ConfigMap", "Secret", "Ingress", "IngressClass", "ServiceAccount", "Role", "RoleBinding",
    "ClusterRole", "ClusterRoleBinding", "PersistentVolumeClaim", "PersistentVolume", "StorageClass",
    "HorizontalPodAutoscaler", "PodDisruptionBudget", "Namespace", "NetworkPolicy", "ServiceMonitor",
    "PodMonitor", "PrometheusRule", "CustomResourceDefinition", "Endpoints", "EndpointSlice", "LimitRange",
    "ResourceQuota", "PriorityClass", "RuntimeClass", "HTTPRoute", "Gateway", "VerticalPodAutoscaler"};

YAML::Node get(const YAML::Node& map, const char* key) { return child(map, key); }
YAML::Node path(const YAML::Node& root, const std::vector<const char*>& keys) { return child_path(root, keys); }

void add_args(const YAML::Node& seq, const std::string& file, std::vector<Arg>& out) {
  if (!is_seq(seq)) return;
  for (const auto& a : seq)
    if (is_scalar(a)) out.push_back({a.Scalar(), loc_of(a, file)});
}

std::optional<At<uint64_t>> quantity(const YAML::Node& n, const std::string& file, const std::string& field,
                                     ReadResult& out) {
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  Loc at = loc_of(n, file);
  if (!is_scalar(n)) {
    out.notes.push_back({at, fmt::format("{}: not a quantity; ignored", field)});
    return std::nullopt;
  }
  auto v = units::parse_k8s_quantity(n.Scalar());
  if (!v) {
    out.notes.push_back({at, fmt::format("{}: '{}' is not a Kubernetes quantity; ignored", field, n.Scalar())});
    return std::nullopt;
  }
  return At<uint64_t>{*v, at};
}

std::optional<Probe> probe(const YAML::Node& p, const std::string& file) {
  if (!is_map(p)) return std::nullopt;
  Probe r;
  r.at = loc_of(p, file);
  for (const char* k : {"httpGet", "tcpSocket", "exec", "grpc"})
    if (child(p, k).IsDefined()) r.kind = k;
  r.path = scalar(get(p, "httpGet"), "path");
  return r;
}

// Kubernetes expands $(NAME) in command and args from the container's env
// (value: entries; $$ escapes): --model=$(MODEL_ID) names the model the env sets.
void expand_env_refs(Container& k) {
  for (Arg& a : k.argv) {
    std::string out;
    const std::string& t = a.text;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '$' && i + 1 < t.size() && t[i + 1] == '$') {
        out += '$';
        ++i;
        continue;
      }
      if (t[i] == '$' && i + 1 < t.size() && t[i + 1] == '(') {
        const size_t end = t.find(')', i + 2);
        if (end != std::string::npos) {
          if (const Arg* v = k.env_var(t.substr(i + 2, end - i - 2))) {
            out += v->text;
            i = end;
            continue;
          }
        }
      }
      out += t[i];
    }
    a.text = std::move(out);
  }
}

Container read_container(const YAML::Node& c, const YAML::Node& pod, const std::string& file, ReadResult& out) {
  Container k;
  k.name = scalar(c, "name");
  k.at = loc_of(c, file);
  k.image = scalar(c, "image");
  add_args(get(c, "command"), file, k.argv);
  add_args(get(c, "args"), file, k.argv);
  if (const YAML::Node env = get(c, "env"); is_seq(env)) {
    for (const auto& e : env) {
      std::string name = scalar(e, "name");
      YAML::Node v = get(e, "value");
      if (!name.empty() && is_scalar(v)) k.env.push_back({name, Arg{v.Scalar(), loc_of(v, file)}});
    }
  }
  expand_env_refs(k);
  const YAML::Node res = get(c, "resources");
  k.mem_limit = quantity(get(get(res, "limits"), "memory"), file, "resources.limits.memory", out);
  k.mem_request = quantity(get(get(res, "requests"), "memory"), file, "resources.requests.memory", out);
  for (const char* gpu : {"nvidia.com/gpu", "amd.com/gpu"}) {
    YAML::Node g = get(get(res, "limits"), gpu);
    if (!g.IsDefined()) g.reset(get(get(res, "requests"), gpu));
    if (is_scalar(g)) {
      if (auto n = units::parse_k8s_quantity(g.Scalar())) k.gpus = At<int64_t>{int64_t(*n), loc_of(g, file)};
    }
  }
  for (const char* var : {"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"})
    if (const Arg* v = k.env_var(var); v && k.gpu_devices.empty()) k.gpu_devices = v->text;
  k.readiness = probe(get(c, "readinessProbe"), file);
  k.startup = probe(get(c, "startupProbe"), file);
  k.has_prestop = get(get(c, "lifecycle"), "preStop").IsDefined();
  // emptyDir volumes with medium Memory that this container mounts: tmpfs pages count against its limit.
  if (const YAML::Node mounts = get(c, "volumeMounts"); is_seq(mounts)) {
    const YAML::Node vols = get(pod, "volumes");
    for (const auto& m : mounts) {
      std::string name = scalar(m, "name");
      if (!is_seq(vols)) break;
      for (const auto& v : vols) {
        if (scalar(v, "name") != name) continue;
        const YAML::Node ed = get(v, "emptyDir");
        if (scalar(ed, "medium") != "Memory") continue;
        auto size = quantity(get(ed, "sizeLimit"), file, "emptyDir.sizeLimit", out);
        k.memory_volumes.push_back({size ? size->value : 0, scalar(m, "mountPath"), size ? size->at : loc_of(ed, file)});
      }
    }
  }
  return k;
}

void read_workload(const YAML::Node& doc, const KindRow& row, const std::string& file, int document,
                   ReadResult& out, const std::string& role = "") {
  Workload w;
  w.platform = Platform::kKubernetes;
  w.kind = row.kind;
  w.name = scalar(get(doc, "metadata"), "name") + role;
  w.at = loc_of(get(doc, "kind"), file);
  w.document = document;
  const YAML::Node pod = path(doc, row.pod_spec);
  if (!is_map(pod)) {
    out.notes.push_back({w.at, fmt::format("{} '{}' has no pod template at {}; skipped", w.kind, w.name,
                                           fmt::join(row.pod_spec, "."))});
    return;
  }
  if (const YAML::Node cs = get(pod, "containers"); is_seq(cs))
    for (const auto& c : cs) {
      if (is_map(c)) w.containers.push_back(read_container(c, pod, file, out));
    }
  if (w.kind == "InferenceService" && w.containers.empty())
    if (const YAML::Node m = get(pod, "model"); is_map(m)) {
      Container c = read_container(m, pod, file, out);
      if (c.name.empty()) c.name = "kserve-container";  // the name KServe gives it
      w.containers.push_back(std::move(c));
    }
  if (const YAML::Node g = get(pod, "terminationGracePeriodSeconds"); is_scalar(g)) {
    if (auto s = parse_duration_s(g.Scalar())) w.grace_s = At<double>{*s, loc_of(g, file)};
  }
  if (const YAML::Node ns = get(pod, "nodeSelector"); is_map(ns))
    for (const auto& kv : ns)
      if (is_scalar(kv.second)) w.node_selector.push_back(kv.second.Scalar());
  const YAML::Node terms =
      path(pod, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (is_seq(terms))
    for (const auto& t : terms)
      if (const YAML::Node exprs = get(t, "matchExpressions"); is_seq(exprs))
        for (const auto& e : exprs)
          if (const YAML::Node vals = get(e, "values"); is_seq(vals))
            for (const auto& v : vals)
              if (is_scalar(v)) w.node_selector.push_back(v.Scalar());
  // GPU nodes are often tainted by product (key nvidia.com/gpu.product or
  // similar): a toleration's value can name the GPU type as a selector does.
  if (const YAML::Node tol = get(pod, "tolerations"); is_seq(tol))
    for (const auto& t : tol)
      if (const YAML::Node v = get(t, "value"); is_scalar(v)) w.node_selector.push_back(v.Scalar());
  // Rolling updates that can run two copies at once.
  const YAML::Node spec = get(doc, "spec");
  if (w.kind == "Deployment") {
    const YAML::Node strategy = get(spec, "strategy");
    w.strategy_at = strategy.IsDefined() ? loc_of(strategy, file) : w.at;
    std::string type = scalar(strategy, "type");
    w.rolling = type.empty() || type == "RollingUpdate";
    const YAML::Node surge = get(get(strategy, "rollingUpdate"), "maxSurge");
    if (is_scalar(surge)) w.max_surge = At<std::string>{surge.Scalar(), loc_of(surge, file)};
    else if (w.rolling) w.max_surge = At<std::string>{"25%", w.strategy_at};
  } else if (w.kind == "DaemonSet") {
    const YAML::Node strategy = get(spec, "updateStrategy");
    w.strategy_at = strategy.IsDefined() ? loc_of(strategy, file) : w.at;
    std::string type = scalar(strategy, "type");
    w.rolling = type.empty() || type == "RollingUpdate";
    const YAML::Node surge = get(get(strategy, "rollingUpdate"), "maxSurge");
    if (is_scalar(surge)) w.max_surge = At<std::string>{surge.Scalar(), loc_of(surge, file)};
  } else if (w.kind == "InferenceService" || w.kind == "ServingRuntime" || w.kind == "ClusterServingRuntime") {
    // Raw deployments roll as a Deployment (maxSurge 25%); serverless ones start
    // the new revision beside the old: either way two copies overlap. A
    // runtime's containers run in the InferenceService pods that use it.
    w.strategy_at = w.at;
    w.rolling = true;
    w.max_surge = At<std::string>{"25%", w.at};
  } else if (w.kind == "LeaderWorkerSet") {
    w.serves_traffic = role != " (worker)";
    const YAML::Node strategy = get(spec, "rolloutStrategy");
    w.strategy_at = strategy.IsDefined() ? loc_of(strategy, file) : w.at;
    const YAML::Node surge = get(get(strategy, "rollingUpdateConfiguration"), "maxSurge");  // default 0
    w.rolling = true;
    if (is_scalar(surge)) w.max_surge = At<std::string>{surge.Scalar(), loc_of(surge, file)};
  }
  out.workloads.push_back(std::move(w));
}

}  // namespace

void read_kubernetes(const YAML::Node& doc, const std::string& file, int document, ReadResult& out) {
  if (!doc.IsDefined() || doc.IsNull()) return;  // an empty document between `---` lines
  Loc at = loc_of(doc, file);
  if (!is_map(doc)) {
    out.notes.push_back({at, fmt::format("YAML document {} is not a mapping; skipped", document + 1)});
    return;
  }
  const std::string kind = scalar(doc, "kind");
  if (kind.empty()) {
    out.notes.push_back({at, fmt::format("YAML document {} has no kind: (not a Kubernetes object, a Compose file "
                                         "or a list); skipped",
                                         document + 1)});
    return;
  }
  if (kind == "List" || (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0)) {
    if (const YAML::Node items = get(doc, "items"); is_seq(items))
      for (const auto& item : items) read_kubernetes(item, file, document, out);
    return;
  }
  // LeaderWorkerSet (multi-node vLLM / SGLang): two pod templates, read as two
  // workloads; without a leaderTemplate the leader runs the worker's.
  if (kind == "LeaderWorkerSet") {
    const KindRow leader{"LeaderWorkerSet", {"spec", "leaderWorkerTemplate", "leaderTemplate", "spec"}};
    if (is_map(path(doc, leader.pod_spec))) read_workload(doc, leader, file, document, out, " (leader)");
    const KindRow worker{"LeaderWorkerSet", {"spec", "leaderWorkerTemplate", "workerTemplate", "spec"}};
    return read_workload(doc, worker, file, document, out, " (worker)");
  }
  for (const KindRow& row : kinds())
    if (row.kind == kind) return read_workload(doc, row, file, document, out);
  for (const char* k : kNotWorkloads)
    if (kind == k) return;
  out.notes.push_back({loc_of(get(doc, "kind"), file),
                       fmt::format("kind {} is not a workload aimem check reads (Pod, Deployment, StatefulSet, "
                                   "DaemonSet, ReplicaSet, Job, CronJob, InferenceService, ServingRuntime, "
                                   "ClusterServingRuntime, LeaderWorkerSet); skipped",
                                   kind)});
}

}  // namespace aimem::check
