// Two versions of one model loaded at once (src/recognize/families/
// model_versions.cc): Triton loads a new version beside the one serving.
// Logs written here in Triton's formats with our own model names, versions
// and figures, modelled on triton-inference-server/server#3832 and #8413 and
// commaai/miniray#95 (the corpus cases oa-010, fo-019, ga-039).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> overlaps(const std::string& text) {
  return test::facts_of_kind(text, FactKind::runtime_setting, Cause::deployment_overlap);
}

const std::string kFailedLoad =
    "I0611 14:02:10.118372 1 model_lifecycle.cc:473] \"loading: scorer:7\"\n"
    "I0611 14:02:10.226904 1 libtorch.cc:2516] \"TRITONBACKEND_ModelInstanceInitialize: scorer_0_0 (GPU device 0)\"\n"
    "E0611 14:02:13.771201 1 model_lifecycle.cc:642] \"failed to load 'scorer' version 7: Internal: failed to load model "
    "'scorer': CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 22.05 GiB of which 612.00 MiB is "
    "free. Including non-PyTorch memory, this process has 21.44 GiB memory in use. Of the allocated memory 9.80 GiB is "
    "allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\"\n";

TEST(ModelVersions, ANewVersionFailingBesideTheServingOneIsAnOverlap) {
  // The repository index as one JSON line: version 6 still READY.
  std::string text = kFailedLoad +
                     "$ curl -s -X POST localhost:8000/v2/repository/index\n"
                     "[{\"name\":\"scorer\",\"version\":\"6\",\"state\":\"READY\"},{\"name\":\"scorer\",\"version\":\"7\","
                     "\"state\":\"UNAVAILABLE\",\"reason\":\"Internal: failed to load model 'scorer'\"}]\n";
  auto f = overlaps(text);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].process, "scorer");
  EXPECT_NE(f[0].detail.find("version 7"), std::string::npos) << f[0].detail;
  EXPECT_NE(f[0].detail.find("version 6"), std::string::npos) << f[0].detail;
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

TEST(ModelVersions, TheStartUpTableShowsTheServingVersion) {
  std::string table =
      "I0611 09:00:11.408312 1 server.cc:592]\n"
      "+--------+---------+--------+\n"
      "| Model  | Version | Status |\n"
      "+--------+---------+--------+\n"
      "| scorer | 6       | READY  |\n"
      "+--------+---------+--------+\n";
  EXPECT_EQ(overlaps(table + kFailedLoad).size(), 1u);
  EXPECT_EQ(test::diagnose_text(table + kFailedLoad).cause, Cause::deployment_overlap);
}

TEST(ModelVersions, OnlyTheSameModelAtAnotherVersionCounts) {
  // The same version READY (a reload of one version), or another model
  // READY, is no second copy of this one: the load's own reading stays.
  std::string same = kFailedLoad + "[{\"name\":\"scorer\",\"version\":\"7\",\"state\":\"READY\"}]\n";
  std::string other = kFailedLoad + "[{\"name\":\"ranker\",\"version\":\"6\",\"state\":\"READY\"}]\n";
  EXPECT_TRUE(overlaps(same).empty());
  EXPECT_TRUE(overlaps(other).empty());
  EXPECT_TRUE(overlaps(kFailedLoad).empty());
  EXPECT_NE(test::diagnose_text(other).cause, Cause::deployment_overlap);
}

}  // namespace
}  // namespace aimem
