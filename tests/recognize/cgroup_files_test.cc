// A memory cgroup's own files as pasted (src/recognize/families/
// cgroup_files.cc): cat's output under the command and grep's "file:value"
// form, cgroup v2 and v1. Inputs written here with our own paths and values,
// in the kernel's file formats (Documentation/admin-guide/cgroup-v2.rst), as
// pasted in dotnet/runtime#101183 (memory.max beside a .NET OOM) and
// kubernetes threads (memory.events of a pod's cgroup).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(CgroupFiles, CatOfTheFilesGivesLimitUsageAndPeakInOrder) {
  const std::string log =
      "$ cat /sys/fs/cgroup/system.slice/api.service/memory.max memory.current memory.peak\n"
      "2147483648\n"
      "2146959360\n"
      "2147483648\n";
  auto limits = of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(*limits[0].limit, 2147483648ull);
  EXPECT_EQ(limits[0].cgroup, "/system.slice/api.service");
  auto usage = of_kind(log, FactKind::memory_usage);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(*usage[0].usage, 2146959360ull);
  EXPECT_NE(usage[1].detail.find("peak"), std::string::npos);
  // No limit ("max", or v1's page-rounded 2^63) is none; a number far from
  // the command is not its output.
  EXPECT_TRUE(of_kind("$ cat memory.max\nmax\n", FactKind::memory_limit).empty());
  EXPECT_TRUE(of_kind("$ cat memory.limit_in_bytes\n9223372036854771712\n", FactKind::memory_limit).empty());
  std::string far = "$ cat memory.max\n";
  for (int i = 0; i < 20; ++i) far += "INFO step " + std::to_string(i) + " done\n";
  EXPECT_TRUE(of_kind(far + "4096\n", FactKind::memory_limit).empty());
}

TEST(CgroupFiles, GrepsFileColonValueFormIsRead) {
  auto limits = of_kind("/sys/fs/cgroup/memory/docker/4f1e/memory.limit_in_bytes:536870912\n", FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(*limits[0].limit, 536870912ull);
  EXPECT_EQ(limits[0].cgroup, "/docker/4f1e");
}

// memory.events with oom_kill above zero is the cgroup's record of kills: a
// failure in the pod's limit when the path is a pod's; zero kills, or only
// "max" events (reclaim at the limit), are none.
TEST(CgroupFiles, OomKillsInMemoryEventsAreTheCgroupsKills) {
  const std::string log =
      "$ cat /sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod7c1e/memory.events\n"
      "low 0\n"
      "high 0\n"
      "max 1843\n"
      "oom 12\n"
      "oom_kill 12\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  auto c = of_kind(log, FactKind::cgroup_oom_counter);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(*c[0].count, 12u);
  std::string none = log;
  none.replace(none.find("oom 12\noom_kill 12"), 18, "oom 0\noom_kill 0");
  EXPECT_EQ(test::diagnose_text(none).layer, Layer::none);
  EXPECT_EQ(test::diagnose_text("$ cat /sys/fs/cgroup/memory.events\nmax 0\noom 0\noom_kill 3\n").layer, Layer::container_limit);
}

// A limit pasted beside a runtime's own refusal places the refusal under it
// (modelled on dotnet/runtime#101183; our own values).
TEST(CgroupFiles, ALimitBesideAnAllocationFailurePlacesIt) {
  Diagnosis d = test::diagnose_text(
      "$ cat /sys/fs/cgroup/memory.max\n"
      "8589934592\n"
      "2024-04-14T03:09:47.512Z fail: Microsoft.AspNetCore.Server.Kestrel[13]\n"
      "      System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
}

// The last line of the input, matched by a pattern ending in "\\s*$", reaches
// its recognizer once: such a pattern matches before the final newline and
// again after it, and the scanner once took the second match for a new line
// (here it would have read one number as both files' values).
TEST(CgroupFiles, TheLastLineIsReadOnce) {
  auto usage = of_kind("$ cat memory.current memory.peak\n1048576000\n", FactKind::memory_usage);
  EXPECT_EQ(usage.size(), 1u);
  auto both = of_kind("$ cat memory.current memory.peak\n1048576000\n2097152000\n", FactKind::memory_usage);
  EXPECT_EQ(both.size(), 2u);
}

// A line under the cat that is not its file's output ends the cat's list; the
// list must not then be shortened again (diagnose_fuzzer found the erase of
// an empty list).
TEST(CgroupFiles, ALineThatIsNotTheFilesOutputEndsTheListOnce) {
  EXPECT_TRUE(of_kind("$ cat memory.max memory.current\noom 5\n4096\n", FactKind::memory_limit).empty());
  EXPECT_EQ(test::diagnose_text("$ cat memory.max\noom 5\noom_kill 3\n").layer, Layer::none);
}

// A cgroup held at memory.max thousands of times with no kill, every task
// stalled on memory (modelled on mieweb/opensource-server#431's LXC
// container; our own counts): the limit, as a hang. Without the stall, or
// with a few max events, it is only pressure.
TEST(CgroupFiles, HeldAtMemoryMaxWithNoKillAndStalledIsTheLimitThrashing) {
  auto events = [](const char* max) {
    return std::string("# cat /sys/fs/cgroup/lxc/118/memory.events\nlow 0\nhigh 0\nmax ") + max + "\noom 0\noom_kill 0\noom_group_kill 0\n";
  };
  const std::string stall =
      "# cat /sys/fs/cgroup/lxc/118/memory.pressure\nsome avg10=93.42 avg60=90.17 avg300=71.05 total=2218734512\n"
      "full avg10=88.90 avg60=85.63 avg300=66.41 total=2093317840\n";
  EXPECT_EQ(test::diagnose_text(events("3889") + stall).layer, Layer::container_limit);
  EXPECT_EQ(test::diagnose_text(events("3889")).layer, Layer::none);
  EXPECT_EQ(test::diagnose_text(events("12") + stall).layer, Layer::none);
}

// A CI step that runs another command before its cat (modelled on
// firefox-devtools/devtools-core#776's CircleCI step: `nproc; cat` of the v1
// files, values ours): nproc's output comes first, and memory.failcnt, a file
// this reader does not use, keeps its place.
TEST(CgroupFiles, ACommandBeforeTheCatAndAnUnusedFileKeepTheValuesInPlace) {
  const std::string log =
      "#!/bin/bash -eo pipefail\n"
      "nproc; cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory/memory.max_usage_in_bytes "
      "/sys/fs/cgroup/memory/memory.failcnt\n"
      "36\n"
      "4294967296\n"
      "4294963200\n"
      "2181\n";
  auto limits = of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(*limits[0].limit, 4294967296ull);
  auto usage = of_kind(log, FactKind::memory_usage);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(*usage[0].usage, 4294963200ull);
  // Without the command before it, the failcnt's place is skipped, not read as a peak.
  auto plain = of_kind("$ cat memory.limit_in_bytes memory.failcnt memory.max_usage_in_bytes\n1073741824\n12\n1073741824\n",
                       FactKind::memory_usage);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(*plain[0].usage, 1073741824ull);
}

// The same with a grep of the events file after the cat (modelled on
// box/box-content-preview#1664's CI agent; values ours): nproc's line is not
// memory.max's value, and the events' lines follow the limit.
TEST(CgroupFiles, ACommandBeforeTheCatAndAGrepOfTheEventsAfterIt) {
  const std::string log =
      "$ nproc; cat /sys/fs/cgroup/memory.max; grep oom_kill /sys/fs/cgroup/memory.events\n"
      "16\n"
      "8589934592\n"
      "oom_kill 1\n";
  auto limits = of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(*limits[0].limit, 8589934592ull);
  EXPECT_EQ(of_kind(log, FactKind::cgroup_oom_counter).size(), 1u);
  // Two commands before it, one of them printing a line no pattern reads.
  auto two = of_kind("$ date; nproc && cat memory.max; grep oom_kill memory.events\nSat Dec  6 01:30:00 UTC 2026\n8\n2147483648\noom_kill 2\n",
                     FactKind::memory_limit);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(*two[0].limit, 2147483648ull);
}

// SIGKILLs of a service's workers at the same age each time while its
// cgroup's memory.events counted no OOM kill (modelled on php/php-src#15161;
// our pids and ages): cgroup v2 counts a kill by any OOM killer there, so the
// kills were someone else's, not memory.
TEST(CgroupFiles, ABareKillBesideOomKillZeroIsNotMemory) {
  const std::string kills =
      "[02-Mar-2025 04:10:18] WARNING: [pool www] child 51120 exited on signal 9 (SIGKILL) after 30.004121 seconds from start\n"
      "[02-Mar-2025 04:10:18] NOTICE: [pool www] child 51131 started\n"
      "[02-Mar-2025 04:10:48] WARNING: [pool www] child 51131 exited on signal 9 (SIGKILL) after 30.003977 seconds from start\n";
  Diagnosis d = test::diagnose_text(kills +
                                    "$ cat /sys/fs/cgroup/system.slice/php8.2-fpm.service/memory.events\n"
                                    "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  // With a kill counted, the same lines are the cgroup's OOM kills.
  Diagnosis counted = test::diagnose_text(kills +
                                          "$ cat /sys/fs/cgroup/system.slice/php8.2-fpm.service/memory.events\n"
                                          "low 0\nhigh 0\nmax 412\noom 2\noom_kill 2\n");
  EXPECT_NE(counted.layer, Layer::not_memory);
}

// A cat of the limit and peak, then a grep of memory.oom_control, in one
// `sh -c '...'` (modelled on jupyter/help#418; values ours): the grep's line
// is the events file's, and its kill count is the cgroup's OOM kill.
TEST(CgroupFiles, AGrepOfTheEventsFileAfterTheCatIsRead) {
  const std::string text =
      "$ docker exec nb sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory/memory.max_usage_in_bytes; "
      "grep oom_kill /sys/fs/cgroup/memory/memory.oom_control'\n"
      "2147483648\n2147483648\noom_kill 3\n";
  auto kills = of_kind(text, FactKind::cgroup_oom_counter);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].count, 3u);
  auto limits = of_kind(text, FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].limit, 2147483648u);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::container_limit);
}

// Files read after a `cd` into the group (modelled on Kubernetes issues
// where a node's pod cgroup is inspected by hand; our own figures): the
// directory names whose group it is, a pod's here.
TEST(CgroupFiles, FilesReadAfterACdIntoAPodsGroupAreThePods) {
  auto paste = [](const std::string& dir) {
    return "root@node-2:~# cd /sys/fs/cgroup/" + dir + "\n"
           "root@node-2:~# cat memory.max\n268435456\n"
           "root@node-2:~# cat memory.events\nlow 0\nhigh 0\nmax 2214\noom 31\noom_kill 31\n";
  };
  Diagnosis pod = test::diagnose_text(
      paste("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod4c8e1a2f_93b7_4d05_a6e1_7f2c9b0d8e31.slice"));
  EXPECT_EQ(pod.layer, Layer::k8s_pod_limit) << test::reason_text(pod);
  EXPECT_EQ(test::diagnose_text(paste("system.slice/docker-4f1e2d3c4b5a.scope")).layer, Layer::container_limit);
}

}  // namespace
}  // namespace aimem
