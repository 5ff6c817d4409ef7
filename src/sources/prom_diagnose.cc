// See prom_diagnose.h. The metric definitions read here:
//   kube-state-metrics  kubernetes/kube-state-metrics:docs/pod-metrics.md
//                       (labels namespace, pod, container, reason, resource)
//   cAdvisor            google/cadvisor:metrics/prometheus.go (the kubelet's
//                       /metrics/cadvisor adds namespace, pod, container)
//   DCGM exporter       NVIDIA/dcgm-exporter:etc/default-counters.csv
//                       (FB_USED / FB_FREE in MiB; labels gpu, UUID,
//                       Hostname, and namespace, pod, container with the
//                       Kubernetes pod mapping)
//   node_exporter       prometheus/node_exporter:collector/meminfo.go,
//                       collector/vmstat_linux.go (oom_kill is a default field)
//   aimem watch         src/watch/exporter.cc
//
// How the answers become facts:
// - a rise of kube_pod_container_status_restarts_total is one termination; the
//   last-terminated reason (and exit code) that KSM shows from then on says
//   which: OOMKilled -> k8s_oomkilled, another reason -> exit_status. With no
//   rise in the window, a last reason of OOMKilled still names a kill at or
//   before its first sample;
// - a rise of container_oom_events_total or aimem_oom_kills_total{pod} (for
//   --node, any of the node's cgroups) is a cgroup's OOM kill
//   (cgroup_oom_counter), with the working set beside it;
// - a rise of node_vmstat_oom_kill or aimem_oom_kills_total{pool="host_ram"}
//   is a kernel OOM kill on the node (the kernel counts every kill, a
//   cgroup's too): a memory cgroup's limit when aimem counted a cgroup's kill
//   in the same interval; else the host ran out when MemAvailable
//   (node_exporter's, else aimem's host_ram pool: limit - used) was low around
//   it, or when the node's memory is not in Prometheus at all; else a memory
//   cgroup's limit was hit;
// - a GPU whose DCGM framebuffer was full (free <= 1% or 256 MiB) is a GPU
//   memory exhaustion (gpu_oom), firmer when the pod restarted right after;
// - limits, requests, restarts, working sets (cAdvisor's, aimem's cgroup
//   usage), framebuffer and node memory are context.
#include "sources/prom_diagnose.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <set>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"

namespace aimem::prom {
namespace {

constexpr size_t kMaxQueries = 40;
constexpr double kBudgetS = 120;           // all queries together
constexpr int64_t kAfterRestartMs = 300'000;  // a reason shown within 5 min of a restart is that restart's
constexpr uint64_t kNoLimit = uint64_t(1) << 60;
constexpr int kMaxEpisodes = 3;

const char* const kKsm = "kube-state-metrics";
const char* const kCadvisor = "cAdvisor";
const char* const kDcgm = "DCGM exporter";
const char* const kNodeExporter = "node_exporter";
const char* const kAimem = "aimem watch";

const std::vector<std::string> kPodLabels = {"namespace", "pod", "container"};

std::string when(int64_t t_ms) { return timeutil::format_iso(t_ms * 1000); }
std::string bytes(double v) { return units::format_bytes(v > 0 ? static_cast<uint64_t>(v) : 0); }

struct Rise {
  int64_t t_before_ms = 0, t_ms = 0;
  double from = 0, to = 0;
};

// Where a counter went up: between two samples, after a reset, or a series
// that first appears within the window already above zero (a new container's
// counter; a series there from the window's start says nothing of before).
// A counter of the whole host since boot (the kernel's oom_kill) is another
// matter: its series appears whenever the exporter starts, at the count
// since boot, so `since_boot` counts only what it did once there.
std::vector<Rise> rises(const Series& s, int64_t window_start_ms, int64_t step_ms, bool since_boot = false) {
  std::vector<Rise> out;
  const auto& p = s.points;
  if (p.empty()) return out;
  if (!since_boot && p[0].v > 0 && p[0].t_ms > window_start_ms + 2 * step_ms) out.push_back({p[0].t_ms - step_ms, p[0].t_ms, 0, p[0].v});
  for (size_t i = 1; i < p.size() && out.size() < 20; ++i) {
    if (p[i].v > p[i - 1].v) out.push_back({p[i - 1].t_ms, p[i].t_ms, p[i - 1].v, p[i].v});
    else if (p[i].v < p[i - 1].v && p[i].v > 0) out.push_back({p[i - 1].t_ms, p[i].t_ms, 0, p[i].v});
  }
  return out;
}

const Point* at_or_before(const std::vector<Point>& p, int64_t t_ms) {
  const Point* best = nullptr;
  for (const auto& x : p)
    if (x.t_ms <= t_ms) best = &x;
  return best;
}

std::string key_of(const Series& s) { return s.label("namespace") + "/" + s.label("pod") + "/" + s.label("container"); }

// Several series of one container (cAdvisor starts a new one, with a new id,
// for each restart): their points merged, the larger value where times meet.
struct Merged {
  const Series* latest = nullptr;
  std::vector<Point> points;
};
std::map<std::string, Merged> by_container(const std::vector<Series>& series) {
  std::map<std::string, Merged> out;
  for (const auto& s : series) {
    Merged& m = out[key_of(s)];
    if (!m.latest || (!s.points.empty() && !m.latest->points.empty() && s.points.back().t_ms > m.latest->points.back().t_ms))
      m.latest = &s;
    for (const auto& p : s.points) m.points.push_back(p);
  }
  for (auto& [k, m] : out) {
    std::sort(m.points.begin(), m.points.end(), [](const Point& a, const Point& b) { return a.t_ms < b.t_ms || (a.t_ms == b.t_ms && a.v > b.v); });
    m.points.erase(std::unique(m.points.begin(), m.points.end(), [](const Point& a, const Point& b) { return a.t_ms == b.t_ms; }),
                   m.points.end());
  }
  return out;
}

struct Query {
  std::string what;  // the metric and selector, for messages
  Response r;
  bool ok = false;
};

class Collector {
 public:
  Collector(const Scope& scope, const Get& get, FactSink& sink, Report& rep)
      : s_(scope), get_(get), sink_(sink), rep_(rep), started_(std::chrono::steady_clock::now()) {
    rep_.step_s = step_for((s_.end_us - s_.start_us) / 1'000'000);
    step_ms_ = rep_.step_s * 1000;
    start_ms_ = s_.start_us / 1000;
  }

  // The server answers the API at all: an error otherwise.
  Result<bool> probe() {
    auto a = call(fmt::format("/api/v1/query?query={}&time={:.3f}", url_encode("vector(1)"), double(s_.end_us) / 1e6));
    if (!a) return make_error(a.error().message);
    return true;
  }

  Result<Query> range(const std::string& expr, const std::string& what) {
    Query q;
    q.what = what;
    if (rep_.queries >= kMaxQueries || elapsed_s() > kBudgetS) {
      rep_.warnings.push_back(fmt::format("{}: not queried (the query budget of {} queries / {:.0f} s was spent)", what, kMaxQueries, kBudgetS));
      return q;
    }
    auto a = call(fmt::format("/api/v1/query_range?query={}&start={:.3f}&end={:.3f}&step={}&timeout=10s", url_encode(expr),
                              double(s_.start_us) / 1e6, double(s_.end_us) / 1e6, rep_.step_s));
    if (!a) {
      if (fatal_) return make_error(a.error().message);
      rep_.warnings.push_back(fmt::format("{}: {}", what, a.error().message));
      return q;
    }
    q.r = std::move(*a);
    q.ok = true;
    for (const auto& w : q.r.warnings) rep_.warnings.push_back(fmt::format("{}: Prometheus warns: {}", what, w));
    if (q.r.series_dropped)
      rep_.warnings.push_back(fmt::format("{}: {} more series than the {} read were left out", what, q.r.series_dropped, q.r.series.size()));
    return q;
  }

  // How many series the metric has at the window's end, whoever they belong to.
  std::optional<double> count_of(const std::string& metric) {
    if (rep_.queries >= kMaxQueries || elapsed_s() > kBudgetS) return std::nullopt;
    auto a = call(fmt::format("/api/v1/query?query={}&time={:.3f}&timeout=10s",
                              url_encode("count(last_over_time(" + metric + "[" + std::to_string((s_.end_us - s_.start_us) / 1'000'000 + 1) + "s]))"),
                              double(s_.end_us) / 1e6));
    if (!a) return std::nullopt;
    if (a->series.empty() || a->series[0].points.empty()) return 0.0;
    return a->series[0].points[0].v;
  }

  // `about_scope`: series of the pod/container or node asked about; the
  // pod's info and its node's memory are context, and alone are "nothing found".
  void found(const char* exporter, const Query& q, bool about_scope = true) {
    if (about_scope) rep_.series += q.r.series.size();
    rep_.found[exporter] += q.r.series.size();
  }

  Fact fact(FactKind kind, Family family, const char* exporter, int64_t t_ms) {
    Fact f;
    f.kind = kind;
    f.family = family;
    f.where.source = fmt::format("Prometheus {} ({})", s_.url, exporter);
    f.where.source_index = source_;
    f.where.unix_us = t_ms * 1000;
    return f;
  }
  void next_source() { ++source_; }
  void add(Fact f) {
    f.text = text::quote_line(f.text, 400);
    sink_.add(std::move(f));
  }

  const Scope& s_;
  int64_t step_ms_ = 1000, start_ms_ = 0;

 private:
  double elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(); }

  // One GET: a transport failure or an answer that is not the API is fatal
  // (the next query would fail the same way); Prometheus's own refusal of
  // one query is not.
  Result<Response> call(const std::string& path) {
    ++rep_.queries;
    fatal_ = true;
    auto http = get_(path);
    if (!http) return make_error(http.error().message);
    auto r = parse_response(http->body);
    if (!r) {
      const std::string where = s_.url + path.substr(0, path.find('?'));
      if (text::starts_with(r.error().message, "Prometheus answered")) {
        fatal_ = false;
        return make_error(r.error().message);
      }
      if (http->status != 200)
        return make_error(fmt::format("{} answered HTTP {}, not the Prometheus API ({}): is {} the server's root URL?", where,
                                      http->status, r.error().message, s_.url));
      return make_error(fmt::format("{}: {}", where, r.error().message));
    }
    fatal_ = false;
    return r;
  }

  const Get& get_;
  FactSink& sink_;
  Report& rep_;
  std::chrono::steady_clock::time_point started_;
  uint32_t source_ = 0;
  bool fatal_ = false;
};

std::string pod_selector(const Scope& s, const std::string& extra = {}) {
  std::string sel = "namespace=" + quote(s.ns) + ",pod=" + quote(s.pod);
  if (!s.container.empty()) sel += ",container=" + quote(s.container);
  return sel + extra;
}

// A node's series: node_exporter and aimem carry the node's name as `node`
// (relabelled, or aimem's DaemonSet label) or as `instance` (name:port).
std::string node_expr(const std::string& metric, const std::string& node, const std::string& extra = {}) {
  std::string re;
  for (char c : node) {
    if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) re += '\\';
    re += c;
  }
  return fmt::format("{m}{{node={n}{x}}} or {m}{{instance=~{r}{x}}}", fmt::arg("m", metric), fmt::arg("n", quote(node)),
                     fmt::arg("r", quote(re + "(:[0-9]+)?")), fmt::arg("x", extra));
}

// --- kube-state-metrics -----------------------------------------------------

struct Ksm {
  Query reasons, exitcodes, restarts, limits, requests, evicted, info;
};

// The series of `q` for the container of `key` that has a point in [t, t +
// 5 min]; of several, the one that appeared last (a new reason replaces the
// old one, which a range query still shows for the 5 minutes of lookback).
// *at: its first point in that span.
const Series* shown_after(const Query& q, const std::string& key, int64_t t_ms, int64_t* at) {
  const Series* best = nullptr;
  int64_t best_first = INT64_MIN, best_t = INT64_MAX;
  for (const auto& s : q.r.series) {
    if (key_of(s) != key || s.points.empty()) continue;
    auto p = std::find_if(s.points.begin(), s.points.end(), [&](const Point& x) { return x.t_ms >= t_ms; });
    if (p == s.points.end() || p->t_ms > t_ms + kAfterRestartMs) continue;
    if (s.points.front().t_ms > best_first) best = &s, best_first = s.points.front().t_ms, best_t = p->t_ms;
  }
  if (at) *at = best_t;
  return best;
}

// The working set up to a kill at `to_ms`: the highest sample of the minute
// (at least two steps) before it (the later of equals), else the last one
// before it. A sample taken after the kill, even one scraped before the OOM
// event was counted, is of the emptied cgroup; the ones before, of what
// filled it.
void working_set_extra(Fact& f, const std::map<std::string, Merged>& ws, const std::map<std::string, double>& spec,
                       const std::string& key, int64_t to_ms, int64_t step_ms, const std::string& metric_line) {
  auto it = ws.find(key);
  if (it == ws.end() || !it->second.latest) return;
  const int64_t from_ms = to_ms - std::max<int64_t>(60'000, 2 * step_ms);
  const Point* p = nullptr;
  for (const auto& x : it->second.points)
    if (x.t_ms >= from_ms && x.t_ms <= to_ms && (!p || x.v >= p->v)) p = &x;
  if (!p) p = at_or_before(it->second.points, to_ms);
  if (!p) return;
  auto lim = spec.find(key);
  std::string line = fmt::format("{} = {} at {}", metric_line, bytes(p->v), when(p->t_ms));
  if (lim != spec.end()) line += fmt::format(", limit {} (container_spec_memory_limit_bytes)", bytes(lim->second));
  f.extra.emplace_back(0, text::quote_line(line, 400));
}

// A container's memory limit and request: the newest value of each series.
void resource_facts(Collector& c, const Query& limits, const Query& requests) {
  auto resources = [&](const auto& series, FactKind kind, const char* metric, const char* detail) {
    for (const auto& s : series) {
      if (s.points.empty() || s.points.back().v <= 0) continue;
      Fact f = c.fact(kind, Family::kubernetes, kKsm, s.points.back().t_ms);
      f.pod = s.label("pod");
      f.container = s.label("container");
      (kind == FactKind::memory_limit ? f.limit : f.requested) = static_cast<uint64_t>(s.points.back().v);
      f.detail = detail;
      f.text = fmt::format("{} = {}", describe(metric, s, {"namespace", "pod", "container", "resource"}),
                           bytes(s.points.back().v));
      c.add(f);
    }
  };
  resources(limits.r.series, FactKind::memory_limit, "kube_pod_container_resource_limits", "resources.limits.memory");
  resources(requests.r.series, FactKind::memory_request, "kube_pod_container_resource_requests", "resources.requests.memory");
  c.next_source();
}

void ksm_facts(Collector& c, const Ksm& k, const std::map<std::string, Merged>& ws, const std::map<std::string, double>& spec,
               const std::map<std::string, Rise>& cadvisor_oom) {
  std::map<std::string, bool> rose;  // container -> a restart was seen in the window
  // Restarts: context, and each rise a termination whose reason KSM shows.
  for (const auto& s : k.restarts.r.series) {
    if (s.points.empty()) continue;
    const std::string key = key_of(s);
    const std::string name = describe("kube_pod_container_status_restarts_total", s, kPodLabels);
    Fact r = c.fact(FactKind::restarts, Family::kubernetes, kKsm, s.points.back().t_ms);
    r.pod = s.label("pod");
    r.container = s.label("container");
    r.count = static_cast<uint64_t>(std::max(0.0, s.points.back().v));
    r.detail = "restart count (kube-state-metrics)";
    r.text = fmt::format("{} = {} at {}", name, *r.count, when(s.points.back().t_ms));
    c.add(r);
    for (const Rise& up : rises(s, c.start_ms_, c.step_ms_)) {
      rose[key] = true;
      int64_t at = 0;
      const Series* reason = shown_after(k.reasons, key, up.t_before_ms + 1, &at);
      int64_t at_code = 0;
      const Series* code = shown_after(k.exitcodes, key, up.t_before_ms + 1, &at_code);
      std::optional<int> exit_code;
      if (code) {
        const Point* p = at_or_before(code->points, at_code);
        if (p && p->v >= 0 && p->v <= 255) exit_code = static_cast<int>(p->v);
      }
      const std::string why = fmt::format(", as kube_pod_container_status_restarts_total rose {} -> {} between {} and {}", up.from, up.to,
                                          when(up.t_before_ms), when(up.t_ms));
      if (reason && reason->label("reason") == "OOMKilled") {
        Fact f = c.fact(FactKind::k8s_oomkilled, Family::kubernetes, kKsm, up.t_ms);
        f.layer = Layer::k8s_pod_limit;
        f.strength = 0.9f;
        f.pod = s.label("pod");
        f.container = s.label("container");
        f.exit_code = exit_code;
        f.detail = "OOMKilled";
        f.text = fmt::format("{} = 1 at {}{}{}",
                             describe("kube_pod_container_status_last_terminated_reason", *reason, {"namespace", "pod", "container", "reason"}),
                             when(at), exit_code ? fmt::format(", exit code {}", *exit_code) : "", why);
        // The working set beside it (shown with the verdict's first fact): at
        // cAdvisor's own OOM event when there is one, else just before the restart.
        auto ev = cadvisor_oom.find(key);
        const int64_t ws_to = ev != cadvisor_oom.end() && ev->second.t_ms <= up.t_ms ? ev->second.t_ms : up.t_before_ms;
        if (auto w = ws.find(key); w != ws.end() && w->second.latest)
          working_set_extra(f, ws, spec, key, ws_to, c.step_ms_,
                            "(cAdvisor) " + describe("container_memory_working_set_bytes", *w->second.latest, kPodLabels));
        c.add(f);
      } else if (reason || exit_code) {
        Fact f = c.fact(FactKind::exit_status, Family::kubernetes, kKsm, up.t_ms);
        f.pod = s.label("pod");
        f.container = s.label("container");
        f.exit_code = exit_code;
        if (exit_code && *exit_code > 128 && *exit_code < 160) f.signal = *exit_code - 128;
        f.strength = 0.3f;
        f.detail = reason ? "terminated: " + reason->label("reason") : "terminated";
        f.text = fmt::format("{}{}{}",
                             reason ? describe("kube_pod_container_status_last_terminated_reason", *reason, {"namespace", "pod", "container", "reason"}) +
                                          " = 1 at " + when(at)
                                    : describe("kube_pod_container_status_last_terminated_exitcode", *code, kPodLabels),
                             exit_code ? fmt::format(", exit code {}", *exit_code) : "", why);
        c.add(f);
      }
    }
  }
  c.next_source();
  // A last reason of OOMKilled with no restart seen in the window: the kill
  // happened at or before the reason's first sample.
  for (const auto& s : k.reasons.r.series) {
    if (s.points.empty() || s.label("reason") != "OOMKilled" || rose.count(key_of(s))) continue;
    const bool from_start = s.points.front().t_ms <= c.start_ms_ + 2 * c.step_ms_;
    Fact f = c.fact(FactKind::k8s_oomkilled, Family::kubernetes, kKsm, from_start ? c.start_ms_ - 1000 : s.points.front().t_ms);
    f.layer = Layer::k8s_pod_limit;
    f.strength = 0.85f;
    f.pod = s.label("pod");
    f.container = s.label("container");
    f.detail = "OOMKilled";
    f.text = fmt::format("{} = 1 from {}{}",
                         describe("kube_pod_container_status_last_terminated_reason", s, {"namespace", "pod", "container", "reason"}),
                         when(s.points.front().t_ms),
                         from_start ? " (already at the window's start: the kill was earlier)" : " (the restart count did not move in the window)");
    c.add(f);
  }
  c.next_source();
  resource_facts(c, k.limits, k.requests);
  for (const auto& s : k.evicted.r.series) {
    auto it = std::find_if(s.points.begin(), s.points.end(), [](const Point& p) { return p.v >= 1; });
    if (it == s.points.end()) continue;
    Fact f = c.fact(FactKind::k8s_evicted, Family::kubernetes, kKsm, it->t_ms);
    f.layer = Layer::k8s_eviction;
    f.strength = 0.9f;
    f.pod = s.label("pod");
    f.detail = "Evicted";
    f.text = fmt::format("{} = 1 at {}", describe("kube_pod_status_reason", s, {"namespace", "pod", "reason"}), when(it->t_ms));
    c.add(f);
  }
  c.next_source();
}

// --- cAdvisor -----------------------------------------------------------------

void cadvisor_facts(Collector& c, Report& rep, const Query& ws_q, const Query& oom_q, const std::map<std::string, Merged>& ws,
                    const std::map<std::string, double>& spec) {
  for (const auto& [key, m] : ws) {
    if (m.points.empty() || !m.latest) continue;
    auto peak = std::max_element(m.points.begin(), m.points.end(), [](const Point& a, const Point& b) { return a.v < b.v; });
    Fact f = c.fact(FactKind::memory_usage, Family::cgroup, kCadvisor, peak->t_ms);
    f.pod = m.latest->label("pod");
    f.container = m.latest->label("container");
    f.usage = static_cast<uint64_t>(peak->v);
    auto lim = spec.find(key);
    if (lim != spec.end()) f.limit = static_cast<uint64_t>(lim->second);
    f.detail = "working set (cAdvisor)";
    f.text = fmt::format("{} = {} at {} (the window's highest){}", describe("container_memory_working_set_bytes", *m.latest, kPodLabels),
                         bytes(peak->v), when(peak->t_ms), f.limit ? ", limit " + bytes(double(*f.limit)) : "");
    c.add(f);
    PoolSeries ps;
    const std::string& id = m.latest->label("id");
    ps.pool_id = "cgroup:" + (id.empty() ? key : id);
    ps.owner = key;
    ps.used = m.points;
    ps.limit = f.limit;
    rep.pools.push_back(std::move(ps));
  }
  c.next_source();
  for (const auto& s : oom_q.r.series) {
    const std::string key = key_of(s);
    for (const Rise& up : rises(s, c.start_ms_, c.step_ms_)) {
      Fact f = c.fact(FactKind::cgroup_oom_counter, Family::cgroup, kCadvisor, up.t_ms);
      f.layer = Layer::k8s_pod_limit;
      f.strength = 0.8f;
      f.pod = s.label("pod");
      f.container = s.label("container");
      f.count = static_cast<uint64_t>(up.to - up.from);
      f.detail = "OOM events counted by the container's cgroup (cAdvisor)";
      f.text = fmt::format("{} rose {} -> {} between {} and {}", describe("container_oom_events_total", s, kPodLabels), up.from, up.to,
                           when(up.t_before_ms), when(up.t_ms));
      auto it = ws.find(key);
      if (it != ws.end() && it->second.latest)
        working_set_extra(f, ws, spec, key, up.t_ms, c.step_ms_, describe("container_memory_working_set_bytes", *it->second.latest, kPodLabels));
      auto lim = spec.find(key);
      if (lim != spec.end()) f.limit = static_cast<uint64_t>(lim->second);
      c.add(f);
    }
  }
  c.next_source();
  (void)ws_q;
}

// --- DCGM exporter --------------------------------------------------------------

void dcgm_facts(Collector& c, Report& rep, const Query& used_q, const Query& free_q, const std::vector<int64_t>& restarts_ms) {
  for (const auto& u : used_q.r.series) {
    const std::string gpu = !u.label("gpu").empty() ? u.label("gpu") : u.label("UUID");
    const Series* fr = nullptr;
    for (const auto& f : free_q.r.series)
      if (f.label("gpu") == u.label("gpu") && f.label("UUID") == u.label("UUID") && f.label("Hostname") == u.label("Hostname")) fr = &f;
    if (!fr || u.points.empty()) continue;
    std::map<int64_t, double> free_at;
    for (const auto& p : fr->points) free_at[p.t_ms] = p.v;
    PoolSeries ps;
    ps.pool_id = "gpu:" + gpu;
    ps.owner = gpu;
    const Point* worst = nullptr;
    double worst_free = 0, worst_total = 0;
    std::vector<std::pair<int64_t, double>> full;  // first sample of each full stretch, and its free MiB
    bool was_full = false;
    for (const auto& p : u.points) {
      auto it = free_at.find(p.t_ms);
      if (it == free_at.end()) continue;
      double total = p.v + it->second;
      ps.used.push_back({p.t_ms, p.v * double(units::MiB)});
      ps.limit = static_cast<uint64_t>(total * double(units::MiB));
      if (!worst || it->second < worst_free) worst = &p, worst_free = it->second, worst_total = total;
      bool is_full = total > 0 && (it->second <= total / 100 || it->second <= 256);
      if (is_full && !was_full && full.size() < kMaxEpisodes) full.emplace_back(p.t_ms, it->second);
      was_full = is_full;
    }
    if (!worst) continue;
    const std::vector<std::string> labels = {"gpu", "namespace", "pod", "container", "Hostname"};
    std::optional<int> index;
    if (auto n = text::parse_u64(u.label("gpu")); n && *n < 1024) index = static_cast<int>(*n);
    Fact g = c.fact(FactKind::gpu_state, Family::nvidia, kDcgm, worst->t_ms);
    g.gpu = index;
    g.pod = u.label("pod");
    g.container = u.label("container");
    g.total = static_cast<uint64_t>(worst_total * double(units::MiB));
    g.usage = static_cast<uint64_t>(worst->v * double(units::MiB));
    g.free = static_cast<uint64_t>(worst_free * double(units::MiB));
    g.detail = u.label("modelName").empty() ? "DCGM" : "DCGM, " + u.label("modelName");
    g.text = fmt::format("{} = {} at {}, DCGM_FI_DEV_FB_FREE = {} (the window's least free)", describe("DCGM_FI_DEV_FB_USED", u, labels),
                         bytes(double(*g.usage)), when(worst->t_ms), bytes(double(*g.free)));
    c.add(g);
    for (const auto& [t, free_mib] : full) {
      const Point* p = at_or_before(u.points, t);
      const int64_t full_at = t;  // clang 14 cannot capture a structured binding
      bool restarted = std::any_of(restarts_ms.begin(), restarts_ms.end(),
                                   [full_at](int64_t r) { return r >= full_at && r <= full_at + kAfterRestartMs; });
      Fact f = c.fact(FactKind::gpu_oom, Family::nvidia, kDcgm, t);
      f.layer = Layer::gpu_vram;
      f.strength = restarted ? 0.8f : 0.55f;
      f.gpu = index;
      f.pod = u.label("pod");
      f.container = u.label("container");
      f.total = g.total;
      f.usage = p ? std::optional<uint64_t>(static_cast<uint64_t>(p->v * double(units::MiB))) : std::nullopt;
      f.free = static_cast<uint64_t>(free_mib * double(units::MiB));
      f.detail = restarted ? "GPU framebuffer full (DCGM), the pod restarted after it" : "GPU framebuffer full (DCGM)";
      f.text = fmt::format("{} = {} at {}, DCGM_FI_DEV_FB_FREE = {}: {:.1f}% of {} in use{}", describe("DCGM_FI_DEV_FB_USED", u, labels),
                           f.usage ? bytes(double(*f.usage)) : "?", when(t), bytes(double(*f.free)),
                           f.usage && f.total && *f.total ? 100.0 * double(*f.usage) / double(*f.total) : 0.0, bytes(double(*f.total)),
                           restarted ? "; the pod restarted within 5 minutes" : "");
      c.add(f);
    }
    rep.pools.push_back(std::move(ps));
  }
  c.next_source();
}

// --- node_exporter and aimem's host series ----------------------------------------

struct NodeMemory {
  std::vector<Point> available;
  std::optional<double> total;
  std::string name;  // the series, for quotes
  const char* exporter = kNodeExporter;
};

// The node's available memory and total: node_exporter's MemAvailable and
// MemTotal, else aimem watch's host_ram pool (used and limit: available is
// their difference, MemTotal - MemAvailable being what aimem exports as used).
NodeMemory node_memory(Collector& c, Report& rep, const Query& avail, const Query& total, const Query& aimem_used,
                       const Query& aimem_limit) {
  NodeMemory m;
  if (!avail.r.series.empty()) {
    const Series& a = avail.r.series.front();
    m.available = a.points;
    m.name = describe("node_memory_MemAvailable_bytes", a, {"node", "instance"});
    if (!total.r.series.empty() && !total.r.series.front().points.empty()) m.total = total.r.series.front().points.back().v;
  } else if (!aimem_used.r.series.empty() && !aimem_limit.r.series.empty() && !aimem_limit.r.series.front().points.empty()) {
    const Series& u = aimem_used.r.series.front();
    m.total = aimem_limit.r.series.front().points.back().v;
    for (const auto& p : u.points) m.available.push_back({p.t_ms, std::max(0.0, *m.total - p.v)});
    m.name = "MemAvailable from " + describe("aimem_memory_used_bytes", u, {"pool", "node", "instance"});
    m.exporter = kAimem;
  }
  if (m.available.empty()) return m;
  auto low = std::min_element(m.available.begin(), m.available.end(), [](const Point& a, const Point& b) { return a.v < b.v; });
  Fact f = c.fact(FactKind::host_state, Family::procfs, m.exporter, low->t_ms);
  f.total = m.total ? std::optional<uint64_t>(static_cast<uint64_t>(*m.total)) : std::nullopt;
  f.free = static_cast<uint64_t>(low->v);
  f.detail = "node " + c.s_.node + " RAM";
  f.text = fmt::format("{} = {} at {} (the window's lowest){}", m.name, bytes(low->v), when(low->t_ms),
                       !m.total ? "" : m.exporter == kAimem ? ", aimem_memory_limit_bytes " + bytes(*m.total)
                                                             : ", node_memory_MemTotal_bytes " + bytes(*m.total));
  c.add(f);
  c.next_source();
  if (m.total) {
    PoolSeries ps;
    ps.pool_id = "host_ram";
    for (const auto& p : m.available) ps.used.push_back({p.t_ms, std::max(0.0, *m.total - p.v)});
    ps.limit = static_cast<uint64_t>(*m.total);
    rep.pools.push_back(std::move(ps));
  }
  return m;
}

// A cgroup's OOM kill that aimem watch counted (its aimem_oom_kills_total
// rose): when, and which cgroup.
struct CgroupKill {
  int64_t t_before_ms = 0, t_ms = 0;
  std::string cgroup;
};

// A rise of the kernel's OOM-kill counter on the node: a memory cgroup's
// limit when aimem counted a cgroup's kill in the same interval (the kernel
// counts every kill, a cgroup's too); else the host ran out when MemAvailable
// was low (<= 5% or 512 MiB) from just before it to the rise.
void kernel_kill_facts(Collector& c, const Query& q, const NodeMemory& m, const std::vector<CgroupKill>& cgroup_kills,
                       const char* exporter, const std::string& metric) {
  for (const auto& s : q.r.series) {
    for (const Rise& up : rises(s, c.start_ms_, c.step_ms_, true)) {
      const Point* low = nullptr;
      for (const auto& p : m.available)
        if (p.t_ms >= up.t_before_ms - 2 * c.step_ms_ && p.t_ms <= up.t_ms && (!low || p.v < low->v)) low = &p;
      const bool host = low && m.total && (low->v <= *m.total * 0.05 || low->v <= 512.0 * double(units::MiB));
      const CgroupKill* cg = nullptr;
      for (const auto& k : cgroup_kills)
        if (k.t_ms >= up.t_before_ms - c.step_ms_ && k.t_before_ms <= up.t_ms + c.step_ms_) cg = &k;
      Fact f = c.fact(FactKind::kernel_oom_kill, Family::kernel, exporter, up.t_ms);
      f.layer = cg || (low && !host) ? Layer::container_limit : Layer::host_ram;
      f.strength = low || cg ? 0.8f : 0.6f;
      f.count = static_cast<uint64_t>(up.to - up.from);
      if (cg) f.cgroup = cg->cgroup;
      f.free = low ? std::optional<uint64_t>(static_cast<uint64_t>(low->v)) : std::nullopt;
      f.total = m.total ? std::optional<uint64_t>(static_cast<uint64_t>(*m.total)) : std::nullopt;
      f.detail = cg    ? "OOM kills counted by the kernel as memory cgroup " + cg->cgroup + " counted its own (aimem watch)"
                 : !low ? "OOM kills counted by the kernel; the node's available memory is not in Prometheus"
                 : host ? "OOM kills counted by the kernel while the node was out of memory"
                        : "OOM kills counted by the kernel while the node had memory available: a memory cgroup's limit";
      f.text = fmt::format("{} rose {} -> {} between {} and {}", describe(metric, s, {"node", "instance", "pool"}), up.from, up.to,
                           when(up.t_before_ms), when(up.t_ms));
      if (low)
        f.extra.emplace_back(0, fmt::format("{} = {} at {}{}", m.name, bytes(low->v), when(low->t_ms),
                                            !m.total                   ? ""
                                            : m.exporter == kAimem ? " of " + bytes(*m.total) + " (aimem_memory_limit_bytes)"
                                                                   : " of " + bytes(*m.total) + " (node_memory_MemTotal_bytes)"));
      c.add(f);
    }
  }
  c.next_source();
}

// A rise of aimem_oom_kills_total{pool="cgroup"}: that cgroup's OOM kill, at
// a Kubernetes pod's limit when aimem named the pod.
std::vector<CgroupKill> aimem_cgroup_kills(Collector& c, const Query& q) {
  std::vector<CgroupKill> out;
  for (const auto& s : q.r.series) {
    for (const Rise& up : rises(s, c.start_ms_, c.step_ms_)) {
      Fact f = c.fact(FactKind::cgroup_oom_counter, Family::cgroup, kAimem, up.t_ms);
      f.layer = s.label("pod").empty() ? Layer::container_limit : Layer::k8s_pod_limit;
      f.strength = 0.8f;
      f.pod = s.label("pod");
      f.container = s.label("container");
      f.cgroup = s.label("cgroup");
      f.count = static_cast<uint64_t>(up.to - up.from);
      f.detail = "OOM kills counted by the cgroup (aimem watch)";
      f.text = fmt::format("{} rose {} -> {} between {} and {}", describe("aimem_oom_kills_total", s, {"namespace", "pod", "container", "cgroup"}),
                           up.from, up.to, when(up.t_before_ms), when(up.t_ms));
      c.add(f);
      out.push_back({up.t_before_ms, up.t_ms, s.label("cgroup")});
    }
  }
  c.next_source();
  return out;
}

// aimem watch's own usage of the pod's cgroups (its DaemonSet labels them
// with namespace, pod and container): context, and the pool's series for
// the trend where cAdvisor's working set is missing.
void aimem_pod_usage(Collector& c, Report& rep, const Query& used, const Query& limit) {
  for (const auto& s : used.r.series) {
    if (s.points.empty()) continue;
    auto peak = std::max_element(s.points.begin(), s.points.end(), [](const Point& a, const Point& b) { return a.v < b.v; });
    std::optional<uint64_t> lim;
    for (const auto& l : limit.r.series)
      if (l.label("cgroup") == s.label("cgroup") && !l.points.empty() && l.points.back().v > 0 && l.points.back().v < double(kNoLimit))
        lim = static_cast<uint64_t>(l.points.back().v);
    Fact f = c.fact(FactKind::memory_usage, Family::cgroup, kAimem, peak->t_ms);
    f.pod = s.label("pod");
    f.container = s.label("container");
    f.cgroup = s.label("cgroup");
    f.usage = static_cast<uint64_t>(peak->v);
    f.limit = lim;
    f.detail = "cgroup usage (aimem watch)";
    f.text = fmt::format("{} = {} at {} (the window's highest){}", describe("aimem_memory_used_bytes", s, {"namespace", "pod", "container", "cgroup"}),
                         bytes(peak->v), when(peak->t_ms), lim ? ", limit " + bytes(double(*lim)) + " (aimem_memory_limit_bytes)" : "");
    c.add(f);
    const std::string key = key_of(s);
    const bool have = std::any_of(rep.pools.begin(), rep.pools.end(), [&](const PoolSeries& p) { return p.owner == key; });
    if (!s.label("container").empty() && !s.label("cgroup").empty() && !have) {
      PoolSeries ps;
      ps.pool_id = "cgroup:" + s.label("cgroup");
      ps.owner = key;
      ps.used = s.points;
      ps.limit = lim;
      rep.pools.push_back(std::move(ps));
    }
  }
  c.next_source();
}

void platform(Collector& c, int64_t t_ms) {
  Fact f = c.fact(FactKind::platform, Family::kubernetes, kKsm, t_ms);
  f.detail = "kubernetes";
  f.strength = 0.3f;
  c.add(f);
  c.next_source();
}

// A required series that is missing, said so the user knows what to check.
void missing(Collector& c, Report& rep, const std::string& what, const std::string& metric, const std::string& exporter_hint,
             bool warn) {
  auto n = c.count_of(metric);
  std::string msg = fmt::format("no series for {}", what);
  if (n && *n > 0)
    msg += fmt::format(": {} has {:.0f} series for others; check the names and the window (--since, --at)", metric, *n);
  else
    msg += ": " + exporter_hint;
  (warn ? rep.warnings : rep.notes).push_back(msg);
}

// One range query into `var` (named in messages by `what`, or by the
// query itself); a transport failure returns its error from the enclosing
// function.
#define AIMEM_RANGE_AS(var, expr, what)              \
  Query var;                                          \
  {                                                   \
    auto q_ = c.range((expr), (what));                \
    if (!q_) return make_error(q_.error().message);   \
    var = std::move(*q_);                             \
  }
#define AIMEM_RANGE(var, expr) AIMEM_RANGE_AS(var, expr, expr)

// What --pod and --node read of a pod beside its kill, for one selector
// (`sel`: kube-state-metrics' and aimem's; `cad`: cAdvisor's containers).
struct PodUsage {
  Query limits, requests;     // kube-state-metrics
  Query ws, spec;             // cAdvisor's working set and limit
  Query aimem_used, aimem_limit;  // aimem watch's usage of the pod's cgroups
};

Result<PodUsage> read_pod_usage(Collector& c, const std::string& sel, const std::string& cad) {
  PodUsage u;
  const std::pair<Query*, std::string> wanted[] = {
      {&u.limits, "kube_pod_container_resource_limits{" + sel + ",resource=\"memory\"}"},
      {&u.requests, "kube_pod_container_resource_requests{" + sel + ",resource=\"memory\"}"},
      {&u.ws, "container_memory_working_set_bytes{" + cad + "}"},
      {&u.spec, "container_spec_memory_limit_bytes{" + cad + "}"},
      {&u.aimem_used, "aimem_memory_used_bytes{pool=\"cgroup\"," + sel + "}"},
      {&u.aimem_limit, "aimem_memory_limit_bytes{pool=\"cgroup\"," + sel + "}"}};
  for (const auto& [q, expr] : wanted) {
    auto r = c.range(expr, expr);
    if (!r) return make_error(r.error().message);
    *q = std::move(*r);
  }
  return u;
}

// cAdvisor's limit of each container (container_spec_memory_limit_bytes), where it has one.
std::map<std::string, double> spec_limits(const Query& spec) {
  std::map<std::string, double> out;
  for (const auto& s : spec.r.series)
    if (!s.points.empty() && s.points.back().v > 0 && s.points.back().v < double(kNoLimit)) out[key_of(s)] = s.points.back().v;
  return out;
}

// The pod's (or container's) series; its node from kube_pod_info into scope.node.
Result<bool> collect_pod(Collector& c, Scope& scope, Report& rep) {
  const int64_t end_ms = scope.end_us / 1000;
  std::vector<int64_t> restart_times;
  const std::string sel = pod_selector(scope);
  const std::string cad = pod_selector(scope, scope.container.empty() ? ",container!=\"\",container!=\"POD\"" : "");
  Ksm k;
  AIMEM_RANGE(reasons, "kube_pod_container_status_last_terminated_reason{" + sel + "}")
  AIMEM_RANGE(exitcodes, "kube_pod_container_status_last_terminated_exitcode{" + sel + "}")
  AIMEM_RANGE(restarts, "kube_pod_container_status_restarts_total{" + sel + "}")
  auto usage = read_pod_usage(c, sel, cad);
  if (!usage) return make_error(usage.error().message);
  PodUsage& u = *usage;
  const std::string psel = "namespace=" + quote(scope.ns) + ",pod=" + quote(scope.pod);
  AIMEM_RANGE(evicted, "kube_pod_status_reason{" + psel + ",reason=\"Evicted\"}")
  AIMEM_RANGE(info, "kube_pod_info{" + psel + "}")
  k = {std::move(reasons), std::move(exitcodes), std::move(restarts), std::move(u.limits), std::move(u.requests), std::move(evicted), std::move(info)};
  const Query& ws_q = u.ws;
  AIMEM_RANGE(oom_q, "container_oom_events_total{" + cad + "}")
  AIMEM_RANGE(fb_used, "DCGM_FI_DEV_FB_USED{" + sel + "}")
  AIMEM_RANGE(fb_free, "DCGM_FI_DEV_FB_FREE{" + sel + "}")
  AIMEM_RANGE(aimem_kills, "aimem_oom_kills_total{" + sel + "}")
  for (const Query* q : {&k.reasons, &k.exitcodes, &k.restarts, &k.limits, &k.requests, &k.evicted}) c.found(kKsm, *q);
  c.found(kKsm, k.info, false);
  for (const Query* q : {&u.ws, &u.spec, &oom_q}) c.found(kCadvisor, *q);
  c.found(kDcgm, fb_used);
  c.found(kAimem, aimem_kills);
  c.found(kAimem, u.aimem_used);

  std::map<std::string, Merged> ws = by_container(ws_q.r.series);
  std::map<std::string, double> spec = spec_limits(u.spec);
  std::map<std::string, Rise> cadvisor_oom;  // container -> its last OOM event
  for (const auto& s : oom_q.r.series)
    for (const Rise& up : rises(s, c.start_ms_, c.step_ms_)) cadvisor_oom[key_of(s)] = up;
  if (rep.series > 0) platform(c, end_ms);
  ksm_facts(c, k, ws, spec, cadvisor_oom);
  cadvisor_facts(c, rep, ws_q, oom_q, ws, spec);
  for (const auto& s : k.restarts.r.series)
    for (const Rise& up : rises(s, c.start_ms_, c.step_ms_)) restart_times.push_back(up.t_ms);
  dcgm_facts(c, rep, fb_used, fb_free, restart_times);
  aimem_cgroup_kills(c, aimem_kills);
  aimem_pod_usage(c, rep, u.aimem_used, u.aimem_limit);

  if (k.restarts.r.series.empty() && k.reasons.r.series.empty() && k.limits.r.series.empty())
    missing(c, rep, "kube_pod_container_status_restarts_total{" + sel + "}", "kube_pod_container_status_restarts_total",
            "is kube-state-metrics scraped?", true);
  if (ws_q.r.series.empty())
    missing(c, rep, "container_memory_working_set_bytes{" + cad + "}", "container_memory_working_set_bytes",
            "is cAdvisor (the kubelet's /metrics/cadvisor) scraped?", true);
  if (fb_used.r.series.empty())
    rep.notes.push_back("no DCGM_FI_DEV_FB_USED{" + sel + "}: no GPU of this pod in DCGM exporter's series (it used none, or "
                        "DCGM exporter is not scraped with its Kubernetes pod labels)");
  if (scope.node.empty())
    for (const auto& s : k.info.r.series)
      if (!s.label("node").empty()) scope.node = s.label("node");
  return true;
}

// For --node: the pods the node's kills name (aimem watch's cgroup counters
// with pod labels, kube-state-metrics' OOMKilled reasons), at most
// kMaxKilledPods of them, each with what --pod reads beside its kill: its
// limit and request, cAdvisor's working set and aimem's usage of its cgroups.
// They are context, attached to the pod's incident by its name, so the node's
// verdict reads the cause as the pod's would (a limit the working set filled,
// a working set that grew); the kills themselves are the node's queries'.
constexpr size_t kMaxKilledPods = 3;

// `ws` and `spec` gather the pods' working sets and cAdvisor limits, for the
// working set quoted beside each kill (ksm_facts); `ws` points into the
// series that `keep` holds.
Result<bool> killed_pods_context(Collector& c, Report& rep, const std::vector<const Query*>& naming, std::deque<Query>& keep,
                                 std::map<std::string, Merged>& ws, std::map<std::string, double>& spec) {
  std::vector<std::pair<std::string, std::string>> pods;  // namespace, pod
  size_t more = 0;
  for (const Query* q : naming)
    for (const auto& s : q->r.series) {
      std::pair<std::string, std::string> p{s.label("namespace"), s.label("pod")};
      if (p.first.empty() || p.second.empty() || std::find(pods.begin(), pods.end(), p) != pods.end()) continue;
      if (pods.size() == kMaxKilledPods) {
        ++more;
        continue;
      }
      pods.push_back(std::move(p));
    }
  if (more)
    rep.notes.push_back(fmt::format("{} more pods on node {} were OOM-killed in the window; their limits were not read (--pod NS/NAME reads one)",
                                    more, c.s_.node));
  for (const auto& [ns, pod] : pods) {
    const std::string sel = "namespace=" + quote(ns) + ",pod=" + quote(pod);
    const std::string cad = sel + ",container!=\"\",container!=\"POD\"";
    auto usage = read_pod_usage(c, sel, cad);
    if (!usage) return make_error(usage.error().message);
    PodUsage& u = *usage;
    c.found(kKsm, u.limits, false);
    c.found(kKsm, u.requests, false);
    c.found(kCadvisor, u.ws, false);  // before it moves to `keep`
    c.found(kAimem, u.aimem_used, false);
    keep.push_back(std::move(u.ws));
    const Query& ws_kept = keep.back();
    std::map<std::string, Merged> pod_ws = by_container(ws_kept.r.series);
    std::map<std::string, double> pod_spec = spec_limits(u.spec);
    resource_facts(c, u.limits, u.requests);
    cadvisor_facts(c, rep, ws_kept, Query{}, pod_ws, pod_spec);
    ws.merge(pod_ws);
    spec.merge(pod_spec);
    aimem_pod_usage(c, rep, u.aimem_used, u.aimem_limit);
  }
  return true;
}

// The node's memory (context for a pod); for --node, its kills, its pods'
// terminations and its GPUs too.
Result<bool> collect_node(Collector& c, const Scope& scope, Report& rep, bool pod_mode) {
  const int64_t end_ms = scope.end_us / 1000;
  std::vector<int64_t> restart_times;
  AIMEM_RANGE_AS(avail, node_expr("node_memory_MemAvailable_bytes", scope.node),
                 "node_memory_MemAvailable_bytes{node=" + quote(scope.node) + "}")
  AIMEM_RANGE_AS(total, node_expr("node_memory_MemTotal_bytes", scope.node),
                 "node_memory_MemTotal_bytes{node=" + quote(scope.node) + "}")
  c.found(kNodeExporter, avail, !pod_mode);
  c.found(kNodeExporter, total, !pod_mode);
  Query aused, alimit;  // aimem watch's host_ram pool, read when node_exporter's is not there
  if (avail.r.series.empty()) {
    AIMEM_RANGE_AS(u, node_expr("aimem_memory_used_bytes", scope.node, ",pool=\"host_ram\""),
                   "aimem_memory_used_bytes{pool=\"host_ram\",node=" + quote(scope.node) + "}")
    AIMEM_RANGE_AS(l, node_expr("aimem_memory_limit_bytes", scope.node, ",pool=\"host_ram\""),
                   "aimem_memory_limit_bytes{pool=\"host_ram\",node=" + quote(scope.node) + "}")
    aused = std::move(u);
    alimit = std::move(l);
    c.found(kAimem, aused, false);
  }
  NodeMemory m = node_memory(c, rep, avail, total, aused, alimit);
  if (!pod_mode) {
    AIMEM_RANGE_AS(vm, node_expr("node_vmstat_oom_kill", scope.node),
                   "node_vmstat_oom_kill{node=" + quote(scope.node) + "}")
    AIMEM_RANGE_AS(akills, node_expr("aimem_oom_kills_total", scope.node, ",pool=\"host_ram\""),
                   "aimem_oom_kills_total{pool=\"host_ram\",node=" + quote(scope.node) + "}")
    // The node's cgroups whose kill counter moved (only those: a node has
    // hundreds of cgroups, each with a counter).
    AIMEM_RANGE_AS(ckills, "(" + node_expr("aimem_oom_kills_total", scope.node, ",pool=\"cgroup\"") + ") > 0",
                   "aimem_oom_kills_total{pool=\"cgroup\",node=" + quote(scope.node) + "} > 0")
    const std::string on_node = " * on(namespace,pod) group_left(node) max by (namespace,pod,node) (kube_pod_info{node=" + quote(scope.node) + "})";
    Ksm k;
    AIMEM_RANGE_AS(reasons, "kube_pod_container_status_last_terminated_reason{reason=\"OOMKilled\"}" + on_node,
                   "kube_pod_container_status_last_terminated_reason{reason=\"OOMKilled\"} of pods on node " + scope.node)
    AIMEM_RANGE_AS(restarts, "kube_pod_container_status_restarts_total" + on_node,
                   "kube_pod_container_status_restarts_total of pods on node " + scope.node)
    AIMEM_RANGE_AS(evicted, "kube_pod_status_reason{reason=\"Evicted\"}" + on_node,
                   "kube_pod_status_reason{reason=\"Evicted\"} of pods on node " + scope.node)
    k.reasons = std::move(reasons);
    k.restarts = std::move(restarts);
    k.evicted = std::move(evicted);
    const std::string dsel = "Hostname=" + quote(scope.node);
    AIMEM_RANGE_AS(fb_used, node_expr("DCGM_FI_DEV_FB_USED", scope.node) + " or DCGM_FI_DEV_FB_USED{" + dsel + "}",
                   "DCGM_FI_DEV_FB_USED{Hostname=" + quote(scope.node) + "}")
    AIMEM_RANGE_AS(fb_free, node_expr("DCGM_FI_DEV_FB_FREE", scope.node) + " or DCGM_FI_DEV_FB_FREE{" + dsel + "}",
                   "DCGM_FI_DEV_FB_FREE{Hostname=" + quote(scope.node) + "}")
    c.found(kNodeExporter, vm);
    c.found(kAimem, akills);
    c.found(kAimem, ckills);
    for (const Query* q : {&k.reasons, &k.restarts, &k.evicted}) c.found(kKsm, *q);
    c.found(kDcgm, fb_used);
    if (!k.reasons.r.series.empty() || !k.restarts.r.series.empty()) platform(c, end_ms);
    const std::vector<CgroupKill> cgroup_kills = aimem_cgroup_kills(c, ckills);
    kernel_kill_facts(c, vm, m, cgroup_kills, kNodeExporter, "node_vmstat_oom_kill");
    kernel_kill_facts(c, akills, m, cgroup_kills, kAimem, "aimem_oom_kills_total");
    std::deque<Query> pod_series;
    std::map<std::string, Merged> ws;
    std::map<std::string, double> spec;
    if (auto ok = killed_pods_context(c, rep, {&ckills, &k.reasons}, pod_series, ws, spec); !ok) return make_error(ok.error().message);
    ksm_facts(c, k, ws, spec, {});
    for (const auto& s : k.restarts.r.series)
      for (const Rise& up : rises(s, c.start_ms_, c.step_ms_)) restart_times.push_back(up.t_ms);
    dcgm_facts(c, rep, fb_used, fb_free, restart_times);
    if (vm.r.series.empty() && akills.r.series.empty())
      missing(c, rep, "node_vmstat_oom_kill{node=" + quote(scope.node) + "} (or instance=~\"" + scope.node + "(:port)\")",
              "node_vmstat_oom_kill", "is node_exporter scraped, with the node's name as its node or instance label?", true);
  }
  if (avail.r.series.empty() && m.available.empty())
    missing(c, rep, "node_memory_MemAvailable_bytes{node=" + quote(scope.node) + "} (or instance=~\"" + scope.node + "(:port)\")",
            "node_memory_MemAvailable_bytes", "is node_exporter scraped, with the node's name as its node or instance label?", !pod_mode);
  return true;
}

#undef AIMEM_RANGE
#undef AIMEM_RANGE_AS

}  // namespace

Result<Report> collect(const Scope& scope_in, const Get& get, FactSink& sink) {
  Scope scope = scope_in;
  Report rep;
  Collector c(scope, get, sink, rep);
  if (auto ok = c.probe(); !ok) return make_error(ok.error().message);
  const bool pod_mode = !scope.pod.empty();
  if (pod_mode)
    if (auto ok = collect_pod(c, scope, rep); !ok) return make_error(ok.error().message);
  if (!scope.node.empty())
    if (auto ok = collect_node(c, scope, rep, pod_mode); !ok) return make_error(ok.error().message);

  std::string found;
  for (const auto& [exporter, n] : rep.found)
    if (n) found += fmt::format("{}{} {}", found.empty() ? "" : ", ", exporter, n);
  rep.notes.insert(rep.notes.begin(), fmt::format("Prometheus {}: {} queries over {} .. {} at a {} s step; series found: {}", scope.url,
                                                  rep.queries, timeutil::format_iso(scope.start_us), timeutil::format_iso(scope.end_us),
                                                  rep.step_s, found.empty() ? "none" : found));
  return rep;
}

}  // namespace aimem::prom
