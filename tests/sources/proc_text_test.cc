// The shared /proc parsers (sources/proc_text.h), with inline inputs.
#include "sources/proc_text.h"

#include <gtest/gtest.h>

namespace aimem::proc_text {
namespace {

TEST(ProcText, MeminfoInBytes) {
  auto m = parse_meminfo("MemTotal:       16314412 kB\nMemFree:          123 kB\nMemAvailable:   8000000 kB\n"
                         "Buffers:            4 kB\nCached:            5 kB\nSwapTotal:      0 kB\nSwapFree: 0 kB\n");
  EXPECT_EQ(m.total, 16314412ull * 1024);
  EXPECT_EQ(m.available, 8000000ull * 1024);
  EXPECT_EQ(m.free, 123ull * 1024);
  EXPECT_EQ(m.buffers, 4096u);
  EXPECT_EQ(m.cached, 5120u);
  EXPECT_EQ(m.swap_total, 0u);
  EXPECT_FALSE(parse_meminfo("MemTotal: 99999999999999999999 kB\n").total);  // overflows: no value
}

TEST(ProcText, PsiAveragesAndTotals) {
  auto p = parse_psi("some avg10=1.50 avg60=0.00 avg300=0.00 total=123\nfull avg10=0.25 avg60=0 avg300=0 total=45\n");
  EXPECT_DOUBLE_EQ(*p.some_avg10, 1.5);
  EXPECT_DOUBLE_EQ(*p.full_avg10, 0.25);
  EXPECT_EQ(p.some_total_us, 123u);
  EXPECT_EQ(p.full_total_us, 45u);
  EXPECT_FALSE(parse_psi("").some_avg10);
}

TEST(ProcText, VmstatFieldIsAWholeKeyAtALineStart) {
  std::string_view v = "oom_kill_x 9\nnr_free_pages 10\noom_kill 3\npgsteal_anon 7";
  EXPECT_EQ(vmstat_field(v, "oom_kill"), 3u);
  EXPECT_EQ(vmstat_field(v, "nr_free_pages"), 10u);
  EXPECT_EQ(vmstat_field(v, "pgsteal_anon"), 7u);
  EXPECT_EQ(vmstat_field("oom_kill 4\n", "oom_kill"), 4u);
  EXPECT_FALSE(vmstat_field(v, "kill"));
}

}  // namespace
}  // namespace aimem::proc_text
