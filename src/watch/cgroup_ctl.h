// A memory cgroup that aimem itself creates, limits, fills and removes (for
// `aimem run`). It is always a new directory aimem made: a child of aimem's own
// memory cgroup where the hierarchy allows it (v1 always; v2 when our cgroup
// already delegates the memory controller to children), else, on v2, a child
// of the hierarchy root. aimem never writes to a cgroup it did not create.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aimem::watch {

struct MemoryHierarchy {
  int version = 0;    // 1, 2, or 0: no memory controller mounted
  std::string mount;  // absolute directory of the hierarchy's root
};
// Where the memory controller is mounted, from ROOT/proc/self/mounts.
MemoryHierarchy find_memory_hierarchy(const std::string& root = "/");
// This process's memory cgroup, relative to the hierarchy ("/" for the root).
std::string own_memory_cgroup(const std::string& root);

class RunCgroup {
 public:
  // Creates NAME under the placement above and writes the limit (v1
  // memory.limit_in_bytes and, where swap accounting exists, memsw at the same
  // value; v2 memory.max and memory.swap.max 0): the limit then covers swap,
  // so the command cannot hide from it there. On failure returns null and says
  // why in `error`; nothing is left behind.
  static std::unique_ptr<RunCgroup> create(const std::string& root, const std::string& name,
                                           std::optional<uint64_t> limit, std::string* error);
  ~RunCgroup();  // removes the cgroup if remove() was not called
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  bool add_process(pid_t pid, std::string* error);
  std::vector<pid_t> pids() const;
  // Kills every process still in the cgroup (what the command left behind).
  void kill_all();
  // rmdir, retried while the kernel still lists exiting tasks (bounded, ~2 s).
  bool remove(std::string* error);

  const std::string& path() const { return path_; }  // relative to the hierarchy
  const std::string& dir() const { return dir_; }    // absolute directory
  int version() const { return version_; }
  std::optional<uint64_t> limit() const { return limit_; }

 private:
  RunCgroup() = default;
  std::string path_, dir_;
  int version_ = 0;
  std::optional<uint64_t> limit_;
  bool removed_ = false;
};

}  // namespace aimem::watch
