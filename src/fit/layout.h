// Where a model's weights sit, by llama.cpp's layer numbering: the input
// embedding (always on the CPU), each block (dense and expert parts apart, for
// --n-cpu-moe), and the output layer (index n_layer, offloaded first). From the
// tensor table when the file has one, else from the architecture numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fit/model.h"

namespace aimem::fit {

struct WeightLayout {
  uint64_t input = 0;                 // token_embd (+ position embeddings)
  uint64_t output = 0;                // output.weight + output_norm; token_embd again if tied
  std::vector<uint64_t> dense;        // per block: attention, norms, dense/shared FFN, router
  std::vector<uint64_t> experts;      // per block: routed expert tensors
  uint64_t vision = 0;                // vision tower / projector inside the same file
  uint64_t quant_metadata = 0;        // included in the figures above
  uint64_t total() const;
  bool exact = false;
};

WeightLayout weight_layout(const ModelSpec& m);

}  // namespace aimem::fit

namespace aimem::fit {

// A llama.cpp k-quant mix (q2_k, q3_k_s/m/l, q4_k_s/m, q5_k_s/m, q6_k,
// iq4_xs) applied to a model without a tensor table, tensor by tensor as
// llama-quant.cpp (llama_tensor_get_type_impl, tensor_type_fallback) picks
// the types: the mix's per-layer bumps of attn_v and ffn_down, the output
// matrix's own type, and the fallback for rows not a multiple of the type's
// 256-element block (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/Q3_K ->
// Q4_0, IQ4_XS -> IQ4_NL; output.weight -> Q8_0). nullopt for other mixes
// and for layouts it does not model (MLA, recurrent layers).
struct MixBytes {
  uint64_t input = 0, output = 0, total = 0;
  uint32_t fallback_tensors = 0;  // per model, as llama-quantize counts them
};
std::optional<MixBytes> llamacpp_kquant_mix_bytes(const ModelSpec& m, std::string_view ftype);

}  // namespace aimem::fit
