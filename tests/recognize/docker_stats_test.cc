// `docker stats` tables (src/recognize/families/docker_stats.cc): usage per
// container, and whether the LIMIT column is a limit or the host's memory.
#include <gtest/gtest.h>

#include <cmath>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::GiB;
using units::MiB;

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

// Docker 1.12 without a NAME column and with decimal units, every container
// showing the VM's memory as its limit (modelled on moby/moby#27727; values ours).
const char* kOldUnlimited = R"([root@dockerhost ~]# docker stats --no-stream
CONTAINER           CPU %               MEM USAGE / LIMIT     MEM %               NET I/O             BLOCK I/O             PIDS
5b1e0f7c2a91        0.41%               301.2 MB / 16.66 GB   1.81%               0 B / 0 B           212.9 kB / 3.1 MB     0
9c4d2e8a7f13        0.07%               152.7 MB / 16.66 GB   0.92%               0 B / 0 B           2.6 MB / 3.05 GB      0
)";

TEST(DockerStats, UnlimitedContainersShowTheHostsMemoryAsHostState) {
  auto u = of_kind(kOldUnlimited, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].container, "5b1e0f7c2a91");
  EXPECT_EQ(u[0].usage, 301200000u);  // decimal MB
  EXPECT_FALSE(u[0].limit);           // no limit was set
  EXPECT_TRUE(of_kind(kOldUnlimited, FactKind::memory_limit).empty());
  auto h = of_kind(kOldUnlimited, FactKind::host_state);
  ASSERT_EQ(h.size(), 1u);  // one host, however many rows show it
  EXPECT_EQ(h[0].total, 16660000000u);
  // A kill beside it is the host running out, not a container limit.
  Diagnosis d = test::diagnose_text(std::string(kOldUnlimited) +
                                    "Out of memory: Killed process 4242 (java) total-vm:9263128kB, anon-rss:7340032kB, file-rss:0kB, shmem-rss:0kB\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text(std::string(kOldUnlimited) + "Killed\n").layer, Layer::host_ram);
}

// The current format with a NAME column, no limit set on a 32 GiB host
// (modelled on nestybox/sysbox#303; values ours).
TEST(DockerStats, ModernTableWithTheHostsFigureIsNoLimit) {
  const char* t = R"(CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O          BLOCK I/O        PIDS
1b424980eda3   trainer   395.12%   29.87GiB / 31.34GiB   95.31%    71.6MB / 152MB   10.5MB / 8.19kB  470
)";
  auto u = of_kind(t, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].container, "trainer");
  EXPECT_NEAR(static_cast<double>(*u[0].usage), 29.87 * GiB, 1.0);
  EXPECT_FALSE(u[0].limit);
  auto h = of_kind(t, FactKind::host_state);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NEAR(static_cast<double>(*h[0].total), 31.34 * GiB, 1.0);
  // An exit 137 with usage near the host's figure is not a container limit.
  DiagnoseOptions o;
  o.exit_code = 137;
  EXPECT_NE(test::diagnose_texts({t}, o).layer, Layer::container_limit);
}

// A real limit: the figure someone typed (-m 100m, 2g, 1500m, 3000m), as
// memory_limit and on the usage fact (modelled on aws/amazon-ecs-agent#794,
// whose 1.12 table printed binary units with a space; values ours).
TEST(DockerStats, TypedLimitsAreMemoryLimits) {
  const char* t = R"(CONTAINER           CPU %               MEM USAGE / LIMIT     MEM %               NET I/O             BLOCK I/O           PIDS
43a240399e21        3.82%               99.61 MiB / 100 MiB   99.61%              0 B / 0 B           45.72 GB / 0 B      0
)";
  auto l = of_kind(t, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 100 * MiB);
  EXPECT_EQ(l[0].container, "43a240399e21");
  EXPECT_TRUE(of_kind(t, FactKind::host_state).empty());
  Diagnosis d = test::diagnose_text(std::string(t) + "Killed\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);

  struct Case {
    const char* cell;
    uint64_t limit;
  } cases[] = {{"1.2GiB / 2GiB", 2 * GiB}, {"1.1GiB / 1.465GiB", 0}, {"2.5GiB / 2.93GiB", 0}, {"310MiB / 512MiB", 512 * MiB},
               {"1.9GiB / 4.883GiB", 0}};
  for (const auto& c : cases) {
    std::string row = "CONTAINER ID   NAME   CPU %   MEM USAGE / LIMIT   MEM %   NET I/O   BLOCK I/O   PIDS\n"
                      "a1b2c3d4e5f6   api    12.5%   " + std::string(c.cell) + "   60.00%   1kB / 0B   0B / 0B   9\n";
    auto lim = of_kind(row, FactKind::memory_limit);
    ASSERT_EQ(lim.size(), 1u) << c.cell;
    EXPECT_TRUE(of_kind(row, FactKind::host_state).empty()) << c.cell;
    if (c.limit) {
      EXPECT_EQ(lim[0].limit, c.limit) << c.cell;
    }
  }
}

// A host total printed elsewhere in the input decides a figure that looks
// typed (a 7.5 GiB VM), and stopped containers ("0B / 0B") give nothing.
TEST(DockerStats, HostTotalFromDockerInfoAndStoppedContainers) {
  const char* t = R"($ docker info | grep 'Total Memory'
 Total Memory: 7.5GiB
$ docker stats --no-stream
CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT   MEM %     NET I/O       BLOCK I/O     PIDS
0c9f1e2d3b4a   ollama    0.00%     6.9GiB / 7.5GiB     92.00%    1.1kB / 0B    0B / 0B       18
7d6e5f4a3b2c   old       0.00%     0B / 0B             0.00%     0B / 0B       0B / 0B       0
)";
  EXPECT_TRUE(of_kind(t, FactKind::memory_limit).empty());
  auto u = of_kind(t, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].container, "ollama");
  auto h = of_kind(t, FactKind::host_state);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h[0].total, static_cast<uint64_t>(7.5 * GiB));
  // /proc/meminfo's total decides it the same way.
  const char* meminfo = "MemTotal:        7864320 kB\n"
                        "CONTAINER ID   NAME     CPU %    MEM USAGE / LIMIT   MEM %    NET I/O      BLOCK I/O   PIDS\n"
                        "0c9f1e2d3b4a   ollama   0.00%    6.9GiB / 7.5GiB     92.00%   1.1kB / 0B   0B / 0B     18\n";
  EXPECT_TRUE(of_kind(meminfo, FactKind::memory_limit).empty());
  EXPECT_EQ(of_kind(meminfo, FactKind::host_state).size(), 1u);
}

TEST(DockerStats, OtherTablesWithPercentagesAreNotStats) {
  const char* t = R"(Filesystem      Size  Used Avail Use% Mounted on
/dev/sda1        98G   41G   53G  44% /
top - 10:00:01 up 3 days,  load average: 0.10, 0.20, 0.30
MiB Mem :  15923.4 total,   1024.1 free,  12000.2 used,   2899.1 buff/cache
)";
  EXPECT_TRUE(of_kind(t, FactKind::memory_usage).empty());
  EXPECT_TRUE(of_kind(t, FactKind::memory_limit).empty());
}

// --format 'table {{.Name}}\t{{.MemUsage}}' prints no percentages (modelled
// on elastic/elasticsearch-docker#43; our own names and sizes), and docker
// info's "Total Memory" has its unit after a blank. A container that is not
// the failing one holding most of an unlimited host took the memory.
TEST(DockerStats, NameAndUsageRowsAndAnotherContainerHoldingTheHost) {
  const std::string log =
      "OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000000a0000000, 1073741824, 0) failed; error='Cannot allocate "
      "memory' (errno=12)\n"
      "$ docker info 2>/dev/null | grep -i 'total memory'\n"
      "Total Memory: 7.664 GiB\n"
      "$ docker stats --no-stream --format 'table {{.Name}}\\t{{.MemUsage}}'\n"
      "NAME            MEM USAGE / LIMIT\n"
      "indexer         5.912GiB / 7.664GiB\n"
      "cache           22.1MiB / 7.664GiB\n";
  auto usage = of_kind(log, FactKind::memory_usage);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].container, "indexer");
  auto hosts = of_kind(log, FactKind::host_state);
  ASSERT_FALSE(hosts.empty());
  EXPECT_NEAR(double(*hosts[0].total), 7.664 * double(GiB), 0.01 * double(GiB));
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  // The same host with the memory spread across containers names nobody.
  std::string spread = log;
  spread.replace(spread.find("5.912GiB"), 8, "2.912GiB");
  EXPECT_NE(test::diagnose_text(spread).cause, Cause::other_process);
}

// The same table with {{.MemPerc}} after the usage ("NAME  MEM USAGE / LIMIT
// MEM %": no CPU column): rows read the same. One container holding over half
// of the unlimited host while another's allocation is refused took the memory
// (modelled on mailcow/mailcow-dockerized#3870's shape; our names and sizes).
TEST(DockerStats, NameUsageAndPercentRowsAndOneContainerOverHalfTheHost) {
  const std::string log =
      "db-1  | 2021-03-02  7:12:40 0 [ERROR] InnoDB: Cannot allocate memory for the buffer pool\n"
      "$ docker stats --no-stream --format 'table {{.Name}}\\t{{.MemUsage}}\\t{{.MemPerc}}'\n"
      "NAME               MEM USAGE / LIMIT     MEM %\n"
      "scanner-1          2.051GiB / 3.844GiB   53.36%\n"
      "web-1              301.2MiB / 3.844GiB   7.65%\n";
  auto usage = of_kind(log, FactKind::memory_usage);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].container, "scanner-1");
  EXPECT_NEAR(double(*usage[0].usage), 2.051 * double(GiB), 0.01 * double(GiB));
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  // Under half: nobody is named.
  std::string spread = log;
  spread.replace(spread.find("2.051GiB"), 8, "1.651GiB");
  EXPECT_NE(test::diagnose_text(spread).cause, Cause::other_process);
}

// A single row of `docker stats` beside a failure that names no container:
// the row is the failed workload's own, pasted to show it (modelled on a
// langflow container whose gunicorn worker was SIGKILLed; our figures), not a
// neighbour. A kernel kill whose victim held less than half the row is
// another matter: the row's container is a neighbour that held the host.
TEST(DockerStats, OneRowBesideAFailureThatNamesNoContainerIsItsOwn) {
  const std::string stats =
      "$ docker stats --no-stream langflow\n"
      "CONTAINER ID   NAME       CPU %     MEM USAGE / LIMIT     MEM %     NET I/O          BLOCK I/O       PIDS\n"
      "c41e0d7a9b2f   langflow   0.41%     1.31GiB / 1.914GiB    68.40%    224MB / 2.74GB   196GB / 5.4GB   15\n";
  Diagnosis own = test::diagnose_text("[2025-08-27 09:12:51 +0000] [7] [ERROR] Worker (pid:1187) was sent SIGKILL! Perhaps out of memory?\n" + stats);
  EXPECT_NE(own.cause, Cause::other_process) << test::reason_text(own);
  Diagnosis neighbour = test::diagnose_text(
      "[Thu Jan  9 14:22:51 2025] Out of memory: Killed process 412877 (python3) total-vm:1472120kB, anon-rss:403384kB, "
      "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1820kB oom_score_adj:0\n" + stats);
  EXPECT_EQ(neighbour.cause, Cause::other_process) << test::reason_text(neighbour);
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

// A container sampled again and again as a loop's `--format '{{.MemUsage}}'`
// prints it (modelled on alphacep/vosk-server#44; our figures): a series that
// grew. Its count of samples is no count of OOM kills in the headroom table.
TEST(DockerStats, ASampledSeriesCountsNoOomKills) {
  const std::string text =
      "$ for n in 1 5 20 50; do ./send_batch.sh $n; docker stats --no-stream --format '{{.MemUsage}}' asr; done\n"
      "1.124GiB / 4GiB\n"
      "1.902GiB / 4GiB\n"
      "3.118GiB / 4GiB\n"
      "3.994GiB / 4GiB\n";
  Diagnosis d = test::diagnose_text(text);
  ASSERT_FALSE(d.headroom.empty());
  for (const Headroom& h : d.headroom) EXPECT_EQ(h.note.find("OOM kills"), std::string::npos) << h.pool << ": " << h.note;
}

}  // namespace
}  // namespace aimem
