// See prom_response.h for the layout of the answer.
#include "sources/prom_response.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace aimem::prom {
namespace {

using nlohmann::json;

// The deepest nesting of [ and { outside strings: checked before the DOM is
// built, so a hostile answer of a million brackets costs a scan, not a tree.
size_t nesting(std::string_view s) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return deepest;
}

std::string opening(std::string_view body) {
  std::string_view t = text::trim(body);
  return text::printable(t.substr(0, std::min<size_t>(t.size(), 40)));
}

// [t, "v"]: false when it is not that shape.
bool read_point(const json& p, Point* out) {
  if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_string()) return false;
  double t = p[0].get<double>();
  if (!std::isfinite(t) || std::fabs(t) > 1e12) return false;
  const std::string& v = p[1].get_ref<const std::string&>();
  char* end = nullptr;
  double value = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0') return false;
  out->t_ms = static_cast<int64_t>(std::llround(t * 1000.0));
  out->v = value;
  return true;
}

}  // namespace

const std::string& Series::label(std::string_view name) const {
  static const std::string none;
  for (const auto& [k, v] : labels)
    if (k == name) return v;
  return none;
}

Result<Response> parse_response(std::string_view body, const ParseLimits& limits) {
  if (text::trim(body).empty()) return make_error("an empty answer (not the Prometheus HTTP API)");
  if (nesting(body) > limits.max_depth)
    return make_error(fmt::format("JSON nested deeper than {} levels: not a Prometheus API answer", limits.max_depth));
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded())
    return make_error(fmt::format("not JSON (the answer starts with '{}'): is the URL a Prometheus server?", opening(body)));
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string())
    return make_error("JSON without a \"status\": not a Prometheus API answer");
  const std::string& status = j["status"].get_ref<const std::string&>();
  if (status != "success") {
    std::string type = j.contains("errorType") && j["errorType"].is_string() ? j["errorType"].get<std::string>() : "?";
    std::string err = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "(no message)";
    return make_error(fmt::format("Prometheus answered {} {}: {}", text::printable(status), text::printable(type),
                                  text::quote_line(err, 300)));
  }
  Response r;
  if (j.contains("warnings") && j["warnings"].is_array())
    for (const auto& w : j["warnings"])
      if (w.is_string() && r.warnings.size() < 8) r.warnings.push_back(text::quote_line(w.get<std::string>(), 300));
  if (!j.contains("data") || !j["data"].is_object()) return make_error("a success answer without \"data\"");
  const json& data = j["data"];
  if (!data.contains("resultType") || !data["resultType"].is_string() || !data.contains("result") || !data["result"].is_array())
    return make_error("\"data\" without \"resultType\" and a \"result\" array");
  r.result_type = data["resultType"].get<std::string>();
  if (r.result_type != "matrix" && r.result_type != "vector")
    return make_error(fmt::format("result type '{}' where a vector or matrix was expected", text::printable(r.result_type)));
  const bool matrix = r.result_type == "matrix";
  for (const json& item : data["result"]) {
    if (r.series.size() >= limits.max_series) {
      ++r.series_dropped;
      continue;
    }
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object())
      return make_error("a result without its \"metric\" labels");
    Series s;
    for (const auto& [k, v] : item["metric"].items())
      if (v.is_string()) s.labels.emplace_back(k, v.get<std::string>());
    std::vector<const json*> points;
    if (matrix) {
      if (!item.contains("values") || !item["values"].is_array()) return make_error("a matrix result without \"values\"");
      for (const json& p : item["values"]) points.push_back(&p);
    } else {
      if (!item.contains("value")) return make_error("a vector result without \"value\"");
      points.push_back(&item["value"]);
    }
    for (const json* p : points) {
      Point pt;
      if (!read_point(*p, &pt)) return make_error("a sample that is not [time, \"value\"]");
      if (std::isnan(pt.v)) continue;
      if (s.points.size() >= limits.max_points) {
        ++r.points_dropped;
        continue;
      }
      s.points.push_back(pt);
    }
    std::stable_sort(s.points.begin(), s.points.end(), [](const Point& a, const Point& b) { return a.t_ms < b.t_ms; });
    r.series.push_back(std::move(s));
  }
  return r;
}

std::string quote(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out + "\"";
}

std::string url_encode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

int64_t step_for(int64_t range_s, int64_t max_points) {
  if (range_s <= 0 || max_points <= 1) return 1;
  return std::max<int64_t>(1, (range_s + max_points - 2) / (max_points - 1));
}

std::string describe(std::string_view metric, const Series& s, const std::vector<std::string>& names) {
  std::string out = std::string(metric) + "{";
  bool first = true;
  for (const auto& n : names) {
    const std::string& v = s.label(n);
    if (v.empty()) continue;
    out += fmt::format("{}{}={}", first ? "" : ",", n, quote(v));
    first = false;
  }
  return text::printable(out + "}");
}

}  // namespace aimem::prom
