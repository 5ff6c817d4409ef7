// A recording's trend findings handed to the diagnosis (diagnose/trend.h
// decides what they mean for the cause).
#pragma once

#include <string>
#include <vector>

#include "diagnose/diagnosis.h"
#include "watch/trend.h"

namespace aimem::watch {

// Findings about `pool_id` (e.g. "cgroup:/x") refine the primary incident's
// cause when the evidence left it at limit_too_low or unknown; its fixes are
// then advised again for the new cause. Returns true when the cause changed.
bool apply_trend(Diagnosis& d, const std::vector<TrendFinding>& trend, const std::string& pool_id);

}  // namespace aimem::watch
