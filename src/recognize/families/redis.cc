// Redis refusing a write at its own cap, maxmemory (redis.conf, CONFIG SET),
// as the server answers and clients print it:
//
//   (error) OOM command not allowed when used memory > 'maxmemory'.            redis-cli
//   -OOM command not allowed when used memory > 'maxmemory'.                  the protocol's error reply
//   redis.exceptions.OutOfMemoryError: OOM command not allowed when used memory > 'maxmemory'.   redis-py
//   ReplyError: OOM command not allowed when used memory > 'maxmemory'.       ioredis
// The cap, as INFO memory and the config show it:
//   maxmemory:25165824   (INFO, bytes)        maxmemory 24mb   (redis.conf; k/kb/m/mb/g/gb, 1k = 1000, 1kb = 1024)
//
// Like PHP's memory_limit, the pool is the server's setting, not one of the
// machine's: the layer stays unknown and the cause is the cap
// (limit_too_low) unless the diagnosis finds growth. limit is maxmemory
// where the input shows it. With a policy that evicts (allkeys-lru) a write
// is refused only when nothing more can be evicted; the same cap either way.
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"OOM command not allowed when used memory"},
    {"maxmemory", kContext},
};

// redis.conf's units: a bare number is bytes; k = 1000, kb = 1024 (and so on).
// Written here because the shared size parsers (units::parse_log_size,
// platform::parse_binary_size) read "m" as MiB; Redis reads it as 10^6.
std::optional<uint64_t> conf_size(std::string_view v) {
  std::string_view rest;
  auto n = text::parse_u64(text::trim_left(v), &rest);
  if (!n) return std::nullopt;
  rest = text::trim(rest);
  std::string unit;
  for (char c : rest.substr(0, 2)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  uint64_t mult = 1;
  if (unit.empty()) mult = 1;
  else if (unit == "k") mult = 1000;
  else if (unit == "kb") mult = units::KiB;
  else if (unit == "m") mult = 1000 * 1000;
  else if (unit == "mb") mult = units::MiB;
  else if (unit == "g") mult = 1000 * 1000 * 1000;
  else if (unit == "gb") mult = units::GiB;
  else return std::nullopt;
  if (*n > (uint64_t{1} << 50) / mult) return std::nullopt;
  return *n * mult;
}

class Redis final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto v = text::after(s, "maxmemory:")) {  // INFO memory
      if (auto n = text::parse_u64(*v); n && *n > 0) cap_ = n;
      return;
    }
    if (std::string_view t = text::trim_left(s); text::starts_with(t, "maxmemory ") && !text::contains(t, "policy")) {
      if (auto n = conf_size(t.substr(10)); n && *n > 0) cap_ = n;  // redis.conf, CONFIG GET's reply
      return;
    }
    size_t p = s.find("OOM command not allowed when used memory");
    if (p == std::string_view::npos || guards::is_advice_line(s) || guards::is_mention(s, p, 3)) return;
    if (seen_ && line.number <= seen_ + 40) return;  // the same refusal, repeated by a client's retries
    seen_ = line.number;
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::unknown;
    f.cause = Cause::limit_too_low;
    f.limit = cap_;
    f.detail = cap_ ? fmt::format("Redis refused a write at its maxmemory ({}): a cap of the server, not a pool of the machine",
                                  units::format_bytes(*cap_))
                    : std::string("Redis refused a write at its maxmemory: a cap of the server, not a pool of the machine");
    f.process = "redis-server";
    f.strength = 0.75f;
    out.add(std::move(f));
  }

 private:
  std::optional<uint64_t> cap_;
  uint64_t seen_ = 0;
};

}  // namespace

const RecognizerEntry kRedisEntry{"redis", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Redis); }};

}  // namespace aimem
