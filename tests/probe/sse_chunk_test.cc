// parse_chunk's streaming (SAX) reading on chunks where a reader that only
// looks for key names would go wrong: the same names deeper down or in the
// second choice, repeated keys (the last one counts, as in the document
// reading it replaced), fields of the wrong type, errors of every shape,
// and input that is not one JSON object.
#include <gtest/gtest.h>

#include <string>

#include "probe/sse.h"

namespace aimem::probe {
namespace {

StreamChunk ok(const std::string& data, ChunkApi api = ChunkApi::completions) {
  auto c = parse_chunk(data, api);
  EXPECT_TRUE(c) << data;
  return c.value_or(StreamChunk{});
}

TEST(ProbeSseChunk, OnlyTheFirstChoiceAndOnlyItsOwnFieldsCount) {
  auto c = ok(R"({"x":{"text":"no","usage":{"prompt_tokens":1}},"choices":[{"logprobs":{"text":"no","finish_reason":"stop"},)"
              R"("text":"yes","finish_reason":null},{"text":"second","finish_reason":"stop"}]})");
  EXPECT_EQ(c.text, "yes");
  EXPECT_FALSE(c.finished);
  EXPECT_TRUE(c.has_choices);
  EXPECT_FALSE(c.prompt_tokens);

  auto chat = ok(R"({"choices":[{"text":"not chat","delta":{"role":"assistant","content":"hi","x":{"content":"no"}}}]})",
                 ChunkApi::chat);
  EXPECT_EQ(chat.text, "hi");
  // completions reads "text", never delta.content
  EXPECT_EQ(ok(R"({"choices":[{"delta":{"content":"hi"}}]})").text, "");
  // A first choice that is not an object gives no text even if the second has some.
  auto odd = ok(R"({"choices":[3,{"text":"b"}]})");
  EXPECT_EQ(odd.text, "");
  EXPECT_TRUE(odd.has_choices);
}

TEST(ProbeSseChunk, DeltaBeforeMessageAndTheLastRepeatedKeyWins) {
  EXPECT_EQ(ok(R"({"choices":[{"message":{"content":"m"},"delta":{"content":"d"}}]})", ChunkApi::chat).text, "d");
  // A delta without content still wins over the message (it is the stream's shape).
  EXPECT_EQ(ok(R"({"choices":[{"message":{"content":"m"},"delta":{}}]})", ChunkApi::chat).text, "");
  EXPECT_EQ(ok(R"({"choices":[{"delta":"not an object","message":{"content":"m"}}]})", ChunkApi::chat).text, "m");
  EXPECT_EQ(ok(R"({"choices":[{"text":"a","text":"b"}]})").text, "b");
  EXPECT_EQ(ok(R"({"choices":[{"text":"a","text":7}]})").text, "");
  EXPECT_TRUE(ok(R"({"choices":[{"finish_reason":null,"finish_reason":"stop"}]})").finished);
  EXPECT_FALSE(ok(R"({"choices":[{"finish_reason":"stop","finish_reason":null}]})").finished);
  auto again = ok(R"({"choices":[{"text":"a"}],"choices":{}})");
  EXPECT_FALSE(again.has_choices);
  EXPECT_EQ(again.text, "");
  auto usage = ok(R"({"usage":{"prompt_tokens":5,"completion_tokens":2},"usage":{"prompt_tokens":9}})");
  EXPECT_EQ(usage.prompt_tokens, 9);
  EXPECT_FALSE(usage.completion_tokens);
}

TEST(ProbeSseChunk, UsageNumbersMustBeIntegers) {
  auto c = ok(R"({"choices":[],"usage":{"prompt_tokens":2.5,"completion_tokens":"4"}})");
  EXPECT_FALSE(c.prompt_tokens);
  EXPECT_FALSE(c.completion_tokens);
  EXPECT_EQ(ok(R"({"usage":{"prompt_tokens":0,"completion_tokens":123456}})").completion_tokens, 123456);
  EXPECT_FALSE(ok(R"({"usage":[1,2]})").prompt_tokens);
}

TEST(ProbeSseChunk, ErrorsOfEveryShapeKeepTheirMessage) {
  EXPECT_EQ(ok(R"({"error":"model overloaded"})").error, "model overloaded");
  auto obj = ok(R"({"choices":[{"text":"a"}],"error":{"type":"x","message":"KV cache full","code":503}})");
  EXPECT_EQ(obj.error, "KV cache full");
  EXPECT_EQ(obj.error_code, 503);
  EXPECT_EQ(ok(R"({"error":{"type":"oom"}})").error, R"({"type":"oom"})");  // no message: the object itself
  EXPECT_EQ(ok(R"({"error":[1,"two"]})").error, R"([1,"two"])");
  EXPECT_EQ(ok(R"({"error":42})").error, "42");
  auto none = ok(R"({"error":null,"choices":[{"text":"t"}]})");
  EXPECT_FALSE(none.error);
  EXPECT_EQ(none.text, "t");
}

TEST(ProbeSseChunk, AnythingButOneJsonObjectIsRefused) {
  for (const char* bad : {"", "null", "3", "\"s\"", "[]", "[{\"choices\":[]}]", "{\"choices\":[}", "{} {}", "{}x",
                          "{\"error\":{\"message\":\"m\"}", "{\"a\":1,}"})
    EXPECT_FALSE(parse_chunk(bad, ChunkApi::completions)) << bad;
  EXPECT_TRUE(parse_chunk("{}", ChunkApi::chat));
  EXPECT_TRUE(parse_chunk(" {\"choices\":[]} ", ChunkApi::chat));
  // Deep nesting in a field nobody reads is skipped, not refused.
  std::string deep = "{\"x\":" + std::string(500, '[') + std::string(500, ']') + ",\"choices\":[{\"text\":\"d\"}]}";
  EXPECT_EQ(ok(deep).text, "d");
}

}  // namespace
}  // namespace aimem::probe
