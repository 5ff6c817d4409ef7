// The count of tokens in a /tokenize answer, read as its bytes arrive and
// never held: a prompt of millions of tokens gets an answer of tens of MB
// (llama.cpp lists every id), of which only the count is wanted.
//
//   llama.cpp  {"tokens": [1, 2, 3]}   or with pieces  {"tokens": [{"id": 1, "piece": "a"}, ...]}
//   vLLM       {"count": 3, "max_model_len": 4096, "tokens": [1, 2, 3]}
//
// A lexical scan: strings (with their escapes) are skipped, containers
// counted by depth, the root object's keys read (the first 32 bytes of
// each); "count" is taken when it is a plain integer, else the elements of the
// root's "tokens" array are counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aimem::probe {

class TokenCountReader {
 public:
  // The next bytes of the body. false once it cannot be a JSON object (then
  // result() is nullopt); the caller may stop reading.
  bool feed(std::string_view bytes);
  // After the whole body: "count" when it was an integer, else the number of
  // elements of "tokens"; nullopt when the body was no complete JSON object
  // with either.
  std::optional<int64_t> result() const;
  // The body began as a JSON object (something else answers at /tokenize otherwise).
  bool is_object() const { return started_ && !bad_; }

 private:
  bool step(char c);

  bool started_ = false, bad_ = false, closed_ = false;
  int64_t depth_ = 0;
  bool in_string_ = false, escape_ = false;
  // Root object: whether a key or a value comes next, and the key read.
  bool expect_key_ = true, reading_key_ = false;
  std::string key_, value_key_;
  // "count": its digits; the value must be digits alone.
  std::optional<int64_t> count_;
  bool in_count_ = false, count_ok_ = false;
  int64_t count_digits_ = 0, count_value_ = 0;
  // "tokens": elements at depth 2.
  bool in_tokens_ = false, tokens_seen_ = false, element_open_ = false;
  int64_t tokens_ = 0;
};

}  // namespace aimem::probe
