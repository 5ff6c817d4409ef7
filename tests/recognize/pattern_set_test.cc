// The recognizers' patterns are compiled into one vectorscan database. With
// the Debian 12 vectorscan (5.4.9) a pattern's match went unreported in the
// database of many patterns that it reported in a database of its own: adding
// "^\s*[0-9]+ +- +(MemoryUsage|ResidentSetSize) of job ..." to the set made
// "^ *Mem: +[0-9]" report 1 of 4 `free` rows (found 2026-12-05; rewrites moved
// the losses about). Two causes, found 2026-12-06: the library's AVX-512 code
// misses matches depending on where a text lies in memory (scanner.cc; aimem
// scans through the AVX2 code), and multiline patterns that open a line with
// \s blinded one another on any code path (they now write [ \t]; a test
// below keeps it so). This test holds every pattern, over the corpus's texts, to
// the lines it matches alone, so a pattern added to the set cannot silently
// blind another, and every text to the same matches at every alignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
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
    scan_database(db, texts[t].data(), texts[t].size(), scratch, on_match, &s);
  }
  hs_free_scratch(scratch);
}

std::vector<std::string> corpus_texts() {
  std::string path = std::getenv("AIMEM_CORPUS") ? std::getenv("AIMEM_CORPUS") : test::source_dir() + "/tests/fixtures/corpus/cases.jsonl";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<std::string> texts;
  for (std::string l; std::getline(in, l);) texts.push_back(nlohmann::json::parse(l)["text"].get<std::string>() + "\n");
  return texts;
}

TEST(PatternSet, EveryPatternFindsInTheSetTheLinesItFindsAlone) {
  const std::vector<std::string> texts = corpus_texts();
  std::vector<std::vector<size_t>> nl;
  for (const auto& t : texts) {
    nl.emplace_back();
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == '\n') nl.back().push_back(i);
  }
  ASSERT_GT(texts.size(), 1000u);
  const PatternSet& set = PatternSet::instance();
  const auto& ex = set.expressions();
  ASSERT_EQ(set.flags().size(), ex.size());
  Hits combined(ex.size());
  scan_all(set.database(), texts, nl, combined);
  std::string report;
  for (unsigned i = 0; i < ex.size(); ++i) {
    const char* e = ex[i].c_str();
    std::string error;
    hs_database_t* db = compile_database({e}, {set.flags()[i]}, {i}, &error);
    ASSERT_NE(db, nullptr) << e << ": " << error;
    Hits alone(ex.size());
    scan_all(db, texts, nl, alone);
    hs_free_database(db);
    size_t lost = 0;
    for (const auto& h : alone[i]) lost += !combined[i].count(h);
    if (lost > 0) report += std::to_string(lost) + " lines lost: " + ex[i] + "\n";
  }
  EXPECT_TRUE(report.empty()) << "patterns whose matches the full set leaves unreported (reorder or reword the pattern just added):\n"
                              << report;
}

// A line's leading blanks are written [ \t], never \s: in a multiline
// pattern "^\s*" may begin on an earlier line and run over newlines, and such
// patterns blinded one another in vectorscan 5.4.9's database on any CPU
// (2026-12-06: "^\s*Requested\s+: [0-9]" made "^\s*\"?memory\"?\s*:..." lose
// 5 of 616 lines, on the AVX2 code path too).
TEST(PatternSet, NoPatternStartsALineWithNewlineBlanks) {
  const PatternSet& set = PatternSet::instance();
  std::string report;
  for (const std::string& e : set.expressions())
    if (e.rfind("^\\s", 0) == 0 || e.find("(^|\\n)\\s") != std::string::npos || e.find("|^\\s") != std::string::npos) report += e + "\n";
  EXPECT_TRUE(report.empty()) << "patterns starting a line with \\s (write [ \\t]):\n" << report;
}

// Every corpus text gives the same matches wherever it lies in memory (at
// each of the 64 addresses modulo a cache line): with hs_scan's AVX-512 code
// 98 of 5391 texts did not.
TEST(PatternSet, EveryTextMatchesTheSameAtEveryAlignment) {
  const std::vector<std::string> texts = corpus_texts();
  ASSERT_GT(texts.size(), 1000u);
  const PatternSet& set = PatternSet::instance();
  hs_scratch_t* scratch = nullptr;
  ASSERT_EQ(hs_alloc_scratch(set.database(), &scratch), HS_SUCCESS);
  using Matches = std::vector<std::pair<unsigned long long, unsigned>>;
  auto on = [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* c) {
    static_cast<Matches*>(c)->emplace_back(to, id);
    return 0;
  };
  std::vector<char> buf;
  std::string report;
  for (size_t t = 0; t < texts.size() && report.size() < 2000; ++t) {
    buf.assign(texts[t].size() + 128, 0);
    char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) / 64 * 64);
    Matches first;
    for (size_t offset = 0; offset < 64; ++offset) {
      std::memcpy(aligned + offset, texts[t].data(), texts[t].size());
      Matches got;
      scan_database(set.database(), aligned + offset, texts[t].size(), scratch, on, &got);
      std::sort(got.begin(), got.end());
      if (offset == 0) first = got;
      else if (got != first) {
        report += "text " + std::to_string(t + 1) + " at 64k+" + std::to_string(offset) + "\n";
        break;
      }
    }
  }
  hs_free_scratch(scratch);
  EXPECT_TRUE(report.empty()) << "texts (by line of the corpus) whose matches depend on their address:\n" << report;
}

}  // namespace
}  // namespace aimem
