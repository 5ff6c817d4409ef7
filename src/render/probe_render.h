// `aimem probe`'s output: the JSON of DESIGN §2 (probe --json) and the
// envelope for people (a table per step, the context x concurrency grid, the
// breaking point with its diagnosis, the limits to configure).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "probe/sweep.h"

namespace aimem::probe {

nlohmann::json probe_json(const ProbeContext& c, const SweepResult& r);
// `color`: step states and the breaking point in colour, for a terminal.
std::string probe_text(const ProbeContext& c, const SweepResult& r, bool color = false);
// One line per step while the sweep runs (to stderr).
std::string step_line(const StepResult& s);

}  // namespace aimem::probe
