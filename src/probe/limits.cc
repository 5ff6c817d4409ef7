// The limits file: what `aimem probe --save-limits` measured, for `aimem check`.
#include "probe/limits.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/doc_reader.h"
#include "sources/readfile.h"

namespace aimem::probe {

using nlohmann::json;

namespace {

constexpr uint64_t kMaxFileBytes = 4ull << 20;  // a sweep writes a few KB
constexpr size_t kMaxPoints = 100000;

json point_json(const Point& p) { return json{{"context", p.context}, {"concurrency", p.concurrency}}; }

json optional_bytes(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

// Reads field `key` of object `o` as a non-negative integer; `where` names it in errors.
Result<int64_t> integer_field(const json& o, const char* key, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end()) return make_error(fmt::format("{}: field '{}' is missing", where, key));
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    return make_error(fmt::format("{}: field '{}': expected a non-negative integer, got {}", where, key, it->dump()));
  return it->get<int64_t>();
}

Result<Point> point_from(const json& o, const std::string& where) {
  if (!o.is_object()) return make_error(fmt::format("{}: expected an object {{context, concurrency}}", where));
  auto c = integer_field(o, "context", where);
  if (!c) return c.error();
  auto n = integer_field(o, "concurrency", where);
  if (!n) return n.error();
  return Point{*c, *n};
}

}  // namespace

bool Limits::covers(int64_t context, int64_t concurrency) const {
  for (const auto& p : safe)
    if (p.context >= context && p.concurrency >= concurrency) return true;
  return false;
}

std::string limits_to_json(const Limits& l) {
  json safe = json::array();
  for (const auto& p : l.safe) safe.push_back(point_json(p));
  json j = {
      {"aimem_limits", l.version},
      {"measured_at", l.measured_at},
      {"server", {{"url", l.url}, {"model", l.model}, {"kind", l.kind}}},
      {"max_new_tokens", l.max_new_tokens},
      {"headroom_pct", l.headroom_pct},
      {"safe", safe},
      {"breaking_point", l.breaking_point ? point_json(*l.breaking_point) : json(nullptr)},
      {"limits", {{"max_context", l.max_context}, {"max_concurrency", l.max_concurrency}}},
      {"peak_bytes",
       {{"process", optional_bytes(l.peak_process_bytes)},
        {"cgroup", optional_bytes(l.peak_cgroup_bytes)},
        {"gpu", optional_bytes(l.peak_gpu_bytes)}}},
  };
  return j.dump(2) + "\n";
}

Result<Limits> limits_from_json(const std::string& text, const std::string& file) {
  doc::Limits bounds;
  bounds.max_bytes = kMaxFileBytes;
  auto parsed = doc::parse_json(text, file, bounds);
  if (!parsed && parsed.error().message.find("not valid JSON") != std::string::npos)
    return make_error(fmt::format("{}: not JSON (expected a limits file from `aimem probe --save-limits`)", file));
  if (!parsed) return parsed.error();
  json j = std::move(*parsed);
  if (!j.is_object() || !j.contains("aimem_limits"))
    return make_error(fmt::format("{}: not an aimem limits file (no 'aimem_limits' field; write one with `aimem probe --save-limits`)", file));
  Limits l;
  if (!j["aimem_limits"].is_number_integer() || j["aimem_limits"].get<int64_t>() != 1)
    return make_error(fmt::format("{}: field 'aimem_limits': version {} is not supported (this aimem reads version 1)", file, j["aimem_limits"].dump()));
  if (j.contains("measured_at") && j["measured_at"].is_string()) l.measured_at = j["measured_at"].get<std::string>();
  if (j.contains("server") && j["server"].is_object()) {
    const auto& s = j["server"];
    for (auto [key, dst] : {std::pair{"url", &l.url}, {"model", &l.model}, {"kind", &l.kind}})
      if (s.contains(key) && s[key].is_string()) *dst = s[key].get<std::string>();
  }
  if (j.contains("max_new_tokens") && j["max_new_tokens"].is_number_integer()) l.max_new_tokens = j["max_new_tokens"].get<int64_t>();
  if (j.contains("headroom_pct")) {
    if (!j["headroom_pct"].is_number() || j["headroom_pct"].get<double>() < 0 || j["headroom_pct"].get<double>() >= 100)
      return make_error(fmt::format("{}: field 'headroom_pct': expected a number from 0 to 100", file));
    l.headroom_pct = j["headroom_pct"].get<double>();
  }
  auto safe = j.find("safe");
  if (safe == j.end() || !safe->is_array()) return make_error(fmt::format("{}: field 'safe': expected an array of {{context, concurrency}}", file));
  if (safe->size() > kMaxPoints) return make_error(fmt::format("{}: field 'safe': {} points (at most {})", file, safe->size(), kMaxPoints));
  for (size_t i = 0; i < safe->size(); ++i) {
    auto p = point_from((*safe)[i], fmt::format("{}: field 'safe[{}]'", file, i));
    if (!p) return p.error();
    l.safe.push_back(*p);
  }
  if (j.contains("breaking_point") && !j["breaking_point"].is_null()) {
    auto p = point_from(j["breaking_point"], fmt::format("{}: field 'breaking_point'", file));
    if (!p) return p.error();
    l.breaking_point = *p;
  }
  auto lim = j.find("limits");
  if (lim == j.end() || !lim->is_object()) return make_error(fmt::format("{}: field 'limits': expected {{max_context, max_concurrency}}", file));
  auto mc = integer_field(*lim, "max_context", file + ": field 'limits'");
  if (!mc) return mc.error();
  auto mn = integer_field(*lim, "max_concurrency", file + ": field 'limits'");
  if (!mn) return mn.error();
  l.max_context = *mc;
  l.max_concurrency = *mn;
  if (j.contains("peak_bytes") && j["peak_bytes"].is_object()) {
    const auto& pb = j["peak_bytes"];
    for (auto [key, dst] : {std::pair{"process", &l.peak_process_bytes}, {"cgroup", &l.peak_cgroup_bytes}, {"gpu", &l.peak_gpu_bytes}})
      if (pb.contains(key) && pb[key].is_number_unsigned()) *dst = pb[key].get<uint64_t>();
  }
  return l;
}

Result<Limits> read_limits_file(const std::string& path) {
  auto text = read_user_file(path, kMaxFileBytes, "limits file");
  if (!text) return text.error();
  return limits_from_json(*text, path);
}

Result<bool> write_limits_file(const std::string& path, const Limits& limits) {
  if (access(path.c_str(), F_OK) == 0) {
    auto old = read_limits_file(path);
    if (!old)
      return make_error(fmt::format("{}: exists and is not an aimem limits file; refusing to replace it (choose another path)", path));
  }
  std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(fmt::format("{}: cannot write ({})", tmp, std::strerror(errno)));
    out << limits_to_json(limits);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return make_error(fmt::format("{}: write failed ({})", tmp, std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    return make_error(fmt::format("{}: cannot rename into place ({})", path, std::strerror(e)));
  }
  return true;
}

}  // namespace aimem::probe
