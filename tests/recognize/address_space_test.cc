// A 32-bit process (src/recognize/families/address_space.cc): a host
// allocation that failed in it failed at its address space's ceiling, not
// for the machine's RAM. Written in each program's format with our own
// paths and figures, modelled on numpy/numpy's test_zeros_big failing under a
// 32-bit CPython on Windows, MSVC's C1060 on an X86-based build machine, and
// OpenJ9's x86-32 Windows test jobs that could not instantiate a 2G heap.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(AddressSpace, AMemoryErrorInA32BitPythonIsItsAddressSpace) {
  const std::string fail =
      "Traceback (most recent call last):\n"
      "  File \"C:\\\\bench\\\\grid.py\", line 41, in <module>\n"
      "    cube = np.zeros((1200, 1200, 160), dtype=np.float32)\n"
      "MemoryError\n";
  Diagnosis d = test::diagnose_text("Python 3.8.10 (tags/v3.8.10:3d8993a, May  3 2021, 11:34:34) [MSC v.1928 32 bit (Intel)] on win32\n" + fail);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::limit_too_low) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("32-bit"), std::string::npos);
  // A 64-bit interpreter says nothing of the kind.
  EXPECT_NE(test::diagnose_text("Python 3.8.10 (tags/v3.8.10:3d8993a, May  3 2021, 11:34:34) [MSC v.1928 64 bit (AMD64)] on win32\n" + fail).cause,
            Cause::limit_too_low);
}

TEST(AddressSpace, AJvmThatCouldNotReserveItsHeapOnA32BitBuildIsThatCeiling) {
  Diagnosis d = test::diagnose_text(
      "05:20:11  Running on win2016-x86-2 in E:\\\\jenkins\\\\workspace\\\\Test_openjdk11_j9_sanity.system_x86-32_windows\n"
      "05:20:13  LT  stderr JVMJ9VM015W Initialization error for library j9gc29(2): Failed to instantiate heap.  3G requested\n"
      "05:20:13  LT  stderr Error: Could not create the Java Virtual Machine.\n");
  EXPECT_EQ(d.layer, Layer::host_ram) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::limit_too_low) << test::reason_text(d);
}

TEST(AddressSpace, AKernelKillIsTheMachinesRamWhateverTheProcess) {
  Diagnosis d = test::diagnose_text(
      "System Type:               X86-based PC\n"
      "[ 5120.337612] Out of memory: Killed process 4121 (trainer) total-vm:3011240kB, anon-rss:2734812kB, file-rss:0kB, shmem-rss:0kB\n");
  EXPECT_NE(d.cause, Cause::limit_too_low) << test::reason_text(d);
}

}  // namespace
}  // namespace aimem
