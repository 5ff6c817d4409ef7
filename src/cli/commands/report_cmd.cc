// aimem report FILE.db: a recorded timeline (aimem run --record, aimem watch)
// as a self-contained HTML page with plots, or a JSON summary.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>
#include <fstream>

#include "cli/commands/commands.h"
#include "core/text.h"
#include "core/time.h"
#include "render/diagnosis_json.h"
#include "render/report.h"
#include "sources/readfile.h"
#include "watch/store.h"

namespace aimem::cli {
namespace {

struct ReportArgs {
  std::string file, out, from, to;
  bool json = false;
};

int fail(const std::string& msg) {
  fmt::print(stderr, "aimem report: {}\n", msg);
  return 2;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// An existing -o is replaced only when it is an HTML page (a report from
// before), never a database, a log or anything else someone may need.
bool looks_like_html(const std::string& path) {
  auto head = read_small_file(path, 512);
  if (!head) return false;
  std::string_view s = text::trim_left(*head);
  if (text::starts_with(s, "\xef\xbb\xbf")) s = text::trim_left(s.substr(3));
  return text::istarts_with(s, "<!doctype html") || text::istarts_with(s, "<html");
}

// parse_since's message names --since; here the option is --from or --to.
Result<int64_t> parse_time(const std::string& option, const std::string& text, int64_t now) {
  auto t = timeutil::parse_since(text, now);
  if (t) return t;
  std::string msg = t.error().message;
  if (text::starts_with(msg, "--since ")) msg = msg.substr(8);
  return make_error(option + " " + msg);
}

int run(const ReportArgs& a) {
  struct stat st {};
  if (stat(a.file.c_str(), &st) != 0) return fail(fmt::format("{}: no such file (name a store written by aimem run --record or aimem watch)", a.file));
  report::Options o;
  int64_t now = timeutil::now_us();
  if (!a.from.empty()) {
    auto t = parse_time("--from", a.from, now);
    if (!t) return fail(t.error().message);
    o.from_us = *t;
  }
  if (!a.to.empty()) {
    auto t = parse_time("--to", a.to, now);
    if (!t) return fail(t.error().message);
    o.to_us = *t;
  }
  if (o.from_us > o.to_us) return fail(fmt::format("--from {} is after --to {}", a.from, a.to));
  if (!a.out.empty()) {
    for (const char* suffix : {"", "-wal", "-shm"})
      if (same_file(a.out, a.file + suffix)) return fail(fmt::format("-o {}: that is the input store; name another file", a.out));
    if (access(a.out.c_str(), F_OK) == 0 && !looks_like_html(a.out))
      return fail(fmt::format("-o {}: exists and is not an HTML page; refusing to overwrite it", a.out));
  }
  auto store = watch::Store::open(a.file, watch::Retention{0, 0});
  if (!store) return fail(store.error().message);
  report::Timeline t = report::build_timeline(**store, o);
  if (a.json) {
    fmt::print("{}\n", render_json(report::summary_json(t)));
    return 0;
  }
  std::string html = report::render_html(t);
  if (a.out.empty()) {
    fwrite(html.data(), 1, html.size(), stdout);
    return 0;
  }
  // Written beside the target and renamed, so a reader never sees half a page.
  std::string tmp = a.out + ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(html.data(), static_cast<std::streamsize>(html.size()));
    if (!f.flush()) {
      unlink(tmp.c_str());
      return fail(fmt::format("-o {}: cannot write", a.out));
    }
  }
  if (rename(tmp.c_str(), a.out.c_str()) != 0) {
    unlink(tmp.c_str());
    return fail(fmt::format("-o {}: cannot write", a.out));
  }
  fmt::print(stderr, "aimem report: wrote {} ({} samples, {} events, {} KiB)\n", a.out, t.samples, t.events.size(),
             html.size() / 1024);
  return 0;
}

}  // namespace

Action add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand("report", "Render a recorded timeline as HTML with plots");
  sub->footer(
      "Examples:\n"
      "  aimem report run.db -o run.html\n"
      "  aimem report ~/.local/state/aimem/aimem.db --from 2h --to 1h -o last-incident.html\n"
      "  aimem report run.db --json");
  sub->add_option("file", a->file, "Store written by `aimem run --record` or `aimem watch`")->required();
  auto* out = sub->add_option("-o,--output", a->out, "HTML file to write (default: stdout); an existing one is replaced only if it is HTML");
  sub->add_option("--from", a->from, "Start of the window: 2026-11-29T15:00:00Z, @EPOCH, or 2h (ago)");
  sub->add_option("--to", a->to, "End of the window, same forms");
  sub->add_flag("--json", a->json, "Print a summary (range, samples, each pool's peak and limit, events) as JSON")->excludes(out);
  return [a] { return run(*a); };
}

}  // namespace aimem::cli
