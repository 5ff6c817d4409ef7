// Boards whose GPU has no memory of its own (src/recognize/families/
// unified_memory.cc; diagnose/classify.cc reads the platform fact). Written
// here in the formats a Jetson user pastes, with our own figures, modelled
// on TensorRT and PyTorch failures on Jetson Orin and Nano boards.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

// The GPU runtime's allocation failed: the pool that refused is the GPU's,
// as the corpus labels such failures (by the allocator that reported), and
// the reason says the memory is the host's RAM shared with it. The same
// failure without the board in view reads the same layer, without that note.
TEST(UnifiedMemory, AGpuRuntimesFailureOnAJetsonIsTheGpusPoolSharedWithTheHost) {
  const std::string oom =
      "RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 29.99 GiB total capacity; 27.10 GiB already allocated; "
      "812.00 MiB free; 27.40 GiB reserved in total by PyTorch)\n";
  Diagnosis jetson = test::diagnose_text("Model: NVIDIA Jetson AGX Orin Developer Kit - Jetpack 6.0 [L4T 36.3.0]\n" + oom);
  EXPECT_EQ(jetson.layer, Layer::gpu_vram) << test::reason_text(jetson);
  EXPECT_NE(test::reason_text(jetson).find("unified-memory board"), std::string::npos) << test::reason_text(jetson);
  Diagnosis plain = test::diagnose_text(oom);
  EXPECT_EQ(plain.layer, Layer::gpu_vram);
  EXPECT_EQ(test::reason_text(plain).find("unified-memory board"), std::string::npos);
}

}  // namespace
}  // namespace aimem
