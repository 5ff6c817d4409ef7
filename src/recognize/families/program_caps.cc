// Programs' own memory caps, reported as reached: a setting of the program
// (an interpreter's limit, a cache size, a shared zone, a resource policy)
// that is no pool of the machine, so no layer of the taxonomy names it. As
// Redis's maxmemory (redis.cc): layer unknown, the cap the cause
// (limit_too_low) unless the diagnosis finds growth. The lines, as each
// program's source prints them:
//
//   PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /var/www/app/src/Import.php on line 88
//   Fatal error: Allowed memory size of 1610612736 bytes exhausted (tried to allocate 4096 bytes) in phar:///usr/local/bin/composer/src/...
//       PHP's memory_limit (php.ini, -d memory_limit=, Composer's COMPOSER_MEMORY_LIMIT);
//       limit is the cap, requested the allocation that did not fit
//
//   convert-im6.q16: cache resources exhausted `scan.tif' @ error/cache.c/OpenPixelCache/4095.
//       ImageMagick's resource limits (policy.xml: memory, map, area, disk) ran out
//   SERVER_ERROR out of memory storing object
//       memcached's item memory (-m) full, with eviction off (-M) or nothing evictable
//   [crit] 1234#1234: ngx_slab_alloc() failed: no memory in SSL session shared cache "SSL"
//       an nginx shared memory zone (ssl_session_cache, limit_req_zone, proxy_cache keys_zone) full
//   Requested 100000x100000 (74.5GB) array exceeds maximum array size preference (31.8GB).
//       MATLAB's maximum array size preference (by default the machine's RAM)
//   pursuit: Heap exhausted;
//   pursuit: Current maximum heap size is 1610612736 bytes (1536 MB).
//       the GHC runtime's maximum heap (+RTS -M), its rts/RtsMessages.c wording
//   Heap exhausted during garbage collection: 16368 bytes available, 16400 requested.
//   Heap exhausted during allocation: 8192 bytes available, 65552 requested.
//       SBCL's dynamic space (--dynamic-space-size), src/runtime/gencgc.c
//   Error: vector memory exhausted (limit reached?)
//       R's vector heap cap (R_MAX_VSIZE), src/main/memory.c
//
// One fact per program (a server repeats its line per request).
#include <array>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

struct Cap {
  Pattern phrase;  // a literal: the phrase is matched as it stands
  std::string_view program;
  std::string_view detail;
};

constexpr Cap kCaps[] = {
    {{"cache resources exhausted"}, "imagemagick",
     "ImageMagick's resource limits (policy.xml: memory, map, area, disk) were exhausted: the program's own cap"},
    {{"SERVER_ERROR out of memory storing object"}, "memcached",
     "memcached's item memory (-m) is full and nothing could be evicted: the program's own cap"},
    {{"ngx_slab_alloc() failed: no memory"}, "nginx",
     "an nginx shared memory zone is full (its configured size): the program's own cap"},
    // No gate word in MATLAB's line: read in pastes and in hot blocks.
    {{"exceeds maximum array size preference", kCompanion}, "matlab",
     "MATLAB's maximum array size preference (by default the machine's RAM) is below the array asked for"},
    {{": Heap exhausted;"}, "ghc", "the GHC runtime's maximum heap (+RTS -M) is reached: the program's own cap"},
    {{"Heap exhausted during "}, "sbcl", "SBCL's dynamic space (--dynamic-space-size) is full: the runtime's own heap cap"},
    // R's vector heap at its cap (R_MAX_VSIZE; macOS sets one by default), src/main/memory.c.
    {{"vector memory exhausted (limit reached?)"}, "R", "R's vector heap reached its cap (R_MAX_VSIZE): the program's own cap"},
};

// PHP's line, then the table's phrases.
constexpr auto kPatterns = [] {
  std::array<Pattern, std::size(kCaps) + 1> p{};
  p[0] = {"Allowed memory size of [0-9]+ bytes exhausted", kRegex};
  for (size_t k = 0; k < std::size(kCaps); ++k) p[k + 1] = kCaps[k].phrase;
  return p;
}();

class ProgramCaps final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (php(line, out)) return;
    for (size_t k = 0; k < std::size(kCaps); ++k) {
      const std::string_view phrase = kCaps[k].phrase.expr;
      size_t p = s.find(phrase);
      if (p == std::string_view::npos || seen_[k]) continue;
      if (guards::is_mention(s, p, phrase.size()) || guards::is_advice_line(s)) return;
      seen_[k] = true;
      Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
      f.layer = Layer::unknown;
      f.cause = Cause::limit_too_low;
      f.strength = 0.7f;
      f.process = std::string(kCaps[k].program);
      f.detail = std::string(kCaps[k].detail);
      out.add(std::move(f));
      return;
    }
  }

 private:
  std::array<bool, std::size(kCaps)> seen_{};
  bool php_seen_ = false;

  bool php(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = s.find("Allowed memory size of ");
    if (p == std::string_view::npos) return false;
    if (php_seen_ || guards::is_mention(s, p, 23)) return true;
    std::string_view rest;
    auto cap = text::parse_u64(s.substr(p + 23), &rest);
    if (!cap || *cap == 0 || !text::starts_with(rest, " bytes exhausted")) return true;
    php_seen_ = true;
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::unknown;
    f.cause = Cause::limit_too_low;
    f.limit = cap;
    if (auto t = text::after(rest, "tried to allocate ")) f.requested = text::parse_u64(*t);
    f.detail = fmt::format("PHP's memory_limit ({}) was exhausted: an in-process cap, not a pool of the machine",
                           units::format_bytes(*cap));
    f.process = "php";
    f.strength = 0.75f;
    out.add(std::move(f));
    return true;
  }
};

}  // namespace

const RecognizerEntry kProgramCapsEntry{"program_caps", Family::runtime, kPatterns,
                                         [] { return std::unique_ptr<Recognizer>(new ProgramCaps); }};

}  // namespace aimem
