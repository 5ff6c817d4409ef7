// What `aimem fit` sizes: the model named on the command line (a GGUF file, a
// model folder, a config.json or a catalog name) and the hardware (catalog
// GPU, explicit sizes, or this machine). fit reads nothing itself: the files
// come through a core/file_system.h view and this machine's numbers as a
// MachineReading, both from the caller (sources/ reads them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/file_system.h"
#include "core/result.h"
#include "fit/model.h"
#include "fit/plan.h"

namespace aimem::fit {

// dtype / quant: --dtype and --quant from the command line ("" = as stored).
// A GGUF quantization type (q4_k_m, q8_0, ...) given for a checkpoint without
// GGUF tensors sizes the weights as llama.cpp's quantizer would store them.
// Errors name the path.
Result<ModelSpec> load_model(const FileSystem& files, const std::string& arg, const std::string& dtype,
                             const std::string& quant);

// Re-sizes the weights of a spec without a GGUF tensor table as a GGUF
// quantization (ftype name, e.g. "Q4_K_M"); false when the name is unknown.
bool apply_gguf_ftype(ModelSpec& m, const std::string& ftype);
// A GGUF quantization name in aimem's spelling: "Q4_K - Medium" (as llama.cpp
// prints general.file_type) and "q4-k-m" both give "q4_k_m".
std::string normalize_ftype(std::string_view name);

struct HardwareArgs {
  std::string gpu;           // --gpu NAME
  std::string vram;          // --vram SIZE
  std::string ram;           // --ram SIZE
  uint32_t gpus = 0;         // --gpus N (0 = as detected / 1)
  bool device_cpu = false;   // --device cpu
};

// This machine's memory as sources/ read it, for a plan without --gpu, --vram
// or --ram. Missing is not zero.
struct MachineReading {
  struct Gpu {
    std::string name;   // the driver's name for it (as NVML gives it; made printable here)
    uint64_t total = 0;
    uint64_t used = 0;
  };
  std::vector<Gpu> gpus;                  // NVML's devices that report their memory, in order
  bool cpu_amx = false;                   // /proc/cpuinfo flags amx_int8 and amx_tile
  std::optional<uint64_t> mem_available;  // /proc/meminfo MemAvailable
  std::optional<uint64_t> cgroup_room;    // this process's cgroup memory limit minus its usage
};

// True when the hardware is this machine's (no --gpu, --vram or --ram): the
// caller then reads a MachineReading (GPUs only without --device cpu).
bool reads_this_machine(const HardwareArgs& a);
// `machine` is used only when reads_this_machine(a).
Result<Hardware> resolve_hardware(const HardwareArgs& a, const MachineReading& machine);

}  // namespace aimem::fit
