// A figure that climbs across lines of one shape (src/recognize/template_series.cc):
// the paste's last reading for growth when no recognizer read a series.
// The texts are written for these tests in the shapes users paste: a shell
// loop's own format, ps piped through awk, a tool's per-round line.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/units.h"
#include "recognize/template_series.h"
#include "support/test_support.h"

namespace aimem {
namespace {

// The facts the shape reading added (scanner.cc, shape_series).
std::vector<const Fact*> shape_facts(const Diagnosis& d) {
  std::vector<const Fact*> out;
  for (const Fact& f : d.facts)
    if (f.kind == FactKind::memory_usage && f.detail.find("figure of the lines") != std::string::npos) out.push_back(&f);
  return out;
}

// A sampling loop of the user's own making (`while sleep 300; do date +%T;
// free -g | awk ...`), then a global kernel OOM: nothing names the figure
// but its place on the line.
constexpr const char* kLoopThenOom = R"($ while sleep 300; do echo "$(date +%T) used=$(free -g | awk '/Mem:/{print $3}')G total=503G"; done
09:00:03 used=188G total=503G
09:05:03 used=231G total=503G
09:10:03 used=276G total=503G
09:15:03 used=322G total=503G
09:20:03 used=369G total=503G
09:25:03 used=415G total=503G
09:30:03 used=462G total=503G
[Tue Mar  4 09:33:41 2025] Out of memory: Killed process 48211 (python) total-vm:498120044kB, anon-rss:467224120kB, file-rss:10240kB, shmem-rss:0kB, UID:0 pgtables:921340kB oom_score_adj:0
)";

TEST(TemplateSeries, ReadsAFigureThatClimbsOnLinesOfOneShape) {
  auto found = template_series(kLoopThenOom);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "#:#:# used=#U total=#U");
  EXPECT_EQ(found[0].samples, 7u);
  EXPECT_EQ(found[0].first_line, 2u);
  EXPECT_EQ(found[0].last_line, 8u);
  // Read as the project reads logs' units (core/units.h): free -g's G is GiB.
  EXPECT_EQ(found[0].first, 188 * units::GiB);
  EXPECT_EQ(found[0].last, 462 * units::GiB);
  EXPECT_EQ(found[0].last_text, "09:30:03 used=462G total=503G");
}

TEST(TemplateSeries, TheGlobalOomAfterSuchASeriesIsALeak) {
  Diagnosis d = test::diagnose_text(kLoopThenOom);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  auto facts = shape_facts(d);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]->where.line, 8u);  // the last sample, where the series is quoted
  EXPECT_EQ(facts[0]->from_line, 2u);
  // (The clock before each sample came off as a Timestamper's, deframe.cc.)
  EXPECT_EQ(facts[0]->detail, "growing figure of the lines \"used=#U total=#U\" from 188 GiB to 462 GiB over 7 samples");
  // A lean, not a verdict: nothing names the figure.
  ASSERT_TRUE(d.confidence);
  EXPECT_LT(*d.confidence, 0.8);
}

// The same lines without the climb: a level figure is no growth.
TEST(TemplateSeries, AFlatOrFallingFigureIsNoSeries) {
  EXPECT_TRUE(template_series("10:00 used=40G total=503G\n10:05 used=41G total=503G\n10:10 used=40G total=503G\n"
                              "10:15 used=42G total=503G\n")
                  .empty());
  // A sawtooth: up, back down, up (a cache flushed) rose at only half its steps.
  EXPECT_TRUE(template_series("pool 100MB\npool 300MB\npool 120MB\npool 320MB\npool 110MB\npool 330MB\n").empty());
}

// Figures that grow by design: a load's or a download's progress, a batch or
// context growing (another cause), a collector's before->after pairs, a free
// figure falling while an engine reserves its pools.
TEST(TemplateSeries, SizesThatGrowByDesignAreNotSeries) {
  EXPECT_TRUE(template_series("Loading weights 1.2GB\nLoading weights 2.4GB\nLoading weights 3.6GB\nLoading weights 4.8GB\n").empty());
  EXPECT_TRUE(template_series("Downloading 120MB\nDownloading 640MB\nDownloading 1.9GB\n").empty());
  EXPECT_TRUE(template_series("batch 8 mem 10GB\nbatch 16 mem 20GB\nbatch 32 mem 40GB\n").empty());
  EXPECT_TRUE(template_series("[gc] Pause Young 512M->100M\n[gc] Pause Young 900M->300M\n[gc] Pause Young 1400M->600M\n").empty());
  EXPECT_TRUE(template_series("avail mem=70.1 GB\navail mem=41.0 GB\navail mem=12.3 GB\n").empty());
}

// Counts without a unit are not sizes; a figure inside a name ("node3") is a name.
TEST(TemplateSeries, OnlySizesAreRead) {
  EXPECT_TRUE(template_series("rows 1000\nrows 2000\nrows 4000\nrows 8000\n").empty());
  EXPECT_TRUE(template_series("worker node1 up\nworker node2 up\nworker node3 up\n").empty());
  auto found = template_series("   1612 MB  ray::ServeReplica:ranker\n   1904 MB  ray::ServeReplica:ranker\n"
                               "   2541 MB  ray::ServeReplica:ranker\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].last, 2541 * units::MiB);
}

// A figure past what 64 bits hold is held at the largest, not converted
// (undefined behaviour) past it.
TEST(TemplateSeries, AnAbsurdFigureIsHeldAtTheLargest) {
  auto found = template_series("pool 1 GB\npool 900000000000 GB\npool 990000000000000000000000000000000000 GB\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].last, UINT64_MAX);
}

// Bounded: a paste of a million distinct shapes keeps at most its first
// shapes, and a line of more figures than slots is not a sample.
TEST(TemplateSeries, StateIsBounded) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "shape " + std::string(static_cast<size_t>(i % 50) + 1, 'x') + std::to_string(i) + " k" + std::to_string(i) + "MB\n";
  EXPECT_LE(template_series(text).size(), 4u);
  EXPECT_TRUE(template_series("1MB 2 3 4 5 6 7 8 9 10 11 12 13 14\n2MB 2 3 4 5 6 7 8 9 10 11 12 13 14\n"
                              "3MB 2 3 4 5 6 7 8 9 10 11 12 13 14\n")
                  .empty());
}

// A recognizer's own series (memory_series.cc reads "rss=") is the one the
// diagnosis quotes: the shape reading adds nothing beside it.
TEST(TemplateSeries, ARecognizersSeriesComesFirst) {
  std::string text = "t=1 rss=1.0GB\nt=2 rss=1.6GB\nt=3 rss=2.2GB\nt=4 rss=2.9GB\nt=5 rss=3.6GB\n"
                     "Out of memory: Killed process 812 (app) total-vm:4012340kB, anon-rss:3801220kB, file-rss:0kB, shmem-rss:0kB\n";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  EXPECT_TRUE(shape_facts(d).empty());
  EXPECT_TRUE(std::any_of(d.facts.begin(), d.facts.end(), [](const Fact& f) {
    return f.kind == FactKind::memory_usage && f.detail.starts_with("growing rss");
  }));
}

// A newest-first paste (a console's list) is read in the order written: the
// figure climbs, and the evidence shows the input's own line.
TEST(TemplateSeries, ANewestFirstPasteClimbsInTheOrderWritten) {
  std::string text =
      "2025-03-04T09:33:41.000Z Out of memory: Killed process 48211 (python) total-vm:498120044kB, anon-rss:467224120kB, file-rss:10240kB, shmem-rss:0kB\n"
      "2025-03-04T09:30:03.000Z sampler used=462G total=503G\n"
      "2025-03-04T09:25:03.000Z sampler used=415G total=503G\n"
      "2025-03-04T09:20:03.000Z sampler used=369G total=503G\n"
      "2025-03-04T09:15:03.000Z sampler used=322G total=503G\n"
      "2025-03-04T09:10:03.000Z sampler used=276G total=503G\n";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  auto facts = shape_facts(d);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]->where.line, 5u);        // the fifth line as written
  EXPECT_EQ(shown_line(facts[0]->where), 2u);  // the input's second line
}

}  // namespace
}  // namespace aimem
