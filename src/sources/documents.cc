// Whole structured documents among the inputs. The line recognizers read every
// input line by line (so a cut excerpt of a pod YAML or of `docker inspect`
// still counts); this reader adds what only the whole document tells:
//  - `docker inspect NAME --format '{{json .HostConfig.Memory}}'` prints one
//    number, the container's memory limit in bytes (0 = none);
//  - an input that is meant to be JSON or YAML but does not parse (truncated,
//    cut) is named with the line and column where it breaks, so the user knows
//    the evidence is partial. It is still read as text.
// Both are checked by the bounded reader (core/doc_reader.h) without building
// a document: JSON with nlohmann's SAX parser, YAML with yaml-cpp's event
// parser, each after its nesting-depth scan; aliases are never expanded here,
// so an alias bomb costs nothing.
#include "sources/documents.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>

#include "core/doc_reader.h"
#include "core/text.h"

namespace aimem {
namespace {


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
    doc::Limits limits;
    limits.max_bytes = UINT64_MAX;  // the input's own bound holds; nothing is built here
    size_t at = SIZE_MAX;
    auto ok = doc::check_json(t, source.name, limits, &at);
    if (ok) {
      result.recognized = true;
    } else if (at == SIZE_MAX) {
      result.problem = ok.error().message + "; read as text";  // nested too deep
    } else {
      size_t offset = static_cast<size_t>(t.data() - content.data()) + at;
      auto [line, col] = text::line_col(content, offset);
      bool truncated = at + 1 >= t.size();
      result.problem = fmt::format("{}: {} JSON at line {}, column {} ({}); the rest was read as text", source.name,
                                   truncated ? "truncated" : "invalid", line, col,
                                   truncated ? "the document ends before it closes" : "unexpected character");
    }
    return result;
  }

  if (looks_like_yaml_document(t)) {
    doc::Limits limits;
    limits.max_bytes = UINT64_MAX;
    doc::SyntaxError syntax;
    auto ok = doc::check_yaml(content, source.name, limits, &syntax);
    if (ok) result.recognized = true;
    else if (syntax.line > 0)
      result.problem = fmt::format("{}: YAML does not parse at line {}, column {} ({}); the rest was read as text", source.name,
                                   syntax.line, syntax.column, syntax.what);
    else result.problem = ok.error().message + "; the rest was read as text";
  }
  return result;
}

}  // namespace aimem
