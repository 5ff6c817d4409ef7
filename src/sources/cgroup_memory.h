// Memory cgroups, v1 and v2: where the controller is mounted, what one cgroup's
// files say, which cgroups are below one. The one reader of cgroup memory:
// the scan of `aimem diagnose` (cgroupfs.cc), the watch sampler (sampler.cc)
// and `aimem run`'s own cgroup (cgroup_ctl.cc) all read through it.
//
// Mount table lines (ROOT/proc/self/mounts): "cgroup /sys/fs/cgroup/memory
// cgroup rw,...,memory 0 0" (v1) and "cgroup2 /sys/fs/cgroup cgroup2 rw,... 0 0"
// (v2; it has the memory controller when its cgroup.controllers lists it).
//
// v2 files: memory.current, memory.max ("max" = none), memory.peak (5.19+),
//   memory.swap.current, memory.stat (anon file kernel shmem ...),
//   memory.events (flat keyed: low high max oom oom_kill oom_group_kill: "oom"
//   counts allocations that failed at this cgroup's limit, "oom_kill" kills in
//   the subtree by any kernel OOM, global ones included), memory.pressure.
// v1 files: memory.usage_in_bytes, memory.limit_in_bytes (>= kCgroupNoLimit =
//   none), memory.max_usage_in_bytes, memory.memsw.usage_in_bytes (swap =
//   memsw - usage), memory.kmem.usage_in_bytes, memory.stat (total_rss
//   total_cache total_shmem), memory.failcnt (limit hits, not kills),
//   memory.oom_control (oom_kill_disable, under_oom, oom_kill 4.13+: kills of
//   this cgroup's tasks by any OOM).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/sample.h"

namespace aimem {

// A v1 memory.limit_in_bytes at or above this is no limit: the kernel prints
// its page counter's maximum (0x7FFFFFFFFFFFF000 with 4 KiB pages) there.
inline constexpr uint64_t kCgroupNoLimit = 1ULL << 62;

struct MemoryHierarchy {
  int version = 0;    // 1, 2, or 0: no memory controller mounted
  std::string mount;  // absolute directory of the hierarchy's root
};
// Where the memory controller is mounted under ROOT: from proc/self/mounts (a
// v1 memory mount wins on hybrid hosts; a v2 mount counts when its
// cgroup.controllers lists memory), else, without a mount table that says (a
// captured tree), the usual places: sys/fs/cgroup/memory (v1, when it has
// memory.usage_in_bytes or memory.limit_in_bytes), sys/fs/cgroup and
// sys/fs/cgroup/unified (v2).
MemoryHierarchy find_memory_hierarchy(const std::string& root = "/");
// This process's memory cgroup, relative to the hierarchy ("/" for the root).
std::string own_memory_cgroup(const std::string& root);
// A cgroup.controllers or cgroup.subtree_control file lists "memory".
bool lists_memory_controller(std::string_view controllers);

// Reads one file of a cgroup whole; nullopt when it cannot be read. The
// sampler passes one that keeps the files open across samples.
using CgroupFileReader = std::function<std::optional<std::string>(const std::string& path)>;
// The plain reader: each file opened, read and closed.
std::optional<std::string> read_cgroup_file(const std::string& path);

enum class CgroupFields {
  counters,  // usage, limit, peak, memory.events or oom_control, failcnt
  all,       // and swap, memory.stat, kernel memory, memory.pressure
};
// One cgroup's memory files under `dir` into `out` (the fields above; path,
// version and what the path names are the caller's). False when neither
// memory.stat nor the usage could be read: the cgroup is gone (or `dir` is
// no cgroup).
bool read_cgroup_memory(int version, const std::string& dir, const CgroupFileReader& read, CgroupFields fields,
                        watch::CgroupSample& out);

// The names of the cgroups directly below `dir`, sorted; at most `cap`.
std::vector<std::string> child_cgroups(const std::string& dir, size_t cap);

}  // namespace aimem
