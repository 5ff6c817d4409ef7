// Large inputs are read through the gate (recognize/gate.h): the full
// patterns only run over the head and around blocks where a failure word
// occurs. The diagnosis must be the same as a full scan's, line numbers
// included.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

using nlohmann::json;

TEST(LargeInput, GatedScanFindsWhatAFullScanFinds) {
  std::string dir = test::temp_dir("large");
  std::string path = dir + "/big.log";
  {
    std::ofstream out(path);
    const std::string filler = "2026-11-29T10:00:00.000Z INFO  [app.worker] processed request id=123456 tokens=512 latency_ms=42\n";
    uint64_t line = 0;
    for (; line < 700000; ++line) out << filler;  // ~67 MiB before the failure
    out << "$ docker run -m 4g --name embedder embedder:1.2\n";
    for (int i = 0; i < 30; ++i, ++line) out << filler;
    out << "memory: usage 4194304kB, limit 4194304kB, failcnt 1273\n"
           "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/docker/4f1e2d3c4b5a,task_memcg=/docker/4f1e2d3c4b5a,task=python3,pid=31337,uid=0\n"
           "Memory cgroup out of memory: Killed process 31337 (python3) total-vm:5242880kB, anon-rss:4190000kB, file-rss:4000kB, shmem-rss:0kB, UID:0 pgtables:8400kB oom_score_adj:0\n";
    for (int i = 0; i < 200000; ++i) out << filler;
  }
  auto gated = test::run_aimem({"diagnose", "--json", path});
  auto full = test::run_aimem({"diagnose", "--json", path}, {}, {"AIMEM_NO_GATE=1"});
  ASSERT_EQ(gated.status, 0) << gated.err;
  ASSERT_EQ(full.status, 0) << full.err;
  json g = json::parse(gated.out), f = json::parse(full.out);
  EXPECT_EQ(g["layer"], "container_limit");
  EXPECT_EQ(g["cause"], "limit_too_low");  // the docker run -m 4g line 30 lines before counts
  EXPECT_EQ(g["incidents"], f["incidents"]);
  std::string where = g["incidents"][0]["evidence"][0]["where"];
  EXPECT_NE(where.find("line 700034"), std::string::npos) << where;
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(LargeInput, ProgressBarOnlyOnATerminal) {
  if (access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "script(1) is not installed (package bsdutils)";
  std::string dir = test::temp_dir("progress");
  std::string path = dir + "/big.log";
  {
    std::ofstream out(path);
    std::string filler(99, 'x');
    filler += '\n';
    for (int i = 0; i < 1'100'000; ++i) out << filler;  // 110 MB
  }
  auto plain = test::run_aimem({"diagnose", path});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.err.find('%'), std::string::npos) << plain.err;  // not a terminal: no bar
  auto tty = test::run({"/usr/bin/script", "-qc", std::string(AIMEM_BINARY) + " diagnose " + path + " > /dev/null", "/dev/null"});
  ASSERT_EQ(tty.status, 0) << tty.err;
  EXPECT_NE(tty.out.find("100% "), std::string::npos) << tty.out.substr(0, 400);
  EXPECT_NE(tty.out.find("of 105 MiB"), std::string::npos) << tty.out.substr(0, 400);
}

}  // namespace
}  // namespace aimem
