// Connection (see http_client.h): non-blocking socket, every wait a poll()
// bounded by the options' timeouts and by the request's deadline. The
// response is read by ResponseReader (http_response.h), which bounds what the
// peer can make us hold; the body is handed over as it arrives and never held
// here beyond one read (16 KiB).
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

constexpr size_t kReadSize = 16 * 1024;
// Request bytes gathered before a send: a small request goes out in one write
// (see the Nagle note in probe/client.cc); a streamed body in pieces this big.
constexpr size_t kSendPiece = 16 * 1024;

int to_ms(double s) { return static_cast<int>(std::clamp(std::ceil(s * 1000), 1.0, 3.6e6)); }

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower((unsigned char)x) == std::tolower((unsigned char)y); });
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

Connection::Connection(std::string host, int port, Options options) : port_(port), options_(options) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  host_ = std::move(host);
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Failure Connection::wait(short events, double timeout_s, const char* what, std::string* detail) {
  for (;;) {
    int ms = to_ms(timeout_s);
    bool by_deadline = false;
    if (deadline_) {
      const auto until = *deadline_ - Clock::now();
      if (until <= Clock::duration::zero()) {
        *detail = "deadline";
        return Failure::timeout;
      }
      // Rounded up: a poll that woke a fraction of a millisecond early would
      // report the deadline before it came.
      auto left = std::chrono::ceil<std::chrono::milliseconds>(until).count();
      if (left <= 0) {
        *detail = "deadline";
        return Failure::timeout;
      }
      if (left < ms) {
        ms = static_cast<int>(left);
        by_deadline = true;
      }
    }
    pollfd p{fd_, events, 0};
    int r = ::poll(&p, 1, ms);
    if (r > 0) return Failure::none;
    if (r == 0) {
      *detail = by_deadline ? "deadline" : fmt::format("{} for {} s", what, timeout_s);
      return Failure::timeout;
    }
    if (errno == EINTR) continue;
    *detail = std::strerror(errno);
    return Failure::reset;
  }
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
      fd_ = fd;
      std::string why;
      Failure w = wait(POLLOUT, options_.connect_timeout_s, "no answer", &why);
      fd_ = -1;
      if (w == Failure::timeout && why == "deadline") {
        ::close(fd);
        freeaddrinfo(res);
        *detail = why;
        return Failure::timeout;
      }
      int err = 0;
      socklen_t len = sizeof err;
      if (w == Failure::timeout) err = ETIMEDOUT;
      else if (w != Failure::none) err = ECONNABORTED;
      else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
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
      if (Failure f = wait(POLLOUT, options_.write_timeout_s, "could not send", detail); f != Failure::none) return f;
      continue;
    }
    *detail = std::strerror(errno);
    return Failure::reset;
  }
  return Failure::none;
}

Outcome Connection::exchange(const Request& request, const Receiver& receiver) {
  Outcome out;
  deadline_ = request.deadline;
  if (fd_ >= 0) {
    // The server may have closed the kept connection since (its idle timeout,
    // its request limit): a readable socket before we sent anything is a
    // close (or stray bytes); either way it is not reused.
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 0) close();
  }
  if (fd_ < 0) {
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
  const uint64_t body_size = request.body.size() + (request.body_writer ? request.body_size : 0);
  if (body_size > 0 || request.method == "POST" || request.method == "PUT")
    msg += fmt::format("Content-Length: {}\r\n", body_size);
  msg += "\r\n";
  msg += request.body;

  auto finish = [&](Failure f) {
    out.failure = f;
    if (f != Failure::none) close();
    return out;
  };
  if (request.body_writer) {
    // Gathered into pieces of kSendPiece: a small body still goes in one write.
    Failure sent = Failure::none;
    uint64_t written = 0;
    bool whole = request.body_writer([&](std::string_view piece) {
      // A body the server takes as fast as it is made never waits in send:
      // the deadline is checked here too.
      if (deadline_ && Clock::now() >= *deadline_) {
        sent = Failure::timeout;
        out.detail = "deadline";
        return false;
      }
      written += piece.size();
      if (written > request.body_size) return false;
      msg.append(piece);
      if (msg.size() < kSendPiece) return true;
      sent = send_all(msg, &out.detail);
      msg.clear();
      return sent == Failure::none;
    });
    if (sent != Failure::none) return finish(sent);
    if (!whole || written != request.body_size) {
      out.detail = fmt::format("the request body was {} bytes, not the {} announced", written, request.body_size);
      return finish(Failure::stopped);
    }
  }
  if (Failure f = send_all(msg, &out.detail); f != Failure::none) return finish(f);
  std::string().swap(msg);

  ResponseReader reader(request.method == "HEAD");
  char tmp[kReadSize];
  ResponseReader::Step step = ResponseReader::Step::more;
  auto took = [&](ResponseReader::Step s) {
    out.got_head = reader.got_head();
    if (out.got_head) out.head = reader.head();
    switch (s) {
      case ResponseReader::Step::more:
      case ResponseReader::Step::done: return Failure::none;
      case ResponseReader::Step::stopped: out.detail = reader.detail(); return Failure::stopped;
      case ResponseReader::Step::bad_response: out.detail = reader.detail(); return Failure::bad_response;
      case ResponseReader::Step::reset: out.detail = reader.detail(); return Failure::reset;
    }
    return Failure::none;
  };
  while (step == ResponseReader::Step::more) {
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n > 0) {
      if (options_.quickack) {
        int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
      }
      step = reader.feed(std::string_view(tmp, static_cast<size_t>(n)), receiver);
      if (Failure f = took(step); f != Failure::none) return finish(f);
      continue;
    }
    if (n == 0) {
      step = reader.closed();
      if (Failure f = took(step); f != Failure::none) return finish(f);
      close();  // the server closed: nothing more comes on this socket
      return out;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (Failure f = wait(POLLIN, options_.read_timeout_s, "no data", &out.detail); f != Failure::none) {
        took(step);
        return finish(f);
      }
      continue;
    }
    out.detail = std::strerror(errno);  // ECONNRESET and the like
    took(step);
    return finish(Failure::reset);
  }
  // Bytes beyond the response (a server that sends more than it announced)
  // would be taken for the next response: do not reuse such a connection.
  if (!reader.keep_alive() || ask_close || reader.extra_bytes()) close();
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

Result<Url> split_url(const std::string& url) {
  Url u;
  size_t scheme = text::starts_with(url, "http://") ? 7 : text::starts_with(url, "https://") ? 8 : 0;
  if (scheme == 0) {
    return make_error(fmt::format("{}: expected a URL starting with http:// or https://", url));
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
    if (close == std::string_view::npos) return make_error(url + ": unterminated [IPv6] host");
    u.host = std::string(hostport.substr(1, close - 1));
    colon = hostport.size() > close + 1 && hostport[close + 1] == ':' ? close + 1 : std::string_view::npos;
  } else {
    u.host = std::string(hostport.substr(0, colon));
  }
  if (colon != std::string_view::npos) {
    std::string_view after;
    auto p = text::parse_u64(hostport.substr(colon + 1), &after);
    if (!p || *p == 0 || *p > 65535 || !after.empty()) {
      return make_error(fmt::format("{}: bad port '{}'", url, hostport.substr(colon + 1)));
    }
    u.port = static_cast<int>(*p);
  }
  if (u.host.empty()) return make_error(url + ": no host");
  return u;
}

}  // namespace aimem::net
