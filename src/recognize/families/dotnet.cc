// .NET's managed heap (dotnet/runtime: the GC throws OutOfMemoryException
// when it cannot grow the heap; since .NET Core 3.0 a container's memory
// limit sets a hard heap limit, by default 75% of it, GCHeapHardLimit).
//
//   System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.
//   Unhandled exception. System.OutOfMemoryException: Insufficient memory to continue the execution of the program.
//   Unhandled Exception: OutOfMemoryException.                             (.NET Framework console)
//   Out of memory.                                                          (the runtime's own FailFast: not read)
//   System.OutOfMemoryException: Array dimensions exceeded supported range. (one array past 2^31 elements:
//                                                                            a not_memory_failure look-alike)
// Settings, as the runtime, dotnet-dump or the environment show them:
//   GCHeapHardLimit: 0x21999999 (563714457) bytes                          (dotnet-dump analyzeoom / eeheap)
//   DOTNET_GCHeapHardLimit=0x40000000   COMPlus_GCHeapHardLimit=...        (hex, as the runtime reads it)
//   DOTNET_GCHeapHardLimitPercent=0x4B                                     (hex percent of the limit)
//
// Facts: host_alloc_failure (family runtime, detail ".NET OutOfMemoryException");
// its layer is container_limit when the input shows a hard heap limit (the
// limit the container set, or one set by hand: either way a configured cap,
// not the host running out), else unknown, for the diagnosis to place from
// the rest of the evidence. runtime_setting with heap_limit for the cap.
#include <charconv>
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr std::string_view kArrayDimensions = "Array dimensions exceeded supported range";

constexpr Pattern kPatterns[] = {
    {"OutOfMemoryException"},
    {"GCHeapHardLimit", kContext},
};

// "0x21999999 (563714457) bytes" or "0x40000000": the runtime's hex.
std::optional<uint64_t> hard_limit(std::string_view v) {
  v = text::trim_left(v);
  if (auto open = v.find('('); open != std::string_view::npos && open < 24) {
    if (auto n = text::parse_u64(v.substr(open + 1))) return n;
  }
  if (text::starts_with(v, "0x") || text::starts_with(v, "0X")) v.remove_prefix(2);
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n, 16);
  if (ec != std::errc() || end == v.data() || n == 0) return std::nullopt;
  return n;
}

class Dotnet final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (size_t p = s.find("GCHeapHardLimit"); p != std::string_view::npos) return setting(line, s.substr(p + 15), out);
    // Thrown: "System.OutOfMemoryException: ..." or "...OutOfMemoryException." at the end of a message,
    // the name also quoted ("Exception of type `System.OutOfMemoryException`: ...", a crash log's
    // "... 'System.OutOfMemoryException' was thrown."); a frame or a type reference
    // ("catch (OutOfMemoryException)") is not. Any occurrence on the line may be the thrown one.
    // A shell command that searches for the exception ("$ grep -A2
    // OutOfMemoryException app.log") is not it, and must not hide its output.
    if (guards::is_advice_line(s) || guards::is_command_line(s) || text::contains(s, "catch") || text::contains(s, "typeof("))
      return;
    if (text::contains(s, "Out of Memory Error: ")) return;  // DuckDB's Python exception (duckdb.cc reads it)
    bool thrown = false;
    for (size_t p = s.find("OutOfMemoryException"); p != std::string_view::npos && !thrown;
         p = s.find("OutOfMemoryException", p + 20)) {
      if (guards::is_mention(s, p, 20)) continue;
      std::string_view rest = s.substr(p + 20);
      if (!rest.empty() && (rest[0] == '`' || rest[0] == '\'' || rest[0] == '"')) rest.remove_prefix(1);
      thrown = rest.empty() || rest[0] == ':' || rest[0] == '.' || rest[0] == ' ';
    }
    if (!thrown) return;
    if (last_ && line.number <= last_ + 40) return;  // the exception repeated by its stack trace or an outer handler
    last_ = line.number;
    flush(out);
    // One array past the runtime's element count (2^31 elements, or a List's
    // capacity doubling past it): thrown as OutOfMemoryException, but a
    // limit on one array's size, whatever memory is free.
    if (text::contains(s, kArrayDimensions)) {
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.8f;
      f.detail = ".NET's limit on one array's element count (\"Array dimensions exceeded supported range\"), not memory";
      out.add(std::move(f));
      return;
    }
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.detail = std::string(kDotnetOom);
    f.strength = 0.8f;
    pending_ = std::move(f);  // a hard limit printed after it (dotnet-dump's analysis) still places it
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  std::optional<uint64_t> limit_;
  std::optional<Fact> pending_;
  uint64_t last_ = 0;

  void flush(FactSink& out) {
    if (!pending_) return;
    if (limit_) {
      pending_->layer = Layer::container_limit;
      pending_->heap_limit = limit_;
    }
    out.add(std::move(*pending_));
    pending_.reset();
  }

  // "GCHeapHardLimit: 0x21999999 (563714457) bytes", "GCHeapHardLimit=0x40000000"; not "...Percent".
  void setting(const Line& line, std::string_view v, FactSink& out) {
    if (text::starts_with(v, "Percent") || text::starts_with(v, "SOH") || text::starts_with(v, "LOH")) return;
    v = text::trim_left(v);
    if (v.empty() || (v[0] != ':' && v[0] != '=')) return;
    auto n = hard_limit(v.substr(1));
    if (!n) return;
    limit_ = n;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::runtime);
    f.detail = "GCHeapHardLimit";
    f.heap_limit = n;
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kDotnetEntry{"dotnet", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Dotnet); }};

}  // namespace aimem
