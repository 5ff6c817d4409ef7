// Host allocations that failed inside a process, as language runtimes and libc
// report them (host_alloc_failure, layer host_ram; the diagnosis turns it into
// a container or pod limit when a limit is in evidence):
//   MemoryError                                  Python: the last line of a traceback, alone
//   MemoryError: Unable to allocate ...          or with a message
//   [rank0]: MemoryError / web-1  | MemoryError  the same behind a torchrun / compose prefix
//   numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.5 GiB for an array with shape (..) and data type float64
//   MemoryError: Unable to allocate array with shape (20387, 68579) and data type float64   (numpy before 1.17: no size;
//                                                the request is the shape's product times the type's width)
//   terminate called after throwing an instance of 'std::bad_alloc'   (+ "  what():  std::bad_alloc")
//   terminate called after throwing an instance of 'St9bad_alloc'     (old libstdc++)
//   runtime: out of memory: cannot allocate 4194304-byte block (3848470528 in use)   Go
//   fatal error: runtime: out of memory                                              Go
//   fatal error: out of memory                                                       Go (mallocgc, after the line above)
//   runtime: VirtualAlloc of 299704320 bytes failed with errno=1455                  Go on Windows (before it)
//   fatal error: runtime: cannot allocate memory                                     Go (mmap ENOMEM)
//   memory allocation of 1234 bytes failed                                           Rust
//   <anything>: Cannot allocate memory / OSError: [Errno 12] Cannot allocate memory   ENOMEM
// The word "MemoryError" is also part of other names (torch.cuda.OutOfMemoryError,
// java.lang.OutOfMemoryError, _ArrayMemoryError): only the Python exception
// itself, as a traceback prints it, counts. ENOMEM from an RDMA registration
// (ibv_reg_mr, NET/IB) is the locked-memory ulimit, not RAM, and the JVM's own
// commit failures and PyTorch's "DefaultCPUAllocator: ... Error code 12 (Cannot
// allocate memory)" belong to the JVM and PyTorch recognizers.
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"MemoryError", kShared},
    {"for an array with shape", kCompanion},
    {"bad_alloc", kShared},
    {"runtime: out of memory"},
    {"fatal error: out of memory"},
    {"runtime: VirtualAlloc of "},
    {"runtime: cannot allocate memory"},
    {"memory allocation of ", kShared},
    {"Cannot allocate memory", kShared},
    {"[Errno 12]", kCompanion},
    // A device allocator in the C++ frames under a Python MemoryError (Paddle's
    // "paddle::memory::allocation::CUDAAllocator::AllocateImpl"): the device's.
    {"(CUDA|HIP|XPU|NPU|GPU|Cuda|Gpu)Allocator|cudaMalloc|hipMalloc", kRegex | kContext},
    // Or Paddle's own report under a bare MemoryError, below its C++ frames
    // ("Out of memory error on GPU 0. Cannot allocate 112.5MB memory on GPU 0").
    {"Out of memory error on GPU", kContext},
};

// The bytes of an array numpy could not allocate, from its shape and data
// type when the message gives no size (numpy before 1.17). A type whose width
// is not known gives nothing, and so does a product past 2^63.
std::optional<uint64_t> array_bytes(std::string_view s) {
  auto shape = text::after(s, "shape (");
  auto type = text::after(s, "data type ");
  if (!shape || !type) return std::nullopt;
  static constexpr std::pair<std::string_view, uint64_t> kWidths[] = {
      {"complex128", 16}, {"complex64", 8}, {"float64", 8}, {"int64", 8}, {"uint64", 8}, {"object", 8},
      {"float32", 4},     {"int32", 4},     {"uint32", 4},  {"float16", 2}, {"int16", 2},  {"uint16", 2},
      {"int8", 1},        {"uint8", 1},     {"bool", 1}};
  uint64_t width = 0;
  for (auto [name, w] : kWidths)
    if (text::starts_with(*type, name)) {
      width = w;
      break;
    }
  if (!width) return std::nullopt;
  uint64_t bytes = width;
  std::string_view rest = *shape;
  for (int dims = 0; dims < 32; ++dims) {
    rest = text::trim_left(rest);
    auto n = text::parse_u64(rest, &rest);
    if (!n) return std::nullopt;
    if (*n && bytes > (uint64_t{1} << 63) / *n) return std::nullopt;
    bytes *= *n;
    rest = text::trim_left(rest);
    if (text::starts_with(rest, ")")) return bytes;
    if (!text::starts_with(rest, ",")) return std::nullopt;
    rest.remove_prefix(1);
    if (text::starts_with(text::trim_left(rest), ")")) return bytes;  // a 1-tuple: "(5000000000,)"
  }
  return std::nullopt;
}

bool ident_char(char c) { return platform::is_alnum(c) || c == '_' || c == '.'; }

class PythonHost final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (held_ && line.number > held_->where.line + kDeviceFrames) release(out);
    if (held_ && device_allocator(s)) {
      held_->kind = FactKind::gpu_oom;
      held_->layer = Layer::gpu_vram;
      held_->detail += " from a device allocator (" + std::string(text::trim(s).substr(0, 120)) + ")";
      release(out);
      return;
    }
    if (size_t p = s.find("MemoryError"); p != std::string_view::npos && python_error(line, p, out)) return;
    if (size_t p = s.find("Unable to allocate "); p != std::string_view::npos && text::contains(s, "for an array with shape")) {
      auto req = units::parse_log_size(s.substr(p + 19));
      emit(line, p, 19, "numpy array allocation", 0.85f, req ? req : array_bytes(s.substr(p)), out);
      return;
    }
    if (size_t p = s.find("std::bad_alloc"); p != std::string_view::npos) {
      emit(line, p, 14, "std::bad_alloc", 0.75f, std::nullopt, out);
      return;
    }
    if (size_t p = s.find("St9bad_alloc"); p != std::string_view::npos) {
      emit(line, p, 12, "std::bad_alloc", 0.75f, std::nullopt, out);
      return;
    }
    size_t go = s.find("runtime: out of memory");
    for (std::string_view other : {"fatal error: out of memory", "runtime: VirtualAlloc of ", "runtime: cannot allocate memory"})
      if (go == std::string_view::npos) go = s.find(other);
    if (size_t p = go; p != std::string_view::npos) {
      // "runtime: out of memory: cannot allocate N-byte block (M in use)", "VirtualAlloc of N bytes failed"
      std::optional<uint64_t> req;
      if (auto v = text::after(s.substr(p), "cannot allocate ")) {
        req = text::parse_u64(*v);
        // A negative size ("cannot allocate -7962214583316189184-byte block"):
        // the size as the allocator took it, unsigned, which no machine holds.
        if (auto n = text::parse_i64(*v); !req && n && *n < 0) req = static_cast<uint64_t>(*n);
      }
      if (auto v = text::after(s.substr(p), "VirtualAlloc of ")) req = text::parse_u64(*v);
      emit(line, p, 22, "Go runtime: out of memory", 0.85f, req, out);
      return;
    }
    if (size_t p = s.find("memory allocation of "); p != std::string_view::npos) {
      // Rust's alloc error handler: "memory allocation of N bytes failed"
      std::string_view rest;
      auto n = text::parse_u64(s.substr(p + 21), &rest);
      if (!n || !text::starts_with(rest, " bytes failed")) return;
      emit(line, p, 21, "Rust allocation failed", 0.85f, n, out);
      return;
    }
    size_t p = s.find("Cannot allocate memory");
    if (p == std::string_view::npos) p = s.find("[Errno 12]");
    if (p == std::string_view::npos || guards::is_optional_refusal(s)) return;
    for (std::string_view other : {"os::commit_memory", "Native memory allocation", "DefaultCPUAllocator", "ibv_", "NET/IB", "RDMA"})
      if (text::contains(s, other)) return;
    // A device's error with strerror(ENOMEM) after it ("CUDA Error: out of memory: Cannot allocate memory",
    // darknet's check_error): the device ran out; the generic reader names it.
    for (std::string_view dev : {"CUDA", "cuda", "GPU", "HIP", "hip", "ROCm", "cuDNN"})
      if (text::contains(s.substr(0, p), dev)) return;
    emit(line, p, 22, "Cannot allocate memory (ENOMEM)", 0.7f, std::nullopt, out);
  }

  void finish(FactSink& out) override { release(out); }

 private:
  uint64_t last_line_ = 0;
  std::string last_detail_;
  // A Python MemoryError held for the frames under it: a device allocator
  // among them (within kDeviceFrames lines) makes it the device's.
  std::optional<Fact> held_;
  static constexpr uint64_t kDeviceFrames = 16;

  static bool device_allocator(std::string_view s) {
    for (std::string_view w : {"CUDAAllocator", "HIPAllocator", "XPUAllocator", "NPUAllocator", "GPUAllocator", "CudaAllocator",
                               "GpuAllocator", "cudaMalloc", "hipMalloc", "Out of memory error on GPU"})
      if (text::contains(s, w)) return true;
    return false;
  }

  void release(FactSink& out) {
    if (held_) out.add(std::move(*held_));
    held_.reset();
  }

  // The Python exception as a traceback prints it: the line starts with it
  // (after a rank / service prefix), maybe behind a module path, and it ends
  // the line or is followed by ": message" or "(...)".
  bool python_error(const Line& line, size_t p, FactSink& out) {
    std::string_view s = line.text;
    bool numpy = p >= 6 && s.substr(p - 6, 6) == "_Array";
    if (!numpy && p > 0 && platform::is_alnum(s[p - 1])) return false;  // OutOfMemoryError, CudaMemoryError
    size_t t = p;
    while (t > 0 && ident_char(s[t - 1])) --t;
    std::string_view module = s.substr(t, p - t);
    if (text::contains(module, "torch") || text::contains(module, "java")) return false;
    std::string_view prefix = text::trim(s.substr(0, t));
    bool prefix_ok = prefix.empty() || prefix == "E" || prefix.back() == ']' || text::ends_with(prefix, "]:") ||
                     prefix.back() == '|' || prefix.back() == '>';
    if (!prefix_ok) return false;
    std::string_view rest = s.substr(p + 11);
    std::string_view after = text::trim(rest);
    if (!(after.empty() || after[0] == ':' || after[0] == '(')) return false;
    std::optional<uint64_t> req;
    if (auto v = text::after(rest, "Unable to allocate ")) req = units::parse_log_size(*v);
    if (!req && text::contains(rest, "with shape")) req = array_bytes(rest);
    emit(line, t, p + 11 - t, numpy ? "numpy array allocation" : "Python MemoryError", 0.85f, req, out);
    return true;
  }

  void emit(const Line& line, size_t at, size_t len, std::string_view detail, float strength, std::optional<uint64_t> requested,
            FactSink& out) {
    if (guards::is_mention(line.text, at, len)) return;
    // A device allocator's failure wrapped in a host exception ("MemoryError: std::bad_alloc: RMM failure
    // at: .../rmm/mr/device/pool_memory_resource.hpp:179: Maximum pool size exceeded"): the device ran out.
    bool device = false;
    for (std::string_view dev : {"RMM failure", "/mr/device/", "rmm::"}) device = device || text::contains(line.text, dev);
    // One failure prints its error more than once (terminate + what(), Go's two
    // lines, chained tracebacks): keep the first.
    if (last_line_ && line.number <= last_line_ + 30 && detail == last_detail_) {
      last_line_ = line.number;
      return;
    }
    last_line_ = line.number;
    last_detail_ = std::string(detail);
    Fact f = make_fact(line, device ? FactKind::gpu_oom : FactKind::host_alloc_failure, Family::python);
    f.layer = device ? Layer::gpu_vram : Layer::host_ram;
    f.strength = strength;
    f.detail = device ? std::string(detail) + " from a device memory resource (RMM)" : std::string(detail);
    f.requested = requested;
    if (!device && detail == "Python MemoryError") {
      release(out);
      held_ = std::move(f);
      return;
    }
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kPythonEntry{"python_host_alloc", Family::python, kPatterns,
                                   [] { return std::unique_ptr<Recognizer>(new PythonHost); }};

}  // namespace aimem
