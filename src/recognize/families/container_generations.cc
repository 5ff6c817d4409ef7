// Two generations of one service in `docker ps`: a deploy that started the
// new containers while the old ones kept running (dokku renames the old
// release's containers with the deploy's timestamp; a platform that recreates
// a model's container names it by a new instance id), each holding its own
// copy of the app or the model on a host sized for one.
//
//   CONTAINER ID   IMAGE                 COMMAND        CREATED        STATUS          PORTS   NAMES        (default)
//   9f2c41d7a0be   dokku/shop:latest     "/start web"   6 minutes ago  Up 6 minutes            shop.web.1
//   41aa0c93e5f7   5b1e0d2c9a44          "/start web"   3 hours ago    Up 3 hours              shop.web.1.1530884411
//
//   gpustack-qwen3-32b-7f21c9d4   Restarting (1) 12 seconds ago   gpustack/runner:v0.11       (--format 'table {{.Names}}\t{{.Status}}\t{{.Image}}')
//   gpustack-qwen3-32b-4b0e88a1   Up 3 days                       gpustack/runner:v0.11
//
// Columns are found by the header's own words (NAMES, STATUS, IMAGE) at the
// offsets docker's tabwriter aligns them to; a row pasted with tabs splits on
// its tabs. A container's service is its name less a generation mark at the
// end: a timestamp (".1530884411", 9-11 digits) or an instance id ("-4b0e88a1",
// 6-12 hex digits with a letter and a digit); or docker-compose's mark at the
// start of the old container's name while it recreates ("7f3d2a91c4_shop_worker_1"). Replicas ("web-1", "web-2") keep
// their own names and never pair. Two alive rows of one service are two
// generations when their images differ, or when one has been up an hour or
// more and the other is restarting or is a tenth of its age. One context fact
// (runtime_setting, cause deployment_overlap), as rollout.cc's for Kubernetes.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // The header: docker's default one, or a --format table naming STATUS and NAMES.
    {"CONTAINER ID +IMAGE", kRegex | kContext},
    {"(NAMES|STATUS)\\s+.*(STATUS|NAMES)", kRegex | kContext},
    // A row's status.
    {"  Up (About an? |Less than a |[0-9]+ )(second|minute|hour|day|week|month)", kRegex | kContext},
    {"  Restarting \\([0-9]+\\)", kRegex | kContext},
};

constexpr size_t kRowsAfterHeader = 64;
constexpr size_t kServices = 32;
constexpr double kOldS = 3600;
constexpr double kAgeRatio = 10;

// "Up 3 days", "Up About an hour", "Up 2 hours (healthy)": seconds up; none
// for any other status.
std::optional<double> up_for(std::string_view status) {
  auto rest = text::after(status, "Up ");
  if (!rest) return std::nullopt;
  std::string_view r = *rest;
  double n = 0;
  if (text::starts_with(r, "About an ") || text::starts_with(r, "About a ")) {
    n = 1;
    r = r.substr(r.find(' ', 6) + 1);
  } else if (text::starts_with(r, "Less than a ")) {
    return 0.0;
  } else {
    std::string_view after;
    auto v = text::parse_u64(r, &after);
    if (!v) return std::nullopt;
    n = static_cast<double>(*v);
    r = text::trim_left(after);
  }
  constexpr std::pair<std::string_view, double> kUnits[] = {{"second", 1},    {"minute", 60},      {"hour", 3600},
                                                           {"day", 86400},   {"week", 7 * 86400}, {"month", 30 * 86400}};
  for (auto [unit, s] : kUnits)
    if (text::starts_with(r, unit)) return n * s;
  return std::nullopt;
}

bool is_hex(std::string_view s) {
  bool digit = false, letter = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') digit = true;
    else if (c >= 'a' && c <= 'f') letter = true;
    else return false;
  }
  return digit && letter;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The name less a generation mark at its end, or at its start: docker-compose
// (v1) renames the container it is replacing "<short id>_<name>" while it
// recreates the service ("7f3d2a91c4_shop_worker_1").
std::string_view service_of(std::string_view name) {
  if (size_t u = name.find('_'); u >= 10 && u <= 12 && u + 1 < name.size() && is_hex(name.substr(0, u))) return name.substr(u + 1);
  size_t p = name.find_last_of(".-_");
  if (p == std::string_view::npos || p == 0) return name;
  std::string_view mark = name.substr(p + 1);
  if ((mark.size() >= 9 && mark.size() <= 11 && all_digits(mark)) || (mark.size() >= 6 && mark.size() <= 12 && is_hex(mark)))
    return name.substr(0, p);
  return name;
}

struct Column {
  std::string name;
  size_t start = 0;
};

class ContainerGenerations final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (header(line)) return;
    if (!header_line_ || line.number > header_line_ + kRowsAfterHeader || reported_) return;
    auto cells = split(s);
    if (cells.size() != columns_.size()) return;
    std::string_view name, status, image;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i].name == "NAMES") name = cells[i];
      else if (columns_[i].name == "STATUS") status = cells[i];
      else if (columns_[i].name == "IMAGE") image = cells[i];
    }
    if (name.empty() || status.empty()) return;
    const bool restarting = text::starts_with(status, "Restarting");
    auto up = up_for(status);
    if (!up && !restarting) return;  // exited, created, paused: not holding memory
    Row row{std::string(name.substr(0, 96)), std::string(image.substr(0, 128)), restarting ? 0.0 : *up, restarting};
    const std::string_view service = service_of(row.name);
    for (const Row& other : rows_) {
      if (service_of(other.name) != service || other.name == row.name) continue;
      const Row& older = other.age >= row.age ? other : row;
      const Row& newer = other.age >= row.age ? row : other;
      const bool images_differ = !row.image.empty() && !other.image.empty() && row.image != other.image;
      const bool ages_apart = older.age >= kOldS && (newer.restarting || older.age >= kAgeRatio * newer.age);
      if (!images_differ && !ages_apart) continue;
      reported_ = true;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::docker);
      f.cause = Cause::deployment_overlap;
      f.count = 2;
      f.process = std::string(service);
      f.detail = fmt::format("two generations of {} running at once ({} up {}, {} {})", service, older.name,
                             timeutil::format_duration(older.age), newer.name,
                             newer.restarting ? "restarting" : "up " + timeutil::format_duration(newer.age));
      out.add(std::move(f));
      return;
    }
    if (rows_.size() < kServices) rows_.push_back(std::move(row));
  }

 private:
  struct Row {
    std::string name, image;
    double age = 0;
    bool restarting = false;
  };

  // A header naming NAMES and STATUS: its columns and where each starts.
  bool header(const Line& line) {
    std::string_view s = line.text;
    if (!text::contains(s, "NAMES") || !text::contains(s, "STATUS")) return false;
    std::vector<Column> cols;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      size_t j = i;
      // A column's name may hold one blank ("CONTAINER ID"); two blanks or a tab end it.
      while (j < s.size() && s[j] != '\t' && !(s[j] == ' ' && (j + 1 >= s.size() || s[j + 1] == ' ' || s[j + 1] == '\t'))) ++j;
      if (j > i) cols.push_back({std::string(s.substr(i, j - i)), i});
      i = j;
    }
    for (const Column& c : cols)
      for (char ch : c.name)
        if (std::islower(static_cast<unsigned char>(ch))) return false;  // a sentence, not a header
    columns_ = std::move(cols);
    header_line_ = line.number;
    rows_.clear();
    return true;
  }

  // The row's cells: on tabs when it has them, else at the header's offsets
  // (the last column runs to the end of the line).
  std::vector<std::string_view> split(std::string_view s) const {
    std::vector<std::string_view> cells;
    if (text::contains(s, "\t")) {
      size_t i = 0;
      while (i <= s.size()) {
        size_t j = s.find('\t', i);
        if (j == std::string_view::npos) j = s.size();
        std::string_view c = text::trim(s.substr(i, j - i));
        if (!c.empty()) cells.push_back(c);
        i = j + 1;
      }
      return cells;
    }
    for (size_t k = 0; k < columns_.size(); ++k) {
      size_t a = columns_[k].start;
      size_t b = k + 1 < columns_.size() ? columns_[k + 1].start : s.size();
      if (a >= s.size()) {
        cells.push_back({});
        continue;
      }
      // A cell must start at its column: the character before it is a blank.
      if (a > 0 && s[a - 1] != ' ') return {};
      cells.push_back(text::trim(s.substr(a, std::min(b, s.size()) - a)));
    }
    return cells;
  }

  std::vector<Column> columns_;
  uint64_t header_line_ = 0;
  std::vector<Row> rows_;
  bool reported_ = false;
};

}  // namespace

const RecognizerEntry kContainerGenerationsEntry{"container_generations", Family::docker, kPatterns,
                                                 [] { return std::unique_ptr<Recognizer>(new ContainerGenerations); }};

}  // namespace aimem
