// GPU failures that are not allocator reports, and the look-alikes that a
// client mistakes for memory exhaustion.
//
// CUDA runtime / driver:
//   RuntimeError: CUDA error: an illegal memory access was encountered      (not memory: a bad access)
//   CUDA error: misaligned address / unspecified launch failure / device-side assert triggered /
//       an illegal instruction was encountered                              (not memory)
//   CUDA error: uncorrectable ECC error encountered / CUDA driver version is insufficient for CUDA runtime
//       version / no CUDA-capable device is detected / no kernel image is available for execution on the
//       device / all CUDA-capable devices are busy or unavailable / invalid device ordinal / the launch timed
//       out and was terminated; Found no NVIDIA driver on your system; The NVIDIA driver on your system is
//       too old (found version 12040); too many resources requested for launch
//                                                                           (not memory: each names what failed)
//   ROCm's "Memory access fault by GPU node-1 (...) on address 0x... Reason: Page not present" (not memory: a bad access)
//   ROCm error: invalid device function (no kernel for this gfx target) / Native API returns: 20
//       (UR_RESULT_ERROR_DEVICE_LOST), ZE_RESULT_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST   (not memory)
//   cuda runtime error (30) : unknown error at .../THCStorage.c:113   (Torch7, PyTorch < 0.4: not memory unless (2))
//   CUDA error: out of memory / HIP error: out of memory / cudaErrorMemoryAllocation / hipErrorOutOfMemory /
//   numba ... cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY                (gpu_oom)
//   ggml (llama.cpp, Ollama) follows its CUDA error with the device and the function:
//       CUDA error: out of memory
//         current device: 0, in function ggml_cuda_pool_malloc_vmm at .../ggml-cuda.cu:8583
//         cuMemCreate(&handle, reserve_size, &prop, 0)
//       GGML_ASSERT: .../ggml-cuda.cu:256: !"CUDA error"
//     so the failure is held one line for it: the device index and what the allocation was for.
//   (TF's "failed to allocate 3.39G (3643801600 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY" is its
//    pool sizing retry at start-up and "... on host:" is pinned memory: neither is a failure by itself)
// cuDNN / cuBLAS status codes (the libraries allocate a workspace and a handle on the device):
//   CUDNN_STATUS_ALLOC_FAILED                                               (gpu_oom, the library's allocation;
//       CUBLAS_STATUS_ALLOC_FAILED is read by pytorch.cc)
//   CUDNN failure: CUDNN_STATUS_NOT_INITIALIZED / CUBLAS_STATUS_NOT_INITIALIZED /
//   Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR             (gpu_oom, weaker: creating the handle
//       fails this way when no device memory is left for it, and cuDNN's own guide names that first)
// NCCL:
//   [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, ...)
//   torch.distributed.DistBackendError: NCCL error in: ..., unhandled system error (run with NCCL_DEBUG=INFO
//       for details), NCCL version 2.18.1 / ncclSystemError / ncclInternalError / ncclRemoteError
//   ... NCCL WARN Cuda failure 'out of memory' / NCCL WARN Failed to CUDA calloc 8 bytes   (gpu_oom: the
//       NCCL error is a failed allocation, and says so within a few lines)
// NVIDIA driver (kernel log):
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
//   NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
//   Each Xid number is named (79 fell off the bus; 48/94/95/140 uncorrectable ECC, 63/64 row remapping / page
//   retirement; 13/31/43 application faults; 61/62/119/120 firmware; 74 NVLink; ...), with the pid and name
//   the driver prints. Xid 45 is the driver's clean-up after a process ended and 92 a high rate of corrected
//   single-bit errors: no failure. Xid 63 (a retirement / remapping was recorded) follows the uncorrectable
//   error that caused it and is weaker evidence on its own.
// AMD's driver (kernel log): a ring that stopped answering, then the GPU reset (its VRAM contents lost
//   with it: a consequence of the hang, not a memory failure):
//   [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=48817, emitted seq=48819
//   amdgpu 0000:0b:00.0: amdgpu: GPU reset begin!
// nvidia-smi / NVML:
//   Unable to determine the device handle for GPU0000:03:00.0: Unknown Error / ...: GPU is lost.
//   Failed to initialize NVML: Driver/library version mismatch
//   Failed to initialize NVML: Unknown Error     (inside a container: it lost its GPU devices, as after a
//                                                 host's `systemctl daemon-reload` re-applied the cgroup's
//                                                 device rules; the GPU itself is fine outside it)
// PCIe AER: "pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, ..." is a failure when uncorrected,
//   and a corrected one only beside other GPU trouble in the same input.
#include <cctype>
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
    {"uncorrectable ECC error", kCompanion},
    {"driver version is insufficient"},
    {"no CUDA-capable device is detected", kCompanion},
    {"no kernel image is available for execution", kCompanion},
    {"error: invalid device function", kCompanion},
    {"ERROR_DEVICE_LOST", kCompanion},
    {"busy or unavailable", kCompanion},
    {"invalid device ordinal", kCompanion},
    {"the launch timed out and was terminated", kCompanion},
    {"too many resources requested for launch", kCompanion},
    {"Memory access fault by GPU", kCompanion},
    {"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", kCompanion},
    {"Found no NVIDIA driver on your system", kCompanion},
    {"CUDA error: [a-z]", kRegex | kCompanion | kShared},  // any other runtime message (see cuda_fault); the generic reader still reads an allocation
    {"NVIDIA driver on your system is too old", kCompanion},
    {"fallen off the bus", kCompanion},
    {"cuda runtime error \\([0-9]+\\) : ", kRegex | kCompanion},  // Torch7 / PyTorch < 0.4: the runtime's error number
    {"CUDA error: out of memory", kCaseless},  // Isaac Gym's PhysX plugin: "Gym cuda error: out of memory: .../GymPhysX.cpp: 1721"
    {"HIP error: out of memory"},
    // A CUDA status printed as its number: 2 is the allocation failure
    // (cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY).
    {"cuda error[^0-9\\n]{0,32}[ :=(#]2([^0-9.]|$)", kRegex | kCaseless},
    {"CUDA_ERROR_OUT_OF_MEMORY", kCompanion},
    {"cudaErrorMemoryAllocation"},
    {"_STATUS_ALLOC_FAILED"},
    {"CUFFT_ALLOC_FAILED"},  // cuFFT's status has no "_STATUS_"
    // Faiss's check on a cudaMalloc of its own (its temporary-memory stack,
    // a device vector): "Faiss assertion 'err == cudaSuccess' failed in ...
    // StackDeviceMemory::Stack::getAlloc(...)".
    {"Faiss assertion.*cudaSuccess", kRegex | kCompanion},
    {"ILLEGAL_ADDRESS", kCompanion},  // the driver API's CUDA_ERROR_ILLEGAL_ADDRESS, by its name
    {"_STATUS_NOT_INITIALIZED"},
    {"ould not create cudnn handle"},  // "Could ..." (TF 1.5 and later), "could ..." (TF 1.4 and before)
    {"hipErrorOutOfMemory"},
    {"current device: ", kContext},  // ggml's second line of a CUDA error
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
    {"Failed to initialize NVML: Unknown Error", kCompanion},
    {"PCIe Bus Error", kCompanion},
    {"amdgpu_job_timedout", kCompanion},
    {"GPU reset begin"},
};

constexpr uint64_t kRepeatWindow = 300;
constexpr uint64_t kNcclWindow = 12;  // lines in which an NCCL error says what failed
constexpr uint64_t kDeviceLineGap = 2;  // ggml prints "current device: N" on the next line

// What an Xid number means, in NVIDIA's words (the Xid catalogue of the
// driver documentation), shortened.
std::string xid_words(uint64_t xid) {
  switch (xid) {
    case 8: return "GPU stopped processing (a channel timed out)";
    case 13: return "graphics engine exception (usually an application fault such as an out-of-range access)";
    case 31: return "GPU memory page fault (an application's illegal memory access)";
    case 32: return "invalid or corrupted push buffer stream";
    case 38: return "driver firmware error";
    case 43: return "GPU stopped processing (an application fault ended its context)";
    case 44: return "graphics engine fault during a context switch";
    case 48: return "double-bit ECC error (uncorrectable GPU memory error)";
    case 56: return "display engine error";
    case 57: return "error programming the video memory interface";
    case 61: return "internal micro-controller breakpoint or warning";
    case 62: return "internal micro-controller halt";
    case 63: return "ECC page retirement or row remapping recorded (after an uncorrectable memory error)";
    case 64: return "ECC page retirement or row remapping failed to record (the GPU needs a reset)";
    case 68: return "video processor (NVDEC) exception";
    case 69: return "graphics engine class error";
    case 74: return "NVLink error";
    case 79: return "GPU has fallen off the bus";
    case 94: return "contained uncorrectable ECC error (the affected application must restart)";
    case 95: return "uncontained uncorrectable ECC error (the GPU needs a reset)";
    case 109: return "context switch timeout";
    case 119: return "GSP firmware RPC timeout";
    case 120: return "GSP firmware error";
    case 140: return "unrecovered ECC error";
    case 154: return "GPU recovery action changed (the GPU needs a reset or a reboot)";
    default: return "a GPU error reported by the driver";
  }
}

class GpuErrors final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_nccl_ && line.number > nccl_line_ + kNcclWindow) flush_nccl(out);
    if (pending_oom_) {
      bool follow_up = line.number <= oom_line_ + kDeviceLineGap && text::contains(s, "current device: ");
      if (follow_up) device_line(s, oom_fact_);
      flush_oom(out);
      if (follow_up) return;
    }

    if (oom_line(line, s, out)) return;
    if (numbered_oom(line, s, out)) return;
    if (library_status(line, s, out)) return;
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
    if (text::contains(s, "amdgpu_job_timedout") || text::contains(s, "GPU reset begin")) {
      if (!text::contains(s, "amdgpu")) return;
      return look_alike(line, "an AMD GPU hang: the amdgpu driver timed out a ring and reset the GPU", 0.8f, out, "amdgpu-reset");
    }
    if (text::contains(s, "Failed to initialize NVML: Unknown Error"))
      return look_alike(line, "the GPU lost to the process (NVML cannot initialize: Unknown Error)", 0.7f, out, "nvml-lost");
    if (text::contains(s, "Driver/library version mismatch"))
      return look_alike(line, "an NVIDIA driver/library version mismatch (NVML cannot start)", 0.7f, out, "nvml");
    if (text::contains(s, "PCIe Bus Error")) {
      if (text::contains(s, "severity=Uncorrected")) return look_alike(line, "a PCIe bus error (uncorrected)", 0.7f, out, "aer");
      if (gpu_trouble_) return look_alike(line, "a PCIe bus error beside a lost GPU", 0.6f, out, "aer");
      return;
    }
    if (auto p = s.find("fallen off the bus"); p != std::string_view::npos) {
      // "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus." beside its Xid 79: one failure.
      if (guards::is_mention(s, p, 18) || !text::contains(s, "GPU")) return;
      return look_alike(line, "NVIDIA Xid 79: " + xid_words(79), 0.85f, out, "xid79");
    }
    cuda_fault(line, s, out);
  }

  void finish(FactSink& out) override {
    flush_nccl(out);
    flush_oom(out);
  }

 private:
  bool gpu_trouble_ = false;
  bool pending_oom_ = false;  // a CUDA/HIP OOM waiting one line for ggml's "current device: N, in function F"
  uint64_t oom_line_ = 0;
  Fact oom_fact_;
  bool pending_nccl_ = false;
  uint64_t nccl_line_ = 0;
  Fact nccl_fact_;

  RepeatFilter repeats_{kRepeatWindow};
  bool repeated(std::string_view key, const Line& line) { return repeats_.repeated(key, line.number); }

  void look_alike(const Line& line, std::string detail, float strength, FactSink& out, std::string_view key,
                  std::optional<int64_t> pid = std::nullopt, std::string process = {}) {
    gpu_trouble_ = true;
    if (repeated(key, line)) return;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::nvidia);
    f.layer = Layer::not_memory;
    f.cause = Cause::not_memory;
    f.strength = strength;
    f.detail = std::move(detail);
    f.pid = pid;
    f.process = std::move(process);
    out.add(std::move(f));
  }

  void flush_oom(FactSink& out) {
    if (pending_oom_) out.add(std::move(oom_fact_));
    pending_oom_ = false;
    oom_fact_ = Fact{};
  }

  // "  current device: 0, in function ggml_cuda_pool_malloc_vmm at C:\...\ggml-cuda.cu:8583" (also on the
  // error's own line, when a wrapper printed the message with its newlines escaped).
  static void device_line(std::string_view s, Fact& f) {
    auto v = text::after(s, "current device: ");
    if (!v) return;
    if (auto n = text::parse_u64(*v); n && *n < 1024) f.gpu = static_cast<int>(*n);
    if (!text::contains(s, "ggml")) return;
    f.family = Family::llamacpp;
    std::string_view fn = text::take_until(text::after(*v, "in function ").value_or(""), " \\\"");
    fn = fn.substr(0, 64);
    // ggml's pool and matrix-multiply allocations are the compute buffers of a graph.
    bool compute = text::contains(fn, "pool") || text::contains(fn, "mul_mat") || fn == "alloc" || text::contains(fn, "graph");
    std::string name = text::starts_with(fn, "ggml") ? std::string(fn) : "ggml " + std::string(fn);
    if (fn.empty()) f.detail = "ggml CUDA";
    else f.detail = compute ? "compute buffer (" + name + ")" : name;
  }

  void flush_nccl(FactSink& out) {
    if (pending_nccl_) out.add(std::move(nccl_fact_));
    pending_nccl_ = false;
    nccl_fact_ = Fact{};
  }

  // cuDNN / cuBLAS: an allocation inside the library, or a handle that could
  // not be created (see the top).
  bool library_status(const Line& line, std::string_view s, FactSink& out) {
    if (faiss_alloc(line, s, out)) return true;
    size_t p = s.find("_STATUS_ALLOC_FAILED");
    if (p == std::string_view::npos) p = s.find("CUFFT_ALLOC_FAILED");
    bool alloc = p != std::string_view::npos;
    if (!alloc) p = s.find("_STATUS_NOT_INITIALIZED");
    if (p == std::string_view::npos) p = text::ifind(s, "could not create cudnn handle");
    if (p == std::string_view::npos) return false;
    if (guards::is_advice_line(s) || guards::is_mention(s, p, 20)) return true;
    if (repeated("cudnn", line)) return true;
    bool blas = text::contains(s, "CUBLAS") || text::contains(s, "cublas");
    if (alloc && blas) return false;  // CUBLAS_STATUS_ALLOC_FAILED: the PyTorch recognizer's (pytorch.cc)
    Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
    f.layer = Layer::gpu_vram;
    f.strength = alloc ? 0.85f : 0.6f;
    const std::string lib = blas ? "cuBLAS" : text::contains(s, "CUFFT") ? "cuFFT" : text::contains(s, "CUSOLVER") ? "cuSOLVER"
                            : text::contains(s, "CUSPARSE")                         ? "cuSPARSE"
                                                                                    : "cuDNN";
    f.detail = alloc ? lib + " could not allocate its workspace" : lib + " could not create its handle (no device memory left for it)";
    out.add(std::move(f));
    return true;
  }

  // Faiss's own check on its cudaMalloc failing (see the patterns): a device
  // allocation failed, its size on the warning Faiss prints before it when its
  // temporary memory was too small ("alloc 1280000000 B").
  bool faiss_alloc(const Line& line, std::string_view s, FactSink& out) {
    if (!text::contains(s, "Faiss assertion") || !text::contains(s, "cudaSuccess")) return false;
    if (!text::contains(s, "Alloc") && !text::contains(s, "alloc") && !text::contains(s, "DeviceMemory") && !text::contains(s, "Malloc"))
      return false;
    if (repeated("faiss", line)) return true;
    Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
    f.layer = Layer::gpu_vram;
    f.strength = 0.75f;
    f.detail = "Faiss could not allocate device memory (its cudaMalloc failed)";
    out.add(std::move(f));
    return true;
  }

  // The status as a number: TensorRT's "runtime.cpp (24) - Cuda Error in
  // allocate: 2", older ggml's "CUDA error 2 at ggml-cuda.cu:6951", a
  // wrapper's "CUDA error = 2". Code 2 in the runtime and the driver API is
  // the allocation failure, whether or not the line says so
  // ("CUDA Error 2, out of memory", tinygrad's).
  bool numbered_oom(const Line& line, std::string_view s, FactSink& out) {
    // Torch7's "cuda runtime error (2)" is pytorch.cc's; ggml's "CUDA error 2 at
    // .../ggml-cuda.cu:6120: out of memory" llamacpp.cc's (with the device after it).
    if (text::icontains(s, "runtime error (") || text::contains(s, "ggml")) return false;
    for (size_t at = text::ifind(s, "cuda error"); at != std::string_view::npos; at = text::ifind(s, "cuda error", at + 1)) {
      const size_t p = at + 5;
      size_t d = s.find_first_of("0123456789", p);
      if (d == std::string_view::npos || d > p + 40) continue;
      if (d + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[d + 1])) || s[d + 1] == '.')) continue;
      if (s[d] != '2') continue;
      if (guards::is_mention(s, at, d + 1 - at) || repeated("cuda-2", line)) return true;
      Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
      f.layer = Layer::gpu_vram;
      f.strength = 0.8f;
      f.detail = "CUDA status 2: out of memory (cudaErrorMemoryAllocation)";
      out.add(std::move(f));
      return true;
    }
    return false;
  }

  bool oom_line(const Line& line, std::string_view s, FactSink& out) {
    size_t p = text::ifind(s, "CUDA error: out of memory");
    Family family = Family::cuda;
    bool hip = false;
    if (p == std::string_view::npos) p = s.find("cudaErrorMemoryAllocation");
    if (p == std::string_view::npos) {
      p = s.find("HIP error: out of memory");
      if (p == std::string_view::npos) p = s.find("hipErrorOutOfMemory");
      hip = p != std::string_view::npos;
    }
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
    // ggml's pinned staging buffer ("ggml_cuda_host_malloc: failed to allocate
    // 2.34 MiB of pinned memory: hipErrorOutOfMemory"): a warning, ggml goes
    // on with pageable memory (llamacpp.cc reads it as such).
    if (text::contains(s, "of pinned memory") && text::contains(s, "host_malloc")) return true;
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
    f.detail = family == Family::nccl ? "NCCL buffer allocation" : hip ? "HIP runtime" : "CUDA runtime";
    // "(3643801600 bytes)" or "calloc 8 bytes"
    if (auto v = text::after(s, "calloc ")) f.requested = units::parse_log_size(*v);
    for (size_t open = s.find('('); open != std::string_view::npos && !f.requested; open = s.find('(', open + 1)) {
      std::string_view rest;
      if (auto n = text::parse_u64(s.substr(open + 1), &rest); n && text::starts_with(rest, " bytes)")) f.requested = n;
    }
    if (family == Family::nccl) {
      out.add(std::move(f));
      return true;
    }
    device_line(s, f);
    flush_oom(out);
    oom_fact_ = std::move(f);
    pending_oom_ = true;
    oom_line_ = line.number;
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
    if (*n == 45 || *n == 92) return;  // clean-up after a process ended / corrected single-bit errors
    std::string detail = "NVIDIA Xid " + std::to_string(*n) + ": " + xid_words(*n);
    float strength = *n == 79 ? 0.85f : *n == 63 ? 0.55f : 0.7f;
    // "pid=1234, name=python3," (or pid='<unknown>', name=<unknown>)
    std::optional<int64_t> pid;
    std::string process;
    if (auto v = text::after(rest, "pid=")) {
      if (auto id = text::parse_i64(*v); id && *id > 0) pid = id;
    }
    if (auto v = text::after(rest, "name=")) {
      std::string_view name = text::take_until(*v, ", ");
      if (!name.empty() && name.front() != '<' && name.size() <= 64) process = std::string(name);
    }
    look_alike(line, detail, strength, out, "xid" + std::to_string(*n), pid, std::move(process));
  }

  void cuda_fault(const Line& line, std::string_view s, FactSink& out) {
    // "ggml_cuda_host_malloc: failed to allocate 1034.00 MiB of pinned memory: no CUDA-capable device is
    // detected": a warning (ggml goes on with pageable memory), not the failure.
    if (text::contains(s, "of pinned memory")) return;
    struct Fault {
      std::string_view phrase, detail;
      bool needs_cuda;
    };
    static constexpr Fault kFaults[] = {
        {"illegal memory access was encountered", "a CUDA illegal memory access", false},
        // The driver API's name for it ("CUDA error: ILLEGAL_ADDRESS in cuMemAlloc(...)", Cycles; CUDA_ERROR_ILLEGAL_ADDRESS):
        // a kernel faulted earlier and the context is lost, whichever call reports it.
        {"ILLEGAL_ADDRESS", "a CUDA illegal address (a kernel faulted on a bad address; the context is lost), not an allocation failure",
         true},
        {"misaligned address", "a CUDA misaligned address", true},
        {"unspecified launch failure", "a CUDA unspecified launch failure", true},
        {"device-side assert triggered", "a CUDA device-side assert", false},
        {"illegal instruction was encountered", "a CUDA illegal instruction", false},
        {"uncorrectable ECC error", "an uncorrectable ECC error in GPU memory (a hardware fault)", false},
        {"driver version is insufficient", "a CUDA driver older than the CUDA runtime (driver/runtime version mismatch)", true},
        {"no CUDA-capable device is detected", "no CUDA-capable GPU visible to the process (driver, container runtime or CUDA_VISIBLE_DEVICES)", false},
        {"no kernel image is available for execution", "a CUDA build without kernels for this GPU's architecture", false},
        // ROCm's and CUDA's word for the same: no kernel built for this GPU's target (gfx1103, sm_120).
        {"error: invalid device function", "a GPU build without kernels for this GPU's architecture (invalid device function)", false},
        // Level Zero / SYCL (Intel), Vulkan: the driver reset the device or lost it.
        {"ERROR_DEVICE_LOST", "the GPU was lost or reset by its driver (DEVICE_LOST), not an allocation failure", false},
        {"busy or unavailable", "the GPU is busy or unavailable (exclusive-process mode, or held by another process)", true},
        {"invalid device ordinal", "a GPU index that does not exist (device id or CUDA_VISIBLE_DEVICES)", true},
        {"the launch timed out and was terminated", "a CUDA kernel stopped by the display watchdog (launch timeout)", false},
        // cudaErrorLaunchOutOfResources: a kernel's registers or shared memory per block over what one multiprocessor has.
        {"too many resources requested for launch", "a CUDA kernel launch asking more registers or shared memory per block than the GPU has (a launch limit, not memory)", false},
        // ROCm's illegal access: "Memory access fault by GPU node-1 (Agent handle: ...) on address ...
        // Reason: Page not present or supervisor privilege."
        {"Memory access fault by GPU", "a GPU memory access fault (ROCm: a bad address), not an allocation failure", false},
        // The HSA runtime's own word for it: "aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION:
        // The agent attempted to access memory beyond the largest legal address."
        {"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", "a GPU memory access beyond the legal addresses (ROCm's HSA aperture violation), not an allocation failure", false},
        {"Found no NVIDIA driver on your system", "no NVIDIA driver on the system", false},
        {"NVIDIA driver on your system is too old", "an NVIDIA driver older than the CUDA runtime the program was built with", false},
    };
    // Torch7/cutorch and PyTorch before 0.4 print the runtime's error number:
    // "cuda runtime error (30) : unknown error at .../THCStorage.c:113". Code 2
    // is the allocation failure (pytorch.cc reads it); any other names what
    // failed, and it is not memory.
    if (size_t p = s.find("cuda runtime error ("); p != std::string_view::npos) {
      std::string_view after;
      auto n = text::parse_i64(s.substr(p + 20), &after);
      if (n && *n != 2 && *n > 0 && text::starts_with(after, ") : ") && !guards::is_mention(s, p, 19)) {
        gpu_trouble_ = true;
        if (repeated("cuda runtime error", line)) return;
        std::string_view what = after.substr(4);
        what = what.substr(0, std::min(what.find(" at "), size_t(80)));
        Fact fact = make_fact(line, FactKind::not_memory_failure, Family::cuda);
        fact.layer = Layer::not_memory;
        fact.cause = Cause::not_memory;
        fact.strength = 0.7f;
        fact.detail = "CUDA runtime error " + std::to_string(*n) + " (" + std::string(what) + "), not an allocation failure";
        out.add(std::move(fact));
        return;
      }
    }
    for (const Fault& f : kFaults) {
      size_t p = s.find(f.phrase);
      if (p == std::string_view::npos) continue;
      if (f.needs_cuda && !text::icontains(s, "cuda")) return;
      if (guards::is_mention(s, p, f.phrase.size())) return;
      // A warning the program printed and went on from ("Warning: caught
      // exception 'Found no NVIDIA driver ...', memory monitor disabled";
      // PyTorch's "UserWarning: CUDA initialization: ..."): it runs without
      // the GPU, and what fails later is something else.
      if (text::icontains(s.substr(0, p), "warning") || text::contains(s.substr(0, p), "caught exception")) return;
      gpu_trouble_ = true;
      if (repeated(f.phrase, line)) return;
      Fact fact = make_fact(line, FactKind::not_memory_failure, Family::cuda);
      fact.layer = Layer::not_memory;
      fact.cause = Cause::not_memory;
      // A lost device is a driver's reset, most often a hung or faulting
      // kernel; an Intel GPU asked for more than it holds can end the same
      // way: weaker than the faults that name what failed.
      fact.strength = f.phrase == "ERROR_DEVICE_LOST" ? 0.6f : 0.8f;
      fact.detail = std::string(f.detail);
      out.add(std::move(fact));
      return;
    }
    // Any other CUDA runtime message after "CUDA error: " (cudaGetErrorString's
    // words: "invalid configuration argument", "invalid argument", "operation
    // not supported") names what failed, and it is not the allocation: weaker
    // than the faults above, as the message is not one this reader knows.
    if (size_t p = s.find("CUDA error: "); p != std::string_view::npos && !guards::is_mention(s, p, 12)) {
      std::string_view what = text::trim(s.substr(p + 12));
      // ("unknown error" names nothing: what else the input holds, a driver's Xid, decides.)
      if (what.empty() || !std::islower(static_cast<unsigned char>(what[0])) || text::icontains(what, "memory") ||
          text::icontains(what, "alloc") || text::starts_with(what, "unknown error") || text::icontains(s.substr(0, p), "warning"))
        return;
      gpu_trouble_ = true;
      if (repeated("CUDA error: ", line)) return;
      Fact fact = make_fact(line, FactKind::not_memory_failure, Family::cuda);
      fact.layer = Layer::not_memory;
      fact.cause = Cause::not_memory;
      fact.strength = 0.65f;
      fact.detail = "a CUDA error (" + text::printable(what.substr(0, 80)) + "), not an allocation failure";
      out.add(std::move(fact));
    }
  }
};

}  // namespace

const RecognizerEntry kGpuErrorsEntry{
    "gpu_errors", Family::cuda, kPatterns, [] { return std::unique_ptr<Recognizer>(new GpuErrors); }};

}  // namespace aimem
