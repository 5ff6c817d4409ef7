// The ggml type table, indexed by on-disk id. Numbers checked against
// llama.cpp de3ff815 (ggml/include/ggml.h enum ggml_type, ggml/src/ggml.c
// type_traits, and sizeof() of the block structs in ggml/src/ggml-common.h,
// compiled and printed). Removed ids (4, 5, 31-33, 36-38) have no entry.
#include "fit/ggml_types.h"

#include <array>
#include <cctype>

namespace aimem::fit {
namespace {

constexpr uint32_t kTypeCount = 43;  // GGML_TYPE_COUNT

constexpr std::array<GgmlTypeInfo, kTypeCount> kTypes = [] {
  std::array<GgmlTypeInfo, kTypeCount> t{};
  t[0] = {"F32", 1, 4};
  t[1] = {"F16", 1, 2};
  t[2] = {"Q4_0", 32, 18};    // half d + 16 bytes of nibbles
  t[3] = {"Q4_1", 32, 20};    // half d, half m + 16
  t[6] = {"Q5_0", 32, 22};    // half d + u32 qh + 16
  t[7] = {"Q5_1", 32, 24};
  t[8] = {"Q8_0", 32, 34};    // half d + 32 int8
  t[9] = {"Q8_1", 32, 36};
  t[10] = {"Q2_K", 256, 84};
  t[11] = {"Q3_K", 256, 110};
  t[12] = {"Q4_K", 256, 144};
  t[13] = {"Q5_K", 256, 176};
  t[14] = {"Q6_K", 256, 210};
  t[15] = {"Q8_K", 256, 292};
  t[16] = {"IQ2_XXS", 256, 66};
  t[17] = {"IQ2_XS", 256, 74};
  t[18] = {"IQ3_XXS", 256, 98};
  t[19] = {"IQ1_S", 256, 50};
  t[20] = {"IQ4_NL", 32, 18};
  t[21] = {"IQ3_S", 256, 110};
  t[22] = {"IQ2_S", 256, 82};
  t[23] = {"IQ4_XS", 256, 136};
  t[24] = {"I8", 1, 1};
  t[25] = {"I16", 1, 2};
  t[26] = {"I32", 1, 4};
  t[27] = {"I64", 1, 8};
  t[28] = {"F64", 1, 8};
  t[29] = {"IQ1_M", 256, 56};
  t[30] = {"BF16", 1, 2};
  t[34] = {"TQ1_0", 256, 54};
  t[35] = {"TQ2_0", 256, 66};
  t[39] = {"MXFP4", 32, 17};  // e8m0 scale + 16 bytes of e2m1
  t[40] = {"NVFP4", 64, 36};  // 4 ue4m3 scales + 32 bytes of e2m1
  t[41] = {"Q1_0", 128, 18};  // half d + 16 bytes of bits
  t[42] = {"Q2_0", 64, 18};   // half d + 16 bytes of 2-bit quants
  return t;
}();

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t type) {
  if (type >= kTypeCount || kTypes[type].block_size == 0) return nullptr;
  return &kTypes[type];
}

const GgmlTypeInfo* ggml_type_by_name(std::string_view name) {
  auto id = ggml_type_id(name);
  return id ? &kTypes[*id] : nullptr;
}

std::optional<uint32_t> ggml_type_id(std::string_view name) {
  for (uint32_t i = 0; i < kTypeCount; ++i) {
    if (kTypes[i].block_size != 0 && iequal(kTypes[i].name, name)) return i;
  }
  return std::nullopt;
}

std::optional<uint64_t> ggml_row_size(uint32_t type, uint64_t ne0) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (!info || ne0 % info->block_size != 0) return std::nullopt;
  // Guard the multiply: a hostile ne0 near 2^64 would wrap.
  uint64_t blocks = ne0 / info->block_size;
  if (blocks > UINT64_MAX / info->type_size) return std::nullopt;
  return blocks * info->type_size;
}

}  // namespace aimem::fit
