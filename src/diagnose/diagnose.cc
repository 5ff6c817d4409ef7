#include <algorithm>
#include <fmt/format.h>

#include "core/cgroup_path.h"
#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "diagnose/internal.h"

namespace aimem {
namespace {

// --unit: a failure is the unit's when it names the unit, lies in its cgroup,
// or came from the journal read for it; a failure that says nothing of where
// it ran is not shown as the unit's.
bool of_unit(const Fact& f, const std::string& unit) {
  const std::string name = unit.find('.') == std::string::npos ? unit + ".service" : unit;
  if (f.unit == unit || f.unit == name) return true;
  if (f.where.source == "journal (" + unit + ")") return true;
  auto in = [&](const std::string& cg) {
    return !cg.empty() && (parse_cgroup_path(cg).unit == name || text::ends_with(cg, "/" + name) || text::contains(cg, "/" + name + "/"));
  };
  return in(f.cgroup) || in(f.task_cgroup);
}

enum class Kept { yes, before_since, out_of_scope };

Kept keep(const Fact& f, const DiagnoseOptions& o) {
  if (o.since_us && f.where.unix_us && *f.where.unix_us < *o.since_us) return Kept::before_since;
  if (o.pid && f.pid && *f.pid != *o.pid && is_failure(f.kind)) return Kept::out_of_scope;
  if (!o.cgroup.empty() && is_failure(f.kind) && (!f.cgroup.empty() || !f.task_cgroup.empty())) {
    auto under = [&](const std::string& p) { return !p.empty() && text::starts_with(p, o.cgroup); };
    if (!under(f.cgroup) && !under(f.task_cgroup)) return Kept::out_of_scope;
  }
  if (!o.unit.empty() && is_failure(f.kind) && !of_unit(f, o.unit)) return Kept::out_of_scope;
  return Kept::yes;
}

// What the filters left out, said when nothing is left: an "OK" must not
// hide an incident that --since or a scope filtered away.
void note_left_out(Diagnosis& d, const std::vector<Fact>& before, const std::vector<Fact>& outside,
                   const DiagnoseOptions& o) {
  if (!d.incidents.empty()) return;
  auto count = [](const std::vector<Fact>& facts) { return detail::group_facts(facts).size(); };
  auto incidents = [](size_t n) { return fmt::format("{} incident{}", n, n == 1 ? "" : "s"); };
  if (size_t n = before.empty() ? 0 : count(before))
    d.notes.push_back(fmt::format("{} before --since ({}) {} left out", incidents(n), timeutil::format_human(*o.since_us),
                                  n == 1 ? "was" : "were"));
  std::string scope;
  if (!o.unit.empty()) scope += " --unit " + o.unit;
  if (!o.cgroup.empty()) scope += " --cgroup " + o.cgroup;
  if (o.pid) scope += fmt::format(" --pid {}", *o.pid);
  if (scope.empty()) return;
  // Did anything at all (a journal line, the cgroup's usage, the process) come from the scope?
  const bool matched = std::any_of(d.facts.begin(), d.facts.end(), [&](const Fact& f) {
    if (!o.unit.empty() && of_unit(f, o.unit)) return true;
    if (!o.cgroup.empty() && (text::starts_with(f.cgroup, o.cgroup) || text::starts_with(f.task_cgroup, o.cgroup))) return true;
    return o.pid && f.pid == o.pid;
  });
  size_t n = outside.empty() ? 0 : count(outside);
  if (!matched)
    d.notes.push_back(fmt::format("nothing in the evidence matched{}{}", scope, n ? fmt::format(" ({} outside it not shown)", incidents(n)) : ""));
  else if (n)
    d.notes.push_back(fmt::format("{} outside{} not shown", incidents(n), scope));
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
      // A cgroup's count is its OOM kills; a series' count is its samples.
      if (f.family == Family::cgroup && f.count && *f.count > 0) h.note = fmt::format("{} OOM kills recorded by this cgroup", *f.count);
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

// A failure the program caught and went on from (a CUDA OOM followed by
// "retrying with batch size 32"): every in-process allocation failure of the
// incident has a recovery line of the same input just after it. Kills and
// exits are never handled.
constexpr uint64_t kRecoveryLines = 10, kAlarmLines = 400;

bool handled(const Incident& inc, const std::vector<Fact>& facts) {
  if (inc.failures.empty()) return false;
  for (size_t i : inc.failures) {
    const Fact& f = facts[i];
    const bool jvm = f.kind == FactKind::jvm_heap_oom || f.kind == FactKind::jvm_native_oom;
    if (f.kind != FactKind::gpu_oom && f.kind != FactKind::host_alloc_failure && f.kind != FactKind::js_heap_oom && !jvm) return false;
    bool caught = std::any_of(facts.begin(), facts.end(), [&](const Fact& r) {
      // A broker's alarm clears when its memory falls back, however long
      // after; a build that ends in success had its tests' errors expected.
      const bool passed = r.detail == kTestsPassed;
      if (jvm && !passed) return false;
      const uint64_t reach = r.detail == kAlarmCleared || passed ? kAlarmLines : kRecoveryLines;
      return r.kind == FactKind::recovered && r.where.source_index == f.where.source_index && r.where.line >= f.where.line &&
             r.where.line <= f.where.line + reach;
    });
    if (!caught) return false;
  }
  return true;
}

// A paste mixes prefixes with a year ("2017-10-17 02:41:09", dmesg -T's
// "[Tue Oct 17 02:41:09 2017]") and without one (syslog's "Oct 17 02:41:09",
// journalctl's short format), whose year was guessed from the file's time or
// now. Read as they were guessed, one event's lines land years apart and
// split into separate incidents. Within one input, a guessed year takes the
// year (one either side, whichever is nearest in time) of the dated fact
// nearest to it in the input.
void anchor_guessed_years(std::vector<Fact>& facts) {
  // (input, line, time) of the dated facts, sorted: a guessed one looks up
  // its nearest neighbours by line (facts are bounded by FactStore's caps,
  // and each lookup is a binary search).
  struct Dated {
    uint32_t source;
    uint64_t line;
    int64_t unix_us;
  };
  std::vector<Dated> dated;
  for (const Fact& g : facts)
    if (!g.where.year_guessed && g.where.unix_us) dated.push_back({g.where.source_index, g.where.line, *g.where.unix_us});
  if (dated.empty()) return;
  auto before = [](const Dated& a, const Dated& b) { return a.source != b.source ? a.source < b.source : a.line < b.line; };
  std::sort(dated.begin(), dated.end(), before);
  const int64_t day_us = 86400000000LL;
  auto day_of = [&](int64_t us) { return us >= 0 ? us / day_us : (us - day_us + 1) / day_us; };
  for (Fact& f : facts) {
    if (!f.where.year_guessed || !f.where.unix_us) continue;
    const Dated key{f.where.source_index, f.where.line, 0};
    auto it = std::lower_bound(dated.begin(), dated.end(), key, before);
    const Dated* ref = nullptr;
    if (it != dated.end() && it->source == key.source) ref = &*it;
    if (it != dated.begin() && std::prev(it)->source == key.source &&
        (!ref || key.line - std::prev(it)->line <= ref->line - key.line))
      ref = &*std::prev(it);
    if (!ref) continue;
    const int64_t t = *f.where.unix_us, r = ref->unix_us;
    const timeutil::Civil c = timeutil::civil_from_days(day_of(t));
    if (c.m == 2 && c.d == 29) continue;  // a leap day has no neighbour in most years
    const int64_t in_day = t - day_of(t) * day_us;
    const int64_t y = timeutil::civil_from_days(day_of(r)).y;
    int64_t chosen = t;
    for (int64_t cand : {y - 1, y, y + 1}) {
      int64_t u = timeutil::days_from_civil(cand, c.m, c.d) * day_us + in_day;
      if (std::llabs(u - r) < std::llabs(chosen - r)) chosen = u;
    }
    f.where.unix_us = chosen;
  }
}

// Nothing failed, but a series of memory figures was still climbing when
// the evidence ends (memory_series.cc's kStillClimbing: most steps rose, the
// last sample the highest, the later half still adding a third of the
// growth): a warning on the "no failure" verdict, not a verdict of its own.
// Read as a verdict (a leak developing, layer the figure names) it gained
// three layers and four causes on the training split but lost two healthy
// logs and gained nothing on the validation split (2026-12-07): healthy
// services print climbs too (a warm-up, a cache filling).
std::optional<std::string> developing_growth(const std::vector<Fact>& facts) {
  const Fact* g = nullptr;
  for (const Fact& f : facts) {
    if (f.kind != FactKind::memory_usage || !text::starts_with(f.detail, "growing ") || !text::contains(f.detail, kStillClimbing))
      continue;
    if (f.strength < 0.7f && f.count.value_or(0) < 5) continue;  // a line's shape needs more samples than a named figure
    if (!g || f.strength > g->strength) g = &f;
  }
  if (!g) return std::nullopt;
  std::string what = g->detail.substr(8, g->detail.find(kStillClimbing) - 8);
  return fmt::format("no failure, but memory was still climbing where the evidence ends ({}, {} line {}): a leak or an accumulation "
                     "developing; keep sampling it (aimem watch) until it levels off or fails",
                     what, g->where.source, shown_line(g->where));
}

}  // namespace

Diagnosis diagnose(std::vector<Fact> facts, const DiagnoseOptions& options) {
  Diagnosis d;
  d.live = options.live;
  d.since_us = options.since_us;
  anchor_guessed_years(facts);
  std::vector<Fact> before, outside;  // failures the filters left out
  for (auto& f : facts) {
    Kept k = keep(f, options);
    if (k == Kept::yes) d.facts.push_back(std::move(f));
    else if (is_failure(f.kind)) (k == Kept::before_since ? before : outside).push_back(std::move(f));
  }

  std::vector<Incident> incidents = detail::group_facts(d.facts);
  for (auto& inc : incidents) detail::classify(inc, d.facts);
  std::erase_if(incidents, [&](const Incident& inc) {
    if (!handled(inc, d.facts)) return false;
    const Fact& f = d.facts[inc.failures.front()];
    d.warnings.push_back(fmt::format("a handled out-of-memory at {} line {}: the program caught it and went on ({})", f.where.source,
                                     shown_line(f.where), to_string(inc.layer)));
    return true;
  });

  // The primary incident: a real memory failure before a look-alike before a
  // bare exit status. Facts of one cascade are already one incident (its root
  // fact first), so separate incidents are independent failures: the latest
  // is the one the client just saw. Without times, input order.
  std::stable_sort(incidents.begin(), incidents.end(), [](const Incident& a, const Incident& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.time_us && b.time_us && *a.time_us != *b.time_us) return *a.time_us > *b.time_us;
    return a.order < b.order;
  });

  if (incidents.empty() && !options.exit_code)
    if (auto growth = developing_growth(d.facts)) d.warnings.push_back(std::move(*growth));

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
  note_left_out(d, before, outside, options);
  return d;
}

}  // namespace aimem
