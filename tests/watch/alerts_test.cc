// Alerts: the forecast on clean, noisy, flat, falling and spiky series; the
// rules on synthetic samples (fire before exhaustion, rate limit, rolling copy,
// swap, GPUs, KV cache); delivery through a real shell command, a real
// loopback webhook server and a real log file.
#include "watch/alerts.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <thread>

#include "core/text.h"
#include "core/time.h"
#include "support/test_support.h"
#include "watch/scratch_cgroup.h"

namespace aimem::watch {
namespace {

constexpr uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;
constexpr int64_t S = 1000000;

using Points = std::vector<std::pair<int64_t, uint64_t>>;

// Deterministic noise in [-1, 1].
struct Noise {
  uint64_t x = 12345;
  double next() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(x >> 11) / double(1ULL << 53) * 2 - 1;
  }
};

Points linear(int n, double base, double per_s, double noise_bytes = 0) {
  Points p;
  Noise r;
  for (int i = 0; i < n; ++i) p.emplace_back(1'700'000'000LL * S + i * S, uint64_t(base + per_s * i + noise_bytes * r.next()));
  return p;
}

TEST(AlertsForecast, LinearSeries) {
  // 100 MiB + 1 MiB/s, last point at 29 s = 129 MiB, limit 200 MiB: 71 s left.
  auto tte = forecast_tte_s(linear(30, 100.0 * MiB, 1.0 * MiB), 200 * MiB);
  ASSERT_TRUE(tte);
  EXPECT_NEAR(*tte, 71.0, 0.01);
}

TEST(AlertsForecast, NoisySeries) {
  auto tte = forecast_tte_s(linear(60, 100.0 * MiB, 1.0 * MiB, 3.0 * MiB), 300 * MiB);
  ASSERT_TRUE(tte);
  EXPECT_NEAR(*tte, 141.0, 10.0);  // (300 - 159) MiB at 1 MiB/s
}

TEST(AlertsForecast, FlatAndFallingGiveNothing) {
  EXPECT_FALSE(forecast_tte_s(linear(30, 100.0 * MiB, 0), 200 * MiB));
  EXPECT_FALSE(forecast_tte_s(linear(60, 100.0 * MiB, 0, 3.0 * MiB), 200 * MiB));
  EXPECT_FALSE(forecast_tte_s(linear(30, 150.0 * MiB, -1.0 * MiB), 200 * MiB));
  EXPECT_FALSE(forecast_tte_s(linear(2, 100.0 * MiB, 1.0 * MiB), 200 * MiB));  // too few points
}

TEST(AlertsForecast, OneSpikeDoesNotMoveIt) {
  Points p = linear(30, 100.0 * MiB, 1.0 * MiB);
  p[20].second += 500 * MiB;
  auto tte = forecast_tte_s(p, 200 * MiB);
  ASSERT_TRUE(tte);
  EXPECT_NEAR(*tte, 71.0, 1.0);
  p.back().second += 60 * MiB;  // a spike on the newest point either
  tte = forecast_tte_s(p, 200 * MiB);
  ASSERT_TRUE(tte);
  EXPECT_NEAR(*tte, 71.0, 1.5);
  Points flat = linear(30, 100.0 * MiB, 0);
  flat[15].second += 500 * MiB;
  EXPECT_FALSE(forecast_tte_s(flat, 200 * MiB));
}

TEST(AlertsForecast, StepThatLevelledOffIsNotATrend) {
  Points p = linear(40, 100.0 * MiB, 0);
  for (size_t i = 10; i < p.size(); ++i) p[i].second += 50 * MiB;
  EXPECT_FALSE(forecast_tte_s(p, 200 * MiB));
}

TEST(AlertsForecast, AtTheLimitIsZero) {
  auto tte = forecast_tte_s(linear(30, 180.0 * MiB, 1.0 * MiB), 200 * MiB);
  ASSERT_TRUE(tte);
  EXPECT_EQ(*tte, 0.0);
}

Sample cgroup_sample(int64_t t, uint64_t usage, uint64_t limit, const std::string& path = "/job") {
  Sample s;
  s.time_us = t;
  CgroupSample c;
  c.path = path;
  c.version = 1;
  c.usage = usage;
  c.limit = limit;
  s.cgroups.push_back(c);
  return s;
}

TEST(AlertsPools, WhatCountsAsAPool) {
  Sample s;
  s.host.mem_total = 64 * GiB;
  s.host.mem_available = 40 * GiB;
  s.host.swap_total = 0;
  s.host.swap_free = 0;
  CgroupSample limited, unlimited_v1, unlimited_v2, no_usage;
  limited.path = "/a", limited.usage = 10 * MiB, limited.limit = 64 * MiB;
  unlimited_v1.path = "/b", unlimited_v1.usage = 20 * MiB, unlimited_v1.limit = 9223372036854771712ULL;
  unlimited_v2.path = "/c", unlimited_v2.usage = 30 * MiB;
  no_usage.path = "/d";
  s.cgroups = {limited, unlimited_v1, unlimited_v2, no_usage};
  GpuSample g0, unified;
  g0.index = 0, g0.total = 80 * GiB, g0.used = 70 * GiB;
  unified.index = 1, unified.unified = true, unified.used = 5 * GiB;
  s.gpus = {g0, unified};
  auto pools = pools_of(s);
  ASSERT_EQ(pools.size(), 5u);  // host, 3 cgroups with usage, GPU 0; no swap (none), no unified GPU
  EXPECT_EQ(pools[0].pool_id, "host_ram");
  EXPECT_EQ(pools[0].used, 24 * GiB);
  EXPECT_EQ(*pools[0].limit, 64 * GiB);
  EXPECT_EQ(pools[1].pool_id, "cgroup:/a");
  EXPECT_EQ(*pools[1].limit, 64 * MiB);
  EXPECT_FALSE(pools[2].limit) << "v1 'no limit' is not a limit";
  EXPECT_FALSE(pools[3].limit);
  EXPECT_EQ(pools[4].pool_id, "gpu:0");
  EXPECT_EQ(pools[4].kind, "gpu");
}

TEST(AlertsEngine, HeadroomFiresBeforeExhaustion) {
  AlertEngine engine(AlertPolicy{});
  const uint64_t limit = 256 * MiB;
  int64_t first_warning = -1, first_critical = -1, full_at = -1;
  for (int i = 0; i < 100 && full_at < 0; ++i) {
    int64_t t = i * S;
    uint64_t used = std::min<uint64_t>(100 * MiB + uint64_t(i) * 2 * MiB, limit);
    if (used >= limit) full_at = t;
    for (const Alert& a : engine.observe(cgroup_sample(t, used, limit))) {
      if (a.key != "headroom:cgroup:/job") continue;
      EXPECT_EQ(a.pool_id, "cgroup:/job");
      if (a.severity == "warning" && first_warning < 0) first_warning = t;
      if (a.severity == "critical" && first_critical < 0) first_critical = t;
    }
  }
  ASSERT_GE(full_at, 0);
  ASSERT_GE(first_warning, 0);
  ASSERT_GE(first_critical, 0);
  EXPECT_LT(first_warning, first_critical);
  EXPECT_LT(first_critical, full_at);
  // 80% of 256 MiB = 204.8 MiB, reached at 53 s (206 MiB).
  EXPECT_EQ(first_warning, 53 * S);
}

TEST(AlertsEngine, ForecastFiresBeforeExhaustionWithoutThresholds) {
  AlertPolicy policy;
  policy.warn_used_ratio = policy.critical_used_ratio = 2.0;  // thresholds out of the way
  policy.first_regime_extrapolation = policy.max_extrapolation;  // growth from the first sample: see below
  AlertEngine engine(policy);
  const uint64_t limit = 1 * GiB;
  int64_t first = -1, full_at = -1;
  std::optional<double> tte;
  for (int i = 0; full_at < 0; ++i) {
    int64_t t = 1'800'000'000LL * S + i * 5 * S;
    uint64_t used = std::min<uint64_t>(200 * MiB + uint64_t(i) * 5 * MiB, limit);  // 1 MiB/s
    if (used >= limit) full_at = t;
    for (const Alert& a : engine.observe(cgroup_sample(t, used, limit)))
      if (a.key == "tte:cgroup:/job" && first < 0) first = t, tte = a.tte_s;
  }
  ASSERT_GE(first, 0);
  EXPECT_LT(first, full_at);
  // The forecast is under 15 min from the 5th sample on (804 s), but it may reach only 10x the history it
  // rests on: at sample i the history is 5i s and the forecast 1024 - 200 - 5i s, so the first alert is at
  // i = 15 (history 75 s, used 275 MiB, 749 s to go).
  ASSERT_TRUE(tte);
  EXPECT_NEAR(*tte, 749.0, 1.0);
  EXPECT_EQ(first, 1'800'000'000LL * S + 15 * 5 * S);
}

TEST(AlertsEngine, GrowthSeenFromTheStartWaitsUntilItReachesHalfItsSpan) {
  // The series above with the default policy: the pool was never seen level,
  // so the forecast (824 - 5i s at sample i) must reach at most half the span
  // it rests on, which the 5-minute window caps at 300 s: 824 - 5i <= 150
  // first at i = 135.
  AlertPolicy policy;
  policy.warn_used_ratio = policy.critical_used_ratio = 2.0;
  AlertEngine engine(policy);
  const uint64_t limit = 1 * GiB;
  int64_t first = -1;
  std::optional<double> tte;
  for (int i = 0; i < 164; ++i) {
    int64_t t = 1'800'000'000LL * S + i * 5 * S;
    for (const Alert& a : engine.observe(cgroup_sample(t, 200 * MiB + uint64_t(i) * 5 * MiB, limit)))
      if (a.key == "tte:cgroup:/job" && first < 0) first = t, tte = a.tte_s;
  }
  ASSERT_TRUE(tte);
  EXPECT_EQ(first, 1'800'000'000LL * S + 135 * 5 * S);
  EXPECT_NEAR(*tte, 149.0, 1.0);
}

// A pool sampled every 250 ms: `level_s` seconds at 1 MiB, then usage(t) MiB
// (t from the end of the level) until it reaches `limit_mib` or `run_s` ends.
// Returns the seconds from the first forecast alert to the limit (-1: no
// alert; +inf: never full) and counts the forecast alerts.
double forecast_lead(double level_s, const std::function<double(double)>& usage, double limit_mib, double run_s,
                     int& alerts) {
  AlertEngine engine(AlertPolicy{});
  alerts = 0;
  double first = -1;
  for (double t = 0; t <= run_s; t += 0.25) {
    double mib = t < level_s ? 1 : usage(t - level_s);
    if (mib >= limit_mib) return first < 0 ? -1 : t - first;
    for (const Alert& a : engine.observe(cgroup_sample(int64_t(t * S), uint64_t(mib * MiB), uint64_t(limit_mib * MiB))))
      if (a.key == "tte:cgroup:/job") {
        ++alerts;
        if (first < 0) first = t;
      }
  }
  return first < 0 ? -1 : std::numeric_limits<double>::infinity();
}

TEST(AlertsEngine, SawtoothFirstRampIsNoAlarmButGrowthAfterALevelIs) {
  int alerts = 0;
  // 30 -> 129 MiB in 3 s, freed, every 4 s, in 200 MiB (forecast_eval's
  // real sawtooth): its first ramp says "full in 2-3 s" to any forecaster,
  // but nothing before it showed where the pool sits.
  auto saw = [](double t) {
    double ph = std::fmod(t, 4.0);
    return 30 + (ph < 3 ? ph * 33 : 0);
  };
  EXPECT_EQ(forecast_lead(0, saw, 200, 24, alerts), -1);
  EXPECT_EQ(alerts, 0);
  // Idle 3 s, then 20 MiB/s: full 10 s later; the alert comes at least 5 s before.
  double lead = forecast_lead(3, [](double t) { return 1 + 20 * t; }, 200, 30, alerts);
  EXPECT_GE(lead, 5.0);
  EXPECT_LT(lead, 10.0);
  // The same growth from the very first sample: alerted later, once the
  // forecast is at most half the growth seen (about 10 / 3 s before).
  double from_start = forecast_lead(0, [](double t) { return 1 + 20 * t; }, 200, 30, alerts);
  EXPECT_GT(from_start, 2.0);
  EXPECT_LT(from_start, lead);
}

TEST(AlertsEngine, ShortHistoryIsNotExtrapolatedFar) {
  // Host-wide noise: half a second of a rising trend must not announce exhaustion in minutes.
  AlertEngine engine(AlertPolicy{});
  size_t tte_alerts = 0;
  for (int i = 0; i < 6; ++i)
    for (const Alert& a : engine.observe(cgroup_sample(i * 100000, 1 * GiB + uint64_t(i) * 10 * MiB, 8 * GiB)))
      tte_alerts += a.key == "tte:cgroup:/job";
  EXPECT_EQ(tte_alerts, 0u);
  // The exporter still sees the forecast: (8 GiB - 1.05 GiB) / 100 MiB/s.
  auto tte = engine.time_to_exhaustion();
  ASSERT_EQ(tte.size(), 1u);
  EXPECT_NEAR(tte[0].second, (8.0 * 1024 - 1024 - 50) / 100.0, 1.0);
}

TEST(AlertsEngine, TimeToExhaustionForTheExporter) {
  AlertEngine engine(AlertPolicy{});
  for (int i = 0; i < 10; ++i) {
    Sample s = cgroup_sample(i * S, 100 * MiB + uint64_t(i) * MiB, 1 * GiB, "/rising");
    CgroupSample flat;
    flat.path = "/flat", flat.usage = 100 * MiB, flat.limit = 1 * GiB;
    CgroupSample unlimited;
    unlimited.path = "/unlimited", unlimited.usage = 100 * MiB + uint64_t(i) * MiB;
    s.cgroups.push_back(flat);
    s.cgroups.push_back(unlimited);
    engine.observe(s);
  }
  auto tte = engine.time_to_exhaustion();
  ASSERT_EQ(tte.size(), 1u);
  EXPECT_EQ(tte[0].first, "cgroup:/rising");
  EXPECT_NEAR(tte[0].second, double(1024 - 109), 0.5);
}

TEST(AlertsEngine, RateLimitSuppressesRepeatsButNotEscalation) {
  AlertEngine engine(AlertPolicy{});  // repeat every 10 min
  const uint64_t limit = 1 * GiB;
  std::vector<std::pair<int64_t, std::string>> got;
  for (int i = 0; i < 180; ++i) {  // 30 min, every 10 s
    int64_t t = i * 10 * S;
    uint64_t used = uint64_t(0.85 * double(limit));
    if (i >= 30 && i < 33) used = uint64_t(0.95 * double(limit));  // 300-320 s: critical
    for (const Alert& a : engine.observe(cgroup_sample(t, used, limit)))
      if (a.key == "headroom:cgroup:/job") got.emplace_back(t / S, a.severity);
  }
  std::vector<std::pair<int64_t, std::string>> want = {
      {0, "warning"}, {300, "critical"}, {900, "warning"}, {1500, "warning"}};
  EXPECT_EQ(got, want);
}

// Sanitizer builds (AIMEM_SANITIZE, AIMEM_FUZZ) run several times slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kSlowdown = 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr double kSlowdown = 10;
#else
constexpr double kSlowdown = 1;
#endif
#else
constexpr double kSlowdown = 1;
#endif

TEST(AlertsEngine, CostStaysBoundedOverALongWindow) {
  // 20 rising cgroups sampled at 10 Hz for 10 minutes (the 5-minute window fills and decimates).
  AlertEngine engine(AlertPolicy{});
  // CPU time of this thread, so that other builds on the machine do not count.
  auto cpu_us = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
  };
  double t0 = cpu_us();
  const int samples = 6000;
  size_t alerts = 0;
  for (int i = 0; i < samples; ++i) {
    Sample s;
    s.time_us = int64_t(i) * 100000;
    for (int c = 0; c < 20; ++c) {
      CgroupSample cg;
      cg.path = "/c" + std::to_string(c), cg.usage = 100 * MiB + uint64_t(i) * 1000 * (c + 1), cg.limit = 8 * GiB;
      s.cgroups.push_back(cg);
    }
    alerts += engine.observe(s).size();
  }
  double per_sample_us = (cpu_us() - t0) / samples;
  std::printf("AlertEngine::observe, 20 pools with full windows: %.1f us CPU per sample\n", per_sample_us);
  // Recomputing Theil–Sen on every sample cost ~2,100 us here; once per appended point ~130 us.
  EXPECT_LT(per_sample_us, 1000.0 * kSlowdown);
  // Every pool still has its forecast: (8 GiB - used) / (10 kB/s x (c + 1)).
  auto tte = engine.time_to_exhaustion();
  ASSERT_EQ(tte.size(), 20u);
  for (const auto& [id, s] : tte) {
    if (id == "cgroup:/c0") {
      EXPECT_NEAR(s, (8.0 * GiB - (100.0 * MiB + 5999.0 * 1000)) / 10000.0, 50.0);
    }
  }
}

TEST(AlertsEngine, RealAllocatorIsWarnedBeforeItsOomKill) {
  // A real process touching 1 MiB every 50 ms in a real cgroup with a 64 MiB limit (about 3 s to the
  // kill; a forecast needs 2 s of trend); the engine sees the cgroup's real usage every 20 ms. Its
  // alerts must come before the kernel kills the process.
  const uint64_t limit = 64 * MiB;
  test::ScratchCgroup cg("alerts", limit);
  if (!cg) GTEST_SKIP() << "no writable cgroup v1 memory controller here (need root and a v1 memory hierarchy)";
  pid_t child = cg.fork_allocator("aimem-alloc", 1 << 20, 50000, 1000);
  ASSERT_GT(child, 0);
  AlertEngine engine(AlertPolicy{});
  int64_t first_headroom = -1, first_tte = -1, killed_at = -1;
  int status = 0;
  for (int i = 0; i < 500 && killed_at < 0; ++i) {
    Sample s;
    s.time_us = timeutil::now_us();
    CgroupSample c;
    c.path = cg.rel, c.version = 1;
    std::ifstream(cg.dir + "/memory.usage_in_bytes") >> *(c.usage = 0);
    std::ifstream(cg.dir + "/memory.limit_in_bytes") >> *(c.limit = 0);
    s.cgroups.push_back(c);
    for (const Alert& a : engine.observe(s)) {
      if (a.key == "headroom:cgroup:" + cg.rel && first_headroom < 0) first_headroom = s.time_us;
      if (a.key == "tte:cgroup:" + cg.rel && first_tte < 0) first_tte = s.time_us;
    }
    if (waitpid(child, &status, WNOHANG) == child) {
      cg.reaped(child);
      killed_at = timeutil::now_us();
    }
    usleep(20000);
  }
  ASSERT_GT(killed_at, 0) << "the allocator was not killed within 10 s";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  ASSERT_GT(first_tte, 0);
  ASSERT_GT(first_headroom, 0);
  EXPECT_LT(first_tte, killed_at);
  EXPECT_LT(first_headroom, killed_at);
  std::printf("real allocator: forecast alert %.2f s and headroom alert %.2f s before the OOM kill was seen\n",
              double(killed_at - first_tte) / 1e6, double(killed_at - first_headroom) / 1e6);
}

Sample host_with_server(uint64_t available, const std::string& role, uint64_t rss, uint64_t gpu_bytes = 0) {
  Sample s;
  s.time_us = 5 * S;
  s.host.mem_total = 64 * GiB;
  s.host.mem_available = available;
  ProcessSample p;
  p.pid = 4242, p.comm = role.empty() ? "worker" : role, p.role = role, p.rss = rss;
  if (gpu_bytes) p.gpu_bytes = gpu_bytes;
  ProcessSample small;
  small.pid = 7, small.comm = "llama-server", small.role = "llama-server", small.rss = 1 * GiB;
  s.processes = {small, p};
  return s;
}

bool has_key(const std::vector<Alert>& alerts, const std::string& key) {
  for (const Alert& a : alerts)
    if (a.key == key) return true;
  return false;
}

TEST(AlertsEngine, RollingCopyNeedsRoomForTheLargestModelServer) {
  auto alerts = AlertEngine(AlertPolicy{}).observe(host_with_server(10 * GiB, "vllm", 20 * GiB));
  ASSERT_TRUE(has_key(alerts, "rolling_copy:host_ram"));
  for (const Alert& a : alerts)
    if (a.key == "rolling_copy:host_ram") {
      EXPECT_NE(a.message.find("vllm (pid 4242)"), std::string::npos) << a.message;
      EXPECT_NE(a.message.find("20.0 GiB"), std::string::npos) << a.message;
      EXPECT_EQ(a.pool_id, "host_ram");
    }
  EXPECT_FALSE(has_key(AlertEngine(AlertPolicy{}).observe(host_with_server(30 * GiB, "vllm", 20 * GiB)),
                       "rolling_copy:host_ram"));
  // Not a model server: a plain python process.
  EXPECT_FALSE(has_key(AlertEngine(AlertPolicy{}).observe(host_with_server(10 * GiB, "python", 20 * GiB)),
                       "rolling_copy:host_ram"));
  // Any process holding GPU memory counts.
  EXPECT_TRUE(has_key(AlertEngine(AlertPolicy{}).observe(host_with_server(10 * GiB, "python", 20 * GiB, GiB)),
                      "rolling_copy:host_ram"));
  AlertPolicy off;
  off.reserve_rolling_copy = false;
  EXPECT_FALSE(has_key(AlertEngine(off).observe(host_with_server(10 * GiB, "vllm", 20 * GiB)),
                       "rolling_copy:host_ram"));
}

TEST(AlertsEngine, ModelServerInSwapIsFlagged) {
  Sample s = host_with_server(40 * GiB, "ollama", 4 * GiB);
  s.processes[1].swap = 300 * MiB;
  s.processes[0].swap = 10 * MiB;  // llama-server, below 64 MiB
  ProcessSample node;
  node.pid = 99, node.comm = "node", node.role = "node", node.rss = GiB, node.swap = GiB;
  s.processes.push_back(node);
  auto alerts = AlertEngine(AlertPolicy{}).observe(s);
  std::vector<std::string> swapping;
  for (const Alert& a : alerts)
    if (a.key.rfind("swapping:", 0) == 0) {
      swapping.push_back(a.key);
      EXPECT_NE(a.message.find("unusably slow"), std::string::npos);
      EXPECT_EQ(*a.used, 300 * MiB);
    }
  EXPECT_EQ(swapping, std::vector<std::string>{"swapping:pid:4242"});
}

TEST(AlertsEngine, GpuThresholdLeavesPreallocationAloneAndSkipsUnified) {
  auto gpu_sample = [](uint64_t used, bool unified) {
    Sample s;
    s.time_us = S;
    GpuSample g;
    g.index = 0, g.total = unified ? std::nullopt : std::optional<uint64_t>(80 * GiB), g.used = used;
    g.unified = unified;
    s.gpus.push_back(g);
    return s;
  };
  EXPECT_FALSE(has_key(AlertEngine(AlertPolicy{}).observe(gpu_sample(72 * GiB, false)), "headroom:gpu:0"))
      << "90% is vLLM's normal preallocation";
  auto alerts = AlertEngine(AlertPolicy{}).observe(gpu_sample(78 * GiB, false));
  ASSERT_TRUE(has_key(alerts, "headroom:gpu:0"));
  EXPECT_EQ(alerts[0].severity, "warning");
  EXPECT_TRUE(AlertEngine(AlertPolicy{}).observe(gpu_sample(78 * GiB, true)).empty());
}

TEST(AlertsEngine, KvCacheNearlyFull) {
  Sample s;
  s.time_us = S;
  ServerSample srv;
  srv.target = "http://127.0.0.1:8000/metrics", srv.kind = "vllm", srv.up = true, srv.kv_usage_ratio = 0.97;
  s.servers.push_back(srv);
  auto alerts = AlertEngine(AlertPolicy{}).observe(s);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].key, "kv:http://127.0.0.1:8000/metrics");
  EXPECT_NE(alerts[0].message.find("97%"), std::string::npos);
  s.servers[0].kv_usage_ratio = 0.5;
  EXPECT_TRUE(AlertEngine(AlertPolicy{}).observe(s).empty());
  s.servers[0].kv_usage_ratio = std::nan("");  // a scrape that said NaN
  EXPECT_TRUE(AlertEngine(AlertPolicy{}).observe(s).empty());
}

Alert sample_alert() {
  Alert a;
  a.time_us = 1'764'428'400LL * S;
  a.key = "headroom:cgroup:/x";
  a.severity = "critical";
  a.pool_id = "cgroup:/x";
  a.message = "cgroup /x uses 60.0 MiB of its 64.0 MiB limit";
  a.used = 60 * MiB;
  a.limit = 64 * MiB;
  a.tte_s = 42;
  return a;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(AlertsDelivery, CommandGetsEnvironmentAndJson) {
  std::string dir = test::temp_dir("alerts-cmd");
  Delivery d;
  d.to_stderr = false;
  d.on_alert_cmd = "env | grep '^AIMEM_ALERT_' | sort > " + dir + "/env; cat > " + dir + "/stdin";
  {
    AlertSink sink(d);
    sink.deliver(sample_alert());
    sink.flush();
  }
  std::string env = test::read_file(dir + "/env");
  EXPECT_NE(env.find("AIMEM_ALERT_KEY=headroom:cgroup:/x\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AIMEM_ALERT_SEVERITY=critical\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AIMEM_ALERT_POOL=cgroup:/x\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AIMEM_ALERT_USED_BYTES=62914560\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AIMEM_ALERT_LIMIT_BYTES=67108864\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AIMEM_ALERT_TTE_SECONDS=42\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AIMEM_ALERT_TIME=2025-11-29T15:00:00Z\n"), std::string::npos) << env;
  auto j = nlohmann::json::parse(test::read_file(dir + "/stdin"));
  EXPECT_EQ(j, alert_json(sample_alert()));
  EXPECT_EQ(j["used_bytes"], 62914560);
  EXPECT_EQ(j["severity"], "critical");
  std::filesystem::remove_all(dir);
}

TEST(AlertsDelivery, HangingCommandIsKilledWithinTheTimeout) {
  std::string dir = test::temp_dir("alerts-hang");
  Delivery d;
  d.to_stderr = false;
  d.timeout_ms = 300;
  d.on_alert_cmd = "sleep 30 & echo $! > " + dir + "/pid; wait";
  auto t0 = std::chrono::steady_clock::now();
  {
    AlertSink sink(d);
    sink.deliver(sample_alert());
    EXPECT_LT(seconds_since(t0), 0.2) << "deliver() must not wait for the command";
    sink.flush();
  }
  EXPECT_LT(seconds_since(t0), 2.0);
  std::string pid = std::string(text::trim(test::read_file(dir + "/pid")));
  ASSERT_FALSE(pid.empty());
  // The background sleep was in the command's process group: gone, or a zombie awaiting its reaper.
  // SIGKILL takes effect when the process next runs: allow it a moment (slower under sanitizers).
  std::string line;
  char state = '?';
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + pid + "/stat");
    if (!std::getline(stat, line)) {
      state = 'g';  // gone
      break;
    }
    auto close = line.rfind(')');
    ASSERT_NE(close, std::string::npos);
    state = line[close + 2];
    if (state == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(state == 'Z' || state == 'g') << line;
  std::filesystem::remove_all(dir);
}

// Runs `body` with stderr going to a file; returns what was written.
template <typename F>
std::string capture_stderr(F body) {
  std::string path = test::temp_dir("alerts-stderr") + "/err";
  fflush(stderr);
  int saved = dup(2);
  FILE* f = fopen(path.c_str(), "w");
  dup2(fileno(f), 2);
  body();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(f);
  std::string out = test::read_file(path);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  return out;
}

TEST(AlertsDelivery, WebhookPostsTheAlertJson) {
  httplib::Server server;
  std::string body, content_type;
  server.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    body = req.body;
    content_type = req.get_header_value("Content-Type");
    res.set_content("ok", "text/plain");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread th([&] { server.listen_after_bind(); });
  Delivery d;
  d.to_stderr = false;
  d.timeout_ms = 2000;
  d.webhook_url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  {
    AlertSink sink(d);
    sink.deliver(sample_alert());
    sink.flush();
  }
  server.stop();
  th.join();
  ASSERT_FALSE(body.empty());
  EXPECT_EQ(content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(body), alert_json(sample_alert()));
}

TEST(AlertsDelivery, UnansweredWebhookIsBoundedAndReportedOnce) {
  // A loopback socket that listens but never accepts: connect succeeds (backlog), no answer ever comes.
  int port = 0;
  int fd = test::bound_loopback_socket(&port);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(listen(fd, 8), 0);
  Delivery d;
  d.to_stderr = false;
  d.timeout_ms = 300;
  d.webhook_url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  double elapsed = 0;
  std::string err = capture_stderr([&] {
    auto t0 = std::chrono::steady_clock::now();
    AlertSink sink(d);
    sink.deliver(sample_alert());
    sink.deliver(sample_alert());
    sink.flush();
    elapsed = seconds_since(t0);
  });
  close(fd);
  EXPECT_LT(elapsed, 3.0);  // two deliveries, each cut off after ~300 ms (write + read timeouts)
  size_t reports = 0;
  for (size_t at = err.find("delivery to webhook"); at != std::string::npos; at = err.find("delivery to webhook", at + 1))
    ++reports;
  EXPECT_EQ(reports, 1u) << err;
}

TEST(AlertsDelivery, WebhookWithoutHttpSchemeIsAClearError) {
  Delivery d;
  d.to_stderr = false;
  d.webhook_url = "ftp://127.0.0.1/x";
  std::string err = capture_stderr([&] {
    AlertSink sink(d);
    sink.deliver(sample_alert());
    sink.flush();
  });
  EXPECT_NE(err.find("webhook ftp://127.0.0.1/x failed: the URL must start with http:// or https://"), std::string::npos) << err;
}

TEST(AlertsDelivery, LogGetsOneJsonLinePerAlertAndStderrALine) {
  std::string dir = test::temp_dir("alerts-log");
  Delivery d;
  d.log_path = dir + "/alerts.jsonl";
  std::string err = capture_stderr([&] {
    AlertSink sink(d);
    for (int i = 0; i < 3; ++i) {
      Alert a = sample_alert();
      a.key += std::to_string(i);
      sink.deliver(a);
    }
  });
  std::istringstream in(test::read_file(d.log_path));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["key"], "headroom:cgroup:/x" + std::to_string(n));
    EXPECT_EQ(j["limit_bytes"], 64 * MiB);
    ++n;
  }
  EXPECT_EQ(n, 3);
  EXPECT_NE(err.find("aimem alert [critical] cgroup /x uses 60.0 MiB of its 64.0 MiB limit\n"), std::string::npos)
      << err;
  std::filesystem::remove_all(dir);
}

TEST(AlertsDelivery, UnwritableLogIsReportedNotFatal) {
  Delivery d;
  d.to_stderr = false;
  d.log_path = "/nonexistent-dir/alerts.jsonl";
  std::string err = capture_stderr([&] {
    AlertSink sink(d);
    sink.deliver(sample_alert());
    sink.deliver(sample_alert());
  });
  EXPECT_NE(err.find("/nonexistent-dir/alerts.jsonl"), std::string::npos) << err;
  EXPECT_EQ(err.find("failed"), err.rfind("failed")) << "reported once: " << err;
}

}  // namespace
}  // namespace aimem::watch
