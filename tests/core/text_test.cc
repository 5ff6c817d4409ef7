#include <gtest/gtest.h>

#include "core/text.h"

namespace aimem::text {
namespace {

TEST(Text, CaselessFind) {
  EXPECT_EQ(ifind("FATAL ERROR: Reached heap limit", "reached HEAP"), 13u);
  EXPECT_EQ(ifind("abc", "abcd"), std::string_view::npos);
  EXPECT_TRUE(icontains("CUDA Out Of Memory", "out of memory"));
}

TEST(Text, GroupedNumbers) {
  std::string_view rest;
  EXPECT_EQ(*parse_grouped_u64("93,760 tokens", &rest), 93760u);
  EXPECT_EQ(rest, " tokens");
  EXPECT_EQ(*parse_grouped_u64("1,2"), 12u);
  EXPECT_FALSE(parse_grouped_u64("tokens"));
}

TEST(Text, QuoteLineIsBoundedAndValidUtf8) {
  std::string bad = "ok \xff\xfe bytes \x01 and caf\xc3\xa9";
  std::string q = quote_line(bad);
  EXPECT_EQ(q, "ok ?? bytes ? and caf\xc3\xa9");
  std::string longline(10000, 'x');
  EXPECT_LE(quote_line(longline, 300).size(), 303u);
  // A multi-byte character is never cut in half.
  std::string euro(200, 'a');
  for (int i = 0; i < 100; ++i) euro += "\xe2\x82\xac";
  std::string cut = quote_line(euro, 301);
  EXPECT_EQ(cut.substr(0, 200), std::string(200, 'a'));
  EXPECT_EQ((cut.size() - 200 - 3) % 3, 0u);
}

TEST(Text, PrintableReplacesEveryTerminalControl) {
  EXPECT_EQ(printable("python3"), "python3");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;x\x07" "evil"), "?[2J?]0;x?evil");  // ESC, BEL
  EXPECT_EQ(printable("a\nb\tc\x7f"), "a?b?c?");                   // a name has no lines
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "?31m");                     // C1 CSI, U+009B
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // UTF-8 stays
  EXPECT_EQ(printable("\xff\xfe"), "??");
  std::string long_name(5000, 'x');
  EXPECT_EQ(printable(long_name).size(), 5000u);  // nothing cut
  EXPECT_EQ(quote_line("x \xc2\x9b" "2J y"), "x ?2J y");
}

TEST(Text, ParseDoubleRejectsGarbage) {
  EXPECT_FALSE(parse_double("."));
  EXPECT_FALSE(parse_double("abc"));
  std::string_view rest;
  EXPECT_DOUBLE_EQ(*parse_double("0.82x", &rest), 0.82);
  EXPECT_EQ(rest, "x");
}

}  // namespace
}  // namespace aimem::text
