// Ray's memory monitor, workers killed by SIGKILL, and the platform.
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(Ray, MemoryMonitorKillIsAUserspaceKiller) {
  const char* text =
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
      "Memory on the node (IP: 10.0.0.5, ID: 9c1f) where the task (task ID: ffff, name=train_fn, pid=1234, memory used=12.01GB) "
      "was running was 29.90GB / 31.30GB (0.955258), which exceeds the memory usage threshold of 0.95. Ray killed this worker "
      "(ID: abcd) because it was the most recently scheduled task.\n"
      "(raylet) 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 9c1f, IP: 10.0.0.5) over the last time period.\n";
  auto k = of_kind(text, FactKind::userspace_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].layer, Layer::userspace_oom_killer);
  EXPECT_EQ(k[0].pid, 1234);
  EXPECT_EQ(k[0].process, "train_fn");
  EXPECT_NE(k[0].detail.find("Ray memory monitor"), std::string::npos);
  EXPECT_NEAR(static_cast<double>(*k[0].usage), 29.90 * units::GiB, 1e3);
  EXPECT_NEAR(static_cast<double>(*k[0].total), 31.30 * units::GiB, 1e3);
  EXPECT_EQ(of_kind(text, FactKind::platform).size(), 1u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("Ray memory monitor"), std::string::npos);
}

TEST(Ray, RayletSummaryAloneCountsKills) {
  auto k = of_kind("(raylet) [2024-01-01 00:00:00] 3 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node\n",
                   FactKind::userspace_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].count, 3u);
  EXPECT_TRUE(of_kind("(raylet) 0 Workers (tasks / actors) killed due to memory pressure (OOM), 2 Workers crashed due to other reasons\n",
                      FactKind::userspace_kill)
                  .empty());
}

TEST(Ray, WorkerDiedWhileLoadingIsHostRamModelLoad) {
  const char* text =
      "`The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
      "unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process "
      "is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed "
      "unexpectedly due to SIGSEGV or other unexpected errors.\n"
      "The actor never ran - it was cancelled before it started running.`\n";
  // Ray lists three possible causes: the kill alone places no pool ...
  auto k = of_kind(text, FactKind::process_killed);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].layer, Layer::unknown);
  EXPECT_EQ(of_kind(text, FactKind::phase_load).size(), 1u);
  // ... a load in view does, as for the shell's bare "Killed".
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
  std::string alone(text);
  alone.resize(alone.find("The actor never ran"));
  EXPECT_EQ(test::diagnose_text(alone).layer, Layer::unknown);
}

TEST(Ray, ThresholdSettingsAreNotFailures) {
  const char* text = "RAY_memory_usage_threshold=0.7 RAY_memory_monitor_refresh_ms=0 python train.py\n";
  for (auto& f : test::facts_of(text)) EXPECT_FALSE(is_failure(f.kind)) << to_string(f.kind);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}


// Ray 2.0-2.1's raylet headline, repeated for each kill (modelled on
// ray-project/ray#28781, a Dask-on-Ray sort; our own figures): one monitor kill.
TEST(Ray, Ray20RayletHeadlineIsTheMemoryMonitor) {
  const char* text =
      "(raylet, ip=10.0.2.11) [2022-09-20 09:14:03,112 E 120 120] (raylet) node_manager.cc:2966: System memory low at node with IP "
      "10.0.2.11. Used memory (118.40GB) / total capacity (122.00GB) (0.97049) exceeds threshold 0.95, killing latest task with "
      "name sort_part(17) and actor ID ffffffff\n"
      "(raylet, ip=10.0.2.11) [2022-09-20 09:14:09,871 E 120 120] (raylet) node_manager.cc:2966: System memory low at node with IP "
      "10.0.2.11. Used memory (117.90GB) / total capacity (122.00GB) (0.96639) exceeds threshold 0.95, killing latest task with "
      "name sort_part(18)\n"
      "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task.\n";
  auto k = of_kind(text, FactKind::userspace_kill);
  ASSERT_EQ(k.size(), 1u);
  ASSERT_TRUE(k[0].ratio.has_value());
  EXPECT_DOUBLE_EQ(*k[0].ratio, 0.95);
  ASSERT_TRUE(k[0].total.has_value());
  EXPECT_GT(*k[0].total, 120ull * 1000 * 1000 * 1000);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::userspace_oom_killer);
  // The advice text alone ("System memory low" without a kill) is not a kill.
  EXPECT_TRUE(of_kind("System memory low at node with IP 10.0.2.11.\n", FactKind::userspace_kill).empty());
}

// Ray before 1.0 raised in the task once the node passed its threshold
// (modelled on ray-project/ray#3323; our own node and figures): the same
// user-space guard, with the node's usage; its top consumers are a process
// table whose values carry their unit.
TEST(Ray, TheOldMonitorsRaisedErrorIsTheSameGuard) {
  const std::string log =
      "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node ip-10-1-2-3 is used (30.6 / 31.9 GB). "
      "The top 5 memory consumers are:\n"
      "\n"
      "PID\tMEM\tCOMMAND\n"
      "4410\t21.4GB\tray_Collector:gather()\n"
      "4388\t1.1GB\t/usr/bin/python3 -u /opt/ray/workers/default_worker.py\n";
  auto k = test::facts_of_kind(log, FactKind::userspace_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].layer, Layer::userspace_oom_killer);
  ASSERT_TRUE(k[0].ratio);
  EXPECT_DOUBLE_EQ(*k[0].ratio, 0.95);
  EXPECT_NEAR(static_cast<double>(*k[0].usage) / static_cast<double>(*k[0].total), 30.6 / 31.9, 1e-6);
  std::vector<Fact> table;
  for (Fact& f : test::facts_of_kind(log, FactKind::memory_usage))
    if (f.detail == "process table") table.push_back(std::move(f));
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].process, "Collector");
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
}

// An actor Ray ended on purpose (modelled on ray-project/ray-llm#88: vLLM
// workers force-killed when their owner let go; values ours): its callers'
// RayActorError is no OOM kill. Beside the monitor's kill, the kill decides.
TEST(Ray, AnActorEndedByItsOwnerIsNotMemory) {
  const std::string gone =
      "(RayWorkerWrapper pid=5120) [2024-02-11 09:14:02,311 I 5120 5188] core_worker.cc:3737: Force kill actor request has "
      "received. exiting immediately... The actor is dead because all references to the actor were removed.\n"
      "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n";
  EXPECT_EQ(test::diagnose_text(gone).layer, Layer::not_memory);
  const std::string monitor =
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
      "Memory on the node (IP: 10.0.0.5, ID: 9c1f) where the task (task ID: 7a, name=embed, pid=5120, memory used=12.01GB) was "
      "running was 29.90GB / 31.30GB (0.955258), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: "
      "3b) because it was the most recently scheduled task.\n";
  EXPECT_EQ(test::diagnose_text(gone + monitor).layer, Layer::userspace_oom_killer);
}

// `ray start` refusing to start because the memory it was given leaves
// nothing for tasks once its object store is set aside: the memory (here the
// pod's limit) is below what a Ray node needs (modelled on ray-project/kuberay
// head pods with small limits; our figures). A positive figure is no failure.
TEST(Ray, NoMemoryLeftForTasksIsALimitTooLow) {
  auto text = [](const char* left) {
    return std::string("Traceback (most recent call last):\n  File \"/home/ray/anaconda3/bin/ray\", line 8, in <module>\n"
                       "ValueError: After taking into account object store and redis memory usage, the amount of memory on this node "
                       "available for tasks and actors (") +
           left + " GB) is less than -4% of total. You can adjust these settings with ray.init(memory=<bytes>, "
                  "object_store_memory=<bytes>).\n"
                  "{\"limits\":{\"cpu\":\"1\",\"memory\":\"600Mi\"},\"requests\":{\"cpu\":\"1\",\"memory\":\"600Mi\"}}\n";
  };
  Diagnosis d = test::diagnose_text(text("-0.02"));
  EXPECT_EQ(d.cause, Cause::limit_too_low) << test::reason_text(d);
  EXPECT_NE(d.layer, Layer::not_memory);
  EXPECT_NE(test::reason_text(d).find("Ray refused to start"), std::string::npos) << test::reason_text(d);
  EXPECT_EQ(test::reason_text(test::diagnose_text(text("0.35"))).find("Ray refused to start"), std::string::npos);
}

}  // namespace
}  // namespace aimem
