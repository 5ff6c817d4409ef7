// Rules about how a model server starts, stops and rolls: readiness gated on
// the model being loaded, a drain before termination, and rolling updates
// that would run two copies where the node holds one.
#include <cmath>
#include <fmt/format.h>

#include "check/rules_impl.h"
#include "core/text.h"

namespace aimem::check {
namespace {

// A probe that answers before the model is loaded. llama-server and Ollama
// open their port before loading (llama-server answers 503 on /health while
// loading, so an HTTP probe is gated; a TCP probe is not); Ollama loads
// models on demand, so /, /api/tags and /api/version answer with no model loaded.
std::optional<std::string> passes_before_load(const Probe& p, Server server) {
  if (p.kind == "tcpSocket" && (server == Server::kLlamaCpp || server == Server::kOllama))
    return fmt::format("a tcpSocket probe passes as soon as {} opens its port, before the model is loaded",
                       to_string(server));
  if (server == Server::kOllama && p.kind == "httpGet" &&
      (p.path.empty() || p.path == "/" || p.path == "/api/tags" || p.path == "/api/version"))
    return fmt::format("Ollama answers {} before any model is loaded", p.path.empty() ? "/" : p.path);
  return std::nullopt;
}

}  // namespace

void rule_readiness_not_gated(const Rule& r, const std::vector<Subject>& subjects, const Context&, Sink& out) {
  for (const Subject& s : subjects) {
    const Container& c = *s.container;
    const Platform p = s.workload->platform;
    if (s.server.server == Server::kNone || (p != Platform::kKubernetes && p != Platform::kCompose)) continue;
    if (!s.workload->serves_traffic) continue;  // no request reaches it: nothing to gate
    const bool ollama = s.server.server == Server::kOllama;
    if (!c.readiness && !c.startup) {
      out.violation(finding(
          r, c.at,
          p == Platform::kKubernetes
              ? fmt::format("{} has no readiness or startup probe: it receives traffic while the model is loading",
                            subject_name(s))
              : fmt::format("{} has no healthcheck: services that depend on it start while the model is loading",
                            subject_name(s)),
          p == Platform::kKubernetes
              ? (ollama ? "add a startupProbe that loads the model (exec: ollama run MODEL \"\") and a readinessProbe"
                        : "add a readinessProbe on the server's health endpoint (httpGet /health) and a startupProbe "
                          "with failureThreshold x periodSeconds longer than the load")
              : "add a healthcheck on the server's health endpoint (curl -f http://localhost:PORT/health) and "
                "depends_on: condition: service_healthy in its clients"));
      continue;
    }
    for (const std::optional<Probe>* probe : {&c.readiness, &c.startup}) {
      if (!*probe) continue;
      if (auto why = passes_before_load(**probe, s.server.server)) {
        out.violation(finding(r, (*probe)->at, fmt::format("{}: {}", subject_name(s), *why),
                              ollama ? "probe with an exec that checks the model is loaded (ollama ps) or load it in "
                                       "a startupProbe"
                                     : "probe httpGet /health, which answers 503 until the model is loaded"));
        break;
      }
    }
  }
}

// Whether replacing this workload's pods runs an old copy beside a new one:
// a Deployment or DaemonSet rolling with a surge (a Deployment's default is
// 25%, at least one pod). Only then is the old copy cut while its successor
// takes the traffic, and a drain that is too short turns a rollout into
// failed requests that recur on every rollout. Recreate, maxSurge 0, a
// StatefulSet (one pod replaced at a time), Compose and systemd stop the old
// copy first: a missing drain there cuts the requests in flight once, which
// is a note, not a warning.
static bool overlaps_two_copies(const Workload& w) {
  if (!w.rolling || !w.max_surge) return false;
  const std::string& surge = w.max_surge->value;
  return !(surge == "0" || surge == "0%");
}

void rule_no_graceful_drain(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  const double min_s = ctx.policy.min_grace_period_s;
  for (const Subject& s : subjects) {
    const Workload& w = *s.workload;
    if (s.server.server == Server::kNone || !w.serves_traffic) continue;
    // Defaults: Kubernetes 30 s, Compose 10 s, systemd DefaultTimeoutStopSec 90 s.
    double def = 0;
    switch (w.platform) {
      case Platform::kKubernetes: def = 30; break;
      case Platform::kCompose: def = 10; break;
      case Platform::kSystemd: def = 90; break;
      case Platform::kCommand: continue;
    }
    const double grace = w.grace_s ? w.grace_s->value : def;
    const char* field = w.platform == Platform::kKubernetes ? "terminationGracePeriodSeconds"
                        : w.platform == Platform::kCompose  ? "stop_grace_period"
                                                            : "TimeoutStopSec=";
    Loc at;
    std::string message, fix;
    if (grace < min_s) {
      at = w.grace_s ? w.grace_s->at : s.container->at;
      message = fmt::format("{} {}s{} is shorter than the {}s in-flight requests need to drain ({})", field, grace,
                            w.grace_s ? "" : " (the default)", min_s, subject_name(s));
      fix = fmt::format("set {} to at least {}{}", field, min_s,
                        w.platform == Platform::kKubernetes && !s.container->has_prestop
                            ? " and add a lifecycle.preStop sleep so endpoints drop the pod first"
                            : "");
    } else if (w.platform == Platform::kKubernetes && !s.container->has_prestop) {
      at = s.container->at;
      message = fmt::format("{} has no preStop hook: SIGTERM arrives while the pod is still in the Service's "
                            "endpoints, and in-flight and new requests are cut",
                            subject_name(s));
      fix = fmt::format("add lifecycle.preStop (exec: sleep 10, or a drain call) and keep "
                        "terminationGracePeriodSeconds >= {}s plus that sleep",
                        min_s);
    } else {
      continue;
    }
    if (overlaps_two_copies(w)) {
      out.violation(finding(r, at,
                            fmt::format("{}; {} '{}' rolls with maxSurge {}, so every rollout cuts the old copy "
                                        "while the new one takes over",
                                        message, w.kind, w.name, w.max_surge->value),
                            fix));
    } else {
      out.note(r.id, at, fmt::format("{} (no rolling overlap: the old copy stops before the new one starts, so "
                                     "only the requests in flight at a stop are cut); {}",
                                     message, fix));
    }
  }
}

void rule_rolling_overlap(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  // One finding per workload: its pod is the unit that is copied.
  for (size_t i = 0; i < subjects.size(); ++i) {
    const Workload& w = *subjects[i].workload;
    if (i > 0 && subjects[i - 1].workload == &w) continue;
    if (!overlaps_two_copies(w)) continue;
    const std::string& surge = w.max_surge->value;
    bool server = false;
    uint64_t per_copy = 0;
    bool sized = true;
    for (size_t j = i; j < subjects.size() && subjects[j].workload == &w; ++j) {
      const Subject& s = subjects[j];
      server |= s.model_server();
      if (s.container->mem_limit) per_copy += s.container->mem_limit->value;
      else if (s.plan.plan) per_copy += s.plan.plan->load_peak_host_bytes;
      else sized = false;
    }
    if (!server) continue;
    if (!ctx.policy.node_memory_bytes) {
      out.note(r.id, w.max_surge->at, "rolling-overlap not checked: the node's memory is unknown (policy node_memory or --node-memory)");
      continue;
    }
    if (!sized || per_copy == 0) {
      out.note(r.id, w.max_surge->at,
               fmt::format("rolling-overlap not checked for {} '{}': a container has neither a memory limit nor a known model",
                           w.kind, w.name));
      continue;
    }
    const uint64_t node = *ctx.policy.node_memory_bytes;
    const uint64_t usable = uint64_t(double(node) * (1.0 - headroom(ctx)));
    if (2 * per_copy <= usable) continue;
    out.violation(finding(
        r, w.max_surge->at,
        fmt::format("{} '{}' rolls with maxSurge {}{}: a new copy loads beside the old one, and two copies need {} "
                    "where the node has {} ({}% headroom: {})",
                    w.kind, w.name, surge, w.max_surge->at.line == w.strategy_at.line &&
                                                   w.max_surge->at.column == w.strategy_at.column
                                               ? " (the default)"
                                               : "",
                    bytes(2 * per_copy), bytes(node), ctx.policy.headroom_pct, bytes(usable)),
        "set strategy.rollingUpdate.maxSurge: 0 with maxUnavailable: 1 (or strategy.type: Recreate), or schedule "
        "copies on separate nodes"));
  }
}

}  // namespace aimem::check
