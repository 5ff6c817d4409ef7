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
#include <fstream>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/prometheus_harness.h"
#include "support/test_support.h"
#include "sources/cgroup_ctl.h"
#include "watch/store.h"

namespace aimem {
namespace {

using nlohmann::json;

// `aimem watch ARGS` in the background; stopped with SIGTERM on destruction.
struct Watch {
  pid_t pid = -1;
  std::string log;
  explicit Watch(const std::vector<std::string>& args, const std::string& log_path) : log(log_path) {
    pid = fork();
    if (pid == 0) {
      int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv{const_cast<char*>(AIMEM_BINARY), const_cast<char*>("watch")};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      setenv("AIMEM_NVML_LIBRARY", "/nonexistent", 1);
      execv(AIMEM_BINARY, argv.data());
      _exit(126);
    }
  }
  int stop() {
    if (pid <= 0) return -1;
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~Watch() { stop(); }
};

bool wait_healthy(int port, int seconds) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1);
  for (int i = 0; i < seconds * 10; ++i) {
    if (auto r = c.Get("/healthz"); r && r->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool cgroups_writable() {
  auto h = find_memory_hierarchy("/");
  if (h.version != 1) return false;  // the test writes v1 files
  std::string own = own_memory_cgroup("/");
  return access((h.mount + (own == "/" ? "" : own)).c_str(), W_OK) == 0;
}

TEST(WatchCli, DiagnosesARealOomKillAsItHappens) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  std::string dir = test::temp_dir("watch-oom");
  std::string err;
  auto cg = watch::RunCgroup::create("/", "aimem-test-watch-" + std::to_string(getpid()), 40ull << 20, &err);
  ASSERT_TRUE(cg) << err;
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

  auto store = watch::Store::open(dir + "/w.db", watch::Retention{}, &err);
  ASSERT_TRUE(store) << err;
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
  // The eventfd on memory.oom_control woke the watch at once as well.
  auto notes = store->events(0, INT64_MAX, "oom_event");
  ASSERT_FALSE(notes.empty());
  json note = json::parse(notes[0].body);
  EXPECT_EQ(note["source"], "eventfd");
  EXPECT_EQ(note["cgroup"], body["cgroup"]);
  EXPECT_LT(std::llabs(notes[0].time_us - kills[0].time_us), 2000000LL);
}

TEST(WatchCli, RealPrometheusScrapesWatch) {
  if (!test::PrometheusHarness::available()) GTEST_SKIP() << "the prometheus package is not installed";
  std::string dir = test::temp_dir("watch-prom");
  std::string err;
  std::unique_ptr<watch::RunCgroup> cg;
  std::string label = "/";
  if (cgroups_writable()) {
    cg = watch::RunCgroup::create("/", "aimem-test-prom-" + std::to_string(getpid()), 64ull << 20, &err);
    ASSERT_TRUE(cg) << err;
    label = cg->path();
  }
  int port = test::free_loopback_port();
  std::vector<std::string> args{"--interval", "500ms", "--no-store", "--listen", "127.0.0.1:" + std::to_string(port)};
  if (cg) args.insert(args.end(), {"--cgroup", cg->path()});
  Watch w(args, dir + "/watch.log");
  ASSERT_TRUE(wait_healthy(port, 20)) << test::read_file(dir + "/watch.log");
  httplib::Client c("127.0.0.1", port);
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("aimem_memory_used_bytes"), std::string::npos);

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
