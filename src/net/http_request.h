// The reading of a request head for aimem's own HTTP server (http_server.h),
// apart from the socket so that a fuzz target can feed it:
//
//   GET /metrics?x=1 HTTP/1.1\r\n      request line: METHOD SP TARGET SP HTTP/1.x
//   Host: ...\r\n                      fields; only Connection is read
//   \r\n                               (a bare \n ends lines too)
//
// A head is at most kMaxRequestHead bytes. The server serves GET and HEAD
// only, so it never reads a body: a request that announces one (any
// Transfer-Encoding, a Content-Length above 0) is answered and its connection
// closed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace aimem::net {

inline constexpr size_t kMaxRequestHead = 4096;

struct RequestHead {
  std::string method;       // as sent ("GET", "HEAD", "POST", ...)
  std::string path;         // the target without its query
  bool keep_alive = false;  // HTTP/1.1 without "Connection: close", HTTP/1.0 with "keep-alive"
  bool has_body = false;    // a body follows the head (not read)
  size_t length = 0;        // bytes of the head, its blank line included
};

struct RequestParse {
  enum class Status { incomplete, ok, bad, too_large } status = Status::incomplete;
  RequestHead head;
  std::string why;  // for bad: what was wrong (one line)
};

// Reads the head at the start of `bytes` (which may hold more after it).
// incomplete: no blank line yet within kMaxRequestHead bytes; too_large: none
// within them.
RequestParse parse_request_head(std::string_view bytes);

}  // namespace aimem::net
