// TensorRT-LLM (and the TensorRT engines under it).
//
// The PyTorch-backend executor wraps an OOM while it builds each component in
// a table that names the component and the GPU's free memory before it:
//   [07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed
//       due to insufficient GPU memory.            (or: RuntimeError: Executor creation failed due to ...)
//   The following component could not be created: KV cache
//   Total GPU memory (GiB): 140.06
//   Free GPU memory before component creation attempt (GiB): 108.86
//   Previously created components and free GPU memory before/after creation (GiB):
//   Model: 139.55 / 110.70
//   Sampler: 110.70 / 110.70 ...
// Components: Model, Draft model for speculative decoding (weights); Initial KV cache (temporary for KV cache
// size estimation), KV cache; Additional executor resources [(temporary ...)], Model resources created during
// usage (activations for max_num_tokens); Sampler, Drafter, Guided decoder.
//
// The C++ runtime and TensorRT report a failed device allocation directly:
//   [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory
//       (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)
//   [TensorRT-LLM][ERROR] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)
//   ... Cuda Error in allocate: 2 (out of memory)            (TensorRT inside ONNX Runtime's TensorRT EP)
//   Error Code 2: OutOfMemory (Requested amount of GPU memory (1073741824 bytes) could not be allocated. ...)
//   Error Code 10: Internal Error (Could not find any implementation for node ... due to insufficient workspace. ...)
//     (the builder gives up; its "Skipping tactic N due to insufficient memory" before it are recoveries)
//   [W] [TRT] GPU memory allocation error during getBestTactic: up4_conv2 + up4_relu2   (TensorRT 7's builder; then
//       "Could not find any implementation for node ...": a device allocation failure)
//
// Context: "Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB"
// (gpu_state), "[MemUsageChange] Allocated 26.91 GiB for max tokens in paged KV cache (220480)." / older
// "Allocate 69524783104 bytes for k/v cache." and "Using 132608 tokens in paged KV cache." (kv_capacity),
// "max_seq_len=8224, max_num_requests=64, max_num_tokens=8192, max_batch_size=64", free_gpu_memory_fraction=0.9 /
// kv_cache_free_gpu_mem_fraction (runtime_setting), and "Rank 1 is using GPU 1", which names the device of a
// rank's failure. The batch manager's check that the KV pool holds one whole sequence:
//   [TensorRT-LLM][ERROR] Assertion failed: maxTokensInPagedKvCache must be large enough to process at least 1
//       sequence to completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)
// is the context's KV cache not fitting (kv_cache_context). "[TRT-LLM] [W] insufficient GPU memory for CUDA graphs, capturing fewer batch sizes" is a
// warning the executor recovers from: not a failure.
#include <map>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"failed due to insufficient GPU memory"},
    {"could not be created:", kContext},
    {"Total GPU memory (GiB):", kContext},
    {"Free GPU memory before component creation attempt", kContext},
    {"\\[TensorRT-LLM\\]\\[ERROR\\].*out of memory", kRegex},
    {"Cuda Runtime (out of memory)"},
    {"Cuda Error in allocate: 2 (out of memory)"},
    {"Requested amount of GPU memory \\([0-9]+ bytes\\) could not be allocated", kRegex},
    {"due to insufficient workspace"},
    {"GPU memory allocation error during "},  // TensorRT 7's builder timing a tactic
    {"max tokens in paged kv cache", kContext | kCaseless},
    {"bytes for k/v cache", kContext},
    {"tokens in paged KV cache", kContext},
    {"free_gpu_mem", kContext},  // free_gpu_memory_fraction / kv_cache_free_gpu_mem_fraction
    {"max_num_tokens=", kContext},
    {" is using GPU ", kContext},
    // The KV pool left after the weights holds less than one sequence of the engine's length.
    {"maxTokensInPagedKvCache must be large enough", kCompanion},
};

constexpr uint64_t kTableWindow = 16;   // lines of the executor's table after its first line
constexpr uint64_t kRepeatWindow = 400;

// "Rank 1" / "rank 1" / "[RANK 1]" just after `label`.
std::optional<uint64_t> rank_after(std::string_view s, std::string_view label) {
  auto v = text::iafter(s, label);
  if (!v) return std::nullopt;
  return text::parse_u64(text::trim_left(*v));
}

std::optional<double> value_after(std::string_view s, std::string_view key) {
  auto v = text::after(s, key);
  if (!v) return std::nullopt;
  std::string_view t = text::trim_left(*v);
  if (!t.empty() && (t[0] == '=' || t[0] == ':')) t = text::trim_left(t.substr(1));
  if (!t.empty() && t[0] == '"') t.remove_prefix(1);
  return text::parse_double(t);
}

// What an executor component holds, in the words the diagnosis reads.
std::string component_words(std::string_view c) {
  if (text::starts_with(c, "Initial KV cache")) return "kv cache (the temporary one sized for the estimate)";
  if (text::starts_with(c, "KV cache")) return "kv cache (free_gpu_memory_fraction of the memory left after the weights)";
  if (text::starts_with(c, "Draft model") || c == "Model") return "model load (weights)";
  if (text::starts_with(c, "Additional executor resources") || text::starts_with(c, "Model resources created"))
    return "activation and runtime buffers (grow with max_num_tokens)";
  if (text::starts_with(c, "Sampler")) return "sampler buffers (grow with max_seq_len and the batch)";
  return "executor component";
}

class TensorrtLlm final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_ && line.number > pending_line_ + kTableWindow) flush(out);

    if (auto p = s.find("failed due to insufficient GPU memory"); p != std::string_view::npos) return executor(line, s, p, out);
    if (auto v = text::after(s, "could not be created:"); v && pending_) {
      std::string_view c = text::trim(*v);
      component_ = std::string(c.substr(0, 80));
      fact_.detail = component_words(c) + " - TensorRT-LLM executor component '" + component_ + "'";
      note(line);
      return;
    }
    if (auto v = value_after(s, "Total GPU memory (GiB):"); v && pending_) {
      fact_.total = gib(*v);
      note(line);
      return;
    }
    if (auto v = value_after(s, "Free GPU memory before component creation attempt (GiB):"); v && pending_) {
      fact_.free = gib(*v);
      note(line);
      return flush(out);  // the table's last figure
    }
    if (size_t k = s.find("maxTokensInPagedKvCache must be large enough"); k != std::string_view::npos) {
      if (guards::is_mention(s, k, 24) || repeats_.repeated("kv-one-sequence", line.number)) return;
      Fact f = make_fact(line, FactKind::gpu_oom, Family::tensorrt_llm);
      f.layer = Layer::gpu_vram;
      f.cause = Cause::kv_cache_context;
      // A lean: the pool is short of one sequence because the sequence is
      // long, or because the weights or a low free_gpu_memory_fraction left
      // it small; the assertion does not say which.
      f.strength = 0.7f;
      f.detail = std::string(kKvPoolBelowOneSequence);
      out.add(std::move(f));
      return;
    }
    if (runtime_oom(line, s, out)) return;
    context(line, s, out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  bool pending_ = false;
  uint64_t pending_line_ = 0;
  Fact fact_;
  std::string component_;
  std::map<uint64_t, int> rank_gpu_;  // "Rank 1 is using GPU 1"
  RepeatFilter repeats_{kRepeatWindow};

  static uint64_t gib(double v) { return static_cast<uint64_t>(v * static_cast<double>(units::GiB) + 0.5); }

  void note(const Line& line) {
    pending_line_ = line.number;
    if (fact_.extra.size() < 3) fact_.extra.emplace_back(line.number, text::quote_line(line.text));
  }

  void flush(FactSink& out) {
    if (!pending_) return;
    pending_ = false;
    // Every rank prints its table; one failure per component.
    if (!repeats_.repeated("executor:" + component_, fact_.where.line)) out.add(std::move(fact_));
    fact_ = Fact{};
    component_.clear();
  }

  void executor(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 37)) return;
    // The logger's line and the RuntimeError that repeats it open one table.
    if (pending_ && line.number <= pending_line_ + kTableWindow) return;
    flush(out);
    fact_ = make_fact(line, FactKind::gpu_oom, Family::tensorrt_llm);
    fact_.layer = Layer::gpu_vram;
    fact_.strength = 0.9f;
    fact_.detail = "TensorRT-LLM executor creation";
    auto rank = rank_after(s, "on rank ");
    if (!rank) rank = rank_after(s, "[RANK ");
    if (rank)
      if (auto g = rank_gpu_.find(*rank); g != rank_gpu_.end()) fact_.gpu = g->second;
    pending_ = true;
    pending_line_ = line.number;
  }

  bool runtime_oom(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("out of memory");
    bool trt_llm = text::contains(s, "[TensorRT-LLM][ERROR]") && p != std::string_view::npos;
    bool trt = text::contains(s, "Cuda Runtime (out of memory)") || text::contains(s, "Cuda Error in allocate: 2 (out of memory)");
    size_t req = s.find("Requested amount of GPU memory (");
    // The builder giving up: "Error Code 10: Internal Error (Could not find any implementation for
    // node /model.22/Concat_3 due to insufficient workspace. ...)": every tactic needed more scratch
    // than the workspace or the device could give (the tactics skipped before it were recoveries).
    // TensorRT 7's builder: "[W] [TRT] GPU memory allocation error during getBestTactic: <node>", then it
    // finds no implementation for the node: the device had no room for the tactic's buffers.
    if (!trt_llm && req == std::string_view::npos) {
      struct Builder {
        std::string_view words, key, detail;
      };
      static constexpr Builder kBuilder[] = {
          {"GPU memory allocation error during ", "tactic-alloc", "TensorRT's builder could not allocate GPU memory for a tactic"},
          {"due to insufficient workspace", "workspace", "TensorRT's builder found no tactic that fits its workspace"}};
      for (const Builder& b : kBuilder) {
        size_t at = s.find(b.words);
        if (at == std::string_view::npos || (trt && b.key == "workspace")) continue;
        if (guards::is_mention(s, at, b.words.size()) || repeats_.repeated(b.key, line.number)) return true;
        Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
        f.layer = Layer::gpu_vram;
        f.strength = 0.8f;
        f.detail = std::string(b.detail);
        out.add(std::move(f));
        return true;
      }
    }
    if (!trt_llm && !trt && req == std::string_view::npos) return false;
    if (p == std::string_view::npos) p = req;
    if (guards::is_mention(s, p, 13)) return true;
    // "[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: CUDA out of memory. Tried to
    // allocate ...": PyTorch's own message, which the PyTorch recognizer reads with its figures.
    if (text::contains(s, "CUDA out of memory")) return true;
    if (repeats_.repeated("runtime-oom", line.number)) return true;
    Fact f = make_fact(line, FactKind::gpu_oom, trt_llm ? Family::tensorrt_llm : Family::cuda);
    f.layer = Layer::gpu_vram;
    f.strength = 0.85f;
    f.detail = trt_llm ? "TensorRT-LLM runtime buffer allocation" : "TensorRT engine allocation";
    if (text::contains(s, "kv_cache") || text::contains(s, "KVCache")) f.detail = "kv cache allocation (TensorRT-LLM)";
    if (req != std::string_view::npos) f.requested = text::parse_u64(s.substr(req + 32));
    out.add(std::move(f));
    return true;
  }

  void context(const Line& line, std::string_view s, FactSink& out) {
    // "[TensorRT-LLM][INFO] Rank 1 is using GPU 1"
    if (auto v = text::after(s, " is using GPU ")) {
      auto rank = rank_after(s, "Rank ");
      auto gpu = text::parse_u64(*v);
      if (rank && gpu && *gpu < 1024 && rank_gpu_.size() < 1024) rank_gpu_[*rank] = static_cast<int>(*gpu);
      return;
    }
    // "Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB"
    if (text::icontains(s, "when calculating max tokens in paged kv cache")) {
      Fact f = make_fact(line, FactKind::gpu_state, Family::tensorrt_llm);
      if (auto v = text::after(s, "total:")) f.total = units::parse_log_size(*v);
      if (auto v = text::after(s, "available:")) f.free = units::parse_log_size(*v);
      if (!f.total && !f.free) return;
      f.detail = "TensorRT-LLM before sizing the KV cache";
      return out.add(std::move(f));
    }
    // "[MemUsageChange] Allocated 26.91 GiB for max tokens in paged KV cache (220480)."
    if (auto v = text::after(s, "Allocated "); v && text::icontains(s, "for max tokens in paged kv cache")) {
      Fact f = make_fact(line, FactKind::kv_capacity, Family::tensorrt_llm);
      f.kv_bytes = units::parse_log_size(*v);
      size_t open = s.rfind('(');
      if (open != std::string_view::npos) f.kv_tokens = text::parse_u64(s.substr(open + 1));
      f.detail = "TensorRT-LLM paged KV cache";
      return out.add(std::move(f));
    }
    // "Allocate 69524783104 bytes for k/v cache." / "Using 132608 tokens in paged KV cache."
    if (auto v = text::after(s, "Allocate "); v && text::contains(s, "bytes for k/v cache")) {
      Fact f = make_fact(line, FactKind::kv_capacity, Family::tensorrt_llm);
      f.kv_bytes = text::parse_u64(*v);
      if (!f.kv_bytes) return;
      f.detail = "TensorRT-LLM KV cache";
      return out.add(std::move(f));
    }
    if (auto v = text::after(s, "Using "); v && text::contains(s, "tokens in paged KV cache")) {
      Fact f = make_fact(line, FactKind::kv_capacity, Family::tensorrt_llm);
      f.kv_tokens = text::parse_u64(*v);
      if (!f.kv_tokens) return;
      f.detail = "TensorRT-LLM paged KV cache tokens";
      return out.add(std::move(f));
    }
    settings(line, s, out);
  }

  // "max_seq_len=8224, max_num_requests=64, max_num_tokens=8192, max_batch_size=64", free_gpu_memory_fraction=0.9
  void settings(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::runtime_setting, Family::tensorrt_llm);
    std::string names;
    auto note_name = [&](std::string_view n) {
      if (!names.empty()) names += ',';
      names += n;
    };
    auto count = [&](std::string_view key) -> std::optional<uint64_t> {
      auto v = value_after(s, key);
      if (!v || *v < 1 || *v > 1e12) return std::nullopt;
      return static_cast<uint64_t>(*v);
    };
    if (auto v = count("max_seq_len=")) f.max_model_len = v, note_name("max_seq_len");
    if (auto v = count("max_num_tokens=")) f.batch_tokens = v, note_name("max_num_tokens");
    auto seqs = count("max_num_requests=");
    if (!seqs) seqs = count("max_batch_size=");
    if (seqs) f.sequences = seqs, note_name("max_batch_size");
    for (std::string_view key : {"free_gpu_memory_fraction", "kv_cache_free_gpu_mem_fraction"}) {
      auto v = value_after(s, key);
      if (!v || *v <= 0 || *v > 1.0) continue;
      f.ratio = v;
      note_name("free_gpu_memory_fraction");
      break;
    }
    if (names.empty()) return;
    f.detail = names;
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kTensorrtLlmEntry{
    "tensorrt_llm", Family::tensorrt_llm, kPatterns, [] { return std::unique_ptr<Recognizer>(new TensorrtLlm); }};

}  // namespace aimem
