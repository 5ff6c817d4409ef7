// Workers killed by SIGKILL as their supervisors report it (Celery, gunicorn,
// torch elastic, Ollama), and PyTorch's "Allocation on device" form.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

// A supervisor's word that its worker got SIGKILL, and nothing else: most
// often a memory kill, but the host's, a container's or a build VM's, only the
// kernel log can say (on the blind batches, writers said "pool unknown" for
// such pastes three times in four). With the machine's figures beside it the
// host is the reading.
TEST(WorkerKills, UnexplainedSigkillOfAWorkerLeavesThePoolOpen) {
  for (const char* log : {
           "[2026-11-28 10:00:00,000: ERROR/MainProcess] Process 'ForkPoolWorker-3' pid:4242 exited with 'signal 9 (SIGKILL)'\n",
           "  exitcode  : -9 (pid: 1234)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 1234\n",
           "[2026-11-28 10:00:01 +0000] [1] [ERROR] Worker (pid:42) was sent SIGKILL! Perhaps out of memory?\n",
           "[2026-11-28 10:00:01 +0000] [1] [WARNING] Worker with pid 42 was terminated due to signal 9\n",  // gunicorn 20.1+
       }) {
    Diagnosis d = test::diagnose_text(log);
    ASSERT_EQ(d.layer, Layer::unknown) << log;
    EXPECT_NE(d.layer, Layer::none) << log;  // still a failure, never "none"
    EXPECT_LT(d.confidence.value_or(1), 0.6) << log;  // a guess, and it says so
    EXPECT_NE(d.incidents[0].summary.find("SIGKILL"), std::string::npos) << d.incidents[0].summary;
    auto& checks = d.incidents[0].next_checks;
    EXPECT_NE(std::find(checks.begin(), checks.end(), "dmesg -T | grep -i -E 'out of memory|killed process'"), checks.end());
  }
  // The machine's own figures place it: the host.
  Diagnosis host = test::diagnose_text(
      "$ free -m\n"
      "               total        used        free      shared  buff/cache   available\n"
      "Mem:            7821        7644          61           2         115          39\n"
      "Swap:              0           0           0\n"
      "[2026-11-28 10:00:00,000: ERROR/MainProcess] Process 'ForkPoolWorker-3' pid:4242 exited with 'signal 9 (SIGKILL)'\n");
  EXPECT_EQ(host.layer, Layer::host_ram);
  // So does a model being read into RAM when it died.
  Diagnosis load = test::diagnose_text(
      "Loading checkpoint shards:  40%|####      | 2/5 [00:31<00:47, 15.80s/it]\n"
      "  exitcode  : -9 (pid: 1234)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 1234\n");
  EXPECT_EQ(load.layer, Layer::host_ram);
  EXPECT_EQ(load.cause, Cause::model_load);
}

// gunicorn 20.1's wording of a worker's SIGKILL, in a pod with a limit, while
// each worker loads its own copy of the weights (modelled on a KServe
// predictor's logs; values are ours). Signal 15 is a stop, not a kill.
TEST(WorkerKills, GunicornSignalNineInAPodIsThePodsLimit) {
  Diagnosis d = test::diagnose_text(
      "[2020-10-19 08:12:01 +0000] [8] [INFO] Booting worker with pid: 8\n"
      "loading resnet152 weights from /models/resnet152.pth ...\n"
      "[2020-10-19 08:12:19 +0000] [1] [WARNING] Worker with pid 8 was terminated due to signal 9\n"
      "$ kubectl get pod predictor-5c4b9d7c6-ttq8m -o jsonpath='{.spec.containers[0].resources}'\n"
      "{\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"},\"requests\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}\n");
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::model_load);
  EXPECT_EQ(test::diagnose_text("[2020-10-19 08:12:19 +0000] [1] [WARNING] Worker with pid 8 was terminated due to signal 15\n").layer,
            Layer::not_memory);
}

TEST(WorkerKills, GunicornTimeoutKillIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "[2026-11-28 10:00:00 +0000] [1] [CRITICAL] WORKER TIMEOUT (pid:42)\n"
      "[2026-11-28 10:00:01 +0000] [1] [ERROR] Worker (pid:42) was sent SIGKILL! Perhaps out of memory?\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  // Timeouts alone, no SIGKILL line after them (modelled on deepset-ai/haystack
  // workers timing out while downloading a model): still the look-alike, not "none".
  Diagnosis alone = test::diagnose_text(
      "[2026-11-28 10:00:00 +0000] [7] [INFO] Booting worker with pid: 8\n"
      "Downloading:  35%|###5      | 174M/496M [00:25<00:50, 6.39MB/s]\n"
      "[2026-11-28 10:00:31 +0000] [7] [CRITICAL] WORKER TIMEOUT (pid:8)\n"
      "[2026-11-28 10:00:31 +0000] [7] [INFO] Booting worker with pid: 9\n");
  EXPECT_EQ(alone.layer, Layer::not_memory);
  // A real kernel kill beside a timeout is still the kernel's.
  Diagnosis both = test::diagnose_text(
      "[2026-11-28 10:00:31 +0000] [7] [CRITICAL] WORKER TIMEOUT (pid:8)\n"
      "Memory cgroup out of memory: Killed process 9 (gunicorn) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n");
  EXPECT_EQ(both.layer, Layer::container_limit);
}

// A timeout explains the kill of the worker it names only: worker 25 was
// SIGKILLed while uploading a large artifact, and worker 24 timed out half a
// minute later (modelled on an MLflow server behind gunicorn, bitnami chart;
// our own pids and paths). Nothing explains 25's kill: the pool stays open.
TEST(WorkerKills, ATimeoutOfAnotherWorkerDoesNotExplainAKill) {
  const std::string other =
      "[2026-11-28 10:00:00 +0000] [25] [INFO] Handling PUT /api/2.0/mlflow-artifacts/artifacts/3/run/model.pkl (1.4 GB)\n"
      "[2026-11-28 10:00:40 +0000] [22] [ERROR] Worker (pid:25) was sent SIGKILL! Perhaps out of memory?\n"
      "[2026-11-28 10:00:41 +0000] [22] [INFO] Booting worker with pid: 31\n"
      "[2026-11-28 10:01:10 +0000] [22] [CRITICAL] WORKER TIMEOUT (pid:24)\n";
  Diagnosis d = test::diagnose_text(other);
  EXPECT_EQ(d.layer, Layer::unknown) << test::reason_text(d);
  // The same lines with the timeout naming the killed worker: explained.
  std::string same = other;
  same.replace(same.find("(pid:24)"), 8, "(pid:25)");
  EXPECT_EQ(test::diagnose_text(same).layer, Layer::not_memory);
}

// A thread refused by a pids limit, reported by the runtime as out of memory
// (modelled on dotnet/runtime threads with docker --pids-limit; values ours).
TEST(WorkerKills, AThreadRefusedByAPidsLimitIsNotMemory) {
  const std::string oom =
      "   System.OutOfMemoryException : Exception of type 'System.OutOfMemoryException' was thrown.\n"
      "     at System.Threading.Thread.StartCore()\n";
  Diagnosis pids = test::diagnose_text(oom + "[91234.208110] cgroup: fork rejected by pids controller in /docker/5d0b8e2c71f4\n");
  EXPECT_EQ(pids.layer, Layer::not_memory);
  EXPECT_NE(test::diagnose_text(oom).layer, Layer::not_memory);
  // A real kernel OOM kill beside it is still memory.
  Diagnosis both = test::diagnose_text(
      "[91234.208110] cgroup: fork rejected by pids controller in /docker/5d0b8e2c71f4\n"
      "Memory cgroup out of memory: Killed process 9 (dotnet) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n");
  EXPECT_EQ(both.layer, Layer::container_limit);
}

TEST(WorkerKills, SigkillNextToAKernelReportIsTheKernels) {
  Diagnosis d = test::diagnose_text(
      "Memory cgroup out of memory: Killed process 4242 (celery) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n"
      "Process 'ForkPoolWorker-3' pid:4242 exited with 'signal 9 (SIGKILL)'\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(PyTorchAllocationOnDevice, IsAGpuOom) {
  Diagnosis d = test::diagnose_text("!!! Exception during processing !!! Allocation on device\ntorch.OutOfMemoryError: Allocation on device\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

}  // namespace
}  // namespace aimem
