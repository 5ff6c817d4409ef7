// The line scanner: candidate lines found across block boundaries, line
// numbers, over-long lines, CRLF, journal JSON and raw kmsg framings.
#include <gtest/gtest.h>
#include <hs/hs.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "evidence/store.h"
#include "recognize/scanner.h"
#include "support/test_support.h"

namespace aimem {
namespace {

const std::string kVictim =
    "Out of memory: Killed process 4242 (python3) total-vm:100kB, anon-rss:90kB, file-rss:0kB, shmem-rss:0kB\n";

std::vector<Fact> scan_in_pieces(const std::string& text, size_t piece) {
  FactStore store;
  SourceContext ctx;
  ctx.name = "t";
  LineScanner s(ctx, store);
  for (size_t i = 0; i < text.size(); i += piece) s.feed(std::string_view(text).substr(i, piece));
  s.finish();
  return store.facts();
}

TEST(Scanner, FindsCandidatesAnywhereWithCorrectLineNumbers) {
  std::string text;
  for (int i = 0; i < 300000; ++i) text += "2026-11-29T10:00:00Z INFO request served in 12 ms\n";
  text += kVictim;  // line 300001, past the first 1 MiB block
  for (int i = 0; i < 1000; ++i) text += "INFO fine\n";
  for (size_t piece : {size_t{7}, size_t{4096}, size_t{1} << 20, text.size()}) {
    auto facts = scan_in_pieces(text, piece);
    ASSERT_EQ(facts.size(), 1u) << piece;
    EXPECT_EQ(facts[0].where.line, 300001u) << piece;
    EXPECT_EQ(facts[0].pid, 4242);
  }
}

TEST(Scanner, CrlfAndUnterminatedLastLine) {
  std::string text = "INFO a\r\n" + kVictim.substr(0, kVictim.size() - 1);
  auto facts = scan_in_pieces(text, 3);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].where.line, 2u);
  EXPECT_EQ(facts[0].process, "python3");
}

TEST(Scanner, OverLongLineIsCutNotFatal) {
  std::string text(10 * 1024 * 1024, 'x');  // a single 10 MB line
  text += "\n" + kVictim;
  auto facts = scan_in_pieces(text, 65536);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].pid, 4242);
}

TEST(Scanner, JournalJsonAndRawKmsgRecords) {
  std::string json =
      R"({"__REALTIME_TIMESTAMP":"1764410592000000","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","MESSAGE":"Memory cgroup out of memory: Killed process 77 (vllm) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB"})"
      "\n";
  auto facts = test::facts_of(json);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].process, "vllm");
  ASSERT_TRUE(facts[0].where.unix_us);
  EXPECT_EQ(*facts[0].where.unix_us, 1764410592000000LL);

  auto kmsg = test::facts_of("6,1234,518050606,-;" + kVictim);
  ASSERT_EQ(kmsg.size(), 1u);
  ASSERT_TRUE(kmsg[0].where.uptime_s);
  EXPECT_NEAR(*kmsg[0].where.uptime_s, 518.050606, 1e-6);
}

TEST(Scanner, CountNewlines) {
  std::string s(1000, 'a');
  for (int i = 0; i < 1000; i += 7) s[static_cast<size_t>(i)] = '\n';
  EXPECT_EQ(count_newlines(s.data(), s.size()), 143u);
  EXPECT_EQ(count_newlines(s.data() + 1, 0), 0u);
}

// What a pasted command searches for is not a failure; its output is
// (modelled on issue reports that paste their grep with its prompt).
TEST(Scanner, CommandsWithTheirPromptAreNotFailures) {
  for (const char* cmd : {"$ journalctl -k | grep -E 'oom|Out of memory|Killed process'\n",
                          "ml@box-07:~/proj$ dmesg | grep -i 'out of memory'\n",
                          "(train) ml@box-07:~/proj$ grep 'CUDA out of memory' train.log\n",
                          "root@vps-1g:~# grep -c 'Killed process' /var/log/syslog\n"})
    EXPECT_EQ(test::diagnose_text(cmd).layer, Layer::none) << cmd;
  // The output after it is read.
  Diagnosis d = test::diagnose_text(
      "$ dmesg | grep -i 'killed process'\n"
      "[ 7097.005334] Out of memory: Killed process 25640 (java) total-vm:9560448kB, anon-rss:3148612kB, file-rss:16308kB, "
      "shmem-rss:0kB, UID:1000 pgtables:6848kB oom_score_adj:0\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  // hs_err's "# " frame is a report, not a prompt.
  EXPECT_NE(test::diagnose_text("# There is insufficient memory for the Java Runtime Environment to continue.\n"
                                "# Native memory allocation (mmap) failed to map 181207040 bytes for committing reserved memory.\n")
                .layer,
            Layer::none);
}

// The patterns that match a text do not depend on where in memory the text
// lies. They did: read from a buffer at one address mod 64, the docker
// inspect template's output line below ("/web oom=true exit=137 ...") was
// not reported by the database built at compile time, so the same paste
// diagnosed differently with --json or without (the corpus case cf-020).
TEST(Scanner, MatchesDoNotDependOnTheTextsAlignment) {
  const std::string text =
      "$ docker inspect -f '{{.Name}} oom={{.State.OOMKilled}} exit={{.State.ExitCode}} limit={{.HostConfig.Memory}} "
      "finished={{.State.FinishedAt}}' geolens-api-1\n"
      "/geolens-api-1 oom=true exit=137 limit=2147483648 finished=2026-07-22T23:48:10Z\n"
      "# app's own /debug/mem endpoint (scraped every 30 min)\n"
      "time   rss_mb  tracemalloc_current_mb  gc_objects  threads\n"
      "09:00   311         121                 402118        41\n"
      "21:00   1694        126                 407951        41\n";
  const PatternSet& set = PatternSet::instance();
  hs_scratch_t* scratch = nullptr;
  ASSERT_EQ(hs_alloc_scratch(set.database(), &scratch), HS_SUCCESS);
  auto matches_at = [&](size_t offset) {
    std::vector<char> buf(text.size() + 128);
    char* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) / 64 * 64) + offset;
    std::memcpy(p, text.data(), text.size());
    std::vector<std::pair<unsigned long long, unsigned>> got;
    scan_database(
        set.database(), p, text.size(), scratch,
        [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
          static_cast<std::vector<std::pair<unsigned long long, unsigned>>*>(ctx)->emplace_back(to, id);
          return 0;
        },
        &got);
    std::sort(got.begin(), got.end());
    return got;
  };
  const auto first = matches_at(0);

  EXPECT_FALSE(first.empty());
  for (size_t offset = 1; offset < 64; ++offset) EXPECT_EQ(matches_at(offset), first) << "text at 64k+" << offset;
  hs_free_scratch(scratch);
}

// The fault behind it, pinned on one pattern: vectorscan 5.4.9's AVX-512
// code lost the first row below at most alignments (the skip over the
// command line's run of non-blank bytes read the wrong end of its last
// vector). scan_database takes the AVX2 code where the CPU would get the
// AVX-512 one; every row is found wherever the text lies. (On a CPU without
// AVX-512 this holds of hs_scan itself.)
TEST(Scanner, EveryRowIsFoundWhereverTheTextLies) {
  const std::string text =
      "$ while true; do docker stats --no-stream --format '{{.Name}} {{.MemUsage}}' llm; sleep 300; done\n"
      "llm 3.14GiB / 8GiB\n"
      "llm 4.71GiB / 8GiB\n"
      "llm 6.23GiB / 8GiB\n"
      "llm 7.93GiB / 8GiB\n";
  std::string error;
  hs_database_t* db = compile_database({"^\\S+\\s+[0-9.]+ ?[kKMGT]?i?B ?/ ?[0-9.]+ ?[kKMGT]?i?B\\s*$"}, {HS_FLAG_MULTILINE}, {0}, &error);
  ASSERT_NE(db, nullptr) << error;
  hs_scratch_t* scratch = nullptr;
  ASSERT_EQ(hs_alloc_scratch(db, &scratch), HS_SUCCESS);
  std::vector<char> buf(text.size() + 128);
  for (size_t offset = 0; offset < 64; ++offset) {
    char* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) / 64 * 64) + offset;
    std::memcpy(p, text.data(), text.size());
    std::vector<size_t> rows;  // the line each match ends on
    std::pair<const char*, std::vector<size_t>*> ctx{p, &rows};
    scan_database(
        db, p, text.size(), scratch,
        [](unsigned, unsigned long long, unsigned long long to, unsigned, void* c) {
          auto* x = static_cast<std::pair<const char*, std::vector<size_t>*>*>(c);
          size_t line = static_cast<size_t>(std::count(x->first, x->first + (to > 0 ? to - 1 : 0), '\n'));
          if (x->second->empty() || x->second->back() != line) x->second->push_back(line);
          return 0;
        },
        &ctx);
    EXPECT_EQ(rows, (std::vector<size_t>{1, 2, 3, 4})) << "text at 64k+" << offset;
  }
  hs_free_scratch(scratch);
  hs_free_database(db);
}

}  // namespace
}  // namespace aimem
