// See watcher.h.
#include "watch/watcher.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <fmt/format.h>

#include "core/cgroup_path.h"
#include "core/text.h"
#include "core/time.h"
#include "diagnose/diagnosis.h"
#include "evidence/store.h"
#include "recognize/scanner.h"
#include "render/diagnosis_json.h"
#include "sources/live.h"
#include "sources/readfile.h"
#include "sources/cgroup_ctl.h"
#include "watch/exporter.h"
#include "watch/http_server.h"
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
                          const std::vector<TrendFinding>& known) {
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
  body["diagnosis"] = diagnosis_to_json(diag);
  body["cgroup"] = cgroup.empty() ? nlohmann::json(nullptr) : nlohmann::json(cgroup);
  body["counters"] = counters;
  body["window_samples"] = window.size();
  if (!window.empty()) body["window_from_us"] = window.front().time_us;
  body["kernel_report"] = report.lines;
  ev.body = body.dump();
  return ev;
}

WatchStatus run_watch(const WatchOptions& o, std::atomic<bool>& stop, const std::function<void(int)>& on_ready) {
  WatchStatus st;
  // Start-up runs code the loop never runs again: option and configuration
  // parsing before this point, opening the store, the server and the sampler
  // after it, the first samples. Each stage's pages are given back (trim.h)
  // before the next stage maps its own, so neither the resident set nor its
  // peak holds all of them at once.
  trim_startup_pages();
  std::mutex store_mu;
  std::unique_ptr<Store> store;
  if (o.store) {
    std::string err;
    store = Store::open(o.db.empty() ? default_store_path() : o.db, o.retention, &err);
    if (!store) {
      st.problem = err;
      st.exit_code = 2;
      return st;
    }
    store->set_meta("watch_started_us", std::to_string(timeutil::now_us()));
  }
  std::vector<ScrapeTarget> targets;
  for (const auto& spec : o.scrape) {
    std::string err;
    auto t = parse_target(spec, &err);
    if (!err.empty()) {
      st.problem = err;
      st.exit_code = 2;
      return st;
    }
    targets.push_back(t);
  }
  MetricsServer server;
  if (o.serve) {
    auto listen = split_listen(o.listen);
    if (!listen) {
      st.problem = fmt::format("--listen {}: expected HOST:PORT, [IPV6]:PORT or PORT, with a port from 0 to 65535", o.listen);
      st.exit_code = 2;
      return st;
    }
    auto [host, port] = *listen;
    std::string err;
    if (!server.start(host, port, &err)) {
      st.problem = fmt::format("cannot serve metrics on {}: {}", o.listen, err);
      st.exit_code = 2;
      return st;
    }
    st.port = server.port();
  }
  if (on_ready) on_ready(st.port);

  Window window(o.oom_window_us);
  auto append_event = [&](const Event& ev) {
    if (!store) return;
    std::lock_guard<std::mutex> lock(store_mu);
    store->append(ev);
  };
  std::atomic<uint64_t> oom_events{0};
  // Cgroups a kernel report already covered, so the counter step that follows
  // is not a second event.
  std::mutex seen_mu;
  std::map<std::string, int64_t> reported;

  std::thread kmsg_thread;
  if (o.follow_kernel_log) {
    kmsg_thread = std::thread([&] {
      KmsgFollower follower;
      std::string err;
      if (!follower.open(o.root, false, &err)) {
        fmt::print(stderr, "aimem watch: {}; OOM kills are seen through cgroup counters only\n", err);
        return;
      }
      while (!stop) {
        for (const auto& report : follower.poll(300)) {
          // Scoped to a cgroup subtree: kills elsewhere on the host are not ours.
          if (!o.cgroup.empty() && !text::starts_with(report.oom_memcg, o.cgroup) &&
              !text::starts_with(report.task_memcg, o.cgroup))
            continue;
          Event ev = diagnose_oom_report(o.root, report, window.copy());
          fmt::print(stderr, "aimem watch: OOM kill: {}\n", ev.summary);
          append_event(ev);
          ++oom_events;
          std::lock_guard<std::mutex> lock(seen_mu);
          reported[!report.oom_memcg.empty() ? report.oom_memcg : report.task_memcg] = report.time_us;
        }
      }
    });
  }

  // OOM notifications (v1 eventfd, v2 inotify) wake a thread at once: it
  // reads the cgroup's counters before the cgroup can go, stores them, and
  // asks the loop for a sample now.
  OomNotifier notifier;
  const MemoryHierarchy hierarchy = find_memory_hierarchy(o.root);
  std::atomic<bool> sample_now{false};
  int64_t last_pressure_us = 0;
  {
    std::string err;
    if (!notifier.add_pressure_trigger(o.root, 150000, 2000000, &err))
      fmt::print(stderr, "aimem watch: no PSI trigger ({}); pressure is read at each sample\n", err);
  }
  std::thread notify_thread([&] {
    while (!stop) {
      std::set<std::string> paths;
      for (auto& p : notifier.wait(300)) paths.insert(std::move(p));
      for (const auto& path : paths) {
        if (path == OomNotifier::kPressure) {
          // At most one pressure event a minute; each one also samples now.
          int64_t now = timeutil::now_us();
          sample_now = true;
          if (now - last_pressure_us < 60LL * 1000000) continue;
          last_pressure_us = now;
          Event ev;
          ev.time_us = now;
          ev.kind = "pressure";
          ev.key = "host";
          auto psi = read_small_file((o.root == "/" ? "" : o.root) + "/proc/pressure/memory");
          ev.summary = "memory pressure: tasks stalled on memory for over 150 ms within 2 s (PSI trigger)";
          ev.body = nlohmann::json{{"psi", psi ? *psi : ""}}.dump();
          append_event(ev);
          continue;
        }
        nlohmann::json counters = read_oom_counters(o.root, path);
        if (counters.empty()) continue;  // v1 also signals the cgroup's removal
        int64_t now = timeutil::now_us();
        Event ev;
        ev.time_us = now;
        ev.kind = "oom_event";
        ev.key = event_key(path);
        ev.summary = fmt::format("cgroup {}: OOM notification ({}), oom_kill {}", text::printable(path),
                                 hierarchy.version == 1 ? "memory.oom_control eventfd" : "memory.events inotify",
                                 counters.value("oom_kill", uint64_t{0}));
        ev.body = nlohmann::json{{"cgroup", path},
                                 {"source", hierarchy.version == 1 ? "eventfd" : "inotify"},
                                 {"counters", counters}}
                      .dump();
        append_event(ev);
        ++oom_events;
        {
          std::lock_guard<std::mutex> lock(seen_mu);
          reported[path] = now;
        }
        sample_now = true;
      }
    }
  });
  bool notify_warned = false;

  SamplerOptions so;
  so.root = o.root;
  so.root_pid = o.pid;
  so.cgroup = o.cgroup;
  so.all_cgroups = o.cgroup.empty();
  so.gpus = o.gpus;
  so.processes = o.processes;
  so.task_iterator = o.task_iterator;
  Sampler sampler(so);
  for (const auto& w : sampler.warnings()) fmt::print(stderr, "aimem watch: {}\n", text::printable(w));
  AlertEngine alerts(o.policy);
  AlertSink sink(o.delivery);
  std::map<std::string, std::pair<uint64_t, uint64_t>> last_counters;  // cgroup -> (oom, oom_kill)
  std::map<std::string, std::set<std::string>> pod_containers;         // restarts
  std::vector<ServerSample> previous_servers;                          // for TTFT deltas

  trim_startup_pages();
  const int64_t start = timeutil::now_us();
  int64_t next = start;
  while (!stop) {
    int64_t now = timeutil::now_us();
    if (o.duration_us > 0 && now - start >= o.duration_us) break;
    if (now < next && !sample_now) {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(next - now, 20000)));
      continue;
    }
    sample_now = false;
    next += o.interval_us;
    if (next < now) next = now + o.interval_us;

    Sample s = sampler.sample();
    for (const auto& t : targets) s.servers.push_back(scrape(t, static_cast<int>(std::min<int64_t>(o.interval_us / 1000, 5000))));
    if (st.samples == 0) warn_about_scope(o, hierarchy, s);
    trim_processes(s, kStoredProcesses);
    window.add(s);
    ++st.samples;
    if (st.samples == 1 || st.samples == 3) trim_startup_pages();
    // OOM counters that stepped without a kernel report (a kernel log we
    // cannot read, or an allocation failure at the limit without a kill).
    std::set<std::string> present;
    for (const auto& c : s.cgroups) {
      present.insert(c.path);
      uint64_t oom = c.oom.value_or(0), kill = c.oom_kill.value_or(0);
      auto it = last_counters.find(c.path);
      if (it != last_counters.end() && (oom > it->second.first || kill > it->second.second)) {
        bool covered = false;
        {
          std::lock_guard<std::mutex> lock(seen_mu);
          auto r = reported.find(c.path);
          covered = r != reported.end() && s.time_us - r->second < 10LL * 1000000;
        }
        if (!covered && (c.path != "/")) {
          Event ev;
          ev.time_us = s.time_us;
          ev.kind = "oom_event";
          ev.key = event_key(c.path);
          ev.summary = fmt::format("cgroup {}: memory.events oom +{}, oom_kill +{} (limit {})", text::printable(c.path),
                                   oom - std::min(oom, it->second.first), kill - std::min(kill, it->second.second),
                                   c.limit ? std::to_string(*c.limit) : "none");
          nlohmann::json body = {{"cgroup", c.path}, {"oom", oom}, {"oom_kill", kill},
                                 {"oom_delta", oom - std::min(oom, it->second.first)},
                                 {"oom_kill_delta", kill - std::min(kill, it->second.second)}};
          if (c.peak) body["peak"] = *c.peak;
          if (c.limit) body["limit"] = *c.limit;
          ev.body = body.dump();
          append_event(ev);
          ++oom_events;
        }
      }
      last_counters[c.path] = {oom, kill};
      // A pod whose container id changes: the container restarted.
      if (!c.pod_uid.empty() && !c.container_id.empty()) {
        auto& ids = pod_containers[c.pod_uid];
        if (!ids.empty() && !ids.count(c.container_id)) {
          Event ev;
          ev.time_us = s.time_us;
          ev.kind = "restart";
          ev.key = "pod:" + c.pod_uid;
          ev.summary = text::printable(fmt::format("pod {}: new container {}", c.pod_uid, c.container_id));
          append_event(ev);
        }
        if (ids.size() < 64) ids.insert(c.container_id);
      }
    }
    // OOM notifications for every limited cgroup (bounded by the notifier).
    if (hierarchy.version != 0) {
      std::vector<std::string> limited;
      for (const auto& c : s.cgroups) {
        if (c.path == "/" || !c.limit) continue;
        std::string err;
        if (!notifier.add(hierarchy.mount + c.path, c.path, hierarchy.version, &err) && !notify_warned) {
          fmt::print(stderr, "aimem watch: OOM notifications for {} not available ({}); its counters are polled\n",
                     text::printable(c.path), text::printable(err));
          notify_warned = true;
        }
        limited.push_back(c.path);
      }
      notifier.keep_only(limited);
    }
    for (auto it = last_counters.begin(); it != last_counters.end();)  // bounded: drop cgroups that are gone
      it = present.count(it->first) ? std::next(it) : last_counters.erase(it);
    if (pod_containers.size() > 4096) pod_containers.clear();

    for (auto& a : alerts.observe(s)) {
      sink.deliver(a);
      append_event(alert_event(a));
      ++st.alerts;
    }
    if (o.serve) {
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
        for (const auto& prev : previous_servers)
          if (prev.target == cur.target)
            if (auto t = mean_first_token_seconds(prev, cur)) extras.first_token_seconds[cur.target] = *t;
      extras.sample_duration_s = static_cast<double>(timeutil::now_us() - s.time_us) / 1e6;
      server.publish(render_metrics(s, extras));
    }
    previous_servers = s.servers;
    if (store) {
      std::lock_guard<std::mutex> lock(store_mu);
      store->append(s);
      if (st.samples % kRetentionEvery == 0) store->enforce_retention(s.time_us);
    }
  }
  stop = true;
  if (kmsg_thread.joinable()) kmsg_thread.join();
  if (notify_thread.joinable()) notify_thread.join();
  if (o.serve) server.stop();
  st.oom_events = oom_events;
  return st;
}

}  // namespace aimem::watch
