// `aimem probe`'s output: the JSON of DESIGN §2 (probe --json) and the
// envelope for people (a table per step, the context x concurrency grid, the
// breaking point with its diagnosis, the limits to configure).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "probe/sweep.h"

namespace aimem::probe {

struct ProbeContext {
  std::string url;
  std::optional<int> pid;
  std::string pid_how;             // "--pid", "port 8080", ""
  std::string cgroup;
  std::string metrics_url;
  SweepOptions options;
  bool keep_alive = true;          // ClientOptions::keep_alive (--no-keep-alive)
  std::optional<std::string> diagnosis_json;  // the `diagnose --json` object when the server died
  std::string diagnosis_note;                 // why there is none when the server died
  std::vector<std::string> warnings;
};

nlohmann::json probe_json(const ProbeContext& c, const SweepResult& r);
// `color`: step states and the breaking point in colour, for a terminal.
std::string probe_text(const ProbeContext& c, const SweepResult& r, bool color = false);
// One line per step while the sweep runs (to stderr).
std::string step_line(const StepResult& s);
// The limits file's contents for --save-limits.
Limits to_limits(const ProbeContext& c, const SweepResult& r);

}  // namespace aimem::probe
