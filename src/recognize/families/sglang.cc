// SGLang start-up: the KV pool is what a static fraction of the GPU leaves
// once the weights are in.
//
//   [2025-07-02 07:41:58 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16,
//       avail mem=21.73 GB, mem usage=166.59 GB.
//   [2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the
//       profiled value instead.
//   RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.
//   (newer)  ... --mem-fraction-static. Current value: mem_fraction_static=0.85
//   (0.1.x)  RuntimeError: Not enought memory. Please try to increase --mem-fraction-static.
//
// The profiler computes rest = free after loading - total x (1 - mem_fraction_static)
// and turns it into tokens. Zero or negative: the weights (and the reserve
// SGLang keeps for activations and CUDA graphs) leave no room for a single KV
// token. The negative profile comes first and names the shortfall; the
// RuntimeError that follows is the same failure. Every TP/DP rank prints both.
// A positive profile below --max-total-tokens is a clamp, not a failure.
//
// Serving: the scheduler cannot fit the next batch's tokens in the KV token
// pool (schedule_batch.py's alloc_token_slots), and raises:
//   RuntimeError: Prefill out of memory. Try to lower your batch size.
//   Prefill out of memory. This should never happen.   (the router of 2024's v0.1)
//   Try to allocate 8192 tokens.
//   (also "Decode out of memory. ...")
// The pool was sized at start-up; the requests running at once hold it: the
// batch, not one sequence's context (gpu_oom, cause concurrency_batch) --
// unless the last batch line shows only a few requests running
// ("Decode batch, #running-req: 6, #token: 1984, token usage: 0.97"): then
// the pool is too small for their context (kv_cache_context).
//
// The scheduler's idle self-check: with nothing running, the pool's free and
// evictable tokens must add up to its size; a shortfall is token slots that
// finished requests never gave back (scheduler.py's check_memory), and it
// raises:
//   ValueError: token_to_kv_pool_allocator memory leak detected! self.max_total_num_tokens=412870,
//       available_size=1216, evictable_size=411520, protected_size=0
// (older: "token_to_kv_pool memory leak detected!") -> kv_cache_shortage, cause leak_or_accumulation.
//
// A request refused for its length under a pool smaller than the context:
//   max_total_num_tokens=2113, ..., context_len=65536, available_gpu_mem=39.66 GB
//   Error in request: Input length (4096 tokens) exceeds the maximum allowed length (2107 tokens). ...
// -> kv_cache_shortage, cause kv_cache_context (the pool the GPU had room for, not the model's limit).
//
// Context:
//   KV Cache is allocated. #tokens: 46045, K size: 2.99 GB, V size: 2.99 GB
//       (newer: "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 171008, K 5.22 GB, V 5.22 GB")
//   max_total_num_tokens=171008, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2049,
//       context_len=169000, available_gpu_mem=8.27 GB
//   server_args=ServerArgs(..., mem_fraction_static=0.88, max_running_requests=None, max_total_tokens=None,
//       chunked_prefill_size=8192, ..., context_length=None, ...), and the same as flags (--mem-fraction-static 0.85).
// SGLang's "GB" are GiB (it divides by 1 << 30).
#include <cctype>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/engine_lines.h"
#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"is larger than the profiled value"},
    {"(Prefill|Decode) out of memory\\.", kRegex},
    {"#running-req: ", kContext},
    {"kv_pool", kContext},  // "token_to_kv_pool_allocator memory leak detected!": read with its companion words below
    {"increase --mem-fraction-static", kCompanion},  // "Not enough memory." / the 0.1.x typo "Not enought memory."
    {"Load weight end", kContext},
    {"KV Cache is allocated", kContext},
    {"max_total_num_tokens=", kContext},
    {"mem_fraction_static=", kContext},
    {"--mem-fraction-static ", kContext},
    {"--mem-fraction-static=", kContext},
    {"exceeds the maximum allowed length \\(", kRegex | kCompanion},
};

constexpr uint64_t kRepeatWindow = 400;  // every rank prints the same start-up failure
constexpr uint64_t kFewRequests = 8;     // running requests too few to be "the batch"

using engine_lines::count_after;
using engine_lines::number_after;

class Sglang final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto p = s.find("is larger than the profiled value"); p != std::string_view::npos) return profiled(line, s, p, out);
    if (auto p = s.find("increase --mem-fraction-static"); p != std::string_view::npos && not_enough(s.substr(0, p)))
      return no_room(line, s, p, out);
    if (auto p = s.find(" out of memory."); p != std::string_view::npos) return batch_oom(line, s, p, out);
    if (auto p = s.find("memory leak detected!"); p != std::string_view::npos && text::contains(s.substr(0, p), "kv_pool"))
      return pool_leak(line, s, p, out);
    if (auto r = text::after(s, "#running-req: ")) {
      running_ = text::parse_u64(*r);
      return;
    }
    if (auto p = s.find("Load weight end"); p != std::string_view::npos) return weights_loaded(line, s.substr(p), out);
    if (auto p = s.find("KV Cache is allocated"); p != std::string_view::npos) return kv_allocated(line, s.substr(p), out);
    if (auto p = s.find("max_total_num_tokens="); p != std::string_view::npos) return pool(line, s.substr(p), out);
    if (auto p = s.find("exceeds the maximum allowed length ("); p != std::string_view::npos) return refused(line, s, p, out);
    settings(line, s, out);
  }

 private:
  bool have_failure_ = false;
  std::optional<uint64_t> running_;  // "#running-req: N" of the last batch line
  uint64_t failure_line_ = 0;

  static bool not_enough(std::string_view before) {
    return text::icontains(before, "not enough memory") || text::icontains(before, "not enought memory");
  }

  bool repeated(const Line& line) const { return have_failure_ && line.number <= failure_line_ + kRepeatWindow; }

  Fact failure(const Line& line) {
    Fact f = make_fact(line, FactKind::kv_cache_shortage, Family::sglang);
    f.layer = Layer::gpu_vram;
    f.strength = 0.95f;
    have_failure_ = true;
    failure_line_ = line.number;
    return f;
  }

  // The idle self-check's shortfall: token slots never given back.
  void pool_leak(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 21) || repeated(line)) return;
    Fact f = failure(line);
    f.strength = 0.85f;
    f.cause = Cause::leak_or_accumulation;
    auto size = count_after(s, "max_total_num_tokens");
    auto avail = count_after(s, "available_size"), evictable = count_after(s, "evictable_size");
    f.detail = "SGLang's KV token pool leaked: with nothing running its free and evictable tokens fall short of its size";
    if (size && avail && evictable && *avail + *evictable < *size)
      f.detail += " (" + std::to_string(*size - *avail - *evictable) + " of " + std::to_string(*size) + " token slots never given back)";
    out.add(std::move(f));
  }

  // "max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead."
  void profiled(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 33)) return;
    std::string_view rest = text::trim_left(s.substr(p + 33));
    bool negative = !rest.empty() && rest[0] == '-';
    if (negative) rest.remove_prefix(1);
    auto profiled = text::parse_u64(rest);
    if (!profiled) return;
    auto wanted = count_after(s.substr(0, p), "max_total_tokens");
    if (negative || *profiled == 0) {
      if (repeated(line)) return;
      Fact f = failure(line);
      f.detail = negative ? "negative KV budget: SGLang profiled -" + std::to_string(*profiled) +
                                " tokens of KV cache after the weights (mem_fraction_static leaves no room)"
                          : "no cache blocks: SGLang profiled 0 tokens of KV cache after the weights";
      return out.add(std::move(f));
    }
    // A clamp: the profiled pool is smaller than --max-total-tokens asked for.
    Fact f = make_fact(line, FactKind::kv_capacity, Family::sglang);
    f.kv_tokens = profiled;
    f.detail = "SGLang profiled KV tokens" + (wanted ? " (below max_total_tokens " + std::to_string(*wanted) + ")" : std::string());
    out.add(std::move(f));
  }

  // "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.85"
  void no_room(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 30)) return;
    auto fraction = number_after(s.substr(p), "mem_fraction_static");
    if (fraction && (*fraction <= 0 || *fraction > 1)) fraction.reset();
    if (repeated(line)) {
      // The same failure again (the RuntimeError after the negative profile, or
      // another rank): only the current fraction is new.
      if (!fraction) return;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::sglang);
      f.ratio = fraction;
      f.detail = "mem_fraction_static";
      return out.add(std::move(f));
    }
    Fact f = failure(line);
    f.ratio = fraction;
    f.detail = "no cache blocks: SGLang's mem_fraction_static leaves no room for the KV cache after the weights";
    out.add(std::move(f));
  }

  // "RuntimeError: Prefill out of memory. Try to lower your batch size." (the
  // scheduler's log line and the exception repeat it: one fact).
  void batch_oom(const Line& line, std::string_view s, size_t p, FactSink& out) {
    const bool prefill = text::ends_with(s.substr(0, p), "Prefill");
    if ((!prefill && !text::ends_with(s.substr(0, p), "Decode")) || guards::is_mention(s, p, 10)) return;
    if (repeated(line)) return;
    Fact f = failure(line);
    f.kind = FactKind::gpu_oom;  // a runtime allocation's refusal, not a start-up budget's shortage
    f.cause = Cause::concurrency_batch;
    f.strength = 0.9f;
    f.detail = std::string(prefill ? "prefill" : "decode") +
               " batch: SGLang's KV token pool could not hold the next batch's tokens (the requests running at once hold it)";
    if (running_ && *running_ <= kFewRequests) {
      f.cause = Cause::kv_cache_context;
      f.sequences = running_;
      f.detail = fmt::format("SGLang's KV token pool could not hold the tokens of only {} running requests: the pool is too small "
                             "for their context",
                             *running_);
    }
    out.add(std::move(f));
  }

  // "Load weight end. type=..., dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB."
  void weights_loaded(const Line& line, std::string_view s, FactSink& out) {
    auto avail = text::after(s, "avail mem=");
    auto usage = text::after(s, "mem usage=");
    if (!avail && !usage) return;
    Fact f = make_fact(line, FactKind::gpu_state, Family::sglang);
    if (avail) f.free = units::parse_log_size(*avail);
    if (usage) f.usage = units::parse_log_size(*usage);
    if (!f.free && !f.usage) return;
    f.detail = "SGLang after loading the weights";
    if (f.usage) f.detail += " (weights " + units::format_bytes(*f.usage) + ")";
    out.add(std::move(f));
  }

  // "KV Cache is allocated. #tokens: 46045, K size: 2.99 GB, V size: 2.99 GB" / "..., K 5.22 GB, V 5.22 GB"
  void kv_allocated(const Line& line, std::string_view s, FactSink& out) {
    auto tokens = text::after(s, "#tokens:");
    if (!tokens) return;
    Fact f = make_fact(line, FactKind::kv_capacity, Family::sglang);
    f.kv_tokens = text::parse_grouped_u64(text::trim_left(*tokens));
    if (!f.kv_tokens) return;
    auto size_of = [&](std::string_view key) -> std::optional<uint64_t> {
      std::string marker = ", " + std::string(key) + " ";  // ", K size: 2.99 GB" or ", K 5.22 GB"
      size_t at = s.find(marker);
      if (at == std::string_view::npos) return std::nullopt;
      std::string_view t = s.substr(at + marker.size());
      if (text::starts_with(t, "size:")) t.remove_prefix(5);
      return units::parse_log_size(t);
    };
    auto k = size_of("K"), v = size_of("V");
    if (k && v) f.kv_bytes = *k + *v;
    f.detail = "SGLang KV cache tokens";
    out.add(std::move(f));
  }

  // "max_total_num_tokens=171008, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2049,
  //  context_len=169000, available_gpu_mem=8.27 GB"
  void pool(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::kv_capacity, Family::sglang);
    f.kv_tokens = count_after(s, "max_total_num_tokens");
    if (!f.kv_tokens) return;
    f.max_model_len = count_after(s, "context_len");
    f.sequences = count_after(s, "max_running_requests");
    f.batch_tokens = count_after(s, "chunked_prefill_size");
    if (!f.batch_tokens) f.batch_tokens = count_after(s, "max_prefill_tokens");
    f.detail = "SGLang KV pool (max_total_num_tokens)";
    pool_tokens_ = f.kv_tokens;
    context_len_ = f.max_model_len;
    out.add(std::move(f));
  }

  // "Input length (4096 tokens) exceeds the maximum allowed length (2107 tokens)": SGLang bounds a
  // request by its KV pool as well as the context length. Refused under a
  // pool smaller than the context length the server announced, the request
  // met the pool: the KV cache the GPU had room for, not the model's limit.
  void refused(const Line& line, std::string_view s, size_t p, FactSink& out) {
    auto allowed = text::parse_grouped_u64(s.substr(p + 36));
    if (!allowed || !pool_tokens_ || !context_len_ || *pool_tokens_ >= *context_len_ || *allowed > *pool_tokens_) return;
    if (guards::is_mention(s, p, 36) || repeated(line)) return;
    Fact f = failure(line);
    f.strength = 0.8f;
    f.cause = Cause::kv_cache_context;
    f.kv_tokens = pool_tokens_;
    f.max_model_len = context_len_;
    f.detail = fmt::format("SGLang refused a request longer than its KV pool: the pool holds {} tokens, under the context length {}",
                           *pool_tokens_, *context_len_);
    out.add(std::move(f));
  }
  std::optional<uint64_t> pool_tokens_, context_len_;  // the last "max_total_num_tokens=..., context_len=..." line

  // server_args=ServerArgs(..., mem_fraction_static=0.88, ...) or the command line.
  void settings(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::runtime_setting, Family::sglang);
    std::string names;
    auto note = [&](std::string_view n) {
      if (!names.empty()) names += ',';
      names += n;
    };
    auto fraction = number_after(s, "mem_fraction_static");
    if (!fraction) fraction = number_after(s, "--mem-fraction-static");
    if (fraction && *fraction > 0 && *fraction <= 1.0) f.ratio = fraction, note("mem_fraction_static");
    auto len = count_after(s, "context_length");
    if (!len) len = count_after(s, "--context-length");
    if (len) f.max_model_len = len, note("context_length");
    auto running = count_after(s, "max_running_requests");
    if (!running) running = count_after(s, "--max-running-requests");
    if (running) f.sequences = running, note("max_running_requests");
    auto chunk = count_after(s, "chunked_prefill_size");
    if (!chunk) chunk = count_after(s, "--chunked-prefill-size");
    if (chunk) f.batch_tokens = chunk, note("chunked_prefill_size");
    auto total = count_after(s, "max_total_tokens");
    if (!total) total = count_after(s, "--max-total-tokens");
    if (total) f.kv_tokens = total, note("max_total_tokens");
    if (names.empty()) return;
    f.detail = names;
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kSglangEntry{"sglang", Family::sglang, kPatterns, [] { return std::unique_ptr<Recognizer>(new Sglang); }};

}  // namespace aimem
