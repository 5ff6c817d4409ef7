// The watch sampler against fixture trees in the kernel's file formats (cgroup
// v2 Kubernetes node, cgroup v1 Docker host), against this machine (real /proc,
// a real v1 memory cgroup the test creates and removes), and against the
// stand-in NVML library (tests/fakes/fake_nvml.c) loaded through dlopen.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <filesystem>
#include <gtest/gtest.h>

#include "sources/readfile.h"
#include "support/test_support.h"
#include "sources/sampler.h"

namespace aimem::watch {
namespace {

std::string fixture(const std::string& name) { return test::source_dir() + "/tests/fixtures/watch/" + name; }

const CgroupSample* find_cgroup(const Sample& s, const std::string& path) {
  for (auto& c : s.cgroups)
    if (c.path == path) return &c;
  return nullptr;
}
const ProcessSample* find_process(const Sample& s, int pid) {
  for (auto& p : s.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}
std::vector<int> pids_of(const Sample& s) {
  std::vector<int> v;
  for (auto& p : s.processes) v.push_back(p.pid);
  return v;
}

SamplerOptions fixture_options(const std::string& name) {
  SamplerOptions o;
  o.root = fixture(name);
  o.gpus = false;
  return o;
}

constexpr uint64_t GiB = 1ULL << 30, MiB = 1ULL << 20;
const std::string kPod =
    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8f3c2a4e_1b2d_4c6e_9f00_123456789abc.slice";
const std::string kCtr = kPod + "/cri-containerd-4a5b6c7d8e9f00112233445566778899aabbccddeeff00112233445566778899.scope";

TEST(SamplerRole, FromCommandLines) {
  using namespace std::string_literals;
  EXPECT_EQ(role_from_cmdline("python3\0-m\0vllm.entrypoints.openai.api_server\0--model\0x"s), "vllm");
  EXPECT_EQ(role_from_cmdline("python3 -m vllm.entrypoints.openai.api_server"), "vllm");
  EXPECT_EQ(role_from_cmdline("/usr/bin/python3\0/usr/local/bin/vllm\0serve\0m"s), "vllm");
  EXPECT_EQ(role_from_cmdline("/opt/venv/bin/vllm\0serve\0meta-llama/Llama-3.1-8B"s), "vllm");
  EXPECT_EQ(role_from_cmdline("python -m sglang.launch_server --model-path x"), "sglang");
  EXPECT_EQ(role_from_cmdline("/app/llama-server\0-m\0q.gguf"s), "llama-server");
  EXPECT_EQ(role_from_cmdline("/usr/bin/ollama\0serve\0"s), "ollama");
  EXPECT_EQ(role_from_cmdline("text-generation-launcher --model-id x"), "tgi");
  EXPECT_EQ(role_from_cmdline("/usr/src/server/text-generation-server\0serve\0"s), "tgi");
  EXPECT_EQ(role_from_cmdline("python3.11\0train.py\0"s), "python");
  EXPECT_EQ(role_from_cmdline("python3\0-c\0import vllm\0"s), "python");
  EXPECT_EQ(role_from_cmdline("node\0--max-old-space-size=16\0app.js\0"s), "node");
  EXPECT_EQ(role_from_cmdline("/usr/lib/jvm/bin/java\0-Xmx4g\0-jar\0x.jar\0"s), "java");
  // Mentioning a server is not being one.
  EXPECT_EQ(role_from_cmdline("tail\0-f\0/var/log/vllm.log\0"s), "");
  EXPECT_EQ(role_from_cmdline("grep llama-server"), "");
  EXPECT_EQ(role_from_cmdline(""), "");
  EXPECT_EQ(role_from_cmdline(std::string(100000, '\0')), "");
}

TEST(SamplerMemoryCgroup, V1V2AndHybridLines) {
  EXPECT_EQ(memory_cgroup_of("12:pids:/\n11:memory:/docker/abc\n1:name=systemd:/x\n0::/\n"), "/docker/abc");
  EXPECT_EQ(memory_cgroup_of("4:cpu,memory:/a/b\n"), "/a/b");
  EXPECT_EQ(memory_cgroup_of("0::/system.slice/ollama.service\n"), "/system.slice/ollama.service");
  // Hybrid: the v2 line exists but memory is on v1.
  EXPECT_EQ(memory_cgroup_of("0::/\n4:memory:/process_api/x\n"), "/process_api/x");
  EXPECT_EQ(memory_cgroup_of("1:name=systemd:/\n"), "");
  EXPECT_EQ(memory_cgroup_of("garbage without colons\n::\n"), "");
}

TEST(SamplerFixture, CgroupV2KubernetesNode) {
  Sampler s(fixture_options("v2"));
  EXPECT_EQ(s.cgroup_version(), 2);
  EXPECT_EQ(s.cgroup_mount(), fixture("v2") + "/sys/fs/cgroup");
  Sample x = s.sample();
  EXPECT_GT(x.time_us, 1700000000LL * 1000000);
  EXPECT_EQ(x.host.mem_total, 65842012ULL * 1024);
  EXPECT_EQ(x.host.mem_available, 3145728ULL * 1024);
  EXPECT_EQ(x.host.swap_total, 8388604ULL * 1024);
  EXPECT_EQ(x.host.swap_free, 6291452ULL * 1024);
  EXPECT_DOUBLE_EQ(x.host.psi_some_avg10.value_or(-1), 12.5);
  EXPECT_DOUBLE_EQ(x.host.psi_full_avg10.value_or(-1), 3.25);
  EXPECT_EQ(x.host.psi_some_total_us, 98765432u);
  EXPECT_EQ(x.host.psi_full_total_us, 12345678u);
  EXPECT_EQ(x.host.oom_kills, 7u);

  std::vector<std::string> paths;
  for (auto& c : x.cgroups) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/", "/kubepods.slice", "/kubepods.slice/kubepods-burstable.slice", kPod, kCtr,
                                             "/system.slice"}));
  const CgroupSample* root = find_cgroup(x, "/");
  ASSERT_TRUE(root);
  EXPECT_FALSE(root->usage);  // the v2 root has no memory.current
  EXPECT_EQ(root->anon, 40 * GiB);
  const CgroupSample* c = find_cgroup(x, kCtr);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->version, 2);
  EXPECT_EQ(c->usage, 29 * GiB);
  EXPECT_EQ(c->limit, 30 * GiB);
  EXPECT_EQ(c->peak, 30 * GiB);
  EXPECT_EQ(c->swap_usage, 512 * MiB);
  EXPECT_EQ(c->anon, 27 * GiB);
  EXPECT_EQ(c->file, GiB);
  EXPECT_EQ(c->shmem, MiB);
  // No "kernel" line (before 5.18): kernel_stack + pagetables + percpu + sock + vmalloc + slab.
  EXPECT_EQ(c->kernel, GiB / 8 + GiB / 8 + GiB / 16 + 0 + GiB / 16 + GiB / 8);
  EXPECT_EQ(c->oom, 2u);
  EXPECT_EQ(c->oom_kill, 1u);
  EXPECT_EQ(c->max_events, 40u);
  EXPECT_EQ(c->high_events, 5u);
  EXPECT_EQ(c->psi_some_total_us, 4242u);
  EXPECT_EQ(c->psi_full_total_us, 2121u);
  EXPECT_EQ(c->pod_uid, "8f3c2a4e-1b2d-4c6e-9f00-123456789abc");
  EXPECT_EQ(c->container_id, "4a5b6c7d8e9f00112233445566778899aabbccddeeff00112233445566778899");
  // Names from the kubelet's log folders under the root (var/log/containers
  // for the container, var/log/pods for the pod), not from the API server.
  EXPECT_EQ(c->k8s_namespace, "inference");
  EXPECT_EQ(c->k8s_pod, "vllm-7d9f8c6b5-x2x7q");
  EXPECT_EQ(c->k8s_container, "vllm");
  EXPECT_EQ(find_cgroup(x, kPod)->k8s_pod, "vllm-7d9f8c6b5-x2x7q");
  EXPECT_EQ(find_cgroup(x, kPod)->k8s_container, "");  // the pod's own cgroup
  EXPECT_EQ(find_cgroup(x, "/system.slice")->k8s_pod, "");
  EXPECT_EQ(find_cgroup(x, kPod)->kernel, GiB);  // the "kernel" line when present
  EXPECT_FALSE(find_cgroup(x, "/system.slice")->limit);  // "max"

  EXPECT_EQ(pids_of(x), (std::vector<int>{1, 4100, 4150, 4200}));  // kthreadd (2) owns no memory
  const ProcessSample* v = find_process(x, 4100);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->ppid, 1);
  EXPECT_EQ(v->comm, "pt_main_thread");
  EXPECT_EQ(v->role, "vllm");
  EXPECT_EQ(v->cgroup, kCtr);
  EXPECT_EQ(v->k8s_namespace, "inference");
  EXPECT_EQ(v->k8s_pod, "vllm-7d9f8c6b5-x2x7q");
  EXPECT_EQ(v->k8s_container, "vllm");
  EXPECT_EQ(v->rss, 8000000ULL * 1024);  // statm resident pages
  EXPECT_EQ(v->hwm, 9000000ULL * 1024);
  EXPECT_EQ(v->swap, 4096ULL * 1024);
  EXPECT_FALSE(v->gpu_bytes);
  EXPECT_EQ(find_process(x, 4150)->role, "python");
  EXPECT_EQ(find_process(x, 4200)->role, "node");
  EXPECT_TRUE(s.warnings().empty()) << s.warnings().front();

  // A second sample from the cache (statm unchanged) gives the same values.
  Sample y = s.sample();
  ASSERT_TRUE(find_process(y, 4100));
  EXPECT_EQ(find_process(y, 4100)->hwm, v->hwm);
  EXPECT_EQ(find_process(y, 4100)->role, "vllm");
  EXPECT_EQ(y.cgroups.size(), x.cgroups.size());
}

TEST(SamplerFixture, CgroupV1DockerHost) {
  Sampler s(fixture_options("v1"));
  EXPECT_EQ(s.cgroup_version(), 1);
  EXPECT_EQ(s.cgroup_mount(), fixture("v1") + "/sys/fs/cgroup/memory");
  Sample x = s.sample();
  EXPECT_FALSE(x.host.psi_some_total_us);  // no pressure file: missing, not zero
  const std::string dock = "/docker/3f2a9c1b7d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789ab";
  ASSERT_EQ(x.cgroups.size(), 3u);
  const CgroupSample* root = find_cgroup(x, "/");
  ASSERT_TRUE(root);
  EXPECT_FALSE(root->limit);  // 9223372036854771712: unlimited
  EXPECT_EQ(root->usage, 6 * GiB);
  const CgroupSample* c = find_cgroup(x, dock);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->version, 1);
  EXPECT_EQ(c->limit, 4 * GiB);
  EXPECT_EQ(c->usage, 4 * GiB - 4096);
  EXPECT_EQ(c->peak, 4 * GiB);
  EXPECT_EQ(c->swap_usage, 256 * MiB + 4096);  // memsw - usage
  EXPECT_EQ(c->anon, 3 * GiB);                 // total_rss
  EXPECT_EQ(c->file, GiB / 2);                 // total_cache
  EXPECT_EQ(c->shmem, MiB);
  EXPECT_EQ(c->kernel, 64 * MiB);  // memory.kmem.usage_in_bytes
  EXPECT_EQ(c->oom_kill, 3u);
  EXPECT_TRUE(c->under_oom);
  EXPECT_EQ(c->failcnt, 1234u);
  EXPECT_FALSE(c->oom);  // a v2-only counter
  EXPECT_EQ(c->container_id, "3f2a9c1b7d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789ab");
  const ProcessSample* l = find_process(x, 700);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->role, "llama-server");
  EXPECT_EQ(l->cgroup, dock);
  EXPECT_EQ(find_process(x, 701)->role, "ollama");
  EXPECT_EQ(find_process(x, 701)->cgroup, "/system.slice/ollama.service");
}

TEST(SamplerFixture, RootPidTreeAndCgroupSubtree) {
  auto o = fixture_options("v2");
  o.root_pid = 4100;
  Sampler tree(o);
  Sample t = tree.sample();
  EXPECT_EQ(pids_of(t), (std::vector<int>{4100, 4150}));
  EXPECT_EQ(t.cgroups.size(), 6u);  // root_pid filters processes, not cgroups

  o = fixture_options("v2");
  o.cgroup = "/kubepods.slice/";
  Sampler sub(o);
  Sample c = sub.sample();
  EXPECT_EQ(pids_of(c), (std::vector<int>{4100, 4150}));
  std::vector<std::string> paths;
  for (auto& g : c.cgroups) paths.push_back(g.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/kubepods.slice", "/kubepods.slice/kubepods-burstable.slice", kPod, kCtr}));

  o = fixture_options("v2");
  o.all_cgroups = false;
  o.processes = false;
  Sampler host_only(o);
  Sample h = host_only.sample();
  ASSERT_EQ(h.cgroups.size(), 1u);
  EXPECT_EQ(h.cgroups[0].path, "/");
  EXPECT_TRUE(h.processes.empty());

  o = fixture_options("v2");
  o.cgroup = "/no/such/cgroup";
  Sampler missing(o);
  EXPECT_TRUE(missing.sample().cgroups.empty());
  ASSERT_EQ(missing.warnings().size(), 1u);
  EXPECT_NE(missing.warnings()[0].find("/no/such/cgroup"), std::string::npos);
}

// A scoped sample reads only its scope: the cache holds only the scope's
// processes (a full walk would have read statm and stat of all five) and proc/
// is never listed. The tree comes from task/TID/children (4150 was forked by
// 4100's second thread, 4101), the cgroup's members from cgroup.procs.
TEST(SamplerFixture, ScopedSamplesReadOnlyTheScope) {
  auto o = fixture_options("v2");
  Sampler all(o);
  EXPECT_EQ(pids_of(all.sample()), (std::vector<int>{1, 4100, 4150, 4200}));
  EXPECT_EQ(all.cached_processes(), 5u);  // kthreadd too
  EXPECT_EQ(all.proc_listings(), 1u);

  o.root_pid = 4100;
  Sampler tree(o);
  for (int i = 0; i < 2; ++i) {
    Sample t = tree.sample();
    EXPECT_EQ(pids_of(t), (std::vector<int>{4100, 4150}));
    ASSERT_TRUE(find_process(t, 4150));
    EXPECT_EQ(find_process(t, 4150)->ppid, 4100);
    EXPECT_EQ(find_process(t, 4150)->role, "python");
    EXPECT_EQ(find_process(t, 4100)->cgroup, kCtr);
    EXPECT_EQ(find_process(t, 4100)->hwm, 9000000ULL * 1024);
  }
  EXPECT_EQ(tree.cached_processes(), 2u);
  EXPECT_EQ(tree.proc_listings(), 0u);
  EXPECT_TRUE(tree.warnings().empty()) << tree.warnings().front();

  o = fixture_options("v2");
  o.cgroup = "/kubepods.slice";
  Sampler sub(o);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(pids_of(sub.sample()), (std::vector<int>{4100, 4150}));  // cgroup.procs: 4150, 4100
  EXPECT_EQ(sub.cached_processes(), 2u);
  EXPECT_EQ(sub.proc_listings(), 0u);

  o.root_pid = 4150;  // both: the tree within the subtree
  Sampler both(o);
  EXPECT_EQ(pids_of(both.sample()), (std::vector<int>{4150}));
  EXPECT_EQ(both.cached_processes(), 2u);
  EXPECT_EQ(both.proc_listings(), 0u);

  o = fixture_options("v2");
  o.root_pid = 4200;
  Sampler leaf(o);
  EXPECT_EQ(pids_of(leaf.sample()), (std::vector<int>{4200}));
  EXPECT_EQ(leaf.cached_processes(), 1u);

  o.root_pid = 999;  // no such process: nothing, and still no listing
  Sampler none(o);
  EXPECT_TRUE(none.sample().processes.empty());
  EXPECT_EQ(none.cached_processes(), 0u);
  EXPECT_EQ(none.proc_listings(), 0u);

  o = fixture_options("v2");
  o.cgroup = "/no/such/cgroup";  // a cgroup that does not exist has no members
  Sampler missing(o);
  EXPECT_TRUE(missing.sample().processes.empty());
  EXPECT_EQ(missing.proc_listings(), 0u);
}

// The v1 fixture has no task/TID/children files (a kernel without
// CONFIG_PROC_CHILDREN): a root pid falls back to listing proc/ once per
// sample; its memory hierarchy's cgroup.procs still scopes a cgroup.
TEST(SamplerFixture, NoChildrenFilesFallsBackToListingProc) {
  auto o = fixture_options("v1");
  o.root_pid = 1;
  Sampler tree(o);
  EXPECT_EQ(pids_of(tree.sample()), (std::vector<int>{1, 700, 701}));
  EXPECT_EQ(tree.proc_listings(), 1u);
  o.root_pid = 700;
  Sampler leaf(o);
  EXPECT_EQ(pids_of(leaf.sample()), (std::vector<int>{700}));
  EXPECT_EQ(pids_of(leaf.sample()), (std::vector<int>{700}));

  o = fixture_options("v1");
  o.cgroup = "/docker";
  Sampler sub(o);
  Sample c = sub.sample();
  EXPECT_EQ(pids_of(c), (std::vector<int>{700}));
  EXPECT_EQ(c.processes[0].role, "llama-server");
  EXPECT_EQ(sub.cached_processes(), 1u);
  EXPECT_EQ(sub.proc_listings(), 0u);
}

TEST(SamplerFixture, MissingRootWarnsAndReturnsNothing) {
  auto o = fixture_options("does-not-exist");
  Sampler s(o);
  EXPECT_EQ(s.cgroup_version(), 0);
  Sample x = s.sample();
  EXPECT_FALSE(x.host.mem_total);
  EXPECT_TRUE(x.cgroups.empty());
  EXPECT_TRUE(x.processes.empty());
  std::string all;
  for (auto& w : s.warnings()) all += w + "\n";
  EXPECT_NE(all.find("meminfo could not be read"), std::string::npos) << all;
  EXPECT_NE(all.find("no memory cgroup hierarchy"), std::string::npos) << all;
  s.sample();
  EXPECT_EQ(s.warnings().size(), 3u) << all;  // once each, not once per sample
}

// Broken files: no crash, no invented numbers, the unreadable named.
TEST(SamplerFixture, GarbageFilesGiveNoValues) {
  std::string r = test::temp_dir("sampler-garbage");
  auto put = [](const std::string& path, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    test::write_file(path, content);
  };
  put(r + "/proc/meminfo", "MemTotal: lots kB\nMemAvailable: 99999999999999999999 kB\nSwapTotal: 18446744073709551615 kB\n");
  put(r + "/proc/pressure/memory", "some avg10=x total=\nfull\n");
  put(r + "/proc/vmstat", "oom_kill");
  put(r + "/proc/self/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\nbroken line\n\n");
  put(r + "/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  put(r + "/sys/fs/cgroup/a/memory.current", "-5\n");
  put(r + "/sys/fs/cgroup/a/memory.max", "\x01\x02garbage");
  put(r + "/sys/fs/cgroup/a/memory.stat", "anon\nfile x\nkernel 18446744073709551616\n");
  put(r + "/sys/fs/cgroup/a/memory.events", std::string(3000000, 'x'));
  put(r + "/proc/10/stat", "10 no parenthesis");
  put(r + "/proc/11/stat", "11 (a) b) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n");
  put(r + "/proc/11/statm", "99999999999999999999 18446744073709551615 0\n");
  put(r + "/proc/11/status", "Name:\tx\nVmRSS: kB\nVmHWM: 18446744073709551615 kB\n");
  put(r + "/proc/11/cgroup", "no colons here\n");
  SamplerOptions o;
  o.root = r;
  o.gpus = false;
  Sampler s(o);
  EXPECT_EQ(s.cgroup_version(), 2);
  Sample x = s.sample();
  EXPECT_FALSE(x.host.mem_total);
  EXPECT_FALSE(x.host.mem_available);  // over 2^64 bytes: not a number
  EXPECT_FALSE(x.host.swap_total);
  EXPECT_FALSE(x.host.psi_some_avg10);
  EXPECT_FALSE(x.host.oom_kills);
  ASSERT_EQ(x.cgroups.size(), 2u);
  const CgroupSample& a = x.cgroups[1];
  EXPECT_EQ(a.path, "/a");
  EXPECT_FALSE(a.usage);
  EXPECT_FALSE(a.limit);
  EXPECT_FALSE(a.anon);
  EXPECT_FALSE(a.file);
  EXPECT_FALSE(a.kernel);
  EXPECT_FALSE(a.oom);
  ASSERT_EQ(x.processes.size(), 1u);  // 10 has no readable stat
  EXPECT_EQ(x.processes[0].comm, "x");
  EXPECT_EQ(x.processes[0].cgroup, "");
  EXPECT_FALSE(x.processes[0].hwm);
  ASSERT_FALSE(s.warnings().empty());
  EXPECT_NE(s.warnings()[0].find("meminfo has no MemTotal"), std::string::npos);
  std::filesystem::remove_all(r);
}

// ---- this machine ------------------------------------------------------------

std::string own_memory_cgroup() { return memory_cgroup_of(read_small_file("/proc/self/cgroup").value_or("")); }

TEST(SamplerLive, FindsHierarchyRootCgroupAndItself) {
  SamplerOptions o;
  o.gpus = false;
  Sampler s(o);
  ASSERT_NE(s.cgroup_version(), 0) << "this machine mounts a memory cgroup hierarchy";
  Sample x = s.sample();
  EXPECT_GT(x.host.mem_total.value_or(0), 0u);
  EXPECT_GT(x.host.mem_available.value_or(0), 0u);
  ASSERT_TRUE(find_cgroup(x, "/"));
  EXPECT_GT(find_cgroup(x, "/")->usage.value_or(1), 0u);
  std::string mine = own_memory_cgroup();
  ASSERT_FALSE(mine.empty());
  ASSERT_TRUE(find_cgroup(x, mine)) << mine;
  const ProcessSample* me = find_process(x, getpid());
  ASSERT_TRUE(me);
  EXPECT_GT(me->rss, 1 * MiB);
  EXPECT_GE(me->hwm.value_or(0), me->rss);
  EXPECT_EQ(me->cgroup, mine);
  EXPECT_EQ(me->ppid, getppid());
  EXPECT_GT(x.processes.size(), 3u);
}

// A child of this process's own v1 memory cgroup with a 64 MiB limit, holding
// a forked child that touched 16 MiB; removed at the end whatever happens.
struct TestCgroup {
  std::string rel, dir;
  pid_t child = -1;
  ~TestCgroup() {
    if (child > 0) {
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
    }
    if (!dir.empty()) {
      for (int i = 0; i < 50 && ::rmdir(dir.c_str()) != 0; ++i) ::usleep(20000);
    }
  }
};

TEST(SamplerLive, RealCgroupWithLimitAndProcess) {
  SamplerOptions probe;
  probe.gpus = false;
  probe.processes = false;
  probe.all_cgroups = false;
  Sampler p(probe);
  if (p.cgroup_version() != 1) GTEST_SKIP() << "needs a writable v1 memory hierarchy (this project's machines have one)";
  TestCgroup cg;
  cg.rel = own_memory_cgroup() + "/aimem-sampler-test-" + std::to_string(getpid());
  cg.dir = p.cgroup_mount() + cg.rel;
  ASSERT_EQ(::mkdir(cg.dir.c_str(), 0755), 0) << cg.dir << ": " << std::strerror(errno);
  test::write_file(cg.dir + "/memory.limit_in_bytes", std::to_string(64 * MiB));

  int go[2], ready[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(ready), 0);
  cg.child = ::fork();
  ASSERT_GE(cg.child, 0);
  if (cg.child == 0) {
    char b;
    if (::read(go[0], &b, 1) != 1) _exit(1);
    void* m = ::mmap(nullptr, 16 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) _exit(2);
    std::memset(m, 1, 16 * MiB);
    if (::write(ready[1], "r", 1) != 1) _exit(3);
    for (;;) ::pause();
  }
  test::write_file(cg.dir + "/cgroup.procs", std::to_string(cg.child));
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  char b;
  ASSERT_EQ(::read(ready[0], &b, 1), 1);
  for (int fd : {go[0], go[1], ready[0], ready[1]}) ::close(fd);

  SamplerOptions o;
  o.gpus = false;
  o.cgroup = cg.rel;
  Sampler s(o);
  Sample x = s.sample();
  ASSERT_EQ(x.cgroups.size(), 1u);
  const CgroupSample& c = x.cgroups[0];
  EXPECT_EQ(c.path, cg.rel);
  EXPECT_EQ(c.version, 1);
  EXPECT_GE(c.usage.value_or(0), 16 * MiB);
  EXPECT_EQ(c.limit, 64 * MiB);
  EXPECT_GE(c.peak.value_or(0), 16 * MiB);
  EXPECT_GE(c.anon.value_or(0), 16 * MiB);
  EXPECT_EQ(c.oom_kill, 0u);
  ASSERT_EQ(x.processes.size(), 1u);  // only the child is in that cgroup
  EXPECT_EQ(x.processes[0].pid, cg.child);
  EXPECT_EQ(x.processes[0].cgroup, cg.rel);
  EXPECT_GE(x.processes[0].rss, 16 * MiB);
  EXPECT_EQ(s.cached_processes(), 1u);  // read from the cgroup's cgroup.procs, not from all of /proc
  EXPECT_EQ(s.proc_listings(), 0u);

  // A member added and one removed show in the next sample, 100 ms later: v1
  // keeps an open cgroup.procs's pid list for a second, so the sampler must
  // not hold that file open.
  pid_t second = ::fork();
  ASSERT_GE(second, 0);
  if (second == 0)
    for (;;) ::pause();
  test::write_file(cg.dir + "/cgroup.procs", std::to_string(second));
  ::usleep(100000);
  EXPECT_EQ(pids_of(s.sample()), (std::vector<int>{std::min(cg.child, second), std::max(cg.child, second)}));
  ::kill(second, SIGKILL);
  ::waitpid(second, nullptr, 0);
  ::usleep(100000);
  EXPECT_EQ(pids_of(s.sample()), (std::vector<int>{cg.child}));
}

// A real process tree (this test, a parent, its two children) among 200 other
// sleeping processes: sampling by root pid finds exactly those three, and reads
// only them (through /proc/PID/task/TID/children where the kernel has it).
TEST(SamplerLive, RootPidTreeAmongManyProcesses) {
  struct Kids {
    std::vector<pid_t> pids;
    ~Kids() {
      for (pid_t p : pids) ::kill(p, SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);  // the grandchildren are reaped by their parent
    }
  } others, tree;
  for (int i = 0; i < 200; ++i) {
    pid_t c = ::fork();
    ASSERT_GE(c, 0);
    if (c == 0)
      for (;;) ::pause();
    others.pids.push_back(c);
  }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    ::close(ready[0]);
    pid_t kids[2];
    for (pid_t& k : kids)
      if ((k = ::fork()) == 0)
        for (;;) ::pause();
    if (::write(ready[1], kids, sizeof kids) != sizeof kids) _exit(1);
    while (::wait(nullptr) > 0) {
    }
    for (;;) ::pause();
  }
  ::close(ready[1]);
  tree.pids.push_back(parent);
  pid_t kids[2];
  ASSERT_EQ(::read(ready[0], kids, sizeof kids), static_cast<ssize_t>(sizeof kids));
  ::close(ready[0]);
  tree.pids.insert(tree.pids.begin(), kids, kids + 2);  // killed before their parent

  SamplerOptions o;
  o.gpus = false;
  o.root_pid = parent;
  Sampler s(o);
  Sample x = s.sample();
  std::vector<int> want{parent, kids[0], kids[1]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(pids_of(x), want);
  ASSERT_TRUE(find_process(x, parent));
  EXPECT_EQ(find_process(x, parent)->ppid, getpid());
  for (pid_t k : kids) {
    ASSERT_TRUE(find_process(x, k));
    EXPECT_EQ(find_process(x, k)->ppid, parent);
    EXPECT_GT(find_process(x, k)->rss, 0u);
  }
  std::string me = std::to_string(getpid());
  if (::access(("/proc/" + me + "/task/" + me + "/children").c_str(), F_OK) == 0) {
    EXPECT_EQ(s.cached_processes(), 3u);  // the 200 others and the rest of the host never read
    EXPECT_EQ(s.proc_listings(), 0u);
  }
  EXPECT_EQ(pids_of(s.sample()), want);

  // A child gone, then the whole tree: each leaves the sample and the cache.
  ::kill(kids[0], SIGKILL);
  for (int i = 0; i < 100 && find_process(s.sample(), kids[0]); ++i) ::usleep(10000);
  EXPECT_FALSE(find_process(s.sample(), kids[0]));
  EXPECT_TRUE(find_process(s.sample(), kids[1]));
  ::kill(kids[1], SIGKILL);
  for (int i = 0; i < 100 && (s.sample(), s.cached_processes() > 1); ++i) ::usleep(10000);  // reaped by the parent
  EXPECT_EQ(pids_of(s.sample()), std::vector<int>{parent});
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  tree.pids.clear();
  EXPECT_TRUE(s.sample().processes.empty());
  EXPECT_EQ(s.cached_processes(), 0u);
}

// 200 samples while 200 short-lived children come and go: each is found, each
// is gone once reaped (also when /proc is not listed because no pid was handed
// out since: the held statm file fails to read), the cache holds only live
// processes, and every file it held for them is closed.
TEST(SamplerLive, CacheStaysAtLiveProcessCount) {
  auto count_pids = [] {
    size_t n = 0;
    DIR* d = ::opendir("/proc");
    while (dirent* e = ::readdir(d)) n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
    ::closedir(d);
    return n;
  };
  auto count_fds = [] {
    size_t n = 0;
    DIR* d = ::opendir("/proc/self/fd");
    while (::readdir(d)) ++n;
    ::closedir(d);
    return n;
  };
  SamplerOptions o;
  o.gpus = false;
  Sampler s(o);
  s.sample();
  size_t fds_before = count_fds();
  size_t most = 0;
  for (int i = 0; i < 200; ++i) {
    pid_t c = ::fork();
    if (c == 0)
      for (;;) ::pause();
    ASSERT_TRUE(find_process(s.sample(), c)) << "a new process is found";
    ::kill(c, SIGKILL);
    ::waitpid(c, nullptr, 0);
    size_t before = count_pids();
    ASSERT_FALSE(find_process(s.sample(), c)) << "a reaped process is gone";
    most = std::max(most, s.cached_processes() > before ? s.cached_processes() - before : 0);
  }
  EXPECT_LE(most, 20u) << "cache entries beyond the live processes";  // slack: builds start processes meanwhile
  EXPECT_LE(s.cached_processes(), count_pids() + 20);
  EXPECT_LE(count_fds(), fds_before + 40);  // no descriptor kept for the 200 dead children
}

// ---- the stand-in NVML -----------------------------------------------------------

using Env = std::vector<std::pair<std::string, std::string>>;
struct FakeNvml {
  std::vector<std::string> vars;
  explicit FakeNvml(const Env& env) {
    ::setenv("AIMEM_NVML_LIBRARY", AIMEM_FAKE_NVML, 1);
    vars.push_back("AIMEM_NVML_LIBRARY");
    for (auto& [k, v] : env) {
      ::setenv(k.c_str(), v.c_str(), 1);
      vars.push_back(k);
    }
  }
  ~FakeNvml() {
    for (auto& k : vars) ::unsetenv(k.c_str());
  }
};

SamplerOptions gpu_options() {
  SamplerOptions o;
  o.root_pid = getpid();
  o.all_cgroups = false;
  return o;
}

TEST(SamplerGpu, DevicesAndProcessesWithInsufficientSizeRetry) {
  std::string me = std::to_string(getpid());
  FakeNvml fake(Env{{"AIMEM_FAKE_NVML_DEVICES", "NVIDIA H100 80GB HBM3:81559:30000:0;NVIDIA L4:23034:6144:0"},
                 {"AIMEM_FAKE_NVML_PROCS", "0:" + me + ":20000;0:4194000:10000;1:" + me + ":2048"},
                 {"AIMEM_FAKE_NVML_INSUFFICIENT", "1"}});
  Sampler s(gpu_options());
  Sample x = s.sample();
  ASSERT_EQ(x.gpus.size(), 2u) << (s.warnings().empty() ? "" : s.warnings()[0]);
  EXPECT_EQ(x.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(x.gpus[0].uuid, "GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(x.gpus[0].total, 81559 * MiB);
  EXPECT_EQ(x.gpus[0].used, 30000 * MiB);
  EXPECT_FALSE(x.gpus[0].unified);
  EXPECT_EQ(x.gpus[1].index, 1u);
  EXPECT_EQ(x.gpus[1].used, 6144 * MiB);
  // Device 0's first list call answered INSUFFICIENT_SIZE; the retry got all.
  ASSERT_EQ(x.gpu_processes.size(), 3u);
  EXPECT_EQ(x.gpu_processes[0].pid, getpid());
  EXPECT_EQ(x.gpu_processes[0].used, 20000 * MiB);
  EXPECT_EQ(x.gpu_processes[0].cgroup, own_memory_cgroup());
  EXPECT_EQ(x.gpu_processes[1].pid, 4194000);
  EXPECT_EQ(x.gpu_processes[1].cgroup, "");  // not a visible process
  EXPECT_EQ(x.gpu_processes[2].gpu, 1u);
  const ProcessSample* p = find_process(x, getpid());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->gpu_bytes, 22048 * MiB);  // summed over both GPUs
  EXPECT_TRUE(s.warnings().empty());
  // The session stays open: a second sample reads again.
  EXPECT_EQ(s.sample().gpu_processes.size(), 3u);
}

TEST(SamplerGpu, UnifiedMemoryDevicesAndOldProcessApi) {
  FakeNvml fake(Env{{"AIMEM_FAKE_NVML_DEVICES", "NVIDIA GH200 480GB:NS:0:2;Orin:0:0:0;NVIDIA A10:23028:1000:1"},
                 {"AIMEM_FAKE_NVML_PROCS_API", "1"}});
  Sampler s(gpu_options());
  Sample x = s.sample();
  ASSERT_EQ(x.gpus.size(), 3u);
  EXPECT_TRUE(x.gpus[0].unified);  // memory call NOT_SUPPORTED
  EXPECT_FALSE(x.gpus[0].total);
  EXPECT_TRUE(x.gpus[1].unified);  // total 0
  EXPECT_FALSE(x.gpus[2].unified);
  EXPECT_EQ(x.gpus[2].total, 23028 * MiB);
  // Only the v1 list answers (v1 struct layout): pids 1000, 1001 on GPU 0, 1000 on GPU 2.
  ASSERT_EQ(x.gpu_processes.size(), 3u);
  EXPECT_EQ(x.gpu_processes[1].pid, 1001);
  EXPECT_EQ(x.gpu_processes[1].gpu, 0u);
  EXPECT_EQ(x.gpu_processes[2].gpu, 2u);
  EXPECT_EQ(x.gpu_processes[2].used, 1000 * MiB);
}

TEST(SamplerGpu, AbsentOrFailingNvmlIsNotFatal) {
  {
    FakeNvml fake(Env{{"AIMEM_FAKE_NVML_INIT_FAIL", "1"}});
    Sampler s(gpu_options());
    Sample x = s.sample();
    EXPECT_TRUE(x.gpus.empty());
    EXPECT_TRUE(find_process(x, getpid()));
    ASSERT_EQ(s.warnings().size(), 1u);
    EXPECT_NE(s.warnings()[0].find("Driver Not Loaded"), std::string::npos) << s.warnings()[0];
  }
  ::setenv("AIMEM_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  Sampler s(gpu_options());
  s.sample();
  ::unsetenv("AIMEM_NVML_LIBRARY");
  ASSERT_EQ(s.warnings().size(), 1u);
  EXPECT_NE(s.warnings()[0].find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
}

TEST(SamplerGpu, HangingInitIsBounded) {
  FakeNvml fake(Env{{"AIMEM_FAKE_NVML_HANG", "1"}});
  auto t0 = std::chrono::steady_clock::now();
  {
    Sampler s(gpu_options());
    Sample x = s.sample();
    EXPECT_TRUE(x.gpus.empty());
    EXPECT_TRUE(find_process(x, getpid()));  // the rest of the sample is there
    ASSERT_EQ(s.warnings().size(), 1u);
    EXPECT_NE(s.warnings()[0].find("did not initialise within 5 s"), std::string::npos);
    auto t1 = std::chrono::steady_clock::now();
    s.sample();  // not waited for again
    EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(1));
  }  // the destructor does not wait for the wedged thread either
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
}

}  // namespace
}  // namespace aimem::watch
