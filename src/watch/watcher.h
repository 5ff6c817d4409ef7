// `aimem watch`: the long-running sampler. One loop samples every pool at the
// interval, stores samples and events, publishes Prometheus metrics and
// raises alerts; the same loop follows the kernel log and diagnoses each
// OOM kill the moment its report is complete, storing it with the timeline
// window before it and the cgroup's counters read before the cgroup is gone,
// and reads a cgroup's counters the moment an OOM notification comes. One
// kill is one event however many of these told of it (oom_ledger.h). Only
// /metrics is served from a thread of its own (net/http_server.h), so that
// a slow scrape target or a long diagnosis never delays it.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "watch/alerts.h"
#include "watch/diagnosis_body.h"
#include "watch/event_loop.h"
#include "watch/kmsg_follow.h"
#include "sources/sample.h"
#include "watch/store.h"
#include "watch/trend.h"

namespace aimem::watch {

struct WatchOptions {
  std::string root = "/";
  int64_t interval_us = 5000000;
  std::string db;            // "" = default_store_path()
  bool store = true;
  Retention retention;
  std::string listen = "127.0.0.1:9464";
  bool serve = true;
  std::vector<std::string> scrape;  // inference servers and other Prometheus endpoints
  // Labels on every /metrics series (--label node=NAME), checked by parse_constant_label.
  std::vector<std::pair<std::string, std::string>> labels;
  std::string cgroup;        // only this cgroup subtree
  std::optional<int> pid;    // only this process tree
  bool gpus = true, processes = true, follow_kernel_log = true;
  bool task_iterator = true;  // SamplerOptions::task_iterator (whole-host samples only)
  AlertPolicy policy;
  Delivery delivery;
  int64_t duration_us = 0;   // 0 = until stopped
  int64_t oom_window_us = 300LL * 1000000;  // timeline kept with each OOM event
  DiagnosisJson diagnosis_json;  // writes the diagnosis of each OOM event (render/diagnosis_json.h)
};

struct WatchStatus {
  uint64_t samples = 0, oom_events = 0, alerts = 0;
  int port = 0;  // the bound /metrics port
};

// --listen as people write it: "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT"
// (127.0.0.1 when no host is given); nullopt for a port that is not 0..65535.
std::optional<std::pair<std::string, int>> split_listen(const std::string& listen);
// Whether `host` is only reachable from this machine (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

// Runs until `stop` is requested or the duration ends. Between samples it
// sleeps in one epoll set (event_loop.h) until the next sample, a kernel
// log record, an OOM notification, the PSI trigger or `stop`: no periodic
// wake-ups. `on_ready` (may be empty) is
// called once the HTTP server is listening, with the bound port. An error
// (naming the store, the target or the address) when the store, a scrape
// target or the server cannot be opened; nothing was sampled then.
Result<WatchStatus> run_watch(const WatchOptions& options, StopToken& stop,
                      const std::function<void(int port)>& on_ready = {});

// The diagnosis of one kernel OOM report: the report's lines through the
// recognizers, the killed cgroup's counters (read now), and `window` (the
// samples before the kill) for the trend. `known` are findings the caller
// already holds (e.g. `aimem probe`'s steps: which load dimension drove the
// memory); they are weighed before the window's. `to_json` writes the
// diagnosis into the event's body. Returns the event to store.
Event diagnose_oom_report(const std::string& root, const KernelOomReport& report, const std::vector<Sample>& window,
                          const DiagnosisJson& to_json, const std::vector<TrendFinding>& known = {});

}  // namespace aimem::watch
