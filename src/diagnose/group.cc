// Grouping facts into incidents.
//
// Failure facts that are one event are put together: lines of one input close
// to each other (a traceback repeats its error; a kernel report spans many
// lines), or close in time; across inputs, facts that name the same process,
// container or pod, or happened within a minute of each other. Context facts
// (limits, settings, GPU state, restarts) join the incident nearest to them in
// the same input; context from an input without any failure describes the
// environment and joins every incident.
#include <algorithm>
#include <cstdlib>
#include <set>

#include "diagnose/internal.h"
#include "core/cgroup_path.h"
#include "core/text.h"

namespace aimem::detail {
namespace {

constexpr uint64_t kLineWindow = 200;
constexpr int64_t kTimeWindowUs = 120'000'000;
constexpr int64_t kCrossSourceUs = 60'000'000;
constexpr int64_t kBurstUs = 10'000'000;

struct Cluster {
  std::vector<size_t> failures;
  std::vector<size_t> context;
  uint32_t source = 0;
  uint64_t first_line = 0, last_line = 0;
  std::optional<int64_t> t_first, t_last;
  std::set<std::string> ids;
  bool merged_away = false;
};

void add_ids(const Fact& f, std::set<std::string>& ids) {
  if (f.pid && *f.pid > 1) ids.insert("pid:" + std::to_string(*f.pid));
  for (const std::string* path : {&f.cgroup, &f.task_cgroup}) {
    if (path->empty()) continue;
    CgroupInfo info = parse_cgroup_path(*path);
    if (info.container_id.size() >= 12) ids.insert("ctr:" + info.container_id.substr(0, 12));
    if (!info.pod_uid.empty()) ids.insert("pod:" + info.pod_uid);
  }
  if (f.container.size() >= 12 && f.container.find_first_not_of("0123456789abcdef") == std::string::npos)
    ids.insert("ctr:" + f.container.substr(0, 12));
  if (!f.pod.empty()) ids.insert("podname:" + f.pod);
}

bool counts_as_failure(const Fact& f) {
  // A pod in CrashLoopBackOff with no reason shown is a failure to explain.
  if (f.kind == FactKind::restarts && f.detail.find("CrashLoopBackOff") != std::string::npos) return true;
  if (!is_failure(f.kind)) return false;
  if (f.kind == FactKind::exit_status) {
    // Exit 0 is context ("OOMKilled with exit 0" is decided by the OOMKilled fact).
    if (f.exit_code && *f.exit_code == 0 && !f.signal) return false;
  }
  return true;
}

bool time_close(const std::optional<int64_t>& a, const std::optional<int64_t>& b, int64_t window) {
  return a && b && std::llabs(*a - *b) <= window;
}

// Failures in one input, in order, joined while they stay close in lines (or
// in time where both are timed); kernel kills join only as one burst in one cgroup.
std::vector<Cluster> cluster_failures(const std::vector<Fact>& facts, const std::vector<size_t>& failures) {
  std::vector<Cluster> clusters;
  for (size_t i : failures) {
    const Fact& f = facts[i];
    Cluster* target = nullptr;
    if (!clusters.empty()) {
      Cluster& c = clusters.back();
      if (c.source == f.where.source_index) {
        bool lines_close = f.where.line <= c.last_line + kLineWindow;
        bool both_timed = c.t_last && f.where.unix_us;
        bool times_close = time_close(c.t_last, f.where.unix_us, kTimeWindowUs);
        // Kernel kills minutes apart are separate incidents even in one file.
        if (both_timed ? times_close : lines_close) target = &c;
        // Two kernel kills are one incident only as one burst in one cgroup.
        if (target && f.kind == FactKind::kernel_oom_kill) {
          for (size_t j : c.failures) {
            const Fact& g = facts[j];
            if (g.kind != FactKind::kernel_oom_kill) continue;
            bool far = g.where.unix_us && f.where.unix_us && std::llabs(*g.where.unix_us - *f.where.unix_us) > kBurstUs;
            bool other_cgroup = !g.cgroup.empty() && !f.cgroup.empty() && g.cgroup != f.cgroup;
            if (far || other_cgroup) target = nullptr;
            break;
          }
        }
      }
    }
    if (!target) {
      clusters.push_back({});
      target = &clusters.back();
      target->source = f.where.source_index;
      target->first_line = f.where.line;
      target->t_first = f.where.unix_us;
    }
    target->failures.push_back(i);
    target->last_line = std::max(target->last_line, f.where.line);
    if (f.where.unix_us) {
      target->t_last = f.where.unix_us;
      if (!target->t_first) target->t_first = f.where.unix_us;
    }
    add_ids(f, target->ids);
  }
  return clusters;
}

// Across inputs: the same process / container / pod, or the same minute.
void merge_across_inputs(std::vector<Cluster>& clusters) {
  for (size_t a = 0; a < clusters.size(); ++a) {
    if (clusters[a].merged_away) continue;
    for (size_t b = a + 1; b < clusters.size(); ++b) {
      if (clusters[b].merged_away || clusters[b].source == clusters[a].source) continue;
      bool shared = std::any_of(clusters[b].ids.begin(), clusters[b].ids.end(),
                                [&](const std::string& id) { return clusters[a].ids.count(id) > 0; });
      bool same_minute = time_close(clusters[a].t_first, clusters[b].t_first, kCrossSourceUs);
      if (!shared && !same_minute) continue;
      auto& A = clusters[a];
      auto& B = clusters[b];
      A.failures.insert(A.failures.end(), B.failures.begin(), B.failures.end());
      A.ids.insert(B.ids.begin(), B.ids.end());
      if (!A.t_first || (B.t_first && *B.t_first < *A.t_first)) A.t_first = B.t_first;
      B.merged_away = true;
    }
  }
}

// Context: the incidents sharing an identity anywhere; else the nearest
// incident in the same input; facts of failure-free inputs are environment.
void attach_context(const std::vector<Fact>& facts, const std::vector<size_t>& context, std::vector<Cluster>& clusters) {
  std::set<uint32_t> sources_with_failures;
  for (auto& c : clusters)
    if (!c.merged_away) sources_with_failures.insert(c.source);
  for (size_t i : context) {
    const Fact& f = facts[i];
    std::set<std::string> ids;
    add_ids(f, ids);
    bool attached = false;
    if (!ids.empty()) {
      for (auto& c : clusters) {
        if (c.merged_away) continue;
        if (std::any_of(ids.begin(), ids.end(), [&](const std::string& id) { return c.ids.count(id) > 0; })) {
          c.context.push_back(i);
          attached = true;
        }
      }
    }
    if (attached) continue;
    // A series of memory figures describes the workload of its whole input,
    // not one failure: every failure of that input ran on that curve.
    // So does where the workload ran (a Kubernetes node, Docker, systemd):
    // every failure of the input ran there.
    if ((is_series(f) && f.family != Family::kernel) || f.kind == FactKind::platform) {
      for (auto& c : clusters)
        if (!c.merged_away && c.source == f.where.source_index) c.context.push_back(i), attached = true;
      if (attached) continue;
    }
    if (!sources_with_failures.count(f.where.source_index)) {
      for (auto& c : clusters)
        if (!c.merged_away) c.context.push_back(i);
      continue;
    }
    Cluster* best = nullptr;
    uint64_t best_distance = UINT64_MAX;
    for (auto& c : clusters) {
      if (c.merged_away || c.source != f.where.source_index) continue;
      uint64_t d = 0;
      if (f.where.line < c.first_line) d = c.first_line - f.where.line;
      else if (f.where.line > c.last_line) d = f.where.line - c.last_line;
      // Settings printed before a failure describe it better than after.
      if (f.where.line > c.last_line) d += d / 2;
      if (d < best_distance) best_distance = d, best = &c;
    }
    if (best) best->context.push_back(i);
  }
}

}  // namespace

std::vector<Incident> group_facts(const std::vector<Fact>& facts) {
  std::vector<size_t> failures, context;
  for (size_t i = 0; i < facts.size(); ++i) (counts_as_failure(facts[i]) ? failures : context).push_back(i);
  // Two kinds of failure are the answer only where no other failure explains
  // the evidence; beside one they are context: a snapshot of the host with
  // RAM and swap used up (host_exhausted: beside a kill, an allocator's error
  // or an exit it is context, as `free` is), and a failure that names no
  // memory (recognize/families/failure_markers.cc), weaker still.
  auto snapshot = [&](size_t i) { return facts[i].kind == FactKind::host_exhausted; };
  auto marker = [&](size_t i) { return facts[i].kind == FactKind::not_memory_failure && facts[i].family == Family::generic; };
  auto demote_beside = [&](auto weak, auto explains) {
    if (std::none_of(failures.begin(), failures.end(), explains)) return;
    for (size_t i : failures)
      if (weak(i)) context.push_back(i);
    failures.erase(std::remove_if(failures.begin(), failures.end(), weak), failures.end());
  };
  demote_beside(snapshot, [&](size_t i) { return !snapshot(i) && !marker(i); });
  demote_beside(marker, [&](size_t i) { return !marker(i); });
  auto order = [&](size_t a, size_t b) {
    const auto &fa = facts[a].where, &fb = facts[b].where;
    if (fa.source_index != fb.source_index) return fa.source_index < fb.source_index;
    return fa.line < fb.line;
  };
  std::stable_sort(failures.begin(), failures.end(), order);
  std::stable_sort(context.begin(), context.end(), order);

  std::vector<Cluster> clusters = cluster_failures(facts, failures);
  merge_across_inputs(clusters);
  attach_context(facts, context, clusters);

  std::vector<Incident> out;
  for (auto& c : clusters) {
    if (c.merged_away) continue;
    Incident inc;
    inc.failures = std::move(c.failures);
    inc.context = std::move(c.context);
    std::sort(inc.failures.begin(), inc.failures.end());
    std::sort(inc.context.begin(), inc.context.end());
    inc.context.erase(std::unique(inc.context.begin(), inc.context.end()), inc.context.end());
    inc.time_us = c.t_first;
    inc.order = (static_cast<uint64_t>(c.source) << 40) | c.first_line;
    out.push_back(std::move(inc));
  }
  return out;
}

}  // namespace aimem::detail
