// A memory limit lowered in a diff pasted beside the kill (a CI config, a
// Helm values file, a compose file, a unit's drop-in), as git and diff print
// it:
//
//   @@ -41,9 +41,9 @@ resources:
//      limits:
//   -      memory: 4Gi
//   +      memory: 1536Mi
//   -  mem_limit: 2g                 (compose)        -MemoryMax=8G   (systemd)
//   +  mem_limit: 512m                                +MemoryMax=2G
//
// A removed line with the setting and an added one within a few lines after
// it, the new value lower: context (runtime_setting, detail "memory limit
// lowered from ... to ...", limit the new value). The diagnosis reads a kill
// at that limit as the limit set below the workload's need. Quantities are
// Kubernetes' (Mi, Gi, M, G), compose's (m, g) or systemd's (M, G).
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"^[-+]\\s*(memory|mem_limit|MemoryMax|MemoryLimit)\\s*[:=]\\s*\"?[0-9]", kRegex | kContext},
};

constexpr uint64_t kPairLines = 4;

// The value of "memory: 4Gi", "mem_limit: 512m", "MemoryMax=2G" on a diff
// line (after its '-' or '+'), or nullopt.
std::optional<uint64_t> value_of(std::string_view s) {
  s = text::trim_left(s.substr(1));
  size_t sep = s.find_first_of(":=");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view key = text::trim(s.substr(0, sep));
  if (key != "memory" && key != "mem_limit" && key != "MemoryMax" && key != "MemoryLimit") return std::nullopt;
  std::string_view v = text::trim(s.substr(sep + 1));
  if (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
  v = text::take_until(v, "\"' #");
  if (auto q = units::parse_k8s_quantity(v); q && *q > 0) return q;
  if (auto b = platform::parse_binary_size(v); b && *b > 0) return b;
  return std::nullopt;
}

class LimitChange final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (s.empty() || (s[0] != '-' && s[0] != '+') || text::starts_with(s, "---") || text::starts_with(s, "+++")) return;
    auto v = value_of(s);
    if (!v) return;
    if (s[0] == '-') {
      old_ = v, old_line_ = line.number;
      return;
    }
    if (!old_ || line.number > old_line_ + kPairLines || reported_) return;
    if (*v < *old_) {
      reported_ = true;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::runtime);
      f.limit = v;
      f.detail = fmt::format("memory limit lowered from {} to {}", units::format_bytes(*old_), units::format_bytes(*v));
      out.add(std::move(f));
    }
    old_.reset();
  }

 private:
  std::optional<uint64_t> old_;
  uint64_t old_line_ = 0;
  bool reported_ = false;
};

}  // namespace

const RecognizerEntry kLimitChangeEntry{"limit_change", Family::runtime, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new LimitChange); }};

}  // namespace aimem
