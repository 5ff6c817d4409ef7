// Names from outside never reach the terminal raw: a process that names
// itself with escape sequences, a cgroup directory named with them, a model
// file's name. Each test feeds a real name with ESC (and BEL) through the real
// binary and looks for the raw bytes in everything it printed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "watch/scratch_cgroup.h"

namespace aimem {
namespace {

using nlohmann::json;

// ESC [ 2 J clears the screen; ESC ] 0 ; ... BEL retitles the terminal.
const std::string kEvil = "\x1b[2J\x1b]0;x\x07" "evil";

bool has_control(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
  return false;
}

TEST(ControlChars, ProcessAndCgroupNamesOfAKernelOomLineArePrintable) {
  std::string dir = test::temp_dir("esc-oom");
  test::write_file(dir + "/dmesg.txt",
                   "[  100.000000] " + kEvil + " invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
                   "[  100.000100] memory: usage 65536kB, limit 65536kB, failcnt 12\n"
                   "[  100.000200] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
                   "oom_memcg=/docker/\x1b[31mab12,task_memcg=/docker/\x1b[31mab12,task=" + kEvil + ",pid=2531,uid=0\n"
                   "[  100.000300] Memory cgroup out of memory: Killed process 2531 (" + kEvil +
                   ") total-vm:100000kB, anon-rss:60000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:200kB oom_score_adj:0\n");
  auto text = test::run_aimem({"diagnose", "--verbose", dir + "/dmesg.txt"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_FALSE(has_control(text.out)) << text.out;
  EXPECT_FALSE(has_control(text.err)) << text.err;
  EXPECT_NE(text.out.find("evil (pid 2531)"), std::string::npos) << text.out;  // the name is still shown

  auto js = test::run_aimem({"diagnose", "--json", dir + "/dmesg.txt"});
  ASSERT_EQ(js.status, 0) << js.err;
  json j = json::parse(js.out);
  ASSERT_FALSE(j["incidents"].empty());
  // JSON escapes control characters, but a consumer that prints the summary
  // or the process name would print them raw: they are made printable too.
  EXPECT_FALSE(has_control(j["incidents"][0]["summary"].get<std::string>())) << j.dump();
  EXPECT_FALSE(has_control(j["incidents"][0]["process"]["name"].get<std::string>())) << j.dump();
  EXPECT_FALSE(has_control(j["incidents"][0]["pool"]["name"].get<std::string>())) << j.dump();
}

// `aimem run` prints the peak of each process it sampled by its name
// (/proc/PID/comm, which the process chose): run a program whose file name
// carries the escapes.
TEST(ControlChars, ProcessNamesInTheRunReportArePrintable) {
  std::string dir = test::temp_dir("esc-run");
  std::string exe = dir + "/" + "\x1b[31mevil";  // comm: its first 15 bytes
  ASSERT_EQ(symlink("/bin/sleep", exe.c_str()), 0);
  auto r = test::run_aimem({"run", "--no-gpus", "--interval", "100ms", "--", exe, "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("evil"), std::string::npos) << r.err;
  EXPECT_FALSE(has_control(r.err)) << r.err;
  EXPECT_FALSE(has_control(r.out)) << r.out;
}

// `aimem watch --cgroup` over a real cgroup whose directory name holds ESC,
// filled past its alert threshold: the alert line on stderr and the alert
// log carry the cgroup's name printable.
TEST(ControlChars, CgroupNameWithEscInWatchAlertsIsPrintable) {
  test::ScratchCgroup cg("\x1b[31mesc", 32ULL << 20);
  if (!cg) GTEST_SKIP() << "no writable cgroup v1 memory controller here (need root and a v1 memory hierarchy)";
  // 28 MiB of 32: past the 80% warning, below the limit.
  ASSERT_GT(cg.fork_allocator("esc-filler", 4 << 20, 1000, 7), 0);
  std::string dir = test::temp_dir("esc-watch");
  auto r = test::run_aimem({"watch", "--cgroup", cg.rel, "--interval", "100ms", "--duration", "1s", "--no-store",
                            "--no-serve", "--no-gpus", "--no-kernel-log", "--alert-log", dir + "/alerts.jsonl"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("aimem alert ["), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[31mesc"), std::string::npos) << r.err;  // the name is shown, its ESC is not
  EXPECT_FALSE(has_control(r.err)) << r.err;
  std::string log = test::read_file(dir + "/alerts.jsonl");
  ASSERT_FALSE(log.empty());
  json first = json::parse(log.substr(0, log.find('\n')));
  EXPECT_FALSE(has_control(first["message"].get<std::string>())) << log;
}

}  // namespace
}  // namespace aimem
