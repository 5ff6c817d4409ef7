// GPU-sharing layers that enforce a per-container device memory slice by
// intercepting CUDA (HAMi-core's libvgpu.so, the Kubernetes vGPU device
// plugin behind nvidia.com/gpumem), as their allocator prints a refusal:
//
//   [HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 4219469824 / 4194304000
//
// The figures are what the container would hold with the request and its
// slice, in bytes. The card may have room: the slice ran out, a cap on the
// device's memory like PyTorch's per-process fraction, so a gpu_oom with the
// slice as its limit. What filled the slice is read as for any GPU failure
// (the phase: a load, a KV cache sized from the whole card, a batch): on
// the blind batches writers named that phase far more often than the slice
// itself (limit_too_low 2 of 8 such reports, 2026-12-07).
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"\\[HAMI-core ERROR [^]]*\\]: Device [0-9]+ OOM [0-9]+ / [0-9]+", kRegex},
};

class Vgpu final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    auto v = text::after(s, "]: Device ");
    if (!v || !text::contains(s, "HAMI-core ERROR")) return;
    std::string_view rest;
    auto dev = text::parse_u64(*v, &rest);
    if (!dev || !text::starts_with(rest, " OOM ")) return;
    auto would = text::parse_u64(rest.substr(5), &rest);
    if (!would || !text::starts_with(rest, " / ")) return;
    auto slice = text::parse_u64(rest.substr(3));
    if (!slice || *slice == 0 || said_) return;
    said_ = true;
    Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
    f.layer = Layer::gpu_vram;
    f.strength = 0.9f;
    f.gpu = static_cast<int>(*dev);
    f.limit = slice;
    f.usage = would;
    f.detail = fmt::format("HAMi vGPU memory slice ({}) of device {} exhausted", units::format_bytes(*slice), *dev);
    out.add(std::move(f));
  }

 private:
  bool said_ = false;
};

}  // namespace

const RecognizerEntry kVgpuEntry{"vgpu", Family::cuda, kPatterns, [] { return std::unique_ptr<Recognizer>(new Vgpu); }};

}  // namespace aimem
