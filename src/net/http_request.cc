#include "net/http_request.h"

#include <algorithm>
#include <cctype>

#include "net/http_head.h"

namespace aimem::net {

namespace {

using http_head::iequal;
using http_head::trim;

bool icontains(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i)
    if (iequal(hay.substr(i, needle.size()), needle)) return true;
  return false;
}

bool token_char(char c) {
  return std::isalnum((unsigned char)c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

RequestParse bad(std::string why) {
  RequestParse p;
  p.status = RequestParse::Status::bad;
  p.why = std::move(why);
  return p;
}

}  // namespace

RequestParse parse_request_head(std::string_view bytes) {
  RequestParse out;
  // The head ends at the first empty line: "\r\n\r\n" or "\n\n" (or mixed).
  size_t end = std::string_view::npos, length = 0;
  const size_t scan = std::min(bytes.size(), kMaxRequestHead);
  for (size_t i = 0; i < scan; ++i) {
    if (bytes[i] != '\n') continue;
    size_t j = i + 1;
    if (j < scan && bytes[j] == '\r') ++j;
    if (j < scan && bytes[j] == '\n') {
      end = i;
      length = j + 1;
      break;
    }
  }
  if (end == std::string_view::npos) {
    out.status = bytes.size() >= kMaxRequestHead ? RequestParse::Status::too_large : RequestParse::Status::incomplete;
    return out;
  }
  std::string_view head = bytes.substr(0, end);
  size_t eol = head.find('\n');
  std::string_view line = trim(head.substr(0, eol));
  // METHOD SP TARGET SP HTTP/1.x
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return bad("no request line");
  std::string_view method = line.substr(0, sp1);
  if (!std::all_of(method.begin(), method.end(), token_char)) return bad("bad method");
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return bad("no target or version");
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (target.front() != '/') return bad("the target is not a path");
  for (char c : target)
    if ((unsigned char)c <= ' ' || c == 0x7f) return bad("a control character in the target");
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." || (version[7] != '0' && version[7] != '1'))
    return bad("not HTTP/1.0 or HTTP/1.1");
  const bool http11 = version[7] == '1';
  std::string_view connection;
  bool has_body = false;
  size_t pos = eol == std::string_view::npos ? head.size() : eol + 1;
  while (pos < head.size()) {
    http_head::Field field = http_head::next_field(head, pos, "\n");
    if (!field.named) return bad("a header line without a name");
    std::string_view name = field.name, value = field.value;
    if (!std::all_of(name.begin(), name.end(), token_char)) return bad("a bad header name");
    if (iequal(name, "Connection")) connection = value;
    else if (iequal(name, "Transfer-Encoding")) has_body = true;
    else if (iequal(name, "Content-Length")) {
      if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return bad("a bad Content-Length");
      if (value.find_first_not_of('0') != std::string_view::npos) has_body = true;
    }
  }
  out.status = RequestParse::Status::ok;
  out.head.method = std::string(method);
  out.head.path = std::string(target.substr(0, target.find('?')));
  out.head.keep_alive = http11 ? !icontains(connection, "close") : icontains(connection, "keep-alive");
  out.head.length = length;
  out.head.has_body = has_body;
  return out;
}

}  // namespace aimem::net
