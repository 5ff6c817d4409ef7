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

// A job cancelled at its time limit was killed for time, not memory: a
// look-alike (time_limits.cc), never an OOM event.
TEST(Hpc, TimeLimitIsNotAnOomEvent) {
  const char* log = "slurmstepd: error: *** JOB 123 ON nid1 CANCELLED AT 2026-11-29T10:00:00 DUE TO TIME LIMIT ***\n";
  EXPECT_TRUE(test::facts_of_kind(log, FactKind::kernel_oom_kill).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::not_memory);
}

}  // namespace
}  // namespace aimem
