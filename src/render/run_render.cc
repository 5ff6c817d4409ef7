#include "render/run_render.h"

#include <cstring>

#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "render/diagnosis_json.h"
#include "render/diagnosis_text.h"
#include "watch/alerts.h"
#include "watch/trend.h"

namespace aimem::watch {

nlohmann::json run_result_json(const RunOptions& o, const RunResult& r) {
  using nlohmann::json;
  json j;
  j["command"] = o.command;
  j["exit_status"] = r.exit_status;
  j["signal"] = r.signal ? json(*r.signal) : json(nullptr);
  j["started"] = r.started;
  if (!r.problem.empty()) j["problem"] = r.problem;
  j["duration_s"] = static_cast<double>(r.end_us - r.start_us) / 1e6;
  json cgj = nullptr;
  if (!r.cgroup_path.empty()) {
    auto opt = [](const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); };
    cgj = {{"path", r.cgroup_path}, {"limit_bytes", opt(r.cgroup_limit)}, {"peak_bytes", opt(r.cgroup_peak)},
           {"oom_kills", opt(r.cgroup_oom_kills)}, {"limit_hits", opt(r.cgroup_failcnt)}};
  }
  j["cgroup"] = cgj;
  j["max_rss_bytes"] = r.max_rss ? json(*r.max_rss) : json(nullptr);
  json peaks = json::array();
  for (const auto& p : pool_peaks(r))
    peaks.push_back({{"pool", p.pool}, {"peak_bytes", p.peak}, {"limit_bytes", p.limit ? json(*p.limit) : json(nullptr)}});
  j["peaks"] = peaks;
  json alerts = json::array();
  for (const auto& a : r.alerts) alerts.push_back(alert_json(a));
  j["alerts"] = alerts;
  json trend = json::array();
  for (const auto& f : r.trend)
    trend.push_back({{"pool", f.pool_id}, {"shape", shape_name(f.shape)}, {"growth_bytes_per_s", f.growth_bytes_per_s},
                     {"dimension", f.dimension.empty() ? json(nullptr) : json(f.dimension)},
                     {"correlation", f.correlation}, {"summary", f.summary}});
  j["trend"] = trend;
  j["samples"] = r.samples_recorded;
  j["recording"] = o.record.empty() ? json(nullptr) : json(o.record);
  j["diagnosis"] = r.diagnosis ? diagnosis_to_json(*r.diagnosis) : json(nullptr);
  j["verdict"] = r.verdict.empty() ? json(nullptr) : json(r.verdict);
  j["warnings"] = r.warnings;
  return j;
}

std::string run_result_text(const RunOptions& o, const RunResult& r, bool color) {
  std::string out;
  double secs = static_cast<double>(r.end_us - r.start_us) / 1e6;
  if (r.signal)
    out += fmt::format("aimem run: `{}` was killed by signal {} ({}) after {}; exit status {}\n", join_command(o.command),
                       *r.signal, strsignal(*r.signal), timeutil::format_duration(secs), r.exit_status);
  else
    out += fmt::format("aimem run: `{}` exited with status {} after {}\n", join_command(o.command), r.exit_status,
                       timeutil::format_duration(secs));
  out += "peak memory:\n";
  for (const auto& p : pool_peaks(r)) {
    if (p.limit && *p.limit > 0)
      out += fmt::format("  {:<44} {:>10} of {} ({:.0f}%)\n", p.pool, units::format_bytes(p.peak), units::format_bytes(*p.limit),
                         100.0 * static_cast<double>(p.peak) / static_cast<double>(*p.limit));
    else
      out += fmt::format("  {:<44} {:>10}\n", p.pool, units::format_bytes(p.peak));
  }
  if (r.cgroup_oom_kills && *r.cgroup_oom_kills > 0)
    out += fmt::format("  the kernel OOM-killed {} process(es) in this cgroup\n", *r.cgroup_oom_kills);
  if (!r.alerts.empty())
    out += fmt::format("alerts: {} during the run (printed above as they fired), the first at +{}\n", r.alerts.size(),
                       timeutil::format_duration(static_cast<double>(r.alerts.front().time_us - r.start_us) / 1e6));
  for (const auto& f : r.trend)
    if (f.shape != Shape::flat && f.shape != Shape::unknown && !f.summary.empty()) out += "trend: " + f.summary + "\n";
  if (!r.verdict.empty()) {
    out += r.verdict + "\n";
  } else if (r.diagnosis) {
    TextStyle style;
    style.color = color;
    out += "\n" + render_text(*r.diagnosis, style);
  }
  for (const auto& w : r.warnings) out += "warning: " + text::printable(w) + "\n";
  if (!o.record.empty())
    out += fmt::format("recording: {} ({} samples); render it with `aimem report {}`\n", o.record, r.samples_recorded,
                       o.record);
  return out;
}

}  // namespace aimem::watch
