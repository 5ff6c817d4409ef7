// Managed platforms that kill over a memory size (src/recognize/families/cloud_platforms.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::MiB;

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

std::vector<Fact> kills(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if ((f.kind == FactKind::kernel_oom_kill || f.kind == FactKind::kernel_oom_event) && f.family == Family::runtime) out.push_back(f);
  return out;
}

// The ECS stopped reason in the console, in ecs-cli ps and in the agent's log
// (modelled on aws/amazon-ecs-agent#1187, #1027 and #1645; values ours).
TEST(CloudPlatforms, EcsStoppedReasonIsTheTasksLimit) {
  const char* console = "Status reason\tOutOfMemoryError: Container killed due to memory usage\nExit Code\t137\n";
  auto k = kills(console);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].layer, Layer::container_limit);
  EXPECT_EQ(k[0].detail, "ECS task memory limit");
  Diagnosis d = test::diagnose_text(console);
  EXPECT_EQ(d.layer, Layer::container_limit);
  ASSERT_FALSE(d.incidents[0].reasons.empty());
  EXPECT_NE(d.incidents[0].reasons[0].find("ECS"), std::string::npos);

  auto cli = kills("5c3a1e2f-77b0-4d1e-9a3c-0f6b2d8e4a11/ranker  STOPPED ExitCode: 137 Reason: OutOfMemoryError: Container killed due to "
                   "memory usage  10.0.3.7:8080->8080/tcp  ranker-task:12\n");
  ASSERT_EQ(cli.size(), 1u);
  EXPECT_EQ(cli[0].container, "ranker");
  EXPECT_EQ(cli[0].exit_code, 137);
  auto agent = kills("2024-05-01T10:00:02Z [INFO] DockerGoClient: process within container 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e "
                     "(name: \"ecs-ranker-12-ranker-c8e2a4f6b0d1\") died due to OOM\n");
  ASSERT_EQ(agent.size(), 1u);
  EXPECT_EQ(agent[0].container, "ecs-ranker-12-ranker-c8e2a4f6b0d1");
  // runc's start-up kill (aws/amazon-ecs-agent#3021).
  EXPECT_EQ(test::diagnose_text("CannotStartContainerError: Error response from daemon: OCI runtime create failed: container_linux.go:380: "
                                "starting container process caused: container init was OOM-killed (memory limit too low?): unknown\n")
                .layer,
            Layer::container_limit);
}

// Cloud Run's message with its figures, in both unit spellings (modelled on
// dart-lang/pub-dev#9554 and googleapis/repo-automation-bots#2418), App
// Engine's soft limit (google/syzkaller#2322, catapult-project/catapult#1474)
// and Cloud Functions gen1. Values are ours.
// AWS Batch's describe-jobs JSON names the container's memory (MiB) above the
// reason (modelled on a Batch job that concatenated two large downloads;
// our ids and sizes): the limit the kill was at. A job id after --jobs is
// not a count of parallel jobs.
TEST(CloudPlatforms, BatchJobJsonGivesTheContainersMemory) {
  const std::string log =
      "$ aws batch describe-jobs --jobs 8e2c1f4a-6b3d-4e70-9a15-c2d7f0b83e61 --query 'jobs[0].container'\n"
      "{\n    \"vcpus\": 1,\n    \"memory\": 1024,\n    \"exitCode\": 137,\n"
      "    \"reason\": \"OutOfMemoryError: Container killed due to memory usage\"\n}\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low) << test::reason_text(d);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(test::reason_text(d).find("1.00 GiB"), std::string::npos) << test::reason_text(d);
  EXPECT_EQ(test::reason_text(d).find("parallel jobs"), std::string::npos);
}

TEST(CloudPlatforms, GoogleMemoryLimitsGiveLimitAndUsage) {
  const char* run = "2024-05-01 10:00:04.120 UTC  Memory limit of 512 MiB exceeded with 530 MiB used. Consider increasing the memory "
                    "limit, see https://cloud.google.com/run/docs/configuring/memory-limits\n";
  auto k = kills(run);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].limit, 512 * MiB);
  EXPECT_EQ(k[0].usage, 530 * MiB);
  auto l = of_kind(run, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 512 * MiB);
  Diagnosis d = test::diagnose_text(run);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_TRUE(d.incidents[0].pool.limit_bytes);
  EXPECT_EQ(*d.incidents[0].pool.limit_bytes, 512 * MiB);

  auto old = kills("Memory limit of 1024M exceeded with 1047M used. Consider increasing the memory limit, see https://cloud.google.com/run/docs/configuring/memory-limits\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].limit, 1024 * MiB);
  EXPECT_EQ(old[0].usage, 1047 * MiB);
  // The message quoted in an issue title with backticks is still the message.
  EXPECT_EQ(kills("release-bot: `Memory limit of 512M exceeded with 526M used. Consider increasing the memory limit, see https://x`\n").size(), 1u);

  const char* gae = "Dec 07 07:40: Exceeded soft memory limit of 256 MB with 301 MB after servicing 57 requests total.\n"
                    "\tConsider setting a larger instance class in app.yaml. (/api)\n";
  auto g = kills(gae);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].limit, 256 * MiB);
  EXPECT_EQ(g[0].usage, 301 * MiB);
  EXPECT_EQ(g[0].detail, "App Engine soft memory limit");
  EXPECT_EQ(kills("F 22:40:19.033 Exceeded soft private memory limit of 128 MB with 133 MB after servicing 61 requests total\n").size(), 1u);
  EXPECT_EQ(test::diagnose_text("Function execution took 5213 ms. Finished with status: 'error'\nError: memory limit exceeded. Function invocation was interrupted.\n").layer,
            Layer::container_limit);
}

// Heroku's R14 (over quota, swapping) and R15 (killed), with the quota worked
// out from usage and percentage (modelled on OWASP-BLT/BLT#3190,
// MsGsuite/CloneBot_Heroku#29 and, through a syslog drain,
// mrluanma/shadowsocks-heroku#2; values ours).
TEST(CloudPlatforms, HerokuR14IsTheQuotaReachedAndR15TheKill) {
  const char* r14 = R"(2025-01-02T00:51:32.759454+00:00 heroku[web.1]: Process running mem=812M(158.6%)
2025-01-02T00:51:32.761835+00:00 heroku[web.1]: Error R14 (Memory quota exceeded)
2025-01-02T00:51:53.102211+00:00 heroku[web.1]: Process running mem=815M(159.2%)
2025-01-02T00:51:53.102317+00:00 heroku[web.1]: Error R14 (Memory quota exceeded)
)";
  auto k = kills(r14);
  ASSERT_EQ(k.size(), 1u);  // R14 every 20 s is one condition
  EXPECT_EQ(k[0].kind, FactKind::kernel_oom_event);
  EXPECT_EQ(k[0].process, "web.1");
  EXPECT_EQ(k[0].usage, 812 * MiB);
  EXPECT_EQ(k[0].limit, 512 * MiB);
  EXPECT_EQ(test::diagnose_text(r14).layer, Layer::container_limit);

  const char* r15 = R"(2022-01-10T10:58:37.183286+00:00 heroku[worker.1]: Process running mem=1203M(235.0%)
2022-01-10T10:58:37.192749+00:00 heroku[worker.1]: Error R15 (Memory quota vastly exceeded)
2022-01-10T10:58:37.202439+00:00 heroku[worker.1]: Stopping process with SIGKILL
2022-01-10T10:58:37.425535+00:00 heroku[worker.1]: Process exited with status 137
)";
  k = kills(r15);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kind, FactKind::kernel_oom_kill);
  EXPECT_EQ(k[0].process, "worker.1");
  EXPECT_EQ(k[0].limit, 512 * MiB);
  Diagnosis d = test::diagnose_text(r15);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);

  const char* drain = R"(Jan 08 10:55:11 warm-cliffs-8392 heroku/web.1:  source=web.1 dyno=heroku.232.3654f538 sample#memory_total=1190.12MB sample#memory_rss=1024.00MB sample#memory_quota=1024.00MB
Jan 08 10:55:11 warm-cliffs-8392 heroku/web.1:  Process running mem=1190M(116.2%)
Jan 08 10:55:11 warm-cliffs-8392 heroku/web.1:  Error R14 (Memory quota exceeded)
)";
  k = kills(drain);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].process, "web.1");
  EXPECT_EQ(k[0].limit, 1024 * MiB);
  auto q = of_kind(drain, FactKind::memory_limit);
  ASSERT_FALSE(q.empty());
  EXPECT_EQ(q[0].limit, 1024 * MiB);
}

// Nomad's task event and its docker driver's log line (modelled on
// hashicorp/nomad#2203 for the alloc-status table and the driver's
// "OOM Killed" in hashicorp/nomad drivers/docker/handle.go; values ours).
// A deploy's restart: SIGTERM, ten seconds, R12 and the SIGKILL, then
// "Process exited with status 137" (modelled on Heroku's R12 docs and a
// thread in the twentieth blind batch; values ours). The 137 is the stop's,
// not memory's; without the R12 it is an exit whose pool nothing names.
TEST(CloudPlatforms, HerokuR12IsAStopAndItsStatus137NotMemory) {
  const std::string tail =
      "2016-04-02T09:12:16.911843+00:00 heroku[web.1]: Process exited with status 137\n"
      "2016-04-02T09:12:19.204418+00:00 heroku[web.1]: Starting process with command `node server.js`\n";
  const std::string stop =
      "2016-04-02T09:12:02.118203+00:00 heroku[api]: Deploy 4b1e9d0 by ops@example.com\n"
      "2016-04-02T09:12:05.771290+00:00 heroku[web.1]: Stopping all processes with SIGTERM\n"
      "2016-04-02T09:12:15.784771+00:00 heroku[web.1]: Error R12 (Exit timeout) -> At least one process failed to exit "
      "within 10 seconds of SIGTERM\n"
      "2016-04-02T09:12:15.785002+00:00 heroku[web.1]: Stopping remaining processes with SIGKILL\n";
  EXPECT_EQ(test::facts_of_kind(stop, FactKind::stop_or_restart).size(), 1u);
  ASSERT_EQ(test::facts_of_kind(tail, FactKind::exit_status).size(), 1u);
  EXPECT_EQ(test::facts_of_kind(tail, FactKind::exit_status)[0].exit_code, 137);
  EXPECT_EQ(test::diagnose_text(stop + tail).layer, Layer::not_memory);
  Diagnosis bare = test::diagnose_text(tail);
  EXPECT_EQ(bare.layer, Layer::unknown);
  EXPECT_EQ(bare.cause, Cause::unknown);
}

TEST(CloudPlatforms, NomadOomKilledTaskIsTheTasksLimit) {
  const char* status = R"(Recent Events:
Time                       Type            Description
2024-05-01T10:00:03Z       Not Restarting  Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"
2024-05-01T10:00:03Z       Terminated      Exit Code: 137, Exit Message: "OOM Killed"
)";
  auto k = kills(status);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].detail, "Nomad task memory limit");
  EXPECT_EQ(k[0].exit_code, 137);
  EXPECT_EQ(test::diagnose_text(status).layer, Layer::container_limit);
  auto drv = kills("2024-05-01T10:00:03.120Z [ERROR] client.driver_mgr.docker: OOM Killed: driver=docker container_id=4f2c9d1e7a3b5c6d "
                   "container_image=ranker:3 nomad_job_name=rank nomad_task_name=ranker nomad_alloc_id=5c3a1e2f-77b0-4d1e\n");
  ASSERT_EQ(drv.size(), 1u);
  EXPECT_EQ(drv[0].process, "ranker");
  EXPECT_EQ(drv[0].container, "4f2c9d1e7a3b");
}

// CircleCI's step summary names its container's size (modelled on
// Linuxbrew/homebrew-science#12; our own build): the limit of the build's
// container, killed at it.
TEST(CloudPlatforms, CircleCisMemoryLimitSummaryIsTheContainersLimit) {
  const std::string log =
      "make[3]: *** [all_r] Error 2\n"
      "Your build has exceeded the memory limit of 8G on 1 container.\n";
  auto k = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].limit, 8ULL << 30);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(test::diagnose_text("Tip: if your build has exceeded the memory limit of 4G, use a larger resource class\n").layer,
            Layer::none);
}

// The task's size in `nomad alloc status` ("251 MiB/256 MiB" under Memory):
// a limit the diagnosis reasons from, as a JVM heap ceiling four times the
// task's size shows a limit below the need (modelled on hashicorp/nomad#2203
// and #6060; values ours).
TEST(CloudPlatforms, NomadTaskResourcesGiveTheLimit) {
  const char* log = R"(    task "api" {
      config { args = ["java", "-Xms512m", "-Xmx2g", "-jar", "/app/api.jar"] }
      resources { cpu = 400  memory = 512 }
    }
Task Resources
CPU        Memory           Disk     Addresses
2/400 MHz  508 MiB/512 MiB  300 MiB
Recent Events:
2024-03-11T08:12:40Z  Terminated  Exit Code: 137, Exit Message: "OOM Killed"
)";
  auto l = test::facts_of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 512ULL << 20);
  EXPECT_EQ(l[0].usage, 508ULL << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  std::string why;
  for (const auto& r : d.incidents[0].reasons) why += r + "\n";
  EXPECT_NE(why.find("-Xmx"), std::string::npos) << why;
}

// A Fly machine is a whole VM: its size is the host's RAM, and a global OOM
// kill of a process holding most of a 256 MB machine is a machine below the
// need (modelled on remix-run/indie-stack#156; values ours).
TEST(CloudPlatforms, FlyMachineSizeIsTheHostsRam) {
  const char* log = "2023-04-02T10:11:12.000 app[91857e2c] ams [info] [    3.201117] Out of memory: Killed process 402 (node) "
                    "total-vm:1048576kB, anon-rss:160512kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1800kB oom_score_adj:0\n"
                    "$ fly scale show\n"
                    "        VM Size: shared-cpu-1x\n"
                    "      VM Memory: 256 MB\n";
  auto h = test::facts_of_kind(log, FactKind::host_state);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].total, 256ULL << 20);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The same kill on a large host says nothing of the machine's size.
  std::string big = log;
  big.replace(big.find("256 MB"), 6, "8192 MB");
  EXPECT_EQ(test::diagnose_text(big).cause, Cause::unknown);
}

// flyctl 0.1+ prints the machine groups as a table (modelled on
// remix-run/blues-stack#170's release machine; app name, sizes and region ours).
TEST(CloudPlatforms, FlyScaleShowTableIsTheMachinesSize) {
  const std::string kill = "[    8.104417] Out of memory: Killed process 611 (node) total-vm:10982200kB, anon-rss:183012kB, file-rss:0kB, "
                           "shmem-rss:0kB, UID:0 pgtables:2610kB oom_score_adj:0\n";
  const std::string table = "$ fly scale show\nVM Resources for app: notes-api\n\nGroups\n"
                            "NAME\tCOUNT\tKIND  \tCPUS\tMEMORY\tREGIONS\n"
                            "app \t1    \tshared\t1   \t256 MB\tfra\n";
  auto h = test::facts_of_kind(table, FactKind::host_state);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].total, 256ULL << 20);
  Diagnosis d = test::diagnose_text(kill + table);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // A performance machine in GB, padded with spaces.
  auto g = test::facts_of_kind("worker  2      performance  4     8 GB     ord\n", FactKind::host_state);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].total, 8ULL << 30);
  // Prose with the word is no size.
  EXPECT_TRUE(test::facts_of_kind("the shared 2 volumes use 256 MB each\n", FactKind::host_state).empty());
}

TEST(CloudPlatforms, SettingsAndProseAreNoFailure) {
  const char* log = R"(Deploying revision api-00042 with memory limit of 512 MiB
Tip: Memory limit of 512 MiB exceeded with ... means you should raise --memory
If you see Error R14 (Memory quota exceeded), scale to a larger dyno.
The ECS docs say OutOfMemoryError can be avoided with a soft limit
heroku[web.1]: Process running mem=310M(60.5%)
)";
  EXPECT_TRUE(kills(log).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// The OCI runtimes say the init process died before the command ran
// (modelled on podman with crun v1 and docker with runc): a limit below what
// starting needs.
TEST(CloudPlatforms, OciRuntimeInitKillIsALimitTooLow) {
  for (const char* line :
       {"Error: OCI runtime error: crun: OOM: the memory limit could be too low: read from the init process\n",
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
        "create failed: runc create failed: unable to start container process: container init was OOM-killed (memory limit "
        "too low?): unknown.\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::container_limit) << line;
    EXPECT_EQ(d.cause, Cause::limit_too_low) << line;
  }
  // Under a kubelet (a pod's sandbox that never starts, kubectl's table and
  // events around it) the limit the runtime enforced is the pod's.
  Diagnosis pod = test::diagnose_text(
      "NAME        READY   STATUS              RESTARTS   AGE\n"
      "tiny-limit  0/1     ContainerCreating   0          2m10s\n"
      "  Warning  FailedCreatePodSandBox  2m9s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to "
      "create shim task: OCI runtime create failed: runc create failed: unable to start container process: container init was "
      "OOM-killed (memory limit too low?): unknown\n");
  EXPECT_EQ(pod.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(pod.cause, Cause::limit_too_low);
}

// AWS Lambda's REPORT line (modelled on aws/aws-lambda-dotnet and
// aws-samples tails of `sam local invoke`): the memory size is the limit, the
// invocation's peak at it is the kill at that limit; a peak far below it
// says a SIGKILL or exit 137 was not for memory (a runtime that failed to
// start, a timeout).
TEST(CloudPlatforms, LambdaReportGivesTheSizeAndThePeak) {
  auto report = [](int size, int peak) {
    return "START RequestId: 4d1c9a2e-7b3f-4e21-9c0d-5a6b7c8d9e0f Version: $LATEST\n"
           "END RequestId: 4d1c9a2e-7b3f-4e21-9c0d-5a6b7c8d9e0f\n"
           "REPORT RequestId: 4d1c9a2e-7b3f-4e21-9c0d-5a6b7c8d9e0f\tDuration: 9120.55 ms\tBilled Duration: 9121 ms\tMemory Size: " +
           std::to_string(size) + " MB\tMax Memory Used: " + std::to_string(peak) + " MB\n" +
           "RequestId: 4d1c9a2e-7b3f-4e21-9c0d-5a6b7c8d9e0f Error: Runtime exited with error: signal: killed\nRuntime.ExitError\n";
  };
  Diagnosis full = test::diagnose_text(report(512, 512));
  EXPECT_EQ(full.layer, Layer::container_limit);
  ASSERT_FALSE(full.incidents.empty());
  EXPECT_NE(full.incidents[0].reasons.front().find("Lambda"), std::string::npos) << full.incidents[0].reasons.front();
  Diagnosis low = test::diagnose_text(report(512, 31));
  EXPECT_EQ(low.layer, Layer::not_memory);
  ASSERT_FALSE(low.incidents.empty());
  EXPECT_NE(low.incidents[0].reasons.front().find("far below the limit"), std::string::npos) << low.incidents[0].reasons.front();
  // A peak near the size but under it: the kill is not ruled out (a limit, no verdict of not_memory).
  EXPECT_NE(test::diagnose_text(report(512, 400)).layer, Layer::not_memory);
  // The report of a healthy invocation alone is no failure.
  EXPECT_EQ(test::diagnose_text("REPORT RequestId: 1\tDuration: 12.0 ms\tBilled Duration: 13 ms\tMemory Size: 128 MB\tMax Memory Used: 71 MB\n").layer,
            Layer::none);
  // Under `sam local invoke` the emulator prints the size as the peak: a
  // successful invocation is no kill (modelled on aws/aws-sam-cli tails).
  EXPECT_EQ(test::diagnose_text("$ sam local invoke ThumbnailFunction -e events/s3-put.json\n"
                                "REPORT RequestId: 7c0a\tInit Duration: 402.11 ms\tDuration: 318.07 ms\tBilled Duration: 400 ms\t"
                                "Memory Size: 512 MB\tMax Memory Used: 512 MB\n{\"statusCode\": 200}\n")
                .layer,
            Layer::none);
}

// Cloud Run's service YAML (Knative) has Kubernetes' resources block: the
// platform's own kill still names its limit, not a pod's (modelled on
// googleapis/repo-automation-bots Cloud Run reports; values ours).
TEST(CloudPlatforms, APlatformsKillBesideKubernetesYamlIsItsOwnLimit) {
  const std::string text =
      "2021-08-26 17:02:14.318 PDT  ERROR  Memory limit of 512M exceeded with 526M used. Consider increasing the memory "
      "limit, see https://cloud.google.com/run/docs/configuring/memory-limits\n"
      "# service.yaml (excerpt)\n"
      "      containerConcurrency: 80\n"
      "      containers:\n"
      "      - resources:\n"
      "          limits:\n"
      "            memory: 512Mi\n";
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::container_limit);
}

// Cloud Foundry's crash event for an instance over its memory quota, in
// Diego's and the older DEA's words (modelled on cloudfoundry/cli threads
// with `cf events`; values are ours). A CUDA runtime's "(out of memory)" is not it.
TEST(CloudPlatforms, CloudFoundryCrashOutOfMemoryIsTheAppsQuota) {
  Diagnosis diego = test::diagnose_text(
      "2021-04-06T05:26:23.00+0100   audit.app.process.crash   web   index: 0, reason: CRASHED, exit_description: APP/PROC/WEB: "
      "Exited with status 137 (out of memory)\n");
  EXPECT_EQ(diego.layer, Layer::container_limit);
  Diagnosis dea = test::diagnose_text(
      "[API/0] OUT App instance exited with guid 5d1e payload: {\"instance\"=>\"a7c2\", \"index\"=>0, \"reason\"=>\"CRASHED\", "
      "\"exit_status\"=>255, \"exit_description\"=>\"out of memory\"}\n");
  EXPECT_EQ(dea.layer, Layer::container_limit);
  EXPECT_NE(test::diagnose_text("[TensorRT-LLM][ERROR] Error Code 1: Cuda Runtime (out of memory)\n").layer, Layer::container_limit);
}

// Render's event when a service passes its instance's memory (modelled on
// mui/toolpad#687; our own times and size): the plan's limit.
TEST(CloudPlatforms, RendersRanOutOfMemoryIsThePlansLimit) {
  const std::string log =
      "Jul 25 09:41:07 AM  info  - Creating an optimized production build...\n"
      "Jul 25 09:42:31 AM  ==> Ran out of memory (used over 2GB) while running your code.\n";
  auto kill = test::facts_of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].limit, uint64_t{2} << 30);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
}

// App Engine's wording before 2014 gave the usage but not the limit
// (modelled on the-blue-alliance/the-blue-alliance#631; figures ours).
TEST(CloudPlatforms, AppEnginesOldSoftLimitWordingWithoutTheLimit) {
  Diagnosis d = test::diagnose_text(
      "C 2013-04-25 18:02:14.231\n"
      "Exceeded soft private memory limit with 131.207 MB after servicing 1342 requests total\n"
      "W 2013-04-25 18:02:14.240\n"
      "After handling this request, the process that handled this request was found to be using too much memory and was terminated.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  ASSERT_FALSE(d.incidents.empty());
  const Fact& f = d.facts[d.incidents[0].failures[0]];
  ASSERT_TRUE(f.usage.has_value());
  EXPECT_NEAR(static_cast<double>(*f.usage), 131.207 * 1024 * 1024, 1024 * 1024);
}

// A Nomad task's memory_max beside the JVM's own estimate of its heap
// (modelled on hashicorp/nomad#13119; ids and figures ours): a heap ceiling
// far over the task's hard limit is the limit set below what the JVM will
// take. The task event's timestamp is not a shell's "PID Terminated" line.
TEST(CloudPlatforms, NomadMemoryMaxUnderTheJvmsHeapEstimateIsLimitTooLow) {
  const std::string log =
      "$ nomad job inspect -hcl ledger-api | grep -A3 resources\n"
      "      resources {\n"
      "        memory     = 512\n"
      "        memory_max = 640\n"
      "      }\n"
      "Recent Events:\n"
      "Time                       Type        Description\n"
      "2023-06-22T09:41:02+02:00  Terminated  Exit Code: 137, Exit Message: \"OOM Killed\"\n"
      "$ nomad alloc exec -task ledger-api 7e3a91c2 java -XshowSettings:vm -version\n"
      "VM settings:\n"
      "    Max. Heap Size (Estimated): 4.97G\n";
  auto limits = of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(*limits[0].limit, 640 * MiB);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].process, "Exit");
}

// `cf events` prints the crash's description unquoted (modelled on
// cloudfoundry/java-buildpack#157; our app and times): the instance's quota.
TEST(CloudPlatforms, CfEventsOutOfMemoryCrashIsTheInstancesQuota) {
  Diagnosis d = test::diagnose_text(
      "$ cf events billing-api\n"
      "time                          event        actor         description\n"
      "2016-05-02T09:14:21.00-0400   app.crash    billing-api   index: 1, reason: CRASHED, exit_description: out of memory, "
      "exit_status: 255\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
}

// ECS stopping a task itself during a deployment (livekit-examples/
// agent-deployment#20's shape; our ids): a stop, whatever the exit 137 says.
TEST(CloudPlatforms, EcsStoppingTheTaskForADeploymentIsAStop) {
  const std::string log =
      "{\"stop\": \"Scaling activity initiated by (deployment ecs-svc/7712093348812)\", \"code\": \"ServiceSchedulerInitiated\"}\n"
      "voice-agent exited with code 137\n";
  EXPECT_EQ(of_kind(log, FactKind::stop_or_restart).size(), 1u);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::not_memory);
}

// Vercel's build report of an OOM kill in its build container, sized at the
// build's start (modelled on giselles-ai/giselle#436; our project and times):
// the container's memory, at the machine's size.
TEST(CloudPlatforms, VercelsBuildReportOfAnOomIsTheBuildContainers) {
  const std::string log =
      "[09:12:04.118] Build machine configuration: 2 cores, 8 GB\n"
      "[09:12:33.410] Running \"vercel build\"\n"
      "[09:16:51.662]   x Internal errors encountered: external process killed a task\n"
      "[09:16:51.912] \u25b2 Build system report\n"
      "[09:16:51.912] \u2022 At least one \"Out of Memory\" (\"OOM\") event was detected during the build.\n";
  auto k = of_kind(log, FactKind::kernel_oom_kill);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].limit, 8 * units::GiB);
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::container_limit);
}

// `nomad alloc status -stats` after restarts (modelled on hashicorp/nomad
// threads of 2019; own ids): the task's memory shown at its limit ("251
// MiB/256 MiB") beside the docker driver's exit 137 is the task's limit. The
// same exit with the memory well under the limit says no such thing.
TEST(CloudPlatforms, NomadsExit137WithTheTaskAtItsMemoryIsTheLimit) {
  auto paste = [](const char* used) {
    return std::string("Task \"redis\" is \"running\"\nTask Resources\nCPU        Memory           Disk     Addresses\n4/500 MHz  ") + used +
           "/256 MiB  300 MiB  db: 10.0.2.15:26379\n\nRecent Events:\nTime                       Type        Description\n"
           "2019-03-29T14:12:39Z       Terminated  Exit Code: 137, Exit Message: \"Docker container exited with non-zero exit code: "
           "137\"\n";
  };
  EXPECT_EQ(test::diagnose_text(paste("251 MiB")).layer, Layer::container_limit);
  EXPECT_NE(test::diagnose_text(paste("61 MiB")).layer, Layer::container_limit);
}

}  // namespace
}  // namespace aimem
