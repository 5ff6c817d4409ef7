// The names Kubernetes gives what the sampler sees as a pod UID and a
// container ID (from the cgroup path, core/cgroup_path.h): namespace, pod and
// container, read from the kubelet's log folders on the node, never from the
// API server:
//   /var/log/pods/<namespace>_<pod>_<pod-uid>/<container>/<restart>.log
//   /var/log/containers/<pod>_<namespace>_<container>-<container-id>.log
// (the layout of the kubelet's CRI logs since Kubernetes 1.14: kubelet
// pkg/kubelet/kuberuntime/helpers.go BuildPodLogsDirectory and
// BuildContainerLogsDirectory; /var/log/containers holds symlinks named so).
// Namespaces and pod names are DNS labels or subdomains and container names
// DNS labels, so none holds '_' and the splits below are unambiguous.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace aimem {

struct KubeName {
  std::string ns, pod, container;  // container empty for a pod-level cgroup
};

// "<namespace>_<pod>_<uid>" -> {namespace, pod, uid}; nullopt for any other name.
struct PodDir {
  std::string ns, pod, uid;
};
std::optional<PodDir> parse_pod_log_dir(std::string_view name);

// "<pod>_<namespace>_<container>-<id>.log" -> {namespace, pod, container, id}.
struct ContainerLog {
  std::string ns, pod, container, id;
};
std::optional<ContainerLog> parse_container_log_name(std::string_view name);

// The names under `root` (the node's /, or /host in a DaemonSet), listed
// again at most once per `relist_s` seconds and only when asked for a UID or
// an ID not yet known, so a steady node costs no listing per sample. Bounded:
// kMaxPods pods and kMaxContainers containers are kept.
class KubeNames {
 public:
  explicit KubeNames(std::string root, double relist_s = 30);
  // Names for a cgroup's pod UID and container ID (either may be empty);
  // nullopt when neither is known. `now_s` is a monotonic clock in seconds.
  std::optional<KubeName> lookup(const std::string& pod_uid, const std::string& container_id, double now_s);
  bool available() const { return available_; }  // the log folders exist under root

  static constexpr size_t kMaxPods = 4096, kMaxContainers = 16384;

 private:
  void relist();
  std::string root_;
  double relist_s_;
  std::optional<double> listed_at_;
  bool available_ = false;
  std::unordered_map<std::string, PodDir> pods_;                // by UID
  std::unordered_map<std::string, ContainerLog> containers_;    // by container ID
};

}  // namespace aimem
