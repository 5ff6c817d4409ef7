// The peer suite: other projects' own OOM test data and docs (cAdvisor's
// oomparser logs, node-problem-detector's kernel-monitor fixtures,
// LukeShirnia/out-of-memory's syslogs, earlyoom, the Kubernetes docs), each
// with that project's reading translated to a layer. They are those projects'
// files: read at test time from ../shared/peer beside the checkout (or
// AIMEM_PEER_DIR), never copied into this repository. aimem must agree with
// the peer on every case; where the peer lists alternatives ("host_ram|
// container_limit": cAdvisor files an OOM it cannot place under "/"), any of
// them agrees.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

std::string peer_dir() {
  if (const char* p = std::getenv("AIMEM_PEER_DIR")) return p;
  return test::source_dir() + "/../shared/peer";
}

bool one_of(const std::string& alternatives, const std::string& got) {
  size_t start = 0;
  while (start <= alternatives.size()) {
    size_t bar = alternatives.find('|', start);
    if (alternatives.substr(start, bar == std::string::npos ? std::string::npos : bar - start) == got) return true;
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return false;
}

TEST(PeerSuite, AgreesWithEveryPeerProjectsReading) {
  std::string dir = peer_dir();
  if (!std::filesystem::exists(dir + "/cases.jsonl")) GTEST_SKIP() << "no peer suite at " << dir << " (set AIMEM_PEER_DIR)";
  std::ifstream in(dir + "/cases.jsonl");
  std::string line, disagreements;
  int cases = 0, agreed = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto c = nlohmann::json::parse(line);
    std::string file = dir + "/" + c.at("file").get<std::string>();
    std::string text = test::read_file(file);
    ASSERT_FALSE(text.empty()) << file;
    Diagnosis d = test::diagnose_text(text);
    std::string got(to_string(d.layer)), want = c.at("expected_layer");
    ++cases;
    if (one_of(want, got)) ++agreed;
    else disagreements += "  " + c.at("id").get<std::string>() + " (" + c.value("group", "") + "): peer says " + want + ", aimem " + got + "\n";
  }
  std::printf("peer suite: %d/%d cases agree\n%s", agreed, cases, disagreements.c_str());
  EXPECT_GE(cases, 37);
  EXPECT_EQ(agreed, cases) << disagreements;
}

}  // namespace
}  // namespace aimem
