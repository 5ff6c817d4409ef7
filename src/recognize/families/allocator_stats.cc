// A memory allocator's own account of what it holds from the operating system
// against what the program is using (memory_usage facts, detail "allocator
// (...)", total = held, allocated = in use). Memory the allocator keeps after
// the program freed it (fragmented arenas, retained extents) counts in the
// process's RSS and against its limit like live data; the diagnosis reads a
// large gap as fragmentation, not a leak (classify.cc, cause_from_allocator).
//
// Formats:
//   glibc malloc_stats() (stderr), per arena and for the whole process:
//     Arena 0:
//     system bytes     =  412876800
//     in use bytes     =  171034624
//     Total (incl. mmap):
//     system bytes     = 3891265536
//     in use bytes     = 1417658368
//   (the total when printed, else the arenas summed)
//   glibc mallinfo() / mallinfo2() fields as programs print them:
//     mallinfo2: arena=3126853632 uordblks=1470103552 fordblks=1656750080 hblkhd=41943040 keepcost=135168
//   (held = arena + hblkhd, in use = uordblks + hblkhd: mmapped chunks are
//   returned on free, so they are live)
//   jemalloc's malloc_stats_print() summary:
//     Allocated: 1417658368, active: 1510432768, metadata: 61277184 (n_thp 0), resident: 3891265536, mapped: ..., retained: ...
//   Redis INFO memory (used_memory is what Redis allocated, used_memory_rss
//   what the OS sees it hold):
//     used_memory:1417658368   used_memory_rss:3891265536
//   An application's own key=value line with its allocator's heap and what is
//   live in it ("mem: rss=11.48GB arena=10.83GB live=1.02GB", a managed
//   runtime's "live=1706MB heap=3119MB"); the last one read is the latest.
//   Go's runtime as its Prometheus client exports it (one scrape): the heap's
//   spans in use, and the idle spans it keeps less those it released to the OS:
//     go_memstats_heap_idle_bytes 2.04103680e+08
//     go_memstats_heap_inuse_bytes 3.1358976e+07
//     go_memstats_heap_released_bytes 4.202496e+06
//   (held = inuse + idle - released, in use = inuse; read at the end of the input)
// Without figures, two signs of the same (a memory_usage fact, detail
// "allocator retention: ...", cause fragmentation, once per input):
//   $ echo MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-unset}      glibc's per-thread arenas looked at and
//   MALLOC_ARENA_MAX=unset                                  not capped (any "=N" of 8 or less in the
//                                                           input caps them: no sign)
//      {mbcs_usage,0.0912},                                 an Erlang allocator's multiblock carriers
//                                                           under 30% used (recon_alloc, crash dumps)
//      GC Fragmentation (%)        87.9                     .NET's GC heap half or more free space
//                                                           between objects (dotnet-counters, .NET 7+)
// Figures only, never a failure: a gap alone is not an incident.
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr double kEmptyCarriers = 0.3;
constexpr double kFragmentedShare = 0.5;  // a GC heap half free space between its objects

constexpr unsigned kCtx = kContext;

constexpr Pattern kPatterns[] = {
    {"system bytes", kCtx},
    {"in use bytes", kCtx},
    {"Total (incl. mmap)", kCtx},
    {"uordblks", kCtx},
    {"Allocated: ", kCtx},
    {"used_memory:", kCtx},
    {"used_memory_rss:", kCtx},
    {"arena=", kCtx},
    {"live=", kCtx},
    {"MALLOC_ARENA_MAX", kCtx},
    {"mbcs_usage", kCtx},
    {"GC Fragmentation (%)", kCtx},
    {"go_memstats_heap_", kCtx},
};

// The value after `key` followed by '=' or ':' (and blanks), as a size; bare
// numbers are bytes.
std::optional<uint64_t> value_of(std::string_view s, std::string_view key) {
  for (size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1)) {
    if (at > 0 && (platform::is_alnum(s[at - 1]) || s[at - 1] == '_')) continue;
    std::string_view rest = s.substr(at + key.size());
    rest = platform::skip(rest);
    if (rest.empty() || (rest[0] != '=' && rest[0] != ':')) continue;
    // "arena=26214.4 MiB": a unit after a blank, as a program's own print of
    // mallinfo may give it; bare numbers are bytes.
    if (auto sized = units::parse_log_size(platform::skip(rest.substr(1)))) return sized;
    return platform::parse_binary_size(platform::skip(rest.substr(1)));
  }
  return std::nullopt;
}

class AllocatorStats final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (retention_cue(line, out)) return;
    if (go_heap(line)) return;
    if (text::contains(s, "Total (incl. mmap)")) {
      in_total_ = true;
      return;
    }
    if (text::contains(s, "system bytes")) {
      if (auto v = value_of(s, "system bytes")) (in_total_ ? total_held_ : arenas_held_) += *v;
      return;
    }
    if (text::contains(s, "in use bytes")) {
      if (auto v = value_of(s, "in use bytes")) (in_total_ ? total_used_ : arenas_used_) += *v;
      stats_at_ = make_fact(line, FactKind::memory_usage, Family::runtime);
      if (in_total_ && total_held_) flush_malloc_stats(out);
      return;
    }
    if (auto used = value_of(s, "uordblks")) {
      auto held = value_of(s, "arena");
      uint64_t mapped = value_of(s, "hblkhd").value_or(0);
      if (held) emit(make_fact(line, FactKind::memory_usage, Family::runtime), *held + mapped, *used + mapped, "glibc mallinfo", out);
      return;
    }
    if (text::contains(s, "Allocated: ")) {
      auto used = value_of(s, "Allocated");
      auto held = value_of(s, "resident");
      if (used && held) emit(make_fact(line, FactKind::memory_usage, Family::runtime), *held, *used, "jemalloc", out);
      return;
    }
    if (auto rss = value_of(s, "used_memory_rss")) {
      redis_rss_ = rss;
      redis_at_ = make_fact(line, FactKind::memory_usage, Family::runtime);
    } else if (auto used = value_of(s, "used_memory")) {
      redis_used_ = used;
    }
    if (redis_rss_ && redis_used_ && redis_at_) {
      emit(std::move(*redis_at_), *redis_rss_, *redis_used_, "Redis INFO", out);
      redis_rss_.reset(), redis_used_.reset(), redis_at_.reset();
      return;
    }
    auto held = value_of(s, "arena");
    if (!held) held = value_of(s, "heap");  // a managed heap beside its live data: "live=1706MB heap=3119MB"
    if (held) {
      for (std::string_view key : {"live", "in_use", "inuse", "allocated"})
        if (auto used = value_of(s, key)) {
          app_ = make_fact(line, FactKind::memory_usage, Family::runtime);
          app_->total = held, app_->allocated = used;
          break;
        }
    }
  }

  void finish(FactSink& out) override {
    if (go_at_ && go_inuse_ && go_idle_ && *go_idle_ >= go_released_.value_or(0))
      emit(std::move(*go_at_), *go_inuse_ + *go_idle_ - go_released_.value_or(0), *go_inuse_, "Go runtime's idle heap spans", out);
    if (arenas_at_ && !arenas_capped_)
      retention(std::move(*arenas_at_), "glibc's per-thread malloc arenas, not capped (MALLOC_ARENA_MAX looked at and not set)", out);
    if (arenas_held_ && stats_at_) flush_malloc_stats(out);
    if (app_) {
      const uint64_t held = *app_->total, used = *app_->allocated;
      emit(std::move(*app_), held, used, "the application's allocator figures", out);
    }
  }

 private:
  // Signs of memory an allocator keeps without its figures (once per
  // input): glibc's per-thread arenas looked at and not capped
  // (MALLOC_ARENA_MAX printed unset or empty, or counted; set to a small
  // number it is capped and says nothing), and an Erlang allocator whose
  // multiblock carriers are mostly empty ("{mbcs_usage,0.094}", under kEmptyCarriers).
  // A memory_usage fact, detail "allocator retention: ...", cause fragmentation.
  bool retention_cue(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string what;
    if (size_t p = s.find("MALLOC_ARENA_MAX"); p != std::string_view::npos) {
      // Decided at the end of the input: a value anywhere ("MALLOC_ARENA_MAX=2") caps them.
      if (guards::is_advice_line(s)) return true;
      std::string_view after = s.substr(p + 16);
      if (!after.empty() && after[0] == '=') {
        auto n = text::parse_u64(after.substr(1));
        if (n && *n <= 8) arenas_capped_ = true;
      }
      if (!arenas_at_) arenas_at_ = make_fact(line, FactKind::memory_usage, Family::runtime);
      return true;
    } else if (size_t g = s.find("GC Fragmentation (%)"); g != std::string_view::npos) {
      // dotnet-counters (.NET 7+): the share of the GC heap that is free space between objects.
      auto pct = text::parse_double(text::trim_left(s.substr(g + 20)));
      if (!pct || *pct < kFragmentedShare * 100.0 || *pct > 100.0) return true;
      what = ".NET's GC heap " + std::string(text::take_until(text::trim_left(s.substr(g + 20)), " \t")) +
             "% fragmented (dotnet-counters' GC Fragmentation)";
    } else if (size_t q = s.find("mbcs_usage"); q != std::string_view::npos) {
      std::string_view v = s.substr(q + 10);
      while (!v.empty() && (v[0] == ',' || v[0] == ':' || v[0] == ' ' || v[0] == '=')) v.remove_prefix(1);
      if (text::parse_double(v).value_or(1) >= kEmptyCarriers) return true;
      what = "Erlang's multiblock carriers mostly empty (mbcs_usage " + std::string(text::take_until(v, "}, ").substr(0, 8)) + ")";
    } else {
      return false;
    }
    retention(make_fact(line, FactKind::memory_usage, Family::runtime), what, out);
    return true;
  }
  void retention(Fact f, const std::string& what, FactSink& out) {
    if (retention_said_) return;
    retention_said_ = true;
    f.cause = Cause::fragmentation;
    f.strength = 0.55f;
    f.detail = "allocator retention: " + what;
    out.add(std::move(f));
  }

  // Go's heap figures in exposition rows ("go_memstats_heap_idle_bytes 2.04e+08"): the latest of each.
  bool go_heap(const Line& line) {
    std::string_view t = text::trim(line.text);
    if (!text::starts_with(t, "go_memstats_heap_")) return false;
    std::string_view name = t.substr(0, t.find(' '));
    std::string_view rest;
    auto v = text::parse_float_exp(platform::skip(t.substr(name.size())), &rest);
    if (!v || !text::trim(rest).empty() || *v < 0 || *v >= 1.8e19) return true;
    auto bytes = static_cast<uint64_t>(*v);
    if (name == "go_memstats_heap_inuse_bytes") go_inuse_ = bytes;
    else if (name == "go_memstats_heap_idle_bytes") go_idle_ = bytes;
    else if (name == "go_memstats_heap_released_bytes") go_released_ = bytes;
    else return true;
    go_at_ = make_fact(line, FactKind::memory_usage, Family::runtime);
    return true;
  }
  std::optional<uint64_t> go_inuse_, go_idle_, go_released_;
  std::optional<Fact> go_at_;

  bool retention_said_ = false, arenas_capped_ = false;
  std::optional<Fact> arenas_at_;  // the first line that looked at MALLOC_ARENA_MAX

  void flush_malloc_stats(FactSink& out) {
    uint64_t held = total_held_ ? total_held_ : arenas_held_;
    uint64_t used = total_held_ ? total_used_ : arenas_used_;
    if (held && stats_at_) emit(std::move(*stats_at_), held, used, "glibc malloc_stats", out);
    total_held_ = total_used_ = arenas_held_ = arenas_used_ = 0;
    in_total_ = false;
    stats_at_.reset();
  }

  static void emit(Fact f, uint64_t held, uint64_t used, std::string_view what, FactSink& out) {
    if (held == 0 || used > held) return;
    f.detail = "allocator (" + std::string(what) + ")";
    f.total = held;
    f.allocated = used;
    f.reserved_unallocated = held - used;
    out.add(std::move(f));
  }

  bool in_total_ = false;
  uint64_t total_held_ = 0, total_used_ = 0, arenas_held_ = 0, arenas_used_ = 0;
  std::optional<Fact> stats_at_, redis_at_, app_;  // the line each figure will be quoted from
  std::optional<uint64_t> redis_rss_, redis_used_;
};

}  // namespace

const RecognizerEntry kAllocatorStatsEntry{
    "allocator_stats", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new AllocatorStats); }};

}  // namespace aimem
