#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "probe/limits.h"
#include "support/test_support.h"

namespace aimem::probe {
namespace {

Limits sample_limits() {
  Limits l;
  l.measured_at = "2026-11-29T15:03:12Z";
  l.url = "http://127.0.0.1:8080";
  l.model = "tiny";
  l.max_new_tokens = 32;
  l.headroom_pct = 20;
  l.safe = {{512, 1}, {512, 4}, {2048, 1}};
  l.breaking_point = Point{2048, 4};
  l.max_context = 1638;
  l.max_concurrency = 1;
  l.peak_cgroup_bytes = 123456789;
  return l;
}

TEST(ProbeLimits, RoundTripsThroughJson) {
  Limits l = sample_limits();
  auto back = limits_from_json(limits_to_json(l), "x.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->safe.size(), 3u);
  EXPECT_EQ(back->safe[2].context, 2048);
  ASSERT_TRUE(back->breaking_point);
  EXPECT_EQ(back->breaking_point->concurrency, 4);
  EXPECT_EQ(back->max_context, 1638);
  EXPECT_EQ(back->peak_cgroup_bytes, 123456789u);
  EXPECT_FALSE(back->peak_gpu_bytes);
  EXPECT_EQ(back->model, "tiny");
}

TEST(ProbeLimits, CoversOnlyWhatAPassingStepDominates) {
  Limits l = sample_limits();
  EXPECT_TRUE(l.covers(512, 4));
  EXPECT_TRUE(l.covers(400, 3));
  EXPECT_TRUE(l.covers(2048, 1));
  EXPECT_FALSE(l.covers(2048, 2));  // 2048 passed only at concurrency 1
  EXPECT_FALSE(l.covers(4096, 1));
  EXPECT_FALSE(Limits{}.covers(1, 1));
}

TEST(ProbeLimits, ErrorsNameTheFileAndTheField) {
  auto bad = limits_from_json("{\"aimem_limits\":1,\"safe\":[{\"context\":\"big\",\"concurrency\":1}],\"limits\":{}}", "env.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("env.json"), std::string::npos);
  EXPECT_NE(bad.error().message.find("safe[0]"), std::string::npos);
  EXPECT_NE(bad.error().message.find("context"), std::string::npos);

  auto not_json = limits_from_json("limits: yes", "env.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.error().message.find("not JSON"), std::string::npos);

  auto foreign = limits_from_json("{\"a\":1}", "env.json");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("not an aimem limits file"), std::string::npos);

  auto version = limits_from_json("{\"aimem_limits\":7,\"safe\":[],\"limits\":{\"max_context\":1,\"max_concurrency\":1}}", "env.json");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.error().message.find("version 7"), std::string::npos);

  auto missing = limits_from_json("{\"aimem_limits\":1,\"safe\":[],\"limits\":{\"max_context\":1}}", "env.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("max_concurrency"), std::string::npos);
}

TEST(ProbeLimits, WritesAtomicallyAndNeverReplacesAForeignFile) {
  const std::string dir = test::temp_dir("limits");
  std::string path = dir + "/limits.json";
  ASSERT_TRUE(write_limits_file(path, sample_limits()).ok());
  auto back = read_limits_file(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->safe.size(), 3u);
  // A second write replaces our own file.
  Limits l = sample_limits();
  l.safe.pop_back();
  ASSERT_TRUE(write_limits_file(path, l).ok());
  EXPECT_EQ(read_limits_file(path)->safe.size(), 2u);
  // A file that is not ours is left alone.
  std::string other = dir + "/values.yaml";
  test::write_file(other, "replicas: 3\n");
  auto refused = write_limits_file(other, l);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("refusing"), std::string::npos);
  EXPECT_EQ(test::read_file(other), "replicas: 3\n");
  auto missing = read_limits_file(dir + "/nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.json"), std::string::npos);
}

}  // namespace
}  // namespace aimem::probe
