// Every pattern that can start a failure fact contains a gate word, so a
// large input scanned through the gate never misses a failure family.
#include <gtest/gtest.h>

#include "recognize/gate.h"
#include "recognize/recognizer.h"

namespace aimem {
namespace {

TEST(Gate, CoversEveryFailurePattern) {
  std::string uncovered;
  for (const auto* entry : all_recognizers())
    for (const auto& p : entry->patterns)
      if (!(p.flags & (kContext | kCompanion)) && !gate_covers(p.expr)) uncovered += std::string(entry->name) + ": " + p.expr + "\n";
  EXPECT_TRUE(uncovered.empty()) << "patterns without a gate word (add one to gate.cc or mark the pattern kContext):\n" << uncovered;
}

TEST(Gate, WordsAreLowerCaseAndShortList) {
  EXPECT_LE(gate_words().size(), 35u);  // the gate must stay a small literal set (gate.cc: 37 made it 1.27x slower)
  // And at 33 or more: vectorscan picks a faster literal matcher for the
  // set there (gate.cc; bench/diagnose_vs_grep.sh measures it).
  EXPECT_GE(gate_words().size(), 33u);
  for (auto w : gate_words()) EXPECT_GE(w.size(), 3u) << w;
}

}  // namespace
}  // namespace aimem
