// The shape-aware time-to-exhaustion forecast (forecast.h).
//
// Why: a slope fitted over the whole window mixes regimes. A process that
// sat idle and then grew 20 MiB/s got "full in ~27 s" when 9 s remained,
// because most of the window was the idle time. So the forecast first finds
// the regime that is running now, then fits the model that regime calls for.
// Steps, in order, over at most max_points points (t in seconds before the
// newest point, y in MiB so that sums of squares stay exact enough):
//  1. Noise: sigma = 1.4826 x the median absolute deviation of successive
//     differences / sqrt(2) (a trend moves the differences' median, not their
//     spread). A level change larger than T = max(8 sigma, 2% of the limit,
//     4 x the median difference) is a jump or a drop. The floor under every
//     fit's noise is the larger of sigma, half the differences' mean
//     deviation (an allocator's steps sampled out of phase) and the caller's
//     noise_floor_bytes (the pool's noise over hours).
//  2. Spikes: a point that differs by more than T from both neighbours in the
//     same direction is dropped; so is a newest point that jumped by more than
//     T after a quiet difference (unconfirmed: the next sample says whether it
//     was a step).
//  3. Drops: three or more drops by more than T make a sawtooth (a GC heap, a
//     batch job). Its complete cycles' peaks are what meets the limit, so the
//     forecast is the Theil-Sen line through the peaks, and only when the
//     peaks themselves rise by more than 3 sigma of the peaks, 1% of the
//     limit and 1.5 steps between samples (a level peak is sampled anywhere
//     in its last step); a sawtooth whose peaks stay level never fills. With one or two
//     drops the regime starts after the last one, but while that cycle stays
//     under the previous peak (plus half a swing) it is a sawtooth without a
//     trend yet, unless the previous peak was at the limit (within one rise
//     of it: killed and restarted, a new run). A cycle that breaks far above the envelope is a
//     regime of its own.
//  4. Regime and model: one line, one quadratic, and a split (left line,
//     right line or right quadratic) at each material change point (the level
//     moved by T, or the slope by a quarter and 3 standard errors) compete by
//     BIC; the right part keeps at least 3 points and is searched again (a
//     step, then a knee; a sample caught inside a step is no regime of its
//     own: the regime starts at the level it was heading for), at most
//     three times. When the winner's residuals are autocorrelated (rho >
//     0.2: a cache or allocator slack wandering), the scores count
//     n (1 - rho) / (1 + rho) points. A curve must beat the
//     best piecewise line by 6 (a Bayes factor of ~20): noise over a knee
//     looks convex too.
//  5. Significance: the regime's slope now must be positive, at least 3
//     standard errors (inflated by sqrt((1 + rho) / (1 - rho)) for
//     autocorrelated residuals), its rise over the regime at least 2 noise
//     floors and 0.5% of the limit; else it is flat, a step (a split whose
//     level moved by more than T) or falling. A quadratic whose curvature is
//     within 6 standard errors of 0, or bends less than 4 noise floors over
//     the regime, is replaced by the line; one with curvature above that is
//     accelerating growth. A line older than leak_after_s is a leak.
//  6. Time to full: the fitted curve reaches limit - sd / 2 (the
//     fluctuations touch the limit before the trend does; half a residual sd
//     matched the first crossings best among 0, 0.5 and 1 sd in
//     tests/watch/forecast_eval.cc's tuning replays, seeds 1-40). The range
//     moves every parameter two standard errors towards faster growth (low)
//     and slower (high; curvature not below 0).
//  7. Alert: only when the regime has min_points points over min_basis_s, the
//     forecast reaches at most max_extrapolation x that span
//     (max_extrapolation_curve and twice the points for a curve), no level
//     shift is among the newest three points, and those three points are not
//     all off the fit on one side (a knee the split cannot see yet).
// Cost: step 4 fits O(n) candidate splits with O(n) each, ~100k multiply-adds
// for 160 points (at most 3 rounds); the alert engine runs it once per
// appended point.
#include "watch/forecast.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <string>

namespace aimem::watch {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  return (hi + *std::max_element(v.begin(), v.begin() + long(mid))) / 2;
}

// Least squares polynomial of degree 1 or 2 over points [b, e), in t = the
// time before the newest point (so a is the value now, b the slope now).
struct Fit {
  bool ok = false;
  int degree = 1;
  double a = 0, b = 0, c = 0;        // y = a + b t + c t^2
  double se_a = 0, se_b = 0, se_c = 0;
  double sse = 0, sigma = 0;         // residual sum of squares, residual sd (x the autocorrelation factor)
  double sd = 0;                     // residual sd
  double lag1 = 0;                   // sum of r_i r_(i+1): the residuals' lag-1 autocovariance x n
  size_t n = 0;
};

// Inverts the d x d matrix m (d <= 3) into inv; m is destroyed. Plain arrays:
// this runs for every candidate split, and std::array costs in a debug build.
bool invert(double m[3][3], int d, double inv[3][3]) {
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) inv[i][j] = i == j;
  for (int col = 0; col < d; ++col) {
    int piv = col;
    for (int r = col + 1; r < d; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[piv][col])) piv = r;
    if (std::fabs(m[piv][col]) < 1e-12) return false;
    for (int j = 0; j < d; ++j) std::swap(m[piv][j], m[col][j]), std::swap(inv[piv][j], inv[col][j]);
    double p = m[col][col];
    for (int j = 0; j < d; ++j) m[col][j] /= p, inv[col][j] /= p;
    for (int r = 0; r < d; ++r) {
      if (r == col) continue;
      double f = m[r][col];
      for (int j = 0; j < d; ++j) m[r][j] -= f * m[col][j], inv[r][j] -= f * inv[col][j];
    }
  }
  return true;
}

Fit poly_fit(const std::vector<double>& t, const std::vector<double>& y, size_t b, size_t e, int degree) {
  Fit f;
  f.degree = degree;
  f.n = e - b;
  const int d = degree + 1;
  if (f.n < size_t(d) + 1) return f;
  // u = t / scale in [-1, 0]: the normal equations stay well conditioned.
  const double scale = std::max(1e-9, -t[b]);
  double m[3][3] = {}, v[3] = {};
  for (size_t i = b; i < e; ++i) {
    double u = t[i] / scale, p[3] = {1, u, u * u};
    for (int r = 0; r < d; ++r) {
      v[r] += p[r] * y[i];
      for (int c = 0; c < d; ++c) m[r][c] += p[r] * p[c];
    }
  }
  double inv[3][3];
  if (!invert(m, d, inv)) return f;
  double beta[3] = {0, 0, 0};
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) beta[r] += inv[r][c] * v[c];
  double prev = 0;
  for (size_t i = b; i < e; ++i) {
    double u = t[i] / scale, r = y[i] - (beta[0] + beta[1] * u + beta[2] * u * u);
    f.sse += r * r;
    if (i > b) f.lag1 += prev * r;
    prev = r;
  }
  double dof = double(f.n) - d;
  f.sigma = f.sd = std::sqrt(f.sse / dof);
  f.a = beta[0];
  f.b = beta[1] / scale;
  f.c = beta[2] / (scale * scale);
  // Residuals that wander together (a cache, an allocator's slack) carry
  // less information than their count says: the standard errors grow by
  // sqrt((1 + rho) / (1 - rho)) for lag-1 autocorrelation rho (AR(1)).
  const double rho = f.sse > 0 ? std::clamp(f.lag1 / f.sse, 0.0, 0.9) : 0.0;
  f.sigma *= std::sqrt((1 + rho) / (1 - rho));
  f.se_a = f.sigma * std::sqrt(std::max(0.0, inv[0][0]));
  f.se_b = f.sigma * std::sqrt(std::max(0.0, inv[1][1])) / scale;
  if (d == 3) f.se_c = f.sigma * std::sqrt(std::max(0.0, inv[2][2])) / (scale * scale);
  f.ok = true;
  return f;
}

// Prefix sums of t^0..t^4, y, t y, t^2 y and y^2 (y less the newest value,
// so that the sums of squares do not cancel): any segment's least squares
// fit in O(1), for the split search. Plain standard errors (no
// autocorrelation factor, no lag-1 sum): poly_fit refits the winner.
struct Moments {
  std::vector<std::array<double, 9>> p;  // p[i]: sums over points [0, i)
  const double* at(size_t i) const { return p[i].data(); }
  double y_ref = 0;
};

Moments moments_of(const std::vector<double>& t, const std::vector<double>& y) {
  Moments m;
  m.y_ref = y.back();
  m.p.assign(t.size() + 1, {});
  for (size_t i = 0; i < t.size(); ++i) {
    double u = t[i], v = y[i] - m.y_ref, u2 = u * u;
    const std::array<double, 9> add = {1, u, u2, u2 * u, u2 * u2, v, u * v, u2 * v, v * v};
    for (size_t k = 0; k < 9; ++k) m.p[i + 1][k] = m.p[i][k] + add[k];
  }
  return m;
}

Fit moment_fit(const Moments& mo, const std::vector<double>& t, size_t b, size_t e, int degree) {
  Fit f;
  f.degree = degree;
  f.n = e - b;
  const int d = degree + 1;
  if (f.n < size_t(d) + 1) return f;
  const double scale = std::max(1e-9, -t[b]);
  double S[9];
  const double *pe = mo.at(e), *pb = mo.at(b);
  for (size_t k = 0; k < 9; ++k) S[k] = pe[k] - pb[k];
  // Sums of u^k (u = t / scale) and u^k y.
  double su[5], suy[3], pw = 1;
  for (int k = 0; k <= 4; ++k, pw *= scale) {
    su[k] = S[k] / pw;
    if (k <= 2) suy[k] = S[5 + k] / pw;
  }
  double m[3][3], inv[3][3];
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) m[r][c] = su[r + c];
  if (!invert(m, d, inv)) return f;
  double beta[3] = {0, 0, 0};
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) beta[r] += inv[r][c] * suy[c];
  double fitted = 0;
  for (int r = 0; r < d; ++r) fitted += beta[r] * suy[r];
  f.sse = std::max(0.0, S[8] - fitted);
  f.sigma = f.sd = std::sqrt(f.sse / (double(f.n) - d));
  f.a = beta[0] + mo.y_ref;
  f.b = beta[1] / scale;
  f.c = beta[2] / (scale * scale);
  f.se_a = f.sigma * std::sqrt(std::max(0.0, inv[0][0]));
  f.se_b = f.sigma * std::sqrt(std::max(0.0, inv[1][1])) / scale;
  if (d == 3) f.se_c = f.sigma * std::sqrt(std::max(0.0, inv[2][2])) / (scale * scale);
  f.ok = true;
  return f;
}

// Smallest t > 0 with a + b t + c t^2 >= target; 0 when a already is; nullopt when never.
std::optional<double> reach(double a, double b, double c, double target) {
  if (a >= target) return 0.0;
  double gap = target - a;
  if (std::fabs(c) < 1e-300) {
    if (b <= 0) return std::nullopt;
    return gap / b;
  }
  double disc = b * b + 4 * c * gap;
  if (disc < 0) return std::nullopt;
  double sq = std::sqrt(disc);
  // Roots of c t^2 + b t - gap = 0, in the form that does not cancel.
  double q = -0.5 * (b + std::copysign(sq, b == 0 ? 1.0 : b));
  double r1 = q / c, r2 = q != 0 ? -gap / q : kInf;
  double best = kInf;
  for (double r : {r1, r2})
    if (r > 0 && std::isfinite(r)) best = std::min(best, r);
  if (!std::isfinite(best)) return std::nullopt;
  return best;
}

// The likelihood term counts n (1 - rho) / (1 + rho) effective points when
// the residuals are autocorrelated, so wandering noise does not buy a curve.
double f2(double v) { return v * v; }

double bic(double sse, size_t n, int k, double floor_var, double rho = 0) {
  double nn = double(n), eff = nn * (1 - rho) / (1 + rho);
  return eff * std::log(std::max(sse, nn * floor_var) / nn) + double(k) * std::log(nn);
}

bool credible(Forecast& f, const ForecastOptions& o) {
  return f.tte_s && f.basis_points >= o.min_points && f.basis_s >= o.min_basis_s &&
         *f.tte_s <= o.max_extrapolation * f.basis_s;
}

// Step 4 for the points [begin, end of t): the best of one line, one
// quadratic, and a split into a left line and a right line or quadratic.
struct Model {
  Fit fit;
  size_t start = 0;     // where the fitted regime begins
  double left_end = 0;  // the left part's fitted value at its last point (splits)
};

Model choose_model(const std::vector<double>& t, const std::vector<double>& y, const Moments& mo, size_t begin,
                   double floor_sd, double jump) {
  const double floor_var = floor_sd * floor_sd;  // clean or quantized data must not win by rounding
  const size_t n = t.size() - begin;
  // The fits do not depend on rho; only the scores do.
  struct Candidate {
    size_t start;
    int degree, k;
    double left_end, sse;
  };
  std::vector<Candidate> cands;
  for (int deg = 1; deg <= 2; ++deg)
    if (Fit f = moment_fit(mo, t, begin, t.size(), deg); f.ok) cands.push_back({begin, deg, deg + 1, 0, f.sse});
  for (size_t k = begin + 2; k + 3 <= t.size(); ++k) {
    Fit left = moment_fit(mo, t, begin, k, 1);
    for (int deg = 1; deg <= 2; ++deg) {
      Fit right = moment_fit(mo, t, k, t.size(), deg);
      if (!right.ok) continue;
      // Only a material change splits: the level moved by a jump, or the
      // slope by a quarter (sampling that beats against an allocator's
      // rhythm must not cut a steady ramp into pieces).
      double bl = left.ok ? left.b : (y[k - 1] - y[k - 2]) / (t[k - 1] - t[k - 2]);
      double se_l = left.ok ? left.se_b : 0;
      double left_end = left.ok ? left.a + left.b * t[k - 1] : y[k - 1];
      double right_start = right.a + right.b * t[k - 1] + right.c * t[k - 1] * t[k - 1];
      double br = right.b + 2 * right.c * t[k];  // the right part's slope where it starts
      double span = -t[begin], dslope = std::fabs(br - bl);
      bool level = std::fabs(right_start - left_end) > jump;
      bool slope = dslope > 0.25 * std::max(std::fabs(br), std::fabs(bl)) && dslope * span > 4 * floor_sd &&
                   dslope > 3 * std::sqrt(se_l * se_l + right.se_b * right.se_b);
      if (!level && !slope) continue;
      double lsse = left.ok ? left.sse : 0;  // two points fit exactly
      cands.push_back({k, deg, deg == 1 ? 5 : 6, left_end, lsse + right.sse});
    }
  }
  // A curve must beat the best piecewise line by a clear margin (a Bayes
  // factor of ~20): noise over a knee looks convex too, and the two
  // extrapolate very differently.
  auto pick = [&](double rho) {
    const Candidate *best = nullptr, *best_line = nullptr;
    double best_bic = kInf, line_bic = kInf;
    for (const Candidate& c : cands) {
      double v = bic(c.sse, n, c.k, floor_var, rho);
      if (v < best_bic) best_bic = v, best = &c;
      if (c.degree == 1 && v < line_bic) line_bic = v, best_line = &c;
    }
    if (best && best->degree == 2 && best_line && line_bic - best_bic < 6) best = best_line;
    return best;
  };
  // Scored as if the residuals were independent, then again with the
  // winner's residual autocorrelation when they are not.
  const Candidate* best = pick(0);
  Model m;
  m.start = begin;
  if (!best) return m;
  auto refit = [&](const Candidate& c, double& sse, double& lag1) {
    Fit right = poly_fit(t, y, c.start, t.size(), c.degree);
    sse = right.sse, lag1 = right.lag1;
    if (c.start != begin && c.start - begin >= 3) {
      Fit left = poly_fit(t, y, begin, c.start, 1);
      sse += left.sse, lag1 += left.lag1;
    }
    return right;
  };
  double sse = 0, lag1 = 0;
  Fit fit = refit(*best, sse, lag1);
  if (sse > 0) {
    double rho = std::clamp(lag1 / sse, 0.0, 0.9);
    if (rho > 0.2) {
      const Candidate* again = pick(rho);
      if (again && again != best) best = again, fit = refit(*best, sse, lag1);
    }
  }
  m.fit = fit, m.start = best->start, m.left_end = best->left_end;
  return m;
}

// Step 3: a sawtooth is judged on its peaks.
// nullopt when the current cycle has broken above the envelope by more than
// `jump`: the regime after the last drop is then what counts.
std::optional<Forecast> sawtooth(const std::vector<double>& t, const std::vector<double>& y,
                                 const std::vector<size_t>& drops, double limit, double jump,
                                 const ForecastOptions& o) {
  Forecast f;
  f.shape = GrowthShape::sawtooth;
  std::vector<double> pt, py;  // peaks of complete cycles
  size_t from = 0;
  for (size_t d : drops) {
    size_t best = from;
    for (size_t i = from; i < d; ++i)
      if (y[i] > y[best]) best = i;
    pt.push_back(t[best]), py.push_back(y[best]);
    from = d;
  }
  f.basis_points = pt.size();
  f.basis_s = -pt.front();
  if (pt.size() < 3) return f;
  std::vector<double> slopes;
  for (size_t i = 0; i < pt.size(); ++i)
    for (size_t j = i + 1; j < pt.size(); ++j)
      if (pt[j] > pt[i]) slopes.push_back((py[j] - py[i]) / (pt[j] - pt[i]));
  if (slopes.empty()) return f;
  std::sort(slopes.begin(), slopes.end());
  double s = median_of(slopes);
  std::vector<double> res(pt.size());
  for (size_t i = 0; i < pt.size(); ++i) res[i] = py[i] - s * pt[i];
  double a = median_of(res);
  for (double& r : res) r = std::fabs(r - a);
  double sigma = 1.4826 * median_of(res);
  double rise = s * (pt.back() - pt.front());
  // A peak is sampled anywhere within the last step of its ramp: peaks that
  // stay level read up to one step apart, and a sampling period that beats
  // with the cycle walks them up that step over a few cycles. The peaks'
  // rise must pass that step too (the median rise between samples in the
  // cycles).
  std::vector<double> steps;
  for (size_t i = 0; i + 1 < y.size(); ++i)
    if (y[i + 1] > y[i] && y[i + 1] - y[i] < jump) steps.push_back(y[i + 1] - y[i]);
  const double step = steps.empty() ? 0.0 : median_of(steps);
  bool trend = s > 0 && rise > std::max({3 * sigma, 0.01 * limit, 1.5 * step});
  double envelope_now = trend ? a : median_of(py);
  double swing = py.back() - y[drops.back()];
  if (*std::max_element(y.begin() + long(drops.back()), y.end()) >
      envelope_now + std::max({3 * sigma, jump, swing / 2}))
    return std::nullopt;
  f.rate_per_s = s * kMiB;
  f.used_fit = a * kMiB;
  f.noise_sd = sigma * kMiB;
  if (!trend) return f;
  double target = limit - 0.5 * sigma;
  f.tte_s = reach(a, s, 0, target);
  auto q = [&](double p) { return slopes[std::min(slopes.size() - 1, size_t(p * double(slopes.size())))]; };
  double fast = std::max(s, q(0.84)), slow = std::min(s, q(0.16));
  f.low_s = reach(a + sigma, fast, 0, target).value_or(0);
  f.high_s = slow > 0 ? reach(a - sigma, slow, 0, target).value_or(kInf) : kInf;
  f.alert = credible(f, o) && f.basis_points >= 3;
  return f;
}

}  // namespace

const char* growth_shape_name(GrowthShape s) {
  switch (s) {
    case GrowthShape::none: return "too little history";
    case GrowthShape::flat: return "flat";
    case GrowthShape::falling: return "falling";
    case GrowthShape::steady: return "steady growth";
    case GrowthShape::accelerating: return "accelerating growth";
    case GrowthShape::step: return "step";
    case GrowthShape::sawtooth: return "sawtooth";
    case GrowthShape::leak: return "slow leak";
  }
  return "unknown";
}

std::string format_tte_range(double low_s, double high_s) {
  low_s = std::max(0.0, low_s);
  if (!std::isfinite(high_s)) high_s = std::max(low_s, 1e9);
  double unit = 1;
  const char* name = "s";
  if (high_s >= 2 * 3600) unit = 3600, name = "h";
  else if (high_s >= 120) unit = 60, name = "min";
  double lo = low_s / unit, hi = high_s / unit;
  if (unit == 3600 && hi < 10) return fmt::format("{:.1f}-{:.1f} {}", lo, hi, name);
  long l = std::lround(std::floor(lo)), h = std::lround(std::ceil(hi));
  if (h <= l) return fmt::format("~{} {}", l, name);
  return fmt::format("{}-{} {}", l, h, name);
}

// Kept whole: its seven numbered steps read the same decimated series and the
// noise figures of step 1 (jump, floor_sd) and narrow one regime; cut apart,
// each step would take them all as parameters.
Forecast forecast_exhaustion(const std::vector<std::pair<int64_t, uint64_t>>& points, uint64_t limit_bytes,
                             const ForecastOptions& o) {
  Forecast f;
  if (points.size() < 3 || limit_bytes == 0) return f;
  // Decimate evenly, keeping the newest point; t in seconds before it, y in MiB.
  const size_t n0 = std::min(points.size(), std::max<size_t>(o.max_points, 8));
  std::vector<double> t, y;
  t.reserve(n0), y.reserve(n0);
  const int64_t t_now = points.back().first;
  for (size_t k = 0; k < n0; ++k) {
    size_t i = n0 == points.size() ? k : k * (points.size() - 1) / (n0 - 1);
    if (!t.empty() && double(points[i].first - t_now) / 1e6 <= t.back()) continue;  // time must increase
    t.push_back(double(points[i].first - t_now) / 1e6);
    y.push_back(double(points[i].second) / kMiB);
  }
  const double limit = double(limit_bytes) / kMiB;
  if (t.size() < 3 || t.front() >= 0) return f;

  // 1. Noise and the jump threshold.
  std::vector<double> d(t.size() - 1);
  for (size_t i = 0; i + 1 < t.size(); ++i) d[i] = y[i + 1] - y[i];
  const double med_d = median_of(d);
  std::vector<double> dev(d.size());
  for (size_t i = 0; i < d.size(); ++i) dev[i] = std::fabs(d[i] - med_d);
  const double sigma = 1.4826 * median_of(dev) / std::sqrt(2.0);
  const double jump = std::max({8 * sigma, 0.02 * limit, 4 * std::fabs(med_d), 0.25});
  // Quantization (an allocator's 2 MiB steps sampled out of phase) shows in
  // the differences' mean deviation even when their median deviation is 0.
  double mean_dev = 0;
  size_t quiet = 0;
  for (double v : dev)
    if (v < jump / 2) mean_dev += v, ++quiet;  // not the jumps themselves
  const double floor_sd =
      std::max({sigma, quiet ? 0.5 * mean_dev / double(quiet) : 0.0, o.noise_floor_bytes / kMiB, 0.01});

  // 2. Spikes out.
  std::vector<char> keep(t.size(), 1);
  for (size_t i = 1; i + 1 < t.size(); ++i) {
    double l = y[i] - y[i - 1], r = y[i] - y[i + 1];
    if ((l > jump && r > jump) || (l < -jump && r < -jump)) keep[i] = 0;
  }
  const size_t last = t.size() - 1;
  if (t.size() >= 4 && std::fabs(y[last] - y[last - 1]) > jump && std::fabs(y[last - 1] - y[last - 2]) < jump / 2)
    keep[last] = 0;
  {
    std::vector<double> t2, y2;
    for (size_t i = 0; i < t.size(); ++i)
      if (keep[i]) t2.push_back(t[i]), y2.push_back(y[i]);
    t.swap(t2), y.swap(y2);
  }
  if (t.size() < 3) return f;

  // 3. Drops: a sawtooth, or a new start after one drop.
  std::vector<size_t> drops;  // index of the first point after each drop
  for (size_t i = 0; i + 1 < t.size(); ++i)
    if (y[i + 1] - y[i] < -jump) drops.push_back(i + 1);
  if (drops.size() >= 3)
    if (auto saw = sawtooth(t, y, drops, limit, jump, o)) return *saw;
  size_t begin = drops.empty() ? 0 : drops.back();
  bool shifted = !drops.empty();
  double before_level = shifted ? y[begin - 1] : 0;
  if (shifted) {
    // It has been higher and came back: until this cycle passes the highest
    // peak before it, it is a sawtooth without a trend of its peaks yet.
    // (A cycle that ended at the limit was killed: the next run is a new
    // regime, forecast like any other.)
    auto peak_at = std::max_element(y.begin(), y.begin() + long(begin));
    double prior_peak = *peak_at;
    double swing = prior_peak - y[begin];
    // Killed at the limit: the last sample before it stands within one
    // rise of the limit (the step into the peak, twice for a sample that
    // came early), or 2% of it. Two jump thresholds were used before; they
    // scale with the median step, so a sawtooth sampled a little slower
    // (a loaded machine) had its peak read as a kill and its next ramp
    // forecast.
    double rise_in = peak_at == y.begin() ? 0.0 : std::max(0.0, prior_peak - *(peak_at - 1));
    bool killed = prior_peak >= limit - std::max({0.02 * limit, 2 * rise_in, 3 * floor_sd});
    if (drops.size() < 3 && !killed &&
        *std::max_element(y.begin() + long(begin), y.end()) <= prior_peak + std::max(jump, swing / 2)) {
      f.shape = GrowthShape::sawtooth;
      f.basis_points = drops.size();
      f.basis_s = -t.front();
      return f;
    }
  }
  if (t.size() - begin < 3) {
    f.shape = shifted ? GrowthShape::step : GrowthShape::none;
    return f;
  }

  // 4. Regime and model by BIC; a split's right part is searched again (a
  // step, then a knee), at most three times.
  Fit best;
  size_t regime = begin;
  const Moments mo = moments_of(t, y);
  for (int depth = 0; depth < 3; ++depth) {
    Model m = choose_model(t, y, mo, regime, floor_sd, jump);
    if (!m.fit.ok) break;
    best = m.fit;
    if (m.start == regime) break;
    regime = m.start, shifted = true, before_level = m.left_end;
    // A sample caught halfway through the step (1, 4, 64, 100, 100 MiB: the
    // allocator was still touching pages when the sampler read) belongs to
    // neither level. Left at the regime's start, it drags the line fitted
    // there, and the split search cannot cut it off (a left part has two
    // points): the regime starts at the level it was heading for.
    while (regime + 3 < t.size() && std::fabs(y[regime + 1] - y[regime]) > jump &&
           (y[regime + 1] - y[regime] > 0) == (y[regime] - before_level > 0) &&
           std::fabs(y[regime + 2] - y[regime + 1]) < jump / 2)
      before_level = y[regime++];
  }
  if (!best.ok) return f;
  // A curvature within six standard errors of 0 is taken for noise (wander
  // over a few minutes bends a quadratic at 3): the line it is.
  if (best.degree == 2 && (std::fabs(best.c) < 6 * best.se_c || std::fabs(best.c) * f2(t[regime]) < 4 * floor_sd))
    if (Fit line = poly_fit(t, y, regime, t.size(), 1); line.ok) best = line;

  // 5. Significance and shape.
  f.basis_points = t.size() - regime;
  f.basis_s = -t[regime];
  f.used_fit = best.a * kMiB;
  f.rate_per_s = best.b * kMiB;
  const double rise = best.b * f.basis_s;
  f.noise_sd = best.sd * kMiB;
  const bool rising = best.b > 0 && best.b >= 3 * best.se_b &&
                      rise >= std::max({2 * best.sigma, 2 * floor_sd, 2e-4 * limit, 0.5});
  if (!rising) {
    if (best.b < 0 && -best.b >= 3 * best.se_b && -rise >= 2 * best.sigma) f.shape = GrowthShape::falling;
    else if (shifted && std::fabs(best.a - before_level) > jump) f.shape = GrowthShape::step;
    else f.shape = GrowthShape::flat;
    return f;
  }
  if (best.degree == 2 && best.c > 0 && best.c >= 6 * best.se_c) f.shape = GrowthShape::accelerating;
  else if (f.basis_s >= o.leak_after_s) f.shape = GrowthShape::leak;
  else f.shape = GrowthShape::steady;

  // 6. Time to full, with its range.
  const double target = limit - 0.5 * best.sd;
  f.tte_s = reach(best.a, best.b, best.c, target);
  if (!f.tte_s) return f;
  f.low_s = reach(best.a + 2 * best.se_a, best.b + 2 * best.se_b, best.c + 2 * best.se_c, target).value_or(0);
  double slow_c = std::max(0.0, best.c - 2 * best.se_c);
  f.high_s = reach(best.a - 2 * best.se_a, best.b - 2 * best.se_b, slow_c, target).value_or(kInf);
  f.low_s = std::min(f.low_s, *f.tte_s);
  f.high_s = std::max(f.high_s, *f.tte_s);

  // 7. Credible enough to alert on? Not while a level shift is among the
  // newest three points: no model has seen the regime after it yet.
  f.alert = credible(f, o);
  // A curve is trusted over a shorter reach than a line, and on twice the
  // points: a minute of wandering noise bends a quadratic as easily as growth
  // that speeds up does.
  if (best.degree == 2 && (*f.tte_s > o.max_extrapolation_curve * f.basis_s || f.basis_points < 2 * o.min_points))
    f.alert = false;
  for (size_t i = std::max<size_t>(t.size(), 3) - 3; f.alert && i + 1 < t.size(); ++i) {
    double dd = std::fabs(y[i + 1] - y[i]);
    std::vector<double> before;
    for (size_t j = i >= 4 ? i - 4 : 0; j < i; ++j) before.push_back(std::fabs(y[j + 1] - y[j]));
    if (dd > jump && dd > 3 * median_of(before) + 0.25) f.alert = false;
  }
  if (f.alert && f.basis_points >= 6) {
    int above = 0, below = 0;
    for (size_t i = t.size() - 3; i < t.size(); ++i) {
      double r = y[i] - (best.a + best.b * t[i] + best.c * t[i] * t[i]);
      above += r > 2 * best.sigma, below += r < -2 * best.sigma;
    }
    if (above == 3 || below == 3) f.alert = false;
  }
  return f;
}

}  // namespace aimem::watch
