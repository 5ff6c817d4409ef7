// vLLM start-up budget errors and the figures its start-up log prints (the
// messages of vllm/worker/worker.py and vllm/v1/core/kv_cache_utils.py).
//
// Failures:
//   V0  ValueError: The model's max seq len (29000) is larger than the maximum number of tokens that can be stored
//       in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` ...
//   V1  ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is
//       needed, which is larger than the available KV cache memory (9.50 GiB). Based on the available memory, the
//       estimated maximum model length is 77808. Try ...
//       ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` ...
//       Available KV cache memory: -0.3 GiB     /  ... the rest of the memory reserved for KV Cache is -1.2GiB.
//       ValueError: Free memory on device (6.9/8.0 GiB) on startup is less than desired GPU memory utilization
//       (0.9, 7.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.
//       ValueError: Available memory on device cuda:0 (31.1/124.0 GiB) is below required GPU memory
//       utilization (0.92, 114.08 GiB). ...   (the same check as some builds word it, 2026)
//       Worker VllmWorkerProcess pid 4711 died, exit code: -9
//   CPU backend (vllm/v1/worker/cpu_worker.py, 2025-):
//       ValueError: Available memory on node 0 (12.46/125.61 GiB) on kv cache allocation is less than requested
//       memory for kv (112.15/115.56 GiB). Reduce CPU memory used by other processes.
//       (the KV cache lives in host RAM: a host allocation failure of the KV cache's size)
// Context:
//   Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB ... kv_cache_size=2.89GiB
//       gpu_memory_utilization=0.90
//   the current vLLM instance can use total_gpu_memory (79.22GiB) x gpu_memory_utilization (0.90) = 71.29GiB
//   Available KV cache memory: 51.72 GiB    # GPU blocks: 1478, # CPU blocks: 2048
//   GPU KV cache size: 93,760 tokens        Maximum concurrency for 29000 tokens per request: 0.82x
//   engine arguments in any of their spellings: max_model_len=32768 (Namespace / config), 'max_model_len': 32768
//   (non-default args), --max-model-len 32k (command line); likewise max_seq_len, max_num_seqs,
//   max_num_batched_tokens, gpu_memory_utilization.
//
// The V1 "KV cache is needed" error with a positive available figure is the
// same failure as V0's max-seq-len error (one sequence of max_model_len does
// not fit, and vLLM says which length would): detail "max_model_len". With
// nothing available it is "no cache blocks".
//
// "Free memory on device ... less than desired GPU memory utilization" is a
// gpu_oom: the engine asked for a fraction of the whole GPU at start and the
// memory in use before it allocated anything (total - free) belongs to other
// processes (plus its own CUDA context). The message itself names other
// processes as the reason, so the fact carries cause other_process.
//
// The engine's periodic stats line (V0 "Running: 1 reqs, Swapped: 0 reqs,
// Pending: 3 reqs, GPU KV cache usage: 100.0%"; V1 "Running: 0 reqs,
// Waiting: 14 reqs, GPU KV cache usage: 99.6%"): requests waiting while the
// KV cache stays full and nothing generates (no request running, or under
// kStallTokens tokens/s), in the last kStallLines stats lines of the input,
// is a service stalled on its KV cache: a failure, though nothing crashed.
// So is a cache held full by running requests while neither prompt nor
// generation throughput moves (a request longer than the cache holds).
// The cache filled while no request ran and none waited (blocks held by
// nothing) is the pool leaking; otherwise the sequences in it outgrew it.
// Preemptions under load that keep generating are not this: the cache does
// its job (healthy).
//
// A healthy start-up (concurrency >= 1x, no error) gives context only; a
// concurrency below 1x is context too: vLLM raises the error that is the
// failure right after it.
#include <fmt/format.h>
#include <optional>
#include <string>
#include <utility>

#include "core/engine_lines.h"
#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"
#include "recognize/process_name.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"that can be stored in KV cache", kCompanion},
    {"No available memory for the cache blocks"},
    {"KV cache is needed, which is larger than"},
    {"KV cache) is needed, which is larger than"},  // the same, as pasted with its parenthesis closed early
    {"KV cache memory:", kCompanion},
    {"reserved for KV Cache is", kCompanion},
    {"on startup is less than desired GPU memory utilization"},
    {"is below required GPU memory utilization", kCompanion},  // the same check as some builds word it (ROCm's); no gate word
    {"on kv cache allocation is less than requested memory for kv"},
    {"Memory profiling results:", kContext},
    {"Loading model weights took ", kContext},
    {"Model loading took ", kContext},
    {"# GPU blocks:", kContext},
    {"GPU KV cache size:", kContext},
    {"Maximum concurrency for", kContext},
    {"GPU KV cache usage: ", kContext},
    {"died, exit code:"},
    {"max_model_len", kContext},
    {"max-model-len", kContext},
    {"max_seq_len=", kContext},
    {"gpu_memory_utilization", kContext},
    {"gpu-memory-utilization", kContext},
    {"max_num_seqs", kContext},
    {"max-num-seqs", kContext},
    {"max_num_batched_tokens", kContext},
    {"max-num-batched-tokens", kContext},
    {"tensor_parallel_size", kContext},
    {"tensor-parallel-size", kContext},
};

constexpr uint64_t kRepeatWindow = 300;
constexpr double kFullKv = 97.0;      // percent
constexpr double kStallTokens = 5.0;  // tokens/s
constexpr int kStallLines = 2;
constexpr uint64_t kForeignNonTorch = 3 * units::GiB;

std::optional<uint64_t> size_at(std::string_view s, std::string_view label) {
  auto v = text::after(s, label);
  if (!v) return std::nullopt;
  return units::parse_log_size(*v);
}

// A size that may be negative ("-0.3 GiB"): the value and whether it was negative.
std::optional<std::pair<uint64_t, bool>> signed_size_at(std::string_view s, std::string_view label) {
  auto v = text::after(s, label);
  if (!v) return std::nullopt;
  std::string_view t = text::trim_left(*v);
  bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  auto n = units::parse_log_size(t);
  if (!n) return std::nullopt;
  return std::make_pair(*n, negative && *n > 0);
}

// "(29000)" right after `label`.
std::optional<uint64_t> paren_number_at(std::string_view s, std::string_view label) {
  auto v = text::after(s, label);
  if (!v || v->empty() || (*v)[0] != '(') return std::nullopt;
  return text::parse_grouped_u64(v->substr(1));
}

// The value of an engine argument written as key=V, 'key': V, "key": V,
// --key V or --key=V. Integers may carry vLLM's k/K/m/M suffixes.
std::optional<double> arg_value(std::string_view s, std::string_view key) {
  size_t p = 0;
  while ((p = s.find(key, p)) != std::string_view::npos) {
    size_t end = p + key.size();
    p = end;
    // The key must end there: not "max_model_len_foo".
    if (end < s.size() && (s[end] == '_' || s[end] == '-' || (s[end] >= 'a' && s[end] <= 'z'))) continue;
    std::string_view rest = s.substr(end);
    if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"')) rest.remove_prefix(1);
    if (rest.empty() || (rest[0] != '=' && rest[0] != ':' && rest[0] != ' ')) continue;
    rest.remove_prefix(1);
    rest = text::trim_left(rest);
    if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"' || rest[0] == '(')) rest.remove_prefix(1);
    std::string_view after;
    auto v = text::parse_double(rest, &after);
    if (!v || *v < 0) continue;
    double x = *v;
    if (!after.empty()) {
      char c = after[0];
      if (c == 'k') x *= 1000.0;
      else if (c == 'K') x *= 1024.0;
      else if (c == 'm') x *= 1e6;
      else if (c == 'M') x *= 1048576.0;
    }
    return x;
  }
  return std::nullopt;
}

class Vllm final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "that can be stored in KV cache")) return max_seq_len_v0(line, s, out);
    if (text::contains(s, "KV cache is needed, which is larger than") || text::contains(s, "KV cache) is needed, which is larger than"))
      return kv_needed_v1(line, s, out);
    if (auto p = s.find("No available memory for the cache blocks"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 40) || repeated(line)) return;
      Fact f = failure(line, FactKind::kv_cache_shortage);
      f.detail = "no cache blocks";
      return out.add(std::move(f));
    }
    if (text::contains(s, "on startup is less than desired GPU memory utilization") ||
        text::contains(s, "is below required GPU memory utilization"))
      return startup_free(line, s, out);
    if (text::contains(s, "on kv cache allocation is less than requested memory for kv")) return cpu_kv(line, s, out);
    // "Loading model weights took 14.9888 GB" (V0), "Model loading took 0.2389 GB and 0.97 seconds" (V1):
    // the weights' share of the GPU, against which a negative KV budget is judged.
    if (auto w = engine_lines::vllm_weights(s)) {
      Fact f = make_fact(line, FactKind::memory_usage, Family::vllm);
      f.usage = w;
      f.detail = "model weights";
      return out.add(std::move(f));
    }
    if (auto v = engine_lines::vllm_kv_available(s)) return kv_memory(line, {v->bytes, v->negative}, out);
    if (text::contains(s, "Memory profiling results:")) return profiling(line, s, out);
    if (auto n = engine_lines::vllm_gpu_blocks(s)) {
      Fact f = make_fact(line, FactKind::kv_capacity, Family::vllm);
      f.count = n;
      f.detail = "GPU blocks";
      return out.add(std::move(f));
    }
    if (auto n = engine_lines::vllm_kv_tokens(s)) {
      Fact f = make_fact(line, FactKind::kv_capacity, Family::vllm);
      f.kv_tokens = n;
      f.detail = "GPU KV cache tokens";
      return out.add(std::move(f));
    }
    if (auto v = text::after(s, "Maximum concurrency for ")) return concurrency(line, *v, out);
    if (text::contains(s, "GPU KV cache usage: ")) return stats(line, s);
    if (auto p = s.find("died, exit code:"); p != std::string_view::npos) return worker_died(line, s, p, out);
    engine_args(line, s, out);
  }

 private:
  FactKind last_kind_ = FactKind::platform;
  uint64_t last_line_ = 0;
  bool have_last_ = false;

  Fact failure(const Line& line, FactKind kind) {
    Fact f = make_fact(line, kind, Family::vllm);
    f.layer = Layer::gpu_vram;
    f.strength = 0.95f;
    have_last_ = true;
    last_kind_ = kind;
    last_line_ = line.number;
    return f;
  }

  // The stats lines: how many in a row at the end were stalled, the first of
  // them, and whether the cache was ever mostly full with nothing running or waiting.
  int stalled_ = 0;
  bool held_idle_ = false;
  std::optional<Fact> stall_;

  void stats(const Line& line, std::string_view s) {
    auto at = [&](std::string_view key) -> std::optional<double> {
      auto v = text::after(s, key);
      return v ? text::parse_double(*v) : std::nullopt;
    };
    auto kv = at("GPU KV cache usage: ");
    auto running = at("Running: ");
    auto waiting = at("Waiting: ");
    if (!waiting) waiting = at("Pending: ");
    auto gen = at("Avg generation throughput: ");
    auto prompt = at("Avg prompt throughput: ");
    if (!kv || !running || !waiting) return;
    if (*running == 0 && *waiting == 0 && *kv >= 50.0) held_idle_ = true;
    // Nothing waits, but the request that runs moves neither its prompt nor
    // its generation while it holds the whole cache: it does not fit in it.
    const bool stuck = *running > 0 && gen && *gen == 0 && prompt && *prompt == 0;
    const bool stalled = *kv >= kFullKv && ((*waiting > 0 && (*running == 0 || (gen && *gen < kStallTokens))) || stuck);
    if (!stalled) {
      stalled_ = 0;
      stall_.reset();
      return;
    }
    if (stalled_++ == 0) {
      stall_ = make_fact(line, FactKind::kv_cache_shortage, Family::vllm);
      stall_->layer = Layer::gpu_vram;
      stall_->strength = 0.7f;
    }
    stall_->detail = std::string(kKvStalled) + fmt::format("the GPU KV cache at {:g}% with {} requests waiting and {} running{}", *kv,
                                                          *waiting, *running, stuck ? ", none of them moving" : "");
  }

 public:
  void finish(FactSink& out) override {
    if (stalled_ < kStallLines || !stall_) return;
    if (held_idle_) {
      stall_->cause = Cause::leak_or_accumulation;
      stall_->detail += ", after the cache filled while no request ran: blocks held by nothing";
    }
    out.add(std::move(*stall_));
    stall_.reset();
  }

 private:
  // vLLM logs its start-up error from the worker and again from the engine
  // or API server; one failure.
  bool repeated(const Line& line) const {
    return have_last_ && last_kind_ == FactKind::kv_cache_shortage && line.number <= last_line_ + kRepeatWindow;
  }

  void max_seq_len_v0(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("max seq len");
    if (p == std::string_view::npos || guards::is_mention(s, p, 11) || repeated(line)) return;
    Fact f = failure(line, FactKind::kv_cache_shortage);
    f.detail = "max_model_len";
    f.max_model_len = paren_number_at(s, "max seq len ");
    f.kv_tokens = paren_number_at(s, "stored in KV cache ");
    out.add(std::move(f));
  }

  void kv_needed_v1(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("KV cache is needed");
    if (p == std::string_view::npos) p = s.find("KV cache) is needed");
    if (guards::is_mention(s, p, 18) || repeated(line)) return;
    Fact f = failure(line, FactKind::kv_cache_shortage);
    f.max_model_len = paren_number_at(s, "max seq len ");
    // "(16.00 GiB KV cache is needed": the size just after the last '(' before p.
    size_t open = s.rfind('(', p);
    if (open != std::string_view::npos) f.requested = units::parse_log_size(s.substr(open + 1));
    auto avail = signed_size_at(s, "available KV cache memory (");
    if (avail && !avail->second) f.kv_bytes = avail->first;
    if (auto v = text::after(s, "estimated maximum model length is ")) f.kv_tokens = text::parse_grouped_u64(*v);
    f.detail = (avail && !avail->second && avail->first > 0) ? "max_model_len" : "no cache blocks";
    out.add(std::move(f));
  }

  void kv_memory(const Line& line, std::pair<uint64_t, bool> v, FactSink& out) {
    if (v.second || v.first == 0) {
      if (repeated(line)) return;
      Fact f = failure(line, FactKind::kv_cache_shortage);
      f.detail = v.second ? "negative KV cache memory" : "no cache blocks";
      if (v.second) f.requested = v.first;  // the deficit
      out.add(std::move(f));
      return;
    }
    Fact f = make_fact(line, FactKind::kv_capacity, Family::vllm);
    f.kv_bytes = v.first;
    f.detail = "KV cache memory";
    out.add(std::move(f));
  }

  void startup_free(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("on startup is less than"), len = 23;
    if (p == std::string_view::npos) p = s.find("is below required"), len = 17;
    if (guards::is_mention(s, p, len)) return;
    Fact f = failure(line, FactKind::gpu_oom);
    f.strength = 0.9f;
    f.cause = Cause::other_process;
    f.detail = "free memory at start below the gpu_memory_utilization budget";
    // "(6.9/8.0 GiB)": free/total share the unit. "Free memory on device (",
    // "Available memory on device cuda:0 (".
    const size_t on = s.find("memory on device");
    const size_t open = on == std::string_view::npos ? on : s.find('(', on);
    if (auto ft = open == std::string_view::npos || open > p ? std::nullopt : pair_after(s.substr(open), "(")) {
      f.free = ft->first;
      f.total = ft->second;
      if (*f.total > *f.free) f.other_processes = *f.total - *f.free;
    }
    // "(0.9, 7.2 GiB)"
    if (auto v = text::after(s, "GPU memory utilization (")) {
      std::string_view rest;
      if (auto r = text::parse_double(*v, &rest); r && *r > 0 && *r <= 1.0) f.ratio = r;
      if (text::starts_with(rest, ", ")) f.requested = units::parse_log_size(rest.substr(2));
    }
    out.add(std::move(f));
  }

  // "(12.46/125.61 GiB)" after lead: the first figure in the second's unit.
  static std::optional<std::pair<uint64_t, uint64_t>> pair_after(std::string_view s, std::string_view lead) {
    auto v = text::after(s, lead);
    if (!v) return std::nullopt;
    std::string_view rest;
    auto first = text::parse_double(*v, &rest);
    if (!first || rest.empty() || rest[0] != '/') return std::nullopt;
    auto whole = units::parse_log_size(rest.substr(1));
    auto whole_n = text::parse_double(rest.substr(1));
    if (!whole || !whole_n || *whole_n <= 0) return std::nullopt;
    return std::pair{static_cast<uint64_t>(static_cast<double>(*whole) * (*first / *whole_n)), *whole};
  }

  // The CPU backend's KV cache, in host RAM, larger than what the node has available.
  void cpu_kv(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("on kv cache allocation");
    if (guards::is_mention(s, p, 22) || repeated(line)) return;
    Fact f = failure(line, FactKind::host_alloc_failure);
    f.layer = Layer::host_ram;
    f.strength = 0.9f;
    f.cause = Cause::kv_cache_context;
    f.detail = "vLLM's CPU KV cache is larger than the node's available memory";
    if (size_t open = s.find('(', s.find("Available memory on node")); open != std::string_view::npos)
      if (auto a = pair_after(s.substr(open), "(")) {
        f.free = a->first;
        f.total = a->second;
      }
    if (auto r = pair_after(s, "requested memory for kv (")) f.requested = r->first;
    out.add(std::move(f));
  }

  void profiling(const Line& line, std::string_view s, FactSink& out) {
    if (auto kv = engine_lines::size_of_key(s, "kv_cache_size=")) {
      if (kv->negative || kv->bytes == 0) {
        kv_memory(line, {kv->bytes, kv->negative}, out);
      } else {
        Fact f = make_fact(line, FactKind::kv_capacity, Family::vllm);
        f.kv_bytes = kv->bytes;
        f.detail = "KV cache memory";
        out.add(std::move(f));
      }
    }
    if (auto total = size_at(s, "total_gpu_memory=")) {
      Fact g = make_fact(line, FactKind::gpu_state, Family::vllm);
      g.total = total;
      g.detail = "vLLM memory profile";
      // Memory outside PyTorch beyond what CUDA contexts and NCCL buffers take
      // is another process's (a second engine, an Ollama on the same GPU).
      if (auto nt = size_at(s, "non_torch_memory="); nt && *nt >= kForeignNonTorch) {
        g.other_processes = nt;
        g.detail = "vLLM memory profile: non_torch_memory=" + units::format_bytes(*nt);
      }
      out.add(std::move(g));
    }
    engine_args(line, s, out);
  }

  void concurrency(const Line& line, std::string_view v, FactSink& out) {
    // "29000 tokens per request: 0.82x"
    std::string_view rest;
    auto tokens = text::parse_grouped_u64(v, &rest);
    auto colon = text::after(rest, "per request:");
    if (!colon) return;
    std::string_view xrest;
    auto x = text::parse_double(text::trim_left(*colon), &xrest);
    if (!x || !text::starts_with(xrest, "x")) return;
    Fact f = make_fact(line, FactKind::kv_capacity, Family::vllm);
    f.ratio = x;
    f.max_model_len = tokens;
    f.detail = "maximum concurrency";
    out.add(std::move(f));
  }

  void worker_died(const Line& line, std::string_view s, size_t p, FactSink& out) {
    auto code = text::parse_i64(text::trim_left(s.substr(p + 16)));
    if (!code || *code == 0) return;
    bool sigkill = *code == -9 || *code == 137;
    Fact f = make_fact(line, sigkill ? FactKind::process_killed : FactKind::exit_status, Family::vllm);
    if (*code < 0) f.signal = static_cast<int>(-*code);
    else f.exit_code = static_cast<int>(*code);
    if (*code > 128 && *code < 160) f.signal = static_cast<int>(*code - 128);
    if (auto pid = text::after(s, " pid ")) {
      if (auto n = text::parse_i64(*pid); n && *n > 0) f.pid = n;
    }
    if (auto w = text::after(s, "Worker ")) f.process = std::string(text::first_word(*w).substr(0, 64));
    f.layer = Layer::unknown;
    f.strength = 0.5f;
    f.detail = "vLLM worker died";
    out.add(std::move(f));
  }

  void engine_args(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::runtime_setting, Family::vllm);
    std::string names;
    auto note = [&](std::string_view n) {
      if (!names.empty()) names += ',';
      names += n;
    };
    auto integer = [](std::optional<double> v) -> std::optional<uint64_t> {
      if (!v || *v < 1 || *v > 1e12) return std::nullopt;
      return static_cast<uint64_t>(*v);
    };
    auto len = integer(arg_value(s, "max_model_len"));
    if (!len) len = integer(arg_value(s, "--max-model-len"));
    if (!len) len = integer(arg_value(s, "max_seq_len"));
    if (len) f.max_model_len = len, note("max_model_len");
    auto seqs = integer(arg_value(s, "max_num_seqs"));
    if (!seqs) seqs = integer(arg_value(s, "--max-num-seqs"));
    if (seqs) f.sequences = seqs, note("max_num_seqs");
    auto batched = integer(arg_value(s, "max_num_batched_tokens"));
    if (!batched) batched = integer(arg_value(s, "--max-num-batched-tokens"));
    if (batched) f.batch_tokens = batched, note("max_num_batched_tokens");
    auto util = arg_value(s, "gpu_memory_utilization");
    if (!util) util = arg_value(s, "--gpu-memory-utilization");
    if (util && *util > 0 && *util <= 1.0) f.ratio = util, note("gpu_memory_utilization");
    // The model's tensor-parallel shards, one worker process each: a
    // separate fact (count = the shards), so a process table's copies of
    // the worker can be told from copies of the whole engine.
    auto tp = integer(arg_value(s, "tensor_parallel_size"));
    if (!tp) tp = integer(arg_value(s, "--tensor-parallel-size"));
    if (tp && *tp > 1 && *tp <= 1024) {
      Fact t = make_fact(line, FactKind::runtime_setting, Family::vllm);
      t.detail = std::string(process_name::kTensorParallel);
      t.count = tp;
      out.add(std::move(t));
    }
    if (names.empty()) return;
    f.detail = names;
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kVllmEntry{"vllm", Family::vllm, kPatterns, [] { return std::unique_ptr<Recognizer>(new Vllm); }};

}  // namespace aimem
