#include "fit/against.h"

#include "core/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

// "= 800.00 MiB" after a label like "KV buffer size".
std::optional<uint64_t> size_after(std::string_view line, std::string_view label) {
  size_t at = line.find(label);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + label.size());
  size_t eq = rest.find_first_of("=:");
  if (eq == std::string_view::npos || eq > 4) {
    rest = trim(rest);
  } else {
    rest = rest.substr(eq + 1);
  }
  return units::parse_log_size(rest);
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

// The size after a key, past "=", ":", "takes" and spaces ("non_torch_memory=0.35GiB",
// "non_torch_memory takes 0.35GiB", "non_torch_memory     3.58GiB").
std::optional<uint64_t> size_of_key(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view r = line.substr(at + key.size());
  while (!r.empty() && (r[0] == ' ' || r[0] == '=' || r[0] == ':' || r[0] == '(')) r.remove_prefix(1);
  if (r.rfind("takes", 0) == 0) r.remove_prefix(5);
  return units::parse_log_size(r);
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
    if (auto v = value_of(line, "n_ctx")) g.n_ctx = u32(*v);
    if (auto v = value_of(line, "n_batch")) g.n_batch = u32(*v);
    if (auto v = value_of(line, "n_ubatch")) g.n_ubatch = u32(*v);
    if (auto v = value_of(line, "n_seq_max")) g.n_seq = u32(*v);
    if (auto v = value_of(line, "flash_attn")) {
      std::string f(*v);
      g.flash_attn = f == "1" || f == "enabled" || f == "true" || f == "auto";
    }
    if (auto v = value_of(line, "kv_unified")) g.kv_unified = *v == "true";
    if (auto v = size_after(line, "KV self size")) kv_self = *v;
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
    if (auto s = size_after(line, "size")) kv_self = *s;
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
    if (auto b = size_after(line, "model buffer size")) add(g.weights, *b);
    else if (auto b2 = size_after(line, "KV buffer size")) add(g.kv, *b2);
    else if (auto b3 = size_after(line, "RS buffer size")) add(g.kv, *b3);
    else if (auto b4 = size_after(line, "compute buffer size")) add(g.compute, *b4);
    else if (auto b5 = size_after(line, "output buffer size")) add(g.output, *b5);
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

// One line of a vLLM log: its config line, `vllm serve`'s flags, the memory
// profile, the KV cache it sized.
void vllm_line(std::string_view line, EngineLog& g) {
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
  if (auto at = line.find("model weights take"); at != std::string_view::npos)
    g.weights = units::parse_log_size(line.substr(at + 18));
  else if (auto at2 = line.find("Loading model weights took"); at2 != std::string_view::npos)
    g.weights = units::parse_log_size(line.substr(at2 + 26));
  else if (auto at3 = line.find("Model loading took"); at3 != std::string_view::npos && !g.weights)
    g.weights = units::parse_log_size(line.substr(at3 + 18));
  if (auto v = size_of_key(line, "non_torch_memory")) g.non_torch = v;
  if (auto v = size_of_key(line, "activation peak memory")) g.activation = v;
  if (auto v = size_of_key(line, "kv_cache_size")) g.kv = v;
  if (line.find("peak_torch_memory") != std::string_view::npos && !g.activation) {
    // V0 "Memory profiling results": activation = peak torch - weights.
    if (auto peak = size_of_key(line, "peak_torch_memory"); peak && g.weights && *peak > *g.weights)
      g.activation = *peak - *g.weights;
  }
  if (line.find("Memory profiling results") != std::string_view::npos) g.vllm_v0 = true;
  if (auto at = line.find("GPU blocks:"); at != std::string_view::npos) {
    g.vllm_v0 = true;
    if (auto n = leading_number(line.substr(at + 11))) g.kv_tokens = uint64_t(*n) * 16;
  }
  if (auto at = line.find("GPU KV cache size:"); at != std::string_view::npos) {
    if (auto n = leading_number(line.substr(at + 18))) g.kv_tokens = uint64_t(*n);
  }
  if (auto at = line.find("Maximum concurrency for"); at != std::string_view::npos) {
    std::string_view r = line.substr(at + 23);
    if (auto n = leading_number(r); n && !g.n_ctx) g.n_ctx = uint32_t(*n);
    size_t colon = r.find(':');
    if (colon != std::string_view::npos) g.max_concurrency = leading_number(r.substr(colon + 1));
  }
  if (auto at = line.find("Available KV cache memory:"); at != std::string_view::npos)
    g.kv = units::parse_log_size(line.substr(at + 26));
  else if (auto at2 = line.find("reserved for KV Cache is"); at2 != std::string_view::npos)
    g.kv = units::parse_log_size(line.substr(at2 + 24));
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
    vllm_line(line, g);
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
  s.runtime = g.engine == "vllm" ? Runtime::kVllm : Runtime::kLlamaCpp;
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
    // V0 without chunked prefill profiles max(max_model_len, 2048) tokens.
    else if (g.vllm_v0 && s.ctx) s.batch = std::max<uint32_t>(s.ctx, 2048);
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
  }
  return hw;
}

int run_against(const FileSystem& files, const std::string& log_path, const std::string& log_text,
                const std::string& model_override, bool json) {
  EngineLog g = parse_engine_log(log_text);
  if (g.engine.empty()) {
    fmt::print(stderr, "aimem fit: {}: no llama.cpp, Ollama or vLLM memory lines found\n", log_path);
    return 2;
  }
  auto m = model_from_log(files, g, model_override);
  if (!m) {
    fmt::print(stderr, "aimem fit: {}: {}\n", log_path, m.error().message);
    return 2;
  }
  FitSettings s = settings_from_log(g);
  Hardware hw = hardware_from_log(g);
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
  const double print_tol = s.runtime == Runtime::kVllm ? 0.005 * kGiB : 4 * 0.005 * kMiB;
  auto bytes_row = [&](const std::string& n, std::optional<uint64_t> e, uint64_t a, double band) {
    rows.push_back({n, e ? std::optional<double>(double(*e)) : std::nullopt, double(a), band, "bytes", print_tol});
  };
  if (s.runtime == Runtime::kVllm) {
    bytes_row("weights (per rank)", g.weights, sum("weights") + sum("quant_metadata"), 0.05);
    uint64_t act = 0, nt = 0;
    for (const Term& t : p.terms) {
      if (t.component == "compute") act += t.bytes;
      if (t.what.rfind("non-torch", 0) == 0) nt += t.bytes;
    }
    bytes_row("activation peak", g.activation, act, 0.4);
    bytes_row("non-torch memory", g.non_torch, nt, 0.6);
    bytes_row("KV cache", g.kv, sum("kv_cache"), 0.15);
    rows.push_back({"KV cache tokens", g.kv_tokens ? std::optional<double>(double(*g.kv_tokens)) : std::nullopt,
                    p.kv_cache_tokens ? std::optional<double>(double(*p.kv_cache_tokens)) : std::nullopt, 0.15, "tokens"});
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
      return r.unit == "bytes" ? units::format_bytes(uint64_t(*v)) : fmt::format("{:.0f}", *v);
    };
    std::optional<double> err;
    if (r.engine && r.aimem && *r.engine > 0) err = (*r.aimem - *r.engine) / *r.engine;
    bool ok = !err || std::fabs(*err) <= r.band || std::fabs(*r.aimem - *r.engine) <= r.abs_tol;
    if (!ok) rc = 1;
    table += fmt::format("{:<22} {:>14} {:>14} {:>9}  {}\n", r.name, show(r.engine), show(r.aimem),
                         err ? fmt::format("{:+.1f}%", *err * 100) : "-",
                         err ? (ok ? fmt::format("within ±{:.0f}%", r.band * 100) : fmt::format("OUTSIDE ±{:.0f}%", r.band * 100)) : "not in the log");
    jr.push_back({{"component", r.name}, {"engine", r.engine ? nlohmann::json(*r.engine) : nlohmann::json(nullptr)},
                  {"aimem", r.aimem ? nlohmann::json(*r.aimem) : nlohmann::json(nullptr)},
                  {"error", err ? nlohmann::json(*err) : nlohmann::json(nullptr)}, {"band", r.band}, {"unit", r.unit}});
  }
  if (json) {
    nlohmann::json j = {{"log", log_path}, {"engine", g.engine}, {"model", m->name}, {"rules", p.engine},
                        {"settings", {{"ctx", p.ctx}, {"concurrency", p.concurrency}, {"kv_type", p.kv_type},
                                      {"flash_attn", p.flash_attn}, {"ubatch", p.ubatch}, {"gpu_layers", p.gpu_layers}}},
                        {"components", jr}, {"within_bands", rc == 0}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("aimem fit --against {}\n", log_path);
    fmt::print("engine: {}; model: {} ({}); aimem's rules mirror {}\n", g.engine, m->name, m->weights_format, p.engine);
    fmt::print("settings read from the log: {}\n\n", p.flags);
    fmt::print("{}", table);
  }
  return rc;
}

}  // namespace aimem::fit
