// A figure that climbs across lines of one shape, whatever the program calls
// it: the last reading of a pasted log for growth when no recognizer's own
// series reader (memory_series.cc) found any. A paste from a program nobody
// here has seen prints its memory in its own words; the shape of the lines
// (the same text with other numbers) is what stays general:
//
//   10:05:12 used=402G total=754G                a sampling loop's own format
//   10:10:12 used=455G total=754G
//      1612 MB  ray::ServeReplica:ranker           ps piped through awk, hour after hour
//
// The line with its numbers (and their units) masked is the key; each masked
// place is a slot. A slot whose figure carries a size unit and rose at most
// steps (at least four in five), ending at least kGrowth times where it began
// and near its largest, is growth. Lines about loading, downloading, progress,
// tokens, prompts, context or batches are not series: their sizes grow by
// design, and a batch or a context growing is another cause. Nor are a
// collector's "before->after" pairs (memory_series.cc reads the heap after),
// a free figure (it falls by design while a program loads), or a peak (a
// "max_memory_allocated", "Peak" only rises). Scanned once,
// with a bounded number of keys: scanner.cc runs it on a paste (the whole
// input in one block), never on a log read in blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace aimem {

struct TemplateSeries {
  std::string key;         // the line with its figures masked ("# used=#G total=#G"), cut to 80 bytes
  uint64_t first_line = 0;  // 1-based lines of the input given
  uint64_t last_line = 0;
  std::string last_text;   // the last sample's line
  uint64_t first = 0, last = 0;  // bytes (a figure past what 64 bits hold is held at the largest)
  size_t samples = 0;
};

// Series found in `text`, in the order of their first lines; at most a few.
// A shape with a line `skip_line` (1-based) says yes to is not read.
std::vector<TemplateSeries> template_series(std::string_view text, const std::function<bool(uint64_t)>& skip_line = {});

}  // namespace aimem
