// Server-sent events framing and OpenAI chunk reading (see sse.h).
#include "probe/sse.h"

#include <nlohmann/json.hpp>

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

}  // namespace

std::optional<StreamChunk> parse_chunk(std::string_view data, ChunkApi api) {
  StreamChunk c;
  if (data == "[DONE]") {
    c.done = true;
    return c;
  }
  nlohmann::json j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
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

}  // namespace aimem::probe
