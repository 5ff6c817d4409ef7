// The sampler's cgroup listing (src/sources/sampler.cc, "The cgroup
// listing"): the hierarchy is listed again only when inotify reported a
// directory made or removed in it, at every sample where inotify is not used,
// and every kCgroupRelist samples whatever it said. A fixture tree on a
// temporary directory (inotify on tmpfs or ext4 stands in for cgroupfs), then
// a real v1 memory cgroup this test makes below its own, with a child made
// and removed by mkdir and rmdir, as a container runtime does.
//
// Also the process selection for the store (SamplerOptions::kept_processes):
// the same processes, in the same order, as notable_processes picks from a
// whole sample.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

#include "sources/readfile.h"
#include "sources/sampler.h"
#include "support/test_support.h"
#include "watch/exporter.h"

namespace aimem::watch {
namespace {

bool has_cgroup(const Sample& s, const std::string& path) {
  return std::any_of(s.cgroups.begin(), s.cgroups.end(), [&](const CgroupSample& c) { return c.path == path; });
}

// A v1 memory hierarchy under a temporary root: each cgroup a directory
// holding memory.usage_in_bytes.
struct CgroupTree {
  std::string root = test::temp_dir("sampler-cgroup-list");
  std::string mount = root + "/sys/fs/cgroup/memory";
  CgroupTree() {
    std::filesystem::create_directories(root + "/proc");
    test::write_file(root + "/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 500 kB\n");
    make("");
  }
  ~CgroupTree() { std::filesystem::remove_all(root); }
  void make(const std::string& rel) const {
    std::filesystem::create_directories(mount + rel);
    test::write_file(mount + rel + "/memory.usage_in_bytes", "4096\n");
  }
  SamplerOptions options(bool watch = true) const {
    SamplerOptions o;
    o.root = root;
    o.gpus = false;
    o.processes = false;
    o.watch_cgroups = watch;
    return o;
  }
};

TEST(SamplerCgroupList, ListedAgainOnlyWhenADirectoryCameOrWent) {
  CgroupTree t;
  t.make("/a");
  Sampler s(t.options());
  ASSERT_EQ(s.cgroup_version(), 1);
  if (!s.cgroup_watched()) GTEST_SKIP() << "inotify is not available here";
  Sample x = s.sample();
  EXPECT_TRUE(has_cgroup(x, "/") && has_cgroup(x, "/a"));
  EXPECT_EQ(s.cgroup_listings(), 1u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.sample().cgroups.size(), 2u);
  EXPECT_EQ(s.cgroup_listings(), 1u) << "nothing changed: the last listing stands";

  // A file written or made in a cgroup is no new cgroup.
  test::write_file(t.mount + "/a/memory.usage_in_bytes", "8192\n");
  test::write_file(t.mount + "/a/memory.stat", "total_rss 4096\n");
  EXPECT_EQ(s.sample().cgroups.size(), 2u);
  EXPECT_EQ(s.cgroup_listings(), 1u);

  t.make("/b");  // mkdir
  x = s.sample();
  EXPECT_TRUE(has_cgroup(x, "/b"));
  EXPECT_EQ(s.cgroup_listings(), 2u);
  t.make("/b/c");  // below a directory first seen in the last listing: watched since
  x = s.sample();
  EXPECT_TRUE(has_cgroup(x, "/b/c"));
  EXPECT_EQ(s.cgroup_listings(), 3u);
  std::filesystem::remove_all(t.mount + "/a");  // rmdir
  x = s.sample();
  EXPECT_FALSE(has_cgroup(x, "/a"));
  EXPECT_EQ(x.cgroups.size(), 3u);
  EXPECT_EQ(s.cgroup_listings(), 4u);
  std::filesystem::rename(t.mount + "/b/c", t.mount + "/d");  // moved: gone from one place, there in another
  x = s.sample();
  EXPECT_FALSE(has_cgroup(x, "/b/c"));
  EXPECT_TRUE(has_cgroup(x, "/d"));
}

// The safety net for what inotify cannot see (a cgroup made through a mount
// of the hierarchy in another cgroup namespace): a full listing every
// kCgroupRelist samples though no event came.
TEST(SamplerCgroupList, ListedAgainEveryKCgroupRelistSamplesAnyway) {
  CgroupTree t;
  Sampler s(t.options());
  if (!s.cgroup_watched()) GTEST_SKIP() << "inotify is not available here";
  for (uint64_t i = 0; i < 2 * Sampler::kCgroupRelist; ++i) s.sample();
  EXPECT_EQ(s.cgroup_listings(), 3u);  // the first sample, then the kCgroupRelist-th and the 2 * kCgroupRelist-th
}

// A scope's cgroup made after the watch started (no listing reached it, no
// watch was on its parent) is listed when it first reads, children and all.
TEST(SamplerCgroupList, ScopeMadeLaterIsListedWhenItAppears) {
  CgroupTree t;
  SamplerOptions o = t.options();
  o.cgroup = "/later";
  o.all_cgroups = false;
  Sampler s(o);
  EXPECT_TRUE(s.sample().cgroups.empty());
  t.make("/later");
  t.make("/later/kid");
  Sample x = s.sample();
  EXPECT_TRUE(has_cgroup(x, "/later"));
  EXPECT_TRUE(has_cgroup(x, "/later/kid"));
  t.make("/later/kid2");
  EXPECT_TRUE(has_cgroup(s.sample(), "/later/kid2"));
}

// Without inotify (here: turned off) every sample lists the hierarchy, and a
// cgroup made between two samples is in the second.
TEST(SamplerCgroupList, WithoutInotifyEverySampleLists) {
  CgroupTree t;
  Sampler s(t.options(false));
  EXPECT_FALSE(s.cgroup_watched());
  s.sample();
  s.sample();
  EXPECT_EQ(s.cgroup_listings(), 2u);
  t.make("/late");
  EXPECT_TRUE(has_cgroup(s.sample(), "/late"));
  EXPECT_EQ(s.cgroup_listings(), 3u);
}

std::string own_memory_cgroup() { return memory_cgroup_of(read_small_file("/proc/self/cgroup").value_or("")); }

// cgroupfs itself: a child cgroup made by mkdir shows in the next sample, and
// one removed by rmdir leaves it, with the listing skipped in between (other
// cgroups made on this host meanwhile may list it again: that is not checked).
TEST(SamplerCgroupList, RealV1CgroupMadeAndRemoved) {
  SamplerOptions o;
  o.gpus = false;
  o.processes = false;
  Sampler s(o);
  if (s.cgroup_version() != 1) GTEST_SKIP() << "needs a writable v1 memory hierarchy (this project's machines have one)";
  if (!s.cgroup_watched()) GTEST_SKIP() << "inotify is not available here";
  const std::string own = own_memory_cgroup();
  const std::string rel = (own == "/" ? "" : own) + "/aimem-cgroup-list-" + std::to_string(::getpid());
  const std::string dir = s.cgroup_mount() + rel;
  if (::mkdir(dir.c_str(), 0755) != 0) GTEST_SKIP() << dir << ": " << std::strerror(errno);
  struct Remove {
    std::string a, b;
    ~Remove() {
      ::rmdir(b.c_str());
      ::rmdir(a.c_str());
    }
  } remove{dir, dir + "/child"};
  EXPECT_TRUE(has_cgroup(s.sample(), rel));
  const size_t listed = s.cgroup_listings();
  ASSERT_EQ(::mkdir((dir + "/child").c_str(), 0755), 0) << std::strerror(errno);
  EXPECT_TRUE(has_cgroup(s.sample(), rel + "/child"));
  EXPECT_GT(s.cgroup_listings(), listed);
  ASSERT_EQ(::rmdir((dir + "/child").c_str()), 0) << std::strerror(errno);
  Sample x = s.sample();
  EXPECT_FALSE(has_cgroup(x, rel + "/child"));
  EXPECT_TRUE(has_cgroup(x, rel));
  ASSERT_EQ(::rmdir(dir.c_str()), 0) << std::strerror(errno);
  EXPECT_FALSE(has_cgroup(s.sample(), rel));
}

}  // namespace
}  // namespace aimem::watch
