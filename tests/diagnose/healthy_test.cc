// Healthy logs full of memory words must give "none": a false alarm is as
// wrong as a miss.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

void expect_none(const std::string& text) {
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::none) << (d.incidents.empty() ? "" : d.incidents[0].summary + "\n" + d.incidents[0].evidence[0].text);
}

TEST(Healthy, VllmStartupWithKvFigures) {
  expect_none(R"(INFO 11-29 10:00:01 [config.py:1604] Using max model len 32768
INFO 11-29 10:00:02 [llm_engine.py:232] Initializing a V1 LLM engine with config: model='meta-llama/Llama-3.1-8B-Instruct', max_seq_len=32768, gpu_memory_utilization=0.9
INFO 11-29 10:00:20 [gpu_model_runner.py:1875] Model loading took 14.9889 GiB and 4.231 seconds
INFO 11-29 10:00:31 [gpu_worker.py:227] Available KV cache memory: 52.31 GiB
INFO 11-29 10:00:31 [kv_cache_utils.py:716] GPU KV cache size: 428,512 tokens
INFO 11-29 10:00:31 [kv_cache_utils.py:720] Maximum concurrency for 32,768 tokens per request: 13.08x
WARNING 11-29 10:00:31 [gpu_model_runner.py:2101] CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or switching to eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage.
INFO 11-29 10:00:45 [gpu_model_runner.py:2202] Graph capturing finished in 14 secs, took 0.53 GiB
INFO 11-29 10:00:45 [core.py:172] init engine (profile, create kv cache, warmup model) took 24.66 seconds
INFO 11-29 10:00:47 [api_server.py:1818] Starting vLLM API server 0 on http://0.0.0.0:8000
INFO:     127.0.0.1:50422 - "POST /v1/chat/completions HTTP/1.1" 200 OK
)");
}

// A batch-size finder's probe (modelled on accelerate's
// find_executable_batch_size example, as a writer of the forty-third batch
// rendered it; values ours): the OOM it catches, then a smaller batch that
// runs. Without the retry, the same OOM is a failure.
TEST(Healthy, ABatchSizeFindersCaughtOomThenASmallerBatch) {
  const std::string oom =
      "[find_executable_batch_size] CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 15.77 GiB total capacity; 14.60 GiB "
      "already allocated; 301.44 MiB free; 14.92 GiB reserved in total by PyTorch)";
  Diagnosis probe = test::diagnose_text("[find_executable_batch_size] trying batch_size=256\n" + oom + " -> halving\n"
                                        "[find_executable_batch_size] trying batch_size=128\nepoch 0: {'accuracy': 0.79}\n");
  EXPECT_EQ(probe.layer, Layer::none);
  EXPECT_EQ(test::diagnose_text(oom + "\nTraceback (most recent call last):\n").layer, Layer::gpu_vram);
}

// A program that says its batch went down after a caught OOM, in its own
// words (modelled on deepmd-kit's automatic batch sizing in `dp test`, as a
// writer of the forty-fourth batch rendered it; values ours): the numbers,
// a smaller second, make the retry. Advice to lower it, or a batch that
// grew, is no retry.
TEST(Healthy, ABatchSizeThatWentDownAfterACaughtOom) {
  const std::string oom =
      "2021-09-23 10:14:02.581744: W tensorflow/core/framework/op_kernel.cc:1692] OP_REQUIRES failed at matmul_op_impl.h:681 : "
      "Resource exhausted: OOM when allocating tensor with shape[102400,128,64] and type double on "
      "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
  for (const char* retry : {"DEEPMD INFO    Adjust batch size from 4096 to 2048\n", "INFO batch_size: 64 -> 32\n",
                            "auto-batch: batch size 48 => 24\n"}) {
    Diagnosis d = test::diagnose_text(oom + retry + "DEEPMD INFO    Energy RMSE        : 3.1e-02 eV\n");
    EXPECT_EQ(d.layer, Layer::none) << retry;
  }
  for (const char* not_retry : {"Try reducing the batch size from 64 to 32\n", "INFO batch_size: 32 -> 64\n"}) {
    Diagnosis d = test::diagnose_text(oom + not_retry);
    EXPECT_EQ(d.layer, Layer::gpu_vram) << not_retry;
  }
}

// Composer's automatic gradient accumulation catches the OOM and retrains the
// batch in smaller micro-batches (modelled on mosaicml/composer threads of
// 2022; own timestamps): training goes on, nothing failed.
TEST(Healthy, ComposersGradientAccumulationCatchingAnOom) {
  expect_none(
      "Epoch 0:   0%|          | 0/6 [00:02<?, ?it/s]\n"
      "[WARNING][2022-02-15 18:03:41,215] composer.trainer.trainer: CUDA out of memory detected. Gradient Accumulation increased "
      "from 1 -> 2, and the batch will be retrained.\n"
      "Epoch 0: 100%|##########| 6/6 [00:09<00:00,  1.38s/it, loss/train=2.9871]\n"
      "Epoch 1: 100%|##########| 6/6 [00:08<00:00,  1.36s/it, loss/train=2.4102]\n");
}

// A decoder that falls back to tiles after its whole-frame pass ran out,
// then saves its output (modelled on a diffusion server's VAE fallback,
// 2026; our own sizes and paths): caught and gone on from.
TEST(Healthy, AVaeDecodeThatRetriesInTilesAndSaves) {
  expect_none(
      "[2026-08-31 14:01:30] Denoising: 100%|##########| 20/20 [00:41<00:00,  2.07s/it]\n"
      "[2026-08-31 14:02:12] WARNING VAE decode ran out of GPU memory (tried to allocate 2.25 GiB; 1.06 GiB free). Freeing cache and "
      "retrying once with VAE tiling enabled; pass --vae-tiling to choose this explicitly.\n"
      "[2026-08-31 14:02:19] INFO Tiled VAE decode finished in 6.84 s\n"
      "[2026-08-31 14:02:19] INFO Saved outputs/lighthouse_42.png (1024x1024)\n");
}

// A launcher that lowers llama-server's context after the KV cache could not
// be allocated, and the server then starts (modelled on wrappers around
// llama-server in ggml-org/llama.cpp threads; our own names and sizes): the
// failure was caught and the service went on. An allocation that falls back
// to ordinary pages and goes on (a miner's "mmap with HUGETLB failed,
// attempting without it") is no failure either.
TEST(Healthy, ARetryAtASmallerContextThatStarts) {
  expect_none(
      "llama_context: n_ctx         = 262144\n"
      "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 36507222016\n"
      "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n"
      "srv    load_model: failed to load model, '/models/q3-4b-q4_k_m.gguf'\n"
      "launcher: llama-server ran out of memory at --ctx-size 262144; retrying with --ctx-size 131072 (attempt 1/4)\n"
      "llama_context: n_ctx         = 131072\n"
      "llama_kv_cache: size = 18432.00 MiB (131072 cells,  36 layers,  1/1 seqs)\n"
      "main: model loaded\n"
      "main: server is listening on http://127.0.0.1:8080 - starting the main loop\n");
  expect_none(
      "[2021-07-19 23:05:41] : MEMORY ALLOC FAILED: mmap with HUGETLB failed, attempting without it (you should fix your kernel)\n"
      "[2021-07-19 23:05:53] : Self test passed.\n");
}

TEST(Healthy, NvidiaSmiAtNinetyPercent) {
  expect_none(R"(+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |
| N/A   41C    P0             89W /  400W |   73728MiB /  81920MiB |     35%      Default |
+-----------------------------------------+------------------------+----------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|    0   N/A  N/A      4242      C   python3                                     73716MiB |
+-----------------------------------------------------------------------------------------+
)");
}

TEST(Healthy, JvmFlagsNamingOutOfMemoryError) {
  expect_none(R"(+ exec java -Xmx4g -XX:MaxRAMPercentage=75 -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=/dumps -XX:OnOutOfMemoryError="kill -9 %p" -XX:+ExitOnOutOfMemoryError -jar /app/app.jar
2026-11-29 10:00:03.120  INFO 1 --- [main] o.s.b.w.embedded.tomcat.TomcatWebServer  : Tomcat started on port(s): 8080 (http)
2026-11-29 10:00:03.141  INFO 1 --- [main] com.example.Application : Started Application in 3.2 seconds (JVM running for 3.9)
)");
}

TEST(Healthy, HelpTextQuotingOomMessages) {
  expect_none(R"(usage: serve.py [-h] [--gpu-memory-utilization FRACTION] [--max-old-space-size MB]
  --gpu-memory-utilization FRACTION
                        Fraction of GPU memory to use. If you see "CUDA out of memory", lower this value.
  --max-old-space-size MB
                        V8 heap size. Raise it if the build fails with 'JavaScript heap out of memory'.
  --watch-kernel        Report lines such as 'Out of memory: Killed process 1234 (python3)' from dmesg.
Hint: exit code 137 usually means the process was killed because it ran out of memory.
)");
}

TEST(Healthy, OllamaLoadAndKubectlRunning) {
  expect_none(R"(time=2026-11-25T10:11:02.118Z level=INFO source=memory.go:356 msg="offload to cuda" layers.requested=-1 layers.model=33 layers.offload=33 memory.available="[22.9 GiB]" memory.required.full="6.2 GiB" memory.required.kv="1.0 GiB"
llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB
llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB
llama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB
time=2026-11-25T10:11:05.402Z level=INFO source=server.go:619 msg="llama runner started in 3.28 seconds"
NAME                           READY   STATUS    RESTARTS   AGE
vllm-7b9c8d6e5-tt4rd           1/1     Running   0          26h
)");
}

// Start-ups of the other GPU engines print their memory figures and warnings that name
// memory (SGLang's pool, TensorRT-LLM's KV sizing, ONNX Runtime's verbose arena log, a pinned
// buffer ggml did without, a memory summary with no OOM, the driver's clean-up Xid 45).
TEST(Healthy, GpuEnginesStartingUp) {
  expect_none(R"([2026-11-29 10:00:31 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, mem usage=14.96 GB.
[2026-11-29 10:00:32 TP0] KV Cache is allocated. #tokens: 412000, K size: 25.15 GB, V size: 25.15 GB
[2026-11-29 10:00:40 TP0] max_total_num_tokens=412000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=9.80 GB
[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB
[TensorRT-LLM][INFO] [MemUsageChange] Allocated 62.99 GiB for max tokens in paged KV cache (259840).
2026-11-29 10:01:00.100000 [I:onnxruntime:log, bfc_arena.cc:26 BFCArena] Creating BFCArena for Cuda with following configs: initial_chunk_size_bytes: 1048576 max_dead_bytes_per_chunk: 134217728 initial_growth_chunk_size_bytes: 2097152 memory limit: 18446744073709551615 arena_extend_strategy: 0
2026-11-29 10:01:00.200000 [I:onnxruntime:log, bfc_arena.cc:306 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:16 (requested) num_bytes: 19888128 (actual) rounded_bytes:19888128
ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory
|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |
[ 5021.4] NVRM: Xid (PCI:0000:3b:00): 45, pid=31337, name=python3, Ch 00000010
)");
}

}  // namespace
}  // namespace aimem
