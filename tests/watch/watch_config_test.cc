// watch's --config as text in, options out (watch/watch_config.h): every key,
// and hostile shapes that used to escape as exceptions (a key that is a list
// aborted `aimem watch` with an uncaught yaml-cpp conversion error).
#include <gtest/gtest.h>

#include "watch/watch_config.h"

namespace aimem::watch {
namespace {

std::string error_of(const std::string& text) {
  WatchOptions o;
  auto r = apply_watch_config(text, "w.yaml", o);
  return r ? "" : r.error().message;
}

TEST(WatchConfig, ReadsItsKeys) {
  WatchOptions o;
  auto r = apply_watch_config("interval: 2s\nlisten: 127.0.0.1:9999\nstore: false\nscrape: [http://127.0.0.1:8000/metrics]\n"
                              "retention: {max_age: 1d, max_size: 1GiB}\nalerts: {warn_used_ratio: 0.7, stderr: false}\n",
                              "w.yaml", o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(o.interval_us, 2000000);
  EXPECT_EQ(o.listen, "127.0.0.1:9999");
  EXPECT_FALSE(o.store);
  ASSERT_EQ(o.scrape.size(), 1u);
  EXPECT_EQ(o.retention.max_bytes, 1ull << 30);
  EXPECT_DOUBLE_EQ(o.policy.warn_used_ratio, 0.7);
  EXPECT_TRUE(apply_watch_config("", "w.yaml", o).ok());
  WatchOptions l;
  ASSERT_TRUE(apply_watch_config("labels: {node: gpu-node-7, cluster: eu-1}\n", "w.yaml", l).ok());
  EXPECT_EQ(l.labels, (std::vector<std::pair<std::string, std::string>>{{"node", "gpu-node-7"}, {"cluster", "eu-1"}}));
  EXPECT_EQ(error_of("labels: [node]\n"), "w.yaml: line 1: labels must be a mapping of label names to values (node: gpu-node-7)");
  EXPECT_EQ(error_of("interval: 1s\nlabels: {pod: x}\n"), "w.yaml: line 2: labels: 'pod=x': aimem's own series use the label 'pod'");
}

TEST(WatchConfig, HostileShapesAreErrorsNamingTheLineNeverExceptions) {
  EXPECT_EQ(error_of("? [a, b]\n: 1\n"), "w.yaml: line 1: a key must be a single word");
  EXPECT_EQ(error_of("interval: 1s\n{x: 1}: 2\n"), "w.yaml: line 2: a key must be a single word");
  EXPECT_NE(error_of("alerts: {? [k] : v}\n").find("w.yaml: line 1: alerts"), std::string::npos);
  EXPECT_NE(error_of("retention: {[a]: 1}\n").find("w.yaml: line 1: retention"), std::string::npos);
  EXPECT_NE(error_of("pid: not-a-number\n").find("w.yaml: line 1: pid"), std::string::npos);
  EXPECT_NE(error_of("interval: {a: 1}\n").find("interval must be a single value"), std::string::npos);
  EXPECT_NE(error_of("- a\n").find("must be a mapping"), std::string::npos);
  EXPECT_NE(error_of("nope: 1\n").find("unknown key 'nope'"), std::string::npos);
  EXPECT_NE(error_of("a: " + std::string(200, '[') + std::string(200, ']')).find("w.yaml:1:"), std::string::npos);
  EXPECT_NE(error_of("a: [1\n").find("malformed YAML"), std::string::npos);
}

}  // namespace
}  // namespace aimem::watch
