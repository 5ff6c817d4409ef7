// `free` output (src/recognize/families/host_tools.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> hosts(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::host_state) out.push_back(f);
  return out;
}

TEST(HostTools, FreeHumanReadable) {
  auto h = hosts(R"($ free -h
               total        used        free      shared  buff/cache   available
Mem:            15Gi       1.2Gi        12Gi       120Mi       2.2Gi        13Gi
Swap:          2.0Gi          0B       2.0Gi
)");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].total, 15 * units::GiB);
  EXPECT_EQ(h[0].free, 13 * units::GiB);  // the available column
  EXPECT_EQ(h[0].detail, "host RAM");
}

// top's summary lines (procps-ng; modelled on joblib/joblib#843's snapshots,
// values ours): available from the swap line's "avail Mem", else free and
// buff/cache; MiB with top -E m. A pool's worker gone without a word while
// the host shows nothing available is the host's memory.
TEST(HostTools, TopsSummaryIsTheHost) {
  auto h = hosts("top - 10:58:02 up 2 days, 17:53,  4 users,  load average: 11.87, 11.64, 10.92\n"
                 "KiB Mem : 16318748 total,  9110236 free,  6402120 used,   806392 buff/cache\n"
                 "KiB Swap:  2097148 total,  2097148 free,        0 used.  9512216 avail Mem\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].total, 16318748 * units::KiB);
  EXPECT_EQ(h[0].free, 9512216 * units::KiB);
  auto m = hosts("MiB Mem :  15936.3 total,    120.5 free,  15700.1 used,    115.7 buff/cache\n");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(static_cast<double>(*m[0].free), (120.5 + 115.7) * units::MiB, units::MiB);
  const std::string pool = "KiB Mem : 16318748 total,       52 free, 16290100 used,    28596 buff/cache\n"
                           "joblib.externals.loky.process_executor.BrokenProcessPool: A process in the executor was terminated abruptly, "
                           "the pool is not usable anymore.\n";
  EXPECT_EQ(test::diagnose_text(pool).layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text("KiB Mem : 16318748 total, 12010040 free,  3900100 used,   408608 buff/cache\n" +
                                pool.substr(pool.find('\n') + 1))
                .layer,
            Layer::unknown);
}

TEST(HostTools, BareNumbersFollowTheCommandsUnit) {
  const char* kib = R"(               total        used        free      shared  buff/cache   available
Mem:        16318412     1234567    12345678      123456     2345678    14567890
)";
  auto a = hosts(kib);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].total, uint64_t{16318412} * 1024);
  auto m = hosts(std::string("# free -m\n") + kib);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].total, uint64_t{16318412} * units::MiB);
}

TEST(HostTools, OldLayoutUsesTheBuffersCacheRow) {
  auto h = hosts(R"(             total       used       free     shared    buffers     cached
Mem:       8061448    7854436     207012          0     117688    6373036
-/+ buffers/cache:    1363712    6697736
Swap:            0          0          0
)");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].total, uint64_t{8061448} * 1024);
  EXPECT_EQ(h[0].free, uint64_t{6697736} * 1024);
}

TEST(HostTools, OtherMemLinesAreNotFree) {
  // top's summary is read as top's (TopsSummaryIsTheHost), not as a `free` row; prose after "Mem:" is nothing.
  auto h = hosts("MiB Mem :  15890.4 total,   1234.5 free,   3000.0 used,  11655.9 buff/cache\nMem: the memory subsystem\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NEAR(static_cast<double>(*h[0].total), 15890.4 * units::MiB, units::MiB);
  EXPECT_TRUE(hosts("Mem: the memory subsystem\n").empty());
}

// /proc/meminfo as the kernel prints it, and a watcher's one-line
// MemTotal=/MemAvailable= form: the host's total and what is available.
TEST(HostTools, MeminfoInBothFormsIsTheHostsRoom) {
  auto cat = hosts("$ cat /proc/meminfo\nMemTotal:       32768000 kB\nMemFree:          401200 kB\nMemAvailable:    1638400 kB\nBuffers:           10240 kB\n");
  ASSERT_EQ(cat.size(), 1u);
  EXPECT_EQ(cat[0].total, std::optional<uint64_t>(32768000ULL * 1024));
  EXPECT_EQ(cat[0].free, std::optional<uint64_t>(1638400ULL * 1024));
  auto watch = hosts("[memwatch] MemTotal=16371152kB MemAvailable=9813404kB SwapFree=4194300kB\n"
                     "[memwatch] MemTotal=16371152kB MemAvailable=118904kB SwapFree=12264kB\n");
  ASSERT_EQ(watch.size(), 2u);
  EXPECT_EQ(watch[1].free, std::optional<uint64_t>(118904ULL * 1024));
  // MemAvailable without its MemTotal says nothing of the share.
  EXPECT_TRUE(hosts("MemAvailable:    1638400 kB\n").empty());
}

// /proc/meminfo's SUnreclaim beside its MemTotal: the kernel's own slab. At
// half the RAM or more beside a host-wide kill, kernel memory accumulated
// (modelled on the kernel's Mem-Info reading in kernel_oom.cc; a driver's
// kmalloc-2048 slab on a 3.10 host; our figures).
TEST(HostTools, UnreclaimableSlabOverHalfTheRamIsKernelMemoryAccumulated) {
  const std::string kill =
      "[Tue Mar  9 02:40:17 2021] Out of memory: Kill process 5120 (java) score 212 or sacrifice child\n"
      "[Tue Mar  9 02:40:17 2021] Killed process 5120 (java), UID 1000, total-vm:30410040kB, anon-rss:25400112kB, file-rss:0kB, shmem-rss:0kB\n";
  const std::string meminfo = "# grep -E '^(MemTotal|MemAvailable|Slab|SUnreclaim):' /proc/meminfo\nMemTotal:       131900420 kB\n"
                              "MemAvailable:     1204332 kB\nSlab:           92110008 kB\n";
  Diagnosis d = test::diagnose_text(kill + meminfo + "SUnreclaim:     91804416 kB\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  ASSERT_FALSE(d.incidents.empty());
  std::string reasons;
  for (const auto& r : d.incidents[0].reasons) reasons += r + "\n";
  EXPECT_NE(reasons.find("unreclaimable kernel slab"), std::string::npos) << reasons;
  // A slab of a few GiB on the same host says nothing of the cause.
  EXPECT_NE(test::diagnose_text(kill + meminfo + "SUnreclaim:      2804416 kB\n").cause, Cause::leak_or_accumulation);
  // SUnreclaim with no MemTotal in its listing is no share of anything.
  EXPECT_NE(test::diagnose_text(kill + "SUnreclaim:     91804416 kB\n").cause, Cause::leak_or_accumulation);
}

std::vector<Fact> exhausted(const std::string& text) { return test::facts_of_kind(text, FactKind::host_exhausted); }

// A snapshot with RAM and swap both used up is the host's memory exhausted,
// a failure of its own (modelled on a thrashing 1 GiB VPS pasted with `free
// -m` and a busy kswapd0, and on /proc/meminfo and top as users paste them;
// our own figures). Swap to spare is only swapping; RAM to spare is nothing.
TEST(HostTools, RamAndSwapBothUsedUpIsTheHostExhausted) {
  const std::string full =
      "$ free -m\n"
      "               total        used        free      shared  buff/cache   available\n"
      "Mem:             981         902          38           3          40          21\n"
      "Swap:           2047        2047           0\n";
  auto x = exhausted(full);
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0].layer, Layer::host_ram);
  EXPECT_EQ(*x[0].free, 21 * units::MiB);
  EXPECT_EQ(*x[0].total, 981 * units::MiB);
  EXPECT_EQ(x[0].where.line, 4u);
  ASSERT_EQ(x[0].extra.size(), 1u);
  EXPECT_EQ(x[0].extra[0].first, 3u);  // the Mem: row, quoted beside it
  // No swap at all: the RAM alone decides.
  std::string none = full;
  none.replace(none.find("Swap:           2047        2047           0"), 44, "Swap:              0           0           0");
  EXPECT_EQ(exhausted(none).size(), 1u);
  // Half the swap free: the host is swapping, not out of memory.
  std::string spare = full;
  spare.replace(spare.find("2047        2047           0"), 27, "2047        1023        1024");
  EXPECT_TRUE(exhausted(spare).empty());
  // Four percent of the RAM available with the swap nearly gone is used up
  // too (a 31 GiB host with 1.1 GiB available and 95 MiB of its swap left
  // thrashes as one with 21 MiB does); ten percent is not.
  std::string four = full;
  four.replace(four.find("40          21"), 14, "40          39");
  EXPECT_EQ(exhausted(four).size(), 1u);
  std::string roomy = full;
  roomy.replace(roomy.find("40          21"), 14, "40          98");
  EXPECT_TRUE(exhausted(roomy).empty());
  // The figures the RAM row is read with still come out as before.
  EXPECT_EQ(hosts(full).size(), 1u);
}

TEST(HostTools, MeminfoAndTopSayTheSame) {
  auto m = exhausted("$ cat /proc/meminfo\n"
                     "MemTotal:        8049244 kB\n"
                     "MemFree:           91212 kB\n"
                     "MemAvailable:     120344 kB\n"
                     "Buffers:             812 kB\n"
                     "Cached:            81244 kB\n"
                     "SwapCached:        12044 kB\n"
                     "SwapTotal:       4194300 kB\n"
                     "SwapFree:          10240 kB\n");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(*m[0].free, 120344 * units::KiB);
  auto t = exhausted("KiB Mem :  8049244 total,    91212 free,  7877220 used,    80812 buff/cache\n"
                     "KiB Swap:  4194300 total,    10240 free,  4184060 used.    60212 avail Mem\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(*t[0].free, 60212 * units::KiB);
  // A watcher's one-line figures carry no swap total: nothing to compare.
  EXPECT_TRUE(exhausted("[memwatch] MemTotal=16371152kB MemAvailable=118904kB SwapFree=12264kB\n").empty());
  EXPECT_EQ(hosts("[memwatch] MemTotal=16371152kB MemAvailable=118904kB SwapFree=12264kB\n").size(), 1u);
}

// Alone it is the answer (host RAM); beside a failure that explains the
// evidence (an allocator's ENOMEM) it is context, and it does not hide the
// generic reader's line.
TEST(HostTools, AnExhaustedSnapshotAnswersOnlyWhereNothingElseDoes) {
  const std::string snapshot =
      "$ free -m\n"
      "               total        used        free      shared  buff/cache   available\n"
      "Mem:            3916        3702          71           2         142          97\n"
      "Swap:              0           0           0\n";
  Diagnosis alone = test::diagnose_text(snapshot);
  EXPECT_EQ(alone.layer, Layer::host_ram);
  ASSERT_EQ(alone.incidents.size(), 1u);
  EXPECT_NE(alone.incidents[0].reasons.at(0).find("it has no swap"), std::string::npos);
  Diagnosis beside = test::diagnose_text("2026-05-14T04:41:37: PM2 error: Error: spawn ENOMEM\n" + snapshot);
  EXPECT_EQ(beside.layer, Layer::host_ram);
  ASSERT_EQ(beside.incidents.size(), 1u);
  EXPECT_EQ(beside.incidents[0].reasons.at(0).find("it has no swap"), std::string::npos);
}

// htop's meters (used of total, its used without buffers and cache; modelled
// on a datasets map() thread's htop paste, own figures): RAM and swap used up
// are the host exhausted, and four copies of one script holding the table are
// the parallel workers. A meter with room to spare is only the host's state.
TEST(HostTools, HtopsMetersAndTable) {
  const std::string meters =
      "  Mem[|||||||||||||||||||||||||||||||||||||||||||||15.4G/15.6G]   Tasks: 87, 412 thr; 5 running\n"
      "  Swp[|||||||||||||||||||||||||||||||||||         3.71G/4.00G]   Load average: 6.12 5.40 3.33\n";
  auto h = hosts(meters);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NEAR(static_cast<double>(*h[0].total), 15.6 * units::GiB, 0.01 * units::GiB);
  EXPECT_NEAR(static_cast<double>(*h[0].free), 0.2 * units::GiB, 0.01 * units::GiB);
  Diagnosis d = test::diagnose_text(
      meters +
      "    PID USER      PRI  NI  VIRT   RES   SHR S CPU% MEM%   TIME+  Command\n"
      "  14021 rosko      20   0 9.87G 3.52G 12.1M D 38.2 22.6  4:11.02 python prepare.py\n"
      "  14022 rosko      20   0 9.81G 3.49G 11.8M D 35.9 22.4  4:09.55 python prepare.py\n"
      "  14023 rosko      20   0 9.79G 3.47G 11.6M D 33.0 22.2  4:08.71 python prepare.py\n"
      "  14024 rosko      20   0 9.74G 3.44G 11.9M D 21.4 22.1  4:02.88 python prepare.py\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text("  Mem[|||||||         4.10G/15.6G]\n  Swp[            0K/4.00G]\n").layer, Layer::none);
}

// Windows' systeminfo (in MB, with thousands separators): the physical pair
// is the host's RAM, and the commit limit with what is left of it plays
// swap's part (modelled on Windows build machines pasted beside a compiler's
// out-of-heap error). Our own figures.
TEST(HostTools, WindowsSysteminfoIsTheHostsRamAndItsCommitLimit) {
  auto f = test::facts_of_kind("Total Physical Memory:     16,301 MB\nAvailable Physical Memory: 1,204 MB\n", FactKind::host_state);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].total, 16301ull * 1024 * 1024);
  EXPECT_EQ(f[0].free, 1204ull * 1024 * 1024);
  const std::string low = "Total Physical Memory:     16,301 MB\nAvailable Physical Memory: 402 MB\n";
  EXPECT_EQ(test::facts_of_kind(low + "Virtual Memory: Max Size:  16,301 MB\nVirtual Memory: Available: 310 MB\n", FactKind::host_exhausted).size(),
            1u);
  EXPECT_TRUE(test::facts_of_kind(low + "Virtual Memory: Max Size:  40,301 MB\nVirtual Memory: Available: 22,310 MB\n",
                                  FactKind::host_exhausted)
                  .empty());
}

// macOS says its memory is used up in two commands: memory_pressure's free
// share and sysctl's swap usage (modelled on Apple-silicon leak reports with
// MCP servers and node bridges; our figures). Swap with room left is only
// swapping.
TEST(HostTools, AMacsMemoryPressureAndSwapBothAtTheirEndAreTheHostUsedUp) {
  auto text = [](const char* swap_free) {
    return std::string("$ memory_pressure | tail -1\nSystem-wide memory free percentage: 3%\n$ sysctl vm.swapusage\n"
                       "vm.swapusage: total = 6144.00M  used = 5530.25M  free = ") +
           swap_free + "  (encrypted)\n";
  };
  Diagnosis full = test::diagnose_text(text("413.75M"));
  EXPECT_EQ(full.layer, Layer::host_ram) << test::reason_text(full);
  EXPECT_NE(test::reason_text(full).find("memory_pressure"), std::string::npos) << test::reason_text(full);
  EXPECT_EQ(test::diagnose_text(text("2613.75M")).layer, Layer::none);
}

}  // namespace
}  // namespace aimem
