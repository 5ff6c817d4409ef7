#include "evidence/line.h"

#include "core/text.h"

namespace aimem {

Fact make_fact(const Line& line, FactKind kind, Family family) {
  Fact f;
  f.kind = kind;
  f.family = family;
  f.where.line = line.number;
  f.where.shown_line = line.shown;
  if (line.source) {
    f.where.source = line.source->name;
    f.where.source_index = line.source->index;
  }
  f.where.unix_us = line.time.unix_us;
  f.where.year_guessed = line.time.unix_us && line.time.year_guessed;
  f.where.uptime_s = line.time.uptime_s;
  if (!f.where.unix_us && line.time.uptime_s && line.source && line.source->boot_us)
    f.where.unix_us = *line.source->boot_us + static_cast<int64_t>(*line.time.uptime_s * 1e6);
  f.text = text::quote_line(line.text);
  return f;
}

Fact phase_mark(const Line& line, Family family, std::string_view detail) {
  Fact f = make_fact(line, FactKind::phase_load, family);
  f.cause = Cause::model_load;
  f.strength = 0;
  f.detail = std::string(detail);
  return f;
}

Fact look_alike(const Line& line, Family family, float strength, std::string detail) {
  Fact f = make_fact(line, FactKind::not_memory_failure, family);
  f.layer = Layer::not_memory;
  f.cause = Cause::not_memory;
  f.strength = strength;
  f.detail = std::move(detail);
  return f;
}

}  // namespace aimem
