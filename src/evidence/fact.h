// Evidence: typed facts with provenance. Recognizers turn text into facts;
// sources turn files under /proc and /sys into facts; the diagnosis reads only
// facts. A fact says one thing that was seen, never a conclusion about other
// facts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/taxonomy.h"

namespace aimem {

// What kind of thing a fact reports. Failures start incidents; the rest is
// context that the diagnosis attaches to them.
enum class FactKind : uint8_t {
  // --- failures ---
  kernel_oom_kill,      // the kernel OOM killer killed a process (assembled report or lone victim line)
  kernel_oom_event,     // an OOM report without a victim (rate-limited, "no killable processes", limit reached)
  cgroup_oom_counter,   // memory.events / memory.oom_control counted OOM kills in a cgroup
  gpu_oom,              // an accelerator allocation failed (CUDA/HIP/TF/JAX/ggml...)
  kv_cache_shortage,    // the engine's KV budget cannot hold one max-length sequence / no cache blocks
  host_alloc_failure,   // a host allocation failed inside a process (MemoryError, bad_alloc, ENOMEM, CPU allocator)
  host_memory_refused,  // a runtime refused to load: "requires more system memory than is available"
  js_heap_oom,          // V8 heap limit reached
  jvm_heap_oom,         // java.lang.OutOfMemoryError (heap, metaspace, GC overhead)
  jvm_native_oom,       // the JVM could not commit native memory (mmap ENOMEM)
  userspace_kill,       // systemd-oomd / earlyoom / oomd / nohang / Ray memory monitor killed something
  k8s_oomkilled,        // Kubernetes reports reason OOMKilled for a container
  k8s_evicted,          // the kubelet evicted a pod for memory
  docker_oomkilled,     // docker inspect State.OOMKilled true
  systemd_oom_result,   // a unit failed with result 'oom-kill'
  process_killed,       // a process died by SIGKILL without saying why (shell "Killed", worker died)
  exit_status,          // an exit code or signal was reported (context unless nothing else)
  host_exhausted,       // a snapshot of the host (free, meminfo, top) shows RAM and swap both used up
  not_memory_failure,   // looks like a memory failure to the client but is not (NCCL timeout, Xid, illegal address, probe kill)
  // --- context ---
  memory_limit,         // a configured limit (docker -m, resources.limits.memory, MemoryMax, HostConfig.Memory)
  memory_request,       // a Kubernetes memory request
  memory_usage,         // usage / peak observation of a pool
  gpu_state,            // a GPU's memory as nvidia-smi or NVML reports it
  host_state,           // host RAM as free / meminfo reports it
  runtime_setting,      // max_model_len, n_ctx, gpu_memory_utilization, batch sizes, heap flags
  kv_capacity,          // what the engine's KV cache holds (tokens, blocks, concurrency)
  restarts,             // restart count, CrashLoopBackOff
  phase_load,           // the workload was loading or converting a model
  phase_serve,          // the workload was serving / stepping (forward, engine_step, sampler, execute)
  stop_or_restart,      // an operator or orchestrator stopped/restarted the process (docker stop, probe kill)
  platform,             // where the workload ran: detail "kubernetes", "docker", "systemd", "ray"
  recovered,            // the program caught a memory failure and went on (retried smaller, skipped a batch)
};

enum class Family : uint8_t {
  kernel, cgroup, procfs, pytorch, vllm, llamacpp, tgi, tensorflow, jax, node, jvm, python,
  systemd, userspace_killer, docker, kubernetes, exit_status, nvidia, cuda, nccl, ray, runtime, cli,
  sglang, tensorrt_llm, onnxruntime, level_zero,
  generic,  // the generic allocation-failure reader (families/generic_alloc.cc)
};

// The detail of a phase_load fact that marks a load as finished (a line such
// as "Loaded model in 10.2 seconds"): loading cues before it are over.
inline constexpr std::string_view kLoadFinished = "load finished";

// The detail of a phase_load fact (strength 0: it votes for nothing) at the
// next shell prompt after a command whose own line carried a phase cue
// ("$ python convert.py ..."): that command's run ended there. A cue on the
// command line (family cli) speaks for a failure inside its run, however far
// down (diagnose/classify.cc, phase_vote), and for none after this mark.
inline constexpr std::string_view kCommandEnded = "the shell's next command";

// The detail of a phase_serve fact for a worker count given as the machine's
// CPUs ("make -j$(nproc)"); its `sequences` is kPerCpuJobs, a mark, not a
// count the paste shows: the diagnosis prints no number for it.
inline constexpr std::string_view kPerCpuDetail = "parallel jobs, one per CPU the machine reports ($(nproc))";
inline constexpr uint64_t kPerCpuJobs = 8;

// The detail of a phase_serve fact for a batch size stated as 1 or 2, the size
// in `count` ("batch_size=1", "--per_device_train_batch_size 1",
// "Instantaneous batch size per device = 1"): a step over one sequence holds
// one sequence, so its length, not the batch, grew.
// It votes for nothing by itself (strength 0); the diagnosis reads it beside a
// step's cues (diagnose/classify.cc, phase_vote).
inline constexpr std::string_view kBatchOfOne = "a batch of one sequence";

// The detail of kafka_wire.cc's look-alike: a Kafka client's heap error on a
// receive buffer sized from bytes off the wire (diagnose/classify.cc reads it
// over the heap error it explains).
inline constexpr std::string_view kKafkaWireSize =
    "a Kafka client sized a receive buffer from bytes off the wire (a TLS or SASL reply read as a plaintext size): a protocol "
    "mismatch, not memory";

// The detail of ml_phase's epoch cue (a phase_serve fact for
// concurrency_batch, as the plain cue) where the epoch's own number is 2 or
// more ("Epoch 3/40", "epoch 10, step 612"): whole epochs ran before the one
// that failed, so the batch had fit them (diagnose/classify.cc, gpu_cause).
inline constexpr std::string_view kLaterEpoch = "a training epoch past the first";

// The start of the detail of a phase_serve fact (context_growth.cc): the
// context length rose from request to request or step to step (the detail
// goes on ": from A to B tokens", B the longest yet). Like kBatchOfOne, the diagnosis reads it beside a step's
// cues: the step that failed held the longest sequence yet, so its length,
// not the batch, grew.
inline constexpr std::string_view kContextGrew = "the context length rising from one request to the next";

// The detail of a platform fact on a command that prints the log of a run
// that ended ("kubectl logs POD --previous", "docker logs NAME"): the lines
// after it, to the next command (its line in `count`; unset: to the end),
// are what that run printed before it ended, whatever stands above them in
// the paste (previous_run_log.cc).
inline constexpr std::string_view kPreviousRunLog = "the log of the run that ended";

// The detail of a host_state fact from /proc/meminfo's SUnreclaim (usage)
// beside its MemTotal (total): the kernel's own memory that cannot be
// reclaimed (a driver's or a subsystem's slab).
inline constexpr std::string_view kKernelSlab = "unreclaimable kernel slab";

// The detail of a runtime_setting from `docker inspect`'s HostConfig.Memory
// of 0: the container ran with no memory limit of its own, so an OOM kill
// inside it was the host's (or Docker Desktop's VM's) kernel acting.
inline constexpr std::string_view kNoContainerLimit = "no container memory limit (HostConfig.Memory 0)";

// The detail of a host_alloc_failure (layer unknown) read from a database
// server's out-of-memory error as its client relays it (SQLSTATE 53200): the
// server refused an allocation; in which pool, only the server's log says.
inline constexpr std::string_view kRelayedServerOom =
    "a database server's out-of-memory error (SQLSTATE 53200), relayed to its client: which pool, only the server's log says";

// The detail of a runtime_setting (address_space.cc): the paste shows a
// 32-bit process (its banner, its machine, its target), whose address space
// runs out at 2 to 4 GiB whatever the machine's RAM.
inline constexpr std::string_view kThirtyTwoBit = "a 32-bit process (its address space is 2 to 4 GiB)";

// The starts of the details of host_alloc_failure facts (layer unknown) for
// WebAssembly memory (wasm_memory.cc): a module's linear memory that could not
// grow, capped by its build, and an engine that could not reserve an
// instance's memory (an address-space reservation). No layer names either pool.
inline constexpr std::string_view kWasmHeap = "the WebAssembly module's linear memory";
inline constexpr std::string_view kWasmReserve = "the JavaScript engine could not reserve memory";

// The detail of a memory_usage fact from a `docker stats` row whose LIMIT is
// the host's (or its VM's) memory, not a limit of the container's own.
inline constexpr std::string_view kStatsHostLimit = "docker stats (no container limit: LIMIT is the host's memory)";

// The start of the detail of a jvm_heap_oom read from the collector's own
// log (jvm.cc: back-to-back full collections that free almost nothing) rather
// than from an OutOfMemoryError: where the JVM's error follows, it decides.
inline constexpr std::string_view kGcThrashing = "GC thrashing";

// The detail of a runtime_setting whose uptime_at_failure_s is how long a
// killed container ran (Kubernetes' Started to Finished under its reason).
inline constexpr std::string_view kContainerRanFor = "container ran for";

// The detail of an exit_status fact from a `docker build` step ("returned a
// non-zero code: 137", BuildKit's "did not complete successfully: exit code:
// 137"): a build step's container has no memory limit unless the build was
// given --memory, so a SIGKILL there is the host's (or Docker Desktop VM's).
inline constexpr std::string_view kBuildStepExit = "a docker build step exited";

// The start of the detail of a kill by the container runtime itself (runc's
// "container init was OOM-killed", crun's "OOM: the memory limit could be
// too low"): the limit is whatever its caller (Docker, a kubelet) set.
inline constexpr std::string_view kRuntimeLimitKill = "container runtime memory limit";

// The detail of TensorRT-LLM's gpu_oom when its paged KV pool holds less
// than one sequence of the engine's length ("maxTokensInPagedKvCache must be
// large enough ..."): the context's KV cache, as a lean (the weights or a low
// free_gpu_memory_fraction may be what left the pool small).
inline constexpr std::string_view kKvPoolBelowOneSequence =
    "kv cache (TensorRT-LLM): the paged KV pool left after the weights holds less than one sequence of the engine's maximum "
    "length";

// The detail of a host_state fact for the ZFS ARC's size (usage): OpenZFS's
// cache in kernel memory, counted as used and slow to shrink (zfs_arc.cc).
inline constexpr std::string_view kZfsArc = "ZFS ARC";

// The detail of a memory_usage fact for one pod's row of a `kubectl top pods`
// table (recognize/families/kubectl_top.cc).
inline constexpr std::string_view kPodTableDetail = "kubectl top pods";

// The detail of a memory_usage fact for a GPU pool's own figures
// (recognize/families/device_pools.cc), then the pool's kind and ")".
inline constexpr std::string_view kDevicePoolDetail = "device pool (";

// The detail of a runtime_setting fact for the largest file a user listed
// (ls -l, du; recognize/families/file_sizes.cc): its size in `requested`.
inline constexpr std::string_view kFileOnDisk = "a file on disk";

// The detail of a docker_oomkilled fact read from containerd's own log
// ("TaskOOM event &TaskOOM{ContainerID:...}"): on a Kubernetes node that
// log is the kubelet's runtime's, so the container is a pod's.
inline constexpr std::string_view kContainerdTaskOom = "containerd TaskOOM event";
// A request no machine holds (64 TiB and more: more RAM than the largest single machines hold): a size computed wrong (an
// integer that overflowed or underflowed, a garbage shape), not memory
// running out (diagnose/classify.cc; the scanner keeps a generic reading of
// one beside a family's report, scanner.cc).
inline constexpr uint64_t kImpossibleRequest = uint64_t{1} << 46;

// A KV cache shortage read from a serving engine's stats lines (a stalled
// service), not the engine's own error: the detail's prefix.
inline constexpr std::string_view kKvStalled = "stalled: ";

// The detail of an exit_status fact for Chromium's out-of-memory exit
// (Electron, VS Code, Chrome: reason 'oom', code 0xE0000008 = -536870904):
// the renderer's allocator or V8 gave up; which of the two, the code does
// not say (diagnose/classify.cc reads a heap series beside it).
inline constexpr std::string_view kChromiumOom = "Chromium's out-of-memory exit (reason 'oom', code 0xE0000008)";

// The detail of a memory_usage fact from a cgroup's memory.events whose
// oom_kill is 0: no OOM killer (the global one included) killed in it.
inline constexpr std::string_view kNoOomKill = "the cgroup counted no OOM kill (oom_kill 0)";
// The detail of a kill at an app's own memory limit, set by the OS per
// process (macOS and iOS jetsam's per-process-limit, Xcode's "Terminated due
// to memory issue", EXC_RESOURCE RESOURCE_TYPE_MEMORY): a container's limit
// in all but name.
inline constexpr std::string_view kPerAppLimitKill = "the OS killed the app at its own memory limit (jetsam's per-process limit)";

// The detail of .NET's OutOfMemoryException (dotnet.cc) where nothing in
// the line says more.
inline constexpr std::string_view kDotnetOom = ".NET OutOfMemoryException";

// What a server's own memory guard's detail says of itself (milvus.cc's
// quota): a refusal at a share of the node's memory, not an allocation the
// kernel or the runtime refused.
inline constexpr std::string_view kServerGuard = "the server's own guard, at a share of the node's memory";

// A container runtime's record that it saw no OOM kill (docker inspect's
// "OOMKilled": false): read beside an exit the process made itself.
inline constexpr std::string_view kRuntimeNoOomKill = "the runtime recorded no OOM kill (OOMKilled false)";

// The detail of the process_killed fact kubernetes.cc makes from the
// kubelet's node event "System OOM encountered, victim process: ...": the
// node's own (global) OOM kill, whatever limits its pods carry.
inline constexpr std::string_view kSystemOom = "SystemOOM";

// The detail of the process_killed fact tcmalloc.cc makes from a bare "^C"
// right after tcmalloc's large allocations: the summary and the reason say
// it whole, not as a SIGKILL of unknown sender.
inline constexpr std::string_view kStoppedAfterLargeAllocs =
    "the process was stopped (^C) right after tcmalloc's large allocations, as Colab's runtime stops one that ran the VM out of RAM";

// The detail of a host_alloc_failure from a program with a cap of its own
// that refused below it (DuckDB without its "(in use/limit used)" figures):
// its cap or the host, the line does not say.
inline constexpr std::string_view kRefusedBelowOwnCap =
    "the program's allocator failed below its own memory cap (no cap figures in the message): what refused the memory is not shown";

// The end of a growing series' detail (memory_series.cc) when it was still
// climbing where the input ends: most steps rose, the last sample the highest.
inline constexpr std::string_view kStillClimbing = "; still climbing at the end";

// The detail of a recovered fact for a broker's memory alarm that cleared
// (RabbitMQ's "memory resource limit alarm cleared"): the memory fell back
// under its watermark and the blocked publishers went on. It may come
// minutes after the alarm, far down its log.
inline constexpr std::string_view kAlarmCleared = "the broker's memory alarm cleared and its publishers went on";

// The detail of a recovered fact (ml_phase.cc): the build or test run that
// printed the failures before it ended in success (Maven's and Gradle's
// "BUILD SUCCESS"): the errors were the tests' own, expected and caught.
inline constexpr std::string_view kTestsPassed = "the build and its tests ended in success";

std::string_view to_string(FactKind kind);
std::string_view to_string(Family family);
// Where a fact of this family comes from, for people: "kernel log", "PyTorch".
std::string_view source_label(Family family);
bool is_failure(FactKind kind);

struct Provenance {
  std::string source;                // file path, "stdin", "/dev/kmsg", "journal", "--exit-code"
  uint64_t line = 0;                 // 1-based line in the source, 0 when not line-based
  std::optional<int64_t> unix_us;    // when it happened (wall clock, UTC)
  bool year_guessed = false;         // unix_us from a prefix without a year (syslog, klog): the year is a guess
  std::optional<double> uptime_s;    // seconds since boot, when only that is known
  uint32_t source_index = 0;         // order of the input among all inputs
  // The input's own line where `line` counts in the order written instead (a
  // newest-first paste, recognize/deframe.h): shown to the user; 0 when `line` is.
  uint64_t shown_line = 0;
};
// The line a user finds the evidence on in the input.
inline uint64_t shown_line(const Provenance& p) { return p.shown_line ? p.shown_line : p.line; }

struct Fact {
  FactKind kind{};
  Family family{};
  // What this fact alone says; the diagnosis may overrule it with other facts.
  Layer layer = Layer::unknown;
  Cause cause = Cause::unknown;
  float strength = 0.5f;  // 0..1: how decisive the fact is for its layer
  bool code_line = false;  // ml_phase: the cue is on an indented code line of a traceback, not a log line

  Provenance where;
  std::string text;    // the line as seen (quoted, bounded)
  // Supporting lines of the same report (kernel summary, memcg usage), at most a few.
  std::vector<std::pair<uint64_t, std::string>> extra;
  std::string detail;  // sub-kind in words: "CONSTRAINT_MEMCG", "GC overhead limit exceeded"

  // Who.
  std::optional<int64_t> pid;
  std::string process;      // comm / container / program name
  std::string cgroup;       // the cgroup whose limit was hit (oom_memcg)
  std::string task_cgroup;  // the victim's own cgroup (task_memcg)
  std::string container;
  std::string pod;
  std::string unit;         // systemd unit
  std::optional<int> gpu;   // device index

  // How much (bytes). Missing is not zero.
  std::optional<uint64_t> limit;
  std::optional<uint64_t> usage;
  std::optional<uint64_t> requested;             // the allocation that failed / the memory asked for
  std::optional<uint64_t> total;                 // capacity of the pool (GPU total, host total)
  std::optional<uint64_t> free;                  // free at the time
  std::optional<uint64_t> allocated;             // allocated by the framework (PyTorch)
  std::optional<uint64_t> reserved_unallocated;  // PyTorch reserved but unallocated
  std::optional<uint64_t> reserved;              // PyTorch reserved in total (old messages)
  std::optional<uint64_t> other_processes;       // held by other processes on the same device
  std::optional<uint64_t> this_process;          // "this process has N memory in use"
  std::optional<uint32_t> peers;                 // other processes on the device each holding about this process's share
  std::optional<uint64_t> rss;                   // victim's resident memory
  std::optional<uint64_t> heap_limit;            // heap ceiling (V8 MB figures, -Xmx)

  // LLM serving numbers.
  std::optional<uint64_t> max_model_len;  // requested context per sequence
  std::optional<uint64_t> kv_tokens;      // tokens the KV cache can hold
  std::optional<uint64_t> ctx;            // n_ctx / context in tokens
  std::optional<uint64_t> batch_tokens;   // prefill / batched tokens
  std::optional<uint64_t> sequences;      // concurrent sequences (max_num_seqs, n_seq_max, parallel)
  std::optional<uint64_t> kv_bytes;       // KV cache size
  std::optional<double> ratio;            // gpu_memory_utilization, vLLM "maximum concurrency" x, usage ratio

  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<uint64_t> count;          // restarts, kills counted
  std::optional<double> uptime_at_failure_s;  // how long the process ran before failing
  uint64_t from_line = 0;  // a memory series: the line of its first sample (counted as where.line), 0 if unknown
};

// A memory series' fact (memory_series.cc and the scanner's shape reading
// write them): usage that grew, rose at every sample, jumped, or sat level.
inline bool is_series(const Fact& f) {
  auto starts = [&](std::string_view p) { return f.detail.compare(0, p.size(), p) == 0; };
  return f.kind == FactKind::memory_usage && (starts("growing") || starts("rising ") || starts("jumped") || starts("level "));
}

}  // namespace aimem
