// A process manager's graceful reload (src/recognize/families/
// graceful_reload.cc): the new workers start while the old ones run. Inputs
// written here in gunicorn's log format with our own values, modelled on
// benoitc/gunicorn reports of OOM kills during a HUP reload and of fork
// failing with ENOMEM on --max-requests recycling.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

const char* kBoots =
    "[2017-11-13 16:02:11 +0000] [2301] [INFO] Booting worker with pid: 2301\n"
    "[2017-11-13 16:02:11 +0000] [2302] [INFO] Booting worker with pid: 2302\n"
    "[2017-11-13 16:02:11 +0000] [2303] [INFO] Booting worker with pid: 2303\n"
    "[2017-11-13 16:02:11 +0000] [2304] [INFO] Booting worker with pid: 2304\n"
    "[2017-11-13 16:02:11 +0000] [1201] [INFO] Worker exiting (pid: 1201)\n"
    "[Mon Nov 13 16:02:16 2017] Out of memory: Kill process 2303 (gunicorn) score 211 or sacrifice child\n"
    "[Mon Nov 13 16:02:16 2017] Killed process 2303 (gunicorn) total-vm:712340kB, anon-rss:404412kB, file-rss:5132kB, "
    "shmem-rss:0kB\n";

// Workers booted on a HUP are the new generation beside the old: overlap.
// The same boots without the reload are a worker count.
TEST(GracefulReload, WorkersBootedOnAReloadAreTheNewGenerationBesideTheOld) {
  std::string reload = "[2017-11-13 16:02:11 +0000] [1187] [INFO] Handling signal: hup\n"
                       "[2017-11-13 16:02:11 +0000] [1187] [INFO] Hang up: Master\n" +
                       std::string(kBoots);
  Diagnosis d = diagnose_text(reload);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
  EXPECT_EQ(diagnose_text(kBoots).cause, Cause::concurrency_batch);
  // Inside a container with a memory limit (a memory cgroup's kill), the
  // same: the generations shared the limit, not one generation's workers.
  std::string memcg = reload;
  memcg.replace(memcg.find("[Mon Nov 13 16:02:16 2017] Out of memory"), 40, "[Mon Nov 13 16:02:16 2017] Memory cgroup out of memory");
  Diagnosis boxed = diagnose_text("-m 4g\n" + memcg);
  EXPECT_EQ(boxed.layer, Layer::container_limit);
  EXPECT_EQ(boxed.cause, Cause::deployment_overlap);
}

// A recycled worker's replacement forked before it exits.
TEST(GracefulReload, ARecycledWorkersReplacementForkedBeforeItExits) {
  Diagnosis d = diagnose_text(
      "[2021-03-11 04:12:55 +0000] [23] [INFO] Autorestarting worker after current request.\n"
      "[2021-03-11 04:12:55 +0000] [1] [ERROR] Unhandled exception in main loop\n"
      "  File \"/usr/local/lib/python3.7/site-packages/gunicorn/arbiter.py\", line 573, in spawn_worker\n"
      "    pid = os.fork()\n"
      "OSError: [Errno 12] Cannot allocate memory\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
  // Advice that names the signal is not a reload.
  EXPECT_EQ(diagnose_text("# To reload, send SIGHUP; the log then says: Handling signal: hup\n").layer, Layer::none);
}

// systemd starting a unit whose previous run's process survived the stop
// (modelled on systemd/systemd#13288: a database's old process left in the
// unit's cgroup; our own pids and sizes): two generations hold the host.
TEST(GracefulReload, AProcessLeftOverFromTheUnitsLastRunIsAnOldGeneration) {
  const std::string kill =
      "Aug 07 11:07:52 db-03 kernel: Out of memory: Kill process 2210 (kvd) score 478 or sacrifice child\n"
      "Aug 07 11:07:52 db-03 kernel: Killed process 2210 (kvd) total-vm:38448052kB, anon-rss:21208456kB, file-rss:0kB, shmem-rss:0kB\n";
  Diagnosis d = diagnose_text(
      "Aug 07 10:51:13 db-03 systemd[1]: kvd.service: Found left-over process 2210 (kvd) in control group while starting unit. "
      "Ignoring.\n"
      "Aug 07 10:51:13 db-03 systemd[1]: This usually indicates unclean termination of a previous run, or service implementation "
      "deficiencies.\n" +
      kill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
  EXPECT_NE(diagnose_text(kill).cause, Cause::deployment_overlap);
}

// PM2's reload keeps the previous generation, renamed _old_N, while it
// drains (modelled on Unitech/pm2 threads of memory running out during
// `pm2 reload`; our own app, pids and sizes): the overlap, in the list's
// box-drawn rows and in pm2.log. An app merely named "old" is not.
TEST(GracefulReload, PmTwosOldGenerationStillListedIsAnOverlap) {
  const std::string log =
      "│ api      │ _old_0 │ cluster │ 11877 │ online │ 0       │ 5h     │ 702.1 MB    │ disabled │\n"
      "│ api      │ 0      │ cluster │ 14412 │ online │ 0       │ 2m     │ 648.9 MB    │ disabled │\n"
      "2024-02-09 08:14:02: Stopping app:api id:_old_0\n"
      "[3011233.118204] Out of memory: Kill process 14412 (node) score 171 or sacrifice child\n"
      "[3011233.119377] Killed process 14412 (node) total-vm:1852248kB, anon-rss:664012kB, file-rss:0kB\n";
  EXPECT_EQ(diagnose_text(log).cause, Cause::deployment_overlap);
  auto none = test::facts_of_kind("│ old_reports │ 3 │ fork │ 2211 │ online │\n", FactKind::runtime_setting, Cause::deployment_overlap);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace aimem
