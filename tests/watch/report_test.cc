// aimem report: the HTML page plots each pool against its limit, marks events
// and shows the diagnosis; long recordings are downsampled with their spikes
// kept; the real binary refuses bad input with exit 2 and never overwrites
// what it must not.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>

#include "core/units.h"
#include "render/report.h"
#include "support/test_support.h"
#include "watch/store.h"

namespace aimem::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using watch::Sample;
constexpr int64_t kT0 = 1764428400000000, kSecond = 1000000;
constexpr uint64_t kLimit = 48 * units::MiB;
const std::string kCgroup = "/aimem/run-1";
const std::string kKill = "python3 (pid 4242) was killed when memory cgroup /aimem/run-1 reached its 48.0 MiB limit";

Sample rising(int i, int n) {
  Sample s;
  s.time_us = kT0 + i * kSecond;
  s.host.mem_total = 16 * units::GiB;
  s.host.mem_available = 10 * units::GiB - uint64_t(i) * units::MiB;
  watch::CgroupSample c;
  c.path = kCgroup;
  c.version = 1;
  c.usage = kLimit * uint64_t(i) / uint64_t(n - 1);
  c.limit = kLimit;
  s.cgroups.push_back(c);
  watch::ProcessSample p;
  p.pid = 4242;
  p.comm = "python3";
  p.rss = *c.usage;
  s.processes.push_back(p);
  return s;
}

// A store of n samples rising to the limit, then the OOM kill.
std::string make_store(const std::string& dir, int n = 60) {
  std::string path = dir + "/run.db";
  auto st = test::take(watch::Store::open(path, {}));
  if (!st) return path;
  for (int i = 0; i < n; ++i) EXPECT_TRUE(st->append(rising(i, n)));
  json diag = {{"layer", "container_limit"}, {"cause", "limit_too_low"}, {"incidents", {{{"summary", kKill}}}}};
  EXPECT_TRUE(st->append(watch::Event{kT0 + (n - 1) * kSecond, "oom_kill", kCgroup, "OOM kill: python3 (pid 4242)", diag.dump()}));
  st->set_meta("command", "python3 alloc.py --grow <fast>");
  st->set_meta("memory_limit", "48M");
  st->set_meta("exit_status", "137");
  return path;
}

// The SVG of one panel.
std::string panel_of(const std::string& html, const std::string& title) {
  size_t a = html.find("data-panel=\"" + title + "\"");
  if (a == std::string::npos) return {};
  return html.substr(a, html.find("</svg>", a) - a);
}

// The points of the polyline of `cls` named `series` within `svg`.
std::vector<std::pair<double, double>> points_of(const std::string& svg, const std::string& cls, const std::string& series) {
  std::vector<std::pair<double, double>> out;
  size_t a = svg.find("<polyline class=\"" + cls + "\" data-series=\"" + series + "\"");
  if (a == std::string::npos) return out;
  a = svg.find("points=\"", a) + 8;
  std::string pts = svg.substr(a, svg.find('"', a) - a);
  std::istringstream in(pts);
  double x, y;
  char comma;
  while (in >> x >> comma >> y) out.push_back({x, y});
  return out;
}

TEST(Report, PlotsTheCgroupAgainstItsLimitWithTheKillMarked) {
  std::string dir = test::temp_dir("report-basic");
  std::string path = make_store(dir);
  auto st = test::take(watch::Store::open(path, {}));
  ASSERT_TRUE(st);
  Timeline t = build_timeline(*st, {});
  EXPECT_EQ(t.samples, 60u);
  std::string html = render_html(t);
  std::string svg = panel_of(html, "cgroup " + kCgroup);
  ASSERT_FALSE(svg.empty()) << html.substr(0, 2000);
  auto usage = points_of(svg, "line", "usage");
  auto limit = points_of(svg, "limit", "limit");
  ASSERT_EQ(usage.size(), 60u);
  ASSERT_FALSE(limit.empty());
  // Rising usage: y decreases (SVG y points down) and ends on the limit line.
  for (size_t i = 1; i < usage.size(); ++i) {
    EXPECT_GT(usage[i].first, usage[i - 1].first);
    EXPECT_LT(usage[i].second, usage[i - 1].second);
  }
  EXPECT_NEAR(usage.back().second, limit.back().second, 0.11);
  EXPECT_GT(usage.front().second, limit.front().second + 100);
  EXPECT_NE(svg.find("<g class=\"event\" data-kind=\"oom_kill\">"), std::string::npos);
  // The marker sits at the kill's time: the right end of the axis.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("class=\"event\"[^>]*><line x1=\"([0-9.]+)\"")));
  EXPECT_NEAR(std::stod(m[1]), usage.back().first, 0.11);
  // The diagnosis, the event's summary and the run's meta (escaped).
  EXPECT_NE(html.find(kKill), std::string::npos);
  EXPECT_NE(html.find("OOM kill: python3 (pid 4242)"), std::string::npos);
  EXPECT_NE(html.find("container_limit"), std::string::npos);
  EXPECT_NE(html.find("python3 alloc.py --grow &lt;fast&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<fast>"), std::string::npos);
  EXPECT_NE(html.find("data-panel=\"host RAM\""), std::string::npos);
  EXPECT_FALSE(points_of(panel_of(html, "top processes (RSS)"), "line", "python3 (pid 4242)").empty());
  // Self-contained: no scripts, no external resources.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), html.find("http://www.w3.org/2000/svg"));
  // JSON summary: pool peak and limit, events, range.
  json j = summary_json(t);
  EXPECT_EQ(j["samples"], 60);
  EXPECT_EQ(j["from_us"], kT0);
  EXPECT_EQ(j["to_us"], kT0 + 59 * kSecond);
  bool found = false;
  for (const auto& p : j["pools"])
    if (p["name"] == "cgroup " + kCgroup) {
      found = true;
      EXPECT_EQ(p["peak_bytes"], kLimit);
      EXPECT_EQ(p["limit_bytes"], kLimit);
    }
  EXPECT_TRUE(found) << j.dump(2);
  ASSERT_EQ(j["events"].size(), 1u);
  EXPECT_EQ(j["events"][0]["kind"], "oom_kill");
  EXPECT_EQ(j["meta"]["exit_status"], "137");
  // A window: only the samples inside it.
  Options o;
  o.from_us = kT0 + 10 * kSecond;
  o.to_us = kT0 + 19 * kSecond;
  Timeline w = build_timeline(*st, o);
  EXPECT_EQ(w.samples, 10u);
  EXPECT_TRUE(w.events.empty());
  fs::remove_all(dir);
}

TEST(Report, HundredThousandSamplesStayBoundedAndKeepTheSpike) {
  std::string dir = test::temp_dir("report-big");
  std::string path = dir + "/big.db";
  auto st = test::take(watch::Store::open(path, {}));
  ASSERT_TRUE(st);
  const int n = 100000, spike = 61234;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    Sample s = rising(i % 1000, 1000);  // a sawtooth
    s.time_us = kT0 + int64_t(i) * 100000;  // 10 Hz
    if (i == spike) s.cgroups[0].usage = 2 * kLimit;
    ASSERT_TRUE(st->append(s));
  }
  auto t1 = std::chrono::steady_clock::now();
  Timeline t = build_timeline(*st, {});
  std::string html = render_html(t);
  auto t2 = std::chrono::steady_clock::now();
  std::printf("100k samples: append %.2f s, report %.2f s, HTML %zu KiB\n",
              std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(), html.size() / 1024);
  EXPECT_EQ(t.samples, size_t(n));
  EXPECT_LT(html.size(), 256u * 1024);
  for (const auto& p : t.panels)
    for (const auto& s : p.series) EXPECT_LE(s.points.size(), 1000u) << p.title << " " << s.name;
  // The one-sample spike survives downsampling: the highest point of the usage
  // line is above the limit line.
  auto usage = points_of(panel_of(html, "cgroup " + kCgroup), "line", "usage");
  auto limit = points_of(panel_of(html, "cgroup " + kCgroup), "limit", "limit");
  ASSERT_FALSE(usage.empty());
  ASSERT_FALSE(limit.empty());
  double top = 1e9;
  for (auto& p : usage) top = std::min(top, p.second);
  EXPECT_LT(top, limit[0].second - 50);
  EXPECT_EQ(summary_json(t)["pools"][1]["peak_bytes"], 2 * kLimit);
  fs::remove_all(dir);
}

TEST(Report, EscapesHostileNames) {
  std::string dir = test::temp_dir("report-esc");
  auto st = test::take(watch::Store::open(dir + "/x.db", {}));
  ASSERT_TRUE(st);
  Sample s = rising(1, 2);
  s.cgroups[0].path = "/\"><script>alert(1)</script>";
  s.processes[0].comm = "<img src=x>";
  ASSERT_TRUE(st->append(s));
  ASSERT_TRUE(st->append(watch::Event{s.time_us, "alert", "k", "<b>&", "not json"}));
  std::string html = render_html(build_timeline(*st, {}));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;&amp;"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportCli, RefusesBadInputAndWritesHtml) {
  std::string dir = test::temp_dir("report-cli");
  std::string notes = dir + "/notes.txt";
  test::write_file(notes, "not a store\n");
  auto r = test::run_aimem({"report", notes});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(notes), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not an aimem store"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(notes), "not a store\n");
  r = test::run_aimem({"report", dir + "/missing.db"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;

  std::string db = make_store(dir);
  std::string html = dir + "/out.html";
  r = test::run_aimem({"report", db, "-o", html});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string page = test::read_file(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find(kKill), std::string::npos);
  r = test::run_aimem({"report", db, "-o", html});  // an HTML page is replaced
  EXPECT_EQ(r.status, 0) << r.err;
  r = test::run_aimem({"report", db, "-o", db});  // the input never
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("input store"), std::string::npos) << r.err;
  r = test::run_aimem({"report", db, "-o", notes});  // nor a file that is not HTML
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(test::read_file(notes), "not a store\n");
  r = test::run_aimem({"report", db, "--json", "--from", "@" + std::to_string(kT0 / kSecond + 30)});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["samples"], 30);
  EXPECT_EQ(j["events"].size(), 1u);
  r = test::run_aimem({"report", db});  // stdout
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("data-panel=\"cgroup /aimem/run-1\""), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aimem::report
