// The ZFS ARC: OpenZFS's cache in kernel memory. Counted as "used" (not
// buff/cache) and shrinking only slowly under pressure, an ARC that has grown
// to a large share of the RAM leaves the processes too little: the memory
// another holder took (other_process). As users paste its size:
//
//   $ grep -E '^(size|c_max) ' /proc/spl/kstat/zfs/arcstats       the kstat: name, type (4), bytes
//   size                            4    21265997824
//   c_max                           4    4294967296
//   $ awk '$1=="size"{print $1, $3}' /proc/spl/kstat/zfs/arcstats  a pick of its rows, in bytes or
//   size 21265997824                                                with a unit ("size 19.8 GiB")
//   ARC size (current):                                  1042.5 %   41.7 GiB   arc_summary (0.8+)
//   ARC Size:                               74.12%  47.44   GiB                arc_summary.py (older)
//
// A kstat row is read only within kKstatLines of a line naming arcstats, so a
// "size" row of anything else is not. One host_state fact (detail kZfsArc,
// usage = the ARC's size) for the last reading; the diagnosis weighs it
// against the host's RAM beside a host-wide failure (classify.cc).
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"arcstats", kContext},
    {"^[ \t]*size\\s+(4\\s+)?[0-9]", kRegex | kContext},
    {"ARC [Ss]ize( \\(current\\))?:", kRegex | kContext},
};

constexpr uint64_t kKstatLines = 12;

class ZfsArc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "arcstats")) {
      kstat_line_ = line.number;
      return;
    }
    std::optional<uint64_t> size;
    std::string_view t = text::trim(s);
    if (auto v = text::after(t, "ARC size (current):")) size = percent_then_size(*v);
    else if (auto w = text::after(t, "ARC Size:")) size = percent_then_size(*w);
    else if (text::starts_with(t, "size") && kstat_line_ && line.number <= kstat_line_ + kKstatLines) size = kstat_size(t.substr(4));
    if (!size || *size == 0) return;
    Fact f = make_fact(line, FactKind::host_state, Family::procfs);
    f.detail = std::string(kZfsArc);
    f.usage = size;
    out.add(std::move(f));
  }

 private:
  uint64_t kstat_line_ = 0;

  // "  1042.5 %   41.7 GiB", "74.12%  47.44   GiB": the size after the share.
  static std::optional<uint64_t> percent_then_size(std::string_view v) {
    size_t pct = v.find('%');
    if (pct == std::string_view::npos) return std::nullopt;
    std::string_view rest = text::trim(v.substr(pct + 1));
    std::string_view after;
    auto n = text::parse_double(rest, &after);
    if (!n) return std::nullopt;
    std::string joined = std::string(rest.substr(0, rest.size() - after.size())) + " " + std::string(text::trim(after));
    return units::parse_log_size(joined);
  }

  // "   4    21265997824" (type, bytes), " 21265997824", " 19.8 GiB".
  static std::optional<uint64_t> kstat_size(std::string_view v) {
    auto words = platform::words(v, 4);
    if (words.empty()) return std::nullopt;
    if (words.size() >= 2 && words[0] == "4") return text::parse_u64(words[1]);
    if (words.size() >= 2) {
      if (auto sized = units::parse_log_size(std::string(words[0]) + " " + std::string(words[1]))) return sized;
    }
    return text::parse_u64(words[0]);
  }
};

}  // namespace

const RecognizerEntry kZfsArcEntry{"zfs_arc", Family::procfs, kPatterns, [] { return std::unique_ptr<Recognizer>(new ZfsArc); }};

}  // namespace aimem
