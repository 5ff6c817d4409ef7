// Node.js / V8 heap failures (src/recognize/families/node.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

// A worker_threads Worker at its heap limit (Node's ERR_WORKER_OUT_OF_MEMORY,
// modelled on a monorepo build runner's worker as a writer of the
// forty-fifth batch rendered it; values ours): the JavaScript heap, one
// failure though the code is printed again below the stack.
TEST(Node, AWorkerThreadAtItsHeapLimitIsTheJsHeap) {
  const char* text =
      "ERR x @acme/web build\n"
      "Error [ERR_WORKER_OUT_OF_MEMORY]: Worker terminated due to reaching memory limit: JS heap out of memory\n"
      "    at new NodeError (node:internal/errors:405:5)\n"
      "    at [kOnExit] (node:internal/worker:287:26)\n"
      "    at Worker.<computed>.onexit (node:internal/worker:203:20) {\n"
      "  code: 'ERR_WORKER_OUT_OF_MEMORY'\n"
      "}\n";
  auto f = test::facts_of_kind(text, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].layer, Layer::js_heap);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::js_heap);
}

TEST(Node, NewGcTraceGivesUptimeAndCommittedHeapToTheFatalLine) {
  const char* log = R"(<--- Last few GCs --->

[6904:0000029E16A50000]  1889696 ms: Scavenge (during sweeping) 2043.3 (2047.8) -> 2042.0 (2048.3) MB, pooled: 0.0 MB, 3.93 / 0.00 ms (average mu = 0.274, current mu = 0.258) allocation failure;
[6904:0000029E16A50000]  1891233 ms: Mark-Compact (reduce) 2045.8 (2050.3) -> 2042.3 (2046.8) MB, pooled: 0.0 MB, 795.53 / 0.00 ms (average mu =
FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory
----- Native stack trace -----
)";
  auto f = of_kind(log, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].layer, Layer::js_heap);
  EXPECT_EQ(f[0].detail, "Ineffective mark-compacts near heap limit");
  ASSERT_TRUE(f[0].uptime_at_failure_s);
  EXPECT_NEAR(*f[0].uptime_at_failure_s, 1891.233, 1e-6);
  EXPECT_EQ(f[0].heap_limit, static_cast<uint64_t>(2050.3 * units::MiB));
  EXPECT_EQ(f[0].pid, 6904);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::js_heap);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// V8 prints its last collections only when the heap has run out, just before
// the FATAL line: a paste cut before that line is still the heap's failure,
// at the committed size the collections show (our figures, V8's format).
// With the FATAL line it stays one failure, the FATAL line's.
TEST(Node, TheLastGcsReportWithoutItsFatalLineIsStillTheHeap) {
  const std::string gcs = R"(<--- Last few GCs --->

[4417:0x5b0c2e0]   183211 ms: Mark-sweep 2039.8 (2081.4) -> 2038.9 (2082.1) MB, 1613.2 / 0.0 ms  (average mu = 0.141, current mu = 0.011) allocation failure; scavenge might not succeed
[4417:0x5b0c2e0]   185002 ms: Mark-sweep 2040.1 (2082.1) -> 2039.6 (2082.9) MB, 1771.0 / 0.0 ms  (average mu = 0.087, current mu = 0.010) allocation failure; scavenge might not succeed
)";
  auto f = of_kind(gcs, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].layer, Layer::js_heap);
  EXPECT_EQ(f[0].heap_limit, static_cast<uint64_t>(2082.9 * units::MiB));
  EXPECT_EQ(f[0].where.line, 1u);
  EXPECT_EQ(test::diagnose_text(gcs).layer, Layer::js_heap);
  auto whole = of_kind(gcs + "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n", FactKind::js_heap_oom);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].detail, "Reached heap limit");
  // Collections logged by --trace-gc, without the heading, are no failure.
  EXPECT_EQ(test::diagnose_text("[4417:0x5b0c2e0]   183211 ms: Mark-sweep 139.8 (181.4) -> 138.9 (182.1) MB, 13.2 / 0.0 ms  (average mu = 0.941, current mu = 0.911) task; GC in old space requested\n").layer,
            Layer::none);
}

TEST(Node, ShortLivedHeapIsALimitTooLow) {
  const char* log = R"(<--- Last few GCs --->

[398:0x58e8740]   191182 ms: Mark-sweep 949.5 (965.9) -> 948.3 (965.9) MB, 1464.6 / 0.0 ms  (average mu = 0.153, current mu = 0.005) allocation failure; scavenge might not succeed
[398:0x58e8740]   192901 ms: Mark-sweep 949.5 (965.9) -> 948.4 (965.9) MB, 1703.2 / 0.0 ms  (average mu = 0.077, current mu = 0.009) allocation failure; scavenge might not succeed

<--- JS stacktrace --->

FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
)";
  auto f = of_kind(log, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(*f[0].uptime_at_failure_s, 192.901, 1e-6);
  EXPECT_EQ(f[0].heap_limit, static_cast<uint64_t>(965.9 * units::MiB));
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::js_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

TEST(Node, TwoGcEntriesRunTogetherOnOneLineAreBothRead) {
  // Node 20 prints "finalize increment" without a newline before the next entry.
  const char* log =
      "[5992:0x3becce20]       68 ms: Mark-Compact 12.1 (20.5) -> 11.7 (20.5) MB, 3.84 / 0.00 ms  (average mu = 1.000) "
      "finalize increment[5992:0x3becce20]       87 ms: Mark-Compact 15.5 (24.3) -> 15.5 (32.3) MB, 15.02 / 0.00 ms\n"
      "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n";
  auto f = of_kind(log, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(*f[0].uptime_at_failure_s, 0.087, 1e-9);
  EXPECT_EQ(f[0].heap_limit, static_cast<uint64_t>(32.3 * units::MiB));
}

TEST(Node, EmbedderAndNewerV8FormatsAreJsHeap) {
  for (const char* line : {"# Fatal javascript OOM in Reached heap limit\n", "#\n# Fatal JavaScript out of memory: Reached heap limit\n#\n",
                           "FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory\n"}) {
    auto f = of_kind(line, FactKind::js_heap_oom);
    ASSERT_EQ(f.size(), 1u) << line;
    EXPECT_EQ(f[0].layer, Layer::js_heap) << line;
  }
}

// Chromium's and Electron's renderers log V8's OOM callback in their own
// line format (v8_initializer.cc; modelled on tutao/tutanota#5586, our own
// pids and times): "javascript" is the heap, "process" the OS refusing memory.
TEST(Node, ChromiumsV8OomLineIsTheHeapOrTheProcess) {
  auto js = of_kind("[4410:0302/101112.551207:ERROR:v8_initializer.cc(753)] V8 javascript OOM (Reached heap limit).\n",
                    FactKind::js_heap_oom);
  ASSERT_EQ(js.size(), 1u);
  EXPECT_EQ(js[0].layer, Layer::js_heap);
  EXPECT_EQ(js[0].detail, "Reached heap limit");
  auto os = of_kind("[4410:0302/101112.551207:ERROR:v8_initializer.cc(750)] V8 process OOM (Oilpan: CagedHeap reservation.).\n",
                    FactKind::js_heap_oom);
  ASSERT_EQ(os.size(), 1u);
  EXPECT_EQ(os[0].layer, Layer::host_ram);
}

TEST(Node, ProcessOutOfMemoryIsNotTheJsHeap) {
  const char* log = "FATAL ERROR: Zone Allocation failed - process out of memory\n";
  auto f = of_kind(log, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::host_ram);
  // V8 labels a failed chunk mapping as JavaScript, but it is the OS refusing memory.
  auto g = of_kind("# Fatal JavaScript out of memory: MemoryChunk allocation failed during deserialization.\n", FactKind::js_heap_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].layer, Layer::host_ram);
  // Under a container limit the process OOM is that limit.
  Diagnosis d = test::diagnose_text(std::string("$ docker run -m 1g node:20 node build.js\n") + log);
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(Node, MaxOldSpaceSizeIsASetting) {
  auto f = of_kind("> node --max-old-space-size=2048 server.js\nNODE_OPTIONS=--max-old-space-size-percentage=75\n", FactKind::runtime_setting);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].heap_limit, 2048 * units::MiB);
  EXPECT_EQ(f[0].detail, "max-old-space-size");
  EXPECT_DOUBLE_EQ(*f[1].ratio, 0.75);
}

TEST(Node, HelpTextQuotingTheMessageIsNoFailure) {
  const char* log = R"(> rag-api@2.3.1 start
> node --max-old-space-size=2048 server.js
[startup] memory guard on: exits cleanly if heap passes 90% instead of failing with 'JavaScript heap out of memory'
)";
  EXPECT_TRUE(of_kind(log, FactKind::js_heap_oom).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// The real thing: V8 with a 16 MiB old space, on this machine.
TEST(Node, RealV8HeapLimitFailureIsRecognised) {
  auto r = test::run({"/bin/sh", "-c", "command -v node >/dev/null || exit 127; "
                                       "exec node --max-old-space-size=16 -e 'a=[];for(;;)a.push(new Array(1e5).fill(1))' 2>&1"},
                     {}, {}, 120);
  if (r.status == 127) GTEST_SKIP() << "node is not installed";
  EXPECT_NE(r.status, 0);
  Diagnosis d = test::diagnose_text(r.out + r.err);
  EXPECT_EQ(d.layer, Layer::js_heap) << r.out << r.err;
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  auto f = of_kind(r.out + r.err, FactKind::js_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f[0].heap_limit);
  EXPECT_GE(*f[0].heap_limit, 8 * units::MiB);
  EXPECT_LE(*f[0].heap_limit, 128 * units::MiB);
  ASSERT_TRUE(f[0].uptime_at_failure_s);
  EXPECT_LT(*f[0].uptime_at_failure_s, 60.0);
}

// V8 before Node 7 (and old Electron) named the heap limit "process out of
// memory" after CALL_AND_RETRY; a zone allocation with that wording is still
// the process's.
TEST(Node, OldCallAndRetryWordingIsTheHeap) {
  EXPECT_EQ(test::diagnose_text("FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - process out of memory\n").layer, Layer::js_heap);
  EXPECT_EQ(test::diagnose_text("[2960:1205/093426:ERROR:atom_bindings.cc(38)] Fatal error in V8: CALL_AND_RETRY_LAST Allocation "
                                "failed - process out of memory\n")
                .layer,
            Layer::js_heap);
  EXPECT_NE(test::diagnose_text("FATAL ERROR: Zone Allocation failed - process out of memory\n").layer, Layer::js_heap);
}

// V8 before Node 7: the scavenger could not copy or promote a survivor
// ("Scavenger: semi-space copy"), on the FATAL line or the one above its
// "Allocation failed": the heap was full, whatever V8 called it (modelled on
// nodejs/node#3370's layout; our figures). A zone allocation stays the process's.
TEST(Node, TheScavengersCopyFailingIsTheHeapOnEitherLine) {
  EXPECT_EQ(test::diagnose_text("FATAL ERROR: Scavenger: semi-space copy\n Allocation failed - process out of memory\n").layer,
            Layer::js_heap);
  EXPECT_EQ(test::diagnose_text("FATAL ERROR: Scavenger: semi-space copy Allocation failed - process out of memory\n").layer,
            Layer::js_heap);
  EXPECT_EQ(test::diagnose_text("FATAL ERROR: MarkCompactCollector: young object promotion failed\n"
                                " Allocation failed - process out of memory\n")
                .layer,
            Layer::js_heap);
  EXPECT_NE(test::diagnose_text("FATAL ERROR: Scavenger: semi-space copy\nsomething else\n"
                                " Allocation failed - process out of memory\n")
                .layer,
            Layer::js_heap);
}

}  // namespace
}  // namespace aimem
