// Where a model's weights sit, by llama.cpp's layer numbering: the input
// embedding (always on the CPU), each block (dense and expert parts apart, for
// --n-cpu-moe), and the output layer (index n_layer, offloaded first). From the
// tensor table when the file has one, else from the architecture numbers.
#pragma once

#include <cstdint>
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
