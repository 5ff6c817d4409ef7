// The /metrics and /healthz endpoint of `aimem watch`: a cpp-httplib server on
// a background thread that serves the last published snapshot. Publishing is
// a string swap under a mutex, so a slow client never holds the sampler.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace aimem::watch {

class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The text served at /metrics from now on.
  void publish(std::string metrics);
  // Binds host:port (port 0: an ephemeral one, see port()) and serves on a
  // background thread. false with *error when the address cannot be bound.
  bool start(const std::string& host, int port, std::string* error);
  int port() const { return port_; }
  void stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::string snapshot_;
  int port_ = 0;
};

}  // namespace aimem::watch
