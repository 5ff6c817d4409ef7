#include "check/yaml_doc.h"

#include <fmt/format.h>

#include <optional>

#include "core/doc_reader.h"

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

namespace {
// The file's line the document being read starts on (doc::for_each_yaml_document
// gives marks from there): set by read_yaml_documents while it hands a document over.
thread_local size_t t_first_line = 0;
}  // namespace

Loc loc_of(const YAML::Node& n, const std::string& file) {
  Loc l{file, 0, 0};
  if (!n.IsDefined()) return l;
  YAML::Mark m = n.Mark();
  if (m.is_null()) return l;
  l.line = static_cast<int>(t_first_line) + m.line + 1;
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

Result<int> read_yaml_documents(const std::string& text, const std::string& file,
                                const std::function<void(const YAML::Node&, int)>& each, uint64_t max_visits) {
  doc::Limits limits;
  limits.max_bytes = kMaxFileBytes;
  std::optional<Error> bomb;
  auto n = doc::for_each_yaml_document(
      text, file,
      [&](const YAML::Node& d, int index, size_t first_line) {
        struct Lines {
          explicit Lines(size_t l) { t_first_line = l; }
          ~Lines() { t_first_line = 0; }
        } lines(first_line);
        uint64_t seen = 0;
        if (!count_nodes(d, seen, max_visits)) {
          Loc at = loc_of(d, file);
          bomb = make_error(fmt::format("{}:{}:{}: YAML document {} expands to more than {} nodes through its aliases "
                                        "(an alias bomb?); aimem check stops here",
                                        file, at.line, at.column, index + 1, max_visits));
          return false;
        }
        each(d, index);
        return true;
      },
      limits);
  if (bomb) return *bomb;
  return n;
}

Result<std::vector<YAML::Node>> load_yaml_documents(const std::string& text, const std::string& file,
                                                    uint64_t max_visits) {
  std::vector<YAML::Node> docs;
  auto n = read_yaml_documents(text, file, [&](const YAML::Node& d, int) { docs.push_back(d); }, max_visits);
  if (!n) return n.error();
  return docs;
}

}  // namespace aimem::check
