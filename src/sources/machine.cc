#include "sources/machine.h"

#include "core/text.h"
#include "evidence/sink.h"
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

std::optional<uint64_t> read_u64_file(const std::string& path) {
  auto s = read_small_file(path, 4096);
  return s ? text::parse_u64(text::trim(*s)) : std::nullopt;  // "max" -> nullopt
}

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
  const std::string base = root == "/" ? "" : root;
  auto cg = read_small_file(base + "/proc/self/cgroup", 65536);
  if (!cg) return std::nullopt;
  size_t pos = 0;
  while (pos < cg->size()) {
    size_t end = cg->find('\n', pos);
    if (end == std::string::npos) end = cg->size();
    std::string line = cg->substr(pos, end - pos);
    pos = end + 1;
    auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    std::string ctrl = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    std::optional<uint64_t> limit, usage;
    if (ctrl.empty()) {
      limit = read_u64_file(base + "/sys/fs/cgroup" + path + "/memory.max");
      usage = read_u64_file(base + "/sys/fs/cgroup" + path + "/memory.current");
    } else if (ctrl.find("memory") != std::string::npos) {
      limit = read_u64_file(base + "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
      usage = read_u64_file(base + "/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes");
    }
    // Anything from 2^60 up is "no limit" (v1 writes 2^63 rounded down to a page).
    if (limit && *limit < (1ULL << 60)) return *limit > usage.value_or(0) ? *limit - usage.value_or(0) : 0;
  }
  return std::nullopt;
}

}  // namespace aimem
