// The deployment policy `aimem check` and `aimem rules` read: the `policy:`
// section of aimem.yaml (the same file `aimem watch --config` reads; watch
// ignores this section, check and rules ignore watch's keys except
// `alerts:`, whose thresholds `aimem rules` turns into alerting rules).
//
//   policy:
//     model: /models/llama-3.1-8b-instruct   # a path or a catalog name (`aimem fit` accepts both)
//     runtime: vllm                          # vllm, llamacpp, ollama, tgi, sglang, transformers
//     gpu: H100-80GB                         # a GPU type from the catalog, or
//     gpu_memory: 80GiB                      #   its memory directly
//     gpus: 1
//     node_memory: 64GiB                     # allocatable host memory of the node
//     headroom: 15%                          # kept free in every pool
//     max_context: 32768                     # what the service promises its users
//     max_concurrency: 16
//     envelope: limits.json                  # `aimem probe --save-limits`; relative to this file
//     min_grace_period: 30s                  # in-flight requests need this long to drain
//
// Unknown keys are errors that name the key and the line, as
// "FILE:LINE: policy.KEY: what is wrong". headroom is "15%" or 15 (percent,
// 0 up to 100); a bare number below 1 is refused as ambiguous. Sizes as
// units::parse_size reads them, durations as timeutil::parse_duration_us.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace aimem::check {

struct Policy {
  std::string file;                          // where it was read ("" when defaults)
  std::optional<std::string> model, runtime, gpu;
  std::optional<uint64_t> gpu_memory_bytes;
  int gpus = 1;
  std::optional<uint64_t> node_memory_bytes;
  double headroom_pct = 10;
  std::optional<int64_t> max_context, max_concurrency;
  std::optional<std::string> envelope_path;  // resolved against the policy file's folder
  double min_grace_period_s = 30;

  // From the file's `alerts:` section (same keys and defaults as aimem watch).
  double warn_used_ratio = 0.80, critical_used_ratio = 0.90, gpu_warn_used_ratio = 0.95;
  double kv_warn_ratio = 0.90;  // an inference server's KV cache usage
  double time_to_exhaustion_s = 900;
};

// text: the whole aimem.yaml; a file without `policy:` gives the defaults.
Result<Policy> parse_policy(const std::string& text, const std::string& file_name);
Result<Policy> read_policy_file(const std::string& path);

}  // namespace aimem::check
