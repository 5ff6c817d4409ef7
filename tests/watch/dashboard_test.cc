// deploy/kubernetes/monitoring/grafana-dashboard.json against a real Prometheus (Debian
// package `prometheus`) that scrapes aimem's own /metrics text for a sample of
// every kind (support/watch_example: host, cgroups with pod names, GPUs and
// their processes, inference servers, forecasts), as a DaemonSet's aimem
// labels it (node=...), and evaluates `aimem rules --fleet`: every query of
// every panel must return series, so no panel reads a metric aimem does not
// export or a recording rule the fleet rules do not define.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

#include "check/rules_gen.h"
#include "support/prometheus_harness.h"
#include "support/test_support.h"
#include "support/watch_example.h"
#include "watch/exporter.h"
#include "watch/http_server.h"

namespace aimem::watch {
namespace {

using nlohmann::json;

json dashboard() { return json::parse(test::read_file(test::source_dir() + "/deploy/kubernetes/monitoring/grafana-dashboard.json")); }

// Every target's expression with Grafana's variables as a query sees them
// for "All" nodes.
std::vector<std::pair<std::string, std::string>> queries(const json& d) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : d["panels"])
    for (const auto& t : p["targets"]) {
      std::string e = t["expr"];
      for (auto [from, to] : {std::pair<std::string, std::string>{"$node", ".*"}, {"$__rate_interval", "1m"}})
        for (size_t at; (at = e.find(from)) != std::string::npos;) e.replace(at, from.size(), to);
      out.emplace_back(p["title"], e);
    }
  return out;
}

TEST(Dashboard, IsAGrafanaDashboardWithADatasourceVariable) {
  json d = dashboard();
  EXPECT_EQ(d["uid"], "aimem-fleet");
  std::set<int> ids;
  for (const auto& p : d["panels"]) {
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate panel id " << p["id"];
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << p["title"];
    EXPECT_FALSE(p["targets"].empty()) << p["title"];
    for (const auto& t : p["targets"]) EXPECT_NE(t["expr"].get<std::string>().find("node=~\"$node\""), std::string::npos) << t["expr"];
  }
  EXPECT_GE(ids.size(), 10u);
  std::set<std::string> vars;
  for (const auto& v : d["templating"]["list"]) vars.insert(v["name"]);
  EXPECT_EQ(vars, (std::set<std::string>{"datasource", "node"}));
}

TEST(Dashboard, EveryQueryReturnsSeriesFromARealPrometheus) {
  if (!test::PrometheusHarness::available()) GTEST_SKIP() << "the prometheus package is not installed";
  Sample s = example_sample();
  for (auto& c : s.cgroups)
    if (c.path == "/aimem-test") c.k8s_namespace = "ai", c.k8s_pod = "vllm-0", c.k8s_container = "vllm";
  ExportExtras x = example_extras();
  x.labels = {{"node", "gpu-node-7"}};
  x.exhaustion.push_back({"host_ram", "", "", 5400});
  MetricsServer srv;
  std::string err;
  ASSERT_EQ(test::error_of(srv.start("127.0.0.1", 0)), "");
  srv.publish(render_metrics(s, x));
  auto rules = check::build_rules(check::Policy{}, check::RulesOptions{{}, true});
  ASSERT_TRUE(rules.ok());
  test::PrometheusHarness prom;
  ASSERT_TRUE(prom.start("127.0.0.1:" + std::to_string(srv.port()), &err, "/metrics",
                         check::render_rules(*rules, check::Policy{})))
      << err;
  // rate() and increase() need two scrapes: wait for the second one first.
  ASSERT_TRUE(prom.query_until("count_over_time(aimem_memory_used_bytes{pool=\"host_ram\"}[1m]) >= 2", 30)) << prom.log();
  for (const auto& [title, q] : queries(dashboard())) {
    std::string last;
    EXPECT_TRUE(prom.query_until(q, 10, &last)) << title << ": " << q << "\n" << last;
  }
  // And a query of a metric nobody exports stays empty, so the loop above
  // means something.
  EXPECT_FALSE(prom.query_until("aimem_no_such_metric{node=~\".*\"}", 2));
  prom.stop();
}

}  // namespace
}  // namespace aimem::watch
