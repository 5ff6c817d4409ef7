// Every rule of aimem check on its failing and its passing manifest
// (tests/fixtures/check/rules/<rule-id>/{fail,pass}.yaml): the failing one
// gives exactly one finding of that rule at the written line and column, the
// passing one none.
#include <gtest/gtest.h>

#include <ostream>

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <set>

#include "check/check.h"
#include "core/units.h"
#include "support/test_support.h"

namespace aimem::check {
namespace {

std::string rules_dir() { return test::source_dir() + "/tests/fixtures/check/rules"; }

std::vector<Finding> of_rule(const Report& r, const std::string& rule) {
  std::vector<Finding> out;
  for (const Finding& f : r.violations)
    if (f.rule == rule) out.push_back(f);
  return out;
}

struct RuleCase {
  std::string rule;
  int line, column;
  Severity severity;
  std::function<void(Policy&)> policy = [](Policy&) {};
};

// For test names in CTest and failure messages: the rule and where it fires.
void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.rule << " at " << c.line << ":" << c.column; }

Policy node64(Policy p) {
  p.node_memory_bytes = 64 * units::GiB;
  return p;
}

const std::vector<RuleCase>& cases() {
  static const std::vector<RuleCase> c = {
      {"no-memory-limit", 16, 9, Severity::kError},
      {"request-below-limit", 22, 21, Severity::kWarning},
      {"limit-below-load-peak", 21, 28, Severity::kError},
      {"limit-above-node", 21, 28, Severity::kError, [](Policy& p) { p = node64(p); }},
      {"gpu-without-host-memory", 22, 29, Severity::kError},
      {"readiness-not-gated", 26, 11, Severity::kWarning},
      {"no-graceful-drain", 15, 38, Severity::kWarning},
      {"rolling-overlap", 10, 17, Severity::kError, [](Policy& p) { p = node64(p); }},
      {"gpu-util-oversubscribed", 9, 84, Severity::kError},
      {"kv-over-budget", 21, 82, Severity::kError},
      {"over-envelope", 19, 49, Severity::kError,
       [](Policy& p) { p.envelope_path = rules_dir() + "/over-envelope/limits.json"; }},
      {"heap-above-limit", 18, 27, Severity::kError},
      {"swap-for-weights", 19, 65, Severity::kWarning},
  };
  return c;
}

Report check_fixture(const std::string& path, const Policy& policy) {
  auto r = check_files({path}, {}, policy);
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : Report{};
}

TEST(CheckRules, EveryRuleHasAFailingAndAPassingFixture) {
  std::set<std::string> tested;
  for (const RuleCase& c : cases()) tested.insert(c.rule);
  for (const Rule& r : rule_table()) {
    if (std::string(r.id) == "invalid-suppression") continue;  // check_suppress_test.cc
    EXPECT_TRUE(tested.count(r.id)) << r.id << " has no case here";
    EXPECT_TRUE(std::filesystem::exists(rules_dir() + "/" + r.id + "/fail.yaml")) << r.id;
    EXPECT_TRUE(std::filesystem::exists(rules_dir() + "/" + r.id + "/pass.yaml")) << r.id;
  }
}

class RuleFixture : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleFixture, FailingManifestGivesTheRuleAtItsLine) {
  const RuleCase& c = GetParam();
  Policy p;
  c.policy(p);
  const std::string file = rules_dir() + "/" + c.rule + "/fail.yaml";
  Report r = check_fixture(file, p);
  auto found = of_rule(r, c.rule);
  ASSERT_EQ(found.size(), 1u) << test::read_file(file);
  EXPECT_EQ(found[0].at.file, file);
  EXPECT_EQ(found[0].at.line, c.line) << found[0].message;
  EXPECT_EQ(found[0].at.column, c.column) << found[0].message;
  EXPECT_EQ(found[0].severity, c.severity) << found[0].message;
  EXPECT_FALSE(found[0].message.empty());
  EXPECT_FALSE(found[0].fix.empty());
  EXPECT_EQ(r.exit_code(), 1);
}

TEST_P(RuleFixture, PassingManifestDoesNotGiveTheRule) {
  const RuleCase& c = GetParam();
  Policy p;
  c.policy(p);
  Report r = check_fixture(rules_dir() + "/" + c.rule + "/pass.yaml", p);
  for (const Finding& f : of_rule(r, c.rule)) ADD_FAILURE() << f.at.line << ":" << f.at.column << " " << f.message;
  // A rule that could check says nothing about what it could not check.
  for (const Note& n : r.notes) EXPECT_NE(n.rule, c.rule) << n.message;
}

INSTANTIATE_TEST_SUITE_P(CheckRules, RuleFixture, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           std::string n = info.param.rule;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// Rules that need the model's plan say what they could not check when no
// model resolves, instead of passing silently.
TEST(CheckRules, UnknownModelGivesNotesNotSilence) {
  Policy p;
  auto r = check_inputs({{"m.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "/models/our-finetune", "--max-model-len", "8192"]
    resources:
      limits: {memory: 4Gi, nvidia.com/gpu: "1"}
)"}},
                        {}, p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::set<std::string> noted;
  for (const Note& n : r->notes) noted.insert(n.rule);
  EXPECT_TRUE(noted.count("limit-below-load-peak"));
  EXPECT_TRUE(noted.count("kv-over-budget"));
  EXPECT_TRUE(noted.count("over-envelope"));
  EXPECT_TRUE(of_rule(*r, "limit-below-load-peak").empty());
}

// The same 4 GiB limit with the policy naming the model: now it is checked.
TEST(CheckRules, PolicyModelOverridesTheManifestsPath) {
  Policy p;
  p.model = "meta-llama/Llama-3.1-8B-Instruct";
  auto r = check_inputs({{"m.yaml", R"(kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "/models/our-finetune"]
    resources:
      limits: {memory: 4Gi}
)"}},
                        {}, p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto f = of_rule(*r, "limit-below-load-peak");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].at.line, 9);
  EXPECT_NE(f[0].message.find("Llama-3.1-8B"), std::string::npos) << f[0].message;
}

// A model path whose last component is a catalog name resolves offline.
TEST(CheckRules, ModelPathResolvesByItsCatalogName) {
  auto r = check_inputs({{"m.yaml", R"(kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "/mnt/models/Llama-3.1-8B-Instruct"]
    resources:
      limits: {memory: 4Gi}
)"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(of_rule(*r, "limit-below-load-peak").size(), 1u);
}

TEST(CheckRules, HeadroomMovesTheThreshold) {
  // 9 GiB against vLLM's 8 GiB load peak for an 8B model on a GPU (API
  // server plus one 5 GiB shard staged in RAM): enough at 10%, not at 30%.
  const std::string text = R"(kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    resources:
      limits: {memory: 9Gi, nvidia.com/gpu: "1"}
)";
  Policy p;
  p.headroom_pct = 10;
  auto low = check_inputs({{"m.yaml", text}}, {}, p);
  ASSERT_TRUE(low.ok());
  EXPECT_TRUE(of_rule(*low, "limit-below-load-peak").empty());
  p.headroom_pct = 30;
  auto high = check_inputs({{"m.yaml", text}}, {}, p);
  ASSERT_TRUE(high.ok());
  EXPECT_EQ(of_rule(*high, "limit-below-load-peak").size(), 1u);
}

TEST(CheckRules, NodeHeapNearTheLimitIsAWarning) {
  auto r = check_inputs({{"c.yaml", R"(services:
  web:
    image: node:22
    environment:
      NODE_OPTIONS: --max-old-space-size=1900
    mem_limit: 2g
)"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok());
  auto f = of_rule(*r, "heap-above-limit");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].at.line, 5);
}

TEST(CheckRules, MemoryEmptyDirCountsAgainstTheLimit) {
  const std::string text = R"(kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    resources:
      limits: {memory: 12Gi, nvidia.com/gpu: "1"}
    volumeMounts: [{name: cache, mountPath: /models}]
  volumes:
  - name: cache
    emptyDir: {medium: Memory, sizeLimit: SIZE}
)";
  auto with = [&](const std::string& size) {
    std::string t = text;
    t.replace(t.find("SIZE"), 4, size);
    auto r = check_inputs({{"m.yaml", t}}, {}, Policy{});
    EXPECT_TRUE(r.ok());
    return of_rule(*r, "limit-below-load-peak").size();
  };
  EXPECT_EQ(with("1Gi"), 0u);
  EXPECT_EQ(with("8Gi"), 1u);  // 12 - 8 = 4 GiB left for an ~8 GiB load peak
  EXPECT_EQ(with("0"), 1u);    // no sizeLimit: the cache can take the rest
}

// /dev/shm is where NCCL and PyTorch workers exchange tensors, not where
// weights go: mounted as a memory emptyDir, sized or not, it is not counted
// (the corpus's GPU manifests nearly all mount one without a sizeLimit).
TEST(CheckRules, ShmEmptyDirIsNotCountedAgainstTheLimit) {
  for (const char* size : {"", ", sizeLimit: 11Gi"}) {
    const std::string t = fmt::format(R"(kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    resources:
      limits: {{memory: 12Gi, nvidia.com/gpu: "1"}}
    volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
  volumes:
  - name: shm
    emptyDir: {{medium: Memory{}}}
)", size);
    auto r = check_inputs({{"m.yaml", t}}, {}, Policy{});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(of_rule(*r, "limit-below-load-peak").empty()) << size;
  }
}

// no-graceful-drain warns only where a rollout runs the new copy beside the
// old one (a Deployment's default maxSurge 25%, or one written above 0): there
// every rollout cuts requests. Where the old copy stops first it is a note.
std::vector<Note> notes_of(const Report& r, const std::string& rule) {
  std::vector<Note> out;
  for (const Note& n : r.notes)
    if (n.rule == rule) out.push_back(n);
  return out;
}

std::string drain_manifest(const std::string& kind, const std::string& strategy) {
  return fmt::format(R"(apiVersion: apps/v1
kind: {}
metadata: {{name: llm}}
spec:
  replicas: 1
{}  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        resources:
          limits: {{memory: 24Gi}}
        readinessProbe:
          httpGet: {{path: /health, port: 8000}}
)",
                     kind, strategy);
}

TEST(CheckRules, NoGracefulDrainWarnsOnlyWhereARolloutOverlapsTwoCopies) {
  struct Case {
    std::string kind, strategy;
    bool warning;
  };
  const std::vector<Case> cases = {
      {"Deployment", "", true},  // RollingUpdate, maxSurge 25% (at least one pod)
      {"Deployment", "  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", true},
      {"Deployment", "  strategy: {type: Recreate}\n", false},
      {"Deployment", "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n", false},
      {"Deployment", "  strategy: {rollingUpdate: {maxSurge: \"0%\"}}\n", false},
      {"StatefulSet", "", false},  // replaced one pod at a time, stop first
      {"DaemonSet", "", false},    // maxSurge 0 by default
  };
  for (const Case& c : cases) {
    auto r = check_inputs({{"d.yaml", drain_manifest(c.kind, c.strategy)}}, {}, Policy{});
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto found = of_rule(*r, "no-graceful-drain");
    auto noted = notes_of(*r, "no-graceful-drain");
    if (c.warning) {
      ASSERT_EQ(found.size(), 1u) << c.kind << " " << c.strategy;
      EXPECT_EQ(found[0].severity, Severity::kWarning);
      EXPECT_NE(found[0].message.find("maxSurge"), std::string::npos) << found[0].message;
      EXPECT_TRUE(noted.empty());
    } else {
      EXPECT_TRUE(found.empty()) << c.kind << " " << c.strategy << ": " << found[0].message;
      ASSERT_EQ(noted.size(), 1u) << c.kind << " " << c.strategy;
      EXPECT_NE(noted[0].message.find("preStop"), std::string::npos) << noted[0].message;
      EXPECT_NE(noted[0].message.find("no rolling overlap"), std::string::npos) << noted[0].message;
    }
  }
  // Compose and systemd stop the old copy first: a short grace period is a note.
  auto compose = check_inputs({{"compose.yaml", R"(services:
  llm:
    image: vllm/vllm-openai:v0.10.1
    command: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    mem_limit: 24g
    stop_grace_period: 5s
    healthcheck: {test: ["CMD", "curl", "-f", "http://localhost:8000/health"]}
)"}},
                              {}, Policy{});
  ASSERT_TRUE(compose.ok()) << compose.error().message;
  EXPECT_TRUE(of_rule(*compose, "no-graceful-drain").empty());
  ASSERT_EQ(notes_of(*compose, "no-graceful-drain").size(), 1u);
  EXPECT_NE(notes_of(*compose, "no-graceful-drain")[0].message.find("stop_grace_period 5s"), std::string::npos);
}

// A container that requests no GPU but names one through NVIDIA_VISIBLE_DEVICES
// or CUDA_VISIBLE_DEVICES shares the GPU its pod's other container was given:
// its fraction counts toward that GPU's sum.
std::string sharing_pod(const std::string& sidecar_env, const std::string& sidecar_gpu, double sidecar_fraction) {
  return fmt::format(R"(apiVersion: v1
kind: Pod
metadata: {{name: shared}}
spec:
  containers:
  - name: chat
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "meta-llama/Llama-3.2-3B-Instruct", "--gpu-memory-utilization", "0.6"]
    resources:
      limits: {{memory: 24Gi, nvidia.com/gpu: "1"}}
  - name: embed
    image: vllm/vllm-openai:v0.10.1
    args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu-memory-utilization", "{}"]
    env: [{}]
    resources:
      limits: {{memory: 16Gi{}}}
)",
                     sidecar_fraction, sidecar_env, sidecar_gpu);
}

TEST(CheckRules, GpuSharedThroughVisibleDevicesCountsTowardItsSum) {
  auto run = [](const std::string& text) {
    auto r = check_inputs({{"p.yaml", text}}, {}, Policy{});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? of_rule(*r, "gpu-util-oversubscribed") : std::vector<Finding>{};
  };
  for (const char* env : {"{name: NVIDIA_VISIBLE_DEVICES, value: all}", "{name: CUDA_VISIBLE_DEVICES, value: \"0\"}",
                          "{name: NVIDIA_VISIBLE_DEVICES, value: \"0\"}"}) {
    auto f = run(sharing_pod(env, "", 0.6));
    ASSERT_EQ(f.size(), 1u) << env;
    EXPECT_EQ(f[0].severity, Severity::kError);
    EXPECT_NE(f[0].message.find("1.20"), std::string::npos) << f[0].message;
    EXPECT_NE(f[0].message.find("container 'chat'"), std::string::npos) << f[0].message;
    EXPECT_NE(f[0].message.find("container 'embed'"), std::string::npos) << f[0].message;
  }
  // Shares that fit, no device named, or none given by the runtime: nothing.
  EXPECT_TRUE(run(sharing_pod("{name: NVIDIA_VISIBLE_DEVICES, value: all}", "", 0.3)).empty());
  EXPECT_TRUE(run(sharing_pod("{name: HF_HOME, value: /cache}", "", 0.6)).empty());
  EXPECT_TRUE(run(sharing_pod("{name: NVIDIA_VISIBLE_DEVICES, value: void}", "", 0.6)).empty());
  // A container that requests its own GPU does not share, whatever its
  // CUDA_VISIBLE_DEVICES says (it selects among its own devices).
  EXPECT_TRUE(run(sharing_pod("{name: CUDA_VISIBLE_DEVICES, value: \"0\"}", ", nvidia.com/gpu: \"1\"", 0.6)).empty());
}

// Pipeline stages put their own layers on their own GPUs: Llama 3.1 405B at
// tp 8, pp 2 is on 16 H100s, and fits; at tp 8 alone it does not.
TEST(CheckRules, PipelineStagesCountTheirGpus) {
  Policy p;
  p.gpu = "H100";
  auto kv = [&](std::vector<std::string> extra) {
    std::vector<std::string> cmd = {"vllm", "serve", "meta-llama/Llama-3.1-405B-Instruct", "--tensor-parallel-size", "8",
                                    "--max-model-len", "8192"};
    cmd.insert(cmd.end(), extra.begin(), extra.end());
    auto r = check_inputs({}, cmd, p);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? of_rule(*r, "kv-over-budget").size() : 0u;
  };
  EXPECT_EQ(kv({}), 1u);
  EXPECT_EQ(kv({"--pipeline-parallel-size", "2"}), 0u);
}

TEST(CheckRules, ComposeCountSharesTheFirstGpus) {
  // Docker gives `count: 1` as GPU 0 to each service: the two share it.
  auto r = check_inputs({{"c.yaml", R"(services:
  a:
    image: vllm/vllm-openai:v0.10.1
    command: --model Qwen/Qwen2.5-1.5B-Instruct
    mem_limit: 16g
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
  b:
    image: ghcr.io/huggingface/text-generation-inference:3.0
    command: --model-id Qwen/Qwen2.5-0.5B-Instruct --cuda-memory-fraction 0.3
    mem_limit: 16g
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]
)"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto f = of_rule(*r, "gpu-util-oversubscribed");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].message.find("1.20"), std::string::npos) << f[0].message;
}

}  // namespace
}  // namespace aimem::check
