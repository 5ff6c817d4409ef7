// Diagnosis rules that combine facts: exit codes with and without other
// evidence, healthy logs, cgroup path kinds, primary incident choice.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "core/cgroup_path.h"

namespace aimem {
namespace {

TEST(ExitCode, AloneIsUnknownWithNextChecks) {
  DiagnoseOptions o;
  o.exit_code = 137;
  Diagnosis d = test::diagnose_texts({}, o);
  EXPECT_EQ(d.layer, Layer::unknown);
  ASSERT_EQ(d.incidents.size(), 1u);
  const auto& checks = d.incidents[0].next_checks;
  auto has = [&](const std::string& c) { return std::find(checks.begin(), checks.end(), c) != checks.end(); };
  EXPECT_TRUE(has("free -h"));
  EXPECT_TRUE(has("dmesg -T | grep -i -E 'out of memory|killed process'"));
  EXPECT_TRUE(has("nvidia-smi"));
  EXPECT_TRUE(has("docker stats --no-stream"));
  EXPECT_NE(d.incidents[0].summary.find("137"), std::string::npos);
}

TEST(ExitCode, Sigterm143IsNotMemory) {
  DiagnoseOptions o;
  o.exit_code = 143;
  EXPECT_EQ(test::diagnose_texts({}, o).layer, Layer::not_memory);
}

TEST(CgroupPath, Kinds) {
  EXPECT_EQ(parse_cgroup_path("/kubepods.slice").kind, CgroupKind::k8s_node);
  EXPECT_EQ(parse_cgroup_path("/kubepods/burstable").kind, CgroupKind::k8s_node);
  auto pod = parse_cgroup_path("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0330b2c1_a15b_4cdd_b5e5_72d4a90bee82.slice");
  EXPECT_EQ(pod.kind, CgroupKind::k8s_pod);
  EXPECT_EQ(pod.pod_uid, "0330b2c1-a15b-4cdd-b5e5-72d4a90bee82");
  auto ctr = parse_cgroup_path("/kubepods/burstable/podfbdfe8e3/ef8074aa");
  EXPECT_EQ(ctr.kind, CgroupKind::k8s_container);
  EXPECT_EQ(ctr.container_id, "ef8074aa");
  EXPECT_EQ(parse_cgroup_path("/system.slice/docker-4f1e2d3c4b5a.scope").kind, CgroupKind::docker);
  EXPECT_EQ(parse_cgroup_path("/docker/4f1e2d").container_id, "4f1e2d");
  EXPECT_EQ(parse_cgroup_path("/system.slice/vllm.service").unit, "vllm.service");
  EXPECT_EQ(parse_cgroup_path("/").kind, CgroupKind::root);
  // A kubelet under a cgroup root of its own (kind's nodes, inside a docker scope).
  auto kind_ctr = parse_cgroup_path(
      "/system.slice/docker-71d9e3a05b2c.scope/kubelet.slice/kubelet-kubepods.slice/"
      "kubelet-kubepods-pod5e2b7c1d_8f34_4a9e_b6d0_21c7e9f3a884.slice/cri-containerd-4be0c7f1a9d2.scope");
  EXPECT_EQ(kind_ctr.kind, CgroupKind::k8s_container);
  EXPECT_EQ(kind_ctr.pod_uid, "5e2b7c1d-8f34-4a9e-b6d0-21c7e9f3a884");
  EXPECT_EQ(parse_cgroup_path("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice").kind, CgroupKind::k8s_node);
}

TEST(Primary, RealMemoryFailureOutranksLookAlikeAndIsFirst) {
  // A CUDA illegal-address look-alike early, then a real kernel kill later.
  const char* log =
      "2026-11-29T09:00:00Z worker: CUDA error: an illegal memory access was encountered\n"
      "2026-11-29T10:00:00Z kernel: Out of memory: Killed process 5 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n";
  Diagnosis d = test::diagnose_text(log);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.layer, Layer::host_ram);
}

TEST(Json, NoFailureGivesNoneAndHeadroom) {
  Diagnosis d = test::diagnose_text("INFO all good\n");
  EXPECT_EQ(d.layer, Layer::none);
  EXPECT_EQ(d.cause, Cause::none);
  EXPECT_TRUE(d.incidents.empty());
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(NodeOutsideHeap, ContainerKillWithHeapWellUnderLimitAdvisesBoundingBuffers) {
  const char* log =
      "> node --max-old-space-size=512 server.js\n"
      "memory: usage 2097152kB, limit 2097152kB, failcnt 77\n"
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/docker/ab12,task_memcg=/docker/ab12,task=node,pid=31,uid=1000\n"
      "Memory cgroup out of memory: Killed process 31 (node) total-vm:9000000kB, anon-rss:2090000kB, file-rss:100kB, shmem-rss:0kB\n";
  Diagnosis d = test::diagnose_text(log);
  ASSERT_EQ(d.layer, Layer::container_limit);
  const Incident& inc = d.incidents[0];
  ASSERT_GE(inc.fixes.size(), 3u);
  EXPECT_NE(inc.fixes[0].action.find("bound streams and queues"), std::string::npos);
  bool outside = false, no_raise = false;
  for (const auto& r : inc.reasons) outside |= r.find("outside the heap") != std::string::npos;
  for (const auto& f : inc.fixes) no_raise |= f.action.find("do not raise --max-old-space-size") != std::string::npos;
  EXPECT_TRUE(no_raise);
  // The heap ceiling is only known once the node recognizer reads the flag.
  if (std::any_of(d.facts.begin(), d.facts.end(), [](const Fact& f) { return f.heap_limit.has_value(); })) {
    EXPECT_TRUE(outside);
  }
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(CrashLoop, WithoutAReasonIsUnknownAndAsksForDescribe) {
  Diagnosis d = test::diagnose_text(
      "NAME                     READY   STATUS             RESTARTS        AGE\n"
      "vllm-7b9c8d6e5-tt4rd     0/1     CrashLoopBackOff   12 (2m ago)     40m\n");
  ASSERT_EQ(d.layer, Layer::unknown);
  auto& c = d.incidents[0].next_checks;
  EXPECT_NE(std::find(c.begin(), c.end(), "kubectl describe pod vllm-7b9c8d6e5-tt4rd"), c.end()) << d.incidents[0].summary;
}

TEST(ExitCode, SigkillWithUsageAtTheLimitIsContainerLimit) {
  DiagnoseOptions o;
  o.exit_code = 137;
  Diagnosis d = test::diagnose_texts({"CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O   BLOCK I/O   PIDS\n"
                                      "4f1e2d3c4b5a   embedder  180.20%   1.98GiB / 2GiB        99.02%    1kB / 0B  0B / 0B     41\n"},
                                     o);
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(UserspaceKiller, ReasonNamesTheKillerAndTheVictim) {
  Diagnosis d = test::diagnose_text(
      "Nov 12 17:08:27 earlyoom[1295]: low memory! at or below SIGTERM limits: mem  1.66%, swap 10.00%\n"
      "Nov 12 17:08:27 earlyoom[1295]: sending SIGTERM to process 906175 uid 1000 \"java\": oom_score 1170, VmRSS 43912 MiB, cmdline \"...\"\n");
  ASSERT_EQ(d.layer, Layer::userspace_oom_killer);
  ASSERT_FALSE(d.incidents[0].reasons.empty());
  EXPECT_EQ(d.incidents[0].reasons[0].rfind("earlyoom", 0), 0u) << d.incidents[0].reasons[0];
  EXPECT_NE(d.incidents[0].reasons[0].find("killed java"), std::string::npos) << d.incidents[0].reasons[0];
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(GpuCause, ReservedButUnallocatedTwiceTheRequestIsFragmentation) {
  Diagnosis d = test::diagnose_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.10 GiB is free. "
      "Including non-PyTorch memory, this process has 78.04 GiB memory in use. Of the allocated memory 71.20 GiB is allocated by PyTorch, and 6.30 GiB "
      "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
  ASSERT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  ASSERT_FALSE(d.incidents[0].fixes.empty());
  EXPECT_NE(d.incidents[0].fixes[0].action.find("expandable_segments:True"), std::string::npos);
  // Reserved-but-unallocated about the size of the request is not fragmentation.
  Diagnosis e = test::diagnose_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 44.53 GiB of which 263.25 MiB is free. "
      "Including non-PyTorch memory, this process has 44.25 GiB memory in use. Of the allocated memory 40.62 GiB is allocated by PyTorch, and 1.57 GiB "
      "is reserved by PyTorch but unallocated.\n");
  EXPECT_NE(e.cause, Cause::fragmentation);
}

TEST(SystemdOomKill, WithoutMemoryMaxIsHostRamAndNamesTheUnit) {
  Diagnosis d = test::diagnose_text(
      "Nov 28 23:11:05 host systemd[1]: ollama.service: A process of this unit has been killed by the OOM killer.\n"
      "Nov 28 23:11:05 host systemd[1]: ollama.service: Failed with result 'oom-kill'.\n");
  ASSERT_EQ(d.layer, Layer::host_ram);
  EXPECT_NE(d.incidents[0].summary.find("ollama.service"), std::string::npos) << d.incidents[0].summary;
  Diagnosis m = test::diagnose_text(
      "● ollama.service - Ollama\n     Memory: 8.0G (max: 8.0G available: 0B peak: 8.0G)\n"
      "Nov 28 23:11:05 host systemd[1]: ollama.service: Failed with result 'oom-kill'.\n");
  EXPECT_EQ(m.layer, Layer::container_limit);
}

}  // namespace
}  // namespace aimem

namespace aimem {
namespace {

TEST(VllmKv, FixesCarryTheNumbersTheEngineLogged) {
  Diagnosis d = test::diagnose_text(test::read_file(test::source_dir() + "/docs/examples/vllm-kv-cache.log"));
  ASSERT_EQ(d.layer, Layer::gpu_vram);
  ASSERT_EQ(d.cause, Cause::kv_cache_context);
  const auto& fixes = d.incidents[0].fixes;
  ASSERT_GE(fixes.size(), 3u);
  // The example holds 26128 tokens for max_model_len 30000: the largest whole
  // multiple of the 512-token step that fits is 25600.
  EXPECT_EQ(fixes[0].action, "lower max_model_len 30000 -> 25600 (--max-model-len 25600)");
  // 3.19 GiB for 26128 tokens = 128 KiB a token; 3872 more tokens need 484 MiB = 2% of 23.58 GiB, so 0.92 -> 0.95.
  EXPECT_EQ(fixes[1].action, "or raise gpu_memory_utilization 0.92 -> 0.95 if nothing else uses this GPU");
}

}  // namespace
}  // namespace aimem
