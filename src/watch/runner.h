// `aimem run`: runs a command in its own memory cgroup, samples every pool it
// touches, and when it ends abnormally diagnoses why (the same engine as
// `aimem diagnose`, fed with the command's stderr, the kernel log since the
// start, the cgroup's counters and the recording's trend).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"
#include "watch/alerts.h"
#include "watch/diagnosis_body.h"
#include "sources/sample.h"
#include "watch/trend.h"

namespace aimem::watch {

struct RunOptions {
  std::vector<std::string> command;
  std::optional<uint64_t> memory_limit;
  int64_t interval_us = 1000000;
  std::string record;         // SQLite recording ("" = none)
  std::string root = "/";
  bool cgroup = true;         // false: no cgroup of its own (sample the process tree only)
  bool capture_stderr = true; // tee the command's stderr through aimem to read failure messages
  bool gpus = true;
  std::vector<std::string> scrape;  // inference-server targets (see scrape.h)
  AlertPolicy policy;
  Delivery delivery;
  DiagnosisJson diagnosis_json;  // writes the diagnosis into the recording's exit event (render/diagnosis_json.h)
};

struct RunResult {
  int exit_status = 0;          // what aimem run exits with: CMD's status, 128+N for signal N
  std::optional<int> signal;    // the signal that ended CMD
  bool started = false;
  std::string problem;          // why CMD could not be run (aimem exits 2, or 127 for exec)
  int64_t start_us = 0, end_us = 0;
  std::string cgroup_path;      // relative to the hierarchy, "" without a cgroup
  std::optional<uint64_t> cgroup_limit, cgroup_peak, cgroup_oom_kills, cgroup_failcnt;
  std::optional<uint64_t> max_rss;  // wait4's ru_maxrss of CMD (the largest single process)
  std::vector<Sample> samples;  // bounded (decimated) copy of the recording
  std::vector<Alert> alerts;
  std::vector<TrendFinding> trend;
  std::optional<Diagnosis> diagnosis;  // when CMD ended abnormally
  // "not memory: peak 2% of the limit, no OOM kill": CMD exited with an error
  // status of its own while the recording rules memory out. The diagnosis is
  // then not_memory, and people get this line instead of a report.
  std::string verdict;
  std::vector<std::string> warnings;
  size_t samples_recorded = 0;
};

RunResult run_command(const RunOptions& options);

// The peak of each pool over a run's samples, for people and for JSON.
struct PoolPeak {
  std::string pool;  // "cgroup /x", "host RAM", "GPU 0", "process python3 (pid 12)"
  uint64_t peak = 0;
  std::optional<uint64_t> limit;
};
std::vector<PoolPeak> pool_peaks(const RunResult& r);

// CMD as people read it: words with spaces or shell characters quoted.
std::string join_command(const std::vector<std::string>& cmd);

// run_result_json and run_result_text, what `aimem run` prints, are in
// render/run_render.h.

}  // namespace aimem::watch
