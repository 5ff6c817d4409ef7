// Inference-server scraping (see scrape.h). Metric names were checked against
// the servers' sources and real captured /metrics outputs; the fixtures under
// tests/fixtures/watch/metrics/ and their README.md say where each came from.
//
// vLLM (vllm/engine/metrics.py for V0, vllm/v1/metrics/loggers.py for V1):
//   vllm:num_requests_running, vllm:num_requests_waiting (gauges),
//   vllm:gpu_cache_usage_perc (V0, early V1) / vllm:kv_cache_usage_perc (V1),
//   both a 0..1 ratio despite the name; vllm:prompt_tokens_total,
//   vllm:generation_tokens_total (counters); vllm:time_to_first_token_seconds
//   (histogram). No gauge of tokens in flight.
// llama.cpp server (tools/server, handle_metrics): llamacpp:requests_processing,
//   llamacpp:requests_deferred, llamacpp:prompt_tokens_total,
//   llamacpp:tokens_predicted_total (tools/server/server-task.cpp to_metrics;
//   prompt_tokens_total now excludes cached tokens); llamacpp:kv_cache_usage_ratio
//   and llamacpp:kv_cache_tokens only before PR #13660 (May 2025) removed
//   them; after it the largest sequence seen: llamacpp:n_past_max (PR #15361),
//   renamed llamacpp:n_tokens_max. No TTFT histogram.
// TGI (router/src/server.rs, router/src/validation.rs, docs reference/metrics):
//   tgi_batch_current_size, tgi_queue_size (gauges); tgi_request_input_length and
//   tgi_request_generated_tokens (histograms: _sum is total tokens). No TTFT
//   histogram (it has only per-batch prefill durations): ttft stays nullopt.
// SGLang (python/sglang/srt/metrics/collector.py): sglang:num_running_reqs,
//   sglang:num_queue_reqs, sglang:token_usage (0..1), sglang:num_used_tokens,
//   sglang:prompt_tokens_total, sglang:generation_tokens_total,
//   sglang:time_to_first_token_seconds (histogram).
// Ollama (api/types.go ProcessModelResponse): /api/ps {"models":[{size,
//   size_vram (omitted when 0, ollama#4840), context_length (newer versions,
//   what `ollama ps` shows as CONTEXT)}]}.
#include "watch/scrape.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "core/doc_reader.h"
#include "core/text.h"
#include "net/http_client.h"
#include "watch/promtext.h"

namespace aimem::watch {
namespace {

constexpr size_t kMaxBody = 16u << 20;

const std::set<std::string, std::less<>> kKinds = {"auto", "vllm", "llamacpp", "tgi", "sglang", "ollama", "prometheus"};

// What each server's metrics mean for a ServerSample. Empty name: not exposed.
struct Mapping {
  const char* kind;
  const char* prefix;  // how "auto" recognises the server
  const char* running;
  const char* waiting;
  std::vector<const char*> kv;  // first present wins (V1 name before V0 name)
  const char* prompt_tokens;
  const char* generation_tokens;
  const char* ttft;            // histogram base name
  const char* context_tokens;  // tokens held in the KV cache now (summed)
  std::vector<const char*> context_max;  // else: the largest context seen (a high watermark)
};

const std::vector<Mapping>& mappings() {
  static const std::vector<Mapping> m = {
      {"vllm", "vllm:", "vllm:num_requests_running", "vllm:num_requests_waiting",
       {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, "vllm:prompt_tokens_total",
       "vllm:generation_tokens_total", "vllm:time_to_first_token_seconds", "", {}},
      {"llamacpp", "llamacpp:", "llamacpp:requests_processing", "llamacpp:requests_deferred",
       {"llamacpp:kv_cache_usage_ratio"}, "llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total", "",
       "llamacpp:kv_cache_tokens", {"llamacpp:n_tokens_max", "llamacpp:n_past_max"}},
      {"tgi", "tgi_", "tgi_batch_current_size", "tgi_queue_size", {}, "tgi_request_input_length_sum",
       "tgi_request_generated_tokens_sum", "", "", {}},
      {"sglang", "sglang:", "sglang:num_running_reqs", "sglang:num_queue_reqs", {"sglang:token_usage"},
       "sglang:prompt_tokens_total", "sglang:generation_tokens_total", "sglang:time_to_first_token_seconds",
       "sglang:num_used_tokens", {}},
  };
  return m;
}

std::optional<double> sum_of(const PromText& t, std::string_view name) {
  std::optional<double> r;
  for (const auto& s : t.samples)
    if (s.name == name) r = r.value_or(0) + s.value;
  return r;
}

std::optional<double> max_of(const PromText& t, std::string_view name) {
  std::optional<double> r;
  for (const auto& s : t.samples)
    if (s.name == name && (!r || s.value > *r)) r = s.value;
  return r;
}

// Splits "a,b{x=\"1\",y=\"2\"}" at commas outside braces and quotes.
std::vector<std::string> split_selectors(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted) {
      cur += c;
      if (c == '\\' && i + 1 < s.size()) cur += s[++i];
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    else if (c == '{') ++depth;
    else if (c == '}') --depth;
    if (c == ',' && depth == 0) {
      if (!text::trim(cur).empty()) out.emplace_back(text::trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!text::trim(cur).empty()) out.emplace_back(text::trim(cur));
  return out;
}

// Scrapes go over plain http to a local port: the shared URL split, with
// https refused.
Result<net::Url> split_url(const std::string& url) {
  if (!text::starts_with(url, "http://"))
    return make_error(text::starts_with(url, "https://")
                          ? fmt::format("{}: https is not supported (scrape over http on a local port)", url)
                          : fmt::format("{}: expected a URL starting with http://", url));
  return net::split_url(url);
}

}  // namespace

Result<ScrapeTarget> parse_target(const std::string& spec_in) {
  std::string spec(text::trim(spec_in));
  ScrapeTarget t;
  t.kind = "auto";
  size_t scheme = spec.find("://");
  size_t eq = spec.find('=');
  if (eq != std::string::npos && (scheme == std::string::npos || eq < scheme)) {
    t.kind = text::lower(text::trim(std::string_view(spec).substr(0, eq)));
    spec = std::string(text::trim(std::string_view(spec).substr(eq + 1)));
    if (!kKinds.count(t.kind)) {
      return make_error(fmt::format("target '{}': unknown kind '{}' (vllm, llamacpp, tgi, sglang, ollama, prometheus, auto)", spec_in, t.kind));
    }
  }
  size_t hash = spec.find('#');
  if (hash != std::string::npos) {
    for (auto& sel : split_selectors(std::string_view(spec).substr(hash + 1))) {
      auto parsed = parse_selector(sel);
      if (!parsed) {
        return make_error(fmt::format("target '{}': {}", spec_in, parsed.error().message));
      }
      t.custom.push_back(sel);
    }
    if (t.custom.empty()) {
      return make_error(fmt::format("target '{}': no metric names after '#'", spec_in));
    }
    if (t.custom.size() > 64) {
      return make_error(fmt::format("target '{}': more than 64 metric names", spec_in));
    }
    spec.resize(hash);
  }
  if (spec.empty()) {
    return make_error(fmt::format("target '{}': no URL", spec_in));
  }
  auto url = split_url(spec);
  if (!url) return make_error("target: " + url.error().message);
  // Ollama listens on 11434 and has no Prometheus endpoint: /api/ps.
  if (t.kind == "auto" && url->port == 11434 && (url->path.empty() || url->path == "/" || url->path == "/api/ps"))
    t.kind = "ollama";
  if (url->path.empty() || url->path == "/") spec += t.kind == "ollama" ? (url->path.empty() ? "/api/ps" : "api/ps")
                                                                        : (url->path.empty() ? "/metrics" : "metrics");
  t.url = spec;
  return t;
}

ServerSample interpret_metrics(const std::string& kind, std::string_view body, const std::vector<std::string>& custom) {
  ServerSample out;
  out.kind = kind;
  std::vector<PromSelector> selectors;
  for (const auto& c : custom) {
    auto sel = parse_selector(c);
    if (!sel) { out.problem = sel.error().message; return out; }
    selectors.push_back(std::move(*sel));
  }
  // Keep only what a mapping or a selector reads: bodies can hold 100k series.
  std::set<std::string, std::less<>> wanted;
  for (const auto& m : mappings()) {
    for (const char* n : {m.running, m.waiting, m.prompt_tokens, m.generation_tokens, m.context_tokens})
      if (*n) wanted.insert(n);
    for (const char* n : m.kv) wanted.insert(n);
    for (const char* n : m.context_max) wanted.insert(n);
    if (*m.ttft) {
      wanted.insert(std::string(m.ttft) + "_sum");
      wanted.insert(std::string(m.ttft) + "_count");
    }
  }
  for (const auto& s : selectors) wanted.insert(s.name);
  std::string detected;
  auto keep = [&](std::string_view name) {
    if (detected.empty())
      for (const auto& m : mappings())
        if (text::starts_with(name, m.prefix)) detected = m.kind;
    return wanted.count(name) > 0;
  };
  auto parsed = parse_prom_text(body, PromLimits{}, keep);
  if (!parsed) {
    out.problem = parsed.error().message;
    return out;
  }
  const PromText& t = *parsed;
  if (out.kind == "auto") out.kind = detected.empty() ? "prometheus" : detected;
  for (const auto& m : mappings()) {
    if (out.kind != m.kind) continue;
    out.running = sum_of(t, m.running);
    out.waiting = sum_of(t, m.waiting);
    for (const char* n : m.kv)
      if (!out.kv_usage_ratio) out.kv_usage_ratio = max_of(t, n);
    out.prompt_tokens_total = sum_of(t, m.prompt_tokens);
    out.generation_tokens_total = sum_of(t, m.generation_tokens);
    if (*m.ttft) {
      out.ttft_sum_s = sum_of(t, std::string(m.ttft) + "_sum");
      out.ttft_count = sum_of(t, std::string(m.ttft) + "_count");
    }
    if (*m.context_tokens) out.context_tokens = sum_of(t, m.context_tokens);
    for (const char* n : m.context_max)
      if (!out.context_tokens) out.context_tokens = max_of(t, n);
  }
  for (size_t i = 0; i < selectors.size(); ++i) {
    std::optional<double> v;
    for (const auto& s : t.samples)
      if (selectors[i].matches(s)) v = v.value_or(0) + s.value;
    if (v) out.custom[custom[i]] = *v;
  }
  out.up = true;
  return out;
}

ServerSample interpret_ollama_ps(std::string_view body) {
  ServerSample out;
  out.kind = "ollama";
  if (body.size() > kMaxBody) {
    out.problem = fmt::format("Ollama /api/ps body of {} bytes is over the {} byte limit", body.size(), kMaxBody);
    return out;
  }
  auto j = doc::parse_json_or_discarded(body);
  if (j.is_discarded() || !j.is_object()) {
    out.problem = "Ollama /api/ps: the body is not a JSON object";
    return out;
  }
  auto models = j.find("models");
  if (models == j.end() || !models->is_array()) {
    out.problem = "Ollama /api/ps: no \"models\" array";
    return out;
  }
  uint64_t size = 0, vram = 0;
  std::optional<double> ctx;
  for (const auto& m : *models) {
    if (!m.is_object()) continue;
    auto num = [&](const char* key) -> uint64_t {
      auto it = m.find(key);
      return it != m.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
    };
    size += num("size");
    vram += num("size_vram");  // omitted when 0 (ollama#4840)
    if (auto it = m.find("context_length"); it != m.end() && it->is_number())
      ctx = std::max(ctx.value_or(0), it->get<double>());
  }
  out.model_bytes = size;
  out.model_vram_bytes = vram;
  out.context_tokens = ctx;
  // Ollama does not say how many requests run or wait: running/waiting stay nullopt.
  out.up = true;
  return out;
}

ServerSample scrape(const ScrapeTarget& target, int timeout_ms) {
  ServerSample fail;
  fail.target = target.url;
  fail.kind = target.kind;
  auto url = split_url(target.url);
  if (!url) {
    fail.problem = url.error().message;
    return fail;
  }
  timeout_ms = std::clamp(timeout_ms, 10, 600000);
  net::Options opt;
  opt.connect_timeout_s = opt.read_timeout_s = opt.write_timeout_s = timeout_ms / 1000.0;
  net::Connection conn(url->host, url->port, opt);
  net::Request req;
  req.target = url->path.empty() ? "/" : url->path;
  req.headers = {{"Accept", "text/plain;version=0.0.4, application/json"}, {"Connection", "close"}};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * timeout_ms);
  std::string body;
  bool too_big = false, too_slow = false;
  net::Outcome res = conn.exchange(req, {nullptr, [&](std::string_view piece) {
                                          // A server that trickles bytes must not hold the sampler.
                                          if (body.size() + piece.size() > kMaxBody) { too_big = true; return false; }
                                          if (std::chrono::steady_clock::now() > deadline) { too_slow = true; return false; }
                                          body.append(piece);
                                          return true;
                                        }});
  if (too_big) fail.problem = fmt::format("{}: body larger than {} bytes", target.url, kMaxBody);
  else if (too_slow) fail.problem = fmt::format("{}: body not complete within {} ms", target.url, 2 * timeout_ms);
  else if (!res.ok()) fail.problem = fmt::format("{}: {} ({})", target.url, net::failure_name(res.failure), res.detail);
  else if (res.head.status != 200) fail.problem = fmt::format("{}: HTTP {}", target.url, res.head.status);
  if (!fail.problem.empty()) return fail;
  bool ollama = target.kind == "ollama" || (target.kind == "auto" && text::ends_with(url->path, "/api/ps"));
  ServerSample s = ollama ? interpret_ollama_ps(body) : interpret_metrics(target.kind, body, target.custom);
  s.target = target.url;
  if (!s.up && !s.problem.empty()) s.problem = target.url + ": " + s.problem;
  return s;
}

}  // namespace aimem::watch
