// The OpenAI-compatible client `aimem probe` drives: /v1/completions and
// /v1/chat/completions, streamed (server-sent events) or not, on net::Connection;
// per request the time to first token, inter-token gaps, token counts and
// what went wrong (HTTP status, reset, timeout, a body that is not JSON, a
// stream cut before [DONE]). Prompts of exact token lengths through the
// server's tokenize endpoint where it has one, otherwise calibrated from
// usage.prompt_tokens. Every call is bounded in time and in bytes read.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aimem::probe {

struct Endpoint {
  std::string scheme = "http";  // "http" only (https is refused with a message)
  std::string host;             // as given: "127.0.0.1", "localhost", "[::1]"
  int port = 80;
  std::string base_path;        // "" or "/prefix" (no trailing slash); requests go to base_path + "/v1/..."
  std::string url() const;      // "http://127.0.0.1:8080" (+ base_path)
};

// Parses "http://HOST:PORT[/prefix]" (a bare "HOST:PORT" means http). A host
// that is not a loopback address (127.0.0.0/8, ::1, "localhost") is an error
// unless allow_remote. An error names the URL and what is wrong.
Result<Endpoint> parse_endpoint(const std::string& url, bool allow_remote);

enum class Api { completions, chat };

struct ClientOptions {
  double connect_timeout_s = 5;
  double request_timeout_s = 120;    // whole request, first byte to last
  double idle_timeout_s = 60;        // longest silence inside a stream
  // No call of this client outlives it (`aimem probe --timeout`): a request
  // still running then ends as a "timeout".
  std::optional<std::chrono::steady_clock::time_point> deadline;
  uint64_t max_response_bytes = 64ull << 20;  // an endless response stops here (error_kind "too_large")
  // What one response may make the client hold at once: a line of a stream,
  // a body that is not streamed (an error body: its first 4 KiB). With
  // hundreds of concurrent requests this is what bounds the probe's memory.
  uint64_t max_held_bytes = 1ull << 20;
  std::string api_key;               // sent as "Authorization: Bearer ..." when set
  // A Connection keeps its TCP connection open from one request to the next
  // (HTTP/1.1 keep-alive, as load generators such as vLLM's benchmark_serving
  // do); false opens a connection per request.
  bool keep_alive = true;
};

// A prompt's text: a literal string, or the generated filler of a request
// index (client_prompt.cc), which is never held whole: a prompt of millions
// of tokens is tens of MB, and a sweep sends hundreds at once. The filler is
// letters, digits and spaces only, so it goes into a JSON string as it is.
class PromptText {
 public:
  PromptText() = default;
  PromptText(std::string literal) : literal_(std::move(literal)) {}  // NOLINT: implicit, as a string
  PromptText(const char* literal) : literal_(literal) {}              // NOLINT
  // Request `index`'s filler: its digits, `words` words, then `pad` times " a".
  static PromptText filler(int index, int words, int pad = 0);

  bool generated() const { return generated_; }
  uint64_t size() const { return generated_ ? size_ : literal_.size(); }
  // Hands the text over in pieces of at most 16 KiB; false when `sink` returned false.
  bool write(const std::function<bool(std::string_view)>& sink) const;
  std::string str() const;  // the whole text (small prompts; tests)
  int words() const { return words_; }
  int pad() const { return pad_; }

 private:
  std::string literal_;
  bool generated_ = false;
  int index_ = 0, words_ = 0, pad_ = 0;
  uint64_t size_ = 0;
};

// A JSON request body with one string (a prompt) that may be too large to
// hold: head + the text + tail, the text written as it is sent.
struct JsonBody {
  std::string head;
  std::optional<PromptText> text;  // generated text only; a literal one is inside head
  std::string tail;
  uint64_t size() const { return head.size() + (text ? text->size() + tail.size() : 0); }
  std::string str() const;         // the whole body (tests)
};

struct RequestSpec {
  Api api = Api::completions;
  std::string model;                 // "" lets the client use the server's first /v1/models id
  PromptText prompt;
  int max_tokens = 16;
  bool stream = true;
  bool ignore_eos = true;            // asks the server to generate max_tokens (vLLM, llama.cpp honour it)
};

struct RequestResult {
  bool ok = false;
  int http_status = 0;               // 0: no HTTP response
  // "" when ok; else one of: "connect" (refused / unreachable), "timeout",
  // "reset" (connection closed without a complete response), "http" (status
  // >= 400), "bad_json" (a body or event that is not the JSON expected),
  // "cut_stream" (stream ended without [DONE] / finish_reason), "too_large",
  // "time_bound" (ClientOptions::deadline came first: not the server's failure).
  std::string error_kind;
  std::string error;                 // one line, for people: what and where (status, first bytes of body)
  double start_s = 0;                // seconds since the client's epoch (steady clock)
  double ttft_s = -1;                // request sent -> first generated token; -1 if none
  double total_s = 0;                // request sent -> last byte
  // Gaps between successive token events (streaming only): every gap up to
  // kMaxItlSamples, then a uniform sample of that many; itl_count counts them all.
  std::vector<double> itl_s;
  int64_t itl_count = 0;
  static constexpr size_t kMaxItlSamples = 512;
  int prompt_tokens = -1;            // usage.prompt_tokens when the server reports it
  int completion_tokens = 0;         // usage.completion_tokens, else the number of token events
};

// A request with its JSON body built once: a sweep sends each prompt many
// times, and the body's serialization was a visible part of a request's cost.
struct PreparedRequest {
  Api api = Api::completions;
  bool stream = true;
  JsonBody body;
  // Set when the model lookup the request needed failed for want of a
  // connection (connect, timeout, ...): every send of it reports this.
  std::string error_kind, error;
};

// Thread-safe: one Client may serve many concurrent requests (send() opens a
// connection per call; a Connection per thread keeps one). Copies share the
// cached model id and tokenize shape.
class Client {
 public:
  Client(Endpoint endpoint, ClientOptions options = {});
  ~Client();

  // One request on a connection of its own, closed after it.
  RequestResult send(const RequestSpec& spec) const;

  // The request's body, with the server's first model when spec.model is ""
  // (looked up once per Client; a server without /v1/models gets none).
  PreparedRequest prepare(const RequestSpec& spec) const;

  // GET /v1/models: the first model id ("" and an error if none).
  Result<std::string> first_model() const;

  // POST /tokenize (llama.cpp: {"content": text} -> {"tokens": [...]};
  // vLLM: {"model", "prompt"} -> {"count", "tokens"}). nullopt when the server
  // has no such endpoint (404 / 405 / not JSON); an error for a connection failure.
  // The text is sent as it is generated and the answer counted as it arrives.
  Result<std::optional<int>> count_tokens(const PromptText& text, const std::string& model) const;

  const Endpoint& endpoint() const { return endpoint_; }
  const ClientOptions& options() const { return options_; }

  struct State;  // what calls learn and later calls reuse (client.cc)

 private:
  friend class Connection;
  Endpoint endpoint_;
  ClientOptions options_;
  std::chrono::steady_clock::time_point epoch_;  // start_s counts from here
  std::shared_ptr<State> state_;
};

// One worker's connection to the server. With options().keep_alive its
// requests share one TCP connection, replaced without a word when the server
// closed it between two requests (Connection: close, its idle timeout, its
// limit of requests per connection), and dropped after any failed request so
// that the next one starts clean. A failed request is never sent again: it is
// reported as it failed. Without keep_alive each request connects afresh.
// Not thread-safe: one per thread; it must not outlive its Client.
class Connection {
 public:
  explicit Connection(const Client& client);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  RequestResult send(const PreparedRequest& request);
  RequestResult send(const RequestSpec& spec) { return send(client_.prepare(spec)); }

  int connects() const { return connects_; }  // TCP connections opened so far

 private:
  struct Http;  // its net::Connection (client.cc)
  const Client& client_;
  std::unique_ptr<Http> http_;
  bool one_shot_ = false;  // Client::send's: asks the server to close after it
  int connects_ = 0;

  friend class Client;
};

// Builds synthetic prompts of an exact token length for one server. The
// prompts are generated text (never stored, never user data): distinct per
// request index, so a prefix cache cannot share them. Not thread-safe (it
// learns the server's tokens per word as it goes): make the prompts first.
// A prompt made is a PromptText: its size, never its text, is held.
class PromptMaker {
 public:
  PromptMaker(const Client& client, std::string model);
  // A prompt whose token count is `tokens` (within 1% or 2 tokens when the
  // server can only be calibrated from usage.prompt_tokens). `how` is set to
  // "tokenize" or "usage" or "estimate" (no way to count: ~4 chars/token).
  Result<PromptText> make(int tokens, int request_index);
  std::string how() const { return how_; }

 private:
  const Client& client_;
  std::string model_;
  std::string how_;
  // tokens ~= tokens_per_word_ * words + offset_ for the filler text, learnt
  // from the server's counts (tokenize, usage) or assumed (estimate).
  double tokens_per_word_ = 0;
  double offset_ = 0;
  int calls_ = 0;                    // tokenize / calibration calls made so far

 public:
  int calls() const { return calls_; }
};

// Order statistics over a set of values: p in percent (0..100), nearest rank
// (the smallest value with at least p% of the values at or below it);
// nullopt when empty.
std::optional<double> percentile(std::vector<double> values, double p);

}  // namespace aimem::probe
