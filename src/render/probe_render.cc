#include "render/probe_render.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/text.h"
#include "core/doc_reader.h"
#include "core/time.h"
#include "core/units.h"

namespace aimem::probe {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json opt(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }
json point(const std::optional<Point>& p) {
  return p ? json{{"context", p->context}, {"concurrency", p->concurrency}} : json(nullptr);
}

std::string secs(const std::optional<double>& v) {
  if (!v) return "-";
  if (*v < 1) return fmt::format("{:.0f} ms", *v * 1000);
  return fmt::format("{:.2f} s", *v);
}

std::string bytes(const std::optional<uint64_t>& v) { return v ? units::format_bytes(*v) : "-"; }

std::string tokens_label(int64_t n) {
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{}k", n / 1024);
  return std::to_string(n);
}

// Fixes the envelope itself gives, least destructive first: fewer concurrent
// sequences at the breaking context, then a shorter context at the breaking
// concurrency. They go before the diagnosis' own (which knows the pool and
// the process, not the load that filled it).
json envelope_fixes(const SweepResult& r) {
  json fixes = json::array();
  if (!r.breaking_point) return fixes;
  const Point bp = *r.breaking_point;
  std::optional<int64_t> conc_ok, ctx_ok;
  std::optional<uint64_t> conc_peak, ctx_peak;
  for (const auto& s : r.steps) {
    if (s.status != "ok") continue;
    auto peak = s.peaks.cgroup ? s.peaks.cgroup : s.peaks.process;
    if (s.context == bp.context && s.concurrency < bp.concurrency && (!conc_ok || s.concurrency > *conc_ok)) {
      conc_ok = s.concurrency;
      conc_peak = peak;
    }
    if (s.concurrency == bp.concurrency && s.context < bp.context && (!ctx_ok || s.context > *ctx_ok)) {
      ctx_ok = s.context;
      ctx_peak = peak;
    }
  }
  auto peak_note = [](const std::optional<uint64_t>& p) {
    return p ? fmt::format(" (peak {} there)", units::format_bytes(*p)) : std::string();
  };
  if (conc_ok)
    fixes.push_back({{"action", fmt::format("serve at most {} concurrent request{} at context {} (llama.cpp --parallel, vLLM "
                                            "--max-num-seqs, TGI --max-concurrent-requests, SGLang --max-running-requests, "
                                            "OLLAMA_NUM_PARALLEL)", *conc_ok, *conc_ok == 1 ? "" : "s", bp.context)},
                     {"why", fmt::format("the probe passed {} x {}{} and the server failed at {} x {}", bp.context, *conc_ok,
                                         peak_note(conc_peak), bp.context, bp.concurrency)}});
  if (ctx_ok)
    fixes.push_back({{"action", fmt::format("cap the context at {} tokens at concurrency {} (llama.cpp --ctx-size, vLLM "
                                            "--max-model-len, TGI --max-total-tokens, SGLang --context-length)", *ctx_ok, bp.concurrency)},
                     {"why", fmt::format("the probe passed {} x {}{} and the server failed at {} x {}", *ctx_ok, bp.concurrency,
                                         peak_note(ctx_peak), bp.context, bp.concurrency)}});
  return fixes;
}

json merged_diagnosis(const ProbeContext& c, const SweepResult& r) {
  if (!c.diagnosis_json) return nullptr;
  json d = doc::parse_json_or_discarded(*c.diagnosis_json);
  if (d.is_discarded() || !d.is_object()) return nullptr;
  json add = envelope_fixes(r);
  if (!add.empty() && d.contains("incidents") && d["incidents"].is_array() && !d["incidents"].empty()) {
    json& inc = d["incidents"][0];
    json fixes = add;
    if (inc.contains("fixes") && inc["fixes"].is_array())
      for (const auto& f : inc["fixes"]) fixes.push_back(f);
    inc["fixes"] = fixes;
  }
  return d;
}

}  // namespace

json probe_json(const ProbeContext& c, const SweepResult& r) {
  json steps = json::array();
  for (const auto& s : r.steps) {
    json kinds = json::object();
    for (const auto& [k, n] : s.error_kinds) kinds[k] = n;
    json j = {
        {"context", s.context},
        {"concurrency", s.concurrency},
        {"status", s.status},
        {"requests", s.requests},
        {"errors", s.errors},
        {"error_kinds", kinds},
        {"first_error", s.first_error.empty() ? json(nullptr) : json(s.first_error)},
        {"prompt_tokens", s.prompt_tokens},
        {"ttft_p50_s", opt(s.ttft_p50_s)},
        {"ttft_p95_s", opt(s.ttft_p95_s)},
        {"itl_p50_s", opt(s.itl_p50_s)},
        {"tokens_per_s", opt(s.tokens_per_s)},
        {"duration_s", s.duration_s},
        {"peak_bytes", {{"process", opt(s.peaks.process)}, {"cgroup", opt(s.peaks.cgroup)}, {"gpu", opt(s.peaks.gpu)}}},
        {"cgroup_limit_bytes", opt(s.peaks.cgroup_limit)},
        {"kv_cache_usage_ratio", opt(s.peaks.kv_usage_ratio)},
        {"server_running_max", opt(s.peaks.running)},
        {"server_waiting_max", opt(s.peaks.waiting)},
        {"server_died", s.server_died},
    };
    if (s.status == "skipped") j["skipped_why"] = s.skipped_why;
    steps.push_back(j);
  }
  json diagnosis = merged_diagnosis(c, r);
  json limits = nullptr;
  if (r.limits)
    limits = {{"max_context", r.limits->context}, {"max_concurrency", r.limits->concurrency}, {"headroom_pct", c.options.headroom_pct}};
  json contexts = c.options.contexts, conc = c.options.concurrency;
  return json{
      {"url", c.url},
      {"model", r.model.empty() ? json(nullptr) : json(r.model)},
      {"server", {{"pid", c.pid ? json(*c.pid) : json(nullptr)}, {"found_by", c.pid_how.empty() ? json(nullptr) : json(c.pid_how)},
                  {"cgroup", c.cgroup.empty() ? json(nullptr) : json(c.cgroup)},
                  {"metrics", c.metrics_url.empty() ? json(nullptr) : json(c.metrics_url)}}},
      {"settings", {{"contexts", contexts}, {"concurrency", conc}, {"max_new_tokens", c.options.max_new_tokens},
                    {"requests_per_step", c.options.requests_per_step == 0 ? json("2x concurrency") : json(c.options.requests_per_step)},
                    {"api", c.options.api == Api::chat ? "chat" : "completions"},
                    {"slow_ttft_s", c.options.slow_ttft_s}, {"total_timeout_s", c.options.total_timeout_s},
                    {"keep_alive", c.keep_alive}}},
      {"prompt_tokens_from", r.prompt_how.empty() ? json(nullptr) : json(r.prompt_how)},
      {"steps", steps},
      {"last_good", point(r.last_good)},
      {"breaking_point", point(r.breaking_point)},
      {"server_died", r.server_died},
      {"diagnosis", diagnosis},
      {"limits", limits},
      {"ttft_by_memory", {{"threshold_used_ratio", r.ttft_split.threshold},
                          {"below", {{"requests", r.ttft_split.below_requests}, {"ttft_p50_s", opt(r.ttft_split.below_p50_s)}}},
                          {"above", {{"requests", r.ttft_split.above_requests}, {"ttft_p50_s", opt(r.ttft_split.above_p50_s)}}}}},
      {"complete", r.complete},
      {"incomplete_why", r.incomplete_why.empty() ? json(nullptr) : json(r.incomplete_why)},
      {"notes", r.notes},
      {"warnings", c.warnings},
  };
}

std::string step_line(const StepResult& s) {
  std::string line = fmt::format("context {:>6} x {:>3}: {:<7} {} requests, {} errors, TTFT p50 {} p95 {}", s.context,
                                 s.concurrency, s.status, s.requests, s.errors, secs(s.ttft_p50_s), secs(s.ttft_p95_s));
  if (s.peaks.process) line += fmt::format(", peak process {}", bytes(s.peaks.process));
  if (s.peaks.cgroup) line += fmt::format(", cgroup {}", bytes(s.peaks.cgroup));
  if (s.peaks.gpu) line += fmt::format(", GPU {}", bytes(s.peaks.gpu));
  if (s.server_died) line += " (the server died)";
  else if (s.status == "skipped" && !s.skipped_why.empty()) line += fmt::format(" ({})", s.skipped_why);
  else if (!s.first_error.empty()) line += fmt::format(" ({})", text::quote_line(s.first_error, 160));
  return line;
}

std::string probe_text(const ProbeContext& c, const SweepResult& r, bool color) {
  // A state padded to its column first, so the escapes do not count as width.
  auto state = [color](const std::string& s, int width) {
    std::string padded = fmt::format("{:>{}}", s, width);
    if (s == "ok") return text::paint(color, "32", padded);
    if (s == "FAILED") return text::paint(color, "31;1", padded);
    if (s == "slow") return text::paint(color, "33", padded);
    return padded;
  };
  std::string out;
  // The model's name, the server's errors and the cgroup's path come from
  // outside (a server names its own model): each is made printable here.
  out += fmt::format("aimem probe {}{}\n", text::printable(c.url), r.model.empty() ? "" : fmt::format(" (model {})", text::printable(r.model)));
  if (c.pid)
    out += fmt::format("server: pid {} ({}){}\n", *c.pid, c.pid_how,
                       c.cgroup.empty() ? "" : fmt::format(", memory cgroup {}", text::printable(c.cgroup)));
  else
    out += "server: process not known (give --pid, or probe a local port) -- memory is not measured\n";
  if (!r.prompt_how.empty())
    out += fmt::format("prompts: synthetic, sized by {}\n",
                       r.prompt_how == "tokenize" ? "the server's /tokenize"
                       : r.prompt_how == "usage"  ? "usage.prompt_tokens (calibrated)"
                                                  : "an estimate of 4 characters per token (the server reports no counts)");
  out += c.keep_alive ? "connections: one per concurrent request, kept alive through each step\n"
                      : "connections: a new one for every request (--no-keep-alive)\n";
  out += "\n";
  out += fmt::format("{:>8} {:>5}  {:<7} {:>4} {:>4} {:>9} {:>9} {:>8} {:>12} {:>12} {:>10}\n", "context", "conc", "status",
                     "req", "err", "TTFT p50", "TTFT p95", "tok/s", "peak proc", "peak cgroup", "peak GPU");
  for (const auto& s : r.steps) {
    if (s.status == "skipped") continue;
    out += fmt::format("{:>8} {:>5}  {:<7} {:>4} {:>4} {:>9} {:>9} {:>8} {:>12} {:>12} {:>10}\n", s.context, s.concurrency,
                       s.status, s.requests, s.errors, secs(s.ttft_p50_s), secs(s.ttft_p95_s),
                       s.tokens_per_s ? fmt::format("{:.1f}", *s.tokens_per_s) : "-", bytes(s.peaks.process),
                       bytes(s.peaks.cgroup), bytes(s.peaks.gpu));
  }
  // The grid: contexts down, concurrency across.
  std::vector<int64_t> ctxs = c.options.contexts, conc = c.options.concurrency;
  std::sort(ctxs.begin(), ctxs.end());
  ctxs.erase(std::unique(ctxs.begin(), ctxs.end()), ctxs.end());
  std::sort(conc.begin(), conc.end());
  conc.erase(std::unique(conc.begin(), conc.end()), conc.end());
  out += "\nenvelope (context x concurrency):\n";
  out += fmt::format("{:>8}", "");
  for (auto n : conc) out += fmt::format(" {:>7}", n);
  out += "\n";
  for (auto ctx : ctxs) {
    out += fmt::format("{:>8}", tokens_label(ctx));
    for (auto n : conc) {
      std::string cell = "?";
      for (const auto& s : r.steps)
        if (s.context == ctx && s.concurrency == n) cell = s.status == "skipped" ? "-" : s.status == "failed" ? "FAILED" : s.status;
      out += " " + state(cell, 7);
    }
    out += "\n";
  }
  out += "\n";
  if (r.breaking_point) {
    std::string why;
    for (const auto& s : r.steps)
      if (s.context == r.breaking_point->context && s.concurrency == r.breaking_point->concurrency) {
        if (s.server_died) why = "the server died";
        else {
          std::vector<std::string> parts;
          for (const auto& [k, n] : s.error_kinds) parts.push_back(fmt::format("{} {}", n, k));
          why = fmt::format("{} of {} requests failed ({})", s.errors, s.requests, fmt::join(parts, ", "));
          if (!s.first_error.empty()) why += ": " + text::quote_line(s.first_error, 200);
        }
      }
    out += fmt::format("{} context {} x concurrency {}: {}\n", text::paint(color, "31;1", "breaking point:"), r.breaking_point->context,
                       r.breaking_point->concurrency, why);
  } else if (r.complete && !r.steps.empty()) {
    out += "breaking point: none within the sweep (every step ran without errors)\n";
  }
  if (r.last_good)
    out += fmt::format("{} context {} x concurrency {}\n", text::paint(color, "32;1", "last good:"), r.last_good->context,
                       r.last_good->concurrency);
  else
    out += "last good: none (no step passed)\n";
  if (c.diagnosis_json) {
    json d = merged_diagnosis(c, r);
    if (d.is_object()) {
      out += fmt::format("diagnosis: {} / {}", d.value("layer", "?"), d.value("cause", "?"));
      if (d.contains("incidents") && d["incidents"].is_array() && !d["incidents"].empty()) {
        const auto& inc = d["incidents"][0];
        if (inc.contains("summary") && inc["summary"].is_string()) out += ": " + text::printable(inc["summary"].get<std::string>());
        out += "\n";
        if (inc.contains("fixes") && inc["fixes"].is_array())
          for (size_t i = 0; i < inc["fixes"].size() && i < 4; ++i)
            if (inc["fixes"][i].contains("action") && inc["fixes"][i]["action"].is_string())
              out += fmt::format("  fix {}: {}\n", i + 1, text::printable(inc["fixes"][i]["action"].get<std::string>()));
      } else {
        out += "\n";
      }
    }
  } else if (r.server_died) {
    for (const auto& f : envelope_fixes(r)) out += fmt::format("  fix: {}\n", f["action"].get<std::string>());
    out += fmt::format("diagnosis: none ({})\n", c.diagnosis_note.empty() ? "no kernel OOM report named the server" : text::printable(c.diagnosis_note));
  }
  if (r.limits)
    out += fmt::format("limits to configure ({:.0f}% headroom): max context {}, max concurrency {}\n", c.options.headroom_pct,
                       r.limits->context, r.limits->concurrency);
  if (r.ttft_split.below_p50_s || r.ttft_split.above_p50_s)
    out += fmt::format("TTFT p50 with the server's memory below {:.0f}% used: {} ({} requests); above: {} ({} requests)\n",
                       r.ttft_split.threshold * 100, secs(r.ttft_split.below_p50_s), r.ttft_split.below_requests,
                       secs(r.ttft_split.above_p50_s), r.ttft_split.above_requests);
  if (!r.complete) out += fmt::format("{} {}\n", text::paint(color, "33;1", "envelope incomplete:"), text::printable(r.incomplete_why));
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", text::printable(n));
  for (const auto& w : c.warnings) out += fmt::format("warning: {}\n", text::printable(w));
  return out;
}

}  // namespace aimem::probe
