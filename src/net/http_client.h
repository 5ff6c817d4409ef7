// A small HTTP/1.1 client over one TCP connection (plain http), for aimem's
// scrapes, webhooks and `aimem probe`: connect with a timeout, send one
// request, read the head, hand the body over as it arrives (Content-Length,
// chunked or until close), tell a refused connect from a silence from a
// connection closed early, and keep the connection for the next request when
// the server allows it.
//
// Written by hand, not on CivetWeb's client API (which the https webhook
// uses, see tls_post.h), because that API cannot do what a latency
// probe needs: mg_connect_client takes no connect timeout; no public call
// returns the socket, so TCP_NODELAY / TCP_QUICKACK cannot be set;
// mg_get_response's timeout covers only the response head, and mg_read then
// answers a silence, a reset and a truncated body alike (-1 or 0), so
// "timeout", "reset" and "cut_stream" could not be told apart.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "net/http_response.h"

namespace aimem::net {

using Clock = std::chrono::steady_clock;

// Hands a body over in pieces; returns false when a piece's sink returned
// false (the send failed), true when every piece went.
using BodyWriter = std::function<bool(const std::function<bool(std::string_view)>& piece)>;

struct Request {
  // {"GET", "/path", {headers}, "body"} as before the streamed body and the
  // deadline were added (a constructor, so that brace lists that stop there
  // leave them at their defaults without -Wmissing-field-initializers).
  Request(std::string method_ = "GET", std::string target_ = "/", Fields headers_ = {}, std::string body_ = {})
      : method(std::move(method_)), target(std::move(target_)), headers(std::move(headers_)), body(std::move(body_)) {}
  std::string method = "GET";
  std::string target = "/";  // path and query
  Fields headers;            // Host and Content-Length are added
  std::string body;
  // A body too large to hold (a probe's prompt of millions of tokens): written
  // as it is sent, body_size bytes from body_writer after `body`.
  BodyWriter body_writer;
  uint64_t body_size = 0;
  // The whole exchange (connect, send, response) ends by then, whatever the
  // options' timeouts: Failure::timeout with detail "deadline".
  std::optional<Clock::time_point> deadline;
};

enum class Failure {
  none,
  connect,       // refused, unreachable, name not found, or connect timed out
  timeout,       // no byte for read_timeout_s (head or body), a send that stalled, or the request's deadline
  reset,         // closed or reset before the response was complete
  stopped,       // a receiver returned false
  bad_response,  // not HTTP/1.x, or a head / chunk line beyond its bound
};
const char* failure_name(Failure f);

struct Options {
  double connect_timeout_s = 5;
  double read_timeout_s = 5;   // the longest silence while waiting for bytes
  double write_timeout_s = 5;
  bool quickack = false;       // TCP_QUICKACK after each read (Linux leaves it on its own)
};

struct Outcome {
  Failure failure = Failure::none;
  std::string detail;  // for messages: the system's words or what was malformed
  bool got_head = false;
  Head head;
  bool ok() const { return failure == Failure::none; }
};

// Not thread-safe: one Connection per thread. Connects on the first exchange
// and again after the server closed.
class Connection {
 public:
  Connection(std::string host, int port, Options options = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends the request once (never again after a failure: the caller sees the
  // failure). A kept connection the server has closed meanwhile (seen before
  // sending) is replaced by a new one first.
  // A receiver that returns false stops the exchange (Failure::stopped).
  Outcome exchange(const Request& request, const Receiver& receiver);
  bool is_open() const { return fd_ >= 0; }
  int connects() const { return connects_; }  // TCP connections opened so far
  void close();

 private:
  Failure connect(std::string* detail);
  Failure send_all(std::string_view data, std::string* detail);
  // Waits for `events` on the socket up to timeout_s, and never past the
  // exchange's deadline: none when ready, else timeout (or reset on a poll error).
  Failure wait(short events, double timeout_s, const char* what, std::string* detail);

  std::string host_;  // without brackets
  int port_;
  Options options_;
  int fd_ = -1;
  int connects_ = 0;
  std::optional<Clock::time_point> deadline_;  // the current exchange's
};

// One request on a fresh connection ("Connection: close"), the whole body
// kept up to max_body bytes (then Failure::stopped with detail "too large").
struct Fetched {
  Outcome outcome;
  std::string body;
};
Fetched fetch(const std::string& host, int port, Request request, const Options& options, uint64_t max_body);

// An http:// or https:// URL taken apart: host (an [IPv6] host without its
// brackets), port (80 or 443 when none is written), path ("" when none).
struct Url {
  bool tls = false;
  std::string host;
  int port = 80;
  std::string path;
};
// An error names the URL and what is wrong with it.
Result<Url> split_url(const std::string& url);

}  // namespace aimem::net
