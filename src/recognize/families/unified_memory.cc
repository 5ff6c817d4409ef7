// Devices whose GPU has no memory of its own: Jetson (Tegra, Orin, L4T /
// JetPack), NVIDIA GB10 (DGX Spark). Their "CUDA out of memory" is the host's
// RAM running out, shared with every process on the board, so the pool that
// failed is host RAM (nvtop#466: NVML reports no framebuffer there).
//
//   -- L4T_VERSION=36.3.0  JETPACK_VERSION=6.0  CUDA_VERSION=12.4
//   Model: NVIDIA Jetson AGX Orin Developer Kit      Device 0: Orin, compute capability 8.7
//   GPU 0: NVIDIA GB10 (UUID: GPU-...)               DGX Spark
//
// One platform fact per input (detail "unified_memory"), context only.
#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless | kContext;

constexpr Pattern kPatterns[] = {
    {"\\b(jetson|tegra|l4t_version|jetpack|gb10|dgx spark)\\b", kCi},
    {"device 0: orin|nvidia orin|orin nano|agx orin", kCi},
};

class UnifiedMemory final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (seen_) return;
    seen_ = true;
    Fact f = make_fact(line, FactKind::platform, Family::nvidia);
    f.detail = "unified_memory";
    out.add(std::move(f));
  }

 private:
  bool seen_ = false;
};

}  // namespace

const RecognizerEntry kUnifiedMemoryEntry{
    "unified_memory", Family::nvidia, kPatterns, [] { return std::unique_ptr<Recognizer>(new UnifiedMemory); }};

}  // namespace aimem
