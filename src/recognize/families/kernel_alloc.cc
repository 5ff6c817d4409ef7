// A kernel allocation that failed without the OOM killer: the page
// allocator's warning (mm/page_alloc.c warn_alloc, "warn_alloc_failed" before
// 4.9), printed with the task's name, the order of the request (2^order
// contiguous pages) and its GFP mode, then a call trace, the Mem-Info and the
// buddy lists, zone by zone:
//
//   node_exporter: page allocation failure: order:5, mode:0xd0                                  (3.10)
//   kworker/2:1: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null)   (5.x)
//   Node 0 Normal: 58208*4kB (UEM) 19470*8kB (UEM) 2103*16kB (UEM) 96*32kB (UEM) 0*64kB 0*128kB ... = 425312kB
// (the DMA zone's list is left out: lowmem_reserve keeps it from ordinary requests)
//
// The syscall or driver that asked gets ENOMEM; nothing is killed. An order-0
// or order-1 failure is the host short of pages; a larger order is a request
// for contiguous memory, and when the buddy lists show free memory but no
// block of that order or above, memory was free but not in one piece:
// fragmentation. The fact is a host_alloc_failure (layer host_ram) whose cause
// says so, in the form classify.cc reads ("fragmented: order-5 (128 KiB)").
//
// The huge-page pool's reservation failing is the same shortage of the
// host's pages (mm/hugetlb.c; 5.x and later):
//   hugetlb: allocating 512 of page size 2.00 MiB failed.  Only allocated 128 hugepages.
#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {": page allocation failure: order:"},
    {"hugetlb: allocating [0-9]+ of page size .* failed", kRegex},
    {"*4kB ", kContext},
};

constexpr uint64_t kAfterLines = 120;                 // the report's buddy lists follow within this many lines
constexpr uint64_t kFreeEnough = 64 * units::MiB;     // free memory that makes a failed high order fragmentation
constexpr unsigned kHighOrder = 3;                    // 32 KiB and more contiguous

class KernelAlloc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_ && line.number > pending_->where.line + kAfterLines) flush(out);
    if (auto o = text::after(s, ": page allocation failure: order:")) {
      // "<comm>: page allocation failure": the task's name right before it, as the kernel prints it.
      size_t colon = s.find(": page allocation failure");
      if (colon == 0 || s[colon - 1] == ' ' || s[colon - 1] == '\'' || s[colon - 1] == '"') return;
      if (guards::is_mention(s, colon + 2, 23)) return;
      std::string_view who = text::trim(s.substr(0, colon));
      if (size_t sp = who.find_last_of(" ]"); sp != std::string_view::npos) who = who.substr(sp + 1);
      if (who.empty() || who.find_first_of("'\"`") != std::string_view::npos) return;  // quoted in prose
      flush(out);
      auto order = text::parse_u64(*o);
      if (!order || *order > 20) return;
      Fact f = make_fact(line, FactKind::host_alloc_failure, Family::kernel);
      f.layer = Layer::host_ram;
      f.strength = 0.75f;
      f.process = std::string(who.substr(0, 64));
      f.requested = (uint64_t{4096} << *order);
      order_ = static_cast<unsigned>(*order);
      largest_free_order_ = -1;
      free_ = 0;
      zones_ = 0;
      pending_ = std::move(f);
      return;
    }
    if (pending_) buddy(s);
    if (size_t at = s.find("hugetlb: allocating "); at != std::string_view::npos && text::contains(s.substr(at), " failed"))
      huge_pages(line, at, out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  // The kernel reserving huge pages (hugepages= at boot, nr_hugepages at run
  // time) and finding fewer free 2 MiB or 1 GiB blocks than asked
  // (mm/hugetlb.c): "hugetlb: allocating 512 of page size 2.00 MiB failed.
  // Only allocated 128 hugepages." The host's memory, short or in pieces.
  static void huge_pages(const Line& line, size_t at, FactSink& out) {
    if (guards::is_mention(line.text, at, 19)) return;
    std::string_view h = line.text.substr(at + 20);
    std::string_view rest;
    auto asked = text::parse_u64(h, &rest);
    size_t size_at = rest.find("page size ");
    if (!asked || size_at == std::string_view::npos) return;
    auto page = units::parse_log_size(rest.substr(size_at + 10));
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::kernel);
    f.layer = Layer::host_ram;
    f.strength = 0.7f;
    if (page) f.requested = *asked * *page;
    f.detail = fmt::format("the kernel could not reserve {} huge pages{}", *asked,
                           page ? " of " + units::format_bytes(*page) : std::string());
    out.add(std::move(f));
  }

  std::optional<Fact> pending_;
  unsigned order_ = 0;
  int largest_free_order_ = -1;
  uint64_t free_ = 0;
  int zones_ = 0;

  // "Node 0 Normal: 58208*4kB (UEM) 19470*8kB ... 0*4096kB = 425312kB"
  void buddy(std::string_view s) {
    size_t p = s.find("*4kB");
    if (p == std::string_view::npos || !text::contains(s, "Node ")) return;
    // The 16 MiB DMA zone is held back from ordinary allocations (lowmem_reserve):
    // its free blocks were never on offer.
    if (text::contains(s, " DMA: ")) return;
    ++zones_;
    // Tokens "<count>*<size>kB", order 0 first; the "(UEM)" migrate types between them are skipped.
    int order = 0;
    size_t i = s.rfind(' ', p);
    i = i == std::string_view::npos ? 0 : i + 1;
    while (i < s.size() && order < 12) {
      size_t e = s.find(' ', i);
      std::string_view tok = s.substr(i, e == std::string_view::npos ? std::string_view::npos : e - i);
      i = e == std::string_view::npos ? s.size() : e + 1;
      size_t star = tok.find('*');
      if (star == std::string_view::npos || !text::ends_with(tok, "kB")) continue;
      auto n = text::parse_u64(tok.substr(0, star));
      if (!n) break;
      if (*n > 0) largest_free_order_ = std::max(largest_free_order_, order);
      ++order;
    }
    if (auto total = text::after(s, "= ")) {
      if (auto kb = text::parse_u64(*total)) free_ += *kb * units::KiB;
    }
  }

  void flush(FactSink& out) {
    if (!pending_) return;
    Fact& f = *pending_;
    const std::string size = units::format_bytes(uint64_t{4096} << order_);
    const bool no_block = zones_ > 0 && largest_free_order_ < static_cast<int>(order_) && free_ >= kFreeEnough;
    if (order_ >= kHighOrder || no_block) {
      f.cause = Cause::fragmentation;
      f.detail = no_block ? fmt::format("kernel page allocation failed, fragmented: order-{} ({}), with {} free in smaller blocks only",
                                        order_, size, units::format_bytes(free_))
                          : fmt::format("kernel page allocation failed, fragmented: order-{} ({}), a contiguous request", order_, size);
      if (!no_block) f.strength = 0.7f;
    } else {
      f.detail = fmt::format("kernel page allocation failed: order-{} ({})", order_, size);
    }
    f.free = zones_ > 0 ? std::optional<uint64_t>(free_) : std::nullopt;
    out.add(std::move(f));
    pending_.reset();
  }
};

}  // namespace

const RecognizerEntry kKernelAllocEntry{"kernel_alloc", Family::kernel, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new KernelAlloc); }};

}  // namespace aimem
