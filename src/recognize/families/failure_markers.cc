// Failures that name no memory: the evidence of a failure that is not a
// memory exhaustion, for when nothing else in the input is a failure. Someone
// who pastes a log with a Go panic or a deadline that passed is asking why
// it failed; "no memory failure found" would leave the look-alike unnamed.
//
//   Traceback (most recent call last):  ... ValueError: ...      a Python exception
//   panic: runtime error: index out of range [3] with length 3     Go
//   fatal error: concurrent map writes                             Go runtime
//   ... Check failed: (offset + needed_size <= this->buffer.size)  glog / TVM / TensorFlow CHECK
//   ... context deadline exceeded                                  a Go / gRPC deadline (timeouts)
//   Error: pull model manifest: ...                                a CLI's top-level error
//   level=info msg="Kill container \"b2f7..\""                     the runtime killing a container it was told to stop
//   Error: EMFILE: too many open files, open '/srv/notes/a.md'     the open-file limit (ulimit -n), Node / Python / Rust wordings
//   RequestId: 7d2e... Process exited before completing request    AWS Lambda: the function's process ended mid-request
//   Fatal Python error: Segmentation fault / Bus error (core dumped)   a crash (not CPython's "Cannot recover from MemoryError")
//   app[21877]: segfault at 0 ip 00007f3b2a1c4e3a sp 00007ffd6b1e9a20 error 4 in libvips.so.42   the kernel's record of a crash
//   traps: python[4120] trap divide error ip:7f2c41a3b2e1 sp:7ffd3c2a1b90 error:0 in libtorch_cpu.so   likewise, SIGFPE
//   thread 'main' panicked at 'called `Option::unwrap()` ...'      a Rust panic
//   terminate called after throwing an instance of 'std::runtime_error'   a C++ exception (not bad_alloc)
//   Exception in thread "main" java.lang.NullPointerException      a Java exception (not OutOfMemoryError)
//   OSError: [Errno 28] No space left on device                    the disk (not /dev/shm, which is memory)
//   TimeoutError: ... / execution took longer than 1h0m0s          a time limit
//   RangeError: Invalid string length                              V8's maximum length of one string or array, not its heap
//   double free or corruption (out) / malloc(): corrupted top size / Fatal glibc error: malloc.c:2599 (sysmalloc): assertion failed
//                                                                  heap corruption glibc found (a bug, not exhaustion)
//   rpc error: code = ResourceExhausted desc = grpc: received message larger than max (8388608 vs. 4194304)
//                                                                  gRPC's cap on one message's size
//   etcdserver: mvcc: database space exceeded                      etcd's storage quota (a disk quota)
//   Panic occurred in file library/alloc/src/raw_vec/mod.rs at line 28: capacity overflow
//                                                                  Rust's collections: a size computed wrong
//   code: 'MAX_LAMBDA_SIZE_EXCEEDED' / ... is too large to be loaded automatically (16GB > 10GB)
//                                                                  a platform's size limit on a package or a model
//   CPU time hard limit reached: isolate: ...                      an edge runtime's CPU-time budget (a time limit)
//   ... (DXGI_ERROR_DEVICE_REMOVED) / Display driver amdkmdag stopped responding and has successfully recovered.
//                                                                  Windows resetting the GPU (TDR)
//   FATAL:  sorry, too many clients already / Too many connections  a server's connection limit
//   Warning  FailedScheduling  21m  default-scheduler  0/3 nodes are available: 1 Insufficient nvidia.com/gpu, ...
//                                                                  a pod the scheduler could not place
//   ... unable to create stream: operation not supported           a GPU feature a vGPU or MIG profile lacks
//   Windows fatal exception: code 0xc0000409 / Exit code: -1073740791   a fail-fast crash (alone: with an OOM it follows the abort)
//   F/libc: Fatal signal 4 (SIGILL), code 1 (ILL_ILLOPC), ...      Android: an instruction the CPU lacks
//   INFO: task python3:18327 blocked for more than 120 seconds.     the kernel's hung-task watchdog
//   EDAC MC0: 3 CE error on CPU#0Channel#1_DIMM#1 (...)             a memory module's corrected errors (hardware)
//   java: symbol lookup error: .../libdjl_torch.so: undefined symbol: ...   the dynamic linker
//   [FIRING:31] CPUThrottlingHigh                                   an alert on a container's CPU limit
//   ... flood-stage watermark ... index read-only / allow delete    Elasticsearch's disk watermark (the disk)
//   triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376
//                                                                  a GPU kernel's launch configuration
//
// One not_memory_failure per kind of marker (at most kMaxFacts), family
// generic (so the scanner's ShadowingSink drops it near any family's
// failure), strength 0.4. The diagnosis counts them as failures only when the
// evidence holds no other failure (diagnose/group.cc): beside a real OOM they
// are context, never a second answer. The patterns carry kContext, so they
// add no gate word: a large log is read for them where it is read at all
// (its head and the blocks around gated failures).
#include <array>
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Traceback (most recent call last)", kContext},
    {"^[ \t]*(panic: |fatal error: )", kRegex | kContext},
    {"Check failed", kContext},
    {"context deadline exceeded", kContext},
    {"^(\\$ [^\\n]*)?Error: ", kRegex | kContext},
    {"Kill container", kContext},
    {"(EMFILE|[Tt]oo many open files)", kRegex | kContext},
    {"Process exited before completing request", kContext},
    {"(Fatal Python error: |^[ \t]*Bus error)", kRegex | kContext},
    // The kernel's record of a process's segmentation fault ("img-resizer[21877]: segfault at 0 ip 00007f3b2a1c4e3a sp ... error 4 in libvips.so").
    {"segfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error [0-9]+", kRegex | kContext},
    // And of its arithmetic fault ("traps: python[4120] trap divide error ip:7f2c sp:7ffd error:0 in libtorch_cpu.so").
    {"trap divide error ip:", kContext},
    {"thread '[^']*' panicked at", kRegex | kContext},
    {"terminate called after throwing an instance of", kContext},
    {"Exception in thread \"", kContext},
    // Go and the C library's strerror spell it lower-case ("write /data/wal/00002418: no space left on device").
    {"([Nn]o space left on device|ENOSPC|\\[Errno 28\\]|Disk quota exceeded)", kRegex | kContext},
    {"(TimeoutError|timed out after|took longer than|DEADLINE_EXCEEDED)", kRegex | kContext},
    {"RangeError: Invalid (string|array|typed array) length", kRegex | kContext},
    {"(Fatal glibc error: malloc|double free or corruption|malloc\\(\\): corrupted|free\\(\\): invalid|malloc_consolidate\\(\\): )", kRegex | kContext},
    {"([Rr]eceived message larger than max|database space exceeded|out of resource: shared memory)", kRegex | kContext},
    {"(: operation not supported|0x[cC]0000409|-1073740791|STATUS_STACK_BUFFER_OVERRUN|Fatal signal 4 \\(SIGILL\\)|blocked for more than [0-9]+ seconds|EDAC MC[0-9]+: [0-9]+ [CU]E |symbol lookup error|error while loading shared libraries|FailedScheduling|CPUThrottlingHigh|DXGI_ERROR_DEVICE_REMOVED|0x887a0005|stopped responding and has successfully recovered|too many clients already|Too many connections|flood-stage watermark|flood stage disk watermark|read-only-allow-delete)", kRegex | kContext},
    {"(capacity overflow|MAX_LAMBDA_SIZE_EXCEEDED|LambdaSizeExceededError|Unzipped size must be smaller than|too large to be loaded automatically|CPU time (hard )?limit reached)", kRegex | kContext},
    {"cannot serialize a bytes object larger than 4 ?GiB", kRegex | kContext},
};

constexpr size_t kMaxFacts = 4;

enum Marker : size_t {
  kTraceback, kPanic, kCheck, kDeadline, kCliError, kKillContainer, kOpenFiles, kLambdaExit,
  kCrash, kRustPanic, kCppThrow, kJavaException, kDiskFull, kTimeout, kLengthLimit, kHeapCorruption,
  kMessageSize, kStoreQuota, kLaunchResources, kSerializeLimit, kCapacityOverflow, kSizeLimit, kDeviceRemoved, kConnections, kCpuThrottling, kUnschedulable, kHungTask, kHardware, kLinker, kFailFast, kIllegalInstruction, kNotSupported, kMarkers
};

// Words that make a crash or an exception memory's after all: its own family
// reads it (a CPython MemoryError, bad_alloc, OutOfMemoryError), so the marker
// stays silent.
bool names_memory(std::string_view s) {
  for (std::string_view w : {"memory", "bad_alloc", "OutOfMemory", "OOM", "alloc", "/dev/shm", "shm"})
    if (text::icontains(s, w)) return true;
  return false;
}

class FailureMarkers final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (emitted_ >= kMaxFacts || guards::is_advice_line(s)) return;
    if (text::contains(s, "Traceback (most recent call last)")) return mark(line, kTraceback, "a Python exception", out);
    std::string_view t = text::trim_left(s);
    if (text::starts_with(t, "panic: ") || text::starts_with(t, "fatal error: "))
      return mark(line, kPanic, "a Go panic", out);
    if (text::contains(s, "Check failed")) return mark(line, kCheck, "a failed internal check (CHECK)", out);
    if (text::contains(s, "context deadline exceeded"))
      return mark(line, kDeadline, "a deadline that passed (context deadline exceeded): a timeout", out);
    if (text::starts_with(s, "Error: ") || (text::starts_with(s, "$ ") && text::contains(s, "Error: ")))
      return mark(line, kCliError, "a command's error", out);
    if (text::contains(s, "EMFILE") || text::icontains(s, "too many open files"))
      return mark(line, kOpenFiles, "the open-file limit (EMFILE, too many open files): not memory", out);
    if (text::contains(s, "Process exited before completing request"))
      return mark(line, kLambdaExit, "the function's process exited before completing the request (AWS Lambda)", out);
    if (text::contains(s, "Kill container"))
      return mark(line, kKillContainer, "the container runtime killing a container it was told to stop", out);
    // glibc finding its own structures damaged (a program's bug: a double
    // free, a write past a block) aborts with the allocator's name in the line.
    if (text::contains(s, "Fatal glibc error: malloc") || text::contains(s, "double free or corruption") ||
        text::contains(s, "malloc(): corrupted") || text::contains(s, "free(): invalid") || text::contains(s, "malloc_consolidate(): "))
      return mark(line, kHeapCorruption, "heap corruption found by glibc's allocator (a program's bug), not memory running out", out);
    // OpenAI Triton compiling a kernel whose blocks need more shared memory per
    // SM than the GPU has: "triton.runtime.errors.OutOfResources: out of
    // resource: shared memory, Required: 131072, Hardware limit: 101376" (a
    // launch configuration, before the memory word stops the markers).
    if (text::contains(s, "out of resource: shared memory"))
      return mark(line, kLaunchResources,
                  "a GPU kernel's blocks need more shared memory per multiprocessor than the GPU has (a launch limit, not "
                  "memory running out)",
                  out);
    // Rust's collections refusing a size past what they can address ("capacity
    // overflow", from alloc::raw_vec: the line names the allocator's source
    // file, before the memory word stops the markers): a size computed wrong.
    if (text::contains(s, "capacity overflow"))
      return mark(line, kCapacityOverflow,
                  "a size computed past what a collection can hold (Rust's capacity overflow): a bug, not memory running out", out);
    // A platform's size limit on what it deploys or loads: a serverless
    // bundle (Vercel's MAX_LAMBDA_SIZE_EXCEEDED, AWS Lambda's unzipped size),
    // a hosted API's model-size policy ("too large to be loaded automatically").
    if (text::contains(s, "MAX_LAMBDA_SIZE_EXCEEDED") || text::contains(s, "LambdaSizeExceededError") ||
        text::contains(s, "Unzipped size must be smaller than") || text::contains(s, "too large to be loaded automatically"))
      return mark(line, kSizeLimit, "a platform's size limit on a deployment package or a model (checked before anything ran), not memory", out);
    // gRPC's size cap on one message ("rpc error: code = ResourceExhausted desc
    // = grpc: received message larger than max (8388608 vs. 4194304)", Python's
    // client's "[StatusCode.RESOURCE_EXHAUSTED] Received message larger than
    // max"): read before the memory word stops the markers.
    if (text::icontains(s, "received message larger than max"))
      return mark(line, kMessageSize, "gRPC's cap on one message's size (received message larger than max), not memory", out);
    if (device_platform_and_crash_markers(line, s, out)) return;
    if (names_memory(s)) return;
    // The CUDA driver refusing an operation a virtualised or partitioned GPU
    // does not offer ("unable to create stream: operation not supported",
    // cudaErrorNotSupported under a vGPU or MIG profile): not memory.
    if (text::contains(s, ": operation not supported") &&
        (text::icontains(s, "cuda") || text::contains(s, "stream") || text::contains(s, "cuMem")))
      return mark(line, kNotSupported, "a GPU operation the driver or the virtualised GPU does not support (operation not supported), not memory", out);
    // pickle before protocol 4 ("OverflowError: cannot serialize a bytes
    // object larger than 4 GiB", a worker pool returning a large result): a
    // format's limit on one object.
    if (text::contains(s, "cannot serialize a bytes object larger than 4"))
      return mark(line, kSerializeLimit, "pickle's 4 GiB limit on one object (protocols before 4), not memory", out);
    // etcd's storage quota ("etcdserver: mvcc: database space exceeded"): a
    // resource word, not memory.
    if (text::contains(s, "database space exceeded"))
      return mark(line, kStoreQuota, "etcd's storage quota (mvcc: database space exceeded; compact and defragment), not memory", out);
    if (text::contains(s, ": segfault at ") && text::contains(s, " ip ") && text::contains(s, " error "))
      return mark(line, kCrash, "a crash (the kernel's record of a segmentation fault), not memory running out", out);
    if (text::contains(s, " trap divide error ip:"))
      return mark(line, kCrash, "a crash (the kernel's record of a division by zero, SIGFPE), not memory running out", out);
    if (text::contains(s, "Fatal Python error: ") || text::starts_with(t, "Bus error"))
      return mark(line, kCrash, "a crash (a fatal signal in the process), not memory running out", out);
    if (text::contains(s, "' panicked at")) return mark(line, kRustPanic, "a Rust panic", out);
    if (text::contains(s, "terminate called after throwing an instance of"))
      return mark(line, kCppThrow, "an uncaught C++ exception (not bad_alloc)", out);
    if (text::contains(s, "Exception in thread \""))
      return mark(line, kJavaException, "an uncaught Java exception (not OutOfMemoryError)", out);
    // (Also Elasticsearch's flood-stage watermark: every index made read-only for the disk.)
    if (text::contains(s, "o space left on device") || text::contains(s, "ENOSPC") || text::contains(s, "[Errno 28]") ||
        text::contains(s, "Disk quota exceeded") || text::contains(s, "flood-stage watermark") || text::contains(s, "flood stage disk watermark") ||
        text::contains(s, "read-only-allow-delete"))
      return mark(line, kDiskFull, "the disk is full (no space left on device): not memory", out);
    if (text::contains(s, "TimeoutError") || text::contains(s, "timed out after") || text::contains(s, "took longer than") ||
        text::contains(s, "DEADLINE_EXCEEDED") || text::contains(s, "CPU time hard limit reached") ||
        text::contains(s, "CPU time limit reached"))
      return mark(line, kTimeout, "a time limit (a timeout), not memory", out);
    if (text::contains(s, "RangeError: Invalid string length") || text::contains(s, "RangeError: Invalid array length") ||
        text::contains(s, "RangeError: Invalid typed array length"))
      return mark(line, kLengthLimit,
                  "V8's maximum length of one string or array (about 2^29 characters), not the heap running out", out);
  }

 private:
  // mark() that says it marked: the markers read before the memory word
  // stops them (a device reset, a platform's alert or scheduler, a crash the
  // runtime raised, the kernel's watchdog, a faulty module, the linker).
  bool marked(const Line& line, Marker m, const char* what, FactSink& out) {
    mark(line, m, what, out);
    return true;
  }

  bool device_platform_and_crash_markers(const Line& line, std::string_view s, FactSink& out) {
    // Windows took the GPU away (DirectX's DXGI_ERROR_DEVICE_REMOVED, 0x887a0005,
    // and the event log's TDR "Display driver ... stopped responding and has
    // successfully recovered"): a timeout or a driver reset, not memory.
    if (text::contains(s, "DXGI_ERROR_DEVICE_REMOVED") || text::contains(s, "0x887a0005") ||
        (text::contains(s, "stopped responding and has successfully recovered") && text::contains(s, "driver")))
      return marked(line, kDeviceRemoved,
                  "Windows removed the GPU (DXGI_ERROR_DEVICE_REMOVED: a driver timeout and reset, TDR), not memory running out", out);
    // kube-prometheus' alert on a container held at its CPU limit.
    if (text::contains(s, "CPUThrottlingHigh"))
      return marked(line, kCpuThrottling, "an alert on CPU throttling (the container held at its CPU limit), not memory", out);
    // Kubernetes' scheduler finding no node for a pod ("FailedScheduling ...
    // 0/3 nodes are available: 1 Insufficient nvidia.com/gpu, ..."): the pod
    // never started for want of a GPU, CPU or a matching node. "Insufficient
    // memory" is left to the reader of the whole paste: requests that fill the
    // nodes (a rollout's old and new pods together) are a memory story.
    if (text::contains(s, "FailedScheduling") && text::contains(s, "nodes are available") && !text::contains(s, "Insufficient memory"))
      return marked(line, kUnschedulable,
                  "the scheduler found no node for the pod (FailedScheduling): it never started, nothing ran out", out);
    // A server's connection limit ("FATAL:  sorry, too many clients already",
    // MySQL's "Too many connections").
    if (text::contains(s, "too many clients already") || text::contains(s, "Too many connections"))
      return marked(line, kConnections, "the server's connection limit (max_connections), not memory", out);
    // Windows' fail-fast of native code (0xC0000409, STATUS_STACK_BUFFER_OVERRUN,
    // -1073740791 signed): a crash the runtime raised on itself. Alone, with no
    // memory failure beside it (an abort after an OOM also ends in it), it is a crash.
    if (text::contains(s, "0xc0000409") || text::contains(s, "0xC0000409") || text::contains(s, "-1073740791") ||
        text::contains(s, "STATUS_STACK_BUFFER_OVERRUN"))
      return marked(line, kFailFast, "a fail-fast crash of native code (0xC0000409, STATUS_STACK_BUFFER_OVERRUN), not memory running out", out);
    // Android's tombstone: "Fatal signal 4 (SIGILL), code 1 (ILL_ILLOPC)": an
    // instruction the CPU lacks (a build for a newer CPU).
    if (text::contains(s, "Fatal signal 4 (SIGILL)"))
      return marked(line, kIllegalInstruction, "an instruction this CPU does not support (SIGILL: a build for another CPU), not memory", out);
    // The kernel's hung-task watchdog ("INFO: task python3:18327 blocked for
    // more than 120 seconds."): a task stuck in the kernel, on I/O or a lock.
    if (text::contains(s, "INFO: task ") && text::contains(s, " blocked for more than "))
      return marked(line, kHungTask, "a task hung in the kernel (blocked for more than its timeout: I/O or a lock), not memory running out", out);
    // The memory controller's error counters (EDAC's "3 CE error on
    // CPU#0Channel#1_DIMM#1", a machine check): a faulty module, not capacity.
    if ((text::contains(s, "EDAC MC") && (text::contains(s, " CE ") || text::contains(s, " UE "))) ||
        text::contains(s, "[Hardware Error]: Machine check"))
      return marked(line, kHardware, "hardware errors in the memory modules (EDAC / machine check: a faulty DIMM), not memory running out", out);
    // The dynamic linker: "symbol lookup error: ...: undefined symbol: ...",
    // "error while loading shared libraries: libcudart.so.12: cannot open".
    if (text::contains(s, "symbol lookup error") || text::contains(s, "error while loading shared libraries"))
      return marked(line, kLinker, "a library the program needs is missing or of another version (the dynamic linker failed), not memory", out);
    return false;
  }

  void mark(const Line& line, Marker m, const char* what, FactSink& out) {
    if (seen_[m]) return;
    seen_[m] = true;
    ++emitted_;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::generic);
    f.layer = Layer::not_memory;
    f.strength = 0.4f;
    f.detail = what;
    out.add(std::move(f));
  }

  std::array<bool, kMarkers> seen_{};
  size_t emitted_ = 0;
};

}  // namespace

// The entry is not Family::generic: the scanner keeps the generic entries off
// lines a family claimed, and a marker beside a family's pattern is still a
// marker. Its facts are, so that ShadowingSink drops them near a family's failure.
const RecognizerEntry kFailureMarkersEntry{"failure_markers", Family::runtime, kPatterns,
                                           [] { return std::unique_ptr<Recognizer>(new FailureMarkers); }};

}  // namespace aimem
