// Prometheus text for /metrics (see exporter.h). Families are written in a
// fixed order, each with HELP and TYPE once; a family with no series is left
// out. Per-process series are bounded (top N by RSS plus the processes that
// matter: a role or GPU memory) so that a host with 10,000 processes does not
// give Prometheus 10,000 series per scrape.
#include "watch/exporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "watch/promtext.h"

namespace aimem::watch {
namespace {

using Labels = std::vector<std::pair<const char*, std::string>>;

class Writer {
 public:
  // Starts a family; its HELP/TYPE lines are written with its first series.
  void family(const char* name, const char* type, const char* help) {
    name_ = name;
    type_ = type;
    help_ = help;
    headed_ = false;
  }
  void series(const Labels& labels, double v) { write(labels, format_prom_value(v)); }
  void series(const Labels& labels, uint64_t v) {
    char digits[24];
    write(labels, std::string_view(digits, static_cast<size_t>(fmt::format_to(digits, "{}", v) - digits)));
  }
  template <typename T>
  void series(const Labels& labels, const std::optional<T>& v) {
    if (v) series(labels, *v);
  }
  std::string take() { return std::move(out_); }
  // Appended to every series (ExportExtras::labels).
  void constant(const std::vector<std::pair<std::string, std::string>>* labels) { constant_ = labels; }

 private:
  // Appended in place: a string per label and value (fmt::format, the
  // escaped copy) was most of what rendering cost, once a sample.
  void write(const Labels& labels, std::string_view value) {
    if (!headed_) {
      fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name_, help_, name_, type_);
      headed_ = true;
    }
    out_ += name_;
    bool any = false;
    auto label = [&](std::string_view name, const std::string& value) {
      out_ += any ? ',' : '{';
      any = true;
      out_ += name;
      out_ += "=\"";
      if (value.find_first_of("\\\"\n") == std::string::npos)
        out_ += value;
      else
        out_ += escape_label_value(value);
      out_ += '"';
    };
    for (const auto& [name, value] : labels) label(name, value);
    if (constant_)
      for (const auto& [name, value] : *constant_) label(name, value);
    if (any) out_ += '}';
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  const char* name_ = "";
  const char* type_ = "";
  const char* help_ = "";
  bool headed_ = false;
  std::string out_;
  const std::vector<std::pair<std::string, std::string>>* constant_ = nullptr;
};

// The Kubernetes names of a cgroup or process, as labels, where known.
Labels with_k8s(Labels l, const std::string& ns, const std::string& pod, const std::string& container) {
  if (!pod.empty()) {
    l.emplace_back("namespace", ns);
    l.emplace_back("pod", pod);
    if (!container.empty()) l.emplace_back("container", container);
  }
  return l;
}
Labels cgroup_labels(const CgroupSample& c) {
  return with_k8s({{"pool", "cgroup"}, {"cgroup", c.path}}, c.k8s_namespace, c.k8s_pod, c.k8s_container);
}

std::optional<uint64_t> minus(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a || !b || *b > *a) return std::nullopt;
  return *a - *b;
}

std::optional<double> us_to_s(std::optional<uint64_t> us) {
  if (!us) return std::nullopt;
  return static_cast<double>(*us) / 1e6;
}

// Every label name aimem's own series use: a constant label may not shadow one.
constexpr std::string_view kOwnLabels[] = {"pool", "cgroup", "gpu", "pid", "comm", "kind", "target", "selector",
                                           "namespace", "pod", "container", "severity"};

}  // namespace


std::optional<double> mean_first_token_seconds(const ServerSample& prev, const ServerSample& cur) {
  if (!prev.ttft_sum_s || !prev.ttft_count || !cur.ttft_sum_s || !cur.ttft_count) return std::nullopt;
  double dn = *cur.ttft_count - *prev.ttft_count;
  double ds = *cur.ttft_sum_s - *prev.ttft_sum_s;
  if (dn <= 0 || ds < 0) return std::nullopt;
  return ds / dn;
}

std::vector<const ProcessSample*> notable_processes(const Sample& s, size_t largest) {
  std::vector<const ProcessSample*> procs;
  for (const auto& p : s.processes) procs.push_back(&p);
  std::stable_sort(procs.begin(), procs.end(), [](auto* a, auto* b) { return a->rss > b->rss; });
  std::vector<const ProcessSample*> out;
  for (size_t i = 0; i < procs.size(); ++i)
    if (i < largest || !procs[i]->role.empty() || procs[i]->gpu_bytes.value_or(0) > 0) out.push_back(procs[i]);
  return out;
}

Result<std::pair<std::string, std::string>> parse_constant_label(std::string_view spec) {
  size_t eq = spec.find('=');
  if (eq == std::string_view::npos) return make_error(fmt::format("'{}': expected NAME=VALUE", spec));
  std::string_view name = spec.substr(0, eq), value = spec.substr(eq + 1);
  bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9') && name.substr(0, 2) != "__";
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok)
    return make_error(fmt::format("'{}': '{}' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)",
                                  spec, name));
  for (std::string_view own : kOwnLabels)
    if (name == own) return make_error(fmt::format("'{}': aimem's own series use the label '{}'", spec, name));
  if (value.empty()) return make_error(fmt::format("'{}': the value is empty", spec));
  if (value.size() > 256) return make_error(fmt::format("'{}...': the value is longer than 256 bytes", spec.substr(0, 40)));
  return std::pair<std::string, std::string>(std::string(name), std::string(value));
}

std::string render_metrics(const Sample& s, const ExportExtras& x) {
  Writer w;
  w.constant(&x.labels);
  const HostSample& h = s.host;

  w.family("aimem_memory_used_bytes", "gauge",
           "Memory in use by pool: host_ram (total - available), swap, cgroup (usage), gpu.");
  w.series({{"pool", "host_ram"}}, minus(h.mem_total, h.mem_available));
  w.series({{"pool", "swap"}}, minus(h.swap_total, h.swap_free));
  for (const auto& c : s.cgroups) w.series(cgroup_labels(c), c.usage);
  for (const auto& g : s.gpus) w.series({{"pool", "gpu"}, {"gpu", std::to_string(g.index)}}, g.used);

  w.family("aimem_memory_limit_bytes", "gauge", "Capacity of each pool: MemTotal, SwapTotal, the cgroup limit, GPU memory.");
  w.series({{"pool", "host_ram"}}, h.mem_total);
  w.series({{"pool", "swap"}}, h.swap_total);
  for (const auto& c : s.cgroups) w.series(cgroup_labels(c), c.limit);
  for (const auto& g : s.gpus)
    if (!g.unified) w.series({{"pool", "gpu"}, {"gpu", std::to_string(g.index)}}, g.total);

  w.family("aimem_memory_peak_bytes", "gauge", "Highest usage the kernel recorded for the cgroup (memory.peak / max_usage_in_bytes).");
  for (const auto& c : s.cgroups) w.series(cgroup_labels(c), c.peak);

  // The bounded process set: every process with a role or GPU memory, plus
  // the largest by RSS up to max_processes.
  std::vector<const ProcessSample*> shown = notable_processes(s, x.max_processes);
  std::unordered_map<int, const ProcessSample*> by_pid;
  for (const auto& p : s.processes) by_pid[p.pid] = &p;

  std::string proc_help = fmt::format(
      "Resident memory (VmRSS) of the {} largest processes plus every process with an AI role or GPU memory (bounded to keep cardinality low).",
      x.max_processes);
  w.family("aimem_process_resident_bytes", "gauge", proc_help.c_str());
  for (const auto* p : shown)
    w.series(with_k8s({{"pid", std::to_string(p->pid)}, {"comm", p->comm}, {"cgroup", p->cgroup}}, p->k8s_namespace, p->k8s_pod,
                      p->k8s_container),
             p->rss);

  w.family("aimem_process_gpu_bytes", "gauge", "GPU memory NVML reports for each process, by GPU.");
  for (const auto& gp : s.gpu_processes) {
    auto it = by_pid.find(gp.pid);
    w.series(with_k8s({{"pid", std::to_string(gp.pid)}, {"comm", it == by_pid.end() ? "" : it->second->comm}, {"gpu", std::to_string(gp.gpu)}},
                      gp.k8s_namespace, gp.k8s_pod, gp.k8s_container),
             gp.used);
  }

  w.family("aimem_gpu_memory_used_bytes", "gauge", "GPU memory in use (NVML).");
  for (const auto& g : s.gpus) w.series({{"gpu", std::to_string(g.index)}}, g.used);
  w.family("aimem_gpu_memory_total_bytes", "gauge", "GPU memory capacity (NVML); absent on unified-memory devices.");
  for (const auto& g : s.gpus)
    if (!g.unified) w.series({{"gpu", std::to_string(g.index)}}, g.total);

  w.family("aimem_oom_kills_total", "counter", "OOM kills: host_ram from /proc/vmstat oom_kill, cgroup from memory.events / memory.oom_control.");
  w.series({{"pool", "host_ram"}}, h.oom_kills);
  for (const auto& c : s.cgroups) w.series(cgroup_labels(c), c.oom_kill);

  w.family("aimem_memory_pressure_seconds_total", "counter", "Time tasks stalled on memory (PSI total), kind some or full.");
  w.series({{"pool", "host_ram"}, {"kind", "some"}}, us_to_s(h.psi_some_total_us));
  w.series({{"pool", "host_ram"}, {"kind", "full"}}, us_to_s(h.psi_full_total_us));
  for (const auto& c : s.cgroups) {
    Labels some = cgroup_labels(c), full = some;
    some.emplace_back("kind", "some");
    full.emplace_back("kind", "full");
    w.series(some, us_to_s(c.psi_some_total_us));
    w.series(full, us_to_s(c.psi_full_total_us));
  }

  w.family("aimem_time_to_exhaustion_seconds", "gauge",
           "Forecast time until the pool is full, from the shape of its recent usage (steady, accelerating, "
           "sawtooth peaks, slow leak).");
  std::unordered_map<std::string_view, const CgroupSample*> cgroup_by_path;
  for (const auto& c : s.cgroups) cgroup_by_path.emplace(c.path, &c);
  for (const auto& f : x.exhaustion) {
    Labels l{{"pool", f.pool}};
    if (!f.cgroup.empty()) {
      auto it = cgroup_by_path.find(f.cgroup);
      l = it != cgroup_by_path.end() ? cgroup_labels(*it->second) : Labels{{"pool", f.pool}, {"cgroup", f.cgroup}};
    }
    if (!f.gpu.empty()) l.emplace_back("gpu", f.gpu);
    w.series(l, f.seconds);
  }

  w.family("aimem_inference_up", "gauge", "1 when the last scrape of the inference server succeeded.");
  for (const auto& v : s.servers) w.series({{"target", v.target}}, v.up ? 1.0 : 0.0);
  w.family("aimem_inference_running_requests", "gauge", "Requests the inference server is running now.");
  for (const auto& v : s.servers) w.series({{"target", v.target}}, v.running);
  w.family("aimem_inference_waiting_requests", "gauge", "Requests queued in the inference server.");
  for (const auto& v : s.servers) w.series({{"target", v.target}}, v.waiting);
  w.family("aimem_inference_kv_cache_usage_ratio", "gauge", "KV cache in use, 0 to 1.");
  for (const auto& v : s.servers) w.series({{"target", v.target}}, v.kv_usage_ratio);
  w.family("aimem_inference_context_tokens", "gauge", "Tokens of context the server holds now (or the loaded context size, Ollama).");
  for (const auto& v : s.servers) w.series({{"target", v.target}}, v.context_tokens);
  w.family("aimem_inference_first_token_seconds", "gauge", "Mean time to first token over the requests since the previous scrape.");
  for (const auto& v : s.servers)
    if (auto it = x.first_token_seconds.find(v.target); it != x.first_token_seconds.end()) w.series({{"target", v.target}}, it->second);
  w.family("aimem_inference_custom_value", "gauge", "A metric the user named on the target, summed over matching series.");
  for (const auto& v : s.servers)
    for (const auto& [sel, val] : v.custom) w.series({{"target", v.target}, {"selector", sel}}, val);

  w.family("aimem_sample_duration_seconds", "gauge", "Time aimem took to take the last sample.");
  w.series({}, x.sample_duration_s);
  return w.take();
}

}  // namespace aimem::watch
