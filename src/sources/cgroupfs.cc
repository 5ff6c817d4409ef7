// Memory cgroups, v1 and v2, read under a root directory.
//
// v2 (cgroup.controllers lists "memory"): memory.max ("max" = none),
//   memory.current, memory.peak (5.19+), memory.events (flat keyed:
//   low high max oom oom_kill oom_group_kill): "oom" counts allocations that
//   failed at this cgroup's limit, "oom_kill" counts kills in the subtree by
//   any kernel OOM (global ones included).
// v1 (a "memory" hierarchy): memory.limit_in_bytes (>= 2^62 = none),
//   memory.usage_in_bytes, memory.max_usage_in_bytes, memory.failcnt (limit
//   hits, not kills), memory.oom_control (oom_kill_disable, under_oom,
//   oom_kill 4.13+; oom_kill counts kills of this cgroup's tasks by any OOM).
// Paths in facts are relative to the hierarchy's root, as the kernel prints
// them in oom_memcg=.
#include <dirent.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "core/cgroup_path.h"
#include "sources/live.h"
#include "sources/readfile.h"

namespace aimem {
namespace {

constexpr size_t kMaxCgroups = 20000;
constexpr int kMaxDepth = 32;
constexpr uint64_t kV1Unlimited = 1ULL << 62;

struct Counters {
  std::optional<uint64_t> limit, usage, peak, failcnt, oom, oom_kill, max_events, high_events;
  bool under_oom = false;
};

std::optional<uint64_t> keyed(std::string_view content, std::string_view key) {
  for (auto line : text::split(content, '\n')) {
    line = text::trim(line);
    if (text::starts_with(line, key) && line.size() > key.size() && line[key.size()] == ' ')
      return text::parse_u64(text::trim(line.substr(key.size() + 1)));
  }
  return std::nullopt;
}

Counters read_v2(const std::string& dir) {
  Counters c;
  if (auto max = read_small_file(dir + "/memory.max")) {
    std::string_view v = text::trim(*max);
    if (v != "max") c.limit = text::parse_u64(v);
  }
  if (auto cur = read_small_file(dir + "/memory.current")) c.usage = text::parse_u64(text::trim(*cur));
  if (auto peak = read_small_file(dir + "/memory.peak")) c.peak = text::parse_u64(text::trim(*peak));
  if (auto ev = read_small_file(dir + "/memory.events")) {
    c.oom = keyed(*ev, "oom");
    c.oom_kill = keyed(*ev, "oom_kill");
    c.max_events = keyed(*ev, "max");
    c.high_events = keyed(*ev, "high");
  }
  return c;
}

Counters read_v1(const std::string& dir) {
  Counters c;
  if (auto lim = read_small_file(dir + "/memory.limit_in_bytes")) {
    auto v = text::parse_u64(text::trim(*lim));
    if (v && *v < kV1Unlimited) c.limit = v;
  }
  if (auto u = read_small_file(dir + "/memory.usage_in_bytes")) c.usage = text::parse_u64(text::trim(*u));
  if (auto p = read_small_file(dir + "/memory.max_usage_in_bytes")) c.peak = text::parse_u64(text::trim(*p));
  if (auto f = read_small_file(dir + "/memory.failcnt")) c.failcnt = text::parse_u64(text::trim(*f));
  if (auto o = read_small_file(dir + "/memory.oom_control")) {
    c.oom_kill = keyed(*o, "oom_kill");
    if (auto u = keyed(*o, "under_oom")) c.under_oom = *u > 0;
  }
  return c;
}

Layer layer_for(const std::string& rel) {
  switch (parse_cgroup_path(rel).kind) {
    case CgroupKind::k8s_pod:
    case CgroupKind::k8s_container: return Layer::k8s_pod_limit;
    case CgroupKind::k8s_node:
    case CgroupKind::root: return Layer::host_ram;
    default: return Layer::container_limit;
  }
}

struct Walker {
  std::string mount;
  int version;
  bool failures;
  FactSink& sink;
  CgroupScan& scan;

  void visit(const std::string& dir, const std::string& rel, int depth) {
    if (scan.cgroups >= kMaxCgroups || depth > kMaxDepth) return;
    ++scan.cgroups;
    if (!rel.empty() && rel != "/") emit(dir, rel);
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    std::vector<std::string> children;
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
      std::string child = dir + "/" + e->d_name;
      if (e->d_type == DT_UNKNOWN) {
        struct stat st{};
        if (::lstat(child.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      }
      children.emplace_back(e->d_name);
      if (children.size() > kMaxCgroups) break;
    }
    ::closedir(d);
    std::sort(children.begin(), children.end());
    for (const auto& c : children) visit(dir + "/" + c, (rel == "/" ? "" : rel) + "/" + c, depth + 1);
  }

  void emit(const std::string& dir, const std::string& rel) {
    Counters c = version == 2 ? read_v2(dir) : read_v1(dir);
    uint64_t kills = c.oom_kill.value_or(0);
    bool limit_hit = version == 2 ? c.oom.value_or(0) > 0
                                  : (kills > 0 && c.limit && c.peak && *c.peak * 100 >= *c.limit * 95);
    if (c.limit) ++scan.limited;
    if (kills > 0) ++scan.with_oom_kills;
    if (!c.limit && kills == 0) return;
    Fact f;
    f.kind = FactKind::memory_usage;
    f.family = Family::cgroup;
    f.where.source = dir;
    f.cgroup = rel;
    f.limit = c.limit;
    f.usage = c.usage;
    f.count = kills;
    f.detail = fmt::format("cgroup v{}", version);
    if (c.peak) f.detail += ", peak " + units::format_bytes(*c.peak);
    if (c.failcnt && *c.failcnt) f.detail += fmt::format(", failcnt {}", *c.failcnt);
    f.text = fmt::format("{}: usage {}{}{}", rel, c.usage ? units::format_bytes(*c.usage) : "?",
                         c.limit ? " of limit " + units::format_bytes(*c.limit) : "", kills ? fmt::format(", {} OOM kills", kills) : "");
    sink.add(f);
    if (failures && kills > 0) {
      Fact k = f;
      k.kind = FactKind::cgroup_oom_counter;
      k.layer = limit_hit ? layer_for(rel) : Layer::host_ram;
      k.strength = 0.6f;
      k.usage = c.peak ? c.peak : c.usage;
      k.text = version == 2 ? fmt::format("{}/memory.events: oom {} oom_kill {}", rel, c.oom.value_or(0), kills)
                            : fmt::format("{}/memory.oom_control: oom_kill {}", rel, kills);
      k.detail = "OOM kills counted by the cgroup (time unknown)";
      sink.add(std::move(k));
    }
  }
};

}  // namespace

CgroupScan scan_cgroups(const std::string& root, const std::string& only_subtree, bool oom_counters_are_failures, FactSink& sink) {
  CgroupScan scan;
  std::string base = (root == "/" ? "" : root) + "/sys/fs/cgroup";
  std::string mount;
  int version = 0;
  struct stat st{};
  if (::stat((base + "/memory/memory.limit_in_bytes").c_str(), &st) == 0 || ::stat((base + "/memory/memory.usage_in_bytes").c_str(), &st) == 0) {
    mount = base + "/memory";
    version = 1;
  } else if (auto controllers = read_small_file(base + "/cgroup.controllers"); controllers && text::contains(*controllers, "memory")) {
    mount = base;
    version = 2;
  } else if (auto uc = read_small_file(base + "/unified/cgroup.controllers"); uc && text::contains(*uc, "memory")) {
    mount = base + "/unified";
    version = 2;
  }
  if (!version) {
    scan.problem = fmt::format("no memory cgroup controller under {}", base);
    return scan;
  }
  scan.found = true;
  scan.version = version;
  scan.mount = mount;
  Walker w{mount, version, oom_counters_are_failures, sink, scan};
  std::string start = mount, rel = "/";
  if (!only_subtree.empty() && only_subtree != "/") {
    start = mount + (only_subtree[0] == '/' ? "" : "/") + only_subtree;
    rel = only_subtree[0] == '/' ? only_subtree : "/" + only_subtree;
    if (::stat(start.c_str(), &st) != 0) {
      scan.problem = fmt::format("cgroup {} not found under {}", only_subtree, mount);
      return scan;
    }
    w.emit(start, rel);
    ++scan.cgroups;
    return scan;
  }
  w.visit(start, rel, 0);
  return scan;
}

}  // namespace aimem
