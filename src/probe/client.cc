// The OpenAI-compatible client of `aimem probe` (see client.h) on cpp-httplib.
//
// Connections (client.h Connection): each concurrency worker keeps one
// httplib::Client, and so one TCP connection, for its requests, as real load
// generators do; with a connection per request, connect and shutdown alone
// were ~22% of the probe's CPU (perf, 3000 requests x 2 steps). httplib
// reopens a connection the server closed (it checks the socket before each
// request and honours "Connection: close"); after a failed request the
// Connection drops its client so the next request starts clean. Nothing is
// ever sent twice. Two stalls of kept-alive connections are avoided here, both
// Nagle against delayed ACKs (measured on bench/probe_trivial_server: +44 ms
// on every TTFT each, +92 ms together): the client's request goes out in two
// writes (TCP_NODELAY), and a server without TCP_NODELAY holds its events
// until we ACK its headers (TCP_QUICKACK at every read, see exchange()).
// Every response is read through a content receiver, so that the body is never
// held whole (an endless stream stops at max_response_bytes) and each streamed
// event is timed when its bytes arrive. Bounds:
//   - connect_timeout_s for the TCP connect;
//   - idle_timeout_s as the socket read timeout (silence before the headers or
//     between two reads of a stream);
//   - request_timeout_s as an overall deadline, checked at every read (the
//     receiver returns false once it has passed) and capping the read timeout,
//     so a request ends at most one read timeout after its deadline;
//   - max_response_bytes on what one response may carry.
// Time to first token runs from just before the request (and its connect, on
// a new connection) to the arrival of the first event with non-empty generated
// text (a chat stream's role-only first delta is not a token); inter-token
// gaps between successive such events.
#include "probe/client.h"

#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "probe/sse.h"

namespace aimem::probe {

struct Client::State {
  std::mutex mu;
  bool model_known = false;
  std::string model;
  // Which /tokenize request shape the server answered: 0 not tried yet,
  // 1 llama.cpp {"content"}, 2 vLLM {"model","prompt"}, 3 none.
  std::atomic<int> tokenize_shape{0};
};

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// httplib takes seconds and microseconds.
std::pair<time_t, time_t> split_s(double s) {
  s = std::max(s, 0.001);
  auto whole = static_cast<time_t>(s);
  return {whole, static_cast<time_t>(std::lround((s - static_cast<double>(whole)) * 1e6))};
}

std::string bare_host(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

void configure(httplib::Client& c, const ClientOptions& o, double read_timeout_s, bool keep_alive) {
  auto [cs, cu] = split_s(o.connect_timeout_s);
  c.set_connection_timeout(cs, cu);
  auto [rs, ru] = split_s(read_timeout_s);
  c.set_read_timeout(rs, ru);
  c.set_write_timeout(rs, ru);
  c.set_keep_alive(keep_alive);
  // httplib writes a request's headers and its body in two writes: with Nagle
  // on, the body waits for the ACK of the headers, which a server in delayed-
  // ACK mode (any kept-alive connection past its first exchanges) holds for up
  // to 40 ms. TCP_NODELAY sends it at once.
  c.set_tcp_nodelay(true);
  if (!o.api_key.empty()) c.set_bearer_token_auth(o.api_key);
}

std::unique_ptr<httplib::Client> connect_to(const Endpoint& e, const ClientOptions& o, double read_timeout_s) {
  auto c = std::make_unique<httplib::Client>(bare_host(e.host), e.port);
  configure(*c, o, read_timeout_s, false);
  return c;
}

// One line of a body for a message: the server's error message when the body
// is OpenAI's {"error": ...}, then the body's first bytes.
std::string body_excerpt(std::string_view body) {
  if (auto c = parse_chunk(body, ChunkApi::completions); c && c->error)
    return text::quote_line(*c->error, 200) + " (body: " + text::quote_line(body, 160) + ")";
  return text::quote_line(body, 200);
}

// A short call with its whole (bounded) body: /v1/models, /tokenize.
struct Plain {
  int status = 0;
  std::string body;
  std::string kind;   // as RequestResult::error_kind
  std::string error;
};

Plain plain_call(const Endpoint& e, const ClientOptions& o, const std::string& method, const std::string& path,
                 const std::string& json_body) {
  Plain p;
  double read_timeout = std::min(o.idle_timeout_s, o.request_timeout_s);
  auto cli = connect_to(e, o, read_timeout);
  httplib::Request req;
  req.method = method;
  req.path = e.base_path + path;
  if (!json_body.empty()) {
    req.body = json_body;
    req.set_header("Content-Type", "application/json");
  }
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.request_timeout_s));
  auto last = Clock::now();
  bool too_large = false, late = false;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    last = Clock::now();
    if (p.body.size() + n > o.max_response_bytes) return !(too_large = true);
    if (last > deadline) return !(late = true);
    p.body.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  bool sent = cli->send(req, res, err);
  p.status = res.status > 0 ? res.status : 0;
  std::string where = fmt::format("{} {}{}", method, e.url(), path);
  if (too_large) {
    p.kind = "too_large";
    p.error = fmt::format("{}: response larger than {} bytes", where, o.max_response_bytes);
  } else if (late) {
    p.kind = "timeout";
    p.error = fmt::format("{}: no complete response within {} s", where, o.request_timeout_s);
  } else if (!sent) {
    if (err == httplib::Error::Connection || err == httplib::Error::ConnectionTimeout) {
      p.kind = "connect";
      p.error = fmt::format("{}: cannot connect ({}); is the server running on that port?", where, httplib::to_string(err));
    } else if (err == httplib::Error::Read && seconds(Clock::now() - last) >= read_timeout * 0.9) {
      p.kind = "timeout";
      p.error = fmt::format("{}: no answer for {} s", where, read_timeout);
    } else {
      p.kind = "reset";
      p.error = fmt::format("{}: connection closed without a complete response ({})", where, httplib::to_string(err));
    }
  }
  return p;
}

}  // namespace

Client::Client(Endpoint endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)), epoch_(Clock::now()),
      state_(std::make_shared<State>()) {}

Client::~Client() = default;

namespace {

// GET /v1/models, remembered in `state` once it answered. `kind` receives the
// transport failure's kind (connect, timeout, ...) when there was one.
Result<std::string> lookup_model(const Endpoint& e, const ClientOptions& o, Client::State& state, std::string* kind) {
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (state.model_known) return state.model;
  }
  Plain p = plain_call(e, o, "GET", "/v1/models", "");
  if (!p.kind.empty()) {
    if (kind) *kind = p.kind;
    return make_error(p.error);
  }
  std::string where = e.url() + "/v1/models";
  if (p.status != 200) return make_error(fmt::format("GET {}: HTTP {}: {}", where, p.status, body_excerpt(p.body)));
  auto j = nlohmann::json::parse(p.body, nullptr, false);
  std::string id;
  if (j.is_object()) {
    auto d = j.find("data");
    if (d != j.end() && d->is_array() && !d->empty() && (*d)[0].is_object()) {
      auto i = (*d)[0].find("id");
      if (i != (*d)[0].end() && i->is_string()) id = i->get<std::string>();
    }
  }
  if (id.empty())
    return make_error(fmt::format("GET {}: no model id in data[0].id (body: {})", where, text::quote_line(p.body, 200)));
  std::lock_guard<std::mutex> lock(state.mu);
  state.model_known = true;
  state.model = id;
  return id;
}

}  // namespace

Result<std::string> Client::first_model() const { return lookup_model(endpoint_, options_, *state_, nullptr); }

PreparedRequest Client::prepare(const RequestSpec& spec) const {
  PreparedRequest p;
  p.api = spec.api;
  p.stream = spec.stream;
  std::string model = spec.model;
  if (model.empty()) {
    std::string kind;
    auto m = lookup_model(endpoint_, options_, *state_, &kind);
    // A server without /v1/models (or with an odd one) still gets the request,
    // without "model": llama.cpp and recent vLLM then use the one they serve.
    if (m) {
      model = *m;
    } else if (!kind.empty()) {
      p.error_kind = kind;
      p.error = m.error().message;
      return p;
    }
  }
  const bool chat = spec.api == Api::chat;
  nlohmann::json body = nlohmann::json::object();
  if (!model.empty()) body["model"] = model;
  if (chat) body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", spec.prompt}}});
  else body["prompt"] = spec.prompt;
  body["max_tokens"] = spec.max_tokens;
  body["stream"] = spec.stream;
  // vLLM rejects stream_options on a request that does not stream.
  if (spec.stream) body["stream_options"] = {{"include_usage", true}};
  if (spec.ignore_eos) body["ignore_eos"] = true;
  p.body = body.dump();
  return p;
}

RequestResult Client::send(const RequestSpec& spec) const {
  Connection c(*this);
  c.one_shot_ = true;
  return c.send(prepare(spec));
}

struct Connection::Http {
  httplib::Client cli;
  Http(const Endpoint& e) : cli(bare_host(e.host), e.port) {}
};

Connection::Connection(const Client& client) : client_(client) {}
Connection::~Connection() = default;

namespace {

// One request and its reading on `cli` (see the top of this file).
RequestResult exchange(httplib::Client& cli, const Endpoint& endpoint, const ClientOptions& options,
                       Clock::time_point epoch, const PreparedRequest& pr) {
  RequestResult r;
  const bool chat = pr.api == Api::chat;
  httplib::Request req;
  req.method = "POST";
  req.path = endpoint.base_path + (chat ? "/v1/chat/completions" : "/v1/completions");
  req.body = pr.body;
  req.set_header("Content-Type", "application/json");
  if (pr.stream) req.set_header("Accept", "text/event-stream");
  const double read_timeout = std::min(options.idle_timeout_s, options.request_timeout_s);

  const ChunkApi api = chat ? ChunkApi::chat : ChunkApi::completions;
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point deadline =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.request_timeout_s));
  r.start_s = seconds(t0 - epoch);

  // What the receiver learns; `stop` says why it gave up, if it did.
  enum class Stop { none, too_large, deadline, bad_json, server_error } stop = Stop::none;
  bool streaming = false, done = false, finished = false;
  int text_events = 0, events = 0;
  uint64_t received = 0;
  Clock::time_point last_byte = t0, last_token{};
  std::string plain_body, stop_detail;
  std::optional<int> usage_prompt, usage_completion, error_code;
  SseParser parser(std::min<uint64_t>(options.max_response_bytes, 8u << 20));

  auto on_event = [&](std::string_view data) {
    ++events;
    auto c = parse_chunk(data, api);
    if (!c) {
      stop = Stop::bad_json;
      stop_detail = text::quote_line(data, 200);
      return false;
    }
    if (c->done) { done = true; return true; }
    if (c->error) {
      stop = Stop::server_error;
      stop_detail = text::quote_line(*c->error, 300);
      error_code = c->error_code;
      return false;
    }
    if (!c->text.empty()) {
      if (text_events == 0) r.ttft_s = seconds(last_byte - t0);
      else r.itl_s.push_back(seconds(last_byte - last_token));
      last_token = last_byte;
      ++text_events;
    }
    if (c->prompt_tokens) usage_prompt = c->prompt_tokens;
    if (c->completion_tokens) usage_completion = c->completion_tokens;
    finished = finished || c->finished;
    return true;
  };

  // The server may write its headers and each event separately without
  // TCP_NODELAY (cpp-httplib's default, llama.cpp's llama-server): Nagle then
  // holds each write until the previous one is ACKed, and on a kept-alive
  // connection Linux delays our ACKs (up to 40 ms: measured +44 ms on every
  // TTFT against bench/probe_trivial_server --nagle --split). A fresh
  // connection starts in quick-ACK mode, which is why the stall only shows on
  // reused ones. TCP_QUICKACK sends the pending ACK now and leaves delayed-ACK
  // mode; it is not sticky, so it is set again at every read. httplib has no
  // setting for it; its socket is at hand.
  auto ack_now = [&] {
    int one = 1;
    setsockopt(cli.socket(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  };
  req.response_handler = [&](const httplib::Response& res) {
    ack_now();
    r.http_status = res.status;
    streaming = res.status >= 200 && res.status < 300 &&
                text::icontains(res.get_header_value("Content-Type"), "text/event-stream");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    last_byte = Clock::now();
    ack_now();
    received += n;
    if (received > options.max_response_bytes) { stop = Stop::too_large; return false; }
    if (last_byte > deadline) { stop = Stop::deadline; return false; }
    if (!streaming) {
      plain_body.append(data, n);
      return true;
    }
    if (!parser.feed(std::string_view(data, n), on_event)) {
      if (stop == Stop::none) stop = Stop::too_large;  // one line beyond the parser's bound
      return false;
    }
    return true;
  };

  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  bool sent = cli.send(req, res, err);
  const Clock::time_point t_end = Clock::now();
  r.total_s = seconds((stop == Stop::none ? t_end : last_byte) - t0);
  r.prompt_tokens = usage_prompt.value_or(-1);
  r.completion_tokens = usage_completion.value_or(text_events);

  // Formatted only on failure: a probe sends thousands of requests that pass.
  auto where = [&] { return fmt::format("POST {}{}", endpoint.url(), chat ? "/v1/chat/completions" : "/v1/completions"); };
  auto fail = [&](const char* kind, std::string message) {
    r.ok = false;
    r.error_kind = kind;
    r.error = std::move(message);
    return r;
  };
  switch (stop) {
    case Stop::too_large:
      return fail("too_large", fmt::format("{}: response passed {} bytes after {:.1f} s; stopped reading", where(),
                                           options.max_response_bytes, r.total_s));
    case Stop::deadline:
      return fail("timeout", fmt::format("{}: not complete within the request timeout of {} s ({} events so far)",
                                         where(), options.request_timeout_s, events));
    case Stop::bad_json:
      return fail("bad_json", fmt::format("{}: stream event {} is not a JSON object: {}", where(), events, stop_detail));
    case Stop::server_error:
      return fail("http", fmt::format("{}: the server reported an error in the stream{}: {}", where(),
                                      error_code ? fmt::format(" (code {})", *error_code) : "", stop_detail));
    case Stop::none:
      break;
  }
  if (!sent) {
    if (err == httplib::Error::Connection || err == httplib::Error::ConnectionTimeout)
      return fail("connect", fmt::format("{}: cannot connect ({}); is the server running on that port?", where(),
                                         httplib::to_string(err)));
    // httplib 0.11 reports a read timeout and a closed connection alike
    // (Error::Read): a silence as long as the read timeout tells them apart.
    if (err == httplib::Error::Read && seconds(t_end - last_byte) >= read_timeout * 0.9)
      return fail("timeout", fmt::format("{}: no data for {} s{}", where(), read_timeout,
                                         r.http_status ? fmt::format(" (HTTP {}, {} events so far)", r.http_status, events)
                                                       : " (no response yet)"));
    if (streaming)
      return fail("cut_stream", fmt::format("{}: connection closed in the middle of the stream after {} events ({} tokens)",
                                            where(), events, text_events));
    return fail("reset", fmt::format("{}: connection closed without a complete response{} ({})", where(),
                                     r.http_status ? fmt::format(" (HTTP {})", r.http_status) : "",
                                     httplib::to_string(err)));
  }
  if (r.http_status < 200 || r.http_status >= 300)
    return fail("http", fmt::format("{}: HTTP {}: {}", where(), r.http_status, body_excerpt(plain_body)));
  if (streaming) {
    if (!done && !finished)
      return fail("cut_stream", fmt::format("{}: stream ended after {} events ({} tokens) without [DONE] or a finish_reason",
                                            where(), events, text_events));
    r.ok = true;
    return r;
  }
  // Not streamed (asked so, or the server ignored "stream": true).
  auto c = parse_chunk(plain_body, api);
  if (!c) return fail("bad_json", fmt::format("{}: HTTP {} body is not JSON: {}", where(), r.http_status, text::quote_line(plain_body, 200)));
  if (c->error) return fail("http", fmt::format("{}: HTTP {} with an error: {}", where(), r.http_status, text::quote_line(*c->error, 300)));
  if (!c->has_choices)
    return fail("bad_json", fmt::format("{}: HTTP {} body has no choices: {}", where(), r.http_status, text::quote_line(plain_body, 200)));
  r.prompt_tokens = c->prompt_tokens.value_or(-1);
  // Without usage a whole body says nothing of its token count.
  r.completion_tokens = c->completion_tokens.value_or(0);
  r.ok = true;
  return r;
}

}  // namespace

RequestResult Connection::send(const PreparedRequest& request) {
  const ClientOptions& o = client_.options_;
  if (!request.error_kind.empty()) {
    RequestResult r;
    r.start_s = seconds(Clock::now() - client_.epoch_);
    r.error_kind = request.error_kind;
    r.error = request.error;
    return r;
  }
  const bool keep = o.keep_alive && !one_shot_;
  if (!http_) {
    http_ = std::make_unique<Http>(client_.endpoint_);
    configure(http_->cli, o, std::min(o.idle_timeout_s, o.request_timeout_s), keep);
    http_->cli.set_socket_options([this](socket_t) { ++connects_; });
  }
  RequestResult r = exchange(http_->cli, client_.endpoint_, o, client_.epoch_, request);
  // A failed request may leave bytes of its response unread or the socket
  // half-closed: the next request gets a fresh connection. This is not a
  // retry: the failure above is what the caller sees.
  if (!r.ok || !keep) http_.reset();
  return r;
}

Result<std::optional<int>> Client::count_tokens(const std::string& text, const std::string& model) const {
  int shape = state_->tokenize_shape.load();
  if (shape == 3) return std::optional<int>{};
  for (int s : {1, 2}) {
    if (shape != 0 && s != shape) continue;
    nlohmann::json body;
    if (s == 1) {
      // add_special: count the BOS the completion endpoints add, as vLLM does by default.
      body = {{"content", text}, {"add_special", true}};
    } else {
      std::string m = model;
      if (m.empty())
        if (auto fm = first_model()) m = *fm;
      body = {{"prompt", text}};
      if (!m.empty()) body["model"] = m;
    }
    Plain p = plain_call(endpoint_, options_, "POST", "/tokenize", body.dump());
    if (!p.kind.empty()) return make_error(p.error);
    if (p.status == 404 || p.status == 405) break;
    auto j = nlohmann::json::parse(p.body, nullptr, false);
    if (p.status == 200 && j.is_object()) {
      if (auto c = j.find("count"); c != j.end() && c->is_number_integer()) {
        state_->tokenize_shape = s;
        return std::optional<int>(c->get<int>());
      }
      if (auto t = j.find("tokens"); t != j.end() && t->is_array()) {
        state_->tokenize_shape = s;
        return std::optional<int>(static_cast<int>(t->size()));
      }
    }
    if (p.status == 200 && !j.is_object()) break;  // something else answers there
    if (shape != 0) return std::optional<int>{};   // the known shape failed this once
  }
  state_->tokenize_shape = 3;
  return std::optional<int>{};
}

}  // namespace aimem::probe
