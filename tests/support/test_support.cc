#include "support/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "evidence/store.h"
#include "recognize/scanner.h"
#include "sources/inputs.h"

extern char** environ;

namespace aimem::test {

std::vector<Fact> facts_of(const std::string& text, const std::string& name) {
  FactStore store;
  read_text(name, text, store, line_scanners());
  return std::move(store.facts());
}

std::vector<Fact> facts_of_kind(const std::string& text, FactKind kind) {
  std::vector<Fact> out;
  for (auto& f : facts_of(text))
    if (f.kind == kind) out.push_back(std::move(f));
  return out;
}

std::vector<Fact> facts_of_kind(const std::string& text, FactKind kind, Cause cause) {
  std::vector<Fact> out;
  for (auto& f : facts_of_kind(text, kind))
    if (f.cause == cause) out.push_back(std::move(f));
  return out;
}

Diagnosis diagnose_texts(const std::vector<std::string>& texts, const DiagnoseOptions& options) {
  FactStore store;
  uint32_t i = 0;
  for (const auto& t : texts) {
    read_text("input" + std::to_string(i) + ".log", t, store, line_scanners(), i);
    ++i;
  }
  return diagnose(std::move(store.facts()), options);
}

Diagnosis diagnose_text(const std::string& text, const DiagnoseOptions& options) { return diagnose_texts({text}, options); }

std::string reason_text(const Diagnosis& d) {
  std::string all;
  for (const Incident& i : d.incidents)
    for (const std::string& r : i.reasons) all += r + "\n";
  return all;
}

namespace {

// VmRSS and VmHWM (the peak since exec) of a live process in KiB; 0 when unreadable.
std::pair<uint64_t, uint64_t> rss_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  uint64_t rss = 0, hwm = 0;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::strtoull(line.c_str() + 6, nullptr, 10);
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return {rss, hwm};
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const std::string& stdin_text, const std::vector<std::string>& env, int timeout_s) {
  RunOptions o;
  o.stdin_text = stdin_text;
  o.env = env;
  o.timeout_s = timeout_s;
  return run(argv, o);
}

RunResult run(const std::vector<std::string>& argv_in, const RunOptions& o) {
  RunResult r;
  const std::string& stdin_text = o.stdin_text;
  std::vector<std::string> argv = argv_in;
  if (!o.cgroup.empty()) {
    // The shell writes its own pid, then exec keeps it: the child runs inside
    // the cgroup from its first instruction.
    argv = {"/bin/sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", o.cgroup};
    argv.insert(argv.end(), argv_in.begin(), argv_in.end());
  }
  signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its stdin
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  for (const auto& e : o.env) envs.push_back(e);
  std::vector<char*> cenv, cargv;
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  std::vector<std::string> args = argv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data()) != 0) throw std::runtime_error("spawn " + argv[0]);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  size_t written = 0;
  if (stdin_text.empty()) {
    close(in[1]);
    in[1] = -1;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  bool out_open = true, err_open = true, killed = false;
  while (out_open || err_open || in[1] >= 0) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out[0], POLLIN, 0});
    if (err_open) fds.push_back({err[0], POLLIN, 0});
    if (in[1] >= 0) fds.push_back({in[1], POLLOUT, 0});
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      if (!killed) kill(pid, SIGKILL);
      r.timed_out = !killed;
      break;
    }
    if (!killed) {
      // The child's own peak: VmHWM counts from its exec. (getrusage's
      // ru_maxrss would not do: the spawned child's exec folds in the
      // high-water mark of the memory it started in, this test process's.)
      left = std::min(left, 20);
      auto [rss, hwm] = rss_of(pid);
      // posix_spawn returns once the child has exec'd: this is its own memory
      // (through /bin/sh, the shell's until it execs aimem: smaller still).
      if (hwm > 0) r.peak_rss_kb = std::max<int64_t>(r.peak_rss_kb, static_cast<int64_t>(hwm));
      if (o.kill_above_rss > 0 && rss * 1024 > o.kill_above_rss) {
        kill(pid, SIGKILL);
        killed = r.killed_for_memory = true;
      }
    }
    if (poll(fds.data(), fds.size(), left) <= 0) continue;
    for (auto& p : fds) {
      if (!p.revents) continue;
      if (p.fd == in[1]) {
        ssize_t n = write(in[1], stdin_text.data() + written, stdin_text.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if (n < 0 || written >= stdin_text.size()) {
          close(in[1]);
          in[1] = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t n = read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        if (p.fd == out[0]) out_open = false;
        else err_open = false;
        continue;
      }
      (p.fd == out[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

RunResult run_aimem(const std::vector<std::string>& args, const std::string& stdin_text, const std::vector<std::string>& env) {
  std::vector<std::string> argv{AIMEM_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, stdin_text, env);
}

std::string source_dir() { return AIMEM_SOURCE_DIR; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int bound_loopback_socket(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

bool bpf_refused(const std::string& why) {
  for (const char* m : {"Operation not permitted", "Permission denied", "BTF", "libbpf.so.1 not found",
                        "pid namespace of its own", "Function not implemented"})
    if (why.find(m) != std::string::npos) return true;
  return false;
}

namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);  // a failure (a busy cgroup directory, say) leaves the entry
  return 0;
}

// The temporary directories this test process made, removed when it exits.
// Only by the process that made them: a forked child that exits through the
// static destructors must not remove its parent's files. The walk stays on
// the directory's own filesystem (FTW_MOUNT), so nothing mounted inside one
// (a cgroup hierarchy a test failed to unmount) is ever walked into.
struct TempDirs {
  pid_t owner = ::getpid();
  std::vector<std::string> paths;
  ~TempDirs() {
    if (::getpid() != owner) return;
    for (const std::string& p : paths) ::nftw(p.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
  }
};

TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

std::string temp_dir(const std::string& tag) {
  std::string tmpl = "/tmp/aimem-test-" + tag + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  temp_dirs().paths.push_back(tmpl);
  return tmpl;
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

}  // namespace aimem::test
