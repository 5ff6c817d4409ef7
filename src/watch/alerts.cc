// The alert engine: pools of a sample, the robust time-to-exhaustion forecast,
// the rules (headroom, forecast, rolling copy, swapping, KV cache) and the rate
// limit. Pure logic over Samples; delivery is in alert_sink.cc.
//
// Bounded cost: each pool keeps at most kMaxWindowPoints points over the trend
// window. When the window is full it drops every other point and doubles the
// minimum spacing, so a long window at 10 Hz keeps an even spread of ~100
// points; the forecast (forecast.cc, O(n^2), tens of thousands of
// multiply-adds) is redone only when a point is appended, i.e. at most once
// per minimum spacing. A second window of the same size over leak_window_us
// (one point per ~3 min) serves slow leaks.
#include "watch/alerts.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"

namespace aimem::watch {
namespace {

constexpr size_t kMaxWindowPoints = 120;
constexpr size_t kMaxForecastPoints = 160;
constexpr size_t kMaxPools = 1024;        // pools with a forecast window; more get thresholds only
constexpr size_t kMaxRateKeys = 4096;     // rate-limit memory
constexpr uint64_t kSwapFlagBytes = 64ULL << 20;
// cgroup v1 prints "no limit" as PAGE_COUNTER_MAX pages (9223372036854771712);
// anything that large is no limit.
constexpr uint64_t kUnlimited = 1ULL << 62;

int severity_rank(const std::string& s) { return s == "critical" ? 2 : s == "warning" ? 1 : 0; }

double median_of(std::vector<double>& v) {
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  return (hi + *std::max_element(v.begin(), v.begin() + mid)) / 2;
}

// Median of pairwise slopes (bytes per second) of points [begin, end).
std::optional<double> theil_sen(const std::vector<double>& t, const std::vector<double>& y, size_t begin,
                                size_t end) {
  std::vector<double> slopes;
  slopes.reserve((end - begin) * (end - begin) / 2);
  for (size_t i = begin; i < end; ++i)
    for (size_t j = i + 1; j < end; ++j)
      if (t[j] > t[i]) slopes.push_back((y[j] - y[i]) / (t[j] - t[i]));
  if (slopes.empty()) return std::nullopt;
  return median_of(slopes);
}

bool is_model_server(const ProcessSample& p) {
  static const char* const roles[] = {"vllm", "llama-server", "ollama", "tgi", "sglang"};
  for (const char* r : roles)
    if (p.role == r) return true;
  return p.gpu_bytes && *p.gpu_bytes > 0;
}

std::string percent(double ratio) { return fmt::format("{:.0f}%", ratio * 100); }

// Seconds since the first point and bytes, at most kMaxForecastPoints of them
// (even decimation keeps the cost bounded for any caller).
void to_series(const std::vector<std::pair<int64_t, uint64_t>>& points, std::vector<double>& t,
               std::vector<double>& y) {
  size_t n = std::min(points.size(), kMaxForecastPoints);
  t.resize(n);
  y.resize(n);
  if (n == 0) return;
  int64_t t0 = points.front().first;
  for (size_t k = 0; k < n; ++k) {
    size_t i = n == points.size() ? k : k * (points.size() - 1) / (n - 1);
    t[k] = double(points[i].first - t0) / 1e6;
    y[k] = double(points[i].second);
  }
}

}  // namespace

std::vector<PoolPoint> pools_of(const Sample& s) {
  std::vector<PoolPoint> out;
  const HostSample& h = s.host;
  if (h.mem_total && h.mem_available && *h.mem_total > 0)
    out.push_back({"host_ram", "host_ram", *h.mem_total - std::min(*h.mem_total, *h.mem_available), *h.mem_total});
  if (h.swap_total && h.swap_free && *h.swap_total > 0)
    out.push_back({"swap", "swap", *h.swap_total - std::min(*h.swap_total, *h.swap_free), *h.swap_total});
  for (const CgroupSample& c : s.cgroups) {
    if (!c.usage) continue;
    std::optional<uint64_t> limit;
    if (c.limit && *c.limit > 0 && *c.limit < kUnlimited) limit = c.limit;
    out.push_back({"cgroup:" + c.path, "cgroup", *c.usage, limit});
  }
  for (const GpuSample& g : s.gpus) {
    if (g.unified || !g.used || !g.total || *g.total == 0) continue;
    out.push_back({"gpu:" + std::to_string(g.index), "gpu", *g.used, g.total});
  }
  return out;
}

std::string pool_label(const std::string& id) {
  if (id == "host_ram") return "host RAM";
  if (id.rfind("cgroup:", 0) == 0) return "cgroup " + id.substr(7);
  if (id.rfind("gpu:", 0) == 0) return "GPU " + id.substr(4);
  return id;
}

Event alert_event(const Alert& a) {
  Event ev;
  ev.time_us = a.time_us;
  ev.kind = "alert";
  ev.key = a.pool_id;
  ev.summary = a.message;
  ev.body = alert_json(a).dump();
  return ev;
}

nlohmann::json alert_json(const Alert& a) {
  nlohmann::json j = {{"time", timeutil::format_iso(a.time_us)}, {"time_us", a.time_us}, {"key", a.key},
                      {"severity", a.severity}, {"pool", a.pool_id}, {"message", a.message}};
  j["tte_seconds"] = a.tte_s ? nlohmann::json(*a.tte_s) : nlohmann::json(nullptr);
  if (a.tte_s) {
    j["tte_low_seconds"] = a.tte_low_s ? nlohmann::json(*a.tte_low_s) : nlohmann::json(nullptr);
    j["tte_high_seconds"] = a.tte_high_s ? nlohmann::json(*a.tte_high_s) : nlohmann::json(nullptr);
    j["shape"] = a.shape;
  }
  j["used_bytes"] = a.used ? nlohmann::json(*a.used) : nlohmann::json(nullptr);
  j["limit_bytes"] = a.limit ? nlohmann::json(*a.limit) : nlohmann::json(nullptr);
  return j;
}


std::optional<double> theil_sen_per_s(const std::vector<std::pair<int64_t, uint64_t>>& points) {
  std::vector<double> t, y;
  to_series(points, t, y);
  return theil_sen(t, y, 0, t.size());
}

std::optional<double> forecast_tte_s(const std::vector<std::pair<int64_t, uint64_t>>& points, uint64_t limit) {
  return forecast_exhaustion(points, limit).tte_s;
}

AlertEngine::AlertEngine(AlertPolicy policy) : policy_(policy) {}

bool AlertEngine::admit(const Alert& a) {
  int rank = severity_rank(a.severity);
  auto it = sent_.find(a.key);
  if (it != sent_.end() && a.time_us - it->second.time_us < policy_.repeat_us && rank <= it->second.severity)
    return false;
  if (it == sent_.end() && sent_.size() >= kMaxRateKeys)
    std::erase_if(sent_, [&](const auto& kv) { return a.time_us - kv.second.time_us >= policy_.repeat_us; });
  if (it == sent_.end() && sent_.size() >= kMaxRateKeys) return true;  // deliver, but do not remember
  sent_[a.key] = {a.time_us, rank};
  return true;
}

void AlertEngine::advance(Series& w, const PoolPoint& p, int64_t now, int64_t window_us, bool fixed_gap,
                          double noise_floor) const {
  auto& pts = w.points;
  bool appended = false;
  if (!pts.empty() && now < pts.back().first) pts.clear();  // clock went back: start over
  if (fixed_gap) w.min_gap_us = window_us / int64_t(kMaxWindowPoints);
  if (!pts.empty() && now == pts.back().first) {
    pts.back().second = p.used;
  } else if (pts.size() >= 2 && pts.back().first - pts[pts.size() - 2].first < w.min_gap_us) {
    pts.back() = {now, p.used};  // the newest point slides until it is min_gap past the one before
  } else {
    pts.emplace_back(now, p.used);
    appended = true;
  }
  while (!pts.empty() && pts.front().first < now - window_us) pts.pop_front();
  if (pts.size() > kMaxWindowPoints) {
    std::deque<std::pair<int64_t, uint64_t>> half;
    for (size_t i = 0; i < pts.size(); ++i)
      if (i % 2 == 0 || i + 1 == pts.size()) half.push_back(pts[i]);
    pts.swap(half);
    if (!fixed_gap)
      w.min_gap_us = std::max<int64_t>(w.min_gap_us * 2, (now - pts.front().first) / int64_t(kMaxWindowPoints / 2));
  }
  // The forecast costs O(n^2): once per appended point (every min_gap), not per sample.
  if (appended || w.forecast_at_us < 0 || w.forecast_limit != p.limit.value_or(0)) {
    w.forecast = Forecast{};
    if (p.limit && pts.size() >= policy_.min_points) {
      ForecastOptions o;
      o.min_points = policy_.min_points;
      o.min_basis_s = double(policy_.min_trend_span_us) / 1e6;
      o.max_extrapolation = policy_.max_extrapolation;
      o.noise_floor_bytes = noise_floor;
      std::vector<std::pair<int64_t, uint64_t>> v(pts.begin(), pts.end());
      w.forecast = forecast_exhaustion(v, *p.limit, o);
    }
    w.forecast_at_us = now;
    w.forecast_limit = p.limit.value_or(0);
  }
}

void AlertEngine::advance(Window& w, const PoolPoint& p, int64_t now) const {
  // The leak window first: its residual noise is the floor under which the
  // recent window sees no change (forecast.h, noise_floor_bytes).
  if (policy_.leak_window_us > policy_.trend_window_us) advance(w.leak, p, now, policy_.leak_window_us, true, 0);
  advance(w.recent, p, now, policy_.trend_window_us, false, w.leak.forecast.noise_sd);
  // The recent window decides when it holds a change (a step, a knee, a
  // drop: its regime is shorter than it). When it holds none, the regime has
  // lasted longer than the window, and the leak window, with hours of it,
  // forecasts better: minutes of a slow series are mostly noise that bends
  // a fit either way. It is used when it sees growth or a sawtooth.
  const Series* use = &w.recent;
  const Forecast& r = w.recent.forecast;
  const Forecast& l = w.leak.forecast;
  double recent_span = w.recent.points.size() >= 2
                           ? double(w.recent.points.back().first - w.recent.points.front().first) / 1e6
                           : 0;
  bool recent_whole = r.shape != GrowthShape::step && r.shape != GrowthShape::sawtooth &&
                      r.basis_s >= 0.9 * recent_span;
  if (recent_whole && (l.tte_s || l.shape == GrowthShape::sawtooth) && l.basis_s >= 2 * std::max(r.basis_s, 1.0))
    use = &w.leak;
  w.chosen = use->forecast;
  // A baseline: the pool was seen level (flat, falling, a step that levelled
  // off, a sawtooth) over at least min_points points; from then on a growth
  // is a change from it (alerts.h, first_regime_extrapolation).
  if (r.basis_points >= policy_.min_points &&
      (r.shape == GrowthShape::flat || r.shape == GrowthShape::falling || r.shape == GrowthShape::step ||
       r.shape == GrowthShape::sawtooth))
    w.baseline = true;
  if (w.chosen.tte_s) {
    double elapsed = double(now - use->forecast_at_us) / 1e6;
    w.chosen.tte_s = std::max(0.0, *w.chosen.tte_s - elapsed);
    w.chosen.low_s = std::max(0.0, w.chosen.low_s - elapsed);
    w.chosen.high_s = std::max(0.0, w.chosen.high_s - elapsed);
  }
}

std::vector<Alert> AlertEngine::observe(const Sample& s) {
  std::vector<Alert> found;
  const int64_t now = s.time_us;
  auto add = [&](std::string key, std::string severity, const PoolPoint* p, std::string message) -> Alert& {
    Alert a;
    a.time_us = now;
    a.key = std::move(key);
    a.severity = std::move(severity);
    // Pool labels, process names and scrape targets come from outside: a
    // cgroup or a process can be named with terminal escapes. Every channel
    // (stderr, the log, the command's environment, the webhook, the store)
    // carries this message, so it is made printable once, here.
    a.message = text::printable(message);
    if (p) {
      a.pool_id = p->pool_id;
      a.used = p->used;
      a.limit = p->limit;
    }
    found.push_back(std::move(a));
    return found.back();
  };

  std::vector<PoolPoint> pools = pools_of(s);
  std::map<std::string, Window> kept;
  for (const PoolPoint& p : pools) {
    // Headroom thresholds. Swap is left out: stale pages sit in swap for days
    // on healthy hosts; the swapping rule below looks at the processes that matter.
    if (p.limit && p.kind != "swap") {
      double ratio = double(p.used) / double(*p.limit);
      std::string label = pool_label(p.pool_id);
      if (p.kind == "gpu") {
        if (ratio >= policy_.gpu_warn_used_ratio)
          add("headroom:" + p.pool_id, "warning", &p,
              fmt::format("{} uses {} of {} ({}): no room left for a burst", label, units::format_bytes(p.used),
                          units::format_bytes(*p.limit), percent(ratio)));
      } else if (ratio >= policy_.warn_used_ratio) {
        bool crit = ratio >= policy_.critical_used_ratio;
        add("headroom:" + p.pool_id, crit ? "critical" : "warning", &p,
            fmt::format("{} uses {} of its {} {} ({}): {} room left for bursts and deployment overlap", label,
                        units::format_bytes(p.used), units::format_bytes(*p.limit),
                        p.kind == "host_ram" ? "total" : "limit", percent(ratio),
                        percent(std::max(0.0, 1 - ratio))));
      }
    }
    // Forecast window.
    auto old = windows_.find(p.pool_id);
    if (old == windows_.end() && windows_.size() + kept.size() >= kMaxPools) continue;
    Window w = old == windows_.end() ? Window{} : std::move(old->second);
    if (old != windows_.end()) windows_.erase(old);
    advance(w, p, now);
    // Only a credible forecast alerts (forecast.h: enough of the current
    // regime, within max_extrapolation x it); the exporter shows every one.
    const Forecast& f = w.chosen;
    // Growth seen from the start, with no baseline before it, waits until
    // its forecast reaches at most first_regime_extrapolation x its span.
    bool established = w.baseline || (f.tte_s && *f.tte_s <= policy_.first_regime_extrapolation * f.basis_s);
    if (f.tte_s && f.alert && established && p.kind != "swap" && *f.tte_s * 1e6 < double(policy_.tte_warn_us)) {
      // Under a fifth of the warning horizon (3 min by default) it is critical:
      // the escalation passes the rate limit as exhaustion nears.
      bool crit = *f.tte_s * 1e6 < double(policy_.tte_warn_us) / 5;
      Alert& a = add("tte:" + p.pool_id, crit ? "critical" : "warning", &p,
                     fmt::format("{} will be full in {} ({}; {} of {}, rising ~{}/s)", pool_label(p.pool_id),
                                 format_tte_range(f.low_s, f.high_s), growth_shape_name(f.shape),
                                 units::format_bytes(p.used), units::format_bytes(*p.limit),
                                 units::format_bytes(uint64_t(std::max(0.0, f.rate_per_s)))));
      a.tte_s = f.tte_s;
      a.tte_low_s = f.low_s;
      if (std::isfinite(f.high_s)) a.tte_high_s = f.high_s;
      a.shape = growth_shape_name(f.shape);
    }
    kept.emplace(p.pool_id, std::move(w));
  }
  windows_ = std::move(kept);  // pools that vanished (a removed cgroup) lose their window

  // Rolling copy: MemAvailable must hold a second copy of the largest model server.
  if (policy_.reserve_rolling_copy && s.host.mem_available) {
    const ProcessSample* big = nullptr;
    for (const ProcessSample& p : s.processes)
      if (is_model_server(p) && (!big || p.rss > big->rss)) big = &p;
    if (big && *s.host.mem_available < big->rss) {
      const PoolPoint* host = nullptr;
      for (const PoolPoint& p : pools)
        if (p.pool_id == "host_ram") host = &p;
      add("rolling_copy:host_ram", "warning", host,
          fmt::format("host RAM has {} available, less than {} (pid {}) holds ({}): no room for a second copy "
                      "during a rolling deployment",
                      units::format_bytes(*s.host.mem_available), big->comm, big->pid,
                      units::format_bytes(big->rss)))
          .pool_id = "host_ram";
    }
  }
  // A model server in swap stays alive but each token waits on the disk.
  for (const ProcessSample& p : s.processes) {
    if (!is_model_server(p) || !p.swap || *p.swap <= kSwapFlagBytes) continue;
    Alert& a = add(fmt::format("swapping:pid:{}", p.pid), "warning", nullptr,
                   fmt::format("{} (pid {}) has {} in swap: swapping: alive but inference will be unusably slow",
                               p.comm, p.pid, units::format_bytes(*p.swap)));
    a.pool_id = "swap";
    a.used = *p.swap;
  }
  for (const ServerSample& srv : s.servers) {
    if (!srv.up || !srv.kv_usage_ratio || !(*srv.kv_usage_ratio >= policy_.kv_warn_ratio)) continue;  // NaN: no
    Alert& a = add("kv:" + srv.target, "warning", nullptr,
                   fmt::format("{} at {}: KV cache {} used: new requests will queue or be preempted",
                               srv.kind, srv.target, percent(*srv.kv_usage_ratio)));
    a.pool_id = "kv:" + srv.target;
  }

  std::vector<Alert> out;
  for (Alert& a : found)
    if (admit(a)) out.push_back(std::move(a));
  return out;
}

std::vector<std::pair<std::string, double>> AlertEngine::time_to_exhaustion() const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [id, w] : windows_)
    if (w.chosen.tte_s) out.emplace_back(id, *w.chosen.tte_s);
  return out;
}

}  // namespace aimem::watch
