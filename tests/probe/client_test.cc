// The probe's HTTP client against real in-process servers on 127.0.0.1
// (cpp-httplib servers with scripted answers, a socket that never answers, a
// closed port), the SSE parser on inline bytes, URL parsing and percentiles.
#include "probe/client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <thread>

#include "probe/sse.h"
#include "support/test_support.h"

namespace aimem::probe {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// --- the SSE parser on inline bytes ------------------------------------------

std::vector<std::string> events_of(const std::vector<std::string>& pieces) {
  SseParser p;
  std::vector<std::string> out;
  for (const auto& piece : pieces)
    EXPECT_TRUE(p.feed(piece, [&](std::string_view d) { out.emplace_back(d); return true; }));
  return out;
}

TEST(ProbeSse, SplitsEventsAtBlankLinesIgnoringCommentsAndOtherFields) {
  auto e = events_of({": keep-alive\n\nevent: x\nid: 3\ndata: {\"a\":1}\n\ndata:{\"b\":2}\n\ndata: [DONE]\n\n"});
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], "{\"a\":1}");
  EXPECT_EQ(e[1], "{\"b\":2}");  // no space after the colon
  EXPECT_EQ(e[2], "[DONE]");
}

TEST(ProbeSse, SameEventsWhateverTheLineEndsAndWhereverTheBytesAreSplit) {
  const std::string lf = "data: {\"t\":\"a\"}\n\ndata: one\ndata: two\n\ndata: [DONE]\n\n";
  for (std::string ends : {"\n", "\r\n", "\r"}) {
    std::string s;
    for (char c : lf) s += c == '\n' ? ends : std::string(1, c);
    for (size_t cut = 0; cut <= s.size(); ++cut) {
      for (size_t cut2 = cut; cut2 <= s.size(); cut2 += 7) {
        auto e = events_of({s.substr(0, cut), s.substr(cut, cut2 - cut), s.substr(cut2)});
        ASSERT_EQ(e.size(), 3u) << "line end " << int(ends.back()) << ", cuts " << cut << "," << cut2;
        EXPECT_EQ(e[0], "{\"t\":\"a\"}");
        EXPECT_EQ(e[1], "one\ntwo");  // data lines of one event joined by LF
        EXPECT_EQ(e[2], "[DONE]");
      }
    }
  }
}

TEST(ProbeSse, AnUnfinishedEventIsPendingAndALineWithoutEndIsBounded) {
  SseParser p;
  int n = 0;
  ASSERT_TRUE(p.feed("data: {\"a\":1}\n", [&](std::string_view) { return ++n, true; }));
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(p.pending());
  SseParser small(64);
  EXPECT_FALSE(small.feed(std::string(65, 'x'), [&](std::string_view) { return true; }));
  EXPECT_FALSE(small.feed("data: " + std::string(40, 'y') + "\ndata: " + std::string(40, 'z') + "\n",
                          [&](std::string_view) { return true; }));
}

TEST(ProbeSse, ChunksOfBothApisAndTheirErrors) {
  auto c = parse_chunk(R"({"choices":[{"text":"Hel","finish_reason":null}]})", ChunkApi::completions);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->text, "Hel");
  EXPECT_FALSE(c->finished);
  auto role = parse_chunk(R"({"choices":[{"delta":{"role":"assistant"}}]})", ChunkApi::chat);
  ASSERT_TRUE(role);
  EXPECT_EQ(role->text, "");
  auto usage = parse_chunk(R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}})", ChunkApi::chat);
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->prompt_tokens, 9);
  EXPECT_EQ(usage->completion_tokens, 4);
  auto msg = parse_chunk(R"({"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]})", ChunkApi::chat);
  ASSERT_TRUE(msg);
  EXPECT_EQ(msg->text, "hi");
  EXPECT_TRUE(msg->finished);
  auto err = parse_chunk(R"({"error":{"message":"KV cache is full","code":400}})", ChunkApi::completions);
  ASSERT_TRUE(err && err->error);
  EXPECT_EQ(*err->error, "KV cache is full");
  EXPECT_EQ(err->error_code, 400);
  EXPECT_FALSE(parse_chunk("not json", ChunkApi::completions));
  EXPECT_FALSE(parse_chunk("[1,2]", ChunkApi::completions));
  EXPECT_TRUE(parse_chunk("[DONE]", ChunkApi::chat)->done);
}

// --- endpoints and percentiles ------------------------------------------------

TEST(ProbeEndpoint, ParsesLoopbackUrlsAndRefusesOthers) {
  auto a = parse_endpoint("http://127.0.0.1:8080", false);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  EXPECT_EQ(a->base_path, "");
  EXPECT_EQ(a->url(), "http://127.0.0.1:8080");
  auto b = parse_endpoint("localhost:8000/proxy/v1/", false);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->port, 8000);
  EXPECT_EQ(b->base_path, "/proxy");
  auto c = parse_endpoint("http://[::1]:11434", false);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->host, "[::1]");
  EXPECT_EQ(c->port, 11434);
  EXPECT_EQ(parse_endpoint("http://127.3.2.1", false)->port, 80);
  EXPECT_TRUE(parse_endpoint("http://[::ffff:127.0.0.1]:1", false));

  for (const char* remote : {"http://0.0.0.0:8000", "http://10.0.0.5:8000", "http://example.com:80",
                             "http://[::2]:80", "http://128.0.0.1:1"}) {
    auto r = parse_endpoint(remote, false);
    ASSERT_FALSE(r) << remote;
    EXPECT_NE(r.error().message.find("loopback"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(remote), std::string::npos) << r.error().message;
    EXPECT_TRUE(parse_endpoint(remote, true)) << remote;
  }
  auto https = parse_endpoint("https://127.0.0.1:8443", true);
  ASSERT_FALSE(https);
  EXPECT_NE(https.error().message.find("https is not supported"), std::string::npos);
  for (const char* bad : {"http://127.0.0.1:", "http://127.0.0.1:0", "http://127.0.0.1:65536", "http://127.0.0.1:80x",
                          "http://:80", "ftp://127.0.0.1:21", "http://[::1", "http://::1:80", "http://127.0.0.1:1/?a=b"})
    EXPECT_FALSE(parse_endpoint(bad, true)) << bad;
}

TEST(ProbePercentile, NearestRank) {
  std::vector<double> v = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_EQ(percentile(v, 50), 5);
  EXPECT_EQ(percentile(v, 90), 9);
  EXPECT_EQ(percentile(v, 95), 10);
  EXPECT_EQ(percentile(v, 100), 10);
  EXPECT_EQ(percentile(v, 0), 1);
  EXPECT_EQ(percentile({4.5}, 50), 4.5);
  EXPECT_FALSE(percentile({}, 50));
}

// --- real loopback servers -------------------------------------------------------

class LoopbackServer {
 public:
  explicit LoopbackServer(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~LoopbackServer() {
    stopping = true;
    server_.stop();
    thread_.join();
  }
  Endpoint endpoint() const {
    auto e = parse_endpoint("http://127.0.0.1:" + std::to_string(port_), false);
    return *e;
  }
  std::atomic<bool> stopping{false};

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

// Streams `pieces` as they are (each its own write, `gap` apart): a piece may
// hold half an event. end: "done" finishes the response, "cut" drops the connection.
void stream(httplib::Response& res, std::vector<std::string> pieces, std::chrono::milliseconds gap,
            bool cut = false) {
  auto i = std::make_shared<size_t>(0);
  res.set_chunked_content_provider(
      "text/event-stream", [pieces = std::move(pieces), gap, cut, i](size_t, httplib::DataSink& sink) {
        if (*i == pieces.size()) {
          if (cut) return false;
          sink.done();
          return true;
        }
        if (*i > 0) std::this_thread::sleep_for(gap);
        return sink.write(pieces[*i].data(), pieces[*i].size()) && ++*i > 0;
      });
}

std::string ev(const json& j) { return "data: " + j.dump() + "\n\n"; }
json text_chunk(const std::string& t) { return {{"choices", {{{"index", 0}, {"text", t}, {"finish_reason", nullptr}}}}}; }
json delta_chunk(const json& delta, const json& finish = nullptr) {
  return {{"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
}

ClientOptions quick() {
  ClientOptions o;
  o.connect_timeout_s = 2;
  o.request_timeout_s = 10;
  o.idle_timeout_s = 5;
  return o;
}

RequestSpec spec(Api api = Api::completions, bool stream = true) {
  RequestSpec s;
  s.api = api;
  s.prompt = "hello";
  s.max_tokens = 4;
  s.stream = stream;
  return s;
}

// An OpenAI-compatible server with scripted answers that records what it was asked.
struct Scripted {
  std::mutex mu;
  std::vector<json> requests;
  std::atomic<int> model_calls{0};
  void routes(httplib::Server& s, std::function<void(const json&, httplib::Response&)> completions,
              std::function<void(const json&, httplib::Response&)> chat = nullptr) {
    s.Get("/v1/models", [this](const httplib::Request&, httplib::Response& r) {
      ++model_calls;
      r.set_content(R"({"object":"list","data":[{"id":"tiny","object":"model"}]})", "application/json");
    });
    auto wrap = [this](std::function<void(const json&, httplib::Response&)> f) {
      return [this, f](const httplib::Request& req, httplib::Response& r) {
        json j = json::parse(req.body, nullptr, false);
        {
          std::lock_guard<std::mutex> lock(mu);
          requests.push_back(j);
        }
        f(j, r);
      };
    };
    s.Post("/v1/completions", wrap(std::move(completions)));
    if (chat) s.Post("/v1/chat/completions", wrap(std::move(chat)));
  }
};

TEST(ProbeClient, StreamedCompletionsGiveTtftGapsAndUsage) {
  Scripted sc;
  LoopbackServer srv([&](httplib::Server& s) {
    sc.routes(s, [](const json&, httplib::Response& r) {
      std::string third = ev(text_chunk(" wor"));
      stream(r,
             {": ping\n\n", ev(text_chunk("Hel")), ev(text_chunk("lo")), third.substr(0, 9), third.substr(9),
              ev({{"choices", {{{"index", 0}, {"text", "ld"}, {"finish_reason", "length"}}}}}),
              ev({{"choices", json::array()}, {"usage", {{"prompt_tokens", 2}, {"completion_tokens", 4}}}}),
              "data: [DONE]\n\n"},
             50ms);
    });
  });
  Client client(srv.endpoint(), quick());
  auto r = client.send(spec());
  ASSERT_TRUE(r.ok) << r.error_kind << ": " << r.error;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.error_kind, "");
  // The comment arrives first, 50 ms before the first token. The request
  // starts before the server writes, so the time to the first token is at
  // least the one gap. A gap between two events is timed where the client
  // reads them: an event delivered late shortens the gap after it (13 ms of
  // 20 on a loaded CI machine), so gaps are asserted at half their nominal
  // length, and the split event against 1.5 gaps (timed by its first half it
  // would be one gap, by its last two).
  EXPECT_GE(r.ttft_s, 0.045);
  EXPECT_GE(r.total_s, r.ttft_s);
  ASSERT_EQ(r.itl_s.size(), 3u);  // four token events, the third split across two writes
  for (double gap : r.itl_s) EXPECT_GE(gap, 0.025);
  EXPECT_GE(r.itl_s[1], 0.075);  // the split event is timed by its last half
  EXPECT_EQ(r.prompt_tokens, 2);
  EXPECT_EQ(r.completion_tokens, 4);
  ASSERT_EQ(sc.requests.size(), 1u);
  const json& q = sc.requests[0];
  EXPECT_EQ(q["model"], "tiny");  // from /v1/models
  EXPECT_EQ(q["prompt"], "hello");
  EXPECT_EQ(q["max_tokens"], 4);
  EXPECT_EQ(q["stream"], true);
  EXPECT_EQ(q["ignore_eos"], true);
  EXPECT_EQ(q["stream_options"]["include_usage"], true);
}

TEST(ProbeClient, StreamedChatSkipsTheRoleDeltaAndCountsEventsWithoutUsage) {
  Scripted sc;
  LoopbackServer srv([&](httplib::Server& s) {
    sc.routes(
        s, [](const json&, httplib::Response& r) { r.status = 404; },
        [](const json&, httplib::Response& r) {
          stream(r,
                 {ev(delta_chunk({{"role", "assistant"}})), ev(delta_chunk({{"content", "a"}})),
                  ev(delta_chunk({{"content", ""}})), ev(delta_chunk({{"content", "b"}})),
                  ev(delta_chunk({{"content", "c"}})), ev(delta_chunk(json::object(), "length")), "data: [DONE]\r\n\r\n"},
                 50ms);
        });
  });
  Client client(srv.endpoint(), quick());
  auto s = spec(Api::chat);
  s.model = "given";
  s.ignore_eos = false;
  auto r = client.send(s);
  ASSERT_TRUE(r.ok) << r.error_kind << ": " << r.error;
  EXPECT_GE(r.ttft_s, 0.045);  // the role-only delta came 50 ms before "a"
  EXPECT_EQ(r.completion_tokens, 3);
  EXPECT_EQ(r.itl_s.size(), 2u);
  // "b" follows "a" by two gaps (100 ms; one if the empty content were a
  // token): asserted at 1.5 gaps, as delivery can delay "a".
  EXPECT_GE(r.itl_s[0], 0.075);
  EXPECT_EQ(r.prompt_tokens, -1);
  EXPECT_EQ(sc.model_calls, 0);
  const json& q = sc.requests.at(0);
  EXPECT_EQ(q["model"], "given");
  EXPECT_EQ(q["messages"][0]["role"], "user");
  EXPECT_EQ(q["messages"][0]["content"], "hello");
  EXPECT_FALSE(q.contains("ignore_eos"));
}

TEST(ProbeClient, NonStreamedBodyAndOneModelLookupForManyConcurrentRequests) {
  Scripted sc;
  LoopbackServer srv([&](httplib::Server& s) {
    sc.routes(s, [](const json& q, httplib::Response& r) {
      if (q.value("stream", false)) {
        stream(r, {ev(text_chunk("x")), ev(text_chunk("y")), "data: [DONE]\n\n"}, 5ms);
        return;
      }
      r.set_content(R"({"choices":[{"text":"hi there","finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":2}})",
                    "application/json");
    });
  });
  Client client(srv.endpoint(), quick());
  auto r = client.send(spec(Api::completions, false));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.prompt_tokens, 7);
  EXPECT_EQ(r.completion_tokens, 2);
  EXPECT_TRUE(r.itl_s.empty());
  EXPECT_FALSE(sc.requests.at(0).contains("stream_options"));  // vLLM refuses it without stream

  // Four threads, four requests each: more connects at once would overflow
  // httplib's listen backlog of 5 and wait out a SYN retry (1 s).
  std::vector<RequestResult> results(16);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < results.size(); i += 4) results[i] = client.send(spec());
    });
  for (auto& t : threads) t.join();
  for (const auto& x : results) {
    EXPECT_TRUE(x.ok) << x.error;
    EXPECT_EQ(x.completion_tokens, 2);
  }
  EXPECT_EQ(sc.model_calls, 1);
}

TEST(ProbeClient, AStatus500OnEveryRequestIsAnHttpErrorWithTheBodysStart) {
  LoopbackServer srv([&](httplib::Server& s) {
    s.Post("/v1/completions", [](const httplib::Request&, httplib::Response& r) {
      r.status = 500;
      r.set_content(R"({"error":{"message":"CUDA out of memory while allocating the KV cache","type":"server_error"}})",
                    "application/json");
    });
  });
  Client client(srv.endpoint(), quick());
  for (bool streamed : {true, false}) {
    auto s = spec(Api::completions, streamed);
    s.model = "m";
    auto r = client.send(s);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error_kind, "http");
    EXPECT_EQ(r.http_status, 500);
    EXPECT_NE(r.error.find("HTTP 500"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("CUDA out of memory"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("/v1/completions"), std::string::npos) << r.error;
  }
}

TEST(ProbeClient, BodiesAndEventsThatAreNotJsonAndErrorsInsideAStream) {
  LoopbackServer srv([&](httplib::Server& s) {
    s.Get("/v1/models", [](const httplib::Request&, httplib::Response& r) { r.set_content("<html>nope</html>", "text/html"); });
    s.Post("/v1/completions", [](const httplib::Request& q, httplib::Response& r) {
      if (q.body.find("\"stream\":true") == std::string::npos) return r.set_content("<html>proxy error</html>", "text/html");
      stream(r, {ev(text_chunk("a")), "data: {\"choices\": [\n\n"}, 1ms);
    });
    s.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& r) {
      stream(r, {ev(delta_chunk({{"content", "a"}})), ev({{"error", {{"message", "the KV cache is full"}, {"code", 400}}}})},
             1ms);
    });
  });
  Client client(srv.endpoint(), quick());
  // /v1/models answers HTML: the request goes without a model.
  auto plain = client.send(spec(Api::completions, false));
  EXPECT_EQ(plain.error_kind, "bad_json");
  EXPECT_EQ(plain.http_status, 200);
  EXPECT_NE(plain.error.find("proxy error"), std::string::npos) << plain.error;
  auto streamed = client.send(spec());
  EXPECT_EQ(streamed.error_kind, "bad_json");
  EXPECT_NE(streamed.error.find("event 2"), std::string::npos) << streamed.error;
  EXPECT_EQ(streamed.completion_tokens, 1);
  auto in_stream = client.send(spec(Api::chat));
  EXPECT_EQ(in_stream.error_kind, "http");
  EXPECT_NE(in_stream.error.find("the KV cache is full"), std::string::npos) << in_stream.error;
  EXPECT_NE(in_stream.error.find("code 400"), std::string::npos) << in_stream.error;
  EXPECT_FALSE(client.first_model());
}

TEST(ProbeClient, AStreamCutInTheMiddleOrEndedWithoutDoneIsCut) {
  LoopbackServer srv([&](httplib::Server& s) {
    s.Post("/v1/completions", [](const httplib::Request&, httplib::Response& r) {
      std::string half = ev(text_chunk("c"));
      stream(r, {ev(text_chunk("a")), ev(text_chunk("b")), half.substr(0, 10)}, 1ms, /*cut=*/true);
    });
    s.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& r) {
      stream(r, {ev(delta_chunk({{"content", "a"}}))}, 1ms);  // a clean end, but no [DONE]
    });
  });
  Client client(srv.endpoint(), quick());
  auto s = spec();
  s.model = "m";
  auto cut = client.send(s);
  EXPECT_FALSE(cut.ok);
  EXPECT_EQ(cut.error_kind, "cut_stream") << cut.error;
  EXPECT_EQ(cut.completion_tokens, 2);
  EXPECT_NE(cut.error.find("in the middle"), std::string::npos) << cut.error;
  s.api = Api::chat;
  auto ended = client.send(s);
  EXPECT_EQ(ended.error_kind, "cut_stream") << ended.error;
  EXPECT_NE(ended.error.find("without [DONE]"), std::string::npos) << ended.error;
}

TEST(ProbeClient, AnEndlessStreamStopsAtTheByteBoundOrTheDeadline) {
  std::unique_ptr<LoopbackServer> srv;
  srv = std::make_unique<LoopbackServer>([&](httplib::Server& s) {
    s.Post("/v1/completions", [&](const httplib::Request& q, httplib::Response& r) {
      bool slow = q.body.find("slow") != std::string::npos;
      r.set_chunked_content_provider("text/event-stream", [&, slow](size_t, httplib::DataSink& sink) {
        if (srv->stopping) return false;
        if (slow) std::this_thread::sleep_for(10ms);
        std::string e = ev(text_chunk("tok"));
        return sink.write(e.data(), e.size());
      });
    });
  });
  ClientOptions o = quick();
  o.max_response_bytes = 64 << 10;
  Client client(srv->endpoint(), o);
  auto s = spec();
  s.model = "m";
  auto big = client.send(s);
  EXPECT_EQ(big.error_kind, "too_large") << big.error;
  EXPECT_GT(big.completion_tokens, 100);
  EXPECT_NE(big.error.find("65536 bytes"), std::string::npos) << big.error;

  o.max_response_bytes = 64ull << 20;
  o.request_timeout_s = 0.4;
  Client deadline(srv->endpoint(), o);
  s.prompt = "slow";
  auto t0 = std::chrono::steady_clock::now();
  auto late = deadline.send(s);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(late.error_kind, "timeout") << late.error;
  EXPECT_GT(late.completion_tokens, 5);
  EXPECT_LT(took, 5.0);  // bounded: not the server's endless stream
  EXPECT_NE(late.error.find("request timeout of 0.4 s"), std::string::npos) << late.error;
}

// A socket that listens and never accepts: the kernel completes the connect,
// the request is written, and no byte ever comes back.
struct SilentSocket {
  int fd = -1;
  int port = 0;
  SilentSocket() {
    fd = test::bound_loopback_socket(&port);
    EXPECT_GE(fd, 0);
  }
  ~SilentSocket() { if (fd >= 0) ::close(fd); }
  Endpoint endpoint() const { return *parse_endpoint("127.0.0.1:" + std::to_string(port), false); }
};

TEST(ProbeClient, AServerThatNeverAnswersTimesOut) {
  SilentSocket silent;
  ASSERT_EQ(::listen(silent.fd, 8), 0);
  ClientOptions o = quick();
  o.idle_timeout_s = 0.3;
  Client client(silent.endpoint(), o);
  auto s = spec();
  s.model = "m";
  auto r = client.send(s);
  EXPECT_EQ(r.error_kind, "timeout") << r.error;
  EXPECT_EQ(r.http_status, 0);
  EXPECT_NE(r.error.find("no response yet"), std::string::npos) << r.error;
  EXPECT_LT(r.total_s, 3.0);
  auto t = client.count_tokens("x", "m");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("no answer"), std::string::npos) << t.error().message;
}

TEST(ProbeClient, AClosedPortIsAConnectError) {
  Endpoint closed;
  {
    SilentSocket s;  // bound, never listening, then closed: nothing is there
    closed = s.endpoint();
  }
  Client client(closed, quick());
  auto r = client.send(spec());  // the model lookup already fails to connect
  EXPECT_EQ(r.error_kind, "connect") << r.error;
  EXPECT_NE(r.error.find(closed.url()), std::string::npos) << r.error;
  auto s = spec();
  s.model = "m";
  auto direct = client.send(s);
  EXPECT_EQ(direct.error_kind, "connect") << direct.error;
  EXPECT_FALSE(client.count_tokens("x", "m"));
  EXPECT_FALSE(client.first_model());
  PromptMaker maker(client, "m");
  EXPECT_FALSE(maker.make(100, 0));
}

// --- tokenize and exact prompts ----------------------------------------------------

// A fake tokenizer with uneven words: one token per word of up to five
// letters, two for longer ones, and a BOS when asked for special tokens.
int fake_tokens(const std::string& text, bool bos, bool uneven = true) {
  int n = bos ? 1 : 0;
  size_t len = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ' ' && text[i] != '\n') {
      ++len;
      continue;
    }
    if (len > 0) n += uneven && len > 5 ? 2 : 1;
    len = 0;
  }
  return n;
}

enum class Tokenize { llamacpp, vllm, none };

struct FakeServer {
  std::atomic<int> tokenize_calls{0}, completion_calls{0};
  std::unique_ptr<LoopbackServer> srv;
  explicit FakeServer(Tokenize kind, bool uneven = true) {
    srv = std::make_unique<LoopbackServer>([this, kind, uneven](httplib::Server& s) {
      s.Get("/v1/models", [](const httplib::Request&, httplib::Response& r) {
        r.set_content(R"({"data":[{"id":"fake"}]})", "application/json");
      });
      auto count = [uneven](const std::string& t, bool bos) { return fake_tokens(t, bos, uneven); };
      if (kind != Tokenize::none)
        s.Post("/tokenize", [this, kind, count](const httplib::Request& q, httplib::Response& r) {
          ++tokenize_calls;
          json j = json::parse(q.body, nullptr, false);
          if (kind == Tokenize::llamacpp && j.contains("content")) {
            json toks = json::array();
            int n = count(j["content"], j.value("add_special", false));
            for (int i = 0; i < n; ++i) toks.push_back(i);
            r.set_content(json{{"tokens", toks}}.dump(), "application/json");
          } else if (kind == Tokenize::vllm && j.contains("prompt") && j.value("model", "") == "fake") {
            r.set_content(json{{"count", count(j["prompt"], true)}, {"max_model_len", 4096}, {"tokens", json::array()}}.dump(),
                          "application/json");
          } else {
            r.status = 400;
            r.set_content(R"({"object":"error","message":"field required"})", "application/json");
          }
        });
      s.Post("/v1/completions", [this, count](const httplib::Request& q, httplib::Response& r) {
        ++completion_calls;
        json j = json::parse(q.body);
        json out = {{"choices", {{{"text", "x"}, {"finish_reason", "length"}}}},
                    {"usage", {{"prompt_tokens", count(j["prompt"], true)}, {"completion_tokens", 1}}}};
        r.set_content(out.dump(), "application/json");
      });
    });
  }
};

TEST(ProbeTokenize, LlamaCppShapeVllmShapeAndNone) {
  FakeServer llama(Tokenize::llamacpp);
  Client lc(llama.srv->endpoint(), quick());
  auto a = lc.count_tokens("the people of the water", "");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(*a, std::optional<int>(1 + 1 + 2 + 1 + 1 + 1));
  EXPECT_EQ(llama.tokenize_calls, 1);

  FakeServer vllm(Tokenize::vllm);
  Client vc(vllm.srv->endpoint(), quick());
  auto b = vc.count_tokens("one two three", "");  // model from /v1/models
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*b, std::optional<int>(4));
  EXPECT_EQ(vllm.tokenize_calls, 2);  // the llama.cpp shape is refused first
  EXPECT_EQ(*vc.count_tokens("one two", "fake"), std::optional<int>(3));
  EXPECT_EQ(vllm.tokenize_calls, 3);  // then the shape is remembered

  FakeServer none(Tokenize::none);
  Client nc(none.srv->endpoint(), quick());
  auto c = nc.count_tokens("one", "");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(*c);
}

TEST(ProbePromptMaker, ExactLengthsThroughTokenizeWithFewCallsOnceCalibrated) {
  for (Tokenize kind : {Tokenize::llamacpp, Tokenize::vllm}) {
    FakeServer fake(kind);
    Client client(fake.srv->endpoint(), quick());
    PromptMaker maker(client, "fake");
    std::set<std::string> first_words;
    int calls_after_first = 0, prompts_after_first = 0;
    for (int target : {512, 2048, 100, 4096, 2048, 513, 37, 2}) {
      for (int index : {0, 1, 17}) {
        int before = maker.calls();
        auto p = maker.make(target, index);
        ASSERT_TRUE(p) << p.error().message;
        EXPECT_EQ(maker.how(), "tokenize");
        const std::string text = p->str();
        EXPECT_EQ(fake_tokens(text, true), target) << "target " << target << " index " << index;
        first_words.insert(text.substr(0, text.find(' ')));
        if (before > 0) {
          calls_after_first += maker.calls() - before;
          ++prompts_after_first;
        }
      }
    }
    EXPECT_EQ(first_words.size(), 3u);  // each request index starts differently
    EXPECT_LE(double(calls_after_first) / prompts_after_first, 3.0) << calls_after_first << " calls";
    EXPECT_EQ(fake.completion_calls, 0);
  }
}

TEST(ProbePromptMaker, CalibratesFromUsageWithoutTokenizeThenEstimates) {
  FakeServer fake(Tokenize::none, /*uneven=*/false);
  Client client(fake.srv->endpoint(), quick());
  PromptMaker maker(client, "");
  for (int target : {100, 1000, 4096}) {
    auto p = maker.make(target, target);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(maker.how(), "usage");
    const std::string text = p->str();
    int got = static_cast<int>(std::count(text.begin(), text.end(), ' ')) + 1 + 1;  // words + BOS
    EXPECT_NEAR(got, target, std::max(2.0, target * 0.01)) << "target " << target;
  }
  EXPECT_EQ(fake.completion_calls, 2);  // two lengths, once per maker
  EXPECT_EQ(fake.tokenize_calls, 0);

  LoopbackServer bare([](httplib::Server& s) {
    s.Post("/v1/completions", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(R"({"choices":[{"text":"x","finish_reason":"length"}]})", "application/json");
    });
  });
  Client bc(bare.endpoint(), quick());
  PromptMaker guess(bc, "m");
  auto p = guess.make(1000, 3);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(guess.how(), "estimate");
  EXPECT_NEAR(double(p->size()) / 4.0, 1000, 100);  // about 4 characters per token
  EXPECT_FALSE(guess.make(0, 1));
}

}  // namespace
}  // namespace aimem::probe
