// The recording's trend refines a kernel report's cause: growth without end is
// leak_or_accumulation (and the fixes change with it), growth that follows
// concurrency is concurrency_batch, growth that follows context length is
// kv_cache_context; findings about other pools, or a cause the evidence
// already decided, are left alone.
#include <gtest/gtest.h>

#include "core/text.h"
#include "support/test_support.h"
#include "watch/trend_diag.h"

namespace aimem {
namespace {

// The real report captured on this machine, without the kmsg framing.
Diagnosis kernel_report() {
  std::string text;
  const std::string capture = test::read_file(test::source_dir() + "/tests/fixtures/watch/kmsg-memcg-oom.txt");
  for (auto line : text::split(capture, '\n')) {
    if (line.empty() || line[0] == ' ') continue;
    text += std::string(line.substr(line.find(';') + 1)) + "\n";
  }
  return test::diagnose_text(text);
}

std::string cgroup_pool(const Diagnosis& d) {
  return "cgroup:" + d.incidents.front().pool.name.substr(std::string("cgroup ").size());
}

watch::TrendFinding finding(const std::string& pool, watch::Shape shape, const std::string& dimension = "") {
  watch::TrendFinding f;
  f.pool_id = pool;
  f.shape = shape;
  f.dimension = dimension;
  f.summary = "the finding's summary";
  return f;
}

TEST(TrendDiag, SteadyGrowthIsALeakAndChangesTheFixes) {
  Diagnosis d = kernel_report();
  ASSERT_EQ(d.layer, Layer::container_limit);
  ASSERT_TRUE(d.cause == Cause::limit_too_low || d.cause == Cause::unknown);
  std::string pool = cgroup_pool(d);
  EXPECT_TRUE(watch::apply_trend(d, {finding(pool, watch::Shape::steady_growth)}, pool));
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  EXPECT_EQ(d.incidents.front().cause, Cause::leak_or_accumulation);
  bool find_growth = false;
  for (const auto& f : d.incidents.front().fixes) find_growth |= text::contains(f.action, "find what grows");
  EXPECT_TRUE(find_growth);
  EXPECT_FALSE(d.incidents.front().evidence.empty());
  EXPECT_EQ(d.incidents.front().reasons.back(), "the recording: the finding's summary");
}

TEST(TrendDiag, LoadStepNamesItsDimension) {
  Diagnosis a = kernel_report();
  std::string pool = cgroup_pool(a);
  EXPECT_TRUE(watch::apply_trend(a, {finding(pool, watch::Shape::load_step, "concurrency")}, pool));
  EXPECT_EQ(a.cause, Cause::concurrency_batch);
  Diagnosis b = kernel_report();
  EXPECT_TRUE(watch::apply_trend(b, {finding(pool, watch::Shape::load_step, "context_tokens")}, pool));
  EXPECT_EQ(b.cause, Cause::kv_cache_context);
}

TEST(TrendDiag, OtherPoolsAndDecidedCausesAreLeftAlone) {
  Diagnosis d = kernel_report();
  Cause before = d.cause;
  std::string pool = cgroup_pool(d);
  EXPECT_FALSE(watch::apply_trend(d, {finding("host_ram", watch::Shape::steady_growth)}, pool));
  EXPECT_FALSE(watch::apply_trend(d, {finding(pool, watch::Shape::load_step)}, pool));  // no dimension
  EXPECT_FALSE(watch::apply_trend(d, {finding(pool, watch::Shape::flat)}, pool));
  EXPECT_EQ(d.cause, before);
  d.incidents.front().cause = Cause::model_load;
  EXPECT_FALSE(watch::apply_trend(d, {finding(pool, watch::Shape::steady_growth)}, pool));
  EXPECT_EQ(d.incidents.front().cause, Cause::model_load);
}

}  // namespace
}  // namespace aimem
