#include "render/diagnosis_text.h"

#include <fmt/format.h>

#include "core/time.h"
#include "core/units.h"

namespace aimem {
namespace {

struct Paint {
  bool on;
  std::string operator()(std::string_view code, std::string_view s) const {
    if (!on) return std::string(s);
    return fmt::format("\033[{}m{}\033[0m", code, s);
  }
};

void incident_full(std::string& out, const Incident& inc, const Paint& p, bool primary) {
  std::string headline = fmt::format("{} / {}", to_string(inc.layer), to_string(inc.cause));
  out += fmt::format("{} {}  (confidence {:.2f})\n", primary ? p("1", "Memory pool:") : p("1", "Incident:"),
                     p(inc.layer == Layer::not_memory ? "33;1" : inc.layer == Layer::unknown ? "35;1" : "31;1", headline), inc.confidence);
  out += fmt::format("  {}\n", inc.summary);
  if (inc.time_us) out += fmt::format("  when      {}\n", timeutil::format_human(*inc.time_us));
  if (!inc.pool.name.empty()) {
    std::string pool = inc.pool.name;
    if (inc.pool.used_bytes && inc.pool.limit_bytes)
      pool += fmt::format(": {} used of {}", units::format_bytes(*inc.pool.used_bytes), units::format_bytes(*inc.pool.limit_bytes));
    else if (inc.pool.limit_bytes)
      pool += fmt::format(": limit {}", units::format_bytes(*inc.pool.limit_bytes));
    out += fmt::format("  pool      {}\n", pool);
  }
  for (const auto& r : inc.reasons) out += fmt::format("  why       {}\n", r);
  // The runner-up cause when it is close to the first (or the first is unknown).
  if (inc.causes.size() >= 2) {
    const CauseCandidate& top = inc.causes[0];
    const CauseCandidate& next = inc.causes[1];
    bool close = top.cause == Cause::unknown ? next.confidence >= 0.3 : next.confidence >= top.confidence - 0.2;
    if (close) {
      out += fmt::format("  or        {} ({:.2f}){}\n", to_string(next.cause), next.confidence,
                         next.evidence.empty() ? "" : ": " + next.evidence.front());
      if (!top.decide_with.empty()) out += fmt::format("  decide    {}\n", top.decide_with);
    }
  }
  if (!inc.evidence.empty()) {
    out += fmt::format("\n  {}\n", p("1", "Evidence"));
    for (const auto& e : inc.evidence) out += fmt::format("    [{}] {}\n      {}\n", e.source, e.where, e.text);
  }
  if (!inc.fixes.empty()) {
    out += fmt::format("\n  {}\n", p("1", "Fixes, least destructive first"));
    int n = 1;
    for (const auto& f : inc.fixes) out += fmt::format("    {}. {}\n       {}\n", n++, f.action, p("2", f.why));
  }
  if (!inc.next_checks.empty()) {
    out += fmt::format("\n  {}\n", p("1", "Next checks"));
    for (const auto& c : inc.next_checks) out += fmt::format("    $ {}\n", c);
  }
}

}  // namespace

std::string render_text(const Diagnosis& d, const TextStyle& style) {
  Paint p{style.color};
  std::string out;
  for (const auto& w : d.warnings) out += fmt::format("{} {}\n", p("33", "warning:"), w);
  if (!d.warnings.empty()) out += "\n";
  if (d.incidents.empty()) {
    std::string since = d.since_us ? " since " + timeutil::format_human(*d.since_us) : " in the evidence given";
    out += fmt::format("{} no memory failure found{}\n", p("32;1", "OK:"), since);
    if (!d.headroom.empty()) {
      out += fmt::format("\n{}\n", p("1", "Headroom"));
      for (const auto& h : d.headroom) {
        std::string line = fmt::format("  {:<44}", h.pool);
        if (h.used && h.capacity) {
          double pct = *h.capacity ? 100.0 * static_cast<double>(*h.used) / static_cast<double>(*h.capacity) : 0;
          line += fmt::format(" {:>10} used of {:>10} ({:.0f}%)", units::format_bytes(*h.used), units::format_bytes(*h.capacity), pct);
        } else if (h.capacity) {
          line += fmt::format(" limit {}", units::format_bytes(*h.capacity));
        } else if (h.used) {
          line += fmt::format(" {} used, no limit", units::format_bytes(*h.used));
        }
        if (h.available) line += fmt::format(", {} available", units::format_bytes(*h.available));
        if (!h.note.empty()) line += "  (" + h.note + ")";
        out += line + "\n";
      }
    }
    for (const auto& n : d.notes) out += fmt::format("{} {}\n", p("2", "note:"), n);
    return out;
  }
  incident_full(out, d.incidents.front(), p, true);
  if (d.incidents.size() > 1) {
    out += fmt::format("\n{} ({})\n", p("1", "Other incidents"), d.incidents.size() - 1);
    for (size_t i = 1; i < d.incidents.size(); ++i) {
      const Incident& inc = d.incidents[i];
      if (style.verbose) {
        out += "\n";
        incident_full(out, inc, p, false);
        continue;
      }
      if (i > 20) {
        out += fmt::format("  ... and {} more (--verbose shows all)\n", d.incidents.size() - i);
        break;
      }
      out += fmt::format("  {}{} / {}: {}\n", inc.time_us ? timeutil::format_human(*inc.time_us) + "  " : "", to_string(inc.layer),
                         to_string(inc.cause), inc.summary);
    }
  }
  for (const auto& n : d.notes) out += fmt::format("{} {}\n", p("2", "note:"), n);
  return out;
}

}  // namespace aimem
