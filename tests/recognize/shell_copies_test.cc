// Copies a shell loop starts in the background (src/recognize/families/
// shell_copies.cc). Inputs written here with our own commands and counts,
// modelled on a load script that starts hundreds of uploads at once before
// a global OOM kill of the server (minio/minio#6338).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

const std::string kKill =
    "[ 2210.401113] Out of memory: Kill process 1873 (objstore) score 941 or sacrifice child\n"
    "[ 2210.407280] Killed process 1873 (objstore) total-vm:8317740kB, anon-rss:6823184kB, file-rss:0kB, shmem-rss:0kB\n";

TEST(ShellCopies, ALoopThatBackgroundsEachCommandIsItsCountOfCopies) {
  const std::string script =
      "$ cat load.sh\n"
      "for (( i = 1; i <= 256; i++ )); do\n"
      "    upload --quiet data/blob-$i s3://bench/ &\n"
      "done\n"
      "wait\n";
  auto f = test::facts_of_kind(script, FactKind::phase_serve);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].sequences, 256u);
  EXPECT_EQ(f[0].cause, Cause::concurrency_batch);
  Diagnosis d = diagnose_text(script + kKill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  // seq, brace ranges and a one-line loop.
  auto g = test::facts_of_kind("for i in $(seq 1 32); do\n  python3 worker.py $i &\ndone\n", FactKind::phase_serve);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].sequences, 32u);
  auto h = test::facts_of_kind("for n in {1..12}; do ./client --id $n & done\n", FactKind::phase_serve);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].sequences, 12u);
}

TEST(ShellCopies, LoopsThatRunOneAtATimeOrFewAreNotCopies) {
  // One after another ("&&", no "&"), a redirect ">&", or fewer than four.
  EXPECT_TRUE(test::facts_of_kind("for i in $(seq 1 64); do\n  ./step $i && echo ok\ndone\n", FactKind::phase_serve).empty());
  EXPECT_TRUE(test::facts_of_kind("for i in $(seq 1 64); do\n  ./step $i 2>&\ndone\n", FactKind::phase_serve).empty());
  EXPECT_TRUE(test::facts_of_kind("for i in {1..3}; do ./client & done\n", FactKind::phase_serve).empty());
  // A background command far below the loop is not its body.
  EXPECT_TRUE(
      test::facts_of_kind("for i in $(seq 1 64); do\n  a\n  b\n  c\n  d\ndone\nserver &\n", FactKind::phase_serve).empty());
}

}  // namespace
}  // namespace aimem
