// DuckDB's buffer manager refusing an allocation over its own cap,
// memory_limit (SET memory_limit, PRAGMA memory_limit; by default 80% of the
// RAM it sees), as the CLI and the client libraries print it:
//
//   Out of Memory Error: failed to allocate data of size 256.0 MiB (262.1 MiB/476.8 MiB used)      1.1
//   Error: Out of Memory Error: could not allocate block of size 256.0 KiB (29.7 GiB/29.8 GiB used) 0.9-1.0
//   duckdb.duckdb.OutOfMemoryException: Out of Memory Error: failed to allocate data of size ...    Python
//   Out of Memory Error: Failed to allocate block of 2048 bytes (bad allocation)                  0.8-0.10: the
//     allocator itself failed, below the cap: no "(used/limit)" figures, so no cause
// The parenthesis is "(in use / memory_limit used)". Like PHP's memory_limit,
// the pool is the engine's setting: the layer stays unknown unless the cap is
// read as the machine's (a limit shown beside it is for the diagnosis), the
// cause the cap (limit_too_low) unless growth is found. limit is the cap,
// usage what was in use, requested the allocation.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Out of Memory Error: ([Ff]ailed to allocate|[Cc]ould not allocate)", kRegex},
};

class DuckDb final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    size_t p = s.find("Out of Memory Error: ");
    if (p == std::string_view::npos || guards::is_advice_line(s) || guards::is_mention(s, p, 21)) return;
    std::string_view rest = s.substr(p + 21);
    if (!text::istarts_with(rest, "failed to allocate") && !text::istarts_with(rest, "could not allocate")) return;
    if (seen_ && line.number <= seen_ + 40) return;
    seen_ = line.number;
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::unknown;
    f.cause = Cause::limit_too_low;
    if (auto v = text::after(rest, "of size ")) f.requested = units::parse_log_size(*v);
    else if (auto b = text::after(rest, "block of ")) f.requested = units::parse_log_size(*b, nullptr, true);  // "block of 2048 bytes"
    // "(262.1 MiB/476.8 MiB used)"
    if (size_t open = rest.rfind('('); open != std::string_view::npos) {
      std::string_view in = rest.substr(open + 1);
      if (size_t slash = in.find('/'); slash != std::string_view::npos && text::contains(in, " used)")) {
        f.usage = units::parse_log_size(in.substr(0, slash));
        f.limit = units::parse_log_size(in.substr(slash + 1));
      }
    }
    f.detail = f.limit ? fmt::format("DuckDB's memory_limit ({}) was reached: a cap of the engine, not a pool of the machine",
                                     units::format_bytes(*f.limit))
                       : std::string("DuckDB's memory_limit was reached: a cap of the engine, not a pool of the machine");
    if (!f.limit) {
      // The cap's refusal always gives "(in use/limit used)"; without them the
      // allocator itself refused ("Failed to allocate block of 2048 bytes",
      // "(bad allocation)"): the line does not say what did.
      f.cause = Cause::unknown;
      f.detail = std::string(kRefusedBelowOwnCap);
    }
    f.process = "duckdb";
    f.strength = 0.75f;
    out.add(std::move(f));
  }

 private:
  uint64_t seen_ = 0;
};

}  // namespace

const RecognizerEntry kDuckDbEntry{"duckdb", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new DuckDb); }};

}  // namespace aimem
