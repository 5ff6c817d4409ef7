// A small HTTP/1.1 client over one TCP connection (plain http), for aimem's
// scrapes, webhooks and `aimem probe`: connect with a timeout, send one
// request, read the head, hand the body over as it arrives (Content-Length,
// chunked or until close), tell a refused connect from a silence from a
// connection closed early, and keep the connection for the next request when
// the server allows it.
//
// Written by hand, not on CivetWeb's client API (the server side is on
// CivetWeb, see http_server.h), because that API cannot do what a latency
// probe needs: mg_connect_client takes no connect timeout; no public call
// returns the socket, so TCP_NODELAY / TCP_QUICKACK cannot be set;
// mg_get_response's timeout covers only the response head, and mg_read then
// answers a silence, a reset and a truncated body alike (-1 or 0), so
// "timeout", "reset" and "cut_stream" could not be told apart.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aimem::net {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct Head {
  int status = 0;
  Fields fields;
  // The first field of that name (case-insensitive), "" if none.
  std::string field(std::string_view name) const;
};

struct Request {
  std::string method = "GET";
  std::string target = "/";  // path and query
  Fields headers;            // Host and Content-Length are added
  std::string body;
};

enum class Failure {
  none,
  connect,       // refused, unreachable, name not found, or connect timed out
  timeout,       // no byte for read_timeout_s (head or body), or a send that stalled
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

// on_head runs once the head arrived (1xx heads are skipped); on_body with
// each piece of the decoded body. Either returns false to stop (Failure::stopped).
struct Receiver {
  std::function<bool(const Head&)> on_head;
  std::function<bool(std::string_view)> on_body;
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
  Outcome exchange(const Request& request, const Receiver& receiver);
  bool is_open() const { return fd_ >= 0; }
  int connects() const { return connects_; }  // TCP connections opened so far
  void close();

 private:
  Failure connect(std::string* detail);
  Failure send_all(std::string_view data, std::string* detail);
  // Reads more bytes into buf_; Failure::reset on a clean close (with *closed set).
  Failure fill(std::string* detail, bool* closed);
  Failure read_head(Head* head, bool* keep_alive, std::string* detail);

  std::string host_;  // without brackets
  int port_;
  Options options_;
  int fd_ = -1;
  int connects_ = 0;
  std::string buf_;   // bytes received and not yet used
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
// nullopt with *error naming the URL and what is wrong with it.
std::optional<Url> split_url(const std::string& url, std::string* error);

}  // namespace aimem::net
