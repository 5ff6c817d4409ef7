// A platform ending a workload for its own reasons (src/recognize/families/
// platform_stops.cc), written here in each platform's wording with our own
// names, ids and times: ECS's stoppedReason after failed load balancer health
// checks (modelled on aws/containers-roadmap threads), YARN's preemption
// (apache/spark job logs of 2015), GCE's preemption operation beside a node
// gone NotReady, and Ray Serve's controller stopping an unhealthy replica.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(PlatformStops, HealthChecksAndPreemptionAreNotMemory) {
  const std::string ecs =
      "$ aws ecs describe-tasks --cluster prod --tasks 03b30478d8 --query 'tasks[0].[stoppedReason,containers[0].exitCode]'\n"
      "[\n    \"Task failed ELB health checks in (target-group arn:aws:elasticloadbalancing:us-west-2:111122223333:targetgroup/web/5a)\",\n"
      "    137\n]\n";
  const std::string yarn =
      "15/05/07 14:01:58 WARN yarn.YarnAllocator: Container marked as failed: container_1430967127131_0412_01_000023. Exit status: "
      "-102. Diagnostics: Container preempted by scheduler\n";
  const std::string gce =
      "$ gcloud compute operations list --filter='operationType=compute.instances.preempted'\n"
      "NAME                                   TYPE                         TARGET              STATUS\n"
      "systemevent-1761126052311-6420f3a1b    compute.instances.preempted  gke-spot-l4-7c2d4f  DONE\n";
  const std::string ray =
      "(ServeController pid=2214) WARNING 2025-07-02 11:18:36,510 controller 2214 -- Replica(id='k7wq2m0d', deployment='vLLM', "
      "app='app') failed health check, stopping it.\n";
  const std::string android =
      "[Process completed (signal 9) - press Enter]\n"
      "10-20 18:51:11.823  1482  1614 I ActivityManager: Killing PhantomProcessRecord{9a2c0f3 14721:com.termux/u0a311}: Trimming "
      "phantom processes\n";
  const std::string uwsgi = "Fri Mar 29 15:28:04 2019 - worker 4 (pid: 21734) is taking too much time to die...NO MERCY !!!\n";
  const std::string kueue =
      "  \"message\": \"Preempted to accommodate a workload (UID: 6a0e2f4c, JobUID: d83c11f2) due to prioritization in the "
      "ClusterQueue\",\n  \"reason\": \"Preempted\",\n";
  const std::string admission =
      "time=\"2024-05-23T08:12:47.246Z\" level=info msg=\"Failed to create pod train (train-1920466031): admission webhook "
      "\\\"warden-validating.common-webhooks.networking.gke.io\\\" denied the request: the pod's requests exceed the maximum\"\n";
  for (const std::string& log : {ecs, yarn, gce, ray, android, uwsgi, kueue, admission}) {
    Diagnosis d = test::diagnose_text(log);
    EXPECT_EQ(d.layer, Layer::not_memory) << log << test::reason_text(d);
  }
  // A request denied by anything but an admission webhook is not this.
  EXPECT_NE(test::diagnose_text("403 Forbidden: the proxy denied the request\n").layer, Layer::not_memory);
  // The search alone, without its output, names no event.
  EXPECT_EQ(test::diagnose_text(gce.substr(0, gce.find('\n') + 1)).layer, Layer::none);
  // Beside a real OOM kill, the kill is the answer.
  Diagnosis both = test::diagnose_text(
      "[Thu Feb 17 02:19:06 2022] Out of memory: Killed process 2231 (python3) total-vm:6183344kB, anon-rss:4712580kB, file-rss:0kB, "
      "shmem-rss:0kB, UID:0 pgtables:9960kB oom_score_adj:0\n" + yarn);
  EXPECT_EQ(both.layer, Layer::host_ram) << test::reason_text(both);
}

// A node going away is no memory failure: the kubelet's graceful node
// shutdown on a preemptible pool (modelled on kubeflow/training-operator's
// failed PyTorchJob), and Slurm's NODE_FAIL state in sacct (modelled on an
// aiida-core job lost to a node that stopped responding). Our own names.
TEST(PlatformStops, ANodeShutdownOrFailureIsNotMemory) {
  Diagnosis k8s = test::diagnose_text(
      "Status:           Failed\nReason:           Terminated\nMessage:          Pod was terminated in response to imminent node "
      "shutdown.\nEvents:\n  Warning  NodeShutdown    3m    kubelet  Shutdown manager detected shutdown event\n");
  EXPECT_EQ(k8s.layer, Layer::not_memory) << test::reason_text(k8s);
  Diagnosis slurm = test::diagnose_text(
      "       JobID      JobName      State ExitCode        NodeList    Elapsed     ReqMem     MaxRSS\n"
      "------------ ------------ ---------- -------- --------------- ---------- ---------- ----------\n"
      "5512093         relax-17  NODE_FAIL      0:0        nid00412   02:11:07       64Gn\n"
      "5512093.bat+        batch  CANCELLED     0:15        nid00412   02:11:07       64Gn   2210344K\n");
  EXPECT_EQ(slurm.layer, Layer::not_memory) << test::reason_text(slurm);
  EXPECT_NE(test::reason_text(slurm).find("NODE_FAIL"), std::string::npos);
}

}  // namespace
}  // namespace aimem
