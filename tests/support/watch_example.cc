#include "support/watch_example.h"

namespace aimem::watch {

namespace {
constexpr uint64_t kMiB = 1u << 20;
}  // namespace

Sample example_sample() {
  Sample s;
  s.time_us = 1'700'000'000'000'000;
  s.host.mem_total = 8192 * kMiB;
  s.host.mem_available = 3072 * kMiB;
  s.host.swap_total = 2048 * kMiB;
  s.host.swap_free = 2000 * kMiB;
  s.host.oom_kills = 3;
  s.host.psi_some_total_us = 2'500'000;
  s.host.psi_full_total_us = 1'000'000;
  CgroupSample c;
  c.path = "/aimem-test";
  c.version = 1;
  c.usage = 40 * kMiB;
  c.limit = 48 * kMiB;
  c.peak = 47 * kMiB;
  c.oom_kill = 1;
  s.cgroups.push_back(c);
  CgroupSample odd;
  odd.path = "/we\"ird\\path\nname";
  odd.version = 2;
  odd.usage = 1 * kMiB;  // no limit: the host's
  odd.psi_some_total_us = 750'000;
  s.cgroups.push_back(odd);
  for (int i = 0; i < 60; ++i) {
    ProcessSample p;
    p.pid = 1000 + i;
    p.comm = "worker" + std::to_string(i);
    p.cgroup = "/aimem-test";
    p.rss = (100 + i) * kMiB;
    s.processes.push_back(p);
  }
  ProcessSample vllm;
  vllm.pid = 42;
  vllm.comm = "python3";
  vllm.role = "vllm";
  vllm.rss = 1 * kMiB;  // small, but it has a role
  s.processes.push_back(vllm);
  ProcessSample gpu;
  gpu.pid = 43;
  gpu.comm = "llama-server";
  gpu.rss = 2 * kMiB;
  gpu.gpu_bytes = 6000 * kMiB;
  s.processes.push_back(gpu);
  GpuSample g0;
  g0.index = 0;
  g0.total = 24576 * kMiB;
  g0.used = 9000 * kMiB;
  s.gpus.push_back(g0);
  GpuSample g1;
  g1.index = 1;
  g1.unified = true;
  g1.used = 100 * kMiB;
  s.gpus.push_back(g1);
  s.gpu_processes.push_back(GpuProcessSample{0, 43, 6000 * kMiB, "/aimem-test", "", ""});
  ServerSample v;
  v.target = "http://127.0.0.1:8000/metrics";
  v.kind = "vllm";
  v.up = true;
  v.running = 9;
  v.waiting = 7;
  v.kv_usage_ratio = 0.97;
  v.custom["queue_depth"] = 12;
  s.servers.push_back(v);
  ServerSample down;
  down.target = "http://127.0.0.1:8080/metrics";
  down.kind = "llamacpp";
  down.problem = "connection refused";
  s.servers.push_back(down);
  return s;
}

ExportExtras example_extras() {
  ExportExtras x;
  x.exhaustion.push_back({"cgroup", "/aimem-test", "", 95.5});
  x.exhaustion.push_back({"gpu", "", "0", 3600});
  x.first_token_seconds["http://127.0.0.1:8000/metrics"] = 0.25;
  x.sample_duration_s = 0.0012;
  return x;
}

}  // namespace aimem::watch
