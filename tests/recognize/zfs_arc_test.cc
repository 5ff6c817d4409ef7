// The ZFS ARC's size (src/recognize/families/zfs_arc.cc). Inputs written here
// in the kstat's, awk's and arc_summary's formats with our own values,
// modelled on openzfs/zfs threads of global OOM kills while the ARC held far
// more than its zfs_arc_max, and on Proxmox hosts killing a VM.
#include <gtest/gtest.h>

#include <string>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

const char* kKill =
    "[412233.904417] qemu-system-x86 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
    "oom_score_adj=0\n"
    "[412233.905263] Out of memory: Killed process 7710 (qemu-system-x86) total-vm:9214088kB, anon-rss:4228244kB, file-rss:2048kB, "
    "shmem-rss:0kB, UID:0 pgtables:9048kB oom_score_adj:0\n";

TEST(ZfsArc, AnArcHoldingMostOfTheRamIsTheOtherHolder) {
  const std::string kstat =
      "$ free -g\n"
      "               total        used        free      shared  buff/cache   available\n"
      "Mem:              31          30           0           0           0           0\n"
      "$ grep -E '^(size|c_max) ' /proc/spl/kstat/zfs/arcstats\n"
      "c_max                           4    4294967296\n"
      "size                            4    20401382016\n";
  auto f = test::facts_of_kind(kstat, FactKind::host_state);
  bool arc = false;
  for (const Fact& x : f) arc = arc || (x.detail == kZfsArc && x.usage == 20401382016u);
  EXPECT_TRUE(arc);
  Diagnosis d = diagnose_text(kstat + kKill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::other_process);
  // arc_summary's line, both generations.
  Diagnosis summary = diagnose_text(std::string("ARC size (current):                                   987.5 %   39.5 GiB\n") + kKill);
  EXPECT_EQ(summary.cause, Cause::other_process);
  auto old = test::facts_of_kind("ARC Size:                               74.12%  47.44   GiB\n", FactKind::host_state);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_NEAR(static_cast<double>(*old[0].usage), 47.44 * static_cast<double>(units::GiB), static_cast<double>(units::MiB));
}

// A small ARC, or a "size" row of anything but the arcstats, says nothing.
TEST(ZfsArc, ASmallArcOrAnotherSizeRowSaysNothing) {
  EXPECT_NE(diagnose_text(std::string("$ cat /proc/spl/kstat/zfs/arcstats\nsize 4 1073741824\n") + kKill).cause, Cause::other_process);
  EXPECT_TRUE(test::facts_of_kind("size 4 21265997824\n", FactKind::host_state).empty());
}

}  // namespace
}  // namespace aimem
