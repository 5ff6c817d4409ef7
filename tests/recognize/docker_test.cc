// Docker, Compose and container CLIs (src/recognize/families/docker.cc).
#include <gtest/gtest.h>

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

  const char* stats = R"(CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O         BLOCK I/O   PIDS
a1b2c3d4e5f6   vllm      0.05%     1.2GiB / 2GiB         60.00%    1.2kB / 0B      0B / 0B     12
)";
  auto u = of_kind(stats, FactKind::memory_usage);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].container, "vllm");
  EXPECT_NEAR(static_cast<double>(*u[0].usage), 1.2 * units::GiB, 1.0);
  EXPECT_EQ(u[0].limit, 2 * units::GiB);
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

}  // namespace
}  // namespace aimem
