// The measured safe envelope `aimem probe --save-limits FILE` writes and
// `aimem check` enforces (rule over-envelope). JSON, versioned:
//
// {
//   "aimem_limits": 1,
//   "measured_at": "2026-11-29T15:03:12Z",
//   "server": {"url": "http://127.0.0.1:8080", "model": "tiny", "kind": "llamacpp"},
//   "max_new_tokens": 64,
//   "headroom_pct": 20,
//   "safe": [{"context": 2048, "concurrency": 4}, ...],   // every step that passed
//   "breaking_point": {"context": 8192, "concurrency": 4} | null,
//   "limits": {"max_context": 1638, "max_concurrency": 3},   // largest passing, less headroom
//   "peak_bytes": {"process": 123, "cgroup": 456, "gpu": null}
// }
//
// A configuration (context C, concurrency N) is inside the envelope when some
// passing step has context >= C and concurrency >= N.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace aimem::probe {

struct Point {
  int64_t context = 0;
  int64_t concurrency = 0;
};

struct Limits {
  int version = 1;
  std::string measured_at;
  std::string url, model, kind;
  int64_t max_new_tokens = 0;
  double headroom_pct = 20;
  std::vector<Point> safe;
  std::optional<Point> breaking_point;
  int64_t max_context = 0;           // with headroom
  int64_t max_concurrency = 0;       // with headroom
  std::optional<uint64_t> peak_process_bytes, peak_cgroup_bytes, peak_gpu_bytes;

  // True when some measured passing step covers (context, concurrency).
  bool covers(int64_t context, int64_t concurrency) const;
};

std::string limits_to_json(const Limits& limits);
// Errors name the file and the field ("limits.json: field 'safe[2].context': expected an integer").
Result<Limits> limits_from_json(const std::string& text, const std::string& file_name);
Result<Limits> read_limits_file(const std::string& path);
// Writes to a temporary file beside path and renames it over; refuses to
// replace a file that is not an aimem limits file.
Result<bool> write_limits_file(const std::string& path, const Limits& limits);

}  // namespace aimem::probe
