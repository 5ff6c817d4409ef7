// The one reader of JSON and YAML that came from outside (deployment files,
// policies, configurations, limits files, model configs, servers' answers,
// stored events): every text is measured by a cheap scan before a parser
// allocates anything, and refused past a bound, so that no input can take a
// command's memory past a few tens of MB.
//
// Why a scan first: the parsers' costs are paid before they could be stopped.
// yaml-cpp tokenizes a flow collection ahead of building it (990,000 nested
// "[" took 278 MB before it gave up with a misleading "bad file") and holds
// about 500 bytes a node; nlohmann's DOM about 16-100 bytes a node, and 75 a
// level of nesting.
//
//   depth   nesting of [ ] { } (outside strings and comments) plus, in YAML,
//           the block levels (indentation, and each "- " or "? " entry);
//           at most Limits::max_depth (128: real manifests and configs nest
//           20-40 deep), else "FILE:LINE:COLUMN: nested too deep (limit 128)".
//   nodes   JSON: [ { : , and one more (at least the values it can hold);
//           YAML: scalars, flow collections and block entries ("- ", "? "),
//           a count the real nodes are at most twice of. At most
//           max_nodes (300,000 JSON, 40,000 YAML a document: ~25 MB either way).
//   bytes   max_bytes of the whole text.
//
// YAML with several documents is read one document at a time (split at the
// "---" and "..." lines, which YAML forbids inside a document's content); the
// bounds hold per document, the bytes for the whole text. A document's node
// marks count lines from its first line (for_each_yaml_document hands that
// line over; errors are given in the file's lines). parse_yaml's document
// has the file's lines.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace aimem::doc {

inline constexpr int kMaxDepth = 128;
inline constexpr uint64_t kMaxJsonNodes = 300000;
inline constexpr uint64_t kMaxYamlNodes = 40000;

struct Limits {
  uint64_t max_bytes = 8ull << 20;
  int max_depth = kMaxDepth;
  uint64_t max_nodes = 0;  // 0: the format's (kMaxJsonNodes, kMaxYamlNodes a document)
};

// What a scan saw. The scan stops at the first place the depth passed the
// limit (deep_line > 0 then).
struct Shape {
  int depth = 0;
  uint64_t nodes = 0;
  size_t deep_line = 0, deep_column = 0;  // 1-based, where the depth first passed the limit
};
Shape scan_json(std::string_view text, int max_depth = kMaxDepth);
Shape scan_yaml(std::string_view text, int max_depth = kMaxDepth);

// The DOM of a JSON text. Errors: "FILE: ... bytes, more than ...",
// "FILE:LINE:COLUMN: nested too deep (limit N)", "FILE: about N JSON values,
// more than ...", "FILE: not valid JSON (at byte B, line L, column C): ...".
Result<nlohmann::json> parse_json(std::string_view text, const std::string& file, const Limits& limits = {});
// The same where a caller only tells JSON from not-JSON (a server's answer):
// discarded (is_discarded()) on any error or bound.
nlohmann::json parse_json_or_discarded(std::string_view text, const Limits& limits = {});
// Whether a JSON text parses, building nothing (documents that are only
// checked): the same errors as parse_json, without the node bound. `offset`
// receives the byte where a syntax error was found.
Result<bool> check_json(std::string_view text, const std::string& file, const Limits& limits = {}, size_t* offset = nullptr);

// The first YAML document of a text (a policy, a configuration); a null node
// for an empty text. Errors as for JSON, with "malformed YAML" for syntax.
Result<YAML::Node> parse_yaml(std::string_view text, const std::string& file, const Limits& limits = {});
// Each non-empty document of a YAML text in turn, with its index among the
// non-empty ones and the file's line (0-based) its marks count from: a node's
// line in the file is first_line + Mark().line. `each` returns false to stop.
// The number of documents seen.
Result<int> for_each_yaml_document(std::string_view text, const std::string& file,
                                   const std::function<bool(const YAML::Node& doc, int index, size_t first_line)>& each,
                                   const Limits& limits = {});
// Whether a YAML text parses, building no nodes (yaml-cpp's event parser).
// A syntax error (not a bound) also fills *syntax when given.
struct SyntaxError {
  size_t line = 0, column = 0;  // 1-based
  std::string what;
};
Result<bool> check_yaml(std::string_view text, const std::string& file, const Limits& limits = {},
                        SyntaxError* syntax = nullptr);

}  // namespace aimem::doc
