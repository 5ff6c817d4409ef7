// Hostile structured inputs through the real binary: the JSON nested
// 990,000 deep (1.98 MB) took `aimem check` to 281 MB, `rules --policy` to 283
// MB and `watch --config` to 277 MB, and said "malformed YAML". Each now
// exits 2 naming the file and "nested too deep (limit 128)", with a peak RSS
// (the child's VmHWM) under 64 MiB; so do a wide flat list and a deep
// config.json in a model folder.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem::test {
namespace {

struct Case {
  std::vector<std::string> args;
  std::string message;
};

RunResult bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv{AIMEM_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.timeout_s = 30;
  o.kill_above_rss = memory_bound(512ull << 20);
  return run(argv, o);
}

void expect_refused(const RunResult& r, const std::string& file, const std::string& message) {
  EXPECT_FALSE(r.killed_for_memory) << "RSS passed " << (memory_bound(512ull << 20) >> 20) << " MiB";
  EXPECT_EQ(r.status, 2) << r.err << r.out;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  // -1: it ended before the first look at its memory (20 ms), too soon to
  // have grown; the cgroup test (tests/cli/memory_cgroup_test.cc) measures the
  // same inputs from the kernel's side.
  EXPECT_LT(r.peak_rss_kb, int64_t(memory_bound(64ull << 20) >> 10)) << "peak RSS " << r.peak_rss_kb << " KiB";
}

TEST(BoundedInput, NestingTooDeepIsNamedByEverySubcommandThatReadsJsonOrYaml) {
  const std::string dir = temp_dir("deep");
  const std::string deep = std::string(990000, '[') + std::string(990000, ']');
  write_file(dir + "/deep.json", deep);
  write_file(dir + "/deep.yaml", "policy:\n  model: " + deep + "\n");
  for (const std::string& f : {dir + "/deep.json", dir + "/deep.yaml"}) {
    expect_refused(bounded({"check", f}), f + ":", "nested too deep (limit 128)");
    expect_refused(bounded({"rules", "--policy", f}), f + ":", "nested too deep (limit 128)");
    expect_refused(bounded({"watch", "--config", f, "--no-serve", "--no-store"}), f + ":", "nested too deep (limit 128)");
  }
  // A model folder whose config.json is the same.
  write_file(dir + "/config.json", deep);
  expect_refused(bounded({"fit", dir}), dir + "/config.json:", "nested too deep (limit 128)");
}

TEST(BoundedInput, AWideDocumentIsRefusedBeforeItsNodesAreBuilt) {
  const std::string dir = temp_dir("wide");
  std::string flat = "[";
  for (int i = 0; i < 3000000; ++i) flat += "1,";
  flat += "1]";  // 6 MB, 3 million values: ~1.5 GB of yaml-cpp nodes
  write_file(dir + "/wide.yaml", flat);
  expect_refused(bounded({"check", dir + "/wide.yaml"}), dir + "/wide.yaml:", "more than the 40000");
  expect_refused(bounded({"rules", "--policy", dir + "/wide.yaml"}), dir + "/wide.yaml:", "more than");
}

}  // namespace
}  // namespace aimem::test
