// A small HTTP/1.1 server for aimem's own endpoints (`aimem watch`'s /metrics
// and /healthz). It serves only the routes given to it, only GET and HEAD (405
// otherwise, 404 for other paths), never files. It is reachable by every local
// user, so nothing a client does may stall it for the others:
//
//   - one thread, one poll() over every socket: a client that sends half a
//     request line, or nothing, holds no worker (CivetWeb's two workers were
//     held by two such sockets, and /healthz then took seconds, or timed out);
//   - a request head must arrive whole within request_timeout_s of the
//     connection (or of the previous response on a kept-alive one), and a
//     response must be taken within the same time, else the connection is closed;
//   - at most max_connections at once: a new connection past that closes the
//     oldest idle one (no request pending), so a crowd of idle sockets cannot
//     lock a scrape out;
//   - request heads of at most 4 KiB (http_request.h); no request bodies.
//
// Handlers run on that thread: they must be quick (a snapshot's copy) and
// thread-safe against whoever updates what they serve.
//
// Written by hand rather than on CivetWeb (which it replaced): CivetWeb's
// worker-per-connection model is what let idle sockets stall it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"

namespace aimem::net {

struct Reply {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

struct ServerLimits {
  int max_connections = 64;
  double request_timeout_s = 5;
};

class HttpServer {
 public:
  using Handler = std::function<Reply()>;

  explicit HttpServer(ServerLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Adds a route (exact path) before start().
  void route(std::string path, Handler handler);
  // Binds host:port (numeric address, IPv6 with or without brackets; port 0:
  // an ephemeral one, see port()) and serves in the background. An error
  // names the address when it cannot bind.
  Result<bool> start(const std::string& host, int port);
  int port() const { return port_; }
  bool running() const { return thread_.joinable(); }
  void stop();

  struct Loop;  // http_server.cc

 private:
  ServerLimits limits_;
  std::map<std::string, Handler, std::less<>> routes_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace aimem::net
