// Kubernetes objects and events as kubectl prints them (kubernetes.io: "Node-pressure
// Eviction", "Pod Lifecycle"; the kubelet's pkg/kubelet/eviction). Read line by line,
// so cut excerpts count:
//
// kubectl describe pod:            kubectl get pod -o yaml / -o json:
//   Last State:  Terminated          lastState: {terminated: {reason: OOMKilled, exitCode: 137}}
//     Reason:    OOMKilled           "reason": "OOMKilled",  "exitCode": 137,  "restartCount": 5
//     Started:   Thu, 20 Nov 2025 03:35:40 +0000    Finished: ...   (how long it ran: "container ran for")
//     Exit Code: 137                 resources: {limits: {memory: 16Gi}, requests: {memory: 8Gi}}
//   Restart Count: 672               reason: Evicted / phase: Failed
//   Limits:                          message: 'The node was low on resource: memory. Container node was
//     memory:  1Gi                     using 35505620Ki, which exceeds its request of 12Gi. '
//   Requests:                        (newer kubelets: "Container app was using 1Gi, request is 512Mi,
//     memory:  512Mi                  has larger consumption of memory.")
//   State: Waiting / Reason: CrashLoopBackOff
// kubectl get pods:     NAME  READY  STATUS  RESTARTS  AGE   ->  x-1  0/1  OOMKilled  5 (2m ago)  26h
//                       (also -A with NAMESPACE first, -o wide with IP NODE ... after, and the
//                       init-container forms Init:OOMKilled / Init:CrashLoopBackOff)
// 2014-2016 kubelets:   "reason": "OOM Killed"  /  Reason:  OOM Killed   (the reason before "OOMKilled")
// kubectl get events:   Warning  Evicted  pod/x  The node was low on resource: memory. Container ...
//                       Warning  Evicted  pod/x  The node had condition: [MemoryPressure].
//                       Warning  SystemOOM  node/n  System OOM encountered, victim process: python, pid: 4242
//                       Warning  CgroupOOM  pod/x   Cgroup OOM encountered, victim process: stress, pid: 388104
//                                (kubelet 1.28+: the container's own cgroup killed; k8s_oomkilled)
// kubelet log:          eviction_manager.go:346] eviction manager: must evict pod(s) to reclaim memory
//                       ... eviction manager: eviction thresholds have been met, but no pods are active to evict
//                       (after "must evict": no eviction; the memory is held outside the pods, host_ram / other_process)
//                       eviction_manager.go:157] eviction manager: pods web-0_ns(uid) evicted, waiting for ...
//                       (k8s_evicted; the ranked list and the threshold lines are context)
//                       manager.go:1126] Created an OOM event in container "/" at 2017-10-12 08:19:43 +0000 UTC
//                       (cAdvisor in the kubelet: "/" is the whole node, a system OOM like SystemOOM;
//                       a /kubepods/... path is a container's own limit)
//                       Warning  OOMKilling  node/n  Memory cgroup out of memory: Killed process ... (NPD; the
//                                kernel recognizer reads the victim line, this file says it is Kubernetes)
//                       Warning  Unhealthy  pod/x  Liveness probe failed: ...  /  Normal  Killing  pod/x  Stopping container x
//                       Container x failed liveness probe, will be restarted  /  Back-off restarting failed container
// kubectl oomd:         POD  CONTAINER  REQUEST  LIMIT  TERMINATION TIME  ->  x-1  app  1G  8G  2022-11-07 13:03:49 +0000 GMT
// kube-state-metrics:   kube_pod_container_status_last_terminated_reason{pod="p",container="c",reason="OOMKilled"} 1
// OpenShift builds:     research-1   Source   Git@7c1e0d2   Failed (OutOfMemoryKilled)   4 minutes ago
//                       Status:  Failed (The build pod was killed due to an out of memory condition.)
// Go's print of a map:  map[limits:map[cpu:1 memory:512Mi] requests:map[cpu:60m memory:307Mi]]
//                       (`-o jsonpath='{.spec.containers[0].resources}'` before kubectl 1.20 printed JSON)
// jsonpath output:      OOMKilled                   (a line of its own; "OOMKilled 137" with the exit code)
//                       2Gi    after -o jsonpath='{.spec.containers[0].resources.limits.memory}' (or requests)
//
// Facts: k8s_oomkilled (pod / container where shown), k8s_evicted (usage and
// requested from the message; an eviction for another resource is a
// not_memory_failure), exit_status, restarts (count), memory_limit
// ("resources.limits.memory") and memory_request, not_memory_failure "a failed
// liveness probe", stop_or_restart for kubelet kills, and one platform
// "kubernetes" fact per input. A "Limits:" / "limits:" header owns the memory
// line that follows it within a few lines at a deeper indent (Compose files use
// the same words under "deploy:"; those belong to the docker recognizer).
// SystemOOM is the kubelet relaying a global (host) kernel OOM kill: it becomes
// a process_killed fact with layer host_ram, so that a real kernel report, an
// OOMKilled reason or an eviction in the same evidence decides before it.
#include <algorithm>
#include <vector>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"OOMKilled"},
    {"OOM Killed"},
    {"OutOfMemoryKilled"},
    {"build pod was killed due to an out of memory condition"},
    {"limits:map[", kContext},
    {"Evicted"},
    {"low on resource: ", kCompanion},
    // The kubelet's evictions for a pod's or container's own disk limit: "Pod ephemeral local storage usage
    // exceeds the total limit of containers 1Gi.", "Container x exceeded its local ephemeral storage limit".
    {"ephemeral local storage usage exceeds", kCompanion},
    {"exceeded its local ephemeral storage limit", kCompanion},
    {"its request of", kContext},  // also "e\nxceeds its request of" cut by a terminal
    {", request is ", kContext},
    {"had condition: [", kContext},
    {"EvictionThresholdMet"},
    {"TaintManagerEviction"},
    {"System OOM encountered"},
    {"Cgroup OOM encountered"},
    {"Created an OOM event in container"},
    {"must evict pod(s) to reclaim "},  // memory, or ephemeral-storage / nodefs / imagefs / pids (not memory)
    {"eviction manager: pods "},
    {"but no pods are active to evict", kCompanion},
    {"OOMKilling"},
    {"CrashLoopBackOff"},
    {"Exit Code:"},
    {"exitCode"},
    {"Restart Count:", kContext},
    {"restartCount", kContext},
    {"^[ \t]*\\{?\"?(Limits|Requests|limits|requests)\"?\\s*:", kRegex | kContext},
    {"^[ \t]*\"?memory\"?[ \t]*:[ \t]*\"?[0-9]", kRegex | kContext},
    {"^[ \t]*deploy:\\s*$", kRegex | kContext},
    {"--limits=", kContext},
    {"\"(limits|requests)\": ?\\{[^}]*\"memory\"", kRegex | kContext},  // a spec's JSON on one line
    {"--requests=", kContext},
    {"iveness probe", kCaseless},  // 2015 kubelets: "Liveness Probe Failed"
    {"Startup probe failed"},
    {"(cordoned and drained|Evicting pod |^[ \t]*evicting pod )", kRegex | kContext},  // a drain (kubectl drain, a termination handler)
    {"Killing"},
    {"Stopping container", kContext},
    {"Back-off restarting failed container", kContext},
    {"TerminationByKubelet", kContext},
    {"DisruptionTarget", kContext},
    {"ContainerStatusUnknown", kContext},
    {"kube_pod_container_status_", kContext},
    // The CLI run on the cluster: kubectl, or OpenShift's oc with the same verbs.
    {"(^|\\$ )(kubectl|oc) (get|describe|logs|adm top|debug|top) ", kRegex | kContext},
    {"^Name:\\s+\\S", kRegex | kContext},
    // The terminated container's Started and Finished under its reason (describe, and YAML's startedAt/finishedAt).
    {"^[ \t]+(Started|Finished|startedAt|finishedAt):\\s", kRegex | kContext},
    {"^Namespace:\\s", kRegex | kContext},
    {"NAME +READY +STATUS +RESTARTS", kRegex | kContext},
    // kubectl-oomd's header and its rows (each ends in Go's time.Time: "2022-11-07 13:03:49 +0000 GMT").
    {"TERMINATION TIME", kContext},
    // Go's time.Time ends each row in its zone's offset and name ("+0000 UTC", "+0100 CET"): one
    // literal per offset in use, with the blanks around it. A regex for every timestamp made the
    // 1 GiB bench 6-9% slower; literals cost nothing measurable.
    {" +0000 ", kContext},
    {" +0100 ", kContext},
    {" +0200 ", kContext},
    {" +0300 ", kContext},
    {" +0330 ", kContext},
    {" +0400 ", kContext},
    {" +0430 ", kContext},
    {" +0500 ", kContext},
    {" +0530 ", kContext},
    {" +0545 ", kContext},
    {" +0600 ", kContext},
    {" +0630 ", kContext},
    {" +0700 ", kContext},
    {" +0800 ", kContext},
    {" +0900 ", kContext},
    {" +0930 ", kContext},
    {" +1000 ", kContext},
    {" +1030 ", kContext},
    {" +1100 ", kContext},
    {" +1200 ", kContext},
    {" +1300 ", kContext},
    {" +1400 ", kContext},
    {" -0100 ", kContext},
    {" -0200 ", kContext},
    {" -0300 ", kContext},
    {" -0330 ", kContext},
    {" -0400 ", kContext},
    {" -0500 ", kContext},
    {" -0600 ", kContext},
    {" -0700 ", kContext},
    {" -0800 ", kContext},
    {" -0900 ", kContext},
    {" -1000 ", kContext},
    {" -1100 ", kContext},
    {" -1200 ", kContext},
    {"kind\"?:\\s*\"?(Pod|PodList|Event|EventList)\\b", kRegex | kContext},
    {"node-problem-detector", kContext},
    // `kubectl get pod -o jsonpath='{...resources.limits.memory}'` and its output line ("2Gi"),
    // or a query of several fields, any of them read ('{...restartCount} {...terminated.reason}').
    {"jsonpath=?['\"]?\\{.*(limits\\.memory|requests\\.memory|terminated\\.reason|restartCount|exitCode)\\}", kRegex | kContext},
    {"^[ \t]*[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?\\s*$", kRegex | kContext},
};

std::string_view unquote(std::string_view v) {
  v = text::trim(v);
  while (!v.empty() && (v.back() == ',' || v.back() == '}' || v.back() == ']')) v = text::trim(v.substr(0, v.size() - 1));
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return v;
}

// A quantity in a message: "35505620Ki," "12Gi." "0."
std::optional<uint64_t> message_quantity(std::string_view s) {
  std::string_view q = text::take_until(platform::skip(s), " ,;'\"");
  while (!q.empty() && q.back() == '.') q.remove_suffix(1);
  return units::parse_k8s_quantity(q);
}

// "0/1", "2/2": the READY column.
bool ready_column(std::string_view t) {
  size_t slash = t.find('/');
  return slash != std::string_view::npos && slash > 0 && slash + 1 < t.size() &&
         t.find_first_not_of("0123456789/") == std::string_view::npos;
}

std::vector<std::string_view> words(std::string_view s, size_t max = 24) { return platform::words(s, max); }

// A part of a kubectl jsonpath template: a field or a literal between fields.
struct JsonpathPart {
  bool field = false;
  std::string text;
};

// The value of `key="..."` in a Prometheus label set.
std::string label(std::string_view s, std::string_view key) {
  size_t p = 0;
  while ((p = s.find(key, p)) != std::string_view::npos) {
    if (p > 0 && s[p - 1] != '{' && s[p - 1] != ',' && s[p - 1] != ' ') {
      ++p;
      continue;
    }
    std::string_view rest = s.substr(p + key.size());
    if (!text::starts_with(rest, "=\"")) {
      ++p;
      continue;
    }
    return std::string(text::take_until(rest.substr(2), "\"").substr(0, 253));
  }
  return {};
}

constexpr uint64_t kTerminatedLines = 8;  // describe prints Exit Code, Started, Finished under the reason

class Kubernetes final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_ && line.number > pending_line_ + 40) flush(out);
    if (text::contains(s, "kube_pod_container_status_")) return metrics(line, out);
    if (oomd_table(line, out)) return;
    if (jsonpath_quantity(line, out)) return;
    if (section(line, out)) return;
    if (text::contains(s, "System OOM encountered")) return kubelet_oom(line, true, out);
    if (text::contains(s, "Cgroup OOM encountered")) return kubelet_oom(line, false, out);
    if (auto v = text::after(s, "Created an OOM event in container \"")) return cadvisor_oom(line, *v, out);
    if (text::contains(s, "TaintManagerEviction")) return taint_eviction(line, out);
    if (text::contains(s, "eviction manager: ") && eviction_manager(line, out)) return;
    if (text::contains(s, "EvictionThresholdMet") && text::contains(s, "reclaim memory") && threshold_met(line, out)) return;
    if (text::icontains(s, "iveness probe") || text::contains(s, "Startup probe failed")) {
      if (probe(line, out)) return;
    }
    if (text::contains(s, "Evicted") || text::contains(s, "low on resource: ") || text::contains(s, "had condition: [") ||
        text::contains(s, "its request of") || text::contains(s, ", request is ") || ephemeral_limit(s)) {
      if (eviction(line, out)) return;
    }
    if (size_t p = s.find("OOMKilled"); p != std::string_view::npos && !text::contains(s, "OutOfMemoryKilled"))
      return oomkilled(line, p, out);
    if (text::contains(s, "OutOfMemoryKilled") || text::contains(s, "build pod was killed due to an out of memory condition"))
      return openshift_build(line, out);
    if (text::contains(s, "limits:map[") || text::contains(s, "requests:map[")) return go_map_resources(line, out);
    if (size_t p = s.find("OOM Killed"); p != std::string_view::npos && old_reason(line, p, out)) return;
    if (text::contains(s, "CrashLoopBackOff")) return crashloop(line, out);
    if (text::contains(s, "Back-off restarting failed container")) return restarts(line, std::nullopt, "Back-off", out);
    if (reason_line_ && line.number <= reason_line_ + kTerminatedLines && terminated_times(line, out)) return;
    if (auto v = key_value(s, "Exit Code:", "exitCode")) return exit_code(line, *v, out);
    if (auto v = key_value(s, "Restart Count:", "restartCount")) {
      if (auto n = text::parse_u64(*v)) restarts(line, *n, "restartCount", out);
      return;
    }
    if ((text::contains(s, "Killing") || text::contains(s, "Stopping container")) && killing(line, out)) return;
    if (drained(line, out)) return;
    if (text::starts_with(s, "Name:")) {
      pod_ = std::string(text::first_word(s.substr(5)).substr(0, 253));
      pod_line_ = line.number;
      return;
    }
    // Structure alone (headers, kinds, NPD events, kubelet conditions): the input is Kubernetes.
    for (std::string_view cli : {"kubectl ", "oc "}) {
      std::string_view t = text::trim_left(s);
      if (text::starts_with(t, "$ ")) t = t.substr(2);
      if (text::starts_with(t, cli)) return platform(line, out);
    }
    for (std::string_view mark : {"Namespace:", "READY", "kind", "OOMKilling", "node-problem-detector", "EvictionThresholdMet",
                                  "TerminationByKubelet", "DisruptionTarget", "ContainerStatusUnknown"}) {
      if (text::contains(s, mark)) return platform(line, out);
    }
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  // kubectl-oomd (the krew plugin "oomd", jdockerty/kubectl-oomd) lists the
  // containers last terminated OOMKilled, one row each under its header, the
  // time as Go prints a time.Time:
  //   POD                        CONTAINER        REQUEST     LIMIT     TERMINATION TIME
  //   my-app-5bcbcdf97-722jp     infoapp          1G          8G        2022-11-07 13:03:49 +0000 GMT
  // (before v0.0.6 without REQUEST and LIMIT). Every row is a k8s_oomkilled
  // with its pod, container, limit and time.
  static constexpr uint64_t kOomdRowGap = 2;
  uint64_t oomd_line_ = 0;
  bool oomd_limits_ = false;

  bool oomd_table(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    auto w = words(s);
    if (w.size() >= 4 && w[0] == "POD" && w[1] == "CONTAINER" && text::contains(s, "TERMINATION TIME")) {
      oomd_line_ = line.number;
      oomd_limits_ = w.size() >= 6 && w[2] == "REQUEST" && w[3] == "LIMIT";
      platform(line, out);
      return true;
    }
    const size_t cells = oomd_limits_ ? 8 : 6;  // pod, container, [request, limit,] date, clock, offset, zone
    if (!oomd_line_ || line.number > oomd_line_ + kOomdRowGap || w.size() != cells) return false;
    auto when = timeutil::parse_datetime(std::string(w[cells - 4]) + "T" + std::string(w[cells - 3]) + std::string(w[cells - 2]));
    if (!when) return false;
    oomd_line_ = line.number;
    Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
    f.layer = Layer::k8s_pod_limit;
    f.strength = 0.9f;
    f.detail = "OOMKilled (kubectl oomd)";
    f.pod = std::string(w[0].substr(0, 253));
    f.container = std::string(w[1].substr(0, 253));
    if (oomd_limits_) f.limit = units::parse_k8s_quantity(w[3]);
    f.where.unix_us = *when;
    out.add(std::move(f));
    return true;
  }

  bool platform_sent_ = false;
  // Limits / requests section being read.
  enum class Section { none, limits, requests } section_ = Section::none;
  uint64_t section_line_ = 0, deploy_line_ = 0;
  size_t section_indent_ = 0;
  // A jsonpath query for a memory limit or request, waiting for its output.
  std::vector<std::string> jsonpath_fields_;
  std::vector<JsonpathPart> jsonpath_parts_;  // the template, when it has labels
  size_t jsonpath_next_ = 0;  // the field (the part, with labels) the output's next word is the value of
  uint64_t jsonpath_line_ = 0;
  // Pod named by a describe header.
  std::string pod_;
  uint64_t pod_line_ = 0;
  // The last OOMKilled reason of a describe or YAML status, and the
  // Started / Finished of that terminated state read after it.
  uint64_t reason_line_ = 0;
  std::optional<int64_t> started_us_;
  bool ran_said_ = false;
  // An eviction whose reason and message are on different lines (YAML, describe).
  bool taint_sent_ = false;
  std::optional<Fact> pending_;
  uint64_t pending_line_ = 0;
  std::string pending_resource_;
  uint64_t using_line_ = 0;  // a message line that ended with "was using": the figure follows
  uint64_t last_oom_line_ = 0, last_probe_line_ = 0;
  bool no_pods_said_ = false;

  void platform(const Line& line, FactSink& out) {
    if (platform_sent_) return;
    platform_sent_ = true;
    Fact f = make_fact(line, FactKind::platform, Family::kubernetes);
    f.detail = "kubernetes";
    out.add(std::move(f));
  }

  std::string pod_here(const Line& line) const { return pod_line_ && line.number <= pod_line_ + 400 ? pod_ : std::string(); }

  // "Exit Code:    137", "exitCode: 137", "\"exitCode\": 137," -> "137"
  static std::optional<std::string_view> key_value(std::string_view s, std::string_view describe_key, std::string_view yaml_key) {
    std::string_view t = text::trim_left(s);
    if (text::starts_with(t, describe_key)) return platform::skip(t.substr(describe_key.size()));
    if (!t.empty() && t[0] == '"') t.remove_prefix(1);
    if (!text::starts_with(t, yaml_key)) return std::nullopt;
    t = t.substr(yaml_key.size());
    if (!t.empty() && t[0] == '"') t.remove_prefix(1);
    if (t.empty() || t[0] != ':') return std::nullopt;
    return platform::skip(t.substr(1), " \t\"");
  }

  // Limits: / Requests: headers and the memory line under them.
  bool section(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    if (t == "deploy:") {
      deploy_line_ = line.number;
      return true;
    }
    std::string_view key = t;
    // `-o jsonpath='{.spec.containers[0].resources}'` prints the object on one line: {"limits":{...},"requests":{...}}
    if (!key.empty() && key[0] == '{') key.remove_prefix(1);
    if (!key.empty() && key[0] == '"') key.remove_prefix(1);
    bool limits = text::starts_with(key, "Limits") || text::starts_with(key, "limits");
    bool requests = text::starts_with(key, "Requests") || text::starts_with(key, "requests");
    if ((limits || requests) && key.size() > 6) {
      std::string_view after = key.substr(limits ? 6 : 8);
      if (!after.empty() && after[0] == '"') after.remove_prefix(1);
      if (!after.empty() && after[0] == ':') {
        if (deploy_line_ && line.number <= deploy_line_ + 6) {  // a Compose file
          section_ = Section::none;
          return true;
        }
        section_ = limits ? Section::limits : Section::requests;
        section_line_ = line.number;
        section_indent_ = platform::indent_of(s);
        // Inline: "limits: {cpu: 1, memory: 1Gi}" / "\"limits\":{\"memory\":\"1Gi\"}"
        if (auto m = text::after(after, "memory")) quantity(line, *m, out);
        return true;
      }
    }
    if (size_t p = s.find("--limits="); p != std::string_view::npos) {
      if (auto m = text::after(s.substr(p), "memory=")) section_ = Section::limits, quantity(line, *m, out);
      return true;
    }
    // A spec printed as JSON on one line (kubectl get -o jsonpath='{.spec...}', a Task's
    // steps): {"image":"alpine","resources":{"limits":{"memory":"32Mi"}},...}.
    for (auto [name, kind] : {std::pair{"\"limits\":", Section::limits}, std::pair{"\"requests\":", Section::requests}}) {
      size_t p = s.find(name);
      if (p == std::string_view::npos) continue;
      std::string_view obj = text::take_until(s.substr(p + std::string_view(name).size()), "}");
      if (auto m = text::after(obj, "\"memory\":")) {
        Section saved = section_;
        section_ = kind;
        quantity(line, *m, out);
        section_ = saved;
      }
    }
    if (size_t p = s.find("--requests="); p != std::string_view::npos) {
      if (auto m = text::after(s.substr(p), "memory=")) section_ = Section::requests, quantity(line, *m, out);
      return true;
    }
    std::string_view m = key;
    // The key "memory" ("memory: 1Gi", "memory\": \"1Gi\""), not a name that starts
    // with it ("memory-demo-2   0/1   OOMKilled", the Kubernetes docs' pod).
    if (!text::starts_with(m, "memory")) return false;
    if (m.size() > 6 && m[6] != ':' && m[6] != '"' && m[6] != ' ' && m[6] != '\t' && m[6] != '=') return false;
    if (section_ == Section::none || line.number > section_line_ + 4 || platform::indent_of(s) <= section_indent_) return true;
    quantity(line, m.substr(6), out);
    return true;
  }

  // A jsonpath query for the memory limit or request, and on the next line or
  // two its bare value ("2Gi", "2147483648").
  // `-o jsonpath='...'` names the fields its output line prints, in order:
  // one field ("{...limits.memory}" then "2Gi"), or several joined by
  // literals ("{...limits.memory}{" "}{...restartCount}{" "}{...terminated.reason}{" "}{...exitCode}"
  // then "8Gi 5 OOMKilled 137"): each word is read as its field says.
  bool jsonpath_quantity(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (size_t j = s.find("jsonpath"); j != std::string_view::npos) {
      std::vector<std::string> fields;
      std::vector<JsonpathPart> parts = jsonpath_template(s.substr(j));
      for (const JsonpathPart& p : parts)
        if (p.field) fields.push_back(p.text);
      auto known = [](const std::string& f) {
        return text::ends_with(f, "limits.memory") || text::ends_with(f, "requests.memory") || text::ends_with(f, "terminated.reason") ||
               text::ends_with(f, "restartCount") || text::ends_with(f, "exitCode");
      };
      if (std::none_of(fields.begin(), fields.end(), known)) return false;
      jsonpath_fields_ = std::move(fields);
      // Labels between the fields ({"  restarts="}, {"/"}): the output is read
      // against them; without any, word by word.
      const bool labelled = std::any_of(parts.begin(), parts.end(),
                                        [](const JsonpathPart& p) { return !p.field && p.text.find_first_not_of(" \t\n") != std::string::npos; });
      jsonpath_parts_ = labelled ? std::move(parts) : std::vector<JsonpathPart>{};
      jsonpath_next_ = 0;
      jsonpath_line_ = line.number;
      return true;
    }
    if (!jsonpath_parts_.empty()) return jsonpath_labelled(line, out);
    // The output: the fields' values in order, on one line or spread over
    // several where the query printed {"\n"} between them.
    if (jsonpath_next_ >= jsonpath_fields_.size() || line.number > jsonpath_line_ + 2) return false;
    auto w = words(s);
    if (w.empty() || w.size() > jsonpath_fields_.size() - jsonpath_next_) return false;
    // An object's JSON ('{.spec.containers[0].resources}' prints
    // {"limits":{"memory":"2Gi"},...}) is one field's value, which the
    // readers of JSON read.
    if (w.size() == 1 && (w[0][0] == '{' || w[0][0] == '[')) {
      ++jsonpath_next_;
      jsonpath_line_ = line.number;
      return false;
    }
    for (std::string_view v : w) jsonpath_value(line, jsonpath_fields_[jsonpath_next_++], v, out);
    jsonpath_line_ = line.number;
    return true;
  }

  // A jsonpath template's fields ({.status.restartCount}) and literals
  // ({"  restarts="}, {"\n"}, with kubectl's escapes); {range ...} and {end}
  // are left out.
  static std::vector<JsonpathPart> jsonpath_template(std::string_view q) {
    std::vector<JsonpathPart> parts;
    while (parts.size() < 32) {
      size_t open = q.find('{');
      if (open == std::string_view::npos || open + 1 >= q.size()) break;
      if (q[open + 1] == '"') {
        std::string lit;
        size_t i = open + 2;
        for (; i < q.size() && q[i] != '"'; ++i) {
          if (q[i] == '\\' && i + 1 < q.size()) {
            ++i;
            lit += q[i] == 'n' ? '\n' : q[i] == 't' ? '\t' : q[i];
          } else {
            lit += q[i];
          }
        }
        parts.push_back({false, lit});
        q = q.substr(std::min(q.size(), i + 1));
        continue;
      }
      size_t close = q.find('}', open);
      if (close == std::string_view::npos) break;
      if (q[open + 1] == '.') parts.push_back({true, std::string(q.substr(open + 2, close - open - 2))});
      q = q.substr(close + 1);
    }
    return parts;
  }

  // One output line against the template: each field's value runs to the
  // next label; a "\n" label ends the line. A line that does not fit the
  // labels ends the reading; the template starts again after its last part
  // (a {range} prints it once per item).
  bool jsonpath_labelled(const Line& line, FactSink& out) {
    if (line.number > jsonpath_line_ + 2) {
      jsonpath_parts_.clear();
      return false;
    }
    std::string_view s = line.text;
    size_t pos = 0;
    bool any = false;
    const size_t n = jsonpath_parts_.size();
    for (size_t steps = 0; steps < n; ++steps) {
      const JsonpathPart& p = jsonpath_parts_[jsonpath_next_ % n];
      ++jsonpath_next_;
      if (!p.field) {
        if (p.text == "\n") break;
        std::string_view lit = p.text;
        if (text::starts_with(s.substr(pos), lit)) pos += lit.size();
        else if (text::starts_with(s.substr(pos), text::trim(lit))) pos += text::trim(lit).size();
        else return any;
        continue;
      }
      // The value runs to the next label (or to the line's end).
      const JsonpathPart& next = jsonpath_parts_[jsonpath_next_ % n];
      size_t end = s.size();
      if (!next.field && next.text != "\n" && !text::trim(next.text).empty()) {
        size_t at = s.find(text::trim(next.text), pos);
        if (at == std::string_view::npos) return any;
        end = at;
      } else if (next.field) {
        end = std::min(s.size(), s.find(' ', pos));
      }
      jsonpath_value(line, p.text, text::trim(s.substr(pos, end - pos)), out);
      any = true;
      pos = end;
    }
    jsonpath_line_ = line.number;
    return any;
  }

  void jsonpath_value(const Line& line, const std::string& field, std::string_view v, FactSink& out) {
    if (text::ends_with(field, "limits.memory") || text::ends_with(field, "requests.memory")) {
      if (v.empty() || !platform::is_digit(v[0])) return;
      section_ = text::ends_with(field, "limits.memory") ? Section::limits : Section::requests;
      quantity(line, v, out);
    } else if (text::ends_with(field, "terminated.reason") && v == "OOMKilled") {
      reason_line_ = line.number, started_us_.reset();
      Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
      f.layer = Layer::k8s_pod_limit;
      f.strength = 0.9f;
      f.detail = "OOMKilled";
      f.pod = pod_here(line);
      platform(line, out);
      last_oom_line_ = line.number;
      out.add(std::move(f));
    } else if (text::ends_with(field, "restartCount")) {
      if (auto n = text::parse_u64(v)) restarts(line, *n, "restartCount", out);
    } else if (text::ends_with(field, "exitCode")) {
      exit_code(line, v, out);
    }
  }

  // `"?:? <quantity>` after the word memory.
  void quantity(const Line& line, std::string_view v, FactSink& out) {
    v = platform::skip(v, " \t\"':=");
    auto q = units::parse_k8s_quantity(text::take_until(v, " ,}\"'"));
    if (!q || *q == 0 || section_ == Section::none) return;
    bool limit = section_ == Section::limits;
    Fact f = make_fact(line, limit ? FactKind::memory_limit : FactKind::memory_request, Family::kubernetes);
    if (limit) f.limit = q;
    else f.requested = q;
    f.detail = limit ? "resources.limits.memory" : "resources.requests.memory";
    f.pod = pod_here(line);
    platform(line, out);
    out.add(std::move(f));
    section_ = Section::none;
  }

  // The taint manager's deletion of a node's pods ("Normal  TaintManagerEviction
  // pod/x  Marking for deletion Pod default/x"): a NoExecute taint, put on a
  // node that stopped reporting (NotReady, unreachable), not the kubelet
  // reclaiming memory. One fact for the input.
  void taint_eviction(const Line& line, FactSink& out) {
    if (taint_sent_ || guards::is_advice_line(line.text)) return;
    taint_sent_ = true;
    Fact f = look_alike(line, Family::kubernetes, 0.75f, "a taint-based eviction (the node went NotReady or unreachable), not memory pressure");
    f.pod = pod_here(line);
    platform(line, out);
    out.add(std::move(f));
  }

  void flush(FactSink& out) {
    if (!pending_) return;
    if (!pending_resource_.empty() && pending_resource_ != "memory") {
      // Evicted for disk, PIDs or another resource: not a memory failure.
      Fact f = std::move(*pending_);
      f.kind = FactKind::not_memory_failure;
      f.layer = Layer::not_memory;
      f.strength = 0.7f;
      f.detail = "an eviction for " + pending_resource_ + " pressure";
      out.add(std::move(f));
    } else {
      out.add(std::move(*pending_));
    }
    pending_.reset();
    pending_resource_.clear();
  }

  // The kubelet's message for an eviction over a pod's own disk limit.
  static bool ephemeral_limit(std::string_view s) {
    return text::contains(s, "ephemeral local storage usage exceeds") || text::contains(s, "exceeded its local ephemeral storage limit");
  }

  // Eviction reason, message and its continuation lines.
  bool eviction(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return false;
    std::string resource;
    if (auto v = text::after(s, "low on resource: ")) {
      resource = std::string(text::take_until(*v, ". ,'\"").substr(0, 40));
    } else if (auto c = text::after(s, "had condition: [")) {
      std::string_view cond = text::take_until(*c, "]");
      resource = text::contains(cond, "MemoryPressure") ? "memory" : std::string(cond.substr(0, 40));
    } else if (ephemeral_limit(s)) {
      resource = "ephemeral-storage";
    }
    bool reason = false;
    if (size_t p = s.find("Evicted"); p != std::string_view::npos) {
      std::string_view before = unquote(text::trim(s.substr(0, p)));
      while (!before.empty() && (before.back() == ':' || before.back() == '"' || before.back() == ' ')) before.remove_suffix(1);
      auto w = words(s);
      bool table = false;
      for (size_t i = 1; i < w.size(); ++i)
        if (w[i] == "Evicted" && ready_column(w[i - 1])) table = true;
      bool event = text::contains(s, "Warning") || text::contains(s, "pod/");
      reason = text::iequals(before.substr(before.size() >= 6 ? before.size() - 6 : 0), "reason") || table || event ||
               text::contains(s, "Status:");
      if (!reason && resource.empty()) return false;
      if (table) {
        // "x-1  0/1  Evicted  0  3h": a complete row.
        flush(out);
        Fact f = evicted_fact(line);
        for (size_t i = 1; i < w.size(); ++i)
          if (w[i] == "Evicted" && i >= 2) f.pod = std::string(w[i - 2].substr(0, 253));
        platform(line, out);
        out.add(std::move(f));
        return true;
      }
    }
    bool message = !resource.empty();
    bool continuation = !reason && !message;  // "which exceeds its request of 12Gi." on its own line
    if (continuation && !pending_) return false;
    // An event line carries reason and message together: a complete eviction.
    if (reason && message) flush(out);
    if (!pending_) {
      pending_ = evicted_fact(line);
      pending_->strength = message ? 0.9f : 0.75f;
    } else if (message && pending_->strength < 0.9f) {
      pending_->strength = 0.9f;
    }
    pending_line_ = line.number;
    if (!resource.empty()) pending_resource_ = resource;
    Fact& f = *pending_;
    if (f.extra.size() < 4 && f.where.line != line.number) f.extra.emplace_back(line.number, text::quote_line(s, 240));
    if (auto v = text::after(s, "pod/")) f.pod = std::string(text::take_until(*v, " \t").substr(0, 253));
    if (auto v = text::after(s, "Container ")) {
      std::string_view name = text::first_word(*v);
      if (text::contains(*v, " was using")) f.container = std::string(name.substr(0, 253));
    }
    // Each container over its request is named with its usage; the pod's is
    // their sum. A message folded across lines ("... was using" / "29132Ki,
    // which exceeds ...") carries the figure at the next line's start.
    std::string_view rest = s;
    if (using_line_ + 1 == line.number) {
      std::string_view lead = text::trim(s);
      if (text::starts_with(lead, "using ")) lead.remove_prefix(6);
      if (auto q = message_quantity(lead)) f.usage = f.usage.value_or(0) + *q;
    }
    using_line_ = 0;
    if (text::ends_with(text::trim(s), " was")) using_line_ = line.number;  // "... Container node was" / "using 35505620Ki, ..."
    while (auto v = text::after(rest, "was using")) {
      rest = *v;
      if (text::trim(rest).empty()) using_line_ = line.number;
      else if (auto q = message_quantity(text::trim(rest))) f.usage = f.usage.value_or(0) + *q;
    }
    if (auto v = text::after(s, "its request of ")) f.requested = message_quantity(*v);
    if (auto v = text::after(s, ", request is ")) f.requested = message_quantity(*v);
    if (f.pod.empty()) f.pod = pod_here(line);
    platform(line, out);
    if (reason && message) flush(out);
    return true;
  }

  Fact evicted_fact(const Line& line) {
    Fact f = make_fact(line, FactKind::k8s_evicted, Family::kubernetes);
    f.layer = Layer::k8s_eviction;
    f.strength = 0.85f;
    f.detail = "Evicted";
    return f;
  }

  // "Started:  Thu, 20 Nov 2025 03:35:40 +0000" then "Finished: Thu, 20 Nov
  // 2025 09:41:09 +0000" under the OOMKilled reason (YAML: startedAt /
  // finishedAt): how long the killed container ran, a context fact
  // (runtime_setting "container ran for", uptime_at_failure_s).
  bool terminated_times(const Line& line, FactSink& out) {
    std::string_view t = text::trim_left(line.text);
    bool start = text::starts_with(t, "Started:") || text::starts_with(t, "startedAt:");
    bool finish = text::starts_with(t, "Finished:") || text::starts_with(t, "finishedAt:");
    if (!start && !finish) return false;
    auto when = timeutil::parse_datetime(unquote(t.substr(t.find(':') + 1)));
    if (!when) return true;
    if (start) {
      started_us_ = when;
      return true;
    }
    if (!started_us_ || *when < *started_us_ || ran_said_) return true;
    ran_said_ = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::kubernetes);
    f.detail = std::string(kContainerRanFor);
    f.uptime_at_failure_s = static_cast<double>(*when - *started_us_) / 1e6;
    out.add(std::move(f));
    return true;
  }

  // A jsonpath that prints the reason and the exit code together
  // ('{...terminated.reason}{" "}{...terminated.exitCode}'): "OOMKilled 137".
  static bool jsonpath_reason_and_code(std::string_view s) {
    std::string_view t = text::trim(s);
    if (!text::starts_with(t, "OOMKilled ")) return false;
    std::string_view code = text::trim(t.substr(10));
    return !code.empty() && code.size() <= 4 && code.find_first_not_of("0123456789") == std::string_view::npos;
  }

  void oomkilled(const Line& line, size_t p, FactSink& out) {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    std::string_view before = text::trim(s.substr(0, p));
    while (!before.empty() && (before.back() == ':' || before.back() == '"' || before.back() == '=' || before.back() == ' '))
      before.remove_suffix(1);
    // "the last termination reason is OOMKilled" (k8sgpt's analysis): the reason, in a sentence.
    for (std::string_view verb : {" is", " was"})
      if (text::ends_with(before, verb) && text::ends_with(text::trim(before.substr(0, before.size() - verb.size())), "reason"))
        before = text::trim(before.substr(0, before.size() - verb.size()));
    // A bare "OOMKilled" is what `kubectl get pod -o jsonpath='{...terminated.reason}'` prints.
    bool keyed = text::iequals(before.substr(before.size() >= 6 ? before.size() - 6 : 0), "reason") ||
                 text::contains(before, "Terminated") || text::contains(s, "PreviousContainerWasOOMKilled") ||
                 unquote(s) == "OOMKilled" || jsonpath_reason_and_code(s);
    if (keyed) reason_line_ = line.number, started_us_.reset();
    Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
    f.layer = Layer::k8s_pod_limit;
    f.strength = 0.9f;
    f.detail = "OOMKilled";
    std::optional<uint64_t> count;
    if (!keyed) {
      // kubectl get pods row: NAME READY STATUS RESTARTS AGE
      auto w = words(s);
      bool row = false;
      for (size_t i = 1; i < w.size(); ++i) {
        if ((w[i] != "OOMKilled" && w[i] != "Init:OOMKilled") || !ready_column(w[i - 1]) || i < 2) continue;
        row = true;
        f.pod = std::string(w[i - 2].substr(0, 253));
        if (i + 1 < w.size()) count = text::parse_u64(w[i + 1]);
      }
      // A status cell or a notification that says what happened: Argo's
      // "OOMKilled (exit code 137)", "OOMKilled: x container was terminated
      // for exceeding its memory limit of 4Gi".
      std::string_view after = s.substr(p + 9);
      bool report = text::starts_with(after, " (exit code") || text::starts_with(after, ": ") ||
                    text::contains(s, "exceeding its memory limit");
      if (!row && !report) return;
      if (!row) {
        if (auto v = text::after(s, "memory limit of ")) {
          if (auto b = message_quantity(*v); b && *b > 0) {
            Fact l = make_fact(line, FactKind::memory_limit, Family::kubernetes);
            l.limit = b;
            l.detail = "the memory limit the report names";
            out.add(std::move(l));
          }
        }
      }
    }
    if (f.pod.empty()) f.pod = pod_here(line);
    platform(line, out);
    if (count) restarts(line, *count, "RESTARTS", out, f.pod);
    if (last_oom_line_ && line.number <= last_oom_line_ + 30 && f.pod.empty()) return;  // state and lastState of one object
    last_oom_line_ = line.number;
    out.add(std::move(f));
  }

  // OpenShift's build status: the build pod ran out of its memory limit.
  // The status cell and the describe line say it once between them.
  void openshift_build(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    platform(line, out);
    if (last_oom_line_ && line.number <= last_oom_line_ + 30) return;
    last_oom_line_ = line.number;
    Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
    f.layer = Layer::k8s_pod_limit;
    f.strength = 0.85f;
    f.detail = "OpenShift build OutOfMemoryKilled";
    f.pod = pod_here(line);
    out.add(std::move(f));
  }

  // Go's print of the resources map: "map[limits:map[cpu:1 memory:512Mi] requests:map[memory:307Mi]]".
  void go_map_resources(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    for (auto [key, sec] : {std::pair{std::string_view("limits:map["), Section::limits},
                            std::pair{std::string_view("requests:map["), Section::requests}}) {
      size_t p = s.find(key);
      if (p == std::string_view::npos) continue;
      std::string_view body = s.substr(p + key.size());
      body = body.substr(0, body.find(']'));
      size_t m = body.find("memory:");
      if (m == std::string_view::npos || (m > 0 && body[m - 1] != ' ')) continue;
      section_ = sec;
      section_line_ = line.number;
      quantity(line, body.substr(m + 7), out);
    }
  }

  // The kubelets of 2014-2016 (and their docs) spelled the reason "OOM Killed":
  // read only as the value of a reason key, so prose and other tools' messages
  // with the same words are left alone.
  bool old_reason(const Line& line, size_t p, FactSink& out) {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return false;
    std::string_view before = text::trim(s.substr(0, p));
    while (!before.empty() && (before.back() == ':' || before.back() == '"' || before.back() == '=' || before.back() == ' ' ||
                               before.back() == '\t'))
      before.remove_suffix(1);
    if (!text::iequals(before.substr(before.size() >= 6 ? before.size() - 6 : 0), "reason")) return false;
    std::string_view after = s.substr(p + 10);
    if (!after.empty() && platform::is_alnum(after[0])) return false;
    Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
    f.layer = Layer::k8s_pod_limit;
    f.strength = 0.9f;
    f.detail = "OOM Killed";
    f.pod = pod_here(line);
    platform(line, out);
    if (last_oom_line_ && line.number <= last_oom_line_ + 30 && f.pod.empty()) return true;
    last_oom_line_ = line.number;
    out.add(std::move(f));
    return true;
  }

  void crashloop(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    auto w = words(s);
    std::optional<uint64_t> count;
    std::string pod;
    for (size_t i = 2; i < w.size(); ++i) {
      if ((w[i] != "CrashLoopBackOff" && w[i] != "Init:CrashLoopBackOff") || !ready_column(w[i - 1])) continue;
      pod = std::string(w[i - 2].substr(0, 253));
      if (i + 1 < w.size()) count = text::parse_u64(w[i + 1]);
    }
    Fact f = make_fact(line, FactKind::restarts, Family::kubernetes);
    f.count = count;
    f.pod = pod.empty() ? pod_here(line) : pod;
    f.detail = "CrashLoopBackOff";
    platform(line, out);
    out.add(std::move(f));
  }

  void restarts(const Line& line, std::optional<uint64_t> count, std::string_view detail, FactSink& out, const std::string& pod = {}) {
    Fact f = make_fact(line, FactKind::restarts, Family::kubernetes);
    f.count = count;
    f.pod = pod.empty() ? pod_here(line) : pod;
    f.detail = std::string(detail);
    platform(line, out);
    out.add(std::move(f));
  }

  void exit_code(const Line& line, std::string_view v, FactSink& out) {
    auto n = text::parse_i64(v);
    if (!n) return;
    Fact f = make_fact(line, FactKind::exit_status, Family::kubernetes);
    f.exit_code = static_cast<int>(*n);
    f.strength = 0.3f;
    f.pod = pod_here(line);
    platform(line, out);
    out.add(std::move(f));
  }

  // The kubelet relaying a kernel kill as an event: "System OOM encountered,
  // victim process: python, pid: 4242" (the whole node: a process_killed
  // fact on host_ram, weaker than a real kernel report) or "Cgroup OOM
  // encountered, victim process: stress, pid: 388104" (the container's own
  // memory cgroup: k8s_oomkilled).
  void kubelet_oom(const Line& line, bool system, FactSink& out) {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    Fact f = make_fact(line, system ? FactKind::process_killed : FactKind::k8s_oomkilled, Family::kubernetes);
    f.layer = system ? Layer::host_ram : Layer::k8s_pod_limit;
    f.strength = system ? 0.6f : 0.85f;
    f.detail = system ? std::string(kSystemOom) : std::string("CgroupOOM");
    if (auto v = text::after(s, "victim process: ")) f.process = std::string(text::take_until(*v, ",\"").substr(0, 64));
    if (auto v = text::after(s, "pid: ")) f.pid = text::parse_i64(*v);
    if (!system) {
      if (auto v = text::after(s, "pod/")) f.pod = std::string(text::take_until(*v, " \t").substr(0, 253));
      if (f.pod.empty()) f.pod = pod_here(line);
    }
    platform(line, out);
    out.add(std::move(f));
  }

  // cAdvisor's OOM event: the container path says whose limit.
  void cadvisor_oom(const Line& line, std::string_view path, FactSink& out) {
    path = text::take_until(path, "\"");
    if (path == "/") {
      Fact f = make_fact(line, FactKind::process_killed, Family::kubernetes);
      f.layer = Layer::host_ram;
      f.strength = 0.6f;
      f.detail = "kubelet: an OOM event in the node's root cgroup (a system OOM)";
      platform(line, out);
      out.add(std::move(f));
      return;
    }
    Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
    f.layer = text::contains(path, "kubepods") ? Layer::k8s_pod_limit : Layer::container_limit;
    f.strength = 0.75f;
    f.detail = "kubelet: an OOM event in container " + std::string(path.substr(0, 200));
    f.cgroup = std::string(path.substr(0, 512));
    platform(line, out);
    out.add(std::move(f));
  }

  // The kubelet's eviction manager deciding, then naming, the pods it
  // evicts for memory: "must evict pod(s) to reclaim memory" opens one
  // eviction; "pods <pod>_<ns>(<uid>) evicted" names its pod.
  bool eviction_manager(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (auto r = text::after(s, "must evict pod(s) to reclaim ")) {
      // Memory, or a disk or PID resource ("reclaim ephemeral-storage"): the
      // latter is flushed as a look-alike.
      flush(out);
      pending_ = evicted_fact(line);
      pending_resource_ = std::string(text::first_word(*r).substr(0, 32));
      pending_->detail = "kubelet eviction manager (" + pending_resource_ + ")";
      pending_->strength = 0.85f;
      pending_line_ = line.number;
      platform(line, out);
      return true;
    }
    if (text::contains(s, "but no pods are active to evict")) {
      // The node is below its memory threshold and Kubernetes has nothing to
      // evict: what holds the memory runs outside the pods (a daemon, a
      // process started by hand, the kubelet's own reservations too small).
      if (!pending_ || pending_->kind != FactKind::k8s_evicted || pending_resource_ != "memory") return true;
      pending_.reset();
      if (no_pods_said_) return true;
      no_pods_said_ = true;
      Fact f = make_fact(line, FactKind::kernel_oom_event, Family::kubernetes);
      f.layer = Layer::host_ram;
      f.cause = Cause::other_process;
      f.strength = 0.7f;
      f.detail = "the node reached the kubelet's memory eviction threshold with no pods to evict: memory is held outside Kubernetes";
      out.add(std::move(f));
      return true;
    }
    auto v = text::after(s, "eviction manager: pods ");
    if (!v || !text::contains(*v, " evicted")) return false;
    if (!pending_ || pending_->kind != FactKind::k8s_evicted) return true;  // evicted for another resource, or not shown
    std::string_view pod = text::take_until(*v, "(");
    if (size_t u = pod.rfind('_'); u != std::string_view::npos) pod = pod.substr(0, u);
    if (pending_->pod.empty()) pending_->pod = std::string(pod.substr(0, 253));
    if (pending_->extra.size() < 4) pending_->extra.emplace_back(line.number, text::quote_line(s, 240));
    pending_line_ = line.number;
    flush(out);
    return true;
  }

  // The node's event when the kubelet's memory eviction threshold is crossed:
  // "Warning  EvictionThresholdMet  5m (x44 over 3d)  kubelet  Attempting to
  // reclaim memory". For memory the kubelet reclaims by evicting pods; the
  // event does not say which.
  bool threshold_met(const Line& line, FactSink& out) {
    if (guards::is_advice_line(line.text) || (pending_ && pending_->kind == FactKind::k8s_evicted)) return true;
    flush(out);
    Fact f = evicted_fact(line);
    f.detail = "kubelet eviction threshold met (memory)";
    f.strength = 0.7f;
    out.add(std::move(f));
    platform(line, out);
    return true;
  }

  bool probe(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return false;
    bool startup = text::contains(s, "Startup probe failed");
    bool failed = startup || text::contains(s, "Liveness probe failed") || text::icontains(s, "failed liveness probe") ||
                  text::icontains(s, "bad liveness probe") || text::icontains(s, "failing liveness probe") ||
                  text::icontains(s, "liveness probe fail") || text::icontains(s, "liveness probe timed out");
    if (!failed) return false;
    // Conditional prose ("if the liveness probe fails, ...") describes, it does not report.
    std::string lower = text::lower(s.substr(0, std::min<size_t>(s.size(), 400)));
    size_t at = lower.find("iveness probe");
    if (at == std::string::npos) at = lower.find("startup probe");
    std::string_view head = std::string_view(lower).substr(0, at);
    if (text::contains(head, "if ") || text::contains(head, "when ") || text::contains(head, "unless ")) return false;
    if (guards::is_mention(s, at, 14)) return false;
    platform(line, out);
    bool kill = text::contains(s, "will be restarted") || text::contains(s, "Killing") || text::contains(s, "killed and recreated");
    if (kill) {
      Fact k = make_fact(line, FactKind::stop_or_restart, Family::kubernetes);
      k.detail = "kubelet restarted the container after a failed probe";
      k.pod = pod_here(line);
      out.add(std::move(k));
    }
    if (last_probe_line_ && line.number <= last_probe_line_ + 50) {
      last_probe_line_ = line.number;
      return true;
    }
    last_probe_line_ = line.number;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::kubernetes);
    f.layer = Layer::not_memory;
    f.strength = 0.75f;
    f.detail = startup ? "a failed startup probe" : "a failed liveness probe";
    if (auto v = text::after(s, "pod/")) f.pod = std::string(text::take_until(*v, " \t").substr(0, 253));
    if (f.pod.empty()) f.pod = pod_here(line);
    out.add(std::move(f));
    return true;
  }

  // Kubelet kills: "Normal  Killing  pod/x  Stopping container x", old "killing  Killing <container id>".
  // A node drained (kubectl drain's "evicting pod ns/name", a termination
  // handler's "Node successfully cordoned and drained" and "Evicting pod"
  // events): its pods are stopped with SIGTERM, not for memory. The kubelet's
  // own evictions for memory say "low on resource" and are read above.
  bool drained(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    bool drain = text::contains(s, "cordoned and drained") || text::contains(s, "Evicting pod ") ||
                 text::starts_with(text::trim_left(s), "evicting pod ");
    if (!drain || text::contains(s, "low on resource") || guards::is_advice_line(s)) return false;
    Fact f = make_fact(line, FactKind::stop_or_restart, Family::kubernetes);
    f.detail = "the node was drained (its pods evicted and stopped)";
    platform(line, out);
    out.add(std::move(f));
    return true;
  }

  bool killing(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    bool ok = text::contains(s, "Stopping container");
    if (!ok) {
      size_t p = s.find("Killing");
      // Also quoted, as structured kubelet logs print it: "Killing container with a grace period".
      bool token = (p == 0 || s[p - 1] == ' ' || s[p - 1] == '\t' || s[p - 1] == '"') && p + 8 <= s.size() &&
                   (s[p + 7] == ' ' || s[p + 7] == '\t');
      if (!token) return false;  // "OOMKilling" and other words
      std::string_view next = text::first_word(s.substr(p + 7));
      bool hex = next.size() >= 12 && next.find_first_not_of("0123456789abcdef") == std::string_view::npos;
      ok = hex || text::starts_with(next, "container") || text::starts_with(next, "pod/") || text::contains(s, "kubelet");
    }
    if (!ok || guards::is_advice_line(s)) return false;
    Fact f = make_fact(line, FactKind::stop_or_restart, Family::kubernetes);
    f.detail = "kubelet killed the container";
    if (auto v = text::after(s, "pod/")) f.pod = std::string(text::take_until(*v, " \t").substr(0, 253));
    // containerd and CRI-O log "Stopping container" too: only an event row says Kubernetes.
    if (!f.pod.empty() || text::contains(s, "kubelet") || text::contains(s, "Normal")) platform(line, out);
    out.add(std::move(f));
    return true;
  }

  // kube-state-metrics series.
  void metrics(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t close = s.rfind('}');
    if (close == std::string_view::npos) return;
    auto value = text::parse_double(platform::skip(s.substr(close + 1)));
    if (!value) return;
    std::string pod = label(s, "pod"), container = label(s, "container");
    if (text::contains(s, "last_terminated_reason") && label(s, "reason") == "OOMKilled" && *value > 0) {
      Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::kubernetes);
      f.layer = Layer::k8s_pod_limit;
      f.strength = 0.85f;
      f.detail = "OOMKilled (kube-state-metrics)";
      f.pod = pod;
      f.container = container;
      platform(line, out);
      out.add(std::move(f));
    } else if (text::contains(s, "restarts_total") && *value >= 0) {
      Fact f = make_fact(line, FactKind::restarts, Family::kubernetes);
      f.count = static_cast<uint64_t>(*value);
      f.pod = pod;
      f.container = container;
      f.detail = "restarts_total";
      platform(line, out);
      out.add(std::move(f));
    }
  }
};

}  // namespace

const RecognizerEntry kKubernetesEntry{"kubernetes", Family::kubernetes, kPatterns,
                                       [] { return std::unique_ptr<Recognizer>(new Kubernetes); }};

}  // namespace aimem
