// One sample of every memory pool the watch sampler sees, at one instant.
// Shared by the sampler (sampler.cc), the store (store.cc), the exporter
// (exporter.cc), the alerts and the recording analysis (alerts.cc, trend.cc),
// and `aimem run` / `aimem watch`. Sizes are bytes; times are microseconds
// since the Unix epoch (wall clock) unless named _mono_us. A value the host did
// not expose is nullopt, never 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aimem::watch {

struct HostSample {
  std::optional<uint64_t> mem_total, mem_available, swap_total, swap_free;
  // /proc/pressure/memory: avg10 in percent, total in microseconds stalled.
  std::optional<double> psi_some_avg10, psi_full_avg10;
  std::optional<uint64_t> psi_some_total_us, psi_full_total_us;
  std::optional<uint64_t> oom_kills;  // /proc/vmstat oom_kill (since boot)
};

struct CgroupSample {
  std::string path;  // relative to the memory hierarchy's root, "/" for the root
  int version = 0;   // 1 or 2
  std::optional<uint64_t> usage, limit, peak, swap_usage;
  std::optional<uint64_t> anon, file, kernel, shmem;  // memory.stat
  // v2 memory.events: oom (allocation failures at the limit), oom_kill,
  // max (times the limit was hit), high. v1: oom_kill from memory.oom_control,
  // failcnt (limit hits).
  std::optional<uint64_t> oom, oom_kill, max_events, high_events, failcnt;
  bool under_oom = false;
  std::optional<uint64_t> psi_some_total_us, psi_full_total_us;  // v2 memory.pressure
  // What the path says it is (parse_cgroup_path): pod UID, container id, unit.
  std::string pod_uid, container_id;
  // Their Kubernetes names from the kubelet's log folders (kube_names.h);
  // empty off Kubernetes or when the node's /var/log/pods is not visible.
  std::string k8s_namespace, k8s_pod, k8s_container;
};

struct ProcessSample {
  int pid = 0, ppid = 0;
  std::string comm;     // /proc/PID/comm
  std::string role;     // "vllm", "llama-server", "ollama", "tgi", "sglang", "python", "node", "java", "" (read from cmdline)
  std::string cgroup;   // memory cgroup path (relative, as in CgroupSample::path)
  uint64_t rss = 0;     // VmRSS
  std::optional<uint64_t> hwm, swap;  // VmHWM, VmSwap
  std::optional<uint64_t> gpu_bytes;  // sum over GPUs (NVML per-process)
  std::string k8s_namespace, k8s_pod, k8s_container;  // of its cgroup (CgroupSample)
};

struct GpuSample {
  unsigned index = 0;
  std::string name, uuid;
  std::optional<uint64_t> total, used;  // nullopt total: NVML did not say
  bool unified = false;  // unified memory (total 0 / not supported): pressure lands on host RAM
};

struct GpuProcessSample {
  unsigned gpu = 0;
  int pid = 0;  // host pid as NVML reports it
  uint64_t used = 0;
  std::string cgroup;  // from /proc/PID/cgroup, empty when the pid is not visible
  std::string pod_uid, container_id;
  std::string k8s_namespace, k8s_pod, k8s_container;  // as CgroupSample's
};

// One scrape of an inference server (vLLM, llama.cpp server, TGI, SGLang
// /metrics; Ollama /api/ps) or of any Prometheus endpoint the user names.
struct ServerSample {
  std::string target;  // URL
  std::string kind;    // "vllm", "llamacpp", "tgi", "sglang", "ollama", "prometheus"
  bool up = false;
  std::string problem;  // why not up
  std::optional<double> running, waiting;          // requests
  std::optional<double> kv_usage_ratio;            // 0..1
  std::optional<double> prompt_tokens_total, generation_tokens_total;  // counters
  std::optional<double> ttft_sum_s, ttft_count;    // histogram sum/count: rate -> mean TTFT
  std::optional<double> context_tokens;            // largest/mean context in flight where exposed
  std::optional<uint64_t> model_bytes, model_vram_bytes;  // Ollama /api/ps
  std::map<std::string, double> custom;            // metrics the user named
};

struct Sample {
  int64_t time_us = 0;
  HostSample host;
  std::vector<CgroupSample> cgroups;
  std::vector<ProcessSample> processes;
  std::vector<GpuSample> gpus;
  std::vector<GpuProcessSample> gpu_processes;
  std::vector<ServerSample> servers;
};

// Something that happened, stored beside the samples: an OOM kill (with its
// diagnosis), an OOM event counter step, an alert, a restart, the end of
// `aimem run`'s command.
struct Event {
  int64_t time_us = 0;
  std::string kind;     // "oom_kill", "oom_event", "alert", "restart", "exit", "note"
  std::string key;      // pod UID, container id or cgroup path the event belongs to
  std::string summary;  // one line for people
  std::string body;     // JSON: the diagnosis, the memory.events deltas, the alert
};

}  // namespace aimem::watch
