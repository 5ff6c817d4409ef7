// aimem diagnose --prometheus URL (see diagnose_prom.h): the window, the
// HTTP transport (net's client, plain http, bounded), the facts from
// sources/prom_diagnose.h, the diagnosis, the trend of the pool that failed
// (watch's analysis of a recording, over the Prometheus series), the output.
#include "cli/commands/diagnose_prom.h"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "core/text.h"
#include "core/time.h"
#include "diagnose/diagnosis.h"
#include "evidence/store.h"
#include "net/http_client.h"
#include "render/diagnosis_json.h"
#include "render/diagnosis_text.h"
#include "sources/prom_diagnose.h"
#include "watch/trend.h"
#include "watch/trend_diag.h"

namespace aimem::cli {
namespace {

constexpr uint64_t kMaxAnswer = 16ull << 20;  // bytes of one API answer
constexpr int64_t kMaxWindowUs = 31LL * 24 * 3600 * 1000000;

int usage_error(const std::string& message) {
  fmt::print(stderr, "aimem diagnose: {}\n", text::printable(message));
  return 2;
}

// GET over net's client: one connection per query, 3 s to connect, 15 s for
// the whole exchange, the answer cut at kMaxAnswer.
prom::Get http_get(const net::Url& url, const std::string& shown) {
  std::string prefix = url.path;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return [url, prefix, shown](const std::string& path) -> Result<prom::HttpAnswer> {
    net::Options o;
    o.connect_timeout_s = 3;
    o.read_timeout_s = 15;
    o.write_timeout_s = 5;
    net::Request req("GET", prefix + path, {{"Accept", "application/json"}});
    req.deadline = net::Clock::now() + std::chrono::seconds(15);
    net::Fetched f = net::fetch(url.host, url.port, std::move(req), o, kMaxAnswer);
    if (!f.outcome.ok()) {
      if (f.outcome.failure == net::Failure::stopped)
        return make_error(fmt::format("{}{}: the answer is larger than {} MiB", shown, prefix + path.substr(0, path.find('?')), kMaxAnswer >> 20));
      return make_error(fmt::format("cannot reach Prometheus at {}: {} ({})", shown, net::failure_name(f.outcome.failure),
                                    text::printable(f.outcome.detail)));
    }
    return prom::HttpAnswer{f.outcome.head.status, std::move(f.body)};
  };
}

// The Prometheus series as a recording for watch's trend analysis, up to the
// failure: the pool of the primary incident only.
void apply_series_trend(Diagnosis& d, const prom::Report& rep) {
  if (d.incidents.empty()) return;
  const Incident& inc = d.incidents.front();
  const Fact* head = inc.failures.empty() ? nullptr : &d.facts[inc.failures.front()];
  const int64_t until_us = inc.time_us.value_or(INT64_MAX);
  for (const prom::PoolSeries& p : rep.pools) {
    bool mine = false;
    if (inc.layer == Layer::gpu_vram) mine = text::starts_with(p.pool_id, "gpu:") && head && head->gpu && p.owner == std::to_string(*head->gpu);
    else if (inc.layer == Layer::k8s_pod_limit || inc.layer == Layer::container_limit)
      mine = text::starts_with(p.pool_id, "cgroup:") && head && text::ends_with(p.owner, "/" + head->pod + "/" + head->container);
    else if (inc.layer == Layer::host_ram) mine = p.pool_id == "host_ram";
    if (!mine || !p.limit) continue;
    std::vector<watch::Sample> samples;
    for (const prom::Point& pt : p.used) {
      if (pt.t_ms * 1000 >= until_us) break;  // up to the failure, not the recovery after it
      watch::Sample s;
      s.time_us = pt.t_ms * 1000;
      const uint64_t used = pt.v > 0 ? static_cast<uint64_t>(pt.v) : 0;
      if (p.pool_id == "host_ram") {
        s.host.mem_total = *p.limit;
        s.host.mem_available = *p.limit > used ? *p.limit - used : 0;
      } else if (text::starts_with(p.pool_id, "gpu:")) {
        watch::GpuSample g;
        g.index = static_cast<unsigned>(*head->gpu);
        g.total = p.limit;
        g.used = used;
        s.gpus.push_back(g);
      } else {
        watch::CgroupSample c;
        c.path = p.pool_id.substr(7);
        c.usage = used;
        c.limit = p.limit;
        s.cgroups.push_back(c);
      }
      samples.push_back(std::move(s));
    }
    if (samples.size() < 10) continue;
    watch::apply_trend(d, watch::analyse(samples), p.pool_id);
    return;
  }
}

// Facts read from Prometheus carry "Prometheus URL (exporter)" as their
// source; the evidence names Prometheus rather than the family a log line
// would have (there is no Family for it), and where is the URL and exporter.
void name_prometheus(Diagnosis& d) {
  for (auto& inc : d.incidents)
    for (auto& e : inc.evidence)
      if (text::starts_with(e.where, "Prometheus ")) {
        e.source = "Prometheus";
        e.where = e.where.substr(11);
      }
}

}  // namespace

int run_diagnose_prometheus(const PromDiagnoseArgs& a) {
  if (a.pod.empty() && a.node.empty()) return usage_error("--prometheus needs --pod NS/NAME or --node NAME");
  if (!a.container.empty() && a.pod.empty()) return usage_error("--container needs --pod NS/NAME");
  prom::Scope scope;
  scope.url = a.url;
  if (!a.pod.empty()) {
    size_t slash = a.pod.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == a.pod.size() || a.pod.find('/', slash + 1) != std::string::npos)
      return usage_error(fmt::format("--pod {}: expected NAMESPACE/NAME (e.g. ml/vllm-0)", a.pod));
    scope.ns = a.pod.substr(0, slash);
    scope.pod = a.pod.substr(slash + 1);
  }
  scope.container = a.container;
  scope.node = a.node;
  auto url = net::split_url(a.url);
  if (!url) return usage_error("--prometheus " + url.error().message);
  if (url->tls)
    return usage_error(fmt::format("--prometheus {}: https is not supported; reach the server over http (e.g. kubectl port-forward "
                                   "-n monitoring svc/prometheus 9090, then --prometheus http://127.0.0.1:9090)", a.url));

  const int64_t now = timeutil::now_us();
  scope.end_us = now;
  if (!a.at.empty()) {
    auto at = timeutil::parse_since(a.at, now);
    if (!at) return usage_error("--at: " + at.error().message);
    scope.end_us = *at;
  }
  const std::string since = a.since.empty() ? "1h" : a.since;
  if (auto d = timeutil::parse_duration_us(since, "--since")) {
    scope.start_us = scope.end_us - *d;
  } else {
    auto t = timeutil::parse_since(since, now);
    if (!t) return usage_error(t.error().message);
    scope.start_us = *t;
  }
  if (scope.start_us >= scope.end_us)
    return usage_error(fmt::format("--since {} is not before the window's end ({})", since, timeutil::format_human(scope.end_us)));
  if (scope.end_us - scope.start_us > kMaxWindowUs) return usage_error(fmt::format("--since {}: a window longer than 31 days", since));

  FactStore store;
  auto rep = prom::collect(scope, http_get(*url, a.url), store);
  if (!rep) return usage_error(rep.error().message);
  if (rep->series == 0) {
    for (const auto& w : rep->warnings) fmt::print(stderr, "aimem diagnose: {}\n", text::printable(w));
    return usage_error(fmt::format("nothing about {} in Prometheus {} between {} and {}",
                                   !a.pod.empty() ? "pod " + a.pod : "node " + a.node, a.url, timeutil::format_human(scope.start_us),
                                   timeutil::format_human(scope.end_us)));
  }

  DiagnoseOptions opt;
  opt.since_us = scope.start_us;
  Diagnosis d = diagnose(std::move(store.facts()), opt);
  apply_series_trend(d, *rep);
  name_prometheus(d);
  for (auto& w : rep->warnings) d.warnings.push_back(text::printable(w));
  for (auto& n : rep->notes) d.notes.push_back(text::printable(n));
  return print_diagnosis(d, a.json, a.verbose);
}

}  // namespace aimem::cli
