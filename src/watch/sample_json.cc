// Key table (keep stable: stores on disk use it).
//  Sample: t time_us, h host, c cgroups, p processes, g gpus, gp gpu_processes, s servers
//  host:   mt ma st sf (mem/swap total/available/free), s10 f10 (psi avg10), st_us ft_us, ok (oom_kills)
//  cgroup: path v u l pk sw an fi ke sh oom ok mx hi fc uo st_us ft_us pod ctr
//  process: pid pp comm role cg rss hwm sw gpu
//  gpu: i name uuid tot used uni      gpu process: gpu pid used cg pod ctr
//  server: url k up pb run wait kv pt gt ts tc ctx mb mvb cu
//  Event: t k key sum body
#include "watch/sample_json.h"

#include <cmath>
#include <limits>

namespace aimem::watch {
namespace {

using nlohmann::json;

void put(json& j, const char* k, const std::optional<uint64_t>& v) {
  if (v) j[k] = *v;
}
void put(json& j, const char* k, const std::optional<double>& v) {
  if (v && std::isfinite(*v)) j[k] = *v;
}
void put(json& j, const char* k, const std::string& v) {
  if (!v.empty()) j[k] = v;
}
void put(json& j, const char* k, bool v) {
  if (v) j[k] = true;
}

const json* field(const json& j, const char* k) {
  auto it = j.find(k);
  return it == j.end() ? nullptr : &*it;
}
void get(const json& j, const char* k, std::optional<uint64_t>& v) {
  if (const json* f = field(j, k); f && f->is_number_unsigned()) v = f->get<uint64_t>();
}
void get(const json& j, const char* k, uint64_t& v) {
  if (const json* f = field(j, k); f && f->is_number_unsigned()) v = f->get<uint64_t>();
}
void get(const json& j, const char* k, std::optional<double>& v) {
  if (const json* f = field(j, k); f && f->is_number()) v = f->get<double>();
}
void get(const json& j, const char* k, std::string& v) {
  if (const json* f = field(j, k); f && f->is_string()) v = f->get<std::string>();
}
void get(const json& j, const char* k, bool& v) {
  if (const json* f = field(j, k); f && f->is_boolean()) v = f->get<bool>();
}
template <typename I>
void get_int(const json& j, const char* k, I& v) {
  const json* f = field(j, k);
  if (!f || !f->is_number_integer()) return;
  if (f->is_number_unsigned()) {
    uint64_t u = f->get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<I>::max())) v = static_cast<I>(u);
  } else {
    int64_t s = f->get<int64_t>();
    if (s >= static_cast<int64_t>(std::numeric_limits<I>::min()) &&
        (s < 0 || static_cast<uint64_t>(s) <= static_cast<uint64_t>(std::numeric_limits<I>::max())))
      v = static_cast<I>(s);
  }
}
// Calls fn on each object element of array k.
template <typename F>
void each(const json& j, const char* k, F fn) {
  const json* f = field(j, k);
  if (!f || !f->is_array()) return;
  for (const json& e : *f)
    if (e.is_object()) fn(e);
}

json host_json(const HostSample& h) {
  json j = json::object();
  put(j, "mt", h.mem_total);
  put(j, "ma", h.mem_available);
  put(j, "st", h.swap_total);
  put(j, "sf", h.swap_free);
  put(j, "s10", h.psi_some_avg10);
  put(j, "f10", h.psi_full_avg10);
  put(j, "st_us", h.psi_some_total_us);
  put(j, "ft_us", h.psi_full_total_us);
  put(j, "ok", h.oom_kills);
  return j;
}

HostSample host_from(const json& j) {
  HostSample h;
  get(j, "mt", h.mem_total);
  get(j, "ma", h.mem_available);
  get(j, "st", h.swap_total);
  get(j, "sf", h.swap_free);
  get(j, "s10", h.psi_some_avg10);
  get(j, "f10", h.psi_full_avg10);
  get(j, "st_us", h.psi_some_total_us);
  get(j, "ft_us", h.psi_full_total_us);
  get(j, "ok", h.oom_kills);
  return h;
}

json cgroup_json(const CgroupSample& c) {
  json j = json::object();
  j["path"] = c.path;
  if (c.version) j["v"] = c.version;
  put(j, "u", c.usage);
  put(j, "l", c.limit);
  put(j, "pk", c.peak);
  put(j, "sw", c.swap_usage);
  put(j, "an", c.anon);
  put(j, "fi", c.file);
  put(j, "ke", c.kernel);
  put(j, "sh", c.shmem);
  put(j, "oom", c.oom);
  put(j, "ok", c.oom_kill);
  put(j, "mx", c.max_events);
  put(j, "hi", c.high_events);
  put(j, "fc", c.failcnt);
  put(j, "uo", c.under_oom);
  put(j, "st_us", c.psi_some_total_us);
  put(j, "ft_us", c.psi_full_total_us);
  put(j, "pod", c.pod_uid);
  put(j, "ctr", c.container_id);
  return j;
}

CgroupSample cgroup_from(const json& j) {
  CgroupSample c;
  get(j, "path", c.path);
  get_int(j, "v", c.version);
  get(j, "u", c.usage);
  get(j, "l", c.limit);
  get(j, "pk", c.peak);
  get(j, "sw", c.swap_usage);
  get(j, "an", c.anon);
  get(j, "fi", c.file);
  get(j, "ke", c.kernel);
  get(j, "sh", c.shmem);
  get(j, "oom", c.oom);
  get(j, "ok", c.oom_kill);
  get(j, "mx", c.max_events);
  get(j, "hi", c.high_events);
  get(j, "fc", c.failcnt);
  get(j, "uo", c.under_oom);
  get(j, "st_us", c.psi_some_total_us);
  get(j, "ft_us", c.psi_full_total_us);
  get(j, "pod", c.pod_uid);
  get(j, "ctr", c.container_id);
  return c;
}

json process_json(const ProcessSample& p) {
  json j = json::object();
  j["pid"] = p.pid;
  if (p.ppid) j["pp"] = p.ppid;
  put(j, "comm", p.comm);
  put(j, "role", p.role);
  put(j, "cg", p.cgroup);
  j["rss"] = p.rss;
  put(j, "hwm", p.hwm);
  put(j, "sw", p.swap);
  put(j, "gpu", p.gpu_bytes);
  return j;
}

ProcessSample process_from(const json& j) {
  ProcessSample p;
  get_int(j, "pid", p.pid);
  get_int(j, "pp", p.ppid);
  get(j, "comm", p.comm);
  get(j, "role", p.role);
  get(j, "cg", p.cgroup);
  get(j, "rss", p.rss);
  get(j, "hwm", p.hwm);
  get(j, "sw", p.swap);
  get(j, "gpu", p.gpu_bytes);
  return p;
}

json gpu_json(const GpuSample& g) {
  json j = json::object();
  j["i"] = g.index;
  put(j, "name", g.name);
  put(j, "uuid", g.uuid);
  put(j, "tot", g.total);
  put(j, "used", g.used);
  put(j, "uni", g.unified);
  return j;
}

GpuSample gpu_from(const json& j) {
  GpuSample g;
  get_int(j, "i", g.index);
  get(j, "name", g.name);
  get(j, "uuid", g.uuid);
  get(j, "tot", g.total);
  get(j, "used", g.used);
  get(j, "uni", g.unified);
  return g;
}

json gpu_process_json(const GpuProcessSample& g) {
  json j = json::object();
  j["gpu"] = g.gpu;
  j["pid"] = g.pid;
  j["used"] = g.used;
  put(j, "cg", g.cgroup);
  put(j, "pod", g.pod_uid);
  put(j, "ctr", g.container_id);
  return j;
}

GpuProcessSample gpu_process_from(const json& j) {
  GpuProcessSample g;
  get_int(j, "gpu", g.gpu);
  get_int(j, "pid", g.pid);
  get(j, "used", g.used);
  get(j, "cg", g.cgroup);
  get(j, "pod", g.pod_uid);
  get(j, "ctr", g.container_id);
  return g;
}

json server_json(const ServerSample& s) {
  json j = json::object();
  j["url"] = s.target;
  put(j, "k", s.kind);
  put(j, "up", s.up);
  put(j, "pb", s.problem);
  put(j, "run", s.running);
  put(j, "wait", s.waiting);
  put(j, "kv", s.kv_usage_ratio);
  put(j, "pt", s.prompt_tokens_total);
  put(j, "gt", s.generation_tokens_total);
  put(j, "ts", s.ttft_sum_s);
  put(j, "tc", s.ttft_count);
  put(j, "ctx", s.context_tokens);
  put(j, "mb", s.model_bytes);
  put(j, "mvb", s.model_vram_bytes);
  if (!s.custom.empty()) {
    json c = json::object();
    for (const auto& [k, v] : s.custom)
      if (std::isfinite(v)) c[k] = v;
    j["cu"] = std::move(c);
  }
  return j;
}

ServerSample server_from(const json& j) {
  ServerSample s;
  get(j, "url", s.target);
  get(j, "k", s.kind);
  get(j, "up", s.up);
  get(j, "pb", s.problem);
  get(j, "run", s.running);
  get(j, "wait", s.waiting);
  get(j, "kv", s.kv_usage_ratio);
  get(j, "pt", s.prompt_tokens_total);
  get(j, "gt", s.generation_tokens_total);
  get(j, "ts", s.ttft_sum_s);
  get(j, "tc", s.ttft_count);
  get(j, "ctx", s.context_tokens);
  get(j, "mb", s.model_bytes);
  get(j, "mvb", s.model_vram_bytes);
  if (const json* c = field(j, "cu"); c && c->is_object())
    for (const auto& [k, v] : c->items())
      if (v.is_number()) s.custom[k] = v.get<double>();
  return s;
}

template <typename T, typename F>
json array_of(const std::vector<T>& v, F fn) {
  json a = json::array();
  for (const T& x : v) a.push_back(fn(x));
  return a;
}

}  // namespace

json to_json(const Sample& s) {
  json j = json::object();
  j["t"] = s.time_us;
  json h = host_json(s.host);
  if (!h.empty()) j["h"] = std::move(h);
  if (!s.cgroups.empty()) j["c"] = array_of(s.cgroups, cgroup_json);
  if (!s.processes.empty()) j["p"] = array_of(s.processes, process_json);
  if (!s.gpus.empty()) j["g"] = array_of(s.gpus, gpu_json);
  if (!s.gpu_processes.empty()) j["gp"] = array_of(s.gpu_processes, gpu_process_json);
  if (!s.servers.empty()) j["s"] = array_of(s.servers, server_json);
  return j;
}

Sample sample_from_json(const json& j) {
  Sample s;
  if (!j.is_object()) return s;
  get_int(j, "t", s.time_us);
  if (const json* h = field(j, "h"); h && h->is_object()) s.host = host_from(*h);
  each(j, "c", [&](const json& e) { s.cgroups.push_back(cgroup_from(e)); });
  each(j, "p", [&](const json& e) { s.processes.push_back(process_from(e)); });
  each(j, "g", [&](const json& e) { s.gpus.push_back(gpu_from(e)); });
  each(j, "gp", [&](const json& e) { s.gpu_processes.push_back(gpu_process_from(e)); });
  each(j, "s", [&](const json& e) { s.servers.push_back(server_from(e)); });
  return s;
}

json to_json(const Event& e) {
  json j = json::object();
  j["t"] = e.time_us;
  j["k"] = e.kind;
  put(j, "key", e.key);
  put(j, "sum", e.summary);
  put(j, "body", e.body);
  return j;
}

Event event_from_json(const json& j) {
  Event e;
  if (!j.is_object()) return e;
  get_int(j, "t", e.time_us);
  get(j, "k", e.kind);
  get(j, "key", e.key);
  get(j, "sum", e.summary);
  get(j, "body", e.body);
  return e;
}

std::string dump_compact(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace aimem::watch
