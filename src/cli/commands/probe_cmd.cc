// aimem probe URL [--contexts LIST] [--concurrency LIST] ... : the server's
// memory envelope across context length and concurrency.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "core/time.h"
#include "probe/client.h"
#include "sources/listener.h"
#include "probe/monitor.h"
#include "render/probe_render.h"
#include "probe/sweep.h"
#include "render/diagnosis_json.h"
#include "watch/store.h"

namespace aimem::cli {
namespace {

struct ProbeArgs {
  std::string url, contexts = "512,2k,8k,32k", concurrency = "1,4,16";
  int max_new_tokens = 64, requests = 0;
  std::string step_duration, timeout = "10m", request_timeout = "120s", slow_ttft = "10s", interval = "100ms";
  double headroom = 20, pressure = 80;
  std::string api = "completions", model, metrics, api_key, root = "/", record, save_limits;
  int pid = 0;
  bool json = false, allow_remote = false, no_gpus = false, no_kernel_log = false, quiet = false, no_keep_alive = false;
};

int fail_usage(const std::string& message) {
  fmt::print(stderr, "aimem probe: {}\n", message);
  return 2;
}

// The sweep's options from the flags, each checked with the flag named.
struct ProbeSettings {
  probe::SweepOptions sweep;
  double request_timeout_s = 0;
  int64_t interval_us = 0;
};
Result<ProbeSettings> parse_settings(const ProbeArgs& a, double started) {
  ProbeSettings p;
  probe::SweepOptions& o = p.sweep;
  auto ctx = probe::parse_count_list(a.contexts, "--contexts", 1 << 24);
  if (!ctx) return ctx.error();
  auto conc = probe::parse_count_list(a.concurrency, "--concurrency", 1024);
  if (!conc) return conc.error();
  o.contexts = *ctx;
  o.concurrency = *conc;
  if (a.max_new_tokens < 1 || a.max_new_tokens > 1 << 20) return make_error("--max-new-tokens must be between 1 and 1048576");
  o.max_new_tokens = a.max_new_tokens;
  if (a.requests < 0 || a.requests > 100000) return make_error("--requests must be between 1 and 100000 per step");
  o.requests_per_step = a.requests;
  auto dur = [](const std::string& text, const char* flag, double lo, double hi) -> Result<double> {
    auto us = timeutil::parse_duration_us(text, flag);
    if (!us) return us.error();
    double s = double(*us) / 1e6;
    if (s < lo || s > hi) return make_error(fmt::format("{} '{}' must be between {} and {}", flag, text,
                                                        timeutil::format_duration(lo), timeutil::format_duration(hi)));
    return s;
  };
  if (!a.step_duration.empty()) {
    auto d = dur(a.step_duration, "--step-duration", 1, 3600);
    if (!d) return d.error();
    o.step_duration_s = *d;
  }
  auto total = dur(a.timeout, "--timeout", 1, 24 * 3600);
  if (!total) return total.error();
  o.total_timeout_s = *total;
  o.started_s = started;
  auto rt = dur(a.request_timeout, "--request-timeout", 1, 3600);
  if (!rt) return rt.error();
  p.request_timeout_s = *rt;
  auto slow = dur(a.slow_ttft, "--slow-ttft", 0.001, 3600);
  if (!slow) return slow.error();
  o.slow_ttft_s = *slow;
  auto interval = timeutil::parse_duration_us(a.interval, "--interval");
  if (!interval || *interval < 50000 || *interval > 60LL * 1000000)
    return make_error(interval ? "--interval must be between 50ms and 1m" : interval.error().message);
  p.interval_us = *interval;
  if (a.headroom < 0 || a.headroom >= 100) return make_error("--headroom is a percentage from 0 to 99");
  o.headroom_pct = a.headroom;
  if (a.pressure <= 0 || a.pressure >= 100) return make_error("--pressure is a percentage from 1 to 99");
  o.pressure_ratio = a.pressure / 100.0;
  if (a.api == "chat") o.api = probe::Api::chat;
  else if (a.api != "completions") return make_error(fmt::format("--api '{}': completions or chat", a.api));
  o.model = a.model;
  return p;
}

// The server's process: --pid, or the local process listening on the port.
Result<bool> find_server(const ProbeArgs& a, const probe::Endpoint& endpoint, probe::ProbeContext& pc) {
  const bool local = probe::parse_endpoint(a.url, false).ok();
  if (a.pid > 0) {
    pc.pid = a.pid;
    pc.pid_how = "--pid";
    if (access(fmt::format("{}/proc/{}", a.root, a.pid).c_str(), F_OK) != 0)
      return make_error(fmt::format("--pid {}: no such process", a.pid));
  } else if (local) {
    if (auto pid = probe::find_listener_pid(a.root, endpoint.port)) {
      pc.pid = *pid;
      pc.pid_how = fmt::format("listening on port {}", endpoint.port);
    } else {
      pc.warnings.push_back(fmt::format("no process seen listening on port {} (another namespace or no permission); memory is not measured; give --pid", endpoint.port));
    }
  }
  return true;
}

probe::ClientOptions client_options(const ProbeArgs& a, const ProbeSettings& p, double started) {
  const probe::SweepOptions& o = p.sweep;
  probe::ClientOptions co;
  co.request_timeout_s = std::min(p.request_timeout_s, o.total_timeout_s);
  co.idle_timeout_s = std::min(co.request_timeout_s, 60.0);
  co.api_key = a.api_key;
  co.keep_alive = !a.no_keep_alive;
  co.deadline = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(o.total_timeout_s - (probe::steady_seconds() - started)));
  // What one response may hold (a stream's line, a plain body), shared out
  // over the most concurrent requests so that together they stay near 16 MiB.
  int64_t most = 1;
  for (int64_t n : o.concurrency) most = std::max(most, n);
  co.max_held_bytes = std::clamp<uint64_t>((16ull << 20) / static_cast<uint64_t>(most), 64ull << 10, 1ull << 20);
  return co;
}

// The sweep, after a first request says whether the server is reachable at
// all (a clear message instead of a sweep of connect errors). Each step is
// printed (unless --quiet) and recorded.
probe::SweepResult sweep(const ProbeArgs& a, const probe::ProbeContext& pc, const probe::SweepOptions& o,
                         probe::Client& client, probe::SamplerMonitor& monitor, watch::Store* store) {
  probe::SweepResult result;
  auto models = client.first_model();
  if (!models && models.error().message.find("connect") != std::string::npos) {
    result.complete = false;
    result.incomplete_why = fmt::format("cannot reach {}: {}", pc.url, models.error().message);
    return result;
  }
  auto progress = [&](const probe::StepResult& s) {
    if (!a.quiet) fmt::print(stderr, "aimem probe: {}\n", probe::step_line(s));
    if (store) {
      watch::Event ev;
      ev.time_us = timeutil::now_us();
      ev.kind = s.status == "failed" ? "alert" : "note";
      ev.key = pc.url;
      ev.summary = probe::step_line(s);
      store->append(ev);
    }
  };
  auto starting = [&](const probe::StepStart& s) {
    if (a.quiet) return;
    fmt::print(stderr, "aimem probe: step {}/{}: context {} x concurrency {}, {} request{} ({}-token prompts)...\n",
               s.index, s.total, s.context, s.concurrency, s.requests, s.requests == 1 ? "" : "s", s.prompt_tokens);
    std::fflush(stderr);
  };
  return probe::run_sweep(client, monitor, o, progress, starting);
}

int run(const ProbeArgs& a) {
  // --timeout bounds the whole run from here: the model lookup, the prompts,
  // every request and the wait for a dead server's kernel report.
  const double started = probe::steady_seconds();
  auto endpoint = probe::parse_endpoint(a.url, a.allow_remote);
  if (!endpoint) return fail_usage(endpoint.error().message);
  auto settings = parse_settings(a, started);
  if (!settings) return fail_usage(settings.error().message);
  const probe::SweepOptions& o = settings->sweep;

  probe::ProbeContext pc;
  pc.url = endpoint->url();
  pc.options = o;
  pc.keep_alive = !a.no_keep_alive;
  if (auto found = find_server(a, *endpoint, pc); !found) return fail_usage(found.error().message);
  if (a.metrics != "none") pc.metrics_url = a.metrics.empty() ? endpoint->url() + "/metrics" : a.metrics;

  std::unique_ptr<watch::Store> store;
  if (!a.record.empty()) {
    auto opened = watch::Store::open(a.record, watch::Retention{});
    if (!opened) return fail_usage(fmt::format("--record {}: {}", a.record, opened.error().message));
    store = std::move(*opened);
    store->set_meta("command", fmt::format("aimem probe {} --contexts {} --concurrency {}", pc.url, a.contexts, a.concurrency));
    store->set_meta("start_us", std::to_string(timeutil::now_us()));
  }

  probe::MonitorOptions mo;
  mo.root = a.root;
  mo.pid = pc.pid;
  mo.metrics_url = pc.metrics_url;
  mo.interval_us = settings->interval_us;
  mo.gpus = !a.no_gpus;
  mo.kernel_log = !a.no_kernel_log && pc.pid.has_value();
  mo.store = store.get();
  mo.diagnosis_json = diagnosis_to_json;
  probe::SamplerMonitor monitor(mo);
  if (auto cg = monitor.server_cgroup()) pc.cgroup = *cg;

  probe::Client client(*endpoint, client_options(a, *settings, started));
  probe::SweepResult result = sweep(a, pc, o, client, monitor, store.get());
  if (result.server_died) {
    // The kernel's report follows a kill by a moment: up to 3 s, less when
    // the time bound is near (but a second at least, or it is never seen).
    const double left_s = o.total_timeout_s - (probe::steady_seconds() - started);
    const int wait_ms = static_cast<int>(std::clamp(left_s * 1000, 1000.0, 3000.0));
    pc.diagnosis_json = monitor.diagnose_death(wait_ms, probe::load_findings(result, "cgroup:" + pc.cgroup));
    if (!pc.diagnosis_json)
      pc.diagnosis_note = mo.kernel_log ? fmt::format("the kernel log named no OOM kill of the server's processes within {}; "
                                                      "see `aimem diagnose --since 10m`", timeutil::format_duration(wait_ms / 1000.0))
                                        : "the kernel log was not followed";
  }
  for (const auto& w : monitor.warnings()) pc.warnings.push_back(w);
  if (result.last_good == std::nullopt && result.complete && !result.steps.empty()) {
    result.complete = false;
    result.incomplete_why = "no step passed: the envelope has no safe point";
  }

  if (!a.save_limits.empty() && !result.steps.empty()) {
    auto w = probe::write_limits_file(a.save_limits, probe::to_limits(pc, result));
    if (!w) pc.warnings.push_back(fmt::format("--save-limits: {}", w.error().message));
  } else if (!a.save_limits.empty()) {
    pc.warnings.push_back(fmt::format("--save-limits {}: nothing was measured; the file is not written", a.save_limits));
  }
  if (store) {
    store->set_meta("end_us", std::to_string(timeutil::now_us()));
    store->set_meta("probe", probe::probe_json(pc, result).dump());
  }
  if (a.json) std::fputs(render_json(probe::probe_json(pc, result)).c_str(), stdout);
  else std::fputs(probe::probe_text(pc, result, color_for(1)).c_str(), stdout);
  return result.complete ? 0 : 1;
}

}  // namespace

Action add_probe(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  CLI::App* sub = app.add_subcommand("probe", "Find a server's memory envelope across context length and concurrency");
  sub->footer(
      "Loads an OpenAI-compatible server (vLLM, llama.cpp server, Ollama, TGI, SGLang) with streamed\n"
      "requests at each context length x concurrency, ascending, while sampling the server's memory\n"
      "(its process tree, its cgroup, GPUs, its /metrics). A failing step closes its direction; a dead\n"
      "server is diagnosed from the kernel log. Prompts are synthetic and never stored.\n\n"
      "Examples:\n"
      "  aimem probe http://127.0.0.1:8000 --contexts 2k,8k,32k --concurrency 1,4,16\n"
      "  aimem probe 127.0.0.1:8080 --contexts 512,4k --concurrency 1,2,4 --max-new-tokens 32 --save-limits limits.json\n"
      "  aimem probe http://127.0.0.1:11434 --api chat --model llama3.1 --json --record probe.db\n\n"
      "Exit: 0 the envelope was measured, 1 it is incomplete (unreachable server, no passing step,\n"
      "time bound hit), 2 unusable arguments.");
  sub->add_option("url", a->url, "The server's base URL (loopback unless --allow-remote)")->required();
  sub->add_option("--contexts", a->contexts, "Context lengths in tokens, prompt + new tokens (k = 1024)")->capture_default_str();
  sub->add_option("--concurrency", a->concurrency, "Concurrent requests per step")->capture_default_str();
  sub->add_option("--max-new-tokens", a->max_new_tokens, "Tokens generated per request")->capture_default_str();
  sub->add_option("--requests", a->requests, "Requests per step (default: 2 x concurrency)");
  sub->add_option("--step-duration", a->step_duration, "Stop starting requests in a step after this long (e.g. 30s)");
  sub->add_option("--timeout", a->timeout, "Bound on the whole sweep")->capture_default_str();
  sub->add_option("--request-timeout", a->request_timeout, "Bound on one request")->capture_default_str();
  sub->add_option("--slow-ttft", a->slow_ttft, "A step whose TTFT p95 is above this is 'slow'")->capture_default_str();
  sub->add_option("--headroom", a->headroom, "Percent taken off the largest passing step for the limits")->capture_default_str();
  sub->add_option("--pressure", a->pressure, "Used percent of the server's tightest pool that splits TTFT at rest from under pressure")->capture_default_str();
  sub->add_option("--api", a->api, "completions or chat")->capture_default_str();
  sub->add_option("--model", a->model, "Model name to request (default: the server's first)");
  sub->add_option("--api-key", a->api_key, "Bearer token for the server");
  sub->add_option("--pid", a->pid, "The server's process (default: the process listening on the URL's port)");
  sub->add_option("--metrics", a->metrics, "The server's Prometheus metrics URL (default URL/metrics; 'none' to skip)");
  sub->add_option("--interval", a->interval, "Memory sampling interval")->capture_default_str();
  sub->add_option("--root", a->root, "Read /proc, /sys and /dev/kmsg under this directory")->capture_default_str();
  sub->add_option("--record", a->record, "Record the timeline to this SQLite file (for `aimem report`)");
  sub->add_option("--save-limits", a->save_limits, "Write the measured safe envelope here (for `aimem check`)");
  sub->add_flag("--allow-remote", a->allow_remote, "Allow a server that is not on a loopback address");
  sub->add_flag("--no-keep-alive", a->no_keep_alive,
                "Open a new connection for every request (default: each concurrent worker keeps one "
                "connection alive through a step, as load generators do)");
  sub->add_flag("--no-gpus", a->no_gpus, "Do not read GPUs through NVML");
  sub->add_flag("--no-kernel-log", a->no_kernel_log, "Do not follow /dev/kmsg");
  sub->add_flag("--json", a->json, "JSON output (docs/contracts.md)");
  sub->add_flag("-q,--quiet", a->quiet, "No progress lines on stderr");
  return [a] { return run(*a); };
}

}  // namespace aimem::cli
