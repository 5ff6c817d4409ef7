// aimem check through the real binary: the realistic manifests (vLLM, TGI,
// Ollama, llama.cpp server, Compose, systemd) with the findings expected of
// each, a command line after `--`, exit codes, and SARIF validated against the
// official SARIF 2.1.0 schema with python3's jsonschema.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem::check {
namespace {

std::string real(const std::string& name) { return test::source_dir() + "/tests/fixtures/check/real/" + name; }

struct Json {
  int status;
  nlohmann::json j;
  std::string err;
};

Json check_json(std::vector<std::string> args) {
  args.insert(args.begin(), {"check", "--json"});
  auto r = test::run_aimem(args);
  Json out{r.status, nullptr, r.err};
  try {
    out.j = nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << r.out << r.err;
  }
  return out;
}

// rule -> lines, of the violations.
std::map<std::string, std::set<int>> by_rule(const nlohmann::json& j) {
  std::map<std::string, std::set<int>> m;
  for (const auto& v : j["violations"]) m[v["rule"]].insert(v["line"].get<int>());
  return m;
}

std::set<std::string> noted(const nlohmann::json& j) {
  std::set<std::string> s;
  for (const auto& n : j["notes"])
    if (!n["rule"].is_null()) s.insert(n["rule"]);
  return s;
}

TEST(CheckCli, VllmDocsDeployment) {
  auto r = check_json({real("vllm-k8s.yaml")});
  EXPECT_EQ(r.status, 1) << r.err;
  auto m = by_rule(r.j);
  // requests.memory 6G below limits.memory 20G (line 77), and below the ~8 GiB load peak of Mistral 7B.
  EXPECT_EQ(m, (std::map<std::string, std::set<int>>{
                   {"request-below-limit", {77}}, {"gpu-without-host-memory", {77}}, {"no-graceful-drain", {56}}}))
      << r.j.dump(1);
  EXPECT_TRUE(noted(r.j).count("kv-over-budget"));    // no GPU named
  EXPECT_TRUE(noted(r.j).count("rolling-overlap"));   // no node memory
  EXPECT_EQ(r.j["files_checked"].size(), 1u);
  for (const auto& v : r.j["violations"]) {
    EXPECT_EQ(v["file"], real("vllm-k8s.yaml"));
    EXPECT_GT(v["column"].get<int>(), 0);
    EXPECT_FALSE(v["fix"].get<std::string>().empty());
  }
}

TEST(CheckCli, FixedVllmDeploymentPasses) {
  auto r = check_json({real("vllm-k8s-fixed.yaml"), "--node-memory", "64GiB"});
  EXPECT_EQ(r.status, 0) << r.j.dump(1);
  EXPECT_TRUE(r.j["violations"].empty());
  // With the L4 from the node selector the KV budget was checked: no note for it.
  EXPECT_FALSE(noted(r.j).count("kv-over-budget")) << r.j.dump(1);
}

TEST(CheckCli, TgiDeployment) {
  auto r = check_json({real("tgi-k8s.yaml")});
  EXPECT_EQ(r.status, 1);
  auto m = by_rule(r.j);
  EXPECT_EQ(m, (std::map<std::string, std::set<int>>{{"no-memory-limit", {22}},
                                                     {"gpu-without-host-memory", {44}},
                                                     {"readiness-not-gated", {22}},
                                                     {"no-graceful-drain", {22}}}))
      << r.j.dump(1);
}

TEST(CheckCli, OllamaHelmChart) {
  auto r = check_json({real("ollama-helm.yaml")});
  EXPECT_EQ(r.status, 1);
  auto m = by_rule(r.j);
  // Recreate strategy: no rolling-overlap, and the missing drain is a note (no
  // rollout overlaps two copies). The readiness probe on / passes before any model is loaded.
  EXPECT_EQ(m, (std::map<std::string, std::set<int>>{{"no-memory-limit", {61}},
                                                     {"gpu-without-host-memory", {82}},
                                                     {"readiness-not-gated", {96}}}))
      << r.j.dump(1);
  EXPECT_TRUE(noted(r.j).count("no-graceful-drain"));
}

TEST(CheckCli, LlamaCppServer) {
  auto r = check_json({real("llamacpp-k8s.yaml")});
  EXPECT_EQ(r.status, 1);
  auto m = by_rule(r.j);
  EXPECT_EQ(m, (std::map<std::string, std::set<int>>{{"request-below-limit", {35}},
                                                     {"readiness-not-gated", {38}},
                                                     {"no-graceful-drain", {18}},
                                                     {"swap-for-weights", {31}}}))
      << r.j.dump(1);
  // The GGUF is not on this machine: the plan's rules say so.
  EXPECT_TRUE(noted(r.j).count("limit-below-load-peak"));
}

TEST(CheckCli, ComposeFile) {
  auto r = check_json({real("compose.yaml")});
  EXPECT_EQ(r.status, 1);
  auto m = by_rule(r.j);
  EXPECT_EQ(m, (std::map<std::string, std::set<int>>{{"request-below-limit", {11}},
                                                     {"gpu-util-oversubscribed", {28}},
                                                     {"no-memory-limit", {24}},
                                                     {"gpu-without-host-memory", {29}},
                                                     {"readiness-not-gated", {24}},
                                                     {"swap-for-weights", {30}},
                                                     {"heap-above-limit", {33}}}))
      << r.j.dump(1);
  EXPECT_TRUE(noted(r.j).count("no-graceful-drain"));  // Compose stops the old container first
}

TEST(CheckCli, SystemdUnit) {
  auto r = check_json({real("llm.service")});
  EXPECT_EQ(r.status, 1);
  auto m = by_rule(r.j);
  EXPECT_EQ(m, (std::map<std::string, std::set<int>>{
                   {"no-memory-limit", {6}}, {"swap-for-weights", {10}}}))
      << r.j.dump(1);
  EXPECT_TRUE(noted(r.j).count("no-graceful-drain"));  // a unit restarts in place: a note
}

TEST(CheckCli, CommandLineAfterDashes) {
  auto r = check_json({"--gpu", "L4", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"});
  EXPECT_EQ(r.status, 1) << r.err;
  ASSERT_EQ(r.j["violations"].size(), 1u) << r.j.dump(1);
  const auto& v = r.j["violations"][0];
  EXPECT_EQ(v["rule"], "kv-over-budget");
  EXPECT_EQ(v["file"], "<command line>");
  EXPECT_EQ(v["column"], 61);  // "131072"
  auto ok = check_json({"--gpu", "L4", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"});
  EXPECT_EQ(ok.status, 0) << ok.j.dump(1);
  EXPECT_TRUE(ok.j["files_checked"].empty());
}

// gpt-oss-120b on one H100 (vLLM, default 0.9 of the GPU): half its layers
// slide over 128 tokens, so vLLM's hybrid allocator gives a request far fewer
// blocks than ctx tokens (fit/vllm_kv.h). 64K fits though the pool holds
// fewer than 64K tokens' worth of full-attention KV; 128K does not.
TEST(CheckCli, SlidingWindowModelIsJudgedByBlocksNotTokens) {
  auto ok = check_json({"--gpu", "H100", "--", "vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "65536"});
  EXPECT_EQ(ok.status, 0) << ok.j.dump(1);
  auto bad = check_json({"--gpu", "H100", "--", "vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "131072"});
  EXPECT_EQ(bad.status, 1) << bad.err;
  ASSERT_EQ(bad.j["violations"].size(), 1u) << bad.j.dump(1);
  EXPECT_EQ(bad.j["violations"][0]["rule"], "kv-over-budget");
  EXPECT_NE(bad.j["violations"][0]["message"].get<std::string>().find("blocks a request"), std::string::npos)
      << bad.j.dump(1);
}

TEST(CheckCli, TextOutputIsCompilerStyle) {
  auto r = test::run_aimem({"check", real("llm.service")});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(real("llm.service") + ":10:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[swap-for-weights]\n    fix: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(real("llm.service") + ":14:16: note: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 file checked: 1 error, 1 warning,"), std::string::npos) << r.out;
}

TEST(CheckCli, ExitCodes) {
  const std::string dir = test::temp_dir("check-cli");
  test::write_file(dir + "/ok.yaml", "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: busybox\n"
                                     "    resources: {limits: {memory: 64Mi}}\n");
  test::write_file(dir + "/bad.yaml", "kind: Pod\nspec: [\n");
  test::write_file(dir + "/policy.yaml", "policy:\n  nonsense: 1\n");
  EXPECT_EQ(test::run_aimem({"check", dir + "/ok.yaml"}).status, 0);
  auto bad = test::run_aimem({"check", dir + "/bad.yaml"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find(dir + "/bad.yaml:"), std::string::npos) << bad.err;
  EXPECT_EQ(test::run_aimem({"check", dir + "/missing.yaml"}).status, 2);
  EXPECT_EQ(test::run_aimem({"check"}).status, 2);
  auto pol = test::run_aimem({"check", "--policy", dir + "/policy.yaml", dir + "/ok.yaml"});
  EXPECT_EQ(pol.status, 2);
  EXPECT_NE(pol.err.find("nonsense"), std::string::npos) << pol.err;
  // stdin, as `helm template ... | aimem check -`
  EXPECT_EQ(test::run_aimem({"check", "-"}, test::read_file(dir + "/ok.yaml")).status, 0);
  EXPECT_EQ(test::run_aimem({"check", "-"}, test::read_file(real("tgi-k8s.yaml"))).status, 1);
  // Notes alone never fail the check.
  auto notes = check_json({real("vllm-k8s-fixed.yaml")});
  EXPECT_EQ(notes.status, 0);
  EXPECT_FALSE(notes.j["notes"].empty());
}

TEST(CheckCli, PolicyFileSetsNodeMemoryAndEnvelope) {
  const std::string dir = test::temp_dir("check-policy");
  test::write_file(dir + "/limits.json", test::read_file(test::source_dir() + "/tests/fixtures/check/rules/over-envelope/limits.json"));
  test::write_file(dir + "/aimem.yaml", "policy:\n  node_memory: 64GiB\n  envelope: limits.json\n");
  auto r = check_json({"--policy", dir + "/aimem.yaml", test::source_dir() + "/tests/fixtures/check/rules/over-envelope/fail.yaml"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(by_rule(r.j)["over-envelope"], (std::set<int>{19}));
  test::write_file(dir + "/broken.yaml", "policy:\n  envelope: nowhere.json\n");
  EXPECT_EQ(test::run_aimem({"check", "--policy", dir + "/broken.yaml", real("tgi-k8s.yaml")}).status, 2);
}

TEST(CheckCli, SarifValidatesAgainstTheSchema) {
  const std::string dir = test::temp_dir("check-sarif");
  test::write_file(dir + "/s.yaml", "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a # aimem: ignore "
                                    "no-memory-limit because a test\n    image: busybox\n");
  std::vector<std::vector<std::string>> runs = {
      {real("vllm-k8s.yaml"), real("compose.yaml"), real("llm.service"), real("ollama-helm.yaml")},
      {dir + "/s.yaml"},
      {real("vllm-k8s-fixed.yaml")},
      {"--gpu", "L4", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"}};
  const std::string schema = test::source_dir() + "/tests/fixtures/check/sarif-schema-2.1.0.json";
  for (size_t i = 0; i < runs.size(); ++i) {
    std::vector<std::string> args = {"check", "--sarif"};
    args.insert(args.end(), runs[i].begin(), runs[i].end());
    auto r = test::run_aimem(args);
    ASSERT_LE(r.status, 1) << r.err;
    const std::string out = fmt::format("{}/out{}.sarif", dir, i);
    test::write_file(out, r.out);
    auto v = test::run({"/usr/bin/python3", "-c",
                        "import json,sys,jsonschema\n"
                        "s=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))\n"
                        "jsonschema.validate(d, s, format_checker=jsonschema.FormatChecker())\n"
                        "print(len(d['runs'][0]['results']))\n",
                        schema, out});
    ASSERT_EQ(v.status, 0) << v.err << r.out;
    auto j = nlohmann::json::parse(r.out);
    const auto& driver = j["runs"][0]["tool"]["driver"];
    EXPECT_EQ(driver["name"], "aimem");
    EXPECT_GE(driver["rules"].size(), 13u);
    for (const auto& res : j["runs"][0]["results"]) {
      EXPECT_EQ(driver["rules"][res["ruleIndex"].get<size_t>()]["id"], res["ruleId"]);
      if (!res["locations"].empty()) {
        EXPECT_GE(res["locations"][0]["physicalLocation"]["region"]["startLine"].get<int>(), 1);
      }
    }
    if (i == 1) {
      ASSERT_EQ(j["runs"][0]["results"].size(), 1u);
      EXPECT_EQ(j["runs"][0]["results"][0]["suppressions"][0]["justification"], "a test");
    }
  }
  // The validator does reject what breaks the schema.
  test::write_file(dir + "/broken.sarif", R"({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})");
  auto v = test::run({"/usr/bin/python3", "-c",
                      "import json,sys,jsonschema\njsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))",
                      schema, dir + "/broken.sarif"});
  EXPECT_NE(v.status, 0);
}

TEST(CheckCli, ListRules) {
  auto r = test::run_aimem({"check", "--list-rules"});
  EXPECT_EQ(r.status, 0);
  for (const char* id : {"no-memory-limit", "request-below-limit", "limit-below-load-peak", "limit-above-node",
                         "gpu-without-host-memory", "readiness-not-gated", "no-graceful-drain", "rolling-overlap",
                         "gpu-util-oversubscribed", "kv-over-budget", "over-envelope", "heap-above-limit",
                         "swap-for-weights"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
}

}  // namespace
}  // namespace aimem::check

namespace aimem::check {
namespace {

TEST(CheckCli, AFolderStandsForTheDeploymentFilesUnderIt) {
  const std::string dir = test::temp_dir("check-folder");
  std::filesystem::create_directories(dir + "/k8s/base");
  std::filesystem::create_directories(dir + "/.git");
  test::write_file(dir + "/k8s/base/vllm.yaml", test::read_file(real("vllm-k8s.yaml")));
  test::write_file(dir + "/k8s/llm.service", test::read_file(real("llm.service")));
  test::write_file(dir + "/.git/HEAD.yaml", "kind: [broken\n");  // hidden: never read
  test::write_file(dir + "/README.md", "# not a manifest\n");
  auto r = check_json({dir});
  EXPECT_EQ(r.status, 1) << r.err;
  ASSERT_TRUE(r.j.is_object());
  ASSERT_EQ(r.j["files_checked"].size(), 2u) << r.j["files_checked"].dump();
  EXPECT_EQ(r.j["files_checked"][0], dir + "/k8s/base/vllm.yaml");
  EXPECT_EQ(r.j["files_checked"][1], dir + "/k8s/llm.service");
  EXPECT_TRUE(by_rule(r.j).count("no-graceful-drain"));

  const std::string empty = test::temp_dir("check-empty");
  test::write_file(empty + "/notes.txt", "x\n");
  auto e = test::run_aimem({"check", empty});
  EXPECT_EQ(e.status, 2);
  EXPECT_NE(e.err.find("no *.yaml"), std::string::npos) << e.err;
}

}  // namespace
}  // namespace aimem::check
