// A trivial OpenAI-compatible server for measuring `aimem probe`'s own cost:
// it generates nothing, so what a probe of it spends is the client's share.
//   probe_trivial_server [--port N] [--tokens N] [--nagle] [--split]
// --nagle leaves Nagle's algorithm on (no TCP_NODELAY), as cpp-httplib's
// servers do by default (llama.cpp's llama-server among them); --split writes
// each event in a write of its own, as a real server streams tokens.
// Binds 127.0.0.1 only; with --port 0 (the default) it prints
// "listening on 127.0.0.1:PORT" once bound, then serves until killed:
//   GET  /health, /v1/models                      {"data":[{"id":"trivial"}]}
//   POST /tokenize                                 llama.cpp shape: one token per word (+ BOS)
//   POST /v1/completions, /v1/chat/completions     streamed (SSE) or not; min(max_tokens, --tokens)
//                                                  tokens, then usage and [DONE]
#include <httplib.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

namespace {

int words_of(const std::string& s) {
  int n = 0;
  bool in = false;
  for (char c : s) {
    bool space = c == ' ' || c == '\n' || c == '\t';
    if (!space && !in) ++n;
    in = !space;
  }
  return n;
}

std::string prompt_of(const nlohmann::json& q, bool chat) {
  if (!chat) return q.value("prompt", "");
  std::string all;
  if (auto m = q.find("messages"); m != q.end() && m->is_array())
    for (const auto& msg : *m)
      if (msg.is_object() && msg.contains("content") && msg["content"].is_string()) all += msg["content"].get<std::string>() + " ";
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0, max_tokens_cap = 4;
  bool nagle = false, split = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* flag) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "probe_trivial_server: %s needs a value\n", flag);
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--port")) port = next("--port");
    else if (!std::strcmp(argv[i], "--tokens")) max_tokens_cap = std::clamp(next("--tokens"), 1, 4096);
    else if (!std::strcmp(argv[i], "--nagle")) nagle = true;
    else if (!std::strcmp(argv[i], "--split")) split = true;
    else {
      std::fprintf(stderr, "usage: probe_trivial_server [--port N] [--tokens N] [--nagle] [--split]\n");
      return 2;
    }
  }

  httplib::Server server;
  server.set_tcp_nodelay(!nagle);
  // Kept-alive clients send many requests per connection (httplib's default
  // is 5 before it closes).
  server.set_keep_alive_max_count(1000000);
  server.Get("/health", [](const httplib::Request&, httplib::Response& r) { r.set_content("{\"status\":\"ok\"}", "application/json"); });
  server.Get("/v1/models", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"({"object":"list","data":[{"id":"trivial","object":"model","owned_by":"bench"}]})", "application/json");
  });
  server.Post("/tokenize", [](const httplib::Request& req, httplib::Response& r) {
    auto q = nlohmann::json::parse(req.body, nullptr, false);
    if (!q.is_object() || !q.contains("content") || !q["content"].is_string()) {
      r.status = 400;
      r.set_content(R"({"error":{"message":"expected {\"content\": text}","code":400}})", "application/json");
      return;
    }
    int n = words_of(q["content"].get<std::string>()) + (q.value("add_special", false) ? 1 : 0);
    std::string out = "{\"tokens\":[";
    for (int i = 0; i < n; ++i) out += i ? ",1" : "1";
    r.set_content(out + "]}", "application/json");
  });
  auto complete = [max_tokens_cap, split](bool chat) {
    return [max_tokens_cap, split, chat](const httplib::Request& req, httplib::Response& r) {
      auto q = nlohmann::json::parse(req.body, nullptr, false);
      if (!q.is_object()) {
        r.status = 400;
        r.set_content(R"({"error":{"message":"body is not JSON","code":400}})", "application/json");
        return;
      }
      int n = std::clamp(q.value("max_tokens", 16), 1, max_tokens_cap);
      int prompt_tokens = words_of(prompt_of(q, chat)) + 1;
      std::string usage = "\"usage\":{\"prompt_tokens\":" + std::to_string(prompt_tokens) +
                          ",\"completion_tokens\":" + std::to_string(n) +
                          ",\"total_tokens\":" + std::to_string(prompt_tokens + n) + "}";
      if (!q.value("stream", false)) {
        std::string text;
        for (int i = 0; i < n; ++i) text += " tok";
        std::string choice = chat ? "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + text + "\"},\"finish_reason\":\"length\"}"
                                  : "{\"index\":0,\"text\":\"" + text + "\",\"finish_reason\":\"length\"}";
        r.set_content("{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"trivial\",\"choices\":[" + choice + "]," + usage + "}",
                      "application/json");
        return;
      }
      // By default all events in one write: the server is trivial, so it
      // should not be the one that makes a request slow.
      std::vector<std::string> events;
      std::string body;
      const char* head = chat ? "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"trivial\",\"choices\":[{\"index\":0,\"delta\":"
                              : "data: {\"id\":\"c\",\"object\":\"text_completion\",\"model\":\"trivial\",\"choices\":[{\"index\":0,";
      if (chat) body += std::string(head) + "{\"role\":\"assistant\"},\"finish_reason\":null}]}\n\n";
      for (int i = 0; i < n; ++i) {
        bool last = i + 1 == n;
        body += head;
        body += chat ? "{\"content\":\" tok\"}," : "\"text\":\" tok\",";
        body += last ? "\"finish_reason\":\"length\"}]}\n\n" : "\"finish_reason\":null}]}\n\n";
        if (split) events.push_back(std::move(body)), body.clear();
      }
      auto so = q.find("stream_options");
      if (so != q.end() && so->is_object() && so->value("include_usage", false))
        body += "data: {\"id\":\"c\",\"choices\":[]," + usage + "}\n\n";
      body += "data: [DONE]\n\n";
      events.push_back(std::move(body));
      auto next = std::make_shared<size_t>(0);
      r.set_chunked_content_provider("text/event-stream", [events = std::move(events), next](size_t, httplib::DataSink& sink) {
        if (*next < events.size() && !sink.write(events[*next].data(), events[*next].size())) return false;
        if (++*next >= events.size()) sink.done();
        return true;
      });
    };
  };
  server.Post("/v1/completions", complete(false));
  server.Post("/v1/chat/completions", complete(true));

  // SIGTERM ends it (the default action): it holds nothing to flush.
  std::signal(SIGPIPE, SIG_IGN);
  int bound = port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound <= 0) {
    std::fprintf(stderr, "probe_trivial_server: cannot bind 127.0.0.1:%d\n", port);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", bound);
  std::fflush(stdout);
  server.listen_after_bind();
  return 0;
}
