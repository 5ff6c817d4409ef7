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
    volumeMounts: [{name: shm, mountPath: /dev/shm}]
  volumes:
  - name: shm
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
