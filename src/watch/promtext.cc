// Prometheus text format parser (see promtext.h for the format and limits).
#include "watch/promtext.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "core/text.h"

namespace aimem::watch {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
bool label_start(char c) { return name_start(c) && c != ':'; }
bool label_char(char c) { return label_start(c) || (c >= '0' && c <= '9'); }

void skip_blanks(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

// Go's strconv.ParseFloat forms that Prometheus writes and reads: decimal,
// exponent, Inf/+Inf/-Inf, NaN (any case).
std::optional<double> parse_value(std::string_view t) {
  if (text::iequals(t, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (text::iequals(t, "inf") || text::iequals(t, "+inf")) return std::numeric_limits<double>::infinity();
  if (text::iequals(t, "-inf")) return -std::numeric_limits<double>::infinity();
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  if (t.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

// Timestamps: integer milliseconds (0.0.4) or float seconds (OpenMetrics).
std::optional<int64_t> parse_timestamp(std::string_view t) {
  int64_t ms = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), ms);
  if (ec == std::errc() && p == t.data() + t.size()) return ms;
  auto v = parse_value(t);
  if (!v || !std::isfinite(*v) || std::fabs(*v) > 9.2e15) return std::nullopt;
  return static_cast<int64_t>(*v * 1000.0);
}

// Parses `name{labels}` from s at i; returns an error message or "".
std::string parse_series(std::string_view s, size_t& i, const PromLimits& lim, std::string& name,
                         std::vector<std::pair<std::string, std::string>>& labels) {
  size_t start = i;
  if (i >= s.size() || !name_start(s[i])) return "expected a metric name";
  while (i < s.size() && name_char(s[i])) ++i;
  if (i - start > lim.max_label_bytes) return "metric name too long";
  name.assign(s.substr(start, i - start));
  skip_blanks(s, i);
  if (i >= s.size() || s[i] != '{') return "";
  ++i;
  for (;;) {
    skip_blanks(s, i);
    if (i >= s.size()) return "unterminated label set (missing '}')";
    if (s[i] == '}') { ++i; return ""; }
    size_t ls = i;
    if (!label_start(s[i])) return fmt::format("bad label name at column {}", i + 1);
    while (i < s.size() && label_char(s[i])) ++i;
    std::string key(s.substr(ls, i - ls));
    if (key.size() > lim.max_label_bytes) return "label name too long";
    skip_blanks(s, i);
    if (i >= s.size() || s[i] != '=') return fmt::format("expected '=' after label {}", key);
    ++i;
    skip_blanks(s, i);
    if (i >= s.size() || s[i] != '"') return fmt::format("expected '\"' to open the value of label {}", key);
    ++i;
    std::string val;
    for (;;) {
      if (i >= s.size()) return fmt::format("unterminated value of label {}", key);
      char c = s[i++];
      if (c == '"') break;
      if (c == '\\') {
        if (i >= s.size()) return fmt::format("unterminated value of label {}", key);
        char e = s[i++];
        if (e == 'n') val += '\n';
        else if (e == '\\' || e == '"') val += e;
        else return fmt::format("bad escape \\{} in label {}", e, key);
      } else {
        val += c;
      }
      if (val.size() > lim.max_label_bytes) return fmt::format("value of label {} longer than {} bytes", key, lim.max_label_bytes);
    }
    if (labels.size() >= lim.max_labels) return fmt::format("more than {} labels", lim.max_labels);
    labels.emplace_back(std::move(key), std::move(val));
    skip_blanks(s, i);
    if (i < s.size() && s[i] == ',') ++i;
    else if (i < s.size() && s[i] != '}') return fmt::format("expected ',' or '}}' at column {}", i + 1);
  }
}

bool known_type(std::string_view t) {
  for (std::string_view k : {"counter", "gauge", "histogram", "summary", "untyped", "unknown", "info",
                             "stateset", "gaugehistogram"})
    if (t == k) return true;
  return false;
}

}  // namespace

Result<PromText> parse_prom_text(std::string_view body, const PromLimits& lim,
                                 const std::function<bool(std::string_view)>& keep) {
  if (body.size() > lim.max_bytes)
    return make_error(fmt::format("metrics body of {} bytes is over the {} byte limit", body.size(), lim.max_bytes));
  PromText out;
  size_t nsamples = 0;
  size_t line_no = 0;
  auto skip = [&](std::string why) {
    ++out.skipped;
    if (out.skipped_examples.size() < 5) out.skipped_examples.push_back(fmt::format("line {}: {}", line_no, why));
  };
  size_t pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    std::string_view line = body.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? body.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view t = text::trim(line);
    if (t.empty()) continue;
    if (out.eof) { skip("text after # EOF"); continue; }
    if (t[0] == '#') {
      std::string_view rest = text::trim_left(t.substr(1));
      if (rest == "EOF") { out.eof = true; continue; }
      bool is_help = rest == "HELP" || text::starts_with(rest, "HELP ") || text::starts_with(rest, "HELP\t");
      bool is_type = rest == "TYPE" || text::starts_with(rest, "TYPE ") || text::starts_with(rest, "TYPE\t");
      if (!is_help && !is_type) continue;  // a plain comment
      rest = text::trim_left(rest.substr(4));
      std::string_view name = text::first_word(rest);
      std::string_view what = text::trim(rest.substr(name.size()));
      if (name.empty() || !name_start(name[0])) { skip("HELP/TYPE without a metric name"); continue; }
      if (is_type) {
        if (!known_type(what)) { skip(fmt::format("unknown TYPE '{}'", text::quote_line(what, 40))); continue; }
        if (!keep || keep(name)) out.type[std::string(name)] = std::string(what);
      } else if (!keep || keep(name)) {
        out.help[std::string(name)] = std::string(what.substr(0, lim.max_label_bytes));
      }
      continue;
    }
    if (t[0] == '{') { skip("UTF-8 quoted metric name (not read)"); continue; }
    PromSample s;
    size_t i = 0;
    std::string err = parse_series(t, i, lim, s.name, s.labels);
    if (!err.empty()) return make_error(fmt::format("line {}: {}: {}", line_no, err, text::quote_line(t, 120)));
    skip_blanks(t, i);
    size_t vs = i;
    while (i < t.size() && t[i] != ' ' && t[i] != '\t') ++i;
    if (vs == i) return make_error(fmt::format("line {}: sample {} has no value", line_no, s.name));
    auto v = parse_value(t.substr(vs, i - vs));
    if (!v) return make_error(fmt::format("line {}: bad value '{}' for {}", line_no, text::quote_line(t.substr(vs, i - vs), 40), s.name));
    s.value = *v;
    skip_blanks(t, i);
    if (i < t.size() && t[i] != '#') {
      size_t ts = i;
      while (i < t.size() && t[i] != ' ' && t[i] != '\t') ++i;
      s.timestamp_ms = parse_timestamp(t.substr(ts, i - ts));
      if (!s.timestamp_ms) return make_error(fmt::format("line {}: bad timestamp '{}' for {}", line_no, text::quote_line(t.substr(ts, i - ts), 40), s.name));
      skip_blanks(t, i);
    }
    // An OpenMetrics exemplar (` # {trace_id="..."} 1.0`) is allowed and ignored.
    if (i < t.size() && t[i] != '#')
      return make_error(fmt::format("line {}: unexpected text after the value of {}: {}", line_no, s.name, text::quote_line(t.substr(i), 60)));
    if (++nsamples > lim.max_samples)
      return make_error(fmt::format("line {}: more than {} samples", line_no, lim.max_samples));
    if (!keep || keep(s.name)) out.samples.push_back(std::move(s));
  }
  return out;
}

bool PromSelector::matches(const PromSample& s) const {
  if (s.name != name) return false;
  for (const auto& [k, v] : labels)
    if (label_of(s, k) != v) return false;
  return true;
}

Result<PromSelector> parse_selector(std::string_view textv) {
  std::string_view t = text::trim(textv);
  PromSelector sel;
  size_t i = 0;
  std::string err = parse_series(t, i, PromLimits{}, sel.name, sel.labels);
  if (err.empty() && i != t.size()) err = "unexpected text after the selector";
  if (!err.empty()) return make_error(fmt::format("metric selector '{}': {}", text::quote_line(t, 80), err));
  return sel;
}

std::string_view label_of(const PromSample& s, std::string_view key) {
  for (const auto& [k, v] : s.labels)
    if (k == key) return v;
  return {};
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_prom_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

}  // namespace aimem::watch
