// Readers added after the twenty-fourth blind batch, each on inputs written
// here in the program's own format with our own values (sources cited per
// test): OpenVZ's container OOM killer, copies of a program counted with ps,
// a JVM thread refused at the mapping count, .NET's array size limit, GPU
// faults that are not memory (ROCm's invalid device function, a lost Level
// Zero device), JupyterLab's and TorchServe's "died" notices, kubectl's
// jsonpath reason with its exit code, and Thrust's CUDA assert; then, after
// the twenty-fifth batch: docker events with a template, TensorFlow's first pool reservation, a wrapper's
// "Caused by: GC overhead limit exceeded", fork at the pid limit, and ONNX
// Runtime's buffer-size mismatch.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

// Modelled on the Plesk knowledge base's article 123671 (Virtuozzo 4.7) and
// a bobcares write-up of httpd kills in an OpenVZ VPS.
TEST(OpenvzOom, TheContainersKillIsItsLimitWithTheVictim) {
  for (const char* line : {"[2174518.331276] OOM killed process 14215 (httpd) score 0 vm:412340kB, rss:58102kB, swap:0kB\n",
                           "Nov 24 12:17:04 hwnode kernel: [758955.653313] Out of memory in UB 1234: OOM killed process 21738 (php-cgi) score 0 vm:281988kB, rss:17004kB, swap:0kB\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::container_limit) << line;
    auto f = test::facts_of_kind(line, FactKind::kernel_oom_kill);
    ASSERT_EQ(f.size(), 1u) << line;
    EXPECT_GT(*f[0].pid, 14000);
    EXPECT_GT(*f[0].rss, 16u * 1024 * 1024);
  }
  auto named = test::facts_of_kind("Out of memory in UB 1234: OOM killed process 21738 (php-cgi) score 0 vm:281988kB, rss:17004kB, swap:0kB\n",
                                   FactKind::kernel_oom_kill);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].process, "php-cgi");
  EXPECT_NE(named[0].detail.find("UB 1234"), std::string::npos);
  // Prose about the killer is no kill.
  EXPECT_EQ(test::diagnose_text("The \"OOM killed process\" lines mean the container hit its limit.\n").layer, Layer::none);
}

// Modelled on the same VPS write-up and rfjakob/earlyoom#357 (a build's
// cc1plus copies); our counts. A count of threads, or of log lines, is not.
TEST(ShellCopies, CopiesCountedWithPsOrPgrepAreAWorkerCount) {
  const std::string kill = "[2174518.331276] OOM killed process 14215 (httpd) score 0 vm:412340kB, rss:58102kB, swap:0kB\n";
  for (const char* count : {"# ps -C httpd --no-headers | wc -l\n148\n", "$ pgrep -c httpd\n96\n", "$ ps aux | grep '[h]ttpd' | wc -l\n64\n"}) {
    auto f = test::facts_of_kind(std::string(count) + kill, FactKind::phase_serve);
    ASSERT_EQ(f.size(), 1u) << count;
    EXPECT_GE(*f[0].sequences, 64u) << count;
    EXPECT_EQ(test::diagnose_text(std::string(count) + kill).cause, Cause::concurrency_batch) << count;
  }
  for (const char* other : {"$ ls /proc/14215/task | wc -l\n148\n", "$ ps -eLf | grep httpd | wc -l\n148\n",
                            "$ journalctl -k | grep -c 'OOM killed'\n148\n", "# ps -C httpd --no-headers | wc -l\n3\n"})
    EXPECT_TRUE(test::facts_of_kind(std::string(other) + kill, FactKind::phase_serve).empty()) << other;
}

// Modelled on bloomberg/chef-bach#895 (an HDFS DataNode's 64k threads at
// its map count); our counts. Each thread's stack is one more mapped area.
TEST(OsLimits, ANativeThreadRefusedAtTheMapCountIsNotMemory) {
  auto log = [](const char* areas) {
    return std::string(
               "java.lang.OutOfMemoryError: unable to create new native thread\n"
               "        at java.lang.Thread.start0(Native Method)\n"
               "$ free -g\n"
               "              total        used        free      shared  buff/cache   available\n"
               "Mem:            251          58          95           0          98         190\n"
               "$ ls /proc/$(pgrep -f proc_datanode)/task | wc -l\n"
               "64211\n"
               "$ wc -l < /proc/$(pgrep -f proc_datanode)/maps\n") +
           areas + "\n$ cat /proc/sys/vm/max_map_count\n131060\n";
  };
  Diagnosis at = test::diagnose_text(log("131049"));
  EXPECT_EQ(at.layer, Layer::not_memory);
  EXPECT_EQ(at.cause, Cause::not_memory);
  // Far below the count, the mapping count is not what refused it.
  EXPECT_NE(test::diagnose_text(log("40210")).layer, Layer::not_memory);
}

// Modelled on Perfare/AssetStudio#973 (a List growing past .NET's element
// limit with tens of GB free); our frames and figures.
TEST(Dotnet, ArrayDimensionsPastTheLimitIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "System.OutOfMemoryException: Array dimensions exceeded supported range.\n"
      "   at System.Collections.Generic.List`1.set_Capacity(Int32 value)\n"
      "   at Exporter.Studio.BuildIndex() in C:\\src\\Exporter\\Studio.cs:line 88\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  EXPECT_NE(test::diagnose_text("System.OutOfMemoryException: Insufficient memory to continue the execution of the program.\n").layer,
            Layer::not_memory);
}

// Modelled on containers/ramalama#732 (ROCm with no kernel for gfx1103) and
// intel/llm-scaler#424 (a lost Level Zero device during vLLM's profile run);
// our paths and pids.
TEST(GpuErrors, InvalidDeviceFunctionAndALostDeviceAreNotMemory) {
  Diagnosis rocm = test::diagnose_text(
      "ggml_cuda_compute_forward: RMS_NORM failed\n"
      "ROCm error: invalid device function\n"
      "  current device: 0, in function ggml_cuda_compute_forward at /src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2290\n");
  EXPECT_EQ(rocm.layer, Layer::not_memory);
  Diagnosis lost = test::diagnose_text(
      "(Worker_TP0 pid=611) ERROR 06-02 10:12:44 [multiproc_executor.py:742] RuntimeError: Native API failed. Native API returns: 20 "
      "(UR_RESULT_ERROR_DEVICE_LOST)\n");
  EXPECT_EQ(lost.layer, Layer::not_memory);
  EXPECT_LT(lost.confidence, 0.8);  // ambiguous on Intel GPUs: never a sure verdict
}

// Modelled on aksnzhy/xlearn#365 (JupyterLab's notice names the notebook)
// and pytorch/serve#281 (TorchServe's worker died); our names and times.
// Both are a death with no pool named: unknown, never "none".
TEST(ExitStatus, JupyterLabAndTorchServeDeathsAreUnknownNotNone) {
  Diagnosis lab = test::diagnose_text(
      "Kernel Restarting\nThe kernel for train_ffm.ipynb appears to have died. It will restart automatically.\n");
  EXPECT_EQ(lab.layer, Layer::unknown);
  Diagnosis serve = test::diagnose_text(
      "2021-03-02 11:04:19,512 [DEBUG] W-9000-resnet_1.0 org.pytorch.serve.wlm.WorkerThread - Backend worker monitoring thread "
      "interrupted or backend worker process died.\n");
  EXPECT_EQ(serve.layer, Layer::unknown);
}

// Modelled on kserve/kserve#3445 (jsonpath printing the reason and the
// exit code on one line); our pod.
TEST(Kubernetes, AJsonpathReasonWithItsExitCodeIsTheKill) {
  const std::string cmd =
      "$ kubectl get pod model-0 -o jsonpath='{.status.containerStatuses[0].lastState.terminated.reason}{\" \"}"
      "{.status.containerStatuses[0].lastState.terminated.exitCode}{\"\\n\"}'\n";
  EXPECT_EQ(test::diagnose_text(cmd + "OOMKilled 137\n").layer, Layer::k8s_pod_limit);
  EXPECT_EQ(test::diagnose_text(cmd + "Completed 0\n").layer, Layer::none);
}

// Modelled on dmlc/xgboost#2874 (Thrust's error from a .cuh assert); our
// path and line.
TEST(GenericAlloc, ThrustsAssertInACudaHeaderIsTheDevice) {
  Diagnosis d = test::diagnose_text(
      "terminate called after throwing an instance of 'thrust::system::system_error'\n"
      "  what():  /opt/src/gbm/src/common/device_helpers.cuh(512): out of memory\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

// Modelled on fstamatelopoulos/cerefox#102 (docker events with a template of
// its own); our container, times and code. The rows are that container's.
TEST(Docker, EventsWithAFormatTemplateGiveTheOomAndTheDeath) {
  const std::string cmd =
      "$ docker events --since 5m --filter container=indexer --format '{{.Time}} {{.Action}} {{.Actor.Attributes.exitCode}}'\n";
  Diagnosis d = test::diagnose_text(cmd + "1790012201 oom \n1790012201 die 137\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  auto f = test::facts_of_kind(cmd + "1790012201 oom \n", FactKind::docker_oomkilled);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].container, "indexer");
  // A die alone is an exit, not an OOM; the word elsewhere is nothing.
  EXPECT_NE(test::diagnose_text(cmd + "1790012201 die 0\n").layer, Layer::container_limit);
  EXPECT_EQ(test::diagnose_text("room 12 booked\n").layer, Layer::none);
  // The API's kill with its signal ({{.Actor.Attributes.signal}}), then the
  // death (modelled on a CI runner stopping a step's container; our own
  // times): someone killed it, and OOMKilled false says the kernel did not.
  const std::string sig =
      "$ docker inspect -f 'OOMKilled={{.State.OOMKilled}} ExitCode={{.State.ExitCode}}' step-7\n"
      "OOMKilled=false ExitCode=137\n"
      "$ docker events --since 3m --filter container=step-7 --format '{{.Time}} {{.Action}} {{.Actor.Attributes.signal}}'\n";
  EXPECT_EQ(test::diagnose_text(sig + "1790012290 kill 9\n1790012290 die\n").layer, Layer::not_memory);
  EXPECT_NE(test::diagnose_text(sig + "1790012290 die\n").layer, Layer::not_memory);
}

// Modelled on ROCmSoftwarePlatform/hiptensorflow#62 (the first reservation
// refused and training going on) and a first epoch's refusals; our sizes.
TEST(GenericAlloc, TensorFlowsFirstPoolReservationIsNoFailureUnlessItKeepsFailing) {
  const std::string created =
      "2018-03-02 10:11:05.402150: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1120] Creating TensorFlow device (/device:GPU:0) -> "
      "(device: 0, name: Device 67df, pci bus id: 0000:01:00.0)\n";
  auto refused = [](const char* size) {
    return std::string("2018-03-02 10:11:05.417352: E tensorflow/stream_executor/rocm/rocm_driver.cc:967] failed to allocate ") + size +
           " from device: hipError_t(1002)\n";
  };
  EXPECT_EQ(test::diagnose_text(created + refused("7.39G (7936025821 bytes)") + "step 0, training accuracy 0.08\n").layer, Layer::none);
  EXPECT_EQ(test::diagnose_text(created + refused("7.39G (7936025821 bytes)") + refused("6.65G (7142423239 bytes)") +
                                refused("5.99G (6428180915 bytes)"))
                .layer,
            Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("Epoch 1/50\n" + refused("1.10G (1181116416 bytes)")).layer, Layer::gpu_vram);
}

// Modelled on JetBrains/TeamCity.SonarQubePlugin#88 (a wrapper's cause line);
// our times and paths.
TEST(Jvm, AWrappersCausedByGcOverheadIsTheHeap) {
  Diagnosis d = test::diagnose_text(
      "[09:12:41]	[Step 3/3] ERROR: Failed parsing JSON source: JsonReader at line 4410212 column 17\n"
      "[09:12:41]	[Step 3/3] ERROR: Caused by: GC overhead limit exceeded\n");
  EXPECT_EQ(d.layer, Layer::jvm_heap);
}

// Modelled on a web host whose agent forked itself to the pid limit
// (vaynedu/nginx-1.16.0#70); our counts. Far below the limit, the same fork
// error is the host's.
TEST(OsLimits, ForkRefusedAtThePidLimitIsNotMemory) {
  auto log = [](const char* tasks) {
    return std::string("[root@web-3 ~]# systemctl restart nginx\n-bash: fork: Cannot allocate memory\n"
                       "[root@web-3 ~]# sysctl kernel.pid_max\nkernel.pid_max = 32768\n"
                       "[root@web-3 ~]# ls -d /proc/[0-9]* | wc -l\n") +
           tasks + "\n";
  };
  Diagnosis at = test::diagnose_text(log("32702"));
  EXPECT_EQ(at.layer, Layer::not_memory);
  ASSERT_FALSE(at.incidents.empty());
  EXPECT_NE(at.incidents[0].summary.find("pid"), std::string::npos);
  EXPECT_NE(test::diagnose_text(log("412")).layer, Layer::not_memory);
}

// Modelled on triton-inference-server/server#4478 (a config's input type
// against the model's); our figures.
TEST(Onnxruntime, ABufferSmallerThanItsShapeIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "E0311 10:02:07.288514 6120 detector.cc:214] inference failed: onnx runtime error 2: not enough space: expected 2457600, got 614400\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
}

// A docker inspect template whose output is figures only (modelled on
// pterodactyl/panel#868: the container's memory and swap limits; our id):
// the limit is read, and a heap ceiling that takes all of it is the cause.
TEST(Docker, AnInspectTemplateOfFiguresGivesTheLimit) {
  Diagnosis d = test::diagnose_text(
      "container@panel~ java -Xms2048M -Xmx2048M -jar server.jar\n"
      "/entrypoint.sh: line 15:    31 Killed                  java -Xms2048M -Xmx2048M -jar server.jar\n"
      "$ docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}' 7d1c0e52a9b4\n"
      "2147483648 2147483648\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_FALSE(d.incidents.empty());
  ASSERT_TRUE(d.incidents[0].pool.limit_bytes);
  EXPECT_EQ(*d.incidents[0].pool.limit_bytes, 2147483648u);
}

// After the twenty-sixth batch. Modelled on openvinotoolkit/openvino.genai#3195
// ("Can not allocate", two words, from the Intel GPU plugin), pytorch/serve#3104
// (TorchServe's notice capitalised) and ClickHouse/ClickHouse#31186 (a limit
// that overflowed to a negative size); our figures.
TEST(GenericAlloc, CanNotAllocateInTwoWordsIsAnAllocationFailure) {
  Diagnosis d = test::diagnose_text(
      "[GPU] ProgramBuilder build failed!\n"
      "[CL ext] Can not allocate 4718592 bytes for USM Host. ptr: 0000000000000000, error: 0\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

TEST(ExitStatus, TorchServesCapitalisedWorkerDeathIsUnknownNotNone) {
  EXPECT_EQ(test::diagnose_text("2024-05-02T07:11:41,772 [INFO ] W-9000-clf_1.0-stdout MODEL_LOG - Backend worker process died.\n").layer,
            Layer::unknown);
}

TEST(ClickHouse, ANegativeLimitIsABrokenSettingNotMemory) {
  const char* refused =
      "Code: 241. DB::Exception: Received from localhost:9000. DB::Exception: Memory limit (total) exceeded: would use 12.10 GiB "
      "(attempt to allocate chunk of 4194304 bytes), maximum: -8.00 EiB. (MEMORY_LIMIT_EXCEEDED)\n";
  Diagnosis d = test::diagnose_text(refused);
  EXPECT_EQ(d.layer, Layer::not_memory);
  std::string positive = refused;
  positive.replace(positive.find("-8.00 EiB"), 9, "9.31 GiB");
  EXPECT_EQ(test::diagnose_text(positive).layer, Layer::host_ram);
}

}  // namespace
}  // namespace aimem
