// The bounded reader of JSON and YAML (see doc_reader.h): the scans, then the
// parsers behind them.
//
// The YAML scan is a lexer of the little YAML needs for nesting: per line, the
// indentation (a stack of the block levels open), the "- " and "? " entries
// that open one more each, and on the rest of the line flow brackets, quoted
// scalars (which may span lines), comments, and block scalars (| or >, whose
// more-indented lines are content and skipped). A bracket counts only where a
// node may start (after indentation, ": ", "- ", "[", "{", ","), so "a[b" in
// a plain scalar is text, as YAML reads it. It over-counts rather than
// under-counts: a wrong guess can only refuse a text nested near the limit.
#include "core/doc_reader.h"

#include "core/text.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace aimem::doc {

namespace {


std::string too_deep(const std::string& file, const Shape& s, int limit) {
  return fmt::format("{}:{}:{}: nested too deep (limit {}); aimem reads at most {} levels of nesting", file,
                     s.deep_line, s.deep_column, limit, limit);
}

Result<bool> check_bytes(std::string_view text, const std::string& file, const Limits& l) {
  if (text.size() > l.max_bytes)
    return make_error(fmt::format("{}: {} bytes, more than the {} aimem reads from such a file", file, text.size(),
                                  l.max_bytes >= (1u << 20) ? fmt::format("{} MiB", l.max_bytes >> 20)
                                                            : fmt::format("{} bytes", l.max_bytes)));
  return true;
}

bool yaml_space(char c) { return c == ' ' || c == '\t'; }

// A document marker: "---" or "..." at column 0, then the end of the line or a blank.
bool marker(std::string_view line, const char* m) {
  return line.size() >= 3 && line.compare(0, 3, m) == 0 && (line.size() == 3 || yaml_space(line[3]) || line[3] == '\r');
}

}  // namespace

Shape scan_json(std::string_view t, int max_depth) {
  Shape s;
  int depth = 0;
  bool in_str = false;
  s.nodes = 1;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
      continue;
    }
    switch (c) {
      case '"': in_str = true; break;
      case '[':
      case '{':
        ++s.nodes;
        if (++depth > s.depth) s.depth = depth;
        if (depth > max_depth) {
          auto [line, col] = text::line_col(t, i);
          s.deep_line = line, s.deep_column = col;
          return s;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      case ',':
      case ':':
        ++s.nodes;
        break;
      default: break;
    }
  }
  return s;
}

// One pass over the bytes with its quote, flow and block state in locals:
// the cases share that state, and cut into functions they would pass it all
// around (kept whole on purpose, ~125 lines).
Shape scan_yaml(std::string_view t, int max_depth) {
  Shape s;
  std::vector<size_t> blocks;  // indentation of each open block level
  int flow = 0;
  enum class Quote { none, dq, sq } quote = Quote::none;
  bool block_scalar = false;
  size_t block_scalar_indent = 0;
  bool node_start = true;
  size_t line_no = 0;
  auto deeper = [&](size_t col) {
    const int d = static_cast<int>(blocks.size()) + flow;
    if (d > s.depth) s.depth = d;
    if (d > max_depth) {
      s.deep_line = line_no;
      s.deep_column = col + 1;
      return true;
    }
    return false;
  };
  for (size_t at = 0; at <= t.size();) {
    size_t eol = t.find('\n', at);
    if (eol == std::string_view::npos) eol = t.size();
    std::string_view line = t.substr(at, eol - at);
    at = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t p = 0;
    while (p < line.size() && line[p] == ' ') ++p;
    const size_t indent = p;
    const bool blank = p == line.size() || (line[p] == '#' && quote == Quote::none);
    if (quote == Quote::none && flow == 0) {
      if (block_scalar) {
        if (blank || indent > block_scalar_indent) {
          if (eol == t.size()) break;
          continue;
        }
        block_scalar = false;
      }
      if (blank) {
        if (eol == t.size()) break;
        continue;
      }
      if (indent == 0 && (marker(line, "---") || marker(line, "..."))) {
        blocks.clear();
        p = 3;
      } else {
        while (!blocks.empty() && blocks.back() > indent) blocks.pop_back();
        if (blocks.empty() || blocks.back() < indent) blocks.push_back(indent);
        if (deeper(indent)) return s;
        // "- - x", "? a": each entry indicator opens a level at the column after it.
        while (p < line.size() && (line[p] == '-' || line[p] == '?') && (p + 1 == line.size() || yaml_space(line[p + 1]))) {
          ++s.nodes;
          ++p;
          while (p < line.size() && yaml_space(line[p])) ++p;
          blocks.push_back(p);
          if (deeper(p)) return s;
        }
      }
      node_start = true;
    }
    for (; p < line.size(); ++p) {
      const char c = line[p];
      if (quote == Quote::dq) {
        if (c == '\\') ++p;
        else if (c == '"') quote = Quote::none, node_start = false;
        continue;
      }
      if (quote == Quote::sq) {
        if (c == '\'') {
          if (p + 1 < line.size() && line[p + 1] == '\'') ++p;
          else quote = Quote::none, node_start = false;
        }
        continue;
      }
      if (c == '#' && (p == 0 || yaml_space(line[p - 1]))) break;  // a comment to the end of the line
      if (yaml_space(c)) continue;
      if (node_start) {
        if (c == '"' || c == '\'') {
          quote = c == '"' ? Quote::dq : Quote::sq;
          ++s.nodes;
          continue;
        }
        if (c == '[' || c == '{') {
          ++flow;
          ++s.nodes;
          if (deeper(p)) return s;
          continue;  // still where a node may start
        }
        if ((c == '|' || c == '>') && flow == 0) {
          block_scalar = true;
          block_scalar_indent = indent;
          ++s.nodes;
          break;
        }
        if (c == '&' || c == '!') {  // an anchor or a tag before the node: skip the word
          while (p + 1 < line.size() && !yaml_space(line[p + 1])) ++p;
          continue;
        }
        if (flow > 0 && (c == ']' || c == '}' || c == ',')) {
          // an empty entry or the end of the collection: handled below
        } else {
          ++s.nodes;
          node_start = false;
          if (flow == 0) continue;
        }
      }
      if (flow > 0) {
        if (c == '[' || c == '{') {  // a flow plain scalar cannot hold them: count it open
          ++flow;
          if (deeper(p)) return s;
          node_start = true;
        } else if (c == ']' || c == '}') {
          --flow;
          node_start = false;
        } else if (c == ',') {
          node_start = true;
        } else if (c == ':' && (p + 1 == line.size() || yaml_space(line[p + 1]) || std::string_view(",[]{}").find(line[p + 1]) != std::string_view::npos)) {
          node_start = true;
        }
      } else if (c == ':' && (p + 1 == line.size() || yaml_space(line[p + 1]))) {
        node_start = true;
      }
    }
    if (eol == t.size()) break;
  }
  return s;
}

namespace {

Result<bool> check_shape(const Shape& s, std::string_view text, const std::string& file, const Limits& l, bool yaml,
                         bool count_nodes) {
  if (s.deep_line > 0) return make_error(too_deep(file, s, l.max_depth));
  const uint64_t max_nodes = l.max_nodes ? l.max_nodes : yaml ? kMaxYamlNodes : kMaxJsonNodes;
  if (count_nodes && s.nodes > max_nodes)
    return make_error(fmt::format("{}: about {} {} values{}, more than the {} aimem reads ({} bytes); split it", file,
                                  s.nodes, yaml ? "YAML" : "JSON", yaml ? " in one document" : "", max_nodes, text.size()));
  return true;
}

// A SAX handler that builds nothing: check_json.
struct NullSax : nlohmann::json_sax<nlohmann::json> {
  size_t error_at = 0;
  std::string what;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_at = position;
    what = e.what();
    return false;
  }
};

std::string json_error(std::string_view text, const std::string& file, size_t byte, const std::string& what) {
  // nlohmann counts bytes from 1; its message repeats the position.
  const size_t offset = byte > 0 ? byte - 1 : 0;
  auto [line, col] = text::line_col(text, offset);
  std::string why = what;
  if (auto colon = why.find("syntax error"); colon != std::string::npos) why = why.substr(colon);
  return fmt::format("{}: not valid JSON (at byte {}, line {}, column {}){}: {}", file, offset, line, col,
                     offset >= text.size() ? ", the text ends before it closes" : "", why);
}

}  // namespace

Result<nlohmann::json> parse_json(std::string_view text, const std::string& file, const Limits& l) {
  if (auto b = check_bytes(text, file, l); !b) return b.error();
  if (auto s = check_shape(scan_json(text, l.max_depth), text, file, l, false, true); !s) return s.error();
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(json_error(text, file, e.byte, e.what()));
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: not valid JSON: {}", file, e.what()));
  }
}

nlohmann::json parse_json_or_discarded(std::string_view text, const Limits& l) {
  if (text.size() > l.max_bytes) return nlohmann::json(nlohmann::json::value_t::discarded);
  Shape s = scan_json(text, l.max_depth);
  if (s.deep_line > 0 || s.nodes > (l.max_nodes ? l.max_nodes : kMaxJsonNodes)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

Result<bool> check_json(std::string_view text, const std::string& file, const Limits& l, size_t* offset) {
  if (auto b = check_bytes(text, file, l); !b) return b.error();
  if (auto s = check_shape(scan_json(text, l.max_depth), text, file, l, false, false); !s) return s.error();
  NullSax sax;
  if (nlohmann::json::sax_parse(text.begin(), text.end(), &sax)) return true;
  if (offset) *offset = sax.error_at > 0 ? sax.error_at - 1 : 0;
  return make_error(json_error(text, file, sax.error_at, sax.what));
}

namespace {

std::string yaml_error(const std::string& file, const YAML::Exception& e, size_t first_line = 0) {
  if (e.mark.is_null()) return fmt::format("{}: malformed YAML: {}", file, e.msg);
  return fmt::format("{}:{}:{}: malformed YAML: {}", file, first_line + e.mark.line + 1, e.mark.column + 1, e.msg);
}

// The documents of a YAML text: [begin, end) byte ranges and the line each
// begins on (0-based). A "---" line begins a document, a "..." line ends one;
// a piece of only comments, blank lines and directives is kept with the next.
struct Piece {
  size_t begin, end, line;
};
std::vector<Piece> split_documents(std::string_view t) {
  std::vector<Piece> out;
  size_t begin = 0, begin_line = 0, line_no = 0;
  bool content = false;  // the current piece has a line that is not a comment, blank or directive
  for (size_t at = 0; at < t.size();) {
    size_t eol = t.find('\n', at);
    const size_t next = eol == std::string_view::npos ? t.size() : eol + 1;
    std::string_view line = t.substr(at, next - at);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (marker(line, "---")) {
      if (content) {
        out.push_back({begin, at, begin_line});
        begin = at, begin_line = line_no;
      }
      content = true;  // the marker's own line may hold the document ("--- [a]")
    } else if (marker(line, "...")) {
      out.push_back({begin, next, begin_line});
      begin = next, begin_line = line_no + 1;
      content = false;
    } else {
      size_t p = line.find_first_not_of(" \t");
      if (p != std::string_view::npos && line[p] != '#' && !(p == 0 && line[0] == '%')) content = true;
    }
    at = next;
    ++line_no;
  }
  if (begin < t.size()) out.push_back({begin, t.size(), begin_line});
  return out;
}

// One document piece. With `pad`, parsed after as many empty lines as came
// before it, so that its marks are the file's (one document: parse_yaml);
// without, its marks count from its first line (padding every document of a
// long file was quadratic: 30,000 small documents took 90 s).
Result<YAML::Node> load_piece(std::string_view t, const Piece& p, const std::string& file, const Limits& l, bool pad) {
  std::string_view text = t.substr(p.begin, p.end - p.begin);
  Shape s = scan_yaml(text, l.max_depth);
  s.deep_line += s.deep_line > 0 ? p.line : 0;
  if (auto ok = check_shape(s, text, file, l, true, true); !ok) return ok.error();
  std::string padded(pad ? p.line : 0, '\n');
  padded.append(text);
  try {
    return YAML::Load(padded);
  } catch (const YAML::Exception& e) {
    return make_error(yaml_error(file, e, pad ? 0 : p.line));
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: malformed YAML: {}", file, e.what()));
  }
}

struct NullEvents : YAML::EventHandler {
  YAML::Mark start = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& m) override { start = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

Result<YAML::Node> parse_yaml(std::string_view text, const std::string& file, const Limits& l) {
  if (auto b = check_bytes(text, file, l); !b) return b.error();
  for (const Piece& p : split_documents(text)) {
    auto doc = load_piece(text, p, file, l, /*pad=*/true);
    if (!doc || !doc->IsNull()) return doc;  // the first document (YAML::Load's), or its error
  }
  return YAML::Node(YAML::NodeType::Null);
}

Result<int> for_each_yaml_document(std::string_view text, const std::string& file,
                                   const std::function<bool(const YAML::Node&, int, size_t)>& each, const Limits& l) {
  if (auto b = check_bytes(text, file, l); !b) return b.error();
  int index = 0;
  for (const Piece& p : split_documents(text)) {
    auto doc = load_piece(text, p, file, l, /*pad=*/false);
    if (!doc) return doc.error();
    if (!doc->IsDefined() || doc->IsNull()) continue;
    if (!each(*doc, index++, p.line)) break;
  }
  return index;
}

Result<bool> check_yaml(std::string_view text, const std::string& file, const Limits& l, SyntaxError* syntax) {
  if (auto b = check_bytes(text, file, l); !b) return b.error();
  for (const Piece& p : split_documents(text)) {
    Shape s = scan_yaml(text.substr(p.begin, p.end - p.begin), l.max_depth);
    s.deep_line += s.deep_line > 0 ? p.line : 0;
    if (auto ok = check_shape(s, text, file, l, true, false); !ok) return ok.error();
  }
  std::istringstream in{std::string(text)};
  try {
    YAML::Parser parser(in);
    NullEvents events;
    // yaml-cpp can report a document again and again without reading on
    // (text after a closed flow collection: '{a: 1},b'): a document that
    // starts where the last one did is the end, and an error.
    int last = 0;
    for (size_t n = 0; parser.HandleNextDocument(events); ++n) {
      if ((n > 0 && events.start.pos == last) || n > text.size()) {
        if (syntax) *syntax = SyntaxError{size_t(events.start.line) + 1, size_t(events.start.column) + 1, "text after the end of the document"};
        return make_error(fmt::format("{}:{}:{}: malformed YAML: text after the end of the document", file,
                                      events.start.line + 1, events.start.column + 1));
      }
      last = events.start.pos;
    }
  } catch (const YAML::Exception& e) {
    if (syntax) *syntax = SyntaxError{e.mark.is_null() ? 0 : size_t(e.mark.line) + 1, e.mark.is_null() ? 0 : size_t(e.mark.column) + 1, e.msg};
    return make_error(yaml_error(file, e));
  } catch (const std::exception& e) {
    if (syntax) *syntax = SyntaxError{0, 0, e.what()};
    return make_error(fmt::format("{}: malformed YAML: {}", file, e.what()));
  }
  return true;
}

}  // namespace aimem::doc
