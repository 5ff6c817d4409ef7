// The context length rising from one request or step to the next before a
// failure: a server's per-request lines, a trainer's per-batch lines. The
// failure came at the longest sequence yet, so what did not fit grew with
// the sequence's length (the KV cache, attention's activations), not with the
// number of requests or the batch: one phase_serve fact, cause
// kv_cache_context, detail kContextGrew and the first and latest lengths in
// words ("...: from 2210 to 4960 tokens"), each time a length passes every one
// before it (1024 tokens at least, half as long again as the first).
//
//   Output generated in 21.04 seconds (9.51 tokens/s, 200 tokens, context 4873, seed 1402911)   text-generation-webui
//   forward_backward adapter=ad-7f3c datums=4 tokens=[...] max_len=7045 loss=0.19                a trainer's step log
//   slot update_slots: id  0 | task 12 | prompt_tokens = 9120, n_past = 8911                       llama.cpp's server
//   INFO: request 51 done prompt_len=31822 output_len=512                                          a serving benchmark
//
// A length named as a setting repeats one value (n_ctx = 4096 on every
// start): it never rises and marks nothing. The key is matched as a whole
// word ("n_context=" is not "context").
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr std::string_view kKeys[] = {"context", "seq_len", "seqlen", "sequence_length", "max_len", "prompt_tokens",
                                      "prompt_len", "input_len", "input_length", "input_tokens", "n_past", "num_tokens", "kv_len"};

constexpr Pattern kPatterns[] = {
    {"(context|seq_?len|sequence_length|max_len|prompt_tokens|prompt_len|input_len|input_length|input_tokens|n_past|num_tokens|kv_len)"
     " *[=:]? *[0-9]",
     kRegex | kCaseless | kContext},
    {"(prompt|input)[a-z_ ]{0,16}[=:] *[0-9][0-9,]* *tokens?", kRegex | kCaseless | kContext},
};

// A length written as a count of tokens after the prompt's name, a few words
// between them ("Prompt: 14207 tokens" of mlx_lm's server, "prompt eval
// count:    9120 token(s)" of `ollama run --verbose`, "input size: 4096 tokens").
constexpr std::string_view kTokenKeys[] = {"prompt", "input"};

constexpr uint64_t kMinTokens = 1024;
constexpr size_t kMaxFacts = 256;  // marks per input: a long server log rises again and again

// The number after `key` at `at` in s ("context 4873", "max_len=7045",
// "prompt_tokens = 9120", "context: 4,873"), where the key stands as a word.
std::optional<uint64_t> value_after(std::string_view s, size_t at, std::string_view key) {
  if (at > 0 && (platform::is_alnum(s[at - 1]) || s[at - 1] == '_' || s[at - 1] == '.' || s[at - 1] == '-')) return std::nullopt;
  std::string_view rest = s.substr(at + key.size());
  if (!rest.empty() && (platform::is_alnum(rest[0]) || rest[0] == '_')) return std::nullopt;
  rest = platform::skip(rest, " ");
  if (!rest.empty() && (rest[0] == '=' || rest[0] == ':')) rest = platform::skip(rest.substr(1), " ");
  if (rest.empty() || !platform::is_digit(rest[0])) return std::nullopt;
  std::string_view after;
  auto v = text::parse_grouped_u64(rest, &after);  // "4,873" too
  // A decimal ("context 0.5"), a size ("context 12MiB") or a time is no length.
  if (!v || (!after.empty() && (after[0] == '.' || platform::is_alnum(after[0])))) return std::nullopt;
  return v;
}

std::optional<uint64_t> tokens_after(std::string_view s, size_t at, std::string_view key) {
  if (at > 0 && (platform::is_alnum(s[at - 1]) || s[at - 1] == '_')) return std::nullopt;
  std::string_view rest = s.substr(at + key.size());
  size_t i = 0;
  while (i < rest.size() && i < 16 && (std::isalpha(static_cast<unsigned char>(rest[i])) || rest[i] == '_' || rest[i] == ' ')) ++i;
  if (i >= rest.size() || (rest[i] != '=' && rest[i] != ':')) return std::nullopt;
  rest = platform::skip(rest.substr(i + 1), " ");
  if (rest.empty() || !platform::is_digit(rest[0])) return std::nullopt;
  std::string_view after;
  auto v = text::parse_grouped_u64(rest, &after);
  if (!v || !text::istarts_with(platform::skip(after, " "), "token")) return std::nullopt;
  return v;
}

class ContextGrowth final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    for (size_t k = 0; k < std::size(kKeys) + std::size(kTokenKeys); ++k) {
      const bool counted = k >= std::size(kKeys);  // a count of tokens after the prompt's name
      const std::string_view key = counted ? kTokenKeys[k - std::size(kKeys)] : kKeys[k];
      size_t at = text::ifind(s, key);
      if (at == std::string_view::npos) continue;
      auto v = counted ? tokens_after(s, at, key) : value_after(s, at, key);
      if (!v) continue;
      Series& series = series_[k];
      if (!series.first) {
        series.first = *v;
        series.max = *v;
        continue;
      }
      if (*v <= series.max) continue;
      series.max = *v;
      if (*v < kMinTokens || *v * 2 < *series.first * 3 || emitted_ >= kMaxFacts) continue;
      ++emitted_;
      Fact f = make_fact(line, FactKind::phase_serve, Family::runtime);
      f.cause = Cause::kv_cache_context;
      f.strength = 0.5f;
      // The lengths go in the words, not in `ctx` / `count`: those are a
      // configured context and a count of copies wherever the diagnosis reads them.
      f.detail = std::string(kContextGrew) + ": from " + std::to_string(*series.first) + " to " + std::to_string(*v) + " tokens";
      out.add(std::move(f));
    }
  }

 private:
  struct Series {
    std::optional<uint64_t> first;
    uint64_t max = 0;
  };
  std::array<Series, std::size(kKeys) + std::size(kTokenKeys)> series_{};
  size_t emitted_ = 0;
};

}  // namespace

const RecognizerEntry kContextGrowthEntry{"context_growth", Family::runtime, kPatterns,
                                          [] { return std::unique_ptr<Recognizer>(new ContextGrowth); }};

}  // namespace aimem
