// What `aimem check` reads out of a deployment file, whatever its format: a
// workload (a Kubernetes controller or Pod, a Compose service, a systemd
// unit, a command line) with its containers, each field carrying where it was
// written so that a finding can point at it. The readers (k8s.cc,
// compose.cc, systemd.cc, command line in check.cc) fill these structs; the
// rules read only them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aimem::check {

// 1-based line and column; 0 when unknown.
struct Loc {
  std::string file;
  int line = 0;
  int column = 0;
};

template <typename T>
struct At {
  T value{};
  Loc at;
};

struct Arg {
  std::string text;
  Loc at;
};

struct Probe {
  std::string kind;  // httpGet, tcpSocket, exec, grpc, healthcheck (Compose)
  std::string path;  // httpGet path
  Loc at;
};

// An emptyDir with medium: Memory that a container mounts: tmpfs, whose pages
// count against the container's memory limit.
struct MemoryVolume {
  uint64_t size_limit = 0;  // sizeLimit; 0 = none
  std::string mount_path;
  Loc at;
};

struct Container {
  std::string name;
  Loc at;
  std::string image;
  std::vector<Arg> argv;                       // command then args; shell strings split into words
  std::vector<std::pair<std::string, Arg>> env;
  std::optional<At<uint64_t>> mem_limit, mem_request;
  std::optional<At<int64_t>> gpus;             // -1 = all GPUs (Compose `gpus: all`)
  std::string gpu_devices;                     // device ids when named ("0,1"), for GPU sharing
  std::optional<Probe> readiness, startup;
  bool has_prestop = false;
  std::optional<At<int64_t>> swap_limit;       // Compose memswap_limit, systemd MemorySwapMax (-1 = unlimited)
  std::vector<MemoryVolume> memory_volumes;

  const Arg* env_var(const std::string& name) const {
    for (const auto& [k, v] : env)
      if (k == name) return &v;
    return nullptr;
  }
};

enum class Platform { kKubernetes, kCompose, kSystemd, kCommand };

struct Workload {
  Platform platform = Platform::kKubernetes;
  std::string kind;  // Deployment, StatefulSet, ..., "service" (Compose), "unit" (systemd), "command"
  std::string name;
  Loc at;            // the document (kind:) or the service / unit
  int document = 0;  // index of the YAML document in its file
  std::vector<Container> containers;
  // Rolling updates (Deployment, DaemonSet): surge as written ("25%", "1", "0").
  bool rolling = false;
  std::optional<At<std::string>> max_surge;
  Loc strategy_at;
  std::optional<At<double>> grace_s;           // terminationGracePeriodSeconds, stop_grace_period, TimeoutStopSec
  std::vector<std::string> node_selector;      // values of nodeSelector / required node affinity
  // False for pods no Service sends requests to: a LeaderWorkerSet's workers
  // (its Service selects the leader), which join the leader's engine.
  bool serves_traffic = true;
};

}  // namespace aimem::check
