// The kubelet's log folder names as KubeNames reads them (sources/kube_names.h).
// Names are written in the kubelet's layout (pkg/kubelet/kuberuntime/helpers.go,
// kubernetes/kubernetes v1.30), with our own namespaces, pods and IDs.
#include "sources/kube_names.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"

namespace aimem {
namespace {

const std::string kId = "4a5b6c7d8e9f00112233445566778899aabbccddeeff00112233445566778899";

TEST(KubeNames, PodLogFolderSplitsIntoNamespacePodAndUid) {
  auto p = parse_pod_log_dir("ml-serving_llama-70b-0_0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5b");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ns, "ml-serving");
  EXPECT_EQ(p->pod, "llama-70b-0");
  EXPECT_EQ(p->uid, "0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5b");
  // A static pod's UID is the manifest's hash: 32 hex characters.
  EXPECT_TRUE(parse_pod_log_dir("kube-system_etcd-node1_9a8b7c6d5e4f30211203948576abcdef"));
  EXPECT_FALSE(parse_pod_log_dir("ns_pod"));                  // two parts
  EXPECT_FALSE(parse_pod_log_dir("a_b_c_0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5b"));  // four
  EXPECT_FALSE(parse_pod_log_dir("ns_pod_not-a-uid"));
  EXPECT_FALSE(parse_pod_log_dir("ns_pod_0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5z"));  // not hex
  EXPECT_FALSE(parse_pod_log_dir("__0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5b"));
}

TEST(KubeNames, ContainerLogNameCarriesTheContainerId) {
  auto c = parse_container_log_name("llama-70b-0_ml-serving_model-server-" + kId + ".log");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->pod, "llama-70b-0");
  EXPECT_EQ(c->ns, "ml-serving");
  EXPECT_EQ(c->container, "model-server");  // dashes in the container's name stay
  EXPECT_EQ(c->id, kId);
  EXPECT_FALSE(parse_container_log_name("llama-70b-0_ml-serving_model-server-" + kId));           // no .log
  EXPECT_FALSE(parse_container_log_name("llama-70b-0_ml-serving_model-server-abc123.log"));       // short id
  EXPECT_FALSE(parse_container_log_name("llama-70b-0_ml-serving_" + kId + ".log"));               // no name
  EXPECT_FALSE(parse_container_log_name(".log"));
}

TEST(KubeNames, ListsAgainOnlyForAnUnknownIdAndNotBeforeTheInterval) {
  auto dir = std::filesystem::path(test::temp_dir("kube_names"));
  std::filesystem::create_directories(dir / "var/log/pods/ml_a-0_0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5b/server");
  std::filesystem::create_directories(dir / "var/log/containers");
  std::ofstream(dir / ("var/log/containers/a-0_ml_server-" + kId + ".log")).put('\n');
  KubeNames names(dir.string(), 30);
  auto n = names.lookup("", kId, 100);
  ASSERT_TRUE(n);
  EXPECT_TRUE(names.available());
  EXPECT_EQ(n->ns, "ml");
  EXPECT_EQ(n->pod, "a-0");
  EXPECT_EQ(n->container, "server");
  auto pod = names.lookup("0e8b3f5a-1c2d-4e6f-8a9b-0c1d2e3f4a5b", "", 100);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->pod, "a-0");
  EXPECT_EQ(pod->container, "");

  // A pod that starts later is seen once the interval has passed, not before.
  const std::string uid2 = "11111111-2222-3333-4444-555555555555";
  std::filesystem::create_directories(dir / ("var/log/pods/ml_b-0_" + uid2));
  EXPECT_FALSE(names.lookup(uid2, "", 110));  // listed at 100: too soon
  auto later = names.lookup(uid2, "", 131);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->pod, "b-0");

  // Off Kubernetes: nothing to list, nothing found, no error.
  KubeNames none((dir / "nowhere").string());
  EXPECT_FALSE(none.lookup(uid2, kId, 0));
  EXPECT_FALSE(none.available());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aimem
