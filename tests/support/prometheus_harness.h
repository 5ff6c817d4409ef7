// Starts the real Prometheus server (Debian package `prometheus`) on a free
// loopback port with a temporary config and TSDB that scrape one target every
// second, queries it through its HTTP API, and stops it and removes its files.
// Used by the exporter test (an in-process MetricsServer) and meant for a
// later test that points it at a running `aimem watch`.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace aimem::test {

class PrometheusHarness {
 public:
  static constexpr const char* kBinary = "/usr/bin/prometheus";
  static bool available();

  ~PrometheusHarness();
  // Scrapes http://<target><metrics_path> (target "127.0.0.1:PORT") every
  // second. Waits (bounded) until Prometheus answers /-/ready.
  bool start(const std::string& target, std::string* error, const std::string& metrics_path = "/metrics");
  // Polls an instant PromQL query until it returns a series or timeout_s
  // passes; the value of the first series. *last_body gets the last answer.
  std::optional<double> query_until(const std::string& promql, int timeout_s, std::string* last_body = nullptr);
  // SIGTERM, then SIGKILL after 5 s; removes the temporary directory.
  void stop();
  int port() const { return port_; }
  std::string log() const;  // Prometheus's own output, for failure messages

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_loopback_port();

}  // namespace aimem::test
