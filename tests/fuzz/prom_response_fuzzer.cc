// libFuzzer target for the Prometheus HTTP API answer parser that `aimem
// diagnose --prometheus` reads (sources/prom_response.h): a hostile answer
// must give series or an error, never a crash, a hang or an allocation past
// the caps.
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./prom_response_fuzzer corpus/
//   every build:  the `prom_response_corpus_replay` test runs the seeds through it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/prom_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto r = aimem::prom::parse_response(body);
  if (r)
    for (const auto& s : r->series) (void)aimem::prom::describe("m", s, {"namespace", "pod", "container"});
  return 0;
}
