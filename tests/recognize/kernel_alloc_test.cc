// The kernel page allocator's failure warning (src/recognize/families/
// kernel_alloc.cc). Inputs written here in the format of RHEL 7's 3.10 and
// a 5.x kernel with our own values, modelled on a node_exporter order-5
// failure on a VM with half a GiB free (prometheus/node_exporter threads) and
// the warn_alloc format of mm/page_alloc.c.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

const std::string kHead = "Apr 17 03:12:44 mon-3 kernel: node_exporter: page allocation failure: order:5, mode:0xd0\n";
const std::string kDma =
    "Apr 17 03:12:44 mon-3 kernel: Node 0 DMA: 1*4kB (U) 0*8kB 1*16kB (U) 0*32kB 2*64kB (U) 1*128kB (U) 1*256kB (U) 0*512kB "
    "1*1024kB (U) 1*2048kB (M) 3*4096kB (M) = 15892kB\n";
const std::string kNormal =
    "Apr 17 03:12:44 mon-3 kernel: Node 0 Normal: 41208*4kB (UEM) 12470*8kB (UEM) 1103*16kB (UEM) 96*32kB (UEM) 0*64kB 0*128kB "
    "0*256kB 0*512kB 0*1024kB 0*2048kB 0*4096kB = 286960kB\n";

TEST(KernelAlloc, AHighOrderFailureWithFreeMemoryInSmallBlocksIsFragmentation) {
  Diagnosis d = diagnose_text(kHead + "Apr 17 03:12:44 mon-3 kernel: Call Trace:\n" + kDma + kNormal);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  ASSERT_FALSE(d.incidents.empty());
  // The DMA zone's order-10 blocks were never on offer: the Normal zone's lists decide.
  EXPECT_NE(d.incidents[0].summary.find("free in smaller blocks only"), std::string::npos) << d.incidents[0].summary;
}

TEST(KernelAlloc, AnOrderZeroFailureIsTheHostShortOfPages) {
  Diagnosis d = diagnose_text(
      "[88123.441201] kworker/u16:2: page allocation failure: order:0, mode:0x480020(GFP_ATOMIC), nodemask=(null),cpuset=/,mems_allowed=0\n"
      "[88123.441260] Node 0 Normal: 12*4kB (UM) 3*8kB (M) 0*16kB 0*32kB 0*64kB 0*128kB 0*256kB 0*512kB 0*1024kB 0*2048kB 0*4096kB = 72kB\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_NE(d.cause, Cause::fragmentation);
  // A mention in prose is no failure.
  EXPECT_EQ(diagnose_text("see the thread about 'node_exporter: page allocation failure: order:5' warnings on RHEL 7\n").layer, Layer::none);
}

// The driver whose allocation failed says so after the report, in words
// close to ggml's ("failed to allocate ... buffer"): still the kernel's own
// page allocator, not an accelerator (modelled on an OpenWrt MT7986 router's
// ethernet driver after weeks of uptime; values ours).
TEST(KernelAlloc, ADriversFailedToAllocateBufferAfterTheReportIsStillTheHost) {
  Diagnosis d = diagnose_text(
      "Apr  2 06:15:11 gw kernel: [3410203.118240] netifd: page allocation failure: order:10, mode:0x40dc0(GFP_KERNEL|__GFP_COMP|__GFP_ZERO), "
      "nodemask=(null),cpuset=/,mems_allowed=0\n"
      "Apr  2 06:15:11 gw kernel: [3410203.340854] Node 0 DMA: 1021*4kB (UME) 812*8kB (UME) 533*16kB (UME) 301*32kB (UME) 122*64kB (UM) "
      "41*128kB (UM) 9*256kB (M) 2*512kB (M) 0*1024kB 0*2048kB 0*4096kB = 45124kB\n"
      "Apr  2 06:15:11 gw kernel: [3410203.391177] mtk_soc_eth 15100000.ethernet: failed to allocate wed buffer ring (-12)\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  EXPECT_TRUE(test::facts_of_kind("mtk_soc_eth 15100000.ethernet: failed to allocate wed buffer ring (-12)\n", FactKind::gpu_oom).empty());
  // ggml's own wording still is the accelerator's.
  EXPECT_FALSE(test::facts_of_kind("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4725934080\n", FactKind::gpu_oom).empty());
}

}  // namespace
}  // namespace aimem
