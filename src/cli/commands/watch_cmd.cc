// aimem watch: sample, store, serve /metrics, alert, diagnose OOM kills live.
// Options come from the command line and, below it, a YAML configuration file
// (--config; every key is documented in deploy/aimem.yaml).
#include <signal.h>

#include <cstdio>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "render/diagnosis_json.h"
#include "core/time.h"
#include "core/units.h"
#include "sources/readfile.h"
#include "watch/exporter.h"
#include "watch/watch_config.h"
#include "watch/watcher.h"

namespace aimem::cli {
namespace {

// SIGINT/SIGTERM wake the watch's loop through the token's eventfd, whichever
// thread the signal lands on.
watch::StopToken g_stop;
void on_stop(int) { g_stop.request(); }

struct WatchArgs {
  std::string config, interval, db, listen, retention_age, retention_size, cgroup, root;
  std::vector<std::string> scrape, labels;
  std::optional<int> pid;
  std::string on_alert, webhook, alert_log, duration;
  bool no_store = false, no_serve = false, no_gpus = false, no_processes = false, no_kmsg = false, no_task_iterator = false;
};

using watch::Bad;
using watch::duration_of;
using watch::size_of;

// Fills `o` from the YAML file (watch/watch_config.h).
void load_config(const std::string& path, watch::WatchOptions& o) {
  auto text = read_user_file(path, watch::kMaxConfigBytes, "configuration");
  if (!text) throw Bad{text.error().message};
  auto applied = watch::apply_watch_config(*text, path, o);
  if (!applied) throw Bad{applied.error().message};
}

int run(const WatchArgs& a) {
  watch::WatchOptions o;
  o.diagnosis_json = diagnosis_to_json;
  try {
    if (!a.config.empty()) load_config(a.config, o);
    if (!a.interval.empty()) o.interval_us = duration_of(a.interval, "--interval");
    if (o.interval_us < 100000) throw Bad{"--interval must be at least 100ms"};
    if (!a.db.empty()) o.db = a.db;
    if (!a.listen.empty()) o.listen = a.listen;
    if (!a.retention_age.empty()) o.retention.max_age_us = duration_of(a.retention_age, "--retention-age");
    if (!a.retention_size.empty()) o.retention.max_bytes = size_of(a.retention_size, "--retention-size");
    if (!a.cgroup.empty()) o.cgroup = a.cgroup;
    if (!a.root.empty()) o.root = a.root;
    if (a.pid) o.pid = a.pid;
    for (const auto& s : a.scrape) o.scrape.push_back(s);
    for (const auto& l : a.labels) {
      auto label = watch::parse_constant_label(l);
      if (!label) throw Bad{"--label " + label.error().message};
      std::erase_if(o.labels, [&](const auto& x) { return x.first == label->first; });  // the command line wins
      o.labels.push_back(std::move(*label));
    }
    if (!a.on_alert.empty()) o.delivery.on_alert_cmd = a.on_alert;
    if (!a.webhook.empty()) o.delivery.webhook_url = a.webhook;
    if (!a.alert_log.empty()) o.delivery.log_path = a.alert_log;
    if (!a.duration.empty()) o.duration_us = duration_of(a.duration, "--duration");
    if (a.no_store) o.store = false;
    if (a.no_serve) o.serve = false;
    if (a.no_gpus) o.gpus = false;
    if (a.no_processes) o.processes = false;
    if (a.no_task_iterator) o.task_iterator = false;
    if (a.no_kmsg) o.follow_kernel_log = false;
  } catch (const Bad& b) {
    fmt::print(stderr, "aimem watch: {}\n", b.message);
    return 2;
  }
  struct sigaction sa{};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  auto listen = watch::split_listen(o.listen);
  if (o.serve && listen && !watch::is_loopback(listen->first))
    fmt::print(stderr,
               "aimem watch: warning: /metrics on {} is reachable from the network, without authentication, and names "
               "cgroup paths, pods and process names; listen on 127.0.0.1 and put a proxy with TLS and authentication in front, "
               "or firewall the port\n",
               listen->first);
  auto status = watch::run_watch(o, g_stop, [&](int port) {
    if (o.serve && listen) {
      const std::string& host = listen->first;
      fmt::print(stderr, "aimem watch: serving /metrics and /healthz on {}:{}; every {}\n",
                 host.find(':') != std::string::npos ? "[" + host + "]" : host, port,
                 timeutil::format_duration(o.interval_us / 1e6));
    }
  });
  if (!status) {
    fmt::print(stderr, "aimem watch: {}\n", status.error().message);
    return 2;
  }
  fmt::print(stderr, "aimem watch: stopped after {} samples, {} OOM events, {} alerts\n", status->samples,
             status->oom_events, status->alerts);
  return 0;
}

}  // namespace

Action add_watch(CLI::App& app) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* sub = app.add_subcommand("watch", "Sample every memory pool, store it, serve Prometheus metrics, alert before exhaustion");
  sub->footer(R"(Examples:
  aimem watch                                  every pool, every 5s, /metrics on 127.0.0.1:9464
  aimem watch --interval 1s --scrape vllm=http://127.0.0.1:8000/metrics
  aimem watch --config /etc/aimem/aimem.yaml   (every key: deploy/aimem.yaml)
  curl -s 127.0.0.1:9464/metrics | grep aimem_memory_used_bytes
  aimem report ~/.local/state/aimem/aimem.db -o timeline.html)");
  sub->add_option("--config", args->config, "YAML configuration file (command-line options override it)");
  sub->add_option("--interval", args->interval, "sampling interval, 100ms and up (default 5s)");
  sub->add_option("--db", args->db, "SQLite store (default ~/.local/state/aimem/aimem.db)");
  sub->add_option("--retention-age", args->retention_age, "drop samples older than this (default 7d)");
  sub->add_option("--retention-size", args->retention_size, "keep the store under this size (default 256MiB)");
  sub->add_option("--listen", args->listen, "address of /metrics and /healthz: HOST:PORT, [IPV6]:PORT or PORT (default 127.0.0.1:9464)");
  sub->add_option("--scrape", args->scrape, "an inference server or Prometheus endpoint: vllm=URL, llamacpp=URL, tgi=URL, sglang=URL, ollama=URL, prometheus=URL#metric,...");
  sub->add_option("--label", args->labels, "NAME=VALUE on every /metrics series (repeatable), e.g. node=$(NODE_NAME) in a DaemonSet");
  sub->add_option("--cgroup", args->cgroup, "only this cgroup subtree");
  sub->add_option("--pid", args->pid, "only this process and its children");
  sub->add_option("--on-alert", args->on_alert, "run this shell command for each alert (alert JSON on stdin)");
  sub->add_option("--webhook", args->webhook, "POST each alert as JSON to this URL (http://; https:// checks the certificate chain against the system CAs, not the host name)");
  sub->add_option("--alert-log", args->alert_log, "append each alert as a JSON line to this file");
  sub->add_option("--duration", args->duration, "stop after this long (default: until SIGINT/SIGTERM)");
  sub->add_option("--root", args->root, "read /proc, /sys, /dev/kmsg and /var/log/pods under this directory (a DaemonSet's host mounts, or a captured tree)");
  sub->add_flag("--no-store", args->no_store, "keep nothing on disk");
  sub->add_flag("--no-serve", args->no_serve, "do not serve /metrics");
  sub->add_flag("--no-gpus", args->no_gpus, "do not read GPUs through NVML");
  sub->add_flag("--no-processes", args->no_processes, "do not sample per-process memory");
  sub->add_flag("--no-task-iterator", args->no_task_iterator,
                "tell which processes ran from proc/PID/schedstat, not from a BPF task iterator (used, when it loads, for a sample of the whole host)");
  sub->add_flag("--no-kernel-log", args->no_kmsg, "do not follow /dev/kmsg");
  return [args] { return run(*args); };
}

}  // namespace aimem::cli
