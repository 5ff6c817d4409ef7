// Operating-system limits that fail like memory (src/recognize/families/
// os_limits.cc). Inputs written here in each program's format with our own
// values, modelled on an OpenSearch Helm chart's pods failing the bootstrap
// check (opensearch-project/helm-charts threads), a Kafka broker's "Map
// failed" with thousands of partitions, and a Maven test run refused a thread
// at the per-user process limit on macOS.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(OsLimits, TheBootstrapChecksMapCountIsNotMemory) {
  Diagnosis d = diagnose_text(
      "ERROR: [1] bootstrap checks failed\n"
      "[1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]\n"
      "ERROR: OpenSearch did not exit normally - check the logs at /usr/share/opensearch/logs/search.log\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  ASSERT_FALSE(d.incidents[0].fixes.empty());
  EXPECT_NE(d.incidents[0].fixes[0].action.find("vm.max_map_count"), std::string::npos);
}

// The shell's fork refused with EAGAIN is the process or thread limit, not
// memory; with ENOMEM ("fork: Cannot allocate memory") it may be memory.
TEST(OsLimits, ForkRefusedWithEagainIsTheProcessLimitNotMemory) {
  Diagnosis d = diagnose_text("$ ./start-workers.sh\n./start-workers.sh: fork: retry: Resource temporarily unavailable\n"
                              "./start-workers.sh: fork: retry: Resource temporarily unavailable\n"
                              "./start-workers.sh: fork: Resource temporarily unavailable\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_EQ(d.incidents.size(), 1u);
  EXPECT_NE(d.incidents[0].summary.find("process"), std::string::npos) << d.incidents[0].summary;
  EXPECT_NE(diagnose_text("bash: fork: Cannot allocate memory\n").layer, Layer::not_memory);
}

TEST(OsLimits, MapFailedBesideTheDefaultMapCountIsNotMemory) {
  const std::string fail =
      "java.io.IOException: Map failed\n\tat sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:940)\n"
      "Caused by: java.lang.OutOfMemoryError: Map failed\n\tat sun.nio.ch.FileChannelImpl.map0(Native Method)\n";
  Diagnosis d = diagnose_text("$ sysctl vm.max_map_count\nvm.max_map_count = 65530\n" + fail);
  EXPECT_EQ(d.layer, Layer::not_memory);
  // Raised far past the default, the count is not what stopped it.
  EXPECT_NE(diagnose_text("$ sysctl vm.max_map_count\nvm.max_map_count = 1048576\n" + fail).layer, Layer::not_memory);
  EXPECT_NE(diagnose_text(fail).layer, Layer::not_memory);
}

// The files a program maps, counted past the mapping count: Go's own "cannot
// allocate memory" with 38 GiB free is the count's (modelled on an InfluxDB
// 1.7 start-up with one mapping per TSM file, influxdata/influxdb threads;
// counts and paths ours). Fewer files than the limit leave it a memory failure.
TEST(OsLimits, MappedFilesCountedPastTheMapCountMakeAnEnomemNotMemory) {
  const std::string fail =
      "ts=2019-01-10T14:02:55.310291Z lvl=info msg=\"Opened shard\" service=store op_name=tsdb_open path=/var/lib/influxdb/data/t1/autogen/88\n"
      "fatal error: runtime: cannot allocate memory\n\nruntime stack:\nruntime.throw(0x15d8f41, 0x1f)\n";
  const std::string limit = "$ sysctl vm.max_map_count\nvm.max_map_count = 65530\n";
  Diagnosis d = diagnose_text(fail + limit + "$ find /var/lib/influxdb/data -name '*.tsm' | wc -l\n68210\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  std::string why;
  for (const auto& r : d.incidents[0].reasons) why += r + "\n";
  EXPECT_NE(why.find("68210 areas"), std::string::npos) << why;
  EXPECT_NE(diagnose_text(fail + limit + "$ find /var/lib/influxdb/data -name '*.tsm' | wc -l\n4120\n").layer, Layer::not_memory);
}

TEST(OsLimits, ANativeThreadRefusedAtTheProcessLimitIsNotMemory) {
  const std::string fail =
      "Exception in thread \"batch-thread-311\" java.lang.OutOfMemoryError: unable to create new native thread\n"
      "\tat java.lang.Thread.start0(Native Method)\n";
  Diagnosis d = diagnose_text(fail + "$ ulimit -u\n709\n$ ps -M -u $(whoami) | wc -l\n     706\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  // A large limit far from the threads in use does not explain it.
  EXPECT_NE(diagnose_text(fail + "$ ulimit -u\n255000\n$ ps -eLf | wc -l\n     1200\n").layer, Layer::not_memory);
  // Nor does a limit with no refused thread beside it.
  EXPECT_EQ(diagnose_text("$ ulimit -u\n709\n$ ps -M -u $(whoami) | wc -l\n     706\n").layer, Layer::none);
  // `ulimit -a`'s row and the process's own thread count (ps -o nlwp),
  // modelled on a query engine's JVM at its user's process limit with
  // 150 GB free (prestodb/presto, 2017; our own figures).
  const std::string presto =
      "Query 20170516_081112_00213_8mhgs failed: java.lang.OutOfMemoryError: unable to create new native thread\n"
      "$ ulimit -a | grep -E 'max user processes|open files'\n"
      "open files                      (-n) 1024\n"
      "max user processes              (-u) 1024\n"
      "$ ps -o nlwp= -p $(pgrep -f PrestoServer)\n"
      " 1019\n";
  EXPECT_EQ(diagnose_text(presto).layer, Layer::not_memory) << test::reason_text(diagnose_text(presto));
  std::string few = presto;
  few.replace(few.find(" 1019"), 5, "  312");
  EXPECT_NE(diagnose_text(few).layer, Layer::not_memory);
}

// Modelled on a gateway whose JVM could not start a thread at its container's
// pids limit while memory was plentiful (membrane/api-gateway#562); our own
// container, figures and thread names.
TEST(OsLimits, ANativeThreadRefusedAtTheContainersPidsLimitIsNotMemory) {
  const std::string log =
      "$ docker inspect -f 'pids_limit={{.HostConfig.PidsLimit}} mem_limit={{.HostConfig.Memory}}' gw\n"
      "pids_limit=2048 mem_limit=4294967296\n"
      "$ docker stats --no-stream gw\n"
      "CONTAINER ID   NAME   CPU %   MEM USAGE / LIMIT     MEM %    NET I/O          BLOCK I/O       PIDS\n"
      "9b1d2e3f4a5c   gw     0.52%   611.4MiB / 4GiB       14.93%   3.1GB / 2.9GB    8.2MB / 0B      2048\n"
      "Exception in thread \"Poller\" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or "
      "process/resource limits reached\n";
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::not_memory);
  // Far below the limit, the same refusal is left to the memory evidence.
  std::string low = log;
  low.replace(low.find("0B      2048"), 12, "0B      212 ");
  EXPECT_NE(diagnose_text(low).layer, Layer::not_memory);
}

// The count is read from the table's rows only: a later line with a slash and
// a number at its end ("shard 2048 / 2048") is not a PIDS column, so the
// low count in the table still leaves the refusal to the memory evidence.
TEST(OsLimits, OnlyTheStatsTablesRowsCountTasks) {
  const std::string log =
      "pids_limit=2048 mem_limit=4294967296\n"
      "CONTAINER ID   NAME   CPU %   MEM USAGE / LIMIT     MEM %    NET I/O          BLOCK I/O       PIDS\n"
      "9b1d2e3f4a5c   gw     0.52%   611.4MiB / 4GiB       14.93%   3.1GB / 2.9GB    8.2MB / 0B      212\n"
      "\n"
      "2024-05-02 10:14:07 INFO indexing shard 2048 / 2048\n"
      "Exception in thread \"Poller\" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or "
      "process/resource limits reached\n";
  EXPECT_NE(diagnose_text(log).layer, Layer::not_memory);
  // The same line inside the table's rows would be counted.
  std::string in_table = log;
  in_table.replace(in_table.find("0B      212"), 11, "0B      2048");
  EXPECT_EQ(diagnose_text(in_table).layer, Layer::not_memory);
}

// The pids controller's own files and CRI-O's setting (modelled on
// openshift/origin#24360; our own pod and counts): a refused thread with
// pids.current at pids.max is the task limit, not memory; far below it, not.
TEST(OsLimits, ThePidsControllersFilesGiveTheLimitAndTheCount) {
  const std::string log =
      "Exception in thread \"dispatcher\" java.lang.OutOfMemoryError: unable to create new native thread\n"
      "        at java.lang.Thread.start0(Native Method)\n"
      "$ cat pids.max pids.current; grep pids_limit /etc/crio/crio.conf\n"
      "1024\n"
      "1024\n"
      "pids_limit = 1024\n";
  EXPECT_EQ(diagnose_text(log).layer, Layer::not_memory);
  std::string low = log;
  low.replace(low.find("1024\n1024\n"), 10, "1024\n87\n");
  EXPECT_NE(diagnose_text(low).layer, Layer::not_memory);
}

// The mapping count read with `cat` and failed in pyarrow's words (modelled
// on huggingface/datasets#6790; our own paths and counts); the locked-memory
// limit refusing an io_uring ring (modelled on qdrant/qdrant#2350); a
// panel's container_pid_limit beside docker stats' PIDS (pterodactyl/panel#3001).
TEST(OsLimits, MapCountMemlockAndAPanelsPidLimitAreNotMemory) {
  const std::string mmap =
      "OSError: Memory mapping file failed: Cannot allocate memory\n"
      "$ cat /proc/sys/vm/max_map_count\n"
      "65530\n";
  Diagnosis m = test::diagnose_text(mmap);
  EXPECT_EQ(m.layer, Layer::not_memory);
  EXPECT_NE(m.incidents.at(0).reasons.at(0).find("max_map_count 65530"), std::string::npos);
  std::string raised = mmap;
  raised.replace(raised.find("65530"), 5, "1048576");
  EXPECT_NE(test::diagnose_text(raised).layer, Layer::not_memory);

  const std::string uring =
      "[2023-08-01T09:10:53.246Z DEBUG segment::common::error_logging] Error while: Creating UringReader\n"
      "[2023-08-01T09:10:53.247Z ERROR collection::update_handler] Optimization error: IO Error: Cannot allocate memory (os error 12)\n"
      "$ grep -i 'locked' /proc/4410/limits\n"
      "Max locked memory         65536                65536                bytes\n";
  Diagnosis u = test::diagnose_text(uring);
  EXPECT_EQ(u.layer, Layer::not_memory);
  std::string unlimited = uring;
  unlimited.replace(unlimited.find("65536                65536"), 26, "unlimited            unlimited");
  EXPECT_NE(test::diagnose_text(unlimited).layer, Layer::not_memory);

  Diagnosis pids = test::diagnose_text(
      "[11:58:03 WARN]: Exception in thread \"pool-3\" java.lang.OutOfMemoryError: unable to create new native thread\n"
      "CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O          BLOCK I/O        PIDS\n"
      "b51c0e7a92d4   mc-main   38.21%    2.412GiB / 8.25GiB    29.24%    1.9GB / 2.41GB   412MB / 96.1MB   256\n"
      "# grep container_pid_limit /etc/pterodactyl/config.yml\n"
      "  container_pid_limit: 256\n");
  EXPECT_EQ(pids.layer, Layer::not_memory);
}

// KeyDB's zmalloc failing in a fork while the server's mappings sit a few
// areas under vm.max_map_count (modelled on Snapchat/KeyDB#451; figures
// ours): the count, not memory; far under it, the refusal stands.
TEST(OsLimits, AnAllocationFailureAtTheMappingCountIsTheCount) {
  auto log = [](const std::string& areas) {
    return "2187512:2093140:C 21 Jun 2022 13:40:14.001 # Out Of Memory allocating 98104 bytes!\n"
           "$ sysctl vm.max_map_count\n"
           "vm.max_map_count = 65530\n"
           "$ wc -l < /proc/2093117/maps\n" + areas + "\n";
  };
  EXPECT_EQ(test::diagnose_text(log("65527")).layer, Layer::not_memory);
  EXPECT_NE(test::diagnose_text(log("31200")).layer, Layer::not_memory);
}

}  // namespace
}  // namespace aimem
