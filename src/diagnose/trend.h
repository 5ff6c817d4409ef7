// What a recording adds to a diagnosis: the kernel report says the limit was
// reached, not what drove usage there; the timeline says whether memory grew
// without end (leak_or_accumulation) or with a load dimension (concurrency,
// queue depth, batch size: concurrency_batch; context length: kv_cache_context).
// watch/trend.cc measures the shapes; this file decides what they mean.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/diagnosis.h"

namespace aimem {

// The shape of one memory pool's usage over a recording.
enum class UsageShape {
  flat,
  steady_growth,  // never stops: leak_or_accumulation
  load_step,      // rises with load then plateaus
  load_peak,      // peak early (model load) then falls to a lower plateau
  unknown
};

// One pool's usage over a recording, as far as the diagnosis reads it.
struct UsageTrend {
  UsageShape shape = UsageShape::unknown;
  std::string dimension;  // the tracked dimension that moved with memory, or ""
  int64_t peak_time_us = 0;
  std::string summary;    // one line for people, with numbers
};

// The trends of the pool the primary incident happened in refine its cause
// when the evidence left it at limit_too_low or unknown: the first trend that
// names a cause wins, and the incident's fixes are advised again for it.
// Returns true when the cause changed.
bool apply_trend(Diagnosis& d, const std::vector<UsageTrend>& pool_trends);

}  // namespace aimem
