// HttpServer (see http_server.h) on CivetWeb's C API.
#include "net/http_server.h"

#include <civetweb.h>
#include <fmt/format.h>

#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "net/civetweb_init.h"

namespace aimem::net {

namespace {

// CivetWeb writes IPv6 listening addresses as "[::1]:port".
std::string listen_spec(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return v6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

}  // namespace

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }

int HttpServer::on_request(mg_connection* conn, void* self_ptr) {
  auto* self = static_cast<HttpServer*>(self_ptr);
  const mg_request_info* ri = mg_get_request_info(conn);
  const char* uri = ri->local_uri ? ri->local_uri : "";
  auto it = self->routes_.find(std::string_view(uri));
  if (it == self->routes_.end()) {
    mg_send_http_error(conn, 404, "not found\n");
    return 404;
  }
  bool head = std::strcmp(ri->request_method, "HEAD") == 0;
  if (!head && std::strcmp(ri->request_method, "GET") != 0) {
    mg_response_header_start(conn, 405);
    mg_response_header_add(conn, "Allow", "GET, HEAD", -1);
    mg_response_header_add(conn, "Content-Length", "0", -1);
    mg_response_header_send(conn);
    return 405;
  }
  Reply r = it->second();
  if (r.status == 200) {
    mg_send_http_ok(conn, r.content_type.c_str(), static_cast<long long>(r.body.size()));
  } else {
    mg_response_header_start(conn, r.status);
    mg_response_header_add(conn, "Content-Type", r.content_type.c_str(), -1);
    mg_response_header_add(conn, "Content-Length", std::to_string(r.body.size()).c_str(), -1);
    mg_response_header_send(conn);
  }
  if (!head && !r.body.empty()) mg_write(conn, r.body.data(), r.body.size());
  return r.status;
}

bool HttpServer::start(const std::string& host_in, int port, std::string* error) {
  if (ctx_) {
    if (error) *error = "the server is already running";
    return false;
  }
  std::string host = host_in.empty() ? "127.0.0.1" : host_in;
  if (port < 0 || port > 65535) {
    if (error) *error = fmt::format("bad port {}", port);
    return false;
  }
  civetweb_init(false);
  const std::string ports = listen_spec(host, port);
  // No document_root: CivetWeb then serves no files, only the handlers.
  const char* options[] = {"listening_ports", ports.c_str(),
                           "num_threads", "2",
                           "request_timeout_ms", "5000",
                           "enable_keep_alive", "yes",
                           "keep_alive_timeout_ms", "1000",  // an idle keep-alive connection holds a worker
                           "max_request_size", "4096",       // the whole request head
                           nullptr};
  mg_callbacks callbacks{};
  // CivetWeb prints nothing by default; its start-up error comes back in err.
  char text[256] = "";
  unsigned code = 0;
  mg_error_data err{&code, text, sizeof text};
  mg_init_data init{&callbacks, this, options};
  // mg_start sets SIGPIPE to SIG_IGN for the whole process, which children
  // (--on-alert commands) would inherit across exec and which would turn
  // `aimem watch | head` into EPIPE errors. Its own sends use MSG_NOSIGNAL, so
  // the disposition the process had is put back.
  struct sigaction pipe_before {};
  sigaction(SIGPIPE, nullptr, &pipe_before);
  mg_context* ctx = mg_start2(&init, &err);
  sigaction(SIGPIPE, &pipe_before, nullptr);
  if (!ctx) {
    if (error)
      *error = fmt::format("cannot listen on {}:{} (in use, or not an address of this host){}", host, port,
                           text[0] ? fmt::format(": {}", text) : "");
    return false;
  }
  mg_server_port bound{};
  if (mg_get_server_ports(ctx, 1, &bound) != 1 || bound.port <= 0) {
    mg_stop(ctx);
    if (error) *error = fmt::format("listening on {}:{} but cannot read the bound port", host, port);
    return false;
  }
  // One handler for every path: on_request matches routes exactly and answers
  // 404 for the rest (CivetWeb's prefix matching would also pass /metrics/x).
  mg_set_request_handler(ctx, "/", &HttpServer::on_request, this);
  port_ = bound.port;
  host_ = host;
  ctx_ = ctx;
  return true;
}

void HttpServer::stop() {
  if (!ctx_) return;
  // mg_stop sets CivetWeb's stop flag and joins its threads, but its accept
  // loop polls the listening socket in 2 s quanta and sees the flag only
  // between them: every stop took 2 s (measured). A connection to our own
  // port ends the wait at once; a few tries, then mg_stop finishes alone.
  std::atomic<bool> done{false};
  std::thread stopper([this, &done] {
    mg_stop(ctx_);
    done = true;
  });
  std::string host = host_ == "0.0.0.0" ? "127.0.0.1" : host_ == "::" ? "::1" : host_;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port_).c_str(), &hints, &res) == 0) {
    for (int i = 0; i < 20 && !done; ++i) {
      int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0) {
        ::connect(fd, res->ai_addr, res->ai_addrlen);
        ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    freeaddrinfo(res);
  }
  stopper.join();
  ctx_ = nullptr;
}

}  // namespace aimem::net
