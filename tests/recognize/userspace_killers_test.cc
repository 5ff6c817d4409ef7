// User-space OOM killers (src/recognize/families/userspace_killers.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> kills(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::userspace_kill) out.push_back(f);
  return out;
}

TEST(UserspaceKillers, EarlyoomVictimWithAndWithoutPrefix) {
  const char* log = R"(Nov 12 17:08:27 earlyoom[1295]: mem avail:   888 of 55597 MiB ( 1.60%), swap free:    0 of 8191 MiB ( 0.00%)
Nov 12 17:08:27 earlyoom[1295]: low memory! at or below SIGTERM limits: mem  1.66%, swap 10.00%
Nov 12 17:08:27 earlyoom[1295]: sending SIGTERM to process 906175 uid 1000 "java": oom_score 1170, VmRSS 43912 MiB, cmdline "java -jar x"
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "java");
  EXPECT_EQ(k[0].pid, 906175);
  EXPECT_EQ(k[0].rss, 43912 * units::MiB);
  EXPECT_EQ(k[0].detail.rfind("earlyoom", 0), 0u);
  EXPECT_EQ(k[0].layer, Layer::userspace_oom_killer);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
  // "mem avail" is the host's state at the time.
  bool host = false;
  for (auto& f : test::facts_of(log))
    if (f.kind == FactKind::host_state && f.total == 55597 * units::MiB && f.free == 888 * units::MiB) host = true;
  EXPECT_TRUE(host);
  // Older earlyoom, no prefix, a process name with a space.
  auto old = kills("Jun 12 06:39:16: sending SIGKILL to process 696 uid 1001 \"Web Content\": badness 757, VmRSS 637 MiB\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].process, "Web Content");
  EXPECT_EQ(old[0].rss, 637 * units::MiB);
}

TEST(UserspaceKillers, SystemdOomdInAnyLocaleAndItsTwoTails) {
  const char* fr = R"(avril 16 21:08:50 systemd-oomd[93234]: Considered 97 cgroups for killing, top candidates were:
avril 16 21:08:50 systemd-oomd[93234]:         Path: /user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-slack-96235.scope
avril 16 21:08:50 systemd-oomd[93234]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/tmux
)";
  auto k = kills(fr);
  ASSERT_EQ(k.size(), 1u);  // candidates are not victims
  EXPECT_EQ(k[0].cgroup, "/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/tmux");
  EXPECT_EQ(k[0].detail.rfind("systemd-oomd", 0), 0u);
  EXPECT_EQ(test::diagnose_text(fr).layer, Layer::userspace_oom_killer);

  auto swap = kills("systemd-oomd[3562]: Killed /user.slice/app-chrome-1.scope due to memory used (16109408256) / total (16474247168) and swap used (1982627840) / total (2147479552) being more than 90.00%\n"
                    "systemd[1]: app-chrome-1.scope: systemd-oomd killed 12 process(es) in this unit.\n");
  ASSERT_EQ(swap.size(), 1u);  // oomd's line and PID 1's line are one kill
  EXPECT_EQ(swap[0].cgroup, "/user.slice/app-chrome-1.scope");
  EXPECT_EQ(swap[0].usage, 16109408256u);
  EXPECT_EQ(swap[0].total, 16474247168u);
  auto pressure = kills("Killed /system.slice/vllm.service due to memory pressure for /system.slice being 75.12% > 60.00% for > 30s with reclaim activity\n");
  ASSERT_EQ(pressure.size(), 1u);
  EXPECT_EQ(pressure[0].cgroup, "/system.slice/vllm.service");
}

// systemd >= 252 marks the victim ("Marked <path> for killing due to ...")
// after listing the candidates with their usage (modelled on systemd/systemd
// oomd reports in issue threads): the path ends before " for killing", and
// the victim's own usage is its candidate entry's.
TEST(UserspaceKillers, SystemdOomdMarkedVictimCarriesItsCandidateUsage) {
  const char* log = R"([  412.701122] systemd-oomd[702]: Considered 14 cgroups for killing, top candidates were:
[  412.701128] systemd-oomd[702]:         Path: /system.slice/chronyd.service
[  412.701134] systemd-oomd[702]:                 Current Memory Usage: 21.3M
[  412.701136] systemd-oomd[702]:         Path: /system.slice/ingest.service
[  412.701139] systemd-oomd[702]:                 Current Memory Usage: 9.8G
[  412.701597] systemd-oomd[702]: Marked /system.slice/chronyd.service for killing due to memory pressure for /system.slice being 81.40% > 80.00% for > 2s with reclaim activity
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].cgroup, "/system.slice/chronyd.service");
  ASSERT_TRUE(k[0].rss);
  EXPECT_NEAR(static_cast<double>(*k[0].rss), 21.3 * units::MiB, units::MiB);
  // A 21 MiB victim did not fill the memory: another process did.
  EXPECT_EQ(test::diagnose_text(log).cause, Cause::other_process);
}

// systemd 247-248 logged a kill by the rule that fired, naming the monitored
// cgroup, not the victim (modelled on Fedora 34 reports of systemd-oomd
// 248-rc killing user scopes; our own pids and times): a user-space kill all
// the same, whose victim the line does not name.
TEST(UserspaceKillers, SystemdOomd248LogsTheKillByItsRule) {
  const char* log =
      "Apr 02 14:20:11 ws systemd-oomd[991]: Memory pressure for /user.slice/user-1000.slice/user@1000.service is greater than "
      "10 for more than 10 seconds and there was reclaim activity\n"
      "Apr 02 14:20:12 ws systemd[1744]: app-gnome-builder-3310.scope: Deactivated successfully.\n";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_TRUE(k[0].cgroup.empty());  // the monitored cgroup is not the victim
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
  EXPECT_TRUE(kills("  Memory pressure for /user.slice is greater than 10 for more than 10 seconds\n").empty());
}

TEST(UserspaceKillers, NohangAndOomd) {
  const char* nohang = R"(nohang[811]: Victim status (found in 4ms):
nohang[811]:   PID:       9828, name: stress, state: R, EUID: 1000, SID: 9000 (bash), lifetime: 12s
nohang[811]:   Vm, MiB:   Size: 3080, RSS: 485, Swap: 0
nohang[811]: Implementing a corrective action:
nohang[811]:   Sending SIGTERM to the victim
)";
  auto n = kills(nohang);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].detail, "nohang");
  EXPECT_EQ(n[0].process, "stress");
  EXPECT_EQ(n[0].pid, 9828);
  EXPECT_EQ(n[0].rss, 485 * units::MiB);
  auto old = kills("  Preventing OOM: trying to send the SIGKILL signal to stress,\n  Pid: 9841, Badness: 87, VmRSS: 513 MiB, VmSwap: 0 MiB\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].pid, 9841);
  EXPECT_EQ(old[0].rss, 513 * units::MiB);

  const char* oomd = R"(oomd[700]: Trying to kill /sys/fs/cgroup/workload.slice/trainer.service
oomd[700]: Killed 2: 1234(python) 1235(bash)
)";
  auto o = kills(oomd);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].detail, "oomd");
  EXPECT_EQ(o[0].pid, 1234);
  EXPECT_EQ(o[0].process, "python");
  EXPECT_EQ(o[0].cgroup, "/sys/fs/cgroup/workload.slice/trainer.service");
}

TEST(UserspaceKillers, StatusAndConfigLinesAreNoKill) {
  const char* log = R"(earlyoom v1.7
mem total: 15836 MiB, swap total: 2047 MiB
sending SIGTERM when mem <= 10.00% and swap <= 10.00%,
mem avail: 12000 of 15836 MiB (75.77%), swap free: 2047 of 2047 MiB (100.00%)
systemd-oomd[717]: Considered 72 cgroups for killing, top candidates were:
Killed 3 zombie tasks in the cleanup pass
)";
  EXPECT_TRUE(kills(log).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// nohang 0.2 words its action "Implement a corrective action:" and "Send
// SIGTERM to the victim; total response time: ..." (modelled on a nohang log
// of a database host).
TEST(UserspaceKillers, NohangCurrentWordingIsAKill) {
  const std::string log =
      "2023-08-10 16:53:26,463: TOP printed in 1ms; process with highest badness:\n"
      "  PID: 903309, name: mysqld, badness: 849\n"
      "2023-08-10 16:53:26,571: Implement a corrective action:\n"
      "  Send SIGTERM to the victim; total response time: 111ms\n";
  auto k = test::facts_of_kind(log, FactKind::userspace_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "mysqld");
  EXPECT_EQ(k[0].pid, 903309);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
}

// Modelled on Android's lmkd (system/memory/lmkd/lmkd.cpp, its kill log line)
// as logcat prints it; our own apps, pids and sizes.
TEST(UserspaceKillers, AndroidLmkdKillNamesTheAppAndWhatItFreed) {
  const char* log = R"(03-14 09:12:01.204  1402  1533 I ActivityManager: Start proc 20417:com.example.maps/u0a162 for service
03-14 09:12:01.587   688   688 I lowmemorykiller: Kill 'com.example.maps' (20417), uid 10162, oom_score_adj 700 to free 231404kB rss, 51200kB swap; reason: low watermark is breached and swap is low (512000kB < 1048576kB)
03-14 09:12:01.601  1402  1470 I ActivityManager: Process com.example.maps (pid 20417) has died: prev LAST
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "com.example.maps");
  EXPECT_EQ(k[0].pid, 20417);
  EXPECT_EQ(k[0].rss, 231404 * units::KiB);
  EXPECT_NE(k[0].detail.find("lmkd, low watermark"), std::string::npos) << k[0].detail;
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
}

// Modelled on dask/distributed's nanny (distributed/nanny.py and the worker's
// memory manager) as its logging prints it; our own addresses and sizes.
TEST(UserspaceKillers, DaskNannyRestartCarriesTheWorkersLimit) {
  const char* log = R"(distributed.worker - INFO -                Memory:                    3.91 GiB
distributed.worker - WARNING - Unmanaged memory use is high. Process memory: 3.20 GiB -- Worker memory limit: 3.91 GiB
distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:38211 (pid=5150) exceeded 95% memory budget. Restarting...
distributed.nanny - INFO - Worker process 5150 was killed by signal 15
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].pid, 5150);
  EXPECT_EQ(k[0].detail, "Dask nanny");
  ASSERT_TRUE(k[0].limit);
  EXPECT_NEAR(double(*k[0].limit), 3.91 * double(units::GiB), 0.01 * double(units::GiB));
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
  // The budget named in prose ("restarts workers that exceed their memory budget") is no kill.
  EXPECT_TRUE(kills("Dask restarts a worker when it passes 95% of its memory budget.\n").empty());
}

// Modelled on siderolabs/talos's OOM controller (its "Sending SIGKILL to
// cgroup" log line with zap fields); our own pod uid and times.
TEST(UserspaceKillers, TalosOomControllerKillsAPodCgroup) {
  const char* log = R"(user: warning: [2026-02-03T11:04:12.113000000Z]: [talos] OOM controller triggered {"component": "controller-runtime", "controller": "runtime.OOMController"}
user: warning: [2026-02-03T11:04:12.120000000Z]: [talos] Sending SIGKILL to cgroup {"component": "controller-runtime", "controller": "runtime.OOMController", "cgroup": "/sys/fs/cgroup/kubepods/besteffort/pod0c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f"}
)";
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].cgroup, "/sys/fs/cgroup/kubepods/besteffort/pod0c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f");
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
  // Another program's "Sending SIGKILL to cgroup" (no Talos controller) is not read as this killer.
  EXPECT_TRUE(kills("runc: Sending SIGKILL to cgroup /x after timeout\n").empty());
}

// oomd's kill line with the cgroup written without its leading "/", and its
// "Killed N processes" summary (modelled on facebookincubator/oomd#61; our
// own figures): the user-space killer, and the count of what it killed is
// not a count of parallel workers.
TEST(UserspaceKillers, OomdsKillLineWithARelativeCgroupIsItsKill) {
  const std::string log =
      "Mar 02 10:12:40 ws oomd[611]: [../src/oomd/plugins/BaseKillPlugin.cpp:226] Killed 5 processes\n"
      "Mar 02 10:12:40 ws oomd[611]: [../src/oomd/Log.cpp:114] oomd kill: 63.10 40.20 11.90 user.slice/user-1000.slice/session-3.scope "
      "12884901888 ruleset:[user session protection] detectorgroup:[user pressure above 60 for 30s] killer:kill_by_memory_size_or_growth v2\n";
  auto k = test::facts_of_kind(log, FactKind::userspace_kill);
  ASSERT_GE(k.size(), 1u);
  EXPECT_EQ(k.back().cgroup, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_TRUE(test::facts_of_kind(log, FactKind::phase_serve).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::userspace_oom_killer);
}

// Later lmkd releases log the kill as "Reclaim" under the lmkd tag
// (modelled on flutter/flutter#161070's logcat; our own apps and sizes), and
// older Dask releases print two blanks before "Restarting" (dask/distributed#1469).
TEST(UserspaceKillers, LmkdsReclaimLineAndDasksOlderSpacingAreKills) {
  const char* lmkd =
      "01-01 15:11:13.739   879   879 I lmkd    : Reclaim 'com.example.notes' (4471), uid 10112, oom_score_adj 975, state 19 to "
      "free 21004kB rss, 50120kB swap; reason: min2x watermark is breached and swap is low (583526kB < 838860kB)\n";
  auto k = kills(lmkd);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "com.example.notes");
  EXPECT_EQ(k[0].pid, 4471);
  EXPECT_EQ(k[0].rss, 21004 * units::KiB);
  EXPECT_EQ(test::diagnose_text(lmkd).layer, Layer::userspace_oom_killer);
  // The same words from another tag are not lmkd's.
  EXPECT_TRUE(kills("01-01 15:11:13.739 879 879 I Backup  : Reclaim 'cache' (4471) done\n").empty());
  const char* dask =
      "distributed.nanny - WARNING - Worker exceeded 95% memory budget.  Restarting\n"
      "distributed.nanny - WARNING - Worker process 31177 was killed by unknown signal\n";
  EXPECT_EQ(kills(dask).size(), 1u);
  EXPECT_EQ(test::diagnose_text(dask).layer, Layer::userspace_oom_killer);
}

// lmkd as Android Studio's logcat view prints it (modelled on
// pytorch/executorch#5582; packages, pids and sizes ours), and the in-kernel
// killer of Android before lmkd, in its 3.10+ and its 2.6-3.4 wordings
// (modelled on mozilla-b2g/gonk-misc#115): each a user-space killer's kill.
TEST(UserspaceKillers, AndroidKillsInStudiosLogcatAndTheInKernelKiller) {
  Diagnosis studio = test::diagnose_text(
      "2024-10-02 21:07:44.102 21877-21877 ExecuTorch              com.example.llamademo                I  Model loaded in 11.93 s\n"
      "2024-10-02 21:08:00.417   495-495   lowmemorykiller         lmkd                                 I  Kill "
      "'com.example.llamademo' (21877), uid 10342, oom_score_adj 0 to free 6174208kB rss, 41208kB swap; reason: low watermark is "
      "breached\n");
  EXPECT_EQ(studio.layer, Layer::userspace_oom_killer);
  ASSERT_FALSE(studio.incidents.empty());
  const Fact& k = studio.facts[studio.incidents[0].failures[0]];
  EXPECT_EQ(k.process, "com.example.llamademo");
  EXPECT_EQ(k.pid, 21877);
  EXPECT_EQ(k.rss, 6174208ull * 1024);

  auto old = test::facts_of_kind("<4>[ 2207.480331] select 2544 (Gallery), adj 8, size 6890, to kill\n"
                                 "<4>[ 2207.480419] send sigkill to 2544 (Gallery), adj 8, size 6890\n",
                                 FactKind::userspace_kill);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].process, "Gallery");
  EXPECT_EQ(old[0].rss, 6890ull * 4096);
  auto killing = test::facts_of_kind("<6>[ 5120.213] lowmemorykiller: Killing 'com.android.browser' (3120), adj 1000,\n",
                                     FactKind::userspace_kill);
  ASSERT_EQ(killing.size(), 1u);
  EXPECT_EQ(killing[0].process, "com.android.browser");
  // A sentence about it is not a kill.
  EXPECT_TRUE(test::facts_of_kind("Try to send sigkill to 2544 (Gallery) by hand if it hangs.\n", FactKind::userspace_kill).empty());
}

// earlyoom up to 1.1 (modelled on rfjakob/earlyoom#66; our figures): its
// kill line had no "sending SIG", and its readings no total, only a share.
TEST(UserspaceKillers, EarlyoomOneOneKillsAndItsFallingShareIsGrowth) {
  Diagnosis d = test::diagnose_text(
      "earlyoom v1.1\n"
      "mem total: 15872 MiB, min: 1587 MiB (10 %)\n"
      "mem avail: 13012 MiB (82 %), swap free: 0 MiB (0 %)\n"
      "mem avail: 10410 MiB (65 %), swap free: 0 MiB (0 %)\n"
      "mem avail: 7720 MiB (48 %), swap free: 0 MiB (0 %)\n"
      "mem avail: 4906 MiB (30 %), swap free: 0 MiB (0 %)\n"
      "mem avail: 2312 MiB (14 %), swap free: 0 MiB (0 %)\n"
      "Out of memory! mem min: 1587 MiB, swap min: 0 MiB\n"
      "Killing process: indexer, pid: 8120, badness: 902, VmRSS: 12504 MiB\n");
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  auto k = kills("Killing process: indexer, pid: 8120, badness: 902, VmRSS: 12504 MiB\n");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "indexer");
  ASSERT_TRUE(k[0].rss);
  EXPECT_EQ(*k[0].rss, uint64_t{12504} * 1024 * 1024);
}

// earlyoom before 1.0 (its main.c and kill.c of 2016-2017; our figures):
// "Out of memory! avail: A MiB < min: M MiB" on stderr, then "Killing process
// <pid> (<name>)" with or without its badness. The kill is earlyoom's, not
// the kernel's, and not a program's allocation failure.
TEST(UserspaceKillers, EarlyoomBeforeOneIsAKillAndNamesItsVictim) {
  const std::string log =
      "earlyoom v0.7\nmem total: 3921 MiB, min: 156 MiB (4 %)\n"
      "Out of memory! avail: 151 MiB < min: 156 MiB\n"
      "Killing process 4410 (firefox) with badness 612 time_running=211.4m\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  auto k = kills(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].pid, std::optional<int64_t>(4410));
  EXPECT_EQ(k[0].process, "firefox");
  // 0.5's shorter line.
  auto old = kills("Out of memory! avail: 98 MiB < min: 156 MiB\nKilling process 2107 (java)\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].process, "java");
  // "Killing process" with no earlyoom line before it is not earlyoom's.
  EXPECT_TRUE(kills("Killing process 2107 (java)\n").empty());
}

// systemd-oomd's candidate list before its kill (systemd >= 248; modelled on
// a Fedora desktop thread, own paths and figures): the cgroup it killed for
// its pressure held 1.9G while a candidate it spared held 14.7G: the
// neighbour held the memory. Spared candidates no larger say nothing.
TEST(UserspaceKillers, AnOomdCandidateItSparedHoldingMoreIsTheOtherProcess) {
  auto paste = [](const char* other) {
    return std::string(
               "dec 07 19:50:18 desk systemd-oomd[2676]: Considered 71 cgroups for killing, top candidates were:\n"
               "dec 07 19:50:18 desk systemd-oomd[2676]:         Path: /user.slice/user-1000.slice/user@1000.service/app.slice/game.scope\n"
               "dec 07 19:50:18 desk systemd-oomd[2676]:                 Current Memory Usage: ") +
           other +
           "\n"
           "dec 07 19:50:18 desk systemd-oomd[2676]:         Path: /user.slice/user-1000.slice/user@1000.service/app.slice/browser.scope\n"
           "dec 07 19:50:18 desk systemd-oomd[2676]:                 Current Memory Usage: 1.9G\n"
           "dec 07 19:50:18 desk systemd-oomd[2676]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/browser.scope due "
           "to memory pressure for /user.slice/user-1000.slice/user@1000.service being 63.18% > 50.00% for > 20s with reclaim activity\n";
  };
  Diagnosis d = test::diagnose_text(paste("14.7G"));
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  EXPECT_EQ(d.cause, Cause::other_process);
  EXPECT_NE(test::diagnose_text(paste("1.2G")).cause, Cause::other_process);
}

// Android's exit record (ApplicationExitInfo, `dumpsys activity exit-info`;
// modelled on a termux-x11 thread, own pids and figures): reason 3 is the
// low-memory killer. Other reasons (a crash, an ANR) are not it; the same
// process's earlier records are the same story, one kill.
TEST(UserspaceKillers, AndroidExitInfoLowMemoryIsTheLowMemoryKiller) {
  const std::string rec =
      "        ApplicationExitInfo #0:\n"
      "          timestamp=2023-10-01 20:41:52.606 pid=18822 realUid=10383 packageUid=10383 definingUid=10383 user=0\n"
      "          process=com.example.viewer reason=3 (LOW_MEMORY) subreason=0 (UNKNOWN) status=0\n"
      "          importance=400 pss=71MB rss=96MB description=null state=empty trace=null\n";
  Diagnosis d = test::diagnose_text(rec);
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents[0].process, "com.example.viewer");
  EXPECT_EQ(test::diagnose_text("          process=com.example.viewer reason=4 (CRASH) subreason=0 (UNKNOWN) status=0\n").layer,
            Layer::none);
}

}  // namespace
}  // namespace aimem
