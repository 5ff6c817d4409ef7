// aimem check on a corpus of real model-serving manifests
// (tests/fixtures/check/corpus/: Kubernetes manifests and rendered Helm
// charts of vLLM, TGI, SGLang, Ollama, llama.cpp, KServe and LeaderWorkerSet,
// each written anew after a public source named on its first line). The real
// `aimem check --json` runs on each file and on the whole set; what fires is
// compared with corpus/expected.yaml, which lists for every file the rules
// that must fire (severity, count and a judgement: true problem or false
// alarm) and, by leaving them out, those that must not. Warnings and errors
// are reserved for what can make memory fail or a failure recur: none of
// them may be judged a false alarm. A firing is a violation, or a note of a
// rule that found something (no-graceful-drain where no rollout overlaps two
// copies); a note that says a rule could not check is not a firing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "check/rules.h"
#include "support/test_support.h"

namespace aimem::check {
namespace {

std::string corpus_dir() { return test::source_dir() + "/tests/fixtures/check/corpus"; }

std::vector<std::string> corpus_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir())) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".yaml" && name != "expected.yaml") out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "rule/severity" -> count.
using Firings = std::map<std::string, int>;

Firings firings_of(const nlohmann::json& j) {
  Firings f;
  for (const auto& v : j["violations"]) f[v["rule"].get<std::string>() + "/" + v["severity"].get<std::string>()]++;
  for (const auto& n : j["notes"]) {
    if (n["rule"].is_null()) continue;
    const std::string msg = n["message"];
    if (msg.find(" not checked") != std::string::npos) continue;
    f[n["rule"].get<std::string>() + "/note"]++;
  }
  return f;
}

nlohmann::json check_json(const std::vector<std::string>& files) {
  std::vector<std::string> args = {"check", "--json"};
  for (const std::string& f : files) args.push_back(corpus_dir() + "/" + f);
  auto r = test::run_aimem(args);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.out);
  } catch (const std::exception&) {
    ADD_FAILURE() << "not JSON: " << r.out << r.err;
    return j;
  }
  EXPECT_EQ(r.status, j["violations"].empty() ? 0 : 1) << "exit status follows the violations";
  return j;
}

struct Expected {
  Firings fires;
  std::map<std::string, std::string> judgement;  // "rule/severity" -> the judgement
  std::set<std::string> silent;                  // rules named as must-not-fire
};

std::map<std::string, Expected> expected() {
  std::map<std::string, Expected> out;
  const YAML::Node root = YAML::LoadFile(corpus_dir() + "/expected.yaml");
  for (const auto& file : root) {
    Expected e;
    const YAML::Node entry = file.second;
    if (entry["fires"])
      for (const auto& f : entry["fires"]) {
        const std::string key = f["rule"].as<std::string>() + "/" + f["severity"].as<std::string>();
        e.fires[key] += f["count"] ? f["count"].as<int>() : 1;
        e.judgement[key] = f["judgement"].as<std::string>();
      }
    if (entry["silent"])
      for (const auto& s : entry["silent"]) e.silent.insert(s["rule"].as<std::string>());
    out[file.first.as<std::string>()] = e;
  }
  return out;
}

std::string show(const Firings& f) {
  std::string s;
  for (const auto& [k, n] : f) s += fmt::format("{} x{}; ", k, n);
  return s.empty() ? "(none)" : s;
}

TEST(CheckCorpus, FortyOrMoreManifestsEachWithItsSourceAndExpectations) {
  const auto files = corpus_files();
  EXPECT_GE(files.size(), 40u);
  const auto exp = expected();
  for (const std::string& f : files) {
    const std::string text = test::read_file(corpus_dir() + "/" + f);
    EXPECT_EQ(text.rfind("# Source: ", 0), 0u) << f << ": the first line names the source";
    EXPECT_TRUE(exp.count(f)) << f << " has no entry in expected.yaml";
  }
  for (const auto& [f, e] : exp) {
    EXPECT_TRUE(std::filesystem::exists(corpus_dir() + "/" + f)) << "expected.yaml names a missing " << f;
    for (const auto& [key, why] : e.judgement) {
      const std::string rule = key.substr(0, key.find('/'));
      EXPECT_NE(find_rule(rule), nullptr) << f << ": no rule " << rule;
      const bool judged = why.rfind("true problem", 0) == 0 || why.rfind("false alarm", 0) == 0;
      EXPECT_TRUE(judged) << f << " " << key << ": a judgement starts 'true problem' or 'false alarm': " << why;
      // Warnings and errors are for what can make memory fail or a failure recur.
      if (key.find("/note") == std::string::npos) {
        EXPECT_EQ(why.rfind("false alarm", 0), std::string::npos) << f << " " << key << " fails the check falsely";
      }
    }
    for (const std::string& rule : e.silent) EXPECT_NE(find_rule(rule), nullptr) << f << ": no rule " << rule;
  }
}

TEST(CheckCorpus, EachManifestFiresWhatItsExpectationsSay) {
  const auto exp = expected();
  for (const std::string& f : corpus_files()) {
    auto it = exp.find(f);
    if (it == exp.end()) continue;  // reported by the test above
    const Firings got = firings_of(check_json({f}));
    EXPECT_EQ(got, it->second.fires) << f << "\n  got:      " << show(got) << "\n  expected: " << show(it->second.fires);
    for (const std::string& rule : it->second.silent)
      for (const auto& [key, n] : got) EXPECT_NE(key.substr(0, key.find('/')), rule) << f << ": " << rule << " fired";
  }
}

// The whole set in one run fires what the files fire one by one (files are
// hosts of their own: nothing is shared across them), and the per-rule table
// of docs/check-corpus.md is this sum.
TEST(CheckCorpus, TheWholeSetFiresTheSumOfItsFiles) {
  const auto files = corpus_files();
  const auto exp = expected();
  Firings sum;
  for (const auto& [f, e] : exp)
    for (const auto& [key, n] : e.fires) sum[key] += n;
  const nlohmann::json j = check_json(files);
  const Firings got = firings_of(j);
  EXPECT_EQ(got, sum) << "got: " << show(got) << "\nexpected: " << show(sum);
  EXPECT_EQ(j["files_checked"].size(), files.size());
  std::string table;
  for (const auto& [key, n] : got) table += fmt::format("  {:<40} {}\n", key, n);
  std::cout << "aimem check on " << files.size() << " corpus manifests:\n" << table;
}

}  // namespace
}  // namespace aimem::check
