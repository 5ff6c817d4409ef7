// JVM memory failures (the kinds are listed in Oracle's "Understand the
// OutOfMemoryError Exception", docs.oracle.com/en/java/javase/21/troubleshoot/).
//
// Heap and metadata pools (jvm_heap_oom, detail = the kind after the colon):
//   Exception in thread "main" java.lang.OutOfMemoryError: Java heap space
//   java.lang.OutOfMemoryError: GC overhead limit exceeded | Metaspace | Compressed class space |
//     PermGen space | Requested array size exceeds VM limit | Direct buffer memory
//   java.lang.OutOfMemoryError: Cannot reserve 1048576 bytes of direct buffer memory (allocated: N, limit: M)
//   Terminating due to java.lang.OutOfMemoryError: Java heap space        (-XX:+ExitOnOutOfMemoryError)
//   ERR Resource exhaustion event: the JVM was unable to allocate memory from the heap.   (jvmkill, Cloud Foundry)
//   Shutting down JVM after 8 consecutive periods of measured GC thrashing. Memory is used/total/max = ...
//                                                                 (Apache Beam's MemoryMonitor, Dataflow workers)
//   The Daemon will expire immediately since the JVM garbage collector is thrashing.   (Gradle 8's daemon)
// The collector's own log, two full collections in a row (within kStuckGap
// lines) that each leave the heap at 97% of its capacity or more and free
// under 3% of it: the heap is exhausted and the JVM spends its time
// collecting (the state before "GC overhead limit exceeded", or a watchdog's
// kill of an unresponsive JVM), a heap failure of its own (strength 0.7):
//   [Full GC (Ergonomics) [PSYoungGen: ...] [ParOldGen: 2236412K->2236398K(2236416K)] 3328508K->3323931K(3354624K), [Metaspace: ...], 9.18 secs]
//   [Full GC (Allocation Failure)  3995647K->3995540K(3997696K), 12.3 secs]                 (JDK 8, CMS and serial)
//   [41.210s][info][gc] GC(57) Pause Full (Allocation Failure) 2047M->2046M(2048M) 912.3ms  (JDK 9+ unified logging)
// The whole heap's pair is the one with the largest capacity outside the
// Metaspace's brackets.
// Android ART, on the OutOfMemoryError line or the line after a bare one:
//   Failed to allocate a N byte allocation with F free bytes and XMB until OOM, target footprint T, growth limit G
// Native memory (jvm_native_oom: the JVM could not get memory from the OS),
// the lines of one hs_err report joined into one fact:
//   OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x.., 181207040, 0) failed; error='Cannot allocate memory' (errno=12)
//   # There is insufficient memory for the Java Runtime Environment to continue.
//   # Native memory allocation (mmap) failed to map 181207040 bytes for committing reserved memory.
//   # Native memory allocation (malloc) failed to allocate 32744 bytes for ChunkPool::allocate
//   java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached
//   java.lang.OutOfMemoryError: unable to create new native thread  /  Map failed
//   Error occurred during initialization of VM / Could not reserve enough space for 10066944KB object heap
//   JVMJ9VM015W Initialization error for library j9gc29(2): Failed to instantiate heap.  2G requested   (OpenJ9)
//       (the address space for the heap, at start: a virtual-memory cap or a 32-bit VM)
// hs_err and the JVM's stdout frame their text with "# "; that is not a comment.
//
// Flags that mention the error are configuration, never failures:
//   -XX:+HeapDumpOnOutOfMemoryError  -XX:OnOutOfMemoryError="kill -9 %p"  -XX:+ExitOnOutOfMemoryError
// Heap settings are context: -Xmx4g / -XX:MaxHeapSize=4g (heap_limit),
// -XX:MaxRAMPercentage=75 (ratio 0.75); -XX:MaxMetaspaceSize=256m and
// -XX:MaxPermSize=256m (runtime_setting, limit: the metadata pool's cap),
// -XX:MaxDirectMemorySize=10M (the direct-buffer pool's cap).
// The same flags as `java -XX:+PrintFlagsFinal -version` lists them, in bytes
// and percents (":=" where JDK 8 marks a value set on the command line):
//      size_t MaxHeapSize                              = 4294967296                                {product} {ergonomic}
//       uintx MaxHeapSize                              := 2147483648                          {product}
//      double MaxRAMPercentage                         = 25.000000                                 {product} {default}
#include <optional>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/gc_pairs.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // Spark's executor JVM exits 52 on an OutOfMemoryError (SparkExitCode.OOM):
    // the code where Spark's words are in the input.
    {"exit(ed with)? code:? 52\\b", kRegex | kCaseless | kContext},
    {"(ExecutorLostFailure|TaskSchedulerImpl|spark-kubernetes-executor|CoarseGrainedExecutorBackend)", kRegex | kContext},
    // One JVM loading new classes again and again: Flink jobs submitted to a
    // session cluster, a dev server's hot reloads, a servlet container's redeploys.
    {"(Received JobGraph submission|Received task |Application started \\(Dev\\)|Reloading Context with name|Undeploying context)",
     kRegex | kContext},
    {"OutOfMemoryError", kShared},  // other runtimes throw one too (Julia, Kotlin/Native); the generic reader reads those
    {"OutOfDirectMemoryError"},
    {"a fault occurred in a recent unsafe memory access operation", kCompanion},  // InternalError: SIGBUS on a mapped file, a look-alike
    {"Failed to allocate a ", kShared},
    {"insufficient memory for the Java Runtime", kCompanion},
    {"Native memory allocation"},
    {"Could not reserve enough space for ", kCompanion},
    {"Failed to instantiate heap", kCompanion},  // OpenJ9's JVMJ9VM015W at start-up
    {"os::commit_memory", kCompanion},
    {"-Xmx", kContext},
    {"MemoryStore started with capacity", kContext},  // Spark's heap, from its storage pool
    {"ES_HEAP_SIZE=", kContext},
    {"MAX_HEAP_SIZE=", kContext},
    {"MaxRAMPercentage", kContext},
    {"MaxMetaspaceSize", kContext},
    {"MaxPermSize", kContext},
    {"MaxHeapSize=", kContext},
    {"(MaxHeapSize|MaxDirectMemorySize|MaxMetaspaceSize) +:?= +[0-9]", kRegex | kContext},  // -XX:+PrintFlagsFinal
    {"Max. Heap Size (Estimated): ", kContext},  // java -XshowSettings:vm
    {"JVM heap space is exhausted", kCompanion},
    {"running out of JVM heap space", kCompanion},
    {"configured max heap space is '", kContext},  // Gradle 8's health monitor: "The currently configured max heap space is '512 MiB' ..."  // Gradle 8: "The Daemon will expire after the build after running out of JVM heap space."
    {"Resource exhaustion event: the JVM was unable to allocate memory from the heap"},
    {"consecutive periods of measured GC thrashing", kCompanion},  // Beam / Dataflow's MemoryMonitor shutting the JVM down
    {"Pause Full (G1 Humongous Allocation)", kContext},
    {"Full GC", kCompanion},     // a collector's log: back-to-back full collections that free nothing
    {"Pause Full", kCompanion},
    {"after running out of JVM memory", kCompanion},
    // Gradle 8's health monitor, for a heap collected without end: "The Daemon
    // will expire immediately since the JVM garbage collector is thrashing."
    {"since the JVM garbage collector is thrashing", kCompanion},
    // The error's message alone, as Maven and others print it: "[ERROR] GC overhead limit exceeded -> [Help 1]".
    {"GC overhead limit exceeded", kCompanion},
    {"Java heap space", kCompanion},
};

constexpr std::string_view kHeapKinds[] = {"Java heap space", "GC overhead limit exceeded", "Metaspace",
                                           "Compressed class space", "PermGen space", "Requested array size exceeds VM limit",
                                           "Direct buffer memory", "Cannot reserve ", "Failed to allocate a "};
// Kinds that are the OS refusing memory, not a Java pool.
constexpr std::string_view kNativeKinds[] = {"unable to create native thread", "unable to create new native thread",
                                             "Map failed", "Out of swap space"};

bool known_kind(std::string_view kind) {
  for (std::string_view k : kHeapKinds)
    if (text::starts_with(kind, k)) return true;
  for (std::string_view k : kNativeKinds)
    if (text::starts_with(kind, k)) return true;
  return false;
}

class Jvm final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    // Anything held back that this line cannot continue is complete.
    if (pending_ && line.number > pending_->where.line + 12) flush(out);
    if (spark_exit(line, out)) return;
    if (text::contains(s, "Received JobGraph submission") || text::contains(s, "Received task ") ||
        text::contains(s, "Application started (Dev)") || text::contains(s, "Reloading Context with name") ||
        text::contains(s, "Undeploying context")) {
      if (++reloads_ == 1) reload_line_ = line.number, reload_text_ = std::string(s.substr(0, 200)), reload_source_ = line.source;
      return;
    }
    if (auto cap = text::after(s, "MemoryStore started with capacity ")) return spark_heap(line, *cap, out);
    if (text::contains(s, "-Xmx") || text::contains(s, "MaxRAMPercentage") || text::contains(s, "MaxHeapSize=") ||
        text::contains(s, "MaxMetaspaceSize=") || text::contains(s, "MaxPermSize=") || text::contains(s, "MaxDirectMemorySize=") ||
        text::contains(s, "configured max heap space is '") || text::contains(s, "ES_HEAP_SIZE=") || text::contains(s, "MAX_HEAP_SIZE=") ||
        text::contains(s, "Max. Heap Size (Estimated): ") || text::contains(s, "MaxHeapSize ") ||
        text::contains(s, "MaxDirectMemorySize ") || text::contains(s, "MaxMetaspaceSize "))
      settings(line, out);
    if (size_t p = s.find("OutOfDirectMemoryError: "); p != std::string_view::npos) {
      netty_direct(line, s.substr(p + 24), out);
      return;
    }
    if (text::contains(s, "a fault occurred in a recent unsafe memory access operation")) {
      // java.lang.InternalError for a SIGBUS the JVM caught in a read through
      // a mapping (Unsafe, a MappedByteBuffer): the file under it was
      // truncated, or its disk failed or filled. The name says memory; the
      // memory was a file's.
      if (unsafe_sent_ || guards::is_advice_line(s)) return;
      unsafe_sent_ = true;
      out.add(look_alike(line, Family::jvm, 0.7f,
                         "a fault in a read through a memory-mapped file (the JVM's InternalError for SIGBUS: the file truncated or its "
                         "disk failing), not memory running out"));
      return;
    }
    if (text::contains(s, "Full GC") || text::contains(s, "Pause Full")) full_gc(line, out);
    if (text::contains(s, "Pause Full (G1 Humongous Allocation)")) {
      humongous_full(line);
      return;
    }
    if (size_t p = s.find("OutOfMemoryError"); p != std::string_view::npos) {
      oome(line, p, out);
      return;
    }
    if (size_t p = s.find("Failed to allocate a "); p != std::string_view::npos) {
      art(line, s.substr(p), out);
      return;
    }
    if (text::contains(s, "Resource exhaustion event: the JVM was unable to allocate memory from the heap")) {
      // jvmkill (Cloud Foundry's Java buildpack agent) kills the JVM at its
      // first heap exhaustion, before an OutOfMemoryError is thrown.
      heap_watcher(line, "jvmkill", "jvmkill: the JVM was unable to allocate memory from the heap", out);
      return;
    }
    if (text::contains(s, "consecutive periods of measured GC thrashing")) {
      // Apache Beam's Dataflow worker: its memory monitor ends the JVM after
      // the collector ran nearly all the time for several periods in a row.
      heap_watcher(line, "gc-thrashing", "Dataflow's memory monitor: the JVM spent nearly all its time in GC (GC thrashing)", out);
      return;
    }
    if (text::contains(s, "since the JVM garbage collector is thrashing")) {
      heap_watcher(line, "Gradle daemon", "Gradle daemon: JVM heap space nearly full (the garbage collector is thrashing)", out);
      return;
    }
    if (text::contains(s, "JVM heap space is exhausted") || text::contains(s, "after running out of JVM memory") ||
        text::contains(s, "after running out of JVM heap space")) {
      heap_watcher(line, "Gradle daemon", "Gradle daemon: JVM heap space is exhausted", out);
      return;
    }
    if (bare_heap_kind(line, out)) return;
    native(line, out);
  }

  // The heap's error message without its exception name, as Maven prints
  // the cause ("[ERROR] GC overhead limit exceeded -> [Help 1]", "[ERROR]
  // Java heap space -> [Help 1]") and build tools log it: the Java heap,
  // unless it is a mention, a setting or the text of a command line.
  bool bare_heap_kind(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    for (std::string_view kind : {"GC overhead limit exceeded", "Java heap space"}) {
      size_t p = s.find(kind);
      if (p == std::string_view::npos) continue;
      if (guards::is_mention(s, p, kind.size()) || guards::is_advice_line(s) || text::contains(s, "-XX:")) return true;
      // Only where the message is the line's error: after "ERROR", "Error:", "error:" or at its start.
      std::string_view before = text::trim(s.substr(0, p));
      const std::string tail = text::lower(before.substr(before.size() > 12 ? before.size() - 12 : 0));
      // A wrapper's cause line too ("ERROR: Caused by: GC overhead limit
      // exceeded"), and a server's error code or exception before it
      // ("...unexpected error [Neo.DatabaseError.General.UnknownError]: Java
      // heap space", "QueryExecutionException: Java heap space").
      bool led = before.empty() || text::ends_with(tail, "error]") || text::ends_with(tail, "error") || text::ends_with(tail, "error:") ||
                 text::ends_with(tail, "used by:") || text::ends_with(tail, "error]:") || text::ends_with(tail, "exception:");
      if (!led) return true;
      heap_watcher(line, std::string(kind), std::string(kind), out);
      return true;
    }
    return false;
  }

  bool unsafe_sent_ = false;
  bool array_cap_said_ = false;  // one look-alike per input for the array length cap
  bool spark_ = false, spark_exit_sent_ = false;

  // Spark's words ("ExecutorLostFailure", "TaskSchedulerImpl", the executor
  // container's name), then an exit code 52 (SparkExitCode.OOM: the
  // executor's uncaught OutOfMemoryError handler exits with it): the
  // executor JVM's heap (or another of its pools) ran out.
  bool spark_exit(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (text::contains(s, "ExecutorLostFailure") || text::contains(s, "TaskSchedulerImpl") ||
        text::contains(s, "spark-kubernetes-executor") || text::contains(s, "CoarseGrainedExecutorBackend"))
      spark_ = true;
    size_t at = text::ifind(s, "code");
    if (!spark_ || spark_exit_sent_ || at == std::string_view::npos || !text::icontains(s, "exit")) return false;
    std::string_view v = text::trim_left(s.substr(at + 4));
    if (!v.empty() && v[0] == ':') v = text::trim_left(v.substr(1));
    if (text::parse_u64(v) != 52u || (v.size() > 2 && platform::is_digit(v[2]))) return false;
    spark_exit_sent_ = true;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.layer = Layer::jvm_heap;
    f.strength = 0.7f;
    f.exit_code = 52;
    f.detail = "Spark executor exit code 52 (SparkExitCode.OOM: the JVM's OutOfMemoryError handler)";
    out.add(std::move(f));
    return true;
  }

  void finish(FactSink& out) override {
    flush(out);
    // Classes loaded again and again in one JVM (kReloads times or more): a
    // context fact the diagnosis reads beside a Metaspace exhaustion, where
    // each job's or reload's classes staying loaded is the class-loader leak.
    if (reloads_ >= kReloads) {
      Line at{reload_text_, reload_line_, {}, reload_source_};
      Fact f = make_fact(at, FactKind::runtime_setting, Family::jvm);
      f.detail = "classes loaded again and again (jobs submitted or the application reloaded in one JVM)";
      f.count = reloads_;
      out.add(std::move(f));
    }
  }

 private:
  std::optional<Fact> pending_;
  static constexpr uint64_t kReloads = 3;
  uint64_t reloads_ = 0, reload_line_ = 0;
  std::string reload_text_;
  const SourceContext* reload_source_ = nullptr;  // a bare OutOfMemoryError or a native report still collecting lines
  uint64_t last_heap_line_ = 0;
  std::string last_heap_kind_;

  void flush(FactSink& out) {
    if (pending_) out.add(std::move(*pending_));
    pending_.reset();
  }

  // A watcher that ends the JVM when its heap is spent, before the JVM
  // throws: Gradle's daemon ("Expiring Daemon because JVM heap space is
  // exhausted", "... after running out of JVM memory"), jvmkill's resource
  // exhaustion event. The heap ran out; one fact for the repeats.
  void heap_watcher(const Line& line, const std::string& key, std::string_view detail, FactSink& out) {
    if (guards::is_advice_line(line.text)) return;
    if (repeated_heap(line, key)) return;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.layer = Layer::jvm_heap;
    f.detail = std::string(detail);
    f.strength = 0.85f;
    out.add(std::move(f));
  }

  // A stack trace repeats the error ("Caused by: java.lang.OutOfMemoryError:
  // ...") within a few dozen lines; else this heap failure is the latest.
  bool repeated_heap(const Line& line, const std::string& kind) {
    // A shell command that searches for the error ("$ grep -A3 OutOfMemoryError
    // app.log") is no failure, and must not hide the output under it.
    if (guards::is_command_line(line.text)) return true;
    bool again = last_heap_line_ && line.number <= last_heap_line_ + 40 && kind == last_heap_kind_;
    last_heap_line_ = line.number;
    if (!again) last_heap_kind_ = kind;
    return again;
  }

  // The line with the frame removed, for the mention guard.
  static std::string_view unframed(std::string_view s, size_t& at) {
    size_t lead = s.find_first_not_of(" \t#");
    if (lead == std::string_view::npos || lead > at) return s;
    at -= lead;
    return s.substr(lead);
  }

  void oome(const Line& line, size_t p, FactSink& out) {
    std::string_view s = line.text;
    // Flag names: HeapDumpOnOutOfMemoryError, OnOutOfMemoryError, ExitOnOutOfMemoryError, CrashOnOutOfMemoryError.
    if (p >= 2 && s.substr(p - 2, 2) == "On") return;
    bool java = p >= 10 && s.substr(p - 10, 10) == "java.lang.";
    // Spark's own subclass (org.apache.spark.memory.SparkOutOfMemoryError:
    // "Unable to acquire 65536 bytes of memory, got 0"): its task memory
    // manager refused execution memory, a share of the executor's heap.
    const bool spark = p >= 5 && s.substr(p - 5, 5) == "Spark";
    java = java || spark;
    // Other runtimes' errors share the name (torch.cuda.OutOfMemoryError).
    if (!java && p > 0 && (s[p - 1] == '.' || platform::is_alnum(s[p - 1]))) return;
    std::string_view rest = s.substr(p + 16);
    // A class reference, not the error: "java.lang.OutOfMemoryError.<init>", "OutOfMemoryErrors".
    if (!rest.empty() && (rest[0] == '.' || platform::is_alnum(rest[0]))) return;
    size_t at = spark ? p - 5 : java ? p - 10 : p;
    std::string_view judged = unframed(s, at);
    if (guards::is_mention(judged, at, 26)) return;

    std::string_view kind;
    if (text::starts_with(rest, ":")) kind = text::trim(rest.substr(1));
    else if (!java && !text::starts_with(rest, "**")) return;  // a bare word in prose
    // Markdown decorations around a bug-tracker title: "**java.lang.OutOfMemoryError** in **Arrays.java:3161**".
    while (!kind.empty() && (kind.back() == '*' || kind.back() == '"' || kind.back() == '\'')) kind.remove_suffix(1);
    // Without the package the name alone is ambiguous: require a JVM kind.
    if (!java && !known_kind(kind)) return;

    for (std::string_view n : kNativeKinds) {
      if (text::starts_with(kind, n)) {
        Fact f = make_fact(line, FactKind::jvm_native_oom, Family::jvm);
        f.layer = Layer::host_ram;
        f.strength = 0.8f;
        f.detail = std::string(n);
        merge_native(std::move(f), out);
        return;
      }
    }
    if (text::starts_with(kind, "Failed to allocate a ")) {
      art(line, kind, out);
      return;
    }
    // One array past the JVM's own cap on an array's length (2^31 - 1
    // elements, a little less in HotSpot): "Requested array size exceeds VM
    // limit", and the JDK's "Required array size too large" (Files.readAllBytes
    // of a file over 2 GB, a ByteArrayOutputStream that would pass it). No
    // heap holds it whatever -Xmx is: a size limit, not memory running out.
    if (text::starts_with(kind, "Requested array size exceeds VM limit") || text::starts_with(kind, "Required array size too large")) {
      if (array_cap_said_) return;
      array_cap_said_ = true;
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::jvm);
      f.layer = Layer::not_memory;
      f.strength = 0.75f;
      f.detail = "one Java array past the JVM's limit on an array's length (" + std::string(text::take_until(kind, "\t").substr(0, 48)) +
                 "): a size limit no heap setting lifts, not memory running out";
      out.add(std::move(f));
      return;
    }
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.layer = Layer::jvm_heap;
    f.strength = 0.95f;
    if (auto r = text::after(kind, "Cannot reserve ")) {
      // Java 11+: "Cannot reserve N bytes of direct buffer memory (allocated: A, limit: L)"
      f.detail = "Direct buffer memory";
      f.requested = text::parse_u64(*r);
      if (auto a = text::after(kind, "allocated: ")) f.usage = text::parse_u64(*a);
      if (auto l = text::after(kind, "limit: ")) f.heap_limit = text::parse_u64(*l);
    } else if (spark) {
      f.detail = "Spark's execution memory (a share of the heap): " + std::string(text::take_until(kind, "\t").substr(0, 80));
    } else {
      f.detail = std::string(text::take_until(kind, "\t").substr(0, 80));
    }
    if (f.detail.empty()) {
      // The kind may follow on the next line (ART): hold it briefly.
      flush(out);
      f.detail = "OutOfMemoryError";
      pending_ = std::move(f);
      return;
    }
    if (repeated_heap(line, f.detail)) return;
    // G1's full collections for a humongous allocation left a fifth of the
    // heap or more free, and "Java heap space" still came: the free regions
    // were not contiguous enough for the humongous object (fragmentation).
    if (f.detail == "Java heap space" && humongous_line_ && line.number <= humongous_line_ + 20 && humongous_total_ > 0 &&
        humongous_after_ * 5 <= humongous_total_ * 4) {
      f.cause = Cause::fragmentation;
      f.usage = humongous_after_ * units::MiB;
      f.heap_limit = humongous_total_ * units::MiB;
      f.detail = "Java heap space, G1 humongous allocation with the heap not full (fragmented regions)";
    }
    out.add(std::move(f));
  }

  // Back-to-back full collections that free almost nothing (see the top).
  static constexpr uint64_t kStuckGap = 200;
  void full_gc(const Line& line, FactSink& out) {
    auto h = heap_pair(line.text);
    if (!h || h->capacity == 0) return;
    const bool stuck = h->after * 100 >= h->capacity * 97 && h->before >= h->after && (h->before - h->after) * 100 < h->before * 3;
    if (!stuck || (stuck_fulls_ && line.number > last_stuck_ + kStuckGap)) stuck_fulls_ = 0;
    if (!stuck) return;
    ++stuck_fulls_;
    last_stuck_ = line.number;
    if (stuck_fulls_ != 2 || thrash_sent_ || guards::is_command_line(line.text)) return;
    thrash_sent_ = true;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.layer = Layer::jvm_heap;
    f.strength = 0.7f;
    f.usage = h->after;
    f.heap_limit = h->capacity;
    f.detail = std::string(kGcThrashing) + ": back-to-back full collections free almost nothing (" + units::format_bytes(h->after) + " of a " +
               units::format_bytes(h->capacity) + " heap still live)";
    out.add(std::move(f));
  }
  uint64_t stuck_fulls_ = 0, last_stuck_ = 0;
  bool thrash_sent_ = false;

  // "GC(43) Pause Full (G1 Humongous Allocation) 701M->701M(1024M) 7.771ms": the heap after it and its size, in MiB.
  void humongous_full(const Line& line) {
    std::string_view s = line.text;
    size_t arrow = s.rfind("->");
    if (arrow == std::string_view::npos) return;
    std::string_view rest;
    auto after = text::parse_u64(s.substr(arrow + 2), &rest);
    if (!after || !text::starts_with(rest, "M(")) return;
    auto total = text::parse_u64(rest.substr(2));
    if (!total) return;
    humongous_line_ = line.number, humongous_after_ = *after, humongous_total_ = *total;
  }
  uint64_t humongous_line_ = 0, humongous_after_ = 0, humongous_total_ = 0;

  // Netty's own direct-memory cap (io.netty.maxDirectMemory, by default
  // -XX:MaxDirectMemorySize): "io.netty.util.internal.OutOfDirectMemoryError:
  // failed to allocate 16777216 byte(s) of direct memory (used: U, max: M)".
  void netty_direct(const Line& line, std::string_view rest, FactSink& out) {
    auto n = text::after(rest, "failed to allocate ");
    if (!n) return;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.layer = Layer::jvm_heap;
    f.strength = 0.9f;
    f.detail = "Direct memory (Netty)";
    f.requested = text::parse_u64(*n);
    if (auto u = text::after(rest, "used: ")) f.usage = text::parse_u64(*u);
    if (auto m = text::after(rest, "max: ")) f.heap_limit = text::parse_u64(*m);
    if (repeated_heap(line, f.detail)) return;
    flush(out);
    out.add(std::move(f));
  }

  // "Failed to allocate a N byte allocation with F free bytes and XMB until OOM, target footprint T, growth limit G"
  void art(const Line& line, std::string_view s, FactSink& out) {
    auto n = text::parse_u64(s.substr(21));
    if (!n || !text::contains(s, "byte allocation")) return;
    Fact f;
    if (pending_ && pending_->kind == FactKind::jvm_heap_oom) {
      f = std::move(*pending_);  // the bare OutOfMemoryError line above is the headline
      pending_.reset();
      f.extra.emplace_back(line.number, text::quote_line(line.text, 240));
    } else {
      flush(out);
      f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
      f.layer = Layer::jvm_heap;
      f.strength = 0.9f;
    }
    f.detail = "Java heap space (ART)";
    // "failed due to fragmentation (required continguous free 8192 bytes where largest contiguous free 0 bytes)":
    // ART says so itself.
    if (text::contains(s, "due to fragmentation")) {
      f.cause = Cause::fragmentation;
      f.detail = "Java heap space (ART), failed due to fragmentation";
    }
    f.requested = *n;
    if (auto v = text::after(s, "with ")) f.free = text::parse_u64(*v);
    if (auto v = text::after(s, "growth limit ")) f.heap_limit = text::parse_u64(*v);
    last_heap_line_ = line.number;
    last_heap_kind_ = f.detail;
    out.add(std::move(f));
  }

  void native(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    Fact f = make_fact(line, FactKind::jvm_native_oom, Family::jvm);
    f.layer = Layer::host_ram;
    f.strength = 0.8f;
    size_t at = 0;
    if (size_t p = s.find("insufficient memory for the Java Runtime"); p != std::string_view::npos) {
      f.detail = "insufficient memory for the JRE";
      at = p;
    } else if (size_t q = s.find("Native memory allocation"); q != std::string_view::npos) {
      // "(mmap) failed to map N bytes" / "(malloc) failed to allocate N bytes"
      std::string_view rest = s.substr(q);
      std::optional<std::string_view> n = text::after(rest, "failed to map ");
      if (!n) n = text::after(rest, "failed to allocate ");
      if (!n) return;
      f.requested = text::parse_u64(*n);
      f.detail = text::contains(rest, "(mmap)") ? "native mmap failed" : "native malloc failed";
      at = q;
    } else if (size_t v = s.find("Could not reserve enough space for "); v != std::string_view::npos) {
      // "Could not reserve enough space for 10066944KB object heap" (also
      // "... for code cache", "... for card marking array"): the VM could not
      // reserve the address space at start; a cap on the process's virtual
      // memory (ulimit -v, Grid Engine's h_vmem) or a 32-bit VM.
      std::string_view rest;
      auto kb = text::parse_u64(s.substr(v + 35), &rest);
      if (kb && text::starts_with(rest, "KB")) f.requested = *kb * units::KiB;
      f.detail = "the JVM could not reserve its heap's address space";
      f.strength = 0.7f;
      at = v;
    } else if (size_t j9 = s.find("Failed to instantiate heap"); j9 != std::string_view::npos) {
      // OpenJ9's "JVMJ9VM015W Initialization error for library j9gc29(2):
      // Failed to instantiate heap.  2G requested": the same reservation at start.
      if (auto req = text::after(s.substr(j9), "heap.")) {
        std::string_view w = text::trim_left(*req);
        w = w.substr(0, w.find(' '));
        f.requested = units::parse_log_size(w);
      }
      f.detail = "the JVM could not reserve its heap's address space";
      f.strength = 0.7f;
      at = j9;
    } else if (size_t r = s.find("os::commit_memory("); r != std::string_view::npos) {
      if (!text::contains(s, "failed")) return;
      // os::commit_memory(addr, size, exec) failed; error='...' (errno=12)
      auto args = text::take_until(s.substr(r + 18), ")");
      auto parts = text::split(args, ',');
      if (parts.size() >= 2) f.requested = text::parse_u64(text::trim(parts[1]));
      f.detail = "os::commit_memory failed";
      at = r;
    } else {
      return;
    }
    std::string_view judged = unframed(s, at);
    if (guards::is_mention(judged, at, 20)) return;
    merge_native(std::move(f), out);
  }

  // One hs_err report prints several of these lines: keep one fact, the first
  // line as headline, the size that failed from whichever line states it.
  void merge_native(Fact f, FactSink& out) {
    if (pending_ && pending_->kind == FactKind::jvm_native_oom && f.where.line <= pending_->where.line + 12) {
      if (!pending_->requested) pending_->requested = f.requested;
      if (pending_->extra.size() < 4) pending_->extra.emplace_back(f.where.line, f.text);
      if (text::starts_with(f.detail, "unable to create")) pending_->detail = f.detail;
      return;
    }
    flush(out);
    pending_ = std::move(f);
  }

  // The value of a -XX:+PrintFlagsFinal row for `name` ("  size_t MaxHeapSize   = 4294967296  {product} {ergonomic}"):
  // the name as a whole word, spaces, "=" or ":=", spaces, the value.
  static std::optional<std::string_view> flags_final_value(std::string_view s, std::string_view name) {
    size_t p = s.find(name);
    if (p == std::string_view::npos || p == 0 || s[p - 1] != ' ') return std::nullopt;
    std::string_view rest = s.substr(p + name.size());
    if (rest.empty() || rest[0] != ' ') return std::nullopt;
    rest = platform::skip(rest, " ");
    if (!rest.empty() && rest[0] == ':') rest.remove_prefix(1);
    if (rest.empty() || rest[0] != '=') return std::nullopt;
    rest = platform::skip(rest.substr(1), " ");
    if (rest.empty() || !platform::is_digit(rest[0])) return std::nullopt;
    return rest;
  }

  // Spark's "MemoryStore started with capacity 366.3 MiB": its unified
  // memory is spark.memory.fraction (0.6) of the heap less 300 MiB reserved,
  // and storage starts with all of it, so the heap is capacity / 0.6 + 300
  // MiB (366.3 MiB: a 1 GiB driver, Spark's default). The first such line
  // only (a local session's driver).
  void spark_heap(const Line& line, std::string_view cap, FactSink& out) {
    if (spark_heap_said_) return;
    auto mib = units::parse_log_size(cap);
    if (!mib || *mib == 0 || *mib > (uint64_t{1} << 44)) return;
    spark_heap_said_ = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::jvm);
    f.heap_limit = static_cast<uint64_t>(static_cast<double>(*mib) / 0.6) + 300 * units::MiB;
    f.detail = "Spark's heap, from MemoryStore's capacity";
    out.add(std::move(f));
  }
  bool spark_heap_said_ = false;

  void settings(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (auto v = flags_final_value(s, "MaxHeapSize")) {
      if (auto b = text::parse_u64(*v); b && *b > 0) {
        Fact f = make_fact(line, FactKind::runtime_setting, Family::jvm);
        f.heap_limit = *b;
        f.detail = "MaxHeapSize";
        out.add(std::move(f));
      }
    }
    if (auto v = flags_final_value(s, "MaxRAMPercentage")) {
      if (auto r = text::parse_double(*v); r && *r > 0 && *r <= 100) {
        Fact f = make_fact(line, FactKind::runtime_setting, Family::jvm);
        f.ratio = *r / 100.0;
        f.detail = "MaxRAMPercentage";
        out.add(std::move(f));
      }
    }
    for (std::string_view key : {"MaxDirectMemorySize", "MaxMetaspaceSize"}) {
      auto v = flags_final_value(s, key);
      auto b = v ? text::parse_u64(*v) : std::nullopt;
      // PrintFlagsFinal lists every flag: 0 is "not set" (the direct pool then
      // defaults to the heap's size) and Metaspace's unset cap is 2^64-1.
      if (!b || *b == 0 || *b >= (1ULL << 60)) continue;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::jvm);
      f.limit = *b;
      f.detail = std::string(key);
      out.add(std::move(f));
    }
    auto emit = [&](std::optional<uint64_t> heap, std::optional<double> ratio, std::string_view detail) {
      Fact f = make_fact(line, FactKind::runtime_setting, Family::jvm);
      f.heap_limit = heap;
      f.ratio = ratio;
      f.detail = std::string(detail);
      out.add(std::move(f));
    };
    if (size_t p = s.find("-Xmx"); p != std::string_view::npos && (p == 0 || !platform::is_alnum(s[p - 1]))) {
      if (auto v = platform::parse_binary_size(s.substr(p + 4)); v && *v > 0) emit(v, std::nullopt, "-Xmx");
    }
    if (auto v = text::after(s, "MaxHeapSize=")) {
      if (auto b = platform::parse_binary_size(*v); b && *b > 0) emit(b, std::nullopt, "MaxHeapSize");
    }
    // `java -XshowSettings:vm -version`: "Max. Heap Size (Estimated): 4.97G",
    // the ceiling the JVM chose from the memory it saw.
    if (auto v = text::after(s, "Max. Heap Size (Estimated): ")) {
      if (auto b = platform::parse_binary_size(*v); b && *b > 0) emit(b, std::nullopt, "-XshowSettings max heap");
    }
    // The heap as the launch scripts take it: Elasticsearch before 5
    // (ES_HEAP_SIZE=2g), Cassandra's cassandra-env.sh (MAX_HEAP_SIZE=4G).
    for (std::string_view key : {"ES_HEAP_SIZE=", "MAX_HEAP_SIZE="}) {
      size_t p = s.find(key);
      if (p == std::string_view::npos || (p > 0 && (platform::is_alnum(s[p - 1]) || s[p - 1] == '_'))) continue;
      std::string_view v = platform::skip(s.substr(p + key.size()), "\"'");
      if (auto b = platform::parse_binary_size(v); b && *b > 0) emit(b, std::nullopt, key.substr(0, key.size() - 1));
    }
    for (std::string_view key : {"MaxMetaspaceSize=", "MaxPermSize=", "MaxDirectMemorySize="}) {
      auto v = text::after(s, key);
      auto b = v ? platform::parse_binary_size(*v) : std::nullopt;
      if (!b || *b == 0) continue;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::jvm);
      f.limit = b;
      f.detail = std::string(key.substr(0, key.size() - 1));
      out.add(std::move(f));
    }
    if (auto v = text::after(s, "configured max heap space is '")) {
      // Gradle's daemon health monitor names the daemon's heap as configured
      // (its default 512 MiB when org.gradle.jvmargs is unset).
      if (auto b = units::parse_log_size(*v); b && *b > 0) emit(b, std::nullopt, "the Gradle daemon's max heap");
    }
    if (auto v = text::after(s, "MaxRAMPercentage=")) {
      if (auto r = text::parse_double(*v); r && *r > 0 && *r <= 100) emit(std::nullopt, *r / 100.0, "MaxRAMPercentage");
    }
  }
};

}  // namespace

const RecognizerEntry kJvmEntry{"jvm", Family::jvm, kPatterns, [] { return std::unique_ptr<Recognizer>(new Jvm); }};

}  // namespace aimem
