#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(Hpc, SlurmOomKillEventIsTheJobsLimit) {
  Diagnosis d = test::diagnose_text(
      "slurmstepd: error: Detected 1 oom_kill event in StepId=647226.batch. Some of the step tasks have been OOM Killed.\n"
      "srun: error: nid002680: task 0: Out Of Memory\n");
  ASSERT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.incidents.size(), 1u);
  EXPECT_NE(d.incidents[0].reasons[0].find("Slurm"), std::string::npos);
}

TEST(Hpc, YarnContainerOverItsSizeIsLimitTooLowWithTheNumbers) {
  Diagnosis d = test::diagnose_text(
      "WARN TaskSetManager: Lost task 3.0 in stage 2.0: ExecutorLostFailure (executor 7 exited caused by one of the running tasks) "
      "Reason: Container killed by YARN for exceeding memory limits. 10.4 GB of 10 GB physical memory used. "
      "Consider boosting spark.yarn.executor.memoryOverhead.\n");
  ASSERT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_TRUE(d.incidents[0].pool.limit_bytes);
  EXPECT_EQ(*d.incidents[0].pool.limit_bytes, 10ULL << 30);
  ASSERT_TRUE(d.incidents[0].pool.used_bytes);
  EXPECT_NEAR(static_cast<double>(*d.incidents[0].pool.used_bytes), 10.4 * (1ULL << 30), 1e6);
  Diagnosis old = test::diagnose_text(
      "Container [pid=1234,containerID=container_1_0001_01_000002] is running beyond physical memory limits. Current usage: 2.1 GB of 2 GB "
      "physical memory used; 3.5 GB of 4.2 GB virtual memory used. Killing container.\n");
  EXPECT_EQ(old.layer, Layer::container_limit);
  // Spark 3.x says "physical memory limits" (modelled on NVIDIA/spark-rapids CI logs; values ours).
  Diagnosis spark3 = test::diagnose_text(
      "23/05/01 10:44:52 ERROR YarnScheduler: Lost executor 2 on worker-07: Container killed by YARN for exceeding physical memory "
      "limits. 13.1 GB of 12 GB physical memory used. Consider boosting spark.executor.memoryOverhead.\n");
  ASSERT_EQ(spark3.layer, Layer::container_limit);
  ASSERT_TRUE(spark3.incidents[0].pool.limit_bytes);
  EXPECT_EQ(*spark3.incidents[0].pool.limit_bytes, 12ULL << 30);
}

// Killed at its size, and again after the size was doubled: usage grows to
// whatever it is given, which a larger limit does not cure (modelled on
// alibaba/EasyRec's YARN worker killed at 12 GB and then at 23.4 GB; ids, pids
// and dates ours). Two kills at the same size stay a limit below the need.
TEST(Hpc, KilledAgainAfterTheLimitWasRaisedIsGrowth) {
  const std::string first =
      "2020-10-12 02:17:08,904 INFO RMCommunicator - diagnostics=Container [pid=6120,containerID=container_1_0211_01_000007] is running "
      "beyond physical memory limits. Current usage: 12.0 GB of 12 GB physical memory used; 51.6 GB of 57.6 TB virtual memory used. "
      "Killing container.\n";
  const std::string again =
      "2020-10-19 21:40:33,118 INFO RMCommunicator - diagnostics=Container [pid=11874,containerID=container_1_0298_01_000003] is running "
      "beyond physical memory limits. Current usage: 23.5 GB of 23.4 GB physical memory used; 104.9 GB of 114.3 TB virtual memory used. "
      "Killing container.\n";
  Diagnosis d = test::diagnose_text(first + again);
  ASSERT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  std::string why;
  for (const auto& r : d.incidents[0].reasons) why += r + "\n";
  EXPECT_NE(why.find("after the limit was raised"), std::string::npos) << why;
  EXPECT_LT(d.confidence.value_or(1), 0.8);  // one raise: a lean
  // The same size twice is the limit.
  EXPECT_EQ(test::diagnose_text(first + first).cause, Cause::limit_too_low);
}

// Newer Slurm's wording with StepId and "event(s)" (modelled on
// snakemake/snakemake-executor-plugin-slurm#371 and lanl/PyBNF#118; values ours).
TEST(Hpc, SlurmEventsWordingGivesTheStepAndCount) {
  const char* log = "slurmstepd: error: Detected 3 oom-kill event(s) in StepId=88213.batch. Some of your processes may have been killed "
                    "by the cgroup out-of-memory handler.\n";
  auto k = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].container, "slurm step 88213.batch");
  EXPECT_EQ(k[0].count, 3u);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
  auto old = test::facts_of_kind("slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.\n", FactKind::kernel_oom_kill);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].container, "slurm step 3756240.batch");
}

// The job's size as the user gave it: sbatch's --mem (bare numbers are MB),
// seff's summary, Snakemake's mem_mb (modelled on Nesvilab/FragPipe#703,
// troycomi/reportseff#16 and snakemake/snakemake-executor-plugin-slurm#371;
// values ours). A kill in a job whose size is known is a limit it filled; a
// JVM told it may use more than the job holds is a limit below the need.
TEST(Hpc, JobSizeFromSbatchSeffAndSnakemakeIsTheLimit) {
  auto lim = [](const char* text) { return test::facts_of_kind(text, FactKind::memory_limit); };
  auto a = lim("#SBATCH --mem=24G\n");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].limit, 24ULL << 30);
  auto b = lim("$ sbatch --mem=16000 --cpus-per-task=4 train.sh\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].limit, 16000ULL << 20);
  auto c = lim("Memory Efficiency: 98.40% of 8.00 GB\n");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].limit, 8ULL << 30);
  auto d = lim("    resources: mem_mb=6000, mem_mib=5723, disk_mb=1000, tmpdir=/tmp\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].limit, 6000ULL * 1000 * 1000);
  // Not a Slurm line: another program's --mem= flag gives no limit.
  EXPECT_TRUE(lim("$ ./bench --mem=4G --threads 8\n").empty());

  Diagnosis heap = test::diagnose_text(
      "#SBATCH --mem=20G\n"
      "java -jar -Xmx96G /opt/tools/search.jar params.txt\n"
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=5512.batch. Some of your processes may have been killed by the cgroup "
      "out-of-memory handler.\n");
  EXPECT_EQ(heap.layer, Layer::container_limit);
  EXPECT_EQ(heap.cause, Cause::limit_too_low);
  Diagnosis full = test::diagnose_text(
      "slurmstepd: error: Detected 1 oom_kill event in StepId=7731.batch. Some of the step tasks have been OOM Killed.\n"
      "State: OUT_OF_MEMORY (exit code 0)\n"
      "Memory Utilized: 11.88 GB\n"
      "Memory Efficiency: 99.00% of 12.00 GB\n");
  EXPECT_EQ(full.cause, Cause::limit_too_low);
  ASSERT_TRUE(full.incidents[0].pool.limit_bytes);
  EXPECT_EQ(*full.incidents[0].pool.limit_bytes, 12ULL << 30);
}

// A job cancelled at its time limit was killed for time, not memory: a
// look-alike (time_limits.cc), never an OOM event.
TEST(Hpc, TimeLimitIsNotAnOomEvent) {
  const char* log = "slurmstepd: error: *** JOB 123 ON nid1 CANCELLED AT 2026-11-29T10:00:00 DUE TO TIME LIMIT ***\n";
  EXPECT_TRUE(test::facts_of_kind(log, FactKind::kernel_oom_kill).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::not_memory);
}

// Schedulers that poll a job's usage and kill it over its size (modelled on
// alexdobin/STAR and marbl/canu cluster reports for Slurm's accounting and
// PBS, and on an LSF job report mailed for souporcell; values ours): each is
// the job's own limit, with the figures where the scheduler prints them.
TEST(Hpc, PollingSchedulersKillsAreTheJobsLimit) {
  auto one = [](const std::string& text) {
    auto k = test::facts_of_kind(text, FactKind::kernel_oom_kill);
    return k.size() == 1 ? k[0] : Fact{};
  };
  Fact slurm = one("slurmstepd-falkor7: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed\n");
  EXPECT_EQ(slurm.usage, 52917772ull * 1024);
  EXPECT_EQ(slurm.limit, 20971520ull * 1024);
  Fact pbs = one("=>> PBS: job killed: mem 36120508kb exceeded limit 33554432kb\n");
  EXPECT_EQ(pbs.usage, 36120508ull * 1024);
  EXPECT_EQ(pbs.limit, 33554432ull * 1024);
  const std::string lsf =
      "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\nExited with exit code 143.\n\n"
      "Resource usage summary:\n    Max Memory :                                 98304 MB\n"
      "    Total Requested Memory :                     98304.00 MB\n";
  EXPECT_EQ(one(lsf).detail, "LSF job memory limit");
  auto lim = test::facts_of_kind(lsf, FactKind::memory_limit);
  ASSERT_EQ(lim.size(), 1u);
  EXPECT_EQ(lim[0].limit, 98304ull << 20);
  for (const std::string& t : {std::string("slurmstepd: error: Step 1.0 exceeded memory limit (52917772 > 20971520), being killed\n"),
                               std::string("=>> PBS: job killed: mem 36120508kb exceeded limit 33554432kb\n"), lsf})
    EXPECT_EQ(test::diagnose_text(t).layer, Layer::container_limit) << t;
  // A walltime kill is not memory's.
  EXPECT_TRUE(test::facts_of_kind("=>> PBS: job killed: walltime 259230 exceeded limit 259200\n", FactKind::kernel_oom_kill).empty());
}


// Grid Engine's execd killing a job at h_vmem (modelled on a UCLA Hoffman2
// job mail; figures ours): the job's limit, and h_vmem in the resource list
// is the job's size.
TEST(Hpc, GridEngineEnforcedHvmemIsTheJobsLimit) {
  Diagnosis d = test::diagnose_text(
      "$ qstat -j 7921630 | grep 'hard resource_list'\n"
      "hard resource_list:         h_data=8G,h_rt=43200,h_vmem=8G\n"
      "Job 7921630 (align.sh) Aborted\n Exit Status      = 137\n Signal           = KILL\n Max vmem         = 96.113G\n"
      "failed execd enforced h_vmem limit because:\njob 7921630.1 died through signal KILL (9).\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  auto l = test::facts_of("hard resource_list:         h_data=8G,h_rt=43200,h_vmem=8G\n");
  bool limit = false;
  for (auto& x : l) limit = limit || (x.kind == FactKind::memory_limit && x.limit == 8ull << 30);
  EXPECT_TRUE(limit);
}


// sacct's ReqMem is the job's size (modelled on a pip install killed in a
// Slurm job with the partition's default memory, groq/mlagility threads and
// Compute Canada's canu jobs; ids and figures ours): the table's cells cut
// by the dashes line (MaxRSS is empty on the job's own row), --parsable's
// fields, a per-CPU figure times AllocCPUS, and no size without the CPUs.
TEST(Hpc, SacctsReqMemIsTheJobsSize) {
  auto lim = [](const std::string& text) { return test::facts_of_kind(text, FactKind::memory_limit); };
  const std::string kill =
      "/var/spool/slurmd/job3360518/slurm_script: line 19: 2141877 Killed                  pip install -e .\n"
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=3360518.batch. Some of your processes may have been killed by the "
      "cgroup out-of-memory handler.\n";
  const std::string table =
      "$ sacct -j 3360518 --format=JobID,State,ExitCode,ReqMem,MaxRSS\n"
      "       JobID      State ExitCode     ReqMem     MaxRSS\n"
      "------------ ---------- -------- ---------- ----------\n"
      "3360518      OUT_OF_ME+    0:125      2000M\n"
      "3360518.bat+ OUT_OF_ME+    0:125      2000M   2047112K\n";
  auto a = lim(table);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].limit, 2000ULL << 20);
  Diagnosis d = test::diagnose_text(kill + table);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  EXPECT_EQ(test::diagnose_text(kill).cause, Cause::unknown);  // without the table, the size is not shown
  auto p = lim("JobID|AllocCPUS|ReqMem|MaxRSS|State\n"
               "91277|4|3Gc||OUT_OF_MEMORY\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].limit, 12ULL << 30);
  EXPECT_TRUE(lim("       JobID    JobName     ReqMem     MaxRSS      State\n"
                  "------------ ---------- ---------- ---------- ----------\n"
                  "4018830      ovl_tl.5        256Mc            OUT_OF_ME+\n")
                  .empty());
}

// Slurm's end-of-step warning beside sacct's COMPLETED 0:0 (modelled on a
// Galaxy bowtie2 job; figures ours) is no failure; alone it stays one.
TEST(Hpc, SlurmsAtSomePointWarningOnACompletedJobIsNoFailure) {
  const std::string warn = "slurmstepd: error: Exceeded step memory limit at some point. Step may have been partially swapped out to disk.\n";
  Diagnosis ok = test::diagnose_text(warn +
                                     "$ sacct -j 4102877 -o JobID,State,ExitCode,ReqMem,MaxRSS\n"
                                     "       JobID      State ExitCode     ReqMem     MaxRSS\n"
                                     "4102877       COMPLETED      0:0        8Gn\n"
                                     "4102877.bat+  COMPLETED      0:0        8Gn   8245612K\n");
  EXPECT_EQ(ok.layer, Layer::none);
  EXPECT_EQ(test::diagnose_text(warn).layer, Layer::container_limit);
  EXPECT_EQ(test::diagnose_text(warn + "4102877       OUT_OF_ME+    0:125        8Gn\n").layer, Layer::container_limit);
}

// Modelled on condor_q -hold and condor_q -long of a pool whose periodic
// hold policy stops jobs over their RequestMemory (gwastro/1-ogc#2); our own
// job ids, owner and figures.
TEST(Hpc, HTCondorsPeriodicHoldOverTheRequestIsTheJobsLimit) {
  const std::string log =
      " ID          OWNER          HELD_SINCE  HOLD_REASON\n"
      "5103321.0   alice          3/2  11:40 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3320000.\n"
      "\n"
      "$ condor_q -long 5103321.0 | grep -E '^(RequestMemory|ResidentSetSize_RAW)'\n"
      "RequestMemory = 3000\n"
      "ResidentSetSize_RAW = 3320000\n";
  auto kill = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].layer, Layer::container_limit);
  auto size = test::facts_of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(size.size(), 1u);
  EXPECT_EQ(size[0].limit, uint64_t{3000} << 20);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
}

// Modelled on NCI Gadi's PBS Pro job output (payu-org/payu#587): a kill over
// the job's local-disk quota, and the MOM's walltime kill; our own figures.
TEST(Hpc, APbsKillOverDiskOrTimeIsNotMemory) {
  const std::string jobfs =
      "Job 61240077.gadi-pbs killed due to exceeding jobfs quota. Quota: 10.0GB, Used: 10.0GB, Host: gadi-cpu-clx-0412\n"
      "   Exit Status:        271 (Linux Signal 15 SIGTERM Termination)\n"
      "   Memory Requested:   190.0GB               Memory Used: 41.2GB\n";
  Diagnosis d = test::diagnose_text(jobfs);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  EXPECT_EQ(test::diagnose_text("=>> PBS: job killed: walltime 7260 exceeded limit 7200\n").layer, Layer::not_memory);
  // Memory is still memory.
  EXPECT_EQ(test::diagnose_text("=>> PBS: job killed: mem 36120508kb exceeded limit 33554432kb\n").layer, Layer::container_limit);
}

// Modelled on a Mesos agent's log (d2iq-archive/kubernetes-mesos#480): the
// containerizer terminates a container at its memory limit, in MB; our own
// ids and figures.
TEST(Hpc, MesossContainerizerAtItsMemLimitIsTheContainersLimit) {
  const std::string log =
      "I0310 08:11:42.118302  2209 mem.cpp:552] OOM detected for container 7c1f0a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b\n"
      "I0310 08:11:42.121455  2209 containerizer.cpp:1054] Container 7c1f0a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b has reached its limit "
      "for resource mem(*):128 and will be terminated\n";
  auto k = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].limit, uint64_t{128} << 20);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
}

// Mesos 1.x names the resource as JSON (modelled on dcos/dcos-commons' task
// killed at its mem limit; ids and sizes ours).
TEST(Hpc, MesosJsonResourceAtItsLimitIsTheContainersLimit) {
  const std::string log =
      "I1002 16:44:27.298115  4407 memory.cpp:515] OOM detected for container 2c1e0a7f-44d1-4b9e-9c3a-5e6f7a8b9c0d\n"
      "I1002 16:44:27.305521  4411 containerizer.cpp:2672] Container 2c1e0a7f-44d1-4b9e-9c3a-5e6f7a8b9c0d has reached its limit for "
      "resource [{\"name\":\"mem\",\"scalar\":{\"value\":256.0},\"type\":\"SCALAR\"}] and will be terminated\n";
  auto k = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].limit, uint64_t{256} << 20);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
  // Another resource's limit is not memory's.
  EXPECT_TRUE(test::facts_of_kind("I1002 16:44:27.3 1 containerizer.cpp:2672] Container 2c has reached its limit for resource "
                                  "[{\"name\":\"disk\",\"scalar\":{\"value\":100.0}}] and will be terminated\n",
                                  FactKind::kernel_oom_kill)
                  .empty());
}

// Moab over Torque deletes a job over its MEM hard limit, in MB (modelled on
// cBio/cbio-cluster#251; our own job and figures): the job's limit.
TEST(Hpc, MoabsMemHardLimitIsTheJobsLimit) {
  const std::string log =
      "Job deleted at request of root@head.local\n"
      "job 4411902 exceeded MEM usage hard limit (3120 > 2048)\n";
  auto k = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(*k[0].limit, 2048ull << 20);
  EXPECT_EQ(*k[0].usage, 3120ull << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// The starter's cgroup form of the hold reason (modelled on
// PocketCoffea/PocketCoffea#565's condor_q -hold; our own ids and figures):
// "gone over cgroup memory limit ... Last measured usage".
TEST(Hpc, HTCondorsCgroupHoldNamesTheLimitAndTheLastUsage) {
  const std::string log =
      "8127341.3   bob   9/1  09:52 Error from slot1_7@node17.example.org: Job has gone over cgroup memory limit of 4096 megabytes. "
      "Last measured usage: 4210 megabytes.  Consider resubmitting with a higher request_memory.\n";
  auto kill = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].limit, uint64_t{4096} << 20);
  EXPECT_EQ(kill[0].usage, uint64_t{4210} << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// CMS CRAB's retry handler quoting the job's exit (modelled on
// dmwm/CRABServer#9367; RSS and job numbers ours).
TEST(Hpc, CrabsKilledByHtcondorForExcessiveMemoryIsTheJobsLimit) {
  Diagnosis d = test::diagnose_text(
      "Tue, 04 Aug 2026 09:41:17 CEST(+0200):INFO:PostJob        -----> RetryJob log start -----\n"
      "Tue, 04 Aug 2026 09:41:17 CEST(+0200):ERROR:RetryJob Job killed by HTCondor due to excessive memory use (RSS=2614 MB). "
      "Will not retry it.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  ASSERT_FALSE(d.incidents.empty());
  const Fact& f = d.facts[d.incidents[0].failures[0]];
  ASSERT_TRUE(f.usage.has_value());
  EXPECT_EQ(*f.usage, 2614ull * 1024 * 1024);
}

// HTCondor's hold for a policy expression that evaluated to UNDEFINED
// (HoldReasonCode 5, modelled on dmwm/CRABServer#5165; our own job): the
// expression's memory terms are no memory failure.
TEST(Hpc, AnHtcondorHoldForAnUndefinedExpressionIsNotMemory) {
  const std::string hold =
      "$ condor_q -l 88120.0 | egrep '^(RequestMemory|MemoryUsage|HoldReasonCode) '\n"
      "RequestMemory = 2500\nHoldReasonCode = 5\n";
  EXPECT_EQ(test::diagnose_text(hold).layer, Layer::not_memory);
  const std::string said =
      "88120.0   alice   4/2 10:11 The job attribute PeriodicHold expression '( MemoryUsage > RequestMemory )' evaluated to UNDEFINED\n";
  EXPECT_EQ(test::diagnose_text(said).layer, Layer::not_memory);
  // The pool's hold for memory stays memory.
  const std::string memory = "88120.0   alice   4/2 10:11 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 2710000.\n";
  EXPECT_NE(test::diagnose_text(memory).layer, Layer::not_memory);
}

// sacct's State OUT_OF_MEMORY (cut to "OUT_OF_ME+" at its default width) is
// Slurm's record of an OOM kill in the job's cgroup, with no slurmstepd line
// in the paste (modelled on a Qiita Deblur job whose wrapper still said
// success). Slurm flags a step so for any OOM kill in its cgroup: a step whose
// MaxRSS stayed well under its request, and that finished, was not stopped by
// it (modelled on a Galaxy bowtie2 job, galaxyproject/galaxy). Our own ids and figures.
// HTCondor's job log: the hold event and its reason on the lines under it
// (modelled on a pool's PeriodicHold over RequestMemory, 2022; our own job
// and figures). A hold for another reason is not memory's.
TEST(Hpc, AnHtcondorJobLogHoldForMemoryIsTheJobsLimit) {
  const std::string log =
      "006 (58211.000.000) 2022-11-10 12:06:58 Image size of job updated: 8460900\n"
      "\t8263  -  MemoryUsage of job (MB)\n"
      "...\n"
      "012 (58211.000.000) 2022-11-10 12:07:03 Job was held.\n";
  Diagnosis d = test::diagnose_text(log + "\tMEMORY EXCEEDED\n\tCode 26 Subcode 0\n");
  EXPECT_EQ(d.layer, Layer::container_limit) << test::reason_text(d);
  EXPECT_NE(test::diagnose_text(log + "\tThe job exceeded allowed execute duration of 2+00:00:00\n\tCode 47 Subcode 0\n").layer,
            Layer::container_limit);
}

TEST(Hpc, SacctsOutOfMemoryStateIsTheJobsCgroupUnlessItsPeakStayedLow) {
  const std::string header =
      "JobID                         JobName      State ExitCode     ReqMem     MaxRSS    Elapsed\n"
      "------------ ------------------------ ---------- -------- ---------- ---------- ----------\n";
  Diagnosis at_limit = test::diagnose_text(header +
                                           "41187420      deblur_77c2e0a1-3d4f-4a OUT_OF_ME+    0:125        32G              01:12:09\n"
                                           "41187420.ba+                     batch OUT_OF_ME+    0:125               33401224K   01:12:09\n");
  EXPECT_EQ(at_limit.layer, Layer::container_limit) << test::reason_text(at_limit);
  Diagnosis low = test::diagnose_text(header +
                                      "41187421      deblur_77c2e0a1-3d4f-4a OUT_OF_ME+    0:125        32G              01:12:09\n"
                                      "41187421.ba+                     batch OUT_OF_ME+    0:125               12401224K   01:12:09\n");
  EXPECT_EQ(low.layer, Layer::none) << test::reason_text(low);
  // A command that filters for the state is no record of it.
  EXPECT_EQ(test::diagnose_text("$ sacct --state=OUT_OF_MEMORY -S 2024-01-01 | wc -l\n0\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
