// The ggml tensor types: block size and bytes per block for every type a
// GGUF file can hold, so weights are summed per tensor exactly. Mirrors
// ggml's type_traits table (ggml/src/ggml.c); ids are the on-disk values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace aimem::fit {

struct GgmlTypeInfo {
  std::string_view name;    // "Q4_K"
  uint32_t block_size = 0;  // elements per block
  uint32_t type_size = 0;   // bytes per block
};

// nullptr for ids ggml does not define (or removed types such as Q4_2).
const GgmlTypeInfo* ggml_type_info(uint32_t type);
// By name, case-insensitive ("q8_0", "F16"); nullptr when unknown.
const GgmlTypeInfo* ggml_type_by_name(std::string_view name);
std::optional<uint32_t> ggml_type_id(std::string_view name);
// Bytes of a row of ne0 elements; nullopt when the type is unknown or ne0 is
// not a multiple of the block size (the file is then invalid).
std::optional<uint64_t> ggml_row_size(uint32_t type, uint64_t ne0);

}  // namespace aimem::fit
