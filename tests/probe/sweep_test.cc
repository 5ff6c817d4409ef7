// The sweep against a real HTTP server in this process (cpp-httplib on
// loopback) that behaves like an inference server with a memory budget: a
// request is refused with a 500 "out of memory" when the tokens in flight
// (prompt + new, over every concurrent request) would exceed the budget.
#include <gtest/gtest.h>

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "render/probe_render.h"
#include "probe/sweep.h"

namespace aimem::probe {
namespace {

using nlohmann::json;

int count_words(const std::string& s) {
  std::istringstream in(s);
  std::string w;
  int n = 0;
  while (in >> w) ++n;
  return n;
}

class BudgetServer {
 public:
  explicit BudgetServer(int64_t budget_tokens) : budget_(budget_tokens) {
    srv_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"budget-model","object":"model"}]})", "application/json");
    });
    // llama.cpp's shape: one token per word.
    srv_.Post("/tokenize", [](const httplib::Request& req, httplib::Response& res) {
      auto j = json::parse(req.body, nullptr, false);
      if (!j.is_object() || !j.contains("content")) {
        res.status = 400;
        return;
      }
      json tokens = json::array();
      for (int i = 0; i < count_words(j["content"].get<std::string>()); ++i) tokens.push_back(i);
      res.set_content(json{{"tokens", tokens}}.dump(), "application/json");
    });
    srv_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      auto j = json::parse(req.body, nullptr, false);
      int prompt = count_words(j.value("prompt", ""));
      int max_tokens = j.value("max_tokens", 16);
      int64_t need = prompt + max_tokens;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (in_flight_ + need > budget_) {
          res.status = 500;
          res.set_content(R"({"error":{"message":"out of memory: KV cache exhausted","type":"server_error"}})", "application/json");
          ++refused_;
          return;
        }
        in_flight_ += need;
        peak_ = std::max(peak_, in_flight_);
      }
      // Hold the tokens for a moment so concurrent requests overlap.
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      std::string body;
      for (int i = 0; i < max_tokens; ++i)
        body += "data: " + json{{"choices", {{{"index", 0}, {"text", " t"}, {"finish_reason", nullptr}}}}}.dump() + "\n\n";
      body += "data: " + json{{"choices", {{{"index", 0}, {"text", ""}, {"finish_reason", "length"}}}},
                              {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", max_tokens}}}}.dump() + "\n\n";
      body += "data: [DONE]\n\n";
      {
        std::lock_guard<std::mutex> lock(mu_);
        in_flight_ -= need;
      }
      res.set_content(body, "text/event-stream");
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~BudgetServer() {
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int refused() {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_;
  }

 private:
  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  int64_t budget_, in_flight_ = 0, peak_ = 0;
  int refused_ = 0;
};

// Memory that follows the load: the monitor's stand-in reports a peak
// proportional to context x concurrency of the step being run.
class StepMonitor : public Monitor {
 public:
  void begin_step() override { ++steps; }
  StepPeaks end_step() override { return StepPeaks{}; }
  bool server_alive() override { return alive; }
  std::optional<double> used_ratio_at(double) override { return ratio; }
  int steps = 0;
  bool alive = true;
  std::optional<double> ratio;
};

Client make_client(const std::string& url) {
  auto ep = parse_endpoint(url, false);
  EXPECT_TRUE(ep.ok());
  ClientOptions co;
  co.request_timeout_s = 10;
  co.idle_timeout_s = 5;
  return Client(*ep, co);
}

TEST(ProbeSweep, AFailureClosesItsDirectionAndTheStepBeforeIsTheLastGood) {
  // 1,200 tokens in flight at most: 512 x 2 fits, 512 x 4 and 2048 x 1 do not.
  BudgetServer server(1200);
  Client client = make_client(server.url());
  StepMonitor monitor;
  SweepOptions o;
  o.contexts = {128, 512, 2048};
  o.concurrency = {1, 2, 4};
  o.max_new_tokens = 8;
  o.requests_per_step = 0;
  o.total_timeout_s = 60;
  std::vector<std::string> order;
  SweepResult r = run_sweep(client, monitor, o, [&](const StepResult& s) {
    order.push_back(std::to_string(s.context) + "x" + std::to_string(s.concurrency));
  });
  EXPECT_EQ(r.prompt_how, "tokenize");
  EXPECT_EQ(r.model, "budget-model");
  // Ascending; 512x4 fails and closes 2048x4; 2048x1 fails and closes 2048x2.
  std::vector<std::string> want = {"128x1", "128x2", "128x4", "512x1", "512x2", "512x4", "2048x1"};
  EXPECT_EQ(order, want);
  ASSERT_TRUE(r.breaking_point);
  EXPECT_EQ(r.breaking_point->context, 512);
  EXPECT_EQ(r.breaking_point->concurrency, 4);
  ASSERT_TRUE(r.last_good);
  EXPECT_EQ(r.last_good->context, 512);
  EXPECT_EQ(r.last_good->concurrency, 2);
  EXPECT_TRUE(r.complete);
  EXPECT_GT(server.refused(), 0);
  int ok = 0, failed = 0, skipped = 0;
  for (const auto& s : r.steps) {
    if (s.status == "ok") ++ok;
    if (s.status == "failed") {
      ++failed;
      EXPECT_GT(s.error_kinds.count("http"), 0u);
      EXPECT_NE(s.first_error.find("500"), std::string::npos) << s.first_error;
    }
    if (s.status == "skipped") {
      ++skipped;
      EXPECT_EQ(s.skipped_why, "beyond a failed step");
    }
    if (s.status == "ok") {
      EXPECT_EQ(s.prompt_tokens, s.context - 8);
      ASSERT_TRUE(s.ttft_p50_s);
      EXPECT_GE(s.requests, 2 * s.concurrency);
      ASSERT_TRUE(s.tokens_per_s);
      EXPECT_GT(*s.tokens_per_s, 0);
    }
  }
  EXPECT_EQ(ok, 5);
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ(monitor.steps, 7);
  // Limits: the largest passing step (512 x 2) less 20%.
  ASSERT_TRUE(r.limits);
  EXPECT_EQ(r.limits->context, 409);
  EXPECT_EQ(r.limits->concurrency, 1);

  // The JSON contract of DESIGN §2.
  ProbeContext pc;
  pc.url = server.url();
  pc.options = o;
  json j = probe_json(pc, r);
  ASSERT_EQ(j["steps"].size(), 9u);
  for (const char* k : {"context", "concurrency", "status", "requests", "errors", "ttft_p50_s", "ttft_p95_s", "tokens_per_s", "peak_bytes"})
    EXPECT_TRUE(j["steps"][0].contains(k)) << k;
  EXPECT_TRUE(j["steps"][0]["peak_bytes"]["gpu"].is_null());
  EXPECT_EQ(j["breaking_point"]["context"], 512);
  EXPECT_EQ(j["last_good"]["concurrency"], 2);
  EXPECT_TRUE(j["diagnosis"].is_null());
  EXPECT_EQ(j["limits"]["max_context"], 409);
  std::string text = probe_text(pc, r);
  EXPECT_NE(text.find("breaking point: context 512 x concurrency 4"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED"), std::string::npos);

  // What drove memory: 512 passed at concurrency 2 and failed at 4.
  auto found = load_findings(r, "cgroup:/x");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].dimension, "concurrency");
  EXPECT_EQ(found[0].pool_id, "cgroup:/x");
  EXPECT_NE(found[0].summary.find("concurrency 2"), std::string::npos) << found[0].summary;
  // The envelope's fixes go first in the server's diagnosis.
  pc.diagnosis_json = R"({"layer":"container_limit","cause":"concurrency_batch","incidents":[{"summary":"killed","fixes":[{"action":"raise the limit","why":"x"}]}]})";
  json d = probe_json(pc, r)["diagnosis"];
  ASSERT_EQ(d["incidents"][0]["fixes"].size(), 3u) << d.dump();
  EXPECT_NE(d["incidents"][0]["fixes"][0]["action"].get<std::string>().find("at most 2 concurrent requests at context 512"), std::string::npos);
  EXPECT_NE(d["incidents"][0]["fixes"][1]["action"].get<std::string>().find("cap the context at 128"), std::string::npos);
  EXPECT_EQ(d["incidents"][0]["fixes"][2]["action"], "raise the limit");

  Limits l = to_limits(pc, r);
  EXPECT_TRUE(l.covers(512, 2));
  EXPECT_FALSE(l.covers(512, 4));
  EXPECT_FALSE(l.covers(2048, 1));
}

TEST(ProbeSweep, ADeadServerEndsTheSweep) {
  BudgetServer server(1 << 20);
  Client client = make_client(server.url());
  StepMonitor monitor;
  monitor.alive = false;
  SweepOptions o;
  o.contexts = {64, 128};
  o.concurrency = {1, 2};
  o.max_new_tokens = 4;
  SweepResult r = run_sweep(client, monitor, o);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_TRUE(r.server_died);
  EXPECT_EQ(r.steps[0].status, "failed");
  EXPECT_TRUE(r.steps[0].server_died);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(r.steps[i].status, "skipped");
    EXPECT_EQ(r.steps[i].skipped_why, "the server died");
  }
  EXPECT_FALSE(r.last_good);
  EXPECT_FALSE(r.limits);
}

TEST(ProbeSweep, SplitsFirstTokenLatencyByMemoryPressure) {
  BudgetServer server(1 << 20);
  Client client = make_client(server.url());
  StepMonitor monitor;
  monitor.ratio = 0.93;
  SweepOptions o;
  o.contexts = {32};
  o.concurrency = {2};
  o.max_new_tokens = 2;
  o.requests_per_step = 6;
  SweepResult r = run_sweep(client, monitor, o);
  EXPECT_EQ(r.ttft_split.above_requests, 6);
  EXPECT_EQ(r.ttft_split.below_requests, 0);
  EXPECT_TRUE(r.ttft_split.above_p50_s);
  EXPECT_FALSE(r.ttft_split.below_p50_s);
}

TEST(ProbeSweep, TheTimeBoundLeavesAnIncompleteEnvelope) {
  BudgetServer server(1 << 20);
  Client client = make_client(server.url());
  StepMonitor monitor;
  SweepOptions o;
  o.contexts = {16, 32, 64};
  o.concurrency = {1};
  o.max_new_tokens = 2;
  o.requests_per_step = 1000;
  o.step_duration_s = 0;
  o.total_timeout_s = 0.3;  // the first step alone takes longer (40 ms a request)
  SweepResult r = run_sweep(client, monitor, o);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.incomplete_why.find("time bound"), std::string::npos);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_LT(r.steps[0].requests, 1000);  // stopped starting requests at the bound
  EXPECT_EQ(r.steps[1].status, "skipped");
}

TEST(ProbeSweep, SafeLimitsTakeTheHeadroomOffTheLargestPassingStep) {
  std::vector<StepResult> steps(3);
  steps[0].context = 4096, steps[0].concurrency = 1, steps[0].status = "ok";
  steps[1].context = 2048, steps[1].concurrency = 4, steps[1].status = "ok";
  steps[2].context = 8192, steps[2].concurrency = 4, steps[2].status = "failed";
  auto l = safe_limits(steps, 20);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->context, 1536);  // 2048 x 0.8 = 1638, down to a multiple of 256
  EXPECT_EQ(l->concurrency, 3);
  EXPECT_FALSE(safe_limits({}, 20));
  EXPECT_TRUE(closed_by({{2048, 4}}, 4096, 4));
  EXPECT_FALSE(closed_by({{2048, 4}}, 4096, 2));
}

TEST(ProbeSweep, ParsesCountLists) {
  auto v = parse_count_list("512,2k, 8K,32k", "--contexts", 1 << 24);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, (std::vector<int64_t>{512, 2048, 8192, 32768}));
  for (const char* bad : {"", "1,,2", "abc", "0", "-4", "99999999999"}) {
    auto e = parse_count_list(bad, "--contexts", 1 << 24);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.error().message.find("--contexts"), std::string::npos);
  }
}

}  // namespace
}  // namespace aimem::probe
