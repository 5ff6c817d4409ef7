// Recording analysis: the shape of each pool's usage and the dimension that
// moved with it. The rules, applied in this order to a pool's series over the
// recording (span T, "level" = median of the points in a time slice):
//  1. flat: max - min <= max(5% of the peak, 1 MiB).
//  2. load_peak: the peak lies in the first third of T and the level of the
//     last tenth is below 80% of the peak (weights loaded, converted, then
//     buffers freed: a limit must cover the peak, not the plateau).
//  3. load_step with a dimension: a tracked dimension's series has a Spearman
//     rank correlation >= 0.8 with memory (memory follows load).
//  4. steady_growth: the slope is positive, the medians of K (up to 10) equal
//     slices rise from one slice to the next in >= 80% of the steps, and the
//     last third still rises (its slope >= 30% of the overall one: no
//     plateau). This is leak_or_accumulation.
//  5. load_step without a dimension: the level of the last third is above the
//     first tenth's by more than the flat margin, and the last third is flat
//     (slope < 30% of the overall one): a step that levelled off.
//  6. unknown.
// Dimensions come from the inference-server scrapes: running -> concurrency,
// waiting -> queue_depth, context_tokens, custom metrics (a name with "batch" ->
// batch_size, with "queue" -> queue_depth, else its own name); servers are
// summed per sample (context_tokens: the largest).
#include "watch/trend.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "watch/alerts.h"

namespace aimem::watch {
namespace {

constexpr size_t kMaxSamples = 2000;
constexpr size_t kMinPoints = 10;
constexpr size_t kMaxPools = 256;
constexpr size_t kMaxDimensions = 32;
constexpr double kFollow = 0.8;

using Series = std::vector<std::pair<int64_t, uint64_t>>;

struct PoolSeries {
  Series points;
  std::vector<size_t> at;  // index of each point's sample among the chosen ones
};

// Dimension values of one sample, by dimension name.
std::map<std::string, double> dimensions_of(const Sample& s) {
  std::map<std::string, double> d;
  auto add = [&](const std::string& name, double v) {
    if (std::isfinite(v)) d[name] += v;
  };
  for (const ServerSample& srv : s.servers) {
    if (srv.running) add("concurrency", *srv.running);
    if (srv.waiting) add("queue_depth", *srv.waiting);
    if (srv.context_tokens && std::isfinite(*srv.context_tokens))
      d["context_tokens"] = std::max(d.count("context_tokens") ? d["context_tokens"] : 0.0, *srv.context_tokens);
    for (const auto& [name, v] : srv.custom) {
      std::string l = text::lower(name);
      add(l.find("batch") != std::string::npos   ? "batch_size"
          : l.find("queue") != std::string::npos ? "queue_depth"
                                                 : name,
          v);
    }
  }
  return d;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = (double(i) + double(j)) / 2 + 1;  // ties share the mean rank
    i = j + 1;
  }
  return r;
}

// Spearman's rho: Pearson's correlation of the ranks; nullopt when either side is constant.
std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < kMinPoints) return std::nullopt;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = double(a.size()), ma = 0, mb = 0;
  for (size_t i = 0; i < ra.size(); ++i) ma += ra[i], mb += rb[i];
  ma /= n, mb /= n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa <= 0 || sbb <= 0) return std::nullopt;
  return sab / std::sqrt(saa * sbb);
}

// Median of the values whose time lies in [t0 + a*T, t0 + b*T]; the nearest point when none does.
double level(const Series& p, double a, double b) {
  int64_t t0 = p.front().first, span = p.back().first - t0;
  int64_t lo = t0 + int64_t(a * double(span)), hi = t0 + int64_t(b * double(span));
  std::vector<uint64_t> v;
  for (const auto& [t, y] : p)
    if (t >= lo && t <= hi) v.push_back(y);
  if (v.empty()) {
    auto it = std::lower_bound(p.begin(), p.end(), lo, [](const auto& x, int64_t t) { return x.first < t; });
    return double(it == p.end() ? p.back().second : it->second);
  }
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return double(v[v.size() / 2]);
}

Series tail_from(const Series& p, double fraction) {
  int64_t from = p.front().first + int64_t(fraction * double(p.back().first - p.front().first));
  Series out;
  for (const auto& pt : p)
    if (pt.first >= from) out.push_back(pt);
  return out;
}

TrendFinding classify(const std::string& id, const PoolSeries& ps,
                      const std::map<std::string, std::vector<std::optional<double>>>& dims) {
  const Series& p = ps.points;
  TrendFinding f;
  f.pool_id = id;
  f.start_bytes = p.front().second;
  f.end_bytes = p.back().second;
  uint64_t lo = p.front().second;
  for (const auto& [t, y] : p) {
    if (y > f.peak_bytes) f.peak_bytes = y, f.peak_time_us = t;
    lo = std::min(lo, y);
  }
  const double span_s = double(p.back().first - p.front().first) / 1e6;
  f.growth_bytes_per_s = theil_sen_per_s(p).value_or(0);

  // Correlation with each dimension over the samples where both are known.
  std::string best_dim;
  double best_r = 0;
  bool any_r = false;
  for (const auto& [name, series] : dims) {
    std::vector<double> mem, dim;
    for (size_t i = 0; i < p.size(); ++i)
      if (series[ps.at[i]]) mem.push_back(double(p[i].second)), dim.push_back(*series[ps.at[i]]);
    auto r = spearman(mem, dim);
    if (r && (!any_r || *r > best_r)) best_r = *r, best_dim = name, any_r = true;
  }
  f.correlation = best_r;

  const std::string label = text::printable(pool_label(id));  // a cgroup path comes from outside
  const double margin = std::max(0.05 * double(f.peak_bytes), double(units::MiB));
  const std::string dur = timeutil::format_duration(span_s);
  auto b = [](double v) { return units::format_bytes(uint64_t(std::max(0.0, v))); };

  if (double(f.peak_bytes - lo) <= margin) {
    f.shape = Shape::flat;
    f.summary = fmt::format("{} stayed flat at ~{} (range {}) for {}", label, b(level(p, 0, 1)),
                            b(double(f.peak_bytes - lo)), dur);
    return f;
  }
  const double peak_at_s = double(f.peak_time_us - p.front().first) / 1e6;
  const double end_level = level(p, 0.9, 1);
  if (peak_at_s <= span_s / 3 && end_level < 0.8 * double(f.peak_bytes)) {
    f.shape = Shape::load_peak;
    f.summary = fmt::format(
        "{} peaked at {} {} after the start (loading) then fell to {} ({:.0f}% of the peak): a limit must cover "
        "the load-time peak, not the steady state",
        label, b(double(f.peak_bytes)), timeutil::format_duration(peak_at_s), b(end_level),
        100 * end_level / double(f.peak_bytes));
    return f;
  }
  if (any_r && best_r >= kFollow) {
    f.shape = Shape::load_step;
    f.dimension = best_dim;
    f.summary = fmt::format("{} rose from {} to {} with {} (r={:.2f}): memory follows load; bound {} to bound memory",
                            label, b(double(f.start_bytes)), b(double(f.peak_bytes)), best_dim, best_r, best_dim);
    return f;
  }
  const std::string no_follow = any_r ? fmt::format("did not follow {} (r={:.2f})", best_dim, best_r)
                                      : std::string("no tracked dimension moved with it");
  // Slice medians by point index (equal counts), so uneven sampling does not leave a slice empty.
  size_t k = std::min<size_t>(10, p.size() / 2), rises = 0;
  double prev = 0;
  for (size_t s = 0; s < k; ++s) {
    std::vector<uint64_t> v;
    for (size_t i = s * p.size() / k; i < (s + 1) * p.size() / k; ++i) v.push_back(p[i].second);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    double med = double(v[v.size() / 2]);
    if (s > 0 && med > prev) ++rises;
    prev = med;
  }
  const double last_slope = theil_sen_per_s(tail_from(p, 2.0 / 3)).value_or(0);
  const bool still_rising = f.growth_bytes_per_s > 0 && last_slope >= 0.3 * f.growth_bytes_per_s;
  if (still_rising && double(rises) >= 0.8 * double(k - 1)) {
    f.shape = Shape::steady_growth;
    f.summary = fmt::format("{} grew {}/s for {} without a plateau ({} -> {}) and {}: leak or accumulation", label,
                            b(f.growth_bytes_per_s), dur, b(double(f.start_bytes)), b(double(f.end_bytes)),
                            no_follow);
    return f;
  }
  const double last_level = level(p, 2.0 / 3, 1);
  if (!still_rising && last_level > level(p, 0, 0.1) + margin) {
    f.shape = Shape::load_step;
    f.summary = fmt::format("{} rose from {} to {} and then held steady: a step with load; {}", label,
                            b(double(f.start_bytes)), b(last_level), no_follow);
    return f;
  }
  f.summary = fmt::format("{} went from {} to {}, peak {} at +{}: no clear shape", label, b(double(f.start_bytes)),
                          b(double(f.end_bytes)), b(double(f.peak_bytes)), timeutil::format_duration(peak_at_s));
  return f;
}

}  // namespace

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::flat: return "flat";
    case Shape::steady_growth: return "steady_growth";
    case Shape::load_step: return "load_step";
    case Shape::load_peak: return "load_peak";
    case Shape::unknown: break;
  }
  return "unknown";
}

std::vector<TrendFinding> analyse(const std::vector<Sample>& samples) {
  if (samples.empty()) return {};
  const size_t stride = (samples.size() + kMaxSamples - 1) / kMaxSamples;
  std::vector<std::string> order;  // pools in first-seen order
  std::map<std::string, PoolSeries> pools;
  std::map<std::string, std::vector<std::optional<double>>> dims;
  size_t chosen = 0;
  for (size_t i = 0; i < samples.size(); i += stride) {
    // Always end on the last sample.
    const Sample& s = samples[i + stride >= samples.size() ? samples.size() - 1 : i];
    for (const PoolPoint& p : pools_of(s)) {
      auto it = pools.find(p.pool_id);
      if (it == pools.end()) {
        if (pools.size() >= kMaxPools) continue;
        it = pools.emplace(p.pool_id, PoolSeries{}).first;
        order.push_back(p.pool_id);
      }
      // Samples out of time order (a merged recording) would break the slices: keep time increasing.
      if (!it->second.points.empty() && s.time_us <= it->second.points.back().first) continue;
      it->second.points.emplace_back(s.time_us, p.used);
      it->second.at.push_back(chosen);
    }
    for (const auto& [name, v] : dimensions_of(s)) {
      auto it = dims.find(name);
      if (it == dims.end()) {
        if (dims.size() >= kMaxDimensions) continue;
        it = dims.emplace(name, std::vector<std::optional<double>>{}).first;
      }
      it->second.resize(chosen + 1);
      it->second[chosen] = v;
    }
    ++chosen;
  }
  for (auto& [name, v] : dims) v.resize(chosen);

  std::vector<TrendFinding> out;
  for (const std::string& id : order) {
    const PoolSeries& ps = pools[id];
    if (ps.points.size() < kMinPoints) continue;
    out.push_back(classify(id, ps, dims));
  }
  return out;
}

}  // namespace aimem::watch
