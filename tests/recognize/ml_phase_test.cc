// Load / serve phase markers and how they decide a GPU OOM's cause.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

const char* kOom =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of 23.64 GiB of "
    "which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.50 GiB memory in use. Of the allocated "
    "memory 23.00 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n";

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(MlPhase, LoadingCheckpointMakesModelLoad) {
  std::string text = std::string("Loading checkpoint shards:  50%|#####     | 2/4 [00:10<00:10,  5.00s/it]\n") +
                     "  File \"/app/serve.py\", line 12, in <module>\n    model = AutoModelForCausalLM.from_pretrained(name)\n" + kOom;
  EXPECT_FALSE(of_kind(text, FactKind::phase_load).empty());
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

TEST(MlPhase, ForwardPassMakesConcurrencyBatch) {
  std::string text = std::string("  File \"/app/model.py\", line 88, in forward\n    x = self.attn(x)\n") + kOom;
  auto s = of_kind(text, FactKind::phase_serve);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].detail, "forward pass");
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

TEST(MlPhase, ProfilingAndGraphCaptureAreTheBatch) {
  std::string text = std::string("INFO 05-01 10:00:00 model_runner.py:1077] Loading model weights took 14.99 GB\n") +
                     "  File \"/vllm/worker/model_runner.py\", line 1230, in profile_run\n" + kOom;
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

TEST(MlPhase, MlcLoadingLineOnlyAtLineStart) {
  EXPECT_EQ(of_kind("-- loading /data/models/params/\n", FactKind::phase_load).size(), 1u);
  EXPECT_TRUE(of_kind("progress -- loading bar\n", FactKind::phase_load).empty());
}

TEST(MlPhase, OneMarkerPerTracebackBurst) {
  std::string text;
  for (int i = 0; i < 5; ++i) text += "  File \"/m.py\", line " + std::to_string(i) + ", in forward\n";
  EXPECT_EQ(of_kind(text, FactKind::phase_serve).size(), 1u);
  // Markers alone are never a failure.
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

}  // namespace
}  // namespace aimem
