// The generic layer under the families (families/generic_alloc.cc): stacks no
// family knows still give a memory verdict, with the pool read from the
// accelerator or host allocator named in the line or the lines around it; a
// family's own fact shadows it; mentions and advice do not fire.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

const Fact* failure(const Diagnosis& d) {
  for (const Fact& f : d.facts)
    if (is_failure(f.kind)) return &f;
  return nullptr;
}

// "out of" and "memory" with several words between that say whose (modelled
// on Blender Cycles' cancel as a writer of the forty-fifth batch rendered it;
// values ours): the pool from those words; one word alone, or words that are
// not about memory, are no such phrase.
TEST(GenericAlloc, OutOfMemoryWithSeveralWordsBetweenNamesThePool) {
  Diagnosis gpu = test::diagnose_text(
      "Fra:1 Mem:18245.60M (Peak 23433.50M) | Time:00:49.30 | Mem:11187.45M, Peak:11187.45M | Scene, ViewLayer | Cancel | "
      "System is out of GPU and shared host memory\nError: System is out of GPU and shared host memory\n");
  EXPECT_EQ(gpu.layer, Layer::gpu_vram);
  Diagnosis host = test::diagnose_text("renderd: job 12 aborted: the node is out of physical and virtual memory\n");
  EXPECT_EQ(host.layer, Layer::host_ram);
  EXPECT_EQ(failure(test::diagnose_text("warning: we ran out of patience and memory checks were skipped\n")), nullptr);
  // Seastar's start-up check (Scylla in a small VM; modelled on a compose
  // stack's scylla service, our own figures): "insufficient physical memory".
  Diagnosis seastar = test::diagnose_text(
      "scylla-1  | Could not initialize seastar: std::runtime_error (insufficient physical memory: needed 1073741824 available "
      "398458880)\nscylla-1 exited with code 1\n");
  EXPECT_EQ(seastar.layer, Layer::host_ram);
}

// Modelled on PaddlePaddle/PaddleOCR#645 and PaddlePaddle/Paddle#42228 (Paddle's
// allocator, which no family reads); our own sizes.
TEST(GenericAlloc, PaddleDeviceOutOfMemoryIsGpuVram) {
  Diagnosis d = test::diagnose_text(
      "----------------------\n"
      "Error Message Summary:\n"
      "----------------------\n"
      "ResourceExhaustedError: \n"
      "\n"
      "Out of memory error on GPU 0. Cannot allocate 2.250000GB memory on GPU 0, 13.400391GB memory has been allocated and "
      "available memory is only 301.500000MB.\n"
      "\n"
      "Please check whether there is any other process using GPU 0.\n"
      "1. If yes, please stop them, or start PaddlePaddle on another GPU.\n"
      "2. If no, please decrease the batch size of your model.\n"
      " (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:86)\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  const Fact* f = failure(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->family, Family::generic);
  EXPECT_EQ(f->kind, FactKind::gpu_oom);
  ASSERT_TRUE(f->requested);
  EXPECT_EQ(*f->requested, 2415919104u);  // 2.25 GiB
}

// Modelled on apache/mxnet#17331 (pooled storage manager): the device is named
// only by cudaMalloc in the failing line.
TEST(GenericAlloc, DeviceNamedByCudaMallocInTheLine) {
  Diagnosis d = test::diagnose_text(
      "terminate called after throwing an instance of 'dmlc::Error'\n"
      "  what():  [14:02:51] src/storage/./pooled_storage_manager.h:157: cudaMalloc retry failed: out of memory\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  // The CUDA driver API's allocation, cuMemAlloc, names the device as well.
  EXPECT_EQ(test::diagnose_text("cuMemAlloc failed: out of memory\n").layer, Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("Error: cuMemAllocManaged(&ptr, 8589934592) returned out of memory\n").layer, Layer::gpu_vram);
}

// The device is named only in the frames above the error (a Python traceback
// through a CUDA extension), modelled on facebookresearch/detectron2#1409.
TEST(GenericAlloc, DeviceNamedInTheFramesAbove) {
  Diagnosis d = test::diagnose_text(
      "Traceback (most recent call last):\n"
      "  File \"tools/train_net.py\", line 161, in main\n"
      "    return trainer.train()\n"
      "  File \"/opt/conda/lib/python3.8/site-packages/mylib/layers/deform_conv.py\", line 77, in forward\n"
      "    _C.deform_conv_forward_cuda(input, weight, offset, output, columns, ones)\n"
      "RuntimeError: NOT_ENOUGH_SPACE: failed to allocate 402653184 bytes for the column buffer\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

// git's own allocator wrapper (git/git wrapper.c "Out of memory, malloc failed"):
// no device anywhere, so the host.
TEST(GenericAlloc, HostAllocatorWithoutDeviceIsHostRam) {
  Diagnosis d = test::diagnose_text(
      "remote: Counting objects: 1403117, done.\n"
      "fatal: Out of memory, malloc failed (tried to allocate 1073741825 bytes)\n"
      "fatal: index-pack failed\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  const Fact* f = failure(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, FactKind::host_alloc_failure);
}

// A family's own fact (PyTorch's message) shadows the generic reading of the
// same lines: one failure, read by the family with its numbers.
TEST(GenericAlloc, ShadowedByAFamilyFact) {
  Diagnosis d = test::diagnose_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.65 GiB of "
      "which 101.06 MiB is free. Including non-PyTorch memory, this process has 23.54 GiB memory in use. Of the allocated "
      "memory 22.90 GiB is allocated by PyTorch, and 190.21 MiB is reserved by PyTorch but unallocated.\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  for (const Fact& f : d.facts) EXPECT_NE(f.family, Family::generic) << f.text;
}

TEST(GenericAlloc, AdviceAndQuestionsDoNotFire) {
  Diagnosis d = test::diagnose_text(
      "If you run out of memory, lower --batch-size or enable gradient checkpointing.\n"
      "Why does the loader fail to allocate memory on a 16 GB box?\n"
      "To avoid out of memory errors set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
  EXPECT_EQ(d.layer, Layer::none);
}

// A handled OOM (fairseq's trainer, facebookresearch/fairseq#1413): the program
// caught it and went on, so it is a warning and not the failure.
TEST(GenericAlloc, HandledOutOfMemoryIsAWarningNotTheVerdict) {
  Diagnosis d = test::diagnose_text(
      "2024-03-02 11:20:01 | INFO | train | epoch 003 | loss 4.112 | wps 51234\n"
      "2024-03-02 11:20:05 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. Tried to "
      "allocate 1.20 GiB (GPU 0; 15.78 GiB total capacity; 13.02 GiB already allocated; 902.75 MiB free; 14.11 GiB reserved in "
      "total by PyTorch)\n"
      "2024-03-02 11:20:05 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass\n"
      "2024-03-02 11:31:44 | INFO | train | epoch 004 | loss 3.981 | wps 50871\n"
      "2024-03-02 12:02:10 | INFO | fairseq_cli.train | done training in 4120.3 seconds\n");
  EXPECT_EQ(d.layer, Layer::none);
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_NE(d.warnings.front().find("handled out-of-memory"), std::string::npos);
}

// An application log whose memory figures only climb, then a SIGKILL: the
// series decides leak_or_accumulation (modelled on langchain-ai/langchainjs#2714,
// an indexer printing process.memoryUsage()).
TEST(MemorySeries, ClimbingFiguresBeforeAKillAreALeak) {
  Diagnosis d = test::diagnose_text(
      "[indexer] batch 10 rss=612MB heapUsed=401MB external=22MB queueDepth=40\n"
      "[indexer] batch 20 rss=905MB heapUsed=688MB external=23MB queueDepth=81\n"
      "[indexer] batch 30 rss=1210MB heapUsed=979MB external=23MB queueDepth=119\n"
      "[indexer] batch 40 rss=1522MB heapUsed=1270MB external=24MB queueDepth=162\n"
      "[indexer] batch 50 rss=1830MB heapUsed=1555MB external=24MB queueDepth=199\n"
      "Killed\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  bool growing = false;
  for (const Fact& f : d.facts) growing |= f.kind == FactKind::memory_usage && f.detail.find("growing rss") == 0;
  EXPECT_TRUE(growing);
}

// Two more shapes a training or sampling loop prints (modelled on
// microsoft/DeepSpeed ZeRO-3 leak reports logging torch.cuda.memory_allocated
// per step, and on a shell loop over free; our own figures): a dotted metric's
// name then a size, and a used figure whose name carries its unit. A peak
// (max_memory_allocated) only rises and is no series; a disk's used_gb is no memory.
TEST(MemorySeries, ADottedAllocatorMetricAndAUsedFigureNamedWithItsUnit) {
  auto steps = [](const std::string& name) {
    std::string t;
    for (int i = 1; i <= 8; ++i) t += fmt::format("step {:4d} | loss 2.{} | {} {:.2f} GB | bsz 4\n", 50 * i, 9 - i, name, 1.6 + 0.85 * i);
    return t + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 394.00 MiB (GPU 0; 15.77 GiB total "
               "capacity; 14.31 GiB already allocated; 212.12 MiB free; 14.90 GiB reserved in total by PyTorch)\n";
  };
  Diagnosis gpu = test::diagnose_text(steps("cuda.memory_allocated"));
  EXPECT_EQ(gpu.cause, Cause::leak_or_accumulation) << test::reason_text(gpu);
  EXPECT_NE(test::diagnose_text(steps("cuda.max_memory_allocated")).cause, Cause::leak_or_accumulation);
  auto loop = [](const std::string& name) {
    std::string t = "$ while sleep 600; do free -m | awk 'NR==2{print \"" + name + "=\"$3}'; done\n";
    for (int i = 0; i < 9; ++i) t += fmt::format("{}={}\n", name, 3900 + 2215 * i);
    return t + "Killed\n";
  };
  Diagnosis host = test::diagnose_text(loop("used_mb"));
  EXPECT_EQ(host.cause, Cause::leak_or_accumulation) << test::reason_text(host);
  EXPECT_NE(test::diagnose_text(loop("disk_used_mb")).cause, Cause::leak_or_accumulation);
}

// airlift's GC monitor (modelled on trinodb/trino coordinator heap reports;
// our own figures): the heap after each major collection rising to the cap
// is accumulation; the same collections falling back to one floor are not.
TEST(MemorySeries, AirliftsMajorCollectionsRisingFloorIsAccumulation) {
  auto log = [](bool rising) {
    std::string t = "-Xmx20G\n";
    for (int i = 0; i < 8; ++i)
      t += fmt::format("2023-07-12T{:02d}:05:14.902Z\tINFO\tNotification Thread\tio.airlift.stats.JmxGcMonitor\tMajor GC: "
                       "application 3ms, stopped 1211ms: {:.2f}GB -> {:.2f}GB\n",
                       2 + 2 * i, 15.0 + 0.6 * i, rising ? 8.9 + 1.5 * i : 8.9 + (i % 2) * 0.3);
    return t + "java.lang.OutOfMemoryError: Java heap space\n";
  };
  Diagnosis up = test::diagnose_text(log(true));
  EXPECT_EQ(up.layer, Layer::jvm_heap);
  EXPECT_EQ(up.cause, Cause::leak_or_accumulation) << test::reason_text(up);
  EXPECT_NE(test::diagnose_text(log(false)).cause, Cause::leak_or_accumulation);
}

TEST(MemorySeries, SawtoothHeapIsNotGrowth) {
  Diagnosis d = test::diagnose_text(
      "gc stats heapUsed=410MB\n"
      "gc stats heapUsed=820MB\n"
      "gc stats heapUsed=405MB\n"
      "gc stats heapUsed=830MB\n"
      "gc stats heapUsed=398MB\n"
      "gc stats heapUsed=815MB\n");
  for (const Fact& f : d.facts) EXPECT_NE(f.kind, FactKind::memory_usage) << f.detail;
}

bool has_growing(const Diagnosis& d, std::string_view key) {
  for (const Fact& f : d.facts)
    if (f.kind == FactKind::memory_usage && f.detail.find("growing " + std::string(key)) == 0) return true;
  return false;
}

// What a collector leaves after each collection, rising toward the heap's
// size, is live data accumulating; the heap before collection is a sawtooth
// and says nothing (modelled on elastic/elasticsearch#17371's GC monitor and
// JDK 8 / unified GC logs; values ours).
TEST(MemorySeries, HeapAfterCollectionRisingIsAccumulation) {
  Diagnosis es = test::diagnose_text(
      "[2021-02-01T01:00:00,001][WARN ][o.e.m.j.JvmGcMonitorService] [n1] [gc][young][1001][11] duration [1.1s], collections [1]/[1.5s], "
      "total [1.1s]/[9m], memory [9.9gb]->[8.1gb]/[12gb], all_pools {[young] [1.9gb]->[10mb]/[0b]}\n"
      "[2021-02-01T03:00:00,001][WARN ][o.e.m.j.JvmGcMonitorService] [n1] [gc][young][8201][95] duration [2.0s], collections [1]/[2.4s], "
      "total [2.0s]/[11m], memory [11.0gb]->[9.6gb]/[12gb], all_pools {[young] [1.4gb]->[9mb]/[0b]}\n"
      "[2021-02-01T05:00:00,001][WARN ][o.e.m.j.JvmGcMonitorService] [n1] [gc][young][15401][170] duration [3.9s], collections [1]/[4.1s], "
      "total [3.9s]/[13m], memory [11.7gb]->[11.2gb]/[12gb], all_pools {[young] [0.5gb]->[8mb]/[0b]}\n"
      "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_TRUE(has_growing(es, "heap after GC"));
  EXPECT_EQ(es.cause, Cause::leak_or_accumulation);
  Diagnosis jdk8 = test::diagnose_text(
      "[GC (Allocation Failure) [PSYoungGen: 600000K->20000K(650000K)] 900000K->420000K(2000000K), 0.0500 secs]\n"
      "[GC (Allocation Failure) [PSYoungGen: 600000K->21000K(650000K)] 1300000K->820000K(2000000K), 0.0600 secs]\n"
      "[Full GC (Ergonomics) [PSYoungGen: 21000K->0K(650000K)] [ParOldGen: 1500000K->1350000K(1350000K)] 1521000K->1350000K(2000000K), 1.2 secs]\n"
      "[Full GC (Ergonomics) [PSYoungGen: 640000K->0K(650000K)] [ParOldGen: 1350000K->1349000K(1350000K)] 1990000K->1900000K(2000000K), 1.9 secs]\n"
      "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_TRUE(has_growing(jdk8, "heap after GC"));
  // JDK 8's ParallelGC prints the Metaspace's pair after the heap's, with the
  // largest capacity on the line: the heap's pair is read, not the last one
  // (whose flat figure once hid the heap's climb).
  Diagnosis meta = test::diagnose_text(
      "[Full GC (Ergonomics) [PSYoungGen: 30000K->0K(600000K)] [ParOldGen: 700000K->610000K(1400000K)] 730000K->610000K(2000000K), "
      "[Metaspace: 81000K->81000K(1124000K)], 0.9 secs]\n"
      "[Full GC (Ergonomics) [PSYoungGen: 40000K->0K(600000K)] [ParOldGen: 1010000K->990000K(1400000K)] 1050000K->990000K(2000000K), "
      "[Metaspace: 81000K->81000K(1124000K)], 1.4 secs]\n"
      "[Full GC (Ergonomics) [PSYoungGen: 45000K->0K(600000K)] [ParOldGen: 1390000K->1380000K(1400000K)] 1435000K->1380000K(2000000K), "
      "[Metaspace: 81000K->81000K(1124000K)], 1.9 secs]\n"
      "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_TRUE(has_growing(meta, "heap after GC"));
  // A heap that collects back to the same floor is healthy, however high it peaks.
  Diagnosis saw = test::diagnose_text(
      "[1.0s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 1800M->400M(2048M) 10.1ms\n"
      "[9.0s][info][gc] GC(2) Pause Young (Normal) (G1 Evacuation Pause) 1900M->410M(2048M) 11.2ms\n"
      "[17.0s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 1850M->405M(2048M) 10.7ms\n"
      "[25.0s][info][gc] GC(4) Pause Young (Normal) (G1 Evacuation Pause) 1950M->398M(2048M) 10.9ms\n");
  EXPECT_FALSE(has_growing(saw, "heap after GC"));
}

// ZGC's lines give each size with its share of the heap ("6418M(52%)->1884M(15%)",
// JDK 11+ unified logging; modelled on a bifromq thread's gc.log, own figures):
// the heap after each collection climbing is live data accumulating. jstat
// -gcutil's O column (the old generation's share used, JDK 8+; modelled on a
// Kafka Connect thread sampling it hourly) climbing to 100 is the same.
TEST(MemorySeries, ZgcSharesAndJstatGcutilClimbingAreAccumulation) {
  std::string zgc;
  const int after[] = {1884, 2287, 2790, 3309, 4117, 5233, 6402, 7581, 8877, 10742};
  for (int i = 0; i < 10; ++i)
    zgc += "[2025-05-20T10:0" + std::to_string(i) + ":00.000+0800][30530][gc] GC(" + std::to_string(1000 + i) +
           ") Garbage Collection (Allocation Rate) 9000M(73%)->" + std::to_string(after[i]) + "M(" + std::to_string(after[i] * 100 / 12288) +
           "%)\n";
  Diagnosis z = test::diagnose_text(zgc + "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_TRUE(has_growing(z, "heap after GC"));
  EXPECT_EQ(z.cause, Cause::leak_or_accumulation);
  const std::string gcutil =
      "$ jstat -gcutil -t 4711 3600000\n"
      "Timestamp         S0     S1     E      O      M     CCS    YGC     YGCT    FGC    FGCT     GCT\n"
      "         3600.2   0.00  12.51  43.18  36.20  96.31  92.80   1022   11.902     4    1.203   13.105\n"
      "        14400.9   0.00   9.87  71.02  58.93  96.33  92.80   4180   48.337    19    9.870   58.207\n"
      "        25201.3   0.00   0.00 100.00  86.45  96.35  92.81   7309   86.114    71   55.418  141.532\n"
      "        28802.6   0.00   0.00 100.00  99.97  96.35  92.81   8001   94.551   188  203.772  298.323\n";
  Diagnosis j = test::diagnose_text(gcutil + "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_TRUE(has_growing(j, "column O"));
  EXPECT_EQ(j.cause, Cause::leak_or_accumulation);
  // The old generation's share steady while Eden saws: nothing accumulates.
  const std::string steady =
      "S0     S1     E      O      M     CCS    YGC     YGCT    FGC    FGCT     GCT\n"
      "0.00  12.51  43.18  61.20  96.31  92.80   1022   11.902     4    1.203   13.105\n"
      "0.00   9.87  91.02  60.93  96.33  92.80   4180   48.337     4    1.203   58.207\n"
      "0.00   0.00  12.00  61.45  96.35  92.81   7309   86.114     4    1.203   87.317\n"
      "0.00   0.00  88.00  61.07  96.35  92.81   8001   94.551     4    1.203   95.754\n";
  EXPECT_FALSE(has_growing(test::diagnose_text(steady), "column O"));
}

// Three more shapes of a climbing series, each in its program's words with
// our own figures: a sampler logging a unit's cgroup file (modelled on a
// systemd service killed at MemoryMax every few days: "memory.current=1.26G"),
// Cassandra's GCInspector with the old generation before -> after in bytes
// (modelled on apache/cassandra users' system.log), and an application's own
// line that names memory and ends in a size (a Laravel queue worker's
// "memory after job N (...): 92.38 MB"). A figure that climbs while a model
// loads, mid-line ("used = 144 GB, percent = 60%"), is not such a line.
TEST(MemorySeries, CgroupFilesCassandraAndAppLinesClimbingAreASeries) {
  Diagnosis cg = test::diagnose_text(
      "2023-01-03T22:00 renderer.service memory.current=214M\n"
      "2023-01-04T10:00 renderer.service memory.current=541M\n"
      "2023-01-04T22:00 renderer.service memory.current=903M\n"
      "2023-01-05T10:00 renderer.service memory.current=1.26G\n");
  EXPECT_TRUE(has_growing(cg, "memory"));
  Diagnosis cass = test::diagnose_text(
      "INFO  [Service Thread] 2019-06-11 09:02:14,118 GCInspector.java:284 - ConcurrentMarkSweep GC in 208ms.  CMS Old Gen: 402115288 -> "
      "398740112; Par Eden Space: 83886080 -> 0;\n"
      "INFO  [Service Thread] 2019-06-14 11:47:31,560 GCInspector.java:284 - ConcurrentMarkSweep GC in 231ms.  CMS Old Gen: 655310872 -> "
      "651028440; Par Eden Space: 91120416 -> 0;\n"
      "INFO  [Service Thread] 2019-06-17 17:16:32,336 GCInspector.java:284 - ConcurrentMarkSweep GC in 264ms.  CMS Old Gen: 902118016 -> "
      "902097936; Par Eden Space: 143120352 -> 0;\n");
  EXPECT_TRUE(has_growing(cass, "heap after GC"));
  Diagnosis app = test::diagnose_text(
      "[2018-05-31 09:12:04] production.INFO: queue worker memory after job 1 (App\\Jobs\\Sync): 37.75 MB\n"
      "[2018-05-31 09:31:40] production.INFO: queue worker memory after job 400 (App\\Jobs\\Sync): 92.38 MB\n"
      "[2018-05-31 09:58:13] production.INFO: queue worker memory after job 900 (App\\Jobs\\Sync): 158.02 MB\n"
      "[2018-05-31 10:27:55] production.INFO: queue worker memory after job 1450 (App\\Jobs\\Sync): 229.61 MB\n");
  EXPECT_TRUE(has_growing(app, "figure in"));
  Diagnosis load = test::diagnose_text(
      "[INFO] [utils.py:789:see_memory_usage] CPU Virtual Memory:  used = 41.3 GB, percent = 16.4%\n"
      "[INFO] [utils.py:789:see_memory_usage] CPU Virtual Memory:  used = 144.2 GB, percent = 57.2%\n"
      "[INFO] [utils.py:789:see_memory_usage] CPU Virtual Memory:  used = 247.9 GB, percent = 98.4%\n");
  EXPECT_FALSE(has_growing(load, "figure in"));
}

// More shapes, each in its program's words with our own figures: MPS's
// current_allocated / driver_allocated as a training callback logs them
// (modelled on a smol-course thread on Apple silicon); `free` rows after the
// time a loop printed (modelled on a Superset thread: "date; free | grep
// Mem"); a figure after "offload", which is no load (modelled on a verl
// thread), where the same name in two sentences ("Before ...", "After ...")
// is two series, not one sawtooth.
TEST(MemorySeries, MpsKeysTimedFreeRowsAndOffloadPhrasesAreSeries) {
  std::string mps;
  for (int i = 1; i <= 5; ++i)
    mps += "[mem-callback] step=" + std::to_string(i * 100) + "  mps.current_allocated=" + std::to_string(3 * i) +
           ".10 GB  mps.driver_allocated=" + std::to_string(4 * i + 2) + ".20 GB\n";
  EXPECT_TRUE(has_growing(test::diagnose_text(mps), "currentallocated"));
  Diagnosis freeloop = test::diagnose_text(
      "Mon Sep 11 10:41:20 CEST 2017   Mem:       3880472    1204480    2675992       2604       6120     214880\n"
      "Mon Sep 11 10:41:22 CEST 2017   Mem:       3880472    1744980    2135492       2604       6088     214960\n"
      "Mon Sep 11 10:41:24 CEST 2017   Mem:       3880472    2388016    1492456       2604       5912     213704\n"
      "Mon Sep 11 10:41:26 CEST 2017   Mem:       3880472    3391876     488596       2604       3880     170212\n");
  EXPECT_TRUE(has_growing(freeloop, "host used (free)"));
  std::string offload;
  const char* before[] = {"57.83", "61.27", "64.70", "68.12"};
  const char* after[] = {"13.61", "17.02", "20.44", "23.87"};
  for (int i = 0; i < 4; ++i)
    offload += std::string("(WorkerDict pid=8963) Before vllm offload in sharding manager: ") + before[i] +
               " GB / 79.19 GB.\n(WorkerDict pid=8963) After vllm offload in sharding manager: " + after[i] + " GB / 79.19 GB.\n";
  EXPECT_TRUE(has_growing(test::diagnose_text(offload), "sized After vllm offload in sharding manager"));
  // A model's shards loading still climb by design.
  EXPECT_FALSE(has_growing(test::diagnose_text("Loading checkpoint shards: loaded 4.1 GB\nLoading checkpoint shards: loaded 8.3 GB\n"
                                               "Loading checkpoint shards: loaded 12.2 GB\nLoading checkpoint shards: loaded 16.4 GB\n"),
                           "sized"));
}

// `kubectl top` taken again and again, each row with the user's note of when
// it was taken after it (modelled on milvus-io/milvus threads pasting a
// querynode's climb before its OOMKilled; own pod names and figures): the
// note does not hide the series, and a flat series stays flat.
TEST(MemorySeries, KubectlTopRowsWithANoteAfterThemAreASeries) {
  auto rows = [](const char* a, const char* b, const char* c, const char* d) {
    return std::string("NAME                                CPU(cores)   MEMORY(bytes)\n") +
           "rag-querynode-0-5f7d9c8b6-x2kqp     3121m        " + a + "      # 06:05\n" +
           "rag-querynode-0-5f7d9c8b6-x2kqp     3480m        " + b + "     # 06:20\n" +
           "rag-querynode-0-5f7d9c8b6-x2kqp     3655m        " + c + "     # 06:35\n" +
           "rag-querynode-0-5f7d9c8b6-x2kqp     3702m        " + d + "     # 06:44\n";
  };
  EXPECT_TRUE(has_growing(test::diagnose_text(rows("7874Mi", "11196Mi", "15902Mi", "19871Mi")), "figure in"));
  EXPECT_FALSE(has_growing(test::diagnose_text(rows("7874Mi", "7901Mi", "7866Mi", "7890Mi")), "figure in"));
}

// HTCondor's job log: each image-size event gives the job's memory as value,
// dash, name with its unit (HTCondor's documented user-log event 006; own
// job ids and figures). Climbing into the hold at the job's limit is growth;
// the same figure event after event is not.
TEST(MemorySeries, HtcondorJobLogUsageEventsAreASeries) {
  auto log = [](std::initializer_list<int> mb) {
    std::string s;
    int minute = 10;
    for (int v : mb) {
      s += "006 (4410321.000.000) 03/14 09:" + std::to_string(minute) + ":05 Image size of job updated: " + std::to_string(v * 1024) + "\n";
      s += "\t" + std::to_string(v) + "  -  MemoryUsage of job (MB)\n";
      s += "\t" + std::to_string(v * 1024) + "  -  ResidentSetSize of job (KB)\n...\n";
      minute += 10;
    }
    return s + "012 (4410321.000.000) 03/14 10:05:02 Job was held.\n"
               "\tError from slot1_3@wn-112.example.org: Job has gone over memory limit of 8000 megabytes. Peak usage: 7990 megabytes.\n"
               "\tCode 34 Subcode 0\n";
  };
  Diagnosis grew = test::diagnose_text(log({1200, 3100, 5200, 7400}));
  EXPECT_EQ(grew.layer, Layer::container_limit);
  EXPECT_EQ(grew.cause, Cause::leak_or_accumulation);
  Diagnosis flat = test::diagnose_text(log({7800, 7810, 7790, 7805}));
  EXPECT_EQ(flat.layer, Layer::container_limit);
  EXPECT_NE(flat.cause, Cause::leak_or_accumulation);
}

// A heap ceiling at or above the job's limit: the JVM's heap climbs toward
// its ceiling by design, so the climb into the limit is the ceiling's doing,
// not a leak; under the limit the same climb is growth.
TEST(MemorySeries, AHeapCeilingOverTheLimitExplainsTheClimb) {
  auto job = [](const std::string& xmx) {
    std::string s = "$ grep -E 'request_memory|arguments' align.sub\nrequest_memory = 8000\narguments      = -Xms2g " + xmx +
                    " -jar /opt/aligner/aligner.jar --in reads.bam\n";
    int minute = 10;
    for (int v : {1200, 3100, 5200, 7400}) {
      s += "006 (4410321.000.000) 03/14 09:" + std::to_string(minute) + ":05 Image size of job updated: " + std::to_string(v * 1024) + "\n";
      s += "\t" + std::to_string(v) + "  -  MemoryUsage of job (MB)\n...\n";
      minute += 10;
    }
    return s + "012 (4410321.000.000) 03/14 10:05:02 Job was held.\n"
               "\tError from slot1_3@wn-112.example.org: Job has gone over memory limit of 8000 megabytes. Peak usage: 7990 megabytes.\n";
  };
  EXPECT_EQ(test::diagnose_text(job("-Xmx12g")).cause, Cause::limit_too_low);
  EXPECT_EQ(test::diagnose_text(job("-Xmx4g")).cause, Cause::leak_or_accumulation);
}

// `free` taken again and again while a job runs: the used column, in the
// unit the command asked for (modelled on a tokenizer training run killed by
// the kernel, huggingface/tokenizers#1345; values ours).
TEST(MemorySeries, FreeRowsTakenAgainAreTheHostsUse) {
  Diagnosis d = test::diagnose_text(
      "$ while sleep 60; do free -g | grep Mem; done\n"
      "Mem:             62          10          51           0           1          51\n"
      "Mem:             62          24          37           0           1          37\n"
      "Mem:             62          41          20           0           1          20\n"
      "Mem:             62          58           3           0           1           3\n"
      "[90211.102930] Out of memory: Killed process 4411 (python3) total-vm:64012345kB, anon-rss:60012340kB, file-rss:1024kB, "
      "shmem-rss:0kB, UID:1000 pgtables:120000kB oom_score_adj:0\n");
  EXPECT_TRUE(has_growing(d, "host used (free)"));
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// A worker's start-up banner names the figure as its budget ("Memory: 4.00
// GB"), and its summary repeats the name as a count ("memory: 0"); neither
// is a sample of the series its periodic warnings give, which climbs at
// every step toward the budget (modelled on equinor/ert#2831 with Dask's
// worker messages; values ours).
TEST(MemorySeries, HeaderAndUnitlessFiguresDoNotBreakASteadyClimb) {
  Diagnosis d = test::diagnose_text(
      "distributed.worker - INFO -           Memory:                     8.00 GB\n"
      "distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other process is "
      "leaking memory?  Process memory: 6.30 GB -- Worker memory limit: 8.00 GB\n"
      "distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other process is "
      "leaking memory?  Process memory: 6.61 GB -- Worker memory limit: 8.00 GB\n"
      "distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other process is "
      "leaking memory?  Process memory: 6.90 GB -- Worker memory limit: 8.00 GB\n"
      "distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other process is "
      "leaking memory?  Process memory: 7.18 GB -- Worker memory limit: 8.00 GB\n"
      "distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other process is "
      "leaking memory?  Process memory: 7.49 GB -- Worker memory limit: 8.00 GB\n"
      "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
      "KilledWorker: ('task-1f2e', <Worker 'tcp://10.0.0.7:40411', name: 3, memory: 0, processing: 1>)\n");
  EXPECT_TRUE(has_growing(d, "memory"));
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  // Five samples that rise by under 15% in all are not called growth.
  Diagnosis small = test::diagnose_text(
      "stats memory: 6.30 GB\nstats memory: 6.41 GB\nstats memory: 6.52 GB\nstats memory: 6.63 GB\nstats memory: 6.74 GB\n");
  EXPECT_FALSE(has_growing(small, "memory"));
}

// `kubectl top` taken every few minutes: the rows' padding changes as the
// figures widen, and the last row, after the kill, is the restarted container
// counted from zero; the climb before it is the series (modelled on
// linkerd/linkerd2#9947; values ours).
TEST(MemorySeries, KubectlTopRowsClimbingToAKillAreALeak) {
  Diagnosis d = test::diagnose_text(
      "$ while true; do kubectl top pod api-7c9d-x2 --containers | grep ' api '; sleep 300; done\n"
      "api-7c9d-x2   api   5m           61Mi\n"
      "api-7c9d-x2   api   18m          97Mi\n"
      "api-7c9d-x2   api   22m          131Mi\n"
      "api-7c9d-x2   api   20m          170Mi\n"
      "api-7c9d-x2   api   4m           12Mi\n"
      "    Last State:     Terminated\n"
      "      Reason:       OOMKilled\n"
      "      Exit Code:    137\n"
      "    Limits:         memory: 192Mi\n");
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// The differential: a GPU OOM in a training step lists the rules' cause first
// with the check that would rule out the runner-up.
TEST(Differential, RankedCausesWithTheCheckThatDecides) {
  Diagnosis d = test::diagnose_text(
      "  File \"train.py\", line 88, in <module>\n"
      "    model = AutoModelForCausalLM.from_pretrained(args.model)\n"
      "  File \"train.py\", line 131, in <module>\n"
      "    loss.backward()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.25 GiB of "
      "which 1.19 GiB is free. Including non-PyTorch memory, this process has 78.05 GiB memory in use. Of the allocated memory "
      "76.11 GiB is allocated by PyTorch, and 1.33 GiB is reserved by PyTorch but unallocated.\n");
  ASSERT_FALSE(d.incidents.empty());
  const auto& causes = d.incidents.front().causes;
  ASSERT_GE(causes.size(), 2u);
  EXPECT_EQ(causes[0].cause, d.cause);
  EXPECT_EQ(causes[0].cause, Cause::concurrency_batch);
  EXPECT_DOUBLE_EQ(causes[0].confidence, d.incidents.front().confidence);
  for (size_t i = 1; i < causes.size(); ++i) EXPECT_LT(causes[i].confidence, causes[0].confidence);
  EXPECT_FALSE(causes[0].decide_with.empty());
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

// gcc's driver when cc1plus was SIGKILLed in a parallel build (modelled on
// ggml-org/llama.cpp#8736): a kill on the host, not a compiler error.
TEST(GenericAlloc, CompilerKilledBySignalIsAHostKill) {
  Diagnosis d = test::diagnose_text(
      "[ 31%] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/template-instances/fattn-vec-q4_0.cu.o\n"
      "c++: fatal error: Killed signal terminated program cc1plus\n"
      "compilation terminated.\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
}

// Windows' commit limit in any locale, by its error number (modelled on
// comfyanonymous/ComfyUI#6578).
TEST(GenericAlloc, WindowsCommitLimitByItsNumber) {
  Diagnosis d = test::diagnose_text("OSError: \u9875\u9762\u6587\u4ef6\u592a\u5c0f\uff0c\u65e0\u6cd5\u5b8c\u6210\u64cd\u4f5c\u3002 (os error 1455)\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
}

// Crashes that are not memory: SIGILL from a build for a newer CPU
// (abetlen/llama-cpp-python#272), gunicorn's exit code 139 (a SIGSEGV).
TEST(ExitStatusCrashes, IllegalInstructionAndGunicornCode139AreNotMemory) {
  EXPECT_EQ(test::diagnose_text(">>> llm = Llama(model_path=\"m.gguf\")\nIllegal instruction (core dumped)\n").layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("[2025-12-15 08:41:02 +0000] [1] [ERROR] Worker (pid:54) was sent code 139!\n").layer, Layer::not_memory);
}

// macOS bash writes the signal number after "Killed" (gensyn-ai/rl-swarm#137).
TEST(ExitStatusCrashes, BashKilledWithItsSignalNumberAfterThePid) {
  Diagnosis d = test::diagnose_text("./run.sh: line 212: 48211 Killed: 9               python -m train --config c.yaml\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents.front().pid, 48211);
}

// An exception whose class name holds the words ("...MemoryError:") is thrown,
// not mentioned; a flag that holds them (-XX:+HeapDumpOnOutOfMemoryError) is not.
// Modelled on a Rust/PyO3 extension's own exception; our own names and sizes.
TEST(GenericAlloc, ThrownExceptionNamedForMemoryCountsAFlagDoesNot) {
  Diagnosis d = test::diagnose_text(
      "Traceback (most recent call last):\n"
      "  File \"/srv/index/build.py\", line 88, in <module>\n"
      "    idx.add(vectors)\n"
      "vecindex.ArenaMemoryError: could not grow the arena to 34359738368 bytes\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  ASSERT_NE(failure(d), nullptr);
  EXPECT_EQ(failure(d)->family, Family::generic);
  EXPECT_EQ(test::diagnose_text("java -XX:+HeapDumpOnOutOfMemoryError -Xmx2g -jar app.jar\nstarted in 2.1 s\n").layer, Layer::none);
}

// An aligned allocation that returned ENOMEM (12) in a checked-call message
// with no allocation words. Modelled on PaddlePaddle's system_allocator.cc
// enforce and Caffe2's CPUAllocator enforce; our own addresses.
TEST(GenericAlloc, PosixMemalignReturningTwelveIsAHostFailure) {
  for (const char* line :
       {"paddle.fluid.core_avx.EnforceNotMet: Expected posix_memalign(&p, alignment, size) == 0, but received "
        "posix_memalign(&p, alignment, size):12 != 0:0. at [/paddle/paddle/fluid/memory/detail/system_allocator.cc:58]\n",
        "RuntimeError: [enforce fail at util.cc:44] posix_memalign(&data, kAlign, nbytes) == 0. 12 vs 0\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::host_ram) << line;
  }
  // Another return code is another failure (22 is EINVAL).
  EXPECT_EQ(test::diagnose_text("RuntimeError: [enforce fail at util.cc:44] posix_memalign(&data, 3, nbytes) == 0. 22 vs 0\n").layer,
            Layer::none);
}

// "Cannot allocate" opens many runtimes' own messages (strerror(ENOMEM), the
// BEAM's allocator, R's vectors), and an OutOfMemoryError is not only Java's:
// the JVM reader leaves a line it cannot read to this one. Shapes of
// erlang/otp erts/emulator/beam/erl_alloc.c, R's memory.c and Julia's
// OutOfMemoryError(), our sizes.
TEST(GenericAlloc, CannotAllocateAndOtherRuntimesOutOfMemoryErrorAreHostFailures) {
  for (const char* text : {"eheap_alloc: Cannot allocate 6801972448 bytes of memory (of type \"old_heap\").\n",
                           "Error: cannot allocate vector of size 11.2 Gb\nExecution halted\n",
                           "worker 3: error: cannot allocate memory\n",
                           "ERROR: LoadError: OutOfMemoryError()\nStacktrace:\n [1] Array\n   @ ./boot.jl:477 [inlined]\n"}) {
    Diagnosis d = test::diagnose_text(text);
    EXPECT_EQ(d.layer, Layer::host_ram) << text;
  }
  // A name that only holds the words is no failure.
  EXPECT_EQ(test::diagnose_text("JAVA_OPTS=-XX:+ExitOnOutOfMemoryError -Xmx2g\n").layer, Layer::none);
  EXPECT_EQ(test::diagnose_text("INFO: if the pool cannot allocate, it waits\n").layer, Layer::none);
}

// llama.cpp's mlock warning carries ENOMEM's words, but RLIMIT_MEMLOCK refused
// to pin pages that are already in memory (llama.cpp src/llama-mmap.cpp
// llama_mlock's "failed to mlock ... Try increasing RLIMIT_MEMLOCK"; values
// ours): the load goes on, nothing ran out.
TEST(GenericAlloc, AnMlockRefusalIsNotAnAllocationFailure) {
  Diagnosis d = test::diagnose_text(
      "llm_load_tensors:        CPU buffer size =  4685.30 MiB\n"
      "warning: failed to mlock 4912906240-byte buffer (after previously locking 0 bytes): Cannot allocate memory\n"
      "Try increasing RLIMIT_MEMLOCK ('ulimit -l' as root).\n"
      "llama_new_context_with_model: n_ctx      = 4096\n");
  EXPECT_EQ(d.layer, Layer::none);
}


// An accelerator's bank manager that prints its free memory and largest
// block (modelled on tenstorrent/tt-metal's TT_FATAL "Out of Memory" reports;
// figures ours): the device, and fragmentation when each bank's share fits in
// what is free but not in the largest block. darknet's CUDA error with
// strerror after it is the device's, not the host's.
TEST(GenericAlloc, ABankManagersLargestFreeBlockDecidesFragmentation) {
  const std::string frag =
      "2026-04-06 09:14:04.902 | critical | Always | TT_FATAL: Out of Memory: Not enough space to allocate 41943040 B DRAM buffer "
      "across 12 banks, where each bank needs to store 3497984 B, but bank size is 1071821792 B (allocated: 870495200 B, free: "
      "201326592 B, largest free block: 2883584 B)\n";
  Diagnosis d = test::diagnose_text(frag);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  const std::string full =
      "TT_FATAL: Out of Memory: Not enough space to allocate 75497472 B DRAM buffer across 12 banks, where each bank needs to "
      "store 6291456 B, but bank size is 1071821792 B (allocated: 1068676064 B, free: 3145728 B, largest free block: 3145728 B)\n";
  Diagnosis f = test::diagnose_text(full);
  EXPECT_EQ(f.layer, Layer::gpu_vram);
  EXPECT_NE(f.cause, Cause::fragmentation);
  Diagnosis dk = test::diagnose_text(" CUDA Error: out of memory\nCUDA Error: out of memory: Cannot allocate memory\n"
                                     "darknet: ./src/utils.c:325: error: Assertion `0' failed.\nAborted (core dumped)\n");
  EXPECT_EQ(dk.layer, Layer::gpu_vram);
}


// TensorRT's builder asking for more scratch space than the device has
// (modelled on NVIDIA/TensorRT-LLM's llama build.py with a large
// max_batch_size; figures ours), and MLC/WebLLM's paged KV cache with no page
// left: both the device's. A sentence that only compares sizes is not.
TEST(GenericAlloc, ScratchOverAvailableAndAFullPagedKvCacheAreTheDevice) {
  Diagnosis trt = test::diagnose_text(
      "[11/10/2023-21:47:10] [TRT] [E] 4: Internal error: plugin node LlamaForCausalLM/layers/0/attention/PLUGIN_V2_GPTAttention_0 "
      "requires 48318382080 bytes of scratch space, but only 42949672960 is available. Try increasing the workspace size with "
      "IBuilderConfig::setMemoryPoolLimit().\n");
  EXPECT_EQ(trt.layer, Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("the job requires 4096 bytes of headroom but only 8192 is available to it\n").layer, Layer::none);
  Diagnosis kv = test::diagnose_text(
      "Loading model Llama-3-8B-Instruct-q4f16_1-MLC, context_window_size: 4096, prefill_chunk_size: 1024\n"
      "Uncaught (in promise) Error: Check failed: (!free_page_ids_.empty()) is false: The KV cache is full. No page can be allocated.\n");
  EXPECT_EQ(kv.layer, Layer::gpu_vram);
  EXPECT_EQ(kv.cause, Cause::kv_cache_context);
}

// An exception named with its module path ("cupy.cuda.memory.OutOfMemoryError:
// out of memory to allocate ...", CuPy's pool) opens its message as a bare
// name does (modelled on cupy/cupy threads; values are ours).
TEST(GenericAlloc, AnExceptionsModulePathDoesNotHideItsMessage) {
  Diagnosis d = test::diagnose_text(
      "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 102760448 bytes (total 15821707264 bytes)\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("see docs.cupy.dev. out of memory handling is described there\n").layer, Layer::none);
}

// Toolchains and runtimes that word the failure their own way, modelled on
// NVIDIA forum threads for ptxas, MSVC's C1060 (learn.microsoft.com's error
// page), bazelbuild/bazel threads ("The Bazel server has run out of memory")
// threads; our own sizes. Each is a host allocation that failed
// (emscripten's heap is wasm_memory.cc's: layer unknown). The same words as a retry a program calls "not a
// failure", or in prose ("if the server runs out of memory"), are not.
TEST(GenericAlloc, ToolchainsWordingsOfAFailedAllocationAreHostFailures) {
  for (const char* line : {"ptxas fatal   : Memory allocation failure\n",
                           "fatal error C1060: compiler is out of heap space\n",
                           "The Bazel server has run out of memory.\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::host_ram) << line;
  }
  EXPECT_EQ(test::diagnose_text("W alloc.cc:217] Allocator ran out of memory trying to allocate 2.19GiB. The caller indicates "
                                "that this is not a failure\n")
                .layer,
            Layer::none);
  EXPECT_EQ(test::diagnose_text("Bazel uses a lot of memory; when the server runs out of memory builds get slow.\n").layer,
            Layer::none);
  EXPECT_EQ(test::diagnose_text("scavenge 12.1 (14.0) -> 11.3 (15.0) MB, 0.4 / 0.0 ms  (average mu = 1.000) allocation failure\n")
                .layer,
            Layer::none);
}

// An allocator's own name, then "failed" in the same clause, on stacks no
// family reads: Sophon's bmlib (modelled on sophgo/sophon-stream#58) and
// Habana's device-memory allocator (huggingface/optimum-habana#289); our own
// sizes. "Device memory", DEVMEM and the HPU are the device. A clause break
// between the two words is no such report.
TEST(GenericAlloc, AnAllocatorsNameThenFailedIsAnAllocationFailure) {
  Diagnosis sophon = test::diagnose_text(
      "[bmlib_memory][error] bm_alloc_gmem failed, dev_id = 0, size = 0x639c00\n"
      "[STREAM_CHECK_MESSAGE]  Expected ret == 0 to be true, but got false. Alloc Device Memory Failed! Program Terminated.\n");
  EXPECT_EQ(sophon.layer, Layer::gpu_vram);
  Diagnosis hpu = test::diagnose_text(
      "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::3288334336 (3136)MB\n");
  EXPECT_EQ(hpu.layer, Layer::gpu_vram);
  Diagnosis host = test::diagnose_text("fatal: xmalloc failed for 1073741824 bytes\n");
  EXPECT_EQ(host.layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text("allocated 12 buffers. 3 downloads failed, retrying\n").layer, Layer::none);
}

// A program's guess is no report: "This is usually caused by running out of
// memory" beside a SIGTERM (modelled on julia-vscode/julia-vscode#4231; our
// own pid) is a stop, and Julia's own "signal (15): Terminated" says so.
TEST(GenericAlloc, AProgramsGuessAboutMemoryIsNotAReport) {
  Diagnosis d = test::diagnose_text(
      "[2048311] signal (15): Terminated\n"
      "in expression starting at /home/u/.vscode-server/extensions/julialang.language-julia-1.2.3/scripts/languageserver/main.jl:109\n"
      "[Error - 14:02:26] The Julia Language Server was killed by the operating system (SIGTERM). This is usually caused by "
      "running out of memory.\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("[Error] The server crashed. This is usually caused by running out of memory.\n").layer,
            Layer::none);
}

// Habana's Synapse helper and DirectML name their device in words the
// generic reader knows (modelled on HabanaAI/Model-References#13 and
// microsoft/DirectML#355; our own sizes): an accelerator's memory, not the host's.
TEST(GenericAlloc, GaudiAndDirectMlFailuresAreTheDevices) {
  Diagnosis hpu = test::diagnose_text(
      " PT_HPU_LAZY_MODE = 1\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 142, in main\n"
      "    loss.backward()\n"
      "RuntimeError: FATAL ERROR :: MODULE:SYNHELPER workspace Allocation of size ::12884901888 failed\n");
  EXPECT_EQ(hpu.layer, Layer::gpu_vram);
  Diagnosis dml = test::diagnose_text(
      "Using DirectML device AMD Radeon VII\n"
      "step 0      loss 3.9121  dml_mem_mb 2100\n"
      "step 500    loss 1.0474  dml_mem_mb 5200\n"
      "step 1000   loss 0.6617  dml_mem_mb 8300\n"
      "step 1500   loss 0.5031  dml_mem_mb 11400\n"
      "RuntimeError: Could not allocate tensor with 67633152 bytes. There is not enough GPU video memory available!\n");
  EXPECT_EQ(dml.layer, Layer::gpu_vram);
  EXPECT_EQ(dml.cause, Cause::leak_or_accumulation);  // the figure named with its unit, then a blank, is a series
}

// A huge-page mapping tried first and a DEBUG-level line are refusals a
// program does without (modelled on pgvector/pgvector#643's Postgres log with
// huge_pages=try; our own sizes): nothing ran out. The same ENOMEM at ERROR
// level is a failure.
TEST(GenericAlloc, AHugePageFallbackOrADebugLineIsNoFailure) {
  EXPECT_EQ(test::diagnose_text("2024-08-15 09:12:03.118 UTC [41207] DEBUG:  mmap(17641046016) with MAP_HUGETLB failed, huge pages "
                                "disabled: Cannot allocate memory\n"
                                "2024-08-15 09:12:03.191 UTC [41207] LOG:  database system is ready to accept connections\n")
                .layer,
            Layer::none);
  EXPECT_EQ(test::diagnose_text("2024-08-15 09:12:03.118 UTC [41207] DEBUG:  could not fork worker process: Cannot allocate memory\n").layer,
            Layer::none);
  EXPECT_EQ(test::diagnose_text("2024-08-15 09:12:03.118 UTC [41207] ERROR:  could not fork worker process: Cannot allocate memory\n").layer,
            Layer::host_ram);
}

// A refusal in an engine's own words, on Apple silicon's Metal cap (modelled
// on youssofal/MTPLX#393; our own figures): the device's memory.
TEST(GenericAlloc, ARequestExceedingTheMemoryAvailableUnderAMetalCapIsTheDevices) {
  Diagnosis d = test::diagnose_text(
      "[mtplx 2.10.0] host: Apple M5 Max, 128.0 GiB unified, metal cap 96.00 GiB (103079215104 bytes)\n"
      "[req 4c1e] POST /v1/chat/completions prompt_tokens=201,733 cached_tokens=0 -> cold prefill\n"
      "[req 4c1e] aborted after 437.2 s of prefill, output_tokens=0 -> HTTP 507 {\"error\":{\"type\":\"memory_refusal\",\"message\":"
      "\"request exceeds the memory available for this context\"}}\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

// Apple Metal's command-buffer error (modelled on safx/waifu2x-metal#3;
// paths and sizes ours): the device's memory, said in Metal's own names. The
// summary names no program it does not know.
TEST(GenericAlloc, MetalsCommandBufferInsufficientMemoryIsTheDevices) {
  Diagnosis d = test::diagnose_text(
      "$ ./waifu2x-metal -m noise_scale -n 2 -s 2.0 poster_6120x8600.png poster_x2.png\n"
      "Fatal error: MetalExecutionError: Error Domain=MTLCommandBufferErrorDomain Code=8 \"Insufficient Memory (IOAF code 8)\" "
      "UserInfo={NSLocalizedDescription=Insufficient Memory (IOAF code 8)}: file waifu2x/Model.swift, line 212\n"
      "Illegal instruction: 4\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents[0].summary.rfind("a process ", 0), 0u) << d.incidents[0].summary;
}

// Reserving is allocating when a size or the word memory follows: an
// engine's refusal in an invented wording (the generic layer must not depend
// on one program's) is the device's. containerd's "failed to reserve
// container name" (kubelet events, as in kubernetes/kubernetes issues about
// CreateContainerError) reserves a name, not memory.
TEST(GenericAlloc, FailedToReserveMemoryIsAnAllocationAndANameIsNot) {
  Diagnosis dev = test::diagnose_text("ERROR: failed to reserve 20.0 GiB of device memory for the KV cache: only 12.3 GiB free\n");
  EXPECT_EQ(dev.layer, Layer::gpu_vram);
  Diagnosis host = test::diagnose_text("fatal: could not reserve memory for the sort buffer (1.5 GB)\n");
  EXPECT_EQ(host.layer, Layer::host_ram);
  Diagnosis name = test::diagnose_text(
      "  Warning  Failed  12s  kubelet  Error: failed to reserve container name \"api_web-7d9f_prod_0\": name \"api_web-7d9f_prod_0\" is "
      "reserved for \"4f1c0a\"\n");
  EXPECT_NE(name.layer, Layer::host_ram);
  EXPECT_NE(name.layer, Layer::gpu_vram);
}

// A status constant ending in OUT_OF_MEMORY is the status being reported:
// Theano's CNMeM pool failing at start-up (modelled on Theano/Theano threads
// of "initCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY";
// our own device count), a Vulkan result. A lower-case option name that
// holds the phrase ("max_out_of_memory_retries") stays a mention.
TEST(GenericAlloc, AStatusConstantEndingInOutOfMemoryIsAReport) {
  Diagnosis cnmem = test::diagnose_text(
      "ERROR (theano.sandbox.cuda): ERROR: Not using GPU. Initialisation of device gpu failed:\n"
      "initCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY. numdev=1\n");
  EXPECT_EQ(cnmem.layer, Layer::gpu_vram);
  Diagnosis vk = test::diagnose_text("vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (vulkan device 0)\n");
  EXPECT_EQ(vk.layer, Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("INFO: set max_out_of_memory_retries=3 (error handling enabled)\n").layer, Layer::none);
}

// Graphcore's IPU: Poplar's stream memory named in the error (modelled on
// graphcore/poptorch threads of "poplar_stream_memory_allocation_error";
// our own sizes): an accelerator's memory, not the host's.
TEST(GenericAlloc, PoplarsIpuMemoryIsTheDevices) {
  Diagnosis d = test::diagnose_text(
      "Error: In include/poptorch_err/ExceptionHandling.hpp:76: 'poplar_stream_memory_allocation_error': "
      "popart/willow/src/popx/irlowering.cpp:3516 Out of memory. Single stream of length 120586240 in bufferIndex 1\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
}

// A checked device allocation that returned 2 (cudaErrorMemoryAllocation)
// with no words of memory (modelled on BVLC/caffe#26; our paths and
// figures): the device's memory, not the "Check failed" look-alike.
TEST(GenericAlloc, ACheckedCudaMallocThatReturnedTwoIsTheDevices) {
  Diagnosis d = test::diagnose_text(
      "I0302 10:12:40.118231  3120 solver.cpp:106] Iteration 0, loss = 6.90771\n"
      "I0302 10:12:44.902114  3120 solver.cpp:84] Testing net\n"
      "F0302 10:12:45.771390  3120 syncedmem.cpp:51] Check failed: (cudaMalloc(&gpu_ptr_, size_)) == cudaSuccess (2 vs. 0)\n"
      "*** Check failure stack trace: ***\n"
      "    @     0x7f3a2c10bb5d  google::LogMessage::Fail()\n"
      "    @           0x436d57  caffe::SyncedMemory::mutable_gpu_data()\n"
      "Aborted (core dumped)\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  // Another status (1, invalid value) is no allocation failure.
  Diagnosis other = test::diagnose_text(
      "F0302 10:12:45.771390  3120 syncedmem.cpp:51] Check failed: (cudaMalloc(&gpu_ptr_, size_)) == cudaSuccess (1 vs. 0)\n");
  EXPECT_NE(other.layer, Layer::gpu_vram);
}

// Python's MemoryError around a message that names the device's memory
// (Theano, modelled on keras-team/keras#1587; our figures) is the device's.
TEST(GenericAlloc, AMemoryErrorNamingDeviceMemoryIsTheDevices) {
  Diagnosis d = test::diagnose_text(
      "Using gpu device 0: GeForce GTX 970 (CNMeM is disabled, cuDNN 5005)\n"
      "MemoryError: Error allocating 402653184 bytes of device memory (out of memory). Driver report 180355072 bytes free "
      "and 4294770688 bytes total\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("MemoryError: Unable to allocate 3.20 GiB for an array with shape (430000, 1000)\n").layer,
            Layer::host_ram);
}

// Windows' commit limit (os error 1455) while a CUDA program maps its weights
// (modelled on Comfy-Org/ComfyUI#7550; our paths): the host's RAM and page
// file ran out, not the device named around it.
TEST(GenericAlloc, WindowsCommitLimitIsTheHostsEvenBesideACudaDevice) {
  Diagnosis d = test::diagnose_text(
      "Total VRAM 16376 MB, total RAM 32678 MB\n"
      "Device: cuda:0 NVIDIA GeForce RTX 4080 : cudaMallocAsync\n"
      "!!! Exception during processing !!! The paging file is too small for this operation to complete. (os error 1455)\n"
      "  File \"C:\\\\ComfyUI\\\\comfy\\\\utils.py\", line 58, in load_torch_file\n"
      "    with safetensors.safe_open(ckpt, framework=\"pt\", device=device.type) as f:\n"
      "OSError: The paging file is too small for this operation to complete. (os error 1455)\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

// The arithmetic of a refusal: a size asked for over the size on offer, in
// any of the verbs and units programs use (a server's memory check before a
// prompt, modelled on an MLX server's 400 reply; TensorRT's builder in bytes
// with a bare figure after "only"; our figures). Asked for less than is on
// offer, or on offer with no word saying so, it is no refusal.
TEST(GenericAlloc, ASizeAskedForOverTheSizeOnOfferIsARefusal) {
  Diagnosis prompt = test::diagnose_text(
      "{\"message\":\"Prompt (120412 tokens) requires ~25120MB GPU memory but only ~24010MB available. Reduce prompt size.\","
      "\"type\":\"invalid_request_error\",\"code\":400}\n");
  EXPECT_EQ(prompt.layer, Layer::gpu_vram);
  Diagnosis trt = test::diagnose_text("[TRT] [E] 1: requires 48318382080 bytes of scratch space, but only 42949672960 is available\n");
  EXPECT_NE(trt.layer, Layer::none);
  Diagnosis host = test::diagnose_text("error: the index needs 12.5 GiB of RAM, only 9.1 GiB free on this machine\n");
  EXPECT_EQ(host.layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text("note: the index needs 2.5 GiB of RAM, only 9.1 GiB free on this machine\n").layer, Layer::none);
  EXPECT_EQ(test::diagnose_text("error: the job requires 12 GB but only 9 GB were requested by the template\n").layer, Layer::none);
}

// A need over the offer stated with no error word is a report in itself
// (ethminer's "Epoch N requires X GB memory. Only Y GB available on device."),
// and a watchdog's shortage followed by the signal it sends is a user-space
// killer, not a refused allocation (puma_worker_killer's line; our figures).
TEST(GenericAlloc, AStatedShortfallAndAWatchdogsSignal) {
  Diagnosis dag = test::diagnose_text("cl 06:17:42 cl-0     Epoch 512 requires 5.08 GB memory. Only 3.98 GB available on device.\n");
  EXPECT_EQ(dag.layer, Layer::gpu_vram);
  Diagnosis puma = test::diagnose_text(
      "00:51:49 [15] PumaWorkerKiller: Out of memory. 3 workers consuming total: 1024.5 mb out of max: 1024.0 mb. Sending TERM to pid "
      "4120 consuming 341.2 mb.\n");
  EXPECT_EQ(puma.layer, Layer::userspace_oom_killer);
  ASSERT_FALSE(puma.incidents.empty());
  EXPECT_EQ(puma.incidents[0].summary, "the program's own memory watchdog signalled a worker over its budget");
}

// "failed to start" is TGI's shard wording and every other program's too: it
// claims no line, so a scheduler's fork refused for memory on such a line is
// read (modelled on a Nomad client log; our ids). Words that name no memory
// of their own ("exceeded", "insufficient", "not enough") count only with a
// memory word or a size in their clause: a pod sandbox's deadline on a node
// named gpu-n4 is no device allocation.
TEST(GenericAlloc, SharedWordingsAndBarePhrasesNeedTheirMemory) {
  Diagnosis fork = test::diagnose_text(
      "nomad[1812]: [WARN] client: failed to start task \"embedder\" for alloc \"5e1d\": error creating rpc client for executor plugin: "
      "fork/exec /opt/nomad/nomad: cannot allocate memory\n");
  EXPECT_EQ(fork.layer, Layer::host_ram);
  Diagnosis sandbox = test::diagnose_text(
      "  Warning  FailedCreatePodSandBox  9m (x3 over 13m)  kubelet, gpu-n4  Failed create pod sandbox: rpc error: code = 2 desc = failed "
      "to start sandbox container for pod \"x\": operation timeout: context deadline exceeded\n");
  EXPECT_NE(sandbox.layer, Layer::gpu_vram);
  EXPECT_TRUE(test::facts_of_kind("kubelet, gpu-n4  Error: not enough disk space on /var/lib/kubelet\n", FactKind::gpu_oom).empty());
}

// A database server's out of memory relayed by its client (SQLSTATE 53200,
// node-postgres's error object; our values): the server refused, but in
// which pool only its own log says. With the kernel's kill beside it, the
// kill decides.
TEST(GenericAlloc, ADatabaseServersRefusalSeenFromItsClientNamesNoPool) {
  const std::string client = "{ [error: out of memory]\n  length: 95,\n  severity: 'ERROR',\n  code: '53200',\n  detail: 'Failed on request of size 24.' }\n";
  Diagnosis d = test::diagnose_text(client);
  EXPECT_EQ(d.layer, Layer::unknown);
  EXPECT_NE(d.layer, Layer::none);
  Diagnosis with_kill = test::diagnose_text(client + "[ 812.004411] Out of memory: Killed process 2210 (postgres) total-vm:4012344kB, "
                                                     "anon-rss:3712044kB, file-rss:0kB, shmem-rss:0kB\n");
  EXPECT_EQ(with_kill.layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text("ERROR:  out of memory\nDETAIL:  Failed on request of size 1073741760.\n").layer, Layer::host_ram);
}

// Kaggle's banner when the session's memory ran out (modelled on
// buxiangzhiren/DDCap#39; our notebook): a report without an error word, and
// the session's RAM even in a GPU session. The same words as advice are none.
TEST(GenericAlloc, KagglesBannerIsTheSessionsRamInAGpuSession) {
  const std::string log =
      "Tesla P100-PCIE-16GB, 0 MiB, 16384 MiB\n"
      "Epoch 0:   4%|4         | 352/8856 [05:02<2:01:40,  1.16it/s, loss=4.102]\n"
      "Your notebook tried to allocate more memory than is available. It has restarted.\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text("If your notebook tries to allocate more memory than is available, reduce the batch size.\n").layer,
            Layer::none);
}

// A loader's buffer over the device's memory budget (modelled on a GB10
// unified-memory start in MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#243; our
// sizes): a refusal with the device named. A budget in prose is none.
TEST(GenericAlloc, ABufferOverTheDevicesMemoryBudgetIsARefusal) {
  Diagnosis d = test::diagnose_text(
      "[head] loading shards with InstantTensor (buffer 1.18 GiB)\n"
      "[head] RuntimeError: InstantTensor: buffer_size (1268776960 B) exceeds device memory budget (812646400 B)\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(test::diagnose_text("Make sure no single request exceeds the memory budget you set in the config.\n").layer, Layer::none);
}

// Python prints an exception raised without a message as its dotted name
// alone on the traceback's last line (modelled on apache/arrow's
// ArrowMemoryError from Table.to_pandas; own paths): a memory error by its
// name, while the name inside a setting or a sentence is no report.
TEST(GenericAlloc, AnExceptionNamedAloneOnTheLastLineIsReported) {
  Diagnosis d = test::diagnose_text(
      "Traceback (most recent call last):\n"
      "  File \"pyarrow/table.pxi\", line 1136, in pyarrow.lib.Table.to_pandas\n"
      "  File \"pyarrow/error.pxi\", line 85, in pyarrow.lib.check_status\n"
      "pyarrow.lib.ArrowMemoryError\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(failure(test::diagnose_text("handler = on_error(pyarrow.lib.ArrowMemoryError)\n")), nullptr);
  EXPECT_EQ(failure(test::diagnose_text("we retry on ArrowMemoryError\n")), nullptr);
}

// A size that went negative before the allocator saw it (modelled on
// apache/arrow's "Invalid: negative malloc size" through the R package's
// collect(); own query): a size bug, not memory running out.
TEST(GenericAlloc, ANegativeSizeIsASizeBugNotMemory) {
  Diagnosis d = test::diagnose_text(
      "> d <- ds %>% count(a, b, c) %>% collect()\n"
      "Error in `collect()`:\n"
      "! Invalid: negative malloc size\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  Diagnosis c = test::diagnose_text("E0301 12:00:01 worker.cc:88] failed to allocate -2147483648 bytes for the hash table\n");
  EXPECT_EQ(c.layer, Layer::not_memory);
  // "negative" in a sentence about something else is nothing.
  EXPECT_EQ(failure(test::diagnose_text("INFO sampler: negative sizes are clamped to zero\n")), nullptr);
}

// An allocation refused with another error than ENOMEM (modelled on
// triton-inference-server/server's pinned-memory warning in a virtual GPU
// guest; own timestamps): nothing ran out.
TEST(GenericAlloc, AnAllocationRefusedForAnotherReasonIsNoMemoryFailure) {
  EXPECT_EQ(failure(test::diagnose_text(
                "W0214 07:41:55.102448 1 pinned_memory_manager.cc:271] Unable to allocate pinned system memory, pinned memory "
                "pool will not be available: operation not supported\n")),
            nullptr);
  EXPECT_EQ(failure(test::diagnose_text("mmap: failed to allocate 8 GiB arena: Invalid argument\n")), nullptr);
  // ENOMEM itself after the colon is memory.
  EXPECT_NE(failure(test::diagnose_text("mmap: failed to allocate 8 GiB arena: Cannot allocate memory\n")), nullptr);
}

// A report quoted inside a panic message with its stack frames on the same
// line (modelled on tch-rs's TorchError through a Rust unwrap panic; own
// paths): a path the user shortened with "..." far from the phrase, and a
// frame named "...Guard", are neither placeholder nor advice. An ellipsis
// right after the phrase still is.
TEST(GenericAlloc, AReportQuotedInAPanicWithItsFramesIsStillAReport) {
  std::string frames =
      "\\nframe #0: std::function<std::string ()>::operator()() const + 0x11 (0x7f3a1c2d4441 in "
      "/home/dev/proj/target/release/build/torch-sys-5c1e2f0a9b7d3e41/out/libtorch/libtorch/lib/libc10.so)";
  for (int i = 1; i < 8; ++i)
    frames += "\\nframe #" + std::to_string(i) + ": c10::impl::ExcludeDispatchKeyGuard::f() + 0x5b (0x7f3a1264e03b in ...libtorch.so)";
  Diagnosis d = test::diagnose_text(
      "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: TorchError { c_error: \"[enforce fail at "
      "CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0" +
      frames + "\" }', src/libcore/result.rs:999:5\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(failure(test::diagnose_text("the docs say 'DefaultCPUAllocator: can't allocate memory: you tried to allocate ...' here\n")),
            nullptr);
}

// A compiler's out of memory while compiling CUDA code is the host's: the
// compiler runs there, whatever device its paths name (modelled on
// microsoft/onnxruntime's Windows CUDA builds: NVIDIA's front end's
// "catastrophic error : out of memory" and cicc's "LLVM error : out of
// memory"). Our own paths.
TEST(GenericAlloc, ACompilersOutOfMemoryOnCudaSourcesIsTheHosts) {
  Diagnosis d = test::diagnose_text(
      " 7>C:\\src\\build\\_deps\\cutlass-src\\include\\cute/layout.hpp(912): catastrophic error : out of memory "
      "[C:\\src\\build\\providers_cuda.vcxproj]\n"
      " 5>CUDACOMPILE : LLVM error : out of memory [C:\\src\\build\\providers_cuda.vcxproj]\n");
  EXPECT_EQ(d.layer, Layer::host_ram) << test::reason_text(d);
  EXPECT_EQ(test::diagnose_text("RuntimeError: CUDA error: out of memory\n").layer, Layer::gpu_vram);
}

// The linker's own words carry the size it asked for ("out of memory
// allocating N bytes after a total of M bytes", binutils' ld, modelled on a
// Caffe build thread): 2^62 bytes is a size computed wrong, not memory.
TEST(GenericAlloc, TheLinkersAllocatingSizeIsReadAndAnAbsurdOneIsNotMemory) {
  Diagnosis absurd = test::diagnose_text("/usr/bin/ld: out of memory allocating 4611686018427387904 bytes after a total of 58118144 bytes\n"
                                         "collect2: error: ld returned 1 exit status\n");
  EXPECT_EQ(absurd.layer, Layer::not_memory) << test::reason_text(absurd);
  Diagnosis real = test::diagnose_text("/usr/bin/ld: out of memory allocating 1073741824 bytes after a total of 3018118144 bytes\n"
                                       "collect2: error: ld returned 1 exit status\n");
  EXPECT_EQ(real.layer, Layer::host_ram) << test::reason_text(real);
}

// "malloc of size N failed" gives its size as a bare count of bytes
// (FFmpeg's av_malloc, Arrow's allocator; modelled on a pyarrow read of a
// corrupt file, 2022, our own size): read, one no machine holds is a size
// computed wrong, a plausible one the host's.
TEST(GenericAlloc, MallocOfSizeIsABareCountOfBytes) {
  Diagnosis absurd = test::diagnose_text("ArrowMemoryError: malloc of size 3458764513820540928 failed\n");
  EXPECT_EQ(absurd.layer, Layer::not_memory) << test::reason_text(absurd);
  Diagnosis real = test::diagnose_text("ArrowMemoryError: malloc of size 2097152 failed\n");
  EXPECT_EQ(real.layer, Layer::host_ram) << test::reason_text(real);
  ASSERT_FALSE(real.incidents.empty());
  EXPECT_NE(real.incidents[0].summary.find("2.00 MiB"), std::string::npos) << real.incidents[0].summary;
}

// The system's refusal in the locale's own words, with no number beside it
// (modelled on a Ray Tune trial on a German Windows, 2022, and glibc's
// French catalogue; our own names): the commit limit and ENOMEM as in
// English. The same words inside a sentence of prose are not a report.
TEST(GenericAlloc, TheSystemsRefusalInTheLocalesWordsIsRead) {
  Diagnosis de = test::diagnose_text(
      "ImportError: DLL load failed while importing _pywrap_tensorflow_internal: Die Auslagerungsdatei ist zu klein, um diesen "
      "Vorgang durchzuführen.\n");
  EXPECT_EQ(de.layer, Layer::host_ram) << test::reason_text(de);
  for (const char* line : {"OSError: [Errno 12] Impossible d'allouer de la mémoire\n", "error='无法分配内存'\n",
                           "RuntimeError: 页面文件太小，无法完成操作。\n"})
    EXPECT_EQ(test::diagnose_text(line).layer, Layer::host_ram) << line;
  EXPECT_EQ(test::diagnose_text("Nous ne pouvons pas. Impossible d'allouer de la mémoire si vous voulez\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
