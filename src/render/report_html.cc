// The HTML page of `aimem report`: one file, no scripts, fonts or links, so it
// opens anywhere and can be attached to a ticket. Each panel is an inline SVG
// with the pool's series as polylines, its limit dashed, and every event as a
// numbered vertical marker that refers to the event table. Every string from
// the store (paths, process names, summaries) is escaped.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/doc_reader.h"
#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "render/report.h"

namespace aimem::report {
namespace {

constexpr int kWidth = 960, kHeight = 220, kLeft = 90, kRight = 16, kTop = 12, kBottom = 26;
constexpr size_t kMaxMarkers = 200, kMaxEventRows = 500, kMaxIncidentLines = 20;
constexpr const char* kColors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f"};

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_value(double v, const std::string& unit) {
  if (unit == "bytes") return units::format_bytes(static_cast<uint64_t>(std::max(0.0, v)));
  if (unit == "ratio") return fmt::format("{:.0f}%", v * 100);
  if (unit == "seconds") return fmt::format("{:.3g} s", v);
  return fmt::format("{:.4g}", v);
}

std::string clock(int64_t us) {
  std::string iso = timeutil::format_iso(us);  // 2026-11-29T15:03:12Z
  return iso.size() >= 19 ? iso.substr(11, 8) : iso;
}

struct Frame {
  int64_t from, to;
  double ymax;
  double x(int64_t t) const {
    return kLeft + (to > from ? double(t - from) / double(to - from) : 0.0) * (kWidth - kLeft - kRight);
  }
  double y(double v) const { return kTop + (1 - v / ymax) * (kHeight - kTop - kBottom); }
};

// The events drawn on panels: numbered by their row in the event table.
struct Marker {
  size_t number;
  const watch::Event* e;
};

void render_panel(std::string& out, const Panel& p, const Timeline& t, const std::vector<Marker>& markers) {
  double ymax = 0;
  for (const auto& s : p.series)
    for (const auto& pt : s.points) ymax = std::max(ymax, pt.v);
  ymax = ymax > 0 ? ymax * 1.08 : 1;
  Frame f{t.from_us, t.to_us, ymax};
  out += fmt::format("<section class=\"panel\"><h2>{}</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" data-panel=\"{}\">\n",
                     esc(p.title), kWidth, kHeight, kWidth, kHeight, esc(p.title));
  for (int i = 0; i <= 4; ++i) {  // horizontal grid with labels
    double v = ymax * i / 4, y = f.y(v);
    out += fmt::format("<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/><text class=\"ylab\" x=\"{}\" y=\"{:.1f}\">{}</text>\n",
                       kLeft, kWidth - kRight, y, y, kLeft - 6, y + 4, esc(format_value(v, p.unit)));
  }
  for (int i = 0; i <= 4; ++i) {  // time labels
    int64_t ts = t.from_us + (t.to_us - t.from_us) * i / 4;
    const char* anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";  // the ends stay inside the plot
    out += fmt::format("<text class=\"xlab\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\">{}</text>\n", f.x(ts), kHeight - 8, anchor, clock(ts));
  }
  size_t color = 0;
  for (const auto& s : p.series) {
    if (s.points.empty()) continue;
    std::string pts;
    pts.reserve(s.points.size() * 14);
    for (const auto& pt : s.points) fmt::format_to(std::back_inserter(pts), "{:.1f},{:.1f} ", f.x(pt.t), f.y(pt.v));
    if (!pts.empty()) pts.pop_back();
    std::string stroke = s.limit ? "#d62728" : kColors[color++ % std::size(kColors)];
    out += fmt::format("<polyline class=\"{}\" data-series=\"{}\" stroke=\"{}\" points=\"{}\"><title>{}: peak {}</title></polyline>\n",
                       s.limit ? "limit" : "line", esc(s.name), stroke, pts, esc(s.name),
                       esc(format_value(std::max_element(s.points.begin(), s.points.end(), [](auto& a, auto& b) { return a.v < b.v; })->v, p.unit)));
    if (s.points.size() == 1)  // a polyline of one point draws nothing
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n", f.x(s.points[0].t), f.y(s.points[0].v), stroke);
  }
  for (const auto& m : markers) {
    if (m.e->time_us < t.from_us || m.e->time_us > t.to_us) continue;
    double x = f.x(m.e->time_us);
    out += fmt::format("<g class=\"event\" data-kind=\"{}\"><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\"/><text x=\"{:.1f}\" y=\"{}\">{}</text><title>#{} {} {}: {}</title></g>\n",
                       esc(m.e->kind), x, x, kTop, kHeight - kBottom, x + 3, kTop + 10, m.number, m.number,
                       clock(m.e->time_us), esc(m.e->kind), esc(text::quote_line(m.e->summary)));
  }
  out += "</svg>\n<p class=\"legend\">";
  color = 0;
  for (const auto& s : p.series) {
    if (s.points.empty()) continue;
    std::string stroke = s.limit ? "#d62728" : kColors[color++ % std::size(kColors)];
    out += fmt::format("<span style=\"color:{}\">&#9632; {}</span> ", stroke, esc(s.name));
  }
  out += "</p></section>\n";
}

// The diagnosis carried in an oom_kill or exit event's body (diagnose --json).
void render_diagnosis(std::string& out, const watch::Event& e) {
  auto j = doc::parse_json_or_discarded(e.body);
  if (!j.is_object()) return;
  auto str = [](const nlohmann::json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  out += fmt::format("<div class=\"diagnosis\"><h3>{} {} at {}</h3>", esc(e.kind), esc(e.key), timeutil::format_human(e.time_us));
  if (!str(j, "layer").empty())
    out += fmt::format("<p>layer <b>{}</b>, cause <b>{}</b></p>", esc(str(j, "layer")), esc(str(j, "cause")));
  auto inc = j.find("incidents");
  if (inc != j.end() && inc->is_array()) {
    out += "<ul>";
    size_t n = 0;
    for (const auto& i : *inc) {
      if (!i.is_object() || str(i, "summary").empty()) continue;
      if (n++ == kMaxIncidentLines) break;
      out += fmt::format("<li class=\"incident\">{}</li>", esc(text::quote_line(str(i, "summary"))));
    }
    out += "</ul>";
  }
  out += "</div>\n";
}

constexpr const char* kStyle = R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
h1{font-size:20px}h2{font-size:15px;margin:18px 0 4px}h3{font-size:14px;margin:8px 0}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
td.n{text-align:right}svg{background:#fafafa;border:1px solid #ddd}
.line,.limit{fill:none;stroke-width:1.5}.limit{stroke-dasharray:6 4}
.grid{stroke:#e4e4e4}.ylab{font-size:11px;text-anchor:end;fill:#555}.xlab{font-size:11px;fill:#555}
.event line{stroke:#d62728;stroke-width:1}.event text{font-size:10px;fill:#d62728}
.legend{margin:2px 0 0;font-size:12px}.diagnosis{border-left:3px solid #d62728;padding-left:10px}
</style>)";

}  // namespace

std::string render_html(const Timeline& t) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format("<title>aimem report: {}</title>\n{}\n</head><body>\n", esc(t.file), kStyle);
  out += fmt::format("<h1>aimem report: {}</h1>\n", esc(t.file));
  if (t.samples)
    out += fmt::format("<p>{} samples from {} to {} ({})</p>\n", t.samples, timeutil::format_human(t.from_us),
                       timeutil::format_human(t.to_us), timeutil::format_duration(double(t.to_us - t.from_us) / 1e6));
  else
    out += "<p>No samples in the chosen time range.</p>\n";
  if (!t.meta.empty()) {
    out += "<h2>Run</h2><table class=\"meta\">";
    for (const auto& [k, v] : t.meta) out += fmt::format("<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    out += "</table>\n";
  }
  if (!t.pools.empty()) {
    out += "<h2>Pools</h2><table class=\"pools\"><tr><th>pool</th><th>peak</th><th>limit</th><th>peak / limit</th></tr>";
    for (const auto& p : t.pools)
      out += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>", esc(p.name),
                         p.peak ? units::format_bytes(*p.peak) : "-", p.limit ? units::format_bytes(*p.limit) : "-",
                         p.peak && p.limit ? fmt::format("{:.0f}%", 100.0 * double(*p.peak) / double(*p.limit)) : "-");
    out += "</table>\n";
  }
  std::vector<Marker> markers;
  for (size_t i = 0; i < t.events.size() && markers.size() < kMaxMarkers; ++i) markers.push_back({i + 1, &t.events[i]});
  for (const auto& e : t.events)
    if (e.kind == "oom_kill" || e.kind == "exit") render_diagnosis(out, e);
  for (const auto& p : t.panels) render_panel(out, p, t, markers);
  if (!t.events.empty()) {
    out += "<h2>Events</h2><table class=\"events\"><tr><th>#</th><th>time</th><th>kind</th><th>key</th><th>summary</th></tr>";
    for (size_t i = 0; i < t.events.size() && i < kMaxEventRows; ++i) {
      const auto& e = t.events[i];
      out += fmt::format("<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", i + 1,
                         timeutil::format_human(e.time_us), esc(e.kind), esc(e.key), esc(text::quote_line(e.summary)));
    }
    out += "</table>\n";
    if (t.events.size() > kMaxEventRows)
      out += fmt::format("<p>{} more events not listed (narrow the range with --from/--to).</p>\n", t.events.size() - kMaxEventRows);
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace aimem::report
