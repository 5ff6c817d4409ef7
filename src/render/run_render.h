// What `aimem run` prints when CMD ends: the JSON of --json and the text for
// people (peaks, alerts, trend, the diagnosis or the verdict).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "watch/runner.h"

namespace aimem::watch {

nlohmann::json run_result_json(const RunOptions& o, const RunResult& r);
std::string run_result_text(const RunOptions& o, const RunResult& r, bool color);

}  // namespace aimem::watch
