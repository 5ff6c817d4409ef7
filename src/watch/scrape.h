// Scraping inference servers: the Prometheus /metrics of vLLM, llama.cpp
// server, TGI and SGLang, Ollama's /api/ps, and metrics a user names on any
// Prometheus endpoint, turned into one ServerSample. interpret_* are pure
// (bytes in, sample out); scrape() is the only function that does I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sources/sample.h"

namespace aimem::watch {

struct ScrapeTarget {
  std::string url;
  std::string kind;  // "auto", "vllm", "llamacpp", "tgi", "sglang", "ollama", "prometheus"
  std::vector<std::string> custom;  // metric selectors: `name` or `name{label="v"}`
};

// "vllm=http://127.0.0.1:8000/metrics", "http://127.0.0.1:11434" (Ollama:
// /api/ps), "prometheus=http://127.0.0.1:9100/metrics#queue_depth,batch_size".
// A URL without a path gets /metrics (/api/ps for Ollama). An error names
// the target and what is wrong with it.
Result<ScrapeTarget> parse_target(const std::string& spec);

// From a /metrics body. kind "auto" detects the server from metric name
// prefixes. Counts (requests, tokens) are summed over label sets (models,
// engines, ranks); the KV usage ratio is the largest over them.
ServerSample interpret_metrics(const std::string& kind, std::string_view body,
                               const std::vector<std::string>& custom);
// From an Ollama /api/ps JSON body.
ServerSample interpret_ollama_ps(std::string_view json_body);

// HTTP GET with connect and read timeouts, a total deadline of about
// timeout_ms and a 16 MiB body cap; up=false with a problem on any failure.
ServerSample scrape(const ScrapeTarget& target, int timeout_ms);

}  // namespace aimem::watch
