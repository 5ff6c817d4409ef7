// Windows' Resource-Exhaustion-Detector (src/recognize/families/
// windows_memory.cc): event 2004, the commit limit reached, as Get-WinEvent
// prints it. Our own programs, pids and sizes, in the event's wording,
// modelled on Belphemur/CBZOptimizer#203 and
// c0re100/qBittorrent-Enhanced-Edition#617.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

constexpr const char* kEvent =
    "PS C:\\> (Get-WinEvent -FilterHashtable @{LogName='System';ProviderName='Microsoft-Windows-Resource-Exhaustion-Detector'} | "
    "Select-Object -First 1).Message\n"
    "Windows successfully diagnosed a low virtual memory condition. The following programs consumed the most virtual memory: "
    "render.exe (7120) consumed 30064771072 bytes, chrome.exe (4410) consumed 2147483648 bytes, and chrome.exe (4488) consumed "
    "1073741824 bytes.\n";

TEST(WindowsMemory, TheCommitLimitReachedIsTheHostsMemoryAndNamesWhoHeldIt) {
  auto e = test::facts_of_kind(kEvent, FactKind::kernel_oom_event);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].layer, Layer::host_ram);
  EXPECT_EQ(e[0].process, "render.exe");
  EXPECT_EQ(*e[0].rss, 30064771072ull);
  std::vector<Fact> table;
  for (Fact& f : test::facts_of_kind(kEvent, FactKind::memory_usage))
    if (f.detail == "process table") table.push_back(std::move(f));
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[1].process, "chrome.exe");
  EXPECT_EQ(*table[1].sequences, 2u);
  EXPECT_EQ(*table[0].total, 30064771072ull + 3221225472ull);
  Diagnosis d = test::diagnose_text(kEvent);
  EXPECT_EQ(d.layer, Layer::host_ram);
  // The command that searched for the events is not one.
  EXPECT_EQ(test::diagnose_text("PS C:\\> Get-WinEvent | Where-Object { $_.Message -match 'diagnosed a low virtual memory condition' }\n")
                .layer,
            Layer::none);
}

// A list cut or garbled ("consumed" with no "(pid)" before it, a comma
// before the word) is read as far as it goes, without reading past a name
// (the fuzzer found the substring that did).
TEST(WindowsMemory, AGarbledListIsReadAsFarAsItGoes) {
  const std::string log =
      "Windows successfully diagnosed a low virtual memory condition. The following programs consumed the most virtual memory: "
      "a, b consumed 12 bytes, svc.exe (88) consumed 4096 bytes, , consumed\n";
  auto e = test::facts_of_kind(log, FactKind::kernel_oom_event);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].process, "svc.exe");
}

// Get-WinEvent prints the newest event first; the same condition repeated
// every five minutes is one failure, not four.
TEST(WindowsMemory, RepeatedEventsAreOneFailure) {
  std::string log;
  for (int k = 0; k < 4; ++k)
    log += "22/03/2025 23:4" + std::to_string(k) + ":17 2004 Warning  Windows successfully diagnosed a low virtual memory condition. "
           "The following programs consumed the most virtual memory: svc.exe (9412) consumed 750312652" + std::to_string(8 - k) +
           " bytes, MsMpEng.exe (3876) consumed 312524800 bytes\n";
  EXPECT_EQ(test::facts_of_kind(log, FactKind::kernel_oom_event).size(), 1u);
}

// Event after event naming the same PID first, its commit moving one way
// (Get-WinEvent prints the newest first; modelled on the 2004 events pasted
// in qbittorrent and PowerShell threads; our own PIDs and figures): a series.
// The same PID at a flat figure is not growth.
TEST(WindowsMemory, TheSamePidsCommitEventAfterEventIsASeries) {
  auto event = [](const char* bytes) {
    return std::string("2004 Warning  Windows successfully diagnosed a low virtual memory condition. The following programs consumed "
                       "the most virtual memory: python.exe (7312) consumed ") +
           bytes + " bytes, MsMpEng.exe (3876) consumed 312524800 bytes, and explorer.exe (6120) consumed 201457664 bytes.\n";
  };
  const std::string grew = event("34248417280") + event("31272345600") + event("28310380544") + event("25422102528");
  Diagnosis d = test::diagnose_text(grew);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  const std::string flat = event("25422102528") + event("25422102528") + event("25422102528");
  EXPECT_NE(test::diagnose_text(flat).cause, Cause::leak_or_accumulation);
}

}  // namespace
}  // namespace aimem
