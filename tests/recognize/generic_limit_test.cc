// The generic limit reader (families/generic_limit.cc): a memory limit
// reported exceeded in words no family knows still gives a limit verdict, its
// layer from who enforced it; warnings, settings, rules, predictions and
// recycles by design stay healthy; a family's own reading shadows it.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

const Fact* generic_failure(const Diagnosis& d) {
  for (const Fact& f : d.facts)
    if (is_failure(f.kind) && f.family == Family::generic) return &f;
  return nullptr;
}

// Modelled on vercel/next.js#8272 (Bitbucket Pipelines stops the build
// container at its cap and says only this); our own build lines.
TEST(GenericLimit, CiContainerOverItsCapIsAContainerLimit) {
  Diagnosis d = test::diagnose_text(
      "+ npm ci\n"
      "added 1432 packages in 41.207s\n"
      "+ npm run build\n"
      "> shopfront@2.4.0 build /opt/atlassian/pipelines/agent/build\n"
      "> next build\n"
      "Creating an optimized production build ...\n"
      "Container 'Build' exceeded memory limit.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  const Fact* f = generic_failure(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, FactKind::kernel_oom_kill);
  EXPECT_NE(d.incidents.at(0).summary.find("memory limit"), std::string::npos);
}

// A database's cap on one query or one pipeline stage (MongoDB's stage limit,
// its sort's; our figures in their wording) is the program's own budget for a
// unit of work: no layer of the taxonomy names it (as PHP's memory_limit),
// and the cap is the cause. A CI container's cap still is a container's.
TEST(GenericLimit, ADatabasesCapOnOneQueryIsTheProgramsOwn) {
  for (const char* line :
       {"MongoServerError: Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.\n",
        "MongoServerError: PlanExecutor error during aggregation :: caused by :: Sort exceeded memory limit of 104857600 bytes, but "
        "did not opt in to external sorting.\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::unknown) << line;
    EXPECT_EQ(d.cause, Cause::limit_too_low) << line;
  }
  EXPECT_EQ(test::diagnose_text("Container 'Build' exceeded memory limit.\n").layer, Layer::container_limit);
}

// Modelled on log2timeline/plaso#2448: the tool's own engine kills a worker
// over the per-worker limit and starts a replacement. The program enforced
// it, not the kernel nor a container: a user-space killer.
TEST(GenericLimit, WorkerPoolKillIsAUserspaceKiller) {
  Diagnosis d = test::diagnose_text(
      "2024-06-11 08:14:02,118 [INFO] (MainProcess) PID:71 <engine> Starting replacement worker process for Worker_3\n"
      "2024-06-11 08:14:40,552 [WARNING] (MainProcess) PID:71 <engine> Process: Worker_6 (PID: 214) killed because it "
      "exceeded the memory limit: 2147483648.\n"
      "2024-06-11 08:14:41,007 [ERROR] (MainProcess) PID:71 <engine> Process Worker_6 (PID: 214) is not functioning "
      "correctly. Status code: killed.\n");
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  const Fact* f = generic_failure(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, FactKind::userspace_kill);
}

// The arithmetic decides where no verb does: the use at or over the cap. The
// figures are read into the fact (an invented wording: the reader must not
// depend on any one program's).
TEST(GenericLimit, UseOverCapArithmeticGivesLimitAndUsage) {
  Diagnosis d = test::diagnose_text("job 4471 terminated: resident memory 4211MB > limit 4096MB\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  const Fact* f = generic_failure(d);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->limit);
  ASSERT_TRUE(f->usage);
  EXPECT_EQ(*f->limit, uint64_t{4096} * 1024 * 1024);
  EXPECT_EQ(*f->usage, uint64_t{4211} * 1024 * 1024);
}

// Figures and their units between the memory word and the limit word do not
// keep them apart ("RSS 15.8 GiB reached the hard limit"), an invented wording.
TEST(GenericLimit, FiguresBetweenTheWordsStillMakeOnePhrase) {
  Diagnosis d = test::diagnose_text("ERROR job killed: RSS 15.8 GiB reached the hard limit of 16 GiB\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  ASSERT_NE(generic_failure(d), nullptr);
}

// A pod named in the line, or Kubernetes evidence beside it, makes an unnamed
// enforcer the pod's limit (invented wording; the kubectl row is the real
// `kubectl get pods` format).
TEST(GenericLimit, KubernetesEvidenceMakesItThePodsLimit) {
  Diagnosis named = test::diagnose_text("pod ingest-7c9d exceeded its memory limit and was terminated\n");
  EXPECT_EQ(named.layer, Layer::k8s_pod_limit);
  Diagnosis beside = test::diagnose_text(
      "$ kubectl get pods -n etl\n"
      "NAME          READY   STATUS    RESTARTS   AGE\n"
      "ingest-7c9d   1/1     Running   3          2d\n"
      "$ kubectl logs ingest-7c9d -n etl --previous | tail -2\n"
      "batch 88120 committed\n"
      "fatal: worker process exceeded memory limit (2.0 GiB)\n");
  EXPECT_NE(beside.layer, Layer::container_limit);
  EXPECT_NE(beside.layer, Layer::none);
}

// A device named in the line is the accelerator's cap (invented wording).
TEST(GenericLimit, DeviceCapIsGpuVram) {
  Diagnosis d = test::diagnose_text("RuntimeError: GPU memory usage exceeded the configured limit of 20 GiB; aborting request\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

// What is no failure: the recycle Celery does by design (modelled on
// celery/celery#3706, --max-memory-per-child), a queue consumer stopping at
// its --memory-limit logged at INFO (modelled on remotelabz/remotelabz#673,
// Symfony Messenger), a threshold warning, a setting, a rule, a prediction,
// and a Kubernetes quota refusing a pod that never ran.
TEST(GenericLimit, RecyclesWarningsSettingsAndRulesStayHealthy) {
  for (const char* text : {
           "[2016-12-20 11:01:47,602: ERROR/PoolWorker-1] child process exiting after exceeding memory limit (155256KiB / 150000KiB)\n",
           "[2021-10-10 09:12:44] messenger.INFO: Worker stopped due to memory limit of 134217728 bytes exceeded (134742016 bytes "
           "used) {\"limit\":134217728,\"memory\":134742016} []\n",
           "[2024-03-01 10:00:00] WARNING memory usage is above 90% of the limit\n",
           "WARNING: worker memory exceeded 80% of its memory limit, spilling to disk\n",
           "memory limit: 2GiB (from cgroup)\n",
           "The container must not exceed the memory limit\n",
           "scheduler: placing this job would exceed the memory quota of queue 'gpu'; job stays pending\n",
           "Error from server (Forbidden): pods \"api-7d9f\" is forbidden: exceeded quota: mem-quota, requested: limits.memory=4Gi, "
           "used: limits.memory=30Gi, limited: limits.memory=32Gi\n",
       }) {
    Diagnosis d = test::diagnose_text(text);
    EXPECT_EQ(generic_failure(d), nullptr) << text;
    EXPECT_NE(d.layer, Layer::container_limit) << text;
  }
}

// A family that knows the message reads it; the generic fact is dropped
// (YARN's own sentence, modelled on the corpus's Spark-on-YARN cases).
TEST(GenericLimit, AFamilysReadingShadowsIt) {
  Diagnosis d = test::diagnose_text(
      "23/04/02 17:44:52 ERROR YarnScheduler: Lost executor 1 on worker-03: Container killed by YARN for exceeding "
      "physical memory limits. 27.4 GB of 26 GB physical memory used.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(generic_failure(d), nullptr);
}

// PM2 before 2.x named its cap only by its flag: "restarted because it
// exceeds --max-memory-restart value" ("max" right before the memory word is
// the cap; modelled on Unitech/pm2's God/ActionMethods of 2015; our times).
TEST(GenericLimit, PmTwosFlagNamesTheCap) {
  Diagnosis d = test::diagnose_text(
      "2015-06-02 10:14:07: [PM2][WORKER] Process 1 restarted because it exceeds --max-memory-restart value\n");
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  EXPECT_EQ(test::diagnose_text("$ pm2 start app.js --max-memory-restart 300M\n").layer, Layer::none);
}

// Cloudflare Workers' "Worker exceeded memory limit." (outcome
// "exceededMemory" in its logs' JSON) is the platform's limit on the
// isolate, not a program's worker supervisor (modelled on a chat app's
// Workers logs, 2026). Our own names.
TEST(GenericLimit, CloudflaresWorkerOverItsMemoryLimitIsThePlatformsLimit) {
  Diagnosis d = test::diagnose_text(
      "{\n  \"message\": \"Worker exceeded memory limit.\",\n  \"$workers\": {\n    \"outcome\": \"exceededMemory\",\n"
      "    \"scriptName\": \"notes-api\"\n  }\n}\n");
  EXPECT_EQ(d.layer, Layer::container_limit) << test::reason_text(d);
  Diagnosis dask = test::diagnose_text(
      "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n");
  EXPECT_EQ(dask.layer, Layer::userspace_oom_killer) << test::reason_text(dask);
}

// A container's resources printed as one object (kubectl's jsonpath of
// .spec.containers[0].resources) hold a limit and a request, no usage over a
// limit, whatever words follow (modelled on a CPUThrottlingHigh alert pasted
// with the pod's resources, prometheus-operator/kube-prometheus). Our own names.
TEST(GenericLimit, AResourcesObjectIsASpecificationNotALimitExceeded) {
  Diagnosis d = test::diagnose_text(
      "[FIRING:3] CPUThrottlingHigh\n"
      "{\"limits\":{\"cpu\":\"250m\",\"memory\":\"2Gi\"},\"requests\":{\"cpu\":\"100m\",\"memory\":\"1Gi\"}}  restarts=0\n");
  EXPECT_EQ(d.layer, Layer::not_memory) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("CPU"), std::string::npos) << test::reason_text(d);
}

}  // namespace
}  // namespace aimem
