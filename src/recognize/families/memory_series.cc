// Numeric series in application logs: the memory figures a service prints
// periodically (rss=..., heapUsed: ..., external=..., "memory usage: 1.2 GB",
// queueDepth=..., live threads=..., goroutines=...). One figure says little; a series that climbs without
// falling back, sample after sample, is what a leak or an accumulation looks
// like (every embedding kept, a queue that is never drained).
//
//   2024-05-02T10:00:00Z worker[311] stats rss=412MB heapUsed=210MB external=35MB queueDepth=12
//   {"level":"info","msg":"mem","rss":431234567,"heapUsed":221234567}
//   INFO memory usage: 1.21 GB (rss)           mem=1532M             RSS: 2.3 GiB
//   TS_METRICS - GPUMemoryUsed.Megabytes:6120    (the unit after a dot in a metric's name)
//   task 600 done, records 1200000, rss 2.48GB   (no separator: the line's shape makes the series, below)
//   superbook 6.412GB / 33.3GB 19.25%            (docker/podman stats --format "{{.MemUsage}}")
//
// Samples people take by hand read the same way:
//
//   $ ps -o etime,rss,cmd -p 20412          a header with an RSS column (KiB), then its rows:
//         09:58 2210440 ./scanner ...           the figure under RSS, row after row
//   Message queue length: 21904711          an Erlang crash dump's process holding a million messages or more:
//                                           accumulation ("growing: ...", as a leak warning is)
//   $ while sleep 900; do ps -o rss= -p 48211; done      no header: each bare number after it
//                                                        (or after the time the loop printed: "18:34:51 2210344")
//    3921408
//   $ ps -o pid,etime,rss,comm -u app | grep srv         the columns from the -o list when grep
//      5360  2-04:11:31  412880 srv                      took the header away
// Tables whose header names a memory column with its unit (also Windows'
// Get-Process "WS(GB)", "Commit(GB)"), then rows:
//   epoch  iteration  main/loss  pool_used_MB  elapsed_time        (a column: pool_used_MB, mem_mib, vram_gb)
//   1      2323       6.32981    1987.3        142.511
//   # CloudWatch Container Insights, MemoryUtilized (MiB), 1 h period   (a heading naming the metric and
//   2021-05-06T06:00Z   171                                              its unit: the last figure of each
//                                                                        row that starts with a time)
// and a size with its name after it, as test runners print it:
//   PASS src/a.test.ts (212 MB heap size)                              (Jest's --logHeapUsage)
// A Go dump whose goroutines sit parked for an hour and more, kGoParked of
// them or more ("goroutine 10493 [select, 597 minutes]:"): goroutines (and the
// connections or buffers each holds) piling up over hours, a weaker
// "growing" fact of its own.
// One process sampled by ps at times hours apart (its PID and ELAPSED/ETIME
// columns) is a series of its own even from two samples: half again as much
// resident memory, and kPidGrowthMin more, long after it started, is growth
// that no start-up explains.
//   gc 600 @3602.881s 1%: ..., 2870->2931->1512 MB, 3024 MB goal, 8 P     (Go GODEBUG=gctrace=1:
//                                                         the live heap after the collection)
//
// The recognizer keeps, per key (rss, heapused, external, queuedepth, ...; at
// most kKeys), the first and last value, the largest, and how many steps rose,
// and at the end of the input reports each series that grew: at least
// kMinSamples samples (every step rising when there are only three), the last
// at least kGrowth times the first and within
// 20% of the largest, most steps rising. A flat series or a sawtooth (a GC heap
// that falls back) reports nothing. The fact is context (memory_usage with
// detail "growing ..."), attached to the incident nearest its last sample.
// Lines that repeat one shape with a size in it are a series too, whatever
// the figure is called: the line with its digits masked is the key, the first
// size with a unit (MiB, GB, "611M") its value, so a CSV of
// `nvidia-smi --query-gpu=timestamp,memory.used` rows or a platform's
// "Process running mem=611M(119.5%)" line read the same as rss=... does. Lines
// about loading, downloading, allocating or progress ("2.1G/4.6G", "45%|")
// are not series: their sizes climb by design.
// Garbage collectors print what the heap held after each collection; that
// floor rising collection after collection is live data accumulating (a
// sawtooth of the heap before collection says nothing):
//   [GC (Allocation Failure)  524288K->301234K(2010112K), 0.0876 secs]        (JDK 8: gc_pairs.h finds the heap's pair)
//   [41.210s][info][gc] GC(57) Pause Young (Normal) (G1 Evacuation Pause) 1500M->1210M(2048M) 12.345ms
//   [gc] GC(168430) Garbage Collection (Allocation Rate) 6418M(52%)->1884M(15%)    (ZGC)
//   [gc][young][601233][20417] duration [1.2s], ..., memory [12.9gb]->[11.6gb]/[16gb], all_pools {...}   (Elasticsearch)
//   GCInspector.java:284 - ConcurrentMarkSweep GC in 208ms.  CMS Old Gen: 402115288 -> 398740112; ...  (Cassandra, bytes)
//   io.airlift.stats.JmxGcMonitor Major GC: application 3ms, stopped 1211ms: 14.88GB -> 8.94GB    (Trino, Presto)
//   I/app(16354): Background concurrent mark compact GC freed 612KB AllocSpace bytes, ..., 31% free, 214MB/310MB, ...  (Android's ART)
// A runtime's own leak warning (Netty's "LEAK: ... release() was not called", LeakSanitizer,
// Tomcat's "... This is very likely to create a memory leak" on undeploy) is a
// weaker "growing" fact of its own: the cause the program itself suspects.
// A JVM metric's pool and "Used" ("Status.JVM.Memory.Metaspace.Used=180.2 MB",
// and Flink's REST [{"id":"...Metaspace.Used","value":"614432768"}]) are a series.
// earlyoom's minute report ("mem avail: 8761 of 15923 MiB (55 %)") is the host's
// use as a series too: total less available.
// Heroku's runtime metrics, as log-runtime-metrics printed them and as it
// prints them now:
//   heroku[web.1]: source=web.1 measure=memory_total val=214.31 units=MB
//   heroku[web.1]: source=web.1 dyno=heroku.1234.abcd sample#memory_total=214.31MB sample#memory_rss=201.10MB
// A counter's row in a CSV that names the counter with its unit, then the
// value last (dotnet-counters' export: timestamp, provider, name, type, value):
//   2024-04-12 03:00:00 AM,System.Runtime,GC Heap Size (MB),Metric,2104
// Windows' `tasklist` rows of one process taken again and again (its "Mem
// Usage" column, KiB with thousands separators) are that process's series:
//   python.exe                   11876 Console                    1  9,633,908 K
// `free` rows ("Mem:  157  61  92 ...") and top's summaries ("KiB Mem : N total,
// N free, N used, ...") taken again and again are the host's
// used memory as a series, in the unit the command asked for (-b -k -m -g,
// --mega, --giga; KiB by default; -h prints units).
// A last sample below the first is a restart after the kill (the series is
// judged without it); table rows whose padding changes with their figures'
// widths (`kubectl top`) are one shape.
// A series of at least kSteadySamples samples that rose at every step but
// one is growth from kSteadyGrowth up (a climb toward a limit seldom shows
// the 1.3x a noisy series needs); one of kRisingSamples that rose at every
// step, from kRisingGrowth up (`free` every 30 s: 96, 108, 118, 119 Gi).
// A series that sat flat (within 15%) for kFlatSamples samples or more and
// then at least doubled is not a leak but one large piece of work arriving
// (a huge upload, one oversized request): memory_usage "jumped ...".
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <fmt/format.h>
#include <string>
#include <tuple>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/free_units.h"
#include "recognize/families/gc_pairs.h"
#include "recognize/families/platform_util.h"
#include "recognize/families/series_columns.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless | kContext;

constexpr Pattern kPatterns[] = {
    // ps: a header naming RSS, "-o rss=" without one, and the rows after them.
    {"(^|\\s)RSS(\\s|$)", kRegex | kContext},
    {"ps .*-[a-zA-Z]*o ?[a-z,=]*rs[sz]", kRegex | kContext},
    // The general table reader's legends and rows (series_columns.h): top's and jstat's headers,
    // a legend list naming a memory column, a command naming one metric, and rows of figures.
    {"(^|\\s)RES(\\s|$)", kRegex | kContext},
    {"top -b", kContext},  // top's rows with the header cut away ("| tail -1")
    {"\\bOC +OU\\b", kRegex | kContext},
    {"\\bE +O +M +CCS +YGC\\b", kRegex | kContext},  // jstat -gcutil (JDK 8+)
    {"(rss|heap|mem|used)[a-z_]*[|,][a-z_]+[|,]", kRegex | kCaseless | kContext},
    {"--metric-name", kContext},
    {"[a-z]/memory/[a-z_]", kRegex | kContext},  // a monitoring metric type over its rows: "run.googleapis.com/container/memory/utilizations"
    {"[\"']used[\"']: ?[0-9]", kRegex | kContext},  // a figure inside a named object: {'gpu': {'used': 4.48, ...}}
    // Prometheus exposition rows (a scrape pasted as text): "process_resident_memory_bytes 9.95e+07", "go_goroutines 8164".
    {"^[a-z_:]+(_bytes|goroutines)(\\{[^}\\n]*\\})? [0-9.eE+-]+\\s*$", kRegex | kContext},
    {"^[ \t]*[0-9][0-9:.TZ+-]*[ \t|,]+[0-9]", kRegex | kContext},
    {"^[ \t]*[0-9]+\\s+[a-z_][a-z0-9_.+-]*\\s+(rt|-?[0-9]+)\\s+-?[0-9]+\\s+[0-9.]+[kmgt]?\\s+[0-9.]+[kmgt]?\\s", kRegex | kContext},
    // Tables with a memory column named with its unit, a heading naming one, and rows that start with a time.
    {"(mem|rss|heap|pool|vram)[a-z_]*_(mb|mib|gb|gib|kb|bytes)\\b", kCi},
    {"(used_bytes|memory_allocated|memory_reserved|allocated_bytes)(\\(\\))?\\s*[=:]", kCi},
    // "used_mb=3914" as a sampling loop prints free's used column (the unit in the name).
    {"\\bused_(mb|mib|gb|gib|kb|kib)\\s*[=:]\\s*[0-9]", kCi},
    {"Memory\\.[A-Za-z]+\\.Used(\"|\\s*[=:])", kRegex | kContext},
    {"(allocated|reserved|resident) [0-9.]+ ?[KMGT]i?B", kRegex | kContext},  // "cuda allocated 3.12 GiB"
    // "gpu used 1,812 MiB": thousands grouped by commas. (Any "used <size>"
    // was tried: it sent so many lines of a large log here that its scan
    // took half again as long.)
    {"used [0-9]{1,3}(,[0-9]{3})+ ?[KMGT]i?B", kRegex | kContext},
    // A figure named "used" with its unit after an equals sign or a colon
    // ("vm.used=9.84 GiB", "ram used: 12.1 GB", "gpu.used=1812MiB"): the sign
    // is what keeps a service's prose ("used 3 of 8 workers") out.
    {"used *[=:] *[0-9][0-9.]* ?[KMGT]i?B", kRegex | kCaseless | kContext},
    // A Prometheus range query as promtool prints it: the series' labels, then "value @[time]" rows.
    {"(promtool query|query_range)", kRegex | kContext},
    {"\\} =>\\s*$", kRegex | kContext},
    {"^[ \t]*[0-9.eE+]+ @\\[[0-9.]+\\]\\s*$", kRegex | kContext},  // a JVM metric's pool: "Status.JVM.Memory.Metaspace.Used=", Flink's REST ids
    {"(mem|rss|ws|commit|private)[a-z_ ]*\\((mib|mb|gib|gb)\\)", kCi},
    {"^[ \t]*[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]?[0-9:.Z]*\\s+[0-9.]+\\s*$", kRegex | kContext},
    // "03:40  421Mi": a clock time, then a size with its unit (a metric sampled hourly, pasted as rows);
    // the day's or month's name may come first ("Fri 09:14:00 6384112 kB": date '+%a %T' in a loop).
    {"^[ \t]*((Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec),? +([0-9]{1,2},? +)?){0,2}[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?\\s+[0-9]+(\\.[0-9]+)? ?([KMGT]i|[KMGT]iB|[kKMGT]B|[MG])\\s*$", kRegex | kContext},
    // Used of total after a memory word ("Memory usage on this node: 4.1/7.5 GiB").
    {"mem[^\\n]{0,40}[:=] *[0-9.]+/[0-9.]+ ?[KMGT]i?B", kCi},
    // A command at a prompt: it ends the bare samples of the one before (table()).
    {"^[$%] ", kRegex | kContext},
    // Lines cut out of the paste between samples (see elision()).
    {"^[ \\t]*(\\.\\.\\.\\.?|\\[\\.\\.\\.\\]|\\(\\.\\.\\.\\)|\u2026|<snip>|\\[snip\\]|<\\.\\.\\.>)[ \\t]*$", kRegex | kContext},
    {"[0-9] ?(MB|GB|MiB|GiB) (heap size|heap used)", kRegex | kContext},
    {"[0-9] ?([KMGT]i?B) (allocated|reserved|used)\\b", kRegex | kContext},  // "1.84 GiB allocated" (size_then_key)
    {" minutes\\]:", kRegex | kContext},
    {"^[ \t]*([0-9][0-9:.\\-]*\\s+){0,4}[0-9]{4,}(\\s+\\S|\\s*$)", kRegex | kContext},
    // Go's gctrace: heap at start -> at end -> live, in MB.
    {"[0-9]+->[0-9]+->[0-9]+ MB", kRegex | kContext},
    // Rows of nvidia-smi's CSV (--query-gpu=...,memory.used --format=csv):
    // "<timestamp>, 9712 MiB". Other shapes reach the template series only
    // through the patterns above: a pattern for every size with a unit made
    // the scan of a large log 30% slower (bench/diagnose_vs_grep.sh), as one
    // line in ten of a service log carries a size.
    {", [0-9]+ MiB", kRegex | kContext},
    // The JVM's pools in KiB as jcmd and jstat print them ("Metaspace used 176302K, capacity ...",
    // a loop's "MC=118272.0K MU=114981.3K").
    {"(used|M[CU]|O[CU])[ =]+[0-9]{4,}(\\.[0-9]+)?K\\b", kRegex | kContext},
    // jstat's used columns printed by a loop without their unit ("MC=151296.0 MU=146811.4": KB, jstat's own).
    {"\\b[MO]U=[0-9]{4,}", kRegex | kContext},
    // Collectors' heap after collection: JVM "301234K->...(2010112K)" pairs, Elasticsearch's "]->[".
    {"[0-9][KMG]->[0-9]+[KMG]\\([0-9]+[KMG]\\)", kRegex | kContext},
    {"[0-9][KMG]\\([0-9]+%\\)->[0-9]+[KMG]\\([0-9]+%\\)", kRegex | kContext},  // ZGC: "6418M(52%)->1884M(15%)"
    {"memory \\[[0-9.]+[kmgt]?b\\]->\\[", kRegex | kContext},
    {"Old Gen: [0-9]+ -> [0-9]", kRegex | kContext},  // Cassandra's GCInspector, in bytes
    {" GC freed [^\\n]{0,120}% free, [0-9]+[KMG]B/[0-9]+[KMG]B", kRegex | kContext},  // Android's ART
    {"Major GC: application [0-9][^\\n]{0,60}[0-9][KMG]B -> [0-9]", kRegex | kContext},  // airlift's JmxGcMonitor (Trino, Presto)
    // `kubectl top` rows: "<pod> [<container>]  25m  226Mi" (CPU in millicores, then memory).
    // (A user's note after the row, "# 06:20", is the time it was taken.)
    {"[0-9]m +[0-9]+(Mi|Gi|Ki)(\\s*$|\\s+#)", kRegex | kContext},
    // `free` rows and the command that chose their unit.
    {"^ *Mem: +[0-9]", kRegex | kContext},
    {"[0-9] +Mem: +[0-9]+ +[0-9]", kRegex | kContext},  // after the time a loop printed: "... 2017   Mem:  3880472  1204480"
    {"^[KMG]iB Mem :", kRegex | kContext},  // top's summary
    {"Message queue length: [0-9]{7,}", kRegex | kContext},  // an Erlang crash dump's undrained mailbox
    {"^\\S+ +[0-9]+ +\\S+ +[0-9]+ +[0-9][0-9,.]* K\\s*$", kRegex | kContext},  // a tasklist row
    {"free -", kContext},
    {"(rss|ram_?used|used_?ram|heap_?(used|total|alloc|inuse|sys|idle)|used_?[a-z]{0,12}_?memory|external|array_?buffers|queue_?depth|queue_?size|backlog|resident|footprint|mem(ory)?(_| )?(usage|used)?|memory\\.(current|usage_in_bytes)|(current|driver)_allocated(_memory)?|threads|goroutines)([._]?([kmg]i?b|(kilo|mega|giga)?bytes))?\"?'? ?[=:] ?\"?'? ?[0-9]",
     kCi},
    // A line that names memory and ends in a size after a colon, whatever words lie between ("queue
    // worker memory after job 400 (App\\Jobs\\Sync): 92.38 MB"): the same line again is a template series.
    {"\\bmemory\\b[^\\n]{0,80}: +[0-9.]+ ?[KMG]i?B\\s*$", kCi | kContext},
    // A memory figure after a blank, with its unit ("rss 3.31GB", "container_rss 22.4G"): no
    // name=value to read, so the line's shape makes the series.
    // (also a metric named for memory: ClickHouse's "MemoryTracking\t6.19 GiB", "memory_used 12 GB")
    {"(rss|mem(ory)?[a-z_]*|resident)\\s+[0-9]+(\\.[0-9]+)? ?[KMGT]i?B?( |,|;|\\)|$)", kCi},
    {"numBytes(InGPU)?: [0-9]", kRegex | kContext},  // TensorFlow.js's tf.memory()
    // A program's own count of what it holds ("held 400 MB", "holding 1.2 GB"): the line's shape makes the series.
    {"\\b(held|holding) [0-9]+(\\.[0-9]+)? ?[KMG]i?B", kRegex | kContext},
    // A heap's size after its name, ending the line, as a program logs its own heap per step
    // ("cv heap 48.0 MB", "nn_ops heap in use: 37.9 MB", a WebAssembly module's heap): the line's
    // shape makes the series. (Not "heap used 1453 MB of 4096 MB, ...": a collector's line in
    // every tenth line of a busy log made the whole scan 1.6 times slower, bench/diagnose_vs_grep.sh.)
    {"heap[a-z_ ]{0,12}[:=]? +[0-9]+(\\.[0-9]+)? ?[KMG]i?B[ \\t]*$", kCi | kContext},
    // `docker stats` / `podman stats` with --format "{{.MemUsage}}": "6.412GB / 33.3GB".
    {"[0-9] ?[KMGT]i?B / [0-9.]+ ?[KMGT]i?B", kRegex | kContext},
    // A runtime's own leak warning (not Node's "Possible EventEmitter memory leak detected": a listener count),
    // Netty's "LEAK: ByteBuf.release() was not called", LeakSanitizer's "detected memory leaks".
    {"memory leak detected", kCaseless | kContext},
    {"LEAK: ", kContext},
    {"detected memory leaks", kContext},
    // A web container undeploying an application that left threads, ThreadLocals or a JDBC
    // driver behind (Tomcat's WebappClassLoaderBase): its classes stay loaded, a redeploy leak.
    {"likely to create a memory leak", kContext},
    {"To prevent a memory leak", kContext},
    // earlyoom's periodic report: "mem avail: 11208 of 15923 MiB (70 %)": used is total less available.
    {"mem avail: +[0-9]+ of [0-9]+ MiB", kRegex | kContext},
    {"mem avail: +[0-9]+ MiB \\( *[0-9]+ ?%\\)", kRegex | kContext},  // earlyoom up to 1.1: no total, a share
    // A name that gives its unit and names memory ("heapInuseBytes=1874923520"); a
    // "current:" figure with its unit ("Memory info of GPU ...: current: 0.15 GB, peak: 2.52 GB").
    {"(mem|rss|heap|alloc|resident)[a-z_]*(bytes|mib|mb|gib|gb)\\s*[=:]\\s*\"?[0-9]", kCi},
    {"\\bcurrent\\s*[=:]\\s*[0-9.]+ ?[KMGT]i?B", kCi},
    // "used=" or "usage=" and a size with its unit ("renderer heap: used=412.6MB total=431.0MB"):
    // sized_key reads it; a line of such names repeated is a series. (Any name before "=" made
    // the scan of a large log 7% slower: "pid=", "rank=" are everywhere.)
    {"(used|usage)=[0-9]+(\\.[0-9]+)?[KMGT]i?B\\b", kRegex | kContext},
    {"\\[(KiB|MiB|GiB|MB|GB)\\] ?[=:] ?[0-9]", kRegex | kContext},  // nvidia-smi's "memory.used [MiB]: 24518"
    // Runtimes' own reports (runtime_report): tracemalloc's example, the JVM's MemoryUsage, dotnet-counters.
    {"memory usage is [0-9.]+ ?[KMGT]i?B", kCi},
    {"\\) used = [0-9]+\\(", kRegex | kContext},
    {"(GC Heap Size|Working Set) \\(MB\\) +[0-9]", kRegex | kContext},
    // A name with its unit in parentheses ("MU(KB)=118204", jstat's column printed by a loop).
    {"[A-Za-z_] ?\\((KB|MB|GB|KiB|MiB|GiB|kB|bytes)\\) ?[=:] ?[0-9]", kRegex | kContext},
    // A name that names memory, then a figure with its unit ("heap_inuse=1.38GB", "mem_alloc: 612MB").
    // A call printed with its result too (Julia's "Base.gc_live_bytes() = 1.12 GB", "Sys.maxrss() = 1.61 GB").
    {"(heap|mem|rss|resident|alloc|inuse|live)[a-z_.]*(\\(\\))?\\s*[=:]\\s*[0-9.]+ ?[KMGT]i?B\\b", kCi},
    // Heroku's runtime metrics; a counter CSV row with the counter's unit in its name.
    {"(measure=|sample#)memory_(total|rss)", kRegex | kContext},
    {",[A-Za-z][A-Za-z .-]* \\((MB|GB|KB|MiB|GiB|KiB|bytes|B)\\),[A-Za-z]*,[0-9.]+\\s*$", kRegex | kContext},
    {"Usage of job (MB)", kContext},     // HTCondor's job log (condor_job_usage reads the line's shape)
    {"SetSize of job (KB)", kContext},
};

constexpr size_t kKeys = 8;
constexpr uint64_t kMinSamples = 3;
constexpr double kGrowth = 1.3;
constexpr double kMaxDrop = 0.25;
constexpr uint64_t kFlatSamples = 3;
constexpr uint64_t kSteadySamples = 5;
constexpr double kSteadyGrowth = 1.15;
constexpr uint64_t kRisingSamples = 4;
constexpr uint64_t kInterleavedSamples = 6;
constexpr double kRisingGrowth = 1.2;
constexpr size_t kKept = 64;  // samples kept per series for the flat-then-jump test
constexpr size_t kTemplates = 16;  // line shapes followed at once (see template_series)
constexpr size_t kTemplateChars = 96;

struct Series {
  std::string key;
  bool bytes = false;
  double first = 0, last = 0, max = 0;
  double worst_drop = 0;  // the largest fall between two samples, as a share of the first of them
  uint64_t samples = 0, rises = 0, last_line = 0, first_line = 0;
  uint64_t highs = 0;  // samples above every one before them (the first counts)
  std::string last_text;
  std::vector<double> kept;  // the first kKept samples
  // The first sample's line shape, and whether a later sample's line has it
  // too: a first line of a shape never seen again is a header that names the
  // same figure ("Memory: 4.00 GB", a worker's budget) before the periodic
  // lines that report its use.
  uint64_t first_shape = 0;
  bool first_recurs = false;
  // The kept sample that came right after an elided stretch ("...", "[...]"
  // where the paste cut lines out), if any: what happened between is unknown.
  size_t elided_at = SIZE_MAX;
};

// Recomputes a series' figures from its kept samples.
void recount(Series& y) {
  y.samples = y.kept.size();
  y.first = y.kept.front();
  y.last = y.kept.back();
  y.max = 0, y.rises = 0, y.worst_drop = 0;
  for (size_t i = 0; i < y.kept.size(); ++i) {
    y.max = std::max(y.max, y.kept[i]);
    if (i == 0) continue;
    if (y.kept[i] > y.kept[i - 1]) ++y.rises;
    if (y.kept[i - 1] > 0 && y.kept[i] < y.kept[i - 1]) y.worst_drop = std::max(y.worst_drop, (y.kept[i - 1] - y.kept[i]) / y.kept[i - 1]);
  }
}

// The series without its last sample, when that one fell below the first: a
// process restarted after its kill, its memory counted again from zero.
std::optional<Series> without_restart(const Series& x) {
  if (x.kept.size() != x.samples || x.samples < kMinSamples + 1 || x.last >= x.first) return std::nullopt;
  Series y = x;
  y.kept.pop_back();
  recount(y);
  return y;
}

// The series without its first sample, when that sample came from a line of
// another shape than all the rest and the kept samples are all of them.
std::optional<Series> without_header(const Series& x) {
  if (x.first_recurs || x.kept.size() != x.samples || x.samples < kMinSamples + 1) return std::nullopt;
  Series y = x;
  y.kept.erase(y.kept.begin());
  recount(y);
  return y;
}

// How many samples from the start stay within 15% of the first, when the
// series then at least doubles past them by its end; 0 otherwise.
uint64_t flat_then_jump(const Series& x) {
  if (x.kept.size() < kFlatSamples + 1 || x.kept.size() != x.samples) return 0;
  double lo = x.kept[0], hi = x.kept[0];
  size_t k = 1;
  while (k < x.kept.size() && x.kept[k] <= 1.15 * lo && x.kept[k] >= lo / 1.15) {
    hi = std::max(hi, x.kept[k]);
    ++k;
  }
  if (k < kFlatSamples || k == x.kept.size()) return 0;
  // Lines cut out of the paste between the flat run and the next sample hide
  // how it got there: a climb, not a jump, as far as the paste shows.
  if (x.elided_at == k) return 0;
  // The jump is one step: the first sample past the flat run is already half
  // again above it. A climb that leaves the flat run a little at a time
  // (1.4, 1.4, 1.5, 1.5 GB, then 1.7, 1.8, ... 7.9) is growth, not one piece
  // of work arriving.
  if (x.kept[k] < 1.5 * hi) return 0;
  // Nor is a step that the series then keeps climbing from, samples on end,
  // to twice it and more (RSS 5.1 GB flat, then 38, 92, 148, 202, 236 GB):
  // the growth only began there.
  if (x.kept.size() - k >= 3 && x.last >= 2.0 * x.kept[k]) return 0;
  return x.last >= 2.0 * hi ? k : 0;
}

// A series in bytes that sat level: kLevelSamples samples or more, all of
// them kept, none below kLevelShare of the largest. Alone it says nothing;
// beside a limit the failure names (diagnose/classify.cc) it is the
// workload's steady need meeting that limit.
constexpr uint64_t kLevelSamples = 4;
constexpr uint64_t kClimbingSamples = 4;  // samples of a series still climbing at the end (see finish)
constexpr double kLevelShare = 0.9;

bool sat_level(const Series& x) {
  if (!x.bytes || x.samples < kLevelSamples || x.kept.size() != x.samples || x.max <= 0) return false;
  if (text::icontains(x.last_text, "max") || text::icontains(x.last_text, "peak") || text::icontains(x.last_text, "limit")) return false;
  return *std::min_element(x.kept.begin(), x.kept.end()) >= kLevelShare * x.max;
}

// A line that stands for lines cut out of the paste: "...", "[...]", "…",
// "<snip>", "[snip]".
bool elision(std::string_view s) {
  s = text::trim(s);
  return s == "..." || s == "[...]" || s == "(...)" || s == "\u2026" || s == "<snip>" || s == "[snip]" || s == "<...>" || s == "....";
}

// "4.1/7.5 GiB": a figure, a slash, a figure and a size unit that both
// share; the first figure in bytes. Nothing else is.
std::optional<double> used_of_total(std::string_view v) {
  v = text::trim_left(v);
  std::string_view rest;
  auto used = text::parse_double(v, &rest);
  if (!used || !text::starts_with(rest, "/") || rest.size() < 2 || rest[1] < '0' || rest[1] > '9') return std::nullopt;
  std::string_view unit_rest;
  auto total = units::parse_log_size(rest.substr(1), &unit_rest);
  auto whole = text::parse_double(rest.substr(1));
  if (!total || !whole || *whole < 1e-6 || *used < 0 || *used > *whole) return std::nullopt;
  const double bytes = *used * (static_cast<double>(*total) / *whole);
  if (!(bytes >= 0 && bytes < 1.8e19)) return std::nullopt;  // NaN, infinite or past 64 bits: a garbled figure
  return bytes;
}

// A figure in bytes as a fact holds it: one past what 64 bits hold (a
// garbled or absurd sample) is clamped, not converted out of range; none
// below 0.
uint64_t clamped_bytes(double v) { return v <= 0 ? uint64_t{0} : v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v); }

bool key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ' '; }

// The canonical key: lower case, without '_' and blanks ("heap_used" = "heapUsed").
std::string canonical(std::string_view k) {
  std::string out;
  for (char c : k) {
    if (c == '_' || c == ' ') continue;
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  if (out == "mem" || out == "processmemory" || out == "memoryusage" || out == "memoryused" || out == "memorytotal" || out == "memusage" || out == "memused")
    out = "memory";
  return out;
}

// Keys whose bare figures are bytes by the API that names them: Go's
// runtime.MemStats (HeapAlloc, HeapInuse: live objects; HeapSys, HeapIdle:
// what the runtime holds from the system), and a "used ... memory" counter
// (Redis INFO's used_memory, Netty's usedDirectMemory / usedHeapMemory).
constexpr std::string_view kGoMemStats[] = {"heapalloc", "heapinuse", "heapsys", "heapidle"};

bool bytes_key(std::string_view k) {
  for (std::string_view g : kGoMemStats)
    if (k == g) return true;
  if (k == "numbytesingpu" || k == "numbytes") return true;  // tf.memory()'s figures are bytes
  return k.size() <= 24 && k.starts_with("used") && k.ends_with("memory");
}

bool known_key(std::string_view k) {
  // Threads and goroutines too: each holds a stack, and a count that only
  // climbs is a leak of them ("unable to create native thread").
  static constexpr std::string_view kKnown[] = {"rss",       "heapused", "heaptotal", "external", "arraybuffers", "queuedepth",
                                                "queuesize", "backlog",  "resident",  "memory",   "threads",      "goroutines",
                                                // macOS footprint(1)'s per-process "Footprint: 3120 MB"
                                                "footprint",
                                                // a training loop's own print of the host's use ("ram_used=26.4G")
                                                "ramused", "usedram",
                                                // GPU pools as frameworks log them: CuPy's mempool used_bytes,
                                                // torch.cuda.memory_allocated() / memory_reserved() printed per step.
                                                "usedbytes", "memoryallocated", "memoryreserved", "allocatedbytes",
                                                // MPS's current_allocated_memory() / driver_allocated_memory() as a callback logs them.
                                                "currentallocated", "driverallocated", "currentallocatedmemory", "driverallocatedmemory",
                                                // TensorFlow.js's tf.memory() as apps log it per frame or step
                                                // ({numBytesInGPU: 583008256, numTensors: 1742, ...}): tensors never disposed.
                                                "numbytesingpu", "numtensors",
                                                // Go's runtime.MemStats.Alloc as the common printMemUsage prints it
                                                // ("Alloc = 1126 MiB\tTotalAlloc = ...": TotalAlloc only climbs, and is not read).
                                                "alloc"};
  for (auto w : kKnown)
    if (k == w) return true;
  return bytes_key(k);
}

// Units a template series accepts: no bare "k", "K", "B" or "T" ("10k
// steps", "3 B params", "2T tokens" are counts).
bool series_unit(std::string_view u) {
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB", "kB", "KB", "MB", "GB", "TB", "Ki", "Mi", "Gi", "M", "G"};
  for (auto k : kUnits)
    if (u == k) return true;
  return false;
}

double bytes_per(std::string_view unit);

// Bytes per unit when `before` ends in a bracketed unit and a separator
// ("memory.used [MiB]: ", "[GB] = "); 0 otherwise.
double bracketed_unit(std::string_view before) {
  while (!before.empty() && (before.back() == ' ' || before.back() == ':' || before.back() == '=')) before.remove_suffix(1);
  if (before.size() < 3 || before.back() != ']') return 0;
  size_t open = before.rfind('[');
  if (open == std::string_view::npos || before.size() - open > 6) return 0;
  std::string_view unit = before.substr(open + 1, before.size() - open - 2);
  return series_unit(unit) && unit.size() >= 2 ? bytes_per(unit) : 0;
}

// The first size with a unit in the line that starts a number of its own
// (not a digit inside a word or a version), with the rest after it.
std::optional<double> first_size(std::string_view s, std::string_view* after) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') continue;
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '.' || s[i - 1] == '_')) continue;
    std::string_view rest;
    auto v = units::parse_log_size(s.substr(i), &rest);
    size_t num_end = i;
    while (num_end < s.size() && ((s[num_end] >= '0' && s[num_end] <= '9') || s[num_end] == '.')) ++num_end;
    // The unit in brackets before the figure, as nvidia-smi's CSV header
    // names its columns ("memory.used [MiB]: 24518 / 81559").
    if (const double per = bracketed_unit(s.substr(0, i)); per > 0 && (!v || num_end == s.size() - rest.size())) {
      if (auto n = text::parse_double(s.substr(i, num_end - i)); n && *n >= 0 && *n < 1e15) {
        *after = s.substr(num_end);
        return *n * per;
      }
    }
    if (v) {
      std::string_view unit = s.substr(num_end, s.size() - num_end - rest.size());
      if (!unit.empty() && unit[0] == ' ') unit.remove_prefix(1);
      // A bare "K" is KiB in the JVM's own figures ("used 176302K", jstat's
      // "MU=114981.3K"), but a thousand in a count ("12K requests"): taken
      // only after four digits or more.
      const bool kib = unit == "K" && num_end - i >= 4;
      if (series_unit(unit) || kib) {
        *after = rest;
        return static_cast<double>(*v);
      }
    }
    while (i + 1 < s.size() && ((s[i + 1] >= '0' && s[i + 1] <= '9') || s[i + 1] == '.')) ++i;
  }
  return std::nullopt;
}

// Whether a line's sizes climb by design (loading, downloading, a request's
// size, a progress bar) rather than as a service's usage.
bool climbs_by_design(std::string_view s, std::string_view after_size) {
  static constexpr std::string_view kWords[] = {"load", "download", "alloc", "fetch", "upload", "copy", "writing", "saving",
                                                "%|", "it/s", "eta ", "total capacity", "tried to", "requested", "shard"};
  for (auto w : kWords) {
    size_t at = text::ifind(s, w);
    if (at == std::string_view::npos) continue;
    // Not the word inside another: "offload" moves memory out, "workload" and
    // "payload" name what is served, "DataLoader" and "load_world" are a
    // program's names (a loader's workers and a simulator's reset grow no
    // less for them): a load is the word itself ("load", "loads", "loaded",
    // "loading"). "sharding manager" is no checkpoint's shards.
    if (w == "load") {
      bool a_load = false;
      for (; at != std::string_view::npos && !a_load; at = text::ifind(s, w, at + 1)) {
        size_t end = at + 4;
        while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
        const std::string_view word = s.substr(at, end - at);
        const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_');
        a_load = starts && (text::iequals(word, "load") || text::iequals(word, "loads") || text::iequals(word, "loaded") ||
                            text::iequals(word, "loading"));
      }
      if (!a_load) continue;
    }
    if (w == "shard" && text::istarts_with(s.substr(at), "sharding")) continue;
    // An allocator's count of what it has handed out ("allocated_bytes: 0.00 MB") is a state, not a request.
    if (w == "alloc" && text::istarts_with(s.substr(at), "allocated_bytes")) continue;
    return true;
  }
  return !after_size.empty() && after_size[0] == '/';  // "2.1G/4.6G": so much of a whole
}

// The name of the object a key sits in, when it is the object's first key:
// "'gpu': {'used'" gives "gpu". Empty otherwise.
std::string parent_key(std::string_view s, size_t key_begin) {
  size_t i = key_begin;
  while (i > 0 && (s[i - 1] == '\'' || s[i - 1] == '"' || s[i - 1] == ' ')) --i;
  if (i == 0 || s[i - 1] != '{') return {};
  --i;
  while (i > 0 && s[i - 1] == ' ') --i;
  if (i == 0 || (s[i - 1] != ':' && s[i - 1] != '=')) return {};
  --i;
  while (i > 0 && (s[i - 1] == '\'' || s[i - 1] == '"' || s[i - 1] == ' ')) --i;
  size_t e = i;
  while (i > 0 && e - i < 24 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_')) --i;
  return canonical(s.substr(i, e - i));
}

// Bytes in one of `unit` as logs write it ("MB", "GiB", "bytes"), by the
// project's table of log units (units::parse_log_size); 0 when it is none.
double bytes_per(std::string_view unit) {
  if (unit.empty() || unit.size() > 8) return 0;
  std::string one = "1 " + std::string(unit);
  std::string_view rest;
  auto b = units::parse_log_size(one, &rest);
  return b && rest.empty() ? static_cast<double>(*b) : 0;
}

// Any name whose figure carries its own size unit is a memory figure
// ("breaker.request.estimated_size=1.2gb", "cache_size: 3.4 GiB"): the key is
// the name with its dotted path (so two pools of one line stay apart), unless
// the line's sizes climb by design (a download, a load). Empty otherwise.
std::string sized_key(std::string_view s, size_t key_end, size_t value_at) {
  std::string_view v = s.substr(value_at);
  while (!v.empty() && (v[0] == ' ' || v[0] == '"' || v[0] == '\'')) v.remove_prefix(1);
  std::string_view rest;
  if (!units::parse_log_size(v, &rest) || climbs_by_design(s, rest)) return {};
  size_t b = key_end;
  while (b > 0 && key_end - b < 48 && (std::isalnum(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '_' || s[b - 1] == '.')) --b;
  if (b == key_end || !std::isalpha(static_cast<unsigned char>(s[b]))) return {};
  // The words of the phrase before the name, up to five, all letters (or
  // identifiers: "allocated_bytes after function call"): the
  // same name in two sentences is two series ("Before offload in the
  // manager: 57.8 GB" and "After offload in the manager: 13.6 GB" alternate,
  // a sawtooth together, each a series of its own).
  size_t phrase = b;
  for (int words = 0; words < 5 && phrase >= 2 && s[phrase - 1] == ' '; ++words) {
    size_t w = phrase - 1;
    while (w > 0 && (std::isalpha(static_cast<unsigned char>(s[w - 1])) || s[w - 1] == '_')) --w;
    if (w == phrase - 1 || (w > 0 && s[w - 1] != ' ')) break;
    phrase = w;
  }
  return "sized " + std::string(s.substr(phrase, key_end - phrase));
}

// The line's shape: each figure masked as '#', at most kTemplateChars. A
// figure is a digit run with its decimals and the size unit right after it
// ("612.4MiB", "1.38GiB", "4GiB", "0B", "611M"), so a sample that crossed a
// unit or gained a decimal ("980MiB" then "1.02GiB", as `docker stats`
// prints a climbing container) keeps its line's shape; runs of blanks are
// one blank, since a column's padding changes with its figures' widths.
size_t unit_after_figure(std::string_view s, size_t i) {
  auto alpha = [&](size_t k) { return k < s.size() && ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z')); };
  size_t k = i;
  if (k < s.size() && std::string_view("KkMmGgTtPp").find(s[k]) != std::string_view::npos) {
    ++k;
    if (k < s.size() && s[k] == 'i') ++k;
  }
  if (k < s.size() && (s[k] == 'B' || s[k] == 'b')) ++k;
  return k > i && !alpha(k) ? k - i : 0;
}

// A weekday's or month's three-letter name ending a word ("Fri", "Jan,").
bool calendar_word(std::string_view s) {
  if (s.size() < 3 || (s.size() > 3 && s[3] != ' ' && s[3] != ',' && s[3] != ']')) return false;
  static constexpr std::string_view kNames[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Jan", "Feb", "Mar",
                                                "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (auto n : kNames)
    if (s.substr(0, 3) == n) return true;
  return false;
}

template <class Emit>
void for_each_shape_char(std::string_view s, Emit&& emit) {
  auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  size_t n = 0;
  for (size_t i = 0; i < s.size() && n < kTemplateChars; ++i, ++n) {
    char c = s[i];
    if (digit(i)) {
      c = '#';
      while (digit(i + 1)) ++i;
      if (i + 2 < s.size() && s[i + 1] == '.' && digit(i + 2)) {
        i += 2;
        while (digit(i + 1)) ++i;
      }
      i += unit_after_figure(s, i + 1);
    } else if (c == ' ' || c == '\t') {
      c = ' ';
      while (i + 1 < s.size() && (s[i + 1] == ' ' || s[i + 1] == '\t')) ++i;
    } else if (c >= 'A' && c <= 'Z' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '[') && calendar_word(s.substr(i))) {
      // A day's or month's name in the time a sampler printed ("Fri 09:14:00
      // 6384112 kB", then "Thu ...") changes as digits do: one shape.
      c = '@';
      i += 2;
    }
    emit(c);
  }
}

std::string shape_of(std::string_view s) {
  std::string out;
  for_each_shape_char(s, [&](char c) { out += c; });
  return out;
}

// FNV-1a of the line as shape_of masks it, without building the string.
uint64_t shape_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for_each_shape_char(s, [&](char c) { h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL; });
  return h;
}

constexpr uint64_t kTableLines = 400;  // rows of a ps table or bare samples read after their header
constexpr size_t kNoColumn = SIZE_MAX;
constexpr size_t kPids = 16;                                    // processes followed by PID
constexpr uint64_t kGoParked = 20;                              // goroutines parked an hour or more
constexpr double kPidGrowthMin = 256.0 * 1024 * 1024;           // bytes added between two samples
constexpr uint64_t kPidSpanS = 3600, kPidWarmS = 600;           // samples an hour apart, after ten minutes up


bool digits(std::string_view t) { return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos; }

bool grew(const Series& x, uint64_t* flat_out) {
  *flat_out = 0;
  if (x.samples < kMinSamples || x.first <= 0) return false;
  bool up = x.last >= kGrowth * x.first && x.last >= 0.8 * x.max && x.rises * 10 >= (x.samples - 1) * 6;
  if (x.samples < 4 && x.rises + 1 < x.samples) up = false;
  if (x.samples >= kSteadySamples && x.rises + 2 >= x.samples && x.last >= kSteadyGrowth * x.first && x.last >= x.max) up = true;
  // Four samples or more, every one above the last: growth from kRisingGrowth up.
  if (x.samples >= kRisingSamples && x.rises + 1 == x.samples && x.last >= kRisingGrowth * x.first) up = true;
  // Two workers' figures interleaved in one log (Jest's --logHeapUsage with
  // --maxWorkers=2): the lines zig-zag between them, so half the steps fall,
  // yet every other sample is a new high and each fall is small. Growth when
  // half the samples or more set a new high and the last is half again the first.
  if (x.samples >= kInterleavedSamples && x.highs * 2 >= x.samples && x.worst_drop <= 0.1 && x.last >= 1.5 * x.first &&
      x.last >= 0.9 * x.max)
    up = true;
  if (x.worst_drop > kMaxDrop) up = false;  // it falls back: a sawtooth (GC, batches), not growth
  if (x.bytes && x.last - x.first < 16.0 * units::MiB) up = false;
  uint64_t flat = flat_then_jump(x);
  if (flat && !(x.bytes && x.last - x.first < 16.0 * units::MiB)) up = true, *flat_out = flat;
  return up;
}

// Too little growth to call a leak on its own (2.91, 3.02, 3.14 GB: the last
// few samples before a kill), but one process's figure in bytes, named by the
// program (rss=, heapUsed), that rose at every step
// by kRisingMin and more: "rising", which the diagnosis reads as the climb
// into the failure only when its last sample is close to the size the
// failure names (diagnose/classify.cc, cause_from_series). Peaks ("Max
// Memory Used", "peak") are each of a separate run: a workload's size per
// run, not one process climbing.
constexpr double kRisingMin = 64.0 * units::MiB;

bool rose_every_step(const Series& x) {
  if (text::icontains(x.last_text, "max") || text::icontains(x.last_text, "peak")) return false;
  // One process's figure as the program names it (rss=, heapUsed): a host's
  // used memory or a figure read from a line's shape rises with any work.
  if (text::starts_with(x.key, "host used") || text::starts_with(x.key, "figure in ")) return false;
  return x.bytes && x.samples >= kMinSamples && x.rises + 1 == x.samples && x.last - x.first >= kRisingMin && x.last >= x.max &&
         x.worst_drop <= 0;
}

class MemorySeries final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (columns_.on_line(line, [this](const std::string& key, double value, bool bytes, const Line& l) { add(key, value, bytes, l); }))
      return;
    if (elision(line.text)) {
      elided_ = line.number;
      return;
    }
    if (table(line)) return;
    if (leak_warning(line, out)) return;
    if (earlyoom_avail(line)) return;
    if (json_metrics(line) || prometheus_rows(line) || heroku_measure(line) || counter_csv_row(line) || tasklist_row(line)) return;
    if (runtime_report(line)) return;
    const int found = name_value_pairs(line);
    if (found == 0 && (goroutine(line) || size_then_key(line) || condor_job_usage(line) || unit_key_then_figure(line))) return;
    if (found == 0) template_series(line);
  }

  // Heroku's log-runtime-metrics: "measure=memory_total val=214.31 units=MB"
  // (the newer "sample#memory_total=214.31MB" is a name=size pair the key
  // reader below takes).
  bool heroku_measure(const Line& line) {
    std::string_view s = line.text;
    auto name = text::after(s, "measure=memory_");
    auto val = text::after(s, " val=");
    if (!name || !val) return false;
    auto v = text::parse_double(*val);
    auto unit = text::after(s, " units=");
    double scale = unit ? bytes_per(text::take_until(*unit, " ")) : 0;
    if (v && *v >= 0 && *v < 1e15 && scale > 0) add("memory" + std::string(text::take_until(*name, " ")), *v * scale, true, line);
    return true;
  }

  // A tasklist row: image name, PID, session name, session number, then the
  // memory in KiB ("5,214,336 K"; some locales separate thousands with '.').
  // Each PID is a series of its own.
  bool tasklist_row(const Line& line) {
    if (!text::ends_with(text::trim(line.text), " K")) return false;
    auto w = platform::words(line.text, 8);
    if (w.size() != 6 || w[5] != "K" || !digits(w[1]) || !digits(w[3]) || w[1].size() > 10) return false;
    std::string kib;
    for (char c : w[4])
      if (c >= '0' && c <= '9') kib += c;
      else if (c != ',' && c != '.') return false;
    if (kib.empty() || kib.size() > 12) return false;
    add("tasklist mem usage of pid " + std::string(w[1]), static_cast<double>(std::stoull(kib)) * 1024.0, true, line);
    return true;
  }

  // A counter's CSV row: "...,GC Heap Size (MB),Metric,2104": the cell with
  // a unit in parentheses names the series, the last cell is its value.
  bool counter_csv_row(const Line& line) {
    std::string_view s = text::trim(line.text);
    size_t open = s.rfind(" (");
    if (open == std::string_view::npos || s.empty() || !std::isdigit(static_cast<unsigned char>(s.back()))) return false;
    size_t close = s.find("),", open);
    size_t cell = s.rfind(',', open);
    if (close == std::string_view::npos || cell == std::string_view::npos) return false;
    double scale = bytes_per(s.substr(open + 2, close - open - 2));
    auto v = text::parse_double(s.substr(s.rfind(',') + 1));
    if (scale == 0 || !v || *v < 0 || *v >= 1e15) return false;
    add("counter " + std::string(s.substr(cell + 1, open - cell - 1)).substr(0, 48), *v * scale, true, line);
    return true;
  }

  // `promtool query range ... 'container_memory_working_set_bytes{...}'`
  // prints the series' labels ("{pod=\"x\"} =>") and then one "value @[time]"
  // row a sample: a series, in bytes when the query names bytes or memory.
  bool prometheus_rows(const Line& line) {
    std::string_view t = text::trim(line.text);
    if (text::contains(t, "promtool query") || text::contains(t, "query_range")) {
      prom_query_line_ = line.number;
      prom_bytes_ = text::contains(t, "bytes") || text::icontains(t, "memory");
      return true;
    }
    if (text::ends_with(t, "} =>") || text::ends_with(t, "}=>")) {
      prom_rows_until_ = line.number + 1;
      if (line.number > prom_query_line_ + 3) prom_bytes_ = text::contains(t, "bytes") || text::icontains(t, "memory");
      return true;
    }
    size_t at = t.find(" @[");
    if (at == std::string_view::npos || line.number > prom_rows_until_) return false;
    std::string_view rest;
    auto v = text::parse_double(t.substr(0, at), &rest);
    if (!v || !rest.empty() || *v < 0) return false;
    prom_rows_until_ = line.number + 1;
    add("prometheus range series", *v, prom_bytes_, line);
    return true;
  }
  uint64_t prom_query_line_ = 0, prom_rows_until_ = 0;
  bool prom_bytes_ = false;

  // Metrics as a REST API returns them, in bytes: Flink's
  // [{"id":"Status.JVM.Memory.Metaspace.Used","value":"614432768"}, ...]. The
  // memory pools' "...Used" figures are series; their "Max" is not.
  bool json_metrics(const Line& line) {
    std::string_view s = line.text;
    if (!text::contains(s, "\"id\":\"") || !text::contains(s, "\"value\":")) return false;
    bool any = false;
    for (int k = 0; k < 8; ++k) {
      auto id = text::after(s, "\"id\":\"");
      if (!id) break;
      std::string_view name = text::take_until(*id, "\"");
      auto v = text::after(*id, "\"value\":");
      if (!v) break;
      s = *v;
      std::string_view num = platform::skip(*v, "\" ");
      auto value = text::parse_double(num);
      size_t dot = name.rfind('.');
      if (!value || dot == std::string_view::npos || name.substr(dot + 1) != "Used" || !text::contains(name, "Memory")) continue;
      size_t prev = name.rfind('.', dot - 1);
      std::string key = canonical(name.substr(prev == std::string_view::npos ? 0 : prev + 1, dot - (prev == std::string_view::npos ? 0 : prev + 1))) + "used";
      add(key, *value, true, line);
      any = true;
    }
    return any;
  }

  // A figure after a name that carries its unit, with no separator but a
  // blank: "step 500  loss 1.0474  dml_mem_mb 4390", "gpu_mem_gib 7.2".
  bool unit_key_then_figure(const Line& line) {
    auto w = platform::words(line.text, 24);
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      // A Prometheus exposition row names its series with labels: "container_memory_rss{pod=\"a\"} 1.2e+09".
      std::string key = canonical(text::take_until(w[k], "{"));
      double unit = 0;
      for (auto [suffix, u] : {std::pair<std::string_view, double>{"kb", 1024.0}, {"kib", 1024.0}, {"mb", 1048576.0},
                               {"mib", 1048576.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0}, {"bytes", 1.0}})
        if (key.size() > suffix.size() + 2 && key.ends_with(suffix)) key.resize(key.size() - suffix.size()), unit = u;
      // An exposition row of goroutines ("go_goroutines 8164"): a count that only climbs is a leak of them.
      if (unit == 0 && key.ends_with("goroutines") && w.size() == 2) {
        std::string_view rest;
        auto n = text::parse_float_exp(w[1], &rest);
        if (!n || !rest.empty() || *n < 0) return false;
        add("goroutines", *n, false, line);
        return true;
      }
      if (unit == 0 || !(text::contains(key, "mem") || text::contains(key, "rss") || text::contains(key, "heap") ||
                         text::contains(key, "vram")))
        continue;
      std::string_view rest;
      auto num = text::parse_float_exp(w[k + 1], &rest);
      if (!num || !rest.empty() || *num < 0 || *num >= 1e19) continue;
      add(key, *num * unit, true, line);
      return true;
    }
    return word_then_size(line, w);
  }

  // A figure's name, a blank, then a size with its unit: "cuda allocated
  // 3.12 GiB", "rss 2.48GB", "Metaspace used 176302K". The name is the word (and the word before it, a
  // device or pool's: "cuda allocated"). Not a request ("Tried to allocate").
  bool word_then_size(const Line& line, const std::vector<std::string_view>& w) {
    if (text::icontains(line.text, "tried to") || text::icontains(line.text, "allocate ")) return false;
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      std::string word = canonical(w[k]);
      // A dotted metric's name ("cuda.memory_allocated 2.48 GB"): its last part,
      // the allocator's figure itself (not a peak: "max_memory_allocated" only rises).
      if (size_t dot = word.rfind('.'); dot != std::string::npos) word = word.substr(dot + 1);
      const bool metric = word == "memoryallocated" || word == "memoryreserved" || word == "memallocated" || word == "memreserved";
      // "used" too: the JVM's pools as jcmd prints them ("Metaspace used 176302K, capacity ...").
      if (!metric && word != "allocated" && word != "reserved" && word != "rss" && word != "resident" && word != "inuse" && word != "used")
        continue;
      std::string_view rest;
      std::string_view at = text::trim_left(line.text.substr(static_cast<size_t>(w[k + 1].data() - line.text.data())));
      // Thousands grouped with commas ("gpu used 1,812 MiB"): the figure without them.
      std::string grouped;
      if (size_t c = at.find(','); c != std::string_view::npos && c > 0 && c < 4 && c + 4 <= at.size() && platform::is_digit(at[c + 1])) {
        for (char ch : at.substr(0, std::min<size_t>(at.size(), 32)))
          if (ch != ',') grouped += ch;
        at = grouped;
      }
      auto size = units::parse_log_size(at, &rest);
      if (!size || rest.size() == line.text.size()) continue;
      std::string before = k > 0 ? canonical(w[k - 1]) : std::string();
      bool named = !before.empty() && before.size() <= 8 && std::all_of(before.begin(), before.end(), [](char c) { return c >= 'a' && c <= 'z'; });
      add(named && !metric ? before + word : word, static_cast<double>(*size), true, line);
      return true;
    }
    return false;
  }

  // "(212 MB heap size)": a size, then what it measures.
  // "goroutine 10493 [IO wait, 597 minutes]:"
  bool goroutine(const Line& line) {
    std::string_view s = line.text;
    size_t g = s.find("goroutine ");
    if (g == std::string_view::npos) return false;
    size_t open = s.find(" [", g);
    size_t mins = s.find(" minutes]:", g);
    if (open == std::string_view::npos || mins == std::string_view::npos || mins < open) return false;
    size_t comma = s.rfind(", ", mins);
    if (comma == std::string_view::npos || comma < open) return false;
    auto m = text::parse_u64(s.substr(comma + 2));
    source_ = line.source;
    if (m && *m >= 60 && ++go_parked_ == kGoParked) {
      go_line_ = line.number;
      go_text_ = std::string(s.substr(0, 200));
    }
    return true;
  }

  // HTCondor's job log: each "Image size of job updated" event (006) gives
  // the job's figures as value, dash, name with its unit:
  //   006 (8812044.000.000) 02/21 22:07:45 Image size of job updated: 2104812
  //   	2056  -  MemoryUsage of job (MB)
  //   	2104560  -  ResidentSetSize of job (KB)
  bool condor_job_usage(const Line& line) {
    std::string_view s = text::trim(line.text);
    std::string_view rest;
    auto n = text::parse_u64(s, &rest);
    if (!n) return false;
    rest = text::trim(rest);
    for (auto [name, key, unit] : {std::tuple<std::string_view, std::string_view, double>{"- MemoryUsage of job (MB)", "memoryusage", 1048576.0},
                                   {"- ResidentSetSize of job (KB)", "rss", 1024.0}}) {
      if (!text::starts_with(rest, "-") || text::trim(rest.substr(1)) != text::trim(name.substr(1))) continue;
      add(std::string(key), static_cast<double>(*n) * unit, true, line);
      return true;
    }
    return false;
  }

  bool size_then_key(const Line& line) {
    std::string_view s = line.text;
    for (std::string_view key : {" heap size", " heap used", " resident", " rss"}) {
      size_t k = s.find(key);
      if (k == std::string_view::npos || k < 3) continue;
      size_t b = k;
      while (b > 0 && s[b - 1] != '(' && s[b - 1] != ',' && s[b - 1] != '[' && k - b < 16) --b;
      auto v = units::parse_log_size(text::trim(s.substr(b, k - b)));
      if (!v) continue;
      add(canonical(text::trim(key)), static_cast<double>(*v), true, line);
      return true;
    }
    // A size with its unit, then the word for what holds it, as a loop
    // prints torch.cuda.memory_allocated() ("100 1.84 GiB allocated") or a
    // pool its use ("3.2 GB used"): the size is the two words before the key
    // (or one: "612MB used"), so a step's number before it is not read.
    // PyTorch's OOM message ("11.20 GiB already allocated", "is allocated by
    // PyTorch") has no size right before its words.
    for (std::string_view key : {" allocated", " reserved", " used"}) {
      size_t k = s.find(key);
      if (k == std::string_view::npos || k < 3 || (k + key.size() < s.size() && platform::is_alnum(s[k + key.size()]))) continue;
      size_t unit_start = s.find_last_of(' ', k - 1);
      unit_start = unit_start == std::string_view::npos ? 0 : unit_start + 1;
      std::string_view word = s.substr(unit_start, k - unit_start);
      std::string_view size_text = word;
      if (!word.empty() && !(word[0] >= '0' && word[0] <= '9') && unit_start >= 2) {  // "1.84 GiB": the number is the word before
        size_t num_start = s.find_last_of(' ', unit_start - 2);
        num_start = num_start == std::string_view::npos ? 0 : num_start + 1;
        size_text = s.substr(num_start, k - num_start);
      }
      std::string_view rest;
      auto v = units::parse_log_size(size_text, &rest);
      if (!v || !rest.empty() || size_text.empty() || !(size_text[0] >= '0' && size_text[0] <= '9')) continue;
      add(canonical(text::trim(key)), static_cast<double>(*v), true, line);
      return true;
    }
    return false;
  }

  // A memory column and its unit in a header word: "pool_used_MB", "mem_mib", "MemoryUsed(GB)".
  static double column_unit(std::string_view w) {
    bool memory = false;
    // Windows' Get-Process columns too: "WS(GB)" (working set), "Commit(GB)", "Private(MB)".
    for (std::string_view m : {"mem", "rss", "heap", "pool", "vram", "ws(", "commit", "private"}) memory = memory || text::icontains(w, m);
    if (!memory) return 0;
    for (auto [suffix, unit] : {std::pair<std::string_view, double>{"_mb", 1048576.0}, {"_mib", 1048576.0}, {"_gb", 1073741824.0},
                                {"_gib", 1073741824.0}, {"_kb", 1024.0}, {"_bytes", 1.0}, {"(mb)", 1048576.0}, {"(mib)", 1048576.0},
                                {"(gb)", 1073741824.0}, {"(gib)", 1073741824.0}})
      if (w.size() > suffix.size() && text::iequals(w.substr(w.size() - suffix.size()), suffix)) return unit;
    return 0;
  }

  // The table headers above; true when the line was one or a row of one.
  bool column_table(const Line& line, const std::vector<std::string_view>& words) {
    std::string_view s = line.text;
    // A heading that names the metric and its unit: "MemoryUtilized (MiB)".
    if (!words.empty() && (words[0] == "#" || words[0].starts_with("#"))) {
      for (auto [u, unit] : {std::pair<std::string_view, double>{"(MiB)", 1048576.0}, {"(MB)", 1048576.0}, {"(GiB)", 1073741824.0},
                             {"(GB)", 1073741824.0}}) {
        size_t p = s.find(u);
        if (p == std::string_view::npos) continue;
        std::string_view before = s.substr(0, p);
        if (!text::icontains(before, "mem") && !text::icontains(before, "rss")) continue;
        col_ = kNoColumn, col_unit_ = unit, col_words_ = 0, col_until_ = line.number + kTableLines;
        // The metric's own name ("MemoryUtilized"), a key of its own: a "memory" figure elsewhere is another series.
        std::string_view name = text::trim(before);
        size_t sp = name.find_last_of(" ,:");
        col_key_ = "table " + canonical(sp == std::string_view::npos ? name : name.substr(sp + 1));
        return true;
      }
    }
    if (words.size() >= 2 && words.size() <= 12) {
      bool header = true;
      size_t at = kNoColumn;
      double unit = 0;
      for (size_t k = 0; k < words.size() && header; ++k) {
        if (platform::is_digit(words[k][0])) header = false;
        else if (at == kNoColumn)
          if (double u = column_unit(words[k]); u > 0) at = k, unit = u;
      }
      if (header && at != kNoColumn) {
        col_ = at, col_unit_ = unit, col_words_ = words.size(), col_until_ = line.number + kTableLines;
        col_key_ = "table " + canonical(words[at]);
        return true;
      }
    }
    if (line.number > col_until_ || col_unit_ == 0 || words.empty()) return false;
    std::string_view cell;
    if (col_ == kNoColumn) {
      // A row of the heading's series: a time first, the figure last.
      if (words.size() < 2 || words.size() > 4 || !platform::is_digit(words[0][0]) ||
          (words[0].find(':') == std::string_view::npos && words[0].find('-') == std::string_view::npos))
        return false;
      cell = words.back();
    } else {
      if (words.size() != col_words_ || !platform::is_digit(words[0][0])) return false;
      cell = words[col_];
    }
    auto v = text::parse_double(cell);
    if (!v || *v < 0 || cell.find_first_not_of("0123456789.") != std::string_view::npos) return false;
    add(col_key_, *v * col_unit_, true, line);
    return true;
  }

  // A line with no named figure: its shape is the key (see the top). Cheap
  // for a line seen before: the shape is a hash of the masked line, and
  // whether such lines climb by design is decided once per shape.
  void template_series(const Line& line) {
    std::string_view after;
    auto value = first_size(line.text, &after);
    if (!value) return;
    const uint64_t hash = shape_hash(line.text);
    Template* t = nullptr;
    for (auto& x : templates_)
      if (x.hash == hash) t = &x;
    if (!t) {
      if (templates_.size() < kTemplates) {
        t = &templates_.emplace_back();
      } else {
        // Forget the oldest shape seen only once; a full table of repeating shapes keeps them.
        for (auto& x : templates_)
          if (x.count == 1 && (!t || x.line < t->line)) t = &x;
        if (!t) return;
      }
      *t = Template{};
      t->hash = hash;
      t->by_design = climbs_by_design(line.text, after);
      if (!t->by_design) t->shape = shape_of(line.text);
    }
    if (t->by_design) return;
    ++t->count;
    t->line = line.number;
    // From its second sample a shape is a series under its own key (at most
    // half the series slots: named figures keep the rest).
    if (t->count >= 2) {
      std::string key = "figure in \"" + text::printable(t->shape.substr(0, 48)) + "\"";
      size_t shapes = 0;
      bool known = false;
      for (size_t k = 0; k < used_; ++k) {
        shapes += text::starts_with(series_[k].key, "figure in ");
        known = known || series_[k].key == key;
      }
      if (!known && shapes >= kKeys / 2) return;
      if (t->count == 2) add(key, t->first, true, t->first_line);
      add(key, *value, true, line);
    } else {
      t->first = *value;
      t->first_line = Line{std::string_view(), line.number, line.time, line.source};
    }
  }

  // ps tables, bare "ps -o rss=" samples and Go gctrace lines; true when the
  // line was one of them.
  bool table(const Line& line) {
    std::string_view s = line.text;
    std::vector<std::string_view> words;
    for (size_t i = 0; i < s.size() && words.size() < 16;) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      size_t b = i;
      while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
      if (i > b) words.push_back(s.substr(b, i - b));
    }
    if (words.empty()) return false;
    if (free_row(line, words)) return true;
    if (column_table(line, words)) return true;
    if (gc_floor(line)) return true;
    if (size_t p = s.find("->"); p != std::string_view::npos && text::contains(s, " MB")) {
      // "4->4->1 MB": the third figure is the live heap.
      size_t q = s.find("->", p + 2);
      if (q != std::string_view::npos) {
        auto live = text::parse_u64(s.substr(q + 2));
        if (live) add("Go live heap", static_cast<double>(*live) * units::MiB, true, line);
        return true;
      }
    }
    // A header names its columns and holds no figure but a clock or a date
    // before them ("PID RSS COMMAND", pidstat's "14:00:01  UID  PID ... RSS
    // %MEM Command"); a log line with "RSS" in it and figures ("... rank 0
    // RSS MEM USE: 5.11G") is no header.
    const bool no_figure = std::none_of(words.begin(), words.end(), [](std::string_view w) {
      return platform::is_digit(w[0]) && w.find_first_of(":/-") == std::string_view::npos;
    });
    for (size_t k = 0; k < words.size() && no_figure; ++k) {
      if (words[k] == "RSS" && words.size() >= 2) {
        rss_column_ = k;
        pid_column_ = etime_column_ = kNoColumn;
        for (size_t c = 0; c < words.size(); ++c) {
          if (words[c] == "PID") pid_column_ = c;
          if (words[c] == "ELAPSED" || words[c] == "ETIME") etime_column_ = c;
        }
        table_until_ = line.number + kTableLines;
        bare_until_ = 0;
        return true;
      }
    }
    if (text::contains(s, "rss=") && text::contains(s, "ps ")) {
      bare_until_ = line.number + kTableLines;
      table_until_ = 0;
      return true;
    }
    // Another command at a prompt ends the samples of the last one: its bare
    // figure ("% sysctl -n hw.memsize" then 17179869184) is no RSS sample.
    if (bare_until_ >= line.number && (text::starts_with(s, "$ ") || text::starts_with(s, "% "))) bare_until_ = 0;
    if (ps_columns(s)) {
      table_until_ = line.number + kTableLines;
      bare_until_ = 0;
      return true;
    }
    if (line.number <= table_until_ && rss_column_ < words.size() && digits(words[rss_column_]) && digits(words[0].substr(0, 1))) {
      if (auto kib = text::parse_u64(words[rss_column_])) {
        // Rows of several processes (ps -eo rss,comm,pid | grep unicorn) are
        // a series per process, not one climbing from the smallest to the largest.
        std::string key = pid_column_ < words.size() && digits(words[pid_column_]) ? "rss of pid " + std::string(words[pid_column_]) : "rss";
        add(key, static_cast<double>(*kib) * 1024.0, true, line);
        if (pid_column_ < words.size() && etime_column_ < words.size()) pid_sample(words[pid_column_], words[etime_column_], *kib, line);
      }
      return true;
    }
    if (line.number <= bare_until_ && words.size() == 1 && digits(words[0])) {
      if (auto kib = text::parse_u64(words[0])) add("rss", static_cast<double>(*kib) * 1024.0, true, line);
      return true;
    }
    // The same sample after the time the loop printed with it: "18:34:51 2210344".
    if (line.number <= bare_until_ && words.size() == 2 && digits(words[1]) && words[0].find(':') != std::string_view::npos &&
        words[0].find_first_not_of("0123456789:.") == std::string_view::npos) {
      if (auto kib = text::parse_u64(words[1])) add("rss", static_cast<double>(*kib) * 1024.0, true, line);
      return true;
    }
    return false;
  }

  // The heap after a collection (see the top): Elasticsearch's "memory
  // [A]->[B]/[C]", the whole heap's "A->B(C)" pair of the JVM's line
  // (gc_pairs.h: not the young generation's, not the Metaspace's), or
  // Cassandra's old generation before -> after.
  bool gc_floor(const Line& line) {
    std::string_view s = line.text;
    std::optional<uint64_t> after;
    if (auto es = text::after(s, "memory [")) {
      size_t arrow = es->find("]->[");
      if (arrow == std::string_view::npos) return false;
      after = units::parse_log_size(es->substr(arrow + 4));
    } else if (auto h = heap_pair(s)) {
      after = h->after;
    } else if (size_t arrow = s.rfind(" -> "); arrow != std::string_view::npos && text::contains(s, "Major GC: application ")) {
      // airlift's JmxGcMonitor (Trino, Presto): "Major GC: application 3ms, stopped 1211ms: 14.88GB -> 8.94GB".
      size_t b = s.rfind(' ', arrow - 1);
      std::string_view rest;
      if (b == std::string_view::npos || !units::parse_log_size(s.substr(b + 1, arrow - b - 1), &rest) || !rest.empty()) return false;
      after = units::parse_log_size(s.substr(arrow + 4), &rest);
    } else if (auto art = text::after(s, "% free, "); art && text::contains(s, " GC freed ")) {
      // Android's ART after each collection: "... GC freed 612KB AllocSpace bytes, ...,
      // 31% free, 214MB/310MB, paused ..." (the heap in use after it, of the footprint).
      std::string_view rest;
      after = units::parse_log_size(*art, &rest);
      if (!after || !text::starts_with(rest, "/")) return false;
    } else if (auto old_gen = text::after(s, "Old Gen: ")) {
      // Cassandra's GCInspector: "CMS Old Gen: 402115288 -> 398740112;" (bytes, before -> after).
      std::string_view rest;
      if (!text::parse_u64(*old_gen, &rest) || !text::starts_with(rest, " -> ")) return false;
      after = text::parse_u64(rest.substr(4));
    } else {
      return false;
    }
    if (!after) return false;
    add("heap after GC", static_cast<double>(*after), true, line);
    return true;
  }

  // `free` rows: "Mem:" then total, used, ... in the unit the last `free`
  // command asked for (free_units.h, as the table reader reads them).
  bool free_row(const Line& line, const std::vector<std::string_view>& words) {
    std::string_view s = line.text;
    if (size_t p = s.find("free -"); p != std::string_view::npos) {
      free_units_.command(text::take_until(s.substr(p + 5), "|;&"));
      return false;
    }
    // top's summary, taken again and again: "KiB Mem : 33554432 total, 22671044 free, 10215380 used, ...".
    if (auto top = top_summary(s); top && !top->swap) {
      if (top->used) add("host used (top)", static_cast<double>(*top->used), true, line);
      return true;
    }
    // The row may follow the time a loop printed before it ("Mon Sep 11
    // 10:41:20 CEST 2017   Mem:  3880472  1204480 ..."): "Mem:" among the first words.
    size_t mem = 0;
    while (mem < words.size() && mem < 8 && words[mem] != "Mem:") ++mem;
    if (mem == words.size() || mem == 8 || words.size() < mem + 3) return false;
    if (mem > 0 && !free_units_.size_of(words[mem + 1])) return false;
    if (auto bytes = free_units_.size_of(words[mem + 2])) add("host used (free)", static_cast<double>(*bytes), true, line);
    return true;
  }

  void finish(FactSink& out) override {
    pid_growth(out);
    if (go_parked_ >= kGoParked) {
      Line at{go_text_, go_line_, {}, source_};
      Fact f = make_fact(at, FactKind::memory_usage, Family::runtime);
      f.strength = 0.6f;
      f.detail = fmt::format("growing goroutines: {} parked for an hour or more", go_parked_);
      f.count = go_parked_;
      out.add(std::move(f));
    }
    for (size_t k = 0; k < used_; ++k) {
      uint64_t flat = 0;
      std::optional<Series> trimmed;
      bool rising = false;
      if (!grew(series_[k], &flat)) {
        trimmed = without_header(series_[k]);
        if (!trimmed || !grew(*trimmed, &flat)) trimmed = without_restart(series_[k]);
        if (!trimmed || !grew(*trimmed, &flat)) {
          if (sat_level(series_[k])) {
            level(series_[k], out);
            continue;
          }
          if (!rose_every_step(series_[k])) continue;
          trimmed.reset();
          rising = true;
        }
      }
      const Series& x = trimmed ? *trimmed : series_[k];
      Line last{x.last_text, x.last_line, {}, source_};
      Fact f = make_fact(last, FactKind::memory_usage, Family::python);
      // A figure read from a line's shape is weaker evidence than one the
      // program named (rss, heapUsed): the diagnosis is less sure of it.
      f.strength = text::starts_with(x.key, "figure in ") ? 0.55f : 0.7f;
      auto fmt_v = [&](double v) { return x.bytes ? units::format_bytes(clamped_bytes(v)) : fmt::format("{:g}", v); };
      f.detail = flat     ? fmt::format("jumped {}: flat at {} for {} samples, then {} in {} more", x.key, fmt_v(x.first), flat,
                                        fmt_v(x.last), x.samples - flat)
                 : rising ? fmt::format("rising {} from {} to {} over {} samples", x.key, fmt_v(x.first), fmt_v(x.last), x.samples)
                          : fmt::format("growing {} from {} to {} over {} samples", x.key, fmt_v(x.first), fmt_v(x.last), x.samples);
      if (rising) f.strength = 0.5f;
      // Still climbing when the input ends: most steps rose, the last sample
      // is the highest, half again the first (a warm-up that levelled off is
      // not). What diagnose reads as a leak developing when nothing failed yet.
      // The later half of the samples must still add a third of the growth:
      // a jump at the start and small steps after it (a cache filled once, a
      // warm-up) have levelled off.
      const bool late_growth = x.kept.size() == x.samples && x.last - x.kept[x.samples / 2] >= (x.last - x.first) / 3;
      if (!flat && !rising && x.bytes && x.samples >= kClimbingSamples && x.rises * 10 >= (x.samples - 1) * 8 && x.last >= x.max &&
          x.last >= 1.5 * x.first && late_growth)
        f.detail += std::string(kStillClimbing);
      if (x.bytes) f.usage = clamped_bytes(x.last);
      f.count = x.samples;
      f.from_line = x.first_line;
      // The process's resident size grew while the runtime's own count of
      // live objects (a heap-in-use key of the same lines) stayed flat: what
      // grew is held by the native allocator (glibc's arenas, freed memory
      // not returned), not by the program's objects.
      if (!flat && (resident_key(x.key) || x.key == "heapinuse"))
        if (const Series* heap = flat_heap_beside(x)) {
          f.cause = Cause::fragmentation;
          auto heap_v = [&](double v) { return heap->bytes ? units::format_bytes(clamped_bytes(v)) : fmt::format("{:g}", v); };
          std::string_view heap_name = heap->key;
          if (text::starts_with(heap_name, "sized ")) heap_name.remove_prefix(6);
          f.detail += fmt::format(" while {} stayed at {} to {}", heap_name, heap_v(heap->first), heap_v(heap->last));
        }
      out.add(std::move(f));
    }
  }

 private:
  // A series that sat level (sat_level): "level KEY at SIZE over N samples".
  void level(const Series& x, FactSink& out) {
    Line last{x.last_text, x.last_line, {}, source_};
    Fact f = make_fact(last, FactKind::memory_usage, Family::python);
    f.strength = 0.5f;
    f.usage = clamped_bytes(x.max);
    f.count = x.samples;
    f.detail = fmt::format("level {} at {} over {} samples", x.key, units::format_bytes(*f.usage), x.samples);
    out.add(std::move(f));
  }

  // earlyoom: "mem avail: 11208 of 15923 MiB (70 %)".
  bool earlyoom_avail(const Line& line) {
    auto avail = text::after(line.text, "mem avail: ");
    if (!avail) return false;
    std::string_view rest;
    auto a = text::parse_u64(text::trim(*avail), &rest);
    auto total = text::after(rest, " of ");
    auto t = total ? text::parse_u64(*total) : std::nullopt;
    if (a && t && *t >= *a) add("host used (earlyoom's mem avail)", static_cast<double>(*t - *a) * 1048576.0, true, line);
    // earlyoom up to 1.1 prints no total: "mem avail: 6921 MiB (88 %)", the share used is the series.
    if (a && !total && text::starts_with(text::trim_left(rest), "MiB (")) {
      auto pct = text::parse_double(text::trim_left(text::trim_left(rest).substr(5)));
      if (pct && *pct >= 0 && *pct <= 100) add("host used share (earlyoom's mem avail)", 100.0 - *pct, false, line);
    }
    return true;
  }

  // Runtimes' own reports, in the shapes their documentation prints:
  //   Python's tracemalloc example: "Current memory usage is 1126.4MB; Peak was 1239.0MB"
  //   the JVM's MemoryUsage.toString(): "init = 268435456(262144K) used = 1181116006(1153433K) committed = ..."
  //     (after "Heap"/"heap usage:", or a non-heap pool's name)
  //   dotnet-counters: "    GC Heap Size (MB)      1,126", "    Working Set (MB)    1,402"
  bool runtime_report(const Line& line) {
    std::string_view s = line.text;
    if (auto v = text::after(s, "memory usage is ")) {
      if (auto size = units::parse_log_size(*v)) add("memory", static_cast<double>(*size), true, line);
      return true;
    }
    if (auto used = text::after(s, ") used = "); used && text::contains(s, "init = ") && text::contains(s, "committed = ")) {
      auto n = text::parse_double(*used);
      if (!n || *n < 0) return true;
      std::string_view pool = text::trim(text::take_until(s, "init = "));
      bool other = text::icontains(pool, "non") || text::icontains(pool, "metaspace") || text::icontains(pool, "code");
      add(other ? "jvm non-heap used" : "heapused", *n, true, line);
      return true;
    }
    for (std::string_view name : {"GC Heap Size (MB)", "Working Set (MB)"}) {
      auto v = text::after(s, name);
      if (!v) continue;
      std::string digits;
      for (char c : text::trim(*v))
        if (c != ',') digits += c;
      std::string_view rest;
      auto n = text::parse_double(digits, &rest);
      if (n && rest.empty() && *n >= 0) add(name[0] == 'G' ? "heapused" : "rss", *n * 1048576.0, true, line);
      return true;
    }
    return false;
  }

  // name=value and name: value pairs, up to twelve in a line; how many were read.
  // Used of total with the unit after the total, after a memory word
  // ("Memory usage on this node: 4.1/7.5 GiB", Ray Tune's status): the used
  // figure, in that unit. `sep` is the separator before the figures.
  // Counts it in `found`.
  bool used_of_total_pair(std::string_view s, size_t sep, const Line& line, int& found) {
    auto used = used_of_total(s.substr(sep + 1));
    if (!used || !text::icontains(s.substr(sep >= 40 ? sep - 40 : 0, std::min<size_t>(sep, 40)), "mem")) return false;
    add("memory used of total", *used, true, line);
    ++found;
    return true;
  }

  int name_value_pairs(const Line& line) {
    std::string_view s = line.text;
    size_t i = 0;
    int found = 0;
    while (i < s.size() && found < 12) {
      size_t sep = s.find_first_of("=:", i);
      if (sep == std::string_view::npos) break;
      i = sep + 1;
      // The key: letters, '_' and one inner blank before the separator, quotes allowed.
      size_t e = sep;
      while (e > 0 && (s[e - 1] == '"' || s[e - 1] == '\'' || s[e - 1] == ' ')) --e;
      // A call printed with its result: "torch.cuda.memory_allocated()=1181116006".
      if (e > 2 && s[e - 1] == ')' && s[e - 2] == '(') e -= 2;
      // A unit in parentheses after the name ("MU(KB)=118204", "RSS (MB): 412"):
      // a size, whatever the name.
      double paren_unit = 0;
      if (e > 2 && s[e - 1] == ')') {
        size_t open = s.rfind('(', e - 1);
        if (open != std::string_view::npos && e - 1 - open <= 6 && open > 0) {
          paren_unit = bytes_per(s.substr(open + 1, e - 2 - open));
          if (paren_unit > 0) {
            e = open;
            while (e > 0 && s[e - 1] == ' ') --e;
          }
        }
      }
      size_t b = e;
      while (b > 0 && key_char(s[b - 1]) && e - b < 24) --b;
      while (b < e && s[b] == ' ') ++b;
      // "anon-rss:", "file-rss:" (the kernel's victim line) are not a series;
      // "Status.JVM.Memory.Direct.MemoryUsed=" (a metric's last part) is.
      if (b > 0 && s[b - 1] == '-') continue;
      std::string key = canonical(s.substr(b, e - b));
      if (used_of_total_pair(s, sep, line, found)) continue;
      // A cgroup's memory file as a sampler logs it ("memory.current=214M",
      // v1's "memory.usage_in_bytes: 224395264"): the group's memory ("memorybytes"
      // becomes "memory" in bytes where the unit suffix is read off below).
      if (b >= 7 && s.substr(b - 7, 7) == "memory." && (key == "current" || key == "usageinbytes")) key = key == "current" ? "memory" : "memorybytes";
      // A figure inside a named object: {'gpu': {'used': 4.48, 'total': 8.0}} is "gpu used".
      if (key == "used" || key == "usage" || key == "allocated" || key == "reserved") key = parent_key(s, b) + key;
      // A metric's unit after a dot ("GPUMemoryUsed.Megabytes:6120"): the name is the part before it.
      if (b > 1 && s[b - 1] == '.' && (key == "kilobytes" || key == "megabytes" || key == "gigabytes" || key == "bytes" || key == "mb")) {
        size_t n = b - 1;
        while (n > 0 && key_char(s[n - 1]) && b - 1 - n < 24) --n;
        key = canonical(s.substr(n, b - 1 - n)) + key;
      }
      // A unit in the key ("rss_kb=22418832", "heap_mb: 512").
      double key_unit = paren_unit;
      // jstat's used columns by their own names ("MU=146811.4", "OU=912344.0"): KB, as jstat prints them.
      std::string_view raw_key = s.substr(b, e - b);
      if ((raw_key == "MU" || raw_key == "OU") && s[sep] == '=') key_unit = 1024.0, key = raw_key == "MU" ? "metaspaceused" : "oldgenused";
      if (paren_unit > 0 && !key.empty() && !known_key(key)) key = "sized " + std::string(s.substr(b, e - b));
      // A metric's name with its unit after a dot ("GPUMemoryUsed.Megabytes:6120").
      for (auto [suffix, unit] : {std::pair<std::string_view, double>{"kilobytes", 1024.0}, {"megabytes", 1048576.0},
                                  {"gigabytes", 1073741824.0}, {"kb", 1024.0}, {"kib", 1024.0}, {"mb", 1048576.0},
                                  {"mib", 1048576.0}, {"gb", 1073741824.0}, {"bytes", 1.0}}) {
        if (key.size() > suffix.size() && key.ends_with(suffix)) {
          key.resize(key.size() - suffix.size());
          key_unit = unit;
          break;
        }
      }
      // A metric's last two parts ("Status.JVM.Memory.Metaspace.Used=180.2 MB"):
      // the pool, then "Used".
      if (key == "used" && b > 1 && s[b - 1] == '.') {
        size_t n = b - 1;
        while (n > 0 && key_char(s[n - 1]) && b - 1 - n < 24) --n;
        std::string pool = canonical(s.substr(n, b - 1 - n));
        if (text::contains(pool, "metaspace") || text::contains(pool, "heap") || text::contains(pool, "direct") ||
            text::contains(pool, "memory"))
          key = pool + "used";
      }
      // "memory usage" may end a longer phrase ("Current memory usage").
      if (paren_unit == 0 && !known_key(key) && !(key.size() > 4 && key.ends_with("used") && key != "memoryused")) {
        for (auto tail : {"memoryusage", "memoryused", "memorytotal", "rss", "heapused", "threads", "goroutines"})
          if (key.size() > std::string_view(tail).size() && key.ends_with(tail)) key = canonical(tail);
        // Go's MemStats after a message word ("msg=memstats HeapAlloc=").
        for (std::string_view tail : kGoMemStats)
          if (key.size() > tail.size() && key.ends_with(tail)) key = std::string(tail);
        // "mem" only as a word of its own ("running mem=611M", "gpu_mem"), not
        // the end of another ("shmem:" in the kernel's Mem-Info).
        std::string_view raw = s.substr(b, e - b);
        if (raw.size() > 4 && raw.ends_with("mem") && (raw[raw.size() - 4] == ' ' || raw[raw.size() - 4] == '_')) key = "memory";
        // A name that gives its own unit and names memory ("heapInuseBytes=",
        // Go's MemStats as programs log them, "cache_mb: 512") is a figure
        // in bytes; a running maximum ("peakBytes", "max_mb") never falls and
        // is no series.
        bool named_memory = key_unit > 0 && (text::contains(key, "heap") || text::contains(key, "mem") || text::contains(key, "rss") ||
                                             text::contains(key, "alloc") || text::contains(key, "inuse") || text::contains(key, "resident"));
        // "used_mb=3914": used memory by its unit alone (not a disk's).
        if (key == "used" && key_unit > 0 && !text::icontains(s, "disk") && !text::icontains(s, "storage") && !text::icontains(s, "fs"))
          named_memory = true;
        if (named_memory && (text::contains(key, "peak") || text::contains(key, "max") || text::contains(key, "limit") ||
                             text::contains(key, "total")))
          named_memory = false;
        if (!known_key(key) && !named_memory) key = sized_key(s, e, i);
        if (key.empty()) continue;
      }
      std::string_view v = s.substr(i);
      while (!v.empty() && (v[0] == ' ' || v[0] == '"' || v[0] == '\'')) v.remove_prefix(1);
      auto num = text::parse_double(v);
      if (!num || *num < 0) continue;
      bool bytes = false;
      double value = *num;
      if (auto sized = units::parse_log_size(v)) {
        value = static_cast<double>(*sized);
        bytes = true;
      } else if (key_unit > 0) {
        value *= key_unit;
        bytes = true;
      } else if (bytes_key(key)) {
        bytes = true;
      }
      add(key, value, bytes, line);
      ++found;
    }
    return found;
  }

  // Keys as the series names them (canonical: lower case, separators and
  // the unit dropped; "go_heap_inuse_mb" is "goheapinuse").
  // rss, rss_mb, "RSS", memory_rss, VmRSS, process_resident_memory_bytes:
  // the process's resident size; Go's HeapSys and HeapIdle (runtime.MemStats,
  // as expvar's /debug/vars prints them): what the runtime holds from the
  // system, in use or not.
  // A process's "memory" as programs log their own (psutil's RSS, "Memory
  // Usage: 1843.22 MB") is its resident size too.
  static bool resident_key(std::string_view key) {
    return key == "rss" || key == "memoryrss" || key == "vmrss" || key == "heapsys" || key == "heapidle" || key == "memory" ||
           text::contains(key, "resident");
  }
  // heapUsed, go_heap_inuse_mb, malloc_inuse_mb, HeapAlloc: live objects as the runtime counts them;
  // an allocator's own count of what it has handed out (Arrow's pool
  // "allocated_bytes", jemalloc's "allocated").
  static bool live_heap_key(std::string_view key) {
    return text::contains(key, "heapused") || text::contains(key, "heapinuse") || text::contains(key, "mallocinuse") ||
           text::contains(key, "heapalloc") || key == "alloc" || text::icontains(key, "allocated_bytes") ||
           text::contains(key, "allocatedbytes");
  }
  // A live-heap series of as many samples, its last within a quarter of its first.
  // Go's HeapInuse counts whole spans, the objects in them and the gaps
  // between: it is held memory beside HeapAlloc, the live objects alone.
  const Series* flat_heap_beside(const Series& grown) const {
    for (size_t k = 0; k < used_; ++k) {
      const Series& h = series_[k];
      if (&h == &grown || !live_heap_key(h.key) || h.samples < kMinSamples) continue;
      if (grown.key == "heapinuse" && h.key != "heapalloc") continue;
      // Nothing live at all, sample after sample, while the process grew.
      if (h.first <= 0 && h.max <= 0 && h.bytes) return &h;
      if (h.first <= 0) continue;
      if (h.last <= 1.25 * h.first && h.max <= 1.35 * h.first) return &h;
    }
    return nullptr;
  }

  // A runtime warning of a leak in its own words (the first one in the
  // input): weaker than a series that shows the growth, it names the cause
  // the program itself suspects.
  bool leak_warning(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    // Node's "Possible EventEmitter memory leak detected. 11 error listeners added" counts
    // listeners on one emitter (more than 10): no memory figure, and most often harmless.
    bool said = (text::icontains(s, "memory leak detected") && !text::contains(s, "EventEmitter memory leak")) || text::contains(s, "detected memory leaks") ||
                (text::contains(s, "LEAK: ") && text::contains(s, "release()")) ||
                text::contains(s, "likely to create a memory leak") || text::contains(s, "To prevent a memory leak");
    // An Erlang crash dump's process whose mailbox was never drained:
    // "Message queue length: 21904711" (a million messages or more held).
    if (auto q = text::after(s, "Message queue length: ")) {
      auto n = text::parse_u64(*q);
      if (!n || *n < kHeldQueue || queue_warned_) return n.has_value();
      queue_warned_ = true;
      Fact f = make_fact(line, FactKind::memory_usage, Family::runtime);
      f.strength = 0.5f;
      f.detail = fmt::format("growing: a process's message queue held {} messages, never drained", *n);
      out.add(std::move(f));
      return true;
    }
    if (!said) return false;
    if (!warned_) {
      warned_ = true;
      Fact f = make_fact(line, FactKind::memory_usage, Family::runtime);
      f.strength = 0.5f;
      f.detail = "growing: the runtime warns of a leak";
      out.add(std::move(f));
    }
    return true;
  }
  bool warned_ = false;
  bool queue_warned_ = false;
  static constexpr uint64_t kHeldQueue = 1000000;

  void add(const std::string& key, double value, bool bytes, const Line& line) {
    source_ = line.source;
    Series* x = nullptr;
    for (size_t k = 0; k < used_; ++k)
      if (series_[k].key == key) x = &series_[k];
    if (!x) {
      if (used_ == kKeys) return;
      x = &series_[used_++];
      x->key = key;
      x->bytes = bytes;
      x->first = value;
    }
    // A figure without a unit in a series of sizes (or one with a unit in a
    // series of counts) is another quantity under the same name: "memory: 0"
    // in a worker's summary after "Process memory: 3.71 GB" lines.
    if (x->bytes != bytes) return;
    const uint64_t shape = shape_hash(line.text);
    if (x->samples == 0) x->first_shape = shape, x->first_line = line.number;
    else if (shape == x->first_shape) x->first_recurs = true;
    if (x->samples > 0 && x->last_line < elided_ && x->elided_at == SIZE_MAX && x->kept.size() < kKept) x->elided_at = x->kept.size();
    if (x->samples > 0 && value > x->last) ++x->rises;
    if (x->samples == 0 || value > x->max) ++x->highs;
    if (x->samples > 0 && x->last > 0 && value < x->last) x->worst_drop = std::max(x->worst_drop, (x->last - value) / x->last);
    x->last = value;
    if (x->kept.size() < kKept) x->kept.push_back(value);
    x->max = std::max(x->max, value);
    ++x->samples;
    x->last_line = line.number;
    x->last_text.assign(line.text.substr(0, 300));
  }

  // `ps ... -o pid,etime,rss,comm`: the columns of the rows that follow,
  // header or not. "rss=" (no header) is the bare form above.
  bool ps_columns(std::string_view s) {
    size_t p = s.find("ps ");
    if (p == std::string_view::npos || (p > 0 && s[p - 1] != ' ' && s[p - 1] != '$' && s[p - 1] != '#')) return false;
    // The list follows -o, or a group of flags that ends in o ("-eo", "-axo").
    std::string_view list;
    std::string_view rest = s.substr(p + 3);
    for (int tokens = 0; tokens < 8 && !rest.empty(); ++tokens) {
      rest = text::trim_left(rest);
      std::string_view tok = text::take_until(rest, " |;&");
      rest.remove_prefix(tok.size());
      if (tok.size() >= 2 && tok[0] == '-' && tok[1] != '-' && tok.back() == 'o') {
        list = text::take_until(text::trim_left(rest), " |;&");
        break;
      }
    }
    if (list.empty() || list.find('=') != std::string_view::npos) return false;
    size_t rss = kNoColumn, pid = kNoColumn, etime = kNoColumn, k = 0;
    while (!list.empty() && k < 16) {
      std::string_view col = text::take_until(list, ",");
      if (col == "rss" || col == "rssize" || col == "rsz") rss = k;
      if (col == "pid") pid = k;
      if (col == "etime") etime = k;
      list.remove_prefix(std::min(list.size(), col.size() + 1));
      ++k;
    }
    if (rss == kNoColumn) return false;
    rss_column_ = rss;
    pid_column_ = pid;
    etime_column_ = etime;
    return true;
  }

  struct PidSeries {
    uint64_t pid = 0, first_kib = 0, last_kib = 0, first_s = 0, last_s = 0, last_line = 0;
    std::string last_text;
    int samples = 0;
  };

  void pid_sample(std::string_view pid_word, std::string_view etime_word, uint64_t kib, const Line& line) {
    auto pid = text::parse_u64(pid_word);
    auto up = platform::parse_ps_etime(etime_word);
    if (!pid || !up) return;
    auto it = std::find_if(pids_.begin(), pids_.end(), [&](const PidSeries& x) { return x.pid == *pid; });
    if (it == pids_.end()) {
      if (pids_.size() >= kPids) return;
      pids_.push_back({*pid, kib, kib, *up, *up, 0, {}, 0});
      it = pids_.end() - 1;
    }
    if (*up < it->last_s) return;  // an older sample pasted later, or the pid reused
    it->last_kib = kib;
    it->last_s = *up;
    it->last_line = line.number;
    it->last_text = std::string(line.text.substr(0, 256));
    ++it->samples;
  }

  void pid_growth(FactSink& out) {
    for (const PidSeries& x : pids_) {
      const double first = static_cast<double>(x.first_kib) * 1024.0, last = static_cast<double>(x.last_kib) * 1024.0;
      if (x.samples < 2 || x.first_s < kPidWarmS || x.last_s < x.first_s + kPidSpanS) continue;
      if (last < 1.5 * first || last - first < kPidGrowthMin) continue;
      Line at{x.last_text, x.last_line, {}, source_};
      Fact f = make_fact(at, FactKind::memory_usage, Family::python);
      f.strength = 0.7f;
      f.pid = static_cast<int64_t>(x.pid);
      f.detail = fmt::format("growing rss of pid {} from {} to {} over {:.1f} h of its run", x.pid, units::format_bytes(clamped_bytes(first)),
                             units::format_bytes(clamped_bytes(last)), static_cast<double>(x.last_s - x.first_s) / 3600.0);
      f.usage = clamped_bytes(last);
      f.count = static_cast<uint64_t>(x.samples);
      out.add(std::move(f));
    }
  }

  struct Template {
    uint64_t hash = 0;
    std::string shape;       // kept for the series' name
    bool by_design = false;  // climbs_by_design: never a series
    uint64_t count = 0, line = 0;
    double first = 0;
    Line first_line{};
  };
  std::vector<Template> templates_;
  size_t rss_column_ = 0, pid_column_ = kNoColumn, etime_column_ = kNoColumn;
  size_t col_ = kNoColumn, col_words_ = 0;  // a header's memory column (column_table)
  double col_unit_ = 0;
  uint64_t col_until_ = 0;
  std::string col_key_;
  std::vector<PidSeries> pids_;
  SeriesColumns columns_;
  uint64_t go_parked_ = 0, go_line_ = 0;
  std::string go_text_;
  FreeUnits free_units_;
  uint64_t table_until_ = 0, bare_until_ = 0;
  uint64_t elided_ = 0;  // the last line that marks lines cut out of the paste
  std::array<Series, kKeys> series_;
  size_t used_ = 0;
  const SourceContext* source_ = nullptr;
};

}  // namespace

const RecognizerEntry kMemorySeriesEntry{
    "memory_series", Family::python, kPatterns, [] { return std::unique_ptr<Recognizer>(new MemorySeries); }};

}  // namespace aimem
