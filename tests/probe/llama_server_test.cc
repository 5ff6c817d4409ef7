// The test server for `aimem probe` (tests/probe/llama_server.mjs): the real
// llama.cpp engine from npm serving a tiny GGUF written here. These tests
// check what the probe relies on: the endpoints' shapes, exact token counts,
// the 400 for an over-long request, and that the server's memory grows with
// context and with concurrency (one llama.cpp context per request).
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/llama_server.h"
#include "support/test_support.h"
#include "watch/scrape.h"

namespace aimem::test {
namespace {

using nlohmann::json;
constexpr uint64_t kMiB = 1 << 20;

httplib::Client client(const LlamaServer& s) {
  httplib::Client c(s.url);
  c.set_connection_timeout(5);
  c.set_read_timeout(120);  // a long prompt on busy shared cores
  return c;
}

httplib::Result post(const LlamaServer& s, const std::string& path, const json& body) {
  auto c = client(s);
  return c.Post(path.c_str(), body.dump(), "application/json");
}

// The JSON payloads of an SSE body ("data: {...}" events), and whether it
// ended with "data: [DONE]".
std::vector<json> sse_events(const std::string& body, bool* done) {
  std::vector<json> out;
  *done = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    const std::string ev = body.substr(pos, end - pos);
    pos = end + 2;
    if (ev.rfind("data: ", 0) != 0) continue;
    if (ev == "data: [DONE]") {
      *done = true;
      continue;
    }
    out.push_back(json::parse(ev.substr(6)));
  }
  return out;
}

// n token ids from the tiny model's byte range: a prompt of exactly n tokens
// (the server adds no BOS to token ids).
json token_prompt(int n) {
  json ids = json::array();
  for (int i = 0; i < n; ++i) ids.push_back(3 + (i * 7919) % 256);
  return ids;
}

std::vector<int> tokenize(const LlamaServer& s, const std::string& text, bool add_special = false) {
  auto r = post(s, "/tokenize", {{"content", text}, {"add_special", add_special}});
  if (!r || r->status != 200) return {};
  return json::parse(r->body).at("tokens").get<std::vector<int>>();
}

std::string words(int n) {
  std::string t;
  for (int i = 0; i < n; ++i) t += "word" + std::to_string(i % 10) + " ";
  return t;
}

void listens_on_loopback_and_answers_health_models_and_metrics(const LlamaServer& s) {
  EXPECT_EQ(s.url.rfind("http://127.0.0.1:", 0), 0u) << s.url;
  EXPECT_GT(s.port, 0);
  EXPECT_GT(s.pid, 0);
  EXPECT_EQ(::access(("/proc/" + std::to_string(s.pid)).c_str(), F_OK), 0);

  auto c = client(s);
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(json::parse(h->body).at("status"), "ok");

  auto m = c.Get("/v1/models");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  const auto models = json::parse(m->body);
  EXPECT_EQ(models.at("object"), "list");
  ASSERT_EQ(models.at("data").size(), 1u);
  EXPECT_EQ(models["data"][0].at("id"), "model.gguf");

  auto before = c.Get("/metrics");
  ASSERT_TRUE(before);
  for (const char* name : {"llamacpp:requests_processing", "llamacpp:requests_deferred", "llamacpp:prompt_tokens_total",
                           "llamacpp:tokens_predicted_total", "llamacpp:n_tokens_max"})
    EXPECT_NE(before->body.find(std::string("\n") + name + " "), std::string::npos) << name << " in\n" << before->body;
  auto counter = [](const std::string& text, const std::string& name) {
    const size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
  };
  auto r = post(s, "/v1/completions", {{"prompt", token_prompt(40)}, {"max_tokens", 5}, {"ignore_eos", true}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto after = c.Get("/metrics");
  ASSERT_TRUE(after);
  EXPECT_EQ(counter(after->body, "llamacpp:prompt_tokens_total") - counter(before->body, "llamacpp:prompt_tokens_total"), 40);
  EXPECT_EQ(counter(after->body, "llamacpp:tokens_predicted_total") - counter(before->body, "llamacpp:tokens_predicted_total"), 5);
  EXPECT_GE(counter(after->body, "llamacpp:n_tokens_max"), 45);
  EXPECT_EQ(counter(after->body, "llamacpp:requests_processing"), 0);

  // the repository's own scraper recognises the server and reads its counters
  const auto target = watch::parse_target(s.url);
  ASSERT_TRUE(target) << target.error().message;
  const auto sample = watch::scrape(*target, 5000);
  ASSERT_TRUE(sample.up) << sample.problem;
  EXPECT_EQ(sample.kind, "llamacpp");
  EXPECT_EQ(sample.running, 0.0);
  EXPECT_EQ(sample.waiting, 0.0);
  ASSERT_TRUE(sample.generation_tokens_total);
  EXPECT_EQ(*sample.generation_tokens_total, counter(after->body, "llamacpp:tokens_predicted_total"));
  ASSERT_TRUE(sample.prompt_tokens_total);
  EXPECT_EQ(*sample.prompt_tokens_total, counter(after->body, "llamacpp:prompt_tokens_total"));
}

void tokenize_counts_grow_with_the_text(const LlamaServer& s) {
  const auto a = tokenize(s, words(1));
  const auto b = tokenize(s, words(50));
  const auto c = tokenize(s, words(500));
  ASSERT_FALSE(a.empty());
  EXPECT_LT(a.size(), b.size());
  EXPECT_LT(b.size(), c.size());
  // byte-level vocabulary: about one token per character, never fewer than a tenth
  EXPECT_GE(c.size(), words(500).size() / 10);
  // add_special puts the BOS in front, as llama.cpp's /tokenize does
  const auto with_bos = tokenize(s, words(50), true);
  ASSERT_EQ(with_bos.size(), b.size() + 1);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), with_bos.begin() + 1));
  // the completion's prompt_tokens is the same count, with the BOS
  auto r = post(s, "/v1/completions", {{"prompt", words(50)}, {"max_tokens", 1}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["usage"]["prompt_tokens"], with_bos.size());
}

void streamed_completion_sends_exactly_max_tokens_events(const LlamaServer& s) {
  const int max_tokens = 24;
  auto r = post(s, "/v1/completions",
                {{"prompt", "Once upon a time"}, {"max_tokens", max_tokens}, {"ignore_eos", true}, {"stream", true},
                 {"stream_options", {{"include_usage", true}}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  bool done = false;
  const auto events = sse_events(r->body, &done);
  EXPECT_TRUE(done) << "no data: [DONE]";
  int tokens = 0;
  json final_chunk, usage_chunk;
  for (const auto& e : events) {
    EXPECT_EQ(e.at("object"), "text_completion");
    const auto& choices = e.at("choices");
    if (choices.empty()) {
      usage_chunk = e;
      continue;
    }
    if (choices[0].at("finish_reason").is_null()) {
      EXPECT_TRUE(choices[0].at("text").is_string());
      ++tokens;
    } else {
      final_chunk = e;
    }
  }
  EXPECT_EQ(tokens, max_tokens);
  ASSERT_FALSE(final_chunk.is_null());
  EXPECT_EQ(final_chunk["choices"][0]["finish_reason"], "length");
  ASSERT_FALSE(usage_chunk.is_null()) << "no usage chunk with include_usage";
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], max_tokens);
  EXPECT_EQ(usage_chunk["usage"]["prompt_tokens"], tokenize(s, "Once upon a time", true).size());
  // the usage chunk comes after the final one
  ASSERT_GE(events.size(), 2u);
  EXPECT_TRUE(events.back()["choices"].empty());
}

void non_streamed_completion_counts_tokens_in_usage(const LlamaServer& s) {
  auto r = post(s, "/v1/completions", {{"prompt", token_prompt(100)}, {"max_tokens", 7}, {"ignore_eos", true}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = json::parse(r->body);
  EXPECT_EQ(j.at("object"), "text_completion");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 100);
  EXPECT_EQ(j["usage"]["completion_tokens"], 7);
  EXPECT_EQ(j["usage"]["total_tokens"], 107);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["text"].is_string());
}

void chat_completions_stream_and_not(const LlamaServer& s) {
  const json messages = json::array({{{"role", "system"}, {"content", "You are terse."}}, {{"role", "user"}, {"content", "Hello"}}});
  auto r = post(s, "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 6}, {"ignore_eos", true}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = json::parse(r->body);
  EXPECT_EQ(j.at("object"), "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_TRUE(j["choices"][0]["message"]["content"].is_string());
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 10);

  auto st = post(s, "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 6}, {"ignore_eos", true}, {"stream", true}});
  ASSERT_TRUE(st);
  ASSERT_EQ(st->status, 200) << st->body;
  bool done = false;
  const auto events = sse_events(st->body, &done);
  EXPECT_TRUE(done);
  int content = 0;
  std::string last_finish;
  for (const auto& e : events) {
    EXPECT_EQ(e.at("object"), "chat.completion.chunk");
    const auto& c = e["choices"][0];
    if (!c["finish_reason"].is_null()) last_finish = c["finish_reason"];
    else if (c["delta"].contains("content") && !c["delta"].contains("role")) ++content;
  }
  EXPECT_EQ(content, 6);
  EXPECT_EQ(last_finish, "length");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front()["choices"][0]["delta"]["role"], "assistant");
}

void refuses_what_it_cannot_serve_and_keeps_serving(const LlamaServer& s) {
  // over the server's context (8192): prompt + max_tokens
  auto r = post(s, "/v1/completions", {{"prompt", token_prompt(8000)}, {"max_tokens", 500}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  auto j = json::parse(r->body);
  EXPECT_EQ(j["error"]["code"], "context_length_exceeded");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("8500"), std::string::npos) << j.dump();

  auto c = client(s);
  auto bad = c.Post("/v1/completions", "{not json", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_TRUE(json::parse(bad->body)["error"]["message"].is_string());

  auto ids = post(s, "/v1/completions", {{"prompt", json::array({1, 2, 99999})}});
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->status, 400) << "a token id outside the vocabulary";

  auto missing = c.Get("/v1/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(json::parse(missing->body).contains("error"));

  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
}

// One server for all the endpoint checks: each start costs node's start-up,
// node-llama-cpp's self-test of its binary and the model load (3-7 s on 2
// shared cores), and ctest runs every TEST in its own process.
TEST(LlamaServer, ServesTheOpenAiEndpointsOfTheRealEngine) {
  if (!llama_server_available()) GTEST_SKIP() << llama_server_unavailable();
  auto started = start_llama_server();
  ASSERT_TRUE(started) << started.error().message;
  LlamaServer s = *started;
  LlamaServerGuard guard{s};
  const std::pair<const char*, void (*)(const LlamaServer&)> checks[] = {
      {"health, models, metrics", listens_on_loopback_and_answers_health_models_and_metrics},
      {"tokenize", tokenize_counts_grow_with_the_text},
      {"streamed completion", streamed_completion_sends_exactly_max_tokens_events},
      {"non-streamed completion", non_streamed_completion_counts_tokens_in_usage},
      {"chat", chat_completions_stream_and_not},
      {"errors", refuses_what_it_cannot_serve_and_keeps_serving},
  };
  for (const auto& [name, check] : checks) {
    SCOPED_TRACE(name);
    check(s);
  }
}

// Peak RSS of the node process while `concurrency` requests of `context`
// tokens each (prompt + max_tokens) are in flight.
uint64_t peak_for(const LlamaServer& s, int context, int concurrency) {
  const int max_tokens = 8;
  EXPECT_TRUE(reset_peak_rss(s.pid));
  std::vector<std::thread> threads;
  std::vector<int> status(concurrency, -1);
  for (int i = 0; i < concurrency; ++i)
    threads.emplace_back([&, i] {
      auto r = post(s, "/v1/completions", {{"prompt", token_prompt(context - max_tokens)}, {"max_tokens", max_tokens}, {"ignore_eos", true}, {"stream", true}});
      status[i] = r ? r->status : -1;
    });
  for (auto& t : threads) t.join();
  for (int st : status) EXPECT_EQ(st, 200) << context << " x " << concurrency;
  return peak_rss_bytes(s.pid);
}

TEST(LlamaServer, PeakMemoryGrowsWithContextAndWithConcurrency) {
  if (!llama_server_available()) GTEST_SKIP() << llama_server_unavailable();
  auto started = start_llama_server();
  ASSERT_TRUE(started) << started.error().message;
  LlamaServer s = *started;
  LlamaServerGuard guard{s};
  ASSERT_TRUE(reset_peak_rss(s.pid));
  const uint64_t idle = rss_bytes(s.pid);
  ASSERT_GT(idle, 0u);
  const uint64_t small = peak_for(s, 256, 1);
  const uint64_t longer = peak_for(s, 1024, 1);
  const uint64_t wider = peak_for(s, 1024, 4);
  // a request's memory is its context's buffers: about n_ctx x batch x heads
  // floats of attention scores, so 4x the context is far more than 2x the
  // memory, and 4 requests at once hold 4 contexts
  EXPECT_GT(longer - idle, 2 * (small - idle)) << "idle " << idle / kMiB << " MiB, 256x1 " << small / kMiB << " MiB, 1024x1 " << longer / kMiB;
  EXPECT_GT(longer, small + 16 * kMiB);
  EXPECT_GT(wider - idle, 2 * (longer - idle)) << "1024x1 " << longer / kMiB << " MiB, 1024x4 " << wider / kMiB;
  // and the memory goes back when the requests end
  EXPECT_LT(rss_bytes(s.pid), idle + (wider - idle) / 2) << "after: " << rss_bytes(s.pid) / kMiB << " MiB";
}

// A server that cannot start is an error that carries its own message.
TEST(LlamaServer, AFailedStartSaysWhy) {
  if (!llama_server_available()) GTEST_SKIP() << llama_server_unavailable();
  LlamaServerOptions o;
  o.model_path = "/nonexistent/model.gguf";
  auto r = start_llama_server(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("exited with status 1"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("/nonexistent/model.gguf: no such file"), std::string::npos) << r.error().message;
}

// Behind `aimem run --memory-limit`: the helper finds the node process in the
// run's cgroup, and a step over the limit kills the server, which the helper
// sees as the run's exit status (128 + SIGKILL).
TEST(LlamaServerUnderLimit, AStepOverTheLimitKillsTheServer) {
  if (!llama_server_available()) GTEST_SKIP() << llama_server_unavailable();
  LlamaServerOptions o;
  o.prefix = {AIMEM_BINARY, "run", "--memory-limit", "400M", "--interval", "200ms", "--json", "--"};
  auto started = start_llama_server(o);
  ASSERT_TRUE(started) << started.error().message;
  LlamaServer s = *started;
  LlamaServerGuard guard{s};
  EXPECT_GT(s.prefix_pid, 0);
  ASSERT_GT(s.pid, 0);
  EXPECT_NE(s.pid, s.prefix_pid);
  const std::string cgroup = read_file("/proc/" + std::to_string(s.pid) + "/cgroup");
  if (cgroup.find("aimem-run-") == std::string::npos) GTEST_SKIP() << "aimem run could not make a cgroup here:\n" << cgroup;

  // 256 x 1 fits easily
  auto ok = post(s, "/v1/completions", {{"prompt", token_prompt(248)}, {"max_tokens", 8}, {"ignore_eos", true}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  // 2048 x 2: about 2 x 200 MiB of attention buffers over a 400 MiB limit
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&] { post(s, "/v1/completions", {{"prompt", token_prompt(2040)}, {"max_tokens", 8}, {"ignore_eos", true}}); });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(llama_server_exited(s, 20000)) << "the server survived 2048 x 2 under 400 MiB";
  EXPECT_EQ(s.exit_status, 128 + 9);
  // aimem run's report is in the same stdout file, after the listening line
  const std::string out = read_file(s.dir + "/stdout.txt");
  const size_t brace = out.find('{');
  ASSERT_NE(brace, std::string::npos) << out;
  const auto report = json::parse(out.substr(brace));
  EXPECT_GE(report["cgroup"]["oom_kills"].get<int>(), 1) << report.dump(1);
}

}  // namespace
}  // namespace aimem::test
