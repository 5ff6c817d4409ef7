#include "probe/monitor.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <set>

#include <fmt/format.h>

#include "core/doc_reader.h"
#include "core/time.h"
#include "sources/process.h"
#include "sources/sampler.h"
#include "watch/scrape.h"
#include "watch/store.h"
#include "watch/watcher.h"

namespace aimem::probe {

namespace {

constexpr size_t kMaxRatios = 200000;   // ~5.5 h at 10 Hz
constexpr size_t kWindowSamples = 600;  // the last minute at 10 Hz, for a diagnosis' trend
constexpr int64_t kScrapeEveryUs = 1000000;

template <typename T>
void raise(std::optional<T>& peak, const std::optional<T>& v) {
  if (v && (!peak || *v > *peak)) peak = v;
}

}  // namespace

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SamplerMonitor::SamplerMonitor(MonitorOptions options) : opt_(std::move(options)) {
  if (opt_.pid) {
    if (auto cg = process_memory_cgroup(opt_.root, *opt_.pid)) cgroup_ = *cg;
    watch::SamplerOptions so;
    so.root = opt_.root;
    so.root_pid = opt_.pid;
    // The whole server tree as one scope; its own cgroup (when not the root)
    // is read alone, not every cgroup on the host.
    so.cgroup = (cgroup_.empty() || cgroup_ == "/") ? "" : cgroup_;
    so.all_cgroups = false;
    so.gpus = opt_.gpus;
    sampler_ = std::make_unique<watch::Sampler>(so);
  }
  if (!opt_.metrics_url.empty()) {
    auto t = watch::parse_target(opt_.metrics_kind == "auto" ? opt_.metrics_url : opt_.metrics_kind + "=" + opt_.metrics_url);
    if (t) target_ = std::move(*t);
    else warnings_.push_back(fmt::format("metrics URL {}: {}; the server's own metrics are not read", opt_.metrics_url, t.error().message));
  }
  if (opt_.kernel_log) {
    auto opened = kmsg_.open(opt_.root, false);  // sources/kmsg_reader.h does the reading
    kmsg_open_ = opened.ok();
    if (!kmsg_open_) warnings_.push_back(fmt::format("kernel log not followed ({}); a server's death is not diagnosed from it", opened.error().message));
  }
  if (sampler_ || kmsg_open_ || !opt_.metrics_url.empty()) {
    take_sample();
    thread_ = std::thread([this] { loop(); });
  }
}

SamplerMonitor::~SamplerMonitor() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void SamplerMonitor::loop() {
  auto next = std::chrono::steady_clock::now();
  while (!stop_) {
    next += std::chrono::microseconds(opt_.interval_us);
    // The kernel log is polled in slices of the interval, so an OOM report
    // is read within one interval of being written.
    int wait_ms = static_cast<int>(std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::milliseconds>(next - std::chrono::steady_clock::now()).count()));
    if (kmsg_open_) {
      auto reports = kmsg_.poll(wait_ms);
      if (!reports.empty()) {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto& r : reports) reports_.push_back(std::move(r));
      }
    } else {
      std::this_thread::sleep_until(next);
    }
    if (stop_) break;
    if (std::chrono::steady_clock::now() < next) std::this_thread::sleep_until(next);
    take_sample();
  }
}

void SamplerMonitor::take_sample() {
  std::lock_guard<std::mutex> one(sample_mu_);
  watch::Sample s;
  if (sampler_) s = sampler_->sample();
  else s.time_us = timeutil::now_us();
  const int64_t now = timeutil::now_us();
  if (target_ && now - last_scrape_us_ >= kScrapeEveryUs) {
    last_scrape_us_ = now;
    last_server_ = watch::scrape(*target_, 800);
  }
  if (!opt_.metrics_url.empty() && last_server_.up) s.servers.push_back(last_server_);

  std::optional<uint64_t> tree_rss, cg_usage, cg_limit, gpu_used;
  std::vector<int> pids;
  uint64_t sum = 0;
  for (const auto& p : s.processes) {
    sum += p.rss;
    pids.push_back(p.pid);
  }
  if (!s.processes.empty()) tree_rss = sum;
  const std::string want = cgroup_.empty() ? "/" : cgroup_;
  for (const auto& c : s.cgroups)
    if (c.path == want) {
      cg_usage = c.usage;
      cg_limit = c.limit;
    }
  // A cgroup v1 "limit" of 2^63-ish means none.
  if (cg_limit && *cg_limit >= (1ull << 60)) cg_limit.reset();
  std::set<unsigned> server_gpus;
  for (const auto& gp : s.gpu_processes)
    if (std::find(pids.begin(), pids.end(), gp.pid) != pids.end()) server_gpus.insert(gp.gpu);
  std::optional<double> gpu_ratio;
  for (const auto& g : s.gpus)
    if (server_gpus.count(g.index) && g.used) {
      gpu_used = gpu_used.value_or(0) + *g.used;
      if (g.total && *g.total > 0) gpu_ratio = std::max(gpu_ratio.value_or(0.0), double(*g.used) / double(*g.total));
    }

  std::optional<double> ratio;
  if (cg_usage && cg_limit && *cg_limit > 0) ratio = double(*cg_usage) / double(*cg_limit);
  else if (gpu_ratio) ratio = gpu_ratio;
  else if (s.host.mem_total && s.host.mem_available && *s.host.mem_total > 0)
    ratio = 1.0 - double(*s.host.mem_available) / double(*s.host.mem_total);

  std::lock_guard<std::mutex> lock(mu_);  // also serialises the store's writers
  if (opt_.store) opt_.store->append(s);
  if (sampler_) {
    raise(peaks_.process, tree_rss);
    raise(peaks_.cgroup, cg_usage);
    if (cg_limit) peaks_.cgroup_limit = cg_limit;
    raise(peaks_.gpu, gpu_used);
    if (!pids.empty()) tree_pids_ = pids;
  }
  for (const auto& sv : s.servers) {
    raise(peaks_.kv_usage_ratio, sv.kv_usage_ratio);
    raise(peaks_.running, sv.running);
    raise(peaks_.waiting, sv.waiting);
  }
  ++peaks_.samples;
  if (ratio && ratios_.size() < kMaxRatios) ratios_.emplace_back(steady_seconds(), *ratio);
  window_.push_back(std::move(s));
  if (window_.size() > kWindowSamples) window_.erase(window_.begin(), window_.begin() + (window_.size() - kWindowSamples));
}

void SamplerMonitor::begin_step() {
  std::lock_guard<std::mutex> lock(mu_);
  auto limit = peaks_.cgroup_limit;
  peaks_ = StepPeaks{};
  peaks_.cgroup_limit = limit;
}

StepPeaks SamplerMonitor::end_step() {
  // One more sample, so a short step is seen at its end too.
  if (sampler_ && server_alive()) take_sample();
  std::lock_guard<std::mutex> lock(mu_);
  return peaks_;
}

bool SamplerMonitor::server_alive() {
  if (!opt_.pid) return true;
  // Z and X are gone but for their entry.
  auto state = process_state(opt_.root, *opt_.pid);
  return state && !is_dead_state(*state);
}

std::optional<double> SamplerMonitor::used_ratio_at(double steady_s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ratios_.empty()) return std::nullopt;
  auto it = std::upper_bound(ratios_.begin(), ratios_.end(), steady_s,
                             [](double t, const std::pair<double, double>& r) { return t < r.first; });
  if (it == ratios_.begin()) return ratios_.front().second;
  return std::prev(it)->second;
}

std::vector<watch::KernelOomReport> SamplerMonitor::oom_reports() {
  std::lock_guard<std::mutex> lock(mu_);
  return reports_;
}

std::vector<std::string> SamplerMonitor::warnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> w = warnings_;
  if (sampler_)
    for (const auto& s : sampler_->warnings()) w.push_back(s);
  return w;
}

std::optional<std::string> SamplerMonitor::diagnose_death(int timeout_ms, const std::vector<watch::TrendFinding>& known) {
  if (!kmsg_open_) return std::nullopt;
  const double until = steady_seconds() + timeout_ms / 1000.0;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& r : reports_) {
        bool ours = false;
        if (r.pid && (std::find(tree_pids_.begin(), tree_pids_.end(), *r.pid) != tree_pids_.end() || (opt_.pid && *r.pid == *opt_.pid)))
          ours = true;
        if (!cgroup_.empty() && cgroup_ != "/" && (r.oom_memcg == cgroup_ || r.task_memcg == cgroup_)) ours = true;
        if (!ours) continue;
        watch::Event ev = watch::diagnose_oom_report(opt_.root, r, window_, opt_.diagnosis_json, known);
        if (opt_.store) opt_.store->append(ev);
        auto body = doc::parse_json_or_discarded(ev.body);
        if (body.is_object() && body.contains("diagnosis")) return body["diagnosis"].dump();
        return std::nullopt;
      }
    }
    if (steady_seconds() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace aimem::probe
