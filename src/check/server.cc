// Recognising an inference server in a container's command line. The words
// come from argv arrays (Kubernetes command + args, Compose lists) or from a
// shell string (`sh -c "..."`, Compose string commands), split as sh would;
// the server is the first command among `&&` / `;` chains whose program names
// a runtime, else the image names it (the vLLM, TGI, Ollama and llama.cpp
// images start the server themselves and take only flags as args).
// Each runtime's flags that decide memory are one table row each, read as
// `--flag value` or `--flag=value`; environment variables the runtimes read
// instead of flags (TGI, Ollama, llama-server's LLAMA_ARG_*) are a second table.
#include "check/server.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>

#include "core/text.h"
#include "core/units.h"

namespace aimem::check {

std::string_view to_string(Server s) {
  switch (s) {
    case Server::kNone: return "none";
    case Server::kVllm: return "vllm";
    case Server::kLlamaCpp: return "llama.cpp";
    case Server::kOllama: return "ollama";
    case Server::kTgi: return "tgi";
    case Server::kSglang: return "sglang";
  }
  return "none";
}

std::vector<std::string> shell_words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  auto flush = [&] {
    if (in_word) out.push_back(cur);
    cur.clear();
    in_word = false;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      if (s[i + 1] != '\n') cur += s[i + 1], in_word = true;  // backslash-newline continues the line
      ++i;
    } else if (c == '\'') {
      size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos) end = s.size();
      cur.append(s.substr(i + 1, end - i - 1));
      in_word = true;
      i = end;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && std::string_view("\"\\$`").find(s[i + 1]) != std::string_view::npos) ++i;
        cur += s[i];
      }
    } else if (c == '\n') {  // a newline ends a command as ';' does (scripts in `sh -c |` blocks)
      flush();
      out.push_back(";");
    } else if (c == ' ' || c == '\t' || c == '\r') {
      flush();
    } else if (c == ';' || c == '|' || c == '&') {
      flush();
      std::string op(1, c);
      if (i + 1 < s.size() && (s[i + 1] == c) && c != ';') op += s[++i];
      out.push_back(op);
    } else if (c == '#' && !in_word) {
      while (i < s.size() && s[i] != '\n') ++i;
      if (i < s.size()) --i;  // the newline still ends the command
    } else {
      cur += c;
      in_word = true;
    }
  }
  flush();
  return out;
}

namespace {

bool is_op(const std::string& w) { return w == "&&" || w == "||" || w == ";" || w == "|" || w == "&"; }

std::string basename(const std::string& w) {
  auto p = w.rfind('/');
  return p == std::string::npos ? w : w.substr(p + 1);
}

bool is_shell(const std::string& w) {
  std::string b = basename(w);
  return b == "sh" || b == "bash" || b == "dash" || b == "ash" || b == "zsh";
}

// argv with every `sh -c SCRIPT` replaced by the words of SCRIPT (located at SCRIPT).
std::vector<Arg> expand_words(const std::vector<Arg>& argv) {
  std::vector<Arg> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const Arg& a = argv[i];
    if (is_shell(a.text) && i + 2 < argv.size() + 1) {
      size_t j = i + 1;
      while (j < argv.size() && argv[j].text.size() > 1 && argv[j].text[0] == '-' && argv[j].text.find('c') == std::string::npos) ++j;
      if (j < argv.size() && argv[j].text.size() > 1 && argv[j].text[0] == '-' && argv[j].text.find('c') != std::string::npos &&
          j + 1 < argv.size()) {
        for (const std::string& w : shell_words(argv[j + 1].text)) out.push_back({w, argv[j + 1].at});
        out.push_back({";", argv[j + 1].at});
        i = j + 1;
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

enum class Field { kModel, kContext, kTotalContext, kConcurrency, kGpuFraction, kTp, kPp, kGpuLayers, kKvType, kQuant,
                   kSwapSpace, kCpuOffload, kMlock, kNoMmap, kMaxLoaded, kIgnoredValue };

struct FlagRow {
  Server server;
  const char* names;  // space-separated spellings
  Field field;
};

// The flags that decide memory, per runtime (vLLM `vllm serve --help`,
// llama-server README, TGI launcher --help, SGLang server_args.py). Flags
// taking a value that aimem does not use are listed so that their value is
// not mistaken for the positional model.
constexpr FlagRow kFlags[] = {
    {Server::kVllm, "--model", Field::kModel},
    {Server::kVllm, "--max-model-len", Field::kContext},
    {Server::kVllm, "--max-num-seqs", Field::kConcurrency},
    {Server::kVllm, "--gpu-memory-utilization", Field::kGpuFraction},
    {Server::kVllm, "--tensor-parallel-size -tp", Field::kTp},
    {Server::kVllm, "--pipeline-parallel-size -pp", Field::kPp},
    {Server::kVllm, "--kv-cache-dtype", Field::kKvType},
    {Server::kVllm, "--swap-space", Field::kSwapSpace},
    {Server::kVllm, "--cpu-offload-gb", Field::kCpuOffload},
    {Server::kVllm, "--quantization -q", Field::kQuant},
    {Server::kVllm, "--host --port --dtype --served-model-name --max-num-batched-tokens "
                    "--download-dir --tokenizer --revision --api-key --chat-template",
     Field::kIgnoredValue},
    {Server::kLlamaCpp, "-m --model", Field::kModel},
    {Server::kLlamaCpp, "-c --ctx-size", Field::kTotalContext},
    {Server::kLlamaCpp, "-np --parallel", Field::kConcurrency},
    {Server::kLlamaCpp, "-ngl --gpu-layers --n-gpu-layers", Field::kGpuLayers},
    {Server::kLlamaCpp, "-ctk --cache-type-k", Field::kKvType},
    {Server::kLlamaCpp, "--mlock", Field::kMlock},
    {Server::kLlamaCpp, "--no-mmap", Field::kNoMmap},
    {Server::kLlamaCpp, "--host --port -t --threads -b --batch-size -ub --ubatch-size -hf --hf-repo -a --alias",
     Field::kIgnoredValue},
    {Server::kTgi, "--model-id", Field::kModel},
    {Server::kTgi, "--max-total-tokens", Field::kContext},
    {Server::kTgi, "--max-concurrent-requests", Field::kConcurrency},
    {Server::kTgi, "--cuda-memory-fraction", Field::kGpuFraction},
    {Server::kTgi, "--num-shard", Field::kTp},
    {Server::kTgi, "--quantize", Field::kQuant},
    {Server::kTgi, "--max-input-length --max-input-tokens --max-batch-prefill-tokens --max-batch-total-tokens "
                   "--port --hostname --dtype --revision",
     Field::kIgnoredValue},
    {Server::kSglang, "--model-path --model", Field::kModel},
    {Server::kSglang, "--context-length", Field::kContext},
    {Server::kSglang, "--max-running-requests", Field::kConcurrency},
    {Server::kSglang, "--mem-fraction-static", Field::kGpuFraction},
    {Server::kSglang, "--tp --tp-size --tensor-parallel-size", Field::kTp},
    {Server::kSglang, "--pp --pp-size --pipeline-parallel-size", Field::kPp},
    {Server::kSglang, "--kv-cache-dtype", Field::kKvType},
    {Server::kSglang, "--quantization", Field::kQuant},
    {Server::kSglang, "--host --port --dtype --served-model-name", Field::kIgnoredValue},
};

struct EnvRow {
  Server server;
  const char* name;
  Field field;
};

constexpr EnvRow kEnv[] = {
    {Server::kTgi, "MODEL_ID", Field::kModel},
    {Server::kTgi, "MAX_TOTAL_TOKENS", Field::kContext},
    {Server::kTgi, "MAX_CONCURRENT_REQUESTS", Field::kConcurrency},
    {Server::kTgi, "CUDA_MEMORY_FRACTION", Field::kGpuFraction},
    {Server::kTgi, "NUM_SHARD", Field::kTp},
    {Server::kTgi, "QUANTIZE", Field::kQuant},
    {Server::kOllama, "OLLAMA_CONTEXT_LENGTH", Field::kContext},
    {Server::kOllama, "OLLAMA_NUM_PARALLEL", Field::kConcurrency},
    {Server::kOllama, "OLLAMA_MAX_LOADED_MODELS", Field::kMaxLoaded},
    {Server::kLlamaCpp, "LLAMA_ARG_MODEL", Field::kModel},
    {Server::kLlamaCpp, "LLAMA_ARG_CTX_SIZE", Field::kTotalContext},
    {Server::kLlamaCpp, "LLAMA_ARG_N_PARALLEL", Field::kConcurrency},
    {Server::kLlamaCpp, "LLAMA_ARG_N_GPU_LAYERS", Field::kGpuLayers},
};

bool flag_is(const FlagRow& r, std::string_view word) {
  for (std::string_view n : text::split(r.names, ' '))
    if (n == word) return true;
  return false;
}

// "32768", "32k" (vLLM: k = 1000, K = 1024).
std::optional<int64_t> parse_count(std::string_view v) {
  if (v.empty()) return std::nullopt;
  int64_t mult = 1;
  char last = v.back();
  if (last == 'k') mult = 1000;
  else if (last == 'K') mult = 1024;
  else if (last == 'm') mult = 1000000;
  else if (last == 'M') mult = 1024 * 1024;
  if (mult != 1) v.remove_suffix(1);
  std::string s(v);
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || n < -1 || n > (int64_t(1) << 40)) return std::nullopt;
  return n * mult;
}

std::optional<double> parse_real(std::string_view v) {
  std::string s(v);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !std::isfinite(d)) return std::nullopt;
  return d;
}

void set_field(ServerConfig& cfg, Field f, const std::string& name, const std::string& value, const Loc& at) {
  auto bad = [&] { cfg.problems.push_back(name + " " + value + ": not a number"); };
  auto count = [&](std::optional<At<int64_t>>& dst) {
    if (auto n = parse_count(value)) dst = At<int64_t>{*n, at}; else bad();
  };
  auto real = [&](std::optional<At<double>>& dst) {
    if (auto d = parse_real(value)) dst = At<double>{*d, at}; else bad();
  };
  switch (f) {
    case Field::kModel: cfg.model = At<std::string>{value, at}; break;
    case Field::kContext: count(cfg.context); break;
    case Field::kTotalContext: count(cfg.total_context); break;
    case Field::kConcurrency: count(cfg.concurrency); break;
    case Field::kGpuFraction: real(cfg.gpu_fraction); break;
    case Field::kTp: count(cfg.tp); break;
    case Field::kPp: count(cfg.pp); break;
    case Field::kGpuLayers:
      if (value == "auto" || value == "all") cfg.gpu_layers = At<int64_t>{-1, at};
      else count(cfg.gpu_layers);
      break;
    case Field::kKvType: cfg.kv_type = At<std::string>{value, at}; break;
    case Field::kQuant: cfg.quantization = At<std::string>{value, at}; break;
    case Field::kSwapSpace: real(cfg.swap_space_gib); break;
    case Field::kCpuOffload: real(cfg.cpu_offload_gib); break;
    case Field::kMaxLoaded: count(cfg.max_loaded_models); break;
    case Field::kMlock: cfg.mlock = at; break;
    case Field::kNoMmap: cfg.no_mmap = at; break;
    case Field::kIgnoredValue: break;
  }
}

bool takes_value(Field f) { return f != Field::kMlock && f != Field::kNoMmap; }

// Reads flags of `server` from words [from, to); the first bare word is the
// positional model where the runtime takes one (vllm serve MODEL).
void read_flags(ServerConfig& cfg, const std::vector<Arg>& w, size_t from, size_t to, bool positional_model) {
  for (size_t i = from; i < to; ++i) {
    const std::string& word = w[i].text;
    if (word.size() < 2 || word[0] != '-') {
      if (positional_model && !cfg.model) cfg.model = At<std::string>{word, w[i].at};
      continue;
    }
    std::string name = word, value;
    bool inline_value = false;
    if (auto eq = word.find('='); eq != std::string::npos) {
      name = word.substr(0, eq);
      value = word.substr(eq + 1);
      inline_value = true;
    }
    // vLLM and SGLang accept --max_model_len as well as --max-model-len.
    std::string dashed = name;
    for (size_t k = 2; k < dashed.size(); ++k)
      if (dashed[k] == '_') dashed[k] = '-';
    const FlagRow* row = nullptr;
    for (const FlagRow& r : kFlags)
      if (r.server == cfg.server && flag_is(r, dashed)) row = &r;
    if (!row) continue;
    if (!takes_value(row->field)) {
      set_field(cfg, row->field, dashed, "", w[i].at);
      continue;
    }
    Loc at = w[i].at;
    if (!inline_value) {
      if (i + 1 >= to) {
        cfg.problems.push_back(dashed + ": no value");
        continue;
      }
      value = w[++i].text;
      at = w[i].at;
    }
    set_field(cfg, row->field, dashed, value, at);
  }
}

// --max-old-space-size=N (MiB) in a Node command line or NODE_OPTIONS.
void read_node_heap(ServerConfig& cfg, const std::vector<Arg>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i].text;
    const Loc& at = words[i].at;
    for (char& ch : w)
      if (ch == '_') ch = '-';
    if (w.rfind("--max-old-space-size", 0) != 0) continue;
    std::string v;
    if (auto eq = w.find('='); eq != std::string::npos) v = w.substr(eq + 1);
    else if (i + 1 < words.size()) v = words[i + 1].text;
    if (auto n = parse_count(v); n && *n > 0) cfg.node_heap = At<uint64_t>{uint64_t(*n) * units::MiB, at};
    else cfg.problems.push_back("--max-old-space-size " + v + ": not a number of MiB");
  }
}

Server server_of_image(const std::string& image) {
  std::string i = text::lower(image);
  if (i.find("vllm") != std::string::npos) return Server::kVllm;
  if (i.find("text-generation-inference") != std::string::npos) return Server::kTgi;
  if (i.find("ollama") != std::string::npos) return Server::kOllama;
  if (i.find("llama.cpp") != std::string::npos || i.find("llama-cpp") != std::string::npos) return Server::kLlamaCpp;
  if (i.find("sglang") != std::string::npos) return Server::kSglang;
  return Server::kNone;
}

}  // namespace

ServerConfig read_server(const Container& c) {
  ServerConfig cfg;
  std::vector<Arg> w = expand_words(c.argv);
  // Commands between control operators; the first that names a server wins.
  size_t start = 0;
  bool found = false;
  for (size_t i = 0; i <= w.size() && !found; ++i) {
    if (i < w.size() && !is_op(w[i].text)) continue;
    size_t b = start, e = i;
    start = i + 1;
    while (b < e && (w[b].text == "exec" || w[b].text == "env" || (w[b].text.find('=') != std::string::npos &&
                                                                    w[b].text[0] != '-')))
      ++b;
    if (b >= e) continue;
    std::string prog = basename(w[b].text);
    if (prog == "node" || prog == "nodejs")
      read_node_heap(cfg, std::vector<Arg>(w.begin() + long(b), w.begin() + long(e)));
    if (prog == "vllm" && b + 1 < e && w[b + 1].text == "serve") {
      cfg.server = Server::kVllm;
      cfg.at = w[b].at;
      read_flags(cfg, w, b + 2, e, true);
      found = true;
    } else if (prog.rfind("python", 0) == 0 && b + 2 < e && w[b + 1].text == "-m") {
      const std::string& mod = w[b + 2].text;
      if (mod.rfind("vllm.entrypoints", 0) == 0) cfg.server = Server::kVllm;
      else if (mod.rfind("sglang.launch_server", 0) == 0) cfg.server = Server::kSglang;
      else if (mod.rfind("text_generation_server", 0) == 0) cfg.server = Server::kTgi;
      if (cfg.server != Server::kNone) {
        cfg.at = w[b].at;
        read_flags(cfg, w, b + 3, e, false);
        found = true;
      }
    } else if (prog == "llama-server" || (prog == "server" && server_of_image(c.image) == Server::kLlamaCpp)) {
      cfg.server = Server::kLlamaCpp;
      cfg.at = w[b].at;
      read_flags(cfg, w, b + 1, e, false);
      found = true;
    } else if (prog == "text-generation-launcher") {
      cfg.server = Server::kTgi;
      cfg.at = w[b].at;
      read_flags(cfg, w, b + 1, e, false);
      found = true;
    } else if (prog == "ollama" && b + 1 < e && w[b + 1].text == "serve") {
      cfg.server = Server::kOllama;
      cfg.at = w[b].at;
      found = true;
    }
  }
  if (!found && !c.argv.empty() && c.argv.front().text.size() > 0 && c.argv.front().text[0] == '-') {
    // Only flags: the image's entrypoint is the server (Kubernetes args, Compose command).
    cfg.server = server_of_image(c.image);
    if (cfg.server != Server::kNone) {
      cfg.at = c.argv.front().at;
      read_flags(cfg, w, 0, w.size(), cfg.server == Server::kVllm);
    }
  } else if (!found && c.argv.empty()) {
    cfg.server = server_of_image(c.image);
    cfg.at = c.at;
  }
  // Environment: what the runtimes read when no flag says otherwise.
  for (const EnvRow& r : kEnv) {
    if (r.server != cfg.server) continue;
    const Arg* v = c.env_var(r.name);
    if (!v) continue;
    ServerConfig from_env;
    from_env.server = cfg.server;
    set_field(from_env, r.field, r.name, v->text, v->at);
    auto keep = [](auto& dst, auto& src) {
      if (!dst && src) dst = src;
    };
    keep(cfg.model, from_env.model);
    keep(cfg.context, from_env.context);
    keep(cfg.total_context, from_env.total_context);
    keep(cfg.concurrency, from_env.concurrency);
    keep(cfg.gpu_fraction, from_env.gpu_fraction);
    keep(cfg.tp, from_env.tp);
    keep(cfg.gpu_layers, from_env.gpu_layers);
    keep(cfg.max_loaded_models, from_env.max_loaded_models);
    keep(cfg.quantization, from_env.quantization);
    for (auto& p : from_env.problems) cfg.problems.push_back(p);
  }
  if (const Arg* opts = c.env_var("NODE_OPTIONS"); opts && !cfg.node_heap) {
    std::vector<Arg> words;
    for (const std::string& word : shell_words(opts->text)) words.push_back({word, opts->at});
    read_node_heap(cfg, words);
  }
  // llama-server: -c is the whole KV cache, shared by -np slots; a sequence gets c / np.
  if (cfg.server == Server::kLlamaCpp && cfg.total_context && cfg.total_context->value > 0) {
    int64_t np = cfg.concurrency && cfg.concurrency->value > 0 ? cfg.concurrency->value : 1;
    cfg.context = At<int64_t>{cfg.total_context->value / np, cfg.total_context->at};
  }
  return cfg;
}

}  // namespace aimem::check
