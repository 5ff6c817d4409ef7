// See nvml_types.h: loading NVML, shared by diagnose's one-shot scan
// (sources/nvml.cc) and the sampler's session (watch/gpu.cc).
#include <dlfcn.h>

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

}  // namespace

bool open_api(Api& api, std::string* problem) {
  const char* env = std::getenv("AIMEM_NVML_LIBRARY");
  for (const char* lib : {env, "libnvidia-ml.so.1", "libnvidia-ml.so"}) {
    if (!lib || !*lib) continue;
    api.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (api.handle || env) break;
  }
  if (!api.handle) {
    if (env) *problem = fmt::format("AIMEM_NVML_LIBRARY={} could not be loaded: {}", env, dlerror());
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
