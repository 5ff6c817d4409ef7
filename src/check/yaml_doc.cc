#include "check/yaml_doc.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/doc_reader.h"

namespace aimem::check {
namespace {

// Measures a document as a walk that follows aliases would see it, and counts
// the visits such a walk repeats (an alias's expansion). A node is known by
// where it was written and its type, which an alias shares with its anchor;
// each is measured once, so the cost is the document's own nodes, which the
// bounded reader already limited. False once the repeats, all of a file's
// documents together, pass the cap, or a node contains itself.
struct Walk {
  uint64_t repeats = 0;  // the whole file's
  uint64_t cap = 0;
  static constexpr uint64_t kMeasuring = ~uint64_t{0};
  std::unordered_map<uint64_t, uint64_t> size;  // this document's nodes: the visits a walk from each makes

  // The visits a walk from n makes (at most cap + 1), or nullopt.
  std::optional<uint64_t> measure(const YAML::Node& n) {
    const uint64_t key = static_cast<uint64_t>(n.Mark().pos) << 3 | static_cast<uint64_t>(n.Type());
    if (auto it = size.find(key); it != size.end()) {
      if (it->second == kMeasuring) return std::nullopt;  // inside itself
      repeats += it->second;
      if (repeats > cap) return std::nullopt;
      return it->second;
    }
    size[key] = kMeasuring;
    uint64_t total = 1;
    auto add = [&](const YAML::Node& x) {
      auto m = measure(x);
      if (m) total = std::min(total + *m, cap + 1);
      return m.has_value();
    };
    if (n.IsSequence()) {
      for (const auto& x : n)
        if (!add(x)) return std::nullopt;
    } else if (n.IsMap()) {
      for (const auto& kv : n)
        if (!add(kv.first) || !add(kv.second)) return std::nullopt;
    }
    size[key] = total;
    return total;
  }
};

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
  Walk walk;
  walk.cap = max_visits;
  auto n = doc::for_each_yaml_document(
      text, file,
      [&](const YAML::Node& d, int index, size_t first_line) {
        struct Lines {
          explicit Lines(size_t l) { t_first_line = l; }
          ~Lines() { t_first_line = 0; }
        } lines(first_line);
        // One budget for the whole file: documents that each stayed under a
        // per-document cap still added up (twenty of them took a fuzzer's
        // input past its 10 s limit).
        walk.size.clear();
        if (!walk.measure(d)) {
          Loc at = loc_of(d, file);
          bomb = make_error(fmt::format("{}:{}:{}: YAML document {} takes the file past {} nodes repeated through "
                                        "aliases (an alias bomb?); aimem check stops here",
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
