// The heap's "A->B(C)" pair on a collector's line (gc_pairs.h), on lines
// written in JDK 8's and unified logging's formats (own figures).
#include <gtest/gtest.h>

#include "core/units.h"
#include "recognize/families/gc_pairs.h"

namespace aimem {
namespace {

TEST(GcPairs, Jdk8ParallelLineGivesTheWholeHeapNotAGenerationOrTheMetaspace) {
  auto h = heap_pair(
      "[Full GC (Ergonomics) [PSYoungGen: 1024K->0K(2048K)] [ParOldGen: 6991K->6990K(7168K)] 8015K->6990K(9216K), "
      "[Metaspace: 3021K->3021K(1056768K)], 0.0312 secs]");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->before, 8015 * units::KiB);
  EXPECT_EQ(h->after, 6990 * units::KiB);
  EXPECT_EQ(h->capacity, 9216 * units::KiB);
}

TEST(GcPairs, UnifiedLoggingPairInMebibytes) {
  auto h = heap_pair("[12.301s][info][gc] GC(43) Pause Full (G1 Humongous Allocation) 701M->699M(1024M) 7.771ms");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->after, 699 * units::MiB);
  EXPECT_EQ(h->capacity, 1024 * units::MiB);
}

TEST(GcPairs, ZgcsSharesGiveTheCapacity) {
  auto h = heap_pair("[2025-05-20T09:40:43.490+0800][30530][gc] GC(1843) Garbage Collection (Allocation Rate) 6144M(50%)->3072M(25%)");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->before, 6144 * units::MiB);
  EXPECT_EQ(h->after, 3072 * units::MiB);
  EXPECT_EQ(h->capacity, 12288 * units::MiB);
  EXPECT_FALSE(heap_pair("GC(1) Garbage Collection (Warmup) 6144M(0%)->3072M(0%)"));  // no share to divide by
}

TEST(GcPairs, LinesWithoutAWholePairGiveNothing) {
  EXPECT_FALSE(heap_pair("gc 12 @3.1s 2%: 0.1+1.2+0.02 ms clock, 4->4->1 MB, 5 MB goal, 8 P"));  // Go: no unit on each figure
  EXPECT_FALSE(heap_pair("[Metaspace: 3021K->3021K(1056768K)]"));                              // the Metaspace's alone
  EXPECT_FALSE(heap_pair("copied 300K->200K of the file"));                                     // no capacity
  EXPECT_FALSE(heap_pair("a->b(c)"));
}

}  // namespace
}  // namespace aimem
