// The analysis of a recording: for each memory pool, the shape of its usage
// over time (flat, growth that never stops, a step with load, a load-time peak)
// and which tracked dimension (context, concurrency, queue depth, batch size, a
// custom metric) moved with it. Used when `aimem run` ends and by `aimem watch`
// when an OOM kill happens. The rules are in trend.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/trend.h"
#include "sources/sample.h"

namespace aimem::watch {

// The shapes are the diagnosis's (diagnose/trend.h), which reads them.
using Shape = UsageShape;

struct TrendFinding {
  std::string pool_id;  // as in pools_of
  Shape shape = Shape::unknown;
  double growth_bytes_per_s = 0;  // Theil–Sen slope over the recording
  uint64_t start_bytes = 0, peak_bytes = 0, end_bytes = 0;
  int64_t peak_time_us = 0;
  // The tracked dimension whose series moved with memory (Spearman rank
  // correlation >= 0.8 over the recording), or "" when none did.
  std::string dimension;
  // The best rank correlation found with any tracked dimension (also when it
  // stayed below 0.8; then `dimension` is "" and the summary names the one it was).
  double correlation = 0;
  std::string summary;  // one line for people, with numbers
};

// One finding per pool (pools_of) with at least 10 points. Recordings longer
// than 2,000 samples are decimated evenly, so the cost is bounded.
std::vector<TrendFinding> analyse(const std::vector<Sample>& samples);
const char* shape_name(Shape shape);

}  // namespace aimem::watch
