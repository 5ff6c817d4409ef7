// Failures that name no memory (src/recognize/families/failure_markers.cc):
// the answer only when nothing else in the evidence is a failure. Lines in
// the programs' own formats with our own values, modelled on the corpus
// cases nm-031 (a container killed after its grace period, containerd's
// "Kill container"), nm-039 and nm-040 (gRPC / HTTP deadlines) and sv-093
// (TVM's "Check failed" in mlc-llm).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(FailureMarkers, AloneTheyAreAWeakNotMemoryAnswer) {
  for (const char* log : {
           "$ ollama pull qwen2.5:7b\npulling manifest\nError: pull model manifest: Get \"https://registry.ollama.ai/v2/"
           "library/qwen2.5/manifests/7b\": context deadline exceeded\n",
           "Traceback (most recent call last):\n  File \"serve.py\", line 41, in <module>\n    cfg = load(args.config)\n"
           "KeyError: 'max_model_len'\n",
           "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n",
           "[07:12:44] memory_manager.cc:115: InternalError: Check failed: (offset + needed_size <= this->buffer.size) "
           "is false: storage allocation failure\n",
           "Sep 23 07:45:12 node-7 containerd[1130]: time=\"2024-09-23T07:45:12.418Z\" level=info msg=\"Kill container "
           "\\\"b2f7d0c91e3a\\\"\"\n",
           // glibc finding its heap damaged: a bug, though the allocator's name is in the line.
           "Fatal glibc error: malloc.c:2599 (sysmalloc): assertion failed: (old_top == initial_top (av) && old_size == 0) || "
           "((unsigned long) (old_size) >= MINSIZE && prev_inuse (old_top))\n",
       }) {
    Diagnosis d = test::diagnose_text(log);
    EXPECT_EQ(d.layer, Layer::not_memory) << log;
    EXPECT_EQ(d.cause, Cause::not_memory) << log;
    EXPECT_LT(d.confidence, 0.5f) << "a marker says only that something failed: " << log;
  }
}

TEST(FailureMarkers, BesideAMemoryFailureTheyAreContext) {
  // A Python traceback that ends in a CUDA OOM: one incident, the OOM's.
  Diagnosis d = test::diagnose_text(
      "Traceback (most recent call last):\n  File \"train.py\", line 88, in step\n    loss.backward()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB "
      "of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.52 GiB memory in use. Of the "
      "allocated memory 20.90 GiB is allocated by PyTorch, and 1.12 GiB is reserved by PyTorch but unallocated.\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  ASSERT_EQ(d.incidents.size(), 1u);
  // A kernel OOM kill far from a CLI error in the same paste: still the only incident.
  std::string far = "Error: connection refused\n";
  for (int i = 0; i < 300; ++i) far += "INFO step " + std::to_string(i) + " ok\n";
  far += "Out of memory: Killed process 4242 (python3) total-vm:9000000kB, anon-rss:8000000kB, file-rss:0kB, "
         "shmem-rss:0kB, UID:0 pgtables:16000kB oom_score_adj:0\n";
  Diagnosis k = test::diagnose_text(far);
  EXPECT_EQ(k.layer, Layer::host_ram);
  EXPECT_EQ(k.incidents.size(), 1u);
}

TEST(FailureMarkers, AdviceAndMidLineWordsAreNotFailures) {
  EXPECT_TRUE(test::diagnose_text("If you see 'context deadline exceeded', raise --timeout.\n").incidents.empty());
  EXPECT_TRUE(test::diagnose_text("INFO retry policy: on Error: back off 2s\nINFO served 200 requests\n").incidents.empty());
}

// The open-file limit and Lambda's mid-request exit name no memory (modelled
// on CherryHQ/cherry-studio#2544 and CU-CloudCollab/aws-examples#10; our own
// paths and ids): a look-alike, not "none". Lambda's exit at the function's
// memory size is still the platform's memory kill.
TEST(FailureMarkers, OpenFilesAndALambdaExitAreNamed) {
  Diagnosis files = test::diagnose_text(
      "[2025-03-02 16:14:09.907] [error] [KnowledgeService] add item failed: Error: EMFILE: too many open files, open '/home/a/n.md'\n");
  EXPECT_EQ(files.layer, Layer::not_memory);
  const std::string report = "REPORT RequestId: 7d2e1c90\tDuration: 87.41 ms\tBilled Duration: 100 ms\tMemory Size: 256 MB\tMax Memory Used: ";
  Diagnosis low = test::diagnose_text("TypeError: Cannot read property 'Records' of undefined\n" + report +
                                      "41 MB\t\nRequestId: 7d2e1c90 Process exited before completing request\n");
  EXPECT_EQ(low.layer, Layer::not_memory);
  Diagnosis full = test::diagnose_text(report + "256 MB\t\nRequestId: 7d2e1c90 Process exited before completing request\n");
  EXPECT_EQ(full.layer, Layer::container_limit);
}

// V8's limit on one string's length (modelled on n8n-io/n8n#21746: a huge
// execution stringified for the database; values ours) is no heap
// exhaustion; beside a real heap failure it is context.
TEST(FailureMarkers, V8sMaximumStringLengthIsNotTheHeap) {
  const std::string range =
      "2025-06-02T10:41:08.118Z | error | Saving execution failed RangeError: Invalid string length\n"
      "    at JSON.stringify (<anonymous>)\n"
      "    at ExecutionRepository.updateExistingExecution (/app/dist/repositories/execution.repository.js:311:39)\n";
  Diagnosis d = test::diagnose_text(range);
  EXPECT_EQ(d.layer, Layer::not_memory);
  Diagnosis heap = test::diagnose_text(range + "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
  EXPECT_EQ(heap.layer, Layer::js_heap);
}

// Go spells the full disk in lower case; a pod's exit 1 beside it, with no
// memory failure anywhere, ended for the disk (modelled on
// prometheus/prometheus#7627; our pod and times). An exit 137 beside the same
// line stays a kill whose sender is not shown.
TEST(FailureMarkers, AnExitThatIsNoKillBesideAFullDiskEndedForTheDisk) {
  const std::string marker =
      "level=error ts=2021-02-03T11:40:12.118Z caller=main.go:764 err=\"opening storage failed: open /prometheus/wal/00000412: "
      "no space left on device\"\n";
  auto m = test::facts_of_kind(marker, FactKind::not_memory_failure);
  ASSERT_EQ(m.size(), 1u);
  const std::string pod = "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    ";
  Diagnosis one = test::diagnose_text(pod + "1\n" + marker);
  EXPECT_EQ(one.layer, Layer::not_memory);
  EXPECT_NE(test::reason_text(one).find("no space left on device"), std::string::npos) << test::reason_text(one);
  EXPECT_NE(test::diagnose_text(pod + "137\n" + marker).layer, Layer::not_memory);
}

// The kernel's record of a segmentation fault beside an exit 139 (modelled
// on an ECS image-resizing task; our ids and addresses): a crash, not memory.
TEST(FailureMarkers, TheKernelsSegfaultRecordIsACrash) {
  const std::string line =
      "[Thu Mar  2 10:21:07 2023] thumbnailer[31877]: segfault at 0 ip 00007f3b2a1c4e3a sp 00007ffd6b1e9a20 error 4 in "
      "libvips.so.42.17.1[7f3b2a0e5000+2b1000]\n";
  auto m = test::facts_of_kind(line, FactKind::not_memory_failure);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].detail.find("segmentation fault"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(line).layer, Layer::not_memory);
}

// pickle's limit on one object before protocol 4, as a Celery worker logs a
// task whose result was too large to send back (modelled on an OpenQuake
// calculation's worker log of 2018; our task id): a format's limit.
TEST(FailureMarkers, PicklesFourGibLimitIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "[2018-07-24 21:47:19,083: ERROR/ForkPoolWorker-11] Task calc.safely_call[7c2e90b1] raised unexpected: "
      "OverflowError('cannot serialize a bytes object larger than 4 GiB',)\n");
  EXPECT_EQ(d.layer, Layer::not_memory) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("pickle"), std::string::npos);
}

// Limits that are no memory, named for what they are: Rust's capacity
// overflow in a search engine's panic hook (modelled on qdrant/qdrant's
// estimator panic), a serverless bundle over its size limit (vercel/vercel's
// dev server), a hosted API's model-size policy (huggingface_hub's inference
// client), gRPC's message cap in Python's client words (triton-inference-
// server/server's client), an edge runtime's CPU-time budget (supabase/
// edge-runtime). Our own names and figures.
TEST(FailureMarkers, SizeCapsOverflowsAndCpuTimeAreNotMemory) {
  const char* cases[][2] = {
      {"2026-02-11T09:14:22.118503Z ERROR vecdb::startup: Panic occurred in file library/alloc/src/raw_vec/mod.rs at line 28: "
       "capacity overflow\n",
       "capacity overflow"},
      {"LambdaSizeExceededError: The lambda function size (71.4mb) exceeds the maximum size limit (50mb).\n  code: "
       "'MAX_LAMBDA_SIZE_EXCEEDED',\n",
       "size limit"},
      {"ValueError: Error occured when fetching info: {'error': 'The model acme/chat-13b is too large to be loaded automatically "
       "(26GB > 10GB).'}\n",
       "size limit"},
      {"tritonclient.utils.InferenceServerException: [StatusCode.RESOURCE_EXHAUSTED] Received message larger than max (6291456 vs. "
       "4194304)\n",
       "message"},
      {"[Info] embedded section 12/40\nCPU time hard limit reached: isolate: 1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\nshutdown (reason: "
       "CPU time limit reached)\n",
       "time limit"},
  };
  for (const auto& c : cases) {
    Diagnosis d = test::diagnose_text(c[0]);
    EXPECT_EQ(d.layer, Layer::not_memory) << c[0] << test::reason_text(d);
    EXPECT_NE(test::reason_text(d).find(c[1]), std::string::npos) << test::reason_text(d);
  }
  // Rust's own allocation failure is memory.
  EXPECT_NE(test::diagnose_text("memory allocation of 34359738368 bytes failed\nAborted (core dumped)\n").layer, Layer::not_memory);
}

// Windows resetting the GPU (modelled on microsoft/tensorflow-directml-plugin's
// DXGI_ERROR_DEVICE_REMOVED reports beside the event log's TDR record), a
// server's connection limit (modelled on langgenius/dify's Postgres behind
// docker compose) and Elasticsearch's flood-stage watermark are not memory.
// Our own names and figures.
TEST(FailureMarkers, ADeviceResetAConnectionLimitAndAFullDiskAreNamed) {
  const char* cases[][2] = {
      {"2023-03-02 21:10:41.903357: E tensorflow/c/logging.cc:40] The DirectML device has encountered an unrecoverable error "
       "(DXGI_ERROR_DEVICE_REMOVED). This is most often caused by a timeout occurring on the GPU.\n"
       "Message      : Display driver nvlddmkm stopped responding and has successfully recovered.\n",
       "DXGI_ERROR_DEVICE_REMOVED"},
      {"db-1   | 2026-03-11 08:02:05.214 UTC [4412] FATAL:  sorry, too many clients already\n"
       "db-1   | 2026-03-11 08:02:05.691 UTC [4419] FATAL:  sorry, too many clients already\n",
       "connection limit"},
      {"[2024-02-01T10:12:44,118][WARN ][o.e.c.r.a.DiskThresholdMonitor] [es-0] flood stage disk watermark [95%] exceeded on "
       "[es-0][/usr/share/elasticsearch/data] free: 4.1gb[4.2%], all indices on this node will be marked read-only\n",
       "disk"},
  };
  for (const auto& c : cases) {
    Diagnosis d = test::diagnose_text(c[0]);
    EXPECT_EQ(d.layer, Layer::not_memory) << c[0] << test::reason_text(d);
    EXPECT_NE(test::reason_text(d).find(c[1]), std::string::npos) << test::reason_text(d);
  }
}

// Kubernetes' scheduler finding no node for a pod for want of a GPU is not
// memory (modelled on a rollout stuck behind `FailedScheduling ... Insufficient
// nvidia.com/gpu`, kubernetes/kubernetes scheduling threads; our own names).
// For want of memory it is left to the rest of the paste: requests that fill
// the nodes are a memory story, not a look-alike.
TEST(FailureMarkers, APodTheSchedulerCouldNotPlaceForAGpuIsNotMemory) {
  auto event = [](const char* lacking) {
    return std::string("Events:\n  Type     Reason            Age   From               Message\n"
                       "  Warning  FailedScheduling  12m   default-scheduler  0/4 nodes are available: 2 ") +
           lacking + ", 2 node(s) had untolerated taint {role: infra}. preemption: 0/4 nodes are available: 4 No preemption "
                     "victims found for incoming pod.\n";
  };
  Diagnosis gpu = test::diagnose_text(event("Insufficient nvidia.com/gpu"));
  EXPECT_EQ(gpu.layer, Layer::not_memory) << test::reason_text(gpu);
  EXPECT_NE(test::reason_text(gpu).find("FailedScheduling"), std::string::npos);
  EXPECT_NE(test::diagnose_text(event("Insufficient memory")).layer, Layer::not_memory);
}

// The kernel's hung-task watchdog (modelled on infiniswap's remote-paging
// stalls), a memory module's corrected errors (EDAC, as rasdaemon threads
// show them) and the dynamic linker failing on a library (modelled on
// opensearch-project/ml-commons' DJL native library mismatch) name what
// failed; none of them is memory running out. Our own hosts and figures.
TEST(FailureMarkers, AHungTaskAFaultyModuleAndAMissingSymbolAreNamed) {
  const char* cases[][2] = {
      {"[ 3120.551201] INFO: task trainer:4412 blocked for more than 120 seconds.\n"
       "[ 3120.551240]       Not tainted 5.15.0-91-generic #101-Ubuntu\n",
       "hung in the kernel"},
      {"Jun  2 04:10:11 gpu-07 kernel: EDAC MC1: 2 CE error on CPU#1Channel#0_DIMM#0 (channel:0 slot:0 page:0x0 offset:0x0 grain:8)\n"
       "Jun  2 04:10:19 gpu-07 kernel: EDAC MC1: 1 CE error on CPU#1Channel#0_DIMM#0 (channel:0 slot:0 page:0x0 offset:0x0 grain:8)\n",
       "faulty DIMM"},
      {"/usr/bin/python3: symbol lookup error: /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
       "cudaGraphInstantiateWithFlags, version libcudart.so.12\n",
       "dynamic linker"},
  };
  for (const auto& c : cases) {
    Diagnosis d = test::diagnose_text(c[0]);
    EXPECT_EQ(d.layer, Layer::not_memory) << c[0] << test::reason_text(d);
    EXPECT_NE(test::reason_text(d).find(c[1]), std::string::npos) << test::reason_text(d);
  }
  // Beside a real OOM kill, the kill is the answer.
  Diagnosis kill = test::diagnose_text(std::string(cases[0][0]) +
                                       "[ 3190.101010] Out of memory: Killed process 4412 (trainer) total-vm:41248120kB, anon-rss:30412004kB, "
                                       "file-rss:0kB, shmem-rss:0kB\n");
  EXPECT_EQ(kill.layer, Layer::host_ram) << test::reason_text(kill);
}

// Windows' fail-fast of native code (0xC0000409) and Android's SIGILL
// tombstone name a crash (modelled on SYSTRAN/faster-whisper reports on
// Windows and flutter llama.cpp bindings on older ARM cores; our own paths).
// After a real allocation failure the fail-fast is only how the process ended.
TEST(FailureMarkers, AFailFastAndAnIllegalInstructionAreCrashes) {
  Diagnosis fast = test::diagnose_text("Windows fatal exception: code 0xc0000409\n\nExit code: -1073740791 (0xC0000409)\n");
  EXPECT_EQ(fast.layer, Layer::not_memory) << test::reason_text(fast);
  EXPECT_NE(test::reason_text(fast).find("fail-fast"), std::string::npos);
  Diagnosis ill = test::diagnose_text(
      "F/libc    ( 9716): Fatal signal 4 (SIGILL), code 1 (ILL_ILLOPC), fault addr 0x00000073c9f7ec48 in tid 18157 (DartWorker)\n");
  EXPECT_EQ(ill.layer, Layer::not_memory) << test::reason_text(ill);
  Diagnosis oom = test::diagnose_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.99 GiB of which "
      "1.02 GiB is free.\nWindows fatal exception: code 0xc0000409\n");
  EXPECT_EQ(oom.layer, Layer::gpu_vram) << test::reason_text(oom);
  // A GPU feature a vGPU or MIG profile lacks (modelled on triton-inference-server
  // on vGPU slices; our model names).
  Diagnosis stream = test::diagnose_text(
      "E0214 07:41:55.418336 1 backend_model.cc:691] ERROR: Failed to create instance: unable to create stream: operation not supported\n");
  EXPECT_EQ(stream.layer, Layer::not_memory) << test::reason_text(stream);
}

}  // namespace
}  // namespace aimem
