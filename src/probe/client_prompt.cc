// Prompts of an exact token length (see client.h PromptMaker), and percentiles.
//
// The filler is the request index in digits, then words from a fixed list of
// 128 common English words, in blocks of 128 that each hold every word once,
// in an order drawn by a generator seeded with the index and the block: two
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
//
// A prompt is never held whole (PromptText): its words are generated again
// each time it is written, in pieces, as the request goes out. Its size needs
// no pass over the words: every whole block has the same bytes (and so about
// the same tokens), and only the last, partial block is drawn to count it.
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

constexpr size_t kPiece = 16 * 1024;

// The words' lengths, for the size pass.
constexpr std::array<uint8_t, kWords.size()> word_lengths() {
  std::array<uint8_t, kWords.size()> n{};
  for (size_t i = 0; i < kWords.size(); ++i) n[i] = static_cast<uint8_t>(std::char_traits<char>::length(kWords[i]));
  return n;
}
constexpr auto kWordLengths = word_lengths();

constexpr uint64_t block_bytes() {
  uint64_t n = 0;
  for (uint8_t len : kWordLengths) n += 1 + len;
  return n;
}
constexpr uint64_t kBlockBytes = block_bytes();

using Order = std::array<uint8_t, kWords.size()>;

// Block `block` of request `index`: the words' order (Fisher-Yates).
void block_order(int index, uint64_t block, Order& order) {
  uint64_t state = (static_cast<uint64_t>(static_cast<uint32_t>(index)) * 0x2545F4914F6CDD1Dull + 1) ^ (block * 0xD6E8FEB86659FD93ull);
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint8_t>(i);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[splitmix64(state) % (i + 1)]);
}

double mean_word_chars() {
  double sum = 0;
  for (const char* w : kWords) sum += std::char_traits<char>::length(w) + 1;
  return sum / kWords.size();
}

}  // namespace

PromptText PromptText::filler(int index, int words, int pad) {
  PromptText p;
  p.generated_ = true;
  p.index_ = index;
  p.words_ = std::max(words, 0);
  p.pad_ = std::max(pad, 0);
  const uint64_t blocks = static_cast<uint64_t>(p.words_) / kWords.size();
  const size_t rest = static_cast<size_t>(p.words_) % kWords.size();
  uint64_t size = std::to_string(index).size() + blocks * kBlockBytes;
  if (rest > 0) {
    Order order;
    block_order(index, blocks, order);
    for (size_t i = 0; i < rest; ++i) size += 1 + kWordLengths[order[i]];
  }
  p.size_ = size + 2ull * static_cast<uint64_t>(p.pad_);
  return p;
}

bool PromptText::write(const std::function<bool(std::string_view)>& sink) const {
  if (!generated_) {
    for (size_t at = 0; at < literal_.size(); at += kPiece)
      if (!sink(std::string_view(literal_).substr(at, kPiece))) return false;
    return true;
  }
  std::string piece = std::to_string(index_);
  piece.reserve(kPiece + 16);
  Order order;
  for (int i = 0; i < words_; ++i) {
    const size_t at = static_cast<size_t>(i) % kWords.size();
    if (at == 0) block_order(index_, static_cast<uint64_t>(i) / kWords.size(), order);
    piece += ' ';
    piece += kWords[order[at]];
    if (piece.size() >= kPiece) {
      if (!sink(piece)) return false;
      piece.clear();
    }
  }
  for (int i = 0; i < pad_; ++i) {
    piece += " a";
    if (piece.size() >= kPiece) {
      if (!sink(piece)) return false;
      piece.clear();
    }
  }
  return piece.empty() || sink(piece);
}

std::string PromptText::str() const {
  if (!generated_) return literal_;
  std::string s;
  s.reserve(static_cast<size_t>(size_));
  write([&](std::string_view piece) {
    s.append(piece);
    return true;
  });
  return s;
}

PromptMaker::PromptMaker(const Client& client, std::string model) : client_(client), model_(std::move(model)) {}

Result<PromptText> PromptMaker::make(int tokens, int request_index) {
  if (tokens < 1) return make_error(fmt::format("prompt length {} tokens: must be at least 1", tokens));
  const int max_words = 2 * tokens + 16;  // every word is at least about half a token

  if (how_.empty()) {
    ++calls_;
    auto probe = client_.count_tokens(PromptText::filler(kCalibrationIndex, 64), model_);
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
          spec.prompt = PromptText::filler(kCalibrationIndex, words[k]);
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
  if (how_ != "tokenize") return PromptText::filler(request_index, guess(tokens));

  auto count = [&](const PromptText& text) -> Result<int> {
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
    auto c = count(PromptText::filler(request_index, w));
    if (!c) return c.error();
    if (prev && prev->first != w && *c != prev->second) {
      double slope = double(*c - prev->second) / (w - prev->first);
      if (slope > 0.05) tokens_per_word_ = slope;
    }
    offset_ = *c - tokens_per_word_ * w;
    prev = {w, *c};
    if (*c == tokens) return PromptText::filler(request_index, w);
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
  if (lo < 0) return PromptText::filler(request_index, 0);  // even the digits alone are longer: as short as it gets
  // The next word overshoots: pad with single-token " a" up to the deficit.
  int base_pad = 0;
  int pad = tokens - lo_count;
  for (int i = 0; i < kMaxPadCalls && pad > 0; ++i) {
    PromptText padded = PromptText::filler(request_index, lo, base_pad + pad);
    auto c = count(padded);
    if (!c) return c.error();
    if (*c == tokens) return padded;
    if (*c < tokens) {
      base_pad += pad;
      lo_count = *c;
      pad = tokens - *c;
    } else {
      pad -= *c - tokens;
    }
  }
  return PromptText::filler(request_index, lo, base_pad);  // the closest from below the bounded calls found
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
