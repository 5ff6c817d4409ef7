// aimem diagnose [EVIDENCE...]: which memory pool failed, and why.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/commands/diagnose_prom.h"
#include "core/text.h"
#include "core/time.h"
#include "recognize/scanner.h"
#include "diagnose/diagnosis.h"
#include "evidence/store.h"
#include "render/diagnosis_json.h"
#include "render/diagnosis_text.h"
#include "sources/inputs.h"
#include "sources/live.h"

namespace aimem::cli {

int print_diagnosis(Diagnosis& d, bool json, bool verbose) {
  // Warnings (an input that could not be read) go to stderr: stdout is the
  // diagnosis alone, and --json keeps them in its `warnings` too.
  for (const auto& w : d.warnings) fmt::print(stderr, "aimem diagnose: warning: {}\n", w);
  if (json) {
    std::fputs(render_json(diagnosis_to_json(d)).c_str(), stdout);
  } else {
    d.warnings.clear();
    TextStyle style;
    style.color = color_for(1);
    style.verbose = verbose;
    std::fputs(render_text(d, style).c_str(), stdout);
  }
  return 0;
}

namespace {

struct DiagnoseArgs {
  std::vector<std::string> evidence;
  std::string since;
  bool json = false;
  std::optional<int> exit_code;
  std::string root = "/";
  std::string unit;
  std::string cgroup;
  std::optional<int64_t> pid;
  bool verbose = false;
  PromDiagnoseArgs prom;  // --prometheus and its scope
};

// Live, the kernel log is where OOM kills are reported: without it, finding
// nothing is not "OK". The verdict is unknown, with what the kernel's own
// counter says and how to read the log.
Incident kernel_log_unread(const LiveReport& report) {
  Incident inc;
  inc.layer = Layer::unknown;
  inc.cause = Cause::unknown;
  const std::string why = text::printable(report.kernel_log_problem.empty() ? "the kernel log could not be read" : report.kernel_log_problem);
  if (report.vmstat_oom_kills && *report.vmstat_oom_kills > 0)
    inc.summary = fmt::format("{}, and the kernel counts {} OOM kill{} since boot (/proc/vmstat oom_kill): "
                              "which processes they hit is in that log", why, *report.vmstat_oom_kills,
                              *report.vmstat_oom_kills == 1 ? "" : "s");
  else if (report.vmstat_oom_kills)
    inc.summary = fmt::format("{}: the kernel counts no OOM kill since boot (/proc/vmstat oom_kill), but GPU "
                              "errors and allocation failures it logs are not seen", why);
  else
    inc.summary = fmt::format("{}: a kernel OOM kill would not be seen", why);
  inc.reasons.push_back("no memory failure in what could be read, but the main source, the kernel log, was not read");
  inc.fixes.push_back({"run aimem diagnose as root (or with CAP_SYSLOG, or with kernel.dmesg_restrict=0)",
                       "the kernel log names each process the OOM killer chose and the cgroup whose limit it hit"});
  inc.fixes.push_back({"or pass the log as a file: sudo dmesg -T > dmesg.txt; aimem diagnose dmesg.txt", "the same report, read from a file"});
  inc.next_checks = {"sudo dmesg -T | grep -i -E 'out of memory|killed process'", "journalctl -k --since \"24 hours ago\" | grep -i oom"};
  return inc;
}

int run(const DiagnoseArgs& a) {
  if (!a.prom.url.empty()) {
    if (!a.evidence.empty() || a.exit_code || a.root != "/" || !a.unit.empty() || !a.cgroup.empty() || a.pid) {
      fmt::print(stderr, "aimem diagnose: --prometheus reads the server only: no evidence files, --exit-code, --root, --unit, --cgroup or --pid with it\n");
      return 2;
    }
    PromDiagnoseArgs p = a.prom;
    p.since = a.since;
    p.json = a.json;
    p.verbose = a.verbose;
    return run_diagnose_prometheus(p);
  }
  if (!a.prom.pod.empty() || !a.prom.node.empty() || !a.prom.container.empty() || !a.prom.at.empty()) {
    fmt::print(stderr, "aimem diagnose: --pod, --container, --node and --at go with --prometheus URL\n");
    return 2;
  }
  const int64_t now = timeutil::now_us();
  DiagnoseOptions opt;
  if (a.exit_code && (*a.exit_code < 0 || *a.exit_code > 255)) {
    fmt::print(stderr, "aimem diagnose: --exit-code {}: an exit status is 0 to 255 (128+N for signal N: 137 is SIGKILL)\n", *a.exit_code);
    return 2;
  }
  opt.exit_code = a.exit_code;
  opt.pid = a.pid;
  opt.cgroup = a.cgroup;
  opt.unit = a.unit;
  if (!a.since.empty()) {
    auto since = timeutil::parse_since(a.since, now);
    if (!since) {
      fmt::print(stderr, "aimem diagnose: {}\n", since.error().message);
      return 2;
    }
    opt.since_us = *since;
  }

  FactStore store;
  std::vector<std::string> warnings, notes;
  const bool live = a.evidence.empty();
  std::optional<LiveReport> live_report;
  if (live) {
    opt.live = true;
    if (!opt.since_us) opt.since_us = now - 24LL * 3600 * 1000000;
    LiveOptions lo;
    lo.root = a.root;
    lo.since_us = *opt.since_us;
    lo.unit = a.unit;
    lo.cgroup = a.cgroup;
    lo.pid = a.pid;
    LiveReport report = collect_live(lo, store, line_scanners());
    for (auto& w : report.warnings) warnings.push_back(w);
    for (auto& n : report.notes) notes.push_back(n);
    if (!report.usable) {
      for (const auto& w : warnings) fmt::print(stderr, "aimem diagnose: {}\n", text::printable(w));
      return 2;
    }
    live_report = std::move(report);
  } else {
    InputOptions io;
    io.progress = !a.json || isatty(2);
    auto reports = read_inputs(a.evidence, store, io, line_scanners());
    size_t usable = 0;
    for (const auto& r : reports) {
      if (r.usable) ++usable;
      if (!r.problem.empty()) warnings.push_back(r.problem);
    }
    if (usable == 0) {
      for (const auto& w : warnings) fmt::print(stderr, "aimem diagnose: {}\n", text::printable(w));
      if (warnings.empty()) fmt::print(stderr, "aimem diagnose: no usable input\n");
      return 2;
    }
  }
  if (store.dropped() > 0)
    notes.push_back(fmt::format("{} further facts were not kept (memory bound); the earliest ones were", store.dropped()));

  Diagnosis d = diagnose(std::move(store.facts()), opt);
  // File names and read errors come from outside too.
  for (auto& w : warnings) d.warnings.push_back(text::printable(w));
  for (auto& n : notes) d.notes.push_back(text::printable(n));
  if (d.incidents.empty() && !live) d.since_us.reset();
  // A captured tree (--root) without dev/kmsg is partial evidence by choice,
  // as files are; on the host, or where the log is there but unreadable, not.
  if (d.incidents.empty() && live_report && !live_report->kernel_log_read &&
      (a.root == "/" || live_report->kernel_log_errno != ENOENT)) {
    d.incidents.push_back(kernel_log_unread(*live_report));
    d.layer = Layer::unknown;
    d.cause = Cause::unknown;
    d.confidence = 0;
  }

  return print_diagnosis(d, a.json, a.verbose);
}

}  // namespace

Action add_diagnose(CLI::App& app) {
  auto args = std::make_shared<DiagnoseArgs>();
  CLI::App* sub = app.add_subcommand("diagnose", "Name the memory pool that failed, and why");
  sub->footer(R"(Examples:
  aimem diagnose                          the live host: kernel log, journal, cgroups, /proc, GPUs
  aimem diagnose --since 1h --unit vllm   one systemd unit's journal and cgroup
  aimem diagnose dmesg.txt pod.yaml       evidence files, any mix (folders and - for stdin too)
  kubectl describe pod api-0 | aimem diagnose - --exit-code 137
  aimem diagnose --json server.log        the JSON contract (docs/diagnose.md)
  aimem diagnose --prometheus http://127.0.0.1:9090 --pod ml/vllm-0 --since 2h
                                          a pod's post-mortem from a central Prometheus
                                          (kube-state-metrics, cAdvisor, DCGM, node_exporter, aimem))");
  sub->add_option("evidence", args->evidence, "files, folders or - (stdin): logs, dmesg, journalctl, docker inspect, kubectl, nvidia-smi output");
  sub->add_option("--since", args->since, "only evidence after this time: 1h, 20m, '20 minutes ago', 2026-11-29 15:00 (live default: 24h; --prometheus: 1h before --at)");
  sub->add_flag("--json", args->json, "machine-readable output (docs/diagnose.md)");
  sub->add_option("--exit-code", args->exit_code, "the exit code the client saw (137, 143, 134, ...)");
  sub->add_option("--root", args->root, "read /proc, /sys and /dev/kmsg under this directory (a captured tree)");
  sub->add_option("--unit", args->unit, "live: only this systemd unit (its journal and cgroup)");
  sub->add_option("--cgroup", args->cgroup, "live: only this cgroup subtree (path as in /proc/PID/cgroup)");
  sub->add_option("--pid", args->pid, "live: only this process");
  sub->add_flag("-v,--verbose", args->verbose, "show every incident in full");
  sub->add_option("--prometheus", args->prom.url, "read a central Prometheus (http://HOST:PORT[/prefix]) instead of this host: read-only, bounded range queries");
  sub->add_option("--pod", args->prom.pod, "--prometheus: the pod, as NAMESPACE/NAME");
  sub->add_option("--container", args->prom.container, "--prometheus: only this container of --pod");
  sub->add_option("--node", args->prom.node, "--prometheus: the node (its node or instance label)");
  sub->add_option("--at", args->prom.at, "--prometheus: the window's end (default now): 2026-11-29 15:00, @1764428400, 30m (ago)");
  return [args] { return run(*args); };
}

}  // namespace aimem::cli
