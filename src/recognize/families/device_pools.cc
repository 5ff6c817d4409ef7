// A GPU memory pool's own account: how large the pool is, what is allocated
// in it, and the request it could not serve. With those three figures a
// failure inside a pool that still had room for the request is
// fragmentation (the free part not in one piece), whatever the device
// holds; the diagnosis reads it beside the GPU failure (classify.cc,
// cause_from_device_pool). Formats:
//
//   RAPIDS Accelerator for Spark (GpuDeviceManager, DeviceMemoryEventHandler;
//   "MB" is MiB there: the figure is bytes / 1024 / 1024):
//     INFO GpuDeviceManager: Initializing RMM ARENA pool size = 37888.0 MiB on gpuId 0     (ARENA, ASYNC, POOL;
//     INFO GpuDeviceManager: Initializing RMM ASYNC pool size = 17840.349609375 MB on gpuId 0   MiB or MB)
//     INFO GpuDeviceManager: Initializing RMM  initial size = 15360.0 MB, max size = 0.0 MB on gpuId 0   (older: the
//                                                                                  max when set, else the initial size)
//     INFO DeviceMemoryEventHandler: Device allocation of 398458880 bytes failed, device store has 0 bytes.
//          Total RMM allocated is 11274289152 bytes.
//     WARN DeviceMemoryEventHandler: Device store exhausted, unable to allocate 398458880 bytes.
//          Total RMM allocated is 11274289152 bytes.
//     INFO DeviceMemoryEventHandler: Device allocation of 2147483648 bytes failed, device store has 1309622784
//          total and 0 spillable bytes. Attempt 0. Total RMM allocated is 39401371648 bytes.
//   A CUDA stream-ordered pool's attributes as a program prints them
//   (cudaMemPoolGetAttribute; RMM's cuda_async_memory_resource):
//     cudaMemPoolAttrReservedMemCurrent : 84,532,690,944
//     cudaMemPoolAttrUsedMemCurrent     : 52,917,422,080
//
// One memory_usage fact per reading (detail "device pool (...)", total = the
// pool's size or what it has reserved, allocated = in use, requested = the
// failed request when the line gives it). Figures only, never a failure:
// the failure is the allocator's exception, read by its own family.
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Initializing RMM", kContext},
    {"Total RMM allocated is", kContext},
    {"cudaMemPoolAttrReservedMemCurrent", kContext},
    {"cudaMemPoolAttrUsedMemCurrent", kContext},
};

// "37888.0 MiB", "17840.349609375 MB": RAPIDS prints MiB under either name.
std::optional<uint64_t> rapids_mib(std::string_view s) {
  std::string_view rest;
  auto v = text::parse_double(text::trim_left(s), &rest);
  rest = text::trim_left(rest);
  if (!v || *v < 0 || *v > 1e9 || !(text::starts_with(rest, "MiB") || text::starts_with(rest, "MB"))) return std::nullopt;
  return static_cast<uint64_t>(*v * static_cast<double>(units::MiB));
}

// "52,917,422,080" or "52917422080" after a colon or an equals sign: bytes.
std::optional<uint64_t> attr_bytes(std::string_view s) {
  s = text::trim_left(s);
  while (!s.empty() && (s[0] == ':' || s[0] == '=' || s[0] == ' ' || s[0] == '\t')) s.remove_prefix(1);
  std::string digits;
  for (char c : s) {
    if (platform::is_digit(c)) digits += c;
    else if (c != ',') break;
    if (digits.size() > 19) return std::nullopt;
  }
  return digits.empty() ? std::nullopt : text::parse_u64(digits);
}

class DevicePools final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto init = text::after(s, "Initializing RMM")) {
      std::optional<uint64_t> size;
      if (auto p = text::after(*init, "pool size =")) size = rapids_mib(*p);
      if (auto m = text::after(*init, "max size =")) {
        auto mx = rapids_mib(*m);
        if (mx && *mx > 0) size = mx;
      }
      if (!size)
        if (auto i = text::after(*init, "initial size =")) size = rapids_mib(*i);
      if (size && *size > 0) {
        pool_ = size;
        kind_ = "RMM";
        for (std::string_view k : {"ARENA", "ASYNC", "POOL"})
          if (text::contains(*init, k)) kind_ = "RMM " + std::string(k);
      }
      return;
    }
    if (auto m = text::after(s, "Total RMM allocated is")) {
      auto allocated = text::parse_u64(text::trim_left(*m));
      auto req = text::after(s, "Device allocation of ");
      if (!req) req = text::after(s, "unable to allocate ");
      auto requested = req ? text::parse_u64(*req) : std::nullopt;
      if (!pool_ || !allocated) return;
      Fact f = make_fact(line, FactKind::memory_usage, Family::cuda);
      f.detail = std::string(kDevicePoolDetail) + kind_ + ")";
      f.total = pool_, f.allocated = allocated, f.requested = requested;
      out.add(std::move(f));
      return;
    }
    if (auto r = text::after(s, "cudaMemPoolAttrReservedMemCurrent")) {
      reserved_ = attr_bytes(*r);
      attr_at_ = make_fact(line, FactKind::memory_usage, Family::cuda);
    } else if (auto u = text::after(s, "cudaMemPoolAttrUsedMemCurrent")) {
      used_ = attr_bytes(*u);
      if (!attr_at_) attr_at_ = make_fact(line, FactKind::memory_usage, Family::cuda);
    }
    if (reserved_ && used_ && attr_at_) {
      attr_at_->detail = std::string(kDevicePoolDetail) + "CUDA stream-ordered pool)";
      attr_at_->total = reserved_, attr_at_->allocated = used_;
      out.add(std::move(*attr_at_));
      attr_at_.reset(), reserved_.reset(), used_.reset();
    }
  }

 private:
  std::optional<uint64_t> pool_, reserved_, used_;
  std::optional<Fact> attr_at_;
  std::string kind_;
};

}  // namespace

const RecognizerEntry kDevicePoolsEntry{"device_pools", Family::cuda, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new DevicePools); }};

}  // namespace aimem
