// Scraper tests: the text-format parser on edge cases and broken input, the
// interpretation of captured real server outputs (values read from the files
// in tests/fixtures/watch/metrics), target specs, and scrape() over real
// loopback HTTP against servers that answer, never answer, or answer garbage.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

extern char** environ;

#include "support/prometheus_harness.h"
#include "support/test_support.h"
#include "watch/promtext.h"
#include "watch/scrape.h"

namespace aimem::watch {
namespace {

std::string fixture(const std::string& name) {
  return test::read_file(test::source_dir() + "/tests/fixtures/watch/metrics/" + name);
}

const PromSample* find(const PromText& t, const std::string& name) {
  for (const auto& s : t.samples)
    if (s.name == name) return &s;
  return nullptr;
}

TEST(ScrapePromText, ReadsLabelsEscapesSpecialValuesAndTimestamps) {
  std::string body =
      "# HELP http_requests_total The total number of HTTP requests.\r\n"
      "# TYPE http_requests_total counter\r\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\r\n"
      "# a plain comment\n"
      "\n"
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
      "metric_without_labels 12.47\n"
      "nan_metric NaN\n"
      "pos_inf{le=\"+Inf\"} +Inf\n"
      "neg_inf -Inf\n"
      "trailing_comma{a=\"1\",} 2\n"
      "spaced_out { a = \"x\" } 3\n"
      "om_created_created 1.6e9\n"
      "om_counter_total 5 1700000000.5 # {trace_id=\"abc\"} 1.0\n"
      "# EOF\n";
  auto r = parse_prom_text(body);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const PromText& t = *r;
  EXPECT_TRUE(t.eof);
  EXPECT_EQ(t.skipped, 0u);
  EXPECT_EQ(t.help.at("http_requests_total"), "The total number of HTTP requests.");
  EXPECT_EQ(t.type.at("http_requests_total"), "counter");
  ASSERT_EQ(t.samples.size(), 10u);
  EXPECT_EQ(t.samples[0].labels.size(), 2u);
  EXPECT_EQ(label_of(t.samples[0], "code"), "200");
  EXPECT_EQ(t.samples[0].value, 1027);
  EXPECT_EQ(t.samples[0].timestamp_ms, 1395066363000);
  const auto* ms = find(t, "msdos_file_access_time_seconds");
  ASSERT_TRUE(ms);
  EXPECT_EQ(label_of(*ms, "path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(label_of(*ms, "error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_DOUBLE_EQ(ms->value, 1.458255915e9);
  EXPECT_TRUE(std::isnan(find(t, "nan_metric")->value));
  EXPECT_EQ(find(t, "pos_inf")->value, INFINITY);
  EXPECT_EQ(label_of(*find(t, "pos_inf"), "le"), "+Inf");
  EXPECT_EQ(find(t, "neg_inf")->value, -INFINITY);
  EXPECT_EQ(find(t, "trailing_comma")->labels.size(), 1u);
  EXPECT_EQ(label_of(*find(t, "spaced_out"), "a"), "x");
  EXPECT_EQ(find(t, "om_created_created")->value, 1.6e9);
  EXPECT_EQ(find(t, "om_counter_total")->timestamp_ms, 1700000000500);  // OpenMetrics seconds
}

TEST(ScrapePromText, MalformedLinesAreErrorsNamingTheLine) {
  struct Case {
    std::string body, want;
  } cases[] = {
      {"ok 1\nok 2\nbad{a=\"open 3\n", "line 3: unterminated value of label a"},
      {"ok 1\nbad{a=\"x\"} twelve\n", "line 2: bad value 'twelve' for bad"},
      {"bad_no_value\n", "line 1: sample bad_no_value has no value"},
      {"x 1\n\n\nbad{a=\"\\q\"} 1\n", "line 4: bad escape \\q in label a"},
      {"bad{a=\"1\" b=\"2\"} 1\n", "line 1: expected ',' or '}' at column 11"},
      {"bad 1 123 extra\n", "line 1: unexpected text after the value of bad"},
      {"bad 1 notatime\n", "line 1: bad timestamp 'notatime' for bad"},
      {"bad{a=\"1\"\n", "line 1: unterminated label set"},
      {"bad{1a=\"1\"} 1\n", "line 1: bad label name at column 5"},
      {"9bad 1\n", "line 1: expected a metric name"},
  };
  for (const auto& c : cases) {
    auto r = parse_prom_text(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos) << r.error().message;
  }
}

TEST(ScrapePromText, UnusualLinesAreSkippedAndCounted) {
  std::string body =
      "# TYPE weird_family fancytype\n"
      "weird_family 1\n"
      "{\"my.dotted.metric\"} 2\n"
      "# HELP\n"
      "good 3\n"
      "# EOF\n"
      "after_eof 4\n";
  auto r = parse_prom_text(body);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->skipped, 4u);
  ASSERT_EQ(r->samples.size(), 2u);
  EXPECT_EQ(r->samples[1].name, "good");
  ASSERT_EQ(r->skipped_examples.size(), 4u);
  EXPECT_EQ(r->skipped_examples[0], "line 1: unknown TYPE 'fancytype'");
  EXPECT_EQ(r->skipped_examples[3], "line 7: text after # EOF");
}

TEST(ScrapePromText, LimitsAreEnforced) {
  PromLimits small;
  small.max_bytes = 64;
  auto big = parse_prom_text(std::string(65, 'a'), small);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("over the 64 byte limit"), std::string::npos);

  PromLimits few;
  few.max_samples = 3;
  auto many = parse_prom_text("a 1\nb 2\nc 3\nd 4\ne 5\n", few);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find("line 4: more than 3 samples"), std::string::npos);

  std::string labels = "m{";
  for (int i = 0; i < 65; ++i) labels += "l" + std::to_string(i) + "=\"v\",";
  labels += "} 1\n";
  auto wide = parse_prom_text(labels);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("more than 64 labels"), std::string::npos);

  auto longv = parse_prom_text("m{a=\"" + std::string(5000, 'x') + "\"} 1\n");
  ASSERT_FALSE(longv.ok());
  EXPECT_NE(longv.error().message.find("longer than 4096 bytes"), std::string::npos);
}

TEST(ScrapePromText, KeepFilterStoresOnlyChosenNamesButChecksAll) {
  auto r = parse_prom_text("a 1\nb 2\na{x=\"y\"} 3\n", {}, [](std::string_view n) { return n == "a"; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->samples.size(), 2u);
  auto bad = parse_prom_text("a 1\nb{oops 2\n", {}, [](std::string_view n) { return n == "a"; });
  EXPECT_FALSE(bad.ok());
}

TEST(ScrapePromText, EscapeRoundTrips) {
  std::string nasty = "quote\" backslash\\ newline\n end";
  auto r = parse_prom_text("m{v=\"" + escape_label_value(nasty) + "\"} 1\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(label_of(r->samples[0], "v"), nasty);
  EXPECT_EQ(format_prom_value(NAN), "NaN");
  EXPECT_EQ(format_prom_value(-INFINITY), "-Inf");
  EXPECT_EQ(format_prom_value(0.1), "0.1");
  EXPECT_EQ(format_prom_value(12345678901.0), "12345678901");
}

TEST(ScrapePromText, SelectorsParseAndMatch) {
  auto s = parse_selector(" queue_depth{queue=\"ingest\"} ");
  ASSERT_TRUE(s.ok());
  PromSample a{"queue_depth", {{"queue", "ingest"}, {"x", "1"}}, 5, {}};
  PromSample b{"queue_depth", {{"queue", "other"}}, 5, {}};
  EXPECT_TRUE(s->matches(a));
  EXPECT_FALSE(s->matches(b));
  EXPECT_FALSE(parse_selector("queue_depth{queue=}").ok());
  EXPECT_FALSE(parse_selector("queue_depth junk").ok());
}

TEST(ScrapePromText, MutatedCapturesNeverCrashOrHang) {
  // Byte flips, cuts and splices of every fixture: each input either parses
  // or gives an error naming a line; interpretation never throws.
  std::vector<std::string> seeds;
  for (const char* f : {"vllm_v0.metrics", "vllm_v1.metrics", "llamacpp.metrics", "sglang.metrics", "tgi.metrics"})
    seeds.push_back(fixture(f));
  uint64_t x = 88172645463325252ull;  // xorshift: reproducible
  auto next = [&] { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
  const char alphabet[] = "{}\"=,# \n\\.eE+-0123456789abcInfNa:_";
  size_t errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = seeds[next() % seeds.size()];
    for (int k = 0, n = 1 + next() % 8; k < n && !s.empty(); ++k) {
      size_t at = next() % s.size();
      switch (next() % 3) {
        case 0: s[at] = alphabet[next() % (sizeof alphabet - 1)]; break;
        case 1: s.erase(at, next() % 16); break;
        default: s.insert(at, seeds[next() % seeds.size()].substr(next() % 200, next() % 64)); break;
      }
    }
    auto r = parse_prom_text(s);
    if (!r.ok()) {
      ++errors;
      EXPECT_EQ(r.error().message.rfind("line ", 0), 0u) << r.error().message;
    }
    auto v = interpret_metrics("auto", s, {"process_max_fds"});
    EXPECT_EQ(v.up, r.ok());
  }
  EXPECT_GT(errors, 100u);  // the mutations do reach the error paths
}

// --- interpretation of captured outputs -------------------------------------

TEST(ScrapeInterpret, VllmV0) {
  auto s = interpret_metrics("auto", fixture("vllm_v0.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "vllm");
  EXPECT_EQ(s.running, 3.0);
  EXPECT_EQ(s.waiting, 2.0);
  EXPECT_EQ(s.kv_usage_ratio, 0.0625);  // gpu_cache_usage_perc, not cpu_cache_usage_perc
  EXPECT_EQ(s.prompt_tokens_total, 1196.0);
  EXPECT_EQ(s.generation_tokens_total, 218152.0);
  EXPECT_EQ(s.ttft_sum_s, 5.375);
  EXPECT_EQ(s.ttft_count, 215.0);
  EXPECT_FALSE(s.context_tokens);
}

TEST(ScrapeInterpret, VllmV1SumsEnginesAndTakesTheFullestKvCache) {
  auto s = interpret_metrics("vllm", fixture("vllm_v1.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.running, 9.0);
  EXPECT_EQ(s.waiting, 7.0);
  EXPECT_EQ(s.kv_usage_ratio, 0.97);
  EXPECT_EQ(s.prompt_tokens_total, 100480.0);
  EXPECT_EQ(s.generation_tokens_total, 18000.0);
  EXPECT_EQ(s.ttft_sum_s, 28.0);
  EXPECT_EQ(s.ttft_count, 64.0);
}

TEST(ScrapeInterpret, LlamaCppCurrentHasNoKvGauges) {
  auto s = interpret_metrics("auto", fixture("llamacpp.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "llamacpp");
  EXPECT_EQ(s.running, 2.0);
  EXPECT_EQ(s.waiting, 1.0);
  EXPECT_EQ(s.prompt_tokens_total, 143.0);
  EXPECT_EQ(s.generation_tokens_total, 673.0);
  EXPECT_FALSE(s.kv_usage_ratio);
  EXPECT_FALSE(s.ttft_count);
  EXPECT_FALSE(s.context_tokens);
}

TEST(ScrapeInterpret, LlamaCppCapturedFromARealServerHere) {
  auto s = interpret_metrics("auto", fixture("llamacpp_captured.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "llamacpp");
  EXPECT_EQ(s.running, 0.0);
  EXPECT_EQ(s.waiting, 0.0);
  EXPECT_EQ(s.prompt_tokens_total, 19.0);
  EXPECT_EQ(s.generation_tokens_total, 8.0);
  EXPECT_EQ(s.context_tokens, 26.0);  // n_tokens_max, the largest sequence seen
  EXPECT_FALSE(s.kv_usage_ratio);
  EXPECT_FALSE(s.ttft_count);
}

TEST(ScrapeInterpret, LlamaCppBeforePr13660) {
  auto s = interpret_metrics("auto", fixture("llamacpp_kv.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kv_usage_ratio, 0.3125);
  EXPECT_EQ(s.context_tokens, 1280.0);
  EXPECT_EQ(s.running, 1.0);
  EXPECT_EQ(s.waiting, 0.0);
  EXPECT_EQ(s.prompt_tokens_total, 33065.0);
  EXPECT_EQ(s.generation_tokens_total, 7801.0);
  // Newer builds: the context high watermark when kv_cache_tokens is gone
  // (n_past_max, then renamed n_tokens_max).
  auto w = interpret_metrics("llamacpp", "llamacpp:n_past_max 4096\nllamacpp:requests_processing 0\n", {});
  EXPECT_EQ(w.context_tokens, 4096.0);
  auto n = interpret_metrics("llamacpp", "llamacpp:n_tokens_max 2048\n", {});
  EXPECT_EQ(n.context_tokens, 2048.0);
}

TEST(ScrapeInterpret, SGLang) {
  auto s = interpret_metrics("auto", fixture("sglang.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "sglang");
  EXPECT_EQ(s.running, 1.0);
  EXPECT_EQ(s.waiting, 4.0);
  EXPECT_EQ(s.kv_usage_ratio, 0.0);
  EXPECT_EQ(s.context_tokens, 1.0);
  EXPECT_EQ(s.prompt_tokens_total, 230794.0);
  EXPECT_EQ(s.generation_tokens_total, 57632.0);
  EXPECT_EQ(s.ttft_sum_s, 205.8);
  EXPECT_EQ(s.ttft_count, 1029.0);
}

TEST(ScrapeInterpret, TgiHasNoTtftHistogram) {
  auto s = interpret_metrics("auto", fixture("tgi.metrics"), {});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "tgi");
  EXPECT_EQ(s.running, 32.0);
  EXPECT_EQ(s.waiting, 12.0);
  EXPECT_EQ(s.prompt_tokens_total, 1859412.0);
  EXPECT_EQ(s.generation_tokens_total, 612470.0);
  EXPECT_FALSE(s.ttft_count);
  EXPECT_FALSE(s.kv_usage_ratio);
}

TEST(ScrapeInterpret, CustomSelectorsOnAnyEndpoint) {
  auto s = interpret_metrics("prometheus", fixture("vllm_v1.metrics"),
                             {"process_max_fds", "vllm:num_requests_running{engine=\"1\"}", "absent_metric"});
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "prometheus");
  EXPECT_FALSE(s.running);  // kind prometheus: no server mapping
  EXPECT_EQ(s.custom.at("process_max_fds"), 1048576.0);
  EXPECT_EQ(s.custom.at("vllm:num_requests_running{engine=\"1\"}"), 4.0);
  EXPECT_EQ(s.custom.count("absent_metric"), 0u);
  auto bad = interpret_metrics("auto", "x 1\n", {"bad{"});
  EXPECT_FALSE(bad.up);
  EXPECT_NE(bad.problem.find("bad{"), std::string::npos);
}

TEST(ScrapeInterpret, GarbageIsAProblemNotACrash) {
  auto s = interpret_metrics("auto", "<html><body>Not Found</body></html>", {});
  EXPECT_FALSE(s.up);
  EXPECT_NE(s.problem.find("line 1"), std::string::npos) << s.problem;
}

TEST(ScrapeInterpret, OllamaPs) {
  auto s = interpret_ollama_ps(fixture("ollama_ps.json"));
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.kind, "ollama");
  EXPECT_EQ(s.model_bytes, 5964735424u);
  EXPECT_EQ(s.model_vram_bytes, 5964735424u);
  EXPECT_FALSE(s.running);
  // Two models, one on the CPU (size_vram omitted when 0, ollama#4840), one
  // newer entry with its context length.
  auto two = interpret_ollama_ps(
      R"({"models":[{"name":"a","size":1000},{"name":"b","size":3000,"size_vram":2000,"context_length":8192}]})");
  ASSERT_TRUE(two.up);
  EXPECT_EQ(two.model_bytes, 4000u);
  EXPECT_EQ(two.model_vram_bytes, 2000u);
  EXPECT_EQ(two.context_tokens, 8192.0);
  auto none = interpret_ollama_ps(R"({"models":[]})");
  EXPECT_TRUE(none.up);
  EXPECT_EQ(none.model_bytes, 0u);
  for (const char* bad : {"", "{", "[1,2]", R"({"models":5})", "null"}) {
    auto b = interpret_ollama_ps(bad);
    EXPECT_FALSE(b.up) << bad;
    EXPECT_NE(b.problem.find("Ollama /api/ps"), std::string::npos) << b.problem;
  }
}

// --- target specs -------------------------------------------------------------

TEST(ScrapeParseTarget, Forms) {
  auto a = test::take(parse_target("vllm=http://127.0.0.1:8000/metrics"));
  EXPECT_EQ(a.kind, "vllm");
  EXPECT_EQ(a.url, "http://127.0.0.1:8000/metrics");
  auto b = test::take(parse_target("http://127.0.0.1:11434"));
  EXPECT_EQ(b.kind, "ollama");
  EXPECT_EQ(b.url, "http://127.0.0.1:11434/api/ps");
  auto c = test::take(parse_target("http://localhost:8080/"));
  EXPECT_EQ(c.kind, "auto");
  EXPECT_EQ(c.url, "http://localhost:8080/metrics");
  auto d = test::take(parse_target("prometheus=http://127.0.0.1:9100/metrics#queue_depth,batch_size{queue=\"a,b\"}"));
  EXPECT_EQ(d.kind, "prometheus");
  EXPECT_EQ(d.url, "http://127.0.0.1:9100/metrics");
  ASSERT_EQ(d.custom.size(), 2u);
  EXPECT_EQ(d.custom[1], "batch_size{queue=\"a,b\"}");
  auto e = test::take(parse_target(" SGLang = http://[::1]:30000/metrics "));
  EXPECT_EQ(e.kind, "sglang");
  EXPECT_EQ(e.url, "http://[::1]:30000/metrics");
}

TEST(ScrapeParseTarget, ErrorsSayWhatIsWrong) {
  struct Case {
    const char* spec;
    const char* want;
  } cases[] = {
      {"foo=http://127.0.0.1:1/metrics", "unknown kind 'foo'"},
      {"https://example.com/metrics", "https is not supported"},
      {"127.0.0.1:8000", "expected a URL starting with http://"},
      {"http://:80/metrics", "no host"},
      {"http://h:99999/metrics", "bad port '99999'"},
      {"http://h:80x/metrics", "bad port '80x'"},
      {"vllm=", "no URL"},
      {"http://h/metrics#", "no metric names after '#'"},
      {"http://h/metrics#bad{", "metric selector 'bad{'"},
  };
  for (const auto& c : cases) {
    auto t = parse_target(c.spec);
    EXPECT_FALSE(t) << c.spec;
    std::string err = test::error_of(t);
    EXPECT_NE(err.find(c.want), std::string::npos) << c.spec << " -> " << err;
  }
}

// --- real loopback HTTP -------------------------------------------------------

class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<void(httplib::Server&)> routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST(ScrapeHttp, ScrapesACapturedTextOverLoopback) {
  std::string v1 = fixture("vllm_v1.metrics"), ps = fixture("ollama_ps.json");
  LoopbackServer srv([&](httplib::Server& s) {
    s.Get("/metrics", [&](const httplib::Request&, httplib::Response& r) { r.set_content(v1, "text/plain; version=0.0.4"); });
    s.Get("/api/ps", [&](const httplib::Request&, httplib::Response& r) { r.set_content(ps, "application/json"); });
  });
  auto s = scrape(test::take(parse_target(srv.url("/metrics") + "#process_max_fds")), 2000);
  ASSERT_TRUE(s.up) << s.problem;
  EXPECT_EQ(s.target, srv.url("/metrics"));
  EXPECT_EQ(s.kind, "vllm");
  EXPECT_EQ(s.running, 9.0);
  EXPECT_EQ(s.custom.at("process_max_fds"), 1048576.0);
  auto o = scrape(test::take(parse_target("ollama=" + srv.url(""))), 2000);
  ASSERT_TRUE(o.up) << o.problem;
  EXPECT_EQ(o.model_vram_bytes, 5964735424u);
  auto missing = scrape(ScrapeTarget{srv.url("/nothing"), "auto", {}}, 2000);
  EXPECT_FALSE(missing.up);
  EXPECT_NE(missing.problem.find("HTTP 404"), std::string::npos) << missing.problem;
}

TEST(ScrapeHttp, AServerThatNeverAnswersTimesOutInBoundedTime) {
  // Listening, never accepting: the kernel completes the handshake from the
  // backlog and the request then waits for a reply that never comes.
  int port = 0;
  int fd = test::bound_loopback_socket(&port);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(listen(fd, 4), 0);
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  auto t0 = std::chrono::steady_clock::now();
  auto s = scrape(ScrapeTarget{url, "auto", {}}, 300);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  EXPECT_FALSE(s.up);
  EXPECT_NE(s.problem.find(url), std::string::npos) << s.problem;
  EXPECT_LT(took, 2.0);
  EXPECT_GE(took, 0.25);

  int closed = test::free_loopback_port();
  auto refused = scrape(ScrapeTarget{"http://127.0.0.1:" + std::to_string(closed) + "/metrics", "auto", {}}, 300);
  EXPECT_FALSE(refused.up);
  EXPECT_FALSE(refused.problem.empty());
}

TEST(ScrapeHttp, GarbageAndOversizedBodiesAreProblems) {
  std::string huge(17u << 20, '#');
  LoopbackServer srv([&](httplib::Server& s) {
    s.Get("/garbage", [](const httplib::Request&, httplib::Response& r) {
      r.set_content("vllm:num_requests_running{model=\"x\" 3\n", "text/plain");
    });
    s.Get("/huge", [&](const httplib::Request&, httplib::Response& r) { r.set_content(huge, "text/plain"); });
    s.Get("/api/ps", [](const httplib::Request&, httplib::Response& r) { r.set_content("{\"models\": [", "application/json"); });
  });
  auto g = scrape(ScrapeTarget{srv.url("/garbage"), "auto", {}}, 2000);
  EXPECT_FALSE(g.up);
  EXPECT_NE(g.problem.find("line 1: "), std::string::npos) << g.problem;
  EXPECT_NE(g.problem.find(srv.url("/garbage")), std::string::npos) << g.problem;
  auto h = scrape(ScrapeTarget{srv.url("/huge"), "auto", {}}, 5000);
  EXPECT_FALSE(h.up);
  EXPECT_NE(h.problem.find("body larger than"), std::string::npos) << h.problem;
  auto o = scrape(ScrapeTarget{srv.url("/api/ps"), "auto", {}}, 2000);
  EXPECT_FALSE(o.up);
  EXPECT_NE(o.problem.find("not a JSON object"), std::string::npos) << o.problem;
}

// A real llama.cpp server, where one is at hand: AIMEM_LLAMA_SERVER names a
// llama-server binary (built from llama.cpp's tools/server), AIMEM_TINY_GGUF a
// model (tests/support/make_tiny_gguf writes one). It serves one completion,
// then scrape() must read the engine's own numbers.
TEST(ScrapeRealLlama, ReadsARunningLlamaServer) {
  const char* bin = std::getenv("AIMEM_LLAMA_SERVER");
  const char* model = std::getenv("AIMEM_TINY_GGUF");
  if (!bin || !model) GTEST_SKIP() << "set AIMEM_LLAMA_SERVER and AIMEM_TINY_GGUF to run against a real llama-server";
  int port = test::free_loopback_port();
  std::vector<std::string> args{bin, "-m", model, "--host", "127.0.0.1", "--port", std::to_string(port), "--metrics",
                                "-c", "256", "-np", "1", "-t", "1", "--no-webui"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, bin, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{pid};
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(std::chrono::milliseconds(300));
  cli.set_read_timeout(std::chrono::seconds(30));
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    auto h = cli.Get("/health");
    ready = h && h->status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ready) << "llama-server did not become healthy on port " << port;
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto before = scrape(test::take(parse_target(url)), 5000);
  ASSERT_TRUE(before.up) << before.problem;
  EXPECT_EQ(before.kind, "llamacpp");
  EXPECT_EQ(before.running, 0.0);
  auto c = cli.Post("/completion", R"({"prompt":"hello hello hello","n_predict":8,"temperature":0,"ignore_eos":true})",
                    "application/json");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->status, 200) << c->body;
  auto after = scrape(test::take(parse_target(url)), 5000);
  ASSERT_TRUE(after.up) << after.problem;
  EXPECT_EQ(after.running, 0.0);
  EXPECT_EQ(after.waiting, 0.0);
  ASSERT_TRUE(after.generation_tokens_total);
  EXPECT_EQ(*after.generation_tokens_total - before.generation_tokens_total.value_or(0), 8.0);
  ASSERT_TRUE(after.prompt_tokens_total);
  EXPECT_GT(*after.prompt_tokens_total, before.prompt_tokens_total.value_or(0));
  EXPECT_FALSE(after.ttft_count);  // llama.cpp has no TTFT histogram
}

}  // namespace
}  // namespace aimem::watch
