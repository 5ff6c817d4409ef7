// GPU failures that are not allocator reports, and the look-alikes that a
// client mistakes for memory exhaustion.
//
// CUDA runtime / driver:
//   RuntimeError: CUDA error: an illegal memory access was encountered      (not memory: a bad access)
//   CUDA error: misaligned address / unspecified launch failure / device-side assert triggered /
//       an illegal instruction was encountered                              (not memory)
//   CUDA error: out of memory / cudaErrorMemoryAllocation /
//   numba ... cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY                (gpu_oom)
//   (TF's "failed to allocate 3.39G (3643801600 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY" is its
//    pool sizing retry at start-up and "... on host:" is pinned memory: neither is a failure by itself)
// NCCL:
//   [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, ...)
//   torch.distributed.DistBackendError: NCCL error in: ..., unhandled system error (run with NCCL_DEBUG=INFO
//       for details), NCCL version 2.18.1 / ncclSystemError / ncclInternalError / ncclRemoteError
//   ... NCCL WARN Cuda failure 'out of memory' / NCCL WARN Failed to CUDA calloc 8 bytes   (gpu_oom: the
//       NCCL error is a failed allocation, and says so within a few lines)
// NVIDIA driver (kernel log):
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
//   (Xid 45 is the driver's clean-up after a process ended, 63/64/92 are ECC bookkeeping: no failure)
// nvidia-smi / NVML:
//   Unable to determine the device handle for GPU0000:03:00.0: Unknown Error / ...: GPU is lost.
//   Failed to initialize NVML: Driver/library version mismatch
// PCIe AER: "pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, ..." is a failure when uncorrected,
//   and a corrected one only beside other GPU trouble in the same input.
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"illegal memory access was encountered"},
    {"misaligned address", kCompanion},
    {"unspecified launch failure", kCompanion},
    {"device-side assert triggered", kCompanion},
    {"illegal instruction was encountered"},
    {"CUDA error: out of memory"},
    {"CUDA_ERROR_OUT_OF_MEMORY", kCompanion},
    {"cudaErrorMemoryAllocation"},
    {"Watchdog caught collective operation timeout", kCompanion},
    {"NCCL error"},
    {"NCCL timeout"},
    {"ncclSystemError"},
    {"ncclInternalError"},
    {"ncclUnhandledCudaError"},
    {"ncclRemoteError"},
    {"Cuda failure 'out of memory'"},
    {"Failed to CUDA calloc"},
    {"NVRM: Xid"},
    {"Unable to determine the device handle"},
    {"GPU is lost", kCompanion},
    {"Driver/library version mismatch", kCompanion},
    {"PCIe Bus Error", kCompanion},
};

constexpr uint64_t kRepeatWindow = 300;
constexpr uint64_t kNcclWindow = 12;  // lines in which an NCCL error says what failed

std::string xid_words(uint64_t xid) {
  switch (xid) {
    case 13: return "a GPU graphics engine exception";
    case 31: return "a GPU memory page fault: an illegal memory access";
    case 32: return "a corrupted push buffer stream";
    case 43: return "a GPU program fault (the GPU stopped processing)";
    case 48: return "a double-bit ECC error";
    case 61:
    case 62: return "an internal GPU micro-controller error";
    case 68: return "a video processor exception";
    case 74: return "an NVLink error";
    case 79: return "GPU fell off the bus";
    case 94: return "a contained ECC error";
    case 95: return "an uncontained ECC error";
    case 109: return "a context switch timeout";
    case 119:
    case 120: return "a GSP firmware error or timeout";
    default: return "a GPU error reported by the driver";
  }
}

class GpuErrors final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_nccl_ && line.number > nccl_line_ + kNcclWindow) flush_nccl(out);

    if (oom_line(line, s, out)) return;
    if (nccl_line(line, s, out)) return;
    if (auto p = s.find("NVRM: Xid"); p != std::string_view::npos) return xid(line, s, p, out);
    if (text::contains(s, "Unable to determine the device handle") || text::contains(s, "GPU is lost")) {
      std::string what = "GPU lost (the driver cannot reach the device)";
      if (auto v = text::after(s, "device handle for ")) {
        std::string_view id = v->substr(0, v->find(": "));
        if (!id.empty() && id.size() < 40) what = "GPU lost (nvidia-smi cannot reach " + std::string(id) + ")";
      }
      return look_alike(line, what, 0.8f, out, "gpu-lost");
    }
    if (text::contains(s, "Driver/library version mismatch"))
      return look_alike(line, "an NVIDIA driver/library version mismatch (NVML cannot start)", 0.7f, out, "nvml");
    if (text::contains(s, "PCIe Bus Error")) {
      if (text::contains(s, "severity=Uncorrected")) return look_alike(line, "a PCIe bus error (uncorrected)", 0.7f, out, "aer");
      if (gpu_trouble_) return look_alike(line, "a PCIe bus error beside a lost GPU", 0.6f, out, "aer");
      return;
    }
    cuda_fault(line, s, out);
  }

  void finish(FactSink& out) override { flush_nccl(out); }

 private:
  bool gpu_trouble_ = false;
  bool pending_nccl_ = false;
  uint64_t nccl_line_ = 0;
  Fact nccl_fact_;

  RepeatFilter repeats_{kRepeatWindow};
  bool repeated(std::string_view key, const Line& line) { return repeats_.repeated(key, line.number); }

  void look_alike(const Line& line, std::string detail, float strength, FactSink& out, std::string_view key) {
    gpu_trouble_ = true;
    if (repeated(key, line)) return;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::nvidia);
    f.layer = Layer::not_memory;
    f.cause = Cause::not_memory;
    f.strength = strength;
    f.detail = std::move(detail);
    out.add(std::move(f));
  }

  void flush_nccl(FactSink& out) {
    if (pending_nccl_) out.add(std::move(nccl_fact_));
    pending_nccl_ = false;
    nccl_fact_ = Fact{};
  }

  bool oom_line(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("CUDA error: out of memory");
    Family family = Family::cuda;
    if (p == std::string_view::npos) p = s.find("cudaErrorMemoryAllocation");
    if (p == std::string_view::npos) {
      p = s.find("CUDA_ERROR_OUT_OF_MEMORY");
      if (p != std::string_view::npos && (text::contains(s, "from device:") || text::contains(s, "on host:"))) return true;
    }
    if (p == std::string_view::npos) {
      p = s.find("Cuda failure 'out of memory'");
      if (p == std::string_view::npos) p = s.find("Failed to CUDA calloc");
      if (p != std::string_view::npos) family = Family::nccl;
    }
    if (p == std::string_view::npos) return false;
    if (guards::is_mention(s, p, 20)) return true;
    if (text::contains(s, "process has terminated")) return true;  // Ollama's wrapper: the llama.cpp recognizer's
    if (pending_nccl_) {  // the NCCL error was this allocation failing
      pending_nccl_ = false;
      nccl_fact_ = Fact{};
      family = Family::nccl;
    }
    if (repeated("oom", line)) return true;
    Fact f = make_fact(line, FactKind::gpu_oom, family);
    f.layer = Layer::gpu_vram;
    f.strength = 0.85f;
    f.detail = family == Family::nccl ? "NCCL buffer allocation" : "CUDA runtime";
    // "(3643801600 bytes)" or "calloc 8 bytes"
    if (auto v = text::after(s, "calloc ")) f.requested = units::parse_log_size(*v);
    for (size_t open = s.find('('); open != std::string_view::npos && !f.requested; open = s.find('(', open + 1)) {
      std::string_view rest;
      if (auto n = text::parse_u64(s.substr(open + 1), &rest); n && text::starts_with(rest, " bytes)")) f.requested = n;
    }
    out.add(std::move(f));
    return true;
  }

  bool nccl_line(const Line& line, std::string_view s, FactSink& out) {
    std::string detail;
    if (text::contains(s, "Watchdog caught collective operation timeout") || text::contains(s, "NCCL timeout")) {
      detail = "an NCCL collective timeout";
    } else if (text::contains(s, "ncclSystemError") || text::contains(s, "unhandled system error")) {
      detail = "an NCCL system error (network or shared memory)";
    } else if (text::contains(s, "ncclUnhandledCudaError") || text::contains(s, "unhandled cuda error")) {
      detail = "an NCCL error from a CUDA call";
    } else if (text::contains(s, "ncclInternalError") || text::contains(s, "ncclRemoteError") || text::contains(s, "NCCL error")) {
      detail = "an NCCL error";
    } else {
      return false;
    }
    if (guards::is_advice_line(s)) return true;
    if (text::contains(s, "out of memory")) {  // "NCCL error ... Cuda failure 'out of memory'" on one line
      Fact f = make_fact(line, FactKind::gpu_oom, Family::nccl);
      f.layer = Layer::gpu_vram;
      f.strength = 0.85f;
      f.detail = "NCCL buffer allocation";
      if (!repeated("oom", line)) out.add(std::move(f));
      return true;
    }
    if (pending_nccl_) return true;
    if (repeated(detail, line)) return true;
    // Hold it: an NCCL error that is really a failed allocation says so in the next lines.
    nccl_fact_ = make_fact(line, FactKind::not_memory_failure, Family::nccl);
    nccl_fact_.layer = Layer::not_memory;
    nccl_fact_.cause = Cause::not_memory;
    nccl_fact_.strength = 0.8f;
    nccl_fact_.detail = detail;
    pending_nccl_ = true;
    nccl_line_ = line.number;
    return true;
  }

  void xid(const Line& line, std::string_view s, size_t p, FactSink& out) {
    // "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus."
    std::string_view rest = s.substr(p + 9);
    size_t colon = rest.find("): ");
    if (colon == std::string_view::npos) return;
    auto n = text::parse_u64(rest.substr(colon + 3));
    if (!n) return;
    if (*n == 45 || *n == 63 || *n == 64 || *n == 92) return;  // clean-up after a process ended / ECC bookkeeping
    std::string detail = "NVIDIA Xid " + std::to_string(*n) + " (" + xid_words(*n) + ")";
    look_alike(line, detail, *n == 79 ? 0.85f : 0.7f, out, "xid" + std::to_string(*n));
  }

  void cuda_fault(const Line& line, std::string_view s, FactSink& out) {
    struct Fault {
      std::string_view phrase, detail;
      bool needs_cuda;
    };
    static constexpr Fault kFaults[] = {
        {"illegal memory access was encountered", "a CUDA illegal memory access", false},
        {"misaligned address", "a CUDA misaligned address", true},
        {"unspecified launch failure", "a CUDA unspecified launch failure", true},
        {"device-side assert triggered", "a CUDA device-side assert", false},
        {"illegal instruction was encountered", "a CUDA illegal instruction", false},
    };
    for (const Fault& f : kFaults) {
      size_t p = s.find(f.phrase);
      if (p == std::string_view::npos) continue;
      if (f.needs_cuda && !text::icontains(s, "cuda")) return;
      if (guards::is_mention(s, p, f.phrase.size())) return;
      gpu_trouble_ = true;
      if (repeated(f.phrase, line)) return;
      Fact fact = make_fact(line, FactKind::not_memory_failure, Family::cuda);
      fact.layer = Layer::not_memory;
      fact.cause = Cause::not_memory;
      fact.strength = 0.8f;
      fact.detail = std::string(f.detail);
      out.add(std::move(fact));
      return;
    }
  }
};

}  // namespace

const RecognizerEntry kGpuErrorsEntry{
    "gpu_errors", Family::cuda, kPatterns, [] { return std::unique_ptr<Recognizer>(new GpuErrors); }};

}  // namespace aimem
