// deploy/kubernetes/ as users apply it: the real kubectl accepts every
// manifest (client-side dry run, kinds mapped through a discovery endpoint
// the test serves on loopback, since no cluster runs here), `aimem check`
// finds nothing to warn about in aimem's own DaemonSet, and the arguments the
// DaemonSet gives `aimem watch` are ones it runs with.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <thread>

#include "support/prometheus_harness.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::string dir() { return test::source_dir() + "/deploy/kubernetes"; }

// The API discovery documents kubectl reads to map a manifest's kind to a
// resource (legacy /api and /apis form, which every kubectl still reads).
const std::map<std::string, std::string> kDiscovery = {
    {"/api", R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]})"},
    {"/apis", R"({"kind":"APIGroupList","apiVersion":"v1","groups":[
      {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
      {"name":"monitoring.coreos.com","versions":[{"groupVersion":"monitoring.coreos.com/v1","version":"v1"}],"preferredVersion":{"groupVersion":"monitoring.coreos.com/v1","version":"v1"}}]})"},
    {"/api/v1", R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
      {"name":"services","singularName":"service","namespaced":true,"kind":"Service","verbs":["create","get","list","patch"]},
      {"name":"serviceaccounts","singularName":"serviceaccount","namespaced":true,"kind":"ServiceAccount","verbs":["create","get","list","patch"]}]})"},
    {"/apis/apps/v1", R"({"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
      {"name":"daemonsets","singularName":"daemonset","namespaced":true,"kind":"DaemonSet","verbs":["create","get","list","patch"]}]})"},
    {"/apis/monitoring.coreos.com/v1", R"({"kind":"APIResourceList","groupVersion":"monitoring.coreos.com/v1","resources":[
      {"name":"servicemonitors","singularName":"servicemonitor","namespaced":true,"kind":"ServiceMonitor","verbs":["create","get","list","patch"]},
      {"name":"podmonitors","singularName":"podmonitor","namespaced":true,"kind":"PodMonitor","verbs":["create","get","list","patch"]}]})"},
};

std::string kubectl() {
  for (const char* p : {"/usr/local/bin/kubectl", "/usr/bin/kubectl"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

TEST(DeployKubernetes, KubectlAcceptsEveryManifest) {
  std::string bin = kubectl();
  if (bin.empty()) GTEST_SKIP() << "kubectl not installed";
  httplib::Server api;
  for (const auto& [path, body] : kDiscovery)
    api.Get(path, [body = body](const httplib::Request&, httplib::Response& res) { res.set_content(body, "application/json"); });
  int port = api.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread t([&] { api.listen_after_bind(); });
  test::RunOptions o;
  o.timeout_s = 60;
  o.env = {"KUBECONFIG=/dev/null", "HOME=" + test::temp_dir("kubectl-home")};
  auto r = test::run({bin, "apply", "--dry-run=client", "--validate=false", "--server=http://127.0.0.1:" + std::to_string(port),
                      "-n", "aimem", "-f", dir(), "-f", dir() + "/prometheus-operator"},
                     o);
  api.stop();
  t.join();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  for (const char* what : {"daemonset.apps/aimem created (dry run)", "serviceaccount/aimem created (dry run)",
                           "service/aimem created (dry run)", "servicemonitor.monitoring.coreos.com/aimem created (dry run)",
                           "podmonitor.monitoring.coreos.com/aimem created (dry run)"})
    EXPECT_NE(r.out.find(what), std::string::npos) << what << "\n" << r.out << r.err;
}

TEST(DeployKubernetes, AimemCheckFindsNothingToWarnAbout) {
  std::vector<std::string> args{"check", "--json", "--node-memory", "64GiB"};
  for (const std::string& d : {dir(), dir() + "/prometheus-operator"})
    for (const auto& e : std::filesystem::directory_iterator(d))
      if (e.path().extension() == ".yaml") args.push_back(e.path().string());
  auto r = test::run_aimem(args);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  auto j = YAML::Load(r.out);  // JSON is YAML
  ASSERT_TRUE(j["summary"]) << r.out;
  EXPECT_EQ(j["summary"]["errors"].as<int>(), 0) << r.out;
  EXPECT_EQ(j["summary"]["warnings"].as<int>(), 0) << r.out;
  EXPECT_EQ(j["violations"].size(), 0u) << r.out;
  // It did read the DaemonSet (the other files hold no workload).
  EXPECT_EQ(j["files_checked"].size(), 5u);
  for (const auto& n : j["notes"])
    EXPECT_EQ(n["file"].as<std::string>().find("daemonset.yaml"), std::string::npos) << n["message"].as<std::string>();
}

// The DaemonSet's own arguments, with the node name the downward API gives
// and the host paths replaced by a captured Kubernetes node
// (tests/fixtures/watch/v2, with the kubelet's log folders): aimem watch runs
// with them, and its /metrics names the node on every series and the pod and
// container on the pod's cgroups.
TEST(DeployKubernetes, TheDaemonSetsArgumentsRunAndNameTheNodeAndPods) {
  YAML::Node ds = YAML::LoadFile(dir() + "/daemonset.yaml");
  const YAML::Node c = ds["spec"]["template"]["spec"]["containers"][0];
  ASSERT_EQ(c["args"][0].as<std::string>(), "watch");
  std::string tmp = test::temp_dir("daemonset-args");
  int port = test::free_loopback_port();
  std::vector<std::string> args;
  for (const auto& a : c["args"]) {
    std::string s = a.as<std::string>();
    if (s.rfind("--root=", 0) == 0) s = "--root=" + test::source_dir() + "/tests/fixtures/watch/v2";
    if (s.rfind("--listen=", 0) == 0) s = "--listen=127.0.0.1:" + std::to_string(port);
    if (s.rfind("--db=", 0) == 0) s = "--db=" + tmp + "/aimem.db";
    if (s.rfind("--interval=", 0) == 0) s = "--interval=200ms";
    if (auto p = s.find("$(NODE_NAME)"); p != std::string::npos) s.replace(p, 12, "gpu-node-7");
    args.push_back(s);
  }
  args.insert(args.end(), {"--duration=6s", "--no-gpus", "--no-kernel-log"});
  // The captured tree is read, never written (a pressure trigger is
  // registered only on the kernel's own procfs).
  const std::string psi_file = test::source_dir() + "/tests/fixtures/watch/v2/proc/pressure/memory";
  const std::string psi_before = test::read_file(psi_file);
  test::RunResult r;
  std::thread run([&] { r = test::run_aimem(args); });
  std::string body;
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1);
  // The listener answers before the first sample is taken (slow under the
  // sanitizers): poll until the series are there, 10 s at most.
  for (int i = 0; i < 100 && body.find("aimem_memory_used_bytes") == std::string::npos; ++i) {
    if (auto m = client.Get("/metrics"); m && m->status == 200) body = m->body;
    if (body.find("aimem_memory_used_bytes") == std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  run.join();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(tmp + "/aimem.db")) << r.err;
  EXPECT_EQ(test::read_file(psi_file), psi_before);
  EXPECT_NE(body.find("aimem_memory_used_bytes{pool=\"host_ram\",node=\"gpu-node-7\"}"), std::string::npos) << body;
  EXPECT_NE(body.find("namespace=\"inference\",pod=\"vllm-7d9f8c6b5-x2x7q\",container=\"vllm\",node=\"gpu-node-7\""),
            std::string::npos)
      << body;
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace aimem
