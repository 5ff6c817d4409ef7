// Docker, Compose and container CLIs (src/recognize/families/docker.cc).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

const char* kInspect = R"([
    {
        "Id": "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff",
        "State": {
            "Status": "exited",
            "OOMKilled": true,
            "ExitCode": 137
        },
        "Name": "/vllm",
        "HostConfig": {
            "Memory": 536870912,
            "MemorySwap": 1073741824
        }
    }
]
)";

TEST(Docker, InspectGivesOomKilledExitAndLimitForTheNamedContainer) {
  auto o = of_kind(kInspect, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "vllm");  // "Name" comes after "State"
  auto e = of_kind(kInspect, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].exit_code, 137);
  auto l = of_kind(kInspect, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 512 * units::MiB);
  EXPECT_EQ(l[0].detail, "HostConfig.Memory");
  Diagnosis d = test::diagnose_text(kInspect);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

TEST(Docker, OomKilledFalseAndNoLimitAreNoFailure) {
  const char* log = R"({"Id":"4f1e2d3c4b5a6978","State":{"Status":"exited","OOMKilled":false,"ExitCode":0},"Name":"/web","HostConfig":{"Memory":0}})";
  EXPECT_TRUE(of_kind(log, FactKind::docker_oomkilled).empty());
  EXPECT_TRUE(of_kind(log, FactKind::memory_limit).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// A container that exited by itself (a code, no signal) with OOMKilled false
// failed for its own reasons: not memory, and the fix is to read its log
// (modelled on a notebook image that exits at once; our own ids). Beside 137
// the flag decides nothing: Docker leaves it false when the kernel killed a
// child rather than the container's first process.
TEST(Docker, AnExitOfItsOwnWithOomKilledFalseIsNotMemory) {
  const std::string inspect = R"({
    "Status": "exited",
    "OOMKilled": false,
    "Pid": 0,
    "ExitCode": CODE,
    "StartedAt": "2026-01-13T09:41:02.118204117Z",
    "FinishedAt": "2026-01-13T09:41:02.902615330Z"
}
)";
  auto with = [&](const char* code) {
    std::string t = inspect;
    t.replace(t.find("CODE"), 4, code);
    return test::diagnose_text(t);
  };
  Diagnosis one = with("1");
  EXPECT_EQ(one.layer, Layer::not_memory) << test::reason_text(one);
  ASSERT_FALSE(one.incidents.empty());
  EXPECT_NE(one.incidents[0].summary.find("exited by itself with code 1"), std::string::npos) << one.incidents[0].summary;
  ASSERT_FALSE(one.incidents[0].fixes.empty());
  EXPECT_NE(one.incidents[0].fixes[0].action.find("own log"), std::string::npos);
  EXPECT_NE(with("137").layer, Layer::not_memory);
}

// The flag on its own in a platform's line (modelled on a RunPod worker's
// exit as a writer of the forty-fourth batch rendered it; values ours): set,
// it is the container's kill; false, or advice naming it, is not.
TEST(Docker, AnOomKilledFlagOutsideAnInspectIsTheContainersKill) {
  for (const char* line : {"2025-04-01T09:20:07Z runpod  | worker container exited: exit code 137, OOMKilled=true\n",
                           "[watchdog] job 42 container=worker status=exited exit=137 oomkilled=true\n"}) {
    auto o = of_kind(line, FactKind::docker_oomkilled);
    ASSERT_EQ(o.size(), 1u) << line;
    EXPECT_EQ(test::diagnose_text(line).layer, Layer::container_limit) << line;
  }
  for (const char* line : {"worker container exited: exit code 0, OOMKilled=false\n",
                           "If the status shows `OOMKilled=true`, consider raising the memory limit\n"})
    EXPECT_TRUE(of_kind(line, FactKind::docker_oomkilled).empty()) << line;
}

TEST(Docker, RunFlagsGiveTheLimitInEveryForm) {
  struct Case {
    const char* line;
    uint64_t bytes;
  } cases[] = {
      {"docker run --privileged --rm -ti -m 512m --cpus 1 -v `pwd`:/home --name stress img ash", 512 * units::MiB},
      {"docker run --memory=2g img", 2 * units::GiB},
      {"podman run -d --memory 4G img", 4 * units::GiB},
      {"docker run -m512m img", 512 * units::MiB},
      {"docker run --memory=536870912 img", 512 * units::MiB},  // bare: bytes
      {"hyper run elasticsearch --memory=128", 128 * units::MiB},  // hyper: MB
  };
  for (const auto& c : cases) {
    auto l = of_kind(c.line, FactKind::memory_limit);
    ASSERT_EQ(l.size(), 1u) << c.line;
    EXPECT_EQ(l[0].limit, c.bytes) << c.line;
    EXPECT_EQ(l[0].detail, "docker run -m");
  }
  EXPECT_EQ(of_kind(cases[0].line, FactKind::memory_limit)[0].container, "stress");
  // The container's own command is not read as flags; a bare 128 bytes is no docker limit.
  EXPECT_TRUE(of_kind("docker run img python -m 512m\n", FactKind::memory_limit).empty());
  EXPECT_TRUE(of_kind("docker run --memory=128 img\n", FactKind::memory_limit).empty());
  // Continuation lines.
  auto cont = of_kind("docker run --rm \\\n  --gpus all \\\n  -m 16g \\\n  vllm/vllm-openai\n", FactKind::memory_limit);
  ASSERT_EQ(cont.size(), 1u);
  EXPECT_EQ(cont[0].limit, 16 * units::GiB);
}

// `docker build --memory` limits each build step's container (modelled on a
// Next.js build killed under `docker build --memory 128M`, vercel/next.js
// issues; values ours): a memcg kill in the build is that limit's.
TEST(Docker, BuildMemoryFlagIsTheBuildStepsLimit) {
  const std::string text =
      "$ docker build . --memory 128M --no-cache\n"
      "Step 5/6 : RUN npm run build\n"
      "Static worker exited with code: null and signal: SIGKILL\n"
      "[88213.401277] Memory cgroup out of memory: Killed process 31874 (node) total-vm:11034212kB, anon-rss:121604kB, "
      "file-rss:38212kB, shmem-rss:0kB, UID:0 pgtables:1412kB oom_score_adj:0\n";
  auto l = test::facts_of_kind(text, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 128ull << 20);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  EXPECT_TRUE(test::facts_of_kind("$ docker build -t web:1 .\n", FactKind::memory_limit).empty());
}

TEST(Docker, ComposeLimits) {
  const char* log = R"(services:
  api:
    mem_limit: 4g
  vllm:
    deploy:
      resources:
        limits:
          memory: 8G
)";
  auto l = of_kind(log, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].limit, 4 * units::GiB);
  EXPECT_EQ(l[0].detail, "mem_limit");
  EXPECT_EQ(l[1].limit, 8 * units::GiB);
  EXPECT_EQ(l[1].detail, "deploy.resources.limits.memory");
}

TEST(Docker, PsStatsAndCiHints) {
  auto ps = of_kind("4f1e2d3c4b5a   vllm/vllm-openai   \"python3 -m vllm\"   2 hours ago   Exited (137) 3 minutes ago             vllm\n",
                    FactKind::exit_status);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].exit_code, 137);
  EXPECT_EQ(ps[0].container, "vllm");
  // Under a restart policy the status is "Restarting (137) ..." (modelled on
  // a serverless function's container in a restart loop, 2023; our names).
  auto restarting = of_kind("sam-vit-h   cvat.pth.sam.vit_h:latest   Restarting (137) 7 seconds ago\n", FactKind::exit_status);
  ASSERT_EQ(restarting.size(), 1u);
  EXPECT_EQ(restarting[0].exit_code, 137);
  EXPECT_TRUE(of_kind("the service keeps Restarting (see below)\n", FactKind::exit_status).empty());

  const char* stats = R"(CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O         BLOCK I/O   PIDS
a1b2c3d4e5f6   vllm      0.05%     1.2GiB / 2GiB         60.00%    1.2kB / 0B      0B / 0B     12
)";
  auto u = of_kind(stats, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].container, "vllm");
  EXPECT_NEAR(static_cast<double>(*u[0].usage), 1.2 * units::GiB, 1.0);
  EXPECT_EQ(u[0].limit, 2 * units::GiB);
}

// `docker events` text: the oom event repeats for one OOM (moby/moby#27247),
// then the die with its exit code. Values are ours.
TEST(Docker, EventsTextOomThenDieIsOneContainerLimitKill) {
  const char* log = R"(2024-05-01T10:00:00.101311022Z container oom 4f2c9d1e7a3b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6 (image=vllm/vllm-openai:v0.6.3, name=vllm-7b)
2024-05-01T10:00:00.102644713Z container oom 4f2c9d1e7a3b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6 (image=vllm/vllm-openai:v0.6.3, name=vllm-7b)
2024-05-01T10:00:00.388512004Z container die 4f2c9d1e7a3b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6 (exitCode=137, image=vllm/vllm-openai:v0.6.3, name=vllm-7b)
)";
  auto o = of_kind(log, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "vllm-7b");
  auto e = of_kind(log, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].exit_code, 137);
  EXPECT_EQ(e[0].container, "vllm-7b");
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.incidents.size(), 1u);
}

// `docker events --format '{{json .}}'`: the legacy "status" form alone
// (modelled on moby/moby#18470) and the current Action/Actor form; the 1.8
// "(from image) oom" form (moby/moby#16074). Values are ours.
TEST(Docker, EventsJsonAndOldFormsNameTheContainer) {
  const char* legacy =
      R"({"status":"oom","id":"8a1c0e5f3d2b7a9c4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d","from":"embedder:2","time":1714557600,"timeNano":1714557600512311022})"
      "\n";
  auto o = of_kind(legacy, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "8a1c0e5f3d2b");
  const char* current =
      R"({"status":"oom","id":"8a1c0e5f3d2b","from":"embedder:2","Type":"container","Action":"oom","Actor":{"ID":"8a1c0e5f3d2b","Attributes":{"image":"embedder:2","name":"embedder"}},"scope":"local","time":1714557600,"timeNano":1714557600512311022})"
      "\n"
      R"({"Type":"container","Action":"die","Actor":{"ID":"8a1c0e5f3d2b","Attributes":{"exitCode":"137","image":"embedder:2","name":"embedder"}},"scope":"local","time":1714557601,"timeNano":1714557601002311022})"
      "\n";
  o = of_kind(current, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "embedder");
  auto e = of_kind(current, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].exit_code, 137);
  EXPECT_EQ(test::diagnose_text(current).layer, Layer::container_limit);
  const char* old = "2015-09-03T16:20:42.000000000-07:00 2424b8f0a892: (from ubuntu) kill\n"
                    "2015-09-03T16:20:42.000000000-07:00 2424b8f0a892: (from ubuntu) oom\n"
                    "2015-09-03T16:20:42.000000000-07:00 2424b8f0a892: (from ubuntu) die\n";
  o = of_kind(old, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "2424b8f0a892");
  // Other actions are not failures.
  EXPECT_TRUE(of_kind(R"({"status":"start","id":"8a1c0e5f3d2b","Type":"container","Action":"start"})"
                      "\n",
                      FactKind::docker_oomkilled)
                  .empty());
}

// A container the kubelet ran through dockershim carries its pod's name
// (modelled on docker/for-linux#670; values ours).
TEST(Docker, EventOfAKubeletContainerNamesThePod) {
  auto o = of_kind(
      "2019-05-04T18:05:45.011072877-05:00 container oom 29d72966e0be (annotation.io.kubernetes.container.restartCount=0, "
      "image=sha256:abb449eb1487, io.kubernetes.container.name=notebook, io.kubernetes.pod.name=jupyter-ada, "
      "io.kubernetes.pod.namespace=hub, name=k8s_notebook_jupyter-ada_hub_efa75591_0)\n",
      FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].pod, "jupyter-ada");
  EXPECT_EQ(o[0].container, "k8s_notebook_jupyter-ada_hub_efa75591_0");
  // The kubelet's container: the pod's limit was hit, not a plain container's.
  Diagnosis d = test::diagnose_text(
      "2019-05-04T18:05:45.011072877-05:00 container oom 29d72966e0be (io.kubernetes.container.name=notebook, "
      "io.kubernetes.pod.name=jupyter-ada, io.kubernetes.pod.namespace=hub, name=k8s_notebook_jupyter-ada_hub_efa75591_0)\n");
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit);
  EXPECT_EQ(test::diagnose_text("2019-05-04T18:05:45.011072877-05:00 container oom 29d72966e0be (image=web:1, name=web-1)\n").layer,
            Layer::container_limit);
}

TEST(Docker, ExitOnRestartWithZeroPeakIsNotMemory) {
  const char* log = R"(+ docker-compose exec web supervisorctl restart all
Exited with code 137

Hint: Exit code 137 typyically means the process is killed because it was running out of memory
Hint: Max memory usage of this container is 0
 according to /sys/fs/cgroup/memory/memory.max_usage_in_bytes
)";
  auto u = of_kind(log, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].usage, 0u);  // zero is a value, not missing
  EXPECT_EQ(of_kind(log, FactKind::stop_or_restart).size(), 1u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::not_memory);
  // Advice that names docker stop is not an operator action.
  EXPECT_TRUE(of_kind("Hint: run docker stop web before upgrading\n", FactKind::stop_or_restart).empty());
}

// `docker inspect -f` with a template: the values line read by position
// (modelled on a TGI container run with --memory=16g).
TEST(Docker, InspectTemplateValuesAreReadByPosition) {
  const std::string text =
      "$ docker inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}} {{.HostConfig.Memory}}' 4898af9b1dc3\n"
      "true 1 17179869184\n";
  auto o = test::facts_of_kind(text, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "4898af9b1dc3");
  auto l = test::facts_of_kind(text, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 16ull << 30);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::container_limit);
  // A status word among the values (modelled on chroma-core/chroma container
  // reports; values ours): still read by position.
  const std::string status =
      "$ docker inspect chroma --format '{{.State.Status}} {{.State.ExitCode}} {{.State.OOMKilled}}'\nexited 137 true\n";
  ASSERT_EQ(test::facts_of_kind(status, FactKind::docker_oomkilled).size(), 1u);
  EXPECT_EQ(test::facts_of_kind("$ docker inspect job --format '{{.State.Status}} exit={{.State.ExitCode}} oom={{.State.OOMKilled}}'\n"
                                "exited exit=137 oom=true\n",
                                FactKind::docker_oomkilled)
                .size(),
            1u);
  EXPECT_EQ(test::diagnose_text(status).layer, Layer::container_limit);
  // false in the OOMKilled position is no kill; other columns say nothing alone.
  EXPECT_TRUE(test::facts_of_kind("$ docker inspect -f '{{.State.ExitCode}} {{.State.OOMKilled}}' web\n0 false\n",
                                  FactKind::docker_oomkilled).empty());
}

// A template whose words carry text around their fields, with the name
// before the flag (modelled on the vLLM --cpu-offload-gb container of
// vllm-project/vllm#9339 and the FastAPI container of fastapi/fastapi#1624, corpus co-072 and
// hp-087; values ours): the text is taken off each value.
TEST(Docker, InspectTemplateWithWordsAroundItsFields) {
  const std::string text =
      "$ docker inspect embedder --format '{{.State.Status}} OOMKilled={{.State.OOMKilled}} exit={{.State.ExitCode}}'\n"
      "exited OOMKilled=true exit=137\n";
  auto o = test::facts_of_kind(text, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "embedder");
  auto e = test::facts_of_kind(text, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].exit_code, 137);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::container_limit);
  // The words must be the template's: other text in that shape is not its output.
  EXPECT_TRUE(test::facts_of_kind(
                  "$ docker inspect embedder --format 'OOMKilled={{.State.OOMKilled}}'\nOOM=true\n",
                  FactKind::docker_oomkilled)
                  .empty());
  EXPECT_TRUE(test::facts_of_kind(
                  "$ docker inspect embedder --format 'OOMKilled={{.State.OOMKilled}}'\nOOMKilled=false\n",
                  FactKind::docker_oomkilled)
                  .empty());
}

// The same with the limit among the fields, the name after the template
// (modelled on the Vosk server container of alphacep/vosk-server#44; values
// ours): every field is read, the limit too. The command is 132 columns, a
// terminal's width, and alone that long: it is not a wrapped line
// (recognize/unwrap.cc), and its output below it stays a line of its own.
TEST(Docker, InspectTemplateWithTheLimitAmongItsFields) {
  const std::string text =
      "$ docker inspect -f '{{.State.Status}} OOMKilled={{.State.OOMKilled}} exit={{.State.ExitCode}} "
      "limit={{.HostConfig.Memory}}' vosk-en\n"
      "exited OOMKilled=true exit=137 limit=5368709120\n";
  auto o = test::facts_of_kind(text, FactKind::docker_oomkilled);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].container, "vosk-en");
  auto l = test::facts_of_kind(text, FactKind::memory_limit);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].limit, 5 * units::GiB);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::container_limit);
}

// docker stop escalating SIGTERM to SIGKILL after its grace period, as
// `docker events` prints it (modelled on the corpus case co-028 from
// getwud/wud; values ours): the 137 is the API's kill, not memory.
TEST(Docker, EventsKillAndStopAreTheApisKill) {
  const std::string text =
      "2025-03-01T02:00:10.100000000+01:00 container kill 5be1c0d2a9f3 (image=ghcr.io/acme/sync, name=sync, signal=15)\n"
      "2025-03-01T02:00:20.120000000+01:00 container kill 5be1c0d2a9f3 (image=ghcr.io/acme/sync, name=sync, signal=9)\n"
      "2025-03-01T02:00:20.400000000+01:00 container die 5be1c0d2a9f3 (exitCode=137, image=ghcr.io/acme/sync, name=sync)\n"
      "2025-03-01T02:00:20.600000000+01:00 container stop 5be1c0d2a9f3 (image=ghcr.io/acme/sync, name=sync)\n";
  auto stops = test::facts_of_kind(text, FactKind::stop_or_restart);
  ASSERT_GE(stops.size(), 1u);
  EXPECT_EQ(stops[0].container, "sync");
  EXPECT_NE(stops[0].detail.find("signal 15"), std::string::npos) << stops[0].detail;
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::not_memory);
  // The die alone stays undecided: 137 with nothing to say who sent it.
  EXPECT_EQ(test::diagnose_text("2025-03-01T02:00:20.400000000+01:00 container die 5be1c0d2a9f3 (exitCode=137, "
                                "image=ghcr.io/acme/sync, name=sync)\n")
                .layer,
            Layer::unknown);
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

// containerd's CRI plugin logs each task's OOM event, in two shapes by
// release (containerd/containerd pkg/cri events: "TaskOOM event %+v"); the
// lines are written here in the journal's form with our ids and times.
TEST(Docker, ContainerdTaskOomEventIsAContainersKill) {
  for (const char* text :
       {"May 01 12:00:03 node-7 containerd[912]: time=\"2024-05-01T12:00:03.442118Z\" level=info msg=\"TaskOOM event "
        "&TaskOOM{ContainerID:8b3e1f0c2d4a6b8c0e1f2a3b4c5d6e7f,XXX_unrecognized:[],}\"\n",
        "time=\"2025-02-11T08:41:17.903551Z\" level=info msg=\"TaskOOM event container_id:\\\"5d7e9f0a1b2c3d4e5f60718293a4b5c6\\\"\"\n"}) {
    auto kills = test::facts_of_kind(text, FactKind::docker_oomkilled);
    ASSERT_EQ(kills.size(), 1u) << text;
    EXPECT_EQ(kills[0].layer, Layer::container_limit);
    EXPECT_EQ(kills[0].detail, "containerd TaskOOM event");
    EXPECT_EQ(kills[0].container.size(), 12u) << kills[0].container;
    EXPECT_TRUE(kills[0].container == "8b3e1f0c2d4a" || kills[0].container == "5d7e9f0a1b2c") << kills[0].container;
    EXPECT_EQ(test::diagnose_text(text).layer, Layer::container_limit) << text;
  }
  // Other task events of the same log are no kill.
  EXPECT_TRUE(test::facts_of_kind("time=\"2024-05-01T12:00:04Z\" level=info msg=\"TaskExit event "
                                  "&TaskExit{ContainerID:8b3e1f0c2d4a,ID:8b3e1f0c2d4a,Pid:4121,ExitStatus:137,}\"\n",
                                  FactKind::docker_oomkilled)
                  .empty());
}

// The same event on a node whose docker runtime the kubelet drives: its
// dockershim names (k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT in `docker stats`)
// say the node is a Kubernetes node, so the killed container is a pod's
// (modelled on containerd/containerd#4547; our ids and sizes). The name is
// context for every failure of the input, wherever it stands.
TEST(Docker, ContainerdTaskOomOnAKubernetesNodeIsThePods) {
  const std::string oom =
      "Mar 14 02:11:40 node-4 containerd[1033]: time=\"2024-03-14T02:11:40.118220Z\" level=info msg=\"TaskOOM event "
      "&TaskOOM{ContainerID:4c2a9e7b1d3f5a6c8e0b2d4f6a8c0e1f,XXX_unrecognized:[],}\"\n";
  const std::string stats =
      "$ docker stats --no-stream 4c2a9e7b1d3f\n"
      "CONTAINER ID   NAME                                                                    CPU %   MEM USAGE / LIMIT   MEM %    "
      "NET I/O   BLOCK I/O   PIDS\n"
      "4c2a9e7b1d3f   k8s_kube-proxy_kube-proxy-8vq2n_kube-system_2f1e0d9c-8b7a-4c6d-9e5f-1a2b3c4d5e6f_3   1.02%   "
      "63.91MiB / 64MiB   99.86%   0B / 0B   12.1MB / 0B   9\n";
  auto p = test::facts_of_kind(stats, FactKind::platform);
  EXPECT_TRUE(std::any_of(p.begin(), p.end(), [](const Fact& f) { return f.detail == "kubernetes"; }));
  EXPECT_EQ(test::diagnose_text(oom + stats).layer, Layer::k8s_pod_limit);
  EXPECT_EQ(test::diagnose_text(stats + oom).layer, Layer::k8s_pod_limit);
  // A container of another name stays a container.
  std::string plain = stats;
  plain.replace(plain.find("k8s_kube-proxy"), 14, "kube_proxy_dev");
  EXPECT_EQ(test::diagnose_text(oom + plain).layer, Layer::container_limit);
}

// docker inspect's HostConfig.Memory of 0: the container had no memory limit,
// so its OOMKilled flag counts a kill by the host's own OOM killer (Docker
// Desktop's VM, on a laptop), in a template's output or the JSON (modelled on
// deepset-ai/haystack and trustroots devcontainer threads; our values). A
// container with a limit stays the container's.
TEST(Docker, OomKilledWithNoMemoryLimitIsTheHosts) {
  const std::string tmpl = "$ docker inspect -f '{{.State.OOMKilled}} {{.HostConfig.Memory}}' api-1\ntrue 0\n";
  EXPECT_EQ(test::diagnose_text(tmpl).layer, Layer::host_ram);
  const std::string json =
      "[\n  {\n    \"State\": {\n      \"Status\": \"exited\",\n      \"OOMKilled\": true,\n      \"ExitCode\": 137\n    },\n"
      "    \"Name\": \"/api-1\",\n    \"HostConfig\": {\n      \"Memory\": 0,\n      \"MemorySwap\": 0\n    }\n  }\n]\n";
  EXPECT_EQ(test::diagnose_text(json).layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text("$ docker inspect -f '{{.State.OOMKilled}} {{.HostConfig.Memory}}' api-1\ntrue 2147483648\n").layer,
            Layer::container_limit);
}

// A command before the inspect on its line prints first (modelled on a
// photoprism/photoprism thread's `nproc; docker inspect -f
// '{{.HostConfig.Memory}}' ...`; values ours): nproc's 4 is not the limit.
TEST(Docker, ACommandBeforeTheInspectPrintsFirst) {
  const std::string text = "$ nproc; docker inspect -f '{{.HostConfig.Memory}}' photos-1\n4\n0\n";
  EXPECT_TRUE(test::facts_of_kind(text, FactKind::memory_limit).empty());
  bool no_limit = false;
  for (const Fact& f : test::facts_of_kind(text, FactKind::runtime_setting)) no_limit |= f.detail == kNoContainerLimit;
  EXPECT_TRUE(no_limit);
  auto limited = test::facts_of_kind("$ hostname && docker inspect -f '{{.HostConfig.Memory}}' photos-1\nnas-2\n1073741824\n",
                                     FactKind::memory_limit);
  ASSERT_EQ(limited.size(), 1u);
  EXPECT_EQ(limited[0].limit, 1073741824u);
}

// `docker events` on a node of the dockershim era, the container one the
// kubelet named (modelled on kubernetes/heapster threads of 2015; own ids):
// its OOM is the pod's limit. The same events with no Kubernetes in the paste
// are a container's.
TEST(Docker, EventsOfAContainerTheKubeletNamedAreThePods) {
  const std::string events =
      "$ sudo docker events --since=2015-10-14T06:40:00\n"
      "2015-10-14T06:40:52.000000000Z e86bcf0f3bb0420967a18caaa41234a135ac65c482d488b1e4cf2f00d4729119: (from gcr.io/google_containers/"
      "heapster:v0.18.2) oom\n"
      "2015-10-14T06:40:52.000000000Z e86bcf0f3bb0420967a18caaa41234a135ac65c482d488b1e4cf2f00d4729119: (from gcr.io/google_containers/"
      "heapster:v0.18.2) die\n";
  const std::string k8s =
      "$ kubectl get pods --namespace=kube-system | grep heapster\n"
      "heapster-v10-9c4kq                                 1/1       Running   47         1h\n"
      "$ sudo docker inspect -f '{{.Name}} {{.HostConfig.Memory}}' $(sudo docker ps -q --filter name=k8s_heapster)\n";
  EXPECT_EQ(test::diagnose_text(k8s + events).layer, Layer::k8s_pod_limit);
  EXPECT_EQ(test::diagnose_text(events).layer, Layer::container_limit);
}

}  // namespace
}  // namespace aimem
