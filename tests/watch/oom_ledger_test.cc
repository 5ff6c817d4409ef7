// The OOM ledger: one event per kill, whichever of the kernel report, the
// notification's counters and the sample's counters come first; steps no
// report explains are events of their own (once, folded up a v2 hierarchy);
// credits expire. The end-to-end count on a real kill is in watch_cli_test.
#include "watch/oom_ledger.h"

#include <gtest/gtest.h>

namespace aimem::watch {
namespace {

constexpr int64_t S = 1000000;
constexpr int64_t kGrace = 5 * S, kMatch = 30 * S;

TEST(OomLedger, AncestorsOfACgroup) {
  EXPECT_EQ(cgroup_and_ancestors("/a/b/c"), (std::vector<std::string>{"/a/b/c", "/a/b", "/a"}));
  EXPECT_EQ(cgroup_and_ancestors("/a/"), (std::vector<std::string>{"/a"}));
  EXPECT_TRUE(cgroup_and_ancestors("/").empty());
  EXPECT_TRUE(cgroup_and_ancestors("").empty());
}

TEST(OomLedger, KernelReportFirstThenCounterStepIsOneKill) {
  OomLedger l(kGrace, kMatch);
  EXPECT_FALSE(l.counters("/job", 0, 0, 0));  // baseline
  l.kernel_report("/job", "/job", 1 * S);
  EXPECT_TRUE(l.counters("/job", 0, 1, 2 * S));  // v1: oom_kill only
  EXPECT_EQ(l.pending(), 0u);
  EXPECT_TRUE(l.due(100 * S).empty());
}

TEST(OomLedger, CounterStepFirstWaitsForTheReport) {
  OomLedger l(kGrace, kMatch);
  l.counters("/job", 0, 0, 0);
  EXPECT_TRUE(l.counters("/job", 0, 1, 1 * S));  // the notification's read, before the report
  EXPECT_EQ(l.pending(), 1u);
  ASSERT_TRUE(l.next_due());
  EXPECT_EQ(*l.next_due(), 1 * S + kGrace);
  EXPECT_TRUE(l.due(2 * S).empty());  // within the grace
  l.kernel_report("/job", "/job", 2 * S);
  EXPECT_EQ(l.pending(), 0u);
  EXPECT_FALSE(l.next_due());
  // The sample after it reads the same counters: no step, no event.
  EXPECT_FALSE(l.counters("/job", 0, 1, 3 * S));
  EXPECT_TRUE(l.due(100 * S).empty());
}

TEST(OomLedger, StepWithoutAReportIsOneEventAfterTheGrace) {
  OomLedger l(kGrace, kMatch);
  l.counters("/job", 0, 0, 0);
  l.counters("/job", 0, 1, 1 * S);
  EXPECT_TRUE(l.due(1 * S + kGrace - 1).empty());
  auto due = l.due(1 * S + kGrace);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].cgroup, "/job");
  EXPECT_EQ(due[0].kill_delta, 1u);
  EXPECT_EQ(due[0].kills, 1u);
  EXPECT_EQ(due[0].seen_us, 1 * S);
  EXPECT_TRUE(l.due(100 * S).empty());  // once
}

TEST(OomLedger, V2HierarchyOfOneKillIsOneEvent) {
  // Limit on /pod (oom_memcg), victim in /pod/ctr (task_memcg): v2 counts
  // the kill in /pod/ctr, /pod and /, the OOM in /pod and above.
  for (bool with_report : {true, false}) {
    OomLedger l(kGrace, kMatch);
    for (const char* c : {"/kubepods", "/kubepods/pod", "/kubepods/pod/ctr"}) l.counters(c, 0, 0, 0);
    if (with_report) l.kernel_report("/kubepods/pod", "/kubepods/pod/ctr", 1 * S);
    l.counters("/kubepods/pod", 1, 1, 2 * S);
    l.counters("/kubepods/pod/ctr", 0, 1, 2 * S);
    auto due = l.due(10 * S);
    if (with_report) {
      EXPECT_TRUE(due.empty());
    } else {
      ASSERT_EQ(due.size(), 1u);
      EXPECT_EQ(due[0].cgroup, "/kubepods/pod/ctr");  // the deepest: the victim's
      EXPECT_EQ(due[0].kill_delta, 1u);
    }
    EXPECT_EQ(l.pending(), 0u);
    // An ancestor's step seen only later (another sample) is the same kill.
    EXPECT_TRUE(l.counters("/kubepods", 1, 1, 11 * S));
    EXPECT_TRUE(l.due(20 * S).empty());
  }
}

TEST(OomLedger, TwoKillsAreTwoEvents) {
  OomLedger l(kGrace, kMatch);
  l.counters("/a", 0, 0, 0);
  l.counters("/b", 0, 0, 0);
  l.kernel_report("/a", "/a", 1 * S);
  l.counters("/a", 0, 2, 2 * S);  // two kills in /a, one reported
  l.counters("/b", 0, 1, 2 * S);  // and one in /b, none reported
  auto due = l.due(10 * S);
  ASSERT_EQ(due.size(), 2u);
  for (const auto& s : due) EXPECT_EQ(s.kill_delta, 1u) << s.cgroup;
}

TEST(OomLedger, OomWithoutAKillIsAnEvent) {
  // v2: the OOM killer ran at the limit and found nothing to kill.
  OomLedger l(kGrace, kMatch);
  l.counters("/job", 3, 1, 0);
  l.counters("/job", 4, 1, 1 * S);
  auto due = l.due(10 * S);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].oom_delta, 1u);
  EXPECT_EQ(due[0].kill_delta, 0u);
}

TEST(OomLedger, CreditsExpire) {
  // A report whose step never came (a v1 ancestor, a cgroup not sampled)
  // must not hide a later kill there.
  OomLedger l(kGrace, kMatch);
  l.counters("/job", 0, 0, 0);
  l.kernel_report("/other", "/job-parent/x", 1 * S);
  l.kernel_report("/job", "/job", 1 * S);
  l.counters("/job", 0, 1, 1 * S + kMatch + 1);  // too late to be that report's
  auto due = l.due(1 * S + kMatch + 1 + kGrace);
  ASSERT_EQ(due.size(), 1u);
}

TEST(OomLedger, CountersThatGoBackAreANewBaseline) {
  OomLedger l(kGrace, kMatch);
  l.counters("/job", 0, 5, 0);
  EXPECT_FALSE(l.counters("/job", 0, 0, 1 * S));  // removed and made again
  EXPECT_TRUE(l.counters("/job", 0, 1, 2 * S));
  EXPECT_EQ(l.due(10 * S).size(), 1u);
  // Forgotten baselines: the first reading after is a baseline again.
  l.keep_only({});
  EXPECT_FALSE(l.counters("/job", 0, 9, 11 * S));
}

// The watch flushes what is left when it ends with the end of time
// (INT64_MAX): every step waiting is due, and no arithmetic overflows (the
// sanitizer build caught a credit's expiry computed past INT64_MAX).
TEST(OomLedger, FlushAtTheEndOfTimeTakesEveryStep) {
  OomLedger l(kGrace, kMatch);
  for (const char* c : {"/kubepods", "/kubepods/pod", "/kubepods/pod/ctr"}) l.counters(c, 0, 0, 0);
  l.counters("/kubepods/pod", 1, 1, 2 * S);
  l.counters("/kubepods/pod/ctr", 0, 1, 2 * S);
  auto due = l.due(INT64_MAX);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].cgroup, "/kubepods/pod/ctr");
  EXPECT_EQ(l.pending(), 0u);
  EXPECT_FALSE(l.next_due());
}

}  // namespace
}  // namespace aimem::watch
