// A scratch cgroup v1 memory cgroup for tests: a child of this process's own
// memory cgroup, with a limit, removed (after its processes are killed) when
// the object goes away. Empty `dir` when the host has no writable v1 memory
// controller; the test then skips, saying why.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace aimem::test {

struct ScratchCgroup {
  std::string rel, dir;    // path relative to the hierarchy's root, and on disk
  std::vector<pid_t> pids;  // children to kill and reap before removal

  ScratchCgroup(const std::string& tag, uint64_t limit) {
    const std::string mount = "/sys/fs/cgroup/memory";
    std::ifstream in("/proc/self/cgroup");
    std::string line, own;
    while (std::getline(in, line)) {
      auto a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      std::string c = "," + line.substr(a + 1, b - a - 1) + ",";
      if (c.find(",memory,") != std::string::npos) own = line.substr(b + 1);
    }
    if (own.empty() || access((mount + own).c_str(), W_OK) != 0) return;
    std::string r = (own == "/" ? "" : own) + "/aimem-" + tag + "-" + std::to_string(getpid());
    if (mkdir((mount + r).c_str(), 0755) != 0) return;
    rel = r;
    dir = mount + r;
    std::ofstream(dir + "/memory.limit_in_bytes") << limit;
    // Without this, swap would let an allocator outlive the limit (absent without swap accounting).
    if (access((dir + "/memory.memsw.limit_in_bytes").c_str(), W_OK) == 0)
      std::ofstream(dir + "/memory.memsw.limit_in_bytes") << limit;
  }
  ~ScratchCgroup() {
    for (pid_t p : pids) kill(p, SIGKILL), waitpid(p, nullptr, 0);
    if (!dir.empty())
      for (int i = 0; i < 50 && rmdir(dir.c_str()) != 0; ++i) usleep(100000);
  }
  ScratchCgroup(const ScratchCgroup&) = delete;
  ScratchCgroup& operator=(const ScratchCgroup&) = delete;
  explicit operator bool() const { return !dir.empty(); }

  // Forks a process named `name` that joins this cgroup, then touches `step`
  // bytes every `step_us` for `steps` steps and waits to be killed. Returns
  // once the child is in the cgroup (-1 on failure).
  pid_t fork_allocator(const char* name, size_t step, int step_us, int steps) {
    int ready[2];
    if (pipe(ready) != 0) return -1;
    pid_t child = fork();
    if (child == 0) {
      prctl(PR_SET_NAME, name);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::ofstream(dir + "/cgroup.procs") << getpid();
      close(ready[0]);
      if (write(ready[1], "x", 1) != 1) _exit(2);
      for (int i = 0; i < steps; ++i) {
        char* p = static_cast<char*>(malloc(step));
        if (!p) _exit(3);
        memset(p, i + 1, step);
        usleep(step_us);
      }
      pause();
      _exit(0);
    }
    close(ready[1]);
    char c;
    bool ok = child > 0 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    if (child > 0) pids.push_back(child);
    return ok ? child : -1;
  }
  // The child was reaped by the test: never signal that pid again.
  void reaped(pid_t pid) { std::erase(pids, pid); }
};

}  // namespace aimem::test
