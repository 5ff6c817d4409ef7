// The one parser of /dev/kmsg's record prefix (core/kmsg_record.h).
#include "core/kmsg_record.h"

#include <gtest/gtest.h>

namespace aimem {
namespace {

TEST(KmsgRecord, PrefixTimeAndTextWithoutDictionary) {
  auto r = parse_kmsg_record("6,1234,518050606,-;Out of memory: Killed process 77 (python3)\n SUBSYSTEM=memory\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->uptime_us, 518050606);
  EXPECT_EQ(r->text, "Out of memory: Killed process 77 (python3)");
  auto c = parse_kmsg_record("4,9,10,c,more;continued\r\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->text, "continued");
}

TEST(KmsgRecord, NotARecordUnlessThreeNumbersAndFlags) {
  EXPECT_FALSE(parse_kmsg_record("2026-11-29 10:00:00 INFO ok"));
  EXPECT_FALSE(parse_kmsg_record("6,1234;no time"));
  EXPECT_FALSE(parse_kmsg_record("6,1234,55;no flags field"));
  EXPECT_FALSE(parse_kmsg_record("6,x,55,-;seq is no number"));
  EXPECT_FALSE(parse_kmsg_record("6,1,55,a very long field of flags;text"));
  EXPECT_FALSE(parse_kmsg_record("1,2,3,4"));
}

}  // namespace
}  // namespace aimem
