// aimem watch: sample, store, serve /metrics, alert, diagnose OOM kills live.
// Options come from the command line and, below it, a YAML configuration file
// (--config; every key is documented in deploy/aimem.yaml).
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cli/commands/commands.h"
#include "core/doc_reader.h"
#include "core/time.h"
#include "core/units.h"
#include "sources/readfile.h"
#include "watch/watcher.h"

namespace aimem::cli {
namespace {

std::atomic<bool> g_stop{false};
void on_stop(int) { g_stop = true; }

struct WatchArgs {
  std::string config, interval, db, listen, retention_age, retention_size, cgroup, root;
  std::vector<std::string> scrape;
  std::optional<int> pid;
  std::string on_alert, webhook, alert_log, duration;
  bool no_store = false, no_serve = false, no_gpus = false, no_processes = false, no_kmsg = false, no_task_iterator = false;
};

struct Bad {
  std::string message;
};

int64_t duration_of(const std::string& v, const std::string& what) {
  auto d = timeutil::parse_duration_us(v, what);
  if (!d) throw Bad{d.error().message};
  return *d;
}
uint64_t size_of(const std::string& v, const std::string& what) {
  auto s = units::parse_size(v);
  if (!s) throw Bad{fmt::format("{} '{}': {}", what, v, s.error().message)};
  return *s;
}

// Fills `o` from the YAML file; unknown keys are errors (a typo must not pass
// silently as a default).
void load_config(const std::string& path, watch::WatchOptions& o) {
  constexpr size_t kMaxConfigBytes = 4 << 20;  // as a policy file (the same keys may share one file)
  auto text = read_user_file(path, kMaxConfigBytes, "configuration");
  if (!text) throw Bad{text.error().message};
  doc::Limits limits;
  limits.max_bytes = kMaxConfigBytes;
  auto parsed = doc::parse_yaml(*text, path, limits);
  if (!parsed) throw Bad{parsed.error().message};
  YAML::Node root = *parsed;
  if (!root || root.IsNull()) return;
  if (!root.IsMap()) throw Bad{fmt::format("{}: the configuration must be a mapping of keys", path)};
  auto str = [&](const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar()) throw Bad{fmt::format("{}: line {}: {} must be a single value", path, n.Mark().line + 1, key)};
    return n.as<std::string>();
  };
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    std::string where = fmt::format("{}: line {}: {}", path, kv.first.Mark().line + 1, key);
    try {
      if (key == "interval") o.interval_us = duration_of(str(v, key), where);
      else if (key == "db") o.db = str(v, key);
      else if (key == "store") o.store = v.as<bool>();
      else if (key == "listen") o.listen = str(v, key);
      else if (key == "serve") o.serve = v.as<bool>();
      else if (key == "cgroup") o.cgroup = str(v, key);
      else if (key == "pid") o.pid = v.as<int>();
      else if (key == "gpus") o.gpus = v.as<bool>();
      else if (key == "processes") o.processes = v.as<bool>();
      else if (key == "task_iterator") o.task_iterator = v.as<bool>();
      else if (key == "kernel_log") o.follow_kernel_log = v.as<bool>();
      else if (key == "oom_window") o.oom_window_us = duration_of(str(v, key), where);
      else if (key == "scrape") {
        if (!v.IsSequence()) throw Bad{where + " must be a list"};
        for (const auto& t : v) o.scrape.push_back(t.as<std::string>());
      } else if (key == "retention") {
        if (!v.IsMap()) throw Bad{where + " must be a mapping (max_age, max_size)"};
        for (const auto& r : v) {
          std::string k = r.first.as<std::string>();
          if (k == "max_age") o.retention.max_age_us = duration_of(str(r.second, k), where + "." + k);
          else if (k == "max_size") o.retention.max_bytes = size_of(str(r.second, k), where + "." + k);
          else throw Bad{fmt::format("{}: line {}: unknown key retention.{}", path, r.first.Mark().line + 1, k)};
        }
      } else if (key == "alerts") {
        if (!v.IsMap()) throw Bad{where + " must be a mapping"};
        for (const auto& a : v) {
          std::string k = a.first.as<std::string>();
          const YAML::Node& x = a.second;
          std::string w = where + "." + k;
          if (k == "warn_used_ratio") o.policy.warn_used_ratio = x.as<double>();
          else if (k == "critical_used_ratio") o.policy.critical_used_ratio = x.as<double>();
          else if (k == "gpu_warn_used_ratio") o.policy.gpu_warn_used_ratio = x.as<double>();
          else if (k == "kv_warn_ratio") o.policy.kv_warn_ratio = x.as<double>();
          else if (k == "reserve_rolling_copy") o.policy.reserve_rolling_copy = x.as<bool>();
          else if (k == "time_to_exhaustion") o.policy.tte_warn_us = duration_of(str(x, k), w);
          else if (k == "trend_window") o.policy.trend_window_us = duration_of(str(x, k), w);
          else if (k == "repeat") o.policy.repeat_us = duration_of(str(x, k), w);
          else if (k == "on_alert") o.delivery.on_alert_cmd = str(x, k);
          else if (k == "webhook") o.delivery.webhook_url = str(x, k);
          else if (k == "log") o.delivery.log_path = str(x, k);
          else if (k == "stderr") o.delivery.to_stderr = x.as<bool>();
          else throw Bad{fmt::format("{}: line {}: unknown key alerts.{}", path, a.first.Mark().line + 1, k)};
        }
      } else if (key == "policy") {
        // The deployment policy of `aimem check` and `aimem rules`
        // (check/policy.h), which check it; nothing in it changes watch.
      } else {
        throw Bad{fmt::format("{}: line {}: unknown key '{}' (see deploy/aimem.yaml)", path, kv.first.Mark().line + 1, key)};
      }
    } catch (const YAML::Exception& e) {
      throw Bad{fmt::format("{}: {}", where, e.msg)};
    }
  }
}

int run(const WatchArgs& a) {
  watch::WatchOptions o;
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
  auto status = watch::run_watch(o, g_stop, [&](int port) {
    if (o.serve)
      fmt::print(stderr, "aimem watch: serving /metrics and /healthz on {}:{}; every {}\n",
                 o.listen.substr(0, o.listen.rfind(':')), port, timeutil::format_duration(o.interval_us / 1e6));
  });
  if (!status.problem.empty()) {
    fmt::print(stderr, "aimem watch: {}\n", status.problem);
    return status.exit_code ? status.exit_code : 2;
  }
  fmt::print(stderr, "aimem watch: stopped after {} samples, {} OOM events, {} alerts\n", status.samples,
             status.oom_events, status.alerts);
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
  sub->add_option("--listen", args->listen, "address of /metrics and /healthz (default 127.0.0.1:9464)");
  sub->add_option("--scrape", args->scrape, "an inference server or Prometheus endpoint: vllm=URL, llamacpp=URL, tgi=URL, sglang=URL, ollama=URL, prometheus=URL#metric,...");
  sub->add_option("--cgroup", args->cgroup, "only this cgroup subtree");
  sub->add_option("--pid", args->pid, "only this process and its children");
  sub->add_option("--on-alert", args->on_alert, "run this shell command for each alert (alert JSON on stdin)");
  sub->add_option("--webhook", args->webhook, "POST each alert as JSON to this URL (http://; https:// checks the certificate chain against the system CAs, not the host name)");
  sub->add_option("--alert-log", args->alert_log, "append each alert as a JSON line to this file");
  sub->add_option("--duration", args->duration, "stop after this long (default: until SIGINT/SIGTERM)");
  sub->add_option("--root", args->root, "read /proc, /sys and /dev/kmsg under this directory")->group("");
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
