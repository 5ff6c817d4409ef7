// ResponseReader (see http_response.h): a state machine over the bytes as
// they come, so that the socket loop (http_client.cc) and the fuzz target
// share one reading of responses.
#include "net/http_response.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"
#include "net/http_head.h"

namespace aimem::net {

namespace {

constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxChunkLine = 1024;

using http_head::iequal;
using http_head::trim;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Head::field(std::string_view name) const {
  for (const auto& [k, v] : fields)
    if (iequal(k, name)) return v;
  return "";
}

ResponseReader::Step ResponseReader::fail(Step s, std::string detail) {
  detail_ = std::move(detail);
  state_ = State::done;
  return s;
}

ResponseReader::Step ResponseReader::feed(std::string_view in, const Receiver& receiver) {
  if (!in.empty()) started_ = true;
  while (!in.empty()) {
    if (state_ == State::done) {
      extra_ = true;
      return Step::done;
    }
    if (state_ == State::head) {
      // Search only where the end could be: the new bytes and the 3 before them.
      const size_t from = buf_.size() > 3 ? buf_.size() - 3 : 0;
      const size_t room = kMaxHead + 4 - std::min(buf_.size(), kMaxHead + 4);
      const size_t take = std::min(in.size(), room);
      buf_.append(in.substr(0, take));
      size_t end = buf_.find("\r\n\r\n", from);
      if (end == std::string::npos) {
        if (buf_.size() > kMaxHead) return fail(Step::bad_response, fmt::format("response head longer than {} bytes", kMaxHead));
        in.remove_prefix(take);
        continue;
      }
      // Bytes after the head's end go back to the input.
      const size_t used = end + 4 - (buf_.size() - take);
      buf_.resize(end + 4);
      in.remove_prefix(used);
      Step s = parse_head(receiver);
      if (s != Step::more) return s;
      continue;
    }
    Step s = body(in, receiver);
    if (s != Step::more) return s;
  }
  return state_ == State::done ? Step::done : Step::more;
}

ResponseReader::Step ResponseReader::parse_head(const Receiver& receiver) {
  std::string_view h(buf_.data(), buf_.size() - 4);
  size_t eol = h.find("\r\n");
  std::string_view status_line = h.substr(0, eol);
  // "HTTP/1.x SSS reason"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
      !std::isdigit((unsigned char)status_line[9]) || !std::isdigit((unsigned char)status_line[10]) ||
      !std::isdigit((unsigned char)status_line[11]))
    return fail(Step::bad_response, "not an HTTP/1.x response: " + text::quote_line(status_line, 80));
  Head head;
  head.status = (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');
  const bool http11 = status_line[7] == '1';
  size_t pos = eol == std::string_view::npos ? h.size() : eol + 2;
  while (pos < h.size()) {
    http_head::Field field = http_head::next_field(h, pos, "\r\n");
    if (!field.named) continue;  // tolerate junk lines
    head.fields.emplace_back(std::string(trim(field.name)), std::string(field.value));
  }
  buf_.clear();
  if (head.status >= 100 && head.status < 200) return Step::more;  // 100 Continue and friends: the real head follows
  head_ = std::move(head);
  got_head_ = true;
  keep_alive_ = http11 ? !text::icontains(head_.field("Connection"), "close") : text::icontains(head_.field("Connection"), "keep-alive");
  if (receiver.on_head && !receiver.on_head(head_)) return fail(Step::stopped, "stopped by the receiver");

  const int s = head_.status;
  const std::string cl = head_.field("Content-Length");
  if (head_request_ || s == 204 || s == 304) {
    state_ = State::done;
  } else if (text::icontains(head_.field("Transfer-Encoding"), "chunked")) {
    state_ = State::chunk_size;
  } else if (!cl.empty()) {
    uint64_t n = 0;
    for (char c : cl) {
      if (!std::isdigit((unsigned char)c) || n > (UINT64_MAX - 9) / 10)
        return fail(Step::bad_response, "bad Content-Length " + text::quote_line(cl, 40));
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    left_ = n;
    state_ = n == 0 ? State::done : State::length;
  } else {
    keep_alive_ = false;  // the body runs until the server closes
    state_ = State::until_close;
  }
  return state_ == State::done ? Step::done : Step::more;
}

ResponseReader::Step ResponseReader::body(std::string_view& in, const Receiver& receiver) {
  auto deliver = [&](std::string_view piece) { return piece.empty() || !receiver.on_body || receiver.on_body(piece); };
  switch (state_) {
    case State::length:
    case State::chunk_data: {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(left_, in.size()));
      const bool go = deliver(in.substr(0, take));
      in.remove_prefix(take);
      left_ -= take;
      if (!go) return fail(Step::stopped, "stopped by the receiver");
      if (left_ == 0) {
        if (state_ == State::length) {
          state_ = State::done;
          return Step::done;
        }
        state_ = State::chunk_crlf;
        crlf_seen_ = 0;
      }
      return Step::more;
    }
    case State::until_close: {
      const bool go = deliver(in);
      in.remove_prefix(in.size());
      if (!go) return fail(Step::stopped, "stopped by the receiver");
      return Step::more;
    }
    case State::chunk_crlf: {
      while (!in.empty() && crlf_seen_ < 2) {
        if (in.front() != (crlf_seen_ == 0 ? '\r' : '\n')) return fail(Step::bad_response, "chunk not followed by CRLF");
        in.remove_prefix(1);
        ++crlf_seen_;
      }
      if (crlf_seen_ == 2) state_ = State::chunk_size;
      return Step::more;
    }
    case State::chunk_size:
    case State::trailers: {
      size_t nl = in.find('\n');
      std::string_view part = in.substr(0, nl == std::string_view::npos ? in.size() : nl + 1);
      const size_t bound = state_ == State::chunk_size ? kMaxChunkLine : kMaxHead;
      if (buf_.size() + part.size() > bound + 2)
        return fail(Step::bad_response, state_ == State::chunk_size ? "chunk-size line too long" : "trailer too long");
      buf_.append(part);
      in.remove_prefix(part.size());
      if (nl == std::string_view::npos) return Step::more;
      // A whole line, ending in "\n": it must be "\r\n".
      if (buf_.size() < 2 || buf_[buf_.size() - 2] != '\r') {
        return fail(Step::bad_response, state_ == State::chunk_size ? "bad chunk size " + text::quote_line(buf_, 40)
                                                                       : "trailer line not ended by CRLF");
      }
      std::string_view line(buf_.data(), buf_.size() - 2);
      if (state_ == State::trailers) {
        trailer_bytes_ += buf_.size();
        const bool last = line.empty();
        buf_.clear();
        if (trailer_bytes_ > kMaxHead) return fail(Step::bad_response, "trailer too long");
        if (last) {
          state_ = State::done;
          return Step::done;
        }
        return Step::more;
      }
      uint64_t size = 0;
      size_t digits = 0;
      for (char c : line) {
        int v = hex_digit(c);
        if (v < 0) break;
        if (++digits > 15) break;
        size = size * 16 + static_cast<uint64_t>(v);
      }
      if (digits == 0 || digits > 15) return fail(Step::bad_response, "bad chunk size " + text::quote_line(line, 40));
      buf_.clear();
      if (size == 0) {
        state_ = State::trailers;
      } else {
        left_ = size;
        state_ = State::chunk_data;
      }
      return Step::more;
    }
    case State::head:
    case State::done:
      break;
  }
  return Step::more;
}

ResponseReader::Step ResponseReader::closed() {
  switch (state_) {
    case State::done:
      return Step::done;
    case State::until_close:
      state_ = State::done;
      return Step::done;
    case State::head:
      return fail(Step::reset, buf_.empty() ? "connection closed before any response" : "connection closed inside the response head");
    case State::length:
      return fail(Step::reset, fmt::format("connection closed with {} bytes of the body still to come", left_));
    default:
      return fail(Step::reset, "connection closed in the middle of a chunked body");
  }
}

}  // namespace aimem::net
