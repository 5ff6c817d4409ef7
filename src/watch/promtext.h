// A parser for the Prometheus text exposition format (0.0.4), also reading
// the OpenMetrics forms real servers send (`# EOF`, `_created` samples, float
// timestamps, exemplars after ` # `). The scraper uses it on inference-server
// /metrics bodies and the tests use it to re-read what the exporter renders.
//
// Hand-written because no Debian library parses this format for C++:
// prometheus-cpp is a client (it renders, it does not parse) and is not used.
//
// Layout of a body: lines; `# HELP name text`, `# TYPE name type`, other `#`
// lines are comments; a sample is `name{label="value",...} value [timestamp]`
// with `\\`, `\"` and `\n` escapes in label values. Broken syntax (an open
// quote, a bad value) is an error naming the line; lines that are merely
// unusual (unknown comment forms, UTF-8 quoted names, an unknown TYPE) are
// skipped and counted. Input size, sample count and label sizes are capped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace aimem::watch {

struct PromSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct PromText {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> help, type;  // by family name
  size_t skipped = 0;               // unusual lines skipped
  std::vector<std::string> skipped_examples;  // "line 12: why" for the first few
  bool eof = false;                 // an OpenMetrics `# EOF` was seen
};

struct PromLimits {
  size_t max_bytes = 16u << 20;
  size_t max_samples = 200000;
  size_t max_labels = 64;         // per sample
  size_t max_label_bytes = 4096;  // a label value or a name
};

// `keep`, when given, decides by metric name which samples are stored; the
// others are still checked (and counted against max_samples).
Result<PromText> parse_prom_text(std::string_view body, const PromLimits& limits = {},
                                 const std::function<bool(std::string_view)>& keep = {});

// A selector as users write it: `name` or `name{label="v",...}`.
struct PromSelector {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  bool matches(const PromSample& s) const;
};
Result<PromSelector> parse_selector(std::string_view text);

// The value of one label of a sample, empty when absent.
std::string_view label_of(const PromSample& s, std::string_view key);

// Escapes a label value for the text format (backslash, quote, newline).
std::string escape_label_value(std::string_view v);
// A sample value as the text format writes it: shortest round-trip form,
// NaN, +Inf, -Inf.
std::string format_prom_value(double v);

}  // namespace aimem::watch
