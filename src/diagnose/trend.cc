// See trend.h.
#include "diagnose/trend.h"

#include "core/text.h"
#include "diagnose/internal.h"

namespace aimem {

bool apply_trend(Diagnosis& d, const std::vector<UsageTrend>& pool_trends) {
  if (d.incidents.empty()) return false;
  Incident& primary = d.incidents.front();
  if (primary.cause != Cause::limit_too_low && primary.cause != Cause::unknown) return false;
  for (const auto& f : pool_trends) {
    Cause cause = Cause::unknown;
    if (f.shape == UsageShape::steady_growth) {
      cause = Cause::leak_or_accumulation;
    } else if (f.shape == UsageShape::load_step && !f.dimension.empty()) {
      cause = f.dimension == "context_tokens" ? Cause::kv_cache_context : Cause::concurrency_batch;
    } else if (f.shape == UsageShape::load_peak && f.peak_time_us <= primary.time_us.value_or(INT64_MAX)) {
      continue;  // a load-time peak that passed does not explain a later kill
    }
    if (cause == Cause::unknown) continue;
    primary.cause = cause;
    std::erase_if(primary.reasons, [](const std::string& r) { return text::starts_with(r, "cause:"); });
    primary.reasons.push_back("the recording: " + f.summary);
    primary.fixes.clear();
    primary.next_checks.clear();
    primary.evidence.clear();
    detail::advise(primary, d.facts);
    d.cause = cause;
    return true;
  }
  return false;
}

}  // namespace aimem
