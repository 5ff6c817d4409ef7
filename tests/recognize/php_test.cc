// PHP's memory_limit (src/recognize/families/program_caps.cc). Inputs written here in
// the engine's format with our own values, modelled on Composer's solver
// exhausting the 1.5 GiB cap it sets for itself (composer/composer threads)
// and a web request at the 128 MiB default.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(Php, MemoryLimitIsTheInterpretersCapNotAPoolOfTheMachine) {
  Diagnosis d = diagnose_text(
      "$ composer update\nLoading composer repositories with package information\n"
      "Fatal error: Allowed memory size of 1610612736 bytes exhausted (tried to allocate 8192 bytes) in "
      "phar:///usr/local/bin/composer/src/Composer/DependencyResolver/Solver.php on line 223\n");
  EXPECT_EQ(d.layer, Layer::unknown);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("memory_limit (1.50 GiB)"), std::string::npos) << d.incidents[0].summary;
  ASSERT_GE(d.incidents[0].fixes.size(), 2u);
  EXPECT_NE(d.incidents[0].fixes[1].action.find("memory_limit"), std::string::npos);
  Diagnosis web = diagnose_text(
      "[01-Mar-2025 10:11:12 UTC] PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate "
      "20480 bytes) in /var/www/app/src/Import.php on line 88\n");
  EXPECT_EQ(web.cause, Cause::limit_too_low);
  // Advice quoting the message is no failure.
  EXPECT_EQ(diagnose_text("If you see \"Allowed memory size of 134217728 bytes exhausted\", raise memory_limit.\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
