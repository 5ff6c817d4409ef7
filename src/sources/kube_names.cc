// Reads the kubelet's log folder names (see kube_names.h). Only names are
// read (readdir), never the logs or the symlinks' targets.
#include "sources/kube_names.h"

#include <dirent.h>

#include <utility>

namespace aimem {
namespace {

bool is_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !s.empty();
}

// Splits "a_b_c" into exactly three non-empty parts.
bool split3(std::string_view s, std::string_view& a, std::string_view& b, std::string_view& c) {
  size_t p = s.find('_');
  if (p == std::string_view::npos) return false;
  size_t q = s.find('_', p + 1);
  if (q == std::string_view::npos || s.find('_', q + 1) != std::string_view::npos) return false;
  a = s.substr(0, p);
  b = s.substr(p + 1, q - p - 1);
  c = s.substr(q + 1);
  return !a.empty() && !b.empty() && !c.empty();
}

template <typename F>
void each_entry(const std::string& dir, size_t limit, F&& f) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  size_t n = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    if (++n > limit) break;
    f(std::string_view(e->d_name));
  }
  ::closedir(d);
}

}  // namespace

std::optional<PodDir> parse_pod_log_dir(std::string_view name) {
  std::string_view ns, pod, uid;
  if (!split3(name, ns, pod, uid)) return std::nullopt;
  // A UID is a UUID (36 characters of hex and dashes); static pods' UIDs are
  // 32 hex characters (a hash of the manifest).
  if (uid.size() < 32 || uid.size() > 36) return std::nullopt;
  for (char c : uid)
    if (!(c == '-' || is_hex(std::string_view(&c, 1)))) return std::nullopt;
  return PodDir{std::string(ns), std::string(pod), std::string(uid)};
}

std::optional<ContainerLog> parse_container_log_name(std::string_view name) {
  constexpr std::string_view kExt = ".log";
  if (name.size() <= kExt.size() || name.substr(name.size() - kExt.size()) != kExt) return std::nullopt;
  name.remove_suffix(kExt.size());
  std::string_view pod, ns, rest;
  if (!split3(name, pod, ns, rest)) return std::nullopt;
  size_t dash = rest.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  std::string_view id = rest.substr(dash + 1);
  if (id.size() != 64 || !is_hex(id)) return std::nullopt;
  return ContainerLog{std::string(ns), std::string(pod), std::string(rest.substr(0, dash)), std::string(id)};
}

KubeNames::KubeNames(std::string root, double relist_s) : root_(std::move(root)), relist_s_(relist_s) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_ == "/") root_.clear();
}

void KubeNames::relist() {
  pods_.clear();
  containers_.clear();
  bool seen = false;
  const std::string pods_dir = root_ + "/var/log/pods";
  if (DIR* d = ::opendir(pods_dir.c_str())) {
    ::closedir(d);
    seen = true;
  }
  each_entry(pods_dir, kMaxPods, [&](std::string_view n) {
    if (auto p = parse_pod_log_dir(n)) pods_.emplace(p->uid, std::move(*p));
  });
  each_entry(root_ + "/var/log/containers", kMaxContainers, [&](std::string_view n) {
    if (auto c = parse_container_log_name(n)) containers_.emplace(c->id, std::move(*c));
  });
  available_ = seen || !containers_.empty();
}

std::optional<KubeName> KubeNames::lookup(const std::string& pod_uid, const std::string& container_id, double now_s) {
  if (pod_uid.empty() && container_id.empty()) return std::nullopt;
  auto known = [&] {
    return (!container_id.empty() && containers_.count(container_id)) || (!pod_uid.empty() && pods_.count(pod_uid));
  };
  if (!known() && (!listed_at_ || now_s - *listed_at_ >= relist_s_)) {
    relist();
    listed_at_ = now_s;
  }
  KubeName out;
  if (!container_id.empty())
    if (auto it = containers_.find(container_id); it != containers_.end())
      out = KubeName{it->second.ns, it->second.pod, it->second.container};
  if (out.pod.empty() && !pod_uid.empty())
    if (auto it = pods_.find(pod_uid); it != pods_.end()) out = KubeName{it->second.ns, it->second.pod, ""};
  if (out.pod.empty()) return std::nullopt;
  return out;
}

}  // namespace aimem
