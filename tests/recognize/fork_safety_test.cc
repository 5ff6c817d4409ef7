// macOS's Objective-C fork-safety crash (src/recognize/families/fork_safety.cc),
// written here in the runtime's and gunicorn's formats with our own pids and
// times, modelled on gunicorn worker deaths on macOS reported in
// benoitc/gunicorn issue threads (2018-2024).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

constexpr const char* kWorkerKilled =
    "[2024-05-30 17:12:19 +0800] [52118] [ERROR] Worker (pid:52125) was sent SIGKILL! Perhaps out of memory?\n";

TEST(ForkSafety, AForkedChildTheRuntimeCrashedIsNotMemory) {
  const std::string objc =
      "[2024-05-30 17:12:03 +0800] [52125] [INFO] Booting worker with pid: 52125\n"
      "objc[52125]: +[__NSCFConstantString initialize] may have been in progress in another thread when fork() was called. We "
      "cannot safely call it or ignore it in the fork() child process. Crashing instead. Set a breakpoint on "
      "objc_initializeAfterForkError to debug.\n";
  Diagnosis d = test::diagnose_text(objc + kWorkerKilled);
  EXPECT_EQ(d.layer, Layer::not_memory) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("fork safety"), std::string::npos);
  // Gunicorn's guess alone is a kill whose pool nothing names.
  EXPECT_NE(test::diagnose_text(kWorkerKilled).layer, Layer::not_memory);
  // The phrase quoted in prose, without the runtime's prefix, is not the crash.
  EXPECT_NE(test::diagnose_text("note: the warning says it may have been in progress when fork() was called\n" +
                                std::string(kWorkerKilled))
                .layer,
            Layer::not_memory);
}

}  // namespace
}  // namespace aimem
