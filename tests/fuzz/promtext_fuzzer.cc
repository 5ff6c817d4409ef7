// libFuzzer target for the Prometheus text parser and the scrape
// interpreters: a hostile /metrics or /api/ps body must give a sample or a
// problem, never a crash, a hang or an allocation past the caps.
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./promtext_fuzzer corpus/
//   every build:  the `promtext_corpus_replay` test runs the seeds and the fixtures through it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "watch/promtext.h"
#include "watch/scrape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto t = aimem::watch::parse_prom_text(body);
  (void)t;
  auto s = aimem::watch::interpret_metrics("auto", body, {"a{b=\"c\"}"});
  auto o = aimem::watch::interpret_ollama_ps(body);
  (void)s;
  (void)o;
  return 0;
}
