// vLLM start-up budget errors and start-up figures (diagnosis.md §5.2).
#include <gtest/gtest.h>
#include <fmt/format.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::GiB;

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

const char* kV0Startup = R"(INFO 11-21 10:00:01 llm_engine.py:237] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=29000, download_dir=None, tensor_parallel_size=1, enforce_eager=False
INFO 11-21 10:00:30 model_runner.py:1077] Loading model weights took 14.9888 GB
INFO 11-21 10:00:33 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90
INFO 11-21 10:00:33 gpu_executor.py:113] # GPU blocks: 1478, # CPU blocks: 2048
INFO 11-21 10:00:33 gpu_executor.py:117] Maximum concurrency for 29000 tokens per request: 0.82x
)";

TEST(Vllm, MaxSeqLenLargerThanKvCacheIsAKvShortage) {
  std::string text = std::string(kV0Startup) +
                     "ValueError: The model's max seq len (29000) is larger than the maximum number of tokens that can be "
                     "stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
                     "when initializing the engine.\n";
  auto k = of_kind(text, FactKind::kv_cache_shortage);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].max_model_len, 29000u);
  EXPECT_EQ(k[0].kv_tokens, 23648u);
  EXPECT_EQ(k[0].detail, "max_model_len");
  // The error line's backticked names are not settings.
  for (auto& s : of_kind(text, FactKind::runtime_setting)) EXPECT_NE(s.where.line, 6u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  ASSERT_FALSE(d.incidents.empty());
  // The figures of the start-up log reach the advice.
  bool lowers = false;
  for (auto& fix : d.incidents[0].fixes) lowers |= fix.action.find("max_model_len 29000 -> 23552") != std::string::npos;
  EXPECT_TRUE(lowers);
}

TEST(Vllm, HealthyStartupIsContextOnly) {
  std::string text = std::string(kV0Startup);
  // concurrency >= 1x on a healthy start
  text.replace(text.find("0.82x"), 5, "3.41x");
  EXPECT_TRUE(of_kind(text, FactKind::kv_cache_shortage).empty());
  auto cap = of_kind(text, FactKind::kv_capacity);
  ASSERT_GE(cap.size(), 3u);
  auto set = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set[0].max_model_len, 29000u);  // max_seq_len of the config line
  EXPECT_DOUBLE_EQ(*set[1].ratio, 0.90);
  EXPECT_NE(set[1].detail.find("gpu_memory_utilization"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
  // Below 1x without the error is still no failure: vLLM raises the error itself.
  EXPECT_EQ(test::diagnose_text(kV0Startup).layer, Layer::none);
}

TEST(Vllm, V1KvNeededWithPositiveBudgetIsAMaxModelLenProblem) {
  const char* line =
      "(EngineCore_DP0 pid=1094) ValueError: To serve at least one request with the models's max seq len (262144), (24.0 "
      "GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available "
      "memory, the estimated maximum model length is 34736. Try increasing `gpu_memory_utilization` or decreasing "
      "`max_model_len` when initializing the engine.\n";
  auto k = of_kind(line, FactKind::kv_cache_shortage);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].max_model_len, 262144u);
  EXPECT_EQ(k[0].kv_tokens, 34736u);
  EXPECT_EQ(k[0].requested, 24 * GiB);
  EXPECT_EQ(k[0].detail, "max_model_len");
  EXPECT_EQ(test::diagnose_text(line).cause, Cause::kv_cache_context);
  // Pasted with the parenthesis closed before "is needed" (as the forty-sixth
  // blind batch's writer rendered it): the same error, not a generic limit.
  std::string early = line;
  early.replace(early.find("GiB KV cache is needed"), 22, "GiB KV cache) is needed");
  auto e = of_kind(early, FactKind::kv_cache_shortage);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].requested, 24 * GiB);
  Diagnosis d = test::diagnose_text(early);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
}

TEST(Vllm, NoCacheBlocksAndNegativeBudget) {
  auto a = of_kind("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n",
                   FactKind::kv_cache_shortage);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].detail, "no cache blocks");
  auto b = of_kind("INFO 05-01 10:00:00 [gpu_worker.py:227] Available KV cache memory: -0.3 GiB\n", FactKind::kv_cache_shortage);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(b[0].detail.find("negative"), std::string::npos);
  auto c = of_kind(
      "INFO the current vLLM instance can use total_gpu_memory (23.64GiB) x gpu_memory_utilization (0.90) = 21.27GiB\n"
      "INFO model weights take 20.99GiB; non_torch_memory takes 0.09GiB; PyTorch activation peak memory takes 1.39GiB; the rest of the memory reserved for KV Cache is -1.2GiB.\n",
      FactKind::kv_cache_shortage);
  ASSERT_EQ(c.size(), 1u);
  Diagnosis d = test::diagnose_text("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

TEST(Vllm, PositiveBudgetLinesAreCapacity) {
  const char* text =
      "INFO the current vLLM instance can use total_gpu_memory (79.22GiB) x gpu_memory_utilization (0.90) = 71.29GiB\n"
      "INFO [gpu_worker.py:227] Available KV cache memory: 51.72 GiB\n"
      "INFO [kv_cache_utils.py:634] GPU KV cache size: 93,760 tokens\n"
      "INFO [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 2.86x\n";
  auto cap = of_kind(text, FactKind::kv_capacity);
  ASSERT_EQ(cap.size(), 3u);
  EXPECT_EQ(cap[0].kv_bytes, static_cast<uint64_t>(51.72 * GiB + 0.5));
  EXPECT_EQ(cap[1].kv_tokens, 93760u);
  EXPECT_EQ(cap[2].max_model_len, 32768u);
  EXPECT_DOUBLE_EQ(*cap[2].ratio, 2.86);
  auto set = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_DOUBLE_EQ(*set[0].ratio, 0.90);
  EXPECT_TRUE(of_kind(text, FactKind::kv_cache_shortage).empty());
}

TEST(Vllm, EngineArgumentsInEverySpelling) {
  auto a = of_kind("INFO non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 32768, 'max_num_seqs': 64, 'gpu_memory_utilization': 0.95}\n",
                   FactKind::runtime_setting);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].max_model_len, 32768u);
  EXPECT_EQ(a[0].sequences, 64u);
  EXPECT_DOUBLE_EQ(*a[0].ratio, 0.95);
  auto b = of_kind("vllm serve Qwen/Qwen3-8B --max-model-len 32k --max-num-batched-tokens=8192 --gpu-memory-utilization 0.85\n",
                   FactKind::runtime_setting);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].max_model_len, 32000u);
  EXPECT_EQ(b[0].batch_tokens, 8192u);
  EXPECT_DOUBLE_EQ(*b[0].ratio, 0.85);
  auto c = of_kind("args: Namespace(host=None, max_model_len=None, max_num_seqs=256, max_seq_len_to_capture=8192)\n", FactKind::runtime_setting);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_FALSE(c[0].max_model_len.has_value());  // None, and max_seq_len_to_capture is another setting
  EXPECT_EQ(c[0].sequences, 256u);
}

// vLLM's CPU backend keeps its KV cache in host RAM and checks it against
// the node's available memory at start (modelled on truenas/apps#5802; values
// are ours): a host allocation failure of the KV cache's size, its cause the
// KV cache; under a container's limit, the container's.
TEST(Vllm, CpuBackendsKvCacheAboveTheNodesAvailableMemory) {
  const std::string line =
      "(EngineCore pid=212) ERROR 03-02 11:20:41 [core.py:842] ValueError: Available memory on node 0 (9.80/62.75 GiB) on kv cache "
      "allocation is less than requested memory for kv (40.00/56.47 GiB). Reduce CPU memory used by other processes.\n";
  auto h = of_kind(line, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].layer, Layer::host_ram);
  EXPECT_EQ(h[0].cause, Cause::kv_cache_context);
  EXPECT_NEAR(static_cast<double>(*h[0].free), 9.80 * GiB, 1e7);
  EXPECT_NEAR(static_cast<double>(*h[0].total), 62.75 * GiB, 1e7);
  EXPECT_NEAR(static_cast<double>(*h[0].requested), 40.0 * GiB, 1e7);
  Diagnosis d = test::diagnose_text(line);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  Diagnosis boxed = test::diagnose_text("$ docker inspect -f '{{.HostConfig.Memory}}' vllm-cpu\n12884901888\n" + line);
  EXPECT_EQ(boxed.layer, Layer::container_limit);
  EXPECT_EQ(boxed.cause, Cause::kv_cache_context);
}

// The stats line, V0 and V1 (modelled on vllm-project/vllm#1607 and a V1
// engine's loggers.py lines; values ours): requests waiting while the KV cache
// stays full and nothing generates, to the end of the input, is a stalled
// service; the cache filling while nothing ran is the pool leaking. Under
// load that keeps generating, or a stall that cleared, it is healthy.
TEST(Vllm, AServiceStalledOnAFullKvCache) {
  auto v0 = [](const char* kv, int running, int pending, const char* gen) {
    return fmt::format("INFO 11-09 09:41:21 llm_engine.py:624] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: {} "
                       "tokens/s, Running: {} reqs, Swapped: 0 reqs, Pending: {} reqs, GPU KV cache usage: {}%, CPU KV cache usage: 0.0%\n",
                       gen, running, pending, kv);
  };
  const std::string stalled = v0("62.0", 3, 0, "88.1") + v0("100.0", 1, 2, "14.2") + v0("100.0", 0, 4, "0.0") + v0("100.0", 0, 9, "0.0");
  auto k = of_kind(stalled, FactKind::kv_cache_shortage);
  ASSERT_EQ(k.size(), 1u);
  Diagnosis d = test::diagnose_text(stalled);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  // Busy but generating: preemptions do their job.
  EXPECT_EQ(test::diagnose_text(v0("99.8", 40, 12, "1210.5") + v0("99.9", 38, 15, "1198.0") + v0("99.7", 41, 9, "1230.2")).layer,
            Layer::none);
  // A stall that cleared.
  EXPECT_EQ(test::diagnose_text(stalled + v0("41.0", 6, 0, "402.0")).layer, Layer::none);
  // Filled while idle (V1's "Waiting"), then requests wait: the pool leaks.
  auto v1 = [](const char* kv, int running, int waiting, const char* gen) {
    return fmt::format("INFO 10-14 17:00:12 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
                       "throughput: {} tokens/s, Running: {} reqs, Waiting: {} reqs, GPU KV cache usage: {}%, Prefix cache hit rate: 12.0%\n",
                       gen, running, waiting, kv);
  };
  Diagnosis leak = test::diagnose_text(v1("64.0", 0, 0, "0.0") + v1("93.5", 0, 0, "0.0") + v1("99.6", 1, 11, "2.0") + v1("99.6", 1, 16, "3.1"));
  EXPECT_EQ(leak.layer, Layer::gpu_vram);
  EXPECT_EQ(leak.cause, Cause::leak_or_accumulation);
}

TEST(Vllm, FreeMemoryBelowBudgetAtStartIsAGpuOomCausedByOthers) {
  const char* line =
      "ValueError: Free memory on device (6.9/8.0 GiB) on startup is less than desired GPU memory utilization (0.9, 7.2 "
      "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].total, 8 * GiB);
  EXPECT_NEAR(static_cast<double>(*g[0].free), 6.9 * GiB, 1e3);
  EXPECT_EQ(g[0].requested, static_cast<uint64_t>(7.2 * GiB + 0.5));
  EXPECT_NEAR(static_cast<double>(*g[0].other_processes), 1.1 * GiB, 1e6);
  EXPECT_EQ(g[0].cause, Cause::other_process);
  EXPECT_EQ(test::diagnose_text(line).layer, Layer::gpu_vram);
  // Someone else holding half the GPU is named by the rules.
  EXPECT_EQ(test::diagnose_text("ValueError: Free memory on device (3.9/8.0 GiB) on startup is less than desired GPU memory "
                                "utilization (0.9, 7.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")
                .cause,
            Cause::other_process);
}

// The same start-up check worded as some builds print it (a ROCm build of
// 2026: "Available memory on device cuda:0 (...) is below required ..."),
// modelled on a Strix Halo report in the kyuz0 vLLM toolbox threads; our own
// figures. The arithmetic is read the same: free and total, the budget.
TEST(Vllm, AvailableMemoryBelowRequiredUtilizationIsTheSameCheck) {
  const char* line =
      "(EngineCore_DP0 pid=812) ERROR 02-12 15:44:57 [core.py:966] ValueError: Available memory on device cuda:0 "
      "(40.50/96.0 GiB) is below required GPU memory utilization (0.9, 86.40 GiB). Reduce GPU memory utilization or "
      "decrease GPU memory used by other processes.\n";
  auto g = of_kind(line, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].total, 96 * GiB);
  EXPECT_NEAR(static_cast<double>(*g[0].free), 40.5 * GiB, 1e3);
  EXPECT_EQ(g[0].requested, static_cast<uint64_t>(86.4 * GiB + 0.5));
  Diagnosis d = test::diagnose_text(line);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::other_process);
  // Quoted in a question it is a mention, not the failure.
  EXPECT_TRUE(of_kind("If you see 'is below required GPU memory utilization', lower --gpu-memory-utilization.\n", FactKind::gpu_oom).empty());
}

TEST(Vllm, WorkerKilledBySigkill) {
  std::vector<Fact> k;
  for (auto& f : of_kind("ERROR 05-01 10:00:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4711 died, exit code: -9\n",
                         FactKind::process_killed))
    if (f.family == Family::vllm) k.push_back(f);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].signal, 9);
  EXPECT_EQ(k[0].pid, 4711);
  EXPECT_EQ(k[0].process, "VllmWorkerProcess");
  EXPECT_EQ(k[0].layer, Layer::unknown);
}

TEST(Vllm, RepeatedStartupErrorIsOneFailure) {
  std::string err =
      "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV "
      "cache (93760). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n";
  EXPECT_EQ(of_kind("ERROR worker: " + err + "Traceback (most recent call last):\n" + "ERROR api_server: " + err, FactKind::kv_cache_shortage).size(), 1u);
}

// vLLM's stats lines with the KV cache full and a running request that moves
// neither its prompt nor its generation, nothing waiting: a request longer
// than the cache holds has stalled the engine (modelled on vllm-project/vllm
// long-context hangs; our figures). Throughput that moves is healthy.
TEST(Vllm, AFullCacheWithARunningRequestThatDoesNotMoveIsTheContext) {
  auto text = [](const char* gen) {
    std::string t = "(EngineCore pid=4410) INFO 05-02 10:11:12 [kv_cache_utils.py:1314] GPU KV cache size: 38,912 tokens\n";
    for (int i = 0; i < 3; ++i)
      t += std::string("(APIServer pid=4301) INFO 05-02 10:1") + std::to_string(2 + i) +
           ":00 [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: " + gen +
           " tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 100.0%, Prefix cache hit rate: 0.0%\n";
    return t;
  };
  Diagnosis stuck = test::diagnose_text(text("0.0"));
  EXPECT_EQ(stuck.layer, Layer::gpu_vram) << test::reason_text(stuck);
  EXPECT_EQ(stuck.cause, Cause::kv_cache_context) << test::reason_text(stuck);
  EXPECT_EQ(test::diagnose_text(text("41.3")).layer, Layer::none);
}

}  // namespace
}  // namespace aimem
