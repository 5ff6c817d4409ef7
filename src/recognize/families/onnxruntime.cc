// ONNX Runtime allocation failures.
//
// Each device's memory comes from a BFC arena that grows by asking the device
// allocator for more; when that fails, or the arena reaches its configured
// limit, the running node fails with:
//   [E:onnxruntime:, sequential_executor.cc:514 onnxruntime::ExecuteKernel] Non-zero status code returned while
//       running FusedConv node. Name:'Conv_3' Status Message: D:\a\_work\1\s\onnxruntime\core\framework
//       \bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested
//       buffer of size 643840
//   (1.1x: ... void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool,
//       onnxruntime::WaitNotificationFn) Failed to allocate ...; older: onnxruntime::BFCArena::Extend ...)
//   BFCArena::AllocateRawInternal Available memory of 34699008 is smaller than requested bytes of 945041920
//       (the arena's memory limit, e.g. the CUDA provider's gpu_mem_limit, not the device, ran out)
// The CUDA provider's own calls report:
//   CUDA failure 2: out of memory ; GPU=0 ; hostname=HOST ; file=...\cuda_allocator.cc ; line=47 ;
//       expr=cudaMalloc((void**)&p, size);
//
// The failure line does not say whose arena it was: the pool is decided by,
// in order, the line itself (a CPU-only "_nchwc" node; a path under
// providers/cuda), the arena that logged "Extending BFCArena for <name>" for
// the same size, the arenas the session created ("Creating BFCArena for Cuda
// ...", "Reserving memory in BFCArena for Cpu"), and the execution providers
// named in the input (CUDAExecutionProvider, ...). A CUDA/GPU/DML/ROCm arena
// is GPU memory (gpu_oom); Cpu is host memory and CudaPinned is pinned host
// memory (host_alloc_failure). A failure is held a few dozen lines so a
// traceback that names the provider can still decide it. With nothing to go
// on it is reported as a GPU arena at low strength: ONNX Runtime sessions that
// run out of arena memory are GPU sessions far more often than CPU ones.
// "onnx runtime error 2: not enough space: expected 4915200, got 1228800" is a
// buffer smaller than its tensor's shape (a shape or data type mismatch in a
// serving config): a not_memory_failure look-alike.
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Failed to allocate memory for requested buffer of size"},
    {"AllocateRawInternal"},  // also the INFO "Extending BFCArena for Cuda. ... rounded_bytes:N" lines
    {"is smaller than requested bytes of", kCompanion},
    {"CUDA failure 2: out of memory"},
    {"BFCArena for ", kContext},
    {"ExecutionProvider", kContext},
    {"Total allocated bytes: ", kContext},  // the arena's size after its last extension
    // A tensor's buffer smaller than its shape needs ("not enough space:
    // expected 4915200, got 1228800"): a shape or type mismatch, not memory.
    {"not enough space: expected [0-9]+, got [0-9]+", kRegex | kCompanion},
};

constexpr uint64_t kHoldWindow = 40;  // lines after a failure in which a traceback may name the provider
constexpr uint64_t kRepeatWindow = 300;


enum class Pool { unknown, gpu, host, pinned };

Pool pool_of_arena(std::string_view name) {
  std::string n = text::lower(name);
  if (n.find("pinned") != std::string::npos) return Pool::pinned;
  for (std::string_view g : {"cuda", "gpu", "rocm", "hip", "dml", "migraphx", "tensorrt", "webgpu", "cann"})
    if (n.find(g) != std::string::npos) return Pool::gpu;
  if (n.find("cpu") != std::string::npos) return Pool::host;
  return Pool::unknown;
}

// The arena name after "BFCArena for " ("Cuda.", "Cpu size: 1887", "CUDA_CUDA with ...").
std::string_view arena_name(std::string_view s) {
  auto v = text::after(s, "BFCArena for ");
  if (!v) return {};
  std::string_view w = text::first_word(*v);
  while (!w.empty() && (w.back() == '.' || w.back() == ',' || w.back() == ':')) w.remove_suffix(1);
  return w.substr(0, 40);
}

class OnnxRuntime final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_ && line.number > pending_line_ + kHoldWindow) flush(out);

    if (auto p = s.find("CUDA failure 2: out of memory"); p != std::string_view::npos) return cuda_call(line, s, p, out);
    if (auto p = s.find("not enough space: expected "); p != std::string_view::npos && !guards::is_mention(s, p, 27)) {
      if (size_mismatch_line_ && line.number <= size_mismatch_line_ + kRepeatWindow) return;
      size_mismatch_line_ = line.number;
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.75f;
      f.detail = "ONNX Runtime's buffer smaller than the tensor's shape needs (\"not enough space: expected ..., got ...\"): "
                 "a shape or data type mismatch, not memory";
      out.add(std::move(f));
      return;
    }
    size_t fail = s.find("Failed to allocate memory for requested buffer of size");
    size_t limit = s.find("is smaller than requested bytes of");
    if (fail != std::string_view::npos || limit != std::string_view::npos) return arena_failure(line, s, fail, limit, out);
    if (text::contains(s, "BFCArena for ")) return arena_context(s);
    if (auto v = text::after(s, "Total allocated bytes: ")) {
      // The GPU arena's, after its extension or, before any, the only arena created.
      if (last_extended_ == Pool::gpu || (last_extended_ == Pool::unknown && created_ == Pool::gpu))
        gpu_arena_total_ = text::parse_u64(*v);
      return;
    }
    providers(s);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  uint64_t size_mismatch_line_ = 0;  // the last buffer-size mismatch reported
  // What the input said about the arenas and providers so far.
  Pool last_extended_ = Pool::unknown;     // "Extending BFCArena for X" (the arena that was growing)
  std::optional<uint64_t> last_extend_bytes_;
  Pool created_ = Pool::unknown;           // the only kind of arena created, or unknown when mixed
  bool created_mixed_ = false;
  std::optional<uint64_t> gpu_arena_total_;  // "Total allocated bytes: N" after the GPU arena's last extension
  std::optional<uint64_t> gpu_arena_limit_;  // "memory limit: N" of a GPU arena, when set below the default
  bool gpu_provider_ = false, cpu_provider_ = false;

  bool pending_ = false;
  uint64_t pending_line_ = 0;
  Pool pending_pool_ = Pool::unknown;
  bool pending_decided_ = false;  // by the line itself or the arena's own log
  bool pending_limit_ = false;    // the arena's memory limit, not the device
  Fact fact_;
  RepeatFilter repeats_{kRepeatWindow};

  void arena_context(std::string_view s) {
    Pool pool = pool_of_arena(arena_name(s));
    if (pool == Pool::unknown) return;
    if (text::contains(s, "Extending BFCArena for ")) {
      last_extended_ = pool;
      last_extend_bytes_.reset();
      if (auto v = text::after(s, "rounded_bytes:")) last_extend_bytes_ = text::parse_u64(text::trim_left(*v));
      return;
    }
    // "Creating BFCArena for Cuda with following configs: ... memory limit: 18446744073709551615 ..."
    if (created_ == Pool::unknown && !created_mixed_) created_ = pool;
    else if (created_ != pool) created_mixed_ = true, created_ = Pool::unknown;
    if (pool == Pool::gpu)
      if (auto v = text::after(s, "memory limit: "); v)
        if (auto n = text::parse_u64(*v); n && *n < (1ULL << 60)) gpu_arena_limit_ = n;
  }

  void providers(std::string_view s) {
    for (std::string_view g : {"CUDAExecutionProvider", "TensorrtExecutionProvider", "ROCMExecutionProvider",
                               "DmlExecutionProvider", "MIGraphXExecutionProvider", "CANNExecutionProvider"})
      if (text::contains(s, g)) gpu_provider_ = true;
    if (text::contains(s, "CPUExecutionProvider")) cpu_provider_ = true;
  }

  void arena_failure(const Line& line, std::string_view s, size_t fail, size_t limit, FactSink& out) {
    size_t p = fail != std::string_view::npos ? fail : limit;
    if (guards::is_mention(s, p, 20)) return;
    std::optional<uint64_t> size, available;
    if (fail != std::string_view::npos) {
      size = text::parse_u64(text::trim_left(s.substr(fail + 54)));
    } else {
      size = text::parse_u64(text::trim_left(s.substr(limit + 34)));
      if (auto v = text::after(s, "Available memory of ")) available = text::parse_u64(*v);
    }
    if (repeats_.repeated("bfc:" + std::to_string(size.value_or(0)), line.number)) return;
    flush(out);

    Pool pool = Pool::unknown;
    bool decided = false;
    if (text::contains(s, "_nchwc")) pool = Pool::host, decided = true;  // NCHWc layout: CPU provider only
    else if (text::contains(s, "providers\\cuda") || text::contains(s, "providers/cuda")) pool = Pool::gpu, decided = true;
    else if (auto named = pool_of_arena(arena_name(s)); named != Pool::unknown) pool = named, decided = true;
    else if (last_extended_ != Pool::unknown && size && last_extend_bytes_ == size) pool = last_extended_, decided = true;
    else if (last_extended_ != Pool::unknown) pool = last_extended_;
    else if (created_ != Pool::unknown) pool = created_;

    fact_ = make_fact(line, FactKind::gpu_oom, Family::onnxruntime);
    fact_.requested = size;
    fact_.free = available;
    // What the allocation was for: a node that was running is an activation
    // of this input; session initialisation is the model's weights.
    if (text::contains(s, "while running")) fact_.detail = "activation buffer of a running node";
    else if (text::icontains(s, "initializ")) fact_.detail = "model load (session initialisation)";
    pending_ = true;
    pending_line_ = line.number;
    pending_pool_ = pool;
    pending_decided_ = decided;
    pending_limit_ = limit != std::string_view::npos;
    if (decided) flush(out);
  }

  void flush(FactSink& out) {
    if (!pending_) return;
    pending_ = false;
    Pool pool = pending_pool_;
    float strength = pending_decided_ ? 0.9f : 0.75f;
    if (pool == Pool::unknown && gpu_provider_) pool = Pool::gpu;
    else if (pool == Pool::unknown && cpu_provider_) pool = Pool::host;
    else if (pool == Pool::unknown) strength = 0.6f;
    std::string what = fact_.detail.empty() ? std::string() : ": " + fact_.detail;
    // The arena's configured limit (gpu_mem_limit, OrtArenaCfg max_mem) was
    // reached, not the device or the host.
    // A GPU arena with a configured limit that the arena's size and the
    // request together pass has met that limit, whatever the message says.
    if (pool == Pool::gpu && !pending_limit_ && gpu_arena_limit_ && gpu_arena_total_ && fact_.requested &&
        *gpu_arena_total_ + *fact_.requested > *gpu_arena_limit_)
      pending_limit_ = true;
    if (pending_limit_) fact_.cause = Cause::limit_too_low;
    if (pool == Pool::host || pool == Pool::pinned) {
      fact_.kind = FactKind::host_alloc_failure;
      fact_.layer = Layer::host_ram;
      fact_.detail = (pool == Pool::pinned ? "ONNX Runtime pinned host arena (CudaPinned)" : "ONNX Runtime CPU arena (BFCArena)") +
                     std::string(pending_limit_ ? " reached its memory limit" : " could not grow") + what;
    } else {
      fact_.layer = Layer::gpu_vram;
      if (pending_limit_) {
        fact_.limit = gpu_arena_limit_;
        fact_.detail = "ONNX Runtime GPU arena reached its configured gpu_mem_limit" + what;
      } else {
        fact_.detail = std::string(pool == Pool::gpu ? "ONNX Runtime GPU arena (BFCArena) could not grow"
                                                     : "ONNX Runtime arena (BFCArena) could not grow; the log does not name its device") +
                       what;
      }
    }
    fact_.strength = strength;
    out.add(std::move(fact_));
    fact_ = Fact{};
  }

  // "CUDA failure 2: out of memory ; GPU=0 ; hostname=H ; file=...cuda_allocator.cc ; line=47 ; expr=cudaMalloc(...);"
  void cuda_call(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 29) || repeats_.repeated("cudacall", line.number)) return;
    Fact f = make_fact(line, FactKind::gpu_oom, text::icontains(s, "onnxruntime") ? Family::onnxruntime : Family::cuda);
    f.layer = Layer::gpu_vram;
    f.strength = 0.9f;
    if (auto g = text::after(s, "GPU="))
      if (auto n = text::parse_u64(*g); n && *n < 1024) f.gpu = static_cast<int>(*n);
    std::string_view expr = text::after(s, "expr=").value_or("");
    expr = text::trim(expr.substr(0, expr.find(';')));
    f.detail = "CUDA runtime call failed: out of memory";
    if (!expr.empty()) f.detail += " (" + std::string(expr.substr(0, 80)) + ")";
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kOnnxRuntimeEntry{
    "onnxruntime", Family::onnxruntime, kPatterns, [] { return std::unique_ptr<Recognizer>(new OnnxRuntime); }};

}  // namespace aimem
