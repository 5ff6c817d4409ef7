// What a cgroup path says it is: a Kubernetes pod or container, a Docker or
// Podman container, a systemd unit, a user session (see cgroup_path.cc for the
// shapes). Shared by the diagnosis (kernel reports name cgroups), the sources
// (/proc/<pid>/cgroup) and watch (the cgroups it samples).
#pragma once

#include <string>
#include <string_view>

namespace aimem {

enum class CgroupKind { unknown, root, k8s_node, k8s_pod, k8s_container, docker, podman, systemd_service, systemd_slice, user_session, lxc, other };
struct CgroupInfo {
  CgroupKind kind = CgroupKind::unknown;
  std::string pod_uid;
  std::string container_id;
  std::string unit;
};
CgroupInfo parse_cgroup_path(std::string_view path);

}  // namespace aimem
