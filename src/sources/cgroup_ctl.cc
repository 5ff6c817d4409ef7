// See cgroup_ctl.h. The hierarchy is found by cgroup_memory.h.
#include "sources/cgroup_ctl.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>
#include <fmt/format.h>

#include "core/text.h"
#include "sources/process.h"
#include "sources/readfile.h"

namespace aimem::watch {
namespace {

Result<bool> write_file(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return make_error(fmt::format("cannot write '{}' to {}: {}", value, path, std::strerror(err)));
  return true;
}

// Where `aimem run` puts its cgroups: a child of our own memory cgroup where
// the hierarchy allows it (v1 always; v2 when our cgroup already delegates
// the memory controller), else, on v2, a child of the root. An error when
// neither can hold one.
Result<std::string> run_parent(const std::string& root, const MemoryHierarchy& h) {
  std::string parent = own_memory_cgroup(root);
  if (h.version != 2) return parent;
  // v2's "no internal processes" rule: our own cgroup holds us, so it can
  // give children the memory controller only if it already does.
  auto sub = [&](const std::string& rel) {
    auto control = read_small_file(h.mount + (rel == "/" ? "" : rel) + "/cgroup.subtree_control");
    return control && lists_memory_controller(*control);
  };
  if (sub(parent)) return parent;
  if (sub("/")) return std::string("/");
  return make_error(fmt::format(
      "cgroup v2 at {}: neither our cgroup {} nor the root delegates the memory controller to children; "
      "run under `systemd-run --scope -p MemoryMax=SIZE aimem run -- ...` or enable +memory in the root's "
      "cgroup.subtree_control",
      h.mount, parent));
}

bool owner_gone(const std::string& root, pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  auto state = process_state(root, pid);
  return state && is_dead_state(*state);
}

// Kills every process in the cgroup at `dir` and removes it, with system
// calls only (no allocation, no locks): the guard runs it in a forked child of
// a process with threads. procs and kill_file are dir's cgroup.procs and, on
// v2, cgroup.kill ("" on v1).
bool empty_and_remove(const char* dir, const char* procs, const char* kill_file) {
  if (kill_file[0]) {
    int fd = ::open(kill_file, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, "1", 1);
      (void)ignored;
      ::close(fd);
    }
  }
  const timespec pause{0, 20 * 1000000};
  for (int round = 0; round < 50; ++round) {  // forks racing the kill: a few rounds
    int fd = ::open(procs, O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    char buf[16384];
    bool any = false;
    long pid = 0;
    bool in_number = false;
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] >= '0' && buf[i] <= '9') {
          pid = pid * 10 + (buf[i] - '0');
          in_number = true;
        } else {
          if (in_number && pid > 0) ::kill(pid_t(pid), SIGKILL), any = true;
          pid = 0;
          in_number = false;
        }
      }
    }
    if (in_number && pid > 0) ::kill(pid_t(pid), SIGKILL), any = true;
    ::close(fd);
    if (!any) break;
    ::nanosleep(&pause, nullptr);
  }
  for (int i = 0; i < 100; ++i) {  // the kernel lists exiting tasks a little longer
    if (::rmdir(dir) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    ::nanosleep(&pause, nullptr);
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<RunCgroup>> RunCgroup::create(const std::string& root, const std::string& name,
                                                     std::optional<uint64_t> limit) {
  MemoryHierarchy h = find_memory_hierarchy(root);
  if (h.version == 0)
    return make_error(fmt::format("no memory cgroup controller is mounted {}",
                                  root == "/" || root.empty() ? std::string("on this host") : "under " + root));
  auto placed = run_parent(root, h);
  if (!placed) return placed.error();
  const std::string& parent = *placed;
  std::unique_ptr<RunCgroup> cg(new RunCgroup());
  cg->version_ = h.version;
  cg->path_ = (parent == "/" ? "" : parent) + "/" + name;
  cg->dir_ = h.mount + cg->path_;
  if (::mkdir(cg->dir_.c_str(), 0755) != 0) {
    Error failed = make_error(fmt::format("cannot create the cgroup {}: {}", cg->dir_, std::strerror(errno)));
    cg->removed_ = true;
    return failed;
  }
  cg->limit_ = limit;
  if (limit) {
    std::string v = std::to_string(*limit);
    auto written = h.version == 1 ? write_file(cg->dir_ + "/memory.limit_in_bytes", v)
                                  : write_file(cg->dir_ + "/memory.max", v);
    if (written) {
      // Swap accounting is optional (v1 memsw exists only with swapaccount=1).
      struct stat st{};
      if (h.version == 1 && ::stat((cg->dir_ + "/memory.memsw.limit_in_bytes").c_str(), &st) == 0)
        (void)write_file(cg->dir_ + "/memory.memsw.limit_in_bytes", v);
      if (h.version == 2 && ::stat((cg->dir_ + "/memory.swap.max").c_str(), &st) == 0)
        (void)write_file(cg->dir_ + "/memory.swap.max", "0");
    } else {
      (void)cg->remove();
      return written.error();
    }
  }
  return cg;
}

RunCgroup::~RunCgroup() {
  if (!removed_) {
    kill_all();
    (void)remove();
  }
  release_guard();
}

std::vector<std::string> RunCgroup::remove_stale(const std::string& root, const std::string& prefix,
                                                  std::vector<std::string>* errors) {
  std::vector<std::string> removed;
  MemoryHierarchy h = find_memory_hierarchy(root);
  if (h.version == 0) return removed;
  auto placed = run_parent(root, h);
  if (!placed) return removed;
  const std::string& parent = *placed;
  const std::string base = parent == "/" ? "" : parent;
  std::vector<std::string> stale;
  for (const std::string& child : child_cgroups(h.mount + base, 1 << 20)) {
    std::string_view name = child;
    if (!text::starts_with(name, prefix)) continue;
    std::string_view digits = name.substr(prefix.size());
    std::string_view rest;
    auto pid = text::parse_u64(digits, &rest);
    if (!pid || !rest.empty() || *pid == 0 || *pid > INT32_MAX || pid_t(*pid) == ::getpid()) continue;
    // The owner is gone when no process has its pid, or only its zombie
    // (killed, not yet reaped). A live pid is left alone even if it was
    // reused: a cgroup of a run that may still be going is never touched.
    if (!owner_gone(root, pid_t(*pid))) continue;
    stale.emplace_back(name);
  }
  for (const std::string& name : stale) {
    std::string rel = base + "/" + name, dir = h.mount + rel;
    std::string procs = dir + "/cgroup.procs", kill_file = h.version == 2 ? dir + "/cgroup.kill" : "";
    if (empty_and_remove(dir.c_str(), procs.c_str(), kill_file.c_str()))
      removed.push_back(rel);
    else if (errors)
      errors->push_back(fmt::format("cannot remove the cgroup {} left by a killed aimem run: {}", dir, std::strerror(errno)));
  }
  return removed;
}

Result<bool> RunCgroup::start_guard() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    return make_error(fmt::format("cannot start the guard of the cgroup {}: pipe: {}", dir_, std::strerror(errno)));
  // Everything the child needs, prepared before fork().
  const std::string procs = dir_ + "/cgroup.procs", kill_file = version_ == 2 ? dir_ + "/cgroup.kill" : "";
  pid_t pid = ::fork();
  if (pid < 0) {
    Error failed = make_error(fmt::format("cannot start the guard of the cgroup {}: fork: {}", dir_, std::strerror(errno)));
    ::close(p[0]);
    ::close(p[1]);
    return failed;
  }
  if (pid == 0) {
    // The guard: async-signal-safe calls only. Its own process group and
    // ignored signals, so a ^C or a hangup meant for aimem and the command
    // leaves it to do its one job; no descriptor of aimem's but its pipe.
    ::setpgid(0, 0);
    for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2}) ::signal(sig, SIG_IGN);
    if (p[0] != 3 && ::dup2(p[0], 3) < 0) ::_exit(1);
    int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd)
      if (null >= 0 && null != fd) ::dup2(null, fd);
    if (::syscall(SYS_close_range, 4, ~0U, 0) != 0)
      for (int fd = 4; fd < 4096; ++fd) ::close(fd);
    char byte;
    for (;;) {
      ssize_t n = ::read(3, &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n == 1) ::_exit(0);  // released: aimem cleans up itself
      break;                   // EOF: aimem is gone without a word
    }
    empty_and_remove(dir_.c_str(), procs.c_str(), kill_file.c_str());
    ::_exit(0);
  }
  ::close(p[0]);
  guard_pid_ = pid;
  guard_fd_ = p[1];
  return true;
}

void RunCgroup::release_guard() {
  if (guard_fd_ < 0) return;
  ssize_t ignored = ::write(guard_fd_, "r", 1);
  (void)ignored;
  ::close(guard_fd_);
  guard_fd_ = -1;
  while (::waitpid(guard_pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  guard_pid_ = -1;
}

Result<bool> RunCgroup::add_process(pid_t pid) {
  return write_file(dir_ + "/cgroup.procs", std::to_string(pid));
}

std::vector<pid_t> RunCgroup::pids() const {
  std::vector<pid_t> out;
  if (auto c = read_small_file(dir_ + "/cgroup.procs", 8 << 20))
    for (auto line : text::split(*c, '\n'))
      if (auto v = text::parse_u64(text::trim(line)); v && *v > 0) out.push_back(static_cast<pid_t>(*v));
  return out;
}

void RunCgroup::kill_all() {
  if (version_ == 2 && write_file(dir_ + "/cgroup.kill", "1")) return;
  for (int round = 0; round < 5; ++round) {  // forks racing the kill: a few rounds
    auto p = pids();
    if (p.empty()) return;
    for (pid_t pid : p) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<bool> RunCgroup::remove() {
  if (removed_) return true;
  for (int i = 0; i < 100; ++i) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) {
      removed_ = true;
      return true;
    }
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return make_error(fmt::format("cannot remove the cgroup {}: {}", dir_, std::strerror(errno)));
}

}  // namespace aimem::watch
