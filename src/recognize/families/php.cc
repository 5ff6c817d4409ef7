// PHP's own per-process cap, memory_limit (php.ini, -d memory_limit=,
// Composer's COMPOSER_MEMORY_LIMIT), as the engine reports it:
//
//   PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /var/www/app/src/Import.php on line 88
//   Fatal error: Allowed memory size of 1610612736 bytes exhausted (tried to allocate 4096 bytes) in phar:///usr/local/bin/composer/src/...
//
// The pool is the interpreter's setting, not one of the machine's: no layer
// of the taxonomy names it, so the layer stays unknown while the cause is the
// cap (limit_too_low) unless the diagnosis finds growth. limit is the cap,
// requested the allocation that did not fit.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Allowed memory size of [0-9]+ bytes exhausted", kRegex},
};

class Php final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    size_t p = s.find("Allowed memory size of ");
    if (p == std::string_view::npos || seen_) return;
    if (guards::is_mention(s, p, 23)) return;
    std::string_view rest;
    auto cap = text::parse_u64(s.substr(p + 23), &rest);
    if (!cap || *cap == 0 || !text::starts_with(rest, " bytes exhausted")) return;
    seen_ = true;
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
  }

 private:
  bool seen_ = false;
};

}  // namespace

const RecognizerEntry kPhpEntry{"php", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Php); }};

}  // namespace aimem
