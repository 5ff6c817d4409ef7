// The few NVML types aimem uses, declared here (as nvtop does) so that there
// is no build dependency on nvml.h; shared by the one-shot scan of `aimem
// diagnose` (sources/nvml.cc) and the sampler's session (watch/gpu.cc).
#pragma once

#include <string>

namespace aimem::nvml {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct ProcV2 {  // nvmlProcessInfo_v2_t (also what the _v3 functions fill)
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct ProcV1 {  // nvmlProcessInfo_t before driver 470
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

using ProcsV2Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, ProcV2*);
using ProcsV1Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, ProcV1*);

// The functions aimem calls, resolved newest version first; any may be null.
struct Api {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  ProcsV2Fn procs_v3 = nullptr, procs_v2 = nullptr;  // both fill ProcV2
  ProcsV1Fn procs_v1 = nullptr;
  const char* (*error)(nvmlReturn_t) = nullptr;
};

// dlopens AIMEM_NVML_LIBRARY, else libnvidia-ml.so.1 / libnvidia-ml.so, and
// resolves the functions. False when no library loaded: `problem` says why
// when AIMEM_NVML_LIBRARY named one, and stays empty when NVML is simply
// absent (normal on hosts without an NVIDIA driver).
bool open_api(Api& api, std::string* problem);

}  // namespace aimem::nvml
