// The largest file a user lists beside a failure (src/recognize/families/
// file_sizes.cc) and the reading of it (classify.cc, cause_from_file_size).
// Inputs written here in ls's, GNU du's and Hadoop's formats with our own
// paths and figures, modelled on threads of an index, a training file or a
// dataset read whole on a smaller host (facebookresearch/faiss, dmlc/xgboost
// and apache/arrow threads of bad_alloc and MemoryError on load).
#include <gtest/gtest.h>

#include <string>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> files(const std::string& text) {
  std::vector<Fact> out;
  for (Fact& f : test::facts_of_kind(text, FactKind::runtime_setting))
    if (f.detail == kFileOnDisk) out.push_back(std::move(f));
  return out;
}

const std::string kFree =
    "$ free -g\n"
    "              total        used        free      shared  buff/cache   available\n"
    "Mem:             31           1          28           0           1          29\n"
    "Swap:             0           0           0\n";
const std::string kAbort =
    "$ python3 -c 'import faiss; idx = faiss.read_index(\"/srv/idx/catalog_hnsw.index\")'\n"
    "terminate called after throwing an instance of 'std::bad_alloc'\n"
    "  what():  std::bad_alloc\n"
    "Aborted (core dumped)\n";

TEST(FileSizes, ListingsGiveTheLargestFile) {
  auto a = files("$ ls -l /data/ctr/\n"
                 "total 34602036\n"
                 "-rw-r--r-- 1 wz wz 30133480192 Nov 24 21:40 train.libsvm\n"
                 "-rw-r--r-- 1 wz wz   997321704 Nov 24 21:52 valid.libsvm\n");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(*a[0].requested, 30133480192u);
  EXPECT_EQ(a[0].process, "train.libsvm");
  auto h = files("-rw-r--r-- 1 search search 38G May 20 18:02 /srv/idx/catalog_hnsw.index\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(*h[0].requested, 38 * units::GiB);
  EXPECT_EQ(h[0].process, "catalog_hnsw.index");
  auto du = files("$ du -sh /var/lib/app/data\n12G\t/var/lib/app/data\n");
  ASSERT_EQ(du.size(), 1u);
  EXPECT_EQ(*du[0].requested, 12 * units::GiB);
  auto hdfs = files("$ hdfs dfs -du -h /lake/events_2024\n120.5 G  361.5 G  /lake/events_2024\n");
  ASSERT_EQ(hdfs.size(), 1u);
  EXPECT_EQ(*hdfs[0].requested, uint64_t(120.5 * double(units::GiB)));
  // The tab turned into spaces by a paste.
  auto spaced = files("$ du -sh /var/lib/app/data\n12G     /var/lib/app/data\n");
  ASSERT_EQ(spaced.size(), 1u);
  // A size and a path with no du before it are not a listing.
  EXPECT_TRUE(files("12G\t/var/lib/app/data\n").empty());
}

// A file larger than the host's RAM beside an allocation failure on the
// host: it was being read whole. A file well under the RAM says nothing.
TEST(FileSizes, AFileLargerThanTheRamBesideAHostFailureWasBeingLoaded) {
  const std::string big = "$ ls -lh /srv/idx/\n-rw-r--r-- 1 search search 38G May 20 18:02 catalog_hnsw.index\n";
  Diagnosis d = test::diagnose_text(big + kFree + kAbort);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
  bool said = false;
  for (const std::string& r : d.incidents.at(0).reasons) said = said || r.find("catalog_hnsw.index (38.0 GiB") != std::string::npos;
  EXPECT_TRUE(said);
  const std::string small = "$ ls -lh /srv/idx/\n-rw-r--r-- 1 search search 9.5G May 20 18:02 catalog_hnsw.index\n";
  EXPECT_NE(test::diagnose_text(small + kFree + kAbort).cause, Cause::model_load);
  EXPECT_NE(test::diagnose_text(kFree + kAbort).cause, Cause::model_load);
}

}  // namespace
}  // namespace aimem
