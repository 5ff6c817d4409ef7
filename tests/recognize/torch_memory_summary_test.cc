// torch.cuda.memory_summary() tables pasted after a failure.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

constexpr uint64_t kMiB = 1048576;

// The table of pytorch/pytorch#35901 (an OOM with half the GPU reserved but unusable), in the
// "MiB" units of newer releases; values are ours.
const char* kSummaryWithOom = R"(|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 1                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 1            |        cudaMalloc retries: 12        |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   5120 MiB |   9216 MiB |  88000 MiB |  82880 MiB |
|       from large pool |   5100 MiB |   9190 MiB |  87900 MiB |  82800 MiB |
|       from small pool |     20 MiB |     26 MiB |    100 MiB |     80 MiB |
|---------------------------------------------------------------------------|
| Active memory         |   5120 MiB |   9216 MiB |  88000 MiB |  82880 MiB |
|---------------------------------------------------------------------------|
| GPU reserved memory   |  14336 MiB |  14336 MiB |  18000 MiB |   3664 MiB |
|       from large pool |  14300 MiB |  14300 MiB |  17950 MiB |   3650 MiB |
|---------------------------------------------------------------------------|
| Non-releasable memory |   9216 MiB |   9300 MiB |  60000 MiB |  50784 MiB |
|===========================================================================|
)";

TEST(TorchMemorySummary, OomCountIsAGpuOomWithReservedButUnallocated) {
  auto g = of_kind(kSummaryWithOom, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::pytorch);
  EXPECT_EQ(g[0].layer, Layer::gpu_vram);
  EXPECT_EQ(g[0].gpu, 1);
  EXPECT_EQ(g[0].where.line, 4u);  // the OOM counter's line
  EXPECT_EQ(g[0].count, 12u);      // cudaMalloc retries
  EXPECT_EQ(g[0].allocated, 5120 * kMiB);
  EXPECT_EQ(g[0].reserved, 14336 * kMiB);
  EXPECT_EQ(g[0].reserved_unallocated, (14336 - 5120) * kMiB);
  EXPECT_NE(g[0].detail.find("1 CUDA OOM"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(kSummaryWithOom).layer, Layer::gpu_vram);
}

// The older "MB" table of facebookresearch/fairseq#2442, printed after fairseq's own OOM
// warning: one incident; and the same table printed again after the next failed step is the
// same failure. Values are ours.
TEST(TorchMemorySummary, OlderUnitsAndRepeatsAfterTheOomMessage) {
  const char* text = R"(2026-08-06 07:12:50 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. Tried to allocate 246.00 MiB (GPU 0; 31.75 GiB total capacity; 26.00 GiB already allocated; 460.38 MiB free; 27.88 GiB reserved in total by PyTorch)
|===========================================================================||                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|           CUDA OOMs: 1             |       cudaMalloc retries: 6          |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   26624 MB |   27000 MB |  767743 GB |  767717 GB |
|---------------------------------------------------------------------------|
| GPU reserved memory   |   28549 MB |   28549 MB |   30000 MB |    1451 MB |
|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|           CUDA OOMs: 1             |       cudaMalloc retries: 6          |
| Allocated memory      |   26624 MB |   27000 MB |  767743 GB |  767717 GB |
| GPU reserved memory   |   28549 MB |   28549 MB |   30000 MB |    1451 MB |
)";
  std::vector<Fact> summary;
  for (auto& f : of_kind(text, FactKind::gpu_oom))
    if (f.detail.find("memory summary") != std::string::npos) summary.push_back(f);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].gpu, 0);
  EXPECT_EQ(summary[0].count, 6u);
  EXPECT_EQ(summary[0].allocated, 26624 * kMiB);
  EXPECT_EQ(summary[0].reserved_unallocated, (28549 - 26624) * kMiB);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  ASSERT_EQ(d.incidents.size(), 1u);
}

// A table with no OOM (mlcommons/algorithmic-efficiency#425; ComfyUI's "Memory summary: "
// prefix, Comfy-Org/ComfyUI#13950) is context, not a failure.
TEST(TorchMemorySummary, NoOomIsContext) {
  const char* text = R"(Memory summary: |===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 0            |        cudaMalloc retries: 1         |
|===========================================================================|
| Allocated memory      |  10344 MiB |  14441 MiB |  45674 MiB |  35330 MiB |
| GPU reserved memory   |  12000 MiB |  15000 MiB |  20000 MiB |   8000 MiB |
)";
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  auto st = of_kind(text, FactKind::gpu_state);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].reserved, 12000 * kMiB);
  EXPECT_EQ(st[0].count, 1u);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
  // Prose that names the counter is not a table.
  EXPECT_TRUE(of_kind("the summary shows CUDA OOMs: 3 in the last run\n", FactKind::gpu_oom).empty());
}

}  // namespace
}  // namespace aimem
