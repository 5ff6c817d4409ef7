// ClickHouse's memory tracker refusing an allocation (error 241,
// MEMORY_LIMIT_EXCEEDED), as the server log and the client print it:
//
//   <Error> executeQuery: Code: 241, e.displayText() = DB::Exception: Memory limit (total) exceeded: would use 25.01 GiB
//       (attempt to allocate chunk of 5075574 bytes), maximum: 25.00 GiB              (20.x)
//   Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 9.32 GiB (attempt to allocate chunk of
//       4194304 bytes), maximum: 9.31 GiB: While executing AggregatingTransform. (MEMORY_LIMIT_EXCEEDED)   (22.x and later)
//   ... Memory limit (for user) exceeded ...
//   ... Memory limit (total) exceeded: would use 3.50 GiB (attempt to allocate chunk of 4360384 bytes), current RSS 3.21 GiB,
//       maximum: 3.46 GiB. OvercommitTracker decision: Memory overcommit isn't used. ...   (23.x: RSS added)
//   "..., maximum: -8.00 EiB" is an overflowed limit (max_server_memory_usage_to_ram_ratio past what
//   the product holds): a not_memory_failure look-alike, every query refused whatever is free.
//
// The tracker is the server's own: "(total)" is max_server_memory_usage, by
// default a share of the host's RAM (max_server_memory_usage_to_ram_ratio),
// so the pool is host RAM; "(for query)" and "(for user)" are budgets within
// it (max_memory_usage, max_memory_usage_for_user). A host allocation
// failure, layer host_ram (a container limit in evidence makes it that
// limit's), with the cap as limit and the chunk as the request; what filled
// it is left to the series and figures around it.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Memory limit \\((total|for query|for user)\\) exceeded: would use [^(]*\\(attempt to allocate", kRegex},
};

class ClickHouse final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    size_t p = s.find("Memory limit (");
    if (p == std::string_view::npos || guards::is_mention(s, p, 14) || guards::is_command_line(s)) return;
    std::string_view scope = s.substr(p + 14);
    std::string_view which = scope.substr(0, scope.find(')'));
    if (which != "total" && which != "for query" && which != "for user") return;
    if (last_ && line.number <= last_ + 30) return;  // the client and the server log print one refusal twice
    last_ = line.number;
    // A negative maximum ("maximum: -8.00 EiB"): the limit itself overflowed
    // (a ratio or a setting past what it holds), and every query is refused
    // whatever memory is free: a broken setting, not memory.
    if (auto v = text::after(scope, "maximum: "); v && text::starts_with(*v, "-")) {
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.8f;
      f.process = "clickhouse-server";
      f.detail = "ClickHouse's memory limit is negative (" + std::string(text::trim(text::take_until(*v, ":(")).substr(0, 16)) +
                 "): an overflowed setting refuses every query, not memory";
      out.add(std::move(f));
      return;
    }
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::host_ram;
    f.strength = 0.8f;
    f.process = "clickhouse-server";
    if (auto v = text::after(scope, "would use ")) f.usage = units::parse_log_size(*v);
    if (auto v = text::after(scope, "allocate chunk of ")) f.requested = text::parse_u64(*v);
    if (auto v = text::after(scope, "maximum: ")) f.limit = units::parse_log_size(*v);
    f.detail = which == "total" ? std::string("ClickHouse's server memory limit (max_server_memory_usage) was reached")
                                : fmt::format("ClickHouse's memory budget {} (max_memory_usage{}) was reached", which,
                                              which == "for user" ? "_for_user" : "");
    out.add(std::move(f));
  }

 private:
  uint64_t last_ = 0;
};

}  // namespace

const RecognizerEntry kClickHouseEntry{"clickhouse", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new ClickHouse); }};

}  // namespace aimem
