// Triton Inference Server's CUDA memory pool: a fixed pool per device
// (--cuda-memory-pool-byte-size, 64 MiB by default) from which the server
// takes the GPU buffers it passes between models (ensembles, the Python
// backend). Its CNMEM allocator refuses a buffer the pool cannot hold and
// the server falls back to pinned host memory, which fails in turn where the
// backend needs the tensor on the device:
//
//   I0410 09:12:03.006932 1 cuda_memory_manager.cc:107] "CUDA memory pool is created on device 0 with size 67108864"
//   W0410 13:51:44.743979 1 memory.cc:212] Failed to allocate CUDA memory with byte size 99532800 on GPU 0:
//       CNMEM_STATUS_OUT_OF_MEMORY, falling back to pinned system memory
//
// (older releases print the same without the quotes). The pool's size is a
// configured cap on the device's memory, a limit like PyTorch's per-process
// fraction: a gpu_oom of that pool, limit the pool's size; a buffer larger
// than the whole pool is a pool set below the work (limit_too_low), a smaller
// one found the pool full of other buffers in flight (cause not decided).
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"CUDA memory pool is created on device", kContext},
    {"Failed to allocate CUDA memory with byte size [0-9]+ on GPU [0-9]+: CNMEM_STATUS_OUT_OF_MEMORY", kRegex},
};

class Triton final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto v = text::after(s, "CUDA memory pool is created on device ")) {
      std::string_view rest;
      auto dev = text::parse_u64(*v, &rest);
      auto size = text::after(rest, " with size ");
      auto bytes = size ? text::parse_u64(*size) : std::nullopt;
      if (dev && *dev < 1024 && bytes && *bytes > 0) {
        pool_device_ = static_cast<int>(*dev);
        pool_ = bytes;
      }
      return;
    }
    size_t p = s.find("Failed to allocate CUDA memory with byte size ");
    if (p == std::string_view::npos || guards::is_command_line(s) || said_) return;
    std::string_view rest;
    auto req = text::parse_u64(s.substr(p + 46), &rest);
    auto gpu = text::after(rest, " on GPU ");
    auto dev = gpu ? text::parse_u64(*gpu) : std::nullopt;
    if (!req || !dev || *dev >= 1024) return;
    said_ = true;
    Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
    f.layer = Layer::gpu_vram;
    f.strength = 0.85f;
    f.requested = req;
    f.gpu = static_cast<int>(*dev);
    const bool sized = pool_ && pool_device_ == static_cast<int>(*dev);
    if (sized) {
      f.limit = pool_;
      f.total = pool_;
      if (*req > *pool_) f.cause = Cause::limit_too_low;
    }
    f.detail = sized ? fmt::format("Triton's CUDA memory pool ({}) on GPU {} could not hold a {} buffer", units::format_bytes(*pool_), *dev,
                                   units::format_bytes(*req))
                     : fmt::format("Triton's CUDA memory pool on GPU {} could not hold a {} buffer", *dev, units::format_bytes(*req));
    out.add(std::move(f));
  }

 private:
  std::optional<uint64_t> pool_;
  int pool_device_ = -1;
  bool said_ = false;
};

}  // namespace

const RecognizerEntry kTritonEntry{"triton", Family::cuda, kPatterns, [] { return std::unique_ptr<Recognizer>(new Triton); }};

}  // namespace aimem
