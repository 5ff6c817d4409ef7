// Loading a YAML deployment file for `aimem check`, with the guards untrusted
// YAML needs: the bounded reader's (core/doc_reader.h: bytes, nesting depth
// and nodes per document, checked before yaml-cpp allocates; documents read
// one at a time) and a cap on the nodes a walk repeats through aliases, all
// of a file's documents together.
// yaml-cpp shares the node an alias names (so loading an "alias bomb" is
// cheap) but every walk over it expands the aliases, which is exponential in
// the nesting (billion laughs); a walk that counts its repeat visits and stops
// at the cap turns that into an error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "check/workload.h"
#include "core/result.h"

namespace aimem::check {

inline constexpr uint64_t kMaxFileBytes = 8ULL << 20;     // helm template output of a large chart is ~1-3 MiB
// Repeat visits of a walk that expands aliases, all of a file's documents
// together (first visits are bounded by doc_reader.h's limits).
inline constexpr uint64_t kMaxNodesPerFile = 1000000;

// Each non-empty document of a multi-document YAML text in turn, with its
// index; only one document's nodes are held at a time. Errors name
// file:line:column (1-based) and what was wrong; an alias bomb names the
// document that took the file past max_visits.
Result<int> read_yaml_documents(const std::string& text, const std::string& file,
                                const std::function<void(const YAML::Node& doc, int index)>& each,
                                uint64_t max_visits = kMaxNodesPerFile);
// All of them at once (small texts; tests).
Result<std::vector<YAML::Node>> load_yaml_documents(const std::string& text, const std::string& file,
                                                    uint64_t max_visits = kMaxNodesPerFile);

// Where a node was written (1-based), in `file` (inside read_yaml_documents'
// `each`, counted from the document's first line).
Loc loc_of(const YAML::Node& n, const std::string& file);

// Safe accessors. yaml-cpp's const operator[] returns an invalid node for a
// missing key, on which Type() (and so IsMap()) throws; and assigning one
// Node to another rebinds the tree it came from. These never throw and never
// assign: a missing key gives an undefined node.
inline bool is_map(const YAML::Node& n) { return n.IsDefined() && n.IsMap(); }
inline bool is_seq(const YAML::Node& n) { return n.IsDefined() && n.IsSequence(); }
inline bool is_scalar(const YAML::Node& n) { return n.IsDefined() && n.IsScalar(); }
YAML::Node child(const YAML::Node& map, const char* key);
YAML::Node child_path(const YAML::Node& root, const std::vector<const char*>& keys);

// The scalar of a map's key, or "" when absent / not a scalar.
std::string scalar(const YAML::Node& map, const char* key);

}  // namespace aimem::check
