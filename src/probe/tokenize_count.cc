// TokenCountReader (see tokenize_count.h): one character at a time.
#include "probe/tokenize_count.h"

namespace aimem::probe {

namespace {
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr size_t kMaxKey = 32;
constexpr int64_t kMaxCountDigits = 15;
}  // namespace

bool TokenCountReader::feed(std::string_view bytes) {
  if (bad_) return false;
  for (char c : bytes)
    if (!step(c)) {
      bad_ = true;
      return false;
    }
  return true;
}

bool TokenCountReader::step(char c) {
  if (!started_) {
    if (space(c)) return true;
    if (c != '{') return false;
    started_ = true;
    depth_ = 1;
    return true;
  }
  if (closed_) return space(c);
  if (in_string_) {
    if (escape_) {
      escape_ = false;
    } else if (c == '\\') {
      escape_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (reading_key_) reading_key_ = false;
      return true;
    }
    if (reading_key_ && key_.size() < kMaxKey) key_ += c;
    return true;
  }
  // The end of a "count" value: digits alone make it an integer.
  if (in_count_ && !(c >= '0' && c <= '9')) {
    in_count_ = false;
    if (count_ok_ && (space(c) || c == ',' || c == '}')) count_ = count_value_;
  }
  if (space(c)) return true;
  if (depth_ == 2 && in_tokens_ && c != ',' && c != ']' && !element_open_) {
    element_open_ = true;
    ++tokens_;
  }
  switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 1 && expect_key_) {
        reading_key_ = true;
        key_.clear();
      }
      return true;
    case '{':
    case '[':
      if (depth_ == 1) {
        if (expect_key_) return false;
        if (c == '[' && value_key_ == "tokens") {
          in_tokens_ = tokens_seen_ = true;
          tokens_ = 0;
          element_open_ = false;
        }
      }
      ++depth_;
      return true;
    case '}':
    case ']':
      if (--depth_ < 0) return false;
      if (depth_ == 1 && in_tokens_) in_tokens_ = false;
      if (depth_ == 0) closed_ = true;
      return true;
    case ':':
      if (depth_ == 1) {
        if (!expect_key_) return false;
        expect_key_ = false;
        value_key_ = key_;
      }
      return true;
    case ',':
      if (depth_ == 1) expect_key_ = true;
      if (depth_ == 2 && in_tokens_) element_open_ = false;
      return true;
    default:
      if (depth_ == 1) {
        if (expect_key_) return false;
        if (value_key_ == "count") {
          if (!in_count_ && c >= '0' && c <= '9' && count_digits_ == 0) {
            in_count_ = count_ok_ = true;
          } else if (!in_count_) {
            count_ok_ = false;
          }
          if (in_count_) {
            if (++count_digits_ > kMaxCountDigits) {
              in_count_ = count_ok_ = false;
              return true;
            }
            count_value_ = count_value_ * 10 + (c - '0');
          }
        }
      }
      return true;
  }
}

std::optional<int64_t> TokenCountReader::result() const {
  if (bad_ || !closed_) return std::nullopt;
  if (count_) return count_;
  if (tokens_seen_) return tokens_;
  return std::nullopt;
}

}  // namespace aimem::probe
