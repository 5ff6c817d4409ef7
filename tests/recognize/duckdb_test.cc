// DuckDB's memory_limit (src/recognize/families/duckdb.cc). Inputs written
// here in the CLI's and the Python client's formats with our own values,
// modelled on a query over a Parquet file at a sub-GiB cap
// (duckdb/duckdb#15687) and the older "could not allocate block" wording.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(DuckDb, TheEnginesCapWithItsFiguresIsNotAPoolOfTheMachine) {
  const std::string log =
      "D SET memory_limit = '500MB';\n"
      "D SELECT user_id, count(*) FROM 'events_2025_03.parquet' GROUP BY ALL;\n"
      "Out of Memory Error: failed to allocate data of size 128.0 MiB (402.7 MiB/476.8 MiB used)\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].requested, 128u << 20);
  ASSERT_TRUE(f[0].limit);
  EXPECT_NEAR(static_cast<double>(*f[0].limit) / (1 << 20), 476.8, 0.1);
  ASSERT_TRUE(f[0].usage);
  EXPECT_NEAR(static_cast<double>(*f[0].usage) / (1 << 20), 402.7, 0.1);
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::unknown);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The Python client's exception: one failure, DuckDB's (not .NET's OutOfMemoryException).
  auto g = test::facts_of_kind(
      "duckdb.duckdb.OutOfMemoryException: Out of Memory Error: could not allocate block of size 256.0 KiB (29.7 GiB/29.8 GiB used)\n",
      FactKind::host_alloc_failure);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].detail.find("DuckDB"), std::string::npos);
}

TEST(DuckDb, OtherOutOfMemoryWordingIsNotRead) {
  // (The generic reader may still read the words as an allocation failure; DuckDB's cap is not read.)
  for (const Fact& f : test::facts_of_kind("Out of Memory Error: see the docs on memory_limit\n", FactKind::host_alloc_failure))
    EXPECT_EQ(f.detail.find("DuckDB"), std::string::npos) << f.detail;
  EXPECT_EQ(diagnose_text("If you see \"Out of Memory Error: failed to allocate\", lower threads.\n").layer, Layer::none);
}

// DuckDB's cap always gives its figures ("(in use/limit used)"); a refusal
// without them is the allocator's, below the cap: no pool and no cause are
// claimed. Modelled on DuckDB 0.8-0.10's messages (own sizes).
TEST(DuckDb, ARefusalWithoutTheCapsFiguresClaimsNoCause) {
  Diagnosis bare = diagnose_text("duckdb.duckdb.OutOfMemoryException: Out of Memory Error: Failed to allocate block of 2048 bytes (bad allocation)\n");
  EXPECT_EQ(bare.layer, Layer::unknown);
  EXPECT_EQ(bare.cause, Cause::unknown);
  Diagnosis capped = diagnose_text("Error: Out of Memory Error: could not allocate block of size 256.0 KiB (29.7 GiB/29.8 GiB used)\n");
  EXPECT_EQ(capped.cause, Cause::limit_too_low);
}

}  // namespace
}  // namespace aimem
