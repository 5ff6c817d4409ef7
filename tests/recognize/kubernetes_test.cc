// kubectl describe / get / events and kube-state-metrics (src/recognize/families/kubernetes.cc).
#include <gtest/gtest.h>

#include <map>

#include "core/units.h"
#include "core/time.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

const char* kDescribe = R"(Name:             mimir-ingester-0
Namespace:        mimir
Containers:
  ingester:
    State:          Running
      Started:      Fri, 09 Aug 2024 09:51:17 +0200
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Ready:          False
    Restart Count:  672
    Limits:
      cpu:     500m
      memory:  1Gi
    Requests:
      cpu:      100m
      memory:   512Mi
)";

TEST(Kubernetes, DescribeGivesOomKilledRestartsAndResources) {
  auto o = of_kind(kDescribe, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].pod, "mimir-ingester-0");
  auto r = of_kind(kDescribe, FactKind::restarts);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].count, 672u);
  auto l = of_kind(kDescribe, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, units::GiB);
  EXPECT_EQ(l[0].detail, "resources.limits.memory");
  auto q = of_kind(kDescribe, FactKind::memory_request);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].requested, 512 * units::MiB);
  EXPECT_EQ(of_kind(kDescribe, FactKind::exit_status).at(0).exit_code, 137);
  EXPECT_EQ(of_kind(kDescribe, FactKind::platform).size(), 1u);
  Diagnosis d = test::diagnose_text(kDescribe);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

TEST(Kubernetes, YamlAndJsonStatus) {
  const char* yaml = R"(    resources:
      limits:
        memory: 16Gi
      requests:
        memory: "8Gi"
  containerStatuses:
  - lastState:
      terminated:
        exitCode: 137
        reason: OOMKilled
    restartCount: 5
)";
  ASSERT_EQ(of_kind(yaml, FactKind::k8s_oomkilled).size(), 1u);
  EXPECT_EQ(of_kind(yaml, FactKind::memory_limit).at(0).limit, 16 * units::GiB);
  EXPECT_EQ(of_kind(yaml, FactKind::memory_request).at(0).requested, 8 * units::GiB);
  EXPECT_EQ(of_kind(yaml, FactKind::restarts).at(0).count, 5u);
  const char* json = R"(        "resources": {
          "limits": {
            "memory": "2Gi"
          }
        },
        "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
        "restartCount": 3,
)";
  ASSERT_EQ(of_kind(json, FactKind::k8s_oomkilled).size(), 1u);
  EXPECT_EQ(of_kind(json, FactKind::memory_limit).at(0).limit, 2 * units::GiB);
  EXPECT_EQ(test::diagnose_text(json).layer, Layer::k8s_pod_limit);
}

TEST(Kubernetes, EvictionMessageAcrossLinesGivesUsageAndRequest) {
  const char* log = R"(  message: 'The node was low on resource: memory. Container node was using 35505620Ki,
    which exceeds its request of 12Gi. '
  phase: Failed
  reason: Evicted
)";
  auto e = of_kind(log, FactKind::k8s_evicted);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].usage, uint64_t{35505620} * 1024);
  EXPECT_EQ(e[0].requested, 12 * units::GiB);
  EXPECT_EQ(e[0].container, "node");
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::k8s_eviction);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The newer kubelet wording.
  auto n = of_kind("Warning  Evicted  pod/api-0  The node was low on resource: memory. Threshold quantity: 100Mi, available: 85Mi. "
                   "Container app was using 1Gi, request is 512Mi, has larger consumption of memory.\n",
                   FactKind::k8s_evicted);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].pod, "api-0");
  EXPECT_EQ(n[0].usage, units::GiB);
  EXPECT_EQ(n[0].requested, 512 * units::MiB);
}

TEST(Kubernetes, EvictionEventsAndOtherResources) {
  const char* events = R"(4m11s  Warning  Evicted  pod/egg-1  The node was low on resource: memory. Container egg was using 5053216Ki, which exceeds its request of 0.
4m11s  Normal   Killing  pod/egg-1  Stopping container egg
4m7s   Warning  Evicted  pod/egg-2  The node had condition: [MemoryPressure].
)";
  auto e = of_kind(events, FactKind::k8s_evicted);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].requested, 0u);
  EXPECT_EQ(e[1].pod, "egg-2");
  Diagnosis d = test::diagnose_text(events);
  EXPECT_EQ(d.layer, Layer::k8s_eviction);
  // A BestEffort pod (request 0) using gigabytes is first in the kubelet's
  // line: its request is far below its need (a small one would be another
  // workload's victim, CauseMechanisms.ABestEffortEvicteeIsJudgedByWhatItUsed).
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // Disk pressure is not a memory failure.
  const char* disk = "Warning  Evicted  pod/web-1  The node was low on resource: ephemeral-storage. Container web was using 12Gi, which exceeds its request of 0.\n";
  EXPECT_TRUE(of_kind(disk, FactKind::k8s_evicted).empty());
  EXPECT_EQ(test::diagnose_text(disk).layer, Layer::not_memory);
}

TEST(Kubernetes, GetPodsTable) {
  const char* bad = R"(NAME                     READY   STATUS      RESTARTS      AGE
vllm-7b9c8d6e5-tt4rd     0/1     OOMKilled   5 (2m ago)    26h
)";
  auto o = of_kind(bad, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].pod, "vllm-7b9c8d6e5-tt4rd");
  EXPECT_EQ(of_kind(bad, FactKind::restarts).at(0).count, 5u);
  EXPECT_EQ(test::diagnose_text(bad).layer, Layer::k8s_pod_limit);
  const char* healthy = R"(NAME                           READY   STATUS    RESTARTS   AGE
embedder-5f7d8c9b4-2kq8x       1/1     Running   0          3d4h
vllm-7b9c8d6e5-tt4rd           1/1     Running   0          26h
)";
  EXPECT_EQ(test::diagnose_text(healthy).layer, Layer::none);
  // `kubectl get pod -o jsonpath='{..lastState.terminated.reason}'` prints the reason alone.
  EXPECT_EQ(of_kind("OOMKilled\n", FactKind::k8s_oomkilled).size(), 1u);
  // Prose that names the word is not a report.
  EXPECT_TRUE(of_kind("We were getting OOMKilled pods last week, so we raised limits.\n", FactKind::k8s_oomkilled).empty());
}

// A jsonpath query for the container's memory limit prints the quantity alone
// on the next line (modelled on dotnet/runtime container-limit reports; values
// ours): the limit, so a runtime's own OutOfMemoryException below it is the
// pod's limit, not the host's RAM. A number far from such a query is nothing.
TEST(Kubernetes, AJsonpathLimitQueryAndItsBareValueAreTheLimit) {
  const char* text = R"($ kubectl get pod memtest-6b8f9c7d5-x7k2p -o jsonpath='{.spec.containers[0].resources.limits.memory}'
2Gi
$ kubectl logs memtest-6b8f9c7d5-x7k2p
Unhandled exception. System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.
   at MemTest.Program.Main(String[] args) in /src/MemTest/Program.cs:line 21
)";
  auto l = of_kind(text, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 2ull << 30);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::k8s_pod_limit);
  auto r = of_kind("$ kubectl get pod p -o jsonpath='{.spec.containers[0].resources.requests.memory}'\n512Mi\n", FactKind::memory_request);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].requested, 512ull << 20);
  EXPECT_TRUE(of_kind("$ kubectl get pod p -o jsonpath='{.spec.containers[0].resources.limits.memory}'\n\n\n\n2Gi\n",
                      FactKind::memory_limit).empty());
}

// A query of several status fields, none of them the limit (modelled on
// containerd/containerd#4547's node; our pod and times): each word is read as
// its field says, the reason too. An object's JSON among the fields (the
// resources map) is left to the readers of JSON, which read its limit.
TEST(Kubernetes, AJsonpathQueryOfStatusFieldsReadsTheReason) {
  const std::string status =
      "$ kubectl -n kube-system get pod kube-proxy-8vq2n -o jsonpath='{.status.containerStatuses[0].restartCount} "
      "{.status.containerStatuses[0].lastState.terminated.reason} {.status.containerStatuses[0].lastState.terminated.finishedAt}"
      "{\"\\n\"}'\n"
      "3 OOMKilled 2024-03-14T02:11:40Z\n";
  auto k = of_kind(status, FactKind::k8s_oomkilled);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(test::diagnose_text(status).layer, Layer::k8s_pod_limit);
  const std::string resources =
      "$ kubectl get pod agent-7c1e -o jsonpath='{.spec.containers[0].resources}{\"\\n\"}"
      "{.status.containerStatuses[0].lastState.terminated.reason}{\"\\n\"}'\n"
      "{\"limits\":{\"cpu\":\"2\",\"memory\":\"3Gi\"},\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}\n"
      "OOMKilled\n";
  auto l = of_kind(resources, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 3ull << 30);
  EXPECT_EQ(of_kind(resources, FactKind::k8s_oomkilled).size(), 1u);
}

// A template with labels between its fields, over every pod of a selector
// (modelled on gavinmcfall/home-ops#2321; names and figures ours): each value
// runs to the next label, "OOMKilled/137" is two fields, and the range prints
// the template once per pod.
TEST(Kubernetes, AJsonpathTemplateWithLabelsIsReadAgainstThem) {
  const std::string text =
      "$ kubectl -n rag get pod -l app=indexer -o jsonpath='{range .items[*]}{.metadata.name}{\"  restarts=\"}"
      "{.status.containerStatuses[0].restartCount}{\"  last=\"}{.status.containerStatuses[0].lastState.terminated.reason}{\"/\"}"
      "{.status.containerStatuses[0].lastState.terminated.exitCode}{\"\\n\"}{end}'\n"
      "indexer-6c9f7b5d4-2kqzp  restarts=0  last=/\n"
      "indexer-6c9f7b5d4-8wmtn  restarts=5  last=OOMKilled/137\n";
  auto k = of_kind(text, FactKind::k8s_oomkilled);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].where.line, 3u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
}

// OpenShift's build status and Go's print of a resources map (modelled on
// openshift/origin#24464; names and figures ours): the build pod's limit.
TEST(Kubernetes, OpenShiftBuildOutOfMemoryKilledAndAGoMapLimit) {
  const char* text = R"($ oc get builds
NAME            TYPE     FROM          STATUS                       STARTED         DURATION
shop-api-3      Source   Git@91ac3e0   Failed (OutOfMemoryKilled)   6 minutes ago   3m12s
$ oc describe build shop-api-3 | grep Status
Status:		Failed (The build pod was killed due to an out of memory condition.)
$ oc get pod shop-api-3-build -o jsonpath='{.spec.containers[0].resources}'
map[limits:map[cpu:2 memory:768Mi] requests:map[cpu:100m memory:256Mi]]
)";
  auto k = of_kind(text, FactKind::k8s_oomkilled);
  ASSERT_EQ(k.size(), 1u);
  auto l = of_kind(text, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 768ull << 20);
  auto r = of_kind(text, FactKind::memory_request);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].requested, 256ull << 20);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // A map without memory, or a cpu key that ends in "memory:", gives nothing.
  EXPECT_TRUE(of_kind("map[limits:map[cpu:2] requests:map[cpu:1]]\n", FactKind::memory_limit).empty());
  EXPECT_TRUE(of_kind("map[limits:map[gpumemory:8Gi]]\n", FactKind::memory_limit).empty());
}

// `kubectl get pods -A -o wide`: NAMESPACE first, IP and NODE after; init
// containers; evictions; a crash loop with its restarts (modelled on
// hmcts/cnp-flux-config#28772 for the OOMKilled row; values ours).
TEST(Kubernetes, GetPodsWideAllNamespacesAndInitContainers) {
  const char* wide = R"(NAMESPACE   NAME                           READY   STATUS                  RESTARTS        AGE   IP            NODE          NOMINATED NODE   READINESS GATES
serving     vllm-7b9c8d6e5-tt4rd           0/1     OOMKilled               7 (41s ago)     52m   10.42.3.17    gpu-node-2    <none>           <none>
serving     embedder-5f7d8c9b4-2kq8x       0/1     Init:OOMKilled          2 (9s ago)      4m    10.42.1.9     cpu-node-1    <none>           <none>
batch       scorer-6c5b4a3d2-x8z7w         0/1     CrashLoopBackOff        14 (3m ago)     61m   10.42.2.30    cpu-node-3    <none>           <none>
batch       ingest-59d8f7c6b5-qq2lm        0/1     Init:CrashLoopBackOff   5 (1m ago)      12m   10.42.2.31    cpu-node-3    <none>           <none>
batch       etl-84c7b6a59-r4t5y            0/1     Evicted                 0               2d    <none>        cpu-node-3    <none>           <none>
)";
  auto o = of_kind(wide, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].pod, "vllm-7b9c8d6e5-tt4rd");
  EXPECT_EQ(o[1].pod, "embedder-5f7d8c9b4-2kq8x");
  std::map<std::string, uint64_t> restarts;
  for (const auto& r : of_kind(wide, FactKind::restarts))
    if (r.count) restarts[r.pod] = *r.count;
  EXPECT_EQ(restarts["vllm-7b9c8d6e5-tt4rd"], 7u);
  EXPECT_EQ(restarts["embedder-5f7d8c9b4-2kq8x"], 2u);
  EXPECT_EQ(restarts["scorer-6c5b4a3d2-x8z7w"], 14u);
  EXPECT_EQ(restarts["ingest-59d8f7c6b5-qq2lm"], 5u);
  auto e = of_kind(wide, FactKind::k8s_evicted);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].pod, "etl-84c7b6a59-r4t5y");
  Diagnosis d = test::diagnose_text(
      "NAME                       READY   STATUS           RESTARTS      AGE   IP           NODE         NOMINATED NODE   READINESS GATES\n"
      "embedder-5f7d8c9b4-2kq8x   0/1     Init:OOMKilled   2 (9s ago)    4m    10.42.1.9    cpu-node-1   <none>           <none>\n");
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
}

// The reason as kubelets of 2014-2016 spelled it (kubernetes/kubernetes#3044
// shows the JSON form; values ours), and the same words elsewhere.
TEST(Kubernetes, OldOomKilledReasonWithASpace) {
  const char* json = R"(        "oom-test": {
            "state": {
                "termination": {
                    "exitCode": 137,
                    "reason": "OOM Killed",
                    "startedAt": "2015-03-02T11:20:05Z"
)";
  auto o = of_kind(json, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(test::diagnose_text(json).layer, Layer::k8s_pod_limit);
  const char* describe = R"(Name:				memhog-3kq1z
Namespace:			default
    Last Termination State:	Terminated
      Reason:			OOM Killed
      Exit Code:		137
)";
  o = of_kind(describe, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].pod, "memhog-3kq1z");
  // Prose and code that carry the words are not a reason.
  const char* prose = R"(We saw pods getting OOM Killed during the load test.
    OOM_MARKERS = ("out of memory", "oom killed")
alert: Kubernetes Container OOM Killed
)";
  EXPECT_TRUE(of_kind(prose, FactKind::k8s_oomkilled).empty());
  EXPECT_EQ(test::diagnose_text(prose).layer, Layer::none);
}

TEST(Kubernetes, ProbeKillsAreNotMemory) {
  const char* log = R"(  Warning  Unhealthy  2m (x3 over 3m)  kubelet  Liveness probe failed: Get "http://10.0.0.5:8000/health": context deadline exceeded
  Normal   Killing    2m               kubelet  Container vllm failed liveness probe, will be restarted
Exit Code:    137
)";
  auto n = of_kind(log, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].detail, "a failed liveness probe");
  EXPECT_FALSE(of_kind(log, FactKind::stop_or_restart).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::not_memory);
  // Old-style events: Killing with a container id is a kubelet stop.
  EXPECT_EQ(of_kind("spec.containers{nginx}\t\t\tkilling\t\tKilling 0b7743acd1a5f54aeccf4fe16c8cfbaa5e935a541c2fca59150cc250f7035d4e\n",
                    FactKind::stop_or_restart).size(), 1u);
  // Docs that describe probes are not failures.
  EXPECT_TRUE(of_kind("If the liveness probe fails, the kubelet kills the container.\n", FactKind::not_memory_failure).empty());
}

TEST(Kubernetes, NpdKernelEventIsAPodLimitAndSystemOomIsTheHost) {
  const char* npd = R"({"reason": "OOMKilling", "source": {"component": "kernel-monitor"},
  "message": "Memory cgroup out of memory: Killed process 3504804 (kubectl) total-vm:753508kB, anon-rss:58776kB, file-rss:29400kB, shmem-rss:0kB, UID:0 pgtables:288kB oom_score_adj:999",
)";
  EXPECT_EQ(test::diagnose_text(npd).layer, Layer::k8s_pod_limit);
  const char* sys = "Warning  SystemOOM  node/gpu-3  System OOM encountered, victim process: python, pid: 4242\n";
  auto k = of_kind(sys, FactKind::process_killed);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "python");
  EXPECT_EQ(k[0].pid, 4242);
  EXPECT_EQ(test::diagnose_text(sys).layer, Layer::host_ram);
  // Beside a pod's limit (here larger than the node), still the node's own
  // kill (modelled on an AKS node's SystemOOM events, 2024; our own names).
  const std::string beside = std::string(sys) + "{\"limits\":{\"cpu\":\"2\",\"memory\":\"512Gi\"},\"requests\":{\"memory\":\"500Mi\"}}\n";
  EXPECT_EQ(test::diagnose_text(beside).layer, Layer::host_ram) << test::reason_text(test::diagnose_text(beside));
}

TEST(Kubernetes, KubeStateMetrics) {
  const char* m = R"(kube_pod_container_status_last_terminated_reason{container="vllm",namespace="ai",pod="vllm-0",reason="OOMKilled",uid="x"} 1
kube_pod_container_status_last_terminated_reason{container="api",namespace="ai",pod="api-0",reason="OOMKilled",uid="y"} 0
kube_pod_container_status_restarts_total{container="vllm",namespace="ai",pod="vllm-0",uid="x"} 7
)";
  auto o = of_kind(m, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].pod, "vllm-0");
  EXPECT_EQ(o[0].container, "vllm");
  EXPECT_EQ(of_kind(m, FactKind::restarts).at(0).count, 7u);
}

// Kubelet 1.28+ relays a kill inside the container's own cgroup as a
// CgroupOOM event (modelled on the kubernetes.io memory-demo-2 walkthrough).
TEST(Kubernetes, CgroupOomEventIsThePodLimit) {
  const std::string events =
      "Events:\n  Type     Reason     Age   From     Message\n  ----     ------     ----  ----     -------\n"
      "  Warning  CgroupOOM  31s   kubelet  Cgroup OOM encountered, victim process: stress, pid: 41207\n";
  auto o = of_kind(events, FactKind::k8s_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].process, "stress");
  EXPECT_EQ(o[0].pid, 41207);
  EXPECT_EQ(test::diagnose_text(events).layer, Layer::k8s_pod_limit);
}

// The kubelet's own log of an eviction (eviction_manager.go; modelled on a
// kubeadm lab node's journal).
TEST(Kubernetes, EvictionManagerLogIsAnEvictionWithItsPod) {
  const std::string log =
      "Mar 03 10:07:51 node-2 kubelet[2987]: I0303 10:07:51.388431 2987 eviction_manager.go:346] eviction manager: must evict "
      "pod(s) to reclaim memory\n"
      "Mar 03 10:07:51 node-2 kubelet[2987]: I0303 10:07:51.388655 2987 eviction_manager.go:364] eviction manager: pods ranked "
      "for eviction: search-data-0_logging(9d3b), grafana-6d8f_monitoring(a1c2)\n"
      "Mar 03 10:07:52 node-2 kubelet[2987]: I0303 10:07:52.806173 2987 eviction_manager.go:157] eviction manager: pods "
      "search-data-0_logging(9d3b) evicted, waiting for pod to be cleaned up\n";
  auto e = of_kind(log, FactKind::k8s_evicted);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].pod, "search-data-0");
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::k8s_eviction);
  // "attempting to reclaim" alone decides nothing.
  EXPECT_TRUE(of_kind("kubelet[1]: eviction_manager.go:332] eviction manager: attempting to reclaim memory\n", FactKind::k8s_evicted).empty());
}

// 2015 kubelets capitalised the event ("Liveness Probe Failed").
TEST(Kubernetes, OldCapitalisedProbeFailureIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "  Wed, 08 Apr 2015 09:41:02 -0700\t1\t{kubelet 10.240.87.14}\tspec.containers{web}\t\t\tunhealthy\tLiveness Probe Failed: "
      "Get http://10.244.1.7:8080/healthz: dial tcp 10.244.1.7:8080: connection refused\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
}

// cAdvisor inside the kubelet: "/" is the node's root cgroup, a system OOM
// (modelled on a kubelet 1.5 journal); a kubepods path is the pod's own limit.
TEST(Kubernetes, CadvisorOomEventPathSaysWhoseLimit) {
  Diagnosis root = test::diagnose_text(
      "Oct 12 08:19:44 ip-10-0-1-2 kubelet[5127]: I1012 08:19:43.602114 5127 manager.go:1126] Created an OOM event in container "
      "\"/\" at 2017-10-12 08:19:43.588310274 +0000 UTC\n");
  EXPECT_EQ(root.layer, Layer::host_ram);
  Diagnosis pod = test::diagnose_text(
      "Oct 12 08:19:44 ip-10-0-1-2 kubelet[5127]: I1012 08:19:43.602114 5127 manager.go:1126] Created an OOM event in container "
      "\"/kubepods/burstable/pod2f1c5e0a/66b4be252a3e\" at 2017-10-12 08:19:43.588310274 +0000 UTC\n");
  EXPECT_EQ(pod.layer, Layer::k8s_pod_limit);
}

// OOMKilled as a status cell or a notification that says what it means
// (modelled on `argo get` and a monitoring notification).
TEST(Kubernetes, OomKilledStatusCellsAndNotifications) {
  Diagnosis argo = test::diagnose_text(
      "STEP                          TEMPLATE   PODNAME                              DURATION  MESSAGE\n"
      " └─✖ run-scenario             simulate   sim-m8x2c-simulate-3308142657        14m       OOMKilled (exit code 137)\n");
  EXPECT_EQ(argo.layer, Layer::k8s_pod_limit);
  const std::string note =
      "[alerts] Pod ops/config-db-6d8c9b7f4-2x9qk is unhealthy\n"
      "OOMKilled: config-db container was terminated for exceeding its memory limit of 4Gi\n";
  EXPECT_EQ(test::diagnose_text(note).layer, Layer::k8s_pod_limit);
  auto l = test::facts_of_kind(note, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 4ull << 30);
  // A word in prose is not one.
  EXPECT_EQ(test::diagnose_text("We should alert when a pod is OOMKilled more than twice\n").layer, Layer::none);
}

// Modelled on `kubectl describe node` events when the kubelet's memory
// eviction threshold is crossed (pkg/kubelet/eviction/eviction_manager.go
// records EvictionThresholdMet "Attempting to reclaim memory"); our own node.
TEST(Kubernetes, NodeEvictionThresholdEventIsAnEviction) {
  const std::string log =
      "Events:\n"
      "  Type     Reason                     Age                  From     Message\n"
      "  ----     ------                     ----                 ----     -------\n"
      "  Normal   NodeHasInsufficientMemory  7m (x3 over 2d)      kubelet  Node gpu-7 status is now: NodeHasInsufficientMemory\n"
      "  Warning  EvictionThresholdMet       2m (x19 over 2d)     kubelet  Attempting to reclaim memory\n";
  auto e = of_kind(log, FactKind::k8s_evicted);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_LT(e[0].strength, 0.85f);  // no pod named: weaker than an eviction message
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::k8s_eviction);
  // The threshold met for disk is another resource.
  EXPECT_TRUE(of_kind("  Warning  EvictionThresholdMet  1m  kubelet  Attempting to reclaim ephemeral-storage\n", FactKind::k8s_evicted).empty());
}

// OpenShift's oc runs the same verbs as kubectl: its commands mark the input
// as Kubernetes, so a lone memcg kill beside them is the pod's (modelled on
// an OpenShift PostgreSQL pod sampled daily with `oc adm top`; values ours).
// The resources object printed on one line by jsonpath gives the limit.
TEST(Kubernetes, OcCommandsAndAOneLineResourcesObjectAreThePods) {
  const std::string kill = "Memory cgroup out of memory: Killed process 24643 (postgres) total-vm:612880kB, anon-rss:402112kB, "
                           "file-rss:4432kB, shmem-rss:118012kB, UID:1000680000 pgtables:1112kB oom_score_adj:-997\n";
  Diagnosis oc = test::diagnose_text("$ oc adm top pod pg-1-7xk2p\nNAME         CPU(cores)   MEMORY(bytes)\npg-1-7xk2p   14m          187Mi\n" + kill);
  EXPECT_EQ(oc.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(test::diagnose_text("$ ls /var/lib/pgsql\n" + kill).layer, Layer::container_limit);
  auto limits = of_kind("$ kubectl get pod p -o jsonpath='{.spec.containers[0].resources}'\n"
                        "{\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"},\"requests\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}\n",
                        FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].limit, 2 * units::GiB);
}

// The kubelet below its memory threshold with nothing to evict (modelled on
// kubernetes/kubernetes threads of nodes whose memory a process outside the
// pods held; values are ours): no eviction, the node's RAM held elsewhere.
TEST(Kubernetes, ThresholdMetWithNoPodsToEvictIsMemoryHeldOutsideThePods) {
  Diagnosis d = test::diagnose_text(
      "Feb 28 11:04:17 node-3 kubelet[2411]: I0228 11:04:17.884167    2411 eviction_manager.go:358] eviction manager: must evict pod(s) to reclaim memory\n"
      "Feb 28 11:04:17 node-3 kubelet[2411]: E0228 11:04:17.884190    2411 eviction_manager.go:369] eviction manager: eviction thresholds have been met, but no pods are active to evict\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  Diagnosis evicted = test::diagnose_text(
      "I0228 11:04:17.884167    2411 eviction_manager.go:358] eviction manager: must evict pod(s) to reclaim memory\n"
      "I0228 11:04:17.884201    2411 eviction_manager.go:376] eviction manager: pods web-5d9c_default(1f2e) evicted, waiting for pod to be cleaned up\n");
  EXPECT_EQ(evicted.layer, Layer::k8s_eviction);
}

// Reason OOMKilled beside exit 143 and the kubelet stopping the container
// for a scale-down (modelled on kubernetes/kubernetes#140716; our own pod
// and times): the OOM killer sends SIGKILL (137), so the stop ended it. With
// exit 137 the same reason is the pod's limit.
TEST(Kubernetes, OomKilledWithExit143AndAStopIsTheStop) {
  const std::string log =
      "{\n"
      "  \"terminated\": {\n"
      "    \"exitCode\": 143,\n"
      "    \"finishedAt\": \"2026-07-18T22:41:07Z\",\n"
      "    \"reason\": \"OOMKilled\",\n"
      "    \"startedAt\": \"2026-07-16T08:03:51Z\"\n"
      "  }\n"
      "}\n"
      "14m   Normal   ScaleDown   pod/api-7d9c6b5f4-q2wfz   deleting pod for node scale down\n"
      "14m   Normal   Killing     pod/api-7d9c6b5f4-q2wfz   Stopping container api\n";
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::not_memory);
  std::string killed = log;
  killed.replace(killed.find("143"), 3, "137");
  EXPECT_EQ(test::diagnose_text(killed).layer, Layer::k8s_pod_limit);
  // The stop a node's drain makes (modelled on kubernetes/kops#18040: a
  // termination handler's events; our own node and pod), on one JSON line.
  const std::string drained =
      "{\"terminated\":{\"exitCode\":143,\"finishedAt\":\"2026-04-02T11:20:41Z\",\"reason\":\"OOMKilled\",\"startedAt\":\"2026-03-20T07:02:11Z\"}}\n"
      "default   9m   Normal   CordonAndDrain   node/ip-10-1-2-3.ec2.internal   Node successfully cordoned and drained: Spot interruption\n"
      "default   9m   Normal   Evict            node/ip-10-1-2-3.ec2.internal   Evicting pod ml/reranker-0\n";
  EXPECT_EQ(test::diagnose_text(drained).layer, Layer::not_memory);
  // The kubelet's eviction for memory is no drain.
  EXPECT_TRUE(test::facts_of_kind("Evicting pod ml/reranker-0: The node was low on resource: memory.\n", FactKind::stop_or_restart).empty());
}

// A spec printed as JSON on one line (a Tekton Task's step, modelled on
// tektoncd/pipeline#4930; our own step): its memory limit is read, and exit
// 137 under a limit no runtime starts in is that limit's kill.
TEST(Kubernetes, AOneLineJsonSpecsLimitAndAnExitUnderATinyLimit) {
  const std::string spec =
      "$ kubectl get task build -o jsonpath='{.spec.steps[0]}'\n"
      "{\"image\":\"alpine\",\"name\":\"build\",\"resources\":{\"limits\":{\"memory\":\"24Mi\"}},\"script\":\"make all\"}\n";
  auto l = test::facts_of_kind(spec, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(*l[0].limit, 24ull << 20);
  Diagnosis d = test::diagnose_text(spec + "\"step-build\" exited with code 137\n");
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The same exit under a limit a runtime can start in says no more than exit 137.
  const std::string roomy =
      "{\"image\":\"alpine\",\"name\":\"build\",\"resources\":{\"limits\":{\"memory\":\"2Gi\"}}}\n"
      "\"step-build\" exited with code 137\n";
  EXPECT_EQ(test::diagnose_text(roomy).layer, Layer::unknown);
}

// A `kubectl get pods` row says only Evicted; the describe below it names
// the resource (modelled on sustainable-computing-io/susql-operator#140; our
// own pod, node and figures). Disk pressure is not memory; the same row
// beside a memory message is.
TEST(Kubernetes, AnEvictedRowBesideAMessageForDiskIsNotMemory) {
  const std::string row =
      "NAME                     READY   STATUS    RESTARTS   AGE\n"
      "api-7d9c5b6f48-2xkqv     0/1     Evicted   0          6h41m\n\n";
  auto message = [](const std::string& resource) {
    return "Status:           Failed\nReason:           Evicted\nMessage:          The node was low on resource: " + resource +
           ". Threshold quantity: 10Gi, available: 9876543Ki. Container api was using 141872Ki, request is 0, has larger "
           "consumption of " +
           resource + ".\n";
  };
  Diagnosis disk = test::diagnose_text(row + message("ephemeral-storage"));
  EXPECT_EQ(disk.layer, Layer::not_memory);
  EXPECT_NE(disk.incidents.at(0).reasons.at(0).find("ephemeral-storage"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(row + message("memory")).layer, Layer::k8s_eviction);
  EXPECT_EQ(test::diagnose_text(row).layer, Layer::k8s_eviction);
}

// The taint manager deletes a node's pods when the node stops reporting
// (modelled on kubernetes/kubernetes threads about TaintManagerEviction events
// after NodeStatusUnknown; pod names and ages ours): pods leave the node, but
// not for memory.
TEST(Kubernetes, ATaintManagerEvictionIsNotMemory) {
  const std::string events =
      "$ kubectl get events --field-selector involvedObject.kind=Pod | grep -i evict\n"
      "9m    Normal   TaintManagerEviction   pod/ingest-5f7c9d8b6-q2w4x   Marking for deletion Pod default/ingest-5f7c9d8b6-q2w4x\n"
      "9m    Normal   TaintManagerEviction   pod/ingest-5f7c9d8b6-z8n3k   Marking for deletion Pod default/ingest-5f7c9d8b6-z8n3k\n";
  auto f = test::facts_of_kind(events, FactKind::not_memory_failure);
  ASSERT_EQ(f.size(), 1u);
  Diagnosis d = test::diagnose_text(events);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  // The kubelet's own eviction for memory stays one.
  EXPECT_EQ(test::diagnose_text("Warning  Evicted  pod/ingest-5f7c9d8b6-q2w4x  The node was low on resource: memory. Container ingest was "
                                "using 3512Mi, which exceeds its request of 1Gi.\n")
                .layer,
            Layer::k8s_eviction);
}

// The kubelet's eviction manager reclaiming disk (modelled on
// kubernetes/minikube#4084's kubelet log; pod names and uids ours): pods are
// evicted, but for ephemeral-storage, not memory.
TEST(Kubernetes, AnEvictionToReclaimEphemeralStorageIsNotMemory) {
  const std::string log =
      "Mar 05 11:46:31 minikube kubelet[3127]: W0305 11:46:31.502118    3127 eviction_manager.go:333] eviction manager: attempting to "
      "reclaim ephemeral-storage\n"
      "Mar 05 11:46:31 minikube kubelet[3127]: I0305 11:46:31.529804    3127 eviction_manager.go:344] eviction manager: must evict "
      "pod(s) to reclaim ephemeral-storage\n"
      "Mar 05 11:46:31 minikube kubelet[3127]: I0305 11:46:31.611402    3127 eviction_manager.go:563] eviction manager: pod "
      "coredns-6f9c8d7b5-4kq2m_kube-system(5a1e0c7d-2b3f-11e9-9d1a-0800271c4b5e) is evicted successfully\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::not_memory);
  // The same line for memory stays an eviction.
  std::string mem = log;
  for (size_t p; (p = mem.find("ephemeral-storage")) != std::string::npos;) mem.replace(p, 17, "memory");
  EXPECT_EQ(test::diagnose_text(mem).layer, Layer::k8s_eviction);
}

// k8sgpt's analysis says the reason in a sentence (modelled on
// k8sgpt-ai/k8sgpt#792; our names): still the container's OOMKilled.
TEST(Kubernetes, K8sgptsLastTerminationReasonSentenceIsOomKilled) {
  Diagnosis d = test::diagnose_text(
      "$ k8sgpt analyze --filter Pod --namespace search\n"
      "0 search/indexer-0(StatefulSet/indexer)\n"
      "- Error: back-off 5m0s restarting failed container=indexer pod=indexer-0_search(7c1d0e2a-4b3f-4e8a-9d21-5f60a1b2c3d4)\n"
      "- Error: the last termination reason is OOMKilled container=indexer pod=indexer-0_search(7c1d0e2a-4b3f-4e8a-9d21-5f60a1b2c3d4)\n");
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
}

// kubectl-oomd (jdockerty/kubectl-oomd's README shows both forms): every row
// under its header is a container terminated OOMKilled, with its pod,
// container, limit and time; rows of another table with a Go time at the end
// are not. Own pods, limits and times.
TEST(Kubernetes, KubectlOomdRowsAreOomKilledContainers) {
  const std::string table =
      "$ kubectl oomd -n search\n\n"
      "POD                          CONTAINER     REQUEST     LIMIT     TERMINATION TIME\n"
      "embedder-6c9f7d8b4-q2x8p     embedder      2G          3G        2024-03-02 04:11:09 +0000 GMT\n"
      "embedder-6c9f7d8b4-z7k1m     embedder      2G          3G        2024-03-02 06:40:51 +0000 GMT\n";
  auto k = of_kind(table, FactKind::k8s_oomkilled);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].pod, "embedder-6c9f7d8b4-q2x8p");
  EXPECT_EQ(k[0].container, "embedder");
  EXPECT_EQ(k[0].limit, std::optional<uint64_t>(3000000000ULL));
  ASSERT_TRUE(k[1].where.unix_us);
  EXPECT_EQ(*k[1].where.unix_us, *timeutil::parse_datetime("2024-03-02T06:40:51Z"));
  Diagnosis d = test::diagnose_text(table);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  // The plugin before v0.0.6: no request or limit columns.
  auto old = of_kind("POD                         CONTAINER        TERMINATION TIME\n"
                     "worker-5bd9f6c7d-h2j4k      worker           2023-01-14 22:05:31 +0000 GMT\n",
                     FactKind::k8s_oomkilled);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].pod, "worker-5bd9f6c7d-h2j4k");
  EXPECT_FALSE(old[0].limit);
  // A cluster in another zone: Go prints its offset and name ("+0100 CET").
  auto cet = of_kind("POD                      CONTAINER   REQUEST   LIMIT   TERMINATION TIME\n"
                     "sync-7f9c6d5b8-x2v4n     sync        64Mi      512Mi   2025-11-20 07:41:02 +0100 CET\n",
                     FactKind::k8s_oomkilled);
  ASSERT_EQ(cet.size(), 1u);
  ASSERT_TRUE(cet[0].where.unix_us);
  EXPECT_EQ(*cet[0].where.unix_us, *timeutil::parse_datetime("2025-11-20T06:41:02Z"));
  // A Go time at the end of another table's row is no OOM kill.
  EXPECT_TRUE(of_kind("NAME      STATUS    CREATED\nbackup-1  Done      2024-03-02 04:11:09 +0000 UTC\n", FactKind::k8s_oomkilled).empty());
}

// A jsonpath query's fields, in order, give its output's words their
// meaning: on one line ("8Gi 5 OOMKilled 137") or on several ({"\n"}).
TEST(Kubernetes, AJsonpathOutputIsReadFieldByField) {
  const std::string q =
      "$ kubectl -n ml get pod worker-7d4f9 -o jsonpath='{.spec.containers[0].resources.limits.memory}{\" \"}"
      "{.status.containerStatuses[0].restartCount}{\" \"}{.status.containerStatuses[0].lastState.terminated.reason}{\" \"}"
      "{.status.containerStatuses[0].lastState.terminated.exitCode}{\"\\n\"}'\n";
  auto k = of_kind(q + "6Gi 3 OOMKilled 137\n", FactKind::k8s_oomkilled);
  ASSERT_EQ(k.size(), 1u);
  auto l = of_kind(q + "6Gi 3 OOMKilled 137\n", FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, std::optional<uint64_t>(6ULL << 30));
  EXPECT_EQ(test::diagnose_text(q + "6Gi 3 OOMKilled 137\n").layer, Layer::k8s_pod_limit);
  // The same fields a line each.
  const std::string q2 =
      "$ oc get pod api-1 -o jsonpath='{.status.containerStatuses[0].lastState.terminated.reason}{\"\\n\"}"
      "{.spec.containers[0].resources.limits.memory}{\"\\n\"}'\n";
  auto l2 = of_kind(q2 + "OOMKilled\n2Gi\n", FactKind::memory_limit);
  ASSERT_EQ(l2.size(), 1u);
  EXPECT_EQ(l2[0].limit, std::optional<uint64_t>(2ULL << 30));
  EXPECT_EQ(of_kind(q2 + "OOMKilled\n2Gi\n", FactKind::k8s_oomkilled).size(), 1u);
  // A reason other than OOMKilled is no OOM kill.
  EXPECT_TRUE(of_kind(q + "6Gi 3 Error 1\n", FactKind::k8s_oomkilled).empty());
}

// The kubelet evicting a pod over its own disk limit (modelled on
// kubernetes/kubernetes threads of "Pod ephemeral local storage usage exceeds
// the total limit of containers"; our own pods and sizes): a look-alike,
// however much the pod's memory words say.
TEST(Kubernetes, AnEvictionOverTheEphemeralStorageLimitIsNotMemory) {
  Diagnosis event = test::diagnose_text(
      "3m   Warning   Evicted   pod/loader-5c8d9f7b6-qk2lp   Pod ephemeral local storage usage exceeds the total limit of containers "
      "2147483648.\n");
  EXPECT_EQ(event.layer, Layer::not_memory);
  Diagnosis describe = test::diagnose_text(
      "Status:           Failed\n"
      "Reason:           Evicted\n"
      "Message:          Pod ephemeral local storage usage exceeds the total limit of containers 20Gi.\n"
      "    Limits:\n"
      "      ephemeral-storage:  20Gi\n"
      "      memory:             8Gi\n");
  EXPECT_EQ(describe.layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("Warning  Evicted  pod/x  Container cache exceeded its local ephemeral storage limit \"1Gi\".\n").layer,
            Layer::not_memory);
}


// Modelled on vllm-project/vllm and kserve threads where the OOMKilled
// describe comes first and the previous container's log after it; values ours.
const char* kDescribeThenPreviousLog = R"($ kubectl -n llm describe pod chat-7c9d5b6f8-q2kzp
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Restart Count:  4
    Limits:
      memory:  24Gi
$ kubectl -n llm logs chat-7c9d5b6f8-q2kzp --previous | tail -3
INFO 05-02 11:04:19 [loader.py:447] Loading weights from /models/chat-13b (6 safetensors shards, 26.0 GB)
Loading safetensors checkpoint shards:  50% Completed | 3/6 [00:41<00:41, 13.7s/it]
Loading safetensors checkpoint shards:  67% Completed | 4/6 [00:55<00:27, 13.8s/it]
)";

TEST(Kubernetes, APreviousRunsLogBelowTheKillIsWhatRanBeforeIt) {
  auto s = test::facts_of_kind(kDescribeThenPreviousLog, FactKind::platform);
  bool marked = false;
  for (const Fact& f : s)
    if (f.detail == kPreviousRunLog) marked = f.where.line == 8u && !f.count;  // to the end of the paste
  EXPECT_TRUE(marked);
  Diagnosis d = test::diagnose_text(kDescribeThenPreviousLog);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::model_load);
  // The same log ending in a server that had finished loading: no load.
  std::string served = kDescribeThenPreviousLog;
  served += "INFO 05-02 11:05:40 [api_server.py:1090] Application startup complete.\n";
  EXPECT_NE(test::diagnose_text(served).cause, Cause::model_load);
  // A command after the log ends its section.
  std::string more = kDescribeThenPreviousLog;
  more += "$ kubectl get nodes\n";
  for (const Fact& f : test::facts_of_kind(more, FactKind::platform))
    if (f.detail == kPreviousRunLog) {
      EXPECT_EQ(f.count, 11u);
    }
}

// Modelled on canonical/deployment-configs#199: one pod OOMKilled, another
// Evicted (for a resource the row does not name); values ours.
TEST(Kubernetes, ABareEvictedRowDoesNotOutweighAnOomKilledReason) {
  const char* text = R"(NAME                        READY   STATUS      RESTARTS   AGE
shop-web-6f8d9c7b54-2xkqn   1/1     Running     9          1d2h
shop-web-6f8d9c7b54-9dwtr   0/1     OOMKilled   11         1d2h
shop-web-6f8d9c7b54-h7m4s   0/1     Evicted     0          1d2h
)";
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::k8s_pod_limit);
  const char* evicted_only = R"(NAME                        READY   STATUS      RESTARTS   AGE
shop-web-6f8d9c7b54-h7m4s   0/1     Evicted     0          1d2h
)";
  EXPECT_EQ(test::diagnose_text(evicted_only).layer, Layer::k8s_eviction);
  std::string for_memory = std::string(text) +
                           "  Warning  Evicted  pod/shop-web-6f8d9c7b54-h7m4s  The node was low on resource: memory. Container web was using 3Gi, which exceeds its request of 1Gi.\n";
  EXPECT_EQ(test::diagnose_text(for_memory).layer, Layer::k8s_eviction);
}

}  // namespace
}  // namespace aimem
