// Code in the evidence that allocates without end (src/recognize/families/
// endless_alloc.cc). Cases modelled on kubernetes/kubernetes#19803 (a pod
// command that appends 1 MB strings forever), moby/moby#14440's hog.py, and
// containers/podman's `tail /dev/zero` limit tests; values are ours.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> endless(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::memory_usage && f.detail.find("pasted code") != std::string::npos) out.push_back(f);
  return out;
}

const char* kKill =
    "[ 311.204118] Memory cgroup out of memory: Killed process 8120 (python) total-vm:98112kB, anon-rss:63340kB, file-rss:1700kB, "
    "shmem-rss:0kB, UID:0 pgtables:220kB oom_score_adj:0\n";

TEST(EndlessAlloc, AFileOrAOneLinerThatAppendsForeverIsGrowth) {
  auto file = endless("$ cat hog.py\nbuf = []\nwhile True:\n    buf.append(' ' * 1024 * 1024)\n$ docker run -m 64m hog\n");
  ASSERT_EQ(file.size(), 1u);
  EXPECT_EQ(file[0].where.line, 4u);
  EXPECT_EQ(endless(R"j("command": ["python", "-c", "x = []\nwhile True:\n    x.append(' ' * 1048576)"],)j").size(), 1u);
  EXPECT_EQ(endless("int main() { for (;;) { char *p = malloc(1 << 20); memset(p, 7, 1 << 20); } }\n").size(), 1u);
  EXPECT_EQ(endless("while (true) {\n  leak.push(Buffer.alloc(1e6));\n}\n").size(), 1u);
  EXPECT_EQ(endless("$ podman run --memory=100m fedora:42 sh -c \"tail /dev/zero\"\n").size(), 1u);
  EXPECT_EQ(endless("$ while true; do printf -v chunk '%*s' 134217728 ''; var+=$chunk; echo ${#var}; done\n").size(), 1u);
  EXPECT_EQ(endless("while :; do\n  buf+=$(head -c 1048576 /dev/urandom | base64)\ndone\n").size(), 1u);

  Diagnosis d = test::diagnose_text(std::string("$ cat hog.py\nbuf = []\nwhile True:\n    buf.append(' ' * 1024 * 1024)\n"
                                                "$ docker run --name hog -m 64m hog\n$ echo $?\n137\n") +
                                    "[ 311.204101] memory: usage 65536kB, limit 65536kB, failcnt 1802\n" + kKill);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

TEST(EndlessAlloc, BoundedLoopsAndLoopsWithoutAllocationAreNot) {
  // A break after the append, before it, or on the header's line: bounded.
  EXPECT_TRUE(endless("while True:\n    batch.append(item)\n    if len(batch) >= 32: break\n").empty());
  EXPECT_TRUE(endless("while True:\n    chunk = f.read(4096)\n    if not chunk:\n        break\n    data.append(chunk)\n").empty());
  // A server's accept loop, a retry loop with a sleep, an append far below the header.
  EXPECT_TRUE(endless("while (1) {\n  int fd = accept(s, NULL, NULL);\n  handle(fd);\n}\n").empty());
  EXPECT_TRUE(endless("while true; do n+=1; curl -s localhost:8080/health; done\n").empty());
  EXPECT_TRUE(endless("while True:\n    try_connect()\n    time.sleep(5)\n    tries.append(1)\n").empty());
  EXPECT_TRUE(endless("while True:\n    a()\n    b()\n    c()\n    d()\n    e()\n    out.append(x)\n").empty());
  // An append in a traceback's source line, with no loop.
  EXPECT_TRUE(endless("  File \"embed.py\", line 12, in <module>\n    vectors.append(model.encode(chunk))\nMemoryError\n").empty());
}

}  // namespace
}  // namespace aimem
