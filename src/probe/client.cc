// The OpenAI-compatible client of `aimem probe` (see client.h) on
// net::Connection (src/net/http_client.h).
//
// Connections (client.h Connection): each concurrency worker keeps one
// net::Connection, and so one TCP connection, for its requests, as real load
// generators do; with a connection per request, connect and shutdown alone
// were ~22% of the probe's CPU (perf, 3000 requests x 2 steps, on httplib).
// net::Connection reopens a connection the server closed (it checks the
// socket before each request and honours "Connection: close"); after a failed request the
// Connection drops its client so the next request starts clean. Nothing is
// ever sent twice. Two stalls of kept-alive connections are avoided here, both
// Nagle against delayed ACKs (measured on bench/probe_trivial_server: +44 ms
// on every TTFT each, +92 ms together): net::Connection sends the request in
// one write with TCP_NODELAY, and a server without TCP_NODELAY holds its
// events until we ACK its headers (TCP_QUICKACK at every read: Options.quickack).
// Every response is read through a content receiver, so that the body is never
// held whole (an endless stream stops at max_response_bytes) and each streamed
// event is timed when its bytes arrive. Bounds:
//   - connect_timeout_s for the TCP connect;
//   - idle_timeout_s as the socket read timeout (silence before the headers or
//     between two reads of a stream);
//   - request_timeout_s as an overall deadline, checked at every read (the
//     receiver returns false once it has passed) and capping the read timeout,
//     so a request ends at most one read timeout after its deadline;
//   - max_response_bytes on what one response may carry;
//   - max_held_bytes on what one response may make us hold (a stream's line,
//     a body that is not streamed; an error body's first 4 KiB);
//   - ClientOptions::deadline (the whole probe's) over all of them: every
//     wait and every request ends by then.
// Bodies: a generated prompt (PromptText) is written as the request goes out
// (JsonBody: head, text, tail), and /tokenize's answer is counted as it comes
// (TokenCountReader), so a prompt of millions of tokens is never held.
// Time to first token runs from just before the request (and its connect, on
// a new connection) to the arrival of the first event with non-empty generated
// text (a chat stream's role-only first delta is not a token); inter-token
// gaps between successive such events.
#include "probe/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/doc_reader.h"
#include "core/text.h"
#include "net/http_client.h"
#include "probe/sse.h"
#include "probe/tokenize_count.h"

namespace aimem::probe {

struct Client::State {
  std::mutex mu;
  bool model_known = false;
  std::string model;
  // A lookup that failed is not tried again by this client: a server that
  // never answers would otherwise cost a request timeout per call.
  std::optional<Error> model_error;
  std::string model_error_kind;
  // Which /tokenize request shape the server answered: 0 not tried yet,
  // 1 llama.cpp {"content"}, 2 vLLM {"model","prompt"}, 3 none.
  std::atomic<int> tokenize_shape{0};
};

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

net::Options net_options(const ClientOptions& o, double read_timeout_s) {
  net::Options n;
  n.connect_timeout_s = std::max(o.connect_timeout_s, 0.001);
  n.read_timeout_s = n.write_timeout_s = std::max(read_timeout_s, 0.001);
  n.quickack = true;
  return n;
}

void add_auth(net::Request& req, const ClientOptions& o) {
  if (!o.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + o.api_key);
}

// One line of a body for a message: the server's error message when the body
// is OpenAI's {"error": ...}, then the body's first bytes.
std::string body_excerpt(std::string_view body) {
  if (auto c = parse_chunk(body, ChunkApi::completions); c && c->error)
    return text::quote_line(*c->error, 200) + " (body: " + text::quote_line(body, 160) + ")";
  return text::quote_line(body, 200);
}

constexpr size_t kErrorExcerpt = 4096;  // what an error body keeps for its message
// Where a generated text goes in a JSON body: a string no prompt holds.
constexpr const char* kTextMark = "\x01aimem-text\x01";

// The request's deadline: its own timeout from now, never past the client's.
Clock::time_point request_deadline(const ClientOptions& o, Clock::time_point t0) {
  auto own = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.request_timeout_s));
  return o.deadline ? std::min(own, *o.deadline) : own;
}

// Which bound a request that ran out of time met: the probe's time bound, or its own timeout.
bool hit_client_deadline(const ClientOptions& o, Clock::time_point t0) {
  return o.deadline && request_deadline(o, t0) == *o.deadline;
}

// `body` holds kTextMark where `text` goes.
JsonBody json_body(const nlohmann::json& body, const PromptText& text) {
  JsonBody b;
  std::string dumped = body.dump();
  const std::string mark = nlohmann::json(kTextMark).dump();  // with its quotes and escapes
  size_t at = dumped.find(mark);
  if (at == std::string::npos) {
    b.head = std::move(dumped);
    return b;
  }
  if (!text.generated()) {
    b.head = dumped.substr(0, at) + nlohmann::json(text.str()).dump() + dumped.substr(at + mark.size());
    return b;
  }
  b.head = dumped.substr(0, at + 1);  // through the opening quote
  b.text = text;
  b.tail = dumped.substr(at + mark.size() - 1);
  return b;
}

void set_body(net::Request& req, const JsonBody& b) {
  req.body = b.head;
  if (!b.text) return;
  req.body_size = b.text->size() + b.tail.size();
  req.body_writer = [&b](const std::function<bool(std::string_view)>& sink) { return b.text->write(sink) && sink(b.tail); };
}

// A short call: /v1/models, /tokenize. Its body goes to `on_body` (which
// returns false to stop reading); without one it is kept in Plain::body up to
// max_held_bytes.
struct Plain {
  int status = 0;
  std::string body;
  std::string kind;   // as RequestResult::error_kind
  std::string error;
};

Plain plain_call(const Endpoint& e, const ClientOptions& o, const std::string& method, const std::string& path,
                 const JsonBody* json_body, const std::function<bool(std::string_view)>& on_body = {}) {
  Plain p;
  double read_timeout = std::min(o.idle_timeout_s, o.request_timeout_s);
  net::Connection conn(e.host, e.port, net_options(o, read_timeout));
  net::Request req;
  req.method = method;
  req.target = e.base_path + path;
  req.headers.emplace_back("Connection", "close");
  if (json_body) {
    set_body(req, *json_body);
    req.headers.emplace_back("Content-Type", "application/json");
  }
  add_auth(req, o);
  const Clock::time_point t0 = Clock::now();
  req.deadline = request_deadline(o, t0);
  bool too_large = false, too_much_held = false, stopped = false;
  uint64_t received = 0;
  net::Outcome out = conn.exchange(req, {[&](const net::Head& h) {
                                           p.status = h.status;
                                           return true;
                                         },
                                         [&](std::string_view piece) {
                                           received += piece.size();
                                           if (received > o.max_response_bytes) return !(too_large = true);
                                           const bool ok = p.status >= 200 && p.status < 300;
                                           if (on_body && ok) return on_body(piece) || !(stopped = true);
                                           const uint64_t keep = ok ? o.max_held_bytes : kErrorExcerpt;
                                           if (p.body.size() + piece.size() > keep) {
                                             if (ok) return !(too_much_held = true);
                                             p.body.append(piece.substr(0, keep - std::min<uint64_t>(keep, p.body.size())));
                                             return true;
                                           }
                                           p.body.append(piece);
                                           return true;
                                         }});
  p.status = out.got_head ? out.head.status : 0;
  std::string where = fmt::format("{} {}{}", method, e.url(), path);
  if (too_large) {
    p.kind = "too_large";
    p.error = fmt::format("{}: response larger than {} bytes", where, o.max_response_bytes);
  } else if (too_much_held) {
    p.kind = "too_large";
    p.error = fmt::format("{}: response body larger than the {} bytes aimem holds for it", where, o.max_held_bytes);
  } else if (stopped) {
    // The receiver had what it needed, or saw that it never would.
  } else if (out.failure == net::Failure::timeout && out.detail == "deadline") {
    p.kind = hit_client_deadline(o, t0) ? "time_bound" : "timeout";
    p.error = hit_client_deadline(o, t0) ? fmt::format("{}: stopped at the probe's time bound", where)
                                         : fmt::format("{}: no complete response within {} s", where, o.request_timeout_s);
  } else if (out.failure == net::Failure::connect) {
    p.kind = "connect";
    p.error = fmt::format("{}: cannot connect ({}); is the server running on that port?", where, out.detail);
  } else if (out.failure == net::Failure::timeout) {
    p.kind = "timeout";
    p.error = fmt::format("{}: no answer for {} s", where, read_timeout);
  } else if (!out.ok()) {
    p.kind = "reset";
    p.error = fmt::format("{}: connection closed without a complete response ({})", where, out.detail);
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
    if (state.model_error) {
      if (kind) *kind = state.model_error_kind;
      return *state.model_error;
    }
  }
  auto failed = [&](const std::string& k, std::string message) -> Result<std::string> {
    std::lock_guard<std::mutex> lock(state.mu);
    state.model_error = make_error(std::move(message));
    state.model_error_kind = k;
    if (kind) *kind = k;
    return *state.model_error;
  };
  Plain p = plain_call(e, o, "GET", "/v1/models", nullptr);
  if (!p.kind.empty()) return failed(p.kind, p.error);
  std::string where = e.url() + "/v1/models";
  if (p.status != 200) return failed("", fmt::format("GET {}: HTTP {}: {}", where, p.status, body_excerpt(p.body)));
  auto j = doc::parse_json_or_discarded(p.body);
  std::string id;
  if (j.is_object()) {
    auto d = j.find("data");
    if (d != j.end() && d->is_array() && !d->empty() && (*d)[0].is_object()) {
      auto i = (*d)[0].find("id");
      if (i != (*d)[0].end() && i->is_string()) id = i->get<std::string>();
    }
  }
  if (id.empty())
    return failed("", fmt::format("GET {}: no model id in data[0].id (body: {})", where, text::quote_line(p.body, 200)));
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
  if (chat) body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", kTextMark}}});
  else body["prompt"] = kTextMark;
  body["max_tokens"] = spec.max_tokens;
  body["stream"] = spec.stream;
  // vLLM rejects stream_options on a request that does not stream.
  if (spec.stream) body["stream_options"] = {{"include_usage", true}};
  if (spec.ignore_eos) body["ignore_eos"] = true;
  p.body = json_body(body, spec.prompt);
  return p;
}

RequestResult Client::send(const RequestSpec& spec) const {
  Connection c(*this);
  c.one_shot_ = true;
  return c.send(prepare(spec));
}

struct Connection::Http {
  net::Connection conn;
  Http(const Endpoint& e, const net::Options& o) : conn(e.host, e.port, o) {}
};

Connection::Connection(const Client& client) : client_(client) {}
Connection::~Connection() = default;

namespace {

// One request and its reading on `cli` (see the top of this file). Kept whole
// (~190 lines): the receiver's callbacks and the verdict after them share a
// dozen locals of the one request; cut apart they would pass them all around.
RequestResult exchange(net::Connection& conn, bool keep, const Endpoint& endpoint, const ClientOptions& options,
                       Clock::time_point epoch, const PreparedRequest& pr) {
  RequestResult r;
  const bool chat = pr.api == Api::chat;
  net::Request req;
  req.method = "POST";
  req.target = endpoint.base_path + (chat ? "/v1/chat/completions" : "/v1/completions");
  set_body(req, pr.body);
  req.headers.emplace_back("Content-Type", "application/json");
  if (pr.stream) req.headers.emplace_back("Accept", "text/event-stream");
  if (!keep) req.headers.emplace_back("Connection", "close");
  add_auth(req, options);
  const double read_timeout = std::min(options.idle_timeout_s, options.request_timeout_s);

  const ChunkApi api = chat ? ChunkApi::chat : ChunkApi::completions;
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point deadline = request_deadline(options, t0);
  req.deadline = deadline;
  r.start_s = seconds(t0 - epoch);
  uint64_t itl_rng = 0x9E3779B97F4A7C15ull;  // for the sample of gaps past kMaxItlSamples

  // What the receiver learns; `stop` says why it gave up, if it did.
  enum class Stop { none, too_large, deadline, bad_json, server_error } stop = Stop::none;
  bool streaming = false, done = false, finished = false;
  int text_events = 0, events = 0;
  uint64_t received = 0;
  Clock::time_point last_byte = t0, last_token{};
  std::string plain_body, stop_detail;
  std::optional<int> usage_prompt, usage_completion, error_code;
  SseParser parser(std::min<uint64_t>(options.max_response_bytes, options.max_held_bytes));
  bool held_too_much = false;

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
      if (text_events == 0) {
        r.ttft_s = seconds(last_byte - t0);
      } else {
        // Reservoir sampling: each gap is kept with probability kMaxItlSamples / gaps so far.
        const double gap = seconds(last_byte - last_token);
        ++r.itl_count;
        if (r.itl_s.size() < RequestResult::kMaxItlSamples) {
          r.itl_s.push_back(gap);
        } else {
          itl_rng = itl_rng * 6364136223846793005ull + 1442695040888963407ull;
          uint64_t j = (itl_rng >> 17) % static_cast<uint64_t>(r.itl_count);
          if (j < RequestResult::kMaxItlSamples) r.itl_s[j] = gap;
        }
      }
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
  // reused ones. net::Connection sets TCP_QUICKACK at every read (not sticky).
  auto on_head = [&](const net::Head& h) {
    r.http_status = h.status;
    streaming = h.status >= 200 && h.status < 300 && text::icontains(h.field("Content-Type"), "text/event-stream");
    return true;
  };
  auto on_body = [&](std::string_view data) {
    last_byte = Clock::now();
    received += data.size();
    if (received > options.max_response_bytes) { stop = Stop::too_large; return false; }
    if (last_byte > deadline) { stop = Stop::deadline; return false; }
    if (!streaming) {
      const bool ok = r.http_status >= 200 && r.http_status < 300;
      const uint64_t keep = ok ? options.max_held_bytes : kErrorExcerpt;
      if (plain_body.size() + data.size() > keep) {
        if (ok) {
          held_too_much = true;
          stop = Stop::too_large;
          return false;
        }
        data = data.substr(0, keep - std::min<uint64_t>(keep, plain_body.size()));
      }
      plain_body.append(data);
      return true;
    }
    if (!parser.feed(data, on_event)) {
      if (stop == Stop::none) {  // one line beyond the parser's bound
        stop = Stop::too_large;
        held_too_much = true;
      }
      return false;
    }
    return true;
  };

  net::Outcome out = conn.exchange(req, {on_head, on_body});
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
      if (held_too_much)
        return fail("too_large", fmt::format("{}: {} longer than the {} bytes aimem holds for it; stopped reading", where(),
                                             streaming ? "a line of the stream" : "the body", options.max_held_bytes));
      return fail("too_large", fmt::format("{}: response passed {} bytes after {:.1f} s; stopped reading", where(),
                                           options.max_response_bytes, r.total_s));
    case Stop::deadline:
      if (hit_client_deadline(options, t0))
        return fail("time_bound", fmt::format("{}: stopped at the probe's time bound ({} events so far)", where(), events));
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
  if (!out.ok()) {
    if (out.failure == net::Failure::connect)
      return fail("connect", fmt::format("{}: cannot connect ({}); is the server running on that port?", where(),
                                         out.detail));
    if (out.failure == net::Failure::timeout && out.detail == "deadline") {
      std::string so_far = r.http_status ? fmt::format(" (HTTP {}, {} events so far)", r.http_status, events) : " (no response yet)";
      if (hit_client_deadline(options, t0))
        return fail("time_bound", fmt::format("{}: stopped at the probe's time bound{}", where(), so_far));
      return fail("timeout", fmt::format("{}: not complete within the request timeout of {} s{}", where(),
                                         options.request_timeout_s, so_far));
    }
    if (out.failure == net::Failure::timeout)
      return fail("timeout", fmt::format("{}: no data for {} s{}", where(), read_timeout,
                                         r.http_status ? fmt::format(" (HTTP {}, {} events so far)", r.http_status, events)
                                                       : " (no response yet)"));
    if (streaming)
      return fail("cut_stream", fmt::format("{}: connection closed in the middle of the stream after {} events ({} tokens)",
                                            where(), events, text_events));
    return fail("reset", fmt::format("{}: connection closed without a complete response{} ({})", where(),
                                     r.http_status ? fmt::format(" (HTTP {})", r.http_status) : "", out.detail));
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
  if (!http_) http_ = std::make_unique<Http>(client_.endpoint_, net_options(o, std::min(o.idle_timeout_s, o.request_timeout_s)));
  RequestResult r = exchange(http_->conn, keep, client_.endpoint_, o, client_.epoch_, request);
  connects_ = http_->conn.connects();
  // A failed request may leave bytes of its response unread or the socket
  // half-closed: the next request gets a fresh connection. This is not a
  // retry: the failure above is what the caller sees.
  if (!r.ok || !keep) http_->conn.close();
  return r;
}

Result<std::optional<int>> Client::count_tokens(const PromptText& text, const std::string& model) const {
  int shape = state_->tokenize_shape.load();
  if (shape == 3) return std::optional<int>{};
  for (int s : {1, 2}) {
    if (shape != 0 && s != shape) continue;
    nlohmann::json body;
    if (s == 1) {
      // add_special: count the BOS the completion endpoints add, as vLLM does by default.
      body = {{"content", kTextMark}, {"add_special", true}};
    } else {
      std::string m = model;
      if (m.empty())
        if (auto fm = first_model()) m = *fm;
      body = {{"prompt", kTextMark}};
      if (!m.empty()) body["model"] = m;
    }
    const JsonBody jb = json_body(body, text);
    TokenCountReader counter;
    Plain p = plain_call(endpoint_, options_, "POST", "/tokenize", &jb, [&](std::string_view piece) { return counter.feed(piece); });
    if (!p.kind.empty()) return make_error(p.error);
    if (p.status == 404 || p.status == 405) break;
    if (p.status == 200) {
      if (auto n = counter.result(); n && *n >= 0 && *n <= INT32_MAX) {
        state_->tokenize_shape = s;
        return std::optional<int>(static_cast<int>(*n));
      }
      if (!counter.is_object()) break;  // something else answers there
    }
    if (shape != 0) return std::optional<int>{};   // the known shape failed this once
  }
  state_->tokenize_shape = 3;
  return std::optional<int>{};
}

std::string JsonBody::str() const {
  std::string s = head;
  if (text) {
    s += text->str();
    s += tail;
  }
  return s;
}

}  // namespace aimem::probe
