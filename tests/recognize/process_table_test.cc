// Tables of processes with a memory column (src/recognize/families/
// process_table.cc) and what the diagnosis reads from them
// (src/diagnose/classify.cc, cause_from_process_table). Inputs written here
// with our own pids, names and sizes, in the formats the programs print:
// Ray's memory monitor's top users (python/ray/_private/memory_monitor.py,
// as pasted in vllm-project/vllm#872 and OpenRLHF threads), procps' ps -o
// and ps aux columns, and top's task area (procps-ng top(1)), as pasted
// beside JVM and host failures (opencb/cellbase#450).
#include <gtest/gtest.h>

#include <cmath>

#include "core/units.h"
#include "recognize/process_name.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> tables(const std::string& text) {
  std::vector<Fact> out;
  for (Fact& f : test::facts_of_kind(text, FactKind::memory_usage))
    if (f.detail == process_name::kTableDetail) out.push_back(std::move(f));
  return out;
}

bool said(const Diagnosis& d, std::string_view what) {
  for (const std::string& r : d.incidents.at(0).reasons)
    if (r.find(what) != std::string::npos) return true;
  return false;
}

constexpr const char* kRayKill =
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
    "Memory on the node (IP: 10.3.1.7, ID: 51c0e2) where the task (actor ID: 9a1f, name=EngineActor.__init__, pid=7714, "
    "memory used=21.40GB) was running was 240.12GB / 251.60GB (0.954372), which exceeds the memory usage threshold of 0.95. "
    "Ray killed this worker (ID: 77ab) because it was the most recently scheduled task; to see more information about memory "
    "usage on this node, use `ray logs raylet.out -ip 10.3.1.7`. To see the logs of the worker, use `ray logs worker-77ab*out -ip 10.3.1.7.` "
    "Top 10 memory users:\n"
    "PID\tMEM(GB)\tCOMMAND\n"
    "7711\t36.02\tray::EngineActor.generate\n"
    "7712\t35.87\tray::EngineActor.generate\n"
    "7713\t35.10\tray::EngineActor.wake_up\n"
    "7714\t21.40\tray::EngineActor.__init__\n"
    "7702\t30.55\tray::TrainerActor.fit\n"
    "7690\t2.31\tpython train_rl.py --engines 4\n";

TEST(ProcessTable, RaysTopUsersAreGroupedByActorClass) {
  auto t = tables(kRayKill);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].process, "EngineActor");
  EXPECT_EQ(*t[0].sequences, 4u);
  EXPECT_EQ(*t[0].usage, 128390000000ull);  // 36.02 + 35.87 + 35.10 + 21.40 GB
  EXPECT_EQ(*t[0].total, 161250000000ull);
  EXPECT_EQ(t[1].process, "TrainerActor");
  EXPECT_EQ(t[2].process, "python train_rl.py");
  EXPECT_EQ(t[0].where.line, 3u);  // the header's line
}

TEST(ProcessTable, PsAuxAndTopColumnsAreReadByTheirHeader) {
  auto aux = tables(
      "$ ps aux --sort=-rss | head -4\n"
      "USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n"
      "svc      20411 96.0 41.2 9912340 6512004 ?     Sl   09:12  41:07 /usr/lib/jvm/bin/java -Xmx6g -jar indexer.jar\n"
      "postgres  1811  1.2  9.8 2211456 1550212 ?     Ss   Mar02   3:10 postgres: checkpointer\n"
      "root       922  0.3  0.4  812344  65536 ?      Ssl  Mar02   1:55 /usr/bin/containerd\n");
  ASSERT_EQ(aux.size(), 3u);
  EXPECT_EQ(aux[0].process, "java indexer.jar");  // a JVM by its jar
  EXPECT_EQ(*aux[0].usage, 6512004ull * 1024);
  EXPECT_EQ(aux[1].process, "postgres");
  auto top = tables(
      "top - 10:41:02 up 3 days,  2:11,  1 user,  load average: 7.90, 7.41, 6.88\n"
      "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
      "  30117 app       20   0   14.1g  11.2g  20480 S 180.1  71.6  88:02.11 python3\n"
      "   2210 root      20   0 1823456 401220  41876 S   2.0   2.5   4:10.34 dockerd\n");
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].process, "python3");
  EXPECT_EQ(*top[0].usage, static_cast<uint64_t>(std::llround(11.2 * 1024 * 1024 * 1024)));
  EXPECT_EQ(*top[1].usage, 401220ull * 1024);
}

// A ps loop over one process is a series over time, not a snapshot of who
// held the memory (memory_series.cc reads it): the same PID twice drops the
// table. A table's rows end at the first line that is not one.
TEST(ProcessTable, TheSamePidTwiceIsNotASnapshotAndATableEndsAtItsLastRow) {
  EXPECT_TRUE(tables("  PID   RSS COMMAND\n"
                     " 4410 812000 worker\n"
                     " 4410 990112 worker\n")
                  .empty());
  auto t = tables(
      "  PID   RSS COMMAND\n"
      " 5120 1163520 slack\n"
      "INFO restarting the exporter\n"
      " 5121 9000000 exporter\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].process, "slack");
}

TEST(ProcessTable, ProgramNamesGroupCopies) {
  EXPECT_EQ(process_name::program("ray::LLMRayActor.__init__"), "LLMRayActor");
  EXPECT_EQ(process_name::program("/opt/conda/bin/python3.10 -u /srv/app/worker.py --port 9000"), "python3.10 worker.py");
  EXPECT_EQ(process_name::program("python -m vllm.entrypoints.api_server --model m"), "python -m vllm.entrypoints.api_server");
  EXPECT_EQ(process_name::program("/usr/sbin/mysqld --user=mysql"), "mysqld");
  EXPECT_EQ(process_name::program("[kworker/3:1-events]"), "");
  // A JVM is named by its main class or jar: three services on one host are
  // three programs (as in Interana/eventsim#4's ps listing), not three javas.
  EXPECT_EQ(process_name::program("java -ea -Xms3G -Xmx3G org.apache.cassandra.service.CassandraDaemon"),
            "java org.apache.cassandra.service.CassandraDaemon");
  EXPECT_EQ(process_name::program("/usr/bin/java -Xmx1G -cp /opt/kafka/libs/* kafka.Kafka config/server.properties"),
            "java kafka.Kafka");
  EXPECT_EQ(process_name::program("java -Xmx2g -jar /srv/app/orders-service.jar --spring.profiles.active=prod"),
            "java orders-service.jar");
  // A Ray task with its arguments, and Ray before 1.0's title.
  EXPECT_EQ(process_name::program("ray::dask:('sort_index-4be1', 982)"), "dask");
  EXPECT_EQ(process_name::program("ray_Accumulator:alloc()"), "Accumulator");
  // Code given inline names no script: the interpreter is the program.
  EXPECT_EQ(process_name::program("/usr/local/julia/bin/julia -Cnative -g1 -e using Ray; start_worker()"), "julia");
  EXPECT_EQ(process_name::program("python3 -c import worker; worker.main()"), "python3");
}

// Ray's memory monitor before 2.0 prints each size with its unit, GiB as
// often as GB (python/ray/memory_monitor.py; modelled on ray-project/ray
// Tune threads of 2020, our own pids and figures). Three trials hold most
// of the table; the report names no victim.
TEST(ProcessTable, RaysOlderTableWithGibUnitsIsRead) {
  const std::string log =
      "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node ip-10-1-2-3 is used (30.10 / 31.20 GB). "
      "The top 10 memory consumers are:\n"
      "\n"
      "PID\tMEM\tCOMMAND\n"
      "4101\t8.12GiB\tray::ImplicitFunc.train()\n"
      "4102\t7.95GiB\tray::ImplicitFunc.train()\n"
      "4103\t7.80GiB\tray::ImplicitFunc.train()\n"
      "3990\t0.41GiB\tpython tune_run.py\n";
  auto t = tables(log);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].process, "ImplicitFunc");
  EXPECT_EQ(*t[0].sequences, 3u);
  EXPECT_EQ(*t[0].usage, uint64_t(std::llround((8.12 + 7.95 + 7.80) * double(units::GiB))));
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_TRUE(said(d, "3 copies of ImplicitFunc"));
}

// Ray 2.x names the killed task by its function (name=...), not by the
// program its worker runs; the size it gives (memory used=) is one copy's
// (modelled on a Julia-on-Ray thread shape; our own figures). A victim far
// from any copy's size is not taken for one of them.
TEST(ProcessTable, ATaskNamedVictimTheSizeOfOneCopyIsOneOfThem) {
  const std::string log =
      "Ray.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
      "Memory on the node (IP: 10.2.0.9, ID: 3f0c) where the task (task ID: 6c1e, name=seg.window, pid=212, memory used=3.50GB) "
      "was running was 30.1GB / 31.5GB (0.956), which exceeds the memory usage threshold of 0.95.\n"
      "PID\tMEM(GB)\tCOMMAND\n"
      "318\t3.90\t/usr/bin/julia -Cnative -g1 -e using Ray; start_worker()\n"
      "344\t3.70\t/usr/bin/julia -Cnative -g1 -e using Ray; start_worker()\n"
      "295\t3.60\t/usr/bin/julia -Cnative -g1 -e using Ray; start_worker()\n"
      "212\t3.50\t/usr/bin/julia -Cnative -g1 -e using Ray; start_worker()\n"
      "96\t0.20\t/usr/lib/ray/raylet --raylet_socket_name=/tmp/ray/s\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_TRUE(said(d, "4 copies of julia"));
  std::string small = log;
  small.replace(small.find("memory used=3.50GB"), 18, "memory used=0.90GB");
  EXPECT_NE(test::diagnose_text(small).cause, Cause::concurrency_batch);
}

// Four copies of the killed actor's class hold most of the table: the
// number of copies running at once, not one of them, filled the node.
TEST(ProcessTable, CopiesOfTheKilledProgramHoldingMostOfTheTableAreConcurrency) {
  Diagnosis d = test::diagnose_text(kRayKill);
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_TRUE(said(d, "4 copies of EngineActor"));
}

// The same copies are one model's shards when the engine says it runs that
// many tensor-parallel workers: no longer read as parallel copies.
TEST(ProcessTable, AsManyCopiesAsTensorParallelShardsAreOneModel) {
  const std::string log =
      std::string("INFO 03-02 11:20:41 llm_engine.py:72] Initializing an LLM engine with config: model='/m/70b', "
                  "tensor_parallel_size=4, dtype=torch.float16\n") +
      kRayKill;
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  EXPECT_NE(d.cause, Cause::concurrency_batch);
  EXPECT_FALSE(said(d, "copies of EngineActor"));
}

// The JVM could not commit memory while other programs held twice what it
// did: other processes took the machine's memory.
TEST(ProcessTable, AFailingProgramHoldingLittleOfTheTableIsAnotherProcesssDoing) {
  const std::string log =
      "OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000006c0000000, 536870912, 0) failed; error='Cannot "
      "allocate memory' (errno=12)\n"
      "#\n"
      "# There is insufficient memory for the Java Runtime Environment to continue.\n"
      "# Native memory allocation (mmap) failed to map 536870912 bytes for committing reserved memory.\n"
      "$ ps -eo pid,rss,comm --sort=-rss | head -5\n"
      "  PID   RSS COMMAND\n"
      " 3120 3311200 chrome\n"
      " 8841 1900420 java\n"
      " 3187 1210332 chrome\n"
      " 2001  802112 code\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  EXPECT_TRUE(said(d, "chrome holding"));
  // The same JVM holding most of the table: not another process's doing.
  const std::string own =
      "OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000006c0000000, 536870912, 0) failed; error='Cannot "
      "allocate memory' (errno=12)\n"
      "  PID   RSS COMMAND\n"
      " 8841 6900420 java\n"
      " 3120 811200 chrome\n";
  EXPECT_NE(test::diagnose_text(own).cause, Cause::other_process);
}

// Three copies must hold three quarters of the table to say so (modelled on
// ray-project/ray#32195: three sort tasks side by side; our own figures).
TEST(ProcessTable, ThreeCopiesMustHoldThreeQuartersOfTheTable) {
  auto ray = [](double third) {
    return std::string(
               "(raylet) node_manager.cc:3097: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due "
               "to other reasons at node (ID: 51c0e2, IP: 10.0.3.9) over the last time period.\n"
               "PID\tMEM(GB)\tCOMMAND\n"
               "753\t19.90\tray::dask:('sort_index-be01', 982)\n"
               "756\t15.10\tray::dask:('sort_index-be01', 961)\n") +
           "760\t" + std::to_string(third) + "\tray::dask:('sort_index-be01', 977)\n" + "172\t3.40\t/opt/ray/raylet --raylet_socket_name=x\n";
  };
  EXPECT_EQ(test::diagnose_text(ray(10.2)).cause, Cause::concurrency_batch);
  // The same three holding less than three quarters: not enough to say.
  const std::string other = "811\t16.00\t/usr/bin/postgres -D /data\n";
  EXPECT_NE(test::diagnose_text(ray(10.2) + other).cause, Cause::concurrency_batch);
  // A program whose own allocation failed, its name not given, is not shown
  // to be among another program's copies (modelled on vimagick/dockerfiles#62).
  const std::string mmap_failed =
      "2024-02-01T10:11:12.000000Z 0 [ERROR] InnoDB: mmap(137428992 bytes) failed; errno 12\n"
      "$ ps -eo rss,comm --sort=-rss | head -4\n"
      "  RSS COMMAND\n"
      "160220 apache2\n"
      " 98412 apache2\n"
      " 90004 apache2\n"
      " 12000 dockerd\n";
  EXPECT_NE(test::diagnose_text(mmap_failed).cause, Cause::concurrency_batch);
}

// The kernel names the killed process by its interpreter ("node"); the
// table's rows are its scripts, a build's main process and its worker-farm
// children (modelled on vercel/next.js threads of builds killed on small
// hosts; our own pids and sizes). Together they are the copies. A runtime's
// own report names no process: other programs on its runtime are not its
// copies.
TEST(ProcessTable, AnInterpretersScriptsAreItsCopiesWhenTheKillNamesIt) {
  const std::string table =
      "$ ps -o pid,rss,args --sort=-rss -C node\n"
      "  PID   RSS COMMAND\n"
      " 4410 702112 node /srv/app/node_modules/.bin/next build\n"
      " 4431 401220 /usr/bin/node /srv/app/node_modules/worker-farm/lib/child/index.js\n"
      " 4432 398004 /usr/bin/node /srv/app/node_modules/worker-farm/lib/child/index.js\n"
      " 4433 391876 /usr/bin/node /srv/app/node_modules/worker-farm/lib/child/index.js\n";
  const std::string kill =
      "[90311.220114] Out of memory: Kill process 4410 (node) score 362 or sacrifice child\n"
      "[90311.220981] Killed process 4410 (node) total-vm:1702216kB, anon-rss:700112kB, file-rss:0kB, shmem-rss:0kB\n";
  EXPECT_EQ(test::diagnose_text(table + kill).cause, Cause::concurrency_batch);
  const std::string jvm =
      "# There is insufficient memory for the Java Runtime Environment to continue.\n"
      "# Native memory allocation (mmap) failed to map 796917760 bytes for committing reserved memory.\n"
      "$ ps aux --sort=-rss | head -4\n"
      "USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n"
      "cassand+  1409 38.2 42.7 9981232 3493888 ?     SLl  Jun16 412:03 java -Xmx3G org.apache.cassandra.service.CassandraDaemon\n"
      "ubuntu    2951 61.5 20.2 6213448 1654784 ?     Sl   08:12  44:17 java -Xmx1536m org.apache.spark.deploy.SparkSubmit\n"
      "kafka     1876 22.4 15.3 5437712 1250304 ?     Sl   Jun16 201:55 java -Xmx1G kafka.Kafka config/server.properties\n";
  EXPECT_NE(test::diagnose_text(jvm).cause, Cause::concurrency_batch);
}

// Copies of one program started hours apart: an earlier generation that
// outlived its replacement (modelled on pm2 reloads that left old workers,
// Unitech/pm2#5938 and Unitech/pm2#6129, and a gpustack relaunch beside the
// old vllm serve, gpustack/gpustack#2595; our own pids, paths and times).
// The ps -o list is the header when grep took it away.
std::vector<Fact> generations(const std::string& text) {
  return test::facts_of_kind(text, FactKind::runtime_setting, Cause::deployment_overlap);
}

constexpr const char* kOrphans =
    "$ ps -eo pid,ppid,etime,rss,args | grep '[w]eb/main.js'\n"
    " 31207      1    05:48:02 1412220 node /srv/web/dist/main.js\n"
    " 35510      1    02:11:40 1389004 node /srv/web/dist/main.js\n"
    " 38022  37990       01:12 1170332 node /srv/web/dist/main.js\n"
    "$ dmesg -T | tail -1\n"
    "[Tue Mar 11 09:14:40 2025] Out of memory: Killed process 38022 (node) total-vm:11602244kB, anon-rss:1170332kB, "
    "file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:3900kB oom_score_adj:0\n";

TEST(ProcessTable, CopiesStartedHoursApartAreAnOldGenerationLeftRunning) {
  auto g = generations(kOrphans);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].detail.find("3 copies of node main.js"), std::string::npos) << g[0].detail;
  EXPECT_NE(g[0].detail.find("5h46m apart"), std::string::npos) << g[0].detail;
  // The same rows are a process table too; the generations decide.
  EXPECT_EQ(tables(kOrphans).size(), 1u);
  Diagnosis d = test::diagnose_text(kOrphans);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

// lstart is five words; the columns after it are found all the same, and a
// relaunch on another port is the same program.
TEST(ProcessTable, LstartRowsAndAnotherPortAreTheSameProgram) {
  auto g = generations(
      "$ ps -eo pid,ppid,user,lstart,etimes,args | grep '[v]llm serve'\n"
      " 611420  611300 svc  Mon Apr  7 08:02:11 2025 2764800 /usr/bin/python3 -m vllm serve /models/q8b --port 40031\n"
      " 990114  990002 svc  Fri May  9 08:02:11 2025      44 /usr/bin/python3 -m vllm serve /models/q8b --port 40177\n");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].detail.find("2 copies"), std::string::npos) << g[0].detail;
  auto h = generations(
      "  PID                  STARTED   RSS CMD\n"
      "20110 Wed Jun 18 02:10:05 2025 1211004 node /srv/api/server.js\n"
      "24871 Wed Jun 18 05:40:55 2025 1198220 node /srv/api/server.js\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NE(h[0].detail.find("3h30m apart"), std::string::npos) << h[0].detail;
}

// A pool forks its workers together, and a master's recycled workers are its
// children: neither is a generation left over.
TEST(ProcessTable, APoolStartedTogetherOrAMastersChildrenAreNotGenerations) {
  EXPECT_TRUE(generations("$ ps -eo pid,etime,rss,args | grep '[c]elery'\n"
                          " 4100    06:00:12 811220 celery -A app worker\n"
                          " 4101    06:00:12 809004 celery -A app worker\n"
                          " 4102    06:00:11 812332 celery -A app worker\n")
                  .empty());
  EXPECT_TRUE(generations("$ ps -eo pid,ppid,etime,rss,args | grep '[g]unicorn'\n"
                          " 5200     1  3-02:11:09  40220 gunicorn app:app -w 2\n"
                          " 7731  5200    04:12:40 911004 gunicorn app:app -w 2\n"
                          " 9102  5200       10:02 905552 gunicorn app:app -w 2\n")
                  .empty());
}

// FreeBSD's top prints RES with an upper-case unit (modelled on
// ossia/score#2220; our own pids and sizes): three compilers holding three
// quarters of the table are the parallel jobs.
TEST(ProcessTable, FreeBsdTopsUpperCaseUnitsAreRead) {
  const std::string log =
      "  PID USERNAME    THR PRI NICE   SIZE    RES STATE    C   TIME    WCPU COMMAND\n"
      "61873 root          1 103    0  2144M  1900M CPU0     0   1:12  99.12% c++\n"
      "61880 root          1 103    0  1985M  1800M RUN      1   1:02  97.40% c++\n"
      "61877 root          1 102    0  1790M  1600M RUN      0   0:58  96.80% c++\n"
      "61702 root          1  52    0  2312M   700M pfault   1   0:41  24.11% ld.lld\n"
      "Aug 16 23:41:07 bsd kernel: pid 61873 (c++), jid 0, uid 0, was killed: failed to reclaim memory\n";
  auto t = tables(log);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].process, "c++");
  EXPECT_EQ(*t[0].usage, uint64_t{5300} << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}


// The kernel names the victim by its executable ("ruby"), ps by its args
// ("sidekiq 2.15.1 ..."): a victim whose resident size is one row's copy is
// one of them, not a process beside them (modelled on diaspora's Sidekiq
// memory threads; our own figures).
TEST(ProcessTable, AVictimTheSizeOfOneCopyIsOneOfThemUnderAnotherName) {
  const std::string log =
      "$ ps -o pid,etime,rss,args -C ruby | grep sidekiq\n"
      " 7101  3-01:10:07 4093312 sidekiq 3.4.2 app [10 of 10 busy]\n"
      " 7105  3-01:10:07 3987604 sidekiq 3.4.2 app [9 of 10 busy]\n"
      " 7109  3-01:10:06 4011876 sidekiq 3.4.2 app [10 of 10 busy]\n"
      "[266290.518204] Out of memory: Kill process 7105 (ruby) score 301 or sacrifice child\n"
      "[266290.518290] Killed process 7105 (ruby) total-vm:5120448kB, anon-rss:3998412kB, file-rss:1124kB\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_NE(d.cause, Cause::other_process);
  // A victim much smaller than each of those rows: they are others.
  std::string small = log;
  small.replace(small.find("anon-rss:3998412kB"), 18, "anon-rss:398412kB");
  EXPECT_EQ(test::diagnose_text(small).cause, Cause::other_process);
}

// ps -o with the user column first ("user,pid,rss,etime,comm"), pasted under
// a global kill on a batch node (modelled on the RHEL 6 Torque node in
// the corpus, mb-039; our own names and figures): its rows start with a name,
// not a PID, and are still the table's.
TEST(ProcessTable, RowsLedByTheUserColumnAreRead) {
  const std::string log =
      "Mar 16 16:32:49 node-4 kernel: Out of memory: Kill process 30518 (python) score 350 or sacrifice child\n"
      "Mar 16 16:32:49 node-4 kernel: Killed process 30518, UID 1045, (python) total-vm:9198412kB, anon-rss:8488112kB, "
      "file-rss:1220kB\n"
      "# ps -eo user,pid,rss,etime,comm --sort=-rss | head -5\n"
      "USER       PID     RSS     ELAPSED COMMAND\n"
      "root     19892 5718592  2-06:41:10 lt-xz\n"
      "root     19893 5702208  2-06:41:10 lt-xz\n"
      "svc_mon   2746  612344 41-03:12:55 gmond\n";
  auto t = tables(log);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].process, "lt-xz");
  EXPECT_EQ(*t[0].sequences, 2u);
  EXPECT_EQ(*t[0].usage, (5718592ull + 5702208ull) * 1024);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  EXPECT_TRUE(said(d, "lt-xz holding"));
  // Without the header (nor the ps command naming the columns) a line led
  // by a name and two figures is not a row of anything.
  std::string bare = log;
  bare.erase(bare.find("# ps"), bare.find("root ") - bare.find("# ps"));
  EXPECT_TRUE(tables(bare).empty());
}

}  // namespace
}  // namespace aimem
