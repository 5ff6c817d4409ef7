// Hugging Face checkpoints: config.json, safetensors headers (sharded through
// model.safetensors.index.json), and the quantization_config of GPTQ, AWQ,
// bitsandbytes, FP8 and compressed-tensors checkpoints. Only headers are read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/file_system.h"
#include "core/result.h"
#include "fit/model.h"

namespace aimem::fit {

// Files come from `files` (sources/files.h local_files() for this machine's);
// errors name the path.
//
// The tensors of one safetensors file (header only). The header length is
// checked against the file size and a cap before it is read.
Result<std::vector<Tensor>> read_safetensors_header(const FileSystem& files, const std::string& path);
Result<std::vector<Tensor>> parse_safetensors_header(const uint8_t* data, size_t size,
                                                     const std::string& name);

// The architecture numbers from a config.json object (nested text_config for
// multimodal models). dtype / quant override or supply the storage format
// ("bf16", "fp16", "fp8", "int8", "int4", "awq", "gptq", "bnb-4bit", ...);
// without tensors the weights are computed from the shapes and marked
// approximate.
Result<ModelSpec> spec_from_config(const nlohmann::json& config, const std::string& name,
                                   const std::string& dtype = "", const std::string& quant = "");

// A model folder: config.json plus every safetensors header; weights exact.
Result<ModelSpec> read_hf_folder(const FileSystem& files, const std::string& dir);
// A config.json alone.
Result<ModelSpec> read_hf_config(const FileSystem& files, const std::string& path, const std::string& dtype,
                                 const std::string& quant);

}  // namespace aimem::fit
