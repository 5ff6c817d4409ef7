// What `aimem probe` watches beside the load: the server's memory (its process
// tree, its memory cgroup, the GPUs it uses), its own metrics, whether it is
// still alive, and the kernel's OOM reports, so that a step's peaks and a
// server's death can be told apart from a slow or failing HTTP layer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "watch/diagnosis_body.h"
#include "watch/kmsg_follow.h"
#include "watch/scrape.h"
#include "sources/sample.h"
#include "watch/trend.h"

namespace aimem::watch {
class Store;
class Sampler;
}

namespace aimem::probe {

struct StepPeaks {
  std::optional<uint64_t> process;       // the server's process tree, summed RSS
  std::optional<uint64_t> cgroup;        // the server's memory cgroup usage
  std::optional<uint64_t> cgroup_limit;
  std::optional<uint64_t> gpu;           // memory used on the GPUs the server's processes hold
  std::optional<double> kv_usage_ratio;  // the server's own metric, highest seen
  std::optional<double> running, waiting;
  size_t samples = 0;
};

// The interface the sweep sees (a test can stand in for it).
class Monitor {
 public:
  virtual ~Monitor() = default;
  virtual void begin_step() = 0;
  virtual StepPeaks end_step() = 0;
  virtual bool server_alive() = 0;
  // The pressure on the server's tightest pool at a steady-clock instant
  // (seconds): used/limit of its cgroup, else of its GPU, else of host RAM.
  virtual std::optional<double> used_ratio_at(double steady_s) = 0;
};

struct MonitorOptions {
  std::string root = "/";
  std::optional<int> pid;            // the server's main process; nullopt: memory is not watched
  std::string metrics_url;           // the server's /metrics ("" = none)
  std::string metrics_kind = "auto";
  int64_t interval_us = 100000;
  bool gpus = true;
  bool kernel_log = true;            // follow /dev/kmsg for OOM reports
  watch::Store* store = nullptr;     // --record: samples and events go here
  watch::DiagnosisJson diagnosis_json;  // writes an OOM kill's diagnosis (render/diagnosis_json.h)
};

class SamplerMonitor : public Monitor {
 public:
  explicit SamplerMonitor(MonitorOptions options);
  ~SamplerMonitor() override;

  void begin_step() override;
  StepPeaks end_step() override;
  bool server_alive() override;
  std::optional<double> used_ratio_at(double steady_s) override;

  // OOM reports the kernel wrote since the monitor started, and the diagnosis
  // of the one that killed the server (the `diagnose --json` object), if any.
  std::vector<watch::KernelOomReport> oom_reports();
  std::optional<std::string> server_cgroup() const { return cgroup_; }
  // Waits up to timeout_ms for a kernel OOM report naming one of the server's
  // processes or its cgroup; returns the diagnosis JSON (dumped) or nullopt.
  // `known`: what the sweep learnt about the load dimension that drove memory.
  std::optional<std::string> diagnose_death(int timeout_ms, const std::vector<watch::TrendFinding>& known = {});
  std::vector<std::string> warnings();

 private:
  void loop();
  void take_sample();

  MonitorOptions opt_;
  std::string cgroup_;
  std::unique_ptr<watch::Sampler> sampler_;
  watch::KmsgFollower kmsg_;
  bool kmsg_open_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  // One sample at a time: the loop thread and end_step() both sample, and the
  // sampler's caches are not safe for two callers at once.
  std::mutex sample_mu_;
  StepPeaks peaks_;
  std::vector<std::pair<double, double>> ratios_;  // (steady s, used ratio), bounded
  std::vector<watch::Sample> window_;              // the last samples, for a diagnosis' trend
  std::vector<watch::KernelOomReport> reports_;
  std::vector<int> tree_pids_;                     // the server's processes at the last sample
  std::vector<std::string> warnings_;
  std::optional<watch::ScrapeTarget> target_;     // the server's /metrics, parsed once
  int64_t last_scrape_us_ = 0;
  watch::ServerSample last_server_;
};

double steady_seconds();

}  // namespace aimem::probe
