// .NET's managed heap (src/recognize/families/dotnet.cc).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

// Modelled on an ASP.NET Core (Kestrel) unhandled-exception log and
// dotnet-dump's analyzeoom/eeheap output (dotnet/diagnostics); our own
// request ids and sizes.
TEST(Dotnet, OutOfMemoryUnderAHardHeapLimitIsTheContainersLimit) {
  const std::string log =
      "fail: Microsoft.AspNetCore.Server.Kestrel[13]\n"
      "      Connection id \"0HN1A2B3C4D5E\", Request id \"0HN1A2B3C4D5E:00000007\": An unhandled exception was thrown by the application.\n"
      "      System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n"
      "         at System.Text.StringBuilder.ToString()\n"
      "         at Reports.Api.Export.RenderAsync(ReportRequest request)\n"
      "\n"
      "$ dotnet-dump analyze core_20260301_1102 -c \"eeheap -gc\"\n"
      "GC Heap Size:    Size: 0x17d78400 (400000000) bytes.\n"
      "GCHeapHardLimit: 0x18000000 (402653184) bytes\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detail, ".NET OutOfMemoryException");
  EXPECT_EQ(f[0].layer, Layer::container_limit);
  EXPECT_EQ(f[0].heap_limit, 402653184u);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
}

TEST(Dotnet, WithoutALimitItIsPlacedByTheRestOfTheEvidence) {
  const std::string bare =
      "Unhandled exception. System.OutOfMemoryException: Insufficient memory to continue the execution of the program.\n"
      "   at System.Collections.Generic.List`1.set_Capacity(Int32 value)\n";
  auto f = test::facts_of_kind(bare, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].layer, Layer::unknown);
  // Alone, nothing says which memory: the host's, a container's, a 32-bit
  // process's address space or the managed heap's own limits (read blind, a
  // bare one was the host's once in eleven). The pool stays open.
  EXPECT_EQ(test::diagnose_text(bare).layer, Layer::unknown);
  // `free` beside it with almost nothing available: the host's.
  EXPECT_EQ(test::diagnose_text("$ free -m\n               total        used        free      shared  buff/cache   available\n"
                                "Mem:            7820        7610          61           2         148          95\n"
                                "Swap:              0           0           0\n" + bare)
                .layer,
            Layer::host_ram);
  // The limit from the environment, in the runtime's hex, before the failure.
  auto g = test::facts_of_kind("DOTNET_GCHeapHardLimit=0x20000000\n" + bare, FactKind::host_alloc_failure);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].heap_limit, 512u << 20);
}

TEST(Dotnet, HandlersAndMentionsAreNotFailures) {
  EXPECT_TRUE(test::facts_of_kind("    catch (OutOfMemoryException ex) { logger.LogWarning(ex, \"retrying smaller\"); }\n",
                                  FactKind::host_alloc_failure)
                  .empty());
  EXPECT_TRUE(test::facts_of_kind("System.OutOfMemoryExceptionHandler registered\n", FactKind::host_alloc_failure).empty());
  EXPECT_EQ(test::diagnose_text("DOTNET_GCHeapHardLimitPercent=0x4B\nNow listening on: http://[::]:8080\n").layer, Layer::none);
}

// Modelled on a game's crash log (OpenRA/OpenRA#12125): the exception's type
// named in backquotes, then quoted again in its message; our own figures.
TEST(Dotnet, AQuotedTypeNameIsStillTheThrownException) {
  const std::string log =
      "Runtime Version: .NET CLR 4.0.30319.42000\n"
      "Exception of type `System.OutOfMemoryException`: Exception of type 'System.OutOfMemoryException' was thrown.\n"
      "GC Memory (post-collect)=688,210,944\n"
      "   at Game.Graphics.Sheet.CreateBuffer() in C:\\src\\Game\\Graphics\\Sheet.cs:line 120\n";
  auto f = test::facts_of_kind(log, FactKind::host_alloc_failure);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detail, ".NET OutOfMemoryException");
  EXPECT_NE(test::diagnose_text(log).layer, Layer::none);
  // A quoted name in prose about a handler is still not a failure.
  EXPECT_TRUE(test::facts_of_kind("    catch (`OutOfMemoryException`) is logged and retried\n", FactKind::host_alloc_failure).empty());
}

}  // namespace
}  // namespace aimem
