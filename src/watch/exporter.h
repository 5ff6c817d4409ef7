// Renders one Sample as Prometheus text (format 0.0.4) with the metric names
// of DESIGN §4, for `aimem watch`'s /metrics. Pure: a sample in, text out.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sources/sample.h"

namespace aimem::watch {

// A time-to-exhaustion forecast the alert engine computed for one pool.
struct ExhaustionForecast {
  std::string pool;    // "host_ram", "swap", "cgroup", "gpu"
  std::string cgroup;  // for pool "cgroup"
  std::string gpu;     // for pool "gpu": the index
  double seconds = 0;
};

struct ExportExtras {
  std::vector<ExhaustionForecast> exhaustion;
  // Mean time to first token since the previous scrape, by server target
  // (see mean_first_token_seconds).
  std::map<std::string, double> first_token_seconds;
  std::optional<double> sample_duration_s;  // how long aimem took to take the sample
  size_t max_processes = 50;  // top N by RSS, plus every process with a role or GPU memory
  // Labels on every series (`aimem watch --label node=NAME`): the node's
  // name in a fleet, from the Kubernetes downward API. Names are checked by
  // parse_constant_label.
  std::vector<std::pair<std::string, std::string>> labels;
};

// "name=value" -> the label; an error naming the problem for a name that is
// not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)
// or that aimem's own series use (pool, cgroup, gpu, pid, comm, ...).
Result<std::pair<std::string, std::string>> parse_constant_label(std::string_view spec);

// Mean TTFT over the requests that got their first token between two scrapes
// of one server, from the histogram's _sum/_count deltas. nullopt when no new
// request, when either scrape lacks the histogram, or when a counter went
// backwards (the server restarted).
std::optional<double> mean_first_token_seconds(const ServerSample& previous, const ServerSample& current);

// The processes worth a series or a stored row: the `largest` by RSS plus
// every one with an AI role or GPU memory (largest first).
std::vector<const ProcessSample*> notable_processes(const Sample& sample, size_t largest);

std::string render_metrics(const Sample& sample, const ExportExtras& extras);

}  // namespace aimem::watch
