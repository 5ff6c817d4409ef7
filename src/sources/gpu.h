// The sampler's NVML session (gpu.cc): internal to the watch sampler.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sources/sample.h"

namespace aimem::watch {

struct GpuReading {
  std::vector<GpuSample> gpus;
  std::vector<GpuProcessSample> processes;  // cgroup, pod_uid, container_id left empty
};

class GpuReader {
 public:
  GpuReader();  // starts the NVML thread: dlopen, nvmlInit
  ~GpuReader();
  GpuReader(const GpuReader&) = delete;
  GpuReader& operator=(const GpuReader&) = delete;
  // One reading of every device. nullopt when NVML is absent, failed, or did
  // not answer in time; `problem` then says why (empty when NVML is simply
  // not installed, which is normal). Once NVML missed a deadline it is not
  // asked again.
  std::optional<GpuReading> read(std::string& problem);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace aimem::watch
