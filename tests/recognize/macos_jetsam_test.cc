// macOS jetsam (src/recognize/families/macos_jetsam.cc): a JetsamEvent
// report's killed processes and the kernel's memorystatus log line. Inputs
// written here in the formats macOS prints, with our own pids, names and
// counts, modelled on manaflow-ai/cmux#4214 (a JetsamEvent report of node
// processes on an 8 GB Mac) and ollama/ollama threads of memorystatus kills.
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

const char* kReport =
    "{\"bug_type\":\"298\",\"timestamp\":\"2026-05-15 22:03:57.00 +0800\",\"os_version\":\"macOS 15.5 (24F74)\"}\n"
    "{\n"
    "  \"largestProcess\" : \"node\",\n"
    "  \"memoryStatus\" : {\n"
    "    \"pageSize\" : 16384,\n"
    "    \"memoryPressure\" : true\n"
    "  },\n"
    "  \"processes\" : [\n"
    "    {\"pid\" : 41877, \"name\" : \"node\", \"rpages\" : 41290, \"reason\" : \"vm-compressor-space-shortage\", \"states\" : [\"daemon\"]},\n"
    "    {\"pid\" : 41955, \"name\" : \"node\", \"rpages\" : 38851, \"states\" : [\"daemon\"]},\n"
    "    {\"pid\" : 398, \"name\" : \"WindowServer\", \"rpages\" : 9140, \"states\" : [\"daemon\"]}\n"
    "  ]\n"
    "}\n";

TEST(MacosJetsam, AReportsKillUnderPressureIsTheHosts) {
  auto kills = test::facts_of_kind(kReport, FactKind::kernel_oom_kill);
  ASSERT_EQ(kills.size(), 1u);  // only the process with a reason was killed
  EXPECT_EQ(kills[0].process, "node");
  EXPECT_EQ(kills[0].pid, 41877);
  EXPECT_EQ(*kills[0].rss, 41290ull * 16384);
  Diagnosis d = test::diagnose_text(kReport);
  EXPECT_EQ(d.layer, Layer::host_ram);
}

TEST(MacosJetsam, TheKernelsLogLineAndAPerProcessLimit) {
  Diagnosis d = test::diagnose_text(
      "2026-02-11 09:14:03.118 kernel[0:1a2b] memorystatus: killing_top_process pid 812 [ollama] (vm-compressor-thrashing 2) "
      "7340032KB - memorystatus_available_pages: 3214\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  auto k = test::facts_of_kind(
      "kernel: memorystatus: killing_specific_process pid 604 [node] (vm-pageshortage 1) 216928KB - memorystatus_available_pages: 3214\n",
      FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(*k[0].rss, 216928ull * units::KiB);
  // A process's own limit is not the machine running short.
  Diagnosis own = test::diagnose_text(
      "    {\"pid\" : 912, \"name\" : \"MyApp\", \"rpages\" : 90000, \"reason\" : \"per-process-limit\"}\n");
  EXPECT_NE(own.layer, Layer::host_ram);
  EXPECT_NE(own.layer, Layer::none);
  // Xcode's debugger on iOS: the app killed at its own limit, the OS's cap
  // on one app, a container's limit in all but name (as every reader of the
  // corpus labelled it: 9 training cases of 9 by 2026-12-07); the fixes are
  // the app's footprint and the entitlement, not a limit to raise.
  Diagnosis ios = test::diagnose_text("Message from debugger: Terminated due to memory issue\n");
  EXPECT_EQ(ios.layer, Layer::container_limit);
  ASSERT_FALSE(ios.incidents.empty());
  EXPECT_NE(ios.incidents[0].summary.find("own memory limit"), std::string::npos) << ios.incidents[0].summary;
  ASSERT_EQ(ios.incidents[0].fixes.size(), 2u);
  EXPECT_NE(ios.incidents[0].fixes[1].action.find("increased-memory-limit"), std::string::npos);
  // The same limit raised as an exception (modelled on a Core ML chat app
  // stopped during its first prediction, our own figures), with its size.
  Diagnosis exc = test::diagnose_text("Thread 7: EXC_RESOURCE (RESOURCE_TYPE_MEMORY: limit=6144 MB, unused=0x0)\n");
  EXPECT_EQ(exc.layer, Layer::container_limit);
  ASSERT_FALSE(exc.incidents.empty());
  EXPECT_NE(exc.incidents[0].summary.find("6.00 GiB"), std::string::npos) << exc.incidents[0].summary;
  EXPECT_EQ(test::diagnose_text("Thread 7: EXC_RESOURCE (RESOURCE_TYPE_CPU: limit=50%)\n").layer, Layer::none);
  // The dialog macOS raises when RAM and swap are full: the host's memory.
  EXPECT_EQ(test::diagnose_text("Your system has run out of application memory.\n").layer, Layer::host_ram);
  // A row without a reason, or a search for the words, is no kill.
  EXPECT_EQ(test::diagnose_text("    {\"pid\" : 41955, \"name\" : \"node\", \"rpages\" : 38851}\n").layer, Layer::none);
  EXPECT_EQ(test::diagnose_text("$ log show --predicate 'eventMessage contains \"memorystatus: killing_\"' --last 1h\n").layer,
            Layer::none);
}

// Every row of the report, killed or not, is a row of its process table:
// six node processes holding most of the machine are copies of one program
// run at once (cmux#4214's shape, our own counts).
TEST(MacosJetsam, TheReportsRowsAreAProcessTableAndCopiesOfTheVictimAreConcurrency) {
  std::string rows;
  for (int k = 0; k < 6; ++k)
    rows += "    {\"pid\" : " + std::to_string(41800 + k) + ", \"name\" : \"node\", \"rpages\" : " + std::to_string(38000 + 500 * k) +
            (k == 0 ? ", \"reason\" : \"vm-compressor-space-shortage\"" : "") + ", \"states\" : [\"daemon\"]},\n";
  const std::string report = "{\n  \"memoryStatus\" : {\n    \"pageSize\" : 16384\n  },\n  \"processes\" : [\n" + rows +
                             "    {\"pid\" : 1517, \"name\" : \"cmux\", \"rpages\" : 18206, \"states\" : [\"frontmost\"]}\n  ]\n}\n";
  std::vector<Fact> table;
  for (Fact& f : test::facts_of_kind(report, FactKind::memory_usage))
    if (f.detail == "process table") table.push_back(std::move(f));
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].process, "node");
  EXPECT_EQ(*table[0].sequences, 6u);
  EXPECT_EQ(*table[0].usage, (6ull * 38000 + 500ull * 15) * 16384);
  EXPECT_EQ(*table[0].total, *table[0].usage + 18206ull * 16384);
  Diagnosis d = test::diagnose_text(report);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  // The first report alone (two node rows): too few copies to say so.
  EXPECT_NE(test::diagnose_text(kReport).cause, Cause::concurrency_batch);
}

// RAM and swap both full (modelled on manaflow-ai/cmux#7490's log show
// output and older "low swap: killing largest compressed process" lines;
// our own pids and times): the host's memory, the app terminated for it.
TEST(MacosJetsam, NoPagingSpaceIsTheHostsMemory) {
  const std::string log =
      "2026-03-02 10:11:40.118302-0800 kernel: low swap: failed to create swapfile\n"
      "2026-03-02 10:12:02.903114-0800 kernel: low swap: triggering no paging space action\n"
      "2026-03-02 10:12:03.511877-0800 runningboardd: [app<application.com.example.editor(501)>:8812] Terminating with context: "
      "<RBSTerminateContext| explanation:no paging space action domain:15 code:0x0 reportType:None maxTerminationResistance:Interactive>\n";
  auto kills = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].pid, 8812);
  EXPECT_EQ(kills[0].process, "com.example.editor");
  EXPECT_EQ(test::facts_of_kind(log, FactKind::kernel_oom_event).size(), 1u);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::host_ram);
  auto old = test::facts_of_kind(
      "Mar  2 10:12:02 mbp kernel[0]: low swap: killing largest compressed process with pid 4412 (Xcode) and size 2104 MB\n",
      FactKind::kernel_oom_kill);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].process, "Xcode");
  EXPECT_EQ(*old[0].rss, 2104ull << 20);
  // A swapfile that could not be created, alone, is not a kill.
  EXPECT_EQ(test::diagnose_text("2026-03-02 10:11:40.118302-0800 kernel: low swap: failed to create swapfile\n").layer, Layer::none);
}

// macOS 12 and later write the report one key a line (modelled on
// jundot/omlx#702's JetsamEvent .ips; our own pids and counts): the keys of
// one object are gathered, the killed one found by its reason.
TEST(MacosJetsam, APrettyPrintedReportIsReadKeyByKey) {
  const std::string report =
      "  \"pageSize\" : 16384,\n"
      "  \"largestProcess\" : \"python3.12\",\n"
      "  \"processes\" : [\n"
      "  {\n"
      "    \"uuid\" : \"1b2c\",\n"
      "    \"rpages\" : 2621440,\n"
      "    \"reason\" : \"vm-compressor-space-shortage\",\n"
      "    \"pid\" : 50122,\n"
      "    \"name\" : \"python3.12\",\n"
      "    \"lifetimeMax\" : 2700000\n"
      "  },\n"
      "  {\n"
      "    \"rpages\" : 30110,\n"
      "    \"pid\" : 401,\n"
      "    \"name\" : \"WindowServer\"\n"
      "  }\n"
      "  ]\n";
  auto kills = test::facts_of_kind(report, FactKind::kernel_oom_kill);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].process, "python3.12");
  EXPECT_EQ(kills[0].pid, 50122);
  EXPECT_EQ(*kills[0].rss, 2621440ull * 16384);
  EXPECT_EQ(kills[0].where.line, 7u);
  EXPECT_EQ(test::diagnose_text(report).layer, Layer::host_ram);
  // JSON written without Apple's " : " is somebody else's: no kill.
  EXPECT_TRUE(test::facts_of_kind("{\n\"reason\": \"vm-compressor-space-shortage\",\n\"pid\": 9,\n\"name\": \"x\"\n}\n",
                                  FactKind::kernel_oom_kill)
                  .empty());
}

// runningboardd terminating an app to free disk (modelled on
// sw33tLie/macshot#246's log show; our own bundle and pids): a kill that
// names no memory. Its no-paging-space termination stays the host's memory.
TEST(MacosJetsam, ATerminationForAnotherReasonIsALookAlike) {
  const std::string disk =
      "2026-06-16 23:41:07.415 Df runningboardd[173:4a21f] [app<application.com.example.shots(501)>:18342] Terminating with "
      "context: <RBSTerminateContext| code:0xBADDD15C explanation:CacheDeleteAppContainerCaches requesting termination assertion for "
      "com.example.shots>\n";
  Diagnosis d = test::diagnose_text(disk);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_NE(d.incidents.at(0).reasons.at(0).find("CacheDeleteAppContainerCaches"), std::string::npos);
  std::string paging = disk;
  paging.replace(paging.find("CacheDeleteAppContainerCaches"), 29, "no paging space action");
  EXPECT_EQ(test::diagnose_text(paging).layer, Layer::host_ram);
}

}  // namespace
}  // namespace aimem
