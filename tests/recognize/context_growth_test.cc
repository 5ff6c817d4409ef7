// The context length rising before a failure (src/recognize/families/context_growth.cc).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::reason_text;

std::vector<Fact> marks(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of_kind(text, FactKind::phase_serve))
    if (f.detail.rfind(kContextGrew, 0) == 0) out.push_back(f);
  return out;
}

// text-generation-webui's per-generation line ("Output generated in ...
// context N"), as oobabooga/text-generation-webui exllama reports print it;
// our own figures. The generation at the longest context yet failed in the
// attention of its prompt's forward pass.
std::string webui(int last_context) {
  return std::string("2024-02-11 09:01:12 INFO:Loaded the model in 18.20 seconds.\n") +
         "Output generated in 11.02 seconds (14.10 tokens/s, 160 tokens, context 2210, seed 5511)\n"
         "Output generated in 15.77 seconds (10.21 tokens/s, 160 tokens, context 3342, seed 90210)\n"
         "Output generated in 19.35 seconds (8.31 tokens/s, 160 tokens, context " + std::to_string(last_context) + ", seed 4242)\n"
         "Traceback (most recent call last):\n"
         "  File \"/srv/webui/repositories/exllama/model.py\", line 860, in forward\n"
         "    hidden_states = decoder_layer.forward(hidden_states, cache, buffers[device], lora)\n"
         "  File \"/srv/webui/repositories/exllama/model.py\", line 382, in forward\n"
         "    attn_weights = torch.matmul(query_states, key_states)\n"
         "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.10 GiB (GPU 0; 23.65 GiB total capacity; "
         "21.02 GiB already allocated; 812.00 MiB free; 22.41 GiB reserved in total by PyTorch)\n";
}

TEST(ContextGrowth, EachNewLongestContextIsAMarkWithItsFirstAndLatestLength) {
  auto m = marks(webui(4960));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NE(m[0].detail.find("from 2210 to 3342 tokens"), std::string::npos) << m[0].detail;
  EXPECT_NE(m[1].detail.find("from 2210 to 4960 tokens"), std::string::npos) << m[1].detail;
  EXPECT_EQ(m[1].cause, Cause::kv_cache_context);
  // The lengths are words, never a configured context or a count of copies.
  EXPECT_FALSE(m[1].ctx);
  EXPECT_FALSE(m[1].count);
}

TEST(ContextGrowth, AStepAtTheLongestContextYetIsTheContextNotTheBatch) {
  Diagnosis grew = test::diagnose_text(webui(4960));
  EXPECT_EQ(grew.layer, Layer::gpu_vram);
  EXPECT_EQ(grew.cause, Cause::kv_cache_context);
  EXPECT_NE(reason_text(grew).find("from 2210 to 4960 tokens"), std::string::npos) << reason_text(grew);
}

// A length that repeats (a setting printed on every start), one that fell,
// a key inside another word, a decimal, a size: no mark.
TEST(ContextGrowth, RepeatedFallingAndOtherNumbersAreNoMark) {
  EXPECT_TRUE(marks("llama_new_context_with_model: n_ctx = 8192\nllama_new_context_with_model: n_ctx = 8192\n").empty());
  EXPECT_TRUE(marks("context 4096 done\ncontext 2048 done\ncontext 3000 done\n").empty());
  EXPECT_TRUE(marks("n_context=1024\nn_context=8192\n").empty());
  EXPECT_TRUE(marks("context 0.5\ncontext 2.5\n").empty());
  EXPECT_TRUE(marks("context 12MiB\ncontext 90MiB\n").empty());
  // Rising, but short sequences (under 1024 tokens) or by less than half again.
  EXPECT_TRUE(marks("max_len=200\nmax_len=900\n").empty());
  EXPECT_TRUE(marks("max_len=4000\nmax_len=5000\n").empty());
  EXPECT_EQ(marks("max_len=2,390 loss=0.2\nmax_len=7,045 loss=0.19\n").size(), 1u);
}

// Requests counted in flight beside the growth speak for the batch: copies
// were counted, so the lengths do not turn the step's cues.
TEST(ContextGrowth, RequestsCountedInFlightKeepTheBatch) {
  std::string text = "Running: 64 reqs, Swapped: 0 reqs, Pending: 12 reqs\n" + webui(4960);
  EXPECT_NE(test::diagnose_text(text).cause, Cause::kv_cache_context);
}

}  // namespace
}  // namespace aimem
