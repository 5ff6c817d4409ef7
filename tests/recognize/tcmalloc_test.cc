// gperftools' tcmalloc large-allocation report (src/recognize/families/
// tcmalloc.cc), written in its format with our own addresses: "== (nil)" is
// a failed allocation, read with its size; "== 0x..." succeeded and is not a
// failure. A size no machine holds is a size computed wrong (modelled on a
// graph library's broken extension build, 2021).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(Tcmalloc, ALargeAllocThatReturnedNilIsAFailedHostAllocation) {
  auto f = test::facts_of_kind("tcmalloc: large alloc 6442450944 bytes == (nil) @  0x7f8b1a3e2887 0x7f8b18cd9c29\n",
                               FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].requested, 6442450944u);
  EXPECT_TRUE(test::facts_of_kind("tcmalloc: large alloc 6442450944 bytes == 0x1d7c04000 @  0x7f31a64c21e7\n",
                                  FactKind::host_alloc_failure)
                  .empty());
  Diagnosis absurd = test::diagnose_text(
      "tcmalloc: large alloc 140423497228288 bytes == (nil) @  0x7f8b1a3e2887\n"
      "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n");
  EXPECT_EQ(absurd.layer, Layer::not_memory) << test::reason_text(absurd);
}

// Colab stops a `!python` process that ran the VM out of RAM with an
// interrupt: the output ends in "^C" after tcmalloc's large allocations
// (modelled on a KoboldAI notebook loading a 6B model on Colab, 2021; our
// own sizes and addresses). A "^C" far from any large allocation, or with
// none before it, is a person's interrupt.
TEST(Tcmalloc, AnInterruptRightAfterLargeAllocationsIsColabsRamStop) {
  const std::string allocs =
      "Initializing transformers, please wait...\n"
      "tcmalloc: large alloc 6089203712 bytes == 0x55d1c2e6a000 @  0x7f3a8c1e2b6b 0x7f3a8c202379 0x7f3a3168a25e\n";
  Diagnosis d = test::diagnose_text(allocs + "^C\n");
  EXPECT_EQ(d.layer, Layer::host_ram) << test::reason_text(d);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("Colab"), std::string::npos) << d.incidents[0].summary;
  EXPECT_EQ(test::diagnose_text("Epoch 1/3\n^C\n").layer, Layer::none);
  std::string far = allocs;
  for (int i = 0; i < 45; ++i) far += "step " + std::to_string(i) + " loss 0.41\n";
  EXPECT_EQ(test::diagnose_text(far + "^C\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
