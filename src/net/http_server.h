// A small HTTP server on CivetWeb for aimem's own endpoints (`aimem watch`'s
// /metrics and /healthz). It serves only the routes given to it, only GET and
// HEAD (405 otherwise, 404 for other paths), never files (no document_root),
// from a fixed pool of two worker threads, with bounded request heads and
// read/write timeouts: it is reachable by every local user.
//
// CivetWeb rather than cpp-httplib: Debian's libcpp-httplib links OpenSSL,
// brotli and zlib and runs OpenSSL's initialisation in every aimem process
// (~3 ms of CPU and ~3 MiB RSS at start-up, measured); libcivetweb depends on
// libc alone and loads OpenSSL only when asked for TLS.
#pragma once

#include <functional>
#include <map>
#include <string>

struct mg_context;
struct mg_connection;

namespace aimem::net {

struct Reply {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<Reply()>;

  HttpServer() = default;
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Adds a route (exact path) before start(). The handler runs on a worker
  // thread and must be thread-safe.
  void route(std::string path, Handler handler);
  // Binds host:port (numeric address; port 0: an ephemeral one, see port())
  // and serves in the background. false with *error when it cannot bind.
  bool start(const std::string& host, int port, std::string* error);
  int port() const { return port_; }
  bool running() const { return ctx_ != nullptr; }
  void stop();

 private:
  static int on_request(mg_connection* conn, void* self);

  std::map<std::string, Handler, std::less<>> routes_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
  std::string host_;
};

}  // namespace aimem::net
