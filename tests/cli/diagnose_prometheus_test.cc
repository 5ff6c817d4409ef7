// aimem diagnose --prometheus against a real Prometheus (the Debian package)
// on loopback, holding series written in the exporters' own format
// (tests/fixtures/prometheus/make_fixtures.py, which cites the definitions
// they follow) and backfilled with promtool: a pod OOMKilled at its limit
// (kube-state-metrics + cAdvisor), a GPU whose framebuffer filled (DCGM), a
// node that ran out of RAM (node_exporter + aimem), and the errors: a series
// that is missing, a server that cannot be reached, answers that are not the
// API. One Prometheus for the suite, stopped by its pid at the end.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/loopback_http.h"
#include "support/prometheus_harness.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using nlohmann::json;

class DiagnosePrometheus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!test::PrometheusHarness::available() || access("/usr/bin/promtool", X_OK) != 0) return;
    data_ = test::temp_dir("prom-data");
    std::string error;
    for (const char* name : {"pod_oom.om", "gpu_full.om", "node_oom.om"}) {
      if (!test::PrometheusHarness::backfill(test::source_dir() + "/tests/fixtures/prometheus/" + name, data_, &error)) {
        setup_error_ = error;
        return;
      }
    }
    prom_ = std::make_unique<test::PrometheusHarness>();
    if (!prom_->start_on(data_, &setup_error_)) prom_.reset();
  }
  static void TearDownTestSuite() {
    prom_.reset();  // SIGTERM to its pid, then SIGKILL after 5 s
    std::error_code ec;
    if (!data_.empty()) std::filesystem::remove_all(data_, ec);
  }
  void SetUp() override {
    if (!test::PrometheusHarness::available()) GTEST_SKIP() << "no /usr/bin/prometheus (Debian package prometheus)";
    ASSERT_TRUE(prom_) << setup_error_;
  }
  static std::string url() { return "http://127.0.0.1:" + std::to_string(prom_->port()); }

  // The JSON diagnosis, or a failure with aimem's stderr.
  static json diagnose(std::vector<std::string> args, test::RunResult* out = nullptr) {
    std::vector<std::string> all = {"diagnose", "--prometheus", url(), "--json"};
    all.insert(all.end(), args.begin(), args.end());
    test::RunResult r = test::run_aimem(all);
    if (out) *out = r;
    EXPECT_EQ(r.status, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }

  static std::unique_ptr<test::PrometheusHarness> prom_;
  static std::string data_, setup_error_;
};
std::unique_ptr<test::PrometheusHarness> DiagnosePrometheus::prom_;
std::string DiagnosePrometheus::data_, DiagnosePrometheus::setup_error_;

// The evidence item whose text starts with `prefix`, or null.
const json* evidence(const json& incident, const std::string& prefix) {
  for (const auto& e : incident["evidence"])
    if (e["text"].get<std::string>().rfind(prefix, 0) == 0) return &e;
  return nullptr;
}

bool has_fix(const json& incident, const std::string& part) {
  for (const auto& f : incident["fixes"])
    if (f["action"].get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

TEST_F(DiagnosePrometheus, PodOomKilledAtItsLimitFromKubeStateMetricsAndCadvisor) {
  json d = diagnose({"--pod", "ml/vllm-0", "--at", "2025-11-24T10:05:00Z", "--since", "1h"});
  ASSERT_FALSE(d["incidents"].empty()) << d.dump(2);
  const json& inc = d["incidents"][0];
  EXPECT_EQ(d["layer"], "k8s_pod_limit");
  EXPECT_EQ(d["cause"], "limit_too_low");
  EXPECT_EQ(inc["summary"], "container server of pod vllm-0 was OOMKilled at its 16.0 GiB memory limit (3 restarts)");
  EXPECT_EQ(inc["time"].get<std::string>().substr(0, 16), "2025-11-24T10:00");
  const json* reason = evidence(inc,
      "kube_pod_container_status_last_terminated_reason{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",reason=\"OOMKilled\"} = 1 at 2025-11-24T10:00:");
  ASSERT_TRUE(reason) << inc["evidence"].dump(2);
  EXPECT_EQ((*reason)["source"], "Prometheus");
  EXPECT_EQ((*reason)["where"], url() + " (kube-state-metrics)");
  EXPECT_NE((*reason)["text"].get<std::string>().find("exit code 137, as kube_pod_container_status_restarts_total rose 2 -> 3"), std::string::npos);
  const json* oom = evidence(inc, "container_oom_events_total{namespace=\"ml\",pod=\"vllm-0\",container=\"server\"} rose 0 -> 1");
  ASSERT_TRUE(oom) << inc["evidence"].dump(2);
  EXPECT_EQ((*oom)["where"], url() + " (cAdvisor)");
  // cAdvisor's working set at its OOM event, beside the verdict's first fact.
  const json* ws = evidence(inc, "(cAdvisor) container_memory_working_set_bytes{namespace=\"ml\",pod=\"vllm-0\",container=\"server\"} = 15.9 GiB at 2025-11-24T10:00:0");
  ASSERT_TRUE(ws) << inc["evidence"].dump(2);
  EXPECT_NE((*ws)["text"].get<std::string>().find("limit 16.0 GiB (container_spec_memory_limit_bytes)"), std::string::npos);
  ASSERT_TRUE(evidence(inc, "kube_pod_container_resource_limits{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",resource=\"memory\"} = 16.0 GiB"));
  EXPECT_EQ(inc["pool"]["limit_bytes"], 16ull << 30);
  // aimem watch's own usage of the container's cgroup, read beside cAdvisor's.
  bool aimem = false;
  for (const auto& h : d["headroom"])
    if (h["pool"].get<std::string>().rfind("cgroup /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c2a9e", 0) == 0) {
      aimem = true;
      EXPECT_EQ(h["capacity_bytes"], 16ull << 30);
      EXPECT_GT(h["used_bytes"].get<uint64_t>(), 15ull << 30);
      EXPECT_LE(h["used_bytes"].get<uint64_t>(), 16ull << 30);
    }
  EXPECT_TRUE(aimem) << d["headroom"].dump(2);
  // The pod's limit, raised by a quarter, never above the node's 128 GiB (kube_pod_info -> node_exporter).
  EXPECT_TRUE(has_fix(inc, "raise resources.limits.memory 16Gi -> 20Gi")) << inc["fixes"].dump(2);
  bool host = false;
  for (const auto& f : inc["fixes"]) host |= f["why"].get<std::string>().find("never above the host's 128 GiB") != std::string::npos;
  EXPECT_TRUE(host) << inc["fixes"].dump(2);
}

// The README's example is this run, as text: README and program agree.
TEST_F(DiagnosePrometheus, ReadmeExampleIsTheProgramsOutput) {
  const std::string readme = test::read_file(test::source_dir() + "/README.md");
  const std::string cmd = "$ aimem diagnose --prometheus http://127.0.0.1:9090 --pod ml/vllm-0 --at 2025-11-24T10:05:00Z --since 1h\n";
  size_t at = readme.find(cmd);
  ASSERT_NE(at, std::string::npos);
  at += cmd.size();
  std::string shown = readme.substr(at, readme.find("```", at) - at);
  for (size_t p; (p = shown.find("http://127.0.0.1:9090")) != std::string::npos;) shown.replace(p, 21, url());
  test::RunResult r = test::run_aimem({"diagnose", "--prometheus", url(), "--pod", "ml/vllm-0", "--at", "2025-11-24T10:05:00Z", "--since", "1h"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, shown);
}

TEST_F(DiagnosePrometheus, TheWindowDecides) {
  // Before the kill (the window's end as an epoch, its start as a time): the
  // same pod, its limit and usage, no failure.
  json d = diagnose({"--pod", "ml/vllm-0", "--at", "@1763978100", "--since", "2025-11-24 09:10"});
  EXPECT_EQ(d["layer"], "none") << d.dump(2);
  EXPECT_TRUE(d["incidents"].empty());
  bool window = false;
  for (const auto& n : d["notes"]) window |= n.get<std::string>().find("over 2025-11-24T09:10:00Z .. 2025-11-24T09:55:00Z") != std::string::npos;
  EXPECT_TRUE(window) << d["notes"].dump(2);
  // The same end, a window that holds the kill's restart: found again.
  EXPECT_EQ(diagnose({"--pod", "ml/vllm-0", "--at", "@1763978700", "--since", "10m"})["layer"], "k8s_pod_limit");
  // --container narrows the queries: a container the pod does not have finds nothing.
  test::RunResult r = test::run_aimem({"diagnose", "--prometheus", url(), "--pod", "ml/vllm-0", "--container", "sidecar",
                                       "--at", "2025-11-24T10:05:00Z"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("no series for container_memory_working_set_bytes{namespace=\"ml\",pod=\"vllm-0\",container=\"sidecar\"}"),
            std::string::npos) << r.err;
}

TEST_F(DiagnosePrometheus, GpuFramebufferFullFromDcgm) {
  json d = diagnose({"--pod", "ml/trainer-0", "--at", "2025-11-24T13:05:00Z", "--since", "1h"});
  ASSERT_FALSE(d["incidents"].empty()) << d.dump(2);
  const json& inc = d["incidents"][0];
  EXPECT_EQ(d["layer"], "gpu_vram");
  // The framebuffer grew steadily until it was full: the trend of the series up to the failure.
  EXPECT_EQ(d["cause"], "leak_or_accumulation");
  EXPECT_EQ(inc["summary"], "container train of pod trainer-0 ran out of memory on GPU 0 (768 MiB free of 80.0 GiB)");
  EXPECT_EQ(inc["pool"]["name"], "GPU 0");
  const json* fb = evidence(inc, "DCGM_FI_DEV_FB_USED{gpu=\"0\",namespace=\"ml\",pod=\"trainer-0\",container=\"train\",Hostname=\"gpu-node-2\"} = 79.2 GiB");
  ASSERT_TRUE(fb) << inc["evidence"].dump(2);
  EXPECT_NE((*fb)["text"].get<std::string>().find("DCGM_FI_DEV_FB_FREE = 768 MiB: 99.1% of 80.0 GiB in use; the pod restarted within 5 minutes"),
            std::string::npos) << (*fb)["text"];
  EXPECT_EQ((*fb)["where"], url() + " (DCGM exporter)");
  ASSERT_TRUE(evidence(inc, "kube_pod_container_status_last_terminated_reason{namespace=\"ml\",pod=\"trainer-0\",container=\"train\",reason=\"Error\"} = 1"));
  EXPECT_TRUE(has_fix(inc, "a larger GPU")) << inc["fixes"].dump(2);
  bool trend = false;
  for (const auto& r : inc["reasons"]) trend |= r.get<std::string>().find("GPU 0 grew") != std::string::npos;
  EXPECT_TRUE(trend) << inc["reasons"].dump(2);
}

TEST_F(DiagnosePrometheus, NodeOutOfRamFromNodeExporter) {
  json d = diagnose({"--node", "cpu-node-3", "--at", "2025-11-24T16:05:00Z", "--since", "1h"});
  ASSERT_FALSE(d["incidents"].empty()) << d.dump(2);
  const json& inc = d["incidents"][0];
  EXPECT_EQ(d["layer"], "host_ram");
  EXPECT_EQ(d["cause"], "leak_or_accumulation");
  EXPECT_EQ(inc["summary"], "a process was killed by the kernel OOM killer: the host ran out of RAM");
  EXPECT_EQ(inc["pool"]["limit_bytes"], 64ull << 30);
  const json* vm = evidence(inc, "node_vmstat_oom_kill{instance=\"cpu-node-3:9100\"} rose 5 -> 6 between 2025-11-24T15:59:");
  ASSERT_TRUE(vm) << inc["evidence"].dump(2);
  EXPECT_EQ((*vm)["where"], url() + " (node_exporter)");
  ASSERT_TRUE(evidence(inc, "node_memory_MemAvailable_bytes{instance=\"cpu-node-3:9100\"} = "));
  ASSERT_TRUE(evidence(inc, "aimem_oom_kills_total{node=\"cpu-node-3\",instance=\"10.0.3.7:9464\",pool=\"host_ram\"} rose 5 -> 6"));
  EXPECT_TRUE(has_fix(inc, "add RAM or move to a larger host"));
}

// The node of the pod above: kube-state-metrics names the pod its kill
// belongs to, and the pod's own limit and working set, read as --pod reads
// them, give the node's verdict the pod's cause (before, "unknown").
TEST_F(DiagnosePrometheus, NodeModeReadsTheKilledPodsLimitForTheCause) {
  test::RunResult r;
  json d = diagnose({"--node", "gpu-node-1", "--at", "2025-11-24T10:05:00Z", "--since", "1h"}, &r);
  ASSERT_FALSE(d["incidents"].empty()) << d.dump(2);
  const json& inc = d["incidents"][0];
  EXPECT_EQ(d["layer"], "k8s_pod_limit") << d.dump(2);
  EXPECT_EQ(d["cause"], "limit_too_low") << d.dump(2);
  EXPECT_TRUE(evidence(inc, "kube_pod_container_status_last_terminated_reason{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",reason=\"OOMKilled\"}"))
      << inc["evidence"].dump(2);
  EXPECT_TRUE(evidence(inc, "kube_pod_container_resource_limits{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",resource=\"memory\"} = 16.0 GiB"))
      << inc["evidence"].dump(2);
  // cAdvisor's working set just before the restart, beside the kill, as --pod quotes it.
  EXPECT_TRUE(evidence(inc, "(cAdvisor) container_memory_working_set_bytes{namespace=\"ml\",pod=\"vllm-0\",container=\"server\"} = 15.9 GiB at 2025-11-24T10:00:"))
      << inc["evidence"].dump(2);
  EXPECT_EQ(inc["pool"]["limit_bytes"], 16ull << 30) << inc.dump(2);
  EXPECT_TRUE(has_fix(inc, "raise resources.limits.memory 16Gi -> 20Gi")) << inc["fixes"].dump(2);
  // Bounded: the node's queries and the one killed pod's six.
  bool counted = false;
  for (const auto& n : d["notes"]) {
    const std::string t = n.get<std::string>();
    if (t.find(" queries over ") == std::string::npos) continue;
    counted = true;
    EXPECT_LE(std::stoi(t.substr(t.find(": ") + 2)), 24) << t;
  }
  EXPECT_TRUE(counted) << d.dump(2);
}

TEST_F(DiagnosePrometheus, MissingSeriesAreNamedAndNothingFoundExitsTwo) {
  test::RunResult r = test::run_aimem({"diagnose", "--prometheus", url(), "--pod", "ml/ghost-0", "--at", "2025-11-24T10:05:00Z"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // cAdvisor is scraped (vllm-0's series are there), this pod is not in it.
  EXPECT_NE(r.err.find("no series for container_memory_working_set_bytes{namespace=\"ml\",pod=\"ghost-0\",container!=\"\",container!=\"POD\"}: "
                       "container_memory_working_set_bytes has 3 series for others"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no series for kube_pod_container_status_restarts_total{namespace=\"ml\",pod=\"ghost-0\"}"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing about pod ml/ghost-0 in Prometheus " + url()), std::string::npos) << r.err;
  // A node no exporter knows.
  r = test::run_aimem({"diagnose", "--prometheus", url(), "--node", "nowhere", "--at", "2025-11-24T16:05:00Z"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no series for node_vmstat_oom_kill{node=\"nowhere\"}"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node_vmstat_oom_kill has 1 series for others; check the names and the window"), std::string::npos) << r.err;
}

// --- errors that need no Prometheus ------------------------------------------

using test::Loopback;

TEST(DiagnosePrometheusErrors, UnreachableBadUrlNotJsonAndPrometheusErrors) {
  int port = 0;
  int fd = test::bound_loopback_socket(&port);  // bound, never listening: connect is refused
  ASSERT_GE(fd, 0);
  test::RunResult r = test::run_aimem({"diagnose", "--prometheus", "http://127.0.0.1:" + std::to_string(port), "--pod", "ml/x"});
  close(fd);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot reach Prometheus at http://127.0.0.1:" + std::to_string(port) + ": connect"), std::string::npos) << r.err;

  r = test::run_aimem({"diagnose", "--prometheus", "ftp://127.0.0.1", "--pod", "ml/x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ftp://127.0.0.1: expected a URL starting with http://"), std::string::npos) << r.err;
  r = test::run_aimem({"diagnose", "--prometheus", "http://127.0.0.1:9090", "--pod", "vllm-0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--pod vllm-0: expected NAMESPACE/NAME"), std::string::npos) << r.err;
  r = test::run_aimem({"diagnose", "--prometheus", "http://127.0.0.1:9090"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--prometheus needs --pod NS/NAME or --node NAME"), std::string::npos) << r.err;

  Loopback html([](httplib::Server& s) {
    s.Get("/api/v1/query", [](const httplib::Request&, httplib::Response& res) { res.set_content("<html><body>Grafana</body></html>", "text/html"); });
  });
  r = test::run_aimem({"diagnose", "--prometheus", html.url(), "--pod", "ml/x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not JSON (the answer starts with '<html><body>Grafana"), std::string::npos) << r.err;

  Loopback refusing([](httplib::Server& s) {
    s.Get("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      res.status = 400;
      res.set_content(R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"time\""})", "application/json");
    });
  });
  r = test::run_aimem({"diagnose", "--prometheus", refusing.url(), "--node", "n1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("Prometheus answered error bad_data: invalid parameter \"time\""), std::string::npos) << r.err;

  Loopback elsewhere([](httplib::Server&) {});  // 404 for every path: a server, not the API
  r = test::run_aimem({"diagnose", "--prometheus", elsewhere.url() + "/prom", "--pod", "ml/x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(elsewhere.url() + "/prom/api/v1/query answered HTTP 404"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace aimem
