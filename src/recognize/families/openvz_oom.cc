// OpenVZ's and Virtuozzo's container OOM killer (the vzkernel's user
// beancounters, "UB"): when a container's processes use memory past its
// limit (physpages plus swappages in the VSwap model, privvmpages before
// it), the kernel kills inside that container and prints, on the node and in
// the container's dmesg:
//
//   Out of memory in UB 1234: OOM killed process 21738 (php-cgi) score 0 vm:281988kB, rss:17004kB, swap:0kB
//   OOM killed process 14215 (httpd) score 0 vm:412340kB, rss:58102kB, swap:0kB      (the container's own dmesg)
//   OOM killer in rage, 16 tasks killed in ub 1234        (repeated calls within the relaxation period)
//
// The limit is the container's, not the node's: a kernel_oom_kill of family
// kernel with layer container_limit, its victim's resident size from rss:.
// /proc/user_beancounters' failcnt column counts the refusals; it is not
// read here (a table without a kill says no process died).
//
// Modelled on the Plesk knowledge base's article 123671 (Virtuozzo
// containers 4.7) and a VPS host's httpd kills; the tests' values are ours.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"OOM killed process [0-9]+ \\(", kRegex},
};

class OpenvzOom final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    size_t p = s.find("OOM killed process ");
    if (p == std::string_view::npos || guards::is_mention(s, p, 19)) return;
    std::string_view rest;
    auto pid = text::parse_i64(s.substr(p + 19), &rest);
    if (!pid || !text::starts_with(rest, " (")) return;
    size_t close = rest.find(')');
    if (close == std::string_view::npos) return;
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::kernel);
    f.layer = Layer::container_limit;
    f.strength = 0.9f;
    f.pid = pid;
    f.process = std::string(rest.substr(2, std::min<size_t>(close - 2, 64)));
    if (auto v = text::after(rest, "rss:"))
      if (auto kb = text::parse_u64(*v); kb && *kb <= (uint64_t{1} << 40)) f.rss = *kb * units::KiB;
    std::string ub;
    if (auto v = text::after(s.substr(0, p), "Out of memory in UB "))
      if (auto id = text::parse_u64(*v)) ub = fmt::format(" (UB {})", *id);
    f.detail = "the OpenVZ/Virtuozzo container's OOM killer" + ub + ": the container's memory limit";
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kOpenvzOomEntry{"openvz_oom", Family::kernel, kPatterns, [] { return std::unique_ptr<Recognizer>(new OpenvzOom); }};

}  // namespace aimem
