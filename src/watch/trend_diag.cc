// See trend_diag.h.
#include "watch/trend_diag.h"

#include "diagnose/trend.h"

namespace aimem::watch {

bool apply_trend(Diagnosis& d, const std::vector<TrendFinding>& trend, const std::string& pool_id) {
  std::vector<UsageTrend> pool_trends;
  for (const auto& f : trend)
    if (f.pool_id == pool_id) pool_trends.push_back({f.shape, f.dimension, f.peak_time_us, f.summary});
  return aimem::apply_trend(d, pool_trends);
}

}  // namespace aimem::watch
