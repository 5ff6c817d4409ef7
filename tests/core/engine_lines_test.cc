// The engines' start-up memory lines (core/engine_lines.h), read once for
// the recognizers and for `fit --against`. Lines written in the engines'
// formats with our own values: vLLM's gpu_worker.py / worker.py log lines
// (vllm-project/vllm v1/worker/gpu_worker.py, worker/worker.py), SGLang's
// scheduler line (sgl-project/sglang managers/scheduler.py) and llama.cpp's
// llama_context / llama_kv_cache lines (ggml-org/llama.cpp src/llama-context.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "core/engine_lines.h"
#include "core/units.h"

namespace aimem::engine_lines {
namespace {

constexpr uint64_t kMiB = units::MiB;
constexpr uint64_t kGiB = units::GiB;
// parse_log_size rounds to the byte; vLLM's "GB" is GiB (it divides by 2**30).
uint64_t gib(double x) { return uint64_t(std::llround(x * double(kGiB))); }

TEST(EngineLines, VllmWeightsInBothGenerationsAndNothingElse) {
  EXPECT_EQ(vllm_weights("INFO 03-02 model_runner.py:1071] Loading model weights took 13.4512 GB"),
            gib(13.4512));
  EXPECT_EQ(vllm_weights("(EngineCore_0 pid=811) INFO gpu_model_runner.py:1854] Model loading took 7.1002 GiB and "
                         "3.2 seconds"),
            gib(7.1002));
  EXPECT_FALSE(vllm_weights("Loading weights took 3.1 seconds"));
  EXPECT_FALSE(vllm_weights("Model loading took a while"));
}

TEST(EngineLines, VllmKvBudgetKeepsItsSign) {
  auto neg = vllm_kv_available("INFO gpu_worker.py:276] Available KV cache memory: -0.84 GiB");
  ASSERT_TRUE(neg);
  EXPECT_TRUE(neg->negative);
  EXPECT_EQ(neg->value(), -int64_t(gib(0.84)));
  auto pos = vllm_kv_available("the rest of the memory reserved for KV Cache is 21.7GiB.");
  ASSERT_TRUE(pos);
  EXPECT_FALSE(pos->negative);
  EXPECT_EQ(pos->bytes, gib(21.7));
  auto zero = vllm_kv_available("Available KV cache memory: -0.00 GiB");
  ASSERT_TRUE(zero);
  EXPECT_FALSE(zero->negative) << "-0 is no shortfall";
}

TEST(EngineLines, VllmBlocksAndTokensWithGroupedDigits) {
  EXPECT_EQ(vllm_gpu_blocks("INFO executor_base.py:110] # cuda blocks: 0, # GPU blocks: 2,317, # CPU blocks: 512"),
            2317u);
  EXPECT_EQ(vllm_kv_tokens("INFO kv_cache_utils.py:1017] GPU KV cache size: 412,880 tokens"), 412880u);
  EXPECT_FALSE(vllm_kv_tokens("GPU KV cache size: 12.4 GiB")) << "a size is not a token count";
}

TEST(EngineLines, ProfileKeysReadPastTheirSeparators) {
  const char* line =
      "Memory profiling takes 4.1 seconds. total_gpu_memory (79.2GiB) x gpu_memory_utilization (0.90) = 71.3GiB; "
      "model weights take 15.0GiB; non_torch_memory takes 0.27GiB; PyTorch activation peak memory takes 2.1GiB; "
      "the rest of the memory reserved for KV Cache is 53.9GiB.";
  EXPECT_EQ(size_of_key(line, "total_gpu_memory")->bytes, gib(79.2));
  EXPECT_EQ(size_of_key(line, "model weights take")->bytes, gib(15.0));
  EXPECT_EQ(size_of_key(line, "non_torch_memory")->bytes, gib(0.27));
  EXPECT_EQ(size_of_key(line, "activation peak memory")->bytes, gib(2.1));
  auto kv = size_of_key("memory profile: kv_cache_size=-0.31GiB, non_torch_memory=0.4GiB", "kv_cache_size=");
  ASSERT_TRUE(kv);
  EXPECT_TRUE(kv->negative);
  EXPECT_FALSE(size_of_key(line, "peak_torch_memory"));
}

TEST(EngineLines, SglangCountsStartAWord) {
  const char* line =
      "max_total_num_tokens=96512, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests=1024, "
      "context_len=32768, available_gpu_mem=6.11 GB";
  EXPECT_EQ(count_after(line, "max_total_num_tokens"), 96512u);
  EXPECT_EQ(count_after(line, "context_len"), 32768u);
  EXPECT_FALSE(count_after(line, "total_num_tokens")) << "a key inside another is not it";
  EXPECT_FALSE(count_after("max_total_tokens=None", "max_total_tokens"));
  EXPECT_DOUBLE_EQ(*number_after("--mem-fraction-static 0.83 --tp 2", "--mem-fraction-static"), 0.83);
}

TEST(EngineLines, LlamaCppSettingsAndSizes) {
  EXPECT_EQ(llamacpp_setting("llama_context: n_ctx         = 16384", "n_ctx "), 16384u);
  EXPECT_FALSE(llamacpp_setting("llama_context: n_ctx_per_seq = 16384", "n_ctx ")) << "another setting";
  EXPECT_FALSE(llamacpp_setting("decode: failed to find a memory slot, retrying with n_batch = 256", "n_batch "))
      << "a value in a sentence is not the context's setting";
  EXPECT_EQ(llamacpp_size("llama_kv_cache:      CUDA0 KV buffer size =  1536.00 MiB", "KV buffer size"), 1536 * kMiB);
  EXPECT_EQ(llamacpp_size("llama_new_context_with_model: KV self size  =  256.00 MiB, K (f16): 128.00 MiB",
                          "KV self size"),
            256 * kMiB);
  EXPECT_EQ(llamacpp_size("llama_kv_cache: size =  448.00 MiB (  7168 cells,  28 layers,  1/1 seqs)", "size"),
            448 * kMiB);
  EXPECT_FALSE(llamacpp_size("load_tensors: KV buffer size unknown", "KV buffer size"));
}

}  // namespace
}  // namespace aimem::engine_lines
