// `aimem report`: a recorded timeline (watch::Store) as one self-contained HTML
// page with inline SVG plots, or as a JSON summary. Reading is two streaming
// passes over the samples (peaks and the range first, then the plotted
// series), each series downsampled to min/max per time bucket, so memory and
// output size stay bounded however long the recording is.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/store.h"

namespace aimem::report {

struct Point {
  int64_t t;
  double v;
};
struct Series {
  std::string name;
  bool limit = false;  // drawn as a dashed limit line
  std::vector<Point> points;
};
struct Panel {
  std::string title;  // "host RAM", "cgroup /aimem/run-1", "GPU 0 NVIDIA L4", ...
  std::string unit;   // "bytes", "count", "ratio", "seconds"
  std::vector<Series> series;
};
struct Pool {
  std::string name;  // "host_ram", "cgroup /x", "gpu 0 (NVIDIA L4)", as diagnose names pools
  std::optional<uint64_t> peak, limit;
};
struct Timeline {
  std::string file;
  int64_t from_us = 0, to_us = 0;  // of the samples shown; 0 when none
  size_t samples = 0;
  std::vector<Panel> panels;
  std::vector<Pool> pools;
  std::vector<watch::Event> events;
  std::vector<std::pair<std::string, std::string>> meta;
};

struct Options {
  int64_t from_us = INT64_MIN, to_us = INT64_MAX;
  size_t max_points = 1000;  // per series
};

Timeline build_timeline(const watch::Store& store, const Options& options);
std::string render_html(const Timeline& t);
nlohmann::json summary_json(const Timeline& t);

}  // namespace aimem::report
