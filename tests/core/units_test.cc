#include <gtest/gtest.h>

#include "core/units.h"

namespace aimem::units {
namespace {

TEST(ParseSize, UserDialectFollowsDesign) {
  EXPECT_EQ(*parse_size("24GiB"), 24 * GiB);
  EXPECT_EQ(*parse_size("24G"), 24 * GiB);  // G = GiB
  EXPECT_EQ(*parse_size("80GB"), 80'000'000'000ULL);  // decimal
  EXPECT_EQ(*parse_size("512MiB"), 512 * MiB);
  EXPECT_EQ(*parse_size("1.5T"), static_cast<uint64_t>(1.5 * TiB));
  EXPECT_EQ(*parse_size("4096"), 4096u);
}

TEST(ParseSize, RejectsNonsenseWithAMessage) {
  auto r = parse_size("lots");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("lots"), std::string::npos);
  EXPECT_FALSE(parse_size("12 parsecs").ok());
  EXPECT_FALSE(parse_size("-3G").ok());
}

TEST(K8sQuantity, BinaryDecimalAndExponent) {
  EXPECT_EQ(*parse_k8s_quantity("1Gi"), GiB);
  EXPECT_EQ(*parse_k8s_quantity("512Mi"), 512 * MiB);
  EXPECT_EQ(*parse_k8s_quantity("35505620Ki"), 35505620ULL * 1024);
  EXPECT_EQ(*parse_k8s_quantity("1G"), 1'000'000'000ULL);
  EXPECT_EQ(*parse_k8s_quantity("129e6"), 129'000'000ULL);
  EXPECT_EQ(*parse_k8s_quantity("\"12Gi\""), 12 * GiB);
  EXPECT_EQ(*parse_k8s_quantity("0"), 0u);
  EXPECT_FALSE(parse_k8s_quantity("12Gx"));
}

TEST(LogSize, ProgramUnitsAreBinary) {
  std::string_view rest;
  EXPECT_EQ(*parse_log_size("4507.00 MiB on device 0", &rest), static_cast<uint64_t>(4507.0 * MiB));
  EXPECT_EQ(rest, " on device 0");
  EXPECT_EQ(*parse_log_size("2.89GiB kv"), static_cast<uint64_t>(2.89 * GiB + 0.5));
  EXPECT_EQ(*parse_log_size("1048576kB, limit"), GiB);
  EXPECT_EQ(*parse_log_size("0 bytes free"), 0u);
  EXPECT_EQ(*parse_log_size("14.9888 GB"), static_cast<uint64_t>(14.9888 * GiB + 0.5));
  EXPECT_FALSE(parse_log_size("12 Gigs"));
  EXPECT_FALSE(parse_log_size("3 Mark-sweep"));
}

// A wrapped size past 2^63 (Erlang's "Cannot allocate 18446744071562067968
// bytes", 2^64 - 2^31) is read, not lost or rounded through a signed
// overflow; 2^64 and more is no size.
TEST(LogSize, SizesPastTwoToTheSixtyThreeAreRead) {
  auto wrapped = parse_log_size("18446744071562067968 bytes of memory");
  ASSERT_TRUE(wrapped);
  EXPECT_GT(*wrapped, uint64_t{1} << 63);
  EXPECT_FALSE(parse_log_size("18446744073709551616 bytes"));
  EXPECT_FALSE(parse_log_size("99999999999 TiB"));
  // Petabytes and exabytes, in which a size computed wrong is printed.
  EXPECT_EQ(parse_log_size("2 PB"), uint64_t{2} << 50);
  EXPECT_EQ(parse_log_size("1.5EiB"), uint64_t{3} << 59);
  EXPECT_FALSE(parse_log_size("1048575.999023PB"));  // past 2^64
  EXPECT_EQ(parse_log_size_saturating("1048575.999023PB memory"), UINT64_MAX);
  EXPECT_EQ(parse_log_size_saturating("2 PB"), uint64_t{2} << 50);
  EXPECT_FALSE(parse_log_size_saturating("1e30 apples"));
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(format_bytes(64 * MiB), "64.0 MiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536 * MiB), "1.50 GiB");
  EXPECT_EQ(format_bytes(200 * GiB), "200 GiB");
}

}  // namespace
}  // namespace aimem::units
