// HAMi-core's refusal of an allocation over a container's vGPU memory slice
// (src/recognize/families/vgpu.cc; modelled on Project-HAMi/HAMi threads,
// values are ours): the slice, not the card, ran out; what filled it is read
// from the phase, as for any GPU failure.
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

TEST(Vgpu, HamiCoreOomIsTheSliceTooSmall) {
  const char* log =
      "[HAMI-core Msg(30:140387636202368:libvgpu.c:836)]: Initializing.....\n"
      "Loading checkpoint shards:  50%|#####     | 1/2 [00:04<00:04,  4.12s/it]\n"
      "[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 4219469824 / 4194304000\n"
      "RuntimeError: CUDA error: unrecognized error code\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("slice"), std::string::npos) << test::reason_text(d);
  Fact g;
  for (auto& f : test::facts_of(log))
    if (f.kind == FactKind::gpu_oom && f.limit) g = f;
  EXPECT_EQ(g.limit, 4194304000u);
  EXPECT_EQ(g.gpu, 0);
  // With nothing saying what filled it, the slice is the lean.
  Diagnosis bare = test::diagnose_text(
      "[HAMI-core ERROR (pid:41 thread=140382094939712 allocator.c:53)]: Device 0 OOM 12952010752 / 12884901888\n"
      "RuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(bare.cause, Cause::limit_too_low) << test::reason_text(bare);
  // HAMi's start-up messages alone are no failure.
  EXPECT_EQ(test::diagnose_text("[HAMI-core Msg(30:140387636202368:libvgpu.c:855)]: Initialized\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
