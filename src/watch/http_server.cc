// MetricsServer (see http_server.h). The bounds (one poll loop, at most 64
// connections with the oldest idle dropped for a newcomer, 5 s to send a
// request head or take a response, 4 KiB request heads, GET/HEAD only, no
// files) are net::HttpServer's.
#include "watch/http_server.h"

namespace aimem::watch {

MetricsServer::MetricsServer() {
  server_.route("/metrics", [this] {
    net::Reply r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    std::lock_guard<std::mutex> lock(mu_);
    r.body = snapshot_;
    return r;
  });
  server_.route("/healthz", [] { return net::Reply{200, "text/plain", "ok\n"}; });
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::publish(std::string metrics) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_.swap(metrics);
}

Result<bool> MetricsServer::start(const std::string& host, int port) {
  if (server_.running()) return make_error("the metrics server is already running");
  return server_.start(host, port);
}

void MetricsServer::stop() { server_.stop(); }

}  // namespace aimem::watch
