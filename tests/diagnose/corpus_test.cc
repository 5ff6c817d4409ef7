// Every case of the real-evidence corpus (tests/fixtures/corpus/cases.jsonl, a
// copy of shared/corpus): layer and cause accuracy over the whole file, failing
// below 95% layer accuracy. AIMEM_CORPUS names another file of the same form.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

std::string corpus_path() {
  if (const char* p = std::getenv("AIMEM_CORPUS")) return p;
  return test::source_dir() + "/tests/fixtures/corpus/cases.jsonl";
}

TEST(Corpus, LayerAccuracyAtLeast95Percent) {
  std::ifstream in(corpus_path());
  ASSERT_TRUE(in) << corpus_path();
  std::string line;
  int total = 0, layer_ok = 0, cause_ok = 0;
  std::string misses;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto c = nlohmann::json::parse(line);
    Diagnosis d = test::diagnose_text(c["text"].get<std::string>());
    std::string want_layer = c["layer"], want_cause = c["cause"];
    std::string got_layer(to_string(d.layer)), got_cause(to_string(d.cause));
    ++total;
    bool lok = got_layer == want_layer, cok = got_cause == want_cause;
    layer_ok += lok;
    cause_ok += cok;
    if (!lok || !cok)
      misses += "  " + c["id"].get<std::string>() + ": want " + want_layer + "/" + want_cause + ", got " + got_layer + "/" + got_cause +
                (lok ? "" : "  <- layer") + "\n";
  }
  ASSERT_GT(total, 0);
  double layer_acc = 100.0 * layer_ok / total, cause_acc = 100.0 * cause_ok / total;
  std::printf("corpus: %d cases, layer accuracy %.1f%% (%d), cause accuracy %.1f%% (%d)\n%s", total, layer_acc, layer_ok, cause_acc,
              cause_ok, misses.c_str());
  EXPECT_GE(layer_acc, 95.0) << misses;
}

}  // namespace
}  // namespace aimem
