// See task_runs.h.
#include "sources/task_runs.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <linux/bpf.h>

#ifdef AIMEM_TASK_RUNS_BPF_OBJECT
#include <bpf/libbpf.h>
// The compiled BPF object, linked into the binary so that nothing is looked
// up at run time but libbpf itself.
asm(".pushsection .rodata\n"
    ".balign 8\n"
    ".global aimem_task_runs_bpf_begin\n"
    "aimem_task_runs_bpf_begin:\n"
    ".incbin \"" AIMEM_TASK_RUNS_BPF_OBJECT "\"\n"
    ".global aimem_task_runs_bpf_end\n"
    "aimem_task_runs_bpf_end:\n"
    ".popsection\n");
extern "C" const char aimem_task_runs_bpf_begin[], aimem_task_runs_bpf_end[];
#endif

namespace aimem::watch {

bool task_runs_built() {
#ifdef AIMEM_TASK_RUNS_BPF_OBJECT
  return true;
#else
  return false;
#endif
}

namespace {

#ifdef AIMEM_TASK_RUNS_BPF_OBJECT
char g_log[512];  // the child's last libbpf message: the reason a load failed

int log_libbpf(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  int n = std::vsnprintf(g_log, sizeof g_log, format, args);
  while (n > 0 && static_cast<size_t>(n) < sizeof g_log && (g_log[n - 1] == '\n' || g_log[n - 1] == ' ')) g_log[--n] = 0;
  return 0;
}

// Runs in the child: load, attach, send the link's descriptor (or the reason).
[[noreturn]] void load_in_child(int sock) {
  auto say = [&](const char* why, int fd) {
    msghdr m{};
    iovec io{const_cast<char*>(why), std::strlen(why) + 1};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
      m.msg_control = ctl;
      m.msg_controllen = sizeof ctl;
      cmsghdr* c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    (void)::sendmsg(sock, &m, MSG_NOSIGNAL);
    ::_exit(0);
  };
  void* lib = ::dlopen("libbpf.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) say("libbpf.so.1 not found (Debian package libbpf1)", -1);
  // The same signatures as <bpf/libbpf.h>: declared from it, resolved by name.
  auto sym = [&](const char* name) { return ::dlsym(lib, name); };
  auto set_print = reinterpret_cast<decltype(&libbpf_set_print)>(sym("libbpf_set_print"));
  auto open_mem = reinterpret_cast<decltype(&bpf_object__open_mem)>(sym("bpf_object__open_mem"));
  auto load = reinterpret_cast<decltype(&bpf_object__load)>(sym("bpf_object__load"));
  auto find = reinterpret_cast<decltype(&bpf_object__find_program_by_name)>(sym("bpf_object__find_program_by_name"));
  auto attach = reinterpret_cast<decltype(&bpf_program__attach_iter)>(sym("bpf_program__attach_iter"));
  auto link_fd = reinterpret_cast<decltype(&bpf_link__fd)>(sym("bpf_link__fd"));
  if (!set_print || !open_mem || !load || !find || !attach || !link_fd) say("libbpf.so.1 lacks the functions needed (libbpf 0.8 or later)", -1);
  set_print(log_libbpf);
  bpf_object* obj = open_mem(aimem_task_runs_bpf_begin,
                             static_cast<size_t>(aimem_task_runs_bpf_end - aimem_task_runs_bpf_begin), nullptr);
  if (!obj) say(g_log[0] ? g_log : "libbpf could not open the task iterator", -1);
  if (int e = load(obj); e != 0) {
    static char why[700];
    std::snprintf(why, sizeof why, "loading the BPF task iterator failed (%s)%s%s", std::strerror(-e), g_log[0] ? ": " : "", g_log);
    say(why, -1);
  }
  bpf_program* prog = find(obj, "task_runs");
  bpf_link* link = prog ? attach(prog, nullptr) : nullptr;
  if (!link) say(g_log[0] ? g_log : "attaching the BPF task iterator failed", -1);
  say("", link_fd(link));
  ::_exit(0);  // not reached: say() exits
}
#endif

}  // namespace

Result<std::unique_ptr<TaskRuns>> TaskRuns::open() {
#ifndef AIMEM_TASK_RUNS_BPF_OBJECT
  return make_error("built without the BPF task iterator (clang and libbpf-dev were not found at build time)");
#else
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return make_error(std::string("the BPF task iterator: socketpair: ") + std::strerror(errno));
  }
  // fork without exec: the child calls malloc (fork-safe in glibc) and libbpf,
  // and touches nothing another thread of this process may hold.
  pid_t child = ::fork();
  if (child < 0) {
    Error failed = make_error(std::string("the BPF task iterator: fork: ") + std::strerror(errno));
    ::close(sv[0]), ::close(sv[1]);
    return failed;
  }
  if (child == 0) {
    ::close(sv[0]);
    load_in_child(sv[1]);
  }
  ::close(sv[1]);
  int fd = -1;
  std::string text;
  pollfd p{sv[0], POLLIN, 0};
  int ready;
  while ((ready = ::poll(&p, 1, 10000)) < 0 && errno == EINTR) {
  }
  if (ready == 1) {
    char buf[1024] = {};
    msghdr m{};
    iovec io{buf, sizeof buf - 1};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    ssize_t n = ::recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
    if (n > 0) {
      text.assign(buf, ::strnlen(buf, static_cast<size_t>(n)));
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
  } else {
    ::kill(child, SIGKILL);  // a load that hangs is not waited for
    text = "loading the BPF task iterator did not finish in 10 s";
  }
  ::close(sv[0]);
  while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (fd < 0) {
    return make_error(text.empty() ? "loading the BPF task iterator failed" : text);
  }
  std::unique_ptr<TaskRuns> t(new TaskRuns(fd));
  // Records name pids as the initial pid namespace does: in another one (a
  // container without hostPID) they are not the pids proc/ shows.
  std::vector<TaskRun> runs;
  if (!t->read(runs)) {
    return make_error(t->why());
  }
  return t;
#endif
}

TaskRuns::~TaskRuns() { ::close(link_fd_); }

bool TaskRuns::read(std::vector<TaskRun>& out, size_t max_tasks) {
  out.clear();
  bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.iter_create.link_fd = static_cast<uint32_t>(link_fd_);
  int fd = static_cast<int>(::syscall(__NR_bpf, BPF_ITER_CREATE, &attr, sizeof attr));
  if (fd < 0) {
    why_ = std::string("bpf(BPF_ITER_CREATE): ") + std::strerror(errno);
    return false;
  }
  // The kernel fills up to 8 pages per read; a record may be split across reads.
  if (buf_.empty()) buf_.resize(32 << 10);
  char* buf = buf_.data();
  const size_t cap = buf_.size();
  bool ok = true, header = false;
  size_t carry = 0;  // bytes of a split record left from the last read
  for (;;) {
    ssize_t n = ::read(fd, buf + carry, cap - carry);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why_ = std::string("reading the BPF task iterator: ") + std::strerror(errno);
      ok = false;
      break;
    }
    if (n == 0) break;
    size_t have = carry + static_cast<size_t>(n), whole = have / sizeof(TaskRun) * sizeof(TaskRun);
    for (size_t off = 0; off < whole; off += sizeof(TaskRun)) {
      TaskRun r;
      std::memcpy(&r, buf + off, sizeof r);
      if (r.tid == 0) {  // the header: the reader's pid as the kernel numbers it
        header = true;
        if (r.tgid != static_cast<uint32_t>(::getpid())) {
          why_ = "aimem runs in a pid namespace of its own: the BPF task iterator's pids are not those of proc/";
          ok = false;
        }
        continue;
      }
      if (out.size() < max_tasks)
        out.push_back(r);
      else
        ok = false, why_ = "more tasks than the sampler keeps";
    }
    carry = have - whole;
    std::memmove(buf, buf + whole, carry);
  }
  ::close(fd);
  if (ok && !header) {
    why_ = "the BPF task iterator returned no header record";
    ok = false;
  }
  return ok;
}

}  // namespace aimem::watch
