// Built-in catalogs: GPUs (memory per device) and widely deployed models
// (their config.json numbers, each entry citing where they come from), so
// that `aimem fit meta-llama/Llama-3.1-8B-Instruct --gpu L4` works offline.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "fit/model.h"

namespace aimem::fit {

struct GpuInfo {
  std::string name;                  // "H100 80GB SXM"
  std::vector<std::string> aliases;  // lower-case forms users type: "h100", "h100-80gb"
  uint64_t memory_bytes = 0;         // as the driver reports total (nvidia-smi MiB x 2^20)
  std::string vendor;                // "nvidia", "amd"
  std::string citation;
};

const std::vector<GpuInfo>& gpu_catalog();
// Case-insensitive, ignores "nvidia", spaces, '-' and '_'; nullptr when unknown.
const GpuInfo* find_gpu(std::string_view name);

struct CatalogModel {
  std::string id;                    // "meta-llama/Llama-3.1-8B-Instruct"
  std::vector<std::string> aliases;  // "llama3.1:8b", "llama-3.1-8b"
  std::string config_json;           // the config.json fields that matter
  std::string dtype;                 // stored dtype ("bf16", "fp8", "mxfp4")
  std::string citation;              // where the numbers come from
};

const std::vector<CatalogModel>& model_catalog();
const CatalogModel* find_model(std::string_view name);
// The ModelSpec of a catalog entry (through spec_from_config).
Result<ModelSpec> catalog_spec(std::string_view name, const std::string& dtype = "",
                               const std::string& quant = "");

}  // namespace aimem::fit
