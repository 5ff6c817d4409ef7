// HttpServer (see http_server.h): one thread and one poll() loop.
//
// Each connection is in one of three states: reading (gathering a request
// head, at most kMaxRequestHead bytes), writing (a response queued; its socket
// is not read meanwhile, so a client that pipelines requests without reading
// the answers holds one response at most), or draining (the last response
// sent and our side shut: what the client still sends is read and dropped
// until it closes, so that a close with unread bytes does not reset the
// connection before the client read the answer). Each ends at the
// connection's deadline, set when it was accepted and again after each
// response. The loop's poll wakes at the nearest deadline, on a socket, or on
// the stop pipe; with no connection open it has no deadline and sleeps.
#include "net/http_server.h"

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
#include <chrono>
#include <cstring>
#include <list>
#include <vector>

#include "net/http_request.h"

namespace aimem::net {

using Clock = std::chrono::steady_clock;

namespace {

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 418: return "I'm a teapot";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 300 ? "OK" : status < 500 ? "Client Error" : "Server Error";
  }
}

std::string response(int status, const std::string& type, const std::string& body, bool head_only, bool keep_alive,
                     const char* extra = "") {
  std::string r = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}{}\r\n", status, reason(status),
                              type, body.size(), extra, keep_alive ? "" : "Connection: close\r\n");
  if (!head_only) r += body;
  return r;
}

}  // namespace

struct HttpServer::Loop {
  struct Conn {
    int fd = -1;
    std::string in, out;
    size_t out_at = 0;
    bool writing = false, close_after = false, draining = false;
    Clock::time_point deadline, since;  // since: when it began waiting (for "oldest idle")
  };

  int listen_fd = -1;
  int wake[2] = {-1, -1};
  ServerLimits limits;
  const std::map<std::string, Handler, std::less<>>* routes = nullptr;
  std::list<Conn> conns;

  Clock::duration timeout() const {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.request_timeout_s));
  }

  void close_conn(std::list<Conn>::iterator it) {
    ::close(it->fd);
    conns.erase(it);
  }

  void accept_all() {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN, or out of descriptors: the rest wait in the backlog
      }
      if (static_cast<int>(conns.size()) >= limits.max_connections) {
        // Full: the oldest idle connection (reading, no request pending) goes.
        auto oldest = conns.end();
        for (auto it = conns.begin(); it != conns.end(); ++it)
          if (!it->writing && (oldest == conns.end() || it->draining > oldest->draining ||
                               (it->draining == oldest->draining && it->since < oldest->since)))
            oldest = it;
        if (oldest == conns.end()) {
          ::close(fd);  // every one is being answered: the newcomer waits for none
          continue;
        }
        close_conn(oldest);
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      Conn c;
      c.fd = fd;
      c.since = Clock::now();
      c.deadline = c.since + timeout();
      conns.push_back(std::move(c));
    }
  }

  // Parses what `c` sent; queues a response when a head is complete.
  void take_request(Conn& c) {
    RequestParse p = parse_request_head(c.in);
    if (p.status == RequestParse::Status::incomplete) return;
    if (p.status == RequestParse::Status::too_large) {
      queue(c, response(431, "text/plain", "request head too large\n", false, false));
      return;
    }
    if (p.status == RequestParse::Status::bad) {
      queue(c, response(400, "text/plain", "bad request: " + p.why + "\n", false, false));
      return;
    }
    c.in.erase(0, p.head.length);
    const bool head = p.head.method == "HEAD";
    // A body is never read: its connection ends with the answer.
    const bool keep = p.head.keep_alive && !p.head.has_body;
    if (p.head.has_body && (head || p.head.method == "GET")) {
      queue(c, response(400, "text/plain", "bad request: a body on a GET or HEAD\n", false, false));
      return;
    }
    auto it = routes->find(std::string_view(p.head.path));
    if (it == routes->end()) {
      queue(c, response(404, "text/plain", "not found\n", head, keep));
    } else if (!head && p.head.method != "GET") {
      queue(c, response(405, "text/plain", "", false, keep, "Allow: GET, HEAD\r\n"));
    } else {
      Reply r;
      try {
        r = it->second();
      } catch (const std::exception& e) {
        r = Reply{500, "text/plain", std::string("error: ") + e.what() + "\n"};
      }
      queue(c, response(r.status, r.content_type, r.body, head, keep));
    }
    c.close_after = !keep;
  }

  void queue(Conn& c, std::string bytes) {
    c.out = std::move(bytes);
    c.out_at = 0;
    c.writing = true;
    c.close_after = true;  // take_request clears it for a kept-alive answer
    c.deadline = Clock::now() + timeout();
  }

  // false when the connection is done with.
  bool on_readable(Conn& c) {
    char buf[4096];
    if (c.draining) {
      for (int i = 0; i < 16; ++i) {  // at most 64 KiB a turn
        ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n > 0) continue;
        if (n < 0 && errno == EINTR) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      }
      return true;
    }
    for (;;) {
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<size_t>(n));
        if (c.in.size() >= kMaxRequestHead) break;  // parse decides: a head, or too large
        continue;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    take_request(c);
    return true;
  }

  bool on_writable(Conn& c) {
    while (c.out_at < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.out_at, c.out.size() - c.out_at, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_at += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;
    }
    std::string().swap(c.out);
    c.out_at = 0;
    c.writing = false;
    if (c.close_after) {
      ::shutdown(c.fd, SHUT_WR);
      c.draining = true;
      c.in.clear();
      c.since = Clock::now();
      c.deadline = c.since + std::min<Clock::duration>(timeout(), std::chrono::seconds(1));
      return true;
    }
    c.since = Clock::now();
    c.deadline = c.since + timeout();
    // A pipelined request may be waiting already.
    if (!c.in.empty()) take_request(c);
    return true;
  }

  void run() {
    std::vector<pollfd> fds;
    std::vector<std::list<Conn>::iterator> which;
    for (;;) {
      const auto now = Clock::now();
      // Deadlines first: a connection past its own is closed.
      auto next = now + std::chrono::seconds(1);
      for (auto it = conns.begin(); it != conns.end();) {
        if (it->deadline <= now) {
          auto gone = it++;
          close_conn(gone);
          continue;
        }
        next = std::min(next, it->deadline);
        ++it;
      }
      fds.clear();
      which.clear();
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      for (auto it = conns.begin(); it != conns.end(); ++it) {
        fds.push_back({it->fd, static_cast<short>(it->writing ? POLLOUT : POLLIN), 0});
        which.push_back(it);
      }
      // No connection, no deadline: sleep until a client or stop() (an idle
      // server must not wake the process every second).
      const int ms = conns.empty() ? -1
                                   : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
      int n = ::poll(fds.data(), fds.size(), ms);
      if (n < 0 && errno != EINTR) return;
      if (n <= 0) continue;
      if (fds[0].revents) return;  // stop()
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto it = which[i - 2];
        bool keep = true;
        if (fds[i].revents & (POLLERR | POLLNVAL)) keep = false;
        else if (it->writing) keep = on_writable(*it);
        else if (fds[i].revents & (POLLIN | POLLHUP)) keep = on_readable(*it);
        if (keep && it->writing && it->out_at == 0) keep = on_writable(*it);  // answer at once, most fit one send
        if (!keep) close_conn(it);
      }
      // Accepted last: closing the oldest idle for a newcomer never touches
      // an iterator the loop above still holds.
      if (fds[1].revents) accept_all();
    }
  }

  ~Loop() {
    for (auto& c : conns) ::close(c.fd);
    if (listen_fd >= 0) ::close(listen_fd);
    for (int fd : wake)
      if (fd >= 0) ::close(fd);
  }
};

HttpServer::HttpServer(ServerLimits limits) : limits_(limits) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }

Result<bool> HttpServer::start(const std::string& host_in, int port) {
  if (running()) {
    return make_error("the server is already running");
  }
  std::string host = host_in.empty() ? "127.0.0.1" : host_in;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port < 0 || port > 65535) {
    return make_error(fmt::format("bad port {}", port));
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
    return make_error(fmt::format("cannot listen on {}:{}: not a numeric address ({})", host, port, gai_strerror(rc)));
  }
  auto loop = std::make_unique<Loop>();
  loop->limits = limits_;
  loop->routes = &routes_;
  std::string why = "no address";
  for (addrinfo* a = res; a && loop->listen_fd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      continue;
    }
    loop->listen_fd = fd;
  }
  freeaddrinfo(res);
  if (loop->listen_fd < 0) {
    return make_error(fmt::format("cannot listen on {}:{} (in use, or not an address of this host): {}", host, port, why));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(loop->listen_fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return make_error(fmt::format("listening on {}:{} but cannot read the bound port", host, port));
  }
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (::pipe2(loop->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return make_error(fmt::format("cannot serve: {}", std::strerror(errno)));
  }
  loop_ = std::move(loop);
  thread_ = std::thread([l = loop_.get()] { l->run(); });
  return true;
}

void HttpServer::stop() {
  if (!running()) return;
  char b = 1;
  ssize_t ignored = ::write(loop_->wake[1], &b, 1);
  (void)ignored;
  thread_.join();
  loop_.reset();
}

}  // namespace aimem::net
