// Hugging Face text-generation-inference (TGI).
//
// At start the router asks every shard to warm up: one prefill of
// --max-batch-prefill-tokens tokens. A CUDA OOM there is turned into
//   RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`
//   (newer) Not enough memory to handle 20000 total tokens with 4096 prefill tokens. You need to decrease ...
// which the launcher and the router repeat:
//   ERROR text_generation_launcher: Method Warmup encountered an error.
//   Error: Warmup(Generation("Not enough memory to handle 4096 prefill tokens. ..."))
// Before that conversion (TGI 0.9) and when the OOM is not a torch OutOfMemoryError, the router panics with
// the shard's raw error, newlines escaped:
//   thread 'main' panicked at 'Unable to warmup model: Generation("Allocation on device 0 would exceed allowed
//       memory. (out of memory)\nCurrently allocated     : 16.08 GiB\n...")', router/src/main.rs:216:18
//   ERROR warmup{max_input_length=4095 max_prefill_tokens=4145 max_total_tokens=4096 max_batch_size=None}:warmup:
//       text_generation_client: router/client/src/lib.rs:46: Server error: CUDA out of memory. Tried to allocate ...
// The PyTorch recognizer reads the allocation itself; here the warmup span says it was the prefill warmup
// (phase_serve) and carries the token budgets it ran with.
// A shard that dies while loading prints "Shard 0 failed to start" / "Error when initializing model" and its
// stderr (each line of it suffixed " rank=0"), where the PyTorch recognizer finds the CUDA OOM itself.
// Context: the launcher's "Args { ..., max_input_tokens: Some(8191), max_total_tokens: Some(8192),
// max_batch_prefill_tokens: Some(4096), cuda_memory_fraction: 1.0, ... }" (older versions without Some(...)),
// the same as command-line flags (--max-batch-prefill-tokens 4096), and the KV budget the warmup found:
// "Setting max batch total tokens to 412960".
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Not enough memory to handle"},
    {"Method Warmup encountered an error", kCompanion},
    {"Unable to warmup model", kCompanion},
    {"warmup{max_", kContext},
    {"Setting max batch total tokens to", kContext},
    {"text_generation_launcher: Args", kContext},
    {"--max-batch-prefill-tokens", kContext},
    {"--max-total-tokens", kContext},
    {"--cuda-memory-fraction", kContext},
    {"failed to start", kCompanion | kShared},  // other programs say it too: no claim on the line
    {"Error when initializing model", kCompanion},
};

constexpr uint64_t kRepeatWindow = 300;

// "key: Some(8192)", "key: 8192", "--key 8192", "--key=8192".
std::optional<double> value_of(std::string_view s, std::string_view key) {
  size_t p = 0;
  while ((p = s.find(key, p)) != std::string_view::npos) {
    p += key.size();
    std::string_view t = s.substr(p);
    if (!t.empty() && (t[0] == ':' || t[0] == '=')) t.remove_prefix(1);
    else if (t.empty() || t[0] != ' ') continue;
    t = text::trim_left(t);
    if (text::starts_with(t, "Some(")) t.remove_prefix(5);
    if (auto v = text::parse_double(t)) return v;
  }
  return std::nullopt;
}

class Tgi final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto p = s.find("Not enough memory to handle"); p != std::string_view::npos) return not_enough(line, s, p, out);
    if (auto p = s.find("warmup{max_"); p != std::string_view::npos) return warmup_span(line, s.substr(p), out);
    if (text::contains(s, "Method Warmup encountered an error") || text::contains(s, "Unable to warmup model")) {
      Fact f = make_fact(line, FactKind::phase_serve, Family::tgi);
      f.detail = "warmup of a max-size prefill batch";
      return out.add(std::move(f));
    }
    if (text::contains(s, "Error when initializing model") || (text::contains(s, "Shard") && text::contains(s, "failed to start"))) {
      Fact f = make_fact(line, FactKind::phase_load, Family::tgi);
      f.detail = "TGI shard loading the model";
      return out.add(std::move(f));
    }
    if (auto v = text::after(s, "Setting max batch total tokens to ")) {
      if (auto n = text::parse_u64(text::trim_left(*v))) {
        Fact f = make_fact(line, FactKind::kv_capacity, Family::tgi);
        f.kv_tokens = n;
        f.detail = "max batch total tokens";
        out.add(std::move(f));
      }
      return;
    }
    settings(line, s, out);
  }

 private:
  uint64_t last_line_ = 0;
  std::optional<uint64_t> last_tokens_;
  bool have_last_ = false;

  void not_enough(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 27)) return;
    std::string_view body = s.substr(p + 27);
    std::string_view rest;
    auto first = text::parse_u64(text::trim_left(body), &rest);
    if (!first) return;
    std::optional<uint64_t> prefill, total;
    rest = text::trim_left(rest);
    if (text::starts_with(rest, "prefill tokens")) {
      prefill = first;
    } else if (text::starts_with(rest, "total tokens")) {
      total = first;
      if (auto w = text::after(rest, "with ")) prefill = text::parse_u64(text::trim_left(*w));
    } else {
      return;
    }
    if (have_last_ && last_tokens_ == prefill && line.number <= last_line_ + kRepeatWindow) return;
    have_last_ = true;
    last_tokens_ = prefill;
    last_line_ = line.number;
    Fact f = make_fact(line, FactKind::gpu_oom, Family::tgi);
    f.layer = Layer::gpu_vram;
    f.strength = 0.9f;
    f.detail = "prefill warmup";
    f.batch_tokens = prefill;
    f.kv_tokens = total;
    out.add(std::move(f));
  }

  // "warmup{max_input_length=4095 max_prefill_tokens=4145 max_total_tokens=4096 max_batch_size=None}:warmup: ...":
  // the router's warmup call, logged with the error the shard returned.
  void warmup_span(const Line& line, std::string_view s, FactSink& out) {
    std::string_view span = s.substr(0, s.find('}'));
    if (!text::contains(s.substr(span.size()), "error")) return;  // only a failed warmup is logged with its span
    Fact phase = make_fact(line, FactKind::phase_serve, Family::tgi);
    phase.detail = "warmup of a max-size prefill batch";
    out.add(std::move(phase));
    Fact f = make_fact(line, FactKind::runtime_setting, Family::tgi);
    auto count = [&](std::string_view key) -> std::optional<uint64_t> {
      auto v = value_of(span, key);
      if (!v || *v < 1 || *v > 1e12) return std::nullopt;
      return static_cast<uint64_t>(*v);
    };
    f.batch_tokens = count("max_prefill_tokens");
    f.max_model_len = count("max_total_tokens");
    if (!f.batch_tokens && !f.max_model_len) return;
    f.detail = "max_batch_prefill_tokens,max_total_tokens (warmup)";
    out.add(std::move(f));
  }

  void settings(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::runtime_setting, Family::tgi);
    std::string names;
    auto note = [&](std::string_view n) {
      if (!names.empty()) names += ',';
      names += n;
    };
    auto count = [](std::optional<double> v) -> std::optional<uint64_t> {
      if (!v || *v < 1 || *v > 1e12) return std::nullopt;
      return static_cast<uint64_t>(*v);
    };
    auto total = count(value_of(s, "max_total_tokens"));
    if (!total) total = count(value_of(s, "--max-total-tokens"));
    if (total) f.max_model_len = total, note("max_total_tokens");
    auto prefill = count(value_of(s, "max_batch_prefill_tokens"));
    if (!prefill) prefill = count(value_of(s, "--max-batch-prefill-tokens"));
    if (prefill) f.batch_tokens = prefill, note("max_batch_prefill_tokens");
    auto batch_total = count(value_of(s, "max_batch_total_tokens"));
    if (!batch_total) batch_total = count(value_of(s, "--max-batch-total-tokens"));
    if (batch_total) f.kv_tokens = batch_total, note("max_batch_total_tokens");
    auto fraction = value_of(s, "cuda_memory_fraction");
    if (!fraction) fraction = value_of(s, "--cuda-memory-fraction");
    if (fraction && *fraction > 0 && *fraction <= 1.0) f.ratio = fraction, note("cuda_memory_fraction");
    if (names.empty()) return;
    f.detail = names;
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kTgiEntry{"tgi", Family::tgi, kPatterns, [] { return std::unique_ptr<Recognizer>(new Tgi); }};

}  // namespace aimem
