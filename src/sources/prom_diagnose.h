// A central Prometheus as evidence for `aimem diagnose --prometheus URL`:
// the post-mortem of a pod (or one container of it) or a node when the
// node's own log is gone. A fixed, bounded set of read-only queries over one
// window, the answers turned into the same facts the log path produces, so
// the verdict, evidence and fixes come from the same diagnosis:
//
//   kube-state-metrics  kube_pod_container_status_last_terminated_reason,
//                       _last_terminated_exitcode, _restarts_total,
//                       kube_pod_container_resource_limits / _requests
//                       {resource="memory"}, kube_pod_status_reason,
//                       kube_pod_info (the pod's node)
//   cAdvisor            container_memory_working_set_bytes,
//                       container_spec_memory_limit_bytes,
//                       container_oom_events_total
//   DCGM exporter       DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_FB_FREE (MiB)
//   node_exporter       node_memory_MemAvailable_bytes, _MemTotal_bytes,
//                       node_vmstat_oom_kill
//   aimem watch         aimem_oom_kills_total (a pod's cgroups; a node's
//                       host_ram and the cgroups whose count is above 0),
//                       aimem_memory_used_bytes and aimem_memory_limit_bytes
//                       {pool="cgroup"} of a pod, {pool="host_ram"} of a
//                       node without node_exporter's MemAvailable
//
// Each fact's provenance is "Prometheus URL (exporter)" and its text quotes
// the series and the sample it came from. The transport is handed in (the
// command wires net's HTTP client), so this file does no I/O of its own and
// the tests can answer from memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "evidence/sink.h"
#include "sources/prom_response.h"

namespace aimem::prom {

struct Scope {
  std::string url;        // for provenance, as the user wrote it
  std::string ns, pod;    // --pod NS/NAME
  std::string container;  // --container (with --pod)
  std::string node;       // --node, or the pod's node from kube_pod_info
  int64_t start_us = 0, end_us = 0;
};

// One GET of the API ("/api/v1/query_range?query=..."): the status and body,
// or an error naming what failed (refused, timed out, too large).
struct HttpAnswer {
  int status = 0;
  std::string body;
};
using Get = std::function<Result<HttpAnswer>(const std::string& path_and_query)>;

// One memory series kept for the trend of the pool that failed (the command
// hands them to watch's trend analysis): pool "cgroup:<id>", "gpu:<n>",
// "host_ram".
struct PoolSeries {
  std::string pool_id;
  std::string owner;        // "ns/pod/container" for a container, the GPU index for a GPU
  std::vector<Point> used;  // bytes
  std::optional<uint64_t> limit;
};

struct Report {
  int64_t step_s = 0;
  size_t queries = 0;
  size_t series = 0;                  // series found about the pod/container or node (not its context)
  std::map<std::string, size_t> found;  // exporter -> series found
  std::vector<std::string> warnings;  // a required series that is missing, a query Prometheus refused
  std::vector<std::string> notes;     // what was read
  std::vector<PoolSeries> pools;
};

// Runs the queries for `scope` through `get`, adds the facts to `sink`. An
// error when the server cannot be used at all (unreachable, not the
// Prometheus API); a missing series is a warning naming it.
Result<Report> collect(const Scope& scope, const Get& get, FactSink& sink);

}  // namespace aimem::prom
