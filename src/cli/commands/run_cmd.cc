// aimem run [--memory-limit SIZE] [--interval D] [--record FILE] -- CMD ...
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "core/time.h"
#include "core/units.h"
#include "render/diagnosis_json.h"
#include "render/run_render.h"
#include "watch/runner.h"

namespace aimem::cli {
namespace {

struct RunArgs {
  std::vector<std::string> command;
  std::string memory_limit, interval = "1s", record, root = "/";
  std::string on_alert, webhook, alert_log;
  std::vector<std::string> scrape;
  bool json = false, quiet = false, no_cgroup = false, no_capture = false, no_gpus = false;
};

int run(const RunArgs& a) {
  watch::RunOptions o;
  o.diagnosis_json = diagnosis_to_json;
  o.command = a.command;
  if (!a.memory_limit.empty()) {
    auto v = units::parse_size(a.memory_limit);
    if (!v || *v < (1u << 20)) {
      fmt::print(stderr, "aimem run: --memory-limit '{}': {}\n", a.memory_limit,
                 v ? "below 1 MiB; write e.g. 512MiB or 8G" : v.error().message);
      return 2;
    }
    o.memory_limit = *v;
  }
  auto interval = timeutil::parse_duration_us(a.interval, "--interval");
  if (!interval || *interval < 100000 || *interval > 3600LL * 1000000) {
    fmt::print(stderr, "aimem run: {}\n", interval ? "--interval must be between 100ms and 1h" : interval.error().message);
    return 2;
  }
  o.interval_us = *interval;
  o.record = a.record;
  o.root = a.root;
  o.cgroup = !a.no_cgroup;
  o.capture_stderr = !a.no_capture;
  o.gpus = !a.no_gpus;
  o.scrape = a.scrape;
  o.delivery.to_stderr = true;
  o.delivery.on_alert_cmd = a.on_alert;
  o.delivery.webhook_url = a.webhook;
  o.delivery.log_path = a.alert_log;

  watch::RunResult r = watch::run_command(o);
  if (!r.started && !r.problem.empty()) {
    fmt::print(stderr, "aimem run: {}\n", r.problem);
    return r.exit_status;
  }
  if (a.json) {
    std::fputs((render_json(watch::run_result_json(o, r))).c_str(), stdout);
    std::fflush(stdout);
  } else if (!a.quiet || (r.exit_status != 0 && r.verdict.empty())) {  // -q: nothing when memory is ruled out
    bool color = color_for(2);
    std::fputs(watch::run_result_text(o, r, color).c_str(), stderr);
  }
  return r.exit_status;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "Run a command in its own memory cgroup, record every pool, diagnose its exit");
  sub->footer(R"(Exits with the command's own status (128+N when signal N ended it).
The command's stderr passes through aimem (to read failure messages such as
"JavaScript heap out of memory"); aimem's own report goes to stderr after it,
or with --json to stdout.

Examples:
  aimem run --memory-limit 8G -- python3 serve.py
  aimem run --memory-limit 48M --interval 100ms --record run.db -- ./allocator
  aimem run --scrape vllm=http://127.0.0.1:8000/metrics -- vllm serve m
  aimem report run.db -o run.html)");
  sub->add_option("--memory-limit", args->memory_limit, "memory limit of the command's cgroup (swap included): 512MiB, 8G, 16GB");
  sub->add_option("--interval", args->interval, "sampling interval, 100ms to 1h (default 1s)");
  sub->add_option("--record", args->record, "save the recording (SQLite) for `aimem report`");
  sub->add_option("--scrape", args->scrape, "an inference server's metrics: vllm=URL, llamacpp=URL, tgi=URL, sglang=URL, ollama=URL, URL");
  sub->add_option("--on-alert", args->on_alert, "run this shell command for each alert (alert JSON on stdin, AIMEM_ALERT_* variables)");
  sub->add_option("--webhook", args->webhook, "POST each alert as JSON to this URL (http://; https:// checks the certificate chain against the system CAs, not the host name)");
  sub->add_option("--alert-log", args->alert_log, "append each alert as a JSON line to this file");
  sub->add_flag("--json", args->json, "print the result as JSON on stdout");
  sub->add_flag("-q,--quiet", args->quiet, "say nothing when the command succeeds, or fails for a reason other than memory");
  sub->add_flag("--no-cgroup", args->no_cgroup, "do not create a cgroup; sample the process tree only");
  sub->add_flag("--no-capture", args->no_capture, "leave the command's stderr attached to the terminal");
  sub->add_flag("--no-gpus", args->no_gpus, "do not read GPUs through NVML");
  sub->add_option("--root", args->root, "read /proc and /sys under this directory")->group("");
  sub->add_option("command", args->command, "the command and its arguments, after --")->required();
  return [args] { return run(*args); };
}

}  // namespace aimem::cli
