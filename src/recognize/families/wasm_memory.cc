// WebAssembly memory: a module's linear memory that could not grow, and an
// engine that could not reserve memory for a new instance. Neither is a pool
// of the machine the taxonomy names (layer unknown, as the program caps of
// program_caps.cc): the module's heap is capped by its build, and an
// instance's memory is first an address-space reservation.
//
// Emscripten's runtime (src/library.js, src/preamble.js; the wording moved
// across releases), in browsers, Node, Deno and Electron:
//   Cannot enlarge memory, asked to go up to 2214592512 bytes, but the limit is 2147483648 bytes!
//       (ALLOW_MEMORY_GROWTH on, MAXIMUM_MEMORY reached: requested and limit)
//   abort("Cannot enlarge memory arrays. Either (1) compile with  -s TOTAL_MEMORY=X  with X higher than the current value 268435456, ...
//   RuntimeError: Aborted(Cannot enlarge memory arrays to size 2214592512 bytes (OOM). Either (1) compile with -s INITIAL_MEMORY=X ...
//       (a fixed heap: the "current value" is the whole heap, the size the request)
//   emscripten_realloc_buffer: Attempted to grow heap from 52428800 bytes to 62914560 bytes, but got error: RangeError:
//       WebAssembly.Memory.grow(): Unable to grow instance memory.
//       (the engine refused the growth: the process or its address space, not the module's cap,
//       unless the heap was growing to 2 GiB or more: wasm32's reach and emscripten's default maximum)
//   Aborted(OOM)   abort("OOM")   abort(OOM)   _abortOnCannotGrowMemory   (the bare abort, no figures)
// V8 (src/wasm/, as Node, Deno and Chromium print its RangeError):
//   RangeError: WebAssembly.instantiate(): Out of memory: Cannot allocate Wasm memory for new instance
//   RangeError: WebAssembly.Instance(): Out of memory: wasm memory
//   RangeError: WebAssembly.Memory(): could not allocate memory
//       V8 reserves the whole of a wasm32 memory's reach (8 GiB of address space with guard
//       regions) per instance: an address-space limit (`ulimit -v`, shown as the command's
//       output or its argument) or a 32-bit process refuses it while RAM is free. Where the
//       paste shows a finite `ulimit -v`, that limit is the cause (limit_too_low).
//
// One fact per input, at the first line; later lines of the same report only add figures.
#include <array>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

// The failures' phrases, each once: the patterns are built from them, and the
// reader looks for them. `heap`: emscripten's heap; otherwise an engine's
// reservation for an instance.
struct Mark {
  Pattern phrase;
  bool heap;
};
constexpr Mark kMarks[] = {
    {{"Cannot enlarge memory", kCaseless | kCompanion}, true},
    {{"Aborted(OOM)"}, true},
    {{"abort(\"OOM\")"}, true},
    {{"abort('OOM')"}, true},
    {{"abort(OOM)"}, true},
    {{"abortOnCannotGrowMemory", kCompanion}, true},
    {{"Attempted to grow heap from", kCompanion}, true},
    {{"Unable to grow instance memory", kCompanion}, true},
    {{"Cannot allocate Wasm memory", kCompanion}, false},
    {{"Out of memory: wasm memory"}, false},
    {{"WebAssembly.Memory(): could not allocate memory", kCompanion | kShared}, false},
};

constexpr auto kPatterns = [] {
  std::array<Pattern, std::size(kMarks) + 3> p{};
  size_t i = 0;
  for (const Mark& m : kMarks) p[i++] = m.phrase;
  // The shell's address-space limit, for the cause (context), and its output on the next line.
  p[i++] = {"ulimit -v", kContext};
  p[i++] = {"ulimit -Hv", kContext};
  p[i++] = {"^[ \t]*[0-9]{4,}[ \t]*$", kRegex | kContext};
  return p;
}();

// emscripten's default MAXIMUM_MEMORY, and half of wasm32's reach.
constexpr uint64_t kWasm32Reach = 2 * units::GiB;

class WasmMemory final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    line_ = line.number;
    if (read_ulimit(s)) return;
    if (guards::is_advice_line(s)) return;
    if (fact_) {
      add_figures(s);
      return;
    }
    for (const Mark& m : kMarks) {
      const std::string_view w = m.phrase.expr;
      size_t p = (m.phrase.flags & kCaseless) ? text::ifind(s, w) : s.find(w);
      if (p == std::string_view::npos || guards::is_mention(s, p, w.size())) continue;
      start(line, m.heap);
      if (m.heap) add_figures(s);
      return;
    }
  }

  void finish(FactSink& out) override {
    if (!fact_) return;
    Fact& f = *fact_;
    if (f.cause == Cause::unknown && text::starts_with(f.detail, kWasmReserve) && ulimit_kib_) {
      f.cause = Cause::limit_too_low;
      f.limit = *ulimit_kib_ * units::KiB;
      f.detail += fmt::format(" (ulimit -v {} KiB)", *ulimit_kib_);
    }
    out.add(std::move(f));
    fact_.reset();
  }

 private:
  std::optional<Fact> fact_;
  bool ulimit_next_ = false;           // a line ran `ulimit -v`: its output follows
  uint64_t ulimit_line_ = 0, line_ = 0;
  std::optional<uint64_t> ulimit_kib_;  // a finite address-space limit shown in the paste

  void start(const Line& line, bool heap) {
    fact_ = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    fact_->layer = Layer::unknown;
    fact_->strength = 0.75f;
    fact_->detail = heap ? std::string(kWasmHeap) +
                               " (emscripten's heap) could not grow: a cap of the program's build (INITIAL_MEMORY, MAXIMUM_MEMORY, "
                               "ALLOW_MEMORY_GROWTH; 4 GiB at most for wasm32), not a pool of the machine"
                         : std::string(kWasmReserve) +
                               " for a WebAssembly instance: an address-space reservation (ulimit -v, a 32-bit process, many "
                               "instances at once) that free RAM alone does not explain";
  }

  // "$ ulimit -v" then its value on the next line; "ulimit -v 3145728" as a command.
  bool read_ulimit(std::string_view s) {
    if (ulimit_next_) {
      ulimit_next_ = false;
      // Only the command's own output, on the very next line.
      if (line_ != ulimit_line_ + 1) return false;
      std::string_view rest;
      if (auto n = text::parse_u64(text::trim(s), &rest); n && *n > 0 && text::trim(rest).empty()) {
        ulimit_kib_ = n;
        return true;
      }
    }
    for (std::string_view cmd : {"ulimit -v", "ulimit -Hv"}) {
      size_t p = s.find(cmd);
      if (p == std::string_view::npos) continue;
      std::string_view after = text::trim(s.substr(p + cmd.size()));
      if (after.empty()) {
        ulimit_next_ = true;
        ulimit_line_ = line_;
        return true;
      }
      std::string_view rest;
      if (auto n = text::parse_u64(after, &rest); n && *n > 0 && (rest.empty() || rest[0] == ' ' || rest[0] == ';' || rest[0] == '&'))
        ulimit_kib_ = n;
      return true;
    }
    return false;
  }

  // The figures emscripten prints, on the failure's line or the report's next ones.
  void add_figures(std::string_view s) {
    Fact& f = *fact_;
    auto bytes_after = [&](std::string_view lead) -> std::optional<uint64_t> {
      auto v = text::after(s, lead);
      if (!v) return std::nullopt;
      auto n = text::parse_u64(*v);
      return n && *n > 0 ? n : std::nullopt;
    };
    // "asked to go up to N bytes, but the limit is M bytes": the cap reached.
    if (auto asked = bytes_after("asked to go up to "); asked && !f.requested) {
      f.requested = asked;
      if (auto lim = bytes_after("but the limit is ")) f.limit = lim;
    }
    if (auto want = bytes_after("Cannot enlarge memory arrays to size "); want && !f.requested) f.requested = want;
    // A fixed heap: "higher than the current value N" is the whole heap.
    if (auto cur = bytes_after("higher than the current value "); cur && !f.limit) f.limit = cur;
    // "Attempted to grow heap from A bytes to B bytes, but got error": the engine refused.
    if (auto to = text::after(s, "Attempted to grow heap from ")) {
      std::string_view rest;
      if (text::parse_u64(*to, &rest)) {
        if (auto b = text::after(rest, " bytes to ")) {
          if (auto n = text::parse_u64(*b); n && !f.requested) f.requested = n;
        }
      }
    }
    if (f.limit && f.cause == Cause::unknown) {
      f.cause = Cause::limit_too_low;
    } else if (f.requested && *f.requested >= kWasm32Reach && f.cause == Cause::unknown) {
      f.cause = Cause::limit_too_low;
    }
  }
};

}  // namespace

const RecognizerEntry kWasmMemoryEntry{"wasm_memory", Family::runtime, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new WasmMemory); }};

}  // namespace aimem
