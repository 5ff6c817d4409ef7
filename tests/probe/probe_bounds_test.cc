// `aimem probe`'s own bounds, through the real binary against loopback
// servers that never finish (support/endless_server.h): --timeout ends the
// whole run, model lookup included; prompts of a million tokens or more at
// any concurrency keep the process's peak RSS (its reaped rusage) under
// 64 MiB, because a prompt is written as it is sent; each step says on stderr
// that it starts. Then the pieces that make it so: PromptText and JsonBody
// (the body written in pieces is the body nlohmann would dump), and the
// /tokenize answer counted as it arrives.
#include <gtest/gtest.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "probe/client.h"
#include "probe/tokenize_count.h"
#include "support/endless_server.h"
#include "support/test_support.h"

namespace aimem::test {
namespace {

using nlohmann::json;

struct Timed {
  RunResult run;
  json j;
  double seconds = 0;
};

Timed probe(const std::string& url, const std::vector<std::string>& extra, int timeout_s = 60) {
  std::vector<std::string> argv = {AIMEM_BINARY, "probe", url, "--json", "--no-kernel-log", "--metrics", "none", "--no-gpus"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  RunOptions o;
  o.timeout_s = timeout_s;
  o.kill_above_rss = memory_bound(512ull << 20);  // before the fix it grew by GBs: stop it here
  auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.run = run(argv, o);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.j = json::parse(t.run.out, nullptr, false);
  return t;
}

TEST(ProbeBounds, TheTimeoutBoundsTheWholeRunAgainstAServerThatAcceptsAndNeverAnswers) {
  EndlessServer s(EndlessServer::Mode::silent);
  ASSERT_TRUE(s.ok());
  // Before: the model lookup took one request timeout in the command and one
  // more in the sweep (20.9 s for --timeout 10s).
  Timed t = probe(s.url(), {"--timeout", "3s"});
  EXPECT_EQ(t.run.status, 1) << t.run.err << t.run.out;
  EXPECT_LT(t.seconds, time_bound(4.5)) << t.run.err;
  ASSERT_FALSE(t.j.is_discarded()) << "stdout: " << t.run.out << "\nstderr: " << t.run.err;
  EXPECT_FALSE(t.j["complete"].get<bool>());
  EXPECT_NE(t.j["incomplete_why"].get<std::string>().find("time bound (3s)"), std::string::npos) << t.j.dump();
  for (const auto& step : t.j["steps"]) EXPECT_EQ(step["status"], "skipped") << step.dump();
}

TEST(ProbeBounds, AMillionTokenPromptAtConcurrency256StaysUnder64MiB) {
  EndlessServer s(EndlessServer::Mode::endless);
  ASSERT_TRUE(s.ok());
  // Before: 256 whole prompts (and their bodies) were built before the first
  // request went: 3.7 GB and nothing printed.
  Timed t = probe(s.url(), {"--contexts", "1024k", "--concurrency", "256", "--requests", "256", "--timeout", "6s"});
  EXPECT_FALSE(t.run.killed_for_memory) << "RSS passed " << (memory_bound(512ull << 20) >> 20) << " MiB";
  EXPECT_EQ(t.run.signal, 0);
  EXPECT_GT(t.run.peak_rss_kb, 0);
  EXPECT_LT(t.run.peak_rss_kb, int64_t(memory_bound(64ull << 20) >> 10)) << "peak RSS " << t.run.peak_rss_kb << " KiB";
  EXPECT_EQ(t.run.status, 1) << t.run.err;
  EXPECT_LT(t.seconds, time_bound(8.5));
  // The step said it started, before any of it could finish.
  EXPECT_NE(t.run.err.find("step 1/1: context 1048576 x concurrency 256, 256 requests"), std::string::npos) << t.run.err;
  // The prompts really went: megabytes of them, while memory stayed flat.
  EXPECT_GT(s.body_bytes(), 16ull << 20) << "bytes the server read";
  ASSERT_FALSE(t.j.is_discarded()) << "stdout: " << t.run.out << "\nstderr: " << t.run.err;
  EXPECT_FALSE(t.j["complete"].get<bool>());
  EXPECT_NE(t.j["incomplete_why"].get<std::string>().find("time bound"), std::string::npos) << t.j.dump();
}

TEST(ProbeBounds, A16MillionTokenContextAtConcurrency1StaysUnder64MiB) {
  EndlessServer s(EndlessServer::Mode::endless);
  ASSERT_TRUE(s.ok());
  // Before: 741 MB for one prompt, its JSON string and its dumped body.
  Timed t = probe(s.url(), {"--contexts", "16000k", "--concurrency", "1", "--timeout", "6s"});
  EXPECT_FALSE(t.run.killed_for_memory) << "RSS passed " << (memory_bound(512ull << 20) >> 20) << " MiB";
  EXPECT_LT(t.run.peak_rss_kb, int64_t(memory_bound(64ull << 20) >> 10)) << "peak RSS " << t.run.peak_rss_kb << " KiB";
  EXPECT_EQ(t.run.status, 1) << t.run.err;
  EXPECT_LT(t.seconds, time_bound(8.5));
  EXPECT_NE(t.run.err.find("step 1/1: context 16384000 x concurrency 1"), std::string::npos) << t.run.err;
  EXPECT_GT(s.body_bytes(), 16ull << 20) << "bytes the server read";
}

}  // namespace
}  // namespace aimem::test

namespace aimem::probe {
namespace {

using nlohmann::json;

int words_in(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == ' ';
  return n;
}

TEST(ProbePromptText, ItsSizeIsItsTextsAndItIsWrittenInBoundedPieces) {
  for (int index : {0, 7, 123456, 1'000'000'007})
    for (int words : {0, 1, 127, 128, 129, 1000, 40000})
      for (int pad : {0, 3}) {
        PromptText p = PromptText::filler(index, words, pad);
        std::string whole;
        size_t largest = 0;
        EXPECT_TRUE(p.write([&](std::string_view piece) {
          largest = std::max(largest, piece.size());
          whole.append(piece);
          return true;
        }));
        EXPECT_EQ(p.size(), whole.size()) << index << " " << words << " " << pad;
        EXPECT_EQ(whole, p.str());
        EXPECT_LE(largest, 16u * 1024 + 16);
        EXPECT_EQ(words_in(whole), words + pad);
        EXPECT_EQ(whole.rfind(std::to_string(index), 0), 0u);  // the index first: no shared prefix
      }
  EXPECT_NE(PromptText::filler(1, 500).str(), PromptText::filler(2, 500).str().replace(0, 1, "1"));
  // A sink that refuses stops the writing.
  int calls = 0;
  EXPECT_FALSE(PromptText::filler(3, 100000).write([&](std::string_view) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

TEST(ProbePromptText, AGeneratedBodyIsTheBodyOfTheSameLiteralPrompt) {
  Client client(*parse_endpoint("http://127.0.0.1:9", false));
  for (Api api : {Api::completions, Api::chat}) {
    RequestSpec gen;
    gen.api = api;
    gen.model = "m";
    gen.prompt = PromptText::filler(42, 3000, 2);
    RequestSpec lit = gen;
    lit.prompt = gen.prompt.str();
    PreparedRequest a = client.prepare(gen), b = client.prepare(lit);
    ASSERT_TRUE(a.body.text.has_value());  // held as a size, not as text
    EXPECT_FALSE(b.body.text.has_value());
    EXPECT_EQ(a.body.str(), b.body.str());
    EXPECT_EQ(a.body.size(), b.body.str().size());
    EXPECT_LT(a.body.head.size() + a.body.tail.size(), 300u);
    json j = json::parse(a.body.str());
    EXPECT_EQ(api == Api::chat ? j["messages"][0]["content"] : j["prompt"], gen.prompt.str());
  }
  // A literal prompt is escaped as JSON.
  RequestSpec q;
  q.model = "m";
  q.prompt = "say \"hi\"\n";
  EXPECT_EQ(json::parse(client.prepare(q).body.str())["prompt"], "say \"hi\"\n");
}

std::optional<int64_t> count_in_pieces(const std::string& body, size_t piece) {
  TokenCountReader r;
  for (size_t at = 0; at < body.size(); at += piece)
    if (!r.feed(std::string_view(body).substr(at, piece))) break;
  return r.result();
}

TEST(ProbeTokenCount, CountsWhatTokenizeAnsweredWithoutHoldingIt) {
  const std::vector<std::pair<std::string, std::optional<int64_t>>> cases = {
      {R"({"tokens":[1,2,3]})", 3},
      {R"( { "tokens" : [ ] } )", 0},
      {R"({"tokens":[{"id":1,"piece":"a,]"},{"id":2,"piece":"\"}"}]})", 2},
      {R"({"count":5,"max_model_len":4096,"tokens":[1,2,3,4,5]})", 5},
      {R"({"tokens":[1,2],"count":7})", 7},
      {R"({"x":{"tokens":[1,2,3,4]},"tokens":[9]})", 1},
      {R"({"count":"5","tokens":[1,2]})", 2},
      {R"({"count":5.5})", std::nullopt},
      {R"({"error":"no"})", std::nullopt},
      {R"({"tokens":[1,2,3])", std::nullopt},  // cut
      {R"([1,2,3])", std::nullopt},
      {"<html>404</html>", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& [body, want] : cases)
    for (size_t piece : {size_t(1), size_t(2), size_t(7), body.size() + 1}) EXPECT_EQ(count_in_pieces(body, piece), want) << body << " in pieces of " << piece;
  TokenCountReader html;
  EXPECT_FALSE(html.feed("<html>"));
  EXPECT_FALSE(html.is_object());
  // A million ids, fed as they would come, in 16 KiB reads.
  std::string big = "{\"tokens\":[";
  for (int i = 0; i < 1000000; ++i) big += (i ? ",": "") + std::to_string(i % 50000);
  big += "]}";
  EXPECT_EQ(count_in_pieces(big, 16384), 1000000);
}

}  // namespace
}  // namespace aimem::probe
