// The NVML binding: the few NVML types aimem uses, declared here (as nvtop
// does) so that there is no build dependency on nvml.h, the loading of the
// library and the reading of every device (nvml_api.cc). Used by the one-shot
// scan of `aimem diagnose` (nvml.cc) and the sampler's session (gpu.cc).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

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
// resolves the functions. True when a library loaded; false when NVML is
// simply absent (normal on hosts without an NVIDIA driver); an error when
// AIMEM_NVML_LIBRARY named a library that could not be loaded.
Result<bool> open_api(Api& api);

inline constexpr nvmlReturn_t kSuccess = 0, kNotSupported = 3, kInsufficientSize = 7, kFunctionNotFound = 13;
inline constexpr unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

struct DeviceReading {
  unsigned index = 0;
  std::string name, uuid;
  nvmlReturn_t memory_result = kSuccess;  // of nvmlDeviceGetMemoryInfo
  nvmlMemory_t memory{};
};
struct ProcessReading {
  unsigned gpu = 0;
  unsigned pid = 0;
  unsigned long long used = 0;  // kNotAvailable under MIG and WDDM
};
struct Reading {
  unsigned count = 0;  // devices the driver reports (at most 64 are read)
  std::vector<DeviceReading> devices;  // those whose handle could be had
  std::vector<ProcessReading> processes;
};
// Every device of an initialised API, with its compute processes. The
// process-list functions are tried newest first (_v3, _v2, v1, their struct
// layouts differ across drivers: nvitop#75); `procs_version` (start at 3)
// remembers the newest that the driver has, across calls.
Reading read_devices(const Api& api, int& procs_version);

}  // namespace aimem::nvml
