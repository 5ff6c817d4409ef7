// Recording analysis: synthetic recordings of each shape are classified right
// and name the dimension that moved with memory; a real recording of a real
// process growing inside a real cgroup v1 (sampled from memory.usage_in_bytes
// and /proc/PID/status) is steady growth.
#include "watch/trend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "core/text.h"
#include "core/time.h"
#include "support/test_support.h"
#include "watch/scratch_cgroup.h"

namespace aimem::watch {
namespace {

constexpr uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;
constexpr int64_t S = 1000000;

struct Noise {
  uint64_t x = 987654321;
  double next() {  // [-1, 1]
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(x >> 11) / double(1ULL << 53) * 2 - 1;
  }
};

Sample at(int i, double used, int64_t step_us = S) {
  Sample s;
  s.time_us = 1'764'428'400LL * S + i * step_us;
  CgroupSample c;
  c.path = "/app";
  c.version = 2;
  c.usage = uint64_t(used);
  c.limit = 8 * GiB;
  s.cgroups.push_back(c);
  return s;
}

ServerSample server(double running, double context = -1) {
  ServerSample srv;
  srv.target = "http://127.0.0.1:8080/metrics";
  srv.kind = "llamacpp";
  srv.up = true;
  srv.running = running;
  if (context >= 0) srv.context_tokens = context;
  return srv;
}

TrendFinding only(const std::vector<TrendFinding>& f) {
  EXPECT_EQ(f.size(), 1u);
  return f.at(0);
}

TEST(Trend, LeakIgnoresUnrelatedConcurrency) {
  std::vector<Sample> rec;
  Noise n;
  for (int i = 0; i < 60; ++i) {
    Sample s = at(i, 200.0 * MiB + 1.0 * MiB * i + 0.2 * MiB * n.next());
    s.servers.push_back(server(double(1 + int((n.next() + 1) * 3.5))));  // 1..8 at random
    rec.push_back(s);
  }
  TrendFinding f = only(analyse(rec));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  EXPECT_EQ(f.pool_id, "cgroup:/app");
  EXPECT_EQ(f.shape, Shape::steady_growth) << f.summary;
  EXPECT_EQ(f.dimension, "");
  EXPECT_NEAR(f.growth_bytes_per_s, 1.0 * MiB, 0.05 * MiB);
  EXPECT_LT(f.correlation, 0.8);
  EXPECT_NE(f.summary.find("leak or accumulation"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("did not follow concurrency"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("MiB/s for 59s without a plateau"), std::string::npos) << f.summary;
}

TEST(Trend, LoadStepFollowingConcurrency) {
  std::vector<Sample> rec;
  Noise n;
  const double levels[] = {1, 2, 4, 8};
  for (int i = 0; i < 60; ++i) {
    double c = levels[i / 15];
    Sample s = at(i, 300.0 * MiB + 40.0 * MiB * c + 1.0 * MiB * n.next());
    s.servers.push_back(server(c));
    rec.push_back(s);
  }
  TrendFinding f = only(analyse(rec));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  EXPECT_EQ(f.shape, Shape::load_step) << f.summary;
  EXPECT_EQ(f.dimension, "concurrency");
  EXPECT_GE(f.correlation, 0.8);
  EXPECT_NE(f.summary.find("with concurrency"), std::string::npos) << f.summary;
}

TEST(Trend, LoadStepFollowingContext) {
  std::vector<Sample> rec;
  Noise n;
  const double contexts[] = {1024, 4096, 8192, 16384, 4096};  // grows, then a short request again
  for (int i = 0; i < 50; ++i) {
    double ctx = contexts[i / 10];
    Sample s = at(i, 500.0 * MiB + 0.05 * MiB * ctx + 1.0 * MiB * n.next());
    s.servers.push_back(server(4, ctx));  // concurrency constant: not a candidate
    rec.push_back(s);
  }
  TrendFinding f = only(analyse(rec));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  EXPECT_EQ(f.shape, Shape::load_step) << f.summary;
  EXPECT_EQ(f.dimension, "context_tokens");
  EXPECT_GT(f.correlation, 0.9);
}

TEST(Trend, CustomMetricsMapToBatchAndQueue) {
  for (std::string metric : {"embedder_batch_len", "ingest_queue_items"}) {
    std::vector<Sample> rec;
    Noise n;
    for (int i = 0; i < 40; ++i) {
      double v = double((i / 8) * 16);
      Sample s = at(i, 300.0 * MiB + 2.0 * MiB * v + 0.5 * MiB * n.next());
      ServerSample srv;
      srv.target = "http://127.0.0.1:9100/metrics", srv.kind = "prometheus", srv.up = true;
      srv.custom[metric] = v;
      s.servers.push_back(srv);
      rec.push_back(s);
    }
    TrendFinding f = only(analyse(rec));
    EXPECT_EQ(f.shape, Shape::load_step) << f.summary;
    EXPECT_EQ(f.dimension, metric.find("batch") != std::string::npos ? "batch_size" : "queue_depth") << metric;
  }
}

TEST(Trend, LoadTimePeak) {
  std::vector<Sample> rec;
  Noise n;
  for (int i = 0; i < 60; ++i) {
    double used = i <= 10 ? 100.0 * MiB + 190.0 * MiB * i : 1.0 * GiB + 2.0 * MiB * n.next();
    rec.push_back(at(i, used));
  }
  TrendFinding f = only(analyse(rec));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  EXPECT_EQ(f.shape, Shape::load_peak) << f.summary;
  EXPECT_EQ(f.peak_bytes, 100 * MiB + 1900 * MiB);
  EXPECT_EQ(f.peak_time_us, rec[10].time_us);
  EXPECT_NE(f.summary.find("peaked at 1.95 GiB 10s after the start"), std::string::npos) << f.summary;
}

TEST(Trend, FlatAndAStepWithoutDimension) {
  std::vector<Sample> flat, step;
  Noise n;
  for (int i = 0; i < 30; ++i) {
    flat.push_back(at(i, 400.0 * MiB + 0.1 * MiB * n.next()));
    step.push_back(at(i, i < 8 ? 200.0 * MiB + 25.0 * MiB * i : 400.0 * MiB + 0.5 * MiB * n.next()));
  }
  EXPECT_EQ(only(analyse(flat)).shape, Shape::flat) << only(analyse(flat)).summary;
  TrendFinding f = only(analyse(step));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  EXPECT_EQ(f.shape, Shape::load_step) << f.summary;
  EXPECT_EQ(f.dimension, "");
  EXPECT_NE(f.summary.find("held steady"), std::string::npos) << f.summary;
}

TEST(Trend, TooFewPointsAndEmpty) {
  EXPECT_TRUE(analyse({}).empty());
  std::vector<Sample> rec;
  for (int i = 0; i < 9; ++i) rec.push_back(at(i, 100.0 * MiB * (i + 1)));
  EXPECT_TRUE(analyse(rec).empty());
}

TEST(Trend, LongRecordingIsDecimatedAndStillRight) {
  std::vector<Sample> rec;
  rec.reserve(20000);
  Noise n;
  for (int i = 0; i < 20000; ++i) rec.push_back(at(i, 100.0 * MiB + 1000.0 * i + 50000.0 * n.next(), 100000));
  auto t0 = std::chrono::steady_clock::now();
  TrendFinding f = only(analyse(rec));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(f.shape, Shape::steady_growth) << f.summary;
  EXPECT_NEAR(f.growth_bytes_per_s, 10000.0, 200.0);  // 1000 B per 100 ms
  EXPECT_EQ(f.end_bytes, rec.back().cgroups[0].usage);
  EXPECT_LT(s, 1.0);
}

std::optional<uint64_t> read_u64(const std::string& path) {
  std::ifstream in(path);
  uint64_t v;
  if (in >> v) return v;
  return std::nullopt;
}

std::optional<uint64_t> vm_rss(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (auto v = text::after(line, "VmRSS:")) return text::parse_u64(text::trim(*v)).value_or(0) * 1024;
  return std::nullopt;
}

TEST(Trend, RealGrowingProcessInARealCgroupIsSteadyGrowth) {
  test::ScratchCgroup cg("trend", 512 * MiB);
  if (!cg) GTEST_SKIP() << "no writable cgroup v1 memory controller here (need root and a v1 memory hierarchy)";
  // 2 MiB touched every 50 ms, 240 MiB at most, then hold.
  pid_t child = cg.fork_allocator("aimem-grow", 2 << 20, 50000, 120);
  ASSERT_GT(child, 0);
  const std::string rel = cg.rel, dir = cg.dir;

  // Sample every 50 ms for 2.5 s, as the sampler would: the cgroup's usage and the process's RSS.
  std::vector<Sample> rec;
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.time_us = timeutil::now_us();
    CgroupSample c;
    c.path = rel;
    c.version = 1;
    c.usage = read_u64(dir + "/memory.usage_in_bytes");
    c.limit = read_u64(dir + "/memory.limit_in_bytes");
    s.cgroups.push_back(c);
    ProcessSample p;
    p.pid = child, p.comm = "aimem-grow", p.cgroup = rel, p.rss = vm_rss(child).value_or(0);
    s.processes.push_back(p);
    rec.push_back(s);
    usleep(50000);
  }
  ASSERT_TRUE(rec.front().cgroups[0].usage && rec.back().cgroups[0].usage);
  EXPECT_GT(rec.back().processes[0].rss, rec.front().processes[0].rss + 50 * MiB);

  TrendFinding f = only(analyse(rec));
  std::printf("  %s: %s\n", shape_name(f.shape), f.summary.c_str());
  EXPECT_EQ(f.pool_id, "cgroup:" + rel);
  EXPECT_EQ(f.shape, Shape::steady_growth) << f.summary;
  // 2 MiB per 50 ms is 40 MiB/s, less the time malloc and memset take.
  EXPECT_GT(f.growth_bytes_per_s, 10.0 * MiB) << f.summary;  // slower only on a very busy machine
  EXPECT_LT(f.growth_bytes_per_s, 45.0 * MiB) << f.summary;
  EXPECT_NE(f.summary.find("leak or accumulation"), std::string::npos);
  std::printf("real recording: %s\n", f.summary.c_str());
}

}  // namespace
}  // namespace aimem::watch
