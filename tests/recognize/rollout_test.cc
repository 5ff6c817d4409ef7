// Two generations of one Kubernetes workload at once (src/recognize/families/
// rollout.cc): read from pod and ReplicaSet names in any command's output.
// Listings written here in kubectl's and the kubelet's formats with our own
// names, hashes and figures, modelled on the rolling-update evictions in
// datacommonsorg/mixer#815, kubernetes/kubernetes#95498 and
// kubermatic/kubermatic#6012 and on KServe's revision-named pods in
// kserve/kserve#4188 (the corpus cases co-067, co-068, fh-014, co-069).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> overlaps(const std::string& text) {
  return test::facts_of_kind(text, FactKind::runtime_setting, Cause::deployment_overlap);
}

const char* kEviction =
    "Warning  Evicted  pod/search-api-8c5d7f9b64-zq2xw  The node was low on resource: memory. Container api was "
    "using 7011344Ki, which exceeds its request of 6Gi.\n";

TEST(Rollout, TwoLiveHashesOfOneDeploymentAreTwoGenerations) {
  std::string pods = std::string("NAME                          READY   STATUS        RESTARTS   AGE\n") +
                     "search-api-6f8b9d7c45-k2m4p   1/1     Terminating   0          3d\n" +
                     "search-api-8c5d7f9b64-r7t9v   0/1     Running       0          55s\n";
  auto f = overlaps(pods);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].process, "search-api");
  EXPECT_NE(f[0].detail.find("6f8b9d7c45"), std::string::npos) << f[0].detail;
  EXPECT_NE(f[0].detail.find("8c5d7f9b64"), std::string::npos) << f[0].detail;
  // The diagnosis of the eviction beside it: the rollout doubled the need.
  Diagnosis d = test::diagnose_text(pods + kEviction);
  EXPECT_EQ(d.layer, Layer::k8s_eviction);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

TEST(Rollout, OneGenerationOrALeftOverPodIsNoOverlap) {
  // The old generation appears only as an Evicted pod from last week's rollout.
  std::string pods = std::string("search-api-6f8b9d7c45-k2m4p   0/1     Evicted       0          7d\n") +
                     "search-api-8c5d7f9b64-r7t9v   1/1     Running       0          55s\n" +
                     "search-api-8c5d7f9b64-w4x8z   1/1     Running       0          55s\n";
  EXPECT_TRUE(overlaps(pods).empty());
  Diagnosis d = test::diagnose_text(pods + kEviction);
  EXPECT_EQ(d.layer, Layer::k8s_eviction);
  EXPECT_NE(d.cause, Cause::deployment_overlap);
  // DaemonSet and Job pods (<name>-<5 chars>) and hyphenated words are not ReplicaSet pods.
  EXPECT_TRUE(overlaps("kube-proxy-x7k2p   1/1   Running   0   9d\nnode-agent-4xk2p   1/1   Running   0   9d\n"
                       "re-rank-model-batch-v2   1/1   Running   0   9d\n")
                  .empty());
}

TEST(Rollout, ReplicaSetRowsAndTheKubeletsRankingCount) {
  std::string rs = std::string("NAME                 DESIRED   CURRENT   READY   AGE\n") +
                   "embedder-5d7c9b8f46   2         2         2       41d\n" +
                   "embedder-7b4f6d9c58   2         2         0       3m\n";
  ASSERT_EQ(overlaps(rs).size(), 1u);
  std::string ranking =
      "I1009 10:12:44.201512    1187 eviction_manager.go:373] eviction manager: pods ranked for eviction: "
      "embedder-7b4f6d9c58-4mw9t_ml(0f2b1c), embedder-5d7c9b8f46-hq2lx_ml(91ac3d), etcd-0_kube-system(77e1)\n";
  ASSERT_EQ(overlaps(ranking).size(), 1u);
}

TEST(Rollout, KnativeRevisionsAreGenerations) {
  std::string pods =
      std::string("llama-predictor-00007-deployment-6d9f8c7b5d-fk2lm   1/1   Running   0             9d\n") +
      "llama-predictor-00008-deployment-84b6c9d7f8-x7q2n   0/1   Running   1 (41s ago)   6m\n";
  auto f = overlaps(pods);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("00007 and 00008"), std::string::npos) << f[0].detail;
  // With a global OOM kill on that node, the overlap is the cause of the host's exhaustion.
  Diagnosis d = test::diagnose_text(
      pods +
      "kernel: oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
      "task_memcg=/kubepods.slice/kubepods-burstable.slice,task=python3,pid=3190411,uid=0\n"
      "kernel: Out of memory: Killed process 3190411 (python3) total-vm:298114232kB, anon-rss:142884016kB, "
      "file-rss:1204876kB, shmem-rss:0kB, UID:0 pgtables:312416kB oom_score_adj:968\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

// A rolling update whose new pod lands on the GPU the old one still holds:
// the other process is the old generation (modelled on a vLLM Helm upgrade
// on one H200 node; values are ours). Without the two generations it stays
// another process.
TEST(Rollout, TheOldGenerationHoldingTheGpuIsTheOverlap) {
  const std::string oom =
      "(EngineCore_DP0 pid=231) ERROR 08-18 14:05:27 [core.py:712] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
      "1.50 GiB. GPU 0 has a total capacity of 139.81 GiB of which 884.00 MiB is free. Including non-PyTorch memory, this process "
      "has 1.20 GiB memory in use. Of the allocated memory 0.90 GiB is allocated by PyTorch, and 0.10 GiB is reserved by PyTorch "
      "but unallocated.\n";
  const std::string pods =
      "$ kubectl get pods -n inference -o wide\n"
      "NAME                          READY   STATUS             RESTARTS      AGE   IP             NODE\n"
      "qwen-serve-6d9f7c9b84-kx2lp   1/1     Terminating        0             3d    10.44.7.19     gpu-h200-07\n"
      "qwen-serve-7f5b8d6c4f-q8wzn   0/1     CrashLoopBackOff   2 (31s ago)   2m    10.44.7.52     gpu-h200-07\n";
  Diagnosis both = test::diagnose_text(pods + oom);
  EXPECT_EQ(both.layer, Layer::gpu_vram);
  EXPECT_EQ(both.cause, Cause::deployment_overlap);
  EXPECT_EQ(test::diagnose_text(oom).cause, Cause::other_process);
  // "this process" below what PyTorch allocated was not matched to the process: the arithmetic is not used.
  std::string unmatched = oom;
  unmatched.replace(unmatched.find("this process has 1.20 GiB"), 25, "this process has 0.20 GiB");
  EXPECT_NE(test::diagnose_text(unmatched).cause, Cause::other_process);
}

// The client's own words for a rollout in progress, modelled on kubectl
// rolling-update's progress lines (kubernetes/kubernetes#18450) and rollout
// status; our own names and counts.
TEST(Rollout, TheClientReportingARolloutInProgressIsTwoGenerations) {
  const std::string log =
      "$ kubectl rolling-update web-v3 -f web-v4.json\n"
      "Created web-v4\n"
      "Scaling up web-v4 from 0 to 2, scaling down web-v3 from 2 to 0 (keep 2 pods available, don't exceed 3 pods)\n"
      "Scaling web-v4 up to 1\n"
      "[88211.551208] web invoked oom-killer: gfp_mask=0x24280ca, order=0, oom_score_adj=-998\n"
      "[88211.551503] Out of memory: Kill process 31377 (web) score 421 or sacrifice child\n"
      "[88211.552119] Killed process 31377 (web) total-vm:3992424kB, anon-rss:3177244kB, file-rss:0kB\n";
  auto f = overlaps(log);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("web-v4 beside web-v3"), std::string::npos) << f[0].detail;
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
  EXPECT_EQ(overlaps("Waiting for deployment \"api\" rollout to finish: 1 old replicas are pending termination...\n").size(), 1u);
  // Advice about rollouts is not one.
  EXPECT_TRUE(overlaps("If you see \"old replicas are pending termination\", wait for the rollout.\n").empty());
}


// A deploy script that says it runs blue/green (modelled on a docker compose
// deploy script's log in a self-hosting thread); values ours.
TEST(Rollout, ADeployScriptsBlueGreenIsTwoGenerations) {
  const char* text = R"([deploy] web: scaling to 2 for blue/green (docker compose up -d --no-recreate --scale web=2 web)
Jul 02 10:11:12 host-1 kernel: Out of memory: Killed process 5121 (node) total-vm:9401212kB, anon-rss:4893412kB, file-rss:1212kB, shmem-rss:0kB, UID:1000 pgtables:9872kB oom_score_adj:0
)";
  auto s = test::facts_of_kind(text, FactKind::runtime_setting, Cause::deployment_overlap);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].count, 2u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

// Docker Swarm's update order that starts the new task before the old one
// stops (moby/moby#40797's setting, docker service inspect's UpdateConfig;
// our own names and figures): the two tasks' overlap on one host.
TEST(Rollout, ASwarmStartFirstUpdateIsTwoGenerations) {
  const char* text = R"($ docker service inspect api --format '{{json .Spec.UpdateConfig}}'
{"Parallelism":1,"FailureAction":"pause","Monitor":5000000000,"MaxFailureRatio":0,"Order":"start-first"}
[Tue Mar  3 09:12:40 2026] Out of memory: Killed process 7712 (python) total-vm:8811212kB, anon-rss:7201236kB, file-rss:1120kB, shmem-rss:0kB, UID:0 pgtables:15244kB oom_score_adj:0
)";
  auto s = overlaps(text);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0].detail.find("start-first"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::deployment_overlap);
  EXPECT_TRUE(overlaps("{\"Order\":\"stop-first\"}\n").empty());
}

}  // namespace
}  // namespace aimem
