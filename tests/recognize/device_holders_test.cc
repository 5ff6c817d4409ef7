// Who holds the device when a process fails for want of GPU memory
// (src/recognize/families/device_holders.cc): an earlier copy of the same
// service is deployment_overlap, a neighbour stays other_process. Logs
// written here in each program's format with our own PIDs, paths and
// figures, modelled on gunicorn's worker timeout beside TensorFlow
// (benoitc/gunicorn#2646), RETURNN's restart after a crash
// (rwth-i6/returnn#1649), a vLLM server started again over its predecessor
// (PrimeIntellect-ai/verifiers#85) and an EngineCore orphaned by killing its
// API server (vllm-project/vllm issues on orphaned EngineCore processes);
// the corpus cases fx-027, la-015, pa-009, qa-005 and ha-040 are of these shapes.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> overlaps(const std::string& text) {
  return test::facts_of_kind(text, FactKind::runtime_setting, Cause::deployment_overlap);
}

// gunicorn aborted a worker that timed out; the next worker found the GPU
// full, and nvidia-smi still lists the aborted worker's PID.
const std::string kGunicorn =
    "[2024-03-02 08:01:10 +0000] [1] [INFO] Booting worker with pid: 41\n"
    "[2024-03-02 08:03:40 +0000] [1] [CRITICAL] WORKER TIMEOUT (pid:41)\n"
    "[2024-03-02 08:03:41 +0000] [1] [INFO] Booting worker with pid: 77\n"
    "2024-03-02 08:03:48.410332: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1510] Created TensorFlow device "
    "(/job:localhost/replica:0/task:0/device:GPU:0 with 212 MB memory) -> physical GPU (device: 0, name: Tesla T4, "
    "pci bus id: 0000:00:1e.0, compute capability: 7.5)\n"
    "2024-03-02 08:03:49.201744: E tensorflow/stream_executor/cuda/cuda_driver.cc:789] failed to allocate 212.44M "
    "(222759936 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
    "2024-03-02 08:03:49.202518: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: "
    "CUBLAS_STATUS_NOT_INITIALIZED\n"
    "[2024-03-02 08:03:49 +0000] [77] [ERROR] Exception in worker process\n"
    "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
    "pid, process_name, used_memory [MiB]\n"
    "41, /usr/bin/python3.10, 15110 MiB\n";

TEST(DeviceHolders, AWorkerTheLogAbortedStillHoldingTheDeviceIsALeftoverCopy) {
  auto f = overlaps(kGunicorn);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pid, 41);
  EXPECT_EQ(f[0].usage, 15110ull << 20);
  EXPECT_NE(f[0].detail.find("went away (line 2) before the failure (line 5)"), std::string::npos) << f[0].detail;
  Diagnosis d = test::diagnose_text(kGunicorn);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

TEST(DeviceHolders, AProcessThatWentAwayOnlyAfterTheFailureIsNotALeftover) {
  // The same PID, aborted after the failure: the failure came first, so the
  // holder was alive by design then.
  std::string late =
      "2024-03-02 08:03:49.201744: E tensorflow/stream_executor/cuda/cuda_driver.cc:789] failed to allocate 212.44M "
      "(222759936 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
      "pid, process_name, used_memory [MiB]\n"
      "41, /usr/bin/python3.10, 15110 MiB\n"
      "[2024-03-02 08:05:40 +0000] [1] [CRITICAL] WORKER TIMEOUT (pid:41)\n";
  EXPECT_TRUE(overlaps(late).empty());
}

// The holders' listing with no device size of its own; the size from a
// second query beside it (modelled on ros darknet_ros threads of YOLO failing
// beside the Gazebo simulator; our own pids and sizes): the simulator's
// half of a 4 GiB card is another process's doing.
TEST(DeviceHolders, TheDevicesSizeFromAnotherQueryWeighsTheHolders) {
  const std::string log =
      "CUDA Error: out of memory\n"
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
      "pid, process_name, used_memory [MiB]\n"
      "2210, gzserver, 1380 MiB\n"
      "2233, gzclient, 520 MiB\n"
      "$ nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader\n"
      "GeForce GTX 1050, 3890 MiB, 4042 MiB\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::other_process);
  // Without the device's size, 1.86 GiB is not enough to say.
  EXPECT_NE(test::diagnose_text(log.substr(0, log.find("$ nvidia-smi --query-gpu"))).cause, Cause::other_process);
}

// RETURNN restarted its training after a crash; PyTorch's message names the
// crashed run's PID as the one holding the device.
const std::string kRestart =
    "RETURNN train proc manager: training process exited with code -6, restarting (attempt 2/3)\n"
    "MEMORY: proc python(318842) exited, old: rss=4.1GB pss=3.6GB uss=3.5GB shared=402.7MB\n"
    "RETURNN starting up, version 1.20250301.101010+git.1a2b3c4, pid 340117\n"
    "ep 12 train, step 0, ce 0.733, num_seqs 40, mem_usage:cuda:0 12.1GB\n"
    "Exception occurred: OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity "
    "of 39.39 GiB of which 118.00 MiB is free. Process 318842 has 27.90 GiB memory in use. Including non-PyTorch memory, "
    "this process has 11.33 GiB memory in use. Of the allocated memory 10.70 GiB is allocated by PyTorch, and 211.52 MiB "
    "is reserved by PyTorch but unallocated.\n";

TEST(DeviceHolders, ACrashedRunStillNamedInPyTorchsHolderListIsALeftoverCopy) {
  auto f = overlaps(kRestart);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pid, 318842);
  Diagnosis d = test::diagnose_text(kRestart);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

// A vLLM server started again while the earlier one, serving the same model,
// still runs.
const std::string kSameModel =
    "$ vllm serve mistralai/Mistral-7B-Instruct-v0.3 --port 8100 --gpu-memory-utilization 0.85\n"
    "ERROR 02-14 11:20:05 [core.py:515] ValueError: Free memory on device (3.02/44.52 GiB) on startup is less than "
    "desired GPU memory utilization (0.85, 37.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by "
    "other processes.\n"
    "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
    "pid, process_name, used_memory [MiB]\n"
    "1184420, python3, 39874 MiB\n"
    "$ ps -o pid,lstart,cmd -p 1184420\n"
    "    PID                  STARTED CMD\n"
    "1184420 Fri Feb 14 09:02:51 2025 python3 -m vllm.entrypoints.openai.api_server --model "
    "mistralai/Mistral-7B-Instruct-v0.3 --port 8100\n";

TEST(DeviceHolders, AHolderServingTheModelTheFailingStartNamesIsAnEarlierCopy) {
  auto f = overlaps(kSameModel);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("mistralai/Mistral-7B-Instruct-v0.3"), std::string::npos) << f[0].detail;
  EXPECT_EQ(test::diagnose_text(kSameModel).cause, Cause::deployment_overlap);
  // Another model in the holder's command line: a neighbour.
  std::string other = kSameModel;
  other.replace(other.rfind("mistralai/Mistral-7B-Instruct-v0.3"), 34, "Qwen/Qwen2.5-14B-Instruct-AWQ-xxxx");
  EXPECT_TRUE(overlaps(other).empty());
  EXPECT_EQ(test::diagnose_text(other).cause, Cause::other_process);
}

// Two ps rows of one running server (its tensor-parallel workers) name one
// model between them; the start that failed names another (modelled on
// vllm-project/vllm#1792; our PIDs and sizes): a second service beside the
// first, not a copy of it. A row is no start.
TEST(DeviceHolders, TwoRowsOfOneServerAreNoStartOfTheFailingModel) {
  const std::string text =
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
      "pid, process_name, used_memory [MiB]\n"
      "52210, python, 21480 MiB\n"
      "52277, python, 21466 MiB\n"
      "$ ps -o pid,args -p 52210,52277\n"
      "    PID COMMAND\n"
      "  52210 python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct -tp 2 --port 8001\n"
      "  52277 python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct -tp 2 --port 8001\n"
      "$ python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-32B-Instruct-AWQ -tp 2 --port 8002\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 352.00 MiB (GPU 0; 23.69 GiB total capacity; "
      "1.38 GiB already allocated; 150.56 MiB free; 1.41 GiB reserved in total by PyTorch)\n";
  EXPECT_TRUE(overlaps(text).empty());
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::other_process);
}

// A training run that failed at once because an earlier run of the very
// same command, orphaned (PPID 1), still holds the GPU (modelled on
// pytorch/pytorch#4031; values ours). The prompt came back after the failure,
// so the failing run had ended: the holder is the earlier one. Without the
// prompt coming back, the holder could be the failing run itself.
TEST(DeviceHolders, AHolderRunningTheCommandTypedBeforeTheFailureIsAnEarlierRun) {
  const std::string run =
      "$ python train.py --arch resnet18 --batch-size 128 /data/places\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 102, in main\n"
      "    model = model.cuda()\n"
      "RuntimeError: CUDA error: out of memory\n";
  const std::string smi =
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
      "pid, process_name, used_memory [MiB]\n"
      "30417, python, 10877 MiB\n";
  const std::string ps =
      "$ ps -o pid,ppid,lstart,cmd -p 30417\n"
      "  PID  PPID                  STARTED CMD\n"
      "30417     1 Mon Mar  3 09:12:40 2025 python train.py --arch resnet18 --batch-size 128 /data/places\n";
  auto f = overlaps(run + smi + ps);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pid, 30417);
  EXPECT_EQ(test::diagnose_text(run + smi + ps).cause, Cause::deployment_overlap);
  // No prompt between the failure and the row: nothing says the failing run ended.
  std::string rows_only = run + "pid, process_name, used_memory [MiB]\n30417, python, 10877 MiB\n" +
                          "  PID  PPID                  STARTED CMD\n"
                          "30417     1 Mon Mar  3 09:12:40 2025 python train.py --arch resnet18 --batch-size 128 /data/places\n";
  EXPECT_TRUE(overlaps(rows_only).empty());
  // Another command in the holder's row: a neighbour.
  std::string other = run + smi + ps;
  other.replace(other.rfind("resnet18"), 8, "resnet50");
  EXPECT_TRUE(overlaps(other).empty());
}

// Holders a ps row shows dead or orphaned, and a run typed again while the
// earlier one was alive (modelled on apache/mxnet#4242 and
// Megvii-BaseDetection/YOLOX#958; values ours): each is left by an earlier
// run. A daemon's ordinary child (PPID its server) is not.
TEST(DeviceHolders, AZombieAnOrphanedWorkerOrARunStartedAgainIsLeftOver) {
  const std::string smi =
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
      "pid, process_name, used_memory [MiB]\n"
      "40112, python, 9120 MiB\n";
  const std::string fail =
      "$ python fit.py --epochs 30 --batch-size 64 --data /srv/shards\n"
      "Traceback (most recent call last):\n"
      "  File \"fit.py\", line 88, in <module>\n"
      "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 11.91 GiB total capacity; 1.02 GiB already "
      "allocated; 310.19 MiB free; 1.10 GiB reserved in total by PyTorch)\n";
  auto ps = [](const std::string& row) { return "$ ps -o pid,ppid,stat,lstart,cmd -p 40112\n  PID  PPID STAT                  STARTED CMD\n" + row + "\n"; };
  const std::string zombie = ps("40112     1 Zl   Tue Mar  4 21:12:40 2025 [python] <defunct>");
  EXPECT_EQ(overlaps(smi + zombie + fail).size(), 1u);
  const std::string orphan =
      ps("40112     1 Sl   Tue Mar  4 21:12:40 2025 /opt/conda/bin/python -c from multiprocessing.spawn import spawn_main; "
         "spawn_main(tracker_fd=5, pipe_handle=11) --multiprocessing-fork");
  EXPECT_EQ(overlaps(smi + orphan + fail).size(), 1u);
  const std::string again = ps("40112  3301 Sl   Tue Mar  4 21:12:40 2025 python fit.py --epochs 30 --batch-size 64 --data /srv/shards");
  auto f = overlaps(smi + again + fail);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("typed again"), std::string::npos) << f[0].detail;
  EXPECT_EQ(test::diagnose_text(smi + again + fail).cause, Cause::deployment_overlap);
  const std::string child = ps("40112  3301 Sl   Tue Mar  4 21:12:40 2025 /usr/lib/ollama/runner --model /m/blob --port 40917");
  EXPECT_TRUE(overlaps(smi + child + fail).empty());
}

// The API server was killed; its EngineCore child stayed and holds the GPU
// when the server is started again.
const std::string kOrphan =
    "$ kill 90211\n"
    "$ nvidia-smi\n"
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
    "|=========================================================================================|\n"
    "|    0   N/A  N/A           90377      C   VLLM::EngineCore                      70112MiB |\n"
    "+-----------------------------------------------------------------------------------------+\n"
    "$ vllm serve /models/llama-3.1-8b --max-model-len 32768\n"
    "(EngineCore_0 pid=91540) ERROR 05-03 10:02:11 [core.py:708] EngineCore failed to start.\n"
    "(EngineCore_0 pid=91540) ERROR 05-03 10:02:11 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. Tried to "
    "allocate 1.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 640.00 MiB is free. Process 90377 has 68.47 GiB "
    "memory in use. Including non-PyTorch memory, this process has 9.98 GiB memory in use.\n";

TEST(DeviceHolders, TheFailingEnginesOwnProcessLeftByAStopIsALeftoverCopy) {
  auto f = overlaps(kOrphan);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pid, 90377);
  EXPECT_EQ(f[0].process, "VLLM::EngineCore");
  EXPECT_EQ(test::diagnose_text(kOrphan).cause, Cause::deployment_overlap);
}

TEST(DeviceHolders, AnEngineProcessWithNoStopBeforeTheFailureIsANeighbour) {
  // Two servers of one engine may share a device by design: without a stop,
  // the other EngineCore is another process, not a leftover.
  std::string shared = kOrphan.substr(kOrphan.find('\n') + 1);
  EXPECT_TRUE(overlaps(shared).empty());
  Diagnosis d = test::diagnose_text(shared);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::other_process);
}

TEST(DeviceHolders, TheFailingProcessIsNeverItsOwnLeftover) {
  // nvidia-smi lists the failing EngineCore itself (its PID tags the failure's
  // lines) beside the test harness that holds the rest: no leftover, even
  // after a stop.
  std::string own =
      "$ kill 12001\n"
      "(EngineCore_DP0 pid=74418) ERROR 01-29 22:42:09 [core.py:708] ValueError: Free memory on device cuda:0 "
      "(30.41/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB).\n"
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
      "pid, process_name, used_memory\n"
      "74102, /opt/venv/bin/python3 -m pytest tests/e2e, 48742 MiB\n"
      "74418, VLLM::EngineCore, 1512 MiB\n";
  EXPECT_TRUE(overlaps(own).empty());
}

TEST(DeviceHolders, ASmallHolderDecidesNothing) {
  std::string small = kGunicorn;
  small.replace(small.rfind("15110 MiB"), 9, "310 MiB");
  EXPECT_TRUE(overlaps(small).empty());
}

}  // namespace
}  // namespace aimem
