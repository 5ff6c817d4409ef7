// See nvml_types.h: loading NVML and reading its devices, shared by
// diagnose's one-shot scan (nvml.cc) and the sampler's session (gpu.cc).
//
// Per-process lists: nvmlDeviceGetComputeRunningProcesses_v3 / _v2 fill
// nvmlProcessInfo_v2_t {pid, usedGpuMemory, gpuInstanceId, computeInstanceId};
// the unversioned v1 fills {pid, usedGpuMemory}. NVML_ERROR_INSUFFICIENT_SIZE
// returns the count needed; the list can grow between calls, so at most 3
// tries, 4096 entries.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <fmt/format.h>

#include "sources/nvml_types.h"

namespace aimem::nvml {
namespace {

template <typename F>
void sym(void* h, F& f, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* p = dlsym(h, n)) {
      f = reinterpret_cast<F>(p);
      return;
    }
}

constexpr unsigned kMaxDevices = 64, kMaxProcs = 4096;

// Calls a process-list function with the bounded INSUFFICIENT_SIZE retry.
template <typename P, typename Fn>
nvmlReturn_t list(Fn fn, nvmlDevice_t dev, unsigned gpu, std::vector<ProcessReading>& out) {
  std::vector<P> buf(32);
  nvmlReturn_t r = kInsufficientSize;
  for (int attempt = 0; attempt < 3 && r == kInsufficientSize; ++attempt) {
    unsigned cnt = static_cast<unsigned>(buf.size());
    r = fn(dev, &cnt, buf.data());
    if (r == kSuccess) {
      for (unsigned k = 0; k < cnt && k < buf.size(); ++k) out.push_back({gpu, buf[k].pid, buf[k].usedGpuMemory});
    } else if (r == kInsufficientSize) {
      if (cnt > kMaxProcs) return r;
      buf.resize(std::max<size_t>(cnt + 8, buf.size()));  // + 8: the list may grow before the next call
    }
  }
  return r;
}

}  // namespace

Reading read_devices(const Api& api, int& procs_version) {
  Reading out;
  if (api.count(&out.count) != kSuccess) out.count = 0;
  for (unsigned i = 0; i < out.count && i < kMaxDevices; ++i) {
    nvmlDevice_t dev = nullptr;
    if (api.by_index(i, &dev) != kSuccess) continue;
    DeviceReading& d = out.devices.emplace_back();
    d.index = i;
    char buf[96] = {0};
    if (api.name && api.name(dev, buf, sizeof buf - 1) == kSuccess) d.name = buf;
    char ubuf[96] = {0};
    if (api.uuid && api.uuid(dev, ubuf, sizeof ubuf - 1) == kSuccess) d.uuid = ubuf;
    d.memory_result = api.memory(dev, &d.memory);
    // Newest first; a version the driver lacks is not tried again.
    nvmlReturn_t r = kFunctionNotFound;
    if (procs_version == 3) {
      if (api.procs_v3) r = list<ProcV2>(api.procs_v3, dev, i, out.processes);
      if (r == kFunctionNotFound) procs_version = 2;
    }
    if (procs_version == 2) {
      if (api.procs_v2) r = list<ProcV2>(api.procs_v2, dev, i, out.processes);
      if (r == kFunctionNotFound) procs_version = 1;
    }
    if (procs_version == 1 && api.procs_v1) list<ProcV1>(api.procs_v1, dev, i, out.processes);
  }
  return out;
}

Result<bool> open_api(Api& api) {
  const char* env = std::getenv("AIMEM_NVML_LIBRARY");
  for (const char* lib : {env, "libnvidia-ml.so.1", "libnvidia-ml.so"}) {
    if (!lib || !*lib) continue;
    api.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (api.handle || env) break;
  }
  if (!api.handle) {
    if (env) return make_error(fmt::format("AIMEM_NVML_LIBRARY={} could not be loaded: {}", env, dlerror()));
    return false;
  }
  sym(api.handle, api.init, {"nvmlInit_v2", "nvmlInit"});
  sym(api.handle, api.shutdown, {"nvmlShutdown"});
  sym(api.handle, api.count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  sym(api.handle, api.by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  sym(api.handle, api.name, {"nvmlDeviceGetName"});
  sym(api.handle, api.uuid, {"nvmlDeviceGetUUID"});
  sym(api.handle, api.memory, {"nvmlDeviceGetMemoryInfo"});
  sym(api.handle, api.procs_v3, {"nvmlDeviceGetComputeRunningProcesses_v3"});
  sym(api.handle, api.procs_v2, {"nvmlDeviceGetComputeRunningProcesses_v2"});
  sym(api.handle, api.procs_v1, {"nvmlDeviceGetComputeRunningProcesses"});
  sym(api.handle, api.error, {"nvmlErrorString"});
  return true;
}

}  // namespace aimem::nvml
