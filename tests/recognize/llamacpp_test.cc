// llama.cpp / ggml / Ollama allocation failures and context (diagnosis.md §5.2).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::GiB;
using units::MiB;

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

// ollama/ollama#4225 (trimmed): an 8 GiB host KV cache, then the compute buffer for n_ctx 65536 fails on GPU 0.
const char* kComputeAfterLargeContext = R"(llama_new_context_with_model: n_ctx      = 65536
llama_new_context_with_model: n_batch    = 512
llama_new_context_with_model: n_ubatch   = 512
llama_kv_cache_init:  CUDA_Host KV buffer size =  8192.00 MiB
llama_new_context_with_model: KV self size  = 8192.00 MiB, K (f16): 4096.00 MiB, V (f16): 4096.00 MiB
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4507.00 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4725934080
llama_new_context_with_model: failed to allocate compute buffers
llama_init_from_gpt_params: error: failed to create context with model 'model.gguf'
{"function":"load_model","level":"ERR","line":410,"model":"model.gguf","msg":"unable to load model","tid":"11992"}
time=2024-05-07T10:17:09.123Z level=ERROR source=sched.go:339 msg="error loading llama server" error="llama runner process has terminated: exit status 0xc0000409 error:failed to create context with model 'model.gguf'"
)";

TEST(LlamaCpp, OneReportForTheWholeComputeBufferFailure) {
  auto g = of_kind(kComputeAfterLargeContext, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].where.line, 6u);
  EXPECT_EQ(g[0].detail, "compute");
  EXPECT_EQ(g[0].requested, 4507 * MiB);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_TRUE(of_kind(kComputeAfterLargeContext, FactKind::exit_status).empty());  // the wrapper repeats the failure
  auto set = of_kind(kComputeAfterLargeContext, FactKind::runtime_setting);
  ASSERT_GE(set.size(), 4u);
  EXPECT_EQ(set[0].ctx, 65536u);
  EXPECT_EQ(set[1].batch_tokens, 512u);
  Diagnosis d = test::diagnose_text(kComputeAfterLargeContext);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
}

TEST(LlamaCpp, KvCacheCellsAreTheContext) {
  const char* text = R"(llama_kv_cache:      CUDA0 KV buffer size = 12327.00 MiB
llama_kv_cache:      CUDA1 KV buffer size = 11153.00 MiB
llama_kv_cache: size = 23480.00 MiB (150272 cells,  40 layers,  1/1 seqs), K (f16): 11740.00 MiB, V (f16): 11740.00 MiB
llama_context: worst-case: n_tokens = 4096, n_seqs = 1, n_outputs = 1
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 12710.31 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 13327728640
graph_reserve: failed to allocate compute buffers
)";
  auto set = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set[0].detail, "KV buffer CUDA0");
  EXPECT_EQ(set[0].kv_bytes, 12327 * MiB);
  EXPECT_EQ(set[2].ctx, 150272u);
  EXPECT_EQ(set[2].sequences, 1u);
  EXPECT_EQ(set[2].kv_bytes, 23480 * MiB);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
}

TEST(LlamaCpp, SmallContextComputeFailureIsNotBlamedOnContext) {
  const char* text = R"(llama_context: n_ctx         = 4096
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 590.07 MiB on device 0: cudaMalloc failed: out of memory
graph_reserve: failed to allocate compute buffers
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_NE(d.cause, Cause::kv_cache_context);
}

// A prompt-processing graph for a physical batch of 8192 tokens ("compute pp
// buffers", llama.cpp 2025) is the batch, not the model the wrapper lines
// name; at the default n_ubatch the compute buffer is only the last thing to
// fail, and the cause is left to the rest of the evidence (modelled on
// ggml-org/llama.cpp#12817; values ours).
TEST(LlamaCpp, ComputeBuffersOfALargePhysicalBatchAreTheBatch) {
  const char* text = R"(llama_context: n_ctx         = 8192
llama_context: n_batch       = 8192
llama_context: n_ubatch      = 8192
llama_kv_cache_unified:    Vulkan0 KV buffer size =   288.00 MiB
ggml_vulkan: Device memory allocation of size 3791265536 failed.
ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory
ggml_gallocr_reserve_n: failed to allocate Vulkan0 buffer of size 3791265536
llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers
srv    load_model: failed to load model, 'C:\models\model-Q8_0.gguf'
main: exiting due to model loading error
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  std::string small = text;
  small.replace(small.find("n_ubatch      = 8192"), 20, "n_ubatch      = 512 ");
  EXPECT_NE(test::diagnose_text(small).cause, Cause::concurrency_batch);
}

// The compute buffers hold one physical batch against the context: with
// both set large, whichever is further above its default (n_ubatch 512,
// n_ctx 4096) drove them. 32768 against 65536 is the batch (modelled on a
// ROCm llama-server under systemd whose n_ubatch was raised with n_batch);
// 2048 against 65536 is the context.
TEST(LlamaCpp, ComputeBuffersFollowWhicheverOfBatchAndContextIsFurtherAboveItsDefault) {
  auto log = [](int ubatch) {
    return fmt::format(R"(llama_context: n_ctx                 = 65536
llama_context: n_batch               = {0}
llama_context: n_ubatch              = {0}
llama_kv_cache:      ROCm0 KV buffer size =  2048.00 MiB
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 14215.06 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 14905573376
graph_reserve: failed to allocate compute buffers
llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers
)",
                       ubatch);
  };
  Diagnosis big = test::diagnose_text(log(32768));
  EXPECT_EQ(big.layer, Layer::gpu_vram);
  EXPECT_EQ(big.cause, Cause::concurrency_batch) << test::reason_text(big);
  EXPECT_EQ(test::diagnose_text(log(2048)).cause, Cause::kv_cache_context);
}

TEST(LlamaCpp, KvCacheBufferFailure) {
  const char* text = R"(ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 1: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA1 buffer of size 17179869184
llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].detail, "kv");
  EXPECT_EQ(g[0].gpu, 1);
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::kv_cache_context);
}

TEST(LlamaCpp, ModelBufferFailureIsModelLoad) {
  const char* text = R"(llm_load_tensors: offloading 80 repeating layers to GPU
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 13285.50 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 13930841088
llama_model_load: error loading model: unable to allocate CUDA0 buffer
llama_load_model_from_file: failed to load model
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].detail, "model");
  EXPECT_EQ(g[0].requested, static_cast<uint64_t>(13285.5 * MiB));
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::model_load);
}

TEST(LlamaCpp, HostBufferFailureIsHostRam) {
  const char* text = R"(llama_new_context_with_model: n_ctx      = 1048576
ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504
llama_kv_cache_init: failed to allocate buffer for kv cache
llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache
)";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].requested, 137438953504u);
  EXPECT_EQ(h[0].detail, "kv");
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
}

TEST(LlamaCpp, VulkanMetalAndHip) {
  auto v = of_kind("ggml_vulkan: Device memory allocation of size 4294967296 failed.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].requested, 4 * GiB);
  auto m = of_kind("ggml_metal_graph_compute: command buffer 0 failed with status 5\nerror: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].where.line, 1u);
  EXPECT_EQ(m[0].detail, "compute");
  // Status 5 alone is any command-buffer error.
  EXPECT_TRUE(of_kind("ggml_metal_graph_compute: command buffer 0 failed with status 5\n", FactKind::gpu_oom).empty());
  auto h = of_kind("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: hipMalloc failed: out of memory\n", FactKind::gpu_oom);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].requested, 2 * GiB);
}

TEST(LlamaCpp, PinnedMemoryFallbackIsNotAFailure) {
  EXPECT_TRUE(of_kind("ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory\n", FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text("ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory\n").layer, Layer::none);
}

// The refusal beside a process table in which another program holds more
// than the load was short by (modelled on an Ollama refusal on a workstation
// with a notebook kernel holding the RAM, ollama/ollama threads; our own
// pids and figures): that program took the memory. A table whose largest
// other program holds less says nothing of the kind.
TEST(LlamaCpp, ARefusalBesideAProgramHoldingTheShortfallIsTheOtherProcess) {
  auto log = [](const std::string& rss) {
    return "$ ollama run qwen2:72b\n"
           "Error: model requires more system memory (45.2 GiB) than is available (18.7 GiB)\n"
           "$ ps -eo pid,rss,comm,args --sort=-rss | head -4\n"
           "    PID   RSS COMMAND         COMMAND\n"
           " 411822 " + rss + " python       /srv/venv/bin/python -m ipykernel_launcher -f /tmp/kernel-5c3a.json\n"
           "   3011 1480292 firefox      /usr/lib/firefox/firefox\n"
           "   1873 212604 ollama         /usr/local/bin/ollama serve\n";
  };
  Diagnosis d = test::diagnose_text(log("40917344"));
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  EXPECT_EQ(test::diagnose_text(log("9917344")).cause, Cause::model_load);  // 9.5 GiB: less than the 26.5 GiB short
}

TEST(LlamaCpp, OllamaRefusesToLoad) {
  const char* text = "Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)\n";
  auto r = of_kind(text, FactKind::host_memory_refused);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].requested, static_cast<uint64_t>(164.8 * GiB + 0.5));
  EXPECT_EQ(r[0].free, static_cast<uint64_t>(13.4 * GiB + 0.5));
  EXPECT_EQ(r[0].layer, Layer::host_ram);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
  EXPECT_EQ(of_kind("{\"error\":\"model requires more system memory (64.0 GiB) than is available (31.2 GiB)\"}\n", FactKind::host_memory_refused).size(), 1u);
  // Inside a container with a memory limit the refusal names the container's
  // pool, and its own arithmetic still says what did not fit: the model.
  Diagnosis boxed = test::diagnose_text(
      "    mem_limit: 12g\n"
      "ollama._types.ResponseError: model requires more system memory (11.9 GiB) than is available (11.4 GiB) (status code: 500)\n");
  EXPECT_EQ(boxed.layer, Layer::container_limit);
  EXPECT_EQ(boxed.cause, Cause::model_load);
}

TEST(LlamaCpp, OllamaRunnerTerminatedCarriesItsReason) {
  auto g = of_kind("{\"error\":{\"message\":\"llama-server process has terminated: exit status 1: cudaMalloc failed: out of memory\"}}\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::llamacpp);
  // Non-memory reasons are left to the exit-status recognizer.
  for (auto& f : test::facts_of("Error: llama runner process has terminated: exit status 2\n")) EXPECT_NE(f.family, Family::llamacpp);
  auto cuda = test::facts_of("Error: llama runner process has terminated: CUDA error: out of memory\n");
  int ooms = 0;
  for (auto& f : cuda) ooms += f.kind == FactKind::gpu_oom;
  EXPECT_EQ(ooms, 1);  // not also a second fact from the generic CUDA recognizer
}

TEST(LlamaCpp, HealthyOllamaLoadIsContextOnly) {
  const char* text =
      "time=2026-11-25T10:11:02.118Z level=INFO source=memory.go:356 msg=\"offload to cuda\" layers.requested=-1 "
      "layers.model=33 layers.offload=33 layers.split=\"\" memory.available=\"[22.9 GiB]\" memory.gpu_overhead=\"0 B\" "
      "memory.required.full=\"6.2 GiB\" memory.required.partial=\"6.2 GiB\" memory.required.kv=\"1.0 GiB\"\n"
      "time=2026-11-25T10:11:02.200Z level=INFO source=server.go:392 msg=\"starting llama server\" cmd=\"/usr/bin/ollama runner --model /m.gguf --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --parallel 4 --port 4242\"\n"
      "llama_kv_cache_init: kv_size = 8192, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 32\n"
      "decode: failed to find free space in the KV cache, retrying with smaller batch size, n_batch = 256\n";
  auto set = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set[0].kv_bytes, 1 * GiB);
  EXPECT_NE(set[0].detail.find("needs 6.2 GiB"), std::string::npos);
  EXPECT_EQ(set[1].ctx, 8192u);
  EXPECT_EQ(set[1].sequences, 4u);
  EXPECT_EQ(set[1].batch_tokens, 512u);
  EXPECT_EQ(set[2].ctx, 8192u);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

TEST(LlamaCpp, FailedToLoadModelAloneIsNotAnAllocationFailure) {
  const char* text = "gguf_init_from_file: failed to open 'x.gguf': No such file or directory\nllama_load_model_from_file: failed to load model\n";
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
}

// ggml's CUDA error with its device line: the 2023 form of ggml-org/llama.cpp#3199 ("CUDA
// error 2 at <file>:<line>: out of memory" / "current device: 0") and the 2024 form of
// ollama/ollama#3237 (function named, then GGML_ASSERT). Values are ours.
TEST(LlamaCpp, GgmlCudaErrorNamesTheDevice) {
  const char* old_form = R"(main: build = 1233 (98311c4)
CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:6120: out of memory
current device: 1
)";
  auto o = of_kind(old_form, FactKind::gpu_oom);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].family, Family::llamacpp);
  EXPECT_EQ(o[0].gpu, 1);
  EXPECT_EQ(test::diagnose_text(old_form).layer, Layer::gpu_vram);

  const char* new_form = R"(llama_new_context_with_model: n_ctx      = 32768
llama_new_context_with_model: graph splits (measure): 3
CUDA error: out of memory
  current device: 0, in function ggml_cuda_pool_malloc_vmm at C:\a\ollama\llm\llama.cpp\ggml-cuda.cu:8583
  cuMemCreate(&handle, reserve_size, &prop, 0)
GGML_ASSERT: C:\a\ollama\llm\llama.cpp\ggml-cuda.cu:256: !"CUDA error"
)";
  auto n = of_kind(new_form, FactKind::gpu_oom);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].family, Family::llamacpp);
  EXPECT_EQ(n[0].gpu, 0);
  EXPECT_EQ(n[0].detail, "compute buffer (ggml_cuda_pool_malloc_vmm)");
  EXPECT_EQ(n[0].where.line, 3u);
  Diagnosis d = test::diagnose_text(new_form);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);  // the compute buffer of a 32k context
}

// ollama/ollama#3765: the same error through Ollama's client on a ROCm build (hipMalloc in
// ggml's CUDA file); the function is the pool's "alloc". Values are ours.
TEST(LlamaCpp, OllamaClientWrappedGgmlError) {
  const char* text = R"(Error: an unknown error was encountered while running the model CUDA error: out of memory
  current device: 1, in function alloc at /go/src/github.com/ollama/ollama/llm/llama.cpp/ggml-cuda.cu:233
  hipMalloc((void **) &ptr, look_ahead_size)
GGML_ASSERT: /go/src/github.com/ollama/ollama/llm/llama.cpp/ggml-cuda.cu:60: !"CUDA error"
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 1);
  EXPECT_EQ(g[0].detail, "compute buffer (ggml alloc)");
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::gpu_vram);
}

// ollama/ollama#8964: pinned host memory that cannot be had is a host fact, not a failure.
TEST(LlamaCpp, PinnedMemoryShortageIsHostContext) {
  const char* text = "ggml_cuda_host_malloc: failed to allocate 24576.00 MiB of pinned memory: out of memory\nllm_load_tensors:          CPU model buffer size = 24576.00 MiB\n";
  auto h = of_kind(text, FactKind::host_state);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].requested, 24 * GiB);
  EXPECT_NE(h[0].detail.find("pageable"), std::string::npos);
  EXPECT_TRUE(of_kind(text, FactKind::host_alloc_failure).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
  // The ROCm build says it in HIP's word (modelled on an Ollama ROCm runner's
  // log on Windows; our sizes): the same warning, no failure of its own.
  const char* hip = "ggml_cuda_host_malloc: failed to allocate 19.01 MiB of pinned memory: hipErrorOutOfMemory\n"
                    "llama_new_context_with_model:  ROCm_Host compute buffer size =    19.01 MiB\n";
  EXPECT_EQ(of_kind(hip, FactKind::host_state).size(), 1u);
  EXPECT_TRUE(of_kind(hip, FactKind::host_alloc_failure).empty());
  EXPECT_TRUE(of_kind(hip, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(hip).layer, Layer::none);
}

// The Vulkan backend's pinned staging buffer over the device's per-buffer
// size (modelled on a ggml Vulkan audio server's log as a writer of the
// forty-fourth batch rendered it; values ours): it falls back to pageable
// memory, said once; the job finishes. A host fact, not a failure.
TEST(LlamaCpp, VulkanPinnedBufferShortageIsHostContext) {
  const char* line =
      "[tts] ggml_vulkan: Failed to allocate pinned memory (Requested buffer size exceeds device buffer size limit: "
      "ErrorOutOfDeviceMemory)\n";
  const std::string text = std::string("[tts] [VAE] Tiled decode: 4 tiles (chunk=1024, overlap=64)\n") + line + line +
                           "[tts] [VAE] Tiled decode done: 4/4 tiles in 21.3 s\n[tts] [Job] 9a1c02 finished OK\n";
  auto h = of_kind(text, FactKind::host_state);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NE(h[0].detail.find("pageable"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// Ollama finds no layout of the layers in GPU and host memory (its
// scheduler's "memory layout cannot be allocated", as clients print it;
// modelled on the corpus case sv-085 and the wording the public Ollama clients
// match on, values ours): a GPU memory failure, whose cause the context
// setting beside it decides.
TEST(LlamaCpp, OllamaWithNoMemoryLayoutIsShortOfGpuMemory) {
  const std::string forced = "Error: 500 Internal Server Error: memory layout cannot be allocated with num_gpu = 40\n";
  auto g = test::facts_of_kind(forced, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].layer, Layer::gpu_vram);
  EXPECT_NE(g[0].detail.find("num_gpu = 40"), std::string::npos) << g[0].detail;
  Diagnosis d = test::diagnose_text(
      "time=2026-03-01T10:00:00.000Z level=INFO source=routes.go:1618 msg=\"server config\" "
      "env=\"map[OLLAMA_CONTEXT_LENGTH:131072 OLLAMA_NUM_PARALLEL:1]\"\n"
      "time=2026-03-01T10:00:20.000Z level=INFO source=server.go:1081 msg=\"model layout did not fit, backing off\" "
      "num_ctx=131072\n"
      "Error: 500 Internal Server Error: memory layout cannot be allocated\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  // A client's own check for the wording is no failure; the API's JSON error is one.
  EXPECT_TRUE(test::facts_of_kind("    if 'memory layout cannot be allocated' in err_text.lower():\n", FactKind::gpu_oom)
                  .empty());
  EXPECT_EQ(test::facts_of_kind("{\"error\":\"memory layout cannot be allocated\"}\n", FactKind::gpu_oom).size(), 1u);
}


// Ollama's scheduler warning that an unloaded model's VRAM did not come back,
// then the next model squeezed onto the CPU (modelled on an Ollama 0.12 log
// on three 12 GiB cards; figures ours): the GPU, retention. The warning alone
// (the memory came back later, the model loaded whole) is no failure.
TEST(LlamaCpp, OllamaVramNotGivenBackThenASqueezedLoadIsRetention) {
  const std::string warn =
      "time=2025-11-25T06:47:08.174+02:00 level=WARN source=sched.go:685 msg=\"gpu VRAM usage didn't recover within timeout\" "
      "seconds=5.2561 runner.size=\"20.1 GiB\" runner.vram=\"20.1 GiB\" runner.parallel=1\n";
  Diagnosis d = test::diagnose_text(
      warn + "time=2025-11-25T06:52:35.712+02:00 level=INFO source=server.go:220 msg=\"model requires more gpu memory than is "
             "currently available, evicting a model to make space\" model=mistral-small3.2:24b\n"
             "time=2025-11-25T06:52:36.104+02:00 level=INFO source=server.go:1244 msg=\"offloaded 18/41 layers to GPU\"\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  Diagnosis whole = test::diagnose_text(
      warn + "time=2025-11-25T06:52:36.104+02:00 level=INFO source=server.go:1244 msg=\"offloaded 41/41 layers to GPU\"\n");
  EXPECT_EQ(whole.layer, Layer::none);
}

// Modelled on Ollama 0.6+'s server log (ollama/ollama#14116): the offload
// line is msg=offload library=..., and its KV cache for the automatic
// context is at least the weights; our own figures.
TEST(LlamaCpp, OllamasRefusalWhoseKvCacheOutweighsTheWeightsIsTheContext) {
  const std::string log =
      "Error: 500 Internal Server Error: model requires more system memory (71.0 GiB) than is available (30.2 GiB)\n"
      "time=2026-03-01T10:00:01.100Z level=INFO source=server.go:168 msg=\"default context length from available VRAM\" num_ctx=131072\n"
      "time=2026-03-01T10:00:01.200Z level=INFO source=server.go:175 msg=offload library=ROCm layers.requested=-1 layers.model=65 "
      "layers.offload=65 memory.available=\"[80.0 GiB]\" memory.required.full=\"71.0 GiB\" memory.required.kv=\"32.0 GiB\" "
      "memory.weights.total=\"28.5 GiB\" memory.graph.full=\"10.5 GiB\"\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  // The same refusal with a KV cache a fraction of the weights is the model.
  std::string small = log;
  small.replace(small.find("memory.required.kv=\"32.0 GiB\""), 29, "memory.required.kv=\"4.0 GiB\"");
  EXPECT_EQ(test::diagnose_text(small).cause, Cause::model_load);
}

// Modelled on llama-server behind LocalAI (ggml-org/llama.cpp#6603): the KV
// back-off runs down to one token and the decode still fails; our own
// figures.
TEST(LlamaCpp, TheKvBackOffEndingInAFailedDecodeIsTheContextFull) {
  const std::string log =
      "llama_new_context_with_model: n_ctx      = 4096\n"
      "llama_kv_cache_init:      CUDA0 KV buffer size =   512.00 MiB\n"
      "slot 0 : in cache: 3950 tokens | to process: 402 tokens\n"
      "update_slots : failed to find free space in the KV cache, retrying with smaller n_batch = 256\n"
      "update_slots : failed to find free space in the KV cache, retrying with smaller n_batch = 1\n"
      "update_slots : failed to decode the batch, n_batch = 1, ret = 1\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::kv_cache_context);
  // The back-off alone (it found room at a smaller batch) is no failure.
  EXPECT_EQ(test::diagnose_text(
                "update_slots : failed to find free space in the KV cache, retrying with smaller n_batch = 256\n"
                "slot 0 : released (1911 tokens in cache)\n")
                .layer,
            Layer::none);
}

// Metal's status 5 after ggml_metal_add_buffer warned that the buffers passed
// the device's recommended working set (modelled on mozilla-ai/llamafile#42;
// our own sizes): that memory, and the weights' own buffers past it are the
// model not fitting. Status 5 without the warning stays undecided.
TEST(LlamaCpp, MetalStatusFiveAfterTheWorkingSetWarningIsTheMemory) {
  const std::string over =
      "ggml_metal_init: recommendedMaxWorkingSetSize  = 10922.67 MB\n"
      "ggml_metal_add_buffer: allocated 'data            ' buffer, size =  8192.00 MB, offs =            0\n"
      "ggml_metal_add_buffer: allocated 'data            ' buffer, size =  3810.25 MB, offs = 8522825728, (12002.30 / 10922.67), "
      "warning: current allocated size is greater than the recommended max working set size\n"
      "ggml_metal_add_buffer: allocated 'kv              ' buffer, size =   800.02 MB, (12802.32 / 10922.67), warning: current "
      "allocated size is greater than the recommended max working set size\n";
  const std::string failed = "ggml_metal_graph_compute: command buffer 0 failed with status 5\nGGML_ASSERT: ggml-metal.m:1645: false\n";
  auto oom = of_kind(over + failed, FactKind::gpu_oom);
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_EQ(oom[0].layer, Layer::gpu_vram);
  EXPECT_NEAR(double(*oom[0].usage), 12002.30 * double(MiB), double(MiB));
  EXPECT_NEAR(double(*oom[0].total), 10922.67 * double(MiB), double(MiB));
  Diagnosis d = test::diagnose_text(over + failed);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
  EXPECT_TRUE(of_kind(failed, FactKind::gpu_oom).empty());
}

// Ollama's CLI error pasted above its server log (modelled on
// ollama/ollama#7711; values ours): "unable to allocate backend buffer" names
// no backend, the runner's own line below it does (a CPU buffer: host RAM).
// Alone, the summary is still a failure.
TEST(LlamaCpp, TheRunnersOwnBufferLineDecidesOverOllamasSummary) {
  const std::string summary = "Error: llama runner process has terminated: error loading model: unable to allocate backend buffer\n";
  const std::string runner =
      "llm_load_tensors: offloaded 49/49 layers to GPU\n"
      "ggml_cuda_host_malloc: failed to allocate 14210.50 MiB of pinned memory: out of memory\n"
      "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 14900785152\n"
      "llama_model_load: error loading model: unable to allocate backend buffer\n";
  Diagnosis both = test::diagnose_text(summary + runner);
  EXPECT_EQ(both.layer, Layer::host_ram);
  Diagnosis alone = test::diagnose_text(summary);
  EXPECT_EQ(alone.layer, Layer::gpu_vram);
}

// Metal before 2024: a buffer past the device's maximum buffer length is
// refused whole; 'data' is the weights (the model does not fit), 'kv' the
// KV cache. Modelled on ggml-metal.m's ggml_metal_add_buffer (own sizes).
TEST(LlamaCpp, AMetalBufferOverTheMaximumIsWhatItHeld) {
  auto weights = of_kind(
      "ggml_metal_init: recommendedMaxWorkingSetSize = 21845.34 MB\n"
      "ggml_metal_add_buffer: buffer 'data' size 19327352832 is larger than buffer maximum of 17179869184\n"
      "ggml_metal_add_buffer: allocated 'eval            ' buffer, size =  1280.00 MB, ( 1280.48 / 21845.34)\n",
      FactKind::gpu_oom);
  ASSERT_EQ(weights.size(), 1u);
  EXPECT_EQ(weights[0].detail, "model");
  EXPECT_EQ(weights[0].requested, std::optional<uint64_t>(19327352832ULL));
  EXPECT_EQ(weights[0].limit, std::optional<uint64_t>(17179869184ULL));
  EXPECT_EQ(test::diagnose_text("ggml_metal_add_buffer: buffer 'data' size 19327352832 is larger than buffer maximum of 17179869184\n").cause,
            Cause::model_load);
  auto kv = of_kind("ggml_metal_add_buffer: buffer 'kv' size 21474836480 is larger than buffer maximum of 17179869184\n", FactKind::gpu_oom);
  ASSERT_EQ(kv.size(), 1u);
  EXPECT_EQ(kv[0].detail, "kv");
}

// Status 5 after a buffer's running total came within a tenth of the working
// set (no warning printed: 10324 of 10922 MB) is that memory too: the graph's
// own buffers had no room. A total at half the set says nothing. And a server
// that said it was listening had its model loaded: the loading lines above
// it no longer speak for the failure (modelled on ggml-metal.m's
// ggml_metal_add_buffer and examples/server; our sizes).
TEST(LlamaCpp, MetalStatusFiveWithTheBuffersNearTheWorkingSetIsTheMemory) {
  const std::string load =
      "llama.cpp: loading model from models/13b.q4_1.bin\n"
      "ggml_metal_init: recommendedMaxWorkingSetSize = 10922.67 MB\n"
      "ggml_metal_add_buffer: allocated 'data            ' buffer, size =  7759.83 MB, ( 7760.28 / 10922.67)\n";
  const std::string near = "ggml_metal_add_buffer: allocated 'kv              ' buffer, size =  2564.00 MB, (10324.28 / 10922.67)\n";
  const std::string serve = "llama server listening at http://127.0.0.1:8080\nslot 0: prompt tokens = 1874, n_predict = 256\n";
  const std::string failed = "ggml_metal_graph_compute: command buffer 0 failed with status 5\nGGML_ASSERT: ggml-metal.m:1150: false\n";
  Diagnosis d = test::diagnose_text(load + near + serve + failed);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_NE(d.cause, Cause::model_load);
  EXPECT_TRUE(of_kind(load + serve + failed, FactKind::gpu_oom).empty());
}

// Ollama's load outlasting its timeout (modelled on ollama/ollama#4636; our
// paths and sizes) is a look-alike; a runner killed for memory beside it is
// still the failure.
TEST(OllamaSched, ALoadTimeoutIsALookAlikeAndAKilledRunnerStillWins) {
  const std::string timeout =
      "time=2024-06-02T09:14:07.590Z level=ERROR source=sched.go:344 msg=\"error loading llama server\" "
      "error=\"timed out waiting for llama runner to start - progress 0.00 - \"\n";
  EXPECT_EQ(test::diagnose_text(timeout).layer, Layer::not_memory);
  Diagnosis killed = test::diagnose_text(
      timeout + "[Sun Jun  2 09:13:58 2024] Out of memory: Killed process 41881 (ollama_llama_se) total-vm:61204212kB, "
                "anon-rss:58812432kB, file-rss:1024kB, shmem-rss:0kB, UID:997 pgtables:116212kB oom_score_adj:0\n");
  EXPECT_EQ(killed.layer, Layer::host_ram);
}

// An embedding or rerank input longer than the physical batch, refused by
// llama.cpp's server through Ollama (modelled on infiniflow/ragflow#16033; our
// sizes): a length check, not memory, with the GPU half empty beside it.
TEST(OllamaSched, AnInputLongerThanThePhysicalBatchIsALookAlike) {
  const std::string refused =
      "time=2026-04-11T08:02:19.114Z level=ERROR source=server.go:1491 msg=\"embedding failed\" error=\"input (4107 tokens) is "
      "too large to process. increase the physical batch size (current batch size: 4096)\"\n"
      "[GIN] 2026/04/11 - 08:02:19 | 500 |   71.202ms |      172.18.0.4 | POST     \"/api/embed\"\n";
  auto n = of_kind(refused, FactKind::not_memory_failure);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].detail.find("physical batch"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(refused + "NVIDIA GeForce RTX 4070, 5120 MiB, 12282 MiB\n").layer, Layer::not_memory);
}

// llama.cpp's n_ctx = 0 means "the model's own context": the advice must not
// divide by it (it did, and the process died of SIGFPE), nor offer to halve a
// context of 2048 or less. Our own sizes.
TEST(LlamaCpp, AContextOfZeroOrASmallOneGetsNoHalvingAdvice) {
  const std::string tail =
      "llama_kv_cache_init:      CUDA0 KV buffer size =  4096.00 MiB\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory\n"
      "llama_kv_cache_init: failed to allocate buffer for kv cache\n"
      "llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache\n";
  for (const char* ctx : {"0", "1024"}) {
    Diagnosis d = test::diagnose_text(std::string("llama_new_context_with_model: n_ctx      = ") + ctx + "\n" + tail);
    ASSERT_FALSE(d.incidents.empty()) << ctx;
    EXPECT_EQ(d.layer, Layer::gpu_vram);
    for (const auto& f : d.incidents[0].fixes) EXPECT_EQ(f.action.find("lower the context"), std::string::npos) << ctx << ": " << f.action;
  }
  Diagnosis big = test::diagnose_text("llama_new_context_with_model: n_ctx      = 32768\n" + tail);
  ASSERT_FALSE(big.incidents.empty());
  bool halved = false;
  for (const auto& f : big.incidents[0].fixes) halved = halved || f.action.find("lower the context 32768 -> 16384") != std::string::npos;
  EXPECT_TRUE(halved);
}

// llama-server refusing a prompt its KV cache cannot hold (modelled on
// ggml-org/llama.cpp's server log of 2024-2025 with the cache on CUDA
// devices; own sizes and ids): the cache sized for n_ctx, on the GPU, is
// smaller than the request. The message quoted in advice is no refusal.
TEST(LlamaCpp, APromptTooBigForTheKvSizeIsTheKvCache) {
  const std::string refused =
      "ERR  [            update_slots] Input prompt is too big compared to KV size. Please try increasing KV size. | "
      "tid=\"1402\" timestamp=1775911442 id_slot=0 id_task=512 n_prompt_tokens=70000 n_ctx=65536\n";
  Diagnosis gpu = test::diagnose_text("llama_kv_cache_init:      CUDA0 KV buffer size =  4096.00 MiB\n" + refused);
  EXPECT_EQ(gpu.layer, Layer::gpu_vram);
  EXPECT_EQ(gpu.cause, Cause::kv_cache_context);
  EXPECT_EQ(test::diagnose_text(refused).cause, Cause::kv_cache_context);
  EXPECT_EQ(test::diagnose_text("hint: \"Input prompt is too big compared to KV size\" means raise --ctx-size\n").layer, Layer::none);
}

// The weights loaded, then llama.cpp creates a long context and the next
// device allocation fails (modelled on LostRuins/koboldcpp Vulkan reports with
// contextsize 16384; our own figures): the context's KV cache, not the load
// whose lines stand above it. With a short context the loading lines decide.
TEST(LlamaCpp, AFailureAfterALongContextIsCreatedIsTheKvCache) {
  auto log = [](const std::string& n_ctx) {
    return "Loading model: D:\\LLM\\mistral-7b-instruct-v0.2.Q6_K.gguf\n"
           "llm_load_tensors: ggml ctx size =    0.22 MiB\n"
           "llm_load_tensors: offloading 32 repeating layers to GPU\n"
           "llm_load_tensors: offloading non-repeating layers to GPU\n"
           "llm_load_tensors: offloaded 33/33 layers to GPU\n"
           "llm_load_tensors:        CPU buffer size =   102.54 MiB\n"
           "llm_load_tensors:     Vulkan buffer size =  5666.09 MiB\n"
           "..................................................................\n"
           "llama_new_context_with_model: n_ctx      = " + n_ctx + "\n"
           "llama_new_context_with_model: freq_base  = 10000.0\n"
           "ggml_vulkan: Device memory allocation of size 2157969408 failed.\n"
           "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
           "terminate called after throwing an instance of 'vk::OutOfDeviceMemoryError'\n";
  };
  Diagnosis long_ctx = test::diagnose_text(log("16464"));
  EXPECT_EQ(long_ctx.layer, Layer::gpu_vram);
  EXPECT_EQ(long_ctx.cause, Cause::kv_cache_context) << test::reason_text(long_ctx);
  EXPECT_EQ(test::diagnose_text(log("2048")).cause, Cause::model_load);
}

// The KV cache beside the weights on the device (modelled on TabbyML/tabby
// start-ups of CodeLlama-13B on a 12 GB card; our own figures): a KV cache
// half the weights' size or more is what the context added; a small one
// leaves the failure to the load.
TEST(LlamaCpp, AKvCacheHalfTheWeightsOrMoreIsTheContext) {
  auto log = [](const std::string& kv) {
    return "llm_load_tensors: using CUDA for GPU acceleration\n"
           "llm_load_tensors: offloading 40 repeating layers to GPU\n"
           "llm_load_tensors: offloaded 43/43 layers to GPU\n"
           "llm_load_tensors: VRAM used: 6936.01 MB\n"
           "...........................................................\n"
           "llama_new_context_with_model: n_ctx      = 8192\n"
           "llama_new_context_with_model: kv self size  = " + kv + " MB\n"
           "llama_new_context_with_model: compute buffer total size = 561.07 MB\n"
           "CUDA error 2 at /src/llama.cpp/ggml-cuda.cu:7103: out of memory\n"
           "current device: 0\n";
  };
  Diagnosis big = test::diagnose_text(log("6400.00"));
  EXPECT_EQ(big.layer, Layer::gpu_vram);
  EXPECT_EQ(big.cause, Cause::kv_cache_context) << test::reason_text(big);
  EXPECT_EQ(test::diagnose_text(log("400.00")).cause, Cause::model_load);
}

// ggml before its allocators sized one context when the model loaded; a
// tensor that does not fit in what is left is that arena full, a pool of the
// program's own (modelled on nomic-ai/gpt4all and privateGPT reports of
// "not enough space in the context's memory pool"; our figures).
TEST(LlamaCpp, GgmlsFixedContextPoolFullIsTheProgramsOwnCap) {
  Diagnosis d = test::diagnose_text(
      "gptj_model_load: ggml ctx size = 4505.45 MB\n"
      "gptj_model_load: model size =  3609.38 MB / num tensors = 285\n"
      "ggml_new_tensor_impl: not enough space in the context's memory pool (needed 4712300544, available 4709842944)\n"
      "Segmentation fault (core dumped)\n");
  EXPECT_EQ(d.layer, Layer::unknown) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::limit_too_low) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("context pool"), std::string::npos) << test::reason_text(d);
}

// Metal builds of mid-2023 print the working set once and each buffer's size
// without a running total: their sum past it makes status 5 that memory
// (modelled on ggerganov/llama.cpp Metal reports of 30B models on 32 GB
// Macs; our figures). The same buffers well under the set leave it an error.
TEST(LlamaCpp, MetalBuffersSummedPastTheWorkingSetMakeStatusFiveTheMemory) {
  auto log = [](const char* data_mb) {
    return std::string("ggml_metal_init: recommendedMaxWorkingSetSize = 21845.34 MB\n"
                       "ggml_metal_add_buffer: allocated 'data            ' buffer, size = ") +
           data_mb +
           " MB\n"
           "ggml_metal_add_buffer: allocated 'eval            ' buffer, size =  1280.00 MB\n"
           "ggml_metal_add_buffer: allocated 'kv              ' buffer, size =  3122.00 MB\n"
           "ggml_metal_graph_compute: command buffer 0 failed with status 5\n"
           "GGML_ASSERT: ggml-metal.m:977: false\n";
  };
  Diagnosis over = test::diagnose_text(log("17452.67"));
  EXPECT_EQ(over.layer, Layer::gpu_vram) << test::reason_text(over);
  EXPECT_NE(test::diagnose_text(log("3712.10")).layer, Layer::gpu_vram);
}

}  // namespace
}  // namespace aimem
