// Two versions of one model loaded at once: Triton Inference Server loads a
// new version beside the one serving (its version_policy keeps the old one
// READY until the new one is), so each version holds its own weights on the
// device while the load runs.
//
//   I0120 08:14:02.118372 1 model_lifecycle.cc:473] "loading: detector:3"          (model_repository_manager.cc before 22.x; quotes from 23.x)
//   E0120 08:14:09.771201 1 model_lifecycle.cc:642] "failed to load 'detector' version 3: Internal: ... out of memory ..."
// and another version of the same model still serving, as the server shows it:
//   | detector | 2       | READY  |                                              the start-up model table
//   {"name":"detector","version":"2","state":"READY"}                               POST v2/repository/index
//   successfully loaded 'detector' version 2                                       the load that finished before
//
// A failed load of version V beside version W of the same model READY (W
// not V) is one context fact: runtime_setting with cause deployment_overlap,
// as rollout.cc gives; the diagnosis reads it for a device that ran out.
// Modelled on triton-inference-server/server#3832 and #8413 and
// commaai/miniray#95 (the corpus cases oa-010, fo-019, ga-039).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"failed to load '[^']+' version [0-9]+", kRegex | kContext},
    {"successfully loaded '[^']+' version [0-9]+", kRegex | kContext},
    {"^\\|\\s*[^|\\s]+\\s*\\|\\s*[0-9]+\\s*\\|\\s*READY\\s*\\|", kRegex | kContext},
    {"\"version\":\\s*\"[0-9]+\",\\s*\"state\":\\s*\"READY\"", kRegex | kContext},
};

constexpr size_t kMax = 32;

struct Version {
  std::string model, version;
  uint64_t line;
  Fact fact;  // a failed load's line, for the fact it may become
};

// The value after `label`, without its blanks and quotes.
std::string quoted(std::string_view s, std::string_view label) {
  auto v = text::after(s, label);
  if (!v) return {};
  std::string_view t = text::trim_left(*v);
  if (!t.empty() && (t.front() == '"' || t.front() == '\'')) t.remove_prefix(1);
  return std::string(text::take_until(t, "'\"").substr(0, 128));
}

class ModelVersions final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink&) override {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    if (auto f = text::after(s, "failed to load '")) {
      std::string model(text::take_until(*f, "'").substr(0, 128));
      if (auto v = text::after(*f, "' version ")) add(failed_, model, std::string(text::take_until(*v, ": ")), line);
      return;
    }
    if (auto f = text::after(s, "successfully loaded '")) {
      std::string model(text::take_until(*f, "'").substr(0, 128));
      if (auto v = text::after(*f, "' version ")) add(ready_, model, std::string(text::take_until(*v, ": \"")), line);
      return;
    }
    // Several index records may share one line (the JSON array on one line).
    for (size_t at = s.find("\"name\":"); at != std::string_view::npos; at = s.find("\"name\":", at + 7)) {
      std::string_view rec = s.substr(at, s.find('}', at) == std::string_view::npos ? std::string_view::npos : s.find('}', at) - at);
      if (!text::contains(rec, "\"READY\"")) continue;
      std::string model = quoted(rec, "\"name\":");
      std::string version = quoted(rec, "\"version\":");
      if (!model.empty() && !version.empty()) add(ready_, model, version, line);
    }
    // The start-up table: "| detector | 2 | READY |".
    std::string_view t = text::trim(s);
    if (!t.empty() && t.front() == '|' && text::contains(t, "READY")) {
      auto cells = text::split(t.substr(1), '|');
      if (cells.size() >= 3 && text::trim(cells[2]) == "READY")
        add(ready_, std::string(text::trim(cells[0])), std::string(text::trim(cells[1])), line);
    }
  }

  void finish(FactSink& out) override {
    for (Version& f : failed_)
      for (const Version& r : ready_) {
        if (r.model != f.model || r.version == f.version) continue;
        Fact fact = std::move(f.fact);
        fact.cause = Cause::deployment_overlap;
        fact.count = 2;
        fact.process = f.model.substr(0, 96);
        fact.detail = fmt::format("version {} of model '{}' failed to load while version {} still served (line {})",
                                  f.version.substr(0, 16), fact.process, r.version.substr(0, 16), r.line);
        out.add(std::move(fact));
        return;
      }
  }

 private:
  std::vector<Version> failed_, ready_;

  void add(std::vector<Version>& to, std::string model, std::string version, const Line& line) {
    if (model.empty() || version.empty() || version.size() > 12 || to.size() >= kMax) return;
    for (char c : version)
      if (c < '0' || c > '9') return;
    to.push_back({std::move(model), std::move(version), line.number, make_fact(line, FactKind::runtime_setting, Family::runtime)});
  }
};

}  // namespace

const RecognizerEntry kModelVersionsEntry{"model_versions", Family::runtime, kPatterns,
                                          [] { return std::unique_ptr<Recognizer>(new ModelVersions); }};

}  // namespace aimem
