// The memory lines inference engines print at start-up, each read in one
// place: the recognizers (recognize/families/llamacpp.cc, vllm.cc, sglang.cc)
// turn them into facts for diagnose, and `fit --against` (fit/against.cc)
// reads the same lines to hold a plan against what the engine printed.
// Pure functions of one line; nullopt when the line is not the one asked for.
//
// Formats (values are examples):
//   vLLM   "Loading model weights took 14.9888 GB" (V0), "Model loading took 0.2389 GB and 0.97 seconds" (V1)
//          "Available KV cache memory: -0.62 GiB" (V1), "the rest of the memory reserved for KV Cache is 1.2GiB" (V0)
//          "# GPU blocks: 1478, # CPU blocks: 2048" (V0), "GPU KV cache size: 93,760 tokens" (V1)
//          memory profile keys "kv_cache_size=3.1GiB", "non_torch_memory takes 0.35GiB", "peak_torch_memory 17.1GiB"
//   SGLang "max_total_num_tokens=171008, chunked_prefill_size=8192, ..., context_len=169000"
//   llama.cpp "llama_context: n_ctx      = 65536", "llama_kv_cache:      CUDA0 KV buffer size =   800.00 MiB"
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace aimem::engine_lines {

// A size that may be negative ("-0.62 GiB": vLLM's KV budget on a failed start).
struct SignedSize {
  uint64_t bytes = 0;
  bool negative = false;  // only with bytes > 0
  int64_t value() const { return negative ? -int64_t(bytes) : int64_t(bytes); }
};

// vLLM: the weights' size on the GPU ("Loading model weights took", "Model loading took").
std::optional<uint64_t> vllm_weights(std::string_view line);
// vLLM: what is left for the KV cache ("KV cache memory:", "reserved for KV Cache is").
std::optional<SignedSize> vllm_kv_available(std::string_view line);
// vLLM V0: "# GPU blocks: N".
std::optional<uint64_t> vllm_gpu_blocks(std::string_view line);
// vLLM V1: "GPU KV cache size: N tokens".
std::optional<uint64_t> vllm_kv_tokens(std::string_view line);
// A size after a key, past '=', ':', '(', "takes" and spaces ("non_torch_memory=0.35GiB",
// "non_torch_memory takes 0.35GiB", "kv_cache_size=-0.3GiB" gives a negative one).
std::optional<SignedSize> size_of_key(std::string_view line, std::string_view key);

// "key=123" / "key=0.88" / "--key 123" / "--key=123", the key starting a word;
// nullopt for "key=None" or a negative number.
std::optional<double> number_after(std::string_view line, std::string_view key);
// A count (1 .. 10^12) after a key, as number_after reads it.
std::optional<uint64_t> count_after(std::string_view line, std::string_view key);

// llama.cpp: a setting right after the function prefix ("llama_context: n_ctx = 65536");
// `key` ends in a space ("n_ctx ") so that "n_ctx_per_seq" is not it.
std::optional<uint64_t> llamacpp_setting(std::string_view line, std::string_view key);
// llama.cpp: the size after "<label> = " ("KV buffer size", "model buffer size", "KV self size").
std::optional<uint64_t> llamacpp_size(std::string_view line, std::string_view label);

}  // namespace aimem::engine_lines
