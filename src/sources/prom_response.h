// The Prometheus HTTP API as aimem reads it for `aimem diagnose
// --prometheus`: the answer of /api/v1/query and /api/v1/query_range taken
// apart by a pure parser (bytes in, series out; the fuzz target's entry
// point), and the few helpers that write a query: PromQL label matchers,
// URL encoding, the step of a bounded range.
//
// The answer (https://prometheus.io/docs/prometheus/latest/querying/api/):
//   {"status":"success","data":{"resultType":"matrix","result":[
//     {"metric":{"__name__":"x","pod":"p"},"values":[[1700000000.5,"1.5"],...]}]},
//    "warnings":["..."]}
// a "vector" carries one "value":[t,"v"] per series instead; an error is
//   {"status":"error","errorType":"bad_data","error":"parse error ..."}
// Values are strings ("NaN", "+Inf" too); times are seconds as numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace aimem::prom {

struct Point {
  int64_t t_ms = 0;
  double v = 0;
};

struct Series {
  std::vector<std::pair<std::string, std::string>> labels;  // as Prometheus sent them, __name__ included
  std::vector<Point> points;                                // in time order; NaN samples left out
  // The value of a label, "" when absent.
  const std::string& label(std::string_view name) const;
};

struct Response {
  std::string result_type;  // "matrix" or "vector" ("scalar"/"string" are refused)
  std::vector<Series> series;
  size_t series_dropped = 0;  // beyond max_series
  size_t points_dropped = 0;  // beyond max_points per series
  std::vector<std::string> warnings;  // Prometheus's own
};

struct ParseLimits {
  size_t max_series = 100;
  size_t max_points = 2000;  // per series
  size_t max_depth = 16;     // JSON nesting: the API's answers use 6
};

// An error says what was wrong in words a user can act on: "not JSON (the
// answer starts with '<html>')", "Prometheus answered error bad_data: ...".
Result<Response> parse_response(std::string_view body, const ParseLimits& limits = {});

// A PromQL string literal: the value in double quotes, with \ " and
// control characters escaped.
std::string quote(std::string_view value);
// application/x-www-form-urlencoded value (RFC 3986 unreserved kept).
std::string url_encode(std::string_view s);
// The step, in whole seconds, that keeps a range of `range_s` at or under
// `max_points` points (at least 1 s).
int64_t step_for(int64_t range_s, int64_t max_points = 500);
// name{k="v",...} for people: the labels named, in that order, where
// present (a join's answer has no __name__: the caller names the metric).
std::string describe(std::string_view metric, const Series& s, const std::vector<std::string>& names);

}  // namespace aimem::prom
