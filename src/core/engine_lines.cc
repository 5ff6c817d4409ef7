#include "core/engine_lines.h"

#include <cctype>

#include "core/text.h"
#include "core/units.h"

namespace aimem::engine_lines {
namespace {

std::optional<SignedSize> signed_size(std::string_view t) {
  t = text::trim_left(t);
  bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  auto n = units::parse_log_size(t);
  if (!n) return std::nullopt;
  return SignedSize{*n, negative && *n > 0};
}

}  // namespace

std::optional<uint64_t> vllm_weights(std::string_view line) {
  for (std::string_view lead : {"Loading model weights took ", "Model loading took "})
    if (auto v = text::after(line, lead)) return units::parse_log_size(*v);
  return std::nullopt;
}

std::optional<SignedSize> vllm_kv_available(std::string_view line) {
  for (std::string_view lead : {"KV cache memory:", "reserved for KV Cache is"})
    if (auto v = text::after(line, lead)) return signed_size(*v);
  return std::nullopt;
}

std::optional<uint64_t> vllm_gpu_blocks(std::string_view line) {
  auto v = text::after(line, "GPU blocks:");
  if (!v) return std::nullopt;
  return text::parse_grouped_u64(text::trim_left(*v));
}

std::optional<uint64_t> vllm_kv_tokens(std::string_view line) {
  auto v = text::after(line, "GPU KV cache size:");
  if (!v) return std::nullopt;
  std::string_view rest;
  auto n = text::parse_grouped_u64(text::trim_left(*v), &rest);
  if (!n || !text::starts_with(text::trim_left(rest), "tokens")) return std::nullopt;
  return n;
}

std::optional<SignedSize> size_of_key(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view r = line.substr(at + key.size());
  while (!r.empty() && (r[0] == ' ' || r[0] == '=' || r[0] == ':' || r[0] == '(')) r.remove_prefix(1);
  if (text::starts_with(r, "takes")) r.remove_prefix(5);
  return signed_size(r);
}

std::optional<double> number_after(std::string_view s, std::string_view key) {
  size_t p = 0;
  while ((p = s.find(key, p)) != std::string_view::npos) {
    // The key must start there: "max_total_tokens" is not "full_max_total_tokens".
    bool starts = p == 0 || !(std::isalnum(static_cast<unsigned char>(s[p - 1])) || s[p - 1] == '_');
    p += key.size();
    if (!starts) continue;
    std::string_view t = s.substr(p);
    if (!t.empty() && (t[0] == '=' || t[0] == ' ')) t.remove_prefix(1);
    else continue;
    if (auto v = text::parse_double(text::trim_left(t)); v && *v >= 0) return v;
  }
  return std::nullopt;
}

std::optional<uint64_t> count_after(std::string_view s, std::string_view key) {
  auto v = number_after(s, key);
  if (!v || *v < 1 || *v > 1e12) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<uint64_t> llamacpp_setting(std::string_view s, std::string_view key) {
  // The key right after the function prefix, then spaces and '=' or ':'
  // (not "retrying ..., n_batch = 256").
  size_t p = s.find(key);
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view before = text::trim(s.substr(0, p));
  if (!before.empty() && before.back() != ':') return std::nullopt;
  std::string_view t = text::trim_left(s.substr(p + key.size()));
  if (t.empty() || (t[0] != '=' && t[0] != ':')) return std::nullopt;
  return text::parse_u64(text::trim_left(t.substr(1)));
}

std::optional<uint64_t> llamacpp_size(std::string_view s, std::string_view label) {
  auto v = text::iafter(s, label);
  if (!v) return std::nullopt;
  std::string_view t = text::trim_left(*v);
  if (t.empty() || (t[0] != '=' && t[0] != ':')) return std::nullopt;
  return units::parse_log_size(t.substr(1));
}

}  // namespace aimem::engine_lines
