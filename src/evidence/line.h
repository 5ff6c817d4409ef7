// One line of one input, with where it came from: what sources hand to the
// recognizers, and the provenance a fact keeps (make_fact).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"
#include "evidence/fact.h"

namespace aimem {

// What every recognizer of one input shares: where the input came from.
struct SourceContext {
  std::string name;              // path, "stdin", "/dev/kmsg"
  uint32_t index = 0;            // order among the inputs
  int64_t reference_us = 0;      // "now" for prefixes without a year (file mtime or now)
  std::optional<int64_t> boot_us; // wall-clock boot time, to turn uptime into wall time
};

struct Line {
  std::string_view text;      // without the trailing newline
  uint64_t number = 0;        // 1-based
  timeutil::LineTime time;    // what the line's prefix says
  const SourceContext* source = nullptr;
  uint64_t shown = 0;         // the input's own number where `number` is the order written (a newest-first paste); 0: number
};

// A fact of `kind` with the line's provenance and quoted text filled in.
Fact make_fact(const Line& line, FactKind kind, Family family);

// A mark for the phase reading (strength 0: it votes for nothing), a
// phase_load fact with `detail` (kLoadFinished, kCommandEnded).
Fact phase_mark(const Line& line, Family family, std::string_view detail);

// A look-alike: what failed, named, and not memory (layer and cause
// not_memory), with its strength and what it was.
Fact look_alike(const Line& line, Family family, float strength, std::string detail);

}  // namespace aimem
