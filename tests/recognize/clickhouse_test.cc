// ClickHouse's MEMORY_LIMIT_EXCEEDED (src/recognize/families/clickhouse.cc),
// in the wordings of 20.x, 22.x and 23.x (modelled on ClickHouse/ClickHouse
// issue threads; values are ours).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> refusals(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::host_alloc_failure) out.push_back(f);
  return out;
}

TEST(ClickHouse, EachScopeIsARefusalWithItsCapAndChunk) {
  auto total = refusals(
      "2020.10.30 00:31:16.320714 [ 10473 ] {171eac9e} <Error> executeQuery: Code: 241, e.displayText() = DB::Exception: "
      "Memory limit (total) exceeded: would use 25.01 GiB (attempt to allocate chunk of 5075574 bytes), maximum: 25.00 GiB\n");
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(total[0].requested, 5075574u);
  EXPECT_EQ(total[0].limit, 25 * units::GiB);
  EXPECT_EQ(total[0].layer, Layer::host_ram);
  auto query = refusals(
      "Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 9.32 GiB (attempt to allocate chunk of 4194304 bytes), "
      "maximum: 9.31 GiB: While executing AggregatingTransform. (MEMORY_LIMIT_EXCEEDED)\n");
  ASSERT_EQ(query.size(), 1u);
  EXPECT_NE(query[0].detail.find("max_memory_usage"), std::string::npos);
  EXPECT_EQ(refusals("DB::Exception: Memory limit (for user) exceeded: would use 1.00 GiB (attempt to allocate chunk of 1048576 "
                     "bytes), current RSS 900.00 MiB, maximum: 1.00 GiB\n")
                .size(),
            1u);
  // In a container with a limit, the refusal is that limit's.
  Diagnosis d = test::diagnose_text(
      "$ docker run -d -m 4g clickhouse/clickhouse-server:23.8\n"
      "Code: 241. DB::Exception: Memory limit (total) exceeded: would use 3.50 GiB (attempt to allocate chunk of 4360384 bytes), "
      "current RSS 3.21 GiB, maximum: 3.46 GiB. (MEMORY_LIMIT_EXCEEDED)\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(ClickHouse, SettingsAndOtherScopesAreNot) {
  EXPECT_TRUE(refusals("<max_server_memory_usage_to_ram_ratio>0.9</max_server_memory_usage_to_ram_ratio>\n").empty());
  EXPECT_TRUE(refusals("Memory limit (for table) exceeded\n").empty());
  EXPECT_TRUE(refusals("If you see \"Memory limit (total) exceeded\", raise max_server_memory_usage.\n").empty());
}

}  // namespace
}  // namespace aimem
