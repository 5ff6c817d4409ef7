// libFuzzer target for the GGUF header reader and spec_from_gguf: hostile
// counts, lengths, types and shapes must give an error, never a crash, a
// leak or an allocation the input did not pay for.
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./gguf_fuzzer corpus/
//   every build:  the `gguf_corpus_replay` test runs the seed corpus through it.
#include <cstddef>
#include <cstdint>

#include "fit/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = aimem::fit::parse_gguf(data, size, "fuzz.gguf");
  if (!f) return 0;
  // A file that parses must also yield a spec or a clean error.
  auto spec = aimem::fit::spec_from_gguf(*f);
  (void)spec;
  return 0;
}
