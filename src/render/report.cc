// Builds the Timeline from a store. Pass 1 finds the range of the samples in
// the window, every pool's peak and limit, and the processes' and cgroups'
// peaks, to choose which to plot; pass 2 feeds the chosen series into
// Downsamplers. Rates (mean TTFT) are derived here from the stored counters.
#include "render/report.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/time.h"

namespace aimem::report {
namespace {

using watch::Sample;

constexpr size_t kMaxCgroupPanels = 12, kMaxGpuPanels = 16, kMaxServers = 8, kTopProcesses = 8;
constexpr size_t kMaxPools = 64, kMaxTracked = 100000;  // keys remembered in pass 1
constexpr uint64_t kUnlimited = 1ull << 60;             // cgroup v1 "no limit" is ~2^63

std::optional<uint64_t> real_limit(const std::optional<uint64_t>& l) {
  return l && *l > 0 && *l < kUnlimited ? l : std::nullopt;
}

// Min and max per time bucket, emitted in time order: a spike survives any
// amount of downsampling, and a series never has more than 2 x buckets points.
class Downsampler {
 public:
  Downsampler(int64_t from, int64_t to, size_t buckets)
      : from_(from), span_(std::max<int64_t>(1, to - from + 1)), n_(std::max<size_t>(1, buckets)) {}
  void add(int64_t t, double v) {
    if (!std::isfinite(v)) return;
    if (b_.empty()) b_.resize(n_);
    size_t i = static_cast<size_t>(static_cast<__int128>(std::clamp<int64_t>(t - from_, 0, span_ - 1)) * n_ / span_);
    Bucket& b = b_[i];
    if (!b.has || v < b.lo) b.lo = v, b.tlo = t;
    if (!b.has || v > b.hi) b.hi = v, b.thi = t;
    b.has = true;
  }
  std::vector<Point> points() const {
    std::vector<Point> out;
    for (const Bucket& b : b_) {
      if (!b.has) continue;
      if (b.tlo == b.thi) {
        out.push_back({b.tlo, b.hi});
      } else if (b.tlo < b.thi) {
        out.push_back({b.tlo, b.lo});
        out.push_back({b.thi, b.hi});
      } else {
        out.push_back({b.thi, b.hi});
        out.push_back({b.tlo, b.lo});
      }
    }
    return out;
  }

 private:
  struct Bucket {
    double lo = 0, hi = 0;
    int64_t tlo = 0, thi = 0;
    bool has = false;
  };
  int64_t from_, span_;
  size_t n_;
  std::vector<Bucket> b_;
};

struct Peak {
  uint64_t peak = 0;
  std::optional<uint64_t> limit;
  std::string label;
};

// Keys of `m` with the largest peaks, at most n, largest first.
template <typename K>
std::vector<K> top(const std::map<K, Peak>& m, size_t n) {
  std::vector<std::pair<uint64_t, K>> v;
  for (const auto& [k, p] : m) v.push_back({p.peak, k});
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<K> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) out.push_back(v[i].second);
  return out;
}

// Panels in the order they are first created; series within them likewise.
class Plot {
 public:
  Plot(int64_t from, int64_t to, size_t max_points) : from_(from), to_(to), buckets_(std::max<size_t>(1, max_points / 2)) {}
  void add(const std::string& panel, const std::string& unit, const std::string& series, bool limit, int64_t t,
           double v) {
    auto [it, fresh] = index_.try_emplace(panel, panels_.size());
    if (fresh) panels_.push_back({{panel, unit, {}}, {}});
    auto& [p, acc] = panels_[it->second];
    size_t i = 0;
    while (i < p.series.size() && p.series[i].name != series) ++i;
    if (i == p.series.size()) {
      p.series.push_back({series, limit, {}});
      acc.emplace_back(from_, to_, buckets_);
    }
    acc[i].add(t, v);
  }
  std::vector<Panel> finish() {
    std::vector<Panel> out;
    for (auto& [p, acc] : panels_) {
      for (size_t i = 0; i < p.series.size(); ++i) p.series[i].points = acc[i].points();
      out.push_back(std::move(p));
    }
    return out;
  }

 private:
  int64_t from_, to_;
  size_t buckets_;
  std::map<std::string, size_t> index_;
  std::vector<std::pair<Panel, std::vector<Downsampler>>> panels_;
};

std::string process_key(const watch::ProcessSample& p) { return fmt::format("{} (pid {})", p.comm, p.pid); }
std::string gpu_label(const watch::GpuSample& g) {
  return g.name.empty() ? fmt::format("gpu {}", g.index) : fmt::format("gpu {} ({})", g.index, g.name);
}

void note_peak(Peak& p, uint64_t v, const std::optional<uint64_t>& limit) {
  p.peak = std::max(p.peak, v);
  if (auto l = real_limit(limit)) p.limit = l;
}

}  // namespace

Timeline build_timeline(const watch::Store& store, const Options& o) {
  Timeline t;
  t.file = store.path();
  t.meta = store.all_meta();
  t.events = store.events(o.from_us, o.to_us);

  // Pass 1: range, pools, and the peaks that choose what to plot.
  Peak host, swap;
  bool have_host = false;
  std::map<std::string, Peak> cgroups, processes;
  std::map<unsigned, Peak> gpus;
  std::vector<std::string> servers;
  int64_t first = 0, last = 0;
  size_t seen = 0;
  store.scan_samples(o.from_us, o.to_us, [&](const Sample& s) {
    if (seen++ == 0) first = s.time_us;
    last = s.time_us;
    if (s.host.mem_total && s.host.mem_available && *s.host.mem_available <= *s.host.mem_total) {
      have_host = true;
      note_peak(host, *s.host.mem_total - *s.host.mem_available, s.host.mem_total);
    }
    for (const auto& c : s.cgroups) {
      auto it = cgroups.find(c.path);
      if (it == cgroups.end() && cgroups.size() < kMaxTracked) it = cgroups.emplace(c.path, Peak{}).first;
      if (it != cgroups.end()) note_peak(it->second, std::max(c.usage.value_or(0), c.peak.value_or(0)), c.limit);
    }
    for (const auto& g : s.gpus) {
      if (gpus.size() >= kMaxGpuPanels && !gpus.count(g.index)) continue;
      Peak& p = gpus[g.index];
      p.label = gpu_label(g);
      note_peak(p, g.used.value_or(0), g.total);
    }
    for (const auto& p : s.processes) {
      std::string k = process_key(p);
      auto it = processes.find(k);
      if (it == processes.end() && processes.size() < kMaxTracked) it = processes.emplace(k, Peak{}).first;
      if (it != processes.end()) note_peak(it->second, p.rss, std::nullopt);
    }
    for (const auto& v : s.servers)
      if (servers.size() < kMaxServers && std::find(servers.begin(), servers.end(), v.target) == servers.end())
        servers.push_back(v.target);
    return true;
  });
  if (have_host) t.pools.push_back({"host_ram", host.peak, host.limit});
  for (const auto& path : top(cgroups, kMaxPools)) t.pools.push_back({"cgroup " + path, cgroups[path].peak, cgroups[path].limit});
  for (const auto& [i, p] : gpus) t.pools.push_back({p.label, p.peak, p.limit});
  auto chosen_cgroups = top(cgroups, kMaxCgroupPanels);
  auto chosen_processes = top(processes, kTopProcesses);

  // Pass 2: the plotted series.
  if (seen == 0) return t;
  Plot plot(first, last, o.max_points);
  std::map<std::string, std::pair<double, double>> ttft_prev;  // target -> (sum, count)
  // Up to `last`: rows a live watch appends meanwhile are left for the next report.
  t.samples = store.scan_samples(first, last, [&](const Sample& s) {
    const int64_t ts = s.time_us;
    if (s.host.mem_total && s.host.mem_available && *s.host.mem_available <= *s.host.mem_total) {
      plot.add("host RAM", "bytes", "used", false, ts, double(*s.host.mem_total - *s.host.mem_available));
      plot.add("host RAM", "bytes", "total", true, ts, double(*s.host.mem_total));
      if (s.host.swap_total && s.host.swap_free && *s.host.swap_total > 0 && *s.host.swap_free <= *s.host.swap_total)
        plot.add("host RAM", "bytes", "swap used", false, ts, double(*s.host.swap_total - *s.host.swap_free));
    }
    for (const auto& path : chosen_cgroups)  // in peak order, so panels come largest first
      for (const auto& c : s.cgroups) {
        if (c.path != path) continue;
        std::string panel = "cgroup " + c.path;
        if (c.usage) plot.add(panel, "bytes", "usage", false, ts, double(*c.usage));
        if (auto l = real_limit(c.limit)) plot.add(panel, "bytes", "limit", true, ts, double(*l));
        if (c.swap_usage && *c.swap_usage) plot.add(panel, "bytes", "swap", false, ts, double(*c.swap_usage));
        break;
      }
    for (const auto& g : s.gpus) {
      if (!gpus.count(g.index)) continue;
      std::string panel = "GPU " + gpus[g.index].label.substr(4);
      if (g.used) plot.add(panel, "bytes", "used", false, ts, double(*g.used));
      if (auto l = real_limit(g.total)) plot.add(panel, "bytes", "total", true, ts, double(*l));
    }
    for (const auto& p : s.processes) {
      std::string k = process_key(p);
      if (std::find(chosen_processes.begin(), chosen_processes.end(), k) != chosen_processes.end())
        plot.add("top processes (RSS)", "bytes", k, false, ts, double(p.rss));
    }
    for (const auto& v : s.servers) {
      if (std::find(servers.begin(), servers.end(), v.target) == servers.end()) continue;
      std::string name = v.kind.empty() ? v.target : v.kind + " " + v.target;
      if (v.running) plot.add(name + ": requests", "count", "running", false, ts, *v.running);
      if (v.waiting) plot.add(name + ": requests", "count", "waiting", false, ts, *v.waiting);
      if (v.kv_usage_ratio) plot.add(name + ": KV cache usage", "ratio", "KV cache", false, ts, *v.kv_usage_ratio);
      if (v.ttft_sum_s && v.ttft_count) {
        auto [it, fresh] = ttft_prev.try_emplace(v.target, *v.ttft_sum_s, *v.ttft_count);
        double ds = *v.ttft_sum_s - it->second.first, dc = *v.ttft_count - it->second.second;
        // A counter that went back (server restart) gives no rate.
        if (!fresh && dc > 0 && ds >= 0) plot.add(name + ": mean time to first token", "seconds", "TTFT", false, ts, ds / dc);
        it->second = {*v.ttft_sum_s, *v.ttft_count};
      }
    }
    return true;
  });
  t.from_us = first;
  t.to_us = last;
  t.panels = plot.finish();
  return t;
}

nlohmann::json summary_json(const Timeline& t) {
  using nlohmann::json;
  json j = json::object();
  j["file"] = t.file;
  j["samples"] = t.samples;
  j["from"] = t.samples ? json(timeutil::format_iso(t.from_us)) : json(nullptr);
  j["to"] = t.samples ? json(timeutil::format_iso(t.to_us)) : json(nullptr);
  j["from_us"] = t.samples ? json(t.from_us) : json(nullptr);
  j["to_us"] = t.samples ? json(t.to_us) : json(nullptr);
  json pools = json::array();
  for (const auto& p : t.pools)
    pools.push_back({{"name", p.name}, {"peak_bytes", p.peak ? json(*p.peak) : json(nullptr)},
                     {"limit_bytes", p.limit ? json(*p.limit) : json(nullptr)}});
  j["pools"] = std::move(pools);
  json events = json::array();
  for (const auto& e : t.events)
    events.push_back({{"time", timeutil::format_iso(e.time_us)}, {"time_us", e.time_us}, {"kind", e.kind},
                      {"key", e.key}, {"summary", e.summary}});
  j["events"] = std::move(events);
  json meta = json::object();
  for (const auto& [k, v] : t.meta) meta[k] = v;
  j["meta"] = std::move(meta);
  return j;
}

}  // namespace aimem::report
