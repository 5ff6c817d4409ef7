// JVM heap and native memory failures (src/recognize/families/jvm.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(Jvm, HeapKindsAreTheDetail) {
  for (const char* kind : {"Java heap space", "GC overhead limit exceeded", "Metaspace", "Direct buffer memory"}) {
    std::string log = std::string("Exception in thread \"main\" java.lang.OutOfMemoryError: ") + kind + "\n\tat x.Y.z(Y.java:1)\n";
    auto f = of_kind(log, FactKind::jvm_heap_oom);
    ASSERT_EQ(f.size(), 1u) << kind;
    EXPECT_EQ(f[0].detail, kind);
    EXPECT_EQ(f[0].layer, Layer::jvm_heap);
    EXPECT_EQ(test::diagnose_text(log).layer, Layer::jvm_heap);
  }
}

TEST(Jvm, CausedByRepeatsAreOneFailure) {
  const char* log = R"(Exception in thread "main" java.lang.OutOfMemoryError: Java heap space
	at java.util.Arrays.copyOf(Arrays.java:3332)
Caused by: java.lang.OutOfMemoryError: Java heap space
)";
  EXPECT_EQ(of_kind(log, FactKind::jvm_heap_oom).size(), 1u);
}

TEST(Jvm, DirectBufferReservationGivesSizes) {
  auto f = of_kind("java.lang.OutOfMemoryError: Cannot reserve 1048576 bytes of direct buffer memory (allocated: 1073217536, limit: 1073741824)\n",
                   FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detail, "Direct buffer memory");
  EXPECT_EQ(f[0].requested, 1048576u);
  EXPECT_EQ(f[0].heap_limit, 1073741824u);
}

TEST(Jvm, AndroidArtAllocationJoinsTheBareError) {
  const char* log = R"(**java.lang.OutOfMemoryError** in **Arrays.java:3161**
Failed to allocate a 536870928 byte allocation with 25165824 free bytes and 248MB until OOM, target footprint 301069208, growth limit 536870912
)";
  auto f = of_kind(log, FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].requested, 536870928u);
  EXPECT_EQ(f[0].free, 25165824u);
  EXPECT_EQ(f[0].heap_limit, 536870912u);
  EXPECT_EQ(f[0].where.line, 1u);
  // The one-line form reads the same.
  auto g = of_kind("java.lang.OutOfMemoryError: Failed to allocate a 1024 byte allocation with 0 free bytes and 0B until OOM, growth limit 268435456\n",
                   FactKind::jvm_heap_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].heap_limit, 268435456u);
}

TEST(Jvm, HsErrNativeReportIsOneNativeFailureUnderTheLimit) {
  const char* log = R"(hyper run elasticsearch --memory=128
OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000000c5330000, 181207040, 0) failed; error='Cannot allocate memory' (errno=12)
#
# There is insufficient memory for the Java Runtime Environment to continue.
# Native memory allocation (mmap) failed to map 181207040 bytes for committing reserved memory.
)";
  auto f = of_kind(log, FactKind::jvm_native_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].requested, 181207040u);
  EXPECT_EQ(f[0].layer, Layer::host_ram);
  // The ENOMEM in the JVM's warning is not a second, generic failure.
  EXPECT_TRUE(of_kind(log, FactKind::host_alloc_failure).empty());
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // Without a limit it is the host.
  std::string no_limit = log;
  no_limit.erase(0, no_limit.find('\n') + 1);
  EXPECT_EQ(test::diagnose_text(no_limit).layer, Layer::host_ram);
}

TEST(Jvm, NativeThreadFailureIsNative) {
  auto f = of_kind("Exception in thread \"pool-1\" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached\n",
                   FactKind::jvm_native_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detail, "unable to create native thread");
}

TEST(Jvm, FlagsAndOtherRuntimesErrorsAreNotJvmFailures) {
  const char* log = R"(java -Xmx4g -XX:MaxRAMPercentage=75 -XX:+HeapDumpOnOutOfMemoryError -XX:OnOutOfMemoryError="kill -9 %p" -XX:+ExitOnOutOfMemoryError -jar app.jar
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB
OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB
)";
  EXPECT_TRUE(of_kind(log, FactKind::jvm_heap_oom).empty());
  EXPECT_TRUE(of_kind(log, FactKind::jvm_native_oom).empty());
  std::vector<Fact> s;
  for (auto& f : of_kind(log, FactKind::runtime_setting))
    if (f.family == Family::jvm) s.push_back(f);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].heap_limit, 4 * units::GiB);
  EXPECT_EQ(s[0].detail, "-Xmx");
  EXPECT_DOUBLE_EQ(*s[1].ratio, 0.75);
}

// `java -XX:+PrintFlagsFinal -version` rows, JDK 11+ ("=" and {origin}) and
// JDK 8 (":=" for a value set on the command line); our own values. A flag
// left unset (MaxDirectMemorySize 0, Metaspace's 2^64-1) is no cap; a heap
// that filled at the default quarter of a roomy container is that cap.
TEST(Jvm, PrintFlagsFinalRowsAreTheHeapSettingsTheyList) {
  const char* flags = R"($ java -XX:+PrintFlagsFinal -version | grep -E 'MaxHeapSize|MaxRAMPercentage|MaxDirectMemorySize|MaxMetaspaceSize'
   size_t MaxDirectMemorySize                      = 0                                         {product} {default}
   size_t MaxHeapSize                              = 2147483648                                {product} {ergonomic}
   size_t MaxMetaspaceSize                         = 18446744073709551615                      {product} {default}
   double MaxRAMPercentage                         = 25.000000                                 {product} {default}
    uintx MaxHeapSize                              := 805306368                           {product}
)";
  std::vector<Fact> s;
  for (auto& f : of_kind(flags, FactKind::runtime_setting))
    if (f.family == Family::jvm) s.push_back(f);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].heap_limit, 2 * units::GiB);
  EXPECT_EQ(s[0].detail, "MaxHeapSize");
  EXPECT_DOUBLE_EQ(*s[1].ratio, 0.25);
  EXPECT_EQ(s[2].heap_limit, 768 * units::MiB);
  std::string log = std::string(flags) +
                    "[2025-02-11T08:14:02.118+0000][gc] GC(812) Pause Full (G1 Compaction Pause) 2047M->2041M(2048M) 1811.402ms\n"
                    "Exception in thread \"worker-3\" java.lang.OutOfMemoryError: Java heap space\n"
                    "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n";
  auto d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// Modelled on netty/netty's PlatformDependent.incrementMemoryCounter message
// as a server log shows it; our own sizes.
TEST(Jvm, NettyDirectMemoryCapIsAJvmPoolWithItsFigures) {
  const char* log =
      "12:01:07.118 ERROR [nioEventLoopGroup-3-2] c.e.Gateway - inbound failure\n"
      "io.netty.handler.codec.DecoderException: io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 16777216 byte(s) "
      "of direct memory (used: 1056964608, max: 1073741824)\n"
      "\tat io.netty.handler.codec.ByteToMessageDecoder.channelRead(ByteToMessageDecoder.java:499)\n"
      "Caused by: io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 16777216 byte(s) of direct memory (used: "
      "1056964608, max: 1073741824)\n";
  auto f = of_kind(log, FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detail, "Direct memory (Netty)");
  EXPECT_EQ(f[0].requested, 16777216u);
  EXPECT_EQ(f[0].usage, 1056964608u);
  EXPECT_EQ(f[0].heap_limit, 1073741824u);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::jvm_heap);
}


// Gradle's daemon stopping itself when its heap is spent (modelled on an
// Iceberg build's compileScala under the default -Xmx512m; ours): the Java
// heap, once for the repeated lines.
TEST(Jvm, GradleDaemonExpiringForHeapIsTheJavaHeap) {
  const char* text =
      "> Task :core:compileScala\n"
      "Expiring Daemon because JVM heap space is exhausted\n"
      "Daemon will be stopped at the end of the build after running out of JVM memory\n"
      "Expiring Daemon because JVM heap space is exhausted\n"
      "Gradle build daemon has been stopped: JVM garbage collector thrashing and after running out of JVM memory\n";
  auto f = test::facts_of(text);
  size_t heap = 0;
  for (auto& x : f) heap += x.kind == FactKind::jvm_heap_oom;
  EXPECT_EQ(heap, 1u);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::jvm_heap);
}


// jvmkill (Cloud Foundry's Java buildpack agent) kills the JVM at its first
// heap exhaustion and prints its own event line (modelled on
// cloudfoundry/jvmkill's output through `cf logs`; values are ours).
TEST(Jvm, JvmkillsResourceExhaustionEventIsTheJavaHeap) {
  const char* text =
      "   2018-02-02T09:12:46.06-0500 [APP/PROC/WEB/0] ERR Resource exhaustion event: the JVM was unable to allocate memory from the heap.\n"
      "   2018-02-02T09:12:46.06-0500 [APP/PROC/WEB/0] ERR ResourceExhausted! (1/0)\n"
      "   2018-02-02T09:12:46.74-0500 [APP/PROC/WEB/0] OUT    Heap memory: init 65011712, used 267102560, committed 278396928, max 278396928\n";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(test::diagnose_text("ERR Resource exhaustion event: the JVM was unable to create a thread.\n").layer == Layer::jvm_heap, false);
}

// Fragmentation the JVM shows: ART says it outright; G1's full collections
// for a humongous allocation leave a good part of the heap free before
// "Java heap space" (modelled on an Android sync app's ART log and a G1 run
// with -Xlog:gc; figures ours). A full heap after the same collections is not.
TEST(Jvm, ArtsOwnWordsAndG1HumongousWithRoomAreFragmentation) {
  Diagnosis art = test::diagnose_text(
      "10-15 10:16:59.362 31400-31535/com.example.app E/AndroidRuntime: FATAL EXCEPTION: Worker\n"
      "    java.lang.OutOfMemoryError: Failed to allocate a 4184 byte allocation with 460056 free bytes and 449KB until OOM; "
      "failed due to fragmentation (required continguous free 8192 bytes where largest contiguous free 0 bytes)\n");
  EXPECT_EQ(art.layer, Layer::jvm_heap);
  EXPECT_EQ(art.cause, Cause::fragmentation);
  const std::string oome = "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n";
  Diagnosis g1 = test::diagnose_text(
      "[2.131s][info][gc             ] GC(42) Pause Full (G1 Humongous Allocation) 702M->701M(1024M) 8.914ms\n"
      "[2.140s][info][gc             ] GC(43) Pause Full (G1 Humongous Allocation) 701M->701M(1024M) 7.771ms\n" + oome);
  EXPECT_EQ(g1.layer, Layer::jvm_heap);
  EXPECT_EQ(g1.cause, Cause::fragmentation);
  Diagnosis full = test::diagnose_text(
      "[2.140s][info][gc             ] GC(43) Pause Full (G1 Humongous Allocation) 1019M->1018M(1024M) 7.771ms\n" + oome);
  EXPECT_NE(full.cause, Cause::fragmentation);
}

// Modelled on Gradle 8's daemon health monitor (kestra-io/kestra#6334): the
// daemon expires "after running out of JVM heap space" and names the heap it
// was configured with; our own tasks.
TEST(Jvm, Gradle8sDaemonOutOfHeapAtItsDefault512MiBIsTheCap) {
  const std::string log =
      "> Task :api:compileJava\n"
      "The Daemon will expire after the build after running out of JVM heap space.\n"
      "The project memory settings are likely not configured or are configured to an insufficient value.\n"
      "The currently configured max heap space is '512 MiB' and the configured max metaspace is '384 MiB'.\n"
      "Daemon will be stopped at the end of the build after running out of JVM heap space\n";
  auto f = test::facts_of_kind(log, FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);  // the two lines are one exhaustion
  auto heap = test::facts_of_kind(log, FactKind::runtime_setting);
  ASSERT_EQ(heap.size(), 1u);
  EXPECT_EQ(heap[0].heap_limit, uint64_t{512} << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// The same monitor ending the daemon at once for a collector that never
// stops (modelled on Stirling-Tools/Stirling-PDF#7151's CI build; our
// tasks): the heap, at its configured default.
TEST(Jvm, Gradle8sDaemonThrashingAtItsDefault512MiBIsTheCap) {
  const std::string log =
      "> Task :core:compileJava\n"
      "The Daemon will expire immediately since the JVM garbage collector is thrashing.\n"
      "The currently configured max heap space is '512 MiB' and the configured max metaspace is '384 MiB'.\n"
      "FAILURE: Build failed with an exception.\n"
      "Gradle build daemon has been stopped: since the JVM garbage collector is thrashing\n";
  ASSERT_EQ(test::facts_of_kind(log, FactKind::jvm_heap_oom).size(), 1u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// The heap as launch scripts take it (Elasticsearch before 5's ES_HEAP_SIZE,
// modelled on mesos/elasticsearch#175; our own ids): a heap the size of the
// container's limit leaves nothing for the rest of the JVM.
TEST(Jvm, EsHeapSizeAtTheContainersLimitIsTheLimit) {
  Diagnosis d = test::diagnose_text(
      "I0725 09:41:13.004127    19 docker.cpp:626] Starting container '7f6e' for executor 'es-executor' with ES_HEAP_SIZE=256m\n"
      "[143583.619862] Task in /docker/7f6e killed as a result of limit of /docker/7f6e\n"
      "[143583.619865] memory: usage 262144kB, limit 262144kB, failcnt 4102\n"
      "[143583.619940] Memory cgroup out of memory: Kill process 3933 (java) score 997 or sacrifice child\n"
      "[143583.619975] Killed process 3933 (java) total-vm:3125424kB, anon-rss:259876kB, file-rss:1048kB\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  auto s = test::facts_of_kind("export MAX_HEAP_SIZE=\"4G\"\n", FactKind::runtime_setting);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(*s[0].heap_limit, 4ull << 30);
}

// A pasted search for the error is not the error, and does not hide the
// output under it (the runtimes' repeat filters once took the command line for
// the first report). Modelled on dotnet/runtime#101183's paste; our own ids.
TEST(Jvm, AGrepForTheErrorDoesNotHideItsOutput) {
  Diagnosis dotnet = test::diagnose_text(
      "$ grep -m1 -A2 OutOfMemoryException app.log\n"
      "2024-04-14T03:09:47.512Z fail: Microsoft.AspNetCore.Server.Kestrel[13]\n"
      "      System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n");
  EXPECT_EQ(dotnet.layer, Layer::unknown);  // read (not "none"); alone, .NET's exception names no pool
  EXPECT_FALSE(dotnet.incidents.empty());
  Diagnosis jvm = test::diagnose_text(
      "$ grep -B1 'OutOfMemoryError: Java heap space' server.log\n"
      "2024-04-14 03:09:47,512 ERROR [worker-3] c.a.Ingest - batch failed\n"
      "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_EQ(jvm.layer, Layer::jvm_heap);
  EXPECT_EQ(test::diagnose_text("$ grep -c OutOfMemoryException app.log\n0\n").layer, Layer::none);
}

// The VM could not reserve its heap's address space at start (modelled on
// marbl/canu#1279: a Grid Engine job whose h_vmem is far below the -Xmx it
// starts; our own sizes): a native failure of the JVM, and beside the job's
// virtual-memory cap, that cap set below the heap it was asked to hold.
TEST(Jvm, AHeapTheVmCouldNotReserveIsNativeAndBelowAnHvmemCapIsThatCap) {
  const std::string start =
      "java -Xms6144m -Xmx6144m -jar /opt/tools/assembler.jar --threads 4\n"
      "Error occurred during initialization of VM\n"
      "Could not reserve enough space for 6291456KB object heap\n";
  auto f = test::facts_of_kind(start, FactKind::jvm_native_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].requested, 6291456ull * 1024);
  EXPECT_EQ(test::diagnose_text(start).layer, Layer::host_ram);
  Diagnosis capped = test::diagnose_text("qsub -pe smp 4 -l h_vmem=900m -cwd ./run.sh\n" + start);
  EXPECT_EQ(capped.layer, Layer::container_limit);
  EXPECT_EQ(capped.cause, Cause::limit_too_low);
  // Advice quoting the message is not a failure.
  EXPECT_EQ(test::diagnose_text("If you see \"Could not reserve enough space for object heap\", lower -Xmx.\n").layer, Layer::none);
}

// Maven prints the error's message without its class (modelled on
// jenkinsci/jenkins#2033; our own build): the Java heap. Prose and flags
// naming the words are not failures.
TEST(Jvm, MavensBareHeapMessageIsTheJavaHeap) {
  // A server's error code or exception before it too (modelled on a graph
  // database's Bolt error, 2023; our own reference id).
  for (const char* line : {"[ERROR] GC overhead limit exceeded -> [Help 1]\n", "[ERROR] Java heap space -> [Help 1]\n",
                           "Error: Java heap space\n",
                           "ERROR Client triggered an unexpected error [Neo.DatabaseError.General.UnknownError]: Java heap space, "
                           "reference 3b1f7e2c.\n",
                           "org.example.QueryExecutionException: Java heap space\n"}) {
    Diagnosis d = test::diagnose_text(std::string("[INFO] BUILD FAILURE\n[INFO] Final Memory: 1010M/1024M\n") + line);
    EXPECT_EQ(d.layer, Layer::jvm_heap) << line;
  }
  EXPECT_EQ(test::diagnose_text("JAVA_OPTS=\"-XX:-UseGCOverheadLimit\" # avoids GC overhead limit exceeded\n").layer, Layer::none);
  EXPECT_EQ(test::diagnose_text("The build uses 2 GB so that it never runs out of Java heap space.\n").layer, Layer::none);
}

// Cassandra's compaction reading a damaged mapped SSTable (modelled on a
// Cassandra 3.0 thread with this InternalError under LZ4 decompression; the
// frames' versions and times ours): the JVM's name for a SIGBUS in a mapped
// read. A look-alike, even beside the heap figures of start-up.
TEST(Jvm, AFaultInAnUnsafeMemoryAccessIsAMappedFilesNotMemory) {
  const std::string log =
      "INFO  [main] 2019-01-16 17:35:58,102 CassandraDaemon.java:487 - Heap size: 1052770304/1052770304\n"
      "ERROR [CompactionExecutor:1] 2019-01-16 17:36:18,853 CassandraDaemon.java:207 - Exception in thread "
      "Thread[CompactionExecutor:1,1,main]\n"
      "java.lang.InternalError: a fault occurred in a recent unsafe memory access operation in compiled Java code\n"
      "\tat net.jpountz.lz4.LZ4JNIFastDecompressor.decompress(LZ4JNIFastDecompressor.java:48) ~[lz4-1.3.0.jar:na]\n"
      "\tat org.apache.cassandra.io.compress.CompressedRandomAccessReader.reBufferMmap(CompressedRandomAccessReader.java:183)\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  // A heap OutOfMemoryError after it is still the failure.
  EXPECT_EQ(test::diagnose_text(log + "java.lang.OutOfMemoryError: Java heap space\n").layer, Layer::jvm_heap);
}

// Apache Beam's memory monitor ending a Dataflow worker's JVM for GC
// thrashing (mozilla/gcp-ingestion#739's shape; our figures): the Java heap.
TEST(Jvm, DataflowsGcThrashingShutdownIsTheJavaHeap) {
  const char* log =
      "2021-03-01 10:12:41.226 PST  Shutting down JVM after 8 consecutive periods of measured GC thrashing. Memory is used/total/max = "
      "7712/8192/8192 MB, GC last/max = 99.10/99.10 %, #pushbacks=4, gc thrashing=true. Heap dump not written.\n";
  auto f = of_kind(log, FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::jvm_heap);
}

// Spark's executor exiting 52 (SparkExitCode.OOM), as the driver relays its
// container's status on Kubernetes (modelled on a Spark-on-Kubernetes report
// of a sidecar's exit 0 masking the executor's; our pod and times): the
// executor JVM's heap. A 52 with no Spark word beside it is some other
// program's code, and a 520 is no 52.
TEST(Jvm, SparksExecutorExit52IsTheJvmsOutOfMemory) {
  const std::string head =
      "24/03/11 04:10:02 ERROR TaskSchedulerImpl: Lost executor 3 on 10.20.4.7: The executor with id 3 exited with exit code 0(success).\n"
      "\t container name: spark-kubernetes-executor\n"
      "\t container state: terminated\n";
  auto f = test::facts_of_kind(head + "\t exit code: 52\n", FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(test::diagnose_text(head + "\t exit code: 52\n").layer, Layer::jvm_heap);
  EXPECT_TRUE(test::facts_of_kind(head + "\t exit code: 520\n", FactKind::jvm_heap_oom).empty());
  EXPECT_TRUE(test::facts_of_kind("worker exited with exit code 52\n", FactKind::jvm_heap_oom).empty());
}

// The collector's own log: two full collections in a row that free almost
// nothing with the heap at its capacity are the heap exhausted, before any
// OutOfMemoryError (modelled on a Databricks driver's GC log before its
// "Driver is up but is not responsive, likely due to GC", and on JDK 9+
// unified logging; our own figures). One such collection, or ones that
// free a good part of the heap, are a busy heap, not a failure.
TEST(Jvm, FullCollectionsThatFreeNothingAreTheHeapExhausted) {
  const std::string parallel =
      "2024-04-02T09:53:40.118+0000: [Full GC (Ergonomics) [PSYoungGen: 1092096K->1087533K(1118208K)] [ParOldGen: "
      "2236412K->2236398K(2236416K)] 3328508K->3323931K(3354624K), [Metaspace: 201334K->201334K(1234944K)], 9.1834271 secs]\n"
      "2024-04-02T09:53:49.402+0000: [Full GC (Ergonomics) [PSYoungGen: 1092096K->1090112K(1118208K)] [ParOldGen: "
      "2236398K->2236409K(2236416K)] 3328494K->3326521K(3354624K), [Metaspace: 201334K->201334K(1234944K)], 9.4410338 secs]\n";
  auto f = of_kind(parallel, FactKind::jvm_heap_oom);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].where.line, 2u);
  EXPECT_EQ(*f[0].heap_limit, 3354624 * units::KiB);  // the whole heap's pair, not the Metaspace's
  EXPECT_EQ(*f[0].usage, 3326521 * units::KiB);
  EXPECT_EQ(test::diagnose_text(parallel).layer, Layer::jvm_heap);
  // One of them alone is not yet a failure.
  EXPECT_TRUE(of_kind(parallel.substr(0, parallel.find('\n') + 1), FactKind::jvm_heap_oom).empty());
  // Unified logging, in MiB.
  const std::string unified =
      "[41.210s][info][gc] GC(57) Pause Full (Allocation Failure) 2047M->2046M(2048M) 912.345ms\n"
      "[42.301s][info][gc] GC(58) Pause Full (Allocation Failure) 2047M->2047M(2048M) 930.120ms\n";
  EXPECT_EQ(of_kind(unified, FactKind::jvm_heap_oom).size(), 1u);
  // Collections that free a good part of the heap: a busy heap, healthy.
  const std::string healthy =
      "[41.210s][info][gc] GC(57) Pause Full (Allocation Failure) 2047M->1210M(2048M) 912.345ms\n"
      "[52.301s][info][gc] GC(58) Pause Full (Allocation Failure) 2047M->1190M(2048M) 930.120ms\n";
  EXPECT_TRUE(of_kind(healthy, FactKind::jvm_heap_oom).empty());
  EXPECT_EQ(test::diagnose_text(healthy).layer, Layer::none);
  // The JVM's own error after them names the pool: it decides.
  Diagnosis thrown = test::diagnose_text(unified + "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n");
  ASSERT_FALSE(thrown.incidents.empty());
  EXPECT_EQ(thrown.incidents[0].reasons.at(0), "the JVM threw OutOfMemoryError for its heap");
  Diagnosis collected = test::diagnose_text(unified);
  ASSERT_FALSE(collected.incidents.empty());
  EXPECT_NE(collected.incidents[0].reasons.at(0).find("full collections freed almost nothing"), std::string::npos);
}

// Spark's own OutOfMemoryError subclass: its task memory manager refused
// execution memory, a share of the executor's heap (modelled on a
// spark-rapids integration test's failure of 2024; our stage and task
// numbers). The heap's pool, not the host's RAM.
TEST(Jvm, SparksOwnOutOfMemoryErrorIsTheHeapsExecutionMemory) {
  Diagnosis d = test::diagnose_text(
      "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 412.0 failed 1 times, most recent "
      "failure: Lost task 0.0 in stage 412.0 (TID 9120) (10.0.3.7 executor driver): "
      "org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 65536 bytes of memory, got 0.\n"
      "\tat org.apache.spark.memory.MemoryConsumer.throwOom(MemoryConsumer.java:157)\n"
      "\tat org.apache.spark.memory.MemoryConsumer.allocateArray(MemoryConsumer.java:98)\n"
      "\tat org.apache.spark.util.collection.unsafe.sort.UnsafeInMemorySorter.<init>(UnsafeInMemorySorter.java:133)\n");
  EXPECT_EQ(d.layer, Layer::jvm_heap) << test::reason_text(d);
  // Another name ending in the same words is not Spark's.
  EXPECT_NE(test::diagnose_text("mylib.SparklingOutOfMemoryError: out of sparkles\n").layer, Layer::jvm_heap);
}

// Spark prints its storage pool's size at start-up; its heap follows from it
// (capacity / 0.6 + 300 MiB: 366.3 MiB is a 1 GiB driver, Spark's default).
// A local session's driver out of heap beside it is that small heap
// (modelled on PySpark sessions whose spark.driver.memory was set after the
// JVM had started, 2021-2022; our stage numbers).
TEST(Jvm, SparksMemoryStoreCapacityGivesTheHeap) {
  const std::string store = "22/06/02 11:17:02 INFO MemoryStore: MemoryStore started with capacity 366.3 MiB\n";
  auto s = test::facts_of_kind(store, FactKind::runtime_setting);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_TRUE(s[0].heap_limit);
  EXPECT_NEAR(double(*s[0].heap_limit) / double(units::MiB), 910.5, 1.0);
  Diagnosis d = test::diagnose_text(store + "22/06/02 11:21:40 ERROR Executor: Exception in task 3.0 in stage 7.0 (TID 41)\n"
                                            "java.lang.OutOfMemoryError: Java heap space\n");
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low) << test::reason_text(d);
}

// One array past the JVM's cap on an array's length is a size limit that no
// -Xmx lifts (modelled on JDK's Files.readAllBytes of an ONNX external-data
// file over 2 GB, and HotSpot's "Requested array size exceeds VM limit";
// our own paths): not memory running out.
TEST(Jvm, AnArrayPastTheJvmsLengthCapIsALookAlike) {
  for (const char* kind : {"Requested array size exceeds VM limit", "Required array size too large"}) {
    Diagnosis d = test::diagnose_text(std::string("$ java -Xmx16g -jar loader.jar /models/e5\nException in thread \"main\" java.lang.OutOfMemoryError: ") +
                                      kind + "\n\tat java.base/java.nio.file.Files.readAllBytes(Files.java:3212)\n");
    EXPECT_EQ(d.layer, Layer::not_memory) << kind << test::reason_text(d);
    EXPECT_NE(test::reason_text(d).find("array"), std::string::npos) << test::reason_text(d);
  }
  EXPECT_EQ(test::diagnose_text("java.lang.OutOfMemoryError: Java heap space\n").layer, Layer::jvm_heap);
}

}  // namespace
}  // namespace aimem
