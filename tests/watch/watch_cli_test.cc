// `aimem watch` end to end on this machine: a real OOM kill in a cgroup the
// test creates is diagnosed as it happens and stored with its counters and
// the timeline before it; /metrics and /healthz answer on loopback and the
// real Prometheus scrapes them; a bad configuration names file and line.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/prometheus_harness.h"
#include "support/test_support.h"
#include "support/watch_process.h"
#include "sources/cgroup_ctl.h"
#include "watch/store.h"

namespace aimem {
namespace {

using nlohmann::json;

using test::cgroups_v1_writable;
using test::wait_healthy;
using test::Watch;

TEST(WatchCli, DiagnosesARealOomKillAsItHappens) {
  if (!cgroups_v1_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  std::string dir = test::temp_dir("watch-oom");
  auto cg = test::take(watch::RunCgroup::create("/", "aimem-test-watch-" + std::to_string(getpid()), 40ull << 20));
  ASSERT_TRUE(cg);
  int port = test::free_loopback_port();
  Watch w({"--interval", "200ms", "--db", dir + "/w.db", "--listen", "127.0.0.1:" + std::to_string(port), "--cgroup",
           cg->path()},
          dir + "/watch.log");
  ASSERT_TRUE(wait_healthy(port, 20)) << test::read_file(dir + "/watch.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a few samples before the kill

  pid_t child = fork();
  if (child == 0) {
    std::ofstream(cg->dir() + "/cgroup.procs") << getpid();
    execl(AIMEM_TEST_ALLOC, AIMEM_TEST_ALLOC, "2", "30", "400", (char*)nullptr);
    _exit(126);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(w.stop(), 0);
  cg.reset();  // removes the cgroup

  auto store = test::take(watch::Store::open(dir + "/w.db", watch::Retention{}));
  ASSERT_TRUE(store);
  auto kills = store->events(0, INT64_MAX, "oom_kill");
  ASSERT_EQ(kills.size(), 1u) << test::read_file(dir + "/watch.log");
  json body = json::parse(kills[0].body);
  EXPECT_EQ(body["diagnosis"]["layer"], "container_limit");
  EXPECT_EQ(kills[0].key, "cgroup:" + body["cgroup"].get<std::string>());
  EXPECT_NE(body["cgroup"].get<std::string>().find("aimem-test-watch-"), std::string::npos);
  EXPECT_GE(body["window_samples"].get<int>(), 2);
  EXPECT_TRUE(body["counters"]["found"].get<bool>());
  // The counters read at the kill, and their steps since the last sample.
  ASSERT_TRUE(body["counters"].contains("at_kill")) << body["counters"].dump();
  EXPECT_GE(body["counters"]["at_kill"]["peak"].get<uint64_t>(), 36ull << 20);
  EXPECT_GE(body["counters"]["at_kill"]["oom_kill"].get<uint64_t>(), 1u);
  ASSERT_TRUE(body["counters"]["deltas"].contains("oom_kill")) << body["counters"].dump();
  EXPECT_GE(body["counters"]["deltas"]["oom_kill"].get<int64_t>(), 1);
  EXPECT_NE(kills[0].summary.find("aimem_test_allo"), std::string::npos) << kills[0].summary;  // comm: 15 chars
  EXPECT_GE(store->sample_count(), 5u);
  // One kill, one event: the eventfd on memory.oom_control woke the watch at
  // once, and the cgroup's counter stepped, but both are told in the kill's
  // event rather than stored beside it (issue 19: "2 OOM events" for one kill).
  EXPECT_EQ(store->events(0, INT64_MAX, "oom_event").size(), 0u) << test::read_file(dir + "/watch.log");
  ASSERT_TRUE(body.contains("notification")) << body.dump();
  EXPECT_EQ(body["notification"]["source"], "eventfd");
  EXPECT_EQ(body["notification"]["cgroup"], body["cgroup"]);
  EXPECT_LT(std::llabs(body["notification"]["time_us"].get<int64_t>() - kills[0].time_us), 2000000LL);
  EXPECT_NE(test::read_file(dir + "/watch.log").find(", 1 OOM events,"), std::string::npos) << test::read_file(dir + "/watch.log");
}

// Without the kernel log (--no-kernel-log, or a /dev/kmsg it cannot read) a
// kill is seen by the OOM notification and by the samples' counters: still
// one event, stored from the counters.
TEST(WatchCli, OneEventPerKillFromTheCountersAlone) {
  if (!cgroups_v1_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  std::string dir = test::temp_dir("watch-oom-counters");
  auto cg = test::take(watch::RunCgroup::create("/", "aimem-test-watchc-" + std::to_string(getpid()), 32ull << 20));
  ASSERT_TRUE(cg);
  int port = test::free_loopback_port();
  Watch w({"--interval", "200ms", "--db", dir + "/w.db", "--listen", "127.0.0.1:" + std::to_string(port), "--cgroup",
           cg->path(), "--no-kernel-log"},
          dir + "/watch.log");
  ASSERT_TRUE(wait_healthy(port, 20)) << test::read_file(dir + "/watch.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  pid_t child = fork();
  if (child == 0) {
    std::ofstream(cg->dir() + "/cgroup.procs") << getpid();
    execl(AIMEM_TEST_ALLOC, AIMEM_TEST_ALLOC, "2", "30", "400", (char*)nullptr);
    _exit(126);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // samples after the kill, within the 5 s grace
  EXPECT_EQ(w.stop(), 0);  // a step still waiting for a report is stored at the stop
  std::string log = test::read_file(dir + "/watch.log");
  cg.reset();

  auto store = test::take(watch::Store::open(dir + "/w.db", watch::Retention{}));
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->events(0, INT64_MAX, "oom_kill").empty()) << log;
  auto events = store->events(0, INT64_MAX, "oom_event");
  ASSERT_EQ(events.size(), 1u) << log;
  json body = json::parse(events[0].body);
  EXPECT_EQ(body["cgroup"].get<std::string>().find("/aimem-test-watchc-") != std::string::npos, true) << body.dump();
  EXPECT_EQ(body["oom_kill_delta"], 1);
  EXPECT_EQ(body["source"], "counters");
  EXPECT_NE(events[0].summary.find("memory.oom_control"), std::string::npos) << events[0].summary;
  EXPECT_NE(log.find(", 1 OOM events,"), std::string::npos) << log;
}

// Voluntary context switches of every thread of a process: each one a sleep
// and its wake-up (the involuntary ones are preemptions, which the load of
// other processes decides).
uint64_t wakeups(pid_t pid) {
  uint64_t n = 0;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(tasks)) {
    std::ifstream in(t.path() / "status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
        n += std::stoull(line.substr(line.find(':') + 1));
  }
  return n;
}

// An idle `aimem watch` (the whole host, store and /metrics on, 1 s) sleeps
// until its next sample or an event: it slept in 20 ms slices and woke
// about 50 times a second (issue 18). A sample is one wake-up; the bound
// leaves room for kernel log records other tests cause (an OOM report is a
// burst of them) and for a sample's own waits.
TEST(WatchCli, IdleWatchWakesOnlyToSample) {
  std::string dir = test::temp_dir("watch-idle");
  int port = test::free_loopback_port();
  Watch w({"--interval", "1s", "--db", dir + "/w.db", "--listen", "127.0.0.1:" + std::to_string(port)}, dir + "/watch.log");
  ASSERT_TRUE(wait_healthy(port, 20)) << test::read_file(dir + "/watch.log");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // start-up, the first samples
  const uint64_t before = wakeups(w.pid);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(6));
  const uint64_t after = wakeups(w.pid);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double rate = static_cast<double>(after - before) / secs;
  EXPECT_EQ(w.stop(), 0);
  EXPECT_LE(rate, 4.0) << (after - before) << " wake-ups in " << secs << " s\n" << test::read_file(dir + "/watch.log");
  auto store = test::take(watch::Store::open(dir + "/w.db", watch::Retention{}));
  ASSERT_TRUE(store);
  EXPECT_GE(store->sample_count(), 8u);  // it did sample, once a second
}

TEST(WatchCli, RealPrometheusScrapesWatch) {
  if (!test::PrometheusHarness::available()) GTEST_SKIP() << "the prometheus package is not installed";
  std::string dir = test::temp_dir("watch-prom");
  std::string err;
  std::unique_ptr<watch::RunCgroup> cg;
  std::string label = "/";
  if (cgroups_v1_writable()) {
    cg = test::take(watch::RunCgroup::create("/", "aimem-test-prom-" + std::to_string(getpid()), 64ull << 20));
    ASSERT_TRUE(cg);
    label = cg->path();
  }
  int port = test::free_loopback_port();
  std::vector<std::string> args{"--interval", "500ms", "--no-store", "--listen", "127.0.0.1:" + std::to_string(port)};
  if (cg) args.insert(args.end(), {"--cgroup", cg->path()});
  Watch w(args, dir + "/watch.log");
  ASSERT_TRUE(wait_healthy(port, 20)) << test::read_file(dir + "/watch.log");
  httplib::Client c("127.0.0.1", port);
  // The listener answers before the first sample is taken (slow under the
  // sanitizers): wait for the first sample's series, 20 s at most.
  bool sampled = false;
  for (int i = 0; i < 100 && !sampled; ++i) {
    auto metrics = c.Get("/metrics");
    ASSERT_TRUE(metrics);
    sampled = metrics->body.find("aimem_memory_used_bytes") != std::string::npos;
    if (!sampled) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(sampled) << test::read_file(dir + "/watch.log");

  test::PrometheusHarness prom;
  ASSERT_TRUE(prom.start("127.0.0.1:" + std::to_string(port), &err)) << err;
  std::string query = "aimem_memory_used_bytes{pool=\"cgroup\",cgroup=\"" + label + "\"}";
  std::string last;
  auto value = prom.query_until(query, 40, &last);
  ASSERT_TRUE(value) << "Prometheus never returned " << query << ": " << last << "\n" << prom.log();
  EXPECT_GE(*value, 0.0);
  if (cg) {
    EXPECT_LE(*value, 64.0 * 1024 * 1024);
  }
}

TEST(WatchCli, BadConfigurationNamesFileAndLine) {
  std::string dir = test::temp_dir("watch-cfg");
  test::write_file(dir + "/aimem.yaml", "interval: 1s\nretention:\n  max_age: 2d\n  max_sise: 1GiB\n");
  auto r = test::run_aimem({"watch", "--config", dir + "/aimem.yaml", "--no-serve", "--no-store", "--duration", "1s"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("aimem.yaml: line 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_sise"), std::string::npos) << r.err;
  test::write_file(dir + "/bad.yaml", "interval: soon\n");
  r = test::run_aimem({"watch", "--config", dir + "/bad.yaml", "--no-serve", "--no-store", "--duration", "1s"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("line 1"), std::string::npos) << r.err;
  // The documented example configuration loads.
  r = test::run_aimem({"watch", "--config", test::source_dir() + "/deploy/aimem.yaml", "--no-serve", "--no-store",
                       "--no-kernel-log", "--duration", "1s", "--interval", "200ms"});
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace aimem
