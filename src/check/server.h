// Which inference server (or Node worker) a container runs, and the settings
// on its command line and in its environment that decide its memory: one
// table of flags per runtime (server.cc), read in both `--flag value` and
// `--flag=value` forms, from argv arrays or from shell strings (`sh -c "..."`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/workload.h"

namespace aimem::check {

enum class Server { kNone, kVllm, kLlamaCpp, kOllama, kTgi, kSglang };
std::string_view to_string(Server s);

struct ServerConfig {
  Server server = Server::kNone;
  Loc at;                                      // the word or image that named it
  std::optional<At<std::string>> model;        // --model, positional, -m, --model-id, MODEL_ID
  std::optional<At<int64_t>> context;          // per sequence: --max-model-len, -c / -np, --max-total-tokens, ...
  std::optional<At<int64_t>> concurrency;      // --max-num-seqs, -np, --max-concurrent-requests, OLLAMA_NUM_PARALLEL
  std::optional<At<int64_t>> total_context;    // llama.cpp -c as written (all slots)
  std::optional<At<double>> gpu_fraction;      // --gpu-memory-utilization, --mem-fraction-static, --cuda-memory-fraction
  std::optional<At<int64_t>> tp;               // --tensor-parallel-size, --tp, --num-shard
  std::optional<At<int64_t>> pp;               // --pipeline-parallel-size, --pp-size (stages, each on its own GPUs)
  std::optional<At<int64_t>> gpu_layers;       // llama.cpp -ngl
  std::optional<At<std::string>> kv_type;      // --kv-cache-dtype, -ctk
  std::optional<At<std::string>> quantization;  // vLLM/SGLang --quantization, TGI --quantize / QUANTIZE
  std::optional<At<double>> swap_space_gib;    // vLLM --swap-space (CPU KV swap, GiB)
  std::optional<At<double>> cpu_offload_gib;   // vLLM --cpu-offload-gb
  std::optional<At<int64_t>> max_loaded_models;  // OLLAMA_MAX_LOADED_MODELS
  std::optional<Loc> mlock, no_mmap;           // llama.cpp --mlock, --no-mmap
  std::optional<At<uint64_t>> node_heap;       // node --max-old-space-size (bytes), argv or NODE_OPTIONS
  std::vector<std::string> problems;           // flags present with unreadable values
};

// Shell words of a command string, as sh would split them (quotes and
// backslashes; no expansion). Control operators (&&, ||, ;, |, &) come back
// as their own words so that a caller can find the server among commands.
std::vector<std::string> shell_words(std::string_view text);

// Reads a container's argv and environment.
ServerConfig read_server(const Container& c);

}  // namespace aimem::check
