// Status codes of the GPU runtimes under SYCL / oneAPI (Intel GPUs through
// PyTorch XPU, IPEX, llama.cpp's SYCL backend) and their OpenCL and Vulkan
// cousins, when they say that an allocation failed:
//   RuntimeError: UR backend failed. UR backend returns:39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
//   RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
//   ... zeMemAllocDevice ... ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
//   Native API failed. Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY) / -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE)
//   VK_ERROR_OUT_OF_DEVICE_MEMORY
// "..._OUT_OF_RESOURCES" (UR, PI, CL; OpenVINO's "[GPU] out of GPU resources"):
// the runtimes return it for kernel launch limits (too much local memory, too
// many work items) as well as for allocations, and the message does not say
// which. It was once not read at all; on the corpus's training split, blind
// writers read it as the device's memory four times in five, so it is read so
// now, weakly (0.5), its detail saying a launch limit reads the same.
//   CL_INVALID_BUFFER_SIZE: one buffer over the device's per-allocation maximum
//   (CL_DEVICE_MAX_MEM_ALLOC_SIZE): the device's, a per-allocation limit.
// PyTorch's own "XPU out of memory. Tried to allocate ..." is the PyTorch
// recognizer's.
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // kCompanion: "_out_of_" as a gate word cost a third of the large-log scan
    // (bench/diagnose_vs_grep.sh); in a log large enough to be gated these
    // codes are read in blocks another gate word made hot.
    {"_OUT_OF_DEVICE_MEMORY", kCompanion},
    {"_OUT_OF_HOST_MEMORY", kCompanion},
    {"MEM_OBJECT_ALLOCATION_FAILURE"},
    {"_OUT_OF_RESOURCES", kCompanion},
    {"out of GPU resources", kCompanion},
    {"CL_INVALID_BUFFER_SIZE", kCompanion},
};

constexpr uint64_t kRepeatWindow = 300;

// The whole status code around `pos` ("UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY").
std::string_view code_at(std::string_view s, size_t pos) {
  auto word = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  size_t b = pos, e = pos;
  while (b > 0 && word(s[b - 1])) --b;
  while (e < s.size() && word(s[e])) ++e;
  return s.substr(b, std::min<size_t>(e - b, 64));
}

class LevelZero final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    size_t p = s.find("_OUT_OF_DEVICE_MEMORY");
    bool host = false;
    if (p == std::string_view::npos) p = s.find("MEM_OBJECT_ALLOCATION_FAILURE");
    if (p == std::string_view::npos) p = s.find("_OUT_OF_HOST_MEMORY"), host = true;
    if (p == std::string_view::npos) return weaker(line, s, out);
    std::string_view code = code_at(s, p);
    if (guards::is_mention(s, p, code.size()) || repeats_.repeated(code, line.number)) return;
    Family family = Family::level_zero;
    if (text::starts_with(code, "VK_")) family = Family::runtime;
    else if (text::starts_with(code, "CUDA_") || text::starts_with(code, "HIP")) return;  // gpu_errors' codes
    Fact f = make_fact(line, host ? FactKind::host_alloc_failure : FactKind::gpu_oom, family);
    f.layer = host ? Layer::host_ram : Layer::gpu_vram;
    f.strength = 0.85f;
    f.detail = std::string(host ? "host memory allocation failed in the GPU runtime (" : "device memory allocation failed (") +
               std::string(code) + ")";
    out.add(std::move(f));
  }

 private:
  // Out of resources, and one buffer over the per-allocation maximum (see the top).
  void weaker(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("_OUT_OF_RESOURCES");
    size_t size = s.find("CL_INVALID_BUFFER_SIZE");
    size_t ov = s.find("out of GPU resources");
    if (p == std::string_view::npos && size == std::string_view::npos && ov == std::string_view::npos) return;
    size_t at = p != std::string_view::npos ? p : size != std::string_view::npos ? size : ov;
    std::string_view code = ov == at ? std::string_view("out of GPU resources") : code_at(s, at);
    if (text::starts_with(code, "CUDA_") || text::starts_with(code, "HIP") || text::contains(code, "LAUNCH")) return;  // a launch's
    if (guards::is_mention(s, at, code.size()) || guards::is_advice_line(s) || repeats_.repeated(code, line.number)) return;
    Fact f = make_fact(line, FactKind::gpu_oom, Family::level_zero);
    f.layer = Layer::gpu_vram;
    if (at == size) {
      f.strength = 0.6f;
      f.detail = "one buffer over the device's per-allocation maximum (CL_INVALID_BUFFER_SIZE)";
    } else {
      f.strength = 0.5f;
      f.detail = "the GPU runtime ran out of resources (" + std::string(code) + "): most often device memory; a kernel launch limit reads the same";
    }
    out.add(std::move(f));
  }

  RepeatFilter repeats_{kRepeatWindow};
};

}  // namespace

const RecognizerEntry kLevelZeroEntry{
    "level_zero", Family::level_zero, kPatterns, [] { return std::unique_ptr<Recognizer>(new LevelZero); }};

}  // namespace aimem
