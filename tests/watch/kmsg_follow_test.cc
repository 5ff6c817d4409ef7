// The kernel-log follower on a real OOM report captured from /dev/kmsg on
// this machine (tests/fixtures/watch/kmsg-memcg-oom.txt, kmsg framing), fed
// record by record and followed as a growing file under --root, and the
// diagnosis `aimem watch` stores for it.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "render/diagnosis_json.h"
#include "support/test_support.h"
#include "watch/kmsg_follow.h"
#include "watch/watcher.h"

namespace aimem {
namespace {

std::string fixture() { return test::read_file(test::source_dir() + "/tests/fixtures/watch/kmsg-memcg-oom.txt"); }

TEST(OomSummary, ParsesTheKernelSummaryLine) {
  watch::KernelOomReport r;
  ASSERT_TRUE(watch::parse_oom_summary(
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/docker/ab12,"
      "task_memcg=/docker/ab12,task=python3,pid=2531,uid=0",
      r));
  EXPECT_EQ(r.constraint, "CONSTRAINT_MEMCG");
  EXPECT_EQ(r.oom_memcg, "/docker/ab12");
  EXPECT_EQ(r.task_memcg, "/docker/ab12");
  EXPECT_EQ(r.comm, "python3");
  EXPECT_EQ(r.pid, 2531);
  watch::KernelOomReport none;
  EXPECT_FALSE(watch::parse_oom_summary("Out of memory: Killed process 12 (x)", none));
}

TEST(KmsgFollower, FollowsAGrowingCaptureAndAssemblesTheReport) {
  std::string root = test::temp_dir("kmsg-follow");
  mkdir((root + "/dev").c_str(), 0755);
  test::write_file(root + "/dev/kmsg", "6,1,100,-;unrelated line\n");
  watch::KmsgFollower f;
  ASSERT_EQ(test::error_of(f.open(root, true)), "");
  EXPECT_TRUE(f.poll(0).empty());
  {
    std::ofstream out(root + "/dev/kmsg", std::ios::app);
    out << fixture();
  }
  auto reports = f.poll(0);
  ASSERT_EQ(reports.size(), 1u);
  const auto& r = reports[0];
  EXPECT_EQ(r.constraint, "CONSTRAINT_MEMCG");
  EXPECT_EQ(r.pid, 18238);
  EXPECT_EQ(r.comm, "python3");
  EXPECT_NE(r.oom_memcg.find("/aimem-capture-"), std::string::npos);
  EXPECT_EQ(r.oom_memcg, r.task_memcg);
  EXPECT_GE(r.lines.size(), 70u);
  EXPECT_NE(r.lines.back().find("Killed process 18238"), std::string::npos);
  EXPECT_GT(r.time_us, 0);
  // Nothing new: nothing more.
  EXPECT_TRUE(f.poll(0).empty());
}

TEST(KmsgFollower, BoundsAHugeTaskDump) {
  watch::KmsgFollower f;
  f.feed("python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0", 1);
  for (int i = 0; i < 50000; ++i) f.feed("[  12345]     0 12345    11234     1234   106496        0             0 worker", 1);
  f.feed("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=big,pid=9,uid=0", 1);
  auto r = f.feed("Out of memory: Killed process 9 (big) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB", 2);
  ASSERT_TRUE(r);
  EXPECT_LE(r->lines.size(), watch::KmsgFollower::kMaxReportLines + 64);
  EXPECT_NE(r->lines.back().find("Killed process 9"), std::string::npos);
  EXPECT_EQ(r->constraint, "CONSTRAINT_NONE");
  EXPECT_EQ(r->time_us, 2);
}

TEST(KmsgFollower, DiagnosisOfTheCapturedReportIsContainerLimit) {
  watch::KmsgFollower f;
  std::optional<watch::KernelOomReport> got;
  // A stream over the file's lines (not std::views::split: clang 14, the
  // sanitizer build's compiler, cannot iterate it over libstdc++ 12's ranges).
  std::istringstream in(test::read_file(test::source_dir() + "/tests/fixtures/watch/kmsg-memcg-oom.txt"));
  for (std::string s; std::getline(in, s);) {
    if (s.empty() || s[0] == ' ') continue;
    auto semi = s.find(';');
    if (auto r = f.feed(s.substr(semi + 1), 1764428400000000)) got = r;
  }
  ASSERT_TRUE(got);
  // The cgroup is long gone: the diagnosis rests on the report alone.
  watch::Event ev = watch::diagnose_oom_report("/nonexistent-root", *got, {}, diagnosis_to_json);
  EXPECT_EQ(ev.kind, "oom_kill");
  EXPECT_EQ(ev.key, "cgroup:" + got->oom_memcg);
  auto body = nlohmann::json::parse(ev.body);
  EXPECT_EQ(body["diagnosis"]["layer"], "container_limit");
  EXPECT_EQ(body["diagnosis"]["incidents"][0]["pool"]["limit_bytes"], 32ull << 20);
  EXPECT_NE(ev.summary.find("python3"), std::string::npos) << ev.summary;
}

}  // namespace
}  // namespace aimem
