// Starts the real Prometheus server (Debian package `prometheus`) on a free
// loopback port with a temporary config and TSDB that scrape one target every
// second, queries it through its HTTP API, and stops it and removes its files.
// Used by the exporter test (an in-process MetricsServer), the watch CLI test
// and the fleet test (two `aimem watch` processes and stand-in exporters).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace aimem::test {

// One scrape job of the generated configuration: its targets ("HOST:PORT")
// scraped every second at metrics_path.
struct ScrapeJob {
  std::string name;
  std::vector<std::string> targets;
  std::string metrics_path = "/metrics";
};

class PrometheusHarness {
 public:
  static constexpr const char* kBinary = "/usr/bin/prometheus";
  static bool available();

  ~PrometheusHarness();
  // Scrapes http://<target><metrics_path> (target "127.0.0.1:PORT") every
  // second, evaluating `rules_text` (a rules file's YAML) when given. Waits
  // (bounded) until Prometheus answers /-/ready.
  bool start(const std::string& target, std::string* error, const std::string& metrics_path = "/metrics",
             const std::string& rules_text = {});
  // The same with several jobs (names unique, as Prometheus requires).
  bool start(const std::vector<ScrapeJob>& jobs, std::string* error, const std::string& rules_text = {});
  // Serves an existing TSDB (`data_dir`, e.g. filled by backfill) with no
  // scrape target, evaluation or retention of its own; waits (bounded) until
  // it answers /-/ready. The directory is the caller's.
  bool start_on(const std::string& data_dir, std::string* error);
  // promtool tsdb create-blocks-from openmetrics FILE DATA_DIR (60 s at most).
  static bool backfill(const std::string& openmetrics_file, const std::string& data_dir, std::string* error);
  // Polls an instant PromQL query until it returns a series or timeout_s
  // passes; the value of the first series. *last_body gets the last answer.
  std::optional<double> query_until(const std::string& promql, int timeout_s, std::string* last_body = nullptr);
  // SIGTERM, then SIGKILL after 5 s; removes the temporary directory.
  void stop();
  int port() const { return port_; }
  std::string log() const;  // Prometheus's own output, for failure messages

 private:
  bool spawn(const std::vector<std::string>& args, std::string* error);
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_loopback_port();

}  // namespace aimem::test
