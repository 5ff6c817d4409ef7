// FreeBSD's out-of-memory kill (sys/vm/vm_pageout.c, vm_pageout_oom): the
// page daemon picks the largest process and kills it, with one of three
// reasons, as the console and /var/log/messages print it:
//
//   pid 878 (pkg), jid 0, uid 0, was killed: failed to reclaim memory      (FreeBSD 12 and later)
//   pid 4512 (java), jid 3, uid 80, was killed: out of swap space
//   pid 2210 (clang), jid 0, uid 1001, was killed: a thread waited too long to allocate a page
//   pid 1203 (mysqld), uid 88, was killed: out of swap space                (before 12: no jail id)
//   swap_pager: out of swap space                                           (the pager, before the kill)
//   swap_pager_getswapspace(22): failed
//
// OpenBSD's and NetBSD's page daemon (sys/uvm/uvm_pdaemon.c, uvm_swapout),
// with the pid and its thread id on NetBSD:
//
//   UVM: pid 4321 (python3.11), uid 1000 killed: out of swap
//   UVM: pid 1234.1 (firefox), uid 1000 killed: out of swap
//
// There are no memory cgroups: the machine's RAM and swap ran out, the
// host_ram layer (a jail has no memory limit of its own unless rctl set one,
// and rctl's kill reads differently). A kernel_oom_kill of family kernel, as
// Linux's report is.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"pid [0-9]+ \\([^)]*\\), (jid [0-9]+, )?uid [0-9]+, was killed: ", kRegex},
    {"UVM: pid [0-9.]+ \\([^)]*\\), uid [0-9]+ killed: out of swap", kRegex},
};

class FreebsdOom final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (uvm(line, out)) return;
    size_t p = s.find("pid ");
    size_t k = s.find(", was killed: ");
    if (p == std::string_view::npos || k == std::string_view::npos || k < p) return;
    std::string_view reason = text::trim(s.substr(k + 14));
    if (!(text::starts_with(reason, "out of swap space") || text::starts_with(reason, "failed to reclaim memory") ||
          text::starts_with(reason, "a thread waited too long to allocate a page")))
      return;
    if (guards::is_mention(s, p, k + 14 - p)) return;
    std::string_view rest;
    auto pid = text::parse_i64(s.substr(p + 4), &rest);
    if (!pid || !text::starts_with(rest, " (")) return;
    size_t close = rest.find(')');
    if (close == std::string_view::npos) return;
    std::string_view name = rest.substr(2, close - 2);
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::kernel);
    f.layer = Layer::host_ram;
    f.strength = 0.9f;
    f.pid = pid;
    f.process = std::string(name.substr(0, 64));
    f.detail = fmt::format("FreeBSD's page daemon killed it: {}", reason.substr(0, 64));
    out.add(std::move(f));
  }

 private:
  // OpenBSD's and NetBSD's "UVM: pid 4321 (python3.11), uid 1000 killed: out of swap".
  static bool uvm(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = s.find("UVM: pid ");
    if (p == std::string_view::npos) return false;
    size_t k = s.find(" killed: out of swap", p);
    if (k == std::string_view::npos || guards::is_mention(s, p, k - p)) return true;
    std::string_view rest;
    auto pid = text::parse_i64(s.substr(p + 9), &rest);
    size_t open = rest.find(" ("), close = rest.find(')');
    if (!pid || open == std::string_view::npos || close == std::string_view::npos || close < open) return true;
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::kernel);
    f.layer = Layer::host_ram;
    f.strength = 0.9f;
    f.pid = pid;
    f.process = std::string(rest.substr(open + 2, std::min<size_t>(close - open - 2, 64)));
    f.detail = "the BSD page daemon (UVM) killed it: out of swap";
    out.add(std::move(f));
    return true;
  }
};

}  // namespace

const RecognizerEntry kFreebsdOomEntry{"freebsd_oom", Family::kernel, kPatterns, [] { return std::unique_ptr<Recognizer>(new FreebsdOom); }};

}  // namespace aimem
