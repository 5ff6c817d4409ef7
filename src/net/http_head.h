// What the two ends of aimem's HTTP/1.x share in reading a head: the
// request's (http_request.cc, the server) and the response's
// (http_response.cc, the client) header lines are cut and trimmed the same
// way; each end decides what a line without a name means (the server refuses
// it, the client passes over it).
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace aimem::net::http_head {

inline bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower((unsigned char)x) == std::tolower((unsigned char)y);
         });
}

// Without the spaces and tabs around it, and a CR at its end.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// One "Name: value" line. `name` is as written (not trimmed); `named` is
// false for a line without a colon or with nothing before it.
struct Field {
  std::string_view name, value;
  bool named = false;
};

// The header line of `head` at `pos`, lines ending at `eol` ("\n" or
// "\r\n"); `pos` moves past it.
inline Field next_field(std::string_view head, size_t& pos, std::string_view eol) {
  size_t next = head.find(eol, pos);
  if (next == std::string_view::npos) next = head.size();
  std::string_view line = head.substr(pos, next - pos);
  pos = next + eol.size();
  Field f;
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return f;
  f.named = true;
  f.name = line.substr(0, colon);
  f.value = trim(line.substr(colon + 1));
  return f;
}

}  // namespace aimem::net::http_head
