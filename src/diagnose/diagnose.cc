#include <algorithm>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "diagnose/internal.h"

namespace aimem {
namespace {

bool keep(const Fact& f, const DiagnoseOptions& o) {
  if (o.since_us && f.where.unix_us && *f.where.unix_us < *o.since_us) return false;
  if (o.pid && f.pid && *f.pid != *o.pid && is_failure(f.kind)) return false;
  if (!o.cgroup.empty() && is_failure(f.kind) && (!f.cgroup.empty() || !f.task_cgroup.empty())) {
    auto under = [&](const std::string& p) { return !p.empty() && text::starts_with(p, o.cgroup); };
    if (!under(f.cgroup) && !under(f.task_cgroup)) return false;
  }
  return true;
}

Fact exit_code_fact(int code) {
  Fact f;
  f.kind = FactKind::exit_status;
  f.family = Family::cli;
  f.where.source = "--exit-code";
  f.where.source_index = UINT32_MAX;
  f.exit_code = code;
  if (code > 128 && code < 160) f.signal = code - 128;
  f.text = fmt::format("the client saw exit code {}", code);
  f.strength = 0.3f;
  return f;
}

void headroom_from_context(Diagnosis& d) {
  for (const Fact& f : d.facts) {
    Headroom h;
    if (f.kind == FactKind::host_state && f.total) {
      h.pool = f.detail.empty() ? "host RAM" : f.detail;
      h.capacity = f.total;
      h.available = f.free;
      if (f.total && f.free && *f.total >= *f.free) h.used = *f.total - *f.free;
      if (f.usage) h.used = f.usage;
    } else if (f.kind == FactKind::memory_usage && (f.limit || f.usage)) {
      h.pool = !f.cgroup.empty() ? "cgroup " + f.cgroup : !f.container.empty() ? "container " + f.container : f.detail;
      h.capacity = f.limit;
      h.used = f.usage;
      if (f.limit && f.usage && *f.limit >= *f.usage) h.available = *f.limit - *f.usage;
      if (f.count && *f.count > 0) h.note = fmt::format("{} OOM kills recorded by this cgroup", *f.count);
    } else if (f.kind == FactKind::gpu_state && f.total) {
      h.pool = f.gpu ? fmt::format("GPU {}", *f.gpu) : "GPU";
      if (!f.process.empty()) h.pool += " (" + f.process + ")";
      h.capacity = f.total;
      h.used = f.usage;
      h.available = f.free;
      if (!h.available && f.usage && *f.total >= *f.usage) h.available = *f.total - *f.usage;
    } else {
      continue;
    }
    if (h.pool.empty()) continue;
    h.pool = text::printable(h.pool);  // cgroup, container and process names come from outside
    bool dup = std::any_of(d.headroom.begin(), d.headroom.end(), [&](const Headroom& x) { return x.pool == h.pool; });
    if (!dup) d.headroom.push_back(std::move(h));
    if (d.headroom.size() >= 32) break;
  }
}

}  // namespace

Diagnosis diagnose(std::vector<Fact> facts, const DiagnoseOptions& options) {
  Diagnosis d;
  d.live = options.live;
  d.since_us = options.since_us;
  for (auto& f : facts)
    if (keep(f, options)) d.facts.push_back(std::move(f));

  std::vector<Incident> incidents = detail::group_facts(d.facts);
  for (auto& inc : incidents) detail::classify(inc, d.facts);

  // The primary incident: a real memory failure before a look-alike before a
  // bare exit status. Facts of one cascade are already one incident (its root
  // fact first), so separate incidents are independent failures: the latest
  // is the one the client just saw. Without times, input order.
  std::stable_sort(incidents.begin(), incidents.end(), [](const Incident& a, const Incident& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.time_us && b.time_us && *a.time_us != *b.time_us) return *a.time_us > *b.time_us;
    return a.order < b.order;
  });

  // What the client saw joins the primary incident, or stands alone.
  if (options.exit_code) {
    d.facts.push_back(exit_code_fact(*options.exit_code));
    size_t idx = d.facts.size() - 1;
    if (incidents.empty()) {
      // Only what the client saw: every context fact describes its environment.
      Incident inc;
      inc.failures.push_back(idx);
      for (size_t i = 0; i + 1 < d.facts.size(); ++i) inc.context.push_back(i);
      incidents.push_back(std::move(inc));
    } else {
      // It joins as a weak failure: it decides nothing that the evidence
      // decides, but a bare exit status is read with the rest.
      incidents.front().failures.push_back(idx);
    }
    for (auto& inc : incidents) {
      inc.reasons.clear();
      detail::classify(inc, d.facts);
    }
  }
  for (auto& inc : incidents) detail::advise(inc, d.facts);

  d.incidents = std::move(incidents);
  if (!d.incidents.empty()) {
    const Incident& p = d.incidents.front();
    d.layer = p.layer;
    d.cause = p.cause;
    d.confidence = p.confidence;
  }
  headroom_from_context(d);
  return d;
}

}  // namespace aimem
