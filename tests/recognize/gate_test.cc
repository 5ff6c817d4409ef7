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
  EXPECT_LE(gate_words().size(), 32u);  // the gate must stay a small literal set
  for (auto w : gate_words()) EXPECT_GE(w.size(), 3u) << w;
}

}  // namespace
}  // namespace aimem
