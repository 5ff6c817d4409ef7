#include "check/yaml_doc.h"

#include <fmt/format.h>

namespace aimem::check {
namespace {

// Counts nodes as a walk that follows aliases would see them; false past the cap.
bool count_nodes(const YAML::Node& n, uint64_t& seen, uint64_t cap) {
  if (++seen > cap) return false;
  if (n.IsSequence()) {
    for (const auto& x : n)
      if (!count_nodes(x, seen, cap)) return false;
  } else if (n.IsMap()) {
    for (const auto& kv : n)
      if (!count_nodes(kv.first, seen, cap) || !count_nodes(kv.second, seen, cap)) return false;
  }
  return true;
}

}  // namespace

Loc loc_of(const YAML::Node& n, const std::string& file) {
  Loc l{file, 0, 0};
  if (!n.IsDefined()) return l;
  YAML::Mark m = n.Mark();
  if (m.is_null()) return l;
  l.line = m.line + 1;
  l.column = m.column + 1;
  return l;
}

YAML::Node child(const YAML::Node& map, const char* key) {
  if (!is_map(map)) return YAML::Node(YAML::NodeType::Undefined);
  YAML::Node v = map[key];
  return v.IsDefined() ? v : YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node child_path(const YAML::Node& root, const std::vector<const char*>& keys) {
  if (keys.empty()) return root;
  YAML::Node n = child(root, keys[0]);
  for (size_t i = 1; i < keys.size(); ++i) {
    YAML::Node next = child(n, keys[i]);
    n.reset(next);
  }
  return n;
}

std::string scalar(const YAML::Node& map, const char* key) {
  YAML::Node v = child(map, key);
  return is_scalar(v) ? v.Scalar() : "";
}

Result<std::vector<YAML::Node>> load_yaml_documents(const std::string& text, const std::string& file,
                                                    uint64_t max_nodes) {
  if (text.size() > kMaxFileBytes)
    return make_error(fmt::format("{}: {} bytes, more than the {} MiB aimem check reads from one file", file,
                                  text.size(), kMaxFileBytes >> 20));
  // Parsing allocates a few hundred bytes per node before any walk can count
  // them, so the nodes the text can hold are bounded first: every node but
  // a document's first starts at one of these characters (an over-count:
  // '-' and ':' also occur inside plain scalars).
  uint64_t starts = 0;
  for (char c : text) starts += c == ',' || c == ':' || c == '-' || c == '\n' || c == '[' || c == '{';
  if (starts > max_nodes)
    return make_error(fmt::format("{}: about {} YAML nodes, more than aimem check reads from one file ({}); split it",
                                  file, starts, max_nodes));
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    return make_error(fmt::format("{}:{}:{}: malformed YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  } catch (const YAML::Exception& e) {
    return make_error(fmt::format("{}: malformed YAML: {}", file, e.what()));
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    uint64_t seen = 0;
    if (!count_nodes(docs[i], seen, max_nodes)) {
      Loc at = loc_of(docs[i], file);
      return make_error(fmt::format("{}:{}:{}: YAML document {} expands to more than {} nodes through its aliases "
                                    "(an alias bomb?); aimem check stops here",
                                    file, at.line, at.column, i + 1, max_nodes));
    }
  }
  return docs;
}

}  // namespace aimem::check
