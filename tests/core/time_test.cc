#include <gtest/gtest.h>

#include "core/time.h"

namespace aimem::timeutil {
namespace {

const int64_t kRef = *make_unix_us(2026, 11, 29, 12, 0, 0);

TEST(LineTime, Iso8601WithZoneAndFraction) {
  auto t = parse_line_time("2026-11-26T08:00:01.120Z  INFO text_generation_launcher: Args", kRef);
  ASSERT_TRUE(t.unix_us);
  EXPECT_EQ(format_iso(*t.unix_us), "2026-11-26T08:00:01Z");
  auto z = parse_line_time("2026-01-26T01:49:41+0900 host kernel: x", kRef);
  EXPECT_EQ(format_iso(*z.unix_us), "2026-01-25T16:49:41Z");
  auto go = parse_line_time("time=2026-11-25T10:11:02.118Z level=INFO source=memory.go", kRef);
  EXPECT_EQ(format_iso(*go.unix_us), "2026-11-25T10:11:02Z");
}

TEST(LineTime, DmesgUptimeAndHumanForm) {
  auto t = parse_line_time("[  518.050606] Out of memory: Killed process 1", kRef);
  ASSERT_TRUE(t.uptime_s);
  EXPECT_NEAR(*t.uptime_s, 518.050606, 1e-6);
  EXPECT_FALSE(t.unix_us);
  auto h = parse_line_time("[Mon Jan 26 01:49:41 2026] python3 invoked oom-killer", kRef);
  ASSERT_TRUE(h.unix_us);
  EXPECT_EQ(format_iso(*h.unix_us), "2026-01-26T01:49:41Z");
}

TEST(LineTime, SyslogPrefixTakesTheYearBeforeTheReference) {
  auto t = parse_line_time("May 15 23:09:30 droplet kernel: [  518.050606] Out of memory", kRef);
  ASSERT_TRUE(t.unix_us);
  EXPECT_TRUE(t.year_guessed);
  EXPECT_EQ(format_iso(*t.unix_us), "2026-05-15T23:09:30Z");
  // December seen in late November: last year.
  auto d = parse_line_time("Dec 14 17:13:12 host kernel: x", kRef);
  EXPECT_EQ(format_iso(*d.unix_us), "2025-12-14T17:13:12Z");
}

TEST(LineTime, KlogAndVllmPrefixes) {
  auto k = parse_line_time("I1125 09:30:12.441 xla_bridge.py:889] Unable", kRef);
  EXPECT_EQ(format_iso(*k.unix_us), "2026-11-25T09:30:12Z");
  auto v = parse_line_time("ERROR 04-27 09:07:04 [engine.py:160] OutOfMemoryError", kRef);
  EXPECT_EQ(format_iso(*v.unix_us), "2026-04-27T09:07:04Z");
}

// TensorRT-LLM's logger: month/day/year, then the clock after a dash.
TEST(LineTime, TensorrtLlmPrefix) {
  auto t = parse_line_time("[03/14/2026-05:06:07] [TRT-LLM] [RANK 0] [E] Failed to initialize executor", kRef);
  ASSERT_TRUE(t.unix_us);
  EXPECT_EQ(format_iso(*t.unix_us), "2026-03-14T05:06:07Z");
  EXPECT_FALSE(t.uptime_s);
}

TEST(LineTime, NoTimeInOrdinaryText) {
  auto t = parse_line_time("Killed", kRef);
  EXPECT_FALSE(t.unix_us);
  EXPECT_FALSE(t.uptime_s);
}

TEST(Since, RelativeAbsoluteAndErrors) {
  EXPECT_EQ(*parse_since("1m", kRef), kRef - 60'000'000);
  EXPECT_EQ(*parse_since("20 minutes ago", kRef), kRef - 1200'000'000);
  EXPECT_EQ(*parse_since("24h", kRef), kRef - 86400'000'000LL);
  EXPECT_EQ(format_iso(*parse_since("2026-11-29 15:00", kRef)), "2026-11-29T15:00:00Z");
  EXPECT_EQ(format_iso(*parse_since("2026-11-29T15:00:00Z", kRef)), "2026-11-29T15:00:00Z");
  auto bad = parse_since("last tuesday-ish", kRef);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--since"), std::string::npos);
}

TEST(Rfc1123, KubectlDescribeTimes) {
  auto t = parse_datetime("Fri, 09 Aug 2024 09:51:17 +0200");
  ASSERT_TRUE(t);
  EXPECT_EQ(format_iso(*t), "2024-08-09T07:51:17Z");
}

TEST(Duration, Human) {
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(0.1), "100ms");
  EXPECT_EQ(format_duration(0.9994), "999ms");
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(191.182), "3m11s");
  EXPECT_EQ(format_duration(1889.7), "31m30s");
  EXPECT_EQ(format_duration(7500), "2h05m");
}

}  // namespace
}  // namespace aimem::timeutil
