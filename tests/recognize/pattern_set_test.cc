// The recognizers' patterns are compiled into one vectorscan database. The
// Debian 12 vectorscan (5.4.9) can leave a pattern's match unreported in a
// database of many multiline patterns that it reports in a database of its
// own: adding "^\s*[0-9]+ +- +(MemoryUsage|ResidentSetSize) of job ..." to the
// set made "^ *Mem: +[0-9]" report 1 of 4 `free` rows (found 2026-12-05;
// pattern rewrites moved the losses about rather than ending them). This test
// holds every pattern, over the corpus's texts, to the lines it matches
// alone, so a pattern added to the set cannot silently blind another. The one
// known loss, present before the test, is listed with the share it may lose.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <hs/hs.h>
#include <nlohmann/json.hpp>

#include "recognize/scanner.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using Hits = std::vector<std::set<std::pair<size_t, size_t>>>;  // per pattern: (text, line of the match's end)

struct Scan {
  Hits* hits;
  size_t text;
  const std::vector<size_t>* newlines;  // offsets of the text's newlines
};

int on_match(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  auto* s = static_cast<Scan*>(ctx);
  size_t end = to > 0 ? static_cast<size_t>(to) - 1 : 0;
  size_t line = static_cast<size_t>(std::lower_bound(s->newlines->begin(), s->newlines->end(), end) - s->newlines->begin());
  (*s->hits)[id].insert({s->text, line});
  return 0;
}

void scan_all(const hs_database_t* db, const std::vector<std::string>& texts, const std::vector<std::vector<size_t>>& nl, Hits& hits) {
  hs_scratch_t* scratch = nullptr;
  ASSERT_EQ(hs_alloc_scratch(db, &scratch), HS_SUCCESS);
  for (size_t t = 0; t < texts.size(); ++t) {
    Scan s{&hits, t, &nl[t]};
    hs_scan(db, texts[t].data(), static_cast<unsigned>(texts[t].size()), 0, scratch, on_match, &s);
  }
  hs_free_scratch(scratch);
}

TEST(PatternSet, EveryPatternFindsInTheSetTheLinesItFindsAlone) {
  std::string path = std::getenv("AIMEM_CORPUS") ? std::getenv("AIMEM_CORPUS") : test::source_dir() + "/tests/fixtures/corpus/cases.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::vector<std::string> texts;
  std::vector<std::vector<size_t>> nl;
  for (std::string l; std::getline(in, l);) {
    texts.push_back(nlohmann::json::parse(l)["text"].get<std::string>() + "\n");
    nl.emplace_back();
    for (size_t i = 0; i < texts.back().size(); ++i)
      if (texts.back()[i] == '\n') nl.back().push_back(i);
  }
  ASSERT_GT(texts.size(), 1000u);
  const PatternSet& set = PatternSet::instance();
  const auto& ex = set.expressions();
  ASSERT_EQ(set.flags().size(), ex.size());
  Hits combined(ex.size());
  scan_all(set.database(), texts, nl, combined);
  // Known: vectorscan 5.4.9 drops a few of this pattern's lines in the full set
  // (2 of about 1,500 in the 3,831 cases of 2026-12-05, 4 in 3,951): at most
  // this share of the lines it finds alone.
  const std::map<std::string, double> known = {{"^\\s*[$#] +[a-z./]", 0.01}};
  std::string report;
  for (unsigned i = 0; i < ex.size(); ++i) {
    const char* e = ex[i].c_str();
    unsigned flags = set.flags()[i], id = i;
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    ASSERT_EQ(hs_compile_multi(&e, &flags, &id, 1, HS_MODE_BLOCK, nullptr, &db, &err), HS_SUCCESS) << e;
    Hits alone(ex.size());
    scan_all(db, texts, nl, alone);
    hs_free_database(db);
    size_t lost = 0;
    for (const auto& h : alone[i]) lost += !combined[i].count(h);
    auto k = known.find(ex[i]);
    const double allowed = k == known.end() ? 0.0 : k->second * static_cast<double>(alone[i].size());
    if (static_cast<double>(lost) > allowed) report += std::to_string(lost) + " lines lost: " + ex[i] + "\n";
  }
  EXPECT_TRUE(report.empty()) << "patterns whose matches the full set leaves unreported (reorder or reword the pattern just added):\n"
                              << report;
}

}  // namespace
}  // namespace aimem
