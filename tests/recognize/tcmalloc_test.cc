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

}  // namespace
}  // namespace aimem
