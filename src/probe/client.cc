// The OpenAI-compatible client of `aimem probe` (see client.h) on cpp-httplib.
//
// One httplib::Client per call: the calls of a concurrency step then share no
// socket and no lock, and a probe measures what a fresh client sees. Kept-alive
// connections were measured (bench/probe_client_bench): ~30% less client CPU,
// but against a server that does not set TCP_NODELAY (cpp-httplib's default,
// so llama.cpp's llama-server) a reused connection leaves Linux's quick-ACK
// mode, and Nagle plus delayed ACKs added ~28 ms to every request: a latency
// probe must not add its own stalls, so each request connects afresh. Every
// response is read through a content receiver, so that the body is never held
// whole (an endless stream stops at max_response_bytes) and each streamed
// event is timed when its bytes arrive. Bounds:
//   - connect_timeout_s for the TCP connect;
//   - idle_timeout_s as the socket read timeout (silence before the headers or
//     between two reads of a stream);
//   - request_timeout_s as an overall deadline, checked at every read (the
//     receiver returns false once it has passed) and capping the read timeout,
//     so a request ends at most one read timeout after its deadline;
//   - max_response_bytes on what one response may carry.
// Time to first token runs from just before the connect to the arrival of the
// first event with non-empty generated text (a chat stream's role-only first
// delta is not a token); inter-token gaps between successive such events.
#include "probe/client.h"

#include <fmt/format.h>
#include <httplib.h>

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

std::unique_ptr<httplib::Client> connect_to(const Endpoint& e, const ClientOptions& o, double read_timeout_s) {
  auto c = std::make_unique<httplib::Client>(bare_host(e.host), e.port);
  auto [cs, cu] = split_s(o.connect_timeout_s);
  c->set_connection_timeout(cs, cu);
  auto [rs, ru] = split_s(read_timeout_s);
  c->set_read_timeout(rs, ru);
  c->set_write_timeout(rs, ru);
  c->set_keep_alive(false);
  if (!o.api_key.empty()) c->set_bearer_token_auth(o.api_key);
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

RequestResult Client::send(const RequestSpec& spec) const {
  RequestResult r;
  std::string model = spec.model;
  if (model.empty()) {
    std::string kind;
    auto m = lookup_model(endpoint_, options_, *state_, &kind);
    // A server without /v1/models (or with an odd one) still gets the request,
    // without "model": llama.cpp and recent vLLM then use the one they serve.
    if (m) {
      model = *m;
    } else if (!kind.empty()) {
      r.error_kind = kind;
      r.error = m.error().message;
      return r;
    }
  }

  const bool chat = spec.api == Api::chat;
  const std::string path = endpoint_.base_path + (chat ? "/v1/chat/completions" : "/v1/completions");
  nlohmann::json body = nlohmann::json::object();
  if (!model.empty()) body["model"] = model;
  if (chat) body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", spec.prompt}}});
  else body["prompt"] = spec.prompt;
  body["max_tokens"] = spec.max_tokens;
  body["stream"] = spec.stream;
  // vLLM rejects stream_options on a request that does not stream.
  if (spec.stream) body["stream_options"] = {{"include_usage", true}};
  if (spec.ignore_eos) body["ignore_eos"] = true;

  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  if (spec.stream) req.set_header("Accept", "text/event-stream");

  const double read_timeout = std::min(options_.idle_timeout_s, options_.request_timeout_s);
  auto cli = connect_to(endpoint_, options_, read_timeout);

  const ChunkApi api = chat ? ChunkApi::chat : ChunkApi::completions;
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point deadline =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.request_timeout_s));
  r.start_s = seconds(t0 - epoch_);

  // What the receiver learns; `stop` says why it gave up, if it did.
  enum class Stop { none, too_large, deadline, bad_json, server_error } stop = Stop::none;
  bool streaming = false, done = false, finished = false;
  int text_events = 0, events = 0;
  uint64_t received = 0;
  Clock::time_point last_byte = t0, last_token{};
  std::string plain_body, stop_detail;
  std::optional<int> usage_prompt, usage_completion, error_code;
  SseParser parser(std::min<uint64_t>(options_.max_response_bytes, 8u << 20));

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

  req.response_handler = [&](const httplib::Response& res) {
    r.http_status = res.status;
    streaming = res.status >= 200 && res.status < 300 &&
                text::icontains(res.get_header_value("Content-Type"), "text/event-stream");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    last_byte = Clock::now();
    received += n;
    if (received > options_.max_response_bytes) { stop = Stop::too_large; return false; }
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
  bool sent = cli->send(req, res, err);
  const Clock::time_point t_end = Clock::now();
  r.total_s = seconds((stop == Stop::none ? t_end : last_byte) - t0);
  r.prompt_tokens = usage_prompt.value_or(-1);
  r.completion_tokens = usage_completion.value_or(text_events);

  // Formatted only on failure: a probe sends thousands of requests that pass.
  auto where = [&] { return fmt::format("POST {}{}", endpoint_.url(), chat ? "/v1/chat/completions" : "/v1/completions"); };
  auto fail = [&](const char* kind, std::string message) {
    r.ok = false;
    r.error_kind = kind;
    r.error = std::move(message);
    return r;
  };
  switch (stop) {
    case Stop::too_large:
      return fail("too_large", fmt::format("{}: response passed {} bytes after {:.1f} s; stopped reading", where(),
                                           options_.max_response_bytes, r.total_s));
    case Stop::deadline:
      return fail("timeout", fmt::format("{}: not complete within the request timeout of {} s ({} events so far)",
                                         where(), options_.request_timeout_s, events));
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
