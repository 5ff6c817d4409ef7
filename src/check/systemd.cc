// systemd unit files: `[Section]` headers, `Key=Value` lines, `#` and `;`
// comments, a trailing backslash joining lines (systemd.syntax(7)). Parsed
// by hand: no Debian library reads unit files (libsystemd exposes no unit
// parser; the INI readers in Debian, e.g. inih, know neither systemd's line
// continuation nor repeated keys such as Environment=), and the subset
// `aimem check` needs is a few dozen lines. Keys read from [Service]:
// MemoryMax (MemoryLimit, its cgroup-v1 name), MemoryHigh, MemorySwapMax,
// ExecStart, Environment, TimeoutStopSec / TimeoutSec.
#include <cctype>
#include <fmt/format.h>

#include "check/readers.h"
#include "check/server.h"
#include "core/text.h"

namespace aimem::check {

std::optional<uint64_t> parse_systemd_size(std::string_view s) {
  // systemd parse_size() with base 1024: K, M, G, T, P, E suffixes; bare bytes.
  std::string t(text::trim(s));
  if (t.empty()) return std::nullopt;
  uint64_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(t.back()))) {
    case 'K': mult = 1ULL << 10; break;
    case 'M': mult = 1ULL << 20; break;
    case 'G': mult = 1ULL << 30; break;
    case 'T': mult = 1ULL << 40; break;
    case 'B': mult = 1; break;
    default: mult = 0; break;
  }
  if (mult) t.pop_back();
  else mult = 1;
  std::string_view rest;
  auto d = text::parse_double(t, &rest);
  if (!d || !text::trim(rest).empty() || *d < 0 || *d * double(mult) > 1.8e19) return std::nullopt;
  return uint64_t(*d * double(mult));
}

std::optional<double> parse_duration_s(std::string_view s) {
  // Go durations (Compose: 1m30s), systemd time spans (1min 30s), bare
  // seconds. core/time.h's parse_duration_us reads one number and one unit;
  // these formats write compound spans.
  struct Unit {
    const char* name;
    double seconds;
  };
  static constexpr Unit kUnits[] = {{"us", 1e-6},    {"usec", 1e-6}, {"ms", 1e-3},   {"msec", 1e-3}, {"s", 1},
                                    {"sec", 1},      {"second", 1},  {"seconds", 1}, {"m", 60},      {"min", 60},
                                    {"minute", 60},  {"minutes", 60}, {"h", 3600},   {"hr", 3600},   {"hour", 3600},
                                    {"hours", 3600}, {"d", 86400},   {"day", 86400}, {"days", 86400}};
  std::string_view t = text::trim(s);
  if (t.empty()) return std::nullopt;
  double total = 0;
  bool any = false;
  while (!t.empty()) {
    t = text::trim_left(t);
    if (t.empty()) break;
    std::string_view rest;
    auto n = text::parse_double(t, &rest);
    if (!n || *n < 0) return std::nullopt;
    size_t u = 0;
    while (u < rest.size() && std::isalpha(static_cast<unsigned char>(rest[u]))) ++u;
    std::string unit(rest.substr(0, u));
    double mult = 0;
    if (unit.empty()) mult = 1;
    for (const Unit& x : kUnits)
      if (unit == x.name) mult = x.seconds;
    if (mult == 0) return std::nullopt;
    total += *n * mult;
    any = true;
    t = rest.substr(u);
  }
  if (!any) return std::nullopt;
  return total;
}

bool looks_like_systemd(const std::string& text, const std::string& file) {
  for (const char* ext : {".service", ".socket", ".scope", ".slice"})
    if (text::ends_with(file, ext)) return true;
  for (std::string_view line : text::split(text, '\n')) {
    line = text::trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    return line == "[Unit]" || line == "[Service]" || line == "[Install]";
  }
  return false;
}

Result<ReadResult> read_systemd(const std::string& text, const std::string& file) {
  ReadResult out;
  Workload w;
  w.platform = Platform::kSystemd;
  w.kind = "unit";
  auto slash = file.rfind('/');
  w.name = slash == std::string::npos ? file : file.substr(slash + 1);
  w.at = Loc{file, 1, 1};
  Container c;
  c.name = w.name;
  std::string section;
  bool service_seen = false;
  std::vector<std::string_view> lines = text::split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const int line_no = int(i) + 1;
    std::string line(text::trim(lines[i]));
    while (!line.empty() && line.back() == '\\' && i + 1 < lines.size()) {
      line.pop_back();
      line += " " + std::string(text::trim(lines[++i]));
    }
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      if (line.back() != ']')
        return make_error(fmt::format("{}:{}:1: malformed unit file: a section header without its ']'", file, line_no));
      section = line.substr(1, line.size() - 2);
      if (section == "Service") {
        service_seen = true;
        c.at = Loc{file, line_no, 1};
      }
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string::npos)
      return make_error(fmt::format("{}:{}:1: malformed unit file: '{}' is neither [Section], Key=Value nor a comment",
                                    file, line_no, text::quote_line(line, 80)));
    if (section != "Service") continue;
    std::string key(text::trim(std::string_view(line).substr(0, eq)));
    std::string value(text::trim(std::string_view(line).substr(eq + 1)));
    // Columns point at the value as written in the raw line.
    int col = 1;
    if (auto p = lines[i].find('='); p != std::string_view::npos) {
      col = int(p) + 2;
      while (size_t(col - 1) < lines[i].size() && (lines[i][col - 1] == ' ' || lines[i][col - 1] == '\t')) ++col;
    }
    Loc at{file, line_no, col};
    auto size = [&](const std::string& k) -> std::optional<At<uint64_t>> {
      if (value == "infinity" || value.empty()) return std::nullopt;
      if (auto v = parse_systemd_size(value)) return At<uint64_t>{*v, at};
      out.notes.push_back({at, fmt::format("{}={}: not a size aimem reads (a percentage needs the host's RAM); ignored", k, value)});
      return std::nullopt;
    };
    if (key == "MemoryMax" || (key == "MemoryLimit" && !c.mem_limit)) {
      c.mem_limit = size(key);
    } else if (key == "MemorySwapMax") {
      if (value == "infinity") c.swap_limit = At<int64_t>{-1, at};
      else if (auto v = parse_systemd_size(value)) c.swap_limit = At<int64_t>{int64_t(*v), at};
    } else if (key == "ExecStart") {
      // Prefixes @ - : + ! change how systemd runs the command, not the command.
      size_t skip = 0;
      while (skip < value.size() && std::string_view("@-:+!").find(value[skip]) != std::string_view::npos) ++skip;
      c.argv.clear();
      for (const std::string& word : shell_words(std::string_view(value).substr(skip))) c.argv.push_back({word, at});
    } else if (key == "Environment") {
      for (const std::string& kv : shell_words(value)) {
        auto e = kv.find('=');
        if (e != std::string::npos) c.env.push_back({kv.substr(0, e), Arg{kv.substr(e + 1), at}});
      }
    } else if (key == "TimeoutStopSec" || (key == "TimeoutSec" && !w.grace_s)) {
      if (auto s = parse_duration_s(value)) w.grace_s = At<double>{*s, at};
    }
  }
  if (!service_seen) {
    out.notes.push_back({w.at, "no [Service] section: nothing to check in this unit"});
    return out;
  }
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"})
    if (const Arg* v = c.env_var(var); v && c.gpu_devices.empty()) c.gpu_devices = v->text;
  w.containers.push_back(std::move(c));
  out.workloads.push_back(std::move(w));
  return out;
}

Workload read_command_line(const std::vector<std::string>& argv) {
  Workload w;
  w.platform = Platform::kCommand;
  w.kind = "command";
  w.name = argv.empty() ? "" : argv.front();
  const std::string file = "<command line>";
  w.at = Loc{file, 1, 1};
  Container c;
  c.name = w.name;
  c.at = w.at;
  int col = 1;
  for (const std::string& a : argv) {
    // A word of the form NAME=VALUE before the program is an environment
    // assignment (`OLLAMA_NUM_PARALLEL=4 ollama serve`), as in sh.
    auto eq = a.find('=');
    if (c.argv.empty() && eq != std::string::npos && eq > 0 && a[0] != '-') {
      c.env.push_back({a.substr(0, eq), Arg{a.substr(eq + 1), Loc{file, 1, col + int(eq) + 1}}});
    } else {
      c.argv.push_back({a, Loc{file, 1, col}});
    }
    col += int(a.size()) + 1;
  }
  w.containers.push_back(std::move(c));
  return w;
}

}  // namespace aimem::check
