// aimem_cuda_oom: drives a real device out-of-memory through the CUDA driver
// API, for tests/gpu/device_check.sh. No CUDA toolkit is needed to build it:
// the few driver types and entry points it uses are declared below (as in
// cuda.h) and libcuda.so.1, which the NVIDIA driver installs, is dlopen'ed.
//
//   aimem_cuda_oom [--device N] [--chunk-mib N] [--hold SECONDS] [--libcuda PATH] [--probe]
//
// It creates a context on the device and calls cuMemAlloc_v2 in chunks until
// the driver answers CUDA_ERROR_OUT_OF_MEMORY (2), then prints the failure the
// way CUDA's samples print a failed driver call (helper_cuda.h's
// checkCudaErrors: "CUDA error at FILE:LINE code=N(NAME) "CALL"", with the
// driver's own name and string from cuGetErrorName / cuGetErrorString), holds
// the memory for --hold seconds so that a watcher sees it, frees it and exits
// 2. Every line starts with the program and its pid, "aimem_cuda_oom[PID]: ",
// as journald and syslog show a program's output, so that the failure line
// itself names the process.
//
// Filling a GPU disturbs whoever else uses it, so it allocates only when
// AIMEM_GPU_DEVICE_CHECK=1 is set (the test suite never sets it); --probe only
// reports what it finds. Exit status: 0 probe found a device; 2 the OOM was
// driven (the expected end); 77 skip: libcuda cannot be loaded, no device, or
// not asked to fill it; 1 anything else (a driver call failed otherwise, or
// the device never ran out within the cap).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

// From cuda.h (driver API); the ABI has been stable since CUDA 4.0.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUdeviceptr = unsigned long long;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;

struct Driver {
  void* handle = nullptr;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_name)(char*, int, CUdevice) = nullptr;
  CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice) = nullptr;
  CUresult (*ctx_destroy)(CUcontext) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*mem_info)(size_t*, size_t*) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
};

const char* kProgram = "aimem_cuda_oom";
constexpr int kExitOom = 2, kExitSkip = 77, kExitError = 1;

template <class F>
bool sym(void* h, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

std::string name_of(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.error_name && d.error_name(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUDA_ERROR_" + std::to_string(r);
}

std::string string_of(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.error_string && d.error_string(r, &s) == CUDA_SUCCESS && s) return s;
  return "unknown error";
}

double gib(size_t bytes) { return double(bytes) / (1024.0 * 1024.0 * 1024.0); }

// helper_cuda.h's form, with the driver's string appended as cudaGetErrorString would give it.
void report(const Driver& d, int line, CUresult r, const std::string& call) {
  std::printf("%s[%ld]: CUDA error at cuda_oom.cc:%d code=%d(%s) \"%s\": %s\n", kProgram, long(getpid()), line, r, name_of(d, r).c_str(), call.c_str(),
              string_of(d, r).c_str());
}

int usage(const char* why) {
  std::fprintf(stderr,
               "%s: %s\nusage: %s [--device N] [--chunk-mib N] [--hold SECONDS] [--libcuda PATH] [--probe]\n",
               kProgram, why, kProgram);
  return kExitError;
}

bool number(const char* s, long lo, long hi, long* out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long device = 0, chunk_mib = 256, hold_s = 20;
  const char* lib = "libcuda.so.1";
  bool probe = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        usage((a + " needs " + what).c_str());
        std::exit(kExitError);
      }
      return argv[++i];
    };
    if (a == "--device") {
      if (!number(value("an index"), 0, 1023, &device)) return usage("--device: not an index 0..1023");
    } else if (a == "--chunk-mib") {
      if (!number(value("a size"), 1, 65536, &chunk_mib)) return usage("--chunk-mib: not a size 1..65536");
    } else if (a == "--hold") {
      if (!number(value("seconds"), 0, 3600, &hold_s)) return usage("--hold: not 0..3600 seconds");
    } else if (a == "--libcuda") {
      lib = value("a path");
    } else if (a == "--probe") {
      probe = true;
    } else {
      return usage(("unknown argument " + a).c_str());
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const long pid = long(getpid());

  Driver d;
  d.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!d.handle) {
    const char* e = dlerror();
    std::printf("%s[%ld]: SKIP: cannot load %s (%s): no NVIDIA driver here\n", kProgram, pid, lib, e ? e : "?");
    return kExitSkip;
  }
  bool ok = sym(d.handle, d.init, "cuInit") && sym(d.handle, d.device_count, "cuDeviceGetCount") &&
            sym(d.handle, d.device_get, "cuDeviceGet") && sym(d.handle, d.device_name, "cuDeviceGetName") &&
            sym(d.handle, d.ctx_create, "cuCtxCreate_v2") && sym(d.handle, d.ctx_destroy, "cuCtxDestroy_v2") &&
            sym(d.handle, d.mem_alloc, "cuMemAlloc_v2") && sym(d.handle, d.mem_free, "cuMemFree_v2") &&
            sym(d.handle, d.mem_info, "cuMemGetInfo_v2");
  sym(d.handle, d.error_name, "cuGetErrorName");  // CUDA 6.0 on; optional
  sym(d.handle, d.error_string, "cuGetErrorString");
  if (!ok) {
    std::printf("%s[%ld]: %s lacks a driver API entry point (cuInit, cuCtxCreate_v2, cuMemAlloc_v2, ...): %s\n",
                kProgram, pid, lib, dlerror());
    return kExitError;
  }
  CUresult r = d.init(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    std::printf("%s[%ld]: SKIP: cuInit: %s (%s): no CUDA device here\n", kProgram, pid, name_of(d, r).c_str(),
                string_of(d, r).c_str());
    return kExitSkip;
  }
  if (r != CUDA_SUCCESS) {
    report(d, __LINE__, r, "cuInit(0)");
    return kExitError;
  }
  int count = 0;
  if ((r = d.device_count(&count)) != CUDA_SUCCESS) {
    report(d, __LINE__, r, "cuDeviceGetCount(&count)");
    return kExitError;
  }
  if (count == 0 || device >= count) {
    std::printf("%s[%ld]: SKIP: %d CUDA device(s); device %ld does not exist\n", kProgram, pid, count, device);
    return kExitSkip;
  }
  CUdevice dev = 0;
  if ((r = d.device_get(&dev, int(device))) != CUDA_SUCCESS) {
    report(d, __LINE__, r, "cuDeviceGet(&dev, " + std::to_string(device) + ")");
    return kExitError;
  }
  char name[256] = {};
  if (d.device_name(name, sizeof name - 1, dev) != CUDA_SUCCESS) std::strcpy(name, "?");
  std::printf("%s[%ld]: %d CUDA device(s); device %ld is %s (%s)\n", kProgram, pid, count, device, name, lib);
  if (probe) return 0;
  const char* asked = std::getenv("AIMEM_GPU_DEVICE_CHECK");
  if (!asked || std::strcmp(asked, "1") != 0) {
    std::printf("%s[%ld]: SKIP: not filling GPU %ld: set AIMEM_GPU_DEVICE_CHECK=1 to let it fill the GPU\n",
                kProgram, pid, device);
    return kExitSkip;
  }

  CUcontext ctx = nullptr;
  if ((r = d.ctx_create(&ctx, 0, dev)) != CUDA_SUCCESS) {
    report(d, __LINE__, r, "cuCtxCreate_v2(&ctx, 0, dev)");
    return kExitError;
  }
  size_t free_b = 0, total_b = 0;
  if (d.mem_info(&free_b, &total_b) == CUDA_SUCCESS)
    std::printf("%s[%ld]: GPU %ld: %zu bytes free of %zu before allocating\n", kProgram, pid, device, free_b,
                total_b);
  // Chunks until the driver refuses one; the cap (twice the device, or 16 TiB
  // when the driver gave no total) stops a driver that never says no.
  const size_t chunk = size_t(chunk_mib) << 20;
  const size_t cap = total_b ? 2 * total_b : size_t(16) << 40;
  std::vector<CUdeviceptr> held;
  size_t bytes = 0;
  int failed_line = 0;
  for (;;) {
    CUdeviceptr p = 0;
    failed_line = __LINE__ + 1;
    r = d.mem_alloc(&p, chunk);
    if (r != CUDA_SUCCESS) break;
    held.push_back(p);
    bytes += chunk;
    if (bytes >= cap) break;
  }
  int status = kExitOom;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    report(d, failed_line, r, "cuMemAlloc_v2(&ptr, " + std::to_string(chunk) + ")");
    std::printf("%s[%ld]: GPU %ld out of memory after %zu allocations of %ld MiB: holding %zu bytes (%.2f GiB)\n",
                kProgram, pid, device, held.size(), chunk_mib, bytes, gib(bytes));
  } else if (r != CUDA_SUCCESS) {
    report(d, failed_line, r, "cuMemAlloc_v2(&ptr, " + std::to_string(chunk) + ")");
    std::printf("%s[%ld]: GPU %ld: cuMemAlloc_v2 failed with %s, not out of memory, holding %zu bytes\n", kProgram,
                pid, device, name_of(d, r).c_str(), bytes);
    status = kExitError;
  } else {
    std::printf("%s[%ld]: GPU %ld never ran out: %zu bytes allocated, past the cap of %zu\n", kProgram, pid,
                device, bytes, cap);
    status = kExitError;
  }
  if (d.mem_info(&free_b, &total_b) == CUDA_SUCCESS)
    std::printf("%s[%ld]: GPU %ld: %zu bytes free of %zu while holding\n", kProgram, pid, device, free_b, total_b);
  std::printf("%s[%ld]: holding for %ld s\n", kProgram, pid, hold_s);
  for (long left = hold_s; left > 0;) {  // sleep restarts after a signal that did not end us
    struct timespec ts = {1, 0};
    nanosleep(&ts, nullptr);
    --left;
  }
  for (CUdeviceptr p : held) d.mem_free(p);
  d.ctx_destroy(ctx);
  std::printf("%s[%ld]: freed %zu bytes; exit %d\n", kProgram, pid, bytes, status);
  return status;
}
