// Operating-system limits that fail like memory (src/recognize/families/
// os_limits.cc). Inputs written here in each program's format with our own
// values, modelled on an OpenSearch Helm chart's pods failing the bootstrap
// check (opensearch-project/helm-charts threads), a Kafka broker's "Map
// failed" with thousands of partitions, and a Maven test run refused a thread
// at the per-user process limit on macOS.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(OsLimits, TheBootstrapChecksMapCountIsNotMemory) {
  Diagnosis d = diagnose_text(
      "ERROR: [1] bootstrap checks failed\n"
      "[1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]\n"
      "ERROR: OpenSearch did not exit normally - check the logs at /usr/share/opensearch/logs/search.log\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  ASSERT_FALSE(d.incidents[0].fixes.empty());
  EXPECT_NE(d.incidents[0].fixes[0].action.find("vm.max_map_count"), std::string::npos);
}

TEST(OsLimits, MapFailedBesideTheDefaultMapCountIsNotMemory) {
  const std::string fail =
      "java.io.IOException: Map failed\n\tat sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:940)\n"
      "Caused by: java.lang.OutOfMemoryError: Map failed\n\tat sun.nio.ch.FileChannelImpl.map0(Native Method)\n";
  Diagnosis d = diagnose_text("$ sysctl vm.max_map_count\nvm.max_map_count = 65530\n" + fail);
  EXPECT_EQ(d.layer, Layer::not_memory);
  // Raised far past the default, the count is not what stopped it.
  EXPECT_NE(diagnose_text("$ sysctl vm.max_map_count\nvm.max_map_count = 1048576\n" + fail).layer, Layer::not_memory);
  EXPECT_NE(diagnose_text(fail).layer, Layer::not_memory);
}

TEST(OsLimits, ANativeThreadRefusedAtTheProcessLimitIsNotMemory) {
  const std::string fail =
      "Exception in thread \"batch-thread-311\" java.lang.OutOfMemoryError: unable to create new native thread\n"
      "\tat java.lang.Thread.start0(Native Method)\n";
  Diagnosis d = diagnose_text(fail + "$ ulimit -u\n709\n$ ps -M -u $(whoami) | wc -l\n     706\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  // A large limit far from the threads in use does not explain it.
  EXPECT_NE(diagnose_text(fail + "$ ulimit -u\n255000\n$ ps -eLf | wc -l\n     1200\n").layer, Layer::not_memory);
  // Nor does a limit with no refused thread beside it.
  EXPECT_EQ(diagnose_text("$ ulimit -u\n709\n$ ps -M -u $(whoami) | wc -l\n     706\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
