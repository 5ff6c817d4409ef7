// What `aimem fit` reads from the outside world: the model named on the
// command line (a GGUF file, a model folder, a config.json or a catalog name)
// and the hardware (catalog GPU, explicit sizes, or this machine).
#pragma once

#include <optional>
#include <string>

#include "core/result.h"
#include "fit/model.h"
#include "fit/plan.h"

namespace aimem::fit {

// dtype / quant: --dtype and --quant from the command line ("" = as stored).
// A GGUF quantization type (q4_k_m, q8_0, ...) given for a checkpoint without
// GGUF tensors sizes the weights as llama.cpp's quantizer would store them.
Result<ModelSpec> load_model(const std::string& arg, const std::string& dtype, const std::string& quant);

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
  std::string root = "/";    // for /proc and /sys (tests)
};
Result<Hardware> resolve_hardware(const HardwareArgs& a);

}  // namespace aimem::fit
