// Time-to-exhaustion forecast that follows the shape of the usage: from the
// recent samples of one memory pool it finds the current regime (the points
// after the last level shift or knee), decides which shape it is (steady
// growth, accelerating growth, a step that levelled off, a sawtooth, a slow
// leak) and fits the model that shape calls for, with an uncertainty range.
// Pure: numbers in, a Forecast out. The reasoning is at the top of forecast.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aimem::watch {

enum class GrowthShape {
  none,          // too few points to say
  flat,          // no significant trend
  falling,       // shrinking
  steady,        // linear growth
  accelerating,  // growth that speeds up (quadratic fit)
  step,          // a jump or a knee, then flat
  sawtooth,      // drops back repeatedly (GC heaps, batch jobs); judged on its peaks
  leak,          // linear growth that has lasted at least ForecastOptions::leak_after_s
};
// "steady growth", "accelerating growth", "sawtooth", "slow leak", ... for people and JSON.
const char* growth_shape_name(GrowthShape shape);

struct ForecastOptions {
  size_t max_points = 160;  // longer inputs are decimated evenly (the newest point is kept)
  size_t min_points = 5;    // in the regime the forecast rests on
  // Whether the forecast is credible enough to alert on: the regime lasted at
  // least min_basis_s and the forecast reaches at most max_extrapolation times it.
  double min_basis_s = 2;
  double max_extrapolation = 10;
  double max_extrapolation_curve = 4;  // for a quadratic (accelerating growth)
  double leak_after_s = 600;  // steady growth this old is a leak
  // The pool's noise as a longer history shows it (the leak window's residual
  // sd): a change or a curve smaller than this in the recent points is not
  // taken for one. 0: the recent points' own noise only.
  double noise_floor_bytes = 0;
};

struct Forecast {
  GrowthShape shape = GrowthShape::none;
  // Seconds from the newest point until the pool is full (0: already at the
  // limit); nullopt when the shape does not reach the limit.
  std::optional<double> tte_s;
  // The range: low from the fit's parameters two standard errors towards
  // faster growth, high towards slower (+infinity when slower never fills).
  double low_s = 0, high_s = 0;
  double rate_per_s = 0;    // growth now, bytes/s (the envelope's for a sawtooth)
  double used_fit = 0;      // the fitted value at the newest point, bytes
  double noise_sd = 0;      // residual sd of the fit, bytes (of the peaks for a sawtooth)
  double basis_s = 0;       // time span of the regime the fit rests on
  size_t basis_points = 0;  // its points (peaks for a sawtooth)
  bool alert = false;       // tte_s is credible (see ForecastOptions); the caller applies its horizon
};

// points: (time_us, bytes) in time order; limit in bytes (> 0).
Forecast forecast_exhaustion(const std::vector<std::pair<int64_t, uint64_t>>& points, uint64_t limit,
                             const ForecastOptions& options = {});

// "8-11 s", "12-15 min", "2.0-2.6 h": a range for people, in one unit.
std::string format_tte_range(double low_s, double high_s);

}  // namespace aimem::watch
