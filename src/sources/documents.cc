// Whole structured documents among the inputs. The line recognizers read every
// input line by line (so a cut excerpt of a pod YAML or of `docker inspect`
// still counts); this reader adds what only the whole document tells:
//  - `docker inspect NAME --format '{{json .HostConfig.Memory}}'` prints one
//    number, the container's memory limit in bytes (0 = none);
//  - an input that is meant to be JSON or YAML but does not parse (truncated,
//    cut) is named with the line and column where it breaks, so the user knows
//    the evidence is partial. It is still read as text.
// YAML is checked with yaml-cpp after a nesting-depth check (deeply nested
// flow collections overflow recursive parsers); aliases are never expanded
// here, so an alias bomb costs nothing.
#include "sources/documents.h"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace aimem {
namespace {

constexpr int kMaxNesting = 256;

// Line and column of a byte offset.
std::pair<size_t, size_t> line_col(std::string_view s, size_t offset) {
  offset = std::min(offset, s.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (s[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return {line, col};
}

int max_bracket_depth(std::string_view s) {
  int depth = 0, max = 0;
  bool in_str = false;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == quote) in_str = false;
      continue;
    }
    if (c == '"' || c == '\'') in_str = true, quote = c;
    else if (c == '[' || c == '{') max = std::max(max, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return max;
}

bool looks_like_yaml_document(std::string_view t) {
  for (std::string_view p : {"apiVersion:", "kind:", "---", "metadata:", "status:", "items:", "spec:"})
    if (text::starts_with(t, p)) return true;
  return false;
}

}  // namespace

DocumentResult read_document(std::string_view content, const SourceContext& source, FactSink& sink) {
  DocumentResult result;
  std::string_view t = text::trim(content);
  if (t.empty()) return result;

  if (t.size() <= 20 && t.find_first_not_of("0123456789") == std::string_view::npos) {
    result.recognized = true;
    auto v = text::parse_u64(t);
    Line line{t, 1, {}, &source};
    Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
    f.detail = "HostConfig.Memory";
    if (v && *v > 0) {
      f.limit = *v;
      sink.add(std::move(f));
      Fact p = make_fact(line, FactKind::platform, Family::docker);
      p.detail = "docker";
      sink.add(std::move(p));
    }
    return result;
  }

  // JSON: an object, or an array of objects/arrays/strings. "[  518.0506] ..."
  // (dmesg) and "[Mon Jan 26 ...] ..." (dmesg -T) also start with '['.
  auto json_array = [&] {
    if (t[0] != '[') return false;
    std::string_view r = text::trim_left(t.substr(1));
    return !r.empty() && (r[0] == '{' || r[0] == '[' || r[0] == '"' || r[0] == ']');
  };
  if (t[0] == '{' || json_array()) {
    // One JSON document (docker inspect, kubectl -o json). JSON lines
    // (journalctl -o json) are many documents: those are read line by line.
    size_t first_nl = t.find('\n');
    std::string_view first_line = first_nl == std::string_view::npos ? t : t.substr(0, first_nl);
    if (t[0] == '{' && first_line.size() > 2 && nlohmann::json::accept(first_line)) return result;  // JSON lines
    if (max_bracket_depth(t) > kMaxNesting) {
      result.problem = fmt::format("{}: JSON nested deeper than {} levels; read as text", source.name, kMaxNesting);
      return result;
    }
    try {
      auto j = nlohmann::json::parse(t);
      result.recognized = true;
    } catch (const nlohmann::json::parse_error& e) {
      size_t offset = static_cast<size_t>(t.data() - content.data()) + (e.byte > 0 ? e.byte - 1 : 0);
      auto [line, col] = line_col(content, offset);
      bool truncated = e.byte >= t.size();
      result.problem = fmt::format("{}: {} JSON at line {}, column {} ({}); the rest was read as text", source.name,
                                   truncated ? "truncated" : "invalid", line, col,
                                   truncated ? "the document ends before it closes" : "unexpected character");
    }
    return result;
  }

  if (looks_like_yaml_document(t)) {
    if (max_bracket_depth(t) > kMaxNesting) {
      result.problem = fmt::format("{}: YAML nested deeper than {} levels; read as text", source.name, kMaxNesting);
      return result;
    }
    try {
      std::vector<YAML::Node> docs = YAML::LoadAll(std::string(content));
      result.recognized = !docs.empty();
    } catch (const YAML::Exception& e) {
      result.problem = fmt::format("{}: YAML does not parse at line {}, column {} ({}); the rest was read as text", source.name,
                                   e.mark.line + 1, e.mark.column + 1, e.msg);
    } catch (const std::exception& e) {
      result.problem = fmt::format("{}: YAML does not parse ({}); read as text", source.name, e.what());
    }
  }
  return result;
}

}  // namespace aimem
