// The sweep of `aimem probe`: context lengths x concurrency, ascending, each
// step a burst of streamed requests at that shape while the monitor watches
// the server's memory. A failing step closes its direction: no step with a
// context and a concurrency both at least as large is run after it. A dead
// server ends the sweep. Every loop is bounded by count and by time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/client.h"
#include "probe/limits.h"
#include "probe/monitor.h"

namespace aimem::probe {

struct SweepOptions {
  std::vector<int64_t> contexts = {512, 2048, 8192, 32768};  // total tokens per request (prompt + new)
  std::vector<int64_t> concurrency = {1, 4, 16};
  int max_new_tokens = 64;
  int requests_per_step = 0;       // 0: 2 x concurrency
  double step_duration_s = 0;      // > 0: stop starting requests after this long
  double total_timeout_s = 600;    // the whole sweep (with started_s: the whole run)
  double started_s = 0;            // steady_seconds() when the run began; 0: when run_sweep is called
  double slow_ttft_s = 10;         // a step whose TTFT p95 is above this is "slow"
  double headroom_pct = 20;        // taken off the largest passing step for the limits
  double pressure_ratio = 0.8;     // TTFT split: requests started above/below this used ratio
  Api api = Api::completions;
  std::string model;               // "" = the server's first model
};

struct StepResult {
  int64_t context = 0, concurrency = 0;
  std::string status;              // "ok", "slow", "failed", "skipped"
  std::string skipped_why;         // for "skipped"
  int requests = 0, errors = 0;
  std::map<std::string, int> error_kinds;
  std::string first_error;
  int prompt_tokens = 0;           // the prompt length used
  std::optional<double> ttft_p50_s, ttft_p95_s, itl_p50_s, tokens_per_s;
  double duration_s = 0;
  StepPeaks peaks;
  bool server_died = false;
};

struct TtftSplit {                  // first-token latency at rest against under memory pressure
  double threshold = 0.8;
  int below_requests = 0, above_requests = 0;
  std::optional<double> below_p50_s, above_p50_s;
};

struct SweepResult {
  std::vector<StepResult> steps;   // in the order run (skipped ones included, after)
  std::optional<Point> last_good, breaking_point;
  bool server_died = false;
  bool complete = true;            // every planned step ran (or was skipped by a failure)
  std::string incomplete_why;
  std::string prompt_how;          // "tokenize", "usage", "estimate"
  std::string model;
  TtftSplit ttft_split;
  std::optional<Point> limits;     // safe context and concurrency, with headroom
  std::vector<std::string> notes;
};

// What a step is about to do, for progress lines.
struct StepStart {
  int index = 0, total = 0;        // 1-based, of the steps planned
  int64_t context = 0, concurrency = 0;
  int requests = 0;
  int prompt_tokens = 0;
};

// Runs the sweep. `progress` (may be empty) is called after each step and
// `starting` (may be empty) before each step that runs, before its prompts
// are made. Memory: a prompt is a PromptText (its size, not its text), and a
// step keeps per request its first-token time and a bounded sample of
// inter-token gaps, so the sweep's own memory does not grow with context
// length, concurrency or requests. Time: total_timeout_s from started_s bounds
// everything, prompts and the model lookup included.
SweepResult run_sweep(const Client& client, Monitor& monitor, const SweepOptions& options,
                      const std::function<void(const StepResult&)>& progress = {},
                      const std::function<void(const StepStart&)>& starting = {});

// The safe limits from the passing steps: the passing step with the largest
// context x concurrency (ties: the larger context), less the headroom on each
// dimension (context rounded down to a multiple of 256 when above 1024).
std::optional<Point> safe_limits(const std::vector<StepResult>& steps, double headroom_pct);

// What the steps say drove the server's memory to the breaking point, as a
// finding about `pool_id` ("cgroup:/x") for the diagnosis of its death:
// concurrency when the same context passed at a lower concurrency, else
// context when the same concurrency passed at a shorter context. Empty when
// there is no breaking point or no passing neighbour.
std::vector<watch::TrendFinding> load_findings(const SweepResult& r, const std::string& pool_id);

// Whether a step is closed by an earlier failure (context and concurrency both >=).
bool closed_by(const std::vector<Point>& failures, int64_t context, int64_t concurrency);

// One `aimem probe` run: the server, how it was found, what was asked, and
// what its death left (render/probe_render.h prints it with the result).
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

// The limits file's contents for --save-limits.
Limits to_limits(const ProbeContext& c, const SweepResult& r);

}  // namespace aimem::probe

namespace aimem::probe {
// "512,2k,8k,32k" -> {512, 2048, 8192, 32768} (k = 1024); errors name the flag
// and the item. Values must be 1..max; at most 64 items.
Result<std::vector<int64_t>> parse_count_list(const std::string& text, const std::string& flag, int64_t max);
}  // namespace aimem::probe
