// Exporter tests: render_metrics output re-read by our parser and checked by
// the real `promtool check metrics`; the bounded process set; TTFT from
// histogram deltas; MetricsServer over loopback; and the real Prometheus
// server scraping it and answering a PromQL query through its HTTP API.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cmath>
#include <set>

#include "support/prometheus_harness.h"
#include "support/test_support.h"
#include "support/watch_example.h"
#include "watch/exporter.h"
#include "watch/http_server.h"
#include "watch/promtext.h"

namespace aimem::watch {
namespace {

constexpr uint64_t kMiB = 1u << 20;


// The value of the one series of `name` whose labels include all of `want`.
std::optional<double> value_of(const PromText& t, const std::string& name, std::vector<std::pair<std::string, std::string>> want) {
  std::optional<double> found;
  for (const auto& s : t.samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : want) all = all && label_of(s, k) == v;
    if (!all) continue;
    EXPECT_FALSE(found) << "two series of " << name << " match";
    found = s.value;
  }
  return found;
}

size_t count_of(const PromText& t, const std::string& name) {
  size_t n = 0;
  for (const auto& s : t.samples) n += s.name == name;
  return n;
}

TEST(Exporter, RendersEveryPoolAndReparses) {
  std::string text = render_metrics(example_sample(), example_extras());
  auto r = parse_prom_text(text);
  ASSERT_TRUE(r.ok()) << r.error().message << "\n" << text;
  const PromText& t = *r;
  EXPECT_EQ(t.skipped, 0u);
  EXPECT_EQ(value_of(t, "aimem_memory_used_bytes", {{"pool", "host_ram"}}), 5120.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_memory_limit_bytes", {{"pool", "host_ram"}}), 8192.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_memory_used_bytes", {{"pool", "swap"}}), 48.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_memory_used_bytes", {{"pool", "cgroup"}, {"cgroup", "/aimem-test"}}), 40.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_memory_limit_bytes", {{"pool", "cgroup"}, {"cgroup", "/aimem-test"}}), 48.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_memory_peak_bytes", {{"cgroup", "/aimem-test"}}), 47.0 * kMiB);
  // Escaped label values come back as they were.
  EXPECT_EQ(value_of(t, "aimem_memory_used_bytes", {{"cgroup", "/we\"ird\\path\nname"}}), 1.0 * kMiB);
  EXPECT_FALSE(value_of(t, "aimem_memory_limit_bytes", {{"cgroup", "/we\"ird\\path\nname"}}));  // missing is not zero
  EXPECT_EQ(value_of(t, "aimem_memory_used_bytes", {{"pool", "gpu"}, {"gpu", "0"}}), 9000.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_gpu_memory_total_bytes", {{"gpu", "0"}}), 24576.0 * kMiB);
  EXPECT_FALSE(value_of(t, "aimem_gpu_memory_total_bytes", {{"gpu", "1"}}));  // unified memory
  EXPECT_EQ(value_of(t, "aimem_process_gpu_bytes", {{"pid", "43"}, {"gpu", "0"}, {"comm", "llama-server"}}), 6000.0 * kMiB);
  EXPECT_EQ(value_of(t, "aimem_oom_kills_total", {{"pool", "host_ram"}}), 3.0);
  EXPECT_EQ(value_of(t, "aimem_oom_kills_total", {{"cgroup", "/aimem-test"}}), 1.0);
  EXPECT_EQ(value_of(t, "aimem_memory_pressure_seconds_total", {{"pool", "host_ram"}, {"kind", "some"}}), 2.5);
  EXPECT_EQ(value_of(t, "aimem_memory_pressure_seconds_total", {{"pool", "host_ram"}, {"kind", "full"}}), 1.0);
  EXPECT_EQ(value_of(t, "aimem_memory_pressure_seconds_total", {{"pool", "cgroup"}, {"kind", "some"}}), 0.75);
  EXPECT_EQ(value_of(t, "aimem_time_to_exhaustion_seconds", {{"pool", "cgroup"}, {"cgroup", "/aimem-test"}}), 95.5);
  EXPECT_EQ(value_of(t, "aimem_time_to_exhaustion_seconds", {{"pool", "gpu"}, {"gpu", "0"}}), 3600.0);
  const std::string v = "http://127.0.0.1:8000/metrics", d = "http://127.0.0.1:8080/metrics";
  EXPECT_EQ(value_of(t, "aimem_inference_up", {{"target", v}}), 1.0);
  EXPECT_EQ(value_of(t, "aimem_inference_up", {{"target", d}}), 0.0);
  EXPECT_EQ(value_of(t, "aimem_inference_running_requests", {{"target", v}}), 9.0);
  EXPECT_EQ(value_of(t, "aimem_inference_waiting_requests", {{"target", v}}), 7.0);
  EXPECT_EQ(value_of(t, "aimem_inference_kv_cache_usage_ratio", {{"target", v}}), 0.97);
  EXPECT_EQ(value_of(t, "aimem_inference_first_token_seconds", {{"target", v}}), 0.25);
  EXPECT_EQ(value_of(t, "aimem_inference_custom_value", {{"target", v}, {"selector", "queue_depth"}}), 12.0);
  EXPECT_FALSE(value_of(t, "aimem_inference_running_requests", {{"target", d}}));
  EXPECT_EQ(count_of(t, "aimem_inference_context_tokens"), 0u);  // nobody exposed it: family left out
  EXPECT_EQ(value_of(t, "aimem_sample_duration_seconds", {}), 0.0012);
  // Every family that has series has HELP and TYPE.
  std::set<std::string> families;
  for (const auto& s : t.samples) families.insert(s.name);
  for (const auto& f : families) {
    EXPECT_TRUE(t.help.count(f)) << f;
    EXPECT_TRUE(t.type.count(f)) << f;
  }
  EXPECT_EQ(t.type.at("aimem_oom_kills_total"), "counter");
  EXPECT_EQ(t.type.at("aimem_memory_used_bytes"), "gauge");
}

TEST(Exporter, ProcessSeriesAreBounded) {
  std::string text = render_metrics(example_sample(), example_extras());
  auto r = parse_prom_text(text);
  ASSERT_TRUE(r.ok());
  // 62 processes: the 50 largest plus the small one with a role and the small
  // one with GPU memory.
  EXPECT_EQ(count_of(*r, "aimem_process_resident_bytes"), 52u);
  EXPECT_EQ(value_of(*r, "aimem_process_resident_bytes", {{"pid", "42"}, {"comm", "python3"}}), 1.0 * kMiB);
  EXPECT_EQ(value_of(*r, "aimem_process_resident_bytes", {{"pid", "43"}}), 2.0 * kMiB);
  EXPECT_EQ(value_of(*r, "aimem_process_resident_bytes", {{"pid", "1059"}, {"cgroup", "/aimem-test"}}), 159.0 * kMiB);
  EXPECT_FALSE(value_of(*r, "aimem_process_resident_bytes", {{"pid", "1009"}}));  // 10th smallest worker: cut
  EXPECT_NE(r->help.at("aimem_process_resident_bytes").find("50 largest"), std::string::npos);
  ExportExtras few = example_extras();
  few.max_processes = 5;
  auto r5 = parse_prom_text(render_metrics(example_sample(), few));
  ASSERT_TRUE(r5.ok());
  EXPECT_EQ(count_of(*r5, "aimem_process_resident_bytes"), 7u);
}

// In a fleet every series names its node (--label node=...) and every
// per-cgroup and per-process series its pod, where the sampler read the names.
TEST(Exporter, NodeLabelOnEverySeriesAndPodLabelsWhereKnown) {
  Sample s = example_sample();
  ASSERT_FALSE(s.cgroups.empty());
  s.cgroups[0].k8s_namespace = "inference";
  s.cgroups[0].k8s_pod = "vllm-0";
  s.cgroups[0].k8s_container = "server";
  const std::string cg = s.cgroups[0].path;
  for (auto& p : s.processes)
    if (p.pid == 42) p.k8s_namespace = "inference", p.k8s_pod = "vllm-0", p.k8s_container = "server";
  ExportExtras x = example_extras();
  x.labels = {{"node", "gpu-node-7"}};
  ASSERT_EQ(cg, "/aimem-test");  // example_extras() forecasts it
  std::string text = render_metrics(s, x);
  auto r = parse_prom_text(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const auto& series : r->samples) EXPECT_EQ(label_of(series, "node"), "gpu-node-7") << series.name;
  EXPECT_EQ(value_of(*r, "aimem_memory_used_bytes", {{"cgroup", cg}, {"pod", "vllm-0"}, {"namespace", "inference"}, {"container", "server"}}),
            value_of(*r, "aimem_memory_used_bytes", {{"cgroup", cg}}));
  EXPECT_TRUE(value_of(*r, "aimem_oom_kills_total", {{"cgroup", cg}, {"pod", "vllm-0"}}));
  EXPECT_TRUE(value_of(*r, "aimem_time_to_exhaustion_seconds", {{"cgroup", cg}, {"pod", "vllm-0"}}));
  EXPECT_TRUE(value_of(*r, "aimem_process_resident_bytes", {{"pid", "42"}, {"pod", "vllm-0"}, {"container", "server"}}));
  // A process outside any pod carries no pod labels (not empty ones).
  for (const auto& series : r->samples)
    if (series.name == "aimem_process_resident_bytes" && label_of(series, "pid") == "43") {
      EXPECT_EQ(label_of(series, "pod"), "");
    }
  if (access("/usr/bin/promtool", X_OK) == 0) {
    auto res = test::run({"/usr/bin/promtool", "check", "metrics"}, text);
    EXPECT_EQ(res.status, 0) << res.out << res.err;
  }
}

TEST(Exporter, ConstantLabelsAreCheckedNames) {
  auto ok = parse_constant_label("node=gpu-node-7");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->first, "node");
  EXPECT_EQ(ok->second, "gpu-node-7");
  EXPECT_TRUE(parse_constant_label("cluster=eu=west"));  // the value holds what follows the first '='
  auto err = [](std::string_view spec) { auto r = parse_constant_label(spec); return r ? std::string() : r.error().message; };
  EXPECT_NE(err("node").find("expected NAME=VALUE"), std::string::npos);
  EXPECT_NE(err("1node=x").find("not a Prometheus label name"), std::string::npos);
  EXPECT_NE(err("no-de=x").find("not a Prometheus label name"), std::string::npos);
  EXPECT_NE(err("__name__=x").find("not a Prometheus label name"), std::string::npos);
  EXPECT_NE(err("pod=x").find("aimem's own series use the label 'pod'"), std::string::npos);
  EXPECT_NE(err("node=").find("value is empty"), std::string::npos);
  EXPECT_NE(err("node=" + std::string(300, 'a')).find("longer than 256"), std::string::npos);
}

TEST(Exporter, PromtoolAcceptsTheOutput) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  std::string text = render_metrics(example_sample(), example_extras());
  auto res = test::run({"/usr/bin/promtool", "check", "metrics"}, text);
  EXPECT_EQ(res.status, 0) << res.out << res.err;
  EXPECT_EQ(res.out + res.err, "") << "promtool lint findings";
  // And it does reject a broken text, so the check above means something.
  auto bad = test::run({"/usr/bin/promtool", "check", "metrics"}, "aimem_x{a=\"1\" 2\n");
  EXPECT_NE(bad.status, 0);
}

TEST(Exporter, MeanFirstTokenFromHistogramDeltas) {
  ServerSample a, b;
  a.ttft_sum_s = 10;
  a.ttft_count = 40;
  b.ttft_sum_s = 13;
  b.ttft_count = 52;
  EXPECT_EQ(mean_first_token_seconds(a, b), 0.25);
  EXPECT_FALSE(mean_first_token_seconds(a, a));  // no new request
  EXPECT_FALSE(mean_first_token_seconds(b, a));  // counters went back: restart
  ServerSample none;
  EXPECT_FALSE(mean_first_token_seconds(none, b));
}

TEST(ExporterHttp, ServesSnapshotAndHealth) {
  MetricsServer srv;
  std::string err;
  ASSERT_EQ(test::error_of(srv.start("127.0.0.1", 0)), "");
  ASSERT_GT(srv.port(), 0);
  srv.publish("aimem_x 1\n");
  httplib::Client cli("127.0.0.1", srv.port());
  cli.set_read_timeout(std::chrono::seconds(2));
  auto m = cli.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(m->body, "aimem_x 1\n");
  EXPECT_NE(m->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  srv.publish("aimem_x 2\n");
  EXPECT_EQ(cli.Get("/metrics")->body, "aimem_x 2\n");
  auto h = cli.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->body, "ok\n");
  EXPECT_EQ(cli.Get("/other")->status, 404);
  // The port is taken: a second server says so.
  MetricsServer again;
  err = test::error_of(again.start("127.0.0.1", srv.port()));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find(std::to_string(srv.port())), std::string::npos) << err;
  srv.stop();
  EXPECT_FALSE(cli.Get("/metrics"));
  MetricsServer quick;  // stop right after start must not hang
  ASSERT_EQ(test::error_of(quick.start("", 0)), "");
  quick.stop();
}

TEST(ExporterPrometheus, RealPrometheusScrapesTheExporter) {
  if (!test::PrometheusHarness::available()) GTEST_SKIP() << "prometheus not installed";
  MetricsServer srv;
  std::string err;
  ASSERT_EQ(test::error_of(srv.start("127.0.0.1", 0)), "");
  Sample s = example_sample();
  s.cgroups[0].usage = 12345678;
  srv.publish(render_metrics(s, example_extras()));
  test::PrometheusHarness prom;
  ASSERT_TRUE(prom.start("127.0.0.1:" + std::to_string(srv.port()), &err)) << err;
  std::string body;
  auto v = prom.query_until("aimem_memory_used_bytes{cgroup=\"/aimem-test\"}", 30, &body);
  ASSERT_TRUE(v) << body << "\n" << prom.log();
  EXPECT_EQ(*v, 12345678.0);
  // A later value reaches Prometheus too (not a cached first scrape).
  s.cgroups[0].usage = 23456789;
  srv.publish(render_metrics(s, example_extras()));
  std::optional<double> later;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    later = prom.query_until("aimem_memory_used_bytes{cgroup=\"/aimem-test\"}", 5, &body);
    if (later && *later == 23456789.0) break;
  }
  EXPECT_EQ(later, 23456789.0) << body;
  auto up = prom.query_until("up{job=\"aimem\"}", 5, &body);
  EXPECT_EQ(up, 1.0) << body;
  prom.stop();
  srv.stop();
}

}  // namespace
}  // namespace aimem::watch
