#include "core/kmsg_record.h"

#include "core/text.h"

namespace aimem {

std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw) {
  std::string_view rest;
  auto prio = text::parse_u64(raw, &rest);
  if (!prio || rest.size() < 2 || rest[0] != ',') return std::nullopt;
  auto seq = text::parse_u64(rest.substr(1), &rest);
  if (!seq || rest.size() < 2 || rest[0] != ',') return std::nullopt;
  auto usec = text::parse_u64(rest.substr(1), &rest);
  size_t semi = rest.find(';');
  if (!usec || rest.empty() || rest[0] != ',' || semi == std::string_view::npos || semi >= 16) return std::nullopt;
  KmsgRecord r;
  r.uptime_us = static_cast<int64_t>(*usec);
  std::string_view body = rest.substr(semi + 1);
  // Dictionary continuation lines (" SUBSYSTEM=...") are not the message.
  if (size_t nl = body.find("\n "); nl != std::string_view::npos) body = body.substr(0, nl);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
  r.text = body;
  return r;
}

}  // namespace aimem
