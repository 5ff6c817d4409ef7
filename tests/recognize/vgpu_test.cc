// HAMi-core's refusal of an allocation over a container's vGPU memory slice
// (src/recognize/families/vgpu.cc; modelled on Project-HAMi/HAMi threads,
// values are ours): the slice, not the card, ran out.
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

TEST(Vgpu, HamiCoreOomIsTheSliceTooSmall) {
  const char* log =
      "[HAMI-core Msg(30:140387636202368:libvgpu.c:836)]: Initializing.....\n"
      "epoch 1 loss 2.2874\n"
      "[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 4219469824 / 4194304000\n"
      "RuntimeError: CUDA error: unrecognized error code\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  Fact g;
  for (auto& f : test::facts_of(log))
    if (f.kind == FactKind::gpu_oom && f.limit) g = f;
  EXPECT_EQ(g.limit, 4194304000u);
  EXPECT_EQ(g.gpu, 0);
  // HAMi's start-up messages alone are no failure.
  EXPECT_EQ(test::diagnose_text("[HAMI-core Msg(30:140387636202368:libvgpu.c:855)]: Initialized\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
