// The few NVML types aimem uses, declared here (as nvtop does) so that there
// is no build dependency on nvml.h; shared by the one-shot scan of `aimem
// diagnose` (sources/nvml.cc) and the sampler's session (watch/gpu.cc).
#pragma once

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

}  // namespace aimem::nvml
