// A BPF task iterator (Linux 5.8+): one record per task on the host, read by
// the watch sampler in one pass instead of a proc/PID/schedstat read per
// process (see src/sources/task_runs.h). Built with clang -target bpf; loaded
// with libbpf, which relocates the fields below against the running kernel's
// BTF (CO-RE). Only the fields read are declared: preserve_access_index
// matches them by name, so no vmlinux.h is generated at build time.
#include <linux/types.h>

struct sched_entity {
  __u64 sum_exec_runtime;
} __attribute__((preserve_access_index));
struct task_struct {
  int pid;
  int tgid;
  unsigned int flags;
  struct sched_entity se;
  unsigned long nvcsw;
  unsigned long nivcsw;
  __u64 start_time;
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

#include <bpf/bpf_helpers.h>

#define PF_KTHREAD 0x00200000

// Keep in step with TaskRun in task_runs.h (40 bytes, no padding).
struct task_run {
  __u32 tid;
  __u32 tgid;
  __u64 start_ns;  // task start, ns since boot (monotonic): a reused pid reads differently
  __u64 run_ns;    // CPU time this thread has run
  __u64 switches;  // voluntary + involuntary context switches
  __u32 kernel;    // a kernel thread (no memory of its own)
  __u32 pad;
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

char LICENSE[] SEC("license") = "GPL";  // bpf_seq_write is GPL-only
