// The reading of one HTTP/1.x response as its bytes arrive, apart from the
// socket (net::Connection drives it; the fuzz target feeds it directly):
//
//   HTTP/1.1 200 OK\r\n            status line: "HTTP/1.x SSS reason"
//   Field: value\r\n ... \r\n      the head, at most 64 KiB; 1xx heads are skipped
//   body                           Content-Length bytes, or chunked
//                                  ("HEX[;ext]\r\n" data "\r\n" ... "0\r\n" trailers "\r\n"),
//                                  or until the server closes; none after HEAD, 204, 304
//
// Bounds on what a peer can make it hold: the head (64 KiB), a chunk-size line
// (1 KiB), the trailers (64 KiB); body bytes are handed over from the caller's
// buffer as they come and never held.
#pragma once

#include <cstdint>
#include <functional>
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

// on_head runs once the head arrived (1xx heads are skipped); on_body with
// each piece of the decoded body. Either returns false to stop.
struct Receiver {
  std::function<bool(const Head&)> on_head;
  std::function<bool(std::string_view)> on_body;
};

class ResponseReader {
 public:
  enum class Step {
    more,          // the response is not complete yet
    done,          // complete
    stopped,       // a receiver returned false
    bad_response,  // not HTTP/1.x, or a head / chunk line beyond its bound (detail() says)
    reset,         // (from closed() only) the server closed before the response was complete
  };

  // `head_request`: the request was HEAD, so the response has no body.
  explicit ResponseReader(bool head_request = false) : head_request_(head_request) {}

  // The next bytes from the server. Once done, further bytes are not read but
  // noted (extra_bytes()): a server that sent more than it announced.
  Step feed(std::string_view bytes, const Receiver& receiver);
  // The server closed its side: done for a body that runs until the close,
  // else reset with detail() saying where the response was cut.
  Step closed();

  bool got_head() const { return got_head_; }
  const Head& head() const { return head_; }
  // The connection may carry another request (HTTP/1.1 without "Connection:
  // close", HTTP/1.0 with "keep-alive"; never after a body read until close).
  bool keep_alive() const { return keep_alive_; }
  bool extra_bytes() const { return extra_; }
  bool started() const { return started_; }  // any byte of a response arrived
  const std::string& detail() const { return detail_; }

 private:
  enum class State { head, chunk_size, chunk_data, chunk_crlf, trailers, length, until_close, done };
  Step parse_head(const Receiver& receiver);
  Step body(std::string_view& in, const Receiver& receiver);
  Step fail(Step s, std::string detail);

  bool head_request_;
  State state_ = State::head;
  std::string buf_;         // the head, a chunk-size line or a trailer line being gathered
  uint64_t left_ = 0;       // bytes of the current chunk or of the Content-Length body
  size_t trailer_bytes_ = 0;
  int crlf_seen_ = 0;       // of the CRLF after a chunk's data
  Head head_;
  bool got_head_ = false, keep_alive_ = false, extra_ = false, started_ = false;
  std::string detail_;
};

}  // namespace aimem::net
