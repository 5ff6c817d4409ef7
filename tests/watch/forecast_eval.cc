// The forecast evaluation harness (issue 19): how early and how right the
// time-to-exhaustion alert is, shape by shape, beside Prometheus'
// predict_linear() over the same series.
//
//   forecast_eval [--check] [--real-only | --replay-only] [--seeds N] [--seed-base B]
//                 [--no-peer-comparison]
//                 [--store FILE.db [--cgroup PATH]]... [--save-real FILE.db] [--verbose]
//
// Fast shapes run as real processes in real cgroup v1 memory cgroups this
// program creates (children of its own memory cgroup, limits of 200-256 MiB)
// and removes, all shapes at once (one cgroup and one sampler thread each):
// each child maps and touches 1 MiB chunks to follow a target curve and gives
// them back with munmap, so usage follows the curve until the kernel kills it
// at the limit. The cgroup's memory.usage_in_bytes is sampled
// every 250 ms; the kill is seen by waitpid within 25 ms. Slow shapes (hours)
// are replayed from series generated here with seeded noise, sampled every
// 15 s as a Prometheus scrape would be.
//
// Recorded timelines: the real runs and the first seed's slow shapes are
// written into one SQLite store by the store's own writer (Store::append, as
// `aimem watch` and `aimem run --record` write it: a Sample per scrape, one
// cgroup per series, an oom_kill event at each kill) and read back by its
// reader (Store::scan_samples, as `aimem report` reads it); the replays from
// the store are the "(store)" rows, and --check asserts they give the same
// first alerts as the series that were recorded. --store FILE.db [--cgroup
// PATH] replays a recording of your own (the kill: the cgroup's oom_kill
// counter or an oom_kill event; else the first sample at the limit).
//
// Each series goes through aimem's AlertEngine with the default policy
// (15 min horizon), as `aimem watch` would feed it. At aimem's first
// forecast alert it reports the lead before exhaustion (the kill, or the
// first sample at the limit) and the error of the predicted time to full
// against the time that really remained; at that same instant it computes
// predict_linear's time to full, (limit - intercept) / slope, over the range
// windows people use. False alarms: forecast alerts on a shape that never
// fills (those in a sawtooth's first ramp, before any drop, shown apart and
// counted too), and the evaluations after the first drop where
// predict_linear(usage[w], 900) >= limit.
//
// predict_linear is Prometheus' formula, reimplemented: promql/functions.go
// (prometheus/prometheus) funcPredictLinear calls linearRegression(samples,
// ts): ordinary least squares with x = (t - ts) in seconds, Kahan-summed
// (kahanSumInc), slope 0 for a constant series; the result is
// intercept + slope * duration, the intercept being the fitted value at the
// evaluation time. The range selector takes the samples in (ts - range, ts]
// (left-open since Prometheus 3.0).
//
// --check asserts issue 19's "done when": on each growing shape the first
// alert comes >= 5 s (fast) or >= 10 min (slow) before exhaustion (every
// run) with the predicted time within 30% of what remained (median over the
// runs), and a median error strictly below predict_linear's over each window;
// no alert on the shapes that never fill (a sawtooth's first ramp included).
// The replays run 100 noise seeds per shape from 1001 (seeds 1-40 were used
// while tuning forecast.cc): near the noise floor aimem's and predict_linear's
// medians differ by one to three points, which 30 runs do not resolve. The
// floor is printed beside them: the error of the noise-free curve's own
// crossing of the limit, what a forecaster that knew the trend exactly would
// make.
// --no-peer-comparison leaves out the comparison with predict_linear, a
// statistic that needs the 100 seeds: the sanitizer build runs the harness for
// its memory safety with 10 seeds (a fifth of the sanitizer suite's time went
// to the 100), every other assertion kept; the release build asserts it all.
// Exit 0 pass, 1 fail, 77 (skip) when the real-cgroup part cannot run here
// and the replays passed.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "watch/alerts.h"
#include "watch/scratch_cgroup.h"
#include "watch/store.h"

namespace {

using aimem::watch::Alert;
using aimem::watch::CgroupSample;
using aimem::watch::Sample;
using aimem::watch::AlertEngine;
using aimem::watch::AlertPolicy;
using aimem::watch::Store;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kNever = std::numeric_limits<double>::infinity();

struct Point {
  int64_t t_us;
  double bytes;
};

struct Case {
  std::string name, source;
  bool fills = true;
  bool fast = true;
  double limit = 0;
  std::vector<Point> series;
  int64_t full_us = -1;        // exhaustion (the kill, or the first sample at the limit)
  int64_t first_drop_us = -1;  // sawtooth: false alarms count after this
  std::vector<std::pair<std::string, double>> windows;  // predict_linear ranges: label, seconds
  std::string note;
  // Replays: the noise-free curve (bytes at t seconds), for the floor below.
  std::function<double(double)> mean;
};

struct Outcome {
  bool alerted = false;
  int64_t alert_us = 0;
  double predicted = 0, low = 0, high = 0, remaining = 0;
  std::string shape, message;
  int false_alarms = 0, first_cycle_alarms = 0;
  std::vector<double> pl_tte;  // at aimem's first alert, per window (kNever: no rising trend)
  // Replays: when the noise-free curve itself reaches the limit, from aimem's
  // first alert: what a forecaster that knew the trend exactly would say.
  double truth_tte = kNever;
  std::vector<int> pl_false;   // evaluations with predict_linear(x[w], 900) >= limit, never-fill shapes
};

// Prometheus' kahanSumInc (promql/functions.go), Neumaier's variant.
void kahan_inc(double inc, double& sum, double& c) {
  double t = sum + inc;
  if (std::isinf(t)) c = 0;
  else if (std::fabs(sum) >= std::fabs(inc)) c += (sum - t) + inc;
  else c += (inc - t) + sum;
  sum = t;
}

// linearRegression(samples in (ts - range, ts], ts): slope per second and
// the fitted value at ts. nullopt with fewer than 2 samples (predict_linear
// drops the series).
std::optional<std::pair<double, double>> prom_regression(const std::vector<Point>& s, int64_t ts, double range_s) {
  const int64_t from = ts - int64_t(range_s * 1e6);
  double n = 0, sx = 0, cx = 0, sy = 0, cy = 0, sxy = 0, cxy = 0, sx2 = 0, cx2 = 0;
  bool const_y = true;
  double first = 0;
  for (const Point& p : s) {
    if (p.t_us <= from || p.t_us > ts) continue;
    if (n == 0) first = p.bytes;
    else if (p.bytes != first) const_y = false;
    n += 1;
    double x = double(p.t_us - ts) / 1e6;  // Prometheus: milliseconds / 1000
    kahan_inc(x, sx, cx);
    kahan_inc(p.bytes, sy, cy);
    kahan_inc(x * p.bytes, sxy, cxy);
    kahan_inc(x * x, sx2, cx2);
  }
  if (n < 2) return std::nullopt;
  if (const_y) return std::make_pair(0.0, first);
  sx += cx, sy += cy, sxy += cxy, sx2 += cx2;
  double cov = sxy - sx * sy / n, var = sx2 - sx * sx / n;
  double slope = cov / var;
  return std::make_pair(slope, sy / n - slope * sx / n);
}

double pl_time_to_full(const std::vector<Point>& s, int64_t ts, double range_s, double limit) {
  auto r = prom_regression(s, ts, range_s);
  if (!r || r->first <= 0) return kNever;
  return std::max(0.0, (limit - r->second) / r->first);
}

Sample cgroup_sample(int64_t t_us, double bytes, double limit) {
  Sample s;
  s.time_us = t_us;
  CgroupSample c;
  c.path = "/eval", c.version = 1;
  c.usage = uint64_t(std::max(0.0, bytes));
  c.limit = uint64_t(limit);
  s.cgroups.push_back(c);
  return s;
}

bool verbose = false;

std::string dur(double s);

Outcome evaluate(const Case& c) {
  Outcome o;
  o.pl_false.assign(c.windows.size(), 0);
  AlertEngine engine(AlertPolicy{});
  const double horizon_s = double(AlertPolicy{}.tte_warn_us) / 1e6;
  for (const Point& p : c.series) {
    if (c.full_us >= 0 && p.t_us >= c.full_us) break;
    for (const Alert& a : engine.observe(cgroup_sample(p.t_us, p.bytes, c.limit))) {
      if (a.key != "tte:cgroup:/eval") continue;
      if (!c.fills) {
        if (c.first_drop_us >= 0 && p.t_us < c.first_drop_us) ++o.first_cycle_alarms;
        else ++o.false_alarms;
        if (verbose) std::fprintf(stderr, "%s at %s: %s\n", c.name.c_str(), dur(double(p.t_us) / 1e6).c_str(), a.message.c_str());
      }
      if (o.alerted) continue;
      o.alerted = true;
      o.alert_us = p.t_us;
      o.predicted = a.tte_s.value_or(0);
      o.low = a.tte_low_s.value_or(0);
      o.high = a.tte_high_s.value_or(kNever);
      o.shape = a.shape;
      o.message = a.message;
      if (c.fills) o.remaining = double(c.full_us - p.t_us) / 1e6;
      for (const auto& [label, w] : c.windows) o.pl_tte.push_back(pl_time_to_full(c.series, p.t_us, w, c.limit));
      if (c.mean && c.fills) {
        // The curves rise from here on: bisect for the crossing.
        double lo = double(p.t_us) / 1e6, hi = double(c.full_us) / 1e6 + 24 * 3600;
        if (c.mean(lo) >= c.limit) hi = lo;
        for (int k = 0; k < 100 && hi - lo > 0.01; ++k) (c.mean((lo + hi) / 2) >= c.limit ? hi : lo) = (lo + hi) / 2;
        o.truth_tte = hi - double(p.t_us) / 1e6;
      }
      if (verbose && c.fills) {
        std::fprintf(stderr, "%s: first alert at %s, predicted %s, really left %s; predict_linear", c.name.c_str(),
                     dur(double(p.t_us) / 1e6).c_str(), dur(o.predicted).c_str(), dur(o.remaining).c_str());
        for (size_t i = 0; i < c.windows.size(); ++i)
          std::fprintf(stderr, " %s %s", c.windows[i].first.c_str(), dur(o.pl_tte[i]).c_str());
        std::fprintf(stderr, "\n");
      }
    }
    if (!c.fills && (c.first_drop_us < 0 || p.t_us >= c.first_drop_us))
      for (size_t i = 0; i < c.windows.size(); ++i)
        if (auto r = prom_regression(c.series, p.t_us, c.windows[i].second))
          if (r->second + r->first * horizon_s >= c.limit) ++o.pl_false[i];
  }
  return o;
}

// ---- real processes in real cgroups -------------------------------------

int64_t now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// The child: joins the cgroup, then holds target(t) MiB (1 MiB chunks,
// mapped and touched, unmapped to shrink) until run_s, then exits 0.
[[noreturn]] void child_main(const std::string& dir, int ready_fd, const std::function<double(double)>& target,
                             double run_s) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  {
    std::ofstream procs(dir + "/cgroup.procs");
    procs << getpid();
  }
  std::vector<void*> chunks;
  chunks.reserve(4096);
  if (write(ready_fd, "x", 1) != 1) _exit(2);
  close(ready_fd);
  const int64_t t0 = now_us();
  for (;;) {
    double t = double(now_us() - t0) / 1e6;
    if (t >= run_s) break;
    size_t want = size_t(std::max(0.0, target(t)));
    while (chunks.size() < want) {
      void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) _exit(3);
      std::memset(p, 1, 1 << 20);
      chunks.push_back(p);
    }
    while (chunks.size() > want) {
      munmap(chunks.back(), 1 << 20);
      chunks.pop_back();
    }
    usleep(10000);
  }
  _exit(0);
}

struct RealSpec {
  std::string name;
  bool fills;
  double limit_mib, run_s;
  std::function<double(double)> target;  // MiB held at t seconds
  std::string note;
};

// Runs one shape; false with a reason when the cgroup or the child fails.
bool run_real(const RealSpec& r, const std::string& tag, Case& c, std::string& why) {
  c.name = r.name;
  c.source = "real cgroup";
  c.fills = r.fills;
  c.fast = true;
  c.limit = r.limit_mib * kMiB;
  c.note = r.note;
  c.windows = {{"30s", 30}, {"1m", 60}};
  aimem::test::ScratchCgroup cg(tag, uint64_t(c.limit));
  if (!cg) {
    why = "no writable cgroup v1 memory controller here (need root and a v1 memory hierarchy)";
    return false;
  }
  int ready[2];
  if (pipe(ready) != 0) return why = "pipe failed", false;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    child_main(cg.dir, ready[1], r.target, r.run_s);
  }
  close(ready[1]);
  char ch;
  bool ok = pid > 0 && read(ready[0], &ch, 1) == 1;
  close(ready[0]);
  if (pid > 0) cg.pids.push_back(pid);
  if (!ok) return why = "the allocator did not start", false;
  const int64_t t0 = now_us();
  int64_t next_sample = t0;
  int status = 0;
  bool exited = false;
  while (!exited && now_us() - t0 < int64_t((r.run_s + 5) * 1e6)) {
    int64_t t = now_us();
    if (t >= next_sample) {
      uint64_t usage = 0;
      std::ifstream(cg.dir + "/memory.usage_in_bytes") >> usage;
      c.series.push_back({t - t0, double(usage)});
      next_sample += 250000;
    }
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      cg.reaped(pid);
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) c.full_us = now_us() - t0;
      break;
    }
    usleep(25000);
  }
  if (!exited) return why = r.name + ": the allocator did not finish", false;
  if (r.fills && c.full_us < 0) return why = r.name + ": expected an OOM kill, the allocator exited " + std::to_string(status), false;
  if (!r.fills && c.full_us >= 0) return why = r.name + ": OOM-killed, but the shape should stay under the limit", false;
  // A sawtooth's first drop, as the samples show it (a tenth of the limit at once).
  for (size_t i = 1; i < c.series.size() && c.first_drop_us < 0; ++i)
    if (c.series[i].bytes < c.series[i - 1].bytes - 0.1 * c.limit) c.first_drop_us = c.series[i].t_us;
  return true;
}

double ramp(double t, double start, double per_s) { return t < start ? 0 : (t - start) * per_s; }

std::vector<RealSpec> real_specs() {
  return {
      {"steady growth", true, 200, 25, [](double t) { return 1 + ramp(t, 3, 20); },
       "idle 3 s, then 20 MiB/s (the issue's case)"},
      {"accelerating growth", true, 200, 30, [](double t) { double u = ramp(t, 3, 1); return 1 + 1.2 * u * u; },
       "idle 3 s, then 1.2 MiB/s^2 (rate doubles every few s)"},
      {"step that stays under", false, 200, 15, [](double t) { return t < 2 ? 1.0 : 120.0; },
       "idle 2 s, then 120 MiB at once, held"},
      {"sawtooth under the limit", false, 200, 24,
       [](double t) { double ph = std::fmod(t, 4.0); return 30 + (ph < 3 ? ph * 33 : 0); },
       "30 -> 130 MiB in 3 s, freed, every 4 s"},
      {"step then growth", true, 256, 30, [](double t) { return t < 2 ? 1 : 100 + ramp(t, 6, 12); },
       "idle 2 s, 100 MiB at once, flat 4 s, then 12 MiB/s"},
  };
}

// ---- replays of slow shapes ----------------------------------------------

Case replay(const std::string& name, bool fills, double limit, double hours, const std::string& note,
            const std::function<double(double)>& mean, double noise_mib, unsigned seed) {
  Case c;
  c.name = name;
  c.source = "replay, 15 s";
  c.fills = fills;
  c.fast = false;
  c.limit = limit;
  c.note = note;
  c.mean = mean;
  c.windows = {{"5m", 300}, {"1h", 3600}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> white(0, 1);
  double ar = 0;  // AR(1) wander (caches, allocator slack), time constant ~5 min
  for (int64_t t = 0; t <= int64_t(hours * 3600 * 1e6); t += 15 * 1000000) {
    ar = 0.95 * ar + std::sqrt(1 - 0.95 * 0.95) * white(rng);
    double v = mean(double(t) / 1e6) + noise_mib * kMiB * (0.8 * ar + 0.6 * white(rng));
    c.series.push_back({t, v});
    if (fills && c.full_us < 0 && v >= limit) c.full_us = t;
  }
  return c;
}

// One run of each slow shape; `seed` varies the noise. Noise: an AR(1)
// wander with a ~5 min time constant (caches, allocator slack) plus white
// noise, sd `noise` MiB together.
std::vector<Case> replay_cases(unsigned seed) {
  const double GiB = 1024 * kMiB, noise = 5;
  std::vector<Case> out;
  out.push_back(replay("slow leak", true, 4 * GiB, 16, "2 GiB + 200 MiB/h",
                       [=](double t) { return 2 * GiB + 200 * kMiB * t / 3600; }, noise, seed));
  out.push_back(replay("accelerating leak", true, 6 * GiB, 8, "3 GiB + 0.5 GiB x (t / 2 h)^2",
                       [=](double t) { double h = t / 7200; return 3 * GiB + 0.5 * GiB * h * h; }, noise, seed + 100));
  out.push_back(replay("step then leak", true, 4 * GiB, 10, "1 GiB, +1.5 GiB at 1 h, then 300 MiB/h",
                       [=](double t) { return GiB + (t >= 3600 ? 1.5 * GiB + 300 * kMiB * (t - 3600) / 3600 : 0); },
                       noise, seed + 200));
  Case saw = replay("slow sawtooth under", false, 4 * GiB, 8, "1.5 GiB + 1 GiB ramp over 15 min, freed every 20 min",
                    [=](double t) { double ph = std::fmod(t, 1200); return 1.5 * GiB + (ph < 900 ? GiB * ph / 900 : 0); },
                    noise, seed + 300);
  saw.first_drop_us = 900LL * 1000000;
  out.push_back(saw);
  out.push_back(replay("step then flat", false, 4 * GiB, 8, "1 GiB, +1.5 GiB at 2 h, flat",
                       [=](double t) { return GiB + (t >= 7200 ? 1.5 * GiB : 0); }, noise, seed + 400));
  return out;
}

// ---- replays of recorded stores -----------------------------------------

// Writes cases into one store as `aimem watch` records a host with several
// cgroups: a Sample per scrape, each case a cgroup "/<index>" with its usage
// and limit (until its series ends). Store::append is the project's writer.
bool write_store(const std::string& path, const std::vector<Case>& cases, std::string& why) {
  auto opened = Store::open(path, aimem::watch::Retention{0, 0});
  if (!opened) return why = opened.error().message, false;
  Store& st = **opened;
  // Merged in time order; the cases that share a time share a Sample.
  std::vector<std::pair<int64_t, size_t>> order;  // (time, case)
  for (size_t k = 0; k < cases.size(); ++k)
    for (const Point& p : cases[k].series) order.emplace_back(p.t_us, k);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> next(cases.size(), 0);
  for (size_t i = 0; i < order.size();) {
    Sample s;
    s.time_us = order[i].first;
    for (; i < order.size() && order[i].first == s.time_us; ++i) {
      const size_t k = order[i].second;
      const Point& p = cases[k].series[next[k]++];
      CgroupSample g = cgroup_sample(p.t_us, p.bytes, cases[k].limit).cgroups.front();
      g.path = "/" + std::to_string(k);
      s.cgroups.push_back(g);
    }
    if (!st.append(s)) return why = path + ": " + st.last_error(), false;
  }
  // A kill as `aimem watch` records it: an oom_kill event naming the cgroup.
  for (size_t k = 0; k < cases.size(); ++k)
    if (cases[k].full_us >= 0 && cases[k].full_us > cases[k].series.back().t_us) {
      aimem::watch::Event ev;
      ev.time_us = cases[k].full_us;
      ev.kind = "oom_kill";
      ev.key = "/" + std::to_string(k);
      ev.body = nlohmann::json{{"cgroup", ev.key}}.dump();
      if (!st.append(ev)) return why = path + ": " + st.last_error(), false;
    }
  return true;
}

// One cgroup's timeline read back from a store (Store::scan_samples, the
// reader `aimem report` uses). Exhaustion is the kill: the cgroup's oom_kill
// counter rising or an oom_kill event naming the cgroup, whichever is first;
// without one, the first sample at the limit. An empty `cgroup` takes the
// first cgroup with a limit.
bool case_from_store(const std::string& path, std::string cgroup, Case& c, std::string& why) {
  auto opened = Store::open(path, aimem::watch::Retention{0, 0});
  if (!opened) return why = opened.error().message, false;
  const Store& st = **opened;
  int64_t t0 = -1, kill_us = -1, at_limit_us = -1;
  std::optional<uint64_t> kills0;
  st.scan_samples(INT64_MIN, INT64_MAX, [&](const Sample& s) {
    for (const CgroupSample& g : s.cgroups) {
      if (cgroup.empty() && g.limit && *g.limit > 0 && *g.limit < (1ULL << 62)) cgroup = g.path;
      if (g.path != cgroup || !g.usage) continue;
      if (t0 < 0) t0 = s.time_us;
      if (g.limit && *g.limit < (1ULL << 62)) c.limit = double(*g.limit);
      c.series.push_back({s.time_us - t0, double(*g.usage)});
      if (g.oom_kill && !kills0) kills0 = g.oom_kill;
      if (g.oom_kill && kills0 && *g.oom_kill > *kills0 && kill_us < 0) kill_us = s.time_us - t0;
      if (g.limit && *g.usage >= *g.limit && at_limit_us < 0) at_limit_us = s.time_us - t0;
    }
    return true;
  });
  if (c.series.size() < 3 || c.limit <= 0)
    return why = path + ": no cgroup " + (cgroup.empty() ? std::string("with a limit") : cgroup) +
                 " with at least 3 samples and a limit",
           false;
  for (const aimem::watch::Event& e : st.events(INT64_MIN, INT64_MAX, "oom_kill")) {
    auto body = nlohmann::json::parse(e.body, nullptr, false);
    if (body.is_object() && body.value("cgroup", nlohmann::json()).is_string() &&
        body["cgroup"].get<std::string>() == cgroup && e.time_us >= t0 && (kill_us < 0 || e.time_us - t0 < kill_us))
      kill_us = e.time_us - t0;
  }
  if (kill_us < 0) kill_us = at_limit_us;  // no kill recorded: the first sample at the limit
  c.name = "store " + cgroup;
  c.source = "store replay";
  c.fills = kill_us >= 0;
  c.full_us = kill_us;
  c.fast = c.series.back().t_us < 3600LL * 1000000;
  c.windows = c.fast ? std::vector<std::pair<std::string, double>>{{"30s", 30}, {"1m", 60}}
                     : std::vector<std::pair<std::string, double>>{{"5m", 300}, {"1h", 3600}};
  for (size_t i = 1; i < c.series.size() && c.first_drop_us < 0; ++i)
    if (c.series[i].bytes < c.series[i - 1].bytes - 0.1 * c.limit) c.first_drop_us = c.series[i].t_us;
  return true;
}

// ---- the table and the checks --------------------------------------------

std::string dur(double s) {
  char buf[32];
  if (!std::isfinite(s)) return "never";
  if (s < 120) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  return buf;
}

// One decimal: two forecasts near the noise floor differ by less than a point.
std::string pct(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * ratio);
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNever;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false, real = true, replays = true, peer_comparison = true;
  // Seeds 1-40 were used while tuning forecast.cc; the table uses others. A
  // hundred runs a shape: near the noise floor the two forecasts' medians
  // differ by a point or two, less than thirty runs resolve.
  int seeds = 100, seed_base = 1000;
  std::vector<std::pair<std::string, std::string>> stores;  // --store FILE [--cgroup PATH]
  std::string save_real;  // --save-real FILE.db: the real runs, recorded as a store
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check") check = true;
    else if (a == "--no-peer-comparison") peer_comparison = false;
    else if (a == "--store" && i + 1 < argc) stores.emplace_back(argv[++i], "");
    else if (a == "--save-real" && i + 1 < argc) save_real = argv[++i];
    else if (a == "--cgroup" && i + 1 < argc && !stores.empty()) stores.back().second = argv[++i];
    else if (a == "--real-only") replays = false;
    else if (a == "--replay-only") real = false;
    else if (a == "--verbose") verbose = true;
    else if (a == "--seeds" && i + 1 < argc) seeds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--seed-base" && i + 1 < argc) seed_base = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--check] [--real-only | --replay-only] [--seeds N] [--seed-base B] [--no-peer-comparison] [--verbose]\n"
                   "          [--store FILE.db [--cgroup PATH]]... [--save-real FILE.db]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<Case> cases;
  std::string skipped;
  if (real) {
    // The shapes run at once, each in its own cgroup with its own sampler
    // thread: the allocators sleep between 1 MiB steps and the samplers
    // between reads, so together they load two cores less than one sanitizer
    // test does, and the harness takes as long as its longest shape (30 s)
    // instead of the sum (about 90 s; ctest runs it alone, RUN_SERIAL).
    const std::vector<RealSpec> specs = real_specs();
    std::vector<Case> runs(specs.size());
    std::vector<std::string> whys(specs.size());
    std::vector<char> ran(specs.size(), 0);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < specs.size(); ++i) {
      std::fprintf(stderr, "running %s (%s)...\n", specs[i].name.c_str(), specs[i].note.c_str());
      threads.emplace_back([&, i] { ran[i] = run_real(specs[i], "forecast" + std::to_string(i), runs[i], whys[i]); });
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!ran[i]) {
        if (whys[i].rfind("no writable", 0) == 0) {
          skipped = whys[i];
          cases.clear();
          break;
        }
        std::fprintf(stderr, "forecast_eval: %s\n", whys[i].c_str());
        return 1;
      }
      cases.push_back(std::move(runs[i]));
    }
  }
  if (!save_real.empty() && !cases.empty()) {
    std::string why;
    if (!write_store(save_real, cases, why)) {
      std::fprintf(stderr, "forecast_eval: %s\n", why.c_str());
      return 1;
    }
    std::fprintf(stderr, "recorded the real runs into %s (cgroups /0-/%zu)\n", save_real.c_str(), cases.size() - 1);
  }
  if (replays)
    for (int seed = 1; seed <= seeds; ++seed)
      for (Case& c : replay_cases(unsigned(seed_base + seed))) cases.push_back(std::move(c));
  // The slow shapes of the first seed again, recorded into a store by the
  // store's writer and read back by its reader: a replay must see what the
  // series held (the same first alert, to the microsecond and the byte).
  std::vector<std::pair<size_t, size_t>> round_trips;  // (case from the store, the same series in memory)
  if (replays || !cases.empty()) {
    char tmpl[] = "/tmp/aimem-forecast-eval-XXXXXX";
    if (!mkdtemp(tmpl)) {
      std::fprintf(stderr, "forecast_eval: mkdtemp: %s\n", std::strerror(errno));
      return 1;
    }
    const std::string db = std::string(tmpl) + "/recorded.db";
    std::vector<Case> slow;  // the real runs and the first seed's replays, recorded together
    for (const Case& c : cases)
      if (c.source == "real cgroup") slow.push_back(c);
    if (replays)
      for (Case& c : replay_cases(unsigned(seed_base + 1))) slow.push_back(std::move(c));
    std::string why;
    bool ok = write_store(db, slow, why);
    for (size_t k = 0; ok && k < slow.size(); ++k) {
      Case c;
      ok = case_from_store(db, "/" + std::to_string(k), c, why);
      c.name = slow[k].name + " (store)";
      c.note = slow[k].note;
      c.fast = slow[k].fast;
      if (!slow[k].fills) c.first_drop_us = slow[k].first_drop_us;  // the replay's own marker
      round_trips.emplace_back(cases.size(), size_t(-1));
      for (size_t j = 0; j < cases.size(); ++j)
        if (cases[j].name == slow[k].name) {
          round_trips.back().second = j;  // seed_base + 1: the first of its shape
          break;
        }
      cases.push_back(std::move(c));
    }
    for (const char* f : {"/recorded.db", "/recorded.db-wal", "/recorded.db-shm"}) unlink((std::string(tmpl) + f).c_str());
    rmdir(tmpl);
    if (!ok) {
      std::fprintf(stderr, "forecast_eval: store replay: %s\n", why.c_str());
      return 1;
    }
  }
  for (const auto& [path, cgroup] : stores) {
    Case c;
    std::string why;
    if (!case_from_store(path, cgroup, c, why)) {
      std::fprintf(stderr, "forecast_eval: %s\n", why.c_str());
      return 1;
    }
    c.name += " (" + path + ")";
    cases.push_back(std::move(c));
  }

  // Runs of one shape (the replays' seeds) are reported together.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<const Case*, Outcome>>> by_shape;
  std::vector<Outcome> outcomes;
  for (const Case& c : cases) {
    outcomes.push_back(evaluate(c));
    if (!by_shape.count(c.name)) order.push_back(c.name);
    by_shape[c.name].emplace_back(&c, outcomes.back());
  }

  int failures = 0;
  std::vector<std::string> failed, messages;
  auto fail = [&](const std::string& name, const std::string& what) {
    failed.push_back("FAIL " + name + ": " + what);
    ++failures;
  };
  std::printf("| shape | series (runs) | fills | first aimem alert: lead (min) | predicted / really left (median) "
              "| aimem error: median (max) | predict_linear error: median | false alarms: aimem / predict_linear (evaluations) |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const std::string& name : order) {
    const auto& runs = by_shape[name];
    const Case& c0 = *runs.front().first;
    const size_t nw = c0.windows.size();
    char buf[512];
    if (c0.fills) {
      std::vector<double> lead, err, pred, left, truth;
      std::vector<std::vector<double>> pl(nw);
      int missed = 0;
      for (const auto& [c, o] : runs) {
        if (!o.alerted) {
          ++missed;
          continue;
        }
        lead.push_back(o.remaining);
        pred.push_back(o.predicted);
        left.push_back(o.remaining);
        err.push_back(std::fabs(o.predicted - o.remaining) / o.remaining);
        if (std::isfinite(o.truth_tte)) truth.push_back(std::fabs(o.truth_tte - o.remaining) / o.remaining);
        for (size_t i = 0; i < nw; ++i)
          pl[i].push_back(std::isfinite(o.pl_tte[i]) ? std::fabs(o.pl_tte[i] - o.remaining) / o.remaining : kNever);
        if (messages.size() < 16 && c == runs.front().first && c->source != "store replay")
          messages.push_back(name + ": " + o.message);
      }
      std::string pls;
      for (size_t i = 0; i < nw; ++i) {
        double m = median(pl[i]);
        std::snprintf(buf, sizeof buf, "%s%s %s", i ? ", " : "", c0.windows[i].first.c_str(),
                      std::isfinite(m) ? pct(m).c_str() : "no trend");
        pls += buf;
      }
      // The floor: the noise-free curve's own crossing misses the noisy
      // series' first sample at the limit by this much.
      if (!truth.empty()) pls += "; the true curve " + pct(median(truth));
      double min_lead = lead.empty() ? 0 : *std::min_element(lead.begin(), lead.end());
      double max_err = err.empty() ? kNever : *std::max_element(err.begin(), err.end());
      std::snprintf(buf, sizeof buf, "| %s | %s (%zu) | yes | %s%s | %s / %s | %s (%s) | %s | |\n", name.c_str(),
                    c0.source.c_str(), runs.size(), lead.empty() ? "no alert" : dur(min_lead).c_str(),
                    missed ? (" +" + std::to_string(missed) + " without alert").c_str() : "",
                    dur(median(pred)).c_str(), dur(median(left)).c_str(), pct(median(err)).c_str(), pct(max_err).c_str(),
                    pls.c_str());
      std::printf("%s", buf);
      if (check) {
        double need = c0.fast ? 5 : 600;
        if (missed) fail(name, std::to_string(missed) + " runs without a forecast alert before exhaustion");
        if (!lead.empty() && min_lead < need) fail(name, "a first alert came only " + dur(min_lead) + " before exhaustion");
        if (median(err) > 0.30) fail(name, "median error " + std::to_string(int(100 * median(err))) + "%");
        // Strictly lower, over the runs of each shape (a single store
        // replay repeats the first run of its shape's row).
        for (size_t i = 0; peer_comparison && i < nw && c0.source != "store replay"; ++i)
          if (!(median(err) < median(pl[i])))
            fail(name, "predict_linear over " + c0.windows[i].first + " was as close or closer");
      }
    } else {
      int fa = 0, first = 0;
      std::vector<int> plf(nw, 0);
      for (const auto& [c, o] : runs) {
        fa += o.false_alarms, first += o.first_cycle_alarms;
        for (size_t i = 0; i < nw; ++i) plf[i] += o.pl_false[i];
      }
      std::string pls;
      for (size_t i = 0; i < nw; ++i) pls += (i ? ", " : "") + c0.windows[i].first + " " + std::to_string(plf[i]);
      std::string extra = first ? " (+" + std::to_string(first) + " in the first ramp)" : "";
      std::printf("| %s | %s (%zu) | no | | | | | %d%s / %s |\n", name.c_str(), c0.source.c_str(), runs.size(), fa,
                  extra.c_str(), pls.c_str());
      if (check && fa + first) fail(name, std::to_string(fa + first) + " forecast alerts on a shape that never fills");
    }
  }
  for (const auto& [from_store, in_memory] : round_trips) {
    const Outcome &a = outcomes[from_store], *b = in_memory < outcomes.size() ? &outcomes[in_memory] : nullptr;
    // A replay counts time from the cgroup's first sample, which a real run
    // took a few microseconds after its start: that much either way.
    bool same = b && a.alerted == b->alerted && std::llabs(a.alert_us - b->alert_us) <= 100 &&
                std::fabs(a.predicted - b->predicted) < 1e-3 && a.message == b->message &&
                a.false_alarms == b->false_alarms && std::fabs(a.remaining - b->remaining) < 1e-3;
    if (check && !same)
      fail(cases[from_store].name,
           "the store replay differs from the series it recorded: " +
               (b ? "first alert at " + std::to_string(a.alert_us) + " us (" + std::to_string(b->alert_us) +
                        "), predicted " + dur(a.predicted) + " (" + dur(b->predicted) + "), left " + dur(a.remaining) +
                        " (" + dur(b->remaining) + "), false alarms " + std::to_string(a.false_alarms) + " (" +
                        std::to_string(b->false_alarms) + ")"
                  : std::string("no such series")));
  }
  std::printf("\nFirst alerts, as aimem words them:\n");
  for (const std::string& m : messages) std::printf("    %s\n", m.c_str());
  for (const std::string& f : failed) std::printf("%s\n", f.c_str());
  if (!skipped.empty()) std::printf("\nreal-cgroup shapes skipped: %s\n", skipped.c_str());
  if (failures) return 1;
  return skipped.empty() || !real ? 0 : 77;
}
