// Prompts of an exact token length (see client.h PromptMaker), and percentiles.
//
// The filler is the request index in digits, then words drawn from a fixed
// list of common English words by a generator seeded with the index: two
// requests differ from their first tokens, so no prefix cache can serve one
// from the other, and the same index always gives the same text. The words are
// ones most BPE and SentencePiece vocabularies hold as one token with their
// leading space, so the count is close to linear in the number of words:
//   tokens(w) ~= tokens_per_word * w + offset   (offset: BOS, the digits)
// With a tokenize endpoint the line is fitted from the server's own counts and
// the word count found by secant steps inside a bracket (usually 1-3 calls once
// the line is known); the last token or two a word cannot reach are padded
// with " a". Without one, two max_tokens=1 requests give usage.prompt_tokens
// at two lengths and the line is taken from them, once per PromptMaker.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>

#include "probe/client.h"

namespace aimem::probe {
namespace {

constexpr std::array<const char*, 128> kWords = {
    "the", "of", "and", "to", "in", "is", "was", "for", "on", "are", "with", "they", "be", "at", "one",
    "have", "this", "from", "by", "hot", "word", "but", "what", "some", "we", "can", "out", "other", "were",
    "all", "there", "when", "up", "use", "your", "how", "said", "an", "each", "she", "which", "do", "their",
    "time", "if", "will", "way", "about", "many", "then", "them", "write", "would", "like", "so", "these",
    "her", "long", "make", "thing", "see", "him", "two", "has", "look", "more", "day", "could", "go", "come",
    "did", "number", "sound", "no", "most", "people", "my", "over", "know", "water", "than", "call", "first",
    "who", "may", "down", "side", "been", "now", "find", "any", "new", "work", "part", "take", "get", "place",
    "made", "live", "where", "after", "back", "little", "only", "round", "man", "year", "came", "show",
    "every", "good", "me", "give", "our", "under", "name", "very", "through", "just", "form", "great",
    "think", "say", "help", "low", "line", "before", "turn"};

constexpr int kMaxTokenizeCalls = 12;  // per prompt; secant steps converge in 1-3 once the line is known
constexpr int kMaxPadCalls = 4;
// An index no sweep reaches: calibration prompts never equal a real one.
constexpr int kCalibrationIndex = 1'000'000'007;

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string filler(int index, int words) {
  std::string s = std::to_string(index);
  s.reserve(s.size() + static_cast<size_t>(std::max(words, 0)) * 6);
  uint64_t state = static_cast<uint64_t>(index) * 0x2545F4914F6CDD1Dull + 1;
  for (int i = 0; i < words; ++i) {
    s += ' ';
    s += kWords[splitmix64(state) % kWords.size()];
  }
  return s;
}

double mean_word_chars() {
  double sum = 0;
  for (const char* w : kWords) sum += std::char_traits<char>::length(w) + 1;
  return sum / kWords.size();
}

}  // namespace

PromptMaker::PromptMaker(const Client& client, std::string model) : client_(client), model_(std::move(model)) {}

Result<std::string> PromptMaker::make(int tokens, int request_index) {
  if (tokens < 1) return make_error(fmt::format("prompt length {} tokens: must be at least 1", tokens));
  const int max_words = 2 * tokens + 16;  // every word is at least about half a token

  if (how_.empty()) {
    ++calls_;
    auto probe = client_.count_tokens(filler(kCalibrationIndex, 64), model_);
    if (!probe) return probe.error();
    if (*probe) {
      how_ = "tokenize";
      tokens_per_word_ = std::max(0.25, (**probe - 2.0) / 64.0);
      offset_ = **probe - tokens_per_word_ * 64;
    } else {
      // Two lengths of usage.prompt_tokens; /v1/chat/completions only when the
      // server has no /v1/completions (then the template's tokens are in offset_).
      std::optional<int> at[2];
      const int words[2] = {32, 160};
      for (Api api : {Api::completions, Api::chat}) {
        for (int k = 0; k < 2; ++k) {
          ++calls_;
          RequestSpec spec;
          spec.api = api;
          spec.model = model_;
          spec.prompt = filler(kCalibrationIndex, words[k]);
          spec.max_tokens = 1;
          spec.stream = false;
          spec.ignore_eos = false;
          auto r = client_.send(spec);
          if (r.error_kind == "connect") return make_error(r.error);
          if (!r.ok || r.prompt_tokens < 0) break;
          at[k] = r.prompt_tokens;
        }
        if (at[0] && at[1] && *at[1] > *at[0]) break;
        at[0].reset();
        at[1].reset();
      }
      if (at[0] && at[1]) {
        how_ = "usage";
        tokens_per_word_ = double(*at[1] - *at[0]) / (words[1] - words[0]);
        offset_ = *at[0] - tokens_per_word_ * words[0];
      } else {
        how_ = "estimate";  // about 4 characters per token, as OpenAI's rule of thumb
        tokens_per_word_ = mean_word_chars() / 4.0;
        offset_ = 1;
      }
    }
  }

  auto guess = [&](double tokens_wanted) {
    return std::clamp(static_cast<int>(std::lround((tokens_wanted - offset_) / tokens_per_word_)), 0, max_words);
  };
  if (how_ != "tokenize") return filler(request_index, guess(tokens));

  auto count = [&](const std::string& text) -> Result<int> {
    ++calls_;
    auto c = client_.count_tokens(text, model_);
    if (!c) return c.error();
    if (!*c) return make_error(client_.endpoint().url() + "/tokenize stopped answering while prompts were being sized");
    return **c;
  };

  // Secant steps on the word count inside [lo, hi): lo counts at most `tokens`.
  int lo = -1, lo_count = 0, hi = INT_MAX;
  int w = guess(tokens);
  std::optional<std::pair<int, int>> prev;  // (words, count) of the last call, for the slope
  for (int i = 0; i < kMaxTokenizeCalls; ++i) {
    auto c = count(filler(request_index, w));
    if (!c) return c.error();
    if (prev && prev->first != w && *c != prev->second) {
      double slope = double(*c - prev->second) / (w - prev->first);
      if (slope > 0.05) tokens_per_word_ = slope;
    }
    offset_ = *c - tokens_per_word_ * w;
    prev = {w, *c};
    if (*c == tokens) return filler(request_index, w);
    if (*c < tokens) {
      lo = w;
      lo_count = *c;
    } else {
      hi = w;
    }
    if (hi == 0 || hi == lo + 1) break;
    int next = w + static_cast<int>(std::lround((tokens - *c) / tokens_per_word_));
    if (next <= lo || next >= hi) next = hi == INT_MAX ? std::min(max_words, std::max(lo + 1, lo * 2)) : lo + (hi - lo) / 2;
    if (next == w) next = *c < tokens ? w + 1 : w - 1;
    if (next < 0 || next > max_words || next <= lo || next >= hi) break;
    w = next;
  }
  if (lo < 0) return filler(request_index, 0);  // even the digits alone are longer: as short as it gets
  // The next word overshoots: pad with single-token " a" up to the deficit.
  std::string base = filler(request_index, lo);
  int pad = tokens - lo_count;
  for (int i = 0; i < kMaxPadCalls && pad > 0; ++i) {
    std::string padded = base;
    for (int k = 0; k < pad; ++k) padded += " a";
    auto c = count(padded);
    if (!c) return c.error();
    if (*c == tokens) return padded;
    if (*c < tokens) {
      base = padded;
      lo_count = *c;
      pad = tokens - *c;
    } else {
      pad -= *c - tokens;
    }
  }
  return base;  // the closest from below the bounded calls found
}

std::optional<double> percentile(std::vector<double> values, double p) {
  if (values.empty() || std::isnan(p)) return std::nullopt;
  p = std::clamp(p, 0.0, 100.0);
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + (rank - 1), values.end());
  return values[rank - 1];
}

}  // namespace aimem::probe
