// WebAssembly memory (src/recognize/families/wasm_memory.cc): emscripten's
// heap that could not grow and V8's refused reservation for an instance, in
// their runtimes' formats with our own figures and names. Neither is a pool
// of the machine: the layer stays unknown and the reason names the pool.
// Modelled on tensorflow/tfjs's wasm backend tests (the heap past its 2 GiB
// maximum), opencv.js in a browser loop (the bare abort after a climbing
// heap), whisper.cpp's wasm build aborting while its model loads, and Node's
// fetch failing to instantiate llhttp's module under `ulimit -v`.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(WasmMemory, TheHeapAtItsBuildMaximumIsTheProgramsCapNotAMachinePool) {
  const std::string log =
      "Cannot enlarge memory, asked to go up to 2248146944 bytes, but the limit is 2147483648 bytes!\n"
      "RuntimeError: Aborted(Cannot enlarge memory arrays to size 2248146944 bytes (OOM). Either (1) compile with -s "
      "INITIAL_MEMORY=X with X higher than the current value 2147418112, (2) compile with -s ALLOW_MEMORY_GROWTH=1 ...)\n"
      "    at abort (backend-wasm.js:9:9411)\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].requested, 2248146944u);
  EXPECT_EQ(f[0].limit, 2147483648u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::unknown) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  EXPECT_NE(test::reason_text(d).find("WebAssembly"), std::string::npos) << test::reason_text(d);
}

TEST(WasmMemory, ABareAbortAfterAClimbingHeapIsAccumulation) {
  std::string log = "app.js:12 model ready (wasm)\n";
  for (int i = 1; i <= 6; ++i) log += "app.js:40 frame " + std::to_string(i * 100) + "  infer 38.2 ms  cv heap " + std::to_string(i * 40) + ".0 MB\n";
  const std::string abort = "opencv.js:30 Uncaught (in promise) abort(\"OOM\"). Build with -s ASSERTIONS=1 for more info.\n";
  Diagnosis d = test::diagnose_text(log + abort);
  EXPECT_EQ(d.layer, Layer::unknown) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation) << test::reason_text(d);
  // The same abort with a flat heap says nothing of why.
  std::string flat = "app.js:12 model ready (wasm)\n";
  for (int i = 1; i <= 6; ++i) flat += "app.js:40 frame " + std::to_string(i * 100) + "  infer 38.2 ms  cv heap 40.0 MB\n";
  EXPECT_EQ(test::diagnose_text(flat + abort).cause, Cause::unknown);
}

TEST(WasmMemory, AnAbortWhileTheModelLoadsIsTheLoad) {
  Diagnosis d = test::diagnose_text(
      "whisper_init_from_file_no_state: loading model from 'ggml-small.bin'\n"
      "whisper_model_load: loading model\n"
      "whisper_model_load: model size    =  465.10 MB\n"
      "Aborted(OOM)\n");
  EXPECT_EQ(d.layer, Layer::unknown) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::model_load) << test::reason_text(d);
}

TEST(WasmMemory, AnEnginesRefusedReservationUnderUlimitVIsThatLimit) {
  const std::string fail =
      "RangeError: WebAssembly.instantiate(): Out of memory: Cannot allocate Wasm memory for new instance\n"
      "    at lazyllhttp (node:internal/deps/undici/undici:5822:32)\n";
  Diagnosis capped = test::diagnose_text("$ ulimit -v\n4194304\n$ node fetch.mjs\n" + fail);
  EXPECT_EQ(capped.layer, Layer::unknown) << test::reason_text(capped);
  EXPECT_EQ(capped.cause, Cause::limit_too_low) << test::reason_text(capped);
  Diagnosis bare = test::diagnose_text(fail);
  EXPECT_EQ(bare.layer, Layer::unknown) << test::reason_text(bare);
  EXPECT_EQ(bare.cause, Cause::unknown);
  // "unlimited" is no limit, nor is a number further down that the command did not print.
  EXPECT_EQ(test::diagnose_text("$ ulimit -v\nunlimited\n" + fail).cause, Cause::unknown);
  EXPECT_EQ(test::diagnose_text("$ ulimit -v\nunlimited\n$ wc -l requests.log\n  48211\n" + fail).cause, Cause::unknown);
}

TEST(WasmMemory, AdviceAndMentionsAreNotFailures) {
  EXPECT_TRUE(test::facts_of_kind("Tip: build with -sALLOW_MEMORY_GROWTH=1 if you see \"Cannot enlarge memory\" errors\n",
                                  FactKind::host_alloc_failure)
                  .empty());
}

// A collector's line with the heap's size mid-line ("heap used 1453 MB of
// 4096 MB, ...", every tenth line of a busy service log) is no heap series of
// this kind: only a size that ends the line is, so such logs are not read
// line by line for it (bench/diagnose_vs_grep.sh).
TEST(WasmMemory, OnlyAHeapSizeThatEndsItsLineIsReadAsAHeapSeries) {
  std::string mid, end;
  for (int i = 1; i <= 6; ++i) {
    mid += "gc: heap used " + std::to_string(i * 300) + " MB of 4096 MB, 3059 objects freed\n";
    end += "frame " + std::to_string(i * 100) + "  infer 38.2 ms  cv heap " + std::to_string(i * 40) + ".0 MB\n";
  }
  const std::string abort = "Aborted(OOM)\n";
  EXPECT_EQ(test::diagnose_text(end + abort).cause, Cause::leak_or_accumulation);
  // The mid-line heap is read only as a paste's climbing figure (scanner.cc,
  // shape_series), never line by line by this reader.
  Diagnosis m = test::diagnose_text(mid + abort);
  for (const Fact& f : m.facts) {
    if (f.kind == FactKind::memory_usage) {
      EXPECT_NE(f.detail.find("figure of the lines"), std::string::npos) << f.detail;
    }
  }
}

}  // namespace
}  // namespace aimem
