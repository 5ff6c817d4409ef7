// Server-sent events framing and OpenAI chunk reading (see sse.h).
#include "probe/sse.h"

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/doc_reader.h"

namespace aimem::probe {

bool SseParser::feed(std::string_view bytes, const std::function<bool(std::string_view)>& on_event) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (after_cr_) {
      after_cr_ = false;
      if (bytes[i] == '\n') { ++i; continue; }
    }
    // Copy the run up to the next line end in one go: events are short, but a
    // stream is thousands of them and per-byte appends show in the profile.
    size_t end = bytes.find_first_of("\r\n", i);
    size_t stop = end == std::string_view::npos ? bytes.size() : end;
    if (line_.size() + (stop - i) > max_line_) return false;
    line_.append(bytes.data() + i, stop - i);
    if (end == std::string_view::npos) break;
    after_cr_ = bytes[end] == '\r';
    i = end + 1;
    if (!end_line(on_event)) return false;
  }
  return true;
}

bool SseParser::end_line(const std::function<bool(std::string_view)>& on_event) {
  if (line_.empty()) {  // blank line: the event is complete
    if (!has_data_) return true;
    has_data_ = false;
    bool go = on_event(data_);
    data_.clear();
    return go;
  }
  std::string_view l = line_;
  if (l.front() != ':') {  // ":" starts a comment (keep-alives)
    size_t colon = l.find(':');
    std::string_view field = l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) data_ += '\n';
      if (data_.size() + value.size() > max_line_) return false;
      data_.append(value);
      has_data_ = true;
    }
  }
  line_.clear();
  return true;
}

namespace {

std::optional<int> int_field(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

// The whole-document reading: kept for bodies that carry an "error" (rare,
// and their message may be any JSON, which the DOM can dump as it was sent).
std::optional<StreamChunk> parse_chunk_dom(std::string_view data, ChunkApi api) {
  StreamChunk c;
  nlohmann::json j = doc::parse_json_or_discarded(data);
  if (!j.is_object()) return std::nullopt;
  if (auto e = j.find("error"); e != j.end() && !e->is_null()) {
    // OpenAI: {"error": {"message", "type", "code"}}; some servers send a string.
    if (e->is_string()) {
      c.error = e->get<std::string>();
    } else if (e->is_object()) {
      auto m = e->find("message");
      c.error = m != e->end() && m->is_string() ? m->get<std::string>() : e->dump();
      c.error_code = int_field(*e, "code");
    } else {
      c.error = e->dump();
    }
    return c;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    c.prompt_tokens = int_field(*u, "prompt_tokens");
    c.completion_tokens = int_field(*u, "completion_tokens");
  }
  auto ch = j.find("choices");
  c.has_choices = ch != j.end() && ch->is_array();
  if (ch != j.end() && ch->is_array() && !ch->empty() && (*ch)[0].is_object()) {
    const auto& first = (*ch)[0];
    const nlohmann::json* text = nullptr;
    if (api == ChunkApi::completions) {
      if (auto t = first.find("text"); t != first.end()) text = &*t;
    } else {
      for (const char* holder : {"delta", "message"}) {
        auto d = first.find(holder);
        if (d == first.end() || !d->is_object()) continue;
        if (auto t = d->find("content"); t != d->end()) text = &*t;
        break;
      }
    }
    if (text && text->is_string()) c.text = text->get<std::string>();
    if (auto f = first.find("finish_reason"); f != first.end() && !f->is_null()) c.finished = true;
  }
  return c;
}

// The streaming reading: nlohmann's SAX interface, which builds no document.
// A stream is thousands of small events and the DOM's maps and strings for
// each were most of the client's own CPU per request (bench/probe_client_bench);
// this keeps only the fields parse_chunk returns, with the DOM's semantics
// (a repeated key: the last one counts; a field of the wrong type: absent).
// Where the value of interest sits is a small state per open container:
//   root {"usage": usage{prompt_tokens, completion_tokens},
//         "choices": choices[choice0{"text", "finish_reason",
//                                    "delta": holder{"content"}, "message": holder{"content"}}, ...],
//         "error": anything non-null -> the DOM reading}
// Everything else is skipped by depth alone.
class ChunkSax {
 public:
  using json = nlohmann::json;
  explicit ChunkSax(ChunkApi api) : api_(api) {}

  bool null() { return scalar(Scalar::null); }
  bool boolean(bool) { return scalar(Scalar::other); }
  bool number_integer(json::number_integer_t v) { return scalar(Scalar::integer, static_cast<int>(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(Scalar::integer, static_cast<int>(v)); }
  bool number_float(json::number_float_t, const json::string_t&) { return scalar(Scalar::other); }
  bool string(json::string_t& s) { return scalar(Scalar::string, 0, &s); }
  bool binary(json::binary_t&) { return scalar(Scalar::other); }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    if (skip_ == 0) key_ = key_of(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  bool not_object = false;     // the document is not an object (or not JSON: parse_error)
  bool has_error = false;      // a non-null "error": read it with the DOM
  StreamChunk chunk;

  void finish() {
    if (api_ == ChunkApi::completions) {
      chunk.text = std::move(text_);
    } else if (delta_object_) {
      chunk.text = std::move(delta_text_);
    } else if (message_object_) {
      chunk.text = std::move(message_text_);
    }
  }

 private:
  enum class Tag : unsigned char { root, usage, choices, choice0, delta, message };
  enum class Key : unsigned char { other, error, usage, choices, prompt_tokens, completion_tokens, text,
                                   finish_reason, delta, message, content };
  enum class Scalar : unsigned char { null, integer, string, other, object, array };

  static Key key_of(const std::string& k) {
    switch (k.size()) {
      case 4: return k == "text" ? Key::text : Key::other;
      case 5: return k == "error" ? Key::error : k == "usage" ? Key::usage : k == "delta" ? Key::delta : Key::other;
      case 7: return k == "choices" ? Key::choices : k == "message" ? Key::message : k == "content" ? Key::content : Key::other;
      case 13: return k == "finish_reason" ? Key::finish_reason : k == "prompt_tokens" ? Key::prompt_tokens : Key::other;
      case 17: return k == "completion_tokens" ? Key::completion_tokens : Key::other;
      default: return Key::other;
    }
  }

  struct Frame {
    Tag tag;
    bool array;
    int index;  // arrays: elements so far
  };

  // A value at the current position: what it sets, and for a container the
  // tag it opens (nullopt: an uninteresting subtree).
  std::optional<Tag> place(Scalar kind, int number, json::string_t* s) {
    Frame& at = frames_[depth_ - 1];
    if (at.array) {
      // Only choices[0] matters.
      return at.tag == Tag::choices && at.index++ == 0 && kind == Scalar::object ? std::optional<Tag>(Tag::choice0)
                                                                                  : std::nullopt;
    }
    const Key k = key_;
    key_ = Key::other;
    switch (at.tag) {
      case Tag::root:
        if (k == Key::error) {
          if (kind != Scalar::null) has_error = true;
        } else if (k == Key::usage) {
          chunk.prompt_tokens.reset();
          chunk.completion_tokens.reset();
          if (kind == Scalar::object) return Tag::usage;
        } else if (k == Key::choices) {
          chunk.has_choices = kind == Scalar::array;
          text_.clear();
          delta_text_.clear();
          message_text_.clear();
          delta_object_ = message_object_ = false;
          chunk.finished = false;
          if (kind == Scalar::array) return Tag::choices;
        }
        return std::nullopt;
      case Tag::usage:
        if (k == Key::prompt_tokens || k == Key::completion_tokens) {
          std::optional<int> v = kind == Scalar::integer ? std::optional<int>(number) : std::nullopt;
          (k == Key::prompt_tokens ? chunk.prompt_tokens : chunk.completion_tokens) = v;
        }
        return std::nullopt;
      case Tag::choice0:
        if (k == Key::finish_reason) {
          chunk.finished = kind != Scalar::null;
        } else if (k == Key::text && api_ == ChunkApi::completions) {
          assign(text_, kind, s);
        } else if (api_ == ChunkApi::chat && (k == Key::delta || k == Key::message)) {
          const bool delta = k == Key::delta;
          (delta ? delta_object_ : message_object_) = kind == Scalar::object;
          (delta ? delta_text_ : message_text_).clear();
          if (kind == Scalar::object) return delta ? Tag::delta : Tag::message;
        }
        return std::nullopt;
      case Tag::delta:
      case Tag::message:
        if (k == Key::content) assign(at.tag == Tag::delta ? delta_text_ : message_text_, kind, s);
        return std::nullopt;
      case Tag::choices:
        return std::nullopt;
    }
    return std::nullopt;
  }

  static void assign(std::string& to, Scalar kind, json::string_t* s) {
    if (kind == Scalar::string) to.swap(*s);
    else to.clear();
  }

  bool scalar(Scalar kind, int number = 0, json::string_t* s = nullptr) {
    if (depth_ == 0) return !(not_object = true);
    if (skip_ == 0) place(kind, number, s);
    return true;
  }

  bool open(bool object) {  // a JSON object or array begins (SAX), not a file
    if (depth_ == 0 && skip_ == 0) {
      if (!object) return !(not_object = true);
      frames_[depth_++] = {Tag::root, false, 0};
      return true;
    }
    if (skip_ > 0) return ++skip_, true;
    auto tag = place(object ? Scalar::object : Scalar::array, 0, nullptr);
    if (!tag) return ++skip_, true;
    frames_[depth_++] = {*tag, !object, 0};
    key_ = Key::other;
    return true;
  }

  bool close() {
    if (skip_ > 0) return --skip_, true;
    --depth_;
    return true;
  }

  ChunkApi api_;
  // At most root, choices, choice0 and delta or message: deeper containers
  // are never tagged, only counted in skip_.
  std::array<Frame, 4> frames_{};
  int depth_ = 0;
  int skip_ = 0;
  Key key_ = Key::other;
  std::string text_, delta_text_, message_text_;
  bool delta_object_ = false, message_object_ = false;
};

}  // namespace

std::optional<StreamChunk> parse_chunk(std::string_view data, ChunkApi api) {
  if (data == "[DONE]") {
    StreamChunk c;
    c.done = true;
    return c;
  }
  ChunkSax sax(api);
  const bool parsed = nlohmann::json::sax_parse(data.begin(), data.end(), &sax);
  if (sax.has_error) return parse_chunk_dom(data, api);
  if (!parsed || sax.not_object) return std::nullopt;
  sax.finish();
  return std::move(sax.chunk);
}

}  // namespace aimem::probe
