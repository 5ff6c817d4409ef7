// The Prometheus API answer parser (pure) and the bounds of the queries
// `aimem diagnose --prometheus` sends (collect() with an in-memory server).
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>

#include "diagnose/diagnosis.h"
#include "evidence/store.h"
#include "sources/prom_diagnose.h"
#include "sources/prom_response.h"
#include "support/test_support.h"

namespace aimem::prom {
namespace {

TEST(PromResponse, ReadsAMatrixInTimeOrderWithoutNaN) {
  auto r = test::take(parse_response(R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"x","pod":"p\"q"},"values":[[1700000010,"2"],[1700000000.5,"1.5e3"],[1700000020,"NaN"],[1700000030,"+Inf"]]}]},
    "warnings":["slow"]})"));
  EXPECT_EQ(r.result_type, "matrix");
  ASSERT_EQ(r.series.size(), 1u);
  const Series& s = r.series[0];
  EXPECT_EQ(s.label("pod"), "p\"q");
  EXPECT_EQ(s.label("none"), "");
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].t_ms, 1700000000500);
  EXPECT_EQ(s.points[0].v, 1500);
  EXPECT_EQ(s.points[1].v, 2);
  EXPECT_TRUE(std::isinf(s.points[2].v));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(describe("x", s, {"pod", "absent"}), "x{pod=\"p\\\"q\"}");
}

TEST(PromResponse, ReadsAVectorAndCapsSeriesAndPoints) {
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int i = 0; i < 5; ++i) body += (i ? "," : "") + std::string(R"({"metric":{"i":")") + std::to_string(i) + R"("},"value":[1,"3"]})";
  body += "]}}";
  ParseLimits lim;
  lim.max_series = 3;
  auto r = test::take(parse_response(body, lim));
  EXPECT_EQ(r.series.size(), 3u);
  EXPECT_EQ(r.series_dropped, 2u);
  lim.max_points = 1;
  auto m = test::take(parse_response(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"],[2,"2"]]}]}})", lim));
  EXPECT_EQ(m.series[0].points.size(), 1u);
  EXPECT_EQ(m.points_dropped, 1u);
}

TEST(PromResponse, ErrorsSayWhatTheAnswerWas) {
  struct Case {
    std::string body, want;
  } cases[] = {
      {"", "an empty answer"},
      {"<html>login</html>", "not JSON (the answer starts with '<html>login</html>')"},
      {R"({"data":{}})", "without a \"status\""},
      {R"({"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"})",
       "Prometheus answered error timeout: query timed out in expression evaluation"},
      {R"({"status":"success"})", "without \"data\""},
      {R"({"status":"success","data":{"resultType":"scalar","result":[1,"1"]}})", "where a vector or matrix was expected"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,2]]}]}})", "not [time, \"value\"]"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]}})", "not [time, \"value\"]"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"values":[]}]}})", "without its \"metric\""},
      {std::string(100000, '[') , "nested deeper than 16 levels"},
  };
  for (const auto& c : cases) {
    std::string err = test::error_of(parse_response(c.body));
    EXPECT_NE(err.find(c.want), std::string::npos) << c.body.substr(0, 60) << " -> " << err;
  }
}

TEST(PromQuery, QuotesEncodesAndBoundsTheStep) {
  EXPECT_EQ(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(url_encode("up{a=\"b c\"}"), "up%7Ba%3D%22b%20c%22%7D");
  EXPECT_EQ(step_for(3600), 8);     // 451 points
  EXPECT_EQ(step_for(60), 1);
  EXPECT_EQ(step_for(31 * 86400), 5368);
  for (int64_t range : {1, 499, 500, 3600, 86400, 31 * 86400}) EXPECT_LE(range / step_for(range) + 1, 500) << range;
}

// An in-memory server that records the queries and answers each with no series.
TEST(PromCollect, EveryQueryIsBoundedReadOnlyAndEscaped) {
  std::vector<std::string> asked;
  Get get = [&](const std::string& path) -> Result<HttpAnswer> {
    asked.push_back(path);
    return HttpAnswer{200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})"};
  };
  Scope s;
  s.url = "http://prom";
  s.ns = "ml";
  s.pod = "we\"ird";
  s.end_us = 1764000000LL * 1000000;
  s.start_us = s.end_us - 6LL * 3600 * 1000000;
  FactStore store;
  Report rep = test::take(collect(s, get, store));
  EXPECT_EQ(rep.series, 0u);
  EXPECT_EQ(rep.step_s, 44);
  ASSERT_GT(asked.size(), 10u);
  EXPECT_LE(asked.size(), 40u);
  for (const auto& q : asked) {
    EXPECT_TRUE(q.rfind("/api/v1/query_range?", 0) == 0 || q.rfind("/api/v1/query?", 0) == 0) << q;
    if (q.rfind("/api/v1/query_range?", 0) == 0) {
      EXPECT_NE(q.find("&step=44&timeout=10s"), std::string::npos) << q;
      EXPECT_NE(q.find("we%5C%22ird"), std::string::npos) << q;  // pod="we\"ird"
    }
  }
  bool cadvisor = false;
  for (const auto& w : rep.warnings)
    cadvisor |= w.find("no series for container_memory_working_set_bytes") != std::string::npos &&
                w.find(": is cAdvisor (the kubelet's /metrics/cadvisor) scraped?") != std::string::npos;
  EXPECT_TRUE(cadvisor);

  // A server that stops answering mid-way ends the run with its error.
  size_t n = 0;
  Get dying = [&](const std::string&) -> Result<HttpAnswer> {
    if (++n > 3) return make_error("cannot reach Prometheus at http://prom: connect (Connection refused)");
    return HttpAnswer{200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})"};
  };
  EXPECT_NE(test::error_of(collect(s, dying, store)).find("Connection refused"), std::string::npos);
}

// A node's kernel OOM-kill counter rose: the host ran out only when
// MemAvailable was low just before; with memory to spare it was a cgroup's limit.
TEST(PromCollect, NodeKillsAreTheHostsOnlyWhenItsMemoryWasLow) {
  auto matrix = [](const std::string& labels, const std::vector<std::pair<int, double>>& pts) {
    std::string v;
    for (const auto& [t, x] : pts) v += (v.empty() ? "" : ",") + fmt::format("[{},\"{}\"]", 1764000000 + t, x);
    return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":)" + labels + R"(,"values":[)" + v + "]}]}}";
  };
  const std::string empty = R"({"status":"success","data":{"resultType":"matrix","result":[]}})";
  for (double avail_gib : {0.2, 30.0}) {
    Get get = [&](const std::string& path) -> Result<HttpAnswer> {
      const std::string node = R"({"__name__":"x","instance":"n1:9100"})";
      if (path.find("node_vmstat_oom_kill") != std::string::npos) return HttpAnswer{200, matrix(node, {{0, 7}, {60, 7}, {120, 8}, {180, 8}})};
      if (path.find("MemAvailable") != std::string::npos)
        return HttpAnswer{200, matrix(node, {{0, 40.0 * (1 << 30)}, {60, avail_gib * (1 << 30)}, {120, 40.0 * (1 << 30)}})};
      if (path.find("MemTotal") != std::string::npos) return HttpAnswer{200, matrix(node, {{0, 64.0 * (1 << 30)}})};
      return HttpAnswer{200, empty};
    };
    Scope s;
    s.url = "http://prom";
    s.node = "n1";
    s.start_us = 1764000000LL * 1000000;
    s.end_us = s.start_us + 240LL * 1000000;
    FactStore store;
    Report rep = test::take(collect(s, get, store));
    const Fact* kill = nullptr;
    for (const auto& f : store.facts())
      if (f.kind == FactKind::kernel_oom_kill) kill = &f;
    ASSERT_TRUE(kill) << avail_gib;
    EXPECT_EQ(kill->layer, avail_gib < 1 ? Layer::host_ram : Layer::container_limit) << kill->detail;
    EXPECT_EQ(kill->count, 1u);
    EXPECT_EQ(kill->where.unix_us, (1764000000LL + 120) * 1000000);
    EXPECT_NE(kill->text.find("node_vmstat_oom_kill{instance=\"n1:9100\"} rose 7 -> 8"), std::string::npos) << kill->text;
    ASSERT_EQ(kill->extra.size(), 1u);
    EXPECT_NE(kill->extra[0].second.find(avail_gib < 1 ? "= 205 MiB" : "= 30.0 GiB"), std::string::npos) << kill->extra[0].second;
  }
}


// A node with aimem watch and no node_exporter (the fleet test's live case):
// the kernel's count (aimem's host_ram) rises for every kill, a cgroup's too.
// When one of the node's cgroups counted a kill in the same interval, that was
// the kill, at the pod's limit; with no cgroup count the host's memory from
// aimem's host_ram pool decides, as MemAvailable does. It said host_ram for
// any rise when node_exporter was not scraped.
TEST(PromCollect, NodeKillsWithOnlyAimemAreTheCgroupsWhenOneCounted) {
  auto matrix = [](const std::string& labels, const std::vector<std::pair<int, double>>& pts) {
    std::string v;
    for (const auto& [t, x] : pts) v += (v.empty() ? "" : ",") + fmt::format("[{},\"{}\"]", 1764000000 + t, x);
    return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":)" + labels + R"(,"values":[)" + v + "]}]}}";
  };
  const std::string empty = R"({"status":"success","data":{"resultType":"matrix","result":[]}})";
  const std::string cgroup = "/kubepods/burstable/pod5d0c3a7e-8f21-4b6a-9c44-2e1f0a9b7c31/3f9a0c2b7d4e";
  for (int c = 0; c < 3; ++c) {  // 0: a cgroup counted the kill; 1: none, memory to spare; 2: none, memory low
    const double avail_gib = c == 2 ? 0.2 : 40.0;
    std::vector<std::string> asked;
    Get get = [&](const std::string& path) -> Result<HttpAnswer> {
      asked.push_back(path);
      const bool kills = path.find("aimem_oom_kills_total") != std::string::npos;
      const std::string node = R"({"__name__":"x","node":"n1","pool":"host_ram"})";
      // The watch started a minute into the window: its series appears at the
      // kernel's count since boot, which is not a kill.
      if (kills && path.find("host_ram") != std::string::npos) return HttpAnswer{200, matrix(node, {{60, 7}, {120, 8}, {180, 8}})};
      if (kills && path.find("%22cgroup%22") != std::string::npos) {
        if (c != 0) return HttpAnswer{200, empty};
        // "> 0": the series appears with the kill.
        return HttpAnswer{200, matrix(R"({"node":"n1","pool":"cgroup","cgroup":")" + cgroup +
                                          R"(","namespace":"ml","pod":"vllm-0","container":"server"})",
                                      {{120, 1}, {180, 1}})};
      }
      if (path.find("aimem_memory_used_bytes") != std::string::npos && path.find("host_ram") != std::string::npos)
        return HttpAnswer{200, matrix(node, {{0, 24.0 * (1 << 30)}, {60, (64.0 - avail_gib) * (1 << 30)}, {120, 24.0 * (1 << 30)}})};
      if (path.find("aimem_memory_limit_bytes") != std::string::npos && path.find("host_ram") != std::string::npos)
        return HttpAnswer{200, matrix(node, {{0, 64.0 * (1 << 30)}})};
      return HttpAnswer{200, empty};
    };
    Scope s;
    s.url = "http://prom";
    s.node = "n1";
    s.start_us = 1764000000LL * 1000000;
    s.end_us = s.start_us + 240LL * 1000000;
    FactStore store;
    Report rep = test::take(collect(s, get, store));
    EXPECT_LE(asked.size(), 40u);
    // Only the cgroups whose count moved above 0 are asked for.
    bool filtered = false;
    for (const auto& q : asked) filtered |= q.find("%22cgroup%22%7D%29%20%3E%200") != std::string::npos;
    EXPECT_TRUE(filtered);
    const Fact *kill = nullptr, *counted = nullptr, *host = nullptr;
    int kernel_kills = 0;
    for (const auto& f : store.facts()) {
      if (f.kind == FactKind::kernel_oom_kill) kill = &f, ++kernel_kills;
      if (f.kind == FactKind::cgroup_oom_counter) counted = &f;
      if (f.kind == FactKind::host_state) host = &f;
    }
    ASSERT_TRUE(kill) << c;
    EXPECT_EQ(kernel_kills, 1) << c;
    EXPECT_NE(kill->text.find("aimem_oom_kills_total{node=\"n1\",pool=\"host_ram\"} rose 7 -> 8"), std::string::npos) << kill->text;
    ASSERT_TRUE(host) << c;
    EXPECT_NE(host->text.find("MemAvailable from aimem_memory_used_bytes{pool=\"host_ram\",node=\"n1\"}"), std::string::npos) << host->text;
    EXPECT_EQ(host->where.source, "Prometheus http://prom (aimem watch)");
    EXPECT_EQ(kill->layer, c == 2 ? Layer::host_ram : Layer::container_limit) << c << " " << kill->detail;
    ASSERT_EQ(kill->extra.size(), 1u);
    EXPECT_NE(kill->extra[0].second.find(c == 2 ? "= 205 MiB" : "= 40.0 GiB"), std::string::npos) << kill->extra[0].second;
    EXPECT_NE(kill->extra[0].second.find("of 64.0 GiB (aimem_memory_limit_bytes)"), std::string::npos) << kill->extra[0].second;
    DiagnoseOptions opt;
    opt.since_us = s.start_us;
    Diagnosis d = diagnose(std::vector<Fact>(store.facts()), opt);
    if (c == 0) {
      ASSERT_TRUE(counted);
      EXPECT_EQ(counted->layer, Layer::k8s_pod_limit);
      EXPECT_EQ(counted->pod, "vllm-0");
      EXPECT_EQ(counted->where.unix_us, (1764000000LL + 120) * 1000000);
      EXPECT_NE(counted->text.find("aimem_oom_kills_total{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",cgroup=\"" + cgroup + "\"} rose 0 -> 1"),
                std::string::npos) << counted->text;
      EXPECT_EQ(kill->cgroup, cgroup);
      EXPECT_NE(kill->detail.find("memory cgroup " + cgroup + " counted its own"), std::string::npos) << kill->detail;
      EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
    } else {
      EXPECT_FALSE(counted);
      EXPECT_EQ(d.layer, c == 2 ? Layer::host_ram : Layer::container_limit);
    }
  }
}


// cAdvisor's working set beside a kill is the highest sample of the minute up
// to the OOM event: the samples after the kill are of the emptied cgroup (the
// fleet test's live series), even one scraped before the event was counted;
// the ones before, of what filled it.
TEST(PromCollect, WorkingSetBesideAKillIsTheOneBeforeTheCgroupEmptied) {
  const std::string labels = R"({"namespace":"ml","pod":"vllm-0","container":"server","id":"/kubepods/burstable/podx/abc"})";
  auto matrix = [&](const std::vector<std::pair<int, double>>& pts) {
    std::string v;
    for (const auto& [t, x] : pts) v += (v.empty() ? "" : ",") + fmt::format("[{},\"{}\"]", 1764000000 + t, x);
    return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":)" + labels + R"(,"values":[)" + v + "]}]}}";
  };
  const std::string empty = R"({"status":"success","data":{"resultType":"matrix","result":[]}})";
  Get get = [&](const std::string& path) -> Result<HttpAnswer> {
    if (path.find("container_memory_working_set_bytes") != std::string::npos)
      return HttpAnswer{200, matrix({{0, 10.0 * (1 << 30)}, {60, 15.5 * (1 << 30)}, {90, 15.9 * (1 << 30)}, {105, 12.0 * (1 << 20)},
                                     {120, 12.0 * (1 << 20)}, {180, 12.0 * (1 << 20)}})};
    if (path.find("container_spec_memory_limit_bytes") != std::string::npos) return HttpAnswer{200, matrix({{0, 16.0 * (1 << 30)}})};
    if (path.find("container_oom_events_total") != std::string::npos)
      return HttpAnswer{200, matrix({{0, 0}, {60, 0}, {90, 0}, {105, 0}, {120, 1}, {180, 1}})};
    return HttpAnswer{200, empty};
  };
  Scope s;
  s.url = "http://prom";
  s.ns = "ml";
  s.pod = "vllm-0";
  s.start_us = 1764000000LL * 1000000;
  s.end_us = s.start_us + 240LL * 1000000;
  FactStore store;
  Report rep = test::take(collect(s, get, store));
  const Fact* oom = nullptr;
  for (const auto& f : store.facts())
    if (f.kind == FactKind::cgroup_oom_counter) oom = &f;
  ASSERT_TRUE(oom);
  ASSERT_EQ(oom->extra.size(), 1u);
  EXPECT_NE(oom->extra[0].second.find("container_memory_working_set_bytes{namespace=\"ml\",pod=\"vllm-0\",container=\"server\"} = 15.9 GiB at 2025-11-24T16:01:30Z, limit 16.0 GiB"),
            std::string::npos) << oom->extra[0].second;
}

}  // namespace
}  // namespace aimem::prom
