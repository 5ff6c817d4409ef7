// `aimem run` end to end, with real processes and a real cgroup v1 memory
// limit on this machine: a real OOM kill (exit status 137 passed through,
// diagnosed as container_limit, the recording showing usage rising to the
// limit), a real V8 heap failure (js_heap), a well-behaved command (its
// status passed through, no alarm), a time-to-exhaustion alert that precedes
// the kill in the store, signal forwarding, and a command that cannot run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/test_support.h"
#include "sources/cgroup_ctl.h"
#include "watch/store.h"

namespace aimem {
namespace {

using nlohmann::json;

bool cgroups_writable() {
  auto h = find_memory_hierarchy("/");
  if (h.version == 0) return false;
  std::string own = own_memory_cgroup("/");
  return access((h.mount + (own == "/" ? "" : own)).c_str(), W_OK) == 0;
}

std::string node_path() {
  for (const char* p : {"/usr/bin/node", "/usr/local/bin/node"})
    if (access(p, X_OK) == 0) return p;
  return {};
}

// The JSON report is the last thing on stdout.
json last_json(const std::string& out) {
  size_t at = out.rfind("\n{");
  return json::parse(at == std::string::npos ? out : out.substr(at + 1));
}

TEST(RunCgroup, CreatesLimitsAndRemovesItsOwnCgroup) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable memory cgroup here";
  auto cg = test::take(watch::RunCgroup::create("/", "aimem-test-ctl-" + std::to_string(getpid()), 32ull << 20));
  ASSERT_TRUE(cg);
  struct stat st{};
  ASSERT_EQ(stat(cg->dir().c_str(), &st), 0);
  std::string limit_file = cg->version() == 1 ? "/memory.limit_in_bytes" : "/memory.max";
  EXPECT_EQ(std::stoull(test::read_file(cg->dir() + limit_file)), 32ull << 20);
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_EQ(test::error_of(cg->add_process(child)), "");
  auto pids = cg->pids();
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_EQ(pids[0], child);
  cg->kill_all();
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  std::string dir = cg->dir();
  ASSERT_EQ(test::error_of(cg->remove()), "");
  EXPECT_NE(stat(dir.c_str(), &st), 0);
}

TEST(RunCli, RealOomKillIsPassedThroughDiagnosedAndRecorded) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable memory cgroup here";
  std::string dir = test::temp_dir("run-oom");
  std::string db = dir + "/run.db";
  auto r = test::run_aimem({"run", "--memory-limit", "48M", "--interval", "100ms", "--record", db, "--json", "--no-gpus",
                            "--", AIMEM_TEST_ALLOC, "2", "40", "400"});
  ASSERT_EQ(r.status, 137) << r.err << r.out;
  json j = last_json(r.out);
  EXPECT_EQ(j["exit_status"], 137);
  EXPECT_EQ(j["signal"], 9);
  ASSERT_TRUE(j["diagnosis"].is_object()) << r.out;
  EXPECT_EQ(j["diagnosis"]["layer"], "container_limit") << j["diagnosis"].dump(2);
  std::string cgroup = j["cgroup"]["path"];
  EXPECT_NE(cgroup.find("aimem-run-"), std::string::npos);
  EXPECT_EQ(j["cgroup"]["limit_bytes"], 48ull << 20);
  EXPECT_GE(j["cgroup"]["oom_kills"].get<uint64_t>(), 1u);
  // The cgroup is gone.
  auto h = find_memory_hierarchy("/");
  struct stat st{};
  EXPECT_NE(stat((h.mount + cgroup).c_str(), &st), 0);

  // The recording: usage rising to the limit.
  auto store = test::take(watch::Store::open(db, watch::Retention{}));
  ASSERT_TRUE(store);
  auto samples = store->samples(0, INT64_MAX);
  ASSERT_GE(samples.size(), 5u);
  std::vector<uint64_t> usage;
  for (const auto& s : samples)
    for (const auto& c : s.cgroups)
      if (c.path == cgroup && c.usage) usage.push_back(*c.usage);
  ASSERT_GE(usage.size(), 5u);
  EXPECT_LT(usage.front(), 24ull << 20);
  uint64_t top = *std::max_element(usage.begin(), usage.end());
  EXPECT_GE(top, 40ull << 20) << "usage never approached the 48 MiB limit";
  size_t rises = 0;
  for (size_t i = 1; i < usage.size(); ++i) rises += usage[i] > usage[i - 1];
  EXPECT_GE(rises, usage.size() / 2);
  auto exits = store->events(0, INT64_MAX, "exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(json::parse(exits[0].body)["diagnosis"]["layer"], "container_limit");
  EXPECT_EQ(store->meta("exit_status").value_or(""), "137");
}

TEST(RunCli, TimeToExhaustionAlertFiresBeforeTheKill) {
  if (!cgroups_writable()) GTEST_SKIP() << "no writable memory cgroup here";
  std::string dir = test::temp_dir("run-tte");
  std::string db = dir + "/run.db";
  // 1 MiB every 100 ms into a 40 MiB limit: about 4 s to the kill.
  auto r = test::run_aimem({"run", "--memory-limit", "40M", "--interval", "100ms", "--record", db, "--json", "--no-gpus",
                            "--", AIMEM_TEST_ALLOC, "1", "100", "400"});
  ASSERT_EQ(r.status, 137) << r.err;
  std::string err;
  auto store = test::take(watch::Store::open(db, watch::Retention{}));
  ASSERT_TRUE(store);
  auto alerts = store->events(0, INT64_MAX, "alert");
  auto exits = store->events(0, INT64_MAX, "exit");
  ASSERT_EQ(exits.size(), 1u);
  ASSERT_FALSE(alerts.empty()) << r.err;
  bool tte = false;
  for (const auto& a : alerts) {
    json body = json::parse(a.body);
    EXPECT_LT(a.time_us, exits[0].time_us);
    if (body.contains("tte_seconds") && !body["tte_seconds"].is_null()) tte = true;
  }
  EXPECT_TRUE(tte) << "no alert carried a time-to-exhaustion forecast";
  EXPECT_LT(alerts.front().time_us, exits[0].time_us - 500000) << "the first alert came less than 0.5 s before the kill";
}

TEST(RunCli, NodeHeapLimitIsJsHeap) {
  std::string node = node_path();
  if (node.empty()) GTEST_SKIP() << "node is not installed";
  auto r = test::run_aimem({"run", "--json", "--interval", "100ms", "--no-gpus", "--", node, "--max-old-space-size=16",
                            "-e", "const a = []; for (;;) a.push(new Array(1e5).fill(1));"});
  ASSERT_NE(r.status, 0);
  ASSERT_NE(r.err.find("heap"), std::string::npos) << "node's stderr was not passed through: " << r.err;
  json j = last_json(r.out);
  EXPECT_EQ(j["exit_status"], r.status);
  ASSERT_TRUE(j["diagnosis"].is_object());
  EXPECT_EQ(j["diagnosis"]["layer"], "js_heap") << j["diagnosis"].dump(2);
}

TEST(RunCli, WellBehavedCommandPassesItsStatusWithoutAlarm) {
  auto ok = test::run_aimem({"run", "--memory-limit", "256M", "--interval", "100ms", "--json", "--no-gpus", "--",
                             AIMEM_TEST_ALLOC, "4", "20", "16", "300"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  json j = last_json(ok.out);
  EXPECT_TRUE(j["diagnosis"].is_null());
  EXPECT_TRUE(j["alerts"].empty()) << j["alerts"].dump();
  EXPECT_GE(j["samples"].get<int>(), 3);
  auto three = test::run_aimem({"run", "-q", "--no-gpus", "--", "/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(three.status, 3);
  EXPECT_NE(three.out.find("out"), std::string::npos);
  EXPECT_NE(three.err.find("err"), std::string::npos);
}

// Starts `aimem run -- /bin/sleep 30` with its output to /dev/null.
pid_t start_sleeping_run() {
  pid_t pid = fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(AIMEM_BINARY, AIMEM_BINARY, "run", "--no-gpus", "--", "/bin/sleep", "30", (char*)nullptr);
    _exit(126);
  }
  return pid;
}

TEST(RunCli, ForwardsSignalsAndReportsCommandsThatCannotRun) {
  std::string dir = test::temp_dir("run-sig");
  // aimem run in the background; SIGTERM to aimem reaches the command.
  pid_t pid = start_sleeping_run();
  // Until aimem has forked the command (or 15 s: a loaded machine, a sanitizer's start-up).
  for (int i = 0; i < 300; ++i) {
    std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    pid_t first = 0;
    if (children >> first && first > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_LT(secs, 10.0);

  auto missing = test::run_aimem({"run", "--no-gpus", "--", "/nonexistent/cmd"});
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.err.find("/nonexistent/cmd"), std::string::npos);
  auto bad = test::run_aimem({"run", "--memory-limit", "lots", "--", "/bin/true"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--memory-limit"), std::string::npos);
}

// A SIGTERM at any moment of aimem's start-up either ends aimem before it
// forwards signals (killed by SIGTERM, no command started) or reaches the
// command (exit 143); never anything else. A SIGTERM just after the fork once
// ended the command before it read its go-ahead, and aimem died of SIGPIPE on
// that write (one run in about 200 under the sanitizers). The delays sweep
// the start-up as long as it takes on this machine and build: twice the
// slowest of three measured start-ups, as a loaded machine (the sanitizers'
// suite beside it) makes one start-up take twice another's.
TEST(RunCli, SigtermAtAnyMomentOfTheStartUpEndsTheRunCleanly) {
  std::chrono::steady_clock::duration start_up{};
  int status = 0;
  for (int round = 0; round < 3; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    pid_t first = start_sleeping_run();
    bool running = false;
    for (int i = 0; i < 3000 && !running; ++i) {  // until `sleep` runs (15 s at most)
      std::ifstream children("/proc/" + std::to_string(first) + "/task/" + std::to_string(first) + "/children");
      for (pid_t c; children >> c;) {
        std::ifstream comm("/proc/" + std::to_string(c) + "/comm");
        std::string name;
        if (comm >> name && name == "sleep") running = true;
      }
      if (!running) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    start_up = std::max(start_up, std::chrono::steady_clock::now() - t0);
    kill(first, SIGTERM);
    waitpid(first, &status, 0);
    ASSERT_TRUE(running);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  }

  const int kRuns = 40;
  int forwarded = 0;
  for (int i = 0; i < kRuns; ++i) {
    pid_t pid = start_sleeping_run();
    std::this_thread::sleep_for(start_up * 2 * i / kRuns);
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    bool before = WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
    bool reached = WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM;
    EXPECT_TRUE(before || reached) << "run " << i << ": status " << status
                                   << (WIFSIGNALED(status) ? " (killed by signal " + std::to_string(WTERMSIG(status)) + ")" : "");
    forwarded += reached;
  }
  EXPECT_GE(forwarded, kRuns / 4);  // the sweep did reach the forwarding window
}

}  // namespace
}  // namespace aimem
