// llama.cpp / ggml and Ollama (the messages of llama.cpp's src/llama-context.cpp,
// src/llama-kv-cache.cpp and ggml/src/ggml-cuda/ggml-cuda.cu; Ollama's llm/server.go).
//
// One failed allocation prints a short report, lowest layer first:
//   ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4507.00 MiB on device 0: cudaMalloc failed: out of memory
//       (hipMalloc for ROCm; "ggml_vulkan: Device memory allocation of size N failed." + ErrorOutOfDeviceMemory;
//        "ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size = 4096.00 MiB")
//   ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4725934080      (graph / compute buffer)
//   alloc_tensor_range: failed to allocate CUDA0 buffer of size 1879048192          (weights or KV tensors)
//   ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504   (host buffer)
//   ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 3221225472 Bytes of memory on device
// then what the buffer was for:
//   llama_new_context_with_model: failed to allocate compute buffers / graph_reserve: failed to allocate compute buffers
//   llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers
//   llama_kv_cache_init: failed to allocate buffer for kv cache / ... failed to initialize the context: failed to
//       allocate buffer for kv cache / llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache
//   llama_model_load: error loading model: unable to allocate CUDA0 buffer / failed to load model
// and the wrappers repeat it: "failed to create context with model", {"msg":"unable to load model"}, Ollama's
//   llama runner process has terminated: exit status 1: cudaMalloc failed: out of memory
//   {"error":"llama-server process has terminated: signal: killed"}   (exit status / signal: exit_status.cc)
// Older builds (2023-early 2024) stop at the failing CUDA call instead, naming the device on the next line:
//   CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory
//   current device: 0
// (later builds print "CUDA error: out of memory" / "  current device: 0, in function ggml_cuda_pool_malloc_vmm
// at ..." / GGML_ASSERT: the GPU errors recognizer reads that form). Pinned host buffers that cannot be had are
// a warning, not a failure: ggml falls back to pageable memory and goes on:
//   ggml_cuda_host_malloc: failed to allocate 349659.17 MiB of pinned memory: out of memory
//   ggml_vulkan: Failed to allocate pinned memory (Requested buffer size exceeds device buffer size limit:
//       ErrorOutOfDeviceMemory)                                       (the Vulkan backend's, the same)
// (host_state context: the host could not lock that much RAM; other reasons, such as a driver mismatch, are
// ignored here).
// Metal reports a failed graph at run time:
//   ggml_metal_graph_compute: command buffer 0 failed with status 5
// (status 5 alone is any command-buffer error; after ggml_metal_add_buffer warned that the buffers exceed the
// device's working set, "( 7024.71 /  5461.34), warning: current allocated size is greater than the recommended
// max working set size", it is that memory: the weights' own 'data' buffers past it are the model not fitting;
// so it is when a buffer's running total came within a tenth of the set: "allocated 'scr1 ' buffer, size =
// 512.00 MB, (10324.45 / 10922.67)", the graph's own buffers then have no room; builds of mid-2023 print
// "ggml_metal_init: recommendedMaxWorkingSetSize = 21845.34 MB" once and each buffer's size alone, summed here)
//   error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)
// Metal before 2024 refuses one buffer past the device's maximum buffer length:
//   ggml_metal_add_buffer: buffer 'data' size 18300780544 is larger than buffer maximum of 17179869184
// Ollama refuses before loading: Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)
// Ollama finds no layout: Error: 500 Internal Server Error: memory layout cannot be allocated [with num_gpu = 48]
//
// Context (runtime_setting): n_ctx, kv_size, n_batch, n_ubatch, n_seq_max; "KV self size = 8192.00 MiB"; "<dev> KV buffer
// size = ..."; "llama_kv_cache: size = 23480.00 MiB (150272 cells, 40 layers, 1/1 seqs)"; runner command lines
// (--ctx-size, --parallel, --batch-size); Ollama's offload plan (msg="offload to cuda" ... memory.required.kv=...).
//
// The lines of one report are assembled into one fact (first line's
// provenance, the size that failed in `requested`, the purpose in `detail`:
// "compute", "kv", "model"); wrapper lines within a window are the same
// failure. A buffer in host memory (CPU, CUDA_Host) is a host allocation;
// when it held the KV cache the message itself says why (kv_cache_context).
// Runtime KV-slot messages ("failed to find free space in the KV cache,
// retrying with smaller batch size") are llama-server's own back-off, not
// allocation failures, until the back-off ends: "failed to decode the batch,
// n_batch = 1, ret = 1" after them is the KV cache with no room even for one
// token (the slot's cached tokens plus the new ones exceed the context), a
// KV-cache failure in the pool the KV buffer was seen on (a device's, else
// not placed), cause kv_cache_context. So is a prompt refused as "too big
// compared to KV size": the cache sized for n_ctx is smaller than the request.
#include <optional>
#include <string>

#include "core/engine_lines.h"
#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Malloc failed: out of memory"},  // cudaMalloc / hipMalloc / musaMalloc
    {"CUDA error [0-9]+ at .*: out of memory", kRegex},
    {"current device: ", kContext},
    {"failed to allocate", kShared},
    {"Input prompt is too big compared to KV size", kCompanion},
    {"not enough space in the context's memory pool", kCompanion},  // ggml before its allocators: a fixed arena
    {"ggml_cuda_host_malloc: failed"},  // pinned memory: llama.cpp falls back to pageable, never a failure
    {"ggml_vulkan: Failed to allocate pinned memory"},  // the same in the Vulkan backend
    {"unable to allocate", kShared},
    {"can't allocate", kShared},
    {"_init() failed", kCompanion},
    {"kv_size = ", kContext},
    {"failed to load model", kCompanion},
    {"failed to create context", kCompanion},
    {"ErrorOutOfDeviceMemory", kCompanion},
    {"Device memory allocation of size"},
    {"CommandBufferCallbackErrorOutOfMemory"},
    {"failed with status 5", kCompanion},
    {"is larger than buffer maximum of"},
    {"greater than the recommended max working set size", kContext},
    {"ggml_metal_add_buffer: allocated", kContext},
    {"recommendedMaxWorkingSetSize", kContext},
    {"model requires more system memory"},
    {"memory layout cannot be allocated"},
    {"process has terminated"},
    {"n_ctx ", kContext},
    {"n_batch ", kContext},
    {"n_ubatch ", kContext},
    {"n_seq_max ", kContext},
    {"KV self size", kCaseless | kContext},
    {"KV buffer size", kContext},
    // The weights placed on a device: "llm_load_tensors: VRAM used: 6936.01 MB",
    // "llm_load_tensors:      CUDA0 buffer size =  5666.09 MiB", newer builds' "CUDA0 model buffer size".
    {"VRAM used: ", kContext},
    {" buffer size = ", kContext},
    {" cells, ", kContext},
    {"--ctx-size", kContext},
    {"msg=\"offload to ", kContext},
    {"msg=offload library=", kContext},  // 0.6+: msg=offload library=cuda layers.requested=... memory.required.kv=...
    {"failed to find free space in the KV cache", kContext},
    {"failed to decode the batch", kCompanion},
};

constexpr uint64_t kReportGap = 12;      // lines between the lines of one report
constexpr uint64_t kAbsorbWindow = 400;  // wrapper lines repeating an emitted report

// The buffer a "KV buffer size" line names: "llama_kv_cache:      CUDA0 KV buffer size" -> "CUDA0".
std::string_view kv_buffer_name(std::string_view s) {
  std::string_view head = text::trim(s.substr(0, s.find("KV buffer size")));
  size_t sp = head.find_last_of(" :");
  return head.substr(sp == std::string_view::npos ? 0 : sp + 1);
}

// "CUDA0" -> 0, "ROCm1" -> 1, "Vulkan0" -> 0; nullopt for "Metal", "CPU".
std::optional<int> device_index(std::string_view buf) {
  size_t i = buf.size();
  while (i > 0 && buf[i - 1] >= '0' && buf[i - 1] <= '9') --i;
  if (i == buf.size() || buf.size() - i > 3) return std::nullopt;
  return static_cast<int>(*text::parse_u64(buf.substr(i)));
}

bool host_buffer(std::string_view buf) {
  return buf == "CPU" || text::ends_with(buf, "_Host") || text::starts_with(buf, "CPU_");
}

// What a report line says the buffer was for.
std::string_view purpose(std::string_view s) {
  if (text::contains(s, "compute buffer")) return "compute";
  if (text::icontains(s, "kv cache") || text::icontains(s, "buffer for kv")) return "kv";
  if (text::contains(s, "error loading model") || text::contains(s, "failed to load model") ||
      text::contains(s, "unable to load model") || text::contains(s, "model buffer"))
    return "model";
  return {};
}

std::optional<uint64_t> setting_after(std::string_view s, std::string_view key) {
  auto v = text::after(s, key);
  if (!v) return std::nullopt;
  std::string_view t = text::trim_left(*v);
  if (!t.empty() && (t[0] == '=' || t[0] == ':')) t = text::trim_left(t.substr(1));
  return text::parse_u64(t);
}

class LlamaCpp final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto p = s.find("of pinned memory"); p != std::string_view::npos && text::contains(s, "host_malloc")) return pinned(line, s, out);
    if (text::contains(s, "ggml_vulkan: Failed to allocate pinned memory")) return vulkan_pinned(line, out);
    if (auto p = s.find("CUDA error "); p != std::string_view::npos && ggml_cuda_error(line, s, p, out)) return;
    if (auto v = text::after(s, "current device: ")) return device_line(line, *v);
    if (auto p = s.find("model requires more system memory"); p != std::string_view::npos) return refused(line, s, p, out);
    if (auto p = s.find("process has terminated"); p != std::string_view::npos) return terminated(line, s, p, out);
    if (auto p = s.find("memory layout cannot be allocated"); p != std::string_view::npos) return no_layout(line, s, p, out);
    if (text::contains(s, "failed to find free space in the KV cache")) {
      kv_backoff_ = line.number;
      return;
    }
    if (auto p = s.find("failed to decode the batch"); p != std::string_view::npos) return kv_full(line, s, p, out);
    if (auto p = s.find("Input prompt is too big compared to KV size"); p != std::string_view::npos) return prompt_over_kv(line, s, p, out);
    if (auto p = s.find("not enough space in the context's memory pool"); p != std::string_view::npos) return arena_full(line, s, p, out);
    if (allocation_line(line, s, out)) return;
    if (purpose_line(line, s, out)) return;
    if (text::contains(s, "KV buffer size")) {
      std::string_view buf = kv_buffer_name(s);
      kv_on_device_ = !buf.empty() && !text::starts_with(buf, "CPU") && !text::contains(buf, "_Host");
    }
    if (weights_line(s)) return;
    context(line, s, out);
  }

  void finish(FactSink& out) override {
    close(out);
    if (summary_) out.add(std::move(*summary_));
    summary_.reset();
  }

 private:
  struct Report {
    bool open = false, emitted = false, metal_pending = false;
    uint64_t last_line = 0;
    Fact fact;
  } r_;
  std::optional<Fact> summary_;  // Ollama's "unable to allocate backend buffer", waiting for the runner's own lines
  // ggml_metal_add_buffer warned that the buffers passed the working set (Metal): the first such warning.
  bool over_set_ = false, over_weights_ = false;
  uint64_t over_used_ = 0, over_set_size_ = 0;
  // Metal's builds of mid-2023 print the working set once and each buffer's
  // size without a running total: the sum is kept here (MB).
  double recommended_mb_ = 0, buffers_mb_ = 0;
  uint64_t kv_backoff_ = 0;    // the last "failed to find free space in the KV cache"
  bool kv_on_device_ = false;  // the KV buffer was seen on a device (CUDA0, ROCm0, Metal, ...)

  bool near(const Line& line, uint64_t gap) const { return r_.open && line.number <= r_.last_line + gap; }

  void close(FactSink& out) {
    if (r_.open && !r_.emitted && !r_.metal_pending) out.add(std::move(r_.fact));
    r_ = Report{};
  }

  void emit(FactSink& out) {
    if (r_.fact.kind == FactKind::host_alloc_failure && r_.fact.detail == "kv") r_.fact.cause = Cause::kv_cache_context;
    if (!r_.emitted) out.add(r_.fact);
    r_.emitted = true;
  }

  // Starts a report at this line, or continues the open one.
  Fact& report(const Line& line, FactSink& out, bool host) {
    if (summary_ && line.number > summary_->where.line && line.number <= summary_->where.line + kAbsorbWindow) summary_.reset();
    if (!near(line, kReportGap)) {
      close(out);
      r_.open = true;
      r_.fact = make_fact(line, host ? FactKind::host_alloc_failure : FactKind::gpu_oom, Family::llamacpp);
      r_.fact.layer = host ? Layer::host_ram : Layer::gpu_vram;
      r_.fact.strength = 0.9f;
    }
    r_.metal_pending = false;  // an allocation line confirms a pending Metal status
    r_.last_line = line.number;
    return r_.fact;
  }

  // The lowest-level lines: which allocation failed and how large it was.
  bool allocation_line(const Line& line, std::string_view s, FactSink& out) {
    // "allocating 4507.00 MiB on device 0: cudaMalloc failed: out of memory"
    if (auto p = s.find("Malloc failed: out of memory"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 28)) return true;
      if (text::contains(s, "pinned memory")) return true;  // ggml falls back to pageable memory
      Fact& f = report(line, out, false);
      if (auto v = text::after(s, "allocating "); v && !f.requested) f.requested = units::parse_log_size(*v);
      if (auto d = text::after(s, " on device "); d && !f.gpu) {
        if (auto n = text::parse_u64(*d); n && *n < 1024) f.gpu = static_cast<int>(*n);
      }
      if (f.detail.empty()) f.detail = std::string(purpose(s));
      return true;
    }
    // "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size N" /
    // "ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate N Bytes of memory on device"
    if (auto p = s.find("_buffer_type_alloc_buffer"); p != std::string_view::npos &&
        (text::contains(s, "failed to allocate buffer of size") || text::contains(s, "can't allocate "))) {
      Fact& f = report(line, out, text::contains(s.substr(0, p), "_cpu"));
      std::optional<std::string_view> v = text::after(s, "buffer of size ");
      if (!v) v = text::after(s, "can't allocate ");
      if (!f.requested) f.requested = units::parse_log_size(*v, nullptr, true);
      return true;
    }
    // "failed to allocate CUDA0 buffer of size 4725934080", "unable to allocate CUDA0 buffer"
    for (std::string_view verb : {"failed to allocate ", "unable to allocate "}) {
      size_t p = s.find(verb);
      if (p == std::string_view::npos) continue;
      std::string_view rest = s.substr(p + verb.size());
      std::string_view buf = text::first_word(rest);
      std::string_view after_buf = text::trim_left(rest.substr(rest.find(buf) + buf.size()));
      if (buf.empty() || buf == "buffer" || buf == "compute" || !text::starts_with(after_buf, "buffer")) continue;
      // ggml names its buffers by backend ("CUDA0", "CPU", "Metal", "Vulkan0",
      // "CUDA_Host"); a driver's "failed to allocate wed buffer ring (-12)" in
      // the kernel log is not one of them.
      if (verb == "failed to allocate " && !(buf[0] >= 'A' && buf[0] <= 'Z')) continue;
      if (guards::is_mention(s, p, verb.size())) return true;
      Fact& f = report(line, out, host_buffer(buf));
      if (auto v = text::after(after_buf, "buffer of size "); v && !f.requested) f.requested = units::parse_log_size(*v, nullptr, true);
      if (!f.gpu) f.gpu = device_index(buf);
      if (f.detail.empty() || verb == "unable to allocate ") {
        std::string_view why = purpose(s);
        if (why.empty() && verb == "unable to allocate ") why = "model";  // llama_model_load's wording
        if (!why.empty()) f.detail = std::string(why);
      }
      if (!f.detail.empty() && f.detail != "model" && verb == "failed to allocate ") emit(out);
      if (verb == "unable to allocate ") emit(out);
      return true;
    }
    // Metal: "ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size = 4096.00 MiB"
    if (auto p = s.find("failed to allocate buffer, size ="); p != std::string_view::npos) {
      Fact& f = report(line, out, false);
      if (!f.requested) f.requested = units::parse_log_size(s.substr(p + 33));
      return true;
    }
    // Vulkan: "ggml_vulkan: Device memory allocation of size 4294967296 failed." / "... ErrorOutOfDeviceMemory"
    if (auto p = s.find("Device memory allocation of size "); p != std::string_view::npos) {
      if (!text::contains(s, "failed")) return true;
      Fact& f = report(line, out, false);
      if (!f.requested) f.requested = units::parse_log_size(s.substr(p + 33), nullptr, true);
      return true;
    }
    if (auto p = s.find("ErrorOutOfDeviceMemory"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 22)) return true;
      report(line, out, false);
      return true;
    }
    if (metal_buffer_maximum(line, s, out)) return true;
    // Metal at graph compute time: status 5 alone is any command-buffer error;
    // the OutOfMemory line that follows makes it a memory failure.
    if (text::contains(s, "greater than the recommended max working set size")) return working_set_warning(s, 1.0);
    // Each buffer's line gives the running total against the working set: a
    // total within a tenth of it leaves the graph's own buffers no room.
    if (text::contains(s, "ggml_metal_add_buffer: allocated")) return working_set_warning(s, kNearWorkingSet);
    if (auto v = text::after(s, "recommendedMaxWorkingSetSize = ")) {
      recommended_mb_ = text::parse_double(*v).value_or(0);
      if (!(recommended_mb_ > 0 && recommended_mb_ < 1e9)) recommended_mb_ = 0;  // no working set of a petabyte: garbled
      return true;
    }
    if (text::contains(s, "failed with status 5")) {
      if (!text::contains(s, "command buffer")) return true;
      if (over_set_ && !(r_.open && near(line, kReportGap))) {
        // The buffers were already past the working set: the failure is that memory.
        close(out);
        r_.open = true;
        r_.fact = make_fact(line, FactKind::gpu_oom, Family::llamacpp);
        r_.fact.layer = Layer::gpu_vram;
        r_.fact.strength = 0.8f;
        r_.fact.detail = over_weights_ ? "model" : "compute";
        r_.fact.usage = over_used_;
        r_.fact.total = over_set_size_;
        r_.last_line = line.number;
        emit(out);
        return true;
      }
      if (!(r_.open && near(line, kReportGap))) {
        close(out);
        r_.open = true;
        r_.metal_pending = true;
        r_.fact = make_fact(line, FactKind::gpu_oom, Family::llamacpp);
        r_.fact.layer = Layer::gpu_vram;
        r_.fact.strength = 0.85f;
        r_.fact.detail = "compute";
      }
      r_.last_line = line.number;
      return true;
    }
    if (text::contains(s, "CommandBufferCallbackErrorOutOfMemory")) {
      if (r_.metal_pending && near(line, kReportGap)) {
        r_.metal_pending = false;
      } else {
        Fact& f = report(line, out, false);
        if (f.detail.empty()) f.detail = "compute";
      }
      r_.last_line = line.number;
      emit(out);
      return true;
    }
    return false;
  }

  // Metal before 2024 mapped each kind of buffer whole and refused one past
  // the device's per-buffer maximum (MTLDevice.maxBufferLength): "ggml_metal_add_buffer:
  // buffer 'data' size 18300780544 is larger than buffer maximum of 17179869184".
  // 'data' is the weights, 'kv' the KV cache, the rest the graph.
  bool metal_buffer_maximum(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find(" is larger than buffer maximum of ");
    if (p == std::string_view::npos) return false;
    if (guards::is_mention(s, p, 33)) return true;
    Fact& f = report(line, out, false);
    if (auto size = text::after(s.substr(0, p), "' size ")) f.requested = text::parse_u64(*size);
    f.limit = text::parse_u64(s.substr(p + 34));
    f.detail = text::contains(s, "buffer 'data") ? "model" : text::contains(s, "buffer 'kv") ? "kv" : "compute";
    emit(out);
    return true;
  }

  // "allocated 'data   ' buffer, size = 2928.65 MB, offs = ..., ( 7024.71 /  5461.34), warning: current
  // allocated size is greater than the recommended max working set size": the first such warning.
  // `share`: the part of the working set the total must pass (1.0: past it, as
  // ggml's warning says; kNearWorkingSet for a buffer's running total).
  static constexpr double kNearWorkingSet = 0.9;
  bool working_set_warning(std::string_view s, double share) {
    if (over_set_) return true;
    // No running total on the line ("allocated 'kv   ' buffer, size =  3122.00 MB"):
    // the sizes so far against the working set ggml_metal_init printed.
    if (!text::contains(s, " / ")) {
      auto size = text::after(s, "size = ");
      buffers_mb_ += size ? text::parse_double(text::trim_left(*size)).value_or(0) : 0;
      if (recommended_mb_ > 0 && buffers_mb_ >= share * recommended_mb_ && buffers_mb_ < 1e9) over_working_set(s, buffers_mb_, recommended_mb_);
      return true;
    }
    size_t open = s.rfind('(');
    std::string_view nums = open == std::string_view::npos ? std::string_view() : s.substr(open + 1);
    std::string_view rest;
    auto used = text::parse_double(text::trim_left(nums), &rest);
    auto slash = text::after(rest, "/");
    auto set = slash ? text::parse_double(text::trim_left(*slash)) : std::nullopt;
    if (used && set && (share >= 1.0 ? *used > *set : *used >= share * *set) && *set > 0 && *used < 1e9) over_working_set(s, *used, *set);
    return true;
  }

  // The buffers (MB) passed the working set (MB) on line `s`; whether the
  // buffer that did it was the weights' ('data').
  void over_working_set(std::string_view s, double used_mb, double set_mb) {
    over_set_ = true;
    over_weights_ = text::contains(s, "'data");
    over_used_ = static_cast<uint64_t>(used_mb * static_cast<double>(units::MiB));
    over_set_size_ = static_cast<uint64_t>(set_mb * static_cast<double>(units::MiB));
  }

  // Lines that say what the failed buffer was for, or wrap the failure.
  bool purpose_line(const Line& line, std::string_view s, FactSink& out) {
    // "compute buffers", and "compute pp buffers" (the prompt-processing graph, llama.cpp since 2025).
    bool compute = text::contains(s, "failed to allocate compute");
    bool kv = (text::icontains(s, "kv cache") || text::contains(s, "kv_cache")) &&
              (text::contains(s, "failed to allocate") || text::contains(s, "_init() failed"));
    bool wrapper = text::contains(s, "failed to load model") || text::contains(s, "failed to create context") ||
                   text::contains(s, "unable to load model");
    if (!compute && !kv && !wrapper) return false;
    if (r_.open && !r_.metal_pending && (near(line, kReportGap) || (r_.emitted && near(line, kAbsorbWindow)))) {
      if (!r_.emitted) {
        std::string_view why = compute ? "compute" : kv ? "kv" : purpose(s);
        if (r_.fact.detail.empty() || (r_.fact.detail == "model" && (compute || kv))) r_.fact.detail = std::string(why);
        if (compute || kv || !r_.fact.detail.empty()) emit(out);
      }
      r_.last_line = line.number;
      return true;
    }
    if (wrapper && !compute && !kv) return true;  // "failed to load model" alone: a missing file, a bad format...
    // A purpose line without the allocator line before it (cut excerpt).
    close(out);
    Fact& f = report(line, out, false);
    f.detail = compute ? "compute" : "kv";
    f.strength = 0.85f;
    emit(out);
    return true;
  }

  // "CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory" (ROCm builds print the same from hipMalloc).
  bool ggml_cuda_error(const Line& line, std::string_view s, size_t p, FactSink& out) {
    std::string_view rest;
    auto code = text::parse_u64(s.substr(p + 11), &rest);
    if (!code || !text::starts_with(rest, " at ") || !text::contains(rest, ": out of memory")) return false;
    if (guards::is_mention(s, p, 10)) return true;
    Fact& f = report(line, out, false);
    if (f.detail.empty()) f.detail = "ggml CUDA";
    return true;
  }

  // "current device: 0" after ggml's CUDA error: the device of the open report.
  void device_line(const Line& line, std::string_view v) {
    if (!r_.open || r_.emitted || r_.fact.kind != FactKind::gpu_oom || !near(line, 2)) return;
    if (auto n = text::parse_u64(v); n && *n < 1024 && !r_.fact.gpu) r_.fact.gpu = static_cast<int>(*n);
    r_.last_line = line.number;
  }

  // "ggml_cuda_host_malloc: failed to allocate 349659.17 MiB of pinned memory: out of memory"
  void pinned(const Line& line, std::string_view s, FactSink& out) {
    auto reason = text::after(s, "of pinned memory:");
    if (!reason || !(text::contains(*reason, "out of memory") || text::contains(*reason, "OutOfMemory"))) return;
    Fact f = make_fact(line, FactKind::host_state, Family::llamacpp);
    if (auto v = text::after(s, "failed to allocate ")) f.requested = units::parse_log_size(*v);
    f.detail = "ggml could not pin";
    if (f.requested) f.detail += " " + units::format_bytes(*f.requested);
    f.detail += " of host memory (out of memory); it falls back to pageable memory";
    out.add(std::move(f));
  }

  // "ggml_vulkan: Failed to allocate pinned memory (Requested buffer size
  // exceeds device buffer size limit: ErrorOutOfDeviceMemory)": the Vulkan
  // backend's pinned staging buffer, which it then takes from pageable memory.
  void vulkan_pinned(const Line& line, FactSink& out) {
    if (vulkan_pinned_said_) return;
    vulkan_pinned_said_ = true;
    Fact f = make_fact(line, FactKind::host_state, Family::llamacpp);
    f.detail = "ggml's Vulkan backend could not pin a staging buffer; it falls back to pageable memory";
    out.add(std::move(f));
  }
  bool vulkan_pinned_said_ = false;

  // The KV back-off ran out: "failed to decode the batch, n_batch = 1, ret = 1"
  // within a few lines of "failed to find free space in the KV cache".
  void kv_full(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (!kv_backoff_ || line.number > kv_backoff_ + kReportGap || guards::is_mention(s, p, 26)) return;
    kv_backoff_ = 0;
    kv_context_failure(line, "llama.cpp's KV cache had no room for the batch, even one token at a time: the context is full", {}, out);
  }

  // llama-server refusing a prompt longer than its KV cache ("Input prompt is
  // too big compared to KV size. Please try increasing KV size. ...
  // n_prompt_tokens=231406 n_ctx=202752"): the cache sized for the context
  // holds fewer tokens than the request, in the pool its buffer was seen on.
  void prompt_over_kv(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 43) || guards::is_advice_line(s)) return;
    kv_context_failure(line, "llama.cpp's KV cache is smaller than the prompt: the request's context does not fit the cache",
                       engine_lines::count_after(s, "n_ctx"), out);
  }

  // The KV cache out of room for the context, in the pool its buffer was
  // seen on (a device's, else not placed): one report.
  void kv_context_failure(const Line& line, std::string detail, std::optional<uint64_t> cells, FactSink& out) {
    if (r_.emitted && near(line, kAbsorbWindow)) return;
    close(out);
    Fact f = make_fact(line, FactKind::gpu_oom, Family::llamacpp);
    f.layer = kv_on_device_ ? Layer::gpu_vram : Layer::unknown;
    f.cause = Cause::kv_cache_context;
    f.strength = 0.7f;
    f.kv_tokens = cells;
    f.detail = std::move(detail);
    r_.open = true;
    r_.emitted = true;
    r_.last_line = line.number;
    r_.fact = f;
    out.add(std::move(f));
  }

  // ggml before ggml-alloc (2023): every tensor came from one context whose
  // size was fixed when the model loaded ("ggml ctx size = 4505.45 MB"):
  // "ggml_new_tensor_impl: not enough space in the context's memory pool
  // (needed 4621893120, available 4619382784)". The arena the program sized
  // for itself is full: a pool of its own (no layer names it), too small for
  // the work asked of it.
  void arena_full(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 45)) return;
    close(out);
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::llamacpp);
    f.layer = Layer::unknown;
    f.cause = Cause::limit_too_low;
    f.strength = 0.7f;  // the arena is sure; whether it was sized too small or the prompt grew, the line does not say
    f.detail = "ggml's context pool, sized when the model loaded, has no room left";
    if (auto v = text::after(s, "(needed ")) {
      std::string_view rest;
      f.requested = text::parse_u64(*v, &rest);
      if (auto a = text::after(rest, "available ")) f.free = text::parse_u64(*a);
    }
    out.add(std::move(f));
  }

  void refused(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 33)) return;
    if (r_.emitted && r_.fact.kind == FactKind::host_memory_refused && near(line, kAbsorbWindow)) return;
    close(out);
    Fact f = make_fact(line, FactKind::host_memory_refused, Family::llamacpp);
    f.layer = Layer::host_ram;
    f.strength = 0.9f;
    f.detail = "Ollama refused to load the model";
    std::string_view body = s.substr(p);
    if (auto v = text::after(body, "system memory (")) f.requested = units::parse_log_size(*v);
    if (auto v = text::after(body, "is available (")) f.free = units::parse_log_size(*v);
    r_.open = true;
    r_.emitted = true;
    r_.last_line = line.number;
    r_.fact = f;
    out.add(std::move(f));
  }

  // Ollama's scheduler found no split of the layers between the GPUs and host
  // memory that holds the model at its context ("Error: 500 Internal Server
  // Error: memory layout cannot be allocated", "... with num_gpu = 48" when
  // the offload was forced): the device memory it planned for is short.
  void no_layout(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 33) || guards::is_advice_line(s)) return;
    // A string literal of the wording in a client's code ("if 'memory layout
    // ...' in err"), not a JSON value ({"error":"memory layout ..."}).
    if (p > 0 && (s[p - 1] == '\'' || s[p - 1] == '"')) {
      std::string_view before = text::trim(s.substr(0, p - 1));
      if (before.empty() || before.back() != ':') return;
    }
    if (r_.emitted && near(line, kAbsorbWindow)) return;
    close(out);
    Fact f = make_fact(line, FactKind::gpu_oom, Family::llamacpp);
    f.layer = Layer::gpu_vram;
    f.strength = 0.75f;
    f.detail = "Ollama found no layout of the layers in GPU and host memory that fits";
    if (auto n = text::after(s, "num_gpu = ")) f.detail += " (num_gpu = " + std::string(text::first_word(*n).substr(0, 8)) + ")";
    r_.open = true;
    r_.emitted = true;
    r_.last_line = line.number;
    r_.fact = f;
    out.add(std::move(f));
  }

  // Ollama: "llama runner process has terminated: <reason>": a memory reason
  // becomes the failure it names.
  void terminated(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (!text::contains(s.substr(0, p), "runner") && !text::contains(s.substr(0, p), "llama-server")) return;
    if (guards::is_mention(s, p, 22)) return;
    std::string_view reason = s.substr(p + 22);
    bool oom = text::contains(reason, "out of memory") || text::contains(reason, "Malloc failed") ||
               text::contains(reason, "unable to allocate") || text::contains(reason, "failed to allocate") ||
               text::contains(reason, "ErrorOutOfDeviceMemory");
    if (r_.open && r_.emitted && near(line, kAbsorbWindow)) return;  // the runner's own report came first
    if (oom) {
      close(out);
      bool host = text::contains(reason, "CPU buffer");
      Fact& f = report(line, out, host);
      f.detail = std::string(purpose(reason));
      if (auto v = text::after(reason, "allocating ")) f.requested = units::parse_log_size(*v);
      f.strength = 0.85f;
      // "unable to allocate backend buffer" names no backend: when the
      // runner's own lines follow (Ollama's CLI error pasted above its server
      // log: ggml_backend_cpu_buffer_type_..., "CUDA0 buffer"), they say
      // which memory it was, and this summary is held back for them.
      if (text::contains(reason, "backend buffer")) {
        summary_ = std::move(r_.fact);
        r_ = Report{};
        return;
      }
      emit(out);
      return;
    }
    // Other reasons ("exit status 2", "signal: killed") are read by the
    // exit-status recognizer, which knows Go's wording.
  }

  // The weights a load placed on devices: "VRAM used: 6936.01 MB" (older
  // builds' total), or each device's "<dev> buffer size = N MiB" (newer:
  // "<dev> model buffer size") on llm_load_tensors / load_tensors lines; a
  // host buffer (CPU, CUDA_Host) is not a device's.
  bool weights_line(std::string_view s) {
    if (!text::contains(s, "load_tensors:")) return false;
    if (auto v = text::after(s, "VRAM used: ")) {
      if (auto b = units::parse_log_size(*v)) device_weights_ = *b;
      return true;
    }
    const size_t tag = s.find("load_tensors:") + 13, at = s.find(" buffer size = ");
    if (at == std::string_view::npos || at < tag || text::contains(s, "KV buffer")) return false;
    std::string_view dev = text::trim(s.substr(tag, at - tag));
    if (text::ends_with(dev, " model")) dev.remove_suffix(6);
    if (dev.empty() || text::starts_with(dev, "CPU") || text::contains(dev, "_Host") || text::contains(dev, "_Mapped")) return true;
    if (auto b = units::parse_log_size(s.substr(at + 15))) device_weights_ += *b;
    return true;
  }

  // A KV cache on the device beside the weights loaded there, half their size
  // or more: what the context adds is most of what did not fit (the context,
  // not the model; Ollama's plan says the same, above). The weights were in
  // place by then: a mark that the load ended, so the loading lines above do
  // not outvote it. A small KV cache says nothing here: the weights' share
  // decides, read from the loading lines.
  void kv_beside_weights(const Line& line, const Fact& kv, FactSink& out) {
    if (!kv.kv_bytes || device_weights_ == 0 || *kv.kv_bytes * 2 < device_weights_ || kv_statement_) return;
    if (text::contains(kv.detail, "KV buffer ") && !kv_on_device_) return;
    kv_statement_ = true;
    out.add(phase_mark(line, Family::runtime, kLoadFinished));
    Fact f = make_fact(line, FactKind::phase_serve, Family::llamacpp);
    f.cause = Cause::kv_cache_context;
    f.strength = 0.8f;
    f.detail = "a KV cache of " + units::format_bytes(*kv.kv_bytes) + " beside " + units::format_bytes(device_weights_) +
               " of weights on the device";
    out.add(std::move(f));
  }
  uint64_t device_weights_ = 0;
  bool kv_statement_ = false;

  void context(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::runtime_setting, Family::llamacpp);
    auto key_value = [&](std::string_view key) { return engine_lines::llamacpp_setting(s, key); };
    if (auto v = key_value("n_ctx ")) f.ctx = v, f.detail = "n_ctx";
    else if (auto k = key_value("kv_size ")) f.ctx = k, f.detail = "KV cache cells";
    else if (auto b = key_value("n_batch ")) f.batch_tokens = b, f.detail = "n_batch";
    else if (auto u = key_value("n_ubatch ")) f.batch_tokens = u, f.detail = "n_ubatch";
    else if (auto q = key_value("n_seq_max ")) f.sequences = q, f.detail = "n_seq_max";
    else if (text::icontains(s, "KV self size")) {
      f.kv_bytes = engine_lines::llamacpp_size(s, "KV self size");
      f.detail = "KV cache size";
    } else if (text::contains(s, "KV buffer size")) {
      f.kv_bytes = engine_lines::llamacpp_size(s, "KV buffer size");
      f.detail = "KV buffer " + std::string(kv_buffer_name(s).substr(0, 24));
    } else if (text::contains(s, " cells, ") && text::contains(s, "size =")) {
      // "llama_kv_cache: size = 23480.00 MiB (150272 cells,  40 layers,  1/1 seqs)"
      f.kv_bytes = engine_lines::llamacpp_size(s, "size");
      size_t open = s.find('(');
      if (open != std::string_view::npos) f.ctx = text::parse_u64(text::trim_left(s.substr(open + 1)));
      if (auto v = text::after(s, "layers,")) {
        std::string_view rest;
        auto a = text::parse_u64(text::trim_left(*v), &rest);
        if (a && !rest.empty() && rest[0] == '/') a = text::parse_u64(rest.substr(1), &rest);
        if (a && text::starts_with(text::trim_left(rest), "seqs")) f.sequences = a;
      }
      f.detail = "KV cache cells";
    } else if (text::contains(s, "--ctx-size")) {
      // runner command line: "--ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --parallel 4"
      f.ctx = setting_after(s, "--ctx-size");
      f.batch_tokens = setting_after(s, "--batch-size");
      f.sequences = setting_after(s, "--parallel");
      f.detail = "runner flags";
    } else if (text::contains(s, "msg=\"offload to ") || (text::contains(s, "msg=offload ") && text::contains(s, "memory.required.kv="))) {
      // memory.required.kv="1.0 GiB" memory.available="[22.9 GiB]" memory.required.full="6.2 GiB"
      // (msg="offload to cuda" until 0.5; later msg=offload library=cuda ... memory.weights.total="39.3 GiB")
      if (auto v = text::after(s, "memory.required.kv=\"")) f.kv_bytes = units::parse_log_size(*v);
      // The KV cache for the context is the largest part when it is at
      // least the weights: the context, not the model, decides the size.
      auto weights = text::after(s, "memory.weights.total=\"");
      auto w = weights ? units::parse_log_size(*weights) : std::nullopt;
      if (f.kv_bytes && w && *w > 0 && *f.kv_bytes >= *w) f.cause = Cause::kv_cache_context;
      std::string plan = "Ollama offload plan";
      auto need = text::after(s, "memory.required.full=\"");
      if (need) f.requested = units::parse_log_size(*need);  // what the whole load asks for
      auto avail = text::after(s, "memory.available=\"[");
      if (need && avail)
        plan += " (needs " + std::string(text::take_until(*need, "\"")) + ", " + std::string(text::take_until(*avail, "]\"")) + " available)";
      f.detail = plan;
    }
    if (!f.ctx && !f.batch_tokens && !f.sequences && !f.kv_bytes) return;
    if (f.detail == "KV cache size" || text::starts_with(f.detail, "KV buffer ") || f.detail == "KV cache cells") kv_beside_weights(line, f, out);
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kLlamaCppEntry{
    "llamacpp", Family::llamacpp, kPatterns, [] { return std::unique_ptr<Recognizer>(new LlamaCpp); }};

}  // namespace aimem
