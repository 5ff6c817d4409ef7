// The general table reader of the memory series (families/series_columns.h):
// columns named once by a legend, header or command, then row after row. A
// memory column that climbs is growth the diagnosis reads as accumulation; a
// flat one, or a table with no memory column, says nothing. Rows in each
// tool's own format with our own values.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

const Fact* growing(const Diagnosis& d, std::string_view key) {
  for (const Fact& f : d.facts)
    if (f.kind == FactKind::memory_usage && f.detail.find("growing") != std::string::npos && f.detail.find(key) != std::string::npos)
      return &f;
  return nullptr;
}

// A logger's legend, '|'-joined with its unit (modelled on nodejs/help#2351):
// rss climbs while the heap stays flat, then docker reports the OOM kill.
TEST(SeriesColumns, ALegendListNamesThePipedColumns) {
  Diagnosis d = test::diagnose_text(
      "# node index.js  (memory logger: ts|rss|heapTotal|heapUsed|external, MB)\n"
      "2020-03-02T06:00:00.104Z|131.40|68.20|49.75|3.02\n"
      "2020-03-02T12:00:00.101Z|302.66|69.05|51.30|3.04\n"
      "2020-03-02T18:00:00.099Z|488.13|67.90|50.12|3.01\n"
      "2020-03-03T00:00:00.102Z|655.70|68.75|52.08|3.05\n"
      "2020-03-03T06:00:00.098Z|821.92|69.30|50.66|3.03\n"
      "$ docker inspect --format '{{.State.OOMKilled}} {{.HostConfig.Memory}}' indexer\n"
      "true 1073741824\n");
  const Fact* g = growing(d, "column rss");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->usage);
  EXPECT_NEAR(static_cast<double>(*g->usage), 821.92 * 1048576.0, 1e6);
  EXPECT_EQ(growing(d, "heapUsed"), nullptr) << "a flat column is no growth";
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// `ps -o pid=,rss=,cmd=` in a loop (no header; modelled on
// pipelinedb/pipelinedb#1552): the time the loop printed between samples is
// skipped, the rss column (KiB) is the process's series.
TEST(SeriesColumns, APsListWithoutHeaderNamesItsColumns) {
  Diagnosis d = test::diagnose_text(
      "$ while sleep 600; do date +%T; ps -o pid=,rss=,cmd= -p 20417; done\n"
      "09:00:01\n"
      "20417  351220 worker: ingest [queue=events]\n"
      "09:10:01\n"
      "20417 1420416 worker: ingest [queue=events]\n"
      "09:20:01\n"
      "20417 2874112 worker: ingest [queue=events]\n"
      "09:30:01\n"
      "20417 4410880 worker: ingest [queue=events]\n"
      "[88211.501200] Out of memory: Killed process 20417 (worker) total-vm:6120332kB, anon-rss:5102232kB, file-rss:0kB, "
      "shmem-rss:0kB, UID:1001 pgtables:10212kB oom_score_adj:0\n");
  const Fact* g = growing(d, "column rss of pid 20417");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// top -b at days apart (modelled on flynn-archive/discoverd#48): RES with
// top's own suffixes ("41m", "3.9g").
TEST(SeriesColumns, TopsResColumnWithItsSuffixes) {
  Diagnosis d = test::diagnose_text(
      "$ top -b -n1 -p 2210 | tail -2\n"
      "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND\n"
      " 2210 svc       20   0  702m    52m   2210 S   1.0  0.6   2:41.10 registryd\n"
      "$ top -b -n1 -p 2210 | tail -2\n"
      "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND\n"
      " 2210 svc       20   0  6.8g   3.1g   2188 S   9.0 40.2  88:12.40 registryd\n"
      "$ top -b -n1 -p 2210 | tail -2\n"
      "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND\n"
      " 2210 svc       20   0 13.1g   6.4g   2150 D  14.0 82.9 301:55.02 registryd\n"
      "[1009311.4] Out of memory: Killed process 2210 (registryd) total-vm:13736044kB, anon-rss:6911876kB, file-rss:0kB\n");
  EXPECT_NE(growing(d, "column RES of pid 2210"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// One metric named by the command, then "<time> <value>" rows (the AWS CLI's
// get-metric-statistics as text; modelled on aprin-labs/archimedes#1846): a
// utilization, a plain figure.
TEST(SeriesColumns, AMetricNamedByTheCommandThenTimeValueRows) {
  Diagnosis d = test::diagnose_text(
      "$ aws cloudwatch get-metric-statistics --namespace AWS/ECS --metric-name MemoryUtilization --period 600 "
      "--statistics Average --output text --query 'Datapoints[*].[Timestamp,Average]'\n"
      "2025-05-12T08:00:00+00:00\t31.2\n"
      "2025-05-12T08:10:00+00:00\t38.7\n"
      "2025-05-12T08:20:00+00:00\t46.1\n"
      "2025-05-12T08:30:00+00:00\t53.9\n"
      "2025-05-12T08:40:00+00:00\t61.0\n"
      "2025-05-12T08:50:00+00:00\t68.8\n");
  const Fact* g = growing(d, "metric MemoryUtilization");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->usage) << "a percentage is no size";
}

// A monitoring console's metric type as the heading over time and value rows
// (modelled on Cloud Run's run.googleapis.com/container/memory/utilizations
// as Metrics Explorer lists it; own times and figures). Unrelated paths
// name no memory and read nothing.
TEST(SeriesColumns, AConsolesMetricTypeHeadingThenTimeValueRows) {
  Diagnosis d = test::diagnose_text(
      "Metrics Explorer - run.googleapis.com/container/memory/utilizations (instance 7a1c):\n"
      "10:02  0.38\n"
      "10:03  0.51\n"
      "10:04  0.66\n"
      "10:05  0.81\n"
      "10:06  0.98\n");
  const Fact* g = growing(d, "metric run.googleapis.com/container/memory/utilizations");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->usage) << "a utilization is no size";
  Diagnosis other = test::diagnose_text(
      "Metrics Explorer - run.googleapis.com/container/cpu/utilizations (instance 7a1c):\n"
      "10:02  0.38\n10:03  0.51\n10:04  0.66\n10:05  0.81\n10:06  0.98\n");
  EXPECT_EQ(growing(other, "metric"), nullptr);
}

// jstat -gc every interval: OU (old generation used) and MU (metaspace used), in KB.
TEST(SeriesColumns, JstatsUsedColumns) {
  Diagnosis d = test::diagnose_text(
      "$ jstat -gc 4412 60s\n"
      " S0C    S1C    S0U    S1U      EC       EU        OC         OU       MC     MU    CCSC   CCSU   YGC     YGCT    FGC    FGCT     GCT\n"
      " 0.0   4096.0  0.0   4096.0 184320.0  90112.0  860160.0   120420.5  88320.0 86110.2 10240.0 9652.1    41    0.612   0      0.000    0.612\n"
      " 0.0   4096.0  0.0   4096.0 184320.0  61440.0  860160.0   301733.9  88320.0 86114.8 10240.0 9652.1    77    1.204   0      0.000    1.204\n"
      " 0.0   4096.0  0.0   4096.0 184320.0  12288.0  860160.0   512966.1  88320.0 86120.3 10240.0 9652.1   112    1.870   1      0.410    2.280\n"
      " 0.0   4096.0  0.0   4096.0 184320.0 102400.0  860160.0   801211.7  88320.0 86122.0 10240.0 9652.1   150    2.541   3      1.380    3.921\n"
      "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_NE(growing(d, "column OU"), nullptr);
  EXPECT_EQ(growing(d, "column MU"), nullptr) << "metaspace stayed flat";
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// A table with no memory column, and rows that do not split into the
// legend's columns, add nothing.
TEST(SeriesColumns, NoMemoryColumnAndMisfitRowsSayNothing) {
  Diagnosis d = test::diagnose_text(
      "# bench: ts|qps|p50_ms|p99_ms\n"
      "2024-01-01T00:00:00Z|1200|4.1|19.0\n"
      "2024-01-01T01:00:00Z|2400|4.3|21.5\n"
      "2024-01-01T02:00:00Z|4800|4.2|20.2\n"
      "2024-01-01T03:00:00Z|9600|4.4|22.9\n");
  for (const Fact& f : d.facts) EXPECT_EQ(f.detail.find("growing"), std::string::npos) << f.detail;
}

// A figure inside a named object, printed after every job (SD.Next's memory
// report, modelled on vladmandic/sdnext#2916; our figures): "gpu used"
// climbing run after run is accumulation, the RAM beside it flat.
TEST(SeriesColumns, AFigureInsideANamedObjectIsThatObjectsSeries) {
  std::string log = "10:02:11-402217 INFO     Using DirectML Backend\n";
  const double gpu[] = {2.74, 4.02, 5.31, 6.55, 7.70};
  for (double g : gpu)
    log += fmt::format("10:03:20-091734 INFO     Processed: images=1 time=20.12 memory={{'ram': {{'used': 6.2, 'total': 31.9}}, "
                       "'gpu': {{'used': {:.2f}, 'total': 8.0}}, 'retries': 0, 'oom': 0}}\n",
                       g);
  log += "10:08:19-214980 ERROR    Exception: Could not allocate tensor with 134217728 bytes. There is not enough GPU video memory "
         "available!\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_NE(growing(d, "gpuused"), nullptr);
  EXPECT_EQ(growing(d, "ramused"), nullptr);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// A garbled `free` row whose figure is past what 64 bits hold (found by
// diagnose_fuzzer) is no size: read without an overflow, and no growth.
TEST(SeriesColumns, AFigurePastSixtyFourBitsIsNoSize) {
  Diagnosis d = test::diagnose_text(
      "$ free -g\n"
      "               total        used        free      shared  buff/cache   available\n"
      "Mem:              15           2          12           0           1          12\n"
      "Mem:              15  102400000000000000000000000          12           0           1          12\n"
      "Mem:              15           9           5           0           1           5\n");
  for (const Fact& f : d.facts) {
    if (f.usage) {
      EXPECT_LT(*f.usage, uint64_t{1} << 60) << f.detail;
    }
    if (f.total) {
      EXPECT_LT(*f.total, uint64_t{1} << 60) << f.detail;
    }
  }
}

// Heroku's runtime metrics (log-runtime-metrics of 2013, modelled on
// mchung/heroku-buildpack-wordpress#37): the figure in val=, its unit in
// units=. A dyno's total climbing hour after hour before R14 is growth.
TEST(SeriesColumns, HerokuMeasureLinesAreASeries) {
  std::string log;
  const double mb[] = {180.25, 247.60, 311.02, 389.75, 452.11};
  for (int k = 0; k < 5; ++k)
    log += fmt::format("2014-05-11T{:02}:10:18.114732+00:00 heroku[web.1]: source=heroku.4411.web.1.9c1d measure=memory_total "
                       "val={:.2f} units=MB\n",
                       2 * k + 1, mb[k]);
  log += "2014-05-11T11:40:02.501233+00:00 heroku[web.1]: Process running mem=514M(100.4%)\n"
         "2014-05-11T11:40:02.501233+00:00 heroku[web.1]: Error R14 (Memory quota exceeded)\n";
  Diagnosis d = test::diagnose_text(log);
  const Fact* g = growing(d, "memorytotal");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->usage);
  EXPECT_NEAR(static_cast<double>(*g->usage), 452.11 * 1048576.0, 1e6);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  // The same figures flat: no growth, and the quota stays the reading.
  std::string flat;
  for (int k = 0; k < 5; ++k)
    flat += fmt::format("2014-05-11T{:02}:10:18.114732+00:00 heroku[web.1]: source=heroku.4411.web.1.9c1d measure=memory_total "
                        "val={:.2f} units=MB\n",
                        2 * k + 1, 501.0 + k);
  EXPECT_EQ(growing(test::diagnose_text(flat + log.substr(log.find("2014-05-11T11:40"))), "memorytotal"), nullptr);
}

// A counter CSV that names each counter with its unit (dotnet-counters'
// export, modelled on dotnet/runtime#101183): one series per counter, the
// value last. The GC heap climbing day after day is growth; the working set
// beside it stays flat and is none.
TEST(SeriesColumns, ACounterCsvRowNamesItsSeriesAndUnit) {
  std::string csv;
  const int heap[] = {1880, 3120, 4475, 5902};
  for (int k = 0; k < 4; ++k) {
    csv += fmt::format("2024-06-0{} 04:00:00 AM,System.Runtime,GC Heap Size (MB),Metric,{}\n", k + 1, heap[k]);
    csv += fmt::format("2024-06-0{} 04:00:00 AM,System.Runtime,Working Set (MB),Metric,{}\n", k + 1, 1210 + 7 * k);
  }
  Diagnosis d = test::diagnose_text(csv +
                                    "2024-06-04T04:11:09.221Z fail: Microsoft.AspNetCore.Server.Kestrel[13]\n"
                                    "      System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n");
  const Fact* g = growing(d, "GC Heap Size");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->usage);
  EXPECT_EQ(*g->usage, 5902ull << 20);
  EXPECT_EQ(growing(d, "Working Set"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// A loop that prints the time, then ps's headerless pid, rss and command
// (modelled on rust-lang/rust-analyzer#18734; values ours): the clock time
// first is no column, and the rss column climbs.
TEST(SeriesColumns, ATimedPsLoopKeepsItsColumns) {
  std::string log = "$ while sleep 30; do printf '%s ' \"$(date +%T)\"; ps -o pid=,rss=,comm= -C indexer; done\n";
  const int kib[] = {1813460, 4071236, 8182044, 13540112, 18876220, 23611908};
  for (int k = 0; k < 6; ++k) log += fmt::format("10:{:02}:{:02}   61202  {} indexer\n", 14 + k / 2, (k % 2) * 30, kib[k]);
  log += "Dec 21 10:17:40 box kernel: Out of memory: Killed process 61202 (indexer) total-vm:25841252kB, anon-rss:23917904kB, "
         "file-rss:2560kB, shmem-rss:0kB, UID:1000 pgtables:50784kB oom_score_adj:0\n";
  Diagnosis d = test::diagnose_text(log);
  const Fact* g = growing(d, "column rss of pid 61202");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(*g->usage, 23611908ull * 1024);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// A figure whose name gives its unit and names memory ("heapInuseBytes=",
// modelled on a Go controller's cache stats in milo-os/milo#634) is a series
// in bytes; a running maximum beside it ("peakHeapBytes") is none.
TEST(SeriesColumns, ANameThatGivesItsUnitIsASeriesInThatUnit) {
  std::string log;
  const uint64_t heap[] = {1574923520, 2611477504, 3727195136, 4853341184, 5421931520};
  for (int k = 0; k < 5; ++k)
    log += fmt::format("I0529 0{}:27:44.201873       1 cache.go:212] \"cache stats\" objects={} heapInuseBytes={} peakHeapBytes={}\n",
                       k + 3, 1000000 + 600000 * k, heap[k], heap[k] + 100000000);
  Diagnosis d = test::diagnose_text(log + "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n");
  const Fact* g = growing(d, "heapinuse");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(*g->usage, heap[4]);
  EXPECT_EQ(growing(d, "peakheap"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// Two Jest workers' heaps in one log (--logHeapUsage with --maxWorkers=2,
// modelled on growthbook/growthbook#6591; values ours): the lines alternate
// between the workers, so every other step falls a little, yet each worker
// climbs. Growth, not a flat run that jumped: the climb leaves the first
// samples a little at a time.
TEST(SeriesColumns, TwoWorkersInterleavedThatBothClimbAreGrowth) {
  std::string log = "$ pnpm test -- --logHeapUsage --maxWorkers=2\n";
  for (int k = 0; k < 16; ++k)
    log += fmt::format(" PASS  test/suite{}.test.ts (6.{:02} s, {} MB heap size)\n", k, k, 1200 + 420 * (k / 2) + (k % 2 ? -25 : 0));
  log += "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n";
  Diagnosis d = test::diagnose_text(log);
  ASSERT_NE(growing(d, "heapsize"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  // The same figures with one worker's falling back by a third each time: a
  // sawtooth, no growth.
  std::string saw = "$ pnpm test -- --logHeapUsage --maxWorkers=2\n";
  for (int k = 0; k < 16; ++k)
    saw += fmt::format(" PASS  test/suite{}.test.ts (6.{:02} s, {} MB heap size)\n", k, k, k % 2 ? 900 : 1200 + 420 * (k / 2));
  EXPECT_EQ(growing(test::diagnose_text(saw + "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n"),
                    "heapsize"),
            nullptr);
}

// A loop that prints torch.cuda.memory_allocated() after each batch, the size
// before its word ("100 1.84 GiB allocated"; modelled on an embedding loop in
// a notebook that kept every batch's output on the GPU; values ours): a
// series, whose climb into the CUDA OOM is accumulation. The step's number
// before the size is not read as the size; the OOM message's own "11.20 GiB
// already allocated" is not a sample.
TEST(SeriesColumns, ASizeBeforeItsWordIsASeries) {
  auto log = [](int step_gib_hundredths) {
    std::string s = "In [9]: for i in range(0, len(docs), 100): ...\n";
    for (int k = 0; k < 8; ++k)
      s += fmt::format("{} {}.{:02} GiB allocated\n", k * 100, (148 + step_gib_hundredths * k) / 100, (148 + step_gib_hundredths * k) % 100);
    return s + "OutOfMemoryError: CUDA out of memory. Tried to allocate 368.00 MiB (GPU 0; 11.76 GiB total capacity; 11.20 GiB "
               "already allocated; 118.06 MiB free; 11.29 GiB reserved in total by PyTorch)\n";
  };
  Diagnosis d = test::diagnose_text(log(136));
  const Fact* g = growing(d, "allocated");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation) << test::reason_text(d);
  // Flat figures: no series that grew, and no cause from one.
  Diagnosis flat = test::diagnose_text(log(0));
  EXPECT_EQ(growing(flat, "allocated"), nullptr);
  EXPECT_NE(flat.cause, Cause::leak_or_accumulation);
}

// A training loop that prints the host's use beside its loss ("ram_used=26.4G",
// modelled on a sequential-recommendation run whose RAM climbed across
// epochs; our figures): the climb into the kernel's kill is accumulation, not
// the epoch's batch.
TEST(SeriesColumns, ATrainingLoopsRamUsedIsASeries) {
  std::string log = "$ python main.py --batch_size=512\n";
  const char* used[] = {"18.9G", "26.4G", "33.7G", "41.2G", "48.8G", "55.0G", "61.7G"};
  int step = 2000;
  for (const char* u : used) {
    log += fmt::format("loss in epoch {} iteration {}/19532: 0.61 ram_used={}\n", step > 19532 ? 2 : 1, step % 19532, u);
    step += 4000;
  }
  log += "Killed\n[1201551.003821] Out of memory: Killed process 14420 (python) total-vm:87110284kB, anon-rss:63102144kB, "
         "file-rss:104388kB, shmem-rss:12288kB, UID:1000 pgtables:124512kB oom_score_adj:0\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_NE(growing(d, "ramused"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation) << test::reason_text(d);
}

// A training loop's "mem_allocated 18.31 GiB" (modelled on a distributed
// checkpointing run whose allocation stepped up after every save; our
// figures) and a service's "gpu used 1,812 MiB" with thousands grouped by
// commas (an ONNX Runtime OCR service, 2022): both series, both grew.
TEST(SeriesColumns, MemAllocatedAndCommaGroupedFiguresAreSeries) {
  std::string train;
  for (int k = 0; k < 6; ++k)
    train += fmt::format("step {:3} | loss 7.1 | mem_allocated {}.31 GiB | mem_reserved 70.00 GiB\n", 5 * (k + 1), 18 + 9 * k);
  train += "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of "
           "which 1.12 GiB is free.\n";
  Diagnosis d = test::diagnose_text(train);
  EXPECT_NE(growing(d, "memallocated"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation) << test::reason_text(d);
  std::string ocr;
  const char* used[] = {"1,812", "2,904", "4,377", "6,120", "8,931", "11,650", "14,208"};
  for (const char* u : used) ocr += std::string("[INF] page 9 2480x3508 -> 61 boxes (655 ms) | gpu used ") + u + " MiB\n";
  ocr += "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException] Failed to allocate memory for requested "
         "buffer of size 2244608000\n";
  Diagnosis o = test::diagnose_text(ocr);
  const Fact* g = growing(o, "gpuused");
  ASSERT_NE(g, nullptr) << test::reason_text(o);
  EXPECT_EQ(*g->usage, 14208ULL * 1024 * 1024);
}

// A Prometheus scrape pasted row after row: Go's client prints large figures
// with an exponent ("go_memstats_heap_inuse_bytes 3.1874112e+08"). A heap
// that climbs scrape after scrape is growth (modelled on letsencrypt/boulder's
// metrics endpoint; our figures).
TEST(SeriesColumns, ExpositionFiguresWithAnExponentAreASeries) {
  std::string scrape;
  const char* heap[] = {"2.9174112e+08", "1.12415744e+09", "2.31802112e+09", "3.69453824e+09"};
  for (const char* h : heap) scrape += std::string("go_goroutines 388\ngo_memstats_heap_inuse_bytes ") + h + "\n";
  Diagnosis d = test::diagnose_text(
      scrape + "[Thu Feb 17 02:19:06 2022] Out of memory: Killed process 2231 (va) total-vm:6183344kB, anon-rss:4712580kB, file-rss:0kB, "
               "shmem-rss:0kB, UID:1001 pgtables:9492kB oom_score_adj:0\n");
  const Fact* g = growing(d, "heapinuse");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->usage);
  EXPECT_NEAR(static_cast<double>(*g->usage), 3.69453824e9, 1e3);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  // A figure with a garbled exponent is no sample.
  EXPECT_EQ(growing(test::diagnose_text("go_memstats_heap_inuse_bytes 2.9e+0x8\ngo_memstats_heap_inuse_bytes 1.1e+0x9\n"
                                        "go_memstats_heap_inuse_bytes 2.3e+0x9\ngo_memstats_heap_inuse_bytes 3.6e+0x9\n"),
                    "heapinuse"),
            nullptr);
}

// A call printed with its result, as Julia's workers log it
// ("Base.gc_live_bytes() = 1.12 GB"): the live heap climbing iteration after
// iteration of the same work is accumulation (modelled on a JuliaLang
// Distributed thread; our figures).
TEST(SeriesColumns, ACallPrintedWithItsResultIsASeries) {
  std::string log = "$ srun --ntasks=8 --mem-per-cpu=4G julia run.jl\n";
  const double live[] = {0.91, 1.52, 2.20, 2.84, 3.41};
  for (int k = 0; k < 5; ++k)
    log += fmt::format("      From worker 3:\t[iter {}] Base.gc_live_bytes() = {:.2f} GB\n", 10 * (k + 1), live[k]);
  log += "srun: error: node17: task 2: Out Of Memory\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_NE(growing(d, "gc_live_bytes"), nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// top's rows with the header cut away ("top -b -n1 -p PID | tail -1"),
// taken again and again: the command names the columns (modelled on a
// milvus-io/milvus benchmark thread; our figures). RES climbing round after
// round is growth.
TEST(SeriesColumns, TopsRowsWithTheHeaderCutAwayKeepTopsColumns) {
  std::string log;
  const char* res[] = {"98.1g", "151.7g", "214.0g"};
  for (const char* r : res)
    log += std::string("$ top -b -n1 -p 31877 | tail -1\n31877 root      20   0  120.4g ") + r + "   9960 S 251.3 22.4 412:07.31 vecdb_server\n";
  Diagnosis d = test::diagnose_text(log + "[Thu Mar 26 01:31:38 2020] Out of memory: Killed process 31877 (vecdb_server) "
                                          "total-vm:412884120kB, anon-rss:402113344kB, file-rss:0kB, shmem-rss:0kB\n");
  const Fact* g = growing(d, "RES");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// jstat's used columns printed by a loop without their unit ("MU=146811.4",
// awk over jstat -gc: KB, jstat's own unit): metaspace climbing reload after
// reload into its cap is accumulation, not a cap set too low (modelled on a
// Play dev-mode reload thread; our figures).
TEST(SeriesColumns, JstatsBareUsedColumnsAreKilobytes) {
  std::string log = "$ java -Xmx1024m -XX:MaxMetaspaceSize=256m -jar sbt-launch.jar run\n";
  const double mu[] = {131811.4, 160230.9, 188918.2, 217604.7, 246377.3};
  for (double m : mu) log += fmt::format("MC={:.1f} MU={:.1f} FGC=9\n", m + 4000, m);
  log += "java.lang.OutOfMemoryError: Metaspace\n\tat java.lang.ClassLoader.defineClass1(Native Method)\n";
  Diagnosis d = test::diagnose_text(log);
  const Fact* g = growing(d, "metaspaceused");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->usage);
  EXPECT_NEAR(static_cast<double>(*g->usage), 246377.3 * 1024.0, 2048.0);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// A CSV of two columns whose memory one names its unit (modelled on
// UKPLab/sentence-transformers memory-leak reports printing psutil's RSS per
// iteration; our own figures): its rows are a series. The same header with
// no unit in the name says nothing.
TEST(SeriesColumns, ATwoColumnCsvWhoseMemoryColumnNamesItsUnit) {
  auto run = [](const std::string& header) {
    std::string t = "$ python memleak.py\n" + header + "\n";
    for (int i = 0; i < 12; ++i) t += fmt::format("{:02d}, {:.2f}\n", i, 3400.0 + 90.0 * i * i / 4);
    return t + "Killed\n";
  };
  Diagnosis d = test::diagnose_text(run("iteration,memory_usage_in_MiB"));
  ASSERT_NE(growing(d, ""), nullptr) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  EXPECT_EQ(growing(test::diagnose_text(run("iteration,memory_usage")), ""), nullptr);
}

}  // namespace
}  // namespace aimem
