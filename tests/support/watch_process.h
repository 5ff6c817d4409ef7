// `aimem watch` as a real background process for end-to-end tests (the
// watch CLI test and the fleet test): started with fork/exec, its output in
// a log file, stopped by its pid with SIGTERM and reaped.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <httplib.h>
#include <string>
#include <thread>
#include <vector>

#include "sources/cgroup_memory.h"

namespace aimem::test {

// `aimem watch ARGS` in the background (NVML pointed at nothing); stopped
// with SIGTERM on destruction.
struct Watch {
  pid_t pid = -1;
  std::string log;
  explicit Watch(const std::vector<std::string>& args, const std::string& log_path) : log(log_path) {
    pid = fork();
    if (pid == 0) {
      int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv{const_cast<char*>(AIMEM_BINARY), const_cast<char*>("watch")};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      setenv("AIMEM_NVML_LIBRARY", "/nonexistent", 1);
      execv(AIMEM_BINARY, argv.data());
      _exit(126);
    }
  }
  // SIGTERM, reaped; its exit status (128 + signal when one ended it).
  int stop() {
    if (pid <= 0) return -1;
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~Watch() { stop(); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
};

// /healthz answers 200 on 127.0.0.1:port within `seconds`.
inline bool wait_healthy(int port, int seconds) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1);
  for (int i = 0; i < seconds * 10; ++i) {
    if (auto r = c.Get("/healthz"); r && r->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// A cgroup v1 memory hierarchy where this process's own cgroup is writable
// (the tests write v1 files).
inline bool cgroups_v1_writable() {
  auto h = find_memory_hierarchy("/");
  if (h.version != 1) return false;
  std::string own = own_memory_cgroup("/");
  return access((h.mount + (own == "/" ? "" : own)).c_str(), W_OK) == 0;
}

}  // namespace aimem::test
