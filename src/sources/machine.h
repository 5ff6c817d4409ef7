// This machine's memory as plain numbers, for a caller that sizes something
// against it (`aimem fit` without --gpu, --vram or --ram). Every path is read
// under `root` ("/" for the host). Missing is not zero: nullopt or nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aimem {

struct GpuMemory {
  std::string name;  // the driver's name for the device, as NVML gives it (untrusted text)
  uint64_t total = 0;
  uint64_t used = 0;
};
// NVML's devices that report their memory, in NVML's order (scan_gpus: loaded
// with dlopen, under a deadline); none without a driver.
std::vector<GpuMemory> gpu_memory();

// /proc/cpuinfo names both amx_int8 and amx_tile.
bool cpu_has_amx(const std::string& root);

// /proc/meminfo's available memory as read_proc reports it (MemAvailable,
// else MemFree + Cached + Buffers).
std::optional<uint64_t> host_mem_available(const std::string& root);

// The memory limit of this process's own cgroup (v2 memory.max, v1
// memory.limit_in_bytes) minus what it already uses; nullopt without a limit.
std::optional<uint64_t> own_cgroup_room(const std::string& root);

}  // namespace aimem
