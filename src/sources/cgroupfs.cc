// The memory cgroups as facts for `aimem diagnose`: each cgroup with a limit
// or OOM kills recorded becomes a memory_usage fact (and, when the kernel log
// could not be read, its OOM-kill counter a failure). The files are read
// through cgroup_memory.h, whose top says what they hold. Paths in facts are
// relative to the hierarchy's root, as the kernel prints them in oom_memcg=.
#include <sys/stat.h>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "core/cgroup_path.h"
#include "sources/cgroup_memory.h"
#include "sources/live.h"

namespace aimem {
namespace {

constexpr size_t kMaxCgroups = 20000;
constexpr int kMaxDepth = 32;

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
    for (const auto& c : child_cgroups(dir, kMaxCgroups + 1))
      visit(dir + "/" + c, (rel == "/" ? "" : rel) + "/" + c, depth + 1);
  }

  void emit(const std::string& dir, const std::string& rel) {
    watch::CgroupSample c;
    read_cgroup_memory(version, dir, read_cgroup_file, CgroupFields::counters, c);
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
  MemoryHierarchy h = find_memory_hierarchy(root);
  if (!h.version) {
    scan.problem = fmt::format("no memory cgroup controller under {}/sys/fs/cgroup", root == "/" ? "" : root);
    return scan;
  }
  const std::string& mount = h.mount;
  const int version = h.version;
  struct stat st{};
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
