// Cgroup paths as the kernel prints them (oom_memcg=, task_memcg=, "Memory
// cgroup stats for", "limit of") and as /proc/<pid>/cgroup lists them. The
// shapes that matter:
//   Kubernetes, cgroupfs driver: /kubepods[/burstable|/besteffort]/pod<uid>[/<container id>]
//   Kubernetes, systemd driver:  /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid_>.slice/cri-containerd-<id>.scope
//                                (under a kubelet cgroup root, as on kind's nodes: .../kubelet.slice/kubelet-kubepods.slice/
//                                kubelet-kubepods-pod<uid_>.slice/cri-containerd-<id>.scope)
//                                (also crio-<id>.scope, docker-<id>.scope); Guaranteed pods sit under kubepods directly
//   Docker: /docker/<id> or /system.slice/docker-<id>.scope; Podman: /machine.slice/libpod-<id>.scope
//   systemd: /system.slice/<name>.service, /user.slice/..., LXC: /lxc/<name>
// The kubepods root and its QoS children carry the node-allocatable limit, so an
// OOM charged there means the pods together exhausted the node.
#include "core/cgroup_path.h"

#include "core/text.h"

namespace aimem {
namespace {

std::string strip_scope(std::string_view c) {
  for (std::string_view prefix : {"cri-containerd-", "crio-conmon-", "crio-", "docker-", "libpod-conmon-", "libpod-", "containerd-"})
    if (text::starts_with(c, prefix)) c.remove_prefix(prefix.size());
  if (text::ends_with(c, ".scope")) c.remove_suffix(6);
  return std::string(c);
}

// A kubelet given a cgroup root (kind's nodes: --cgroup-root=/kubelet) names
// its slices after it: "kubelet-kubepods.slice", "kubelet-kubepods-burstable.slice".
bool is_qos(std::string_view c) {
  return c == "burstable" || c == "besteffort" || c == "guaranteed" || text::ends_with(c, "kubepods-burstable.slice") ||
         text::ends_with(c, "kubepods-besteffort.slice") || text::ends_with(c, "kubepods-guaranteed.slice");
}

bool is_kubepods(std::string_view c) { return c == "kubepods" || c == "kubepods.slice" || text::ends_with(c, "-kubepods.slice"); }

}  // namespace

CgroupInfo parse_cgroup_path(std::string_view path) {
  CgroupInfo info;
  path = text::trim(path);
  if (path.empty()) return info;
  if (path == "/") {
    info.kind = CgroupKind::root;
    return info;
  }
  std::vector<std::string_view> parts;
  for (auto p : text::split(path, '/'))
    if (!p.empty()) parts.push_back(p);
  if (parts.empty()) {
    info.kind = CgroupKind::root;
    return info;
  }

  // Kubernetes: find the kubepods component anywhere (some runtimes nest it).
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!is_kubepods(parts[i])) continue;
    size_t j = i + 1;
    if (j < parts.size() && is_qos(parts[j])) ++j;
    if (j >= parts.size()) {
      info.kind = CgroupKind::k8s_node;
      return info;
    }
    std::string_view pod = parts[j];
    size_t pp = pod.rfind("pod");
    if (pp != std::string_view::npos) {
      std::string uid(pod.substr(pp + 3));
      if (text::ends_with(uid, ".slice")) uid.resize(uid.size() - 6);
      for (char& c : uid)
        if (c == '_') c = '-';
      info.pod_uid = uid;
    }
    // Anything below the QoS level is a pod (a cut path "…/kubepods" included).
    if (j + 1 < parts.size()) {
      info.kind = CgroupKind::k8s_container;
      info.container_id = strip_scope(parts[j + 1]);
    } else {
      info.kind = CgroupKind::k8s_pod;
    }
    return info;
  }

  const std::string_view last = parts.back();
  if (parts[0] == "docker" && parts.size() >= 2) {
    info.kind = CgroupKind::docker;
    info.container_id = std::string(parts[1]);
    return info;
  }
  if (text::starts_with(last, "docker-") && text::ends_with(last, ".scope")) {
    info.kind = CgroupKind::docker;
    info.container_id = strip_scope(last);
    return info;
  }
  for (auto p : parts) {
    if (text::starts_with(p, "libpod-")) {
      info.kind = CgroupKind::podman;
      info.container_id = strip_scope(p);
      return info;
    }
  }
  if (parts[0] == "lxc" || parts[0] == "lxc.payload" || text::starts_with(parts[0], "lxc.payload.")) {
    info.kind = CgroupKind::lxc;
    return info;
  }
  if (parts[0] == "user.slice") {
    info.kind = CgroupKind::user_session;
    return info;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (text::ends_with(*it, ".service")) {
      info.kind = CgroupKind::systemd_service;
      info.unit = std::string(*it);
      return info;
    }
  }
  if (text::ends_with(last, ".slice")) {
    info.kind = CgroupKind::systemd_slice;
    info.unit = std::string(last);
    return info;
  }
  info.kind = CgroupKind::other;
  return info;
}

}  // namespace aimem
