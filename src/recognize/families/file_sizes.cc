// The size of a file a user lists beside a failure: the dataset, index or
// checkpoint the failing program was reading. A file larger than the host's
// RAM read into memory whole is what did not fit (classify.cc,
// cause_from_file_size). Formats:
//
//   $ ls -l /data/ctr/                                     ls -l: bytes; ls -lh: K, M, G, T (powers
//   -rw-r--r-- 1 wz wz 35433480192 Nov 24 21:40 train.libsvm      of 1024), one decimal below 10
//   -rw-r--r-- 1 search search 45G May 20 18:02 listings.index
//   $ du -sh /data/index/            45G	/data/index/            GNU du -h: the size, a tab, the path
//   $ hdfs dfs -du -h /wzh/test_160g                       Hadoop's: the size, the space consumed
//   160.2 G  480.6 G  /wzh/test_160g                       with replicas, the path (a blank before the unit)
//
// du's rows are read only within kDuLines of the du command itself (a size
// and a path are too common a shape otherwise). One runtime_setting fact
// per input, for the largest file (detail kFileOnDisk, requested = its size,
// process = its name).
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"^[-l][rwxsStT-]{9}[.+@]? +[0-9]+ ", kRegex | kContext},  // an ls -l row
    {"\\bdu -", kRegex | kContext},
    // A du row: GNU du's size and a tab, or Hadoop's "160.2 G  480.6 G  /path" (narrow, so that
    // the many lines of a large log that open with a figure are not read).
    {"^[0-9]+(\\.[0-9]+)?[KMGT]?\t", kRegex | kContext},
    {"^[0-9]+(\\.[0-9]+)? [KMGT] +[0-9]", kRegex | kContext},
    {"^[0-9]+(\\.[0-9]+)?[KMGT] +[./]", kRegex | kContext},  // the tab pasted as spaces
};

constexpr uint64_t kDuLines = 12;
constexpr uint64_t kMinFile = 64 * units::MiB;  // smaller files decide nothing

// "35433480192", "45G", "1.2T", "512K", "160.2 G": ls -h and du -h use
// powers of 1024 with a bare letter.
std::optional<uint64_t> listed_size(std::string_view v, std::string_view unit_word = {}) {
  std::string_view rest;
  auto n = text::parse_double(v, &rest);
  if (!n || *n < 0 || *n > 1e15) return std::nullopt;
  if (rest.empty() && !unit_word.empty()) rest = unit_word;
  double mult = 1;
  if (rest == "K") mult = double(units::KiB);
  else if (rest == "M") mult = double(units::MiB);
  else if (rest == "G") mult = double(units::GiB);
  else if (rest == "T") mult = double(units::TiB);
  else if (!rest.empty()) return std::nullopt;
  const double bytes = *n * mult;
  if (bytes >= 0x1p62) return std::nullopt;  // no file is that large (and the cast would overflow)
  return static_cast<uint64_t>(bytes);
}

class FileSizes final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    (void)out;
    std::string_view s = text::trim(line.text);
    if (text::contains(s, "du -") && (text::starts_with(s, "$") || text::starts_with(s, "#") || text::contains(s, "du -s") ||
                                      text::contains(s, "dfs -du"))) {
      du_line_ = line.number;
      return;
    }
    auto w = platform::words(s, 12);
    if (w.empty()) return;
    // ls -l: permissions, links, owner, group, size, month, day, time or year, name.
    if (w.size() >= 9 && (w[0][0] == '-') && w[0].size() >= 10) {
      if (auto size = listed_size(w[4])) take(line, *size, w[8]);
      return;
    }
    if (du_line_ && line.number > du_line_ && line.number <= du_line_ + kDuLines && w.size() >= 2) {
      // GNU du: "45G  /path"; Hadoop: "160.2 G  480.6 G  /path".
      std::optional<uint64_t> size;
      std::string_view name = w.back();
      if (w.size() >= 3 && w[1].size() == 1) size = listed_size(w[0], w[1]);
      else size = listed_size(w[0]);
      if (size && !name.empty() && (name[0] == '/' || name[0] == '.' || name.find('/') != std::string_view::npos)) take(line, *size, name);
    }
  }
  void finish(FactSink& out) override {
    if (best_) out.add(std::move(*best_));
  }

 private:
  uint64_t du_line_ = 0;
  std::optional<Fact> best_;

  void take(const Line& line, uint64_t size, std::string_view name) {
    if (size < kMinFile || (best_ && *best_->requested >= size)) return;
    best_ = make_fact(line, FactKind::runtime_setting, Family::procfs);
    best_->detail = std::string(kFileOnDisk);
    best_->requested = size;
    size_t slash = name.rfind('/');
    if (slash != std::string_view::npos && slash + 1 < name.size()) name = name.substr(slash + 1);
    best_->process = std::string(name.substr(0, 96));
  }
};

}  // namespace

const RecognizerEntry kFileSizesEntry{"file_sizes", Family::procfs, kPatterns,
                                      [] { return std::unique_ptr<Recognizer>(new FileSizes); }};

}  // namespace aimem
