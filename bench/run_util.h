// Runs a command once with its stdout sent to /dev/null and reports the wall
// time, the peak RSS (wait4) and the exit status; shared by the benchmarks.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace bench {

struct Sample {
  double wall_s;
  long maxrss_kib;
  int status;  // exit status, or 128 + signal
  double cpu_s = 0;  // user + system CPU of the child: comparable on a busy machine, where wall is not
};

// argv: a null-terminated argument vector; argv[0] is looked up in PATH.
inline Sample run_once(char* const* argv) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  return {wall, ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), cpu};
}

}  // namespace bench
