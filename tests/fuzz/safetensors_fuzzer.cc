// libFuzzer target for the Hugging Face readers: safetensors headers (length
// prefix, JSON, every tensor entry) and, for inputs that are a JSON object,
// config.json mapping (hostile numbers must not become huge allocations).
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...;
//                 ./safetensors_fuzzer safetensors_corpus/
//   every build:  the `safetensors_corpus_replay` test runs the seed corpus.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "fit/hf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = aimem::fit::parse_safetensors_header(data, size, "fuzz.safetensors");
  if (r.ok()) {
    uint64_t total = 0;
    for (const auto& t : *r) total += t.bytes;
    (void)total;
  }
  if (size > 0 && data[0] == '{') {
    auto j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (!j.is_discarded()) {
      (void)aimem::fit::spec_from_config(j, "fuzz");
      (void)aimem::fit::spec_from_config(j, "fuzz", "fp32", "gptq");
    }
  }
  return 0;
}
