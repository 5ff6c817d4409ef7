// Server-sent events as OpenAI-compatible servers stream them, and what one
// streamed chunk of /v1/completions or /v1/chat/completions says. Written by
// hand: Debian packages no SSE library (cpp-httplib hands over raw bytes), and
// the part of the format these servers use is small:
//
//   : a comment line (ignored)
//   data: {"choices":[{"text":"Hel"}]}      <- one event per blank-line-ended block
//   <blank line>
//   data: [DONE]                            <- OpenAI's end of stream
//
// Lines end in LF, CRLF or CR; an event's bytes may arrive split across any
// number of TCP reads, and several "data:" lines of one event are joined by
// "\n" (the WHATWG rule). Fields other than "data" (event, id, retry) carry
// nothing these servers need and are skipped.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace aimem::probe {

class SseParser {
 public:
  // `max_line` bounds what one line may hold before feed() fails (a server
  // that never sends a newline cannot make the parser grow without bound).
  explicit SseParser(size_t max_line = 8u << 20) : max_line_(max_line) {}

  // Feeds bytes; calls on_event(data) for each complete event with at least
  // one data line. Returns false when a line exceeds max_line or on_event
  // returns false (then stops at once).
  bool feed(std::string_view bytes, const std::function<bool(std::string_view data)>& on_event);

  // Bytes of an unfinished event are pending (a stream that ends here was cut).
  bool pending() const { return !line_.empty() || has_data_; }

 private:
  bool end_line(const std::function<bool(std::string_view)>& on_event);

  size_t max_line_;
  std::string line_;
  std::string data_;
  bool has_data_ = false;
  bool after_cr_ = false;  // a CR ended the last line: a following LF belongs to it
};

// What one event of a completion stream carries.
struct StreamChunk {
  bool done = false;             // "data: [DONE]"
  std::string text;              // generated text in this chunk ("" when none)
  bool finished = false;         // a choice carried a non-null finish_reason
  bool has_choices = false;      // a "choices" array was there (even empty)
  std::optional<int> prompt_tokens;       // usage, when present
  std::optional<int> completion_tokens;
  std::optional<std::string> error;       // {"error": ...}: the server's message
  std::optional<int> error_code;          // error.code when numeric
};

enum class ChunkApi { completions, chat };

// Parses one event's data. nullopt when it is not a JSON object (the caller
// reports bad_json). Text is choices[0].text for completions and
// choices[0].delta.content for chat (a role-only first delta has none); a
// non-streamed body (choices[0].message.content) is read by the same function.
std::optional<StreamChunk> parse_chunk(std::string_view data, ChunkApi api);

}  // namespace aimem::probe
