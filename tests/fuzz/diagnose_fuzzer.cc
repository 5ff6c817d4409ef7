// libFuzzer target for everything that reads untrusted evidence text: the
// document sniffers (JSON/YAML/number), the line scanner with every
// recognizer, and the diagnosis over whatever facts come out. The block
// deframer of large logs (recognize/deframe.h) runs on the input too: its
// output is never longer than what it read.
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./diagnose_fuzzer corpus/
//   every build:  the `fuzz_corpus_replay` test runs the seed corpus through it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnose/diagnosis.h"
#include "evidence/store.h"
#include "recognize/deframe.h"
#include "recognize/scanner.h"
#include "render/diagnosis_json.h"
#include "render/diagnosis_text.h"
#include "sources/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  aimem::StreamDeframer deframer;
  if (deframer.learn(input, 0)) {
    std::string out;
    std::vector<std::pair<uint32_t, int64_t>> times;
    deframer.apply(input, out, times);
    if (out.size() > input.size()) __builtin_trap();
  }
  aimem::FactStore store;
  aimem::read_text("fuzz", input, store, aimem::line_scanners());
  aimem::DiagnoseOptions options;
  if (size > 0 && data[0] % 7 == 0) options.exit_code = data[0];
  aimem::Diagnosis d = aimem::diagnose(std::move(store.facts()), options);
  (void)aimem::render_json(aimem::diagnosis_to_json(d));
  (void)aimem::render_text(d, {});
  return 0;
}
