// The /metrics and /healthz endpoint of `aimem watch`: a net::HttpServer
// (one poll loop, bounded connections and deadlines) that serves the last
// published snapshot.
// Publishing is a string swap under a mutex, so a slow client never holds the
// sampler.
#pragma once

#include <mutex>
#include <string>

#include "net/http_server.h"

namespace aimem::watch {

class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The text served at /metrics from now on.
  void publish(std::string metrics);
  // Binds host:port (port 0: an ephemeral one, see port()) and serves on
  // background threads. An error names the address when it cannot be bound.
  Result<bool> start(const std::string& host, int port);
  int port() const { return server_.port(); }
  void stop();

 private:
  net::HttpServer server_;
  std::mutex mu_;
  std::string snapshot_;
};

}  // namespace aimem::watch
