// The bounded reader of JSON and YAML (core/doc_reader.h): depth and node
// scans that see what the parsers would see (brackets in scalars, quotes,
// comments and block scalars are text), the limits and their messages, and
// YAML documents read one at a time with the file's line numbers.
#include <gtest/gtest.h>

#include <string>

#include "core/doc_reader.h"

namespace aimem::doc {
namespace {

std::string nested_json(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(DocReader, JsonDepthIsCountedOutsideStringsAndRefusedPastTheLimit) {
  EXPECT_EQ(scan_json(R"({"a":[1,{"b":"[[[[\"]]"}]})").depth, 3);
  EXPECT_TRUE(parse_json(nested_json(128), "ok.json").ok());
  auto deep = parse_json(nested_json(129), "deep.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().message.rfind("deep.json:1:129: nested too deep (limit 128)", 0), 0u) << deep.error().message;
  // The issue's input: 990,000 levels, 1.98 MB, refused by the scan alone.
  auto huge = parse_json(nested_json(990000), "huge.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("nested too deep (limit 128)"), std::string::npos);
  EXPECT_TRUE(parse_json_or_discarded(nested_json(990000)).is_discarded());
  auto lines = parse_json("{\n  \"a\":\n" + nested_json(200) + "}", "lines.json");
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.error().message.rfind("lines.json:3:128:", 0), 0u) << lines.error().message;
}

TEST(DocReader, JsonNodesAndBytesAreBoundedAndSyntaxErrorsPlaced) {
  std::string flat = "[";
  for (int i = 0; i < 400000; ++i) flat += "1,";
  flat += "1]";
  auto many = parse_json(flat, "flat.json");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find("more than the 300000"), std::string::npos) << many.error().message;
  Limits small;
  small.max_bytes = 10;
  EXPECT_NE(parse_json("[1,2,3,4,5,6]", "b.json", small).error().message.find("13 bytes, more than the 10 bytes"), std::string::npos);
  auto bad = parse_json("{\"a\":\n  1,,}", "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.json: not valid JSON (at byte 10, line 2, column 5)"), std::string::npos) << bad.error().message;
  size_t at = 0;
  EXPECT_FALSE(check_json("[1,2", "cut.json", {}, &at).ok());
  EXPECT_EQ(at, 4u);
  EXPECT_TRUE(check_json(flat, "flat.json").ok());  // nothing is built: no node bound
}

TEST(DocReader, YamlDepthFollowsBlocksAndFlowsButNotText) {
  EXPECT_EQ(scan_yaml("a:\n  b:\n    c: 1\n").depth, 3);
  EXPECT_EQ(scan_yaml("- - - x\n").depth, 4);
  EXPECT_EQ(scan_yaml("a: [1, {b: [2]}]\n").depth, 4);
  // Brackets that are text: in plain and quoted scalars, comments, block scalars.
  std::string text = "cmd: echo a[b {c\nq: \"[[[[\"\nr: '{{{{'\n# [[[[[[\ns: |\n  [ -f x ] && {\n  [[[[[[[[\nt: x  # [[\n";
  std::string many;
  for (int i = 0; i < 300; ++i) many += text;
  Shape s = scan_yaml(many);
  EXPECT_EQ(s.deep_line, 0u);
  EXPECT_LE(s.depth, 2);
  EXPECT_TRUE(parse_yaml(many, "text.yaml").ok());
  // Block nesting past the limit, by indentation.
  std::string block;
  for (int i = 0; i < 140; ++i) block += std::string(i, ' ') + "k:\n";
  auto deep = parse_yaml(block, "block.yaml");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("block.yaml:129:129: nested too deep (limit 128)"), std::string::npos) << deep.error().message;
  auto flow = parse_yaml("policy:\n  x: " + nested_json(990000) + "\n", "flow.yaml");
  ASSERT_FALSE(flow.ok());
  EXPECT_NE(flow.error().message.find("flow.yaml:2:"), std::string::npos) << flow.error().message;
  EXPECT_NE(flow.error().message.find("nested too deep (limit 128)"), std::string::npos);
}

TEST(DocReader, YamlDocumentsOneAtATimeWithTheFilesLines) {
  const std::string text = "# Source: a\n---\nkind: A\n---\n---\n# empty\n---\nkind: B\nspec:\n  x: 1\n...\n%YAML 1.2\n---\nkind: C\n";
  std::vector<std::pair<std::string, int>> seen;
  auto n = for_each_yaml_document(text, "multi.yaml", [&](const YAML::Node& d, int i, size_t first_line) {
    seen.emplace_back(d["kind"].Scalar(), static_cast<int>(first_line + d.Mark().line) + 1);
    EXPECT_EQ(i, static_cast<int>(seen.size()) - 1);
    return true;
  });
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 3);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], std::make_pair(std::string("A"), 3));
  EXPECT_EQ(seen[1], std::make_pair(std::string("B"), 8));
  EXPECT_EQ(seen[2], std::make_pair(std::string("C"), 14));
  // An error names the file's line, in whichever document.
  auto bad = for_each_yaml_document("kind: A\n---\nkind: B\n  bad: [\n", "bad.yaml", [](const YAML::Node&, int, size_t) { return true; });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.yaml:4:"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("malformed YAML"), std::string::npos);
  // The node bound holds per document: many small documents pass, one large does not.
  std::string docs, one = "items:\n";
  for (int i = 0; i < 30000; ++i) docs += "---\na: " + std::to_string(i) + "\nb: x\n";
  for (int i = 0; i < 50000; ++i) one += "- " + std::to_string(i) + "\n";
  int count = 0;
  EXPECT_TRUE(for_each_yaml_document(docs, "docs.yaml", [&](const YAML::Node&, int, size_t) { return ++count, true; }).ok());
  EXPECT_EQ(count, 30000);
  auto large = for_each_yaml_document(one, "one.yaml", [](const YAML::Node&, int, size_t) { return true; });
  ASSERT_FALSE(large.ok());
  EXPECT_NE(large.error().message.find("one.yaml: about"), std::string::npos) << large.error().message;
  EXPECT_TRUE(check_yaml(one, "one.yaml").ok());  // checked without nodes: no bound
  EXPECT_TRUE(parse_yaml("", "empty.yaml")->IsNull());
}

}  // namespace
}  // namespace aimem::doc

namespace aimem::doc {
namespace {

// Found by structured_fuzzer: yaml-cpp's event parser handed the same
// document over forever after a closed flow collection followed by text.
TEST(DocReader, TextAfterAClosedFlowCollectionEndsTheCheck) {
  SyntaxError where;
  auto r = check_yaml("{\"aimem_lim\":1},\"limits\":[1,2]}\n", "t.yaml", {}, &where);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("t.yaml:1:"), std::string::npos) << r.error().message;
  EXPECT_EQ(where.line, 1u);
  EXPECT_TRUE(check_yaml("a: 1\n---\nb: 2\n---\n---\nc: 3\n", "ok.yaml").ok());
}

}  // namespace
}  // namespace aimem::doc
