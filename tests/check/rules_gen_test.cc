// `aimem rules`: the rules follow the policy's thresholds, name only series
// aimem watch exports, pass the real `promtool check rules`, and fire (or
// stay quiet) under the real `promtool test rules` on series that cross (or
// do not cross) each threshold, with annotations rendered by Prometheus's own
// template engine. Then the command through the real binary.
#include "check/rules_gen.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "support/test_support.h"

namespace aimem::check {
namespace {

using nlohmann::json;
using Labels = std::map<std::string, std::string>;

std::vector<RuleGroup> rules_of(const Policy& p, std::vector<std::string> jobs = {}) {
  auto r = build_rules(p, RulesOptions{std::move(jobs)});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : std::vector<RuleGroup>{};
}

const AlertRule* find_rule(const std::vector<RuleGroup>& groups, const std::string& name) {
  for (const auto& g : groups)
    for (const auto& r : g.rules)
      if (r.alert == name) return &r;
  return nullptr;
}

std::string promtool_path() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    std::string d = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (d.empty() ? "." : d) + "/promtool";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

#define REQUIRE_PROMTOOL(var)                                                             \
  std::string var = promtool_path();                                                      \
  if (var.empty()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";

TEST(RulesGen, EveryRuleHasForSeverityAndAnnotations) {
  auto groups = rules_of(Policy{});
  std::set<std::string> names;
  for (const auto& g : groups)
    for (const auto& r : g.rules) {
      names.insert(r.alert);
      EXPECT_TRUE(std::regex_match(r.for_, std::regex("[0-9]+[smh]"))) << r.alert << " for " << r.for_;
      EXPECT_TRUE(r.severity == "warning" || r.severity == "critical") << r.alert;
      EXPECT_NE(r.summary.find("{{"), std::string::npos) << r.alert << ": the summary names what fired";
      EXPECT_FALSE(r.description.empty()) << r.alert;
      EXPECT_NE(r.runbook.find("`aimem "), std::string::npos) << r.alert << ": " << r.runbook;
    }
  EXPECT_EQ(names, (std::set<std::string>{"AimemMemoryHeadroomLow", "AimemMemoryHeadroomCritical",
                                          "AimemGpuMemoryHeadroomLow", "AimemMemoryExhaustionSoon",
                                          "AimemMemoryExhaustionImminent", "AimemOOMKill", "AimemKvCacheNearFull",
                                          "AimemContainerOOMKilled", "AimemContainerRestarting"}));
}

TEST(RulesGen, EveryAimemMetricTheRulesReadIsOneTheExporterWrites) {
  // The names are checked against the exporter's source, so renaming a
  // series there without the rules fails here.
  std::string exporter = test::read_file(test::source_dir() + "/src/watch/exporter.cc");
  std::regex metric("aimem_[a-z_]+");
  size_t seen = 0;
  for (const auto& g : rules_of(Policy{}))
    for (const auto& r : g.rules)
      for (std::sregex_iterator it(r.expr.begin(), r.expr.end(), metric), end; it != end; ++it, ++seen)
        EXPECT_NE(exporter.find("\"" + it->str() + "\""), std::string::npos) << r.alert << ": " << it->str();
  EXPECT_GE(seen, 8u);
}

TEST(RulesGen, ThresholdsFollowThePolicy) {
  Policy d;
  auto g = rules_of(d);
  EXPECT_NE(find_rule(g, "AimemMemoryHeadroomLow")->expr.find(">= 0.8"), std::string::npos);
  EXPECT_NE(find_rule(g, "AimemMemoryHeadroomCritical")->expr.find(">= 0.9"), std::string::npos);
  EXPECT_NE(find_rule(g, "AimemMemoryExhaustionSoon")->expr.find("< 900"), std::string::npos);
  EXPECT_NE(find_rule(g, "AimemMemoryExhaustionImminent")->expr.find("< 180"), std::string::npos);

  Policy p;
  p.headroom_pct = 15;  // critical at 85%, below critical_used_ratio 0.9
  p.warn_used_ratio = 0.7;
  p.gpu_warn_used_ratio = 0.97;
  p.kv_warn_ratio = 0.8;
  p.time_to_exhaustion_s = 1800;
  g = rules_of(p);
  EXPECT_TRUE(find_rule(g, "AimemMemoryHeadroomLow")->expr.ends_with(">= 0.7"));
  EXPECT_TRUE(find_rule(g, "AimemMemoryHeadroomCritical")->expr.ends_with(">= 0.85")) << find_rule(g, "AimemMemoryHeadroomCritical")->expr;
  EXPECT_TRUE(find_rule(g, "AimemGpuMemoryHeadroomLow")->expr.ends_with(">= 0.97"));
  EXPECT_TRUE(find_rule(g, "AimemKvCacheNearFull")->expr.ends_with(">= 0.8"));
  EXPECT_TRUE(find_rule(g, "AimemMemoryExhaustionSoon")->expr.ends_with("< 1800"));
  EXPECT_TRUE(find_rule(g, "AimemMemoryExhaustionImminent")->expr.ends_with("< 360"));
  EXPECT_NE(find_rule(g, "AimemMemoryExhaustionSoon")->description.find("warning under 30m, critical under 6m"),
            std::string::npos);

  // 25% headroom puts critical at 75%, under the 80% warning: the warning goes.
  p.headroom_pct = 25;
  p.warn_used_ratio = 0.8;
  g = rules_of(p);
  EXPECT_EQ(find_rule(g, "AimemMemoryHeadroomLow"), nullptr);
  EXPECT_TRUE(find_rule(g, "AimemMemoryHeadroomCritical")->expr.ends_with(">= 0.75"));
  EXPECT_NE(render_rules(g, p).find("memory warning none (at or above critical), critical 75% (headroom 25%)"),
            std::string::npos);
}

TEST(RulesGen, JobsRestrictAimemSeriesOnly) {
  auto g = rules_of(Policy{}, {"aimem"});
  for (const auto& grp : g)
    for (const auto& r : grp.rules) {
      bool kube = r.expr.find("kube_") != std::string::npos;
      EXPECT_EQ(r.expr.find("job=\"aimem\"") != std::string::npos, !kube) << r.expr;
    }
  EXPECT_EQ(find_rule(g, "AimemOOMKill")->expr, "increase(aimem_oom_kills_total{job=\"aimem\"}[10m]) > 0");
  // Several jobs: one regex, its metacharacters and PromQL quoting escaped.
  g = rules_of(Policy{}, {"aimem.gpu", "aimem\"x"});
  EXPECT_EQ(find_rule(g, "AimemKvCacheNearFull")->expr,
            "aimem_inference_kv_cache_usage_ratio{job=~\"aimem\\\\.gpu|aimem\\\"x\"} >= 0.9");
  EXPECT_FALSE(build_rules(Policy{}, RulesOptions{{""}}).ok());
  EXPECT_FALSE(build_rules(Policy{}, RulesOptions{{"a\nb"}}).ok());
}

TEST(RulesGen, OutputIsMarkedAndParses) {
  Policy p;
  std::string text = render_rules(rules_of(p), p);
  EXPECT_TRUE(is_generated_rules(text));
  EXPECT_FALSE(is_generated_rules("groups: []\n"));
  YAML::Node y = YAML::Load(text);
  ASSERT_TRUE(y["groups"].IsSequence());
  size_t n = 0;
  for (const auto& g : y["groups"]) n += g["rules"].size();
  EXPECT_EQ(n, 9u);
  EXPECT_EQ(y["groups"][0]["rules"][0]["labels"]["severity"].as<std::string>(), "warning");
}

// ---- the real promtool -----------------------------------------------------

test::RunResult promtool(const std::string& bin, const std::vector<std::string>& args) {
  std::vector<std::string> argv{bin};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run(argv, {}, {}, 120);
}

TEST(RulesGen, PromtoolCheckRulesAcceptsEveryVariant) {
  REQUIRE_PROMTOOL(bin);
  std::string dir = test::temp_dir("rules-check");
  Policy strict;
  strict.headroom_pct = 25;
  strict.time_to_exhaustion_s = 1800;
  struct Case {
    Policy p;
    std::vector<std::string> jobs;
  };
  const Case cases[] = {{Policy{}, {}}, {strict, {}}, {Policy{}, {"aimem"}}, {Policy{}, {"aimem.gpu", "aimem\"x", "a|b"}}};
  int i = 0;
  for (const auto& c : cases) {
    auto groups = rules_of(c.p, c.jobs);
    size_t n = 0;
    for (const auto& g : groups) n += g.rules.size();
    std::string file = fmt::format("{}/rules{}.yaml", dir, i++);
    test::write_file(file, render_rules(groups, c.p));
    auto r = promtool(bin, {"check", "rules", file});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(fmt::format("SUCCESS: {} rules found", n)), std::string::npos) << r.out << r.err;
  }
  // ...and it is a real check: a broken expression fails.
  test::write_file(dir + "/broken.yaml", "groups:\n- name: x\n  rules:\n  - alert: X\n    expr: aimem_memory_used_bytes >=\n");
  EXPECT_NE(promtool(bin, {"check", "rules", dir + "/broken.yaml"}).status, 0);
}

// What Prometheus's template functions print (prometheus/template/template.go),
// for the expected annotations.
std::string humanize_percentage(double ratio) { return fmt::format("{:.4g}%", ratio * 100); }
std::string humanize_duration(double v) {
  if (v == 0) return "0s";
  if (std::fabs(v) < 1) return fmt::format("{:.4g}s", v);  // not reached by these series
  int64_t s = static_cast<int64_t>(v);
  int64_t sec = s % 60, min = (s / 60) % 60, hours = (s / 3600) % 24, days = s / 86400;
  if (days) return fmt::format("{}d {}h {}m {}s", days, hours, min, sec);
  if (hours) return fmt::format("{}h {}m {}s", hours, min, sec);
  if (min) return fmt::format("{}m {}s", min, sec);
  return fmt::format("{:.4g}s", v);
}

std::string humanize1024(double v) {
  if (std::fabs(v) <= 1) return fmt::format("{:.4g}", v);
  std::string prefix;
  for (const char* p : {"ki", "Mi", "Gi", "Ti", "Pi"}) {
    if (std::fabs(v) < 1024) break;
    prefix = p;
    v /= 1024;
  }
  return fmt::format("{:.4g}{}", v, prefix);
}

// Renders the few template forms the rules use, for one alert's labels and
// value; any other form is left in place and fails the test below.
std::string render(std::string t, const Labels& labels, double value) {
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at; (at = t.find(from)) != std::string::npos;) t.replace(at, from.size(), to);
  };
  auto label = [&](const std::string& k) {
    auto it = labels.find(k);
    return it == labels.end() ? std::string() : it->second;
  };
  std::string cg = label("cgroup");
  replace("{{ $labels.pool }}{{ with $labels.cgroup }} {{ . }}{{ end }}", label("pool") + (cg.empty() ? "" : " " + cg));
  for (const auto& [k, v] : labels) replace("{{ $labels." + k + " }}", v);
  replace("{{ $value | humanizePercentage }}", humanize_percentage(value));
  replace("{{ $value | humanizeDuration }}", humanize_duration(value));
  replace("{{ $value | humanize1024 }}", humanize1024(value));
  replace("{{ printf \"%.0f\" $value }}", fmt::format("{:.0f}", value));
  EXPECT_EQ(t.find("{{"), std::string::npos) << "a template form the test does not render: " << t;
  return t;
}

struct Scenario {
  json series = json::array();
  // alertname -> eval time -> expected alerts (labels, value)
  std::map<std::string, std::map<std::string, std::vector<std::pair<Labels, double>>>> expect;

  static std::string selector(const std::string& metric, const Labels& l) {
    std::string s = metric + "{";
    bool first = true;
    for (const auto& [k, v] : l) {
      s += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, v);
      first = false;
    }
    return s + "}";
  }
  void add(const std::string& metric, const Labels& l, const std::string& values) {
    series.push_back({{"series", selector(metric, l)}, {"values", values}});
  }
  void constant(const std::string& metric, const Labels& l, double v) { add(metric, l, fmt::format("{}+0x40", v)); }
  void fires(const std::string& alert, const std::string& at, Labels l, double value) {
    expect[alert][at].push_back({std::move(l), value});
  }
  void quiet(const std::string& alert, const std::string& at) { expect[alert][at]; }
};

// Series that cross each threshold of `p` and series that stay below, with
// the alerts each must (and must not) raise.
Scenario scenario_for(const Policy& p, const std::string& job) {
  Scenario s;
  const double crit = std::min(p.critical_used_ratio, (100 - p.headroom_pct) / 100);
  const bool has_warning = p.warn_used_ratio < crit;
  const double limit = 1e9;
  Labels base{{"instance", "node1:9464"}, {"job", job}};
  auto with = [&](Labels extra) {
    Labels l = base;
    l.insert(extra.begin(), extra.end());
    return l;
  };
  // Memory pools: used/limit in each band.
  struct Pool {
    Labels labels;
    double ratio;
    bool has_limit = true;
  };
  const double below = std::min(p.warn_used_ratio, crit) - 0.05;
  const Pool pools[] = {
      {with({{"pool", "cgroup"}, {"cgroup", "/kubepods/ok"}}), below},
      {with({{"pool", "cgroup"}, {"cgroup", "/kubepods/warm"}}), (p.warn_used_ratio + crit) / 2},
      {with({{"pool", "cgroup"}, {"cgroup", "/kubepods/full"}}), (crit + 1) / 2},
      {with({{"pool", "cgroup"}, {"cgroup", "/system.slice/nolimit.service"}}), 0.99, false},
      {with({{"pool", "host_ram"}}), (crit + 1) / 2},
      {with({{"pool", "swap"}}), 0.99},  // swap is never a headroom alert
  };
  for (const auto& pool : pools) {
    double used = std::round(pool.ratio * limit);
    s.constant("aimem_memory_used_bytes", pool.labels, used);
    if (pool.has_limit) s.constant("aimem_memory_limit_bytes", pool.labels, limit);
    if (!pool.has_limit || pool.labels.at("pool") == "swap") continue;
    double v = used / limit;
    Labels warn = pool.labels, critical = pool.labels;
    warn["severity"] = "warning";
    critical["severity"] = "critical";
    if (has_warning && v >= p.warn_used_ratio) s.fires("AimemMemoryHeadroomLow", "10m", warn, v);
    if (v >= crit) s.fires("AimemMemoryHeadroomCritical", "10m", critical, v);
  }
  if (has_warning) s.quiet("AimemMemoryHeadroomLow", "10m");
  s.quiet("AimemMemoryHeadroomCritical", "10m");
  // `for:` holds them back: a minute in, neither has fired (warning 5m, critical 2m).
  s.quiet("AimemMemoryHeadroomLow", "1m");
  s.quiet("AimemMemoryHeadroomCritical", "1m");

  // GPUs: one past gpu_warn_used_ratio, one at vLLM's usual 90% preallocation
  // (below the threshold).
  const double gpu_total = 80.0 * (1ull << 30);
  for (auto [gpu, ratio] : {std::pair<std::string, double>{"0", (p.gpu_warn_used_ratio + 1) / 2},
                            std::pair<std::string, double>{"1", p.gpu_warn_used_ratio - 0.05}}) {
    double used = std::round(ratio * gpu_total);
    s.constant("aimem_gpu_memory_used_bytes", with({{"gpu", gpu}}), used);
    s.constant("aimem_gpu_memory_total_bytes", with({{"gpu", gpu}}), gpu_total);
    if (used / gpu_total >= p.gpu_warn_used_ratio)
      s.fires("AimemGpuMemoryHeadroomLow", "10m", with({{"gpu", gpu}, {"severity", "warning"}}), used / gpu_total);
  }
  s.quiet("AimemGpuMemoryHeadroomLow", "10m");

  // Time to exhaustion: half the horizon (warning), a tenth (both), twice
  // (none), and swap (never).
  const double tte = p.time_to_exhaustion_s;
  struct Tte {
    Labels labels;
    double seconds;
  };
  const Tte ttes[] = {
      {with({{"pool", "cgroup"}, {"cgroup", "/kubepods/leak"}}), std::round(tte / 2)},
      {with({{"pool", "gpu"}, {"gpu", "0"}}), std::round(tte / 10)},
      {with({{"pool", "host_ram"}}), std::round(tte * 2)},
      {with({{"pool", "swap"}}), std::round(tte / 10)},
  };
  for (const auto& t : ttes) {
    s.constant("aimem_time_to_exhaustion_seconds", t.labels, t.seconds);
    if (t.labels.at("pool") == "swap") continue;
    Labels w = t.labels, c = t.labels;
    w["severity"] = "warning";
    c["severity"] = "critical";
    if (t.seconds < tte) s.fires("AimemMemoryExhaustionSoon", "10m", w, t.seconds);
    if (t.seconds < tte / 5) s.fires("AimemMemoryExhaustionImminent", "10m", c, t.seconds);
  }
  s.quiet("AimemMemoryExhaustionSoon", "10m");
  s.quiet("AimemMemoryExhaustionImminent", "10m");

  // OOM kills: one in a cgroup at minute 5; host RAM's counter stands still
  // (a count since boot is not an alert).
  Labels oom = with({{"pool", "cgroup"}, {"cgroup", "/kubepods/full"}});
  s.add("aimem_oom_kills_total", oom, "0+0x4 1+0x40");
  s.constant("aimem_oom_kills_total", with({{"pool", "host_ram"}}), 7);
  Labels oom_alert = oom;
  oom_alert["severity"] = "critical";
  s.fires("AimemOOMKill", "10m", oom_alert, 1);
  s.quiet("AimemOOMKill", "30m");  // 10 minutes without a new kill: resolved

  // KV cache: one server past kv_warn_ratio, one below.
  Labels busy = with({{"target", "http://127.0.0.1:8000/metrics"}});
  Labels idle = with({{"target", "http://127.0.0.1:8001/metrics"}});
  s.constant("aimem_inference_kv_cache_usage_ratio", busy, (p.kv_warn_ratio + 1) / 2);
  s.constant("aimem_inference_kv_cache_usage_ratio", idle, p.kv_warn_ratio - 0.1);
  busy["severity"] = "warning";
  s.fires("AimemKvCacheNearFull", "10m", busy, (p.kv_warn_ratio + 1) / 2);

  // kube-state-metrics (its own job): vllm-0 restarted once after an OOM
  // kill; tgi-0 restarted four times with reason Error.
  Labels ksm{{"instance", "ksm:8080"}, {"job", "kube-state-metrics"}, {"namespace", "ai"}};
  Labels vllm = ksm, tgi = ksm;
  vllm.insert({{"pod", "vllm-0"}, {"container", "vllm"}});
  tgi.insert({{"pod", "tgi-0"}, {"container", "tgi"}});
  s.add("kube_pod_container_status_restarts_total", vllm, "0+0x4 1+0x40");
  s.add("kube_pod_container_status_restarts_total", tgi, "0+0x5 1+1x3 4+0x40");
  Labels vr = vllm, te = tgi, to = tgi;
  vr["reason"] = "OOMKilled";
  te["reason"] = "Error";
  to["reason"] = "OOMKilled";
  s.constant("kube_pod_container_status_last_terminated_reason", vr, 1);
  s.constant("kube_pod_container_status_last_terminated_reason", te, 1);
  s.constant("kube_pod_container_status_last_terminated_reason", to, 0);
  Labels vllm_alert = vllm, tgi_alert = tgi;
  vllm_alert["severity"] = "critical";
  tgi_alert["severity"] = "warning";
  s.fires("AimemContainerOOMKilled", "10m", vllm_alert, 1);
  s.fires("AimemContainerRestarting", "30m", tgi_alert, 4);
  s.quiet("AimemContainerOOMKilled", "30m");
  return s;
}

// The promtool unit-test file (JSON is YAML) for `scenario` against the rules
// in rules_file; a jobless scrape (--job elsewhere) expects no aimem alert.
json test_file(const std::vector<RuleGroup>& groups, const Scenario& s, bool aimem_alerts_expected) {
  json tests = json::array();
  json alert_tests = json::array();
  for (const auto& [alert, by_time] : s.expect) {
    const AlertRule* rule = find_rule(groups, alert);
    if (!rule) continue;  // a rule the policy dropped
    bool kube = rule->expr.find("kube_") != std::string::npos;
    for (const auto& [at, alerts] : by_time) {
      json exp = json::array();
      if (aimem_alerts_expected || kube)
        for (const auto& [labels, value] : alerts) {
          json ann{{"summary", render(rule->summary, labels, value)},
                   {"description", render(rule->description, labels, value)},
                   {"runbook", render(rule->runbook, labels, value)}};
          exp.push_back({{"exp_labels", labels}, {"exp_annotations", ann}});
        }
      alert_tests.push_back({{"eval_time", at}, {"alertname", alert}, {"exp_alerts", exp}});
    }
  }
  tests.push_back({{"interval", "1m"}, {"input_series", s.series}, {"alert_rule_test", alert_tests}});
  return {{"rule_files", {"rules.yaml"}}, {"evaluation_interval", "1m"}, {"tests", tests}};
}

void expect_promtool_tests_pass(const Policy& p, const std::string& tag) {
  REQUIRE_PROMTOOL(bin);
  std::string dir = test::temp_dir("rules-" + tag);
  auto groups = rules_of(p, {"aimem"});
  test::write_file(dir + "/rules.yaml", render_rules(groups, p));
  Scenario s = scenario_for(p, "aimem");
  test::write_file(dir + "/test.yaml", test_file(groups, s, true).dump(2));
  auto r = promtool(bin, {"test", "rules", dir + "/test.yaml"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("SUCCESS"), std::string::npos) << r.out << r.err;

  // The same series from another job: the --job matcher keeps every aimem
  // rule quiet (the kube-state-metrics rules still fire).
  Scenario other = scenario_for(p, "node-exporter");
  test::write_file(dir + "/other.yaml", test_file(groups, other, false).dump(2));
  r = promtool(bin, {"test", "rules", dir + "/other.yaml"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;

  // A wrong expectation must fail, or the checks above prove nothing: the
  // pool below every threshold is claimed to raise the critical alert.
  Scenario wrong = s;
  Labels ok_pool{{"instance", "node1:9464"}, {"job", "aimem"}, {"pool", "cgroup"}, {"cgroup", "/kubepods/ok"},
                 {"severity", "critical"}};
  wrong.fires("AimemMemoryHeadroomCritical", "10m", ok_pool, 0.5);
  test::write_file(dir + "/wrong.yaml", test_file(groups, wrong, true).dump(2));
  r = promtool(bin, {"test", "rules", dir + "/wrong.yaml"});
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("AimemMemoryHeadroomCritical"), std::string::npos) << r.out << r.err;
}

// The fleet group over the series the DaemonSet's aimem and kube-state-metrics
// export: per-container headroom, per-pod time to exhaustion and OOM kills
// (all named by node, namespace, pod, container), and a Deployment whose
// surged second copy fits on no node (a 60 GiB model server where the freest
// node has 44 GiB unrequested) while a 20 GiB one fits.
TEST(RulesGen, PromtoolTestRulesFleet) {
  REQUIRE_PROMTOOL(bin);
  Policy p;
  auto built = build_rules(p, RulesOptions{{"aimem"}, true});
  ASSERT_TRUE(built.ok());
  const auto& groups = *built;
  ASSERT_EQ(groups.back().name, "aimem-fleet");
  EXPECT_EQ(groups.back().records.size(), 9u);
  const double GiB = 1024.0 * 1024 * 1024;
  Scenario s;
  auto aimem = [](Labels extra) {
    Labels l{{"instance", "10.0.0.7:9464"}, {"job", "aimem"}, {"node", "gpu-1"}};
    l.insert(extra.begin(), extra.end());
    return l;
  };
  auto container = [&](const std::string& pod, const std::string& c) {
    return aimem({{"pool", "cgroup"}, {"cgroup", "/kubepods/pod-" + pod + "/" + c}, {"namespace", "ai"}, {"pod", pod}, {"container", c}});
  };
  // vllm-0 at 90% of its limit, tgi-0 at 50%, and the pod-level cgroup of
  // vllm-0 (no container label) at 95%: only the container counts.
  s.constant("aimem_memory_used_bytes", container("vllm-0", "vllm"), 0.9 * 40 * GiB);
  s.constant("aimem_memory_limit_bytes", container("vllm-0", "vllm"), 40 * GiB);
  s.constant("aimem_memory_used_bytes", container("tgi-0", "tgi"), 0.5 * 40 * GiB);
  s.constant("aimem_memory_limit_bytes", container("tgi-0", "tgi"), 40 * GiB);
  Labels pod_level = aimem({{"pool", "cgroup"}, {"cgroup", "/kubepods/pod-vllm-0"}, {"namespace", "ai"}, {"pod", "vllm-0"}});
  s.constant("aimem_memory_used_bytes", pod_level, 0.95 * 41 * GiB);
  s.constant("aimem_memory_limit_bytes", pod_level, 41 * GiB);
  s.fires("AimemPodMemoryHeadroomLow", "10m",
          {{"node", "gpu-1"}, {"namespace", "ai"}, {"pod", "vllm-0"}, {"container", "vllm"}, {"severity", "warning"}}, 1 - 0.9);
  s.quiet("AimemPodMemoryHeadroomLow", "2m");  // for: 5m
  // Time to exhaustion: vllm-0's container in 300 s; tgi-0 in two hours.
  s.constant("aimem_time_to_exhaustion_seconds", container("vllm-0", "vllm"), 300);
  s.constant("aimem_time_to_exhaustion_seconds", container("tgi-0", "tgi"), 7200);
  s.fires("AimemPodMemoryExhaustionSoon", "10m", {{"node", "gpu-1"}, {"namespace", "ai"}, {"pod", "vllm-0"}, {"severity", "warning"}}, 300);
  // One OOM kill in tgi-0 at minute 5; resolved ten minutes later.
  s.add("aimem_oom_kills_total", container("tgi-0", "tgi"), "0+0x4 1+0x40");
  s.constant("aimem_oom_kills_total", container("vllm-0", "vllm"), 0);
  s.fires("AimemPodOOMKilled", "10m", {{"node", "gpu-1"}, {"namespace", "ai"}, {"pod", "tgi-0"}, {"container", "tgi"}, {"severity", "critical"}},
          1);
  s.quiet("AimemPodOOMKilled", "30m");
  // kube-state-metrics: two nodes of 64 GiB; llama's pod requests 60 GiB on
  // gpu-1, emb's 20 GiB on gpu-2; both Deployments surge one pod.
  Labels ksm{{"instance", "ksm:8080"}, {"job", "kube-state-metrics"}};
  auto k = [&](Labels extra) {
    Labels l = ksm;
    l.insert(extra.begin(), extra.end());
    return l;
  };
  s.constant("kube_node_status_allocatable", k({{"node", "gpu-1"}, {"resource", "memory"}, {"unit", "byte"}}), 64 * GiB);
  s.constant("kube_node_status_allocatable", k({{"node", "gpu-2"}, {"resource", "memory"}, {"unit", "byte"}}), 64 * GiB);
  for (auto [name, node, gib] : {std::tuple<std::string, std::string, double>{"llama", "gpu-1", 60}, {"emb", "gpu-2", 20}}) {
    std::string rs = name + "-7d9f8c6b5", pod = rs + "-x2x7q";
    s.constant("kube_pod_container_resource_requests",
               k({{"namespace", "ai"}, {"pod", pod}, {"container", "srv"}, {"node", node}, {"resource", "memory"}, {"unit", "byte"}}),
               gib * GiB);
    s.constant("kube_pod_owner", k({{"namespace", "ai"}, {"pod", pod}, {"owner_kind", "ReplicaSet"}, {"owner_name", rs}, {"owner_is_controller", "true"}}), 1);
    s.constant("kube_replicaset_owner", k({{"namespace", "ai"}, {"replicaset", rs}, {"owner_kind", "Deployment"}, {"owner_name", name}, {"owner_is_controller", "true"}}), 1);
    s.constant("kube_deployment_spec_strategy_rollingupdate_max_surge", k({{"namespace", "ai"}, {"deployment", name}}), 1);
  }
  s.fires("AimemRollingUpdateCannotFit", "20m", {{"namespace", "ai"}, {"deployment", "llama"}, {"severity", "warning"}}, 60 * GiB);
  s.quiet("AimemRollingUpdateCannotFit", "10m");  // for: 15m
  std::string dir = test::temp_dir("rules-fleet");
  test::write_file(dir + "/rules.yaml", render_rules(groups, p));
  test::write_file(dir + "/test.yaml", test_file(groups, s, true).dump(2));
  auto r = promtool(bin, {"test", "rules", dir + "/test.yaml"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // A wrong expectation fails: emb's second copy does fit.
  Scenario wrong = s;
  wrong.fires("AimemRollingUpdateCannotFit", "20m", {{"namespace", "ai"}, {"deployment", "emb"}, {"severity", "warning"}}, 20 * GiB);
  test::write_file(dir + "/wrong.yaml", test_file(groups, wrong, true).dump(2));
  EXPECT_NE(promtool(bin, {"test", "rules", dir + "/wrong.yaml"}).status, 0);
}

TEST(RulesGen, PromtoolTestRulesDefaultPolicy) { expect_promtool_tests_pass(Policy{}, "default"); }

TEST(RulesGen, PromtoolTestRulesStrictPolicy) {
  // Headroom 25%: critical at 75%, no separate warning; the rest tightened.
  auto p = read_policy_file(test::source_dir() + "/tests/fixtures/rules/strict.yaml");
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_DOUBLE_EQ(p->headroom_pct, 25);
  expect_promtool_tests_pass(*p, "strict");
}

TEST(RulesGen, PromtoolTestRulesCustomThresholds) {
  Policy p;
  p.warn_used_ratio = 0.6;
  p.critical_used_ratio = 0.7;
  p.headroom_pct = 5;  // the lower of 0.7 and 0.95 wins
  p.gpu_warn_used_ratio = 0.85;
  p.kv_warn_ratio = 0.5;
  p.time_to_exhaustion_s = 3600;
  expect_promtool_tests_pass(p, "custom");
}

// ---- aimem rules through the real binary ------------------------------------

TEST(RulesCli, DefaultRulesAreTheCheckedInFile) {
  auto r = test::run_aimem({"rules"});
  ASSERT_EQ(r.status, 0) << r.err;
  YAML::Node y = YAML::Load(r.out);
  EXPECT_TRUE(y["groups"].IsSequence());
  // deploy/prometheus-rules.yaml is this output; regenerate it with
  // `aimem rules -o deploy/prometheus-rules.yaml` when the rules change.
  EXPECT_EQ(r.out, test::read_file(test::source_dir() + "/deploy/prometheus-rules.yaml"));
}

TEST(RulesCli, FleetRulesAreTheCheckedInFile) {
  auto r = test::run_aimem({"rules", "--fleet"});
  ASSERT_EQ(r.status, 0) << r.err;
  // deploy/kubernetes/monitoring/prometheus-rules.yaml: `aimem rules --fleet -o deploy/kubernetes/monitoring/prometheus-rules.yaml`.
  EXPECT_EQ(r.out, test::read_file(test::source_dir() + "/deploy/kubernetes/monitoring/prometheus-rules.yaml"));
  EXPECT_NE(r.out.find("record: namespace_pod_container:aimem_memory_headroom_ratio"), std::string::npos);
}

TEST(RulesCli, PolicyFileAndJobs) {
  auto r = test::run_aimem({"rules", "--policy", test::source_dir() + "/tests/fixtures/rules/strict.yaml", "--job",
                            "aimem"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("strict.yaml"), std::string::npos);
  YAML::Node y = YAML::Load(r.out);
  std::map<std::string, std::string> expr;
  for (const auto& g : y["groups"])
    for (const auto& rule : g["rules"]) expr[rule["alert"].as<std::string>()] = rule["expr"].as<std::string>();
  EXPECT_EQ(expr.count("AimemMemoryHeadroomLow"), 0u);
  EXPECT_TRUE(expr["AimemMemoryHeadroomCritical"].ends_with(">= 0.75"));
  EXPECT_TRUE(expr["AimemMemoryExhaustionSoon"].ends_with("< 1800"));
  EXPECT_NE(expr["AimemOOMKill"].find("job=\"aimem\""), std::string::npos);
}

TEST(RulesCli, BadPolicyExitsTwoWithFileAndLine) {
  std::string fx = test::source_dir() + "/tests/fixtures/rules/";
  auto r = test::run_aimem({"rules", "--policy", fx + "bad-headroom.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("bad-headroom.yaml:4: policy.headroom: 0.2 is ambiguous"), std::string::npos) << r.err;
  r = test::run_aimem({"rules", "--policy", fx + "unknown-key.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown-key.yaml:3: policy.gpu_count: unknown key"), std::string::npos) << r.err;
  r = test::run_aimem({"rules", "--policy", fx + "missing.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing.yaml: cannot read the policy file"), std::string::npos) << r.err;
  r = test::run_aimem({"rules", "--job", ""});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--job"), std::string::npos) << r.err;
}

TEST(RulesCli, OutputFileReplacesOnlyItsOwnOutput) {
  std::string dir = test::temp_dir("rules-out");
  std::string out = dir + "/aimem-rules.yaml";
  auto r = test::run_aimem({"rules", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string first = test::read_file(out);
  EXPECT_TRUE(is_generated_rules(first));
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // Prometheus, often another user, reads it
  // Its own earlier output is replaced (with the new policy's rules).
  r = test::run_aimem({"rules", "--policy", test::source_dir() + "/tests/fixtures/rules/strict.yaml", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(test::read_file(out), first);
  EXPECT_NE(test::read_file(out).find(">= 0.75"), std::string::npos);
  // Someone else's file is not, unless --force.
  std::string mine = dir + "/alerts.yaml";
  test::write_file(mine, "groups: []  # hand-written\n");
  r = test::run_aimem({"rules", "-o", mine});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not written by aimem rules"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(mine), "groups: []  # hand-written\n");
  r = test::run_aimem({"rules", "-o", mine, "--force"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(is_generated_rules(test::read_file(mine)));
  // A folder is refused; no temporary file is left behind anywhere.
  r = test::run_aimem({"rules", "-o", dir});
  EXPECT_EQ(r.status, 2);
  r = test::run_aimem({"rules", "-o", dir + "/no/such/folder/x.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot create"), std::string::npos) << r.err;
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2u);
}

}  // namespace
}  // namespace aimem::check
