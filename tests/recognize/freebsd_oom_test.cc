// FreeBSD's page daemon kill (src/recognize/families/freebsd_oom.cc), in the
// formats vm_pageout.c prints across releases (modelled on freebsd/freebsd-src's
// vm_pageout_oom and a pkg fetch killed on a small VM; values are ours), and
// HTCondor's hold reason for a job over its request_memory (modelled on
// htcondor/htcondor's starter message; values ours).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

TEST(FreebsdOom, EachReleasesKillLineIsHostRamWithTheVictim) {
  for (const char* line : {"Jul 21 22:30:41 bsd kernel: pid 878 (pkg), jid 0, uid 0, was killed: failed to reclaim memory\n",
                           "pid 4512 (java), jid 3, uid 80, was killed: out of swap space\n",
                           "pid 2210 (clang), jid 0, uid 1001, was killed: a thread waited too long to allocate a page\n",
                           "pid 1203 (mysqld), uid 88, was killed: out of swap space\n"}) {
    Diagnosis d = test::diagnose_text(std::string("swap_pager: out of swap space\nswp_pager_getswapspace(22): failed\n") + line);
    EXPECT_EQ(d.layer, Layer::host_ram) << line;
    ASSERT_FALSE(d.incidents.empty());
  }
  auto f = test::facts_of("pid 878 (pkg), jid 0, uid 0, was killed: failed to reclaim memory\n");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].kind, FactKind::kernel_oom_kill);
  EXPECT_EQ(f[0].pid, 878);
  EXPECT_EQ(f[0].process, "pkg");
  // Another reason (a signal sent by a user) is not the page daemon's kill.
  EXPECT_EQ(test::diagnose_text("pid 878 (pkg), jid 0, uid 0, was killed: by operator\n").layer, Layer::none);
}

TEST(HtcondorHold, AJobOverItsRequestMemoryIsItsLimit) {
  Diagnosis d = test::diagnose_text(
      "$ condor_q -hold -af ClusterId ProcId HoldReasonCode RequestMemory MemoryUsage HoldReason\n"
      "4417123 12 34 2048 2302 Error from slot1_7@node412.cluster: Job has gone over memory limit of 2048 megabytes. Peak usage: 2302 megabytes.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  auto f = test::facts_of("Job has gone over memory limit of 2048 megabytes. Peak usage: 2302 megabytes.\n");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].limit, 2048 * units::MiB);
  EXPECT_EQ(f[0].usage, 2302 * units::MiB);
}

}  // namespace
}  // namespace aimem
