// `docker stats` (and `podman stats`) tables: one memory_usage fact per
// container, and what the LIMIT column really is.
//
//   CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O         BLOCK I/O   PIDS
//   a1b2c3d4e5f6   vllm      0.05%     1.2GiB / 2GiB         60.00%    1.2kB / 0B      0B / 0B     12
// Docker 1.10-1.12 (no NAME column, decimal units with a space):
//   CONTAINER      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O    BLOCK I/O   PIDS
//   728c7cfbec9b   0.46%     284.3 MB / 16.66 GB   1.71%     0 B / 0 B  221.7 kB / 3.174 MB   0
// Docker 1.5-1.8:  redis1   0.07%   796 KB/64 MB   1.21%   788 B/648 B     (header "MEM USAGE/LIMIT")
// --format 'table {{.Name}}\t{{.MemUsage}}' (no CPU column; {{.MemPerc}} may follow):
//   NAME            MEM USAGE / LIMIT
//   embed-worker    3.122GiB / 3.855GiB
//   NAME            MEM USAGE / LIMIT     MEM %
//   clamd-1         2.214GiB / 3.844GiB   57.60%
//
// Units: since 1.13 the memory columns are binary (go-units BytesSize: "KiB",
// "MiB", "GiB"), printed with 4 significant digits; a unit without "i" ("kB",
// "MB", "GB": HumanSize, and every column of older releases and podman) is
// decimal. "0B / 0B" is a container that is not running: no fact.
//
// The LIMIT column is the container's memory limit when one is set, and the
// memory of the whole host (or the Docker Desktop VM) when none is: then it
// is no limit at all, and an OOM beside it is the host running out. The figure
// tells which: a limit is what someone typed (-m 2g prints "2GiB", -m 512m
// "512MiB", -m 1500m "1.465GiB"), while a host's total is what the kernel has
// left after its reservations ("15.55GiB", "7.667GiB", "16.66 GB"). So a LIMIT
// is the host's when a host total seen in the same input (`docker info`'s
// "Total Memory", /proc/meminfo's MemTotal) matches it, or when it is at least
// 1 GiB and the printed figure cannot be a multiple of 256 MiB or of 100 MiB
// (the precision of the printed digits decides what "can be"). The host's
// figure becomes a host_state fact (total), the container's a memory_limit.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"MEM USAGE", kContext},
    {"[0-9.]+ ?[kKMGT]?i?B ?/ ?[0-9.]+ ?[kKMGT]?i?B +[0-9.]+%", kRegex | kContext},
    {"^\\S+[ \t]+[0-9.]+ ?[kKMGT]?i?B ?/ ?[0-9.]+ ?[kKMGT]?i?B[ \t\r]*$", kRegex | kContext},  // NAME  MEM USAGE / LIMIT
    {"Total Memory: ", kContext},
    {"Operating System: Docker (Desktop|for Mac|for Windows)", kRegex | kContext},
    {"MemTotal: ", kContext},
};

// A printed size: its value and the interval of true values it stands for.
struct Printed {
  uint64_t bytes = 0;
  double lo = 0, hi = 0;  // bytes
};

// "1.2GiB", "284.3 MB", "0B", "796 KB" (the unit may be a separate token).
std::optional<Printed> parse_printed(std::string_view s) {
  s = text::trim(s);
  std::string_view rest;
  auto v = text::parse_double(s, &rest);
  if (!v || *v < 0) return std::nullopt;
  std::string_view num = s.substr(0, s.size() - rest.size());
  rest = text::trim(rest);
  double mult = 0;
  if (rest == "B") mult = 1;
  else if (rest == "kB" || rest == "KB") mult = 1e3;
  else if (rest == "MB") mult = 1e6;
  else if (rest == "GB") mult = 1e9;
  else if (rest == "TB") mult = 1e12;
  else if (rest == "KiB") mult = 1024.0;
  else if (rest == "MiB") mult = 1048576.0;
  else if (rest == "GiB") mult = 1073741824.0;
  else if (rest == "TiB") mult = 1099511627776.0;
  else return std::nullopt;
  // Half a unit of the last printed digit either side.
  double step = 1.0;
  if (size_t dot = num.find('.'); dot != std::string_view::npos) step = std::pow(10.0, -static_cast<double>(num.size() - dot - 1));
  if (!(*v * mult < 1.8e19)) return std::nullopt;  // past what 64 bits hold: a garbled row
  Printed p;
  p.bytes = static_cast<uint64_t>(*v * mult + 0.5);
  p.lo = (*v - step / 2) * mult;
  p.hi = (*v + step / 2) * mult;
  return p;
}

// Whether some multiple of `q` lies strictly inside the printed interval.
bool multiple_inside(const Printed& p, double q) {
  double k = std::floor(p.lo / q) + 1;
  return k * q < p.hi;
}

// A figure someone could have typed as a limit.
bool round_figure(const Printed& p) {
  constexpr double MiB = 1048576.0;
  if (multiple_inside(p, 256 * MiB)) return true;
  // -m 1500m, 2000m, 3000m: only when the digits are precise enough to tell.
  return p.hi - p.lo <= 12 * MiB && multiple_inside(p, 100 * MiB);
}

struct Row {
  Line line;  // text points into the scanner's buffer only during on_line: copied below
  std::string text;
  std::string container;
  uint64_t usage = 0;
  Printed limit;
};

class DockerStats final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (!rows_.empty() && line.number > last_row_ + 2) flush(out);
    if (text::contains(s, "MEM USAGE")) {  // a header: a new table (docker stats redraws it)
      flush(out);
      name_and_usage_ = !text::contains(s, "CPU");
      last_row_ = line.number;
      return;
    }
    // docker info on Docker Desktop: "Operating System: Docker Desktop" (for
    // Mac, for Windows before 2020) says the Total Memory below it is the VM's
    // memory setting (Settings > Resources), which the user chose.
    if (text::starts_with(text::trim_left(s), "Operating System: Docker ")) {
      desktop_ = true;
      return;
    }
    if (auto v = text::after(text::trim_left(s), "Total Memory: "); v && text::starts_with(text::trim_left(s), "Total Memory: ")) {  // docker info
      if (auto p = parse_printed(*v)) host_total(line, p->bytes, out);
      return;
    }
    if (name_and_usage_ && line.number <= last_row_ + 1 && name_usage_row(line, out)) return;
    if (auto v = text::after(s, "MemTotal: ")) {  // /proc/meminfo
      std::string_view rest;
      // Only compared with the tables here: /proc/meminfo as a whole is host_tools' to read.
      if (auto kb = text::parse_u64(platform::skip(*v), &rest); kb && text::trim(rest) == "kB") host_total_ = *kb * 1024;
      return;
    }
    row(line, out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  bool platform_sent_ = false;
  std::optional<uint64_t> host_total_;
  std::vector<Row> rows_;
  uint64_t last_row_ = 0;

  void host_total(const Line& line, uint64_t bytes, FactSink& out) {
    host_total_ = bytes;
    Fact f = make_fact(line, FactKind::host_state, Family::docker);
    f.total = bytes;
    f.detail = "host RAM";
    out.add(std::move(f));
    if (!desktop_) return;
    Fact vm = make_fact(line, FactKind::runtime_setting, Family::docker);
    vm.limit = bytes;
    vm.detail = "VM memory (Docker Desktop)";
    out.add(std::move(vm));
  }
  bool desktop_ = false;  // docker info's "Operating System: Docker Desktop" was seen

  bool name_and_usage_ = false;  // the last header had no percentage columns: rows are "NAME  usage / limit"

  // "embed-worker    3.122GiB / 3.855GiB" under a NAME / MEM USAGE header.
  bool name_usage_row(const Line& line, FactSink& out) {
    std::string_view t = text::trim(line.text);
    std::string_view name = text::first_word(t);
    std::string_view cell = text::trim(t.substr(name.size()));
    // A MEM % column after it ({{.MemPerc}}): "2.214GiB / 3.844GiB   57.60%".
    if (!cell.empty() && cell.back() == '%') {
      size_t blank = cell.find_last_of(" \t");
      if (blank == std::string_view::npos) return false;
      cell = text::trim(cell.substr(0, blank));
    }
    size_t slash = cell.find('/');
    if (name.empty() || slash == std::string_view::npos || cell.find('/', slash + 1) != std::string_view::npos) return false;
    auto usage = parse_printed(cell.substr(0, slash));
    auto limit = parse_printed(cell.substr(slash + 1));
    if (!usage || !limit || limit->bytes == 0) return false;
    add_row(line, name, usage->bytes, *limit, out);
    return true;
  }

  void add_row(const Line& line, std::string_view container, uint64_t usage, const Printed& limit, FactSink& out) {
    Row r;
    r.line = line;
    r.text = std::string(line.text.substr(0, 4096));
    r.container = std::string(container.substr(0, 128));
    r.usage = usage;
    r.limit = limit;
    if (rows_.size() < 256) rows_.push_back(std::move(r));
    last_row_ = line.number;
    if (!platform_sent_) {
      platform_sent_ = true;
      Fact p = make_fact(line, FactKind::platform, Family::docker);
      p.detail = "docker";
      out.add(std::move(p));
    }
    // The kubelet's docker runtime (dockershim) names each container
    // k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT: the node is a Kubernetes node.
    if (!kubelet_sent_ && kubelet_name(container)) {
      kubelet_sent_ = true;
      Fact p = make_fact(line, FactKind::platform, Family::kubernetes);
      p.detail = "kubernetes";
      out.add(std::move(p));
    }
  }

  static bool kubelet_name(std::string_view name) {
    return text::starts_with(name, "k8s_") && std::count(name.begin(), name.end(), '_') >= 5;
  }
  bool kubelet_sent_ = false;

  // "a1b2c3d4e5f6  vllm  0.05%  1.2GiB / 2GiB  60.00%  ..." -> one Row.
  void row(const Line& line, FactSink& out) {
    auto tok = platform::words(line.text, 40);
    size_t cpu = 0;
    for (size_t i = 1; i < tok.size() && !cpu; ++i)
      if (tok[i].size() > 1 && tok[i].back() == '%' && text::parse_double(tok[i])) cpu = i;
    if (!cpu) return;
    size_t mem = 0;
    for (size_t i = cpu + 1; i < tok.size() && !mem; ++i)
      if (tok[i].size() > 1 && tok[i].back() == '%') mem = i;
    if (!mem || mem < cpu + 2) return;
    // The usage / limit text between CPU % and MEM %.
    std::string_view first = tok[cpu + 1], last = tok[mem - 1];
    std::string_view cell(first.data(), static_cast<size_t>(last.data() + last.size() - first.data()));
    size_t slash = cell.find('/');
    if (slash == std::string_view::npos || cell.find('/', slash + 1) != std::string_view::npos) return;
    auto usage = parse_printed(cell.substr(0, slash));
    auto limit = parse_printed(cell.substr(slash + 1));
    if (!usage || !limit || limit->bytes == 0) return;
    // NAME after CONTAINER ID when both are shown; else the one column there is.
    add_row(line, tok[cpu - 1], usage->bytes, *limit, out);
  }

  bool host_like(const Printed& limit) const {
    if (host_total_) {
      double t = static_cast<double>(*host_total_);
      if (limit.hi >= t * 0.98 && limit.lo <= t * 1.02) return true;
    }
    return limit.bytes >= units::GiB && !round_figure(limit);
  }

  // One container sampled again and again (a loop around `docker stats
  // --no-stream`, or its stream), its usage rising at every step but at most
  // a last one at the limit, by a fifth at least: a series that grew (the
  // form memory_series.cc gives a log's rss=), read by the diagnosis as growth.
  void growth(FactSink& out) {
    std::vector<bool> done(rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (done[i]) continue;
      std::vector<const Row*> same;
      for (size_t j = i; j < rows_.size(); ++j)
        if (!done[j] && rows_[j].container == rows_[i].container) same.push_back(&rows_[j]), done[j] = true;
      if (same.size() < 3) continue;
      bool rose = true;
      for (size_t k = 1; k < same.size(); ++k)
        rose = rose && (same[k]->usage > same[k - 1]->usage || (k + 1 == same.size() && same[k]->usage == same[k - 1]->usage));
      uint64_t first = same.front()->usage, last = same.back()->usage;
      if (!rose || first == 0 || last < first + first / 5 || last - first < 16 * units::MiB) continue;
      Line line = same.back()->line;
      line.text = same.back()->text;
      Fact f = make_fact(line, FactKind::memory_usage, Family::docker);
      f.strength = 0.7f;
      f.usage = last;
      f.container = same.back()->container;
      f.count = same.size();
      f.detail = fmt::format("growing MEM USAGE of {} from {} to {} over {} samples (docker stats)", text::printable(f.container),
                             units::format_bytes(first), units::format_bytes(last), same.size());
      out.add(std::move(f));
    }
  }

  void flush(FactSink& out) {
    growth(out);
    std::vector<uint64_t> hosts_sent;
    for (Row& r : rows_) {
      Line line = r.line;
      line.text = r.text;
      bool host = host_like(r.limit);
      Fact u = make_fact(line, FactKind::memory_usage, Family::docker);
      u.usage = r.usage;
      u.container = r.container;
      if (host) {
        u.detail = std::string(kStatsHostLimit);
        if (std::find(hosts_sent.begin(), hosts_sent.end(), r.limit.bytes) == hosts_sent.end()) {
          hosts_sent.push_back(r.limit.bytes);
          Fact h = make_fact(line, FactKind::host_state, Family::docker);
          h.total = r.limit.bytes;
          h.detail = "host RAM";
          out.add(std::move(h));
        }
      } else {
        u.limit = r.limit.bytes;
        u.detail = "docker stats";
        Fact l = make_fact(line, FactKind::memory_limit, Family::docker);
        l.limit = r.limit.bytes;
        l.container = r.container;
        l.detail = "docker stats LIMIT";
        out.add(std::move(l));
      }
      out.add(std::move(u));
    }
    rows_.clear();
  }
};

}  // namespace

const RecognizerEntry kDockerStatsEntry{"docker_stats", Family::docker, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new DockerStats); }};

}  // namespace aimem
