// systemd unit results, status and limits (src/recognize/families/systemd.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

const char* kJournal = R"(Nov 24 10:00:01 node systemd[1]: erigon.service: A process of this unit has been killed by the OOM killer.
Nov 24 10:00:01 node systemd[1]: erigon.service: Main process exited, code=killed, status=9/KILL
Nov 24 10:00:01 node systemd[1]: erigon.service: Failed with result 'oom-kill'.
Nov 24 10:00:01 node systemd[1]: erigon.service: Consumed 10min 23.721s CPU time, 29.0G memory peak, 0B memory swap peak.
)";

TEST(Systemd, OomKillResultIsOneFactWithTheUnit) {
  auto r = of_kind(kJournal, FactKind::systemd_oom_result);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].unit, "erigon.service");
  auto e = of_kind(kJournal, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].signal, 9);
  auto u = of_kind(kJournal, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].usage, 29 * units::GiB);
  auto p = of_kind(kJournal, FactKind::platform);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].detail, "systemd");
  // No MemoryMax in evidence: the host ran out.
  EXPECT_EQ(test::diagnose_text(kJournal).layer, Layer::host_ram);
}

TEST(Systemd, MemoryMaxMakesItTheUnitsLimit) {
  std::string log = std::string("# /etc/systemd/system/erigon.service.d/override.conf\n[Service]\nMemoryMax=32G\nMemoryHigh=30G\n") + kJournal;
  auto l = of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);  // MemoryHigh throttles, it is not a limit
  EXPECT_EQ(l[0].limit, 32 * units::GiB);
  EXPECT_EQ(l[0].detail, "MemoryMax");
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
  // systemctl show prints bytes; "infinity" is no limit.
  auto show = of_kind("MemoryMax=2147483648\nMemoryLimit=infinity\n", FactKind::memory_limit);
  ASSERT_EQ(show.size(), 1u);
  EXPECT_EQ(show[0].limit, 2 * units::GiB);
}

TEST(Systemd, SystemctlStatusGivesResultUsageAndMax) {
  const char* log = R"(× vllm.service - vLLM server
     Loaded: loaded (/etc/systemd/system/vllm.service; enabled; preset: enabled)
     Active: failed (Result: oom-kill) since Tue 2026-11-24 10:00:00 UTC; 3min ago
     Memory: 1.2G (max: 2.0G available: 0B peak: 2.0G)
)";
  auto r = of_kind(log, FactKind::systemd_oom_result);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].unit, "vllm.service");
  auto u = of_kind(log, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].usage, 2 * units::GiB);  // the peak
  EXPECT_EQ(u[0].limit, 2 * units::GiB);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
}

TEST(Systemd, HealthyUnitsAreNoFailure) {
  const char* log = R"(● vllm.service - vLLM server
     Active: active (running) since Tue 2026-11-24 10:00:00 UTC; 3h ago
     Memory: 14.2G (peak: 14.9G)
Nov 24 10:00:01 node systemd[1]: backup.service: Main process exited, code=exited, status=0/SUCCESS
Nov 24 10:00:01 node systemd[1]: backup.service: Consumed 2.1s CPU time, 120.0M memory peak.
)";
  EXPECT_TRUE(of_kind(log, FactKind::systemd_oom_result).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// systemd before 220 (CentOS 7) wrote "main process exited" in lower case
// (modelled on an Elasticsearch unit killed 70 s after start, 2019; our own
// host and PIDs): the SIGKILL is read, its sender left open.
TEST(Systemd, AnOlderSystemdsLowerCaseMainProcessExitIsRead) {
  const char* log = R"(Jun 12 14:32:16 ip-10-12-1-130 systemd[1]: elasticsearch.service: main process exited, code=killed, status=9/KILL
Jun 12 14:32:16 ip-10-12-1-130 systemd[1]: Unit elasticsearch.service entered failed state.
)";
  auto e = of_kind(log, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].signal, 9);
  EXPECT_NE(test::diagnose_text(log).layer, Layer::none);
}

}  // namespace
}  // namespace aimem
