// A BPF task iterator (Linux 5.8+): one record per task on the host, read by
// the watch sampler in one pass instead of a proc/PID/schedstat read per
// process (see src/sources/task_runs.h). Built with clang -target bpf; loaded
// with libbpf, which relocates the fields below against the running kernel's
// BTF (CO-RE). Only the fields read are declared: preserve_access_index
// matches them by name, so no vmlinux.h is generated at build time.
//
// Two programs, the same records. task_walk (Linux 6.7+: the open-coded task
// iterator kfuncs) runs once per read and walks the kernel's task list under
// RCU, writing into an array map the reader has mapped; task_runs, the
// fallback, is run by the kernel once per task, which it finds by looking up
// each pid in turn and taking a reference on it: that lookup cost three times
// the program itself, and was a fifth of aimem watch's CPU on a host of 1,000
// sleeping processes.
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

// Keep in step with TaskRun in task_runs.h (72 bytes, no padding).
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

// task_walk's records, in task list order (processes by creation, each one's
// threads after it); max_entries is set by the loader. Mapped by the reader.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct task_run);
  __uint(max_entries, 1);
} walk_runs SEC(".maps");

// Tasks walked in the current read. Global, so the verifier reloads it on
// each pass of the loop rather than tracking a counter it must prove bounded.
__u32 walked = 0;

// Attached to one task (the reader's own, BPF_ITER_TASK's tid), so run once
// per read: walks every thread on the host into walk_runs, then writes the
// header (tid 0, the reader's pid as the kernel numbers it, and in run_ns the
// number of tasks walked, which may exceed the map: the reader then knows its
// table was short).
SEC("iter/task")
int task_walk(struct bpf_iter__task *ctx) {
  if (!ctx->task || ctx->meta->seq_num != 0) return 0;
  struct bpf_iter_task it;
  struct task_struct *t;
  walked = 0;
  bpf_iter_task_new(&it, (void *)0, BPF_TASK_ITER_ALL_THREADS);
  while ((t = bpf_iter_task_next(&it))) {
    __u32 k = walked;
    walked = k + 1;
    struct task_run *r = bpf_map_lookup_elem(&walk_runs, &k);
    if (!r) continue;  // past the table: counted only
    r->tid = t->pid;
    r->tgid = t->tgid;
    r->start_ns = t->start_time;
    r->run_ns = t->se.sum_exec_runtime;
    r->switches = t->nvcsw + t->nivcsw;
    r->kernel = (t->flags & PF_KTHREAD) != 0;
    r->has_pages = 0;
    // Only the leader's: its threads share the mm, and a leader that exited
    // before its threads has none, as statm then prints zeros.
    struct mm_struct *mm = t->mm;
    if (bpf_core_field_exists(mm->rss_stat) && !r->kernel && t->pid == t->tgid && mm) {
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
