// `aimem diagnose` through the real binary: the JSON contract, exit codes,
// what the client saw (--exit-code), and bad input of every kind.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

using nlohmann::json;

// A --root with nothing but host memory: live mode that finds no failure.
std::string quiet_root() {
  std::string root = test::temp_dir("quiet");
  std::string cmd = "mkdir -p " + root + "/proc";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  test::write_file(root + "/proc/meminfo", "MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n");
  test::write_file(root + "/proc/stat", "btime 1764400000\n");
  return root;
}

TEST(DiagnoseCli, JsonContractFields) {
  std::string dir = test::temp_dir("json");
  test::write_file(dir + "/dmesg.txt",
                   "[  518.050606] Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB\n");
  auto r = test::run_aimem({"diagnose", "--json", dir + "/dmesg.txt"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "host_ram");
  EXPECT_TRUE(j["confidence"].is_number());
  ASSERT_EQ(j["incidents"].size(), 1u);
  const json& inc = j["incidents"][0];
  for (const char* key : {"layer", "cause", "confidence", "summary", "time", "process", "pool", "evidence", "fixes", "next_checks"})
    EXPECT_TRUE(inc.contains(key)) << key;
  EXPECT_EQ(inc["process"]["name"], "python3");
  EXPECT_EQ(inc["process"]["pid"], 15784);
  EXPECT_TRUE(inc["time"].is_null());  // uptime only, no boot time: never guessed
  ASSERT_FALSE(inc["evidence"].empty());
  EXPECT_EQ(inc["evidence"][0]["source"], "kernel log");
  EXPECT_NE(inc["evidence"][0]["where"].get<std::string>().find("line 1"), std::string::npos);
  EXPECT_FALSE(inc["fixes"].empty());
}

TEST(DiagnoseCli, ExitCodeAloneIsUnknownWithTheChecksThatDecide) {
  auto r = test::run_aimem({"diagnose", "--root", quiet_root(), "--exit-code", "137", "--json"}, {}, {"AIMEM_NVML_LIBRARY=/nonexistent"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "unknown");
  auto checks = j["incidents"][0]["next_checks"].dump();
  EXPECT_NE(checks.find("free -h"), std::string::npos);
  EXPECT_NE(checks.find("dmesg -T"), std::string::npos);
  EXPECT_NE(checks.find("nvidia-smi"), std::string::npos);
  EXPECT_NE(checks.find("docker inspect"), std::string::npos);
  EXPECT_NE(checks.find("journalctl -u"), std::string::npos);
  EXPECT_NE(checks.find("kubectl describe pod"), std::string::npos);
}

TEST(DiagnoseCli, ExitCodeWithOomKilledIsContainerLimit) {
  std::string dir = test::temp_dir("inspect");
  test::write_file(dir + "/inspect.json", R"([
    {
        "Id": "4f1e2d3c4b5a6978",
        "Name": "/vllm",
        "State": {
            "Status": "exited",
            "Running": false,
            "OOMKilled": true,
            "Dead": false,
            "Pid": 0,
            "ExitCode": 137,
            "Error": "",
            "FinishedAt": "2026-11-29T15:03:12.123456789Z"
        },
        "HostConfig": {
            "Memory": 17179869184,
            "MemorySwap": 17179869184
        }
    }
])");
  auto r = test::run_aimem({"diagnose", "--json", "--exit-code", "137", dir + "/inspect.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["layer"], "container_limit");
  EXPECT_EQ(j["incidents"][0]["pool"]["limit_bytes"], 17179869184ULL);
}

TEST(DiagnoseCli, ExitCodeWithLivenessProbeKillIsNotMemory) {
  std::string events =
      "LAST SEEN   TYPE      REASON      OBJECT          MESSAGE\n"
      "2m          Warning   Unhealthy   pod/api-7d9f    Liveness probe failed: Get \"http://10.1.2.3:8080/healthz\": context deadline exceeded\n"
      "2m          Normal    Killing     pod/api-7d9f    Container api failed liveness probe, will be restarted\n";
  auto r = test::run_aimem({"diagnose", "--json", "--exit-code", "137", "-"}, events);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["layer"], "not_memory");
}

TEST(DiagnoseCli, HumanReportNamesPoolEvidenceFixes) {
  std::string dir = test::temp_dir("human");
  test::write_file(dir + "/k.log",
                   "memory: usage 65536kB, limit 65536kB, failcnt 10\n"
                   "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/docker/ab12,task_memcg=/docker/ab12,task=python3,pid=2531,uid=0\n"
                   "Memory cgroup out of memory: Killed process 2531 (python3) total-vm:80000kB, anon-rss:65000kB, file-rss:100kB, shmem-rss:0kB, UID:0 pgtables:128kB oom_score_adj:0\n");
  auto r = test::run_aimem({"diagnose", dir + "/k.log"}, {}, {"NO_COLOR=1"});
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("container_limit"), std::string::npos);
  EXPECT_NE(r.out.find("python3 (pid 2531) was killed when memory cgroup /docker/ab12 reached its 64.0 MiB limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Fixes, least destructive first"), std::string::npos);
  EXPECT_EQ(r.out.find("\033["), std::string::npos);  // no colour into a pipe
}

// --- bad input -------------------------------------------------------------

TEST(BadInput, MissingPathNamesItAndExits2) {
  auto r = test::run_aimem({"diagnose", "/nonexistent/evidence.log"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("/nonexistent/evidence.log"), std::string::npos);
}

TEST(BadInput, EmptyAndBinaryFilesAlone) {
  std::string dir = test::temp_dir("bad");
  test::write_file(dir + "/empty.log", "");
  std::string garbage;
  for (int i = 0; i < 100000; ++i) garbage.push_back(static_cast<char>((i * 7919) & 0xff));
  test::write_file(dir + "/garbage.bin", garbage);
  auto r1 = test::run_aimem({"diagnose", dir + "/empty.log"});
  EXPECT_EQ(r1.status, 2);
  EXPECT_NE(r1.err.find("empty.log: empty input"), std::string::npos) << r1.err;
  auto r2 = test::run_aimem({"diagnose", dir + "/garbage.bin"});
  EXPECT_EQ(r2.status, 2);
  EXPECT_NE(r2.err.find("garbage.bin: binary data"), std::string::npos) << r2.err;
  // Beside a good input they are skipped with a warning and the diagnosis stands.
  test::write_file(dir + "/good.log", "Out of memory: Killed process 9 (java) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n");
  auto r3 = test::run_aimem({"diagnose", "--json", dir + "/garbage.bin", dir + "/good.log", dir + "/empty.log"});
  ASSERT_EQ(r3.status, 0) << r3.err;
  json j = json::parse(r3.out);
  EXPECT_EQ(j["layer"], "host_ram");
  EXPECT_EQ(j["warnings"].size(), 2u);
}

TEST(BadInput, InvalidUtf8AndAHugeLineStillDiagnose) {
  std::string dir = test::temp_dir("utf8");
  std::string text = std::string(10 * 1024 * 1024, 'A') + "\n";
  text += "junk \xff\xfe\xfd then Memory cgroup out of memory: Killed process 77 (w\xffker) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n";
  test::write_file(dir + "/mixed.log", text);
  auto r = test::run_aimem({"diagnose", "--json", dir + "/mixed.log"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);  // valid JSON despite invalid UTF-8 in the evidence
  EXPECT_EQ(j["layer"], "container_limit");
  EXPECT_EQ(j["incidents"][0]["process"]["pid"], 77);
}

TEST(BadInput, TruncatedJsonAndYamlNameTheLine) {
  std::string dir = test::temp_dir("trunc");
  test::write_file(dir + "/cut.json", "[\n  {\n    \"Name\": \"/vllm\",\n    \"State\": {\n      \"OOMKilled\": true,\n      \"ExitCode\": 137\n");
  auto r = test::run_aimem({"diagnose", "--json", dir + "/cut.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_FALSE(j["warnings"].empty());
  std::string w = j["warnings"][0];
  EXPECT_NE(w.find("cut.json: truncated JSON at line"), std::string::npos) << w;
  EXPECT_EQ(j["layer"], "container_limit");  // what was there still counts

  test::write_file(dir + "/cut.yaml", "apiVersion: v1\nkind: Pod\nstatus:\n  containerStatuses:\n  - name: api\n    lastState: {terminated: {reason: OOMKilled, exitCode: 137\n");
  auto y = test::run_aimem({"diagnose", "--json", dir + "/cut.yaml"});
  ASSERT_EQ(y.status, 0) << y.err;
  json jy = json::parse(y.out);
  ASSERT_FALSE(jy["warnings"].empty());
  EXPECT_NE(jy["warnings"][0].get<std::string>().find("cut.yaml: YAML does not parse at line"), std::string::npos) << jy["warnings"];
}

TEST(BadInput, YamlAliasBombIsBounded) {
  std::string dir = test::temp_dir("bomb");
  std::string bomb = "apiVersion: v1\nkind: Pod\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  std::string prev = "a";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ",*" : "*") + prev;
    bomb += "]\n";
    prev = std::string(1, c);
  }
  test::write_file(dir + "/bomb.yaml", bomb);
  auto r = test::run_aimem({"diagnose", "--json", dir + "/bomb.yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["layer"], "none");
}

TEST(BadInput, DeeplyNestedJsonDoesNotOverflow) {
  std::string dir = test::temp_dir("deep");
  test::write_file(dir + "/deep.json", std::string(100000, '[') + std::string(100000, ']'));
  auto r = test::run_aimem({"diagnose", "--json", dir + "/deep.json"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(BadInput, FolderOfThousandsOfFiles) {
  std::string dir = test::temp_dir("many");
  for (int i = 0; i < 3000; ++i) test::write_file(dir + "/f" + std::to_string(i) + ".log", "INFO nothing to see " + std::to_string(i) + "\n");
  test::write_file(dir + "/f2999.log", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
  auto r = test::run_aimem({"diagnose", "--json", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["layer"], "js_heap");
}

TEST(BadInput, UnknownOptionAndBadSinceExit2) {
  EXPECT_EQ(test::run_aimem({"diagnose", "--frobnicate"}).status, 2);
  auto r = test::run_aimem({"diagnose", "--since", "whenever", "-"}, "x\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--since"), std::string::npos);
}

TEST(BadInput, InputsAreNeverWritten) {
  std::string dir = test::temp_dir("ro");
  std::string content = "Out of memory: Killed process 9 (java) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n";
  test::write_file(dir + "/in.log", content);
  ASSERT_EQ(::chmod((dir + "/in.log").c_str(), 0444), 0);
  auto r = test::run_aimem({"diagnose", dir + "/in.log"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(test::read_file(dir + "/in.log"), content);
}

TEST(Commands, EveryCommandOfDesignIsRealAndListed) {
  auto r = test::run_aimem({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* c : {"diagnose", "fit", "run", "watch", "report", "probe", "check", "rules"})
    EXPECT_NE(r.out.find(c), std::string::npos) << c;
  EXPECT_EQ(r.out.find("not yet implemented"), std::string::npos);
  // Each answers --help with examples and exits 0.
  for (const char* c : {"probe", "check", "rules"}) {
    auto h = test::run_aimem({c, "--help"});
    EXPECT_EQ(h.status, 0) << c;
    EXPECT_NE(h.out.find("xample"), std::string::npos) << c << ": " << h.out;
  }
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(BadInput, DmesgStartingWithABracketIsNotJson) {
  std::string dir = test::temp_dir("dmesgT");
  test::write_file(dir + "/dmesg.txt",
                   "[Sat Nov 29 03:00:01 2026] Memory cgroup out of memory: Killed process 2211 (java) total-vm:9123456kB, anon-rss:2090000kB, file-rss:1000kB, shmem-rss:0kB\n"
                   "[Sat Nov 29 03:00:01 2026] Task in /kubepods/burstable/pod1234/abcd killed as a result of limit of /kubepods/burstable/pod1234\n");
  auto r = test::run_aimem({"diagnose", "--json", dir + "/dmesg.txt"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
  // The limit line comes after the victim line and still decides the layer.
  EXPECT_EQ(j["layer"], "k8s_pod_limit");
  EXPECT_EQ(j["incidents"][0]["pool"]["name"], "cgroup /kubepods/burstable/pod1234");
}

}  // namespace
}  // namespace aimem
