// Two generations of one service in `docker ps` (src/recognize/families/
// container_generations.cc). Inputs in docker's own column layout with our
// own ids, names and ages, modelled on a dokku deploy that left the previous
// release's containers running (dokku/dokku#3225) and a model container
// recreated beside the old one (gpustack/gpustack#5235).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

const std::string kKill =
    "[ 8841.224710] Out of memory: Kill process 20411 (ruby) score 262 or sacrifice child\n"
    "[ 8841.226018] Killed process 20411 (ruby) total-vm:1482240kB, anon-rss:1031420kB, file-rss:0kB\n";

TEST(ContainerGenerations, TheOldReleasesContainersBesideTheNewAreTwoGenerations) {
  const std::string ps =
      "$ docker ps --format 'table {{.ID}}\\t{{.Image}}\\t{{.Status}}\\t{{.Names}}'\n"
      "CONTAINER ID        IMAGE                   STATUS              NAMES\n"
      "7a1c09e4d2b3        dokku/cart:latest       Up 9 minutes        cart.web.1\n"
      "e5d0b8c1f7a6        dokku/cart:latest       Up 9 minutes        cart.worker.1\n"
      "0c4f2e9b7d18        8e2a61c0d5f3            Up 4 hours          cart.web.1.1612203340\n";
  auto f = test::facts_of_kind(ps, FactKind::runtime_setting);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause, Cause::deployment_overlap);
  EXPECT_EQ(f[0].process, "cart.web.1");
  Diagnosis d = test::diagnose_text(ps + kKill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::deployment_overlap);
}

TEST(ContainerGenerations, ARestartingCopyBesideOneUpForDaysIsTwoGenerations) {
  const std::string ps =
      "$ docker ps --format 'table {{.Names}}\\t{{.Status}}\\t{{.Image}}'\n"
      "NAMES                         STATUS                          IMAGE\n"
      "models-llama3-70b-91c2ab04    Restarting (1) 8 seconds ago    vllm/vllm-openai:v0.10.1\n"
      "models-llama3-70b-5e07d3f9    Up 2 days                       vllm/vllm-openai:v0.10.1\n";
  auto f = test::facts_of_kind(ps, FactKind::runtime_setting);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("models-llama3-70b-5e07d3f9 up"), std::string::npos) << f[0].detail;
  EXPECT_NE(f[0].detail.find("restarting"), std::string::npos) << f[0].detail;
}

TEST(ContainerGenerations, ReplicasExitedOnesAndTheDefaultLayoutAreRead) {
  // The default layout, PORTS empty on some rows: columns by the header's offsets.
  const std::string ps =
      "CONTAINER ID   IMAGE            COMMAND                  CREATED        STATUS                      PORTS      NAMES\n"
      "3f0a9c2e71d4   shop/api:2.4.1   \"gunicorn app:app\"       2 hours ago    Up 2 hours                  8000/tcp   shop-api-1\n"
      "9b27e4d0c8a5   shop/api:2.4.1   \"gunicorn app:app\"       2 hours ago    Up 2 hours                  8000/tcp   shop-api-2\n"
      "a81d5c3f0e96   shop/api:2.3.9   \"gunicorn app:app\"       3 days ago     Exited (137) 2 hours ago               shop-api-1-4e2c9d0b\n";
  // Replicas keep their own names; the old generation has exited: nothing alive twice.
  EXPECT_TRUE(test::facts_of_kind(ps, FactKind::runtime_setting).empty());
  // The same old container still up is the other generation (another image).
  std::string up = ps;
  up.replace(up.find("Exited (137) 2 hours ago  "), 26, "Up 3 days                 ");
  auto f = test::facts_of_kind(up, FactKind::runtime_setting);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].process, "shop-api-1");
  // Two copies started together are not generations.
  const std::string same =
      "NAMES                 STATUS        IMAGE\n"
      "tts-a1b2c3d4          Up 5 hours    tts:1.0\n"
      "tts-e5f6a7b8          Up 5 hours    tts:1.0\n";
  EXPECT_TRUE(test::facts_of_kind(same, FactKind::runtime_setting).empty());
  // A sentence naming the columns is no header.
  EXPECT_TRUE(test::facts_of_kind("The NAMES and STATUS columns show Up 3 days  for web.1\n", FactKind::runtime_setting).empty());
}

// docker-compose (v1) renames the container it is replacing
// "<short id>_<name>" while it recreates the service; a recreate that failed
// leaves both running (modelled on docker/compose threads of "Recreating
// 7f3d2a91c4_..." and a name conflict; our own ids and images).
TEST(ContainerGenerations, ComposesRenamedOldContainerBesideTheNewIsTwoGenerations) {
  const std::string log =
      "$ docker ps --format 'table {{.ID}}\t{{.Names}}\t{{.Status}}\t{{.Image}}'\n"
      "CONTAINER ID        NAMES                        STATUS              IMAGE\n"
      "91ab23cd45ef        app_web_1                    Up 8 minutes        app/web:2.4.0\n"
      "0c1d2e3f4a5b        3e5f7a9b1c_app_web_1         Up 6 days           app/web:2.3.9\n"
      "[92210.905263] Killed process 30914 (python) total-vm:2214088kB, anon-rss:1768244kB, file-rss:2048kB\n";
  EXPECT_EQ(test::diagnose_text(log).cause, Cause::deployment_overlap);
}

}  // namespace
}  // namespace aimem
