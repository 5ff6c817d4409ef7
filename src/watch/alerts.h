// Alerts for `aimem watch` and `aimem run`: headroom thresholds per memory
// pool, a time-to-exhaustion forecast that follows the shape of the usage
// (forecast.h), the rolling-copy and swapping rules, rate limiting, and
// delivery (stderr, a JSON-lines log, a command, a webhook). The engine is
// pure logic over Samples; only AlertSink touches the outside world.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sources/sample.h"
#include "watch/forecast.h"

namespace aimem::watch {

// One memory pool at one instant. pool_id: "host_ram", "swap", "cgroup:<path>",
// "gpu:<index>". limit is nullopt for an unlimited cgroup.
struct PoolPoint {
  std::string pool_id;
  std::string kind;  // host_ram | cgroup | gpu | swap
  uint64_t used = 0;
  std::optional<uint64_t> limit;
};

// Host RAM (used = MemTotal - MemAvailable, limit = MemTotal), swap (when the
// host has any), every cgroup that reports usage (limit only when one is set),
// every GPU with a known total. Unified-memory GPUs are skipped: their memory
// is host RAM, which the host pool already covers.
std::vector<PoolPoint> pools_of(const Sample& sample);
// "cgroup /x", "host RAM", "GPU 0", "swap": a pool for people.
std::string pool_label(const std::string& pool_id);

// Defaults follow DESIGN §1: leave headroom for deployment overlap and bursts.
struct AlertPolicy {
  // cgroup / pod limits and host RAM: a burst (a long prompt, a batch of
  // requests) needs room above the steady state; 20% room is warned about,
  // 10% is critical.
  double warn_used_ratio = 0.80, critical_used_ratio = 0.90;
  // GPUs: vLLM and SGLang preallocate ~90% of VRAM for the KV cache by design,
  // so only 95% is unusual; bursts on such servers show in the KV usage below.
  double gpu_warn_used_ratio = 0.95;
  // Inference-server KV cache usage: past 90% new requests queue or get preempted.
  double kv_warn_ratio = 0.90;
  // Host RAM: warn when MemAvailable is smaller than the largest model-server
  // process's RSS: a rolling deployment starts the new copy before stopping
  // the old one, and there is no room for it.
  bool reserve_rolling_copy = true;
  // Forecast time-to-exhaustion below this -> alert (enough time to act).
  int64_t tte_warn_us = 15LL * 60 * 1000000;
  // The forecast looks at this much recent history, and needs this many points.
  int64_t trend_window_us = 5LL * 60 * 1000000;
  // A second, coarse window (about 3 min between points) for slow leaks that
  // the short window's noise hides; 0 turns it off.
  int64_t leak_window_us = 6LL * 3600 * 1000000;
  size_t min_points = 5;
  // A forecast reaches at most this many times the history it rests on: half
  // a second of a host-wide trend says nothing about the next three minutes.
  double max_extrapolation = 10;
  // ... and the regime it rests on (the points after the last step or knee,
  // forecast.h) must have lasted this long: a process that allocates its
  // working set at start-up (a model load) and then levels off is no alarm.
  int64_t min_trend_span_us = 2LL * 1000000;
  // Growth the watch has seen from the pool's first samples, with no level
  // before it (an idle time, a step that levelled off), has no baseline: a
  // start-up ramp or a sawtooth's first cycle looks like growth that fills
  // until it levels off or drops. Until the pool has been seen level, a
  // forecast alerts only once it reaches at most this many times the span it
  // rests on (growth that fills in T from the start is alerted T/3 before,
  // or when the window's span allows); after that, max_extrapolation applies.
  double first_regime_extrapolation = 0.5;
  // Rate limit: one key at most once per repeat_us, unless its severity rises.
  int64_t repeat_us = 10LL * 60 * 1000000;
};

struct Alert {
  int64_t time_us = 0;
  std::string key;       // "headroom:cgroup:/x", "tte:gpu:0", "rolling_copy:host_ram", "swapping:pid:12", "kv:<url>"
  std::string severity;  // warning | critical
  std::string pool_id;
  std::string message;   // one line for people, with numbers
  std::optional<double> tte_s;
  // Forecast alerts: the range around tte_s and the shape it rests on
  // ("steady growth", "accelerating growth", "sawtooth", "slow leak").
  std::optional<double> tte_low_s, tte_high_s;
  std::string shape;
  std::optional<uint64_t> used, limit;
};

nlohmann::json alert_json(const Alert& alert);
// The alert as an event for the store (kind "alert", keyed by its pool).
Event alert_event(const Alert& alert);

// The time to exhaustion of forecast_exhaustion (forecast.h) with default
// options: seconds from the last point until the pool is full, 0 when it
// already is, nullopt when its shape does not reach the limit (flat, falling,
// a step that levelled off, a sawtooth whose peaks do not rise).
std::optional<double> forecast_tte_s(const std::vector<std::pair<int64_t, uint64_t>>& points,
                                     uint64_t limit);
// The Theil–Sen slope alone, bytes per second (same decimation); nullopt for
// fewer than 2 points or no time span. Also used by the recording analysis.
std::optional<double> theil_sen_per_s(const std::vector<std::pair<int64_t, uint64_t>>& points);

// Keeps a bounded window per pool and turns each new sample into the alerts
// to deliver now (already rate-limited). Not thread-safe; one sampler owns it.
class AlertEngine {
 public:
  explicit AlertEngine(AlertPolicy policy);
  std::vector<Alert> observe(const Sample& sample);
  // pool_id -> seconds, for pools with a limit and a rising trend (exporter).
  std::vector<std::pair<std::string, double>> time_to_exhaustion() const;

 private:
  // A bounded series of one pool and its forecast. The forecast is
  // recomputed when a point is appended (or the limit changes), and counted
  // down in between.
  struct Series {
    std::deque<std::pair<int64_t, uint64_t>> points;
    int64_t min_gap_us = 0;  // grows when the window is decimated (fixed for the leak window)
    Forecast forecast;
    int64_t forecast_at_us = -1;
    uint64_t forecast_limit = 0;
  };
  struct Window {
    Series recent, leak;  // trend_window_us, fine; leak_window_us, coarse
    Forecast chosen;      // the one that counts now (counted down to the latest sample)
    bool baseline = false;  // the pool has been seen level (see advance)
  };
  struct Sent {
    int64_t time_us = 0;
    int severity = 0;
  };
  bool admit(const Alert& alert);
  // Adds the pool's point at `now` to its windows and brings their
  // forecasts and the chosen one up to date.
  void advance(Window& w, const PoolPoint& p, int64_t now) const;
  void advance(Series& s, const PoolPoint& p, int64_t now, int64_t window_us, bool fixed_gap,
               double noise_floor) const;

  AlertPolicy policy_;
  std::map<std::string, Window> windows_;
  std::map<std::string, Sent> sent_;
};

// Where alerts go. stderr and the log file are written at once; the command
// and the webhook run on a worker thread with a bounded queue, so a slow or
// hanging receiver never stalls the sampler (each is cut off after timeout_ms).
// The exit never waits on a command: each runs under a supervisor process that
// enforces its timeout even after aimem is gone. Webhooks still queued at the
// exit share one timeout_ms between them.
struct Delivery {
  bool to_stderr = true;
  std::string log_path;      // JSON lines, appended
  std::string on_alert_cmd;  // /bin/sh -c CMD; AIMEM_ALERT_* env, alert JSON on stdin
  std::string webhook_url;   // http(s)://host[:port]/path, POSTed the alert JSON
  int timeout_ms = 5000;
};

class AlertSink {
 public:
  explicit AlertSink(Delivery delivery);
  // Starts the commands still queued without waiting for them, posts the
  // queued webhooks within one timeout_ms, then stops.
  ~AlertSink();
  AlertSink(const AlertSink&) = delete;
  AlertSink& operator=(const AlertSink&) = delete;
  void deliver(const Alert& alert);
  // Waits until the command and webhook deliveries queued so far are done.
  void flush();

 private:
  void worker();
  bool stopping() const;
  void run_command(const Alert& alert);
  void post_webhook(const Alert& alert);
  void report_failure(const std::string& channel, const std::string& what);
  void report_success(const std::string& channel);

  Delivery d_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Alert> queue_;
  bool busy_ = false, stop_ = false;
  std::atomic<bool> stopping_{false};
  std::chrono::steady_clock::time_point stop_deadline_;  // set before stopping_
  bool webhook_abandoned_ = false;                        // worker thread only
  size_t dropped_ = 0;
  std::map<std::string, bool> failing_;  // channel -> failure already reported
  std::thread thread_;
};

}  // namespace aimem::watch
