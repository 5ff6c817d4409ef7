// See watcher.h.
#include "watch/watcher.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <fmt/format.h>

#include "core/cgroup_path.h"
#include "core/text.h"
#include "core/time.h"
#include "diagnose/diagnosis.h"
#include "evidence/store.h"
#include "recognize/scanner.h"
#include "sources/live.h"
#include "sources/readfile.h"
#include "sources/cgroup_ctl.h"
#include "watch/exporter.h"
#include "watch/http_server.h"
#include "watch/oom_ledger.h"
#include "sources/oom_notify.h"
#include "watch/sample_json.h"
#include "sources/sampler.h"
#include "watch/scrape.h"
#include "watch/trend.h"
#include "watch/trend_diag.h"
#include "watch/trim.h"

namespace aimem::watch {
namespace {

constexpr size_t kRetentionEvery = 64;  // appends between retention passes

// The samples of the last `window` microseconds, for the trend analysis and
// the cgroup counters of an OOM event (neither reads processes, which the
// store keeps), bounded in count and in bytes: at 10 Hz the default 5 minutes
// of whole samples (50 processes each) held 7 MiB, more than the rest of
// aimem watch (issue #4: under 10 MiB), and a node with hundreds of pods has
// a cgroup sample per pod. Over either bound the older half is thinned, so
// the span is kept at a coarser step.
class Window {
 public:
  static constexpr size_t kMaxWindow = 600;
  static constexpr size_t kMaxBytes = 384 << 10;
  explicit Window(int64_t span_us) : span_us_(span_us) {}
  void add(const Sample& s) {
    Sample slim;
    slim.time_us = s.time_us;
    slim.host = s.host;
    slim.cgroups = s.cgroups;
    slim.gpus = s.gpus;
    slim.servers = s.servers;
    std::lock_guard<std::mutex> lock(mu_);
    bytes_ += footprint(slim);
    samples_.push_back(std::move(slim));
    while (!samples_.empty() && samples_.front().time_us < s.time_us - span_us_) {
      bytes_ -= footprint(samples_.front());
      samples_.pop_front();
    }
    while (samples_.size() > 8 && (samples_.size() > kMaxWindow || bytes_ > kMaxBytes)) {
      std::deque<Sample> thin;
      bytes_ = 0;
      for (size_t i = 0; i < samples_.size(); ++i)
        if (i % 2 == 0 || i >= samples_.size() / 2) {
          bytes_ += footprint(samples_[i]);
          thin.push_back(std::move(samples_[i]));
        }
      samples_ = std::move(thin);
    }
  }
  std::vector<Sample> copy() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {samples_.begin(), samples_.end()};
  }
  // What a sample holds on the heap, near enough to bound the window.
  static size_t footprint(const Sample& s) {
    size_t n = sizeof(Sample) + 64;
    for (const auto& c : s.cgroups) n += sizeof c + c.path.capacity() + c.pod_uid.capacity() + c.container_id.capacity();
    for (const auto& g : s.gpus) n += sizeof g + g.name.capacity() + g.uuid.capacity();
    for (const auto& v : s.servers) n += sizeof v + v.target.capacity() + v.kind.capacity() + v.problem.capacity() + v.custom.size() * 96;
    return n;
  }

 private:
  int64_t span_us_;
  mutable std::mutex mu_;
  std::deque<Sample> samples_;
  size_t bytes_ = 0;
};

// Samples keep the largest processes and every one that matters to AI
// serving (a role, GPU memory): a host of 1,000 processes sampled whole would
// fill the default 256 MiB in hours, and the small ones say nothing.
constexpr size_t kStoredProcesses = 50;
void trim_processes(Sample& s, size_t keep) {
  if (s.processes.size() <= keep) return;
  std::vector<ProcessSample> kept;
  for (const ProcessSample* p : notable_processes(s, keep)) kept.push_back(*p);
  s.processes = std::move(kept);
}

std::string event_key(const std::string& cgroup) {
  CgroupInfo info = parse_cgroup_path(cgroup);
  if (!info.pod_uid.empty()) return "pod:" + info.pod_uid;
  if (!info.container_id.empty()) return "container:" + info.container_id;
  return cgroup.empty() ? "host" : "cgroup:" + cgroup;
}

// What the first sample shows of the scope asked for: a --cgroup or --pid
// that does not exist, a --scrape target that does not answer. Said once, on
// stderr; watch goes on (a cgroup or a server may come up later).
void warn_about_scope(const WatchOptions& o, const MemoryHierarchy& h, const Sample& s) {
  if (!o.cgroup.empty()) {
    bool found = std::any_of(s.cgroups.begin(), s.cgroups.end(), [&](const CgroupSample& c) {
      return c.path == o.cgroup || text::starts_with(c.path, o.cgroup + "/");
    });
    if (!found)
      fmt::print(stderr, "aimem watch: warning: --cgroup {}: no such memory cgroup{}; watching in case it appears\n",
                 text::printable(o.cgroup), h.version ? " under " + h.mount : " (no memory controller is mounted)");
  }
  if (o.pid && ::kill(*o.pid, 0) != 0 && errno == ESRCH)
    fmt::print(stderr, "aimem watch: warning: --pid {}: no such process; nothing of it will be sampled\n", *o.pid);
  for (const ServerSample& srv : s.servers)
    if (!srv.up)
      fmt::print(stderr, "aimem watch: warning: --scrape {}: not reachable ({}); trying again at every sample\n",
                 text::printable(srv.target), text::printable(srv.problem.empty() ? "no answer" : srv.problem));
}

// The OOM counters (v2 memory.events, v1 oom_control and failcnt) and the
// peak of one cgroup, through the sampler's own cgroup reader.
nlohmann::json read_oom_counters(const std::string& root, const std::string& cgroup) {
  SamplerOptions so;
  so.root = root;
  so.cgroup = cgroup;
  so.all_cgroups = false;
  so.processes = false;
  so.gpus = false;
  nlohmann::json out = nlohmann::json::object();
  for (const CgroupSample& c : Sampler(so).sample().cgroups) {
    if (c.path != cgroup) continue;
    if (c.oom) out["oom"] = *c.oom;
    if (c.oom_kill) out["oom_kill"] = *c.oom_kill;
    if (c.max_events || c.failcnt) out["max_events"] = c.max_events ? *c.max_events : *c.failcnt;
    if (c.version == 1) out["under_oom"] = c.under_oom ? 1 : 0;
    if (c.peak) out["peak"] = *c.peak;
  }
  return out;
}

}  // namespace

std::optional<std::pair<std::string, int>> split_listen(const std::string& listen) {
  std::string host = "127.0.0.1", port = listen;
  size_t colon = listen.rfind(':');
  if (colon != std::string::npos && !(listen.front() == '[' && listen.find(']', colon) != std::string::npos)) {
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "127.0.0.1";
  }
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int p = std::atoi(port.c_str());
  if (p > 65535) return std::nullopt;
  return std::make_pair(host, p);
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || text::starts_with(host, "127.");
}

Event diagnose_oom_report(const std::string& root, const KernelOomReport& report, const std::vector<Sample>& window,
                          const DiagnosisJson& to_json, const std::vector<TrendFinding>& known) {
  FactStore facts;
  SourceContext ctx;
  ctx.name = "/dev/kmsg";
  ctx.reference_us = report.time_us;
  {
    LineScanner scanner(ctx, facts);
    timeutil::LineTime t;
    t.unix_us = report.time_us;
    for (const auto& line : report.lines) scanner.feed_record(line, t);
    scanner.finish();
  }
  // The cgroup's limit, usage, peak and OOM counters, read while it exists.
  const std::string cgroup = !report.oom_memcg.empty() ? report.oom_memcg : report.task_memcg;
  nlohmann::json counters = nullptr;
  if (!cgroup.empty() && cgroup != "/") {
    CgroupScan scan = scan_cgroups(root, cgroup, false, facts);
    counters = {{"found", scan.found && scan.cgroups > 0}, {"version", scan.version}};
    // The counters as they are now, a moment after the kill: a container
    // that restarts within a second takes its cgroup with it.
    nlohmann::json now_j = read_oom_counters(root, cgroup);
    if (!now_j.empty()) counters["at_kill"] = now_j;
    // The sampler's view of the same cgroup at its last sample before the kill.
    // Samples the OOM notification triggered may already count this kill, and
    // the kernel record's wall time is derived from the boot clock (off by a
    // few milliseconds): a sample whose oom_kill counter already reached the
    // value read now was taken after this kill, whatever its time says.
    std::optional<int64_t> kills_now;
    if (now_j.contains("oom_kill") && now_j["oom_kill"].is_number()) kills_now = now_j["oom_kill"].get<int64_t>();
    for (auto it = window.rbegin(); it != window.rend(); ++it) {
      if (it->time_us >= report.time_us) continue;
      bool hit = false;
      for (const auto& c : it->cgroups)
        if (c.path == cgroup) {
          if (kills_now && c.oom_kill && int64_t(*c.oom_kill) >= *kills_now) break;  // after the kill: look further back
          auto opt = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
          counters["last_sample"] = {{"time_us", it->time_us}, {"usage", opt(c.usage)}, {"limit", opt(c.limit)},
                                     {"peak", opt(c.peak)}, {"oom_kill", opt(c.oom_kill)}, {"oom", opt(c.oom)},
                                     {"max_events", opt(c.max_events ? c.max_events : c.failcnt)}};
          hit = true;
          break;
        }
      if (hit) break;
    }
  }
  DiagnoseOptions d;
  d.live = true;
  Diagnosis diag = diagnose(std::move(facts.facts()), d);
  std::vector<TrendFinding> trend = analyse(window);
  trend.insert(trend.begin(), known.begin(), known.end());
  for (const auto& f : trend)
    if (!f.summary.empty() && f.pool_id == "cgroup:" + cgroup) diag.notes.push_back(f.summary);
  if (!cgroup.empty()) apply_trend(diag, trend, "cgroup:" + cgroup);
  // memory.events deltas against the last sample before the kill.
  if (counters.is_object() && counters.contains("at_kill") && counters.contains("last_sample")) {
    nlohmann::json deltas = nlohmann::json::object();
    for (const char* k : {"oom_kill", "oom", "max_events"}) {
      const auto& a = counters["at_kill"];
      const auto& b = counters["last_sample"];
      if (a.contains(k) && b.contains(k) && a[k].is_number() && b[k].is_number())
        deltas[k] = a[k].get<int64_t>() - b[k].get<int64_t>();
    }
    counters["deltas"] = deltas;
  }
  Event ev;
  ev.time_us = report.time_us;
  ev.kind = "oom_kill";
  ev.key = event_key(cgroup);
  ev.summary = !diag.incidents.empty() ? diag.incidents.front().summary
                                       : text::printable(fmt::format("the kernel killed {} (pid {})", report.comm, report.pid.value_or(0)));
  nlohmann::json body;
  body["diagnosis"] = diagnosis_body(to_json, diag);
  body["cgroup"] = cgroup.empty() ? nlohmann::json(nullptr) : nlohmann::json(cgroup);
  body["counters"] = counters;
  body["window_samples"] = window.size();
  if (!window.empty()) body["window_from_us"] = window.front().time_us;
  body["kernel_report"] = report.lines;
  ev.body = body.dump();
  return ev;
}

namespace {

// What the loop's parts share: the outputs, the window of samples, and the
// ledger that makes one kill one event.
struct Shared {
  explicit Shared(const WatchOptions& options)
      : o(options),
        window(options.oom_window_us),
        // A step waits 5 s for the kernel's report (a global OOM's report,
        // printed with its task dump, can come late); the report's credits
        // wait two intervals for the step a sample shows.
        ledger(5LL * 1000000, std::max<int64_t>(30LL * 1000000, 2 * options.interval_us + 5LL * 1000000)) {}
  const WatchOptions& o;
  std::unique_ptr<Store> store;
  Window window;
  uint64_t oom_events = 0;
  bool sample_now = false;
  OomLedger ledger;
  // The last OOM notification of each cgroup (its source and time): told in
  // the kill's event, as it is no event of its own.
  std::map<std::string, std::pair<std::string, int64_t>> notified;

  void append(const Event& ev) {
    if (store) store->append(ev);
  }
};

// Opens the store, the scrape targets and the /metrics server (its bound
// port in st.port).
Result<bool> open_outputs(Shared& sh, std::vector<ScrapeTarget>& targets, MetricsServer& server, WatchStatus& st) {
  const WatchOptions& o = sh.o;
  auto fail = [](std::string problem) { return make_error(std::move(problem)); };
  if (o.store) {
    auto opened = Store::open(o.db.empty() ? default_store_path() : o.db, o.retention);
    if (!opened) return fail(opened.error().message);
    sh.store = std::move(*opened);
    sh.store->set_meta("watch_started_us", std::to_string(timeutil::now_us()));
  }
  for (const auto& spec : o.scrape) {
    auto t = parse_target(spec);
    if (!t) return fail(t.error().message);
    targets.push_back(std::move(*t));
  }
  if (o.serve) {
    auto listen = split_listen(o.listen);
    if (!listen)
      return fail(fmt::format("--listen {}: expected HOST:PORT, [IPV6]:PORT or PORT, with a port from 0 to 65535", o.listen));
    auto [host, port] = *listen;
    if (auto started = server.start(host, port); !started)
      return fail(fmt::format("cannot serve metrics on {}: {}", o.listen, started.error().message));
    st.port = server.port();
  }
  return true;
}

// The OOM notification of `cgroup` (or of an ancestor: v1 notifies the
// limited cgroup) within 10 s of `time_us`, as the kill's event tells it.
nlohmann::json notification_of(const Shared& sh, const std::string& cgroup, int64_t time_us) {
  for (const std::string& c : cgroup_and_ancestors(cgroup))
    if (auto it = sh.notified.find(c); it != sh.notified.end() && std::llabs(it->second.second - time_us) < 10LL * 1000000)
      return {{"cgroup", c}, {"source", it->second.first}, {"time_us", it->second.second}};
  return nullptr;
}

// The kernel log's records ready now: each completed OOM report is
// diagnosed at once, with the window of samples before it. Every report
// goes into the ledger, so the counter steps of its kill are no second event.
void read_kernel_log(Shared& sh, KmsgFollower& follower) {
  const WatchOptions& o = sh.o;
  for (const auto& report : follower.poll(0)) {
    sh.ledger.kernel_report(report.oom_memcg, report.task_memcg, timeutil::now_us());
    // Scoped to a cgroup subtree: kills elsewhere on the host are not ours.
    if (!o.cgroup.empty() && !text::starts_with(report.oom_memcg, o.cgroup) &&
        !text::starts_with(report.task_memcg, o.cgroup))
      continue;
    Event ev = diagnose_oom_report(o.root, report, sh.window.copy(), o.diagnosis_json);
    const std::string cgroup = !report.oom_memcg.empty() ? report.oom_memcg : report.task_memcg;
    if (nlohmann::json note = notification_of(sh, cgroup, timeutil::now_us()); !note.is_null()) {
      nlohmann::json body = nlohmann::json::parse(ev.body, nullptr, false);
      if (body.is_object()) {
        body["notification"] = std::move(note);
        ev.body = body.dump();
      }
    }
    fmt::print(stderr, "aimem watch: OOM kill: {}\n", ev.summary);
    sh.append(ev);
    ++sh.oom_events;
  }
}

// The OOM notifications ready now (v1 eventfd, v2 inotify): the cgroup's
// counters are read at once, before the cgroup can go, into the ledger, and
// a sample is taken now when they stepped. The PSI trigger is one too (at
// most one pressure event a minute; each one also samples now).
void read_notifications(Shared& sh, OomNotifier& notifier, const MemoryHierarchy& hierarchy, int64_t& last_pressure_us) {
  const WatchOptions& o = sh.o;
  std::set<std::string> paths;
  for (auto& p : notifier.wait(0)) paths.insert(std::move(p));
  for (const auto& path : paths) {
    int64_t now = timeutil::now_us();
    if (path == OomNotifier::kPressure) {
      sh.sample_now = true;
      if (now - last_pressure_us < 60LL * 1000000) continue;
      last_pressure_us = now;
      Event ev;
      ev.time_us = now;
      ev.kind = "pressure";
      ev.key = "host";
      auto psi = read_small_file((o.root == "/" ? "" : o.root) + "/proc/pressure/memory");
      ev.summary = "memory pressure: tasks stalled on memory for over 150 ms within 2 s (PSI trigger)";
      ev.body = nlohmann::json{{"psi", psi ? *psi : ""}}.dump();
      sh.append(ev);
      continue;
    }
    nlohmann::json counters = read_oom_counters(o.root, path);
    if (counters.empty()) continue;  // v1 also signals the cgroup's removal
    if (sh.notified.size() > 4096) sh.notified.clear();
    sh.notified[path] = {hierarchy.version == 1 ? "eventfd" : "inotify", now};
    if (sh.ledger.counters(path, counters.value("oom", uint64_t{0}), counters.value("oom_kill", uint64_t{0}), now))
      sh.sample_now = true;
  }
}

// What the loop learns from the cgroups of each sample: their OOM counters
// (into the ledger: a step no kernel report explains becomes an event of its
// own, e.g. where the kernel log cannot be read, or an OOM killed nothing),
// and pods whose container changed (a restart).
class CgroupEvents {
 public:
  void observe(const Sample& s, Shared& sh) {
    std::set<std::string> present;
    for (const auto& c : s.cgroups) {
      if (c.path == "/") continue;  // the host's kills are the kernel report's
      present.insert(c.path);
      sh.ledger.counters(c.path, c.oom.value_or(0), c.oom_kill.value_or(0), s.time_us);
      limits_[c.path] = c.limit;
      // A pod whose container id changes: the container restarted.
      if (!c.pod_uid.empty() && !c.container_id.empty()) {
        auto& ids = pod_containers_[c.pod_uid];
        if (!ids.empty() && !ids.count(c.container_id)) {
          Event ev;
          ev.time_us = s.time_us;
          ev.kind = "restart";
          ev.key = "pod:" + c.pod_uid;
          ev.summary = text::printable(fmt::format("pod {}: new container {}", c.pod_uid, c.container_id));
          sh.append(ev);
        }
        if (ids.size() < 64) ids.insert(c.container_id);
      }
    }
    sh.ledger.keep_only(present);
    for (auto it = limits_.begin(); it != limits_.end();)  // bounded: drop cgroups that are gone
      it = present.count(it->first) ? std::next(it) : limits_.erase(it);
    if (pod_containers_.size() > 4096) pod_containers_.clear();
  }

  // The steps no kernel report explained within the grace: one event each.
  void store_unexplained(Shared& sh, int version, int64_t now_us) {
    for (const OomSignal& sig : sh.ledger.due(now_us)) {
      sh.append(signal_event(sig, version));
      ++sh.oom_events;
    }
  }

 private:
  Event signal_event(const OomSignal& sig, int version) const {
    auto found = limits_.find(sig.cgroup);
    const std::optional<uint64_t> none;
    const std::optional<uint64_t>& lim = found != limits_.end() ? found->second : none;
    Event ev;
    ev.time_us = sig.seen_us;
    ev.kind = "oom_event";
    ev.key = event_key(sig.cgroup);
    ev.summary = fmt::format("cgroup {}: {} oom +{}, oom_kill +{} (limit {}); no kernel report of it", text::printable(sig.cgroup),
                             version == 1 ? "memory.oom_control" : "memory.events", sig.oom_delta, sig.kill_delta,
                             lim ? std::to_string(*lim) : "none");
    nlohmann::json body = {{"cgroup", sig.cgroup},       {"oom", sig.oom},
                           {"oom_kill", sig.kills},      {"oom_delta", sig.oom_delta},
                           {"oom_kill_delta", sig.kill_delta}, {"source", "counters"}};
    if (lim) body["limit"] = *lim;
    ev.body = body.dump();
    return ev;
  }

  std::map<std::string, std::optional<uint64_t>> limits_;            // the last limit of each cgroup
  std::map<std::string, std::set<std::string>> pod_containers_;      // restarts
};

// OOM notifications for every limited cgroup of the sample (bounded by the
// notifier); the first cgroup that cannot be watched is said once.
void watch_limited_cgroups(OomNotifier& notifier, const MemoryHierarchy& hierarchy, const Sample& s, bool& warned) {
  if (hierarchy.version == 0) return;
  std::vector<std::string> limited;
  for (const auto& c : s.cgroups) {
    if (c.path == "/" || !c.limit) continue;
    auto added = notifier.add(hierarchy.mount + c.path, c.path, hierarchy.version);
    if (!added && !warned) {
      fmt::print(stderr, "aimem watch: OOM notifications for {} not available ({}); its counters are polled\n",
                 text::printable(c.path), text::printable(added.error().message));
      warned = true;
    }
    limited.push_back(c.path);
  }
  notifier.keep_only(limited);
}

// What /metrics serves besides the sample: the alerts' forecasts and each
// server's mean time to first token since the previous sample.
ExportExtras export_extras(const AlertEngine& alerts, const Sample& s, const std::vector<ServerSample>& previous) {
  ExportExtras extras;
  for (const auto& [pool_id, secs] : alerts.time_to_exhaustion()) {
    ExhaustionForecast f;
    f.seconds = secs;
    if (text::starts_with(pool_id, "cgroup:")) {
      f.pool = "cgroup";
      f.cgroup = pool_id.substr(7);
    } else if (text::starts_with(pool_id, "gpu:")) {
      f.pool = "gpu";
      f.gpu = pool_id.substr(4);
    } else {
      f.pool = pool_id;
    }
    extras.exhaustion.push_back(std::move(f));
  }
  for (const auto& cur : s.servers)
    for (const auto& prev : previous)
      if (prev.target == cur.target)
        if (auto t = mean_first_token_seconds(prev, cur)) extras.first_token_seconds[cur.target] = *t;
  extras.sample_duration_s = static_cast<double>(timeutil::now_us() - s.time_us) / 1e6;
  return extras;
}

// One sample and all that follows from it: the window, the cgroups'
// counters and notifications, the alerts, /metrics and the store.
class SampleStep {
 public:
  SampleStep(Shared& sh, const MemoryHierarchy& hierarchy, OomNotifier& notifier, MetricsServer& server,
             std::vector<ScrapeTarget> targets)
      : sh_(sh), hierarchy_(hierarchy), notifier_(notifier), server_(server), targets_(std::move(targets)),
        sampler_(sampler_options(sh.o)), alerts_(sh.o.policy), sink_(sh.o.delivery) {
    for (const auto& w : sampler_.warnings()) fmt::print(stderr, "aimem watch: {}\n", text::printable(w));
  }

  void run(WatchStatus& st) {
    const WatchOptions& o = sh_.o;
    Sample s = sampler_.sample();
    for (const auto& t : targets_) s.servers.push_back(scrape(t, static_cast<int>(std::min<int64_t>(o.interval_us / 1000, 5000))));
    if (st.samples == 0) warn_about_scope(o, hierarchy_, s);
    trim_processes(s, kStoredProcesses);
    sh_.window.add(s);
    ++st.samples;
    if (st.samples == 1 || st.samples == 3) trim_startup_pages();
    cgroup_events_.observe(s, sh_);
    watch_limited_cgroups(notifier_, hierarchy_, s, notify_warned_);
    for (auto& a : alerts_.observe(s)) {
      sink_.deliver(a);
      sh_.append(alert_event(a));
      ++st.alerts;
    }
    if (o.serve) {
      ExportExtras extras = export_extras(alerts_, s, previous_servers_);
      extras.labels = o.labels;
      server_.publish(render_metrics(s, extras));
    }
    previous_servers_ = s.servers;
    if (sh_.store) {
      sh_.store->append(s);
      if (st.samples % kRetentionEvery == 0) sh_.store->enforce_retention(s.time_us);
    }
  }

  // The OOM counter steps no kernel report explained within the grace; all
  // that wait with `flush` (the watch is ending: nothing will explain them now).
  void store_unexplained_ooms(bool flush = false) {
    cgroup_events_.store_unexplained(sh_, hierarchy_.version, flush ? INT64_MAX : timeutil::now_us());
  }

 private:
  static SamplerOptions sampler_options(const WatchOptions& o) {
    SamplerOptions so;
    so.root = o.root;
    so.root_pid = o.pid;
    so.cgroup = o.cgroup;
    so.all_cgroups = o.cgroup.empty();
    so.gpus = o.gpus;
    so.processes = o.processes;
    so.task_iterator = o.task_iterator;
    so.kept_processes = kStoredProcesses;  // trim_processes's pick, made before the records are
    return so;
  }

  Shared& sh_;
  const MemoryHierarchy& hierarchy_;
  OomNotifier& notifier_;
  MetricsServer& server_;
  std::vector<ScrapeTarget> targets_;
  Sampler sampler_;
  AlertEngine alerts_;
  AlertSink sink_;
  CgroupEvents cgroup_events_;
  std::vector<ServerSample> previous_servers_;  // for TTFT deltas
  bool notify_warned_ = false;
};

enum Tag { kStopTag = 1, kKernelLogTag, kNotifierTag };

}  // namespace

Result<WatchStatus> run_watch(const WatchOptions& o, StopToken& stop, const std::function<void(int)>& on_ready) {
  WatchStatus st;
  // Start-up runs code the loop never runs again: option and configuration
  // parsing before this point, opening the store, the server and the sampler
  // after it, the first samples. Each stage's pages are given back (trim.h)
  // before the next stage maps its own, so neither the resident set nor its
  // peak holds all of them at once.
  trim_startup_pages();
  EventLoop loop;
  if (auto ready = loop.ready(); !ready) return ready.error();
  Shared sh(o);
  std::vector<ScrapeTarget> targets;
  MetricsServer server;
  if (auto opened = open_outputs(sh, targets, server, st); !opened) return opened.error();
  if (on_ready) on_ready(st.port);
  if (stop.fd() >= 0) (void)loop.add(stop.fd(), kStopTag);

  KmsgFollower follower;
  bool kernel_log = false;
  if (o.follow_kernel_log) {
    if (auto opened = follower.open(o.root, false); !opened)
      fmt::print(stderr, "aimem watch: {}; OOM kills are seen through cgroup counters only\n", opened.error().message);
    else
      kernel_log = true;
    if (kernel_log && follower.wait_fd() >= 0) (void)loop.add(follower.wait_fd(), kKernelLogTag);
  }
  OomNotifier notifier;
  const MemoryHierarchy hierarchy = find_memory_hierarchy(o.root);
  if (auto trigger = notifier.add_pressure_trigger(o.root, 150000, 2000000); !trigger)
    fmt::print(stderr, "aimem watch: no PSI trigger ({}); pressure is read at each sample\n", trigger.error().message);
  if (notifier.wait_fd() >= 0) (void)loop.add(notifier.wait_fd(), kNotifierTag);
  int64_t last_pressure_us = 0;
  SampleStep step(sh, hierarchy, notifier, server, std::move(targets));

  trim_startup_pages();
  const int64_t start = EventLoop::monotonic_us();
  const int64_t end = o.duration_us > 0 ? start + o.duration_us : INT64_MAX;
  int64_t next = start;
  while (!stop.requested()) {
    int64_t now = EventLoop::monotonic_us();
    if (now >= end) break;
    if (now >= next || sh.sample_now) {
      if (now >= next) {
        next += o.interval_us;
        if (next <= now) next = now + o.interval_us;  // a slow sample: skip, do not burst
      }
      sh.sample_now = false;
      step.run(st);
    }
    step.store_unexplained_ooms();
    // Sleep until the next sample, the end, or the next OOM step due.
    now = EventLoop::monotonic_us();
    int64_t wake = std::min(next, end);
    if (auto due = sh.ledger.next_due()) wake = std::min(wake, now + std::max<int64_t>(0, *due - timeutil::now_us()));
    if (stop.fd() < 0) wake = std::min(wake, now + 250000);  // no stop descriptor: look at the flag
    loop.wake_at(wake);
    // Notifications first: v1's eventfd fires as the OOM starts, before the
    // kernel's report of the kill, and the kill's event tells it.
    std::vector<int> ready = loop.wait();
    if (std::find(ready.begin(), ready.end(), kNotifierTag) != ready.end())
      read_notifications(sh, notifier, hierarchy, last_pressure_us);
    if (std::find(ready.begin(), ready.end(), kKernelLogTag) != ready.end()) read_kernel_log(sh, follower);
    // A captured kernel log (a regular file under --root) has no wakeup: it
    // is read at each one the loop has.
    if (kernel_log && follower.wait_fd() < 0) read_kernel_log(sh, follower);
  }
  if (kernel_log) read_kernel_log(sh, follower);  // a report that came with the stop
  step.store_unexplained_ooms(true);
  if (o.serve) server.stop();
  st.oom_events = sh.oom_events;
  return st;
}

}  // namespace aimem::watch
