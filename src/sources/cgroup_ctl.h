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

#include "core/result.h"
#include "sources/cgroup_memory.h"

namespace aimem::watch {

class RunCgroup {
 public:
  // Creates NAME under the placement above and writes the limit (v1
  // memory.limit_in_bytes and, where swap accounting exists, memsw at the same
  // value; v2 memory.max and memory.swap.max 0): the limit then covers swap,
  // so the command cannot hide from it there. On failure an error says why;
  // nothing is left behind.
  static Result<std::unique_ptr<RunCgroup>> create(const std::string& root, const std::string& name,
                                                   std::optional<uint64_t> limit);
  ~RunCgroup();  // removes the cgroup if remove() was not called
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  // Removes what an `aimem run` killed outright (SIGKILL: no handler ran)
  // left behind: the cgroups named PREFIX<pid> where this process would
  // create its own, whose <pid> no longer exists, after killing whatever
  // still runs in them. Returns the paths removed (relative to the
  // hierarchy); problems go to *errors, one line each.
  static std::vector<std::string> remove_stale(const std::string& root, const std::string& prefix,
                                               std::vector<std::string>* errors);

  // Starts a guard: a small process outside the cgroup that, when this
  // process ends without release_guard() (SIGKILL, a crash), kills every
  // process left in the cgroup and removes it. An error when it cannot
  // start (the run goes on; remove_stale() is the fallback).
  Result<bool> start_guard();
  // This process cleans up itself: the guard ends without touching anything.
  void release_guard();

  Result<bool> add_process(pid_t pid);
  std::vector<pid_t> pids() const;
  // Kills every process still in the cgroup (what the command left behind).
  void kill_all();
  // rmdir, retried while the kernel still lists exiting tasks (bounded, ~2 s).
  Result<bool> remove();

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
  pid_t guard_pid_ = -1;
  int guard_fd_ = -1;  // the write end of the guard's pipe; its EOF means we are gone
};

}  // namespace aimem::watch
