// Host RAM as `free` prints it (procps-ng and busybox), read into one
// host_state fact per table: total and free = the "available" column (what
// can be allocated without swapping), detail "host RAM".
//
//   $ free -h
//                  total        used        free      shared  buff/cache   available
//   Mem:            15Gi       1.2Gi        12Gi       120Mi       2.2Gi        13Gi
//   Swap:          2.0Gi          0B       2.0Gi
// Before procps 3.3.10 there was no "available" column; the "-/+ buffers/cache"
// row gave the same figure:
//                total       used       free     shared    buffers     cached
//   Mem:       8061448    7854436     207012          0     117688    6373036
//   -/+ buffers/cache:    1363712    6697736
// Numbers without a unit are KiB unless the command line shown earlier in the
// input chose another unit (-b, -m, -g, --mega, --giga, --si); -h prints units
// (Ki, Mi, Gi, or K, M, G), all binary unless --si.
// /proc/meminfo (the kernel's own account, in kB), as `cat /proc/meminfo`
// prints it or a watcher logs its two fields on one line:
//   MemTotal:       16371152 kB          ...          MemAvailable:    9813404 kB
//   [memwatch] MemTotal=16371152kB MemAvailable=9813404kB SwapFree=4194300kB
// one host_state fact per MemTotal / MemAvailable pair (free = MemAvailable);
// its SUnreclaim (the kernel's slab that cannot be reclaimed), within the
// same listing, a host_state fact of its own (kKernelSlab: usage of total).
// top's summary (procps-ng 3.3 and later; the unit first, -E changes it):
//   KiB Mem : 33554432 total,  22671044 free,  10215380 used,    668008 buff/cache
//   KiB Swap:  2097148 total,   2097148 free,         0 used.  23086324 avail Mem
// free = "avail Mem" from the swap line when it follows, else free + buff/cache.
// htop's meters (used of total; its used leaves out buffers and cache):
//   Mem[||||||||||||||||||||||||15.4G/15.6G]   Tasks: 87, 412 thr; 5 running
//   Swp[||||||||||||||         3.71G/4.00G]   Load average: 6.12 5.40 3.33
//
// Windows' systeminfo: Total and Available Physical Memory, and its commit
// limit (Virtual Memory: Max Size, Available) in swap's part below.
// The swap figures beside them (free's "Swap:" row, meminfo's SwapTotal and
// SwapFree, top's "KiB Swap:" line) decide one thing more: a snapshot whose
// available RAM is at most kExhaustedPct of the total while swap is all but
// used up too (a tenth or less free) or absent is the host's memory
// exhausted, a failure of its own (host_exhausted, layer host_ram), as a
// user pastes it from a machine that hangs or thrashes without a kill. A
// machine with swap to spare is only swapping.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/free_units.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"free -", kContext},
    {"buff/cache", kContext},
    {"^[ \t]+total\\s+used\\s+free", kRegex | kContext},
    {"^Mem: +[0-9]", kRegex | kContext},
    {"-/+ buffers/cache:", kContext},
    {"MemAvailable", kContext},
    {"MemTotal", kContext},
    {"SUnreclaim", kContext},
    {"^[KMGT]iB (Mem|Swap) *:", kRegex | kContext},  // top's summary
    {"^Swap: +[0-9]", kRegex | kContext},
    {"SwapTotal", kContext},
    {"SwapFree", kContext},
    {"(Mem|Swp)\\[[| #*]*[0-9.]+[KMGT]?/[0-9.]+[KMGT]\\]", kRegex | kContext},  // htop's meters
    {"^(Total|Available) Physical Memory: ", kRegex | kContext},                // Windows' systeminfo
    {"^Virtual Memory: (Max Size|Available): ", kRegex | kContext},
    {"System-wide memory free percentage: ", kContext},  // macOS' memory_pressure
    {"vm.swapusage: total = ", kContext},                // macOS' sysctl
};

// Available RAM, percent of the total. 5, not 3: a 31 GiB host with 1.1 GiB
// available and its swap all but gone thrashes as a small one with nothing
// available does (read blind: a runner whose RSS climbed into that state).
constexpr uint64_t kExhaustedPct = 5;
constexpr uint64_t kSwapLines = 24;
constexpr uint64_t kMacLines = 12;     // memory_pressure's line and sysctl's swap, pasted together    // SwapFree is about the 15th line of /proc/meminfo after MemAvailable

constexpr uint64_t kMeminfoLines = 8;  // MemAvailable is the third line of /proc/meminfo
constexpr uint64_t kSlabLines = 40;    // SUnreclaim is about the 24th

class HostTools final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    if (meminfo(line, t, out)) return;
    if (top_summary(line, t, out)) return;
    if (htop_meter(line, s, out)) return;
    if (systeminfo(line, t, out)) return;
    if (macos_pressure(line, t, out)) return;
    if (text::starts_with(t, "Mem:")) {
      mem_row(line, t.substr(4), out);
    } else if (text::starts_with(t, "Swap:")) {
      flush(out);
      auto cols = columns(t.substr(5));
      if (cols.size() >= 3) {
        auto total = size_of(cols[0]), free = size_of(cols[2]);
        if (total && free) exhausted(line, *total, *free, 3, out);
      }
    } else if (auto v = text::after(t, "-/+ buffers/cache:")) {
      // old procps: "-/+ buffers/cache:  used  free" -> free is what is available
      if (!pending_ || line.number > pending_->where.line + 3) return;
      auto cols = columns(*v);
      if (cols.size() >= 2) {
        if (auto f = size_of(cols[1])) pending_->free = f;
      }
      flush(out);
    } else if (text::contains(t, "total") && text::contains(t, "used") && text::contains(t, "free")) {
      header_ = columns(t);
      header_line_ = line.number;
    } else if (size_t p = s.find("free -"); p != std::string_view::npos) {
      units_.command(s.substr(p + 5));
    }
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  // Windows' systeminfo, in MB with thousands separators:
  //   Total Physical Memory:     65,441 MB
  //   Available Physical Memory: 412 MB
  //   Virtual Memory: Max Size:  8,386 MB        (the commit limit: RAM and the paging file)
  //   Virtual Memory: Available: 6,902 MB
  // The physical pair is one host_state fact; the commit limit and what is
  // left of it play swap's part in the host's exhaustion.
  std::optional<uint64_t> win_total_, win_commit_max_;
  uint64_t win_line_ = 0;
  static std::optional<uint64_t> systeminfo_mb(std::string_view v) {
    std::string digits;
    for (char c : text::trim(v)) {
      if (c >= '0' && c <= '9') digits += c;
      else if (c == ',' || c == '.') continue;
      else break;
    }
    if (digits.empty() || digits.size() > 9 || !text::contains(v, "MB")) return std::nullopt;
    return std::stoull(digits) * units::MiB;
  }
  bool systeminfo(const Line& line, std::string_view t, FactSink& out) {
    if (auto v = text::after(t, "Total Physical Memory:")) {
      win_total_ = systeminfo_mb(*v);
      win_line_ = line.number;
      return true;
    }
    if (auto v = text::after(t, "Available Physical Memory:")) {
      auto avail = systeminfo_mb(*v);
      if (win_total_ && avail && line.number <= win_line_ + 3 && *avail <= *win_total_) {
        Fact f = make_fact(line, FactKind::host_state, Family::procfs);
        f.total = win_total_;
        f.free = avail;
        f.usage = *win_total_ - *avail;
        f.detail = "host RAM";
        ram(std::move(f), out);
      }
      return true;
    }
    if (auto v = text::after(t, "Virtual Memory: Max Size:")) {
      win_commit_max_ = systeminfo_mb(*v);
      return true;
    }
    if (auto v = text::after(t, "Virtual Memory: Available:")) {
      auto left = systeminfo_mb(*v);
      if (win_commit_max_ && left) exhausted(line, *win_commit_max_, *left, 6, out);
      return true;
    }
    return false;
  }

  FreeUnits units_;  // what the last `free` command's options make a figure mean
  std::vector<std::string> header_;
  uint64_t header_line_ = 0;
  std::optional<Fact> pending_;

  void flush(FactSink& out) {
    if (pending_) ram(std::move(*pending_), out);
    pending_.reset();
  }

  // The last host RAM reading, for the swap figures after it.
  struct Ram {
    uint64_t total = 0, free = 0, line = 0;
    std::string quote;
  };
  std::optional<Ram> ram_;
  std::optional<uint64_t> swap_total_;
  uint64_t swap_total_line_ = 0;

  void ram(Fact f, FactSink& out) {
    if (f.total && f.free && *f.total > 0) ram_ = Ram{*f.total, *f.free, f.where.line, f.text};
    out.add(std::move(f));
  }

  // Swap beside the last RAM reading (within `lines`): both used up is the
  // host's memory exhausted (see the top of the file).
  void exhausted(const Line& line, uint64_t swap_total, uint64_t swap_free, uint64_t lines, FactSink& out) {
    if (!ram_ || line.number > ram_->line + lines || swap_free > swap_total) return;
    const Ram r = *ram_;
    ram_.reset();
    if (r.free * 100 > r.total * kExhaustedPct || swap_free * 10 > swap_total) return;
    Fact f = make_fact(line, FactKind::host_exhausted, Family::procfs);
    f.layer = Layer::host_ram;
    f.strength = 0.5f;
    f.total = r.total;
    f.free = r.free;
    f.extra.emplace_back(r.line, r.quote);
    f.detail = fmt::format("the host's RAM was used up ({} available of {}) and {}", units::format_bytes(r.free),
                           units::format_bytes(r.total),
                           swap_total == 0 ? std::string("it has no swap")
                                           : fmt::format("so was its swap ({} free of {})", units::format_bytes(swap_free),
                                                         units::format_bytes(swap_total)));
    out.add(std::move(f));
  }

  // macOS: memory_pressure's last line ("System-wide memory free percentage:
  // 3%") and sysctl's swap ("vm.swapusage: total = 6144.00M  used = 5530.25M
  // free = 613.75M  (encrypted)"), within kMacLines of each other: both at
  // their end (the free share at most kExhaustedPct, swap a tenth or less
  // free) is the host's memory used up, as free's rows say it on Linux.
  bool macos_pressure(const Line& line, std::string_view t, FactSink& out) {
    if (auto v = text::after(t, "System-wide memory free percentage: ")) {
      mac_free_pct_ = text::parse_u64(*v);
      mac_line_ = line.number;
    } else if (auto w = text::after(t, "vm.swapusage: total = ")) {
      std::string_view rest;
      auto total = units::parse_log_size(*w, &rest);
      auto f = text::after(rest, "free = ");
      auto free = f ? units::parse_log_size(*f) : std::nullopt;
      if (!total || !free || *free > *total) return true;
      mac_swap_total_ = *total, mac_swap_free_ = *free;
      mac_swap_line_ = line.number;
    } else {
      return false;
    }
    if (!mac_free_pct_ || !mac_swap_line_ || !mac_line_ || mac_said_) return true;
    const uint64_t gap = mac_line_ > mac_swap_line_ ? mac_line_ - mac_swap_line_ : mac_swap_line_ - mac_line_;
    if (gap > kMacLines || *mac_free_pct_ > kExhaustedPct || mac_swap_free_ * 10 > mac_swap_total_) return true;
    mac_said_ = true;
    Fact f = make_fact(line, FactKind::host_exhausted, Family::procfs);
    f.layer = Layer::host_ram;
    f.strength = 0.5f;
    f.detail = fmt::format("the Mac's memory was used up ({}% free by memory_pressure) and so was its swap ({} free of {})", *mac_free_pct_,
                           units::format_bytes(mac_swap_free_), units::format_bytes(mac_swap_total_));
    out.add(std::move(f));
    return true;
  }
  std::optional<uint64_t> mac_free_pct_;
  uint64_t mac_line_ = 0, mac_swap_line_ = 0, mac_swap_total_ = 0, mac_swap_free_ = 0;
  bool mac_said_ = false;

  static std::vector<std::string> columns(std::string_view s) {
    std::vector<std::string> out;
    for (auto w = text::first_word(s); !w.empty() && out.size() < 16; w = text::first_word(s)) {
      out.emplace_back(w);
      s = s.substr(static_cast<size_t>(w.data() + w.size() - s.data()));
    }
    return out;
  }

  std::optional<uint64_t> size_of(std::string_view v) const { return units_.size_of(v); }

  std::optional<uint64_t> mem_total_;
  uint64_t mem_total_line_ = 0;
  // The listing's MemTotal, kept for its SUnreclaim further down.
  std::optional<uint64_t> listing_total_;
  uint64_t listing_line_ = 0;

  // "<key>: N kB" or "<key>=NkB": the figure after the key, in bytes.
  static std::optional<uint64_t> kb_after(std::string_view s, std::string_view key) {
    auto v = text::after(s, key);
    if (!v) return std::nullopt;
    std::string_view rest;
    auto n = text::parse_u64(platform::skip(*v, ":= \t"), &rest);
    if (!n || !text::starts_with(text::trim_left(rest), "kB") || *n > (uint64_t{1} << 40)) return std::nullopt;
    return *n * units::KiB;
  }

  bool meminfo(const Line& line, std::string_view t, FactSink& out) {
    if (auto slab = kb_after(t, "SUnreclaim")) {
      if (listing_total_ && line.number <= listing_line_ + kSlabLines && *slab <= *listing_total_) {
        Fact f = make_fact(line, FactKind::host_state, Family::procfs);
        f.detail = std::string(kKernelSlab);
        f.total = listing_total_;
        f.usage = slab;
        out.add(std::move(f));
      }
      return true;
    }
    auto total = kb_after(t, "MemTotal"), avail = kb_after(t, "MemAvailable");
    if (!total && !avail) {
      // The listing's swap, two lines apart (a watcher's one-line SwapFree
      // gives no SwapTotal: nothing to say how full).
      if (auto swap = kb_after(t, "SwapTotal")) {
        swap_total_ = swap, swap_total_line_ = line.number;
        return true;
      }
      if (auto swap = kb_after(t, "SwapFree")) {
        if (swap_total_ && line.number <= swap_total_line_ + 2) exhausted(line, *swap_total_, *swap, kSwapLines, out);
        swap_total_.reset();
        return true;
      }
      return false;
    }
    if (total) mem_total_ = total, mem_total_line_ = line.number, listing_total_ = total, listing_line_ = line.number;
    if (avail && mem_total_ && line.number <= mem_total_line_ + kMeminfoLines && *avail <= *mem_total_) {
      Fact f = make_fact(line, FactKind::host_state, Family::procfs);
      f.detail = "host RAM";
      f.total = mem_total_;
      f.free = avail;
      ram(std::move(f), out);
      mem_total_.reset();
    }
    return true;
  }

  // top's "KiB Mem : N total, N free, N used, N buff/cache" and the
  // "KiB Swap: ... N avail Mem" after it.
  bool top_summary(const Line& line, std::string_view t, FactSink& out) {
    auto top = aimem::top_summary(t);
    if (!top) return false;
    if (!top->swap) {
      flush(out);
      if (!top->total || !top->free || *top->total == 0) return true;
      Fact f = make_fact(line, FactKind::host_state, Family::procfs);
      f.detail = "host RAM";
      f.total = top->total;
      f.free = std::min(*top->total, *top->free + top->cache.value_or(0));
      pending_ = std::move(f);
      return true;
    }
    if (pending_ && line.number <= pending_->where.line + 1 && top->avail && pending_->total && *top->avail <= *pending_->total)
      pending_->free = top->avail;
    flush(out);
    if (top->total && top->free) exhausted(line, *top->total, *top->free, 1, out);
    return true;
  }

  // htop's meters: "Mem[|||||||||15.4G/15.6G]" (used of total; htop's used
  // leaves out buffers and cache, so the rest is what can be had) and
  // "Swp[||||||   3.71G/4.00G]" on the line below.
  bool htop_meter(const Line& line, std::string_view s, FactSink& out) {
    for (std::string_view name : {"Mem[", "Swp["}) {
      size_t p = s.find(name);
      if (p == std::string_view::npos) continue;
      size_t close = s.find(']', p);
      if (close == std::string_view::npos) return false;
      std::string_view meter = s.substr(p + 4, close - p - 4);
      size_t slash = meter.rfind('/');
      if (slash == std::string_view::npos) return false;
      // The figure starts after the bar's last mark: "|||||15.4G", "|||   3.71G".
      size_t bar_end = meter.find_last_of("| #*", slash);
      size_t from = bar_end == std::string_view::npos ? 0 : bar_end + 1;
      auto used = units::parse_log_size(text::trim(meter.substr(from, slash - from))), total = units::parse_log_size(meter.substr(slash + 1));
      if (!used || !total || *total == 0 || *used > *total) return false;
      if (name == "Mem[") {
        flush(out);
        Fact f = make_fact(line, FactKind::host_state, Family::procfs);
        f.detail = "host RAM";
        f.total = total;
        f.free = *total - *used;
        ram(std::move(f), out);
      } else {
        exhausted(line, *total, *total - *used, 2, out);
      }
      return true;
    }
    return false;
  }

  void mem_row(const Line& line, std::string_view values, FactSink& out) {
    flush(out);
    auto cols = columns(values);
    if (cols.size() < 3) return;
    // Map by header names when the header is just above; else the modern order.
    bool have_header = header_line_ && line.number <= header_line_ + 3 && header_.size() >= 3;
    auto index = [&](std::string_view name) -> int {
      if (!have_header) return -1;
      for (size_t i = 0; i < header_.size(); ++i)
        if (header_[i] == name) return static_cast<int>(i);
      return -1;
    };
    int avail = have_header ? index("available") : (cols.size() >= 6 ? 5 : -1);
    Fact f = make_fact(line, FactKind::host_state, Family::procfs);
    f.detail = "host RAM";
    f.total = size_of(cols[0]);
    if (!f.total) return;
    if (avail >= 0 && static_cast<size_t>(avail) < cols.size()) {
      f.free = size_of(cols[static_cast<size_t>(avail)]);
      ram(std::move(f), out);
      return;
    }
    // Old layout: free + buffers + cached, refined by a "-/+ buffers/cache" row.
    int fr = index("free"), bu = index("buffers"), ca = index("cached");
    if (fr >= 0 && bu >= 0 && ca >= 0 && static_cast<size_t>(std::max({fr, bu, ca})) < cols.size()) {
      auto a = size_of(cols[static_cast<size_t>(fr)]), b = size_of(cols[static_cast<size_t>(bu)]),
           c = size_of(cols[static_cast<size_t>(ca)]);
      if (a && b && c) f.free = *a + *b + *c;
    }
    pending_ = std::move(f);
  }
};

}  // namespace

const RecognizerEntry kHostToolsEntry{"host_tools", Family::procfs, kPatterns,
                                      [] { return std::unique_ptr<Recognizer>(new HostTools); }};

}  // namespace aimem
