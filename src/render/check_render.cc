#include "render/check_render.h"

#include <cctype>
#include <map>
#include <fmt/format.h>

#include "core/text.h"

namespace aimem::check {
namespace {

const std::string kCommandLine = "<command line>";

// File names, keys and values quoted in messages come from the files checked.
std::string where(const Loc& at) {
  if (at.line <= 0) return text::printable(at.file);
  return fmt::format("{}:{}:{}", text::printable(at.file), at.line, at.column > 0 ? at.column : 1);
}

nlohmann::json loc_json(const Loc& at) {
  nlohmann::json j;
  j["file"] = at.file;
  j["line"] = at.line > 0 ? nlohmann::json(at.line) : nlohmann::json(nullptr);
  j["column"] = at.column > 0 ? nlohmann::json(at.column) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json finding_json(const Finding& f) {
  nlohmann::json j;
  j["rule"] = f.rule;
  j["severity"] = std::string(to_string(f.severity));
  j.update(loc_json(f.at));
  j["message"] = f.message;
  j["fix"] = f.fix;
  if (!f.suppressed_because.empty()) j["reason"] = f.suppressed_because;
  return j;
}

// RFC 3986: a path as a relative (or absolute) URI reference.
std::string uri_of(const std::string& path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("-._~/").find(char(c)) != std::string_view::npos) {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string level(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kWarning ? "warning" : "note";
}

nlohmann::json sarif_locations(const Loc& at) {
  nlohmann::json locs = nlohmann::json::array();
  if (at.file == kCommandLine || at.file.empty()) return locs;
  nlohmann::json phys;
  phys["artifactLocation"]["uri"] = uri_of(at.file);
  if (at.line > 0) {
    phys["region"]["startLine"] = at.line;
    if (at.column > 0) phys["region"]["startColumn"] = at.column;
  }
  locs.push_back({{"physicalLocation", phys}});
  return locs;
}

}  // namespace

std::string render_text(const Report& r, bool color) {
  std::string out;
  for (const Finding& f : r.violations) {
    std::string_view sev = to_string(f.severity);
    out += fmt::format("{}: {}: {} [{}]\n", where(f.at),
                       text::paint(color, f.severity == Severity::kError ? "31;1" : f.severity == Severity::kWarning ? "33;1" : "36;1", sev),
                       text::printable(f.message), f.rule);
    if (!f.fix.empty()) out += fmt::format("    fix: {}\n", text::printable(f.fix));
  }
  for (const Note& n : r.notes)
    out += fmt::format("{}: {}: {}{}\n", where(n.at), text::paint(color, "36;1", "note"), text::printable(n.message),
                       n.rule.empty() ? "" : " [" + n.rule + "]");
  out += fmt::format("{} file{} checked: {} error{}, {} warning{}, {} suppressed, {} note{}\n", r.files_checked.size(),
                     r.files_checked.size() == 1 ? "" : "s", r.errors(), r.errors() == 1 ? "" : "s", r.warnings(),
                     r.warnings() == 1 ? "" : "s", r.suppressed.size(), r.notes.size(), r.notes.size() == 1 ? "" : "s");
  return out;
}

nlohmann::json render_json(const Report& r) {
  nlohmann::json j;
  j["violations"] = nlohmann::json::array();
  for (const Finding& f : r.violations) j["violations"].push_back(finding_json(f));
  j["suppressed"] = nlohmann::json::array();
  for (const Finding& f : r.suppressed) j["suppressed"].push_back(finding_json(f));
  j["notes"] = nlohmann::json::array();
  for (const Note& n : r.notes) {
    nlohmann::json x;
    x["rule"] = n.rule.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.rule);
    x.update(loc_json(n.at));
    x["message"] = n.message;
    j["notes"].push_back(x);
  }
  j["files_checked"] = r.files_checked;
  j["summary"] = {{"errors", r.errors()},
                  {"warnings", r.warnings()},
                  {"suppressed", r.suppressed.size()},
                  {"notes", r.notes.size()}};
  return j;
}

nlohmann::json render_sarif(const Report& r) {
  nlohmann::json rules = nlohmann::json::array();
  std::map<std::string, size_t> index;
  for (const Rule& rule : rule_table()) {
    index[rule.id] = rules.size();
    rules.push_back({{"id", rule.id},
                     {"shortDescription", {{"text", rule.title}}},
                     {"fullDescription", {{"text", rule.help}}},
                     {"help", {{"text", rule.help}}},
                     {"defaultConfiguration", {{"level", level(rule.severity)}}}});
  }
  nlohmann::json results = nlohmann::json::array();
  auto add = [&](const Finding& f) {
    std::string text = f.message;
    if (f.at.file == kCommandLine && f.at.column > 0) text += fmt::format(" (command line, column {})", f.at.column);
    if (!f.fix.empty()) text += ". Fix: " + f.fix;
    nlohmann::json res = {{"ruleId", f.rule},
                          {"level", level(f.severity)},
                          {"message", {{"text", text}}},
                          {"locations", sarif_locations(f.at)}};
    if (auto it = index.find(f.rule); it != index.end()) res["ruleIndex"] = it->second;
    if (!f.suppressed_because.empty())
      res["suppressions"] = nlohmann::json::array({{{"kind", "inSource"}, {"justification", f.suppressed_because}}});
    results.push_back(res);
  };
  for (const Finding& f : r.violations) add(f);
  for (const Finding& f : r.suppressed) add(f);
  nlohmann::json notifications = nlohmann::json::array();
  for (const Note& n : r.notes) {
    nlohmann::json x = {{"level", "note"}, {"message", {{"text", n.message}}}};
    if (auto locs = sarif_locations(n.at); !locs.empty()) x["locations"] = locs;
    notifications.push_back(x);
  }
  nlohmann::json artifacts = nlohmann::json::array();
  for (const std::string& f : r.files_checked)
    if (f != "-") artifacts.push_back({{"location", {{"uri", uri_of(f)}}}});
  nlohmann::json run = {
      {"tool", {{"driver", {{"name", "aimem"}, {"version", kToolVersion}, {"informationUri", kInformationUri}, {"rules", rules}}}}},
      {"invocations", nlohmann::json::array({{{"executionSuccessful", true}, {"toolExecutionNotifications", notifications}}})},
      {"artifacts", artifacts},
      {"results", results}};
  return {{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", nlohmann::json::array({run})}};
}

}  // namespace aimem::check
