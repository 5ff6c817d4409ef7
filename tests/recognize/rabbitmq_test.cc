// RabbitMQ's memory alarm (src/recognize/families/rabbitmq.cc). Inputs
// written here in the broker's log formats with our own values and node
// names, modelled on rabbitmq/rabbitmq-server threads of publishers blocked
// at the high watermark (3.7+'s "Memory high watermark set to ... (N bytes)"
// with the alarm's "Memory used:N allowed:M") and on the 2.x-3.6 "Memory limit
// set to NMB of MMB total." start-up line.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(RabbitMq, TheMemoryAlarmIsTheBrokersCapNotAPoolOfTheMachine) {
  const std::string log =
      "2025-03-02 08:00:04.118204+00:00 [info] <0.229.0> Memory high watermark set to 1638 MiB (1717986918 bytes) of 4096 MiB "
      "(4294967296 bytes) total\n"
      "2025-03-02 11:21:40.905117+00:00 [info] <0.227.0> vm_memory_high_watermark set. Memory used:1723114496 allowed:1717986918\n"
      "2025-03-02 11:21:40.905402+00:00 [warning] <0.227.0> memory resource limit alarm set on node 'rabbit@mq-2.mq.svc'.\n"
      "2025-03-02 11:21:40.905402+00:00 [warning] <0.227.0> *** Publishers will be blocked until this alarm clears ***\n"
      "2025-03-02 11:21:40.905611+00:00 [warning] <0.227.0> memory resource limit alarm set on node 'rabbit@mq-2.mq.svc'.\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);  // the alarm repeated across the cluster is one alarm
  EXPECT_EQ(f[0].limit, 1717986918u);
  EXPECT_EQ(f[0].usage, 1723114496u);
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::unknown);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The 2.x-3.6 start-up line gives the cap in MB.
  auto old = test::facts_of_kind(
      "=INFO REPORT==== 14-Mar-2016::02:11:09 ===\nMemory limit set to 406MB of 1016MB total.\n"
      "=INFO REPORT==== 14-Mar-2016::09:40:51 ===\nmemory resource limit alarm set on node rabbit@mq1.\n",
      FactKind::host_alloc_failure);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].limit, 406u << 20);
  // rabbitmqctl status (3.6) with the alarm raised.
  EXPECT_EQ(test::facts_of_kind(" {alarms,[{{resource_limit,memory,'rabbit@mq1'},[]}]},\n", FactKind::host_alloc_failure).size(), 1u);
}

// A watermark of 0 bytes raises the alarm at start-up on purpose (used to
// block publishers): a setting, not a shortage. A healthy boot that only
// computes the watermark, and the alarm clearing, are no failure.
TEST(RabbitMq, AZeroWatermarkIsASettingAndAHealthyBootIsNothing) {
  Diagnosis zero = diagnose_text(
      "2019-05-14 07:30:11.402 [info] <0.221.0> Memory high watermark set to 0 MiB (0 bytes) of 15934 MiB (16707989504 bytes) total\n"
      "2019-05-14 07:30:11.403 [info] <0.221.0> vm_memory_high_watermark set. Memory used:88391680 allowed:0\n"
      "2019-05-14 07:30:11.403 [warning] <0.219.0> memory resource limit alarm set on node rabbit@mq7.\n");
  EXPECT_EQ(zero.layer, Layer::not_memory);
  Diagnosis healthy = diagnose_text(
      "2024-06-01 10:00:02.118 [info] <0.230.0> Memory high watermark set to 3276 MiB (3435973836 bytes) of 8192 MiB "
      "(8589934592 bytes) total\n"
      "2024-06-01 10:41:19.502 [info] <0.226.0> memory resource limit alarm cleared on node rabbit@mq3\n"
      "2024-06-01 10:41:19.502 [info] <0.226.0> memory resource limit alarm cleared across the cluster\n");
  EXPECT_EQ(healthy.layer, Layer::none);
}


// The free-disk alarm blocks publishers as the memory alarm does (modelled
// on rabbitmq-server discussions of disk alarms; values ours).
TEST(RabbitMq, TheDiskAlarmIsALookAlike) {
  const char* text = R"(2024-02-01 10:00:02.300 [warning] <0.298.0> Free disk space is insufficient. Free bytes: 912356544. Limit: 1000000000
2024-02-01 10:00:02.300 [warning] <0.294.0> disk resource limit alarm set on node 'rabbit@q1'.
*** Publishers will be blocked until this alarm clears ***
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::not_memory);
}

// The alarm raised and then cleared, publishers blocked for a minute and
// going on (modelled on assembla/cony#12's broker; our node and figures):
// the broker handled it, no failure. An alarm not cleared still is one.
TEST(RabbitMq, AnAlarmThatClearedWasHandled) {
  const std::string raised =
      "=INFO REPORT==== 3-Feb-2017::10:00:02 ===\n"
      "Memory limit set to 1638MB of 4096MB total.\n"
      "\n"
      "=WARNING REPORT==== 3-Feb-2017::13:41:20 ===\n"
      "vm_memory_high_watermark set. Memory used:1721312256 allowed:1717986918\n"
      "\n"
      "=WARNING REPORT==== 3-Feb-2017::13:41:20 ===\n"
      "memory resource limit alarm set on node 'rabbit@mq-2'.\n"
      "\n"
      "**********************************************************\n"
      "*** Publishers will be blocked until this alarm clears ***\n"
      "**********************************************************\n";
  const std::string cleared =
      "\n"
      "=INFO REPORT==== 3-Feb-2017::13:42:51 ===\n"
      "vm_memory_high_watermark clear. Memory used:1602224128 allowed:1717986918\n"
      "\n"
      "=WARNING REPORT==== 3-Feb-2017::13:42:51 ===\n"
      "memory resource limit alarm cleared on node 'rabbit@mq-2'\n";
  EXPECT_EQ(diagnose_text(raised).layer, Layer::unknown);
  EXPECT_EQ(test::facts_of_kind(raised + cleared, FactKind::recovered).size(), 1u);
  EXPECT_EQ(diagnose_text(raised + cleared).layer, Layer::none);
  // A clear with no alarm before it is nothing to handle.
  EXPECT_TRUE(test::facts_of_kind(cleared, FactKind::recovered).empty());
  // The node down seconds after the clear (a peer's log, modelled on the
  // corpus case qc-020): the clear was its death, not a recovery.
  const std::string down = raised + cleared + "\n=INFO REPORT==== 3-Feb-2017::13:42:58 ===\nnode 'rabbit@mq-2' down: connection_closed\n";
  EXPECT_TRUE(test::facts_of_kind(down, FactKind::recovered).empty());
  EXPECT_EQ(diagnose_text(down).layer, Layer::unknown);
}

}  // namespace
}  // namespace aimem
