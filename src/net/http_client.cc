// Connection (see http_client.h): non-blocking socket, every wait a poll()
// bounded by the options' timeouts. Bounds on what the peer can make us hold:
// a response head of 64 KiB, a chunk-size line of 1 KiB; the body is handed
// over as it arrives and never held here beyond one read (16 KiB).
#include "net/http_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/text.h"

namespace aimem::net {

namespace {

constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxChunkLine = 1024;
constexpr size_t kReadSize = 16 * 1024;

int to_ms(double s) { return static_cast<int>(std::clamp(std::ceil(s * 1000), 1.0, 3.6e6)); }

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower((unsigned char)x) == std::tolower((unsigned char)y); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* failure_name(Failure f) {
  switch (f) {
    case Failure::none: return "none";
    case Failure::connect: return "connect";
    case Failure::timeout: return "timeout";
    case Failure::reset: return "reset";
    case Failure::stopped: return "stopped";
    case Failure::bad_response: return "bad_response";
  }
  return "?";
}

std::string Head::field(std::string_view name) const {
  for (const auto& [k, v] : fields)
    if (iequal(k, name)) return v;
  return "";
}

Connection::Connection(std::string host, int port, Options options) : port_(port), options_(options) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  host_ = std::move(host);
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buf_.clear();
}

Failure Connection::connect(std::string* detail) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(port_);
  if (int rc = getaddrinfo(host_.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *detail = fmt::format("cannot resolve {}: {}", host_, gai_strerror(rc));
    return Failure::connect;
  }
  std::string last = "no address";
  for (addrinfo* a = res; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) { last = std::strerror(errno); continue; }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int n = ::poll(&p, 1, to_ms(options_.connect_timeout_s));
      int err = 0;
      socklen_t len = sizeof err;
      if (n == 0) { err = ETIMEDOUT; }
      else if (n < 0) { err = errno; }
      else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) { err = errno; }
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      last = errno == ETIMEDOUT ? fmt::format("no answer within {} s", options_.connect_timeout_s) : std::strerror(errno);
      ::close(fd);
      continue;
    }
    int one = 1;
    // The request goes out in one send; NODELAY keeps a kept-alive connection
    // from waiting on Nagle for the next one.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (options_.quickack) setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    fd_ = fd;
    ++connects_;
    freeaddrinfo(res);
    return Failure::none;
  }
  freeaddrinfo(res);
  *detail = last;
  return Failure::connect;
}

Failure Connection::send_all(std::string_view data, std::string* detail) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) { data.remove_prefix(static_cast<size_t>(n)); continue; }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      int r = ::poll(&p, 1, to_ms(options_.write_timeout_s));
      if (r == 0) { *detail = fmt::format("could not send for {} s", options_.write_timeout_s); return Failure::timeout; }
      if (r < 0 && errno != EINTR) { *detail = std::strerror(errno); return Failure::reset; }
      continue;
    }
    *detail = std::strerror(errno);
    return Failure::reset;
  }
  return Failure::none;
}

Failure Connection::fill(std::string* detail, bool* closed) {
  *closed = false;
  char tmp[kReadSize];
  for (;;) {
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n > 0) {
      buf_.append(tmp, static_cast<size_t>(n));
      if (options_.quickack) {
        int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
      }
      return Failure::none;
    }
    if (n == 0) {
      *closed = true;
      *detail = "connection closed by the server";
      return Failure::reset;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, to_ms(options_.read_timeout_s));
      if (r == 0) { *detail = fmt::format("no data for {} s", options_.read_timeout_s); return Failure::timeout; }
      if (r < 0 && errno != EINTR) { *detail = std::strerror(errno); return Failure::reset; }
      continue;
    }
    *detail = std::strerror(errno);  // ECONNRESET and the like
    return Failure::reset;
  }
}

Failure Connection::read_head(Head* head, bool* keep_alive, std::string* detail) {
  for (;;) {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (buf_.size() > kMaxHead) { *detail = fmt::format("response head longer than {} bytes", kMaxHead); return Failure::bad_response; }
      bool closed;
      if (Failure f = fill(detail, &closed); f != Failure::none) {
        if (closed) *detail = buf_.empty() ? "connection closed before any response" : "connection closed inside the response head";
        return f;
      }
    }
    std::string_view h(buf_.data(), end);
    size_t eol = h.find("\r\n");
    std::string_view status_line = h.substr(0, eol);
    // "HTTP/1.x SSS reason"
    if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
        !std::isdigit((unsigned char)status_line[9]) || !std::isdigit((unsigned char)status_line[10]) ||
        !std::isdigit((unsigned char)status_line[11])) {
      *detail = "not an HTTP/1.x response: " + text::quote_line(status_line, 80);
      return Failure::bad_response;
    }
    head->status = (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');
    bool http11 = status_line[7] == '1';
    head->fields.clear();
    size_t pos = eol == std::string_view::npos ? h.size() : eol + 2;
    while (pos < h.size()) {
      size_t next = h.find("\r\n", pos);
      if (next == std::string_view::npos) next = h.size();
      std::string_view line = h.substr(pos, next - pos);
      pos = next + 2;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0) continue;  // tolerate junk lines
      head->fields.emplace_back(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
    }
    buf_.erase(0, end + 4);
    if (head->status >= 100 && head->status < 200) continue;  // 100 Continue and friends
    std::string conn = head->field("Connection");
    *keep_alive = http11 ? !text::icontains(conn, "close") : text::icontains(conn, "keep-alive");
    return Failure::none;
  }
}

Outcome Connection::exchange(const Request& request, const Receiver& receiver) {
  Outcome out;
  if (fd_ >= 0) {
    // The server may have closed the kept connection since (its idle timeout,
    // its request limit): a readable socket before we sent anything is a
    // close (or stray bytes); either way it is not reused.
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 0 || !buf_.empty()) close();
  }
  if (fd_ < 0) {
    buf_.clear();
    if ((out.failure = connect(&out.detail)) != Failure::none) return out;
  }
  std::string msg = fmt::format("{} {} HTTP/1.1\r\nHost: {}:{}\r\n", request.method, request.target,
                                host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_, port_);
  bool ask_close = false;
  for (const auto& [k, v] : request.headers) {
    msg += k;
    msg += ": ";
    msg += v;
    msg += "\r\n";
    if (iequal(k, "Connection") && text::icontains(v, "close")) ask_close = true;
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT")
    msg += fmt::format("Content-Length: {}\r\n", request.body.size());
  msg += "\r\n";
  msg += request.body;

  auto finish = [&](Failure f) {
    out.failure = f;
    if (f != Failure::none) close();
    return out;
  };
  if (Failure f = send_all(msg, &out.detail); f != Failure::none) return finish(f);
  bool keep_alive = false;
  if (Failure f = read_head(&out.head, &keep_alive, &out.detail); f != Failure::none) return finish(f);
  out.got_head = true;
  if (receiver.on_head && !receiver.on_head(out.head)) { out.detail = "stopped by the receiver"; return finish(Failure::stopped); }

  auto deliver = [&](std::string_view piece) {
    return piece.empty() || !receiver.on_body || receiver.on_body(piece);
  };
  const int s = out.head.status;
  const bool no_body = request.method == "HEAD" || s == 204 || s == 304;
  const bool chunked = text::icontains(out.head.field("Transfer-Encoding"), "chunked");
  const std::string cl = out.head.field("Content-Length");
  bool closed = false;

  if (no_body) {
    // nothing to read
  } else if (chunked) {
    for (;;) {
      size_t eol;
      while ((eol = buf_.find("\r\n")) == std::string::npos) {
        if (buf_.size() > kMaxChunkLine) { out.detail = "chunk-size line too long"; return finish(Failure::bad_response); }
        if (Failure f = fill(&out.detail, &closed); f != Failure::none) return finish(f);
      }
      std::string_view line(buf_.data(), eol);
      uint64_t size = 0;
      size_t digits = 0;
      for (char c : line) {
        int v = std::isdigit((unsigned char)c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (v < 0) break;
        if (++digits > 15) break;
        size = size * 16 + static_cast<uint64_t>(v);
      }
      if (digits == 0 || digits > 15) { out.detail = "bad chunk size " + text::quote_line(line, 40); return finish(Failure::bad_response); }
      buf_.erase(0, eol + 2);
      if (size == 0) {
        // Trailers, then an empty line.
        for (;;) {
          while ((eol = buf_.find("\r\n")) == std::string::npos) {
            if (buf_.size() > kMaxHead) { out.detail = "trailer too long"; return finish(Failure::bad_response); }
            if (Failure f = fill(&out.detail, &closed); f != Failure::none) return finish(f);
          }
          buf_.erase(0, eol + 2);
          if (eol == 0) break;
        }
        break;
      }
      while (size > 0) {
        if (buf_.empty())
          if (Failure f = fill(&out.detail, &closed); f != Failure::none) return finish(f);
        size_t take = static_cast<size_t>(std::min<uint64_t>(size, buf_.size()));
        bool go = deliver(std::string_view(buf_.data(), take));
        buf_.erase(0, take);
        size -= take;
        if (!go) { out.detail = "stopped by the receiver"; return finish(Failure::stopped); }
      }
      while (buf_.size() < 2)
        if (Failure f = fill(&out.detail, &closed); f != Failure::none) return finish(f);
      if (buf_.compare(0, 2, "\r\n") != 0) { out.detail = "chunk not followed by CRLF"; return finish(Failure::bad_response); }
      buf_.erase(0, 2);
    }
  } else if (!cl.empty()) {
    uint64_t left = 0;
    for (char c : cl) {
      if (!std::isdigit((unsigned char)c) || left > (UINT64_MAX - 9) / 10) { out.detail = "bad Content-Length " + text::quote_line(cl, 40); return finish(Failure::bad_response); }
      left = left * 10 + static_cast<uint64_t>(c - '0');
    }
    while (left > 0) {
      if (buf_.empty())
        if (Failure f = fill(&out.detail, &closed); f != Failure::none) {
          if (closed) out.detail = fmt::format("connection closed with {} bytes of the body still to come", left);
          return finish(f);
        }
      size_t take = static_cast<size_t>(std::min<uint64_t>(left, buf_.size()));
      bool go = deliver(std::string_view(buf_.data(), take));
      buf_.erase(0, take);
      left -= take;
      if (!go) { out.detail = "stopped by the receiver"; return finish(Failure::stopped); }
    }
  } else {
    // No length: the body runs until the server closes.
    keep_alive = false;
    for (;;) {
      bool go = deliver(buf_);
      buf_.clear();
      if (!go) { out.detail = "stopped by the receiver"; return finish(Failure::stopped); }
      Failure f = fill(&out.detail, &closed);
      if (f == Failure::none) continue;
      if (closed) { out.detail.clear(); break; }
      return finish(f);
    }
  }
  // Bytes beyond the response (a server that sends more than it announced)
  // would be taken for the next response: do not reuse such a connection.
  if (!keep_alive || ask_close || !buf_.empty()) close();
  return out;
}

Fetched fetch(const std::string& host, int port, Request request, const Options& options, uint64_t max_body) {
  Fetched f;
  request.headers.emplace_back("Connection", "close");
  Connection c(host, port, options);
  bool too_large = false;
  f.outcome = c.exchange(request, {nullptr, [&](std::string_view piece) {
                                     if (f.body.size() + piece.size() > max_body) return !(too_large = true);
                                     f.body.append(piece);
                                     return true;
                                   }});
  if (too_large) f.outcome.detail = fmt::format("body larger than {} bytes", max_body);
  return f;
}

std::optional<Url> split_url(const std::string& url, std::string* error) {
  Url u;
  size_t scheme = text::starts_with(url, "http://") ? 7 : text::starts_with(url, "https://") ? 8 : 0;
  if (scheme == 0) {
    *error = fmt::format("{}: expected a URL starting with http:// or https://", url);
    return std::nullopt;
  }
  u.tls = scheme == 8;
  u.port = u.tls ? 443 : 80;
  std::string_view rest = std::string_view(url).substr(scheme);
  size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  u.path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  size_t colon = hostport.rfind(':');
  if (!hostport.empty() && hostport.front() == '[') {  // [::1]:port
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) { *error = url + ": unterminated [IPv6] host"; return std::nullopt; }
    u.host = std::string(hostport.substr(1, close - 1));
    colon = hostport.size() > close + 1 && hostport[close + 1] == ':' ? close + 1 : std::string_view::npos;
  } else {
    u.host = std::string(hostport.substr(0, colon));
  }
  if (colon != std::string_view::npos) {
    std::string_view after;
    auto p = text::parse_u64(hostport.substr(colon + 1), &after);
    if (!p || *p == 0 || *p > 65535 || !after.empty()) {
      *error = fmt::format("{}: bad port '{}'", url, hostport.substr(colon + 1));
      return std::nullopt;
    }
    u.port = static_cast<int>(*p);
  }
  if (u.host.empty()) { *error = url + ": no host"; return std::nullopt; }
  return u;
}

}  // namespace aimem::net
