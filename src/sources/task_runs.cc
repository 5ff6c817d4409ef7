// See task_runs.h.
#include "sources/task_runs.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>

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

// One thread, as the per-task program writes it (struct task_run in
// bpf/task_runs.bpf.c); tid 0 is the header. Summed into ProcessRun here.
struct ThreadRun {
  uint32_t tid = 0;
  uint32_t tgid = 0;       // the process (thread group)
  uint64_t start_ns = 0;   // start, ns since boot
  uint64_t run_ns = 0;     // CPU time run
  uint64_t switches = 0;   // voluntary + involuntary context switches
  uint32_t kernel = 0;     // a kernel thread
  uint32_t has_pages = 0;  // never set by the per-task program
  int64_t pages[4] = {};
};
static_assert(sizeof(ThreadRun) == 72, "ThreadRun must match the BPF program's record");

#ifdef AIMEM_TASK_RUNS_BPF_OBJECT
char g_log[512];  // the child's last libbpf message: the reason a load failed

int log_libbpf(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  int n = std::vsnprintf(g_log, sizeof g_log, format, args);
  while (n > 0 && static_cast<size_t>(n) < sizeof g_log && (g_log[n - 1] == '\n' || g_log[n - 1] == ' ')) g_log[--n] = 0;
  return 0;
}

// Sends the reason (empty on success) and up to two descriptors, then exits.
[[noreturn]] void say(int sock, const char* why, int fd = -1, int fd2 = -1) {
  msghdr m{};
  iovec io{const_cast<char*>(why), std::strlen(why) + 1};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  const int fds[2] = {fd, fd2};
  const size_t n = fd < 0 ? 0 : fd2 < 0 ? 1 : 2;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof fds)] = {};
  if (n) {
    m.msg_control = ctl;
    m.msg_controllen = CMSG_SPACE(n * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, n * sizeof(int));
  }
  (void)::sendmsg(sock, &m, MSG_NOSIGNAL);
  ::_exit(0);
}

// Runs in the child: load, attach, send the link's descriptor (and, for the
// walk, the table's), or the reason. The walk is tried first, attached to
// the reading process's own task so that it runs once per read; where it
// does not load (before Linux 6.7), the per-task program.
[[noreturn]] void load_in_child(int sock, pid_t reader, size_t table, bool walk) {
  void* lib = ::dlopen("libbpf.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) say(sock, "libbpf.so.1 not found (Debian package libbpf1)");
  // The same signatures as <bpf/libbpf.h>: declared from it, resolved by name.
  auto sym = [&](const char* name) { return ::dlsym(lib, name); };
  auto set_print = reinterpret_cast<decltype(&libbpf_set_print)>(sym("libbpf_set_print"));
  auto open_mem = reinterpret_cast<decltype(&bpf_object__open_mem)>(sym("bpf_object__open_mem"));
  auto load = reinterpret_cast<decltype(&bpf_object__load)>(sym("bpf_object__load"));
  auto close_obj = reinterpret_cast<decltype(&bpf_object__close)>(sym("bpf_object__close"));
  auto find = reinterpret_cast<decltype(&bpf_object__find_program_by_name)>(sym("bpf_object__find_program_by_name"));
  auto find_map = reinterpret_cast<decltype(&bpf_object__find_map_by_name)>(sym("bpf_object__find_map_by_name"));
  auto autoload = reinterpret_cast<decltype(&bpf_program__set_autoload)>(sym("bpf_program__set_autoload"));
  auto set_entries = reinterpret_cast<decltype(&bpf_map__set_max_entries)>(sym("bpf_map__set_max_entries"));
  auto map_fd = reinterpret_cast<decltype(&bpf_map__fd)>(sym("bpf_map__fd"));
  auto attach = reinterpret_cast<decltype(&bpf_program__attach_iter)>(sym("bpf_program__attach_iter"));
  auto link_fd = reinterpret_cast<decltype(&bpf_link__fd)>(sym("bpf_link__fd"));
  if (!set_print || !open_mem || !load || !close_obj || !find || !find_map || !autoload || !set_entries || !map_fd ||
      !attach || !link_fd)
    say(sock, "libbpf.so.1 lacks the functions needed (libbpf 0.8 or later)");
  set_print(log_libbpf);
  // One program of the object loaded, the other left out.
  auto open_one = [&](const char* name, const char* other) -> bpf_object* {
    g_log[0] = 0;
    bpf_object* obj = open_mem(aimem_task_runs_bpf_begin,
                               static_cast<size_t>(aimem_task_runs_bpf_end - aimem_task_runs_bpf_begin), nullptr);
    if (!obj) return nullptr;
    bpf_program* skip = find(obj, other);
    if (!find(obj, name) || !skip || autoload(skip, false) != 0) return close_obj(obj), nullptr;
    if (bpf_map* m = find_map(obj, "walk_runs"); !m || set_entries(m, std::string_view(name) == "task_walk" ? table : 1) != 0)
      return close_obj(obj), nullptr;
    return obj;
  };
  if (walk)
    if (bpf_object* obj = open_one("task_walk", "task_runs"); obj && load(obj) == 0) {
      union bpf_iter_link_info info;
      std::memset(&info, 0, sizeof info);
      info.task.tid = static_cast<__u32>(reader);
      bpf_iter_attach_opts opts{};
      opts.sz = sizeof opts;
      opts.link_info = &info;
      opts.link_info_len = sizeof info;
      if (bpf_link* link = attach(find(obj, "task_walk"), &opts))
        say(sock, "", link_fd(link), map_fd(find_map(obj, "walk_runs")));
    }
  bpf_object* obj = open_one("task_runs", "task_walk");
  if (!obj) say(sock, g_log[0] ? g_log : "libbpf could not open the task iterator");
  if (int e = load(obj); e != 0) {
    static char why[700];
    std::snprintf(why, sizeof why, "loading the BPF task iterator failed (%s)%s%s", std::strerror(-e), g_log[0] ? ": " : "", g_log);
    say(sock, why);
  }
  bpf_program* prog = find(obj, "task_runs");
  bpf_link* link = prog ? attach(prog, nullptr) : nullptr;
  if (!link) say(sock, g_log[0] ? g_log : "attaching the BPF task iterator failed");
  say(sock, "", link_fd(link));
}
#endif

}  // namespace

Result<std::unique_ptr<TaskRuns>> TaskRuns::open(size_t table, bool walk) {
#ifndef AIMEM_TASK_RUNS_BPF_OBJECT
  (void)table, (void)walk;
  return make_error("built without the BPF task iterator (clang and libbpf-dev were not found at build time)");
#else
  table = std::clamp<size_t>(table, 1, 1 << 24);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return make_error(std::string("the BPF task iterator: socketpair: ") + std::strerror(errno));
  }
  const pid_t reader = ::getpid();  // the walk runs once, for this process's main thread
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
    load_in_child(sv[1], reader, table, walk);
  }
  ::close(sv[1]);
  int fds[2] = {-1, -1};
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
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof fds)] = {};
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    ssize_t n = ::recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
    if (n > 0) {
      text.assign(buf, ::strnlen(buf, static_cast<size_t>(n)));
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
          std::memcpy(fds, CMSG_DATA(c), std::min(sizeof fds, static_cast<size_t>(c->cmsg_len - CMSG_LEN(0))));
    }
  } else {
    ::kill(child, SIGKILL);  // a load that hangs is not waited for
    text = "loading the BPF task iterator did not finish in 10 s";
  }
  ::close(sv[0]);
  while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (fds[0] < 0) {
    if (fds[1] >= 0) ::close(fds[1]);
    return make_error(text.empty() ? "loading the BPF task iterator failed" : text);
  }
  std::unique_ptr<TaskRuns> t(new TaskRuns(fds[0], fds[1], table));
  if (fds[1] >= 0 && !t->table_) return make_error(t->why());
  // Records name pids as the initial pid namespace does: in another one (a
  // container without hostPID) they are not the pids proc/ shows.
  std::vector<ProcessRun> runs;
  if (!t->read(runs)) {
    return make_error(t->why());
  }
  return t;
#endif
}

TaskRuns::TaskRuns(int link_fd, int map_fd, size_t capacity) : link_fd_(link_fd), map_fd_(map_fd) {
  if (map_fd_ < 0) return;
  // The table's values start on a page of their own; records are
  // sizeof(ProcessRun) bytes apart (the map rounds a value up to 8).
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (capacity * sizeof(ProcessRun) + page - 1) / page * page;
  void* at = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, map_fd_, 0);
  if (at == MAP_FAILED) {
    why_ = std::string("mapping the BPF task table: ") + std::strerror(errno);
    return;
  }
  table_ = static_cast<const ProcessRun*>(at);
  capacity_ = capacity;
  mapped_ = bytes;
}

TaskRuns::~TaskRuns() {
  if (table_) ::munmap(const_cast<ProcessRun*>(table_), mapped_);
  if (map_fd_ >= 0) ::close(map_fd_);
  ::close(link_fd_);
}

void TaskRuns::take(TaskRuns& other) {
  std::swap(link_fd_, other.link_fd_);
  std::swap(map_fd_, other.map_fd_);
  std::swap(table_, other.table_);
  std::swap(capacity_, other.capacity_);
  std::swap(mapped_, other.mapped_);
}

// A new reading of the link (each runs the program again); -1 with why_ set.
int TaskRuns::create_iter() {
  bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.iter_create.link_fd = static_cast<uint32_t>(link_fd_);
  int fd = static_cast<int>(::syscall(__NR_bpf, BPF_ITER_CREATE, &attr, sizeof attr));
  if (fd < 0) why_ = std::string("bpf(BPF_ITER_CREATE): ") + std::strerror(errno);
  return fd;
}

// The walk: one read runs the program, whose only output in the stream is
// the header; the records are in the table, one per process, in task list
// order.
namespace {

// LSD radix sort by pid, a byte a pass, passes where every pid has the same
// byte skipped (pid_max is at most 2^22: three passes at most). Stable.
void sort_by_pid(std::vector<ProcessRun>& v, std::vector<ProcessRun>& scratch) {
  scratch.resize(v.size());
  for (int shift = 0; shift < 32; shift += 8) {
    size_t count[257] = {};
    for (const ProcessRun& r : v) ++count[((r.pid >> shift) & 0xff) + 1];
    if (std::find(std::begin(count), std::end(count), v.size()) != std::end(count)) continue;  // one bucket holds all
    for (size_t b = 1; b < 257; ++b) count[b] += count[b - 1];
    for (const ProcessRun& r : v) scratch[count[(r.pid >> shift) & 0xff]++] = r;
    v.swap(scratch);
  }
}

}  // namespace

bool TaskRuns::read_walk(std::vector<ProcessRun>& out, size_t max_processes) {
  int fd = create_iter();
  if (fd < 0) return false;
  ThreadRun header{};
  size_t got = 0;
  char extra[sizeof(ThreadRun)];
  for (;;) {
    char* into = got < sizeof header ? reinterpret_cast<char*>(&header) + got : extra;
    ssize_t n = ::read(fd, into, got < sizeof header ? sizeof header - got : sizeof extra);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) why_ = std::string("reading the BPF task iterator: ") + std::strerror(errno);
      break;
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got != sizeof header || header.tid != 0) {
    if (why_.empty()) why_ = "the BPF task iterator returned no header record";
    return false;
  }
  if (header.tgid != static_cast<uint32_t>(::getpid())) {
    why_ = "aimem runs in a pid namespace of its own: the BPF task iterator's pids are not those of proc/";
    return false;
  }
  const size_t walked = header.run_ns;
  if (walked > capacity_) {  // the table was short: one twice the processes, and again
    if (walked > max_processes) {
      why_ = "more processes than the sampler keeps";
      return false;
    }
    auto bigger = open(2 * walked, true);
    if (!bigger || !(*bigger)->table_) {
      why_ = bigger ? "the BPF task walk did not load again" : "a larger BPF task table: " + bigger.error().message;
      return false;
    }
    take(**bigger);
    return read_walk(out, max_processes);
  }
  out.assign(table_, table_ + walked);
  // Task list order is creation order: pid order until pids wrap (a
  // process's threads are in its record). Sorted by radix when it is not:
  // std::sort of that order fell to its heap sort.
  auto by_pid = [](const ProcessRun& a, const ProcessRun& b) { return a.pid < b.pid; };
  if (!std::is_sorted(out.begin(), out.end(), by_pid)) {
    sort_by_pid(out, scratch_);
    out.erase(std::unique(out.begin(), out.end(), [](const ProcessRun& a, const ProcessRun& b) { return a.pid == b.pid; }),
              out.end());  // a process moved in the list while it was walked
  }
  if (out.size() > max_processes) {
    out.resize(max_processes);
    why_ = "more processes than the sampler keeps";
    return false;
  }
  return true;
}

bool TaskRuns::read(std::vector<ProcessRun>& out, size_t max_processes) {
  out.clear();
  return table_ ? read_walk(out, max_processes) : read_per_task(out, max_processes);
}

// The kernel's per-task iterator: a record per thread, in tid order. The
// leaders (kernel threads left out) are the processes, in pid order; each
// other thread is summed into its own.
bool TaskRuns::read_per_task(std::vector<ProcessRun>& out, size_t max_processes) {
  int fd = create_iter();
  if (fd < 0) return false;
  // The kernel fills up to 8 pages per read; a record may be split across reads.
  if (buf_.empty()) buf_.resize(32 << 10);
  char* buf = buf_.data();
  const size_t cap = buf_.size();
  bool ok = true, header = false;
  size_t carry = 0;  // bytes of a split record left from the last read
  std::vector<ThreadRun> threads;  // not leaders: summed once the leaders are all known
  for (;;) {
    ssize_t n = ::read(fd, buf + carry, cap - carry);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why_ = std::string("reading the BPF task iterator: ") + std::strerror(errno);
      ok = false;
      break;
    }
    if (n == 0) break;
    size_t have = carry + static_cast<size_t>(n), whole = have / sizeof(ThreadRun) * sizeof(ThreadRun);
    for (size_t off = 0; off < whole; off += sizeof(ThreadRun)) {
      ThreadRun r;
      std::memcpy(&r, buf + off, sizeof r);
      if (r.tid == 0) {  // the header: the reader's pid as the kernel numbers it
        header = true;
        if (r.tgid != static_cast<uint32_t>(::getpid())) {
          why_ = "aimem runs in a pid namespace of its own: the BPF task iterator's pids are not those of proc/";
          ok = false;
        }
        continue;
      }
      if (r.kernel) continue;  // no memory of its own
      if (r.tid != r.tgid) {
        threads.push_back(r);
      } else if (out.size() < max_processes) {
        ProcessRun& p = out.emplace_back();
        p.pid = r.tid, p.threads = 1, p.start_ns = r.start_ns, p.run_ns = r.run_ns, p.switches = r.switches;
      } else {
        ok = false, why_ = "more processes than the sampler keeps";
      }
    }
    carry = have - whole;
    std::memmove(buf, buf + whole, carry);
  }
  ::close(fd);
  if (ok && !header) {
    why_ = "the BPF task iterator returned no header record";
    ok = false;
  }
  auto by_pid = [](const ProcessRun& a, uint32_t pid) { return a.pid < pid; };
  for (const ThreadRun& r : threads) {
    auto p = std::lower_bound(out.begin(), out.end(), r.tgid, by_pid);
    if (p == out.end() || p->pid != r.tgid) continue;  // its leader is gone
    p->run_ns += r.run_ns, p->switches += r.switches, ++p->threads;
  }
  return ok;
}

}  // namespace aimem::watch
