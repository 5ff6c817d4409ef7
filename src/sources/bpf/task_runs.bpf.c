// A BPF task iterator (Linux 5.8+): one record per task on the host, read by
// the watch sampler in one pass instead of a proc/PID/schedstat read per
// process (see src/sources/task_runs.h). Built with clang -target bpf; loaded
// with libbpf, which relocates the fields below against the running kernel's
// BTF (CO-RE). Only the fields read are declared: preserve_access_index
// matches them by name, so no vmlinux.h is generated at build time.
//
// Two programs. task_walk (Linux 6.7+: the open-coded task iterator kfuncs)
// runs once per read and walks the kernel's task list under RCU, writing one
// record per process (struct proc_run: its threads' run times and context
// switches summed, kernel threads left out) into an array map the reader has
// mapped. task_runs, the fallback, is run by the kernel once per task, which
// it finds by looking up each pid in turn and taking a reference on it (that
// lookup cost three times the program itself, and was a fifth of aimem
// watch's CPU on a host of 1,000 sleeping processes); it writes one record
// per thread (struct task_run), which the reader sums per process.
//
// Why the walk sums: the list it walks gives each process's threads right
// after their leader (bpf_iter_task_next with BPF_TASK_ITER_ALL_THREADS steps
// through the leader's thread list before the next process), so a thread is
// added to the record just written, where the reader had to copy, sort and
// look up every thread's record; and records of processes alone come in
// creation order, which is pid order until pids wrap, so the reader's sort
// is skipped.
//
// The walk also reads each process's resident page counts, the numbers
// proc/PID/statm prints (fs/proc/task_mmu.c task_statm: shared is
// MM_FILEPAGES + MM_SHMEMPAGES, resident that plus MM_ANONPAGES), from its
// thread group leader's mm->rss_stat[] (Linux 6.2+: a percpu_counter each).
// What is read is the counter's `count`, percpu_counter_read_positive(), as
// statm printed it up to Linux 6.15; since 6.16 statm adds each CPU's
// not-yet-folded delta (percpu_counter_sum), which a program cannot read
// here (the per-CPU pointer carries no BTF percpu tag), so the two differ by
// less than the counter's batch (max(32, 2 * online CPUs) pages) per CPU.
// The sampler uses them to tell that nothing moved a sleeping process's
// memory from outside; the values it keeps still come from statm.
#include <linux/bpf.h>  // map types and flags
#include <linux/types.h>

struct sched_entity {
  __u64 sum_exec_runtime;
} __attribute__((preserve_access_index));
// Linux 6.2+ (mm_types.h): struct percpu_counter rss_stat[NR_MM_COUNTERS].
// Before that rss_stat was a struct mm_rss_stat of atomic_long_t, which does
// not match this array: bpf_core_field_exists() is then false and no pages
// are read (those kernels have no walk either; see below).
struct percpu_counter {
  __s64 count;
} __attribute__((preserve_access_index));
struct mm_struct {
  struct percpu_counter rss_stat[4];  // MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES
} __attribute__((preserve_access_index));
struct task_struct {
  int pid;
  int tgid;
  unsigned int flags;
  struct sched_entity se;
  unsigned long nvcsw;
  unsigned long nivcsw;
  __u64 start_time;
  struct mm_struct *mm;
} __attribute__((preserve_access_index));
struct seq_file;
struct bpf_iter_meta {
  struct seq_file *seq;
  __u64 session_id;
  __u64 seq_num;
} __attribute__((preserve_access_index));
struct bpf_iter__task {
  struct bpf_iter_meta *meta;
  struct task_struct *task;
} __attribute__((preserve_access_index));

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#define PF_KTHREAD 0x00200000

// task_runs's record, one per thread. Keep in step with ThreadRun in
// task_runs.cc (72 bytes, no padding).
struct task_run {
  __u32 tid;
  __u32 tgid;
  __u64 start_ns;  // task start, ns since boot (monotonic): a reused pid reads differently
  __u64 run_ns;    // CPU time this thread has run
  __u64 switches;  // voluntary + involuntary context switches
  __u32 kernel;    // a kernel thread (no memory of its own)
  __u32 has_pages; // pages[] was read: a thread group leader with memory, in the walk
  __s64 pages[4];  // mm->rss_stat[i].count (see the top of this file)
};

SEC("iter/task")
int task_runs(struct bpf_iter__task *ctx) {
  struct task_struct *t = ctx->task;
  if (!t) return 0;
  struct task_run r = {};
  if (ctx->meta->seq_num == 0) {
    // A first record with tid 0 names the reading process's pid as the
    // kernel numbers it (the initial pid namespace): the reader compares it
    // with getpid() and uses the records only when the two agree.
    r.tgid = bpf_get_current_pid_tgid() >> 32;
    bpf_seq_write(ctx->meta->seq, &r, sizeof r);
  }
  r.tid = t->pid;
  r.tgid = t->tgid;
  r.start_ns = t->start_time;
  r.run_ns = t->se.sum_exec_runtime;
  r.switches = t->nvcsw + t->nivcsw;
  r.kernel = (t->flags & PF_KTHREAD) != 0;
  bpf_seq_write(ctx->meta->seq, &r, sizeof r);
  return 0;
}

// The open-coded task iterator (kernel/bpf/task_iter.c). Weak: on a kernel
// without it the object still loads, with task_walk left out.
struct bpf_iter_task {
  __u64 __opaque[3];
} __attribute__((aligned(8)));
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
#define BPF_TASK_ITER_ALL_THREADS 1

// task_walk's record, one per process. Keep in step with ProcessRun in
// task_runs.h (72 bytes, no padding).
struct proc_run {
  __u32 pid;       // the thread group (its leader's tid)
  __u32 threads;   // its threads summed here, the leader included
  __u64 start_ns;  // the leader's start, ns since boot: a reused pid reads differently
  __u64 run_ns;    // CPU time its threads have run
  __u64 switches;  // their voluntary + involuntary context switches
  __u32 has_pages; // pages[] was read: the leader has memory
  __u32 reserved;
  __s64 pages[4];  // the leader's mm->rss_stat[i].count (see the top of this file)
};

// task_walk's records, one per process in task list order (creation order);
// max_entries is set by the loader. Mapped by the reader.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct proc_run);
  __uint(max_entries, 1);
} walk_runs SEC(".maps");

// Processes recorded in the current read. Global, so the verifier reloads it
// on each pass of the loop rather than tracking a counter it must prove bounded.
__u32 walked = 0;

// Attached to one task (the reader's own, BPF_ITER_TASK's tid), so run once
// per read: walks every thread on the host, one record per process into
// walk_runs, then writes the header (a struct task_run with tid 0, the
// reader's pid as the kernel numbers it, and in run_ns the number of
// processes, which may exceed the map: the reader then knows its table was
// short).
SEC("iter/task")
int task_walk(struct bpf_iter__task *ctx) {
  if (!ctx->task || ctx->meta->seq_num != 0) return 0;
  struct bpf_iter_task it;
  struct task_struct *t;
  __u32 leader = 0;  // the process whose threads come now; 0: none recorded (a kernel thread, the idle task)
  walked = 0;
  bpf_iter_task_new(&it, (void *)0, BPF_TASK_ITER_ALL_THREADS);
  while ((t = bpf_iter_task_next(&it))) {
    __u32 tgid = t->tgid;
    if (t->pid != tgid) {  // a thread: added to its process, which came just before
      if (tgid != leader || leader == 0) continue;  // its leader was not recorded
      __u32 k = walked - 1;
      struct proc_run *r = bpf_map_lookup_elem(&walk_runs, &k);
      if (!r) continue;  // past the table
      r->run_ns += t->se.sum_exec_runtime;
      r->switches += t->nvcsw + t->nivcsw;
      r->threads += 1;
      continue;
    }
    leader = 0;
    if (t->flags & PF_KTHREAD) continue;  // no memory of its own; pid 0, the idle task, is one
    leader = tgid;
    __u32 k = walked;
    walked = k + 1;
    struct proc_run *r = bpf_map_lookup_elem(&walk_runs, &k);
    if (!r) continue;  // past the table: counted only
    r->pid = tgid;
    r->threads = 1;
    r->start_ns = t->start_time;
    r->run_ns = t->se.sum_exec_runtime;
    r->switches = t->nvcsw + t->nivcsw;
    r->has_pages = 0;
    // The leader's: its threads share the mm, and a leader that exited
    // before its threads has none, as statm then prints zeros.
    struct mm_struct *mm = t->mm;
    if (bpf_core_field_exists(mm->rss_stat) && mm) {
      r->pages[0] = mm->rss_stat[0].count;
      r->pages[1] = mm->rss_stat[1].count;
      r->pages[2] = mm->rss_stat[2].count;
      r->pages[3] = mm->rss_stat[3].count;
      r->has_pages = 1;
    }
  }
  bpf_iter_task_destroy(&it);
  struct task_run h = {};
  h.tgid = bpf_get_current_pid_tgid() >> 32;
  h.run_ns = walked;
  bpf_seq_write(ctx->meta->seq, &h, sizeof h);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";  // bpf_seq_write is GPL-only
