#include "sources/machine.h"

#include "core/text.h"
#include "evidence/sink.h"
#include "sources/cgroup_memory.h"
#include "sources/live.h"
#include "sources/readfile.h"

namespace aimem {
namespace {

class Collect final : public FactSink {
 public:
  void add(Fact f) override { facts.push_back(std::move(f)); }
  std::vector<Fact> facts;
};

std::string under(const std::string& root, const std::string& path) { return (root == "/" ? "" : root) + path; }

}  // namespace

std::vector<GpuMemory> gpu_memory() {
  Collect sink;
  scan_gpus(sink);
  std::vector<GpuMemory> gpus;
  for (const Fact& f : sink.facts)
    if (f.kind == FactKind::gpu_state && f.total) gpus.push_back({f.process, *f.total, f.usage.value_or(0)});
  return gpus;
}

bool cpu_has_amx(const std::string& root) {
  auto cpuinfo = read_small_file(under(root, "/proc/cpuinfo"), 4u << 20);
  return cpuinfo && cpuinfo->find(" amx_int8") != std::string::npos &&
         cpuinfo->find(" amx_tile") != std::string::npos;
}

std::optional<uint64_t> host_mem_available(const std::string& root) {
  Collect sink;
  read_proc(root, std::nullopt, sink);
  // The first host_state fact with a free figure (host RAM comes before swap).
  for (const Fact& f : sink.facts)
    if (f.kind == FactKind::host_state && f.free) return *f.free;
  return std::nullopt;
}

std::optional<uint64_t> own_cgroup_room(const std::string& root) {
  // Through the one cgroup reader (cgroup_memory.h): its mount discovery, its
  // v1/v2 files and its "no limit".
  MemoryHierarchy h = find_memory_hierarchy(root);
  if (h.version == 0) return std::nullopt;
  std::string own = own_memory_cgroup(root);
  watch::CgroupSample c;
  if (!read_cgroup_memory(h.version, h.mount + (own == "/" ? "" : own), read_cgroup_file, CgroupFields::counters, c)) return std::nullopt;
  if (!c.limit || *c.limit == 0) return std::nullopt;
  uint64_t used = c.usage.value_or(0);
  return *c.limit > used ? *c.limit - used : 0;
}

}  // namespace aimem
