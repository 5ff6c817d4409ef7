// See cgroup_ctl.h. Mount table lines: "cgroup /sys/fs/cgroup/memory cgroup
// rw,...,memory 0 0" (v1) and "cgroup2 /sys/fs/cgroup cgroup2 rw,... 0 0"
// (v2; it has the memory controller when its cgroup.controllers lists it).
#include "watch/cgroup_ctl.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <fmt/format.h>

#include "core/text.h"
#include "sources/live.h"
#include "sources/readfile.h"

namespace aimem::watch {
namespace {

std::string under(const std::string& root, const std::string& path) {
  return root == "/" || root.empty() ? path : root + path;
}

bool write_file(const std::string& path, const std::string& value, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = fmt::format("cannot open {}: {}", path, std::strerror(errno));
    return false;
  }
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    if (error) *error = fmt::format("cannot write '{}' to {}: {}", value, path, std::strerror(err));
    return false;
  }
  return true;
}

bool lists_memory(const std::optional<std::string>& controllers) {
  if (!controllers) return false;
  for (auto w : text::split(text::trim(*controllers), ' '))
    if (w == "memory") return true;
  return false;
}

}  // namespace

MemoryHierarchy find_memory_hierarchy(const std::string& root) {
  MemoryHierarchy h;
  auto mounts = read_small_file(under(root, "/proc/self/mounts"), 4 << 20);
  std::string v2;
  if (mounts) {
    for (auto line : text::split(*mounts, '\n')) {
      auto f = text::split(line, ' ');
      if (f.size() < 4) continue;
      if (f[2] == "cgroup") {
        for (auto opt : text::split(f[3], ','))
          if (opt == "memory") return {1, under(root, std::string(f[1]))};
      } else if (f[2] == "cgroup2" && v2.empty()) {
        v2 = under(root, std::string(f[1]));
      }
    }
  }
  if (v2.empty()) {  // no mount table (a captured tree): the usual places
    struct stat st{};
    if (::stat(under(root, "/sys/fs/cgroup/memory").c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return {1, under(root, "/sys/fs/cgroup/memory")};
    v2 = under(root, "/sys/fs/cgroup");
  }
  if (lists_memory(read_small_file(v2 + "/cgroup.controllers"))) h = {2, v2};
  return h;
}

std::string own_memory_cgroup(const std::string& root) {
  std::string path = memory_cgroup_of(read_small_file(under(root, "/proc/self/cgroup")).value_or(""));
  return path.empty() ? "/" : path;
}

std::unique_ptr<RunCgroup> RunCgroup::create(const std::string& root, const std::string& name,
                                             std::optional<uint64_t> limit, std::string* error) {
  MemoryHierarchy h = find_memory_hierarchy(root);
  if (h.version == 0) {
    *error = "no memory cgroup controller is mounted on this host";
    return nullptr;
  }
  std::string parent = own_memory_cgroup(root);
  if (h.version == 2) {
    // v2's "no internal processes" rule: our own cgroup holds us, so it can
    // give children the memory controller only if it already does.
    auto sub = [&](const std::string& rel) {
      return lists_memory(read_small_file(h.mount + (rel == "/" ? "" : rel) + "/cgroup.subtree_control"));
    };
    if (!sub(parent)) {
      if (!sub("/")) {
        *error = fmt::format(
            "cgroup v2 at {}: neither our cgroup {} nor the root delegates the memory controller to children; "
            "run under `systemd-run --scope -p MemoryMax=SIZE aimem run -- ...` or enable +memory in the root's "
            "cgroup.subtree_control",
            h.mount, parent);
        return nullptr;
      }
      parent = "/";
    }
  }
  std::unique_ptr<RunCgroup> cg(new RunCgroup());
  cg->version_ = h.version;
  cg->path_ = (parent == "/" ? "" : parent) + "/" + name;
  cg->dir_ = h.mount + cg->path_;
  if (::mkdir(cg->dir_.c_str(), 0755) != 0) {
    *error = fmt::format("cannot create the cgroup {}: {}", cg->dir_, std::strerror(errno));
    cg->removed_ = true;
    return nullptr;
  }
  cg->limit_ = limit;
  if (limit) {
    std::string v = std::to_string(*limit);
    bool ok = h.version == 1 ? write_file(cg->dir_ + "/memory.limit_in_bytes", v, error)
                             : write_file(cg->dir_ + "/memory.max", v, error);
    if (ok) {
      // Swap accounting is optional (v1 memsw exists only with swapaccount=1).
      struct stat st{};
      if (h.version == 1 && ::stat((cg->dir_ + "/memory.memsw.limit_in_bytes").c_str(), &st) == 0)
        write_file(cg->dir_ + "/memory.memsw.limit_in_bytes", v, nullptr);
      if (h.version == 2 && ::stat((cg->dir_ + "/memory.swap.max").c_str(), &st) == 0)
        write_file(cg->dir_ + "/memory.swap.max", "0", nullptr);
    } else {
      std::string ignored;
      cg->remove(&ignored);
      return nullptr;
    }
  }
  return cg;
}

RunCgroup::~RunCgroup() {
  if (!removed_) {
    std::string ignored;
    kill_all();
    remove(&ignored);
  }
}

bool RunCgroup::add_process(pid_t pid, std::string* error) {
  return write_file(dir_ + "/cgroup.procs", std::to_string(pid), error);
}

std::vector<pid_t> RunCgroup::pids() const {
  std::vector<pid_t> out;
  if (auto c = read_small_file(dir_ + "/cgroup.procs", 8 << 20))
    for (auto line : text::split(*c, '\n'))
      if (auto v = text::parse_u64(text::trim(line)); v && *v > 0) out.push_back(static_cast<pid_t>(*v));
  return out;
}

void RunCgroup::kill_all() {
  if (version_ == 2 && write_file(dir_ + "/cgroup.kill", "1", nullptr)) return;
  for (int round = 0; round < 5; ++round) {  // forks racing the kill: a few rounds
    auto p = pids();
    if (p.empty()) return;
    for (pid_t pid : p) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool RunCgroup::remove(std::string* error) {
  if (removed_) return true;
  for (int i = 0; i < 100; ++i) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) {
      removed_ = true;
      return true;
    }
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *error = fmt::format("cannot remove the cgroup {}: {}", dir_, std::strerror(errno));
  return false;
}

}  // namespace aimem::watch
