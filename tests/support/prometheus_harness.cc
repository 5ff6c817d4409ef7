// PrometheusHarness (see prometheus_harness.h).
#include "support/prometheus_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "support/test_support.h"

extern char** environ;

namespace aimem::test {

int free_loopback_port() {
  int port = 0;
  int fd = bound_loopback_socket(&port);
  if (fd < 0) return 0;
  close(fd);
  return port;
}

bool PrometheusHarness::available() { return access(kBinary, X_OK) == 0; }

PrometheusHarness::~PrometheusHarness() { stop(); }

bool PrometheusHarness::start(const std::string& target, std::string* error, const std::string& metrics_path,
                              const std::string& rules_text) {
  return start(std::vector<ScrapeJob>{{"aimem", {target}, metrics_path}}, error, rules_text);
}

bool PrometheusHarness::start(const std::vector<ScrapeJob>& jobs, std::string* error, const std::string& rules_text) {
  dir_ = temp_dir("prometheus");
  port_ = free_loopback_port();
  if (port_ == 0) {
    *error = "no free loopback port";
    return false;
  }
  std::string rule_files;
  if (!rules_text.empty()) {
    write_file(dir_ + "/rules.yml", rules_text);
    rule_files = "rule_files:\n  - " + dir_ + "/rules.yml\n";
  }
  std::string scrape = "scrape_configs:\n";
  for (const auto& j : jobs) {
    scrape += "  - job_name: " + j.name + "\n    metrics_path: " + j.metrics_path + "\n    static_configs:\n      - targets: [";
    for (size_t i = 0; i < j.targets.size(); ++i) scrape += (i ? ", '" : "'") + j.targets[i] + "'";
    scrape += "]\n";
  }
  write_file(dir_ + "/prometheus.yml",
             "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n" + rule_files + scrape);
  return spawn({kBinary,
                "--config.file=" + dir_ + "/prometheus.yml",
                "--storage.tsdb.path=" + dir_ + "/data",
                "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                "--log.level=warn"},
               error);
}

bool PrometheusHarness::start_on(const std::string& data_dir, std::string* error) {
  dir_ = temp_dir("prometheus");
  port_ = free_loopback_port();
  if (port_ == 0) {
    *error = "no free loopback port";
    return false;
  }
  write_file(dir_ + "/prometheus.yml", "global:\n  scrape_interval: 15s\n");
  // A retention far longer than the data's age: the blocks are judged by
  // their own newest time, but say so rather than rely on it.
  return spawn({kBinary, "--config.file=" + dir_ + "/prometheus.yml", "--storage.tsdb.path=" + data_dir,
                "--storage.tsdb.retention.time=100y", "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                "--log.level=warn"},
               error);
}

bool PrometheusHarness::backfill(const std::string& openmetrics_file, const std::string& data_dir, std::string* error) {
  RunResult r = run({"/usr/bin/promtool", "tsdb", "create-blocks-from", "openmetrics", openmetrics_file, data_dir}, {}, {}, 60);
  if (r.status != 0) {
    *error = "promtool could not backfill " + openmetrics_file + ": " + r.err.substr(0, 2000);
    return false;
  }
  return true;
}

bool PrometheusHarness::spawn(const std::vector<std::string>& args_in, std::string* error) {
  std::vector<std::string> args = args_in;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  std::string log = dir_ + "/prometheus.log";
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  int rc = posix_spawn(&pid_, kBinary, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    pid_ = -1;
    *error = std::string("cannot start ") + kBinary + ": " + strerror(rc);
    return false;
  }
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(std::chrono::milliseconds(500));
  cli.set_read_timeout(std::chrono::seconds(2));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "prometheus exited at start: " + this->log();
      return false;
    }
    if (auto res = cli.Get("/-/ready"); res && res->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "prometheus not ready within 20 s: " + this->log();
  return false;
}

std::optional<double> PrometheusHarness::query_until(const std::string& promql, int timeout_s, std::string* last_body) {
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(std::chrono::milliseconds(500));
  cli.set_read_timeout(std::chrono::seconds(2));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  httplib::Params params{{"query", promql}};
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto res = cli.Get("/api/v1/query", params, httplib::Headers{})) {
      if (last_body) *last_body = res->body;
      auto j = nlohmann::json::parse(res->body, nullptr, false);
      if (!j.is_discarded() && j.value("status", "") == "success") {
        const auto& result = j["data"]["result"];
        if (result.is_array() && !result.empty()) return std::stod(result[0]["value"][1].get<std::string>());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return std::nullopt;
}

void PrometheusHarness::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
      gone = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!gone) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

std::string PrometheusHarness::log() const {
  std::ifstream in(dir_ + "/prometheus.log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
}

}  // namespace aimem::test
