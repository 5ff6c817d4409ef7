// The `policy:` and `alerts:` sections of aimem.yaml: every key, the
// defaults, and errors that name the file, line and key.
#include "check/policy.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem::check {
namespace {

Policy ok(const std::string& text, const std::string& file = "/etc/aimem/aimem.yaml") {
  auto r = parse_policy(text, file);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : Policy{};
}

std::string err(const std::string& text, const std::string& file = "aimem.yaml") {
  auto r = parse_policy(text, file);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.error().message;
}

TEST(Policy, NoPolicySectionGivesTheDefaults) {
  for (const char* text : {"", "interval: 5s\nscrape: []\n", "policy:\n"}) {
    Policy p = ok(text);
    EXPECT_EQ(p.file, "/etc/aimem/aimem.yaml");
    EXPECT_FALSE(p.model || p.runtime || p.gpu || p.gpu_memory_bytes || p.node_memory_bytes);
    EXPECT_FALSE(p.max_context || p.max_concurrency || p.envelope_path);
    EXPECT_EQ(p.gpus, 1);
    EXPECT_DOUBLE_EQ(p.headroom_pct, 10);
    EXPECT_DOUBLE_EQ(p.min_grace_period_s, 30);
    // aimem watch's alert defaults (watch/alerts.h AlertPolicy).
    EXPECT_DOUBLE_EQ(p.warn_used_ratio, 0.80);
    EXPECT_DOUBLE_EQ(p.critical_used_ratio, 0.90);
    EXPECT_DOUBLE_EQ(p.gpu_warn_used_ratio, 0.95);
    EXPECT_DOUBLE_EQ(p.kv_warn_ratio, 0.90);
    EXPECT_DOUBLE_EQ(p.time_to_exhaustion_s, 900);
  }
}

TEST(Policy, EveryKey) {
  Policy p = ok(R"(# watch's keys sit beside the policy and are left to watch
interval: 1s
retention: {max_age: 1d}
policy:
  model: /models/llama-3.1-8b-instruct
  runtime: vllm
  gpu: H100-80GB
  gpu_memory: 80GiB
  gpus: 2
  node_memory: 64GiB
  headroom: 15%
  max_context: 32768
  max_concurrency: 16
  envelope: limits.json
  min_grace_period: 2m
alerts:
  warn_used_ratio: 0.7
  critical_used_ratio: 0.85
  gpu_warn_used_ratio: 0.97
  kv_warn_ratio: 0.8
  time_to_exhaustion: 10m
  repeat: 5m
  webhook: http://127.0.0.1:9093/hook
)");
  EXPECT_EQ(p.model, "/models/llama-3.1-8b-instruct");
  EXPECT_EQ(p.runtime, "vllm");
  EXPECT_EQ(p.gpu, "H100-80GB");
  EXPECT_EQ(p.gpu_memory_bytes, 80 * units::GiB);
  EXPECT_EQ(p.gpus, 2);
  EXPECT_EQ(p.node_memory_bytes, 64 * units::GiB);
  EXPECT_DOUBLE_EQ(p.headroom_pct, 15);
  EXPECT_EQ(p.max_context, 32768);
  EXPECT_EQ(p.max_concurrency, 16);
  EXPECT_EQ(p.envelope_path, "/etc/aimem/limits.json");
  EXPECT_DOUBLE_EQ(p.min_grace_period_s, 120);
  EXPECT_DOUBLE_EQ(p.warn_used_ratio, 0.7);
  EXPECT_DOUBLE_EQ(p.critical_used_ratio, 0.85);
  EXPECT_DOUBLE_EQ(p.gpu_warn_used_ratio, 0.97);
  EXPECT_DOUBLE_EQ(p.kv_warn_ratio, 0.8);
  EXPECT_DOUBLE_EQ(p.time_to_exhaustion_s, 600);
}

TEST(Policy, SizesInEveryDialectUsersWrite) {
  EXPECT_EQ(ok("policy: {node_memory: 24G}").node_memory_bytes, 24 * units::GiB);  // G = GiB (DESIGN §2)
  EXPECT_EQ(ok("policy: {node_memory: 80GB}").node_memory_bytes, 80'000'000'000ULL);
  EXPECT_EQ(ok("policy: {gpu_memory: 23034MiB}").gpu_memory_bytes, 23034 * units::MiB);
}

TEST(Policy, HeadroomAsPercentOrNumber) {
  EXPECT_DOUBLE_EQ(ok("policy: {headroom: 15%}").headroom_pct, 15);
  EXPECT_DOUBLE_EQ(ok("policy: {headroom: '12.5 %'}").headroom_pct, 12.5);
  EXPECT_DOUBLE_EQ(ok("policy: {headroom: 20}").headroom_pct, 20);
  EXPECT_DOUBLE_EQ(ok("policy: {headroom: 0}").headroom_pct, 0);
  EXPECT_DOUBLE_EQ(ok("policy: {headroom: 0.5%}").headroom_pct, 0.5);
  // 0.15 could be a ratio (15%) or 0.15%: refused, with both spellings offered.
  std::string e = err("policy:\n  headroom: 0.15\n");
  EXPECT_NE(e.find("aimem.yaml:2: policy.headroom:"), std::string::npos) << e;
  EXPECT_NE(e.find("ambiguous"), std::string::npos) << e;
  EXPECT_NE(e.find("15%"), std::string::npos) << e;
  EXPECT_NE(err("policy: {headroom: 100%}").find("out of range"), std::string::npos);
  EXPECT_NE(err("policy: {headroom: -5}").find("out of range"), std::string::npos);
  EXPECT_NE(err("policy: {headroom: lots}").find("not a percentage"), std::string::npos);
}

TEST(Policy, RuntimeSpellingsAreNormalised) {
  EXPECT_EQ(ok("policy: {runtime: llama.cpp}").runtime, "llamacpp");
  EXPECT_EQ(ok("policy: {runtime: llama-server}").runtime, "llamacpp");
  EXPECT_EQ(ok("policy: {runtime: SGLang}").runtime, "sglang");
  EXPECT_EQ(ok("policy: {runtime: text-generation-inference}").runtime, "tgi");
  std::string e = err("policy:\n  runtime: triton\n");
  EXPECT_NE(e.find("aimem.yaml:2: policy.runtime: unknown runtime 'triton'"), std::string::npos) << e;
}

TEST(Policy, EnvelopeIsResolvedAgainstThePolicyFilesFolder) {
  EXPECT_EQ(ok("policy: {envelope: ../probe/limits.json}", "/srv/app/deploy/aimem.yaml").envelope_path,
            "/srv/app/probe/limits.json");
  EXPECT_EQ(ok("policy: {envelope: /var/lib/aimem/limits.json}", "/srv/app/aimem.yaml").envelope_path,
            "/var/lib/aimem/limits.json");
  // A file in the current folder: the path stays relative to it.
  EXPECT_EQ(ok("policy: {envelope: limits.json}", "aimem.yaml").envelope_path, "limits.json");
  EXPECT_EQ(ok("policy: {envelope: limits.json}", "").envelope_path, "limits.json");
}

TEST(Policy, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string text, expect;
  };
  const Case cases[] = {
      {"interval: 5s\npolicy:\n  model: m\n  gpu_count: 2\n", "aimem.yaml:4: policy.gpu_count: unknown key"},
      {"policy:\n  node_memory: lots\n", "aimem.yaml:2: policy.node_memory: 'lots'"},
      {"policy:\n  node_memory: 0GiB\n", "aimem.yaml:2: policy.node_memory: '0GiB' is zero"},
      {"policy:\n  gpu_memory: [80GiB]\n", "aimem.yaml:2: policy.gpu_memory: must be a single value"},
      {"policy:\n  gpus: two\n", "aimem.yaml:2: policy.gpus: 'two' is not a whole number"},
      {"policy:\n  gpus: -1\n", "aimem.yaml:2: policy.gpus: -1 is out of range"},
      {"policy:\n  max_context: 32k\n", "aimem.yaml:2: policy.max_context: '32k' is not a whole number"},
      {"policy:\n  max_concurrency: 0\n", "aimem.yaml:2: policy.max_concurrency: 0 is out of range"},
      {"policy:\n  min_grace_period: soon\n", "aimem.yaml:2: policy.min_grace_period: the value 'soon' is not a duration"},
      {"policy:\n  model: ''\n", "aimem.yaml:2: policy.model: is empty"},
      {"policy:\n  gpus: 1\n  gpus: 2\n", "aimem.yaml:3: policy.gpus: given twice (first on line 2)"},
      {"policy: [a, b]\n", "aimem.yaml:1: policy: must be a mapping"},
      {"alerts:\n  warn_used_ratio: 80\n", "aimem.yaml:2: alerts.warn_used_ratio: 80 is not a ratio"},
      {"alerts:\n  critical_used_ratio: 0.7\n  warn_used_ratio: 0.8\n",
       "aimem.yaml:3: alerts.warn_used_ratio: 0.8 is above critical_used_ratio 0.7"},
      {"alerts:\n  time_to_exhaustion: 0s\n", "aimem.yaml:2: alerts.time_to_exhaustion: must be at least 1s"},
      {"alerts:\n  gpu_warn_used_ratio: high\n", "aimem.yaml:2: alerts.gpu_warn_used_ratio: 'high' is not a number"},
      {"policy:\n  model: [unclosed\n", "aimem.yaml:"},
      {"- a\n- b\n", "aimem.yaml:1: the file must be a mapping"},
      {"policy: {}\npolicy: {gpus: 2}\n", "aimem.yaml:2: policy: given twice (first on line 1)"},
  };
  for (const auto& c : cases) {
    std::string e = err(c.text);
    EXPECT_EQ(e.rfind(c.expect, 0), 0u) << "input:\n" << c.text << "\ngot: " << e;
  }
  // Invalid YAML: the message says so and carries the line of the fault.
  std::string e = err("policy:\n  model: m\n  gpus: [1\n", "p.yaml");
  EXPECT_NE(e.find("p.yaml:"), std::string::npos);
  EXPECT_NE(e.find("not valid YAML"), std::string::npos) << e;
}

TEST(Policy, AliasBombIsBoundedAndPolicyStillChecked) {
  // "Billion laughs": yaml-cpp shares aliased nodes, and only policy:/alerts:
  // are walked, so this parses in bounded memory; the bad key still errors.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c, ++prev) bomb += fmt::format("{}: &{} [*{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}]\n", c, c, prev, prev, prev, prev, prev, prev, prev, prev, prev);
  Policy p = ok(bomb + "policy: {gpus: 4}\n");
  EXPECT_EQ(p.gpus, 4);
  EXPECT_NE(err(bomb + "policy: {gpus: *k}\n").find("policy.gpus: must be a single value"), std::string::npos);
}

TEST(Policy, ReadsAFileAndNamesAMissingOne) {
  std::string dir = test::temp_dir("policy");
  test::write_file(dir + "/aimem.yaml", "policy:\n  envelope: limits.json\n  headroom: 20%\n");
  auto r = read_policy_file(dir + "/aimem.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->envelope_path, dir + "/limits.json");
  EXPECT_DOUBLE_EQ(r->headroom_pct, 20);
  auto missing = read_policy_file(dir + "/nope.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind(dir + "/nope.yaml: cannot read the policy file", 0), 0u) << missing.error().message;
  auto bad = read_policy_file(dir + "/aimem.yaml/x");
  EXPECT_FALSE(bad.ok());
}

TEST(Policy, TheShippedExampleParses) {
  // deploy/aimem.yaml documents every key; it must stay a valid policy.
  auto r = read_policy_file(test::source_dir() + "/deploy/aimem.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
}

}  // namespace
}  // namespace aimem::check
