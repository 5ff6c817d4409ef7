// MetricsServer (see http_server.h). Bounded: two worker threads, 5 s read and
// write timeouts, request bodies capped at 4 KiB (only GETs are served).
#include "watch/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>

namespace aimem::watch {

MetricsServer::MetricsServer() : server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
  server_->set_keep_alive_max_count(10);
  server_->set_keep_alive_timeout(1);  // an idle keep-alive connection holds a worker
  server_->set_payload_max_length(4096);
  // httplib's default adds SO_REUSEPORT, with which a second `aimem watch`
  // binds the same port silently and the kernel splits scrapes between the
  // two. SO_REUSEADDR alone still allows a restart over TIME_WAIT sockets.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(mu_);
      body = snapshot_;
    }
    res.set_content(std::move(body), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::publish(std::string metrics) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_.swap(metrics);
}

bool MetricsServer::start(const std::string& host_in, int port, std::string* error) {
  if (thread_.joinable()) {
    if (error) *error = "the metrics server is already running";
    return false;
  }
  std::string host = host_in.empty() ? "127.0.0.1" : host_in;
  if (port < 0 || port > 65535) {
    if (error) *error = fmt::format("bad port {}", port);
    return false;
  }
  int bound = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    if (error) *error = fmt::format("cannot listen on {}:{} (in use, or not an address of this host)", host, port);
    return false;
  }
  port_ = bound;
  // Connections made before the thread reaches accept() wait in the backlog.
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() does nothing until the server runs: wait for it, so that
  // a stop() right after start() cannot leave the thread listening.
  for (int i = 0; i < 2000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void MetricsServer::stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace aimem::watch
