// Redis's maxmemory (src/recognize/families/redis.cc). Inputs written here in
// the server's and redis-cli's formats with our own values, modelled on a
// cache refusing writes at a small cap while the host had RAM to spare
// (redis/redis#2746) and on redis-py's exception.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(Redis, AWriteRefusedAtMaxmemoryIsTheServersCapNotAPoolOfTheMachine) {
  const std::string log =
      "$ redis-cli -p 6391 info memory\n"
      "# Memory\n"
      "used_memory:30411208\n"
      "used_memory_peak:97105336\n"
      "maxmemory:33554432\n"
      "maxmemory_policy:noeviction\n"
      "$ redis-cli -p 6391 set job:81f2 \"$(cat /tmp/blob.json)\"\n"
      "(error) OOM command not allowed when used memory > 'maxmemory'.\n"
      "$ free -m\n"
      "              total        used        free      shared  buff/cache   available\n"
      "Mem:          31870        9120       21004          12        1745       22310\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].limit, 32u << 20);  // INFO's maxmemory, in bytes
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::unknown);  // the host had 21 GiB free: no pool of the machine ran out
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // redis.conf's units: 1k = 1000, 1kb = 1024; the client library's exception.
  auto g = test::facts_of_kind(
      "maxmemory 24mb\n"
      "redis.exceptions.OutOfMemoryError: OOM command not allowed when used memory > 'maxmemory'.\n",
      FactKind::host_alloc_failure);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].limit, 24u << 20);
  auto h = test::facts_of_kind("maxmemory 500m\n-OOM command not allowed when used memory > 'maxmemory'.\n",
                               FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].limit, 500000000u);
}

TEST(Redis, SettingsAndAdviceAloneAreNoFailure) {
  EXPECT_EQ(diagnose_text("maxmemory 2gb\nmaxmemory-policy allkeys-lru\nused_memory_human:1.21G\n").layer, Layer::none);
  EXPECT_EQ(diagnose_text("If you see \"OOM command not allowed when used memory > 'maxmemory'\", raise maxmemory.\n").layer,
            Layer::none);
}

}  // namespace
}  // namespace aimem
