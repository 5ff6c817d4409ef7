// The fleet end to end with the real parts (issue 18, item 7): the real
// Prometheus server (Debian package) on loopback scrapes, once a second, two
// real `aimem watch` processes standing for two nodes (--label node=node-a and
// node=node-b) and stand-in kube-state-metrics and cAdvisor endpoints served
// from this process; a real allocator in a kubelet-shaped cgroup v1 memory
// cgroup that the test creates (64 MiB limit) is OOM-killed by the kernel;
// `aimem diagnose --prometheus` then has to name the pod, the layer and the
// cause from what Prometheus scraped, with nothing of node-b in node-a's
// verdict.
//
// Each watch reads this host's /proc, /sys and /dev through a root of
// symlinks that also holds the kubelet's log folders for its pod
// (var/log/pods/<ns>_<pod>_<uid>/, var/log/containers/<pod>_<ns>_<container>-<id>.log,
// the layout src/sources/kube_names.h reads), so it names the cgroup
// <test cgroup>/kubepods/burstable/pod<uid>/<container id> (the cgroupfs
// driver's shape, core/cgroup_path.cc) with namespace, pod and container as
// on a node.
//
// The kube-state-metrics and cAdvisor expositions are written here in their
// text format with this test's own values, modelled on
// kubernetes/kube-state-metrics:docs/metrics/workload/pod-metrics.md (labels
// namespace, pod, uid, container, reason, resource, unit) and
// google/cadvisor:metrics/prometheus.go as the kubelet's /metrics/cadvisor
// serves it (labels container, id, image, name, namespace, pod). Before the
// kill they show the container running with 0 restarts; after it (the kubelet
// would restart it) 1 restart, last terminated reason OOMKilled, exit code
// 137 and one OOM event. cAdvisor's working set is computed as cAdvisor does
// (memory.usage_in_bytes - total_inactive_file) from the real cgroup at each
// scrape.
//
// Bounded: every wait has a deadline; the whole test takes 14-17 s here. Every
// process is ended by its pid; the cgroups are removed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sources/cgroup_ctl.h"
#include "support/loopback_http.h"
#include "support/prometheus_harness.h"
#include "support/test_support.h"
#include "support/watch_process.h"

namespace aimem {
namespace {

using nlohmann::json;

constexpr uint64_t kLimit = 64ull << 20;

// A pod as the kubelet lays it out on a node (cgroupfs driver): its UID, its
// one container and that container's ID (64 hex digits, as containerd's).
struct PodSpec {
  std::string ns, pod, uid, container, id, node;
};
const PodSpec kPodA{"ml", "vllm-0", "5d0c3a7e-8f21-4b6a-9c44-2e1f0a9b7c31", "server",
                    "3f9a0c2b7d4e6f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e1f3a", "node-a"};
const PodSpec kPodB{"ml", "embed-0", "a41e9b02-6c3d-4f7e-8a15-0b2c3d4e5f60", "encoder",
                    "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d", "node-b"};

// <a cgroup RunCgroup creates>/kubepods/burstable/pod<uid>/<container id>,
// the container's cgroup limited; removed innermost first (after the test
// killed and reaped what ran there), then the top by RunCgroup.
struct PodCgroup {
  std::unique_ptr<watch::RunCgroup> top;
  std::vector<std::string> dirs;  // created below top, outermost first
  std::string kubepods_rel;       // <top>/kubepods, relative to the hierarchy
  std::string container_dir;      // the container's directory
  std::vector<pid_t> pids;        // the test's children in it: killed and reaped first

  bool make(const std::string& tag, const PodSpec& p, uint64_t limit, std::string* error) {
    auto created = watch::RunCgroup::create("/", "aimem-test-fleet-" + tag + "-" + std::to_string(getpid()), std::nullopt);
    if (!created) {
      *error = created.error().message;
      return false;
    }
    top = std::move(*created);
    kubepods_rel = top->path() + "/kubepods";
    std::string dir = top->dir();
    for (const std::string& part : {std::string("kubepods"), std::string("burstable"), "pod" + p.uid, p.id}) {
      dir += "/" + part;
      if (::mkdir(dir.c_str(), 0755) != 0) {
        *error = "cannot create " + dir + ": " + std::strerror(errno);
        return false;
      }
      dirs.push_back(dir);
    }
    container_dir = dir;
    std::ofstream(dir + "/memory.limit_in_bytes") << limit;
    // Swap must not let the allocator outlive the limit (absent without swap accounting).
    if (::access((dir + "/memory.memsw.limit_in_bytes").c_str(), W_OK) == 0)
      std::ofstream(dir + "/memory.memsw.limit_in_bytes") << limit;
    return true;
  }
  ~PodCgroup() {
    for (pid_t p : pids) kill(p, SIGKILL), waitpid(p, nullptr, 0);
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
      for (int i = 0; i < 50 && ::rmdir(it->c_str()) != 0 && errno == EBUSY; ++i) usleep(100000);
    top.reset();  // removes the top cgroup
  }
};

// A root for `aimem watch --root`: this host's proc, sys and dev, and the
// kubelet's log folders naming one pod.
std::string node_root(const std::string& dir, const PodSpec& p) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  for (const char* d : {"proc", "sys", "dev"}) fs::create_symlink(std::string("/") + d, dir + "/" + d);
  const std::string pod_dir = dir + "/var/log/pods/" + p.ns + "_" + p.pod + "_" + p.uid + "/" + p.container;
  fs::create_directories(pod_dir);
  test::write_file(pod_dir + "/0.log", "");
  fs::create_directories(dir + "/var/log/containers");
  test::write_file(dir + "/var/log/containers/" + p.pod + "_" + p.ns + "_" + p.container + "-" + p.id + ".log", "");
  return dir;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// cAdvisor's working set of a v1 cgroup: usage minus inactive file pages.
uint64_t working_set(const std::string& dir) {
  const std::string usage = read_text(dir + "/memory.usage_in_bytes");
  if (usage.empty()) return 0;
  uint64_t u = std::stoull(usage), inactive = 0;
  std::istringstream stat(read_text(dir + "/memory.stat"));
  std::string key;
  uint64_t v = 0;
  while (stat >> key >> v)
    if (key == "total_inactive_file") inactive = v;
  return u > inactive ? u - inactive : 0;
}

std::string pod_labels(const PodSpec& p) {
  return "namespace=\"" + p.ns + "\",pod=\"" + p.pod + "\",uid=\"" + p.uid + "\"";
}

// kube-state-metrics' pod series for both pods; pod A terminated by an OOM
// kill once `killed` (set a moment after cAdvisor's: the kubelet restarts the
// container, the API server and kube-state-metrics' watch follow).
std::string ksm_exposition(bool killed) {
  std::string s;
  s += "# HELP kube_pod_info [STABLE] Information about pod.\n# TYPE kube_pod_info gauge\n";
  for (const PodSpec* p : {&kPodA, &kPodB})
    s += "kube_pod_info{" + pod_labels(*p) + ",host_ip=\"10.20.0." + (p == &kPodA ? "11" : "12") + "\",pod_ip=\"10.244." +
         (p == &kPodA ? "1.7" : "2.9") + "\",node=\"" + p->node + "\",created_by_kind=\"StatefulSet\",created_by_name=\"" +
         p->pod.substr(0, p->pod.size() - 2) + "\",priority_class=\"\",host_network=\"false\"} 1\n";
  s += "# HELP kube_pod_container_resource_limits The number of requested limit resource by a container.\n"
       "# TYPE kube_pod_container_resource_limits gauge\n";
  for (const PodSpec* p : {&kPodA, &kPodB})
    s += "kube_pod_container_resource_limits{" + pod_labels(*p) + ",container=\"" + p->container + "\",node=\"" + p->node +
         "\",resource=\"memory\",unit=\"byte\"} " + std::to_string(p == &kPodA ? kLimit : 256ull << 20) + "\n";
  s += "# HELP kube_pod_container_resource_requests The number of requested request resource by a container.\n"
       "# TYPE kube_pod_container_resource_requests gauge\n";
  for (const PodSpec* p : {&kPodA, &kPodB})
    s += "kube_pod_container_resource_requests{" + pod_labels(*p) + ",container=\"" + p->container + "\",node=\"" + p->node +
         "\",resource=\"memory\",unit=\"byte\"} " + std::to_string(32ull << 20) + "\n";
  s += "# HELP kube_pod_container_status_restarts_total [STABLE] The number of container restarts per container.\n"
       "# TYPE kube_pod_container_status_restarts_total counter\n";
  s += "kube_pod_container_status_restarts_total{" + pod_labels(kPodA) + ",container=\"server\"} " + (killed ? "1" : "0") + "\n";
  s += "kube_pod_container_status_restarts_total{" + pod_labels(kPodB) + ",container=\"encoder\"} 0\n";
  s += "# HELP kube_pod_container_status_last_terminated_reason Describes the last reason the container was in terminated state.\n"
       "# TYPE kube_pod_container_status_last_terminated_reason gauge\n";
  if (killed) s += "kube_pod_container_status_last_terminated_reason{" + pod_labels(kPodA) + ",container=\"server\",reason=\"OOMKilled\"} 1\n";
  s += "# HELP kube_pod_container_status_last_terminated_exitcode Describes the exit code for the last container in terminated state.\n"
       "# TYPE kube_pod_container_status_last_terminated_exitcode gauge\n";
  if (killed) s += "kube_pod_container_status_last_terminated_exitcode{" + pod_labels(kPodA) + ",container=\"server\"} 137\n";
  return s;
}

// node-a's kubelet /metrics/cadvisor for pod A's container.
std::string cadvisor_exposition(bool killed, uint64_t ws) {
  const std::string l = "container=\"server\",id=\"/kubepods/burstable/pod" + kPodA.uid + "/" + kPodA.id +
                        "\",image=\"docker.io/vllm/vllm-openai:v0.6.3\",name=\"" + kPodA.id + "\",namespace=\"ml\",pod=\"vllm-0\"";
  std::string s;
  s += "# HELP container_memory_working_set_bytes Current working set in bytes.\n# TYPE container_memory_working_set_bytes gauge\n";
  s += "container_memory_working_set_bytes{" + l + "} " + std::to_string(ws) + "\n";
  s += "# HELP container_spec_memory_limit_bytes Memory limit for the container.\n# TYPE container_spec_memory_limit_bytes gauge\n";
  s += "container_spec_memory_limit_bytes{" + l + "} " + std::to_string(kLimit) + "\n";
  s += "# HELP container_oom_events_total Count of out of memory events observed for the container\n"
       "# TYPE container_oom_events_total counter\n";
  s += "container_oom_events_total{" + l + "} " + (killed ? "1" : "0") + "\n";
  return s;
}

const json* evidence(const json& incident, const std::string& prefix) {
  for (const auto& e : incident["evidence"])
    if (e["text"].get<std::string>().rfind(prefix, 0) == 0) return &e;
  return nullptr;
}

// The kernel's OOM kill count since boot (/proc/vmstat oom_kill), -1 if absent.
long long kernel_oom_kills() {
  std::ifstream in("/proc/vmstat");
  std::string key;
  long long value = 0;
  while (in >> key >> value)
    if (key == "oom_kill") return value;
  return -1;
}

TEST(FleetEndToEnd, PrometheusScrapesTwoWatchesThroughARealOomKillAndDiagnoseNamesThePod) {
  if (!test::PrometheusHarness::available()) GTEST_SKIP() << "no /usr/bin/prometheus (Debian package prometheus)";
  if (!test::cgroups_v1_writable()) GTEST_SKIP() << "no writable cgroup v1 memory controller here";
  const auto t0 = std::chrono::steady_clock::now();
  // The kernel's kill count since boot before anything here runs: on a host
  // that has killed before, the watch's host series starts at this count, and
  // reading it as a rise from 0 would be a kill that never happened; on a fresh
  // host it is 0 and pod A's kill does raise it from 0.
  const long long kills_at_start = kernel_oom_kills();
  ASSERT_GE(kills_at_start, 0) << "no oom_kill line in /proc/vmstat";
  const std::string dir = test::temp_dir("fleet-e2e");
  std::string err;

  PodCgroup cg_a, cg_b;
  ASSERT_TRUE(cg_a.make("a", kPodA, kLimit, &err)) << err;
  ASSERT_TRUE(cg_b.make("b", kPodB, 256ull << 20, &err)) << err;

  // The stand-in exporters (kube-state-metrics, node-a's kubelet cAdvisor).
  std::atomic<bool> killed{false}, restarted{false};
  const std::string leaf_a = cg_a.container_dir;
  test::Loopback exporters([&](httplib::Server& s) {
    s.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(ksm_exposition(restarted.load()), "text/plain; version=0.0.4");
    });
    s.Get("/metrics/cadvisor", [&, leaf_a](const httplib::Request&, httplib::Response& res) {
      res.set_content(cadvisor_exposition(killed.load(), working_set(leaf_a)), "text/plain; version=0.0.4");
    });
  });
  ASSERT_GT(exporters.port(), 0);

  const int port_a = test::free_loopback_port(), port_b = test::free_loopback_port();
  ASSERT_NE(port_a, port_b);
  auto watch_args = [&](const PodCgroup& cg, const PodSpec& p, int port) {
    return std::vector<std::string>{"--root", node_root(dir + "/root-" + p.node, p), "--cgroup", cg.kubepods_rel, "--label",
                                    "node=" + p.node, "--interval", "250ms", "--no-store", "--no-gpus", "--listen",
                                    "127.0.0.1:" + std::to_string(port)};
  };
  test::Watch watch_a(watch_args(cg_a, kPodA, port_a), dir + "/watch-a.log");
  test::Watch watch_b(watch_args(cg_b, kPodB, port_b), dir + "/watch-b.log");
  ASSERT_TRUE(test::wait_healthy(port_a, 20)) << test::read_file(dir + "/watch-a.log");
  ASSERT_TRUE(test::wait_healthy(port_b, 20)) << test::read_file(dir + "/watch-b.log");

  test::PrometheusHarness prom;
  const std::string ex = "127.0.0.1:" + std::to_string(exporters.port());
  ASSERT_TRUE(prom.start({{"aimem", {"127.0.0.1:" + std::to_string(port_a), "127.0.0.1:" + std::to_string(port_b)}},
                          {"kube-state-metrics", {ex}, "/metrics"},
                          {"kubelet-cadvisor", {ex}, "/metrics/cadvisor"}},
                         &err))
      << err;
  // Every target scraped, the watches naming their pods' cgroups.
  std::string last;
  for (const std::string q : {"aimem_memory_limit_bytes{node=\"node-a\",namespace=\"ml\",pod=\"vllm-0\",container=\"server\"}",
                              "aimem_memory_limit_bytes{node=\"node-b\",namespace=\"ml\",pod=\"embed-0\",container=\"encoder\"}",
                              "kube_pod_info{pod=\"vllm-0\",node=\"node-a\"}", "container_spec_memory_limit_bytes{pod=\"vllm-0\"}"}) {
    auto v = prom.query_until(q, 20, &last);
    ASSERT_TRUE(v) << "Prometheus never returned " << q << ": " << last << "\n"
                   << prom.log() << "\nwatch a:\n" << test::read_file(dir + "/watch-a.log") << "\nwatch b:\n"
                   << test::read_file(dir + "/watch-b.log");
    if (q.rfind("aimem_memory_limit_bytes{node=\"node-a\"", 0) == 0) {
      EXPECT_EQ(*v, double(kLimit));
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));  // scrapes of the counters at 0 before the kill

  // The real OOM kill: 2 MiB every 150 ms towards 256 MiB in the 64 MiB container.
  pid_t child = fork();
  if (child == 0) {
    std::ofstream(leaf_a + "/cgroup.procs") << getpid();
    execl(AIMEM_TEST_ALLOC, AIMEM_TEST_ALLOC, "2", "150", "256", (char*)nullptr);
    _exit(126);
  }
  ASSERT_GT(child, 0);
  cg_a.pids.push_back(child);
  int status = 0;
  bool reaped = false;
  for (int i = 0; i < 1000 && !reaped; ++i) {  // 20 s at most
    reaped = waitpid(child, &status, WNOHANG) == child;
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!reaped) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  std::erase(cg_a.pids, child);  // reaped: never signal that pid again
  ASSERT_TRUE(reaped) << "the allocator was not killed within 20 s";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  killed = true;  // cAdvisor's OOM event
  std::this_thread::sleep_for(std::chrono::seconds(2));
  restarted = true;  // kube-state-metrics: restarted, last terminated OOMKilled

  for (const std::string q : {"aimem_oom_kills_total{node=\"node-a\",pod=\"vllm-0\",container=\"server\"} > 0",
                              "kube_pod_container_status_restarts_total{pod=\"vllm-0\"} > 0",
                              "container_oom_events_total{pod=\"vllm-0\"} > 0"})
    ASSERT_TRUE(prom.query_until(q, 15, &last)) << "Prometheus never returned " << q << ": " << last;

  const std::string url = "http://127.0.0.1:" + std::to_string(prom.port());
  test::RunResult r = test::run_aimem({"diagnose", "--prometheus", url, "--pod", "ml/vllm-0", "--since", "2m", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json d = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << r.out;
  ASSERT_FALSE(d["incidents"].empty()) << d.dump(2);
  const json& inc = d["incidents"][0];
  EXPECT_EQ(d["layer"], "k8s_pod_limit") << d.dump(2);
  EXPECT_EQ(d["cause"], "limit_too_low") << d.dump(2);
  EXPECT_EQ(inc["summary"], "container server of pod vllm-0 was OOMKilled at its 64.0 MiB memory limit (1 restart)") << inc.dump(2);
  // The working set before the kill, not of the emptied cgroup after it.
  const json* ws = evidence(inc, "(cAdvisor) container_memory_working_set_bytes{namespace=\"ml\",pod=\"vllm-0\",container=\"server\"} = ");
  ASSERT_TRUE(ws) << inc["evidence"].dump(2);
  const std::string ws_text = (*ws)["text"];
  EXPECT_NE(ws_text.find(", limit 64.0 MiB (container_spec_memory_limit_bytes)"), std::string::npos) << ws_text;
  const double ws_mib = std::stod(ws_text.substr(ws_text.find("} = ") + 4));
  // 13 MiB/s, scraped once a second: the last sample before the kill is
  // above 40 MiB; the emptied cgroup's, near 0.
  EXPECT_GE(ws_mib, 40.0) << ws_text;
  EXPECT_LE(ws_mib, 64.0) << ws_text;
  EXPECT_NE(ws_text.find(" MiB at "), std::string::npos) << ws_text;
  EXPECT_GE(inc["pool"]["used_bytes"].get<uint64_t>(), 40ull << 20) << inc.dump(2);
  EXPECT_LE(inc["pool"]["used_bytes"].get<uint64_t>(), kLimit) << inc.dump(2);
  // aimem watch's own count of the real kill, on node-a, beside kube-state-metrics' reason.
  const json* kill = evidence(inc, "aimem_oom_kills_total{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",cgroup=\"" +
                                       cg_a.kubepods_rel + "/burstable/pod" + kPodA.uid + "/" + kPodA.id + "\"} rose 0 -> 1 between ");
  ASSERT_TRUE(kill) << inc["evidence"].dump(2);
  EXPECT_EQ((*kill)["where"], url + " (aimem watch)");
  ASSERT_TRUE(evidence(inc, "kube_pod_container_status_last_terminated_reason{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",reason=\"OOMKilled\"} = 1 at "))
      << inc["evidence"].dump(2);
  EXPECT_EQ(inc["pool"]["limit_bytes"], kLimit) << inc.dump(2);
  // Nothing of node-b (its watch, its pod) in node-a's pod's verdict.
  EXPECT_EQ(r.out.find("node-b"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("embed-0"), std::string::npos) << r.out;

  // The same as text, for README.
  test::RunResult text = test::run_aimem({"diagnose", "--prometheus", url, "--pod", "ml/vllm-0", "--since", "2m"});
  EXPECT_EQ(text.status, 0) << text.err;
  std::cout << "--- aimem diagnose --prometheus " << url << " --pod ml/vllm-0 --since 2m\n" << text.out;

  // The node, with aimem and kube-state-metrics only (no node_exporter): the
  // kernel's count (aimem's host_ram) rose with the cgroup's, which names the
  // pod; the host had memory to spare (aimem's host_ram pool). node-b's
  // series stay out.
  r = test::run_aimem({"diagnose", "--prometheus", url, "--node", "node-a", "--since", "2m", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json n = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(n.is_discarded()) << r.out;
  ASSERT_FALSE(n["incidents"].empty()) << n.dump(2);
  const json& ninc = n["incidents"][0];
  EXPECT_EQ(n["layer"], "k8s_pod_limit") << n.dump(2);
  // The pod the kill names, read as --pod reads it (its limit beside its working set).
  EXPECT_EQ(n["cause"], "limit_too_low") << n.dump(2);
  ASSERT_TRUE(kill = evidence(ninc, "aimem_oom_kills_total{namespace=\"ml\",pod=\"vllm-0\",container=\"server\",cgroup=\"" +
                                        cg_a.kubepods_rel + "/burstable/pod" + kPodA.uid + "/" + kPodA.id + "\"} rose 0 -> 1 between "))
      << ninc["evidence"].dump(2);
  bool kernel = false;
  for (const auto& e : ninc["evidence"]) {
    const std::string t = e["text"];
    // The host counter's series appears at the count since boot when the watch
    // starts: not a kill. A rise it quotes starts at that count or above.
    if (auto at = t.find("pool=\"host_ram\"} rose "); at != std::string::npos) {
      EXPECT_GE(std::atoll(t.c_str() + at + std::strlen("pool=\"host_ram\"} rose ")), kills_at_start) << t;
    }
    kernel |= t.rfind("aimem_oom_kills_total{node=\"node-a\",instance=\"127.0.0.1:" + std::to_string(port_a) + "\",pool=\"host_ram\"} rose ", 0) == 0;
  }
  EXPECT_TRUE(kernel) << ninc["evidence"].dump(2);
  EXPECT_NE(ninc["summary"].get<std::string>().find("container server was killed when memory cgroup " + cg_a.kubepods_rel), std::string::npos)
      << ninc["summary"];
  EXPECT_NE(ninc["next_checks"].dump().find("kubectl describe pod vllm-0"), std::string::npos) << ninc.dump(2);
  EXPECT_EQ(r.out.find("node-b"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("embed-0"), std::string::npos) << r.out;
  text = test::run_aimem({"diagnose", "--prometheus", url, "--node", "node-a", "--since", "2m"});
  EXPECT_EQ(text.status, 0) << text.err;
  std::cout << "--- aimem diagnose --prometheus " << url << " --node node-a --since 2m\n" << text.out;
  // node-b shares this host's kernel, whose count moved for pod A's kill
  // too; whatever it says, it names nothing of node-a.
  r = test::run_aimem({"diagnose", "--prometheus", url, "--node", "node-b", "--since", "2m", "--json"});
  EXPECT_EQ(r.out.find("vllm-0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("node-a"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(kPodA.uid), std::string::npos) << r.out;

  EXPECT_EQ(watch_a.stop(), 0) << test::read_file(dir + "/watch-a.log");
  EXPECT_EQ(watch_b.stop(), 0) << test::read_file(dir + "/watch-b.log");
  prom.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "fleet end to end: " << secs << " s\n";
  EXPECT_LT(secs, test::time_bound(60));
}

}  // namespace
}  // namespace aimem
