// `aimem probe` through the real binary against misbehaving servers on
// loopback: clear messages, bounded time, a partial envelope saved, exit 1;
// unusable arguments exit 2.
#include <gtest/gtest.h>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "probe/limits.h"
#include "support/prometheus_harness.h"
#include "support/test_support.h"

namespace aimem::test {
namespace {

using nlohmann::json;

// A server whose completions endpoint misbehaves in one way.
class BadServer {
 public:
  enum class Mode { status500, not_json, cut_stream, endless };
  explicit BadServer(Mode mode) {
    srv_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"data":[{"id":"bad"}]})", "application/json");
    });
    srv_.Post("/v1/completions", [this, mode](const httplib::Request&, httplib::Response& res) {
      ++hits_;
      switch (mode) {
        case Mode::status500:
          res.status = 500;
          res.set_content(R"({"error":{"message":"CUDA out of memory. Tried to allocate 2.00 GiB"}})", "application/json");
          return;
        case Mode::not_json:
          res.set_content("<html><body>502 Bad Gateway</body></html>", "text/html");
          return;
        case Mode::cut_stream:
          res.set_content("data: {\"choices\":[{\"index\":0,\"text\":\" a\",\"finish_reason\":null}]}\n\n", "text/event-stream");
          return;
        case Mode::endless:
          res.set_chunked_content_provider("text/event-stream", [this](size_t, httplib::DataSink& sink) {
            if (stop_) return false;
            std::string ev = "data: {\"choices\":[{\"index\":0,\"text\":\" x\",\"finish_reason\":null}]}\n\n";
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return sink.write(ev.data(), ev.size());
          });
          return;
      }
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~BadServer() {
    stop_ = true;
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int hits() const { return hits_; }

 private:
  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> hits_{0};
  std::atomic<bool> stop_{false};
};

struct Probed {
  RunResult run;
  json j;
  double seconds = 0;
};

Probed probe(const std::string& url, std::vector<std::string> extra) {
  std::vector<std::string> argv = {AIMEM_BINARY, "probe", url, "--contexts", "64,128", "--concurrency", "1,2",
                                   "--max-new-tokens", "4", "--request-timeout", "3s", "--timeout", "30s", "--json",
                                   "--no-kernel-log", "--metrics", "none", "-q"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto t0 = std::chrono::steady_clock::now();
  Probed p;
  p.run = run(argv, {}, {}, 60);
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.j = json::parse(p.run.out, nullptr, false);
  return p;
}

void expect_partial(const Probed& p, const std::string& kind, const std::string& words) {
  EXPECT_EQ(p.run.status, 1) << p.run.err << p.run.out;
  ASSERT_FALSE(p.j.is_discarded()) << p.run.out;
  EXPECT_FALSE(p.j["complete"].get<bool>());
  ASSERT_GE(p.j["steps"].size(), 1u);
  const json& first = p.j["steps"][0];
  EXPECT_EQ(first["status"], "failed");
  EXPECT_GE(first["error_kinds"].value(kind, 0), 1) << first.dump();
  ASSERT_TRUE(first["first_error"].is_string());
  EXPECT_NE(first["first_error"].get<std::string>().find(words), std::string::npos) << first["first_error"];
  // The failure closes every larger step: one burst, not four.
  for (size_t i = 1; i < p.j["steps"].size(); ++i) EXPECT_EQ(p.j["steps"][i]["status"], "skipped");
  EXPECT_TRUE(p.j["last_good"].is_null());
  EXPECT_LT(p.seconds, 30);
}

TEST(ProbeCli, A500OnEveryRequestIsAnIncompleteEnvelopeWithWhatWasMeasured) {
  BadServer s(BadServer::Mode::status500);
  const std::string dir = temp_dir("probe-cli");
  Probed p = probe(s.url(), {"--save-limits", dir + "/limits.json"});
  expect_partial(p, "http", "500");
  EXPECT_NE(p.j["steps"][0]["first_error"].get<std::string>().find("CUDA out of memory"), std::string::npos);
  // One calibration request (the server has no /tokenize) and the step's two.
  EXPECT_LE(s.hits(), 3);
  // The partial envelope is saved: nothing is safe, the breaking point is the first step.
  auto l = probe::read_limits_file(dir + "/limits.json");
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_TRUE(l->safe.empty());
  ASSERT_TRUE(l->breaking_point);
  EXPECT_EQ(l->breaking_point->context, 64);
}

TEST(ProbeCli, TheOutputSaysWhetherConnectionsWereKeptAlive) {
  BadServer s(BadServer::Mode::status500);
  Probed kept = probe(s.url(), {});
  ASSERT_FALSE(kept.j.is_discarded()) << kept.run.out << kept.run.err;
  EXPECT_EQ(kept.j["settings"]["keep_alive"], true);
  Probed fresh = probe(s.url(), {"--no-keep-alive"});
  ASSERT_FALSE(fresh.j.is_discarded()) << fresh.run.out << fresh.run.err;
  EXPECT_EQ(fresh.j["settings"]["keep_alive"], false);
  // Each run: one calibration request and the failed step's two, none sent twice.
  EXPECT_LE(s.hits(), 6);
}

TEST(ProbeCli, ANonJsonBodyIsNamed) {
  BadServer s(BadServer::Mode::not_json);
  expect_partial(probe(s.url(), {}), "bad_json", "not JSON");
}

TEST(ProbeCli, AStreamCutInTheMiddleIsNamed) {
  BadServer s(BadServer::Mode::cut_stream);
  expect_partial(probe(s.url(), {}), "cut_stream", "without [DONE]");
}

TEST(ProbeCli, AnEndlessResponseIsCutAtTheRequestTimeout) {
  BadServer s(BadServer::Mode::endless);
  Probed p = probe(s.url(), {});
  expect_partial(p, "timeout", "3 s");
  EXPECT_LT(p.seconds, 15);
}

TEST(ProbeCli, AnUnreachableServerSaysSoAndExits1) {
  // A port nobody listens on: bind one, note it, close it.
  const int port = free_loopback_port();  // bound, noted and closed: nobody listens there
  ASSERT_GT(port, 0);
  Probed p = probe("http://127.0.0.1:" + std::to_string(port), {});
  EXPECT_EQ(p.run.status, 1) << p.run.err;
  ASSERT_FALSE(p.j.is_discarded()) << p.run.out;
  EXPECT_FALSE(p.j["complete"].get<bool>());
  EXPECT_NE(p.j["incomplete_why"].get<std::string>().find("cannot reach"), std::string::npos) << p.j.dump();
  EXPECT_LT(p.seconds, 15);
}

TEST(ProbeCli, UnusableArgumentsExit2WithTheFlagNamed) {
  struct Case {
    std::vector<std::string> args;
    std::string words;
  };
  std::vector<Case> cases = {
      {{"http://10.1.2.3:8000"}, "loopback"},
      {{"http://127.0.0.1:8000", "--contexts", "512,abc"}, "--contexts"},
      {{"http://127.0.0.1:8000", "--concurrency", "0"}, "--concurrency"},
      {{"http://127.0.0.1:8000", "--timeout", "forever"}, "--timeout"},
      {{"http://127.0.0.1:8000", "--api", "embeddings"}, "--api"},
      {{"http://127.0.0.1:8000", "--headroom", "120"}, "--headroom"},
      {{"ftp://127.0.0.1:8000"}, "ftp"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {AIMEM_BINARY, "probe"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult r = run(argv, {}, {}, 20);
    EXPECT_EQ(r.status, 2) << c.args[0] << " " << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
  }
}

TEST(ProbeCli, NeverReplacesAFileThatIsNotALimitsFile) {
  BadServer s(BadServer::Mode::status500);
  const std::string dir = temp_dir("probe-cli-keep");
  write_file(dir + "/deploy.yaml", "kind: Deployment\n");
  Probed p = probe(s.url(), {"--save-limits", dir + "/deploy.yaml"});
  EXPECT_EQ(read_file(dir + "/deploy.yaml"), "kind: Deployment\n");
  ASSERT_FALSE(p.j.is_discarded());
  EXPECT_NE(p.j["warnings"].dump().find("refusing"), std::string::npos) << p.j.dump();
}

}  // namespace
}  // namespace aimem::test
