#include "fit/against.h"

#include "core/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/engine_lines.h"
#include "core/units.h"
#include "fit/catalog.h"
#include "fit/gguf.h"
#include "fit/hf.h"
#include "fit/inputs.h"
#include "fit/runtime.h"

namespace aimem::fit {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The value after "key<spaces>=" or "key:" on a line.
std::optional<std::string_view> value_of(std::string_view line, std::string_view key) {
  size_t at = 0;
  while ((at = line.find(key, at)) != std::string_view::npos) {
    bool left_ok = at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_');
    size_t i = at + key.size();
    size_t j = i;
    while (j < line.size() && line[j] == ' ') ++j;
    if (left_ok && j < line.size() && (line[j] == '=' || line[j] == ':')) {
      std::string_view rest = trim(line.substr(j + 1));
      return rest;
    }
    at = i;
  }
  return std::nullopt;
}

std::optional<double> leading_number(std::string_view s) {
  s = trim(s);
  std::string buf;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ',' || (buf.empty() && c == '-')) {
      if (c != ',') buf += c;
    } else {
      break;
    }
  }
  if (buf.empty() || buf == "-" || buf == ".") return std::nullopt;
  try {
    return std::stod(buf);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<uint32_t> u32(std::string_view s) {
  auto d = leading_number(s);
  if (!d || *d < 0 || *d > 4e9) return std::nullopt;
  return uint32_t(*d);
}

// A flag's value on a command line inside the log ("-c 8192", "--ctx-size=8192").
std::optional<std::string> flag(std::string_view line, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    size_t at = 0;
    while ((at = line.find(n, at)) != std::string_view::npos) {
      size_t end = at + n.size();
      bool left = at == 0 || line[at - 1] == ' ';
      if (left && end < line.size() && (line[end] == ' ' || line[end] == '=')) {
        std::string_view rest = trim(line.substr(end + 1));
        size_t sp = rest.find(' ');
        std::string v(rest.substr(0, sp));
        if (!v.empty() && v.front() != '-') return v;
        if (!v.empty() && v.size() > 1 && std::isdigit(static_cast<unsigned char>(v[1]))) return v;
      }
      at = end;
    }
  }
  return std::nullopt;
}

std::string quoted_after(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return "";
  std::string_view rest = line.substr(at + key.size());
  if (rest.empty() || (rest[0] != '\'' && rest[0] != '"')) {
    size_t end = rest.find_first_of(", )");
    return std::string(rest.substr(0, end));
  }
  char q = rest[0];
  size_t end = rest.find(q, 1);
  return end == std::string_view::npos ? "" : std::string(rest.substr(1, end - 1));
}

void add(std::optional<uint64_t>& into, uint64_t v) { into = into.value_or(0) + v; }

// A size after a key as vLLM's memory profile prints it (engine_lines::size_of_key), never negative.
std::optional<uint64_t> size_of_key(std::string_view line, std::string_view key) {
  auto v = engine_lines::size_of_key(line, key);
  if (!v || v->negative) return std::nullopt;
  return v->bytes;
}

// One line of a llama.cpp or Ollama runner log: print_info metadata, the
// context's settings, buffer sizes, the server's command line. True for a
// metadata line, which says nothing else.
bool llamacpp_line(std::string_view line, EngineLog& g, std::optional<uint64_t>& kv_self) {
  bool meta = line.find("print_info:") != std::string_view::npos || line.find("llm_load_print_meta:") != std::string_view::npos;
  if (meta) {
    g.engine = g.engine.empty() ? "llama.cpp" : g.engine;
    if (auto v = value_of(line, "arch")) g.arch = std::string(*v);
    if (auto v = value_of(line, "file type")) g.file_type = std::string(*v);
    if (auto v = value_of(line, "model params")) g.params_b = leading_number(*v);
    if (auto v = value_of(line, "file size")) {
      if (auto b = units::parse_log_size(*v)) g.file_size_gib = double(*b) / kGiB;
    }
    if (auto v = value_of(line, "n_ctx_train")) g.n_ctx_train = u32(*v);
    if (auto v = value_of(line, "n_embd")) g.n_embd = u32(*v);
    if (auto v = value_of(line, "n_layer")) g.n_layer = u32(*v);
    if (auto v = value_of(line, "n_head")) g.n_head = u32(*v);
    if (auto v = value_of(line, "n_head_kv")) g.n_head_kv = u32(*v);
    if (auto v = value_of(line, "n_embd_head_k")) g.head_k = u32(*v);
    if (auto v = value_of(line, "n_embd_head_v")) g.head_v = u32(*v);
    if (auto v = value_of(line, "n_ff")) g.n_ff = u32(*v);
    if (auto v = value_of(line, "n_swa")) g.n_swa = u32(*v);
    if (auto v = value_of(line, "n_expert")) g.n_expert = u32(*v);
    if (auto v = value_of(line, "n_expert_used")) g.n_expert_used = u32(*v);
    if (auto v = value_of(line, "n_vocab")) g.n_vocab = u32(*v);
    return true;  // a metadata line says nothing else
  }
  if (auto at = line.find("(load_mode = "); at != std::string_view::npos)
    g.mmap = line.substr(at + 13).rfind("mmap", 0) == 0;
  if (line.find("loaded meta data with") != std::string_view::npos) {
    size_t at = line.find(" from ");
    if (at != std::string_view::npos) {
      std::string_view p = trim(line.substr(at + 6));
      size_t paren = p.find(" (version");
      g.model_path = std::string(trim(p.substr(0, paren)));
    }
    g.engine = "llama.cpp";
  }
  bool ctx_line = line.find("llama_context:") != std::string_view::npos ||
                  line.find("llama_new_context_with_model:") != std::string_view::npos ||
                  line.find("llama_init_from_model:") != std::string_view::npos;
  if (ctx_line && line.find("buffer size") == std::string_view::npos) {
    auto setting = [&](std::string_view key) -> std::optional<uint32_t> {
      auto v = engine_lines::llamacpp_setting(line, key);
      if (!v || *v > UINT32_MAX) return std::nullopt;
      return uint32_t(*v);
    };
    if (auto v = setting("n_ctx ")) g.n_ctx = v;
    if (auto v = setting("n_batch ")) g.n_batch = v;
    if (auto v = setting("n_ubatch ")) g.n_ubatch = v;
    if (auto v = setting("n_seq_max ")) g.n_seq = v;
    if (auto v = value_of(line, "flash_attn")) {
      std::string f(*v);
      g.flash_attn = f == "1" || f == "enabled" || f == "true" || f == "auto";
    }
    if (auto v = value_of(line, "kv_unified")) g.kv_unified = *v == "true";
    if (auto v = engine_lines::llamacpp_size(line, "KV self size")) kv_self = *v;
  }
  if (line.find("kv_size =") != std::string_view::npos || line.find("type_k =") != std::string_view::npos) {
    g.type_k = quoted_after(line, "type_k = ");
    g.type_v = quoted_after(line, "type_v = ");
  }
  if (line.find("llama_kv_cache:") != std::string_view::npos && line.find("cells") != std::string_view::npos) {
    // "size =  800.00 MiB (  4096 cells,  40 layers,  1/1 seqs), K (f16):  400.00 MiB, V (f16): ..."
    size_t k = line.find("K (");
    if (k != std::string_view::npos) g.type_k = std::string(line.substr(k + 3, line.find(')', k) - k - 3));
    size_t v = line.find("V (");
    if (v != std::string_view::npos) g.type_v = std::string(line.substr(v + 3, line.find(')', v) - v - 3));
    if (auto s = engine_lines::llamacpp_size(line, "size")) kv_self = *s;
  }
  if (auto at = line.find("offloaded "); at != std::string_view::npos && line.find("layers to GPU") != std::string_view::npos)
    g.gpu_layers = u32(line.substr(at + 10));
  if (line.find("using device CUDA") != std::string_view::npos || line.find("using device ROCm") != std::string_view::npos) {
    g.gpu_devices++;
    size_t dash = line.rfind(" - ");
    if (dash != std::string_view::npos)
      if (auto b = units::parse_log_size(line.substr(dash + 3))) g.gpu_total = *b;
  }
  if (line.find("buffer size") != std::string_view::npos) {
    for (std::string_view dev : {"CUDA", "ROCm", "Vulkan", "Metal"}) {
      size_t at = line.find(dev);
      if (at == std::string_view::npos || line.substr(at).rfind("CUDA_Host", 0) == 0) continue;
      auto n = u32(line.substr(at + dev.size()));
      g.gpu_devices = std::max<uint32_t>(g.gpu_devices, n.value_or(0) + 1);
    }
    if (line.find("AMX model buffer") != std::string_view::npos) g.cpu_amx = true;
    if (line.find("CPU_Mapped model buffer") != std::string_view::npos) g.mmap = true;
    else if (line.find(" CPU model buffer") != std::string_view::npos && !g.mmap) g.mmap = false;
    using engine_lines::llamacpp_size;
    if (auto b = llamacpp_size(line, "model buffer size")) add(g.weights, *b);
    else if (auto b2 = llamacpp_size(line, "KV buffer size")) add(g.kv, *b2);
    else if (auto b3 = llamacpp_size(line, "RS buffer size")) add(g.kv, *b3);
    else if (auto b4 = llamacpp_size(line, "compute buffer size")) add(g.compute, *b4);
    else if (auto b5 = llamacpp_size(line, "output buffer size")) add(g.output, *b5);
    g.engine = g.engine.empty() ? "llama.cpp" : g.engine;
  }
  // Command lines (llama-server, Ollama's runner).
  if (line.find("llama-server") != std::string_view::npos || line.find("runner") != std::string_view::npos ||
      line.find("--ctx-size") != std::string_view::npos) {
    if (auto v = flag(line, {"-c", "--ctx-size"})) g.n_ctx = u32(*v);
    if (auto v = flag(line, {"-np", "--parallel"})) g.n_seq = u32(*v);
    if (auto v = flag(line, {"-b", "--batch-size"})) g.n_batch = u32(*v);
    if (auto v = flag(line, {"-ub", "--ubatch-size"})) g.n_ubatch = u32(*v);
    if (auto v = flag(line, {"-ngl", "--n-gpu-layers", "--gpu-layers"})) g.gpu_layers = u32(*v);
    if (auto v = flag(line, {"-ctk", "--cache-type-k"})) g.type_k = *v;
    if (auto v = flag(line, {"-ctv", "--cache-type-v"})) g.type_v = *v;
    if (auto v = flag(line, {"-m", "--model"}); v && g.model_path.empty()) g.model_path = *v;
    if (line.find(" --flash-attn") != std::string_view::npos || line.find(" -fa") != std::string_view::npos)
      g.flash_attn = !(line.find("-fa off") != std::string_view::npos || line.find("--flash-attn off") != std::string_view::npos);
  }
  return false;
}

// A value in a Python dict or keyword list as vLLM and SGLang print them
// ("non-default args: {'max_model_len': 32768, 'model': 'Qwen/...'}",
// "ServerArgs(model_path='...', tp_size=4, ...)"): the quoted string or the
// bare token after "'key': " / "key=".
std::optional<std::string> py_value(std::string_view line, std::string_view key, bool keyword = false) {
  std::string pat = keyword ? std::string(key) + "=" : "'" + std::string(key) + "': ";
  size_t at = 0;
  while ((at = line.find(pat, at)) != std::string_view::npos) {
    bool left = at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_');
    if (!left) {
      at += pat.size();
      continue;
    }
    std::string_view r = line.substr(at + pat.size());
    if (!r.empty() && (r[0] == '\'' || r[0] == '"')) {
      size_t end = r.find(r[0], 1);
      if (end == std::string_view::npos) return std::nullopt;
      return std::string(r.substr(1, end - 1));
    }
    size_t end = r.find_first_of(",})");
    return std::string(trim(r.substr(0, end)));
  }
  return std::nullopt;
}

// The release a vLLM, SGLang or TGI log prints: "LLM engine (v0.6.4)",
// "vLLM API server version 0.6.4", the banner's "version 0.11.0",
// "sglang 0.4.6", TGI's `version: "2.4.1"`.
std::string release_in(std::string_view line) {
  auto digits = [](std::string_view r) {
    size_t n = 0;
    while (n < r.size() && (std::isdigit(static_cast<unsigned char>(r[n])) || r[n] == '.')) ++n;
    std::string v(r.substr(0, n));
    return v.find('.') != std::string::npos ? v : std::string();
  };
  for (std::string_view key : {"LLM engine (v", "server version ", "version: \"", "version=", "version "}) {
    size_t at = line.find(key);
    if (at == std::string_view::npos) continue;
    if (key == "version " && line.find("\u2588") == std::string_view::npos && line.find("█") == std::string_view::npos &&
        line.find("vLLM") == std::string_view::npos && line.find("vllm") == std::string_view::npos)
      continue;
    std::string v = digits(line.substr(at + key.size()));
    if (!v.empty()) return v;
  }
  return "";
}

// SGLang: ServerArgs, the weights' load line, the pool it sized.
void sglang_line(std::string_view line, EngineLog& g) {
  if (line.find("server_args=ServerArgs(") != std::string_view::npos ||
      line.find("ServerArgs(model_path=") != std::string_view::npos) {
    g.engine = "sglang";
    if (auto v = py_value(line, "model_path", true)) g.model_path = *v;
    if (auto v = py_value(line, "tp_size", true)) g.tp = u32(*v);
    if (auto v = py_value(line, "mem_fraction_static", true)) g.mem_fraction = leading_number(*v);
    if (auto v = py_value(line, "context_length", true); v && *v != "None") g.n_ctx = u32(*v);
    if (auto v = py_value(line, "max_total_tokens", true); v && *v != "None") g.max_total_tokens = u32(*v);
    if (auto v = py_value(line, "chunked_prefill_size", true); v && *v != "None") g.max_batched = u32(*v);
    if (auto v = py_value(line, "kv_cache_dtype", true); v && *v != "auto") g.type_k = *v;
    if (auto v = py_value(line, "quantization", true); v && *v != "None") g.quantization = *v;
  }
  if (line.find("sglang") != std::string_view::npos && g.version.empty()) g.version = release_in(line);
  // "Load weight begin. avail mem=78.68 GB": free memory before the weights, about the GPU's size.
  if (auto at = line.find("Load weight begin. avail mem="); at != std::string_view::npos) {
    g.engine = "sglang";
    if (auto b = units::parse_log_size(line.substr(at + 29))) g.gpu_total = *b;
  }
  if (auto at = line.find("Load weight end."); at != std::string_view::npos) {
    g.engine = "sglang";
    if (auto m = line.find("mem usage="); m != std::string_view::npos) g.weights = units::parse_log_size(line.substr(m + 10));
  }
  if (auto at = line.find("KV Cache is allocated."); at != std::string_view::npos) {
    g.engine = "sglang";
    if (auto t = line.find("#tokens:"); t != std::string_view::npos)
      if (auto n = leading_number(line.substr(t + 8))) g.kv_tokens = uint64_t(*n);
    uint64_t kv = 0;
    if (auto k = line.find("K size:"); k != std::string_view::npos) kv += units::parse_log_size(line.substr(k + 7)).value_or(0);
    if (auto v = line.find("V size:"); v != std::string_view::npos) kv += units::parse_log_size(line.substr(v + 7)).value_or(0);
    if (kv) g.kv = kv;
  }
  if (auto n = engine_lines::count_after(line, "max_total_num_tokens")) {
    g.engine = "sglang";
    g.kv_tokens = *n;
    if (auto v = engine_lines::count_after(line, "context_len"); v && *v <= UINT32_MAX) g.n_ctx = uint32_t(*v);
    if (auto v = engine_lines::count_after(line, "chunked_prefill_size"); v && *v <= UINT32_MAX) g.max_batched = uint32_t(*v);
  }
}

// One line of a vLLM log: its config line, `vllm serve`'s flags, the memory
// profile, the KV cache it sized.
void vllm_line(std::string_view line, EngineLog& g) {
  if (g.engine != "sglang" && g.version.empty()) {
    std::string v = release_in(line);
    if (!v.empty() && (line.find("LLM engine (v") != std::string_view::npos ||
                       line.find("server version") != std::string_view::npos || line.find("█") != std::string_view::npos))
      g.version = v;
  }
  if (line.find("V1 LLM engine") != std::string_view::npos || line.find("EngineCore") != std::string_view::npos ||
      line.find("gpu_worker.py") != std::string_view::npos || line.find("GPU KV cache size") != std::string_view::npos)
    g.vllm_v1 = true;
  if (auto at = line.find("non-default args: {"); at != std::string_view::npos) {
    g.engine = "vllm";
    std::string_view d = line.substr(at);
    auto model = py_value(d, "model");
    if (!model) model = py_value(d, "model_tag");
    if (model) g.model_path = *model;
    if (auto v = py_value(d, "max_model_len")) g.n_ctx = u32(*v);
    if (auto v = py_value(d, "tensor_parallel_size")) g.tp = u32(*v);
    if (auto v = py_value(d, "gpu_memory_utilization")) g.gpu_mem_util = leading_number(*v);
    if (auto v = py_value(d, "max_num_seqs")) g.max_num_seqs = u32(*v);
    if (auto v = py_value(d, "max_num_batched_tokens")) g.max_batched = u32(*v);
    if (auto v = py_value(d, "kv_cache_dtype")) g.type_k = *v;
    if (auto v = py_value(d, "dtype")) g.dtype = *v;
    if (auto v = py_value(d, "quantization")) g.quantization = *v;
    if (auto v = py_value(d, "enable_chunked_prefill")) g.chunked_prefill = *v == "True";
  }
  // vLLM 0.10+: "Free memory on device (60.86/79.19 GiB) on startup".
  if (auto at = line.find("Free memory on device ("); at != std::string_view::npos) {
    std::string_view r = line.substr(at + 23);
    size_t slash = r.find('/');
    if (slash != std::string_view::npos)
      if (auto b = units::parse_log_size(r.substr(slash + 1))) g.gpu_total = *b;
  }
  if (line.find("Model loading took") != std::string_view::npos ||
      line.find("Available KV cache memory") != std::string_view::npos)
    if (g.engine.empty()) g.engine = "vllm";
  if (line.find("with config: model=") != std::string_view::npos) {
    g.engine = "vllm";
    g.model_path = quoted_after(line, "model=");
    if (auto v = value_of(line, "max_seq_len")) g.n_ctx = u32(*v);
    if (auto v = value_of(line, "tensor_parallel_size")) g.tp = u32(*v);
    std::string dt = quoted_after(line, "dtype=");
    if (!dt.empty()) g.dtype = dt.rfind("torch.", 0) == 0 ? dt.substr(6) : dt;
    g.type_k = quoted_after(line, "kv_cache_dtype=");
    g.quantization = quoted_after(line, "quantization=");
    if (g.quantization == "None") g.quantization.clear();
  }
  if (line.find("vllm serve ") != std::string_view::npos) {
    g.engine = "vllm";
    size_t at = line.find("vllm serve ");
    std::string_view rest = trim(line.substr(at + 11));
    if (g.model_path.empty()) g.model_path = std::string(rest.substr(0, rest.find(' ')));
    if (auto v = flag(line, {"--max-model-len"})) g.n_ctx = u32(*v);
    if (auto v = flag(line, {"-tp", "--tensor-parallel-size"})) g.tp = u32(*v);
    if (auto v = flag(line, {"--max-num-seqs"})) g.max_num_seqs = u32(*v);
    if (auto v = flag(line, {"--max-num-batched-tokens"})) g.max_batched = u32(*v);
    if (auto v = flag(line, {"--gpu-memory-utilization"})) g.gpu_mem_util = leading_number(*v);
    if (auto v = flag(line, {"--kv-cache-dtype"})) g.type_k = *v;
  }
  if (auto v = value_of(line, "total_gpu_memory")) {
    if (auto b = units::parse_log_size(*v)) g.gpu_total = *b;
  } else if (line.find("total_gpu_memory (") != std::string_view::npos) {
    if (auto b = units::parse_log_size(line.substr(line.find("total_gpu_memory (") + 18))) g.gpu_total = *b;
  }
  if (auto at = line.find("gpu_memory_utilization"); at != std::string_view::npos) {
    std::string_view rest = line.substr(at + 22);
    while (!rest.empty() && (rest[0] == ' ' || rest[0] == '(' || rest[0] == '=' || rest[0] == ':')) rest.remove_prefix(1);
    if (auto d = leading_number(rest); d && *d > 0 && *d <= 1) g.gpu_mem_util = d;
  }
  if (auto w = size_of_key(line, "model weights take")) g.weights = w;
  else if (auto w2 = engine_lines::vllm_weights(line); w2 && (!g.weights || line.find("Loading model") != std::string_view::npos))
    g.weights = w2;
  if (auto v = size_of_key(line, "non_torch_memory")) g.non_torch = v;
  if (auto v = size_of_key(line, "activation peak memory")) g.activation = v;
  if (auto v = size_of_key(line, "kv_cache_size")) g.kv = v;
  if (line.find("peak_torch_memory") != std::string_view::npos && !g.activation) {
    // V0 "Memory profiling results": activation = peak torch - weights.
    if (auto peak = size_of_key(line, "peak_torch_memory"); peak && g.weights && *peak > *g.weights)
      g.activation = *peak - *g.weights;
  }
  if (line.find("Memory profiling results") != std::string_view::npos) g.vllm_v0 = true;
  if (line.find("GPU blocks:") != std::string_view::npos) g.vllm_v0 = true;
  if (auto n = engine_lines::vllm_gpu_blocks(line)) g.kv_tokens = *n * 16;
  if (auto n = engine_lines::vllm_kv_tokens(line)) g.kv_tokens = *n;
  if (auto at = line.find("Maximum concurrency for"); at != std::string_view::npos) {
    std::string_view r = line.substr(at + 23);
    if (auto n = leading_number(r); n && !g.n_ctx) g.n_ctx = uint32_t(*n);
    size_t colon = r.find(':');
    if (colon != std::string_view::npos) g.max_concurrency = leading_number(r.substr(colon + 1));
  }
  if (auto v = engine_lines::vllm_kv_available(line)) {
    if (line.find("Available KV cache memory:") != std::string_view::npos) g.kv_available = v->value();
    g.kv = v->negative ? 0 : v->bytes;
  }
}

}  // namespace

EngineLog parse_engine_log(const std::string& text) {
  EngineLog g;
  std::optional<uint64_t> kv_self;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (llamacpp_line(line, g, kv_self)) continue;
    sglang_line(line, g);
    if (g.engine != "sglang") vllm_line(line, g);
  }
  if (!g.kv && kv_self) g.kv = kv_self;
  // vLLM's memory lines without its config line (an excerpt).
  if (g.engine.empty() && (g.kv_tokens || g.non_torch || g.activation || g.gpu_mem_util || g.max_concurrency))
    g.engine = "vllm";
  return g;
}

Result<ModelSpec> model_from_log(const FileSystem& files, const EngineLog& g, const std::string& model_override) {
  namespace fs = std::filesystem;  // paths only: the files come from `files`
  std::string path = model_override.empty() ? g.model_path : model_override;
  if (!path.empty() && files.kind(path) != FileKind::missing) return load_model(files, path, "", "");
  if (!path.empty() && find_model(path)) {
    // A GGUF engine names its file type ("Q4_K - Medium"): size the catalog
    // model's weights as that llama.cpp mix.
    const bool gguf = g.engine == "llama.cpp" && !g.file_type.empty();
    return load_model(files, path, g.dtype, gguf ? normalize_ftype(g.file_type) : g.quantization);
  }
  if (g.engine == "llama.cpp" && g.n_layer && g.n_embd && g.n_head) {
    // Rebuild the model from the printed metadata; weights from the ftype mix.
    nlohmann::json c = {{"model_type", g.arch.empty() ? "llama" : g.arch},
                        {"num_hidden_layers", *g.n_layer},
                        {"hidden_size", *g.n_embd},
                        {"num_attention_heads", *g.n_head},
                        {"num_key_value_heads", g.n_head_kv.value_or(*g.n_head)},
                        {"vocab_size", g.n_vocab.value_or(32000)},
                        {"intermediate_size", g.n_ff.value_or(4 * *g.n_embd)},
                        {"max_position_embeddings", g.n_ctx_train.value_or(4096)}};
    if (g.head_k) c["head_dim"] = *g.head_k;
    if (g.n_expert && *g.n_expert > 0) {
      c["num_local_experts"] = *g.n_expert;
      c["num_experts_per_tok"] = g.n_expert_used.value_or(2);
    }
    // The log names the model: text from outside, made printable before it is shown.
    auto spec = spec_from_config(c, path.empty() ? "model from the log" : text::printable(fs::path(path).filename().string()));
    if (!spec) return spec;
    if (g.params_b) spec->n_params = uint64_t(*g.params_b * 1e9);
    if (!apply_gguf_ftype(*spec, g.file_type) && g.file_size_gib) {
      spec->weight_bytes = uint64_t(*g.file_size_gib * kGiB);
      spec->weights_format = g.file_type;
    }
    spec->notes.push_back("model rebuilt from the log's printed metadata (the GGUF file is not on this machine)");
    return spec;
  }
  return make_error(path.empty() ? "the log does not name the model; pass it: aimem fit MODEL --against LOG"
                                 : fmt::format("the log's model '{}' is neither a file here nor in the catalog; "
                                               "pass it: aimem fit MODEL --against LOG", text::printable(path)));
}

FitSettings settings_from_log(const EngineLog& g) {
  FitSettings s;
  s.runtime = g.engine == "vllm" ? Runtime::kVllm : g.engine == "sglang" ? Runtime::kSglang : Runtime::kLlamaCpp;
  if (s.runtime == Runtime::kSglang) {
    s.ctx = g.n_ctx.value_or(0);
    s.concurrency = 1;
    s.tp = g.tp.value_or(1);
    s.mem_fraction = g.mem_fraction.value_or(0);
    if (g.max_batched) s.batch = *g.max_batched;
    s.max_total_tokens = g.max_total_tokens.value_or(0);
    if (!g.type_k.empty()) s.kv_type = g.type_k;
    if (!g.version.empty()) s.engine_version = engine_rules_for_release(Runtime::kSglang, g.version)->version;
    return s;
  }
  uint32_t seqs = g.n_seq.value_or(1);
  if (s.runtime == Runtime::kLlamaCpp) {
    s.concurrency = seqs;
    s.ctx = g.n_ctx ? std::max<uint32_t>(1, *g.n_ctx / std::max<uint32_t>(1, seqs)) : 0;
    s.unified_kv = g.kv_unified.value_or(seqs <= 1);
    if (g.n_batch) s.batch = *g.n_batch;
    if (g.n_ubatch) s.ubatch = *g.n_ubatch;
    if (!g.type_k.empty()) s.kv_type = g.type_k;
    s.flash_attn = g.flash_attn;
    if (g.gpu_layers) s.gpu_layers = int(*g.gpu_layers);
    s.gpus = std::max<uint32_t>(1, g.gpu_devices);
    s.mmap = g.mmap.value_or(true);
  } else {
    s.ctx = g.n_ctx.value_or(0);
    s.concurrency = 1;
    s.tp = g.tp.value_or(1);
    s.gpu_mem_util = g.gpu_mem_util.value_or(0.9);
    if (g.max_batched) s.batch = *g.max_batched;
    if (g.max_num_seqs) s.max_seqs = *g.max_num_seqs;
    s.chunked_prefill = g.chunked_prefill;
    // The version's rules: V0 lines mean the V0 engine whatever the release
    // (0.8-0.9 ran it with VLLM_USE_V1=0); else the release the log prints;
    // else the newest. V0 without chunked prefill then profiles
    // max(max_model_len, 2048) tokens.
    if (g.vllm_v0) s.engine_version = "0.6";
    else if (!g.version.empty()) s.engine_version = engine_rules_for_release(Runtime::kVllm, g.version)->version;
    if (!g.type_k.empty() && g.type_k != "auto") s.kv_type = g.type_k;
  }
  return s;
}

Hardware hardware_from_log(const EngineLog& g) {
  Hardware hw;
  hw.cpu_amx = g.cpu_amx;
  if (g.gpu_total || g.gpu_devices) {
    hw.gpu_count = std::max<uint32_t>(1, g.gpu_devices);
    hw.gpu_total = g.gpu_total.value_or(80 * kGiB);
    hw.gpu_name = "GPU from the log";
    hw.gpu_source = "the log";
    // SGLang prints the free memory before loading, after its CUDA context.
    if (g.engine == "sglang" && g.gpu_total) hw.gpu_total += (g.tp.value_or(1) > 1 ? 1536 : 512) * kMiB;
  } else if (g.engine == "vllm" || g.engine == "sglang") {
    // V1 logs do not print the GPU's size: one 80 GiB GPU unless --gpu / --vram say otherwise.
    hw.gpu_count = 1;
    hw.gpu_total = 80 * kGiB;
    hw.gpu_name = "GPU not in the log";
    hw.gpu_source = "assumed 80 GiB (pass --gpu or --vram)";
  }
  return hw;
}

int run_against(const FileSystem& files, const std::string& log_path, const std::string& log_text,
                const std::string& model_override, bool json, const Hardware* hw_override) {
  EngineLog g = parse_engine_log(log_text);
  if (g.engine.empty()) {
    fmt::print(stderr, "aimem fit: {}: no llama.cpp, Ollama, vLLM or SGLang memory lines found\n", log_path);
    return 2;
  }
  auto m = model_from_log(files, g, model_override);
  if (!m) {
    fmt::print(stderr, "aimem fit: {}: {}\n", log_path, m.error().message);
    return 2;
  }
  FitSettings s = settings_from_log(g);
  Hardware hw = hardware_from_log(g);
  if (hw_override && hw_override->gpu_total) {
    uint32_t n = hw.gpu_count;
    hw = *hw_override;
    hw.gpu_count = std::max<uint32_t>(std::max<uint32_t>(1, n), hw_override->gpu_count);
  }
  Plan p = plan_once(*m, s, hw, {});
  auto sum = [&](std::string_view comp, bool host_only = false) {
    uint64_t b = 0;
    for (const Term& t : p.terms)
      if (t.component == comp && (!host_only || t.device == "host")) b += t.bytes;
    return b;
  };
  struct Row {
    std::string name;
    std::optional<double> engine, aimem;
    double band;
    std::string unit;
    double abs_tol = 0;  // the log's print precision (bytes)
  };
  std::vector<Row> rows;
  // llama.cpp prints MiB with 2 decimals (a few buffers summed); vLLM GiB with 2.
  const double print_tol = s.runtime == Runtime::kVllm || s.runtime == Runtime::kSglang ? 0.005 * kGiB
                                                                                        : 4 * 0.005 * kMiB;
  auto bytes_row = [&](const std::string& n, std::optional<uint64_t> e, uint64_t a, double band) {
    rows.push_back({n, e ? std::optional<double>(double(*e)) : std::nullopt, double(a), band, "bytes", print_tol});
  };
  auto tokens_row = [&](const std::string& n) {
    rows.push_back({n, g.kv_tokens ? std::optional<double>(double(*g.kv_tokens)) : std::nullopt,
                    p.kv_cache_tokens ? std::optional<double>(double(*p.kv_cache_tokens)) : std::nullopt, 0.10,
                    "tokens"});
  };
  if (s.runtime == Runtime::kSglang) {
    bytes_row("weights (per rank)", g.weights, sum("weights") + sum("quant_metadata"), 0.05);
    bytes_row("KV pool (K + V)", g.kv, sum("kv_cache"), 0.10);
    tokens_row("max_total_num_tokens");
  } else if (s.runtime == Runtime::kVllm) {
    bytes_row("weights (per rank)", g.weights, sum("weights") + sum("quant_metadata"), 0.05);
    uint64_t act = 0, nt = 0;
    for (const Term& t : p.terms) {
      if (t.component == "compute") act += t.bytes;
      if (t.what.rfind("non-torch", 0) == 0) nt += t.bytes;
    }
    bytes_row("activation peak", g.activation, act, 0.4);
    bytes_row("non-torch memory", g.non_torch, nt, 0.6);
    if (g.kv_available && *g.kv_available <= 0) {
      // A failed start: the engine's budget was negative. Compare the signed
      // budgets; both at or below zero is the same verdict.
      double e = double(*g.kv_available), a = double(p.kv_budget.value_or(0));
      rows.push_back({"available KV memory", e, a, 0.0, "signed", print_tol + (a <= 0 ? 1e300 : 0.0)});
    } else {
      bytes_row("KV cache", g.kv, sum("kv_cache"), 0.15);
    }
    tokens_row("KV cache tokens");
  } else {
    bytes_row("model buffers", g.weights, sum("weights") + sum("extra_models"), 0.05);
    bytes_row("KV cache", g.kv, sum("kv_cache"), 0.01);
    bytes_row("compute buffers", g.compute, sum("compute"), 0.10);
    uint64_t out = 0;
    for (const Term& t : p.terms)
      if (t.what.rfind("output buffer", 0) == 0) out += t.bytes;
    bytes_row("output buffer", g.output, out, 0.05);
  }
  int rc = 0;
  nlohmann::json jr = nlohmann::json::array();
  std::string table = fmt::format("{:<22} {:>14} {:>14} {:>9}  {}\n", "component", "engine", "aimem", "error", "");
  for (const Row& r : rows) {
    auto show = [&](std::optional<double> v) {
      if (!v) return std::string("-");
      if (r.unit == "signed") return fmt::format("{:+.2f} GiB", *v / double(kGiB));
      return r.unit == "bytes" ? units::format_bytes(uint64_t(*v)) : fmt::format("{:.0f}", *v);
    };
    std::optional<double> err;
    if (r.engine && r.aimem && *r.engine > 0) err = (*r.aimem - *r.engine) / *r.engine;
    if (r.unit == "signed" && r.engine && r.aimem) err = (*r.aimem - *r.engine) / std::fabs(*r.engine ? *r.engine : 1.0);
    bool ok = !err || std::fabs(*err) <= r.band || std::fabs(*r.aimem - *r.engine) <= r.abs_tol;
    if (!ok) rc = 1;
    table += fmt::format("{:<22} {:>14} {:>14} {:>9}  {}\n", r.name, show(r.engine), show(r.aimem),
                         err ? fmt::format("{:+.1f}%", *err * 100) : "-",
                         r.unit == "signed" && err ? (ok ? std::string("same verdict: no KV memory, the engine stops")
                                                         : std::string("OUTSIDE: aimem's budget is positive"))
                         : err ? (ok ? fmt::format("within ±{:.0f}%", r.band * 100) : fmt::format("OUTSIDE ±{:.0f}%", r.band * 100))
                               : "not in the log");
    jr.push_back({{"component", r.name}, {"engine", r.engine ? nlohmann::json(*r.engine) : nlohmann::json(nullptr)},
                  {"aimem", r.aimem ? nlohmann::json(*r.aimem) : nlohmann::json(nullptr)},
                  {"error", err ? nlohmann::json(*err) : nlohmann::json(nullptr)}, {"band", r.band}, {"unit", r.unit}});
  }
  if (json) {
    nlohmann::json j = {{"log", log_path}, {"engine", g.engine}, {"version", g.version}, {"model", m->name},
                        {"rules", p.engine}, {"rules_version", p.rules}, {"rules_source", p.rules_source},
                        {"settings", {{"ctx", p.ctx}, {"concurrency", p.concurrency}, {"kv_type", p.kv_type},
                                      {"flash_attn", p.flash_attn}, {"ubatch", p.ubatch}, {"gpu_layers", p.gpu_layers}}},
                        {"components", jr}, {"within_bands", rc == 0}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("aimem fit --against {}\n", log_path);
    fmt::print("engine: {}{}; model: {} ({}); aimem's rules mirror {}\n", g.engine,
               g.version.empty() ? "" : " " + g.version, m->name, m->weights_format, p.engine);
    if (!hw.gpu_source.empty() && hw.gpu_source.rfind("assumed", 0) == 0)
      fmt::print("GPU: {}\n", hw.gpu_source);
    for (const std::string& a : p.assumptions)
      if (a.rfind("vLLM stops", 0) == 0 || a.rfind("SGLang stops", 0) == 0 || a.rfind("vLLM refuses", 0) == 0)
        fmt::print("aimem: {}\n", a);
    fmt::print("settings read from the log: {}\n\n", p.flags);
    fmt::print("{}", table);
  }
  return rc;
}

}  // namespace aimem::fit
