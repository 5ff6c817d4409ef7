// Docker, Compose and other container CLIs (docs.docker.com: "Resource
// constraints", `docker inspect`, `docker events`).
//
// docker inspect (pretty JSON, or one line from --format '{{json .State}}'):
//   "Id": "4f1e2d...",  "State": { ... "OOMKilled": true, ... "ExitCode": 137, ... },  "Name": "/vllm",
//   "HostConfig": { ... "Memory": 536870912, ... }      (0 = no limit)
//   "StartedAt": "2019-06-26T09:14:02.118Z", "FinishedAt": "2019-06-26T09:14:02.631Z" (in State)
//   -> docker_oomkilled (with how long it ran, uptime_at_failure_s, from StartedAt to FinishedAt) /
//      exit_status / memory_limit "HostConfig.Memory", all named after the container; the facts of
//      one object are held until the object ends ("Name" comes after "State").
// docker inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}} {{.HostConfig.Memory}}' web   then its output
//   true 137 17179869184          -> the same facts, each value read by its template field's position
// docker inspect web --format '{{.State.Status}} OOMKilled={{.State.OOMKilled}} exit={{.State.ExitCode}}'
//   exited OOMKilled=true exit=137  -> the same, the text around each {{...}} taken off its value
// docker events:  2024-05-01T10:00:00.000000000Z container oom <id> (image=x, name=y)
//   --format with a template of its own ('{{.Time}} {{.Action}} {{.Actor.Attributes.exitCode}}'):
//                   1783852871 oom   /   1783852871 die 137     (the rows after the command;
//                   1783852871 kill 9: the API's kill, as below)
//                 ... container die <id> (exitCode=137, image=x, name=y)
//   1.8 and older: 2015-09-03T16:20:42.000000000-07:00 2424b8f0a892: (from ubuntu) oom
//   --format '{{json .}}': {"status":"oom","id":"36eb..","from":"img","Type":"container","Action":"oom",
//                           "Actor":{"ID":"36eb..","Attributes":{"image":"img","name":"web"}},"time":..}
//                          {"Action":"die",...,"Attributes":{"exitCode":"137",...,"name":"web"}}  (newer
//                          engines drop the legacy "status"/"id"/"from"; very old streams have only them)
//   -> docker_oomkilled named after the container (name, else the short id); a die gives its exit code.
// containerd's log (the runtime under the kubelet): level=info msg="TaskOOM event &TaskOOM{ContainerID:<id>,...}"
//   (or container_id:\"<id>\" in newer releases) -> docker_oomkilled named after the id's first 12 characters.
//   ... container kill <id> (image=x, name=y, signal=15)   /   ... container stop <id> (...)
//   -> stop_or_restart: the API killed it (docker stop escalates SIGTERM to SIGKILL after its grace period).
// docker run / create / update / build, podman, nerdctl, hyper (also across "\" continuation lines;
// `docker build --memory` limits each build step's container):
//   docker run --rm -m 512m --name stress img      --memory=2g      --memory 2g      -m512m
//   -> memory_limit "docker run -m". Units are binary (k, m, g); a bare number is bytes for docker,
//      podman and nerdctl (docker refuses limits under 6 MiB, 4 MiB before 20.10, so a smaller
//      bare number is not a limit it ran with) and MiB for hyper, whose CLI documents --memory in MB.
// Compose:  mem_limit: 4g   /   deploy: resources: limits: memory: 4G
// docker ps -a:     4f1e2d  img  "cmd"  2 hours ago  Exited (137) 3 minutes ago   vllm
// docker stats tables are read by docker_stats.cc.
// CI helpers:       Max memory usage of this container is 0 (memory.max_usage_in_bytes) -> memory_usage
// Operators:        docker stop|restart|kill, docker compose restart|stop, supervisorctl restart|stop
//                   -> stop_or_restart (a SIGKILL that follows one is not an OOM kill)
// Every docker input also gets one platform "docker" fact.
#include <vector>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"\"Id\":", kContext},
    {"\"OOMKilled\":"},
    {"\"ExitCode\":"},
    {"\"Name\":", kContext},
    {"\"Memory\":", kContext},
    {"\"StartedAt\":", kContext},
    {"inspect ([^ -][^ ]* )?(-f|--format)[ =]['\"]?[^'\"]*\\{\\{ *\\.", kRegex | kContext},
    // A template's output line: a few words and numbers around one true/false
    // ("true 137", "exited 137 true", "exited exit=137 oom=true"); the
    // template decides what each is.
    // (A word, not the whole line's shape: the shape's regex, "^\\s*([a-z0-9_.:=/-]+\\s+){0,7}...$", went
    // unreported by vectorscan 5.4.9's AVX-512 path at some alignments of the text; scanner_test.cc holds it.)
    {"(^|[\\s=:])(true|false)(\\s|$)", kRegex | kCaseless | kContext},
    // A template's output of figures only ("1073741824 1073741824" for
    // '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}').
    {"^[ \t]*[0-9]+(\\s+[0-9]+){0,7}\\s*$", kRegex | kContext},
    // The output of a template with words around its fields: "exited OOMKilled=true exit=137".
    {"OOMKilled[=:] ?(true|false)", kRegex | kCaseless | kContext},
    {"\"FinishedAt\":", kContext},
    {"container oom "},
    {"docker events .*--format", kRegex | kContext},
    {"(^|\\s)oom(\\s|$)", kRegex},           // a --format template's row: "1783852871 oom"
    {"(^|\\s)die\\s+[0-9]+", kRegex | kCompanion},  // and its "die 137"
    {"^[0-9]+ (kill|stop)( [0-9]+)?\\s*$", kRegex | kContext},  // and an API kill's "1783852871 kill 9"
    {"TaskOOM event"},
    {"container die ", kCompanion},
    {"container kill ", kContext},
    {"container stop ", kContext},
    {"\"Action\":\"oom\""},
    {"\"status\":\"oom\""},
    {"\"Action\":\"die\"", kCompanion},
    {"\\(from [^)]*\\) oom\\s*$", kRegex},
    {"docker run ", kContext},
    {"docker create ", kContext},
    {"docker update ", kContext},
    {"docker container run ", kContext},
    {"podman run ", kContext},
    {"nerdctl run ", kContext},
    {"hyper run ", kContext},
    {"docker build ", kContext},
    {"docker buildx build ", kContext},
    {"podman build ", kContext},
    {"^[ \t]*(-m|--memory)[ =]", kRegex | kContext},
    {"mem_limit:", kContext},
    {"^[ \t]*deploy:\\s*$", kRegex | kContext},
    {"^[ \t]*limits:\\s*$", kRegex | kContext},
    {"^[ \t]*memory:\\s", kRegex | kContext},
    {"Exited ("},
    {"Restarting \\([0-9]+\\)", kRegex | kCompanion},  // docker ps under a restart policy: "Restarting (137) 7 seconds ago"
    {"Max memory usage of this container is", kContext},
    {"docker stop", kContext},
    {"docker restart", kContext},
    {"docker kill", kContext},
    {"compose restart", kContext},
    {"compose stop", kContext},
    {"supervisorctl restart", kContext},
    {"supervisorctl stop", kContext},
};

// Flags of `docker run` that take no value (so the next token is not theirs).
constexpr std::string_view kBoolFlags[] = {"--rm", "--detach", "--interactive", "--tty", "--privileged", "--init",
                                           "--publish-all", "--read-only", "--oom-kill-disable", "--no-healthcheck",
                                           "--sig-proxy", "--help", "--quiet", "--disable-content-trust"};

bool bool_flag(std::string_view t) {
  for (std::string_view f : kBoolFlags)
    if (t == f) return true;
  // Short clusters of boolean letters: -d -i -t -it -ti -dit -P -q
  if (t.size() >= 2 && t[0] == '-' && t[1] != '-') {
    for (char c : t.substr(1))
      if (c != 'd' && c != 'i' && c != 't' && c != 'P' && c != 'q') return false;
    return true;
  }
  return false;
}

std::vector<std::string_view> tokens(std::string_view s, size_t max = 256) { return platform::words(s, max); }

class Docker final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (inspect_template(line, out)) return;
    if (inspect(line, out)) return;
    if (events(line, out)) return;
    if (run_command(line, out)) return;
    if (compose(line, out)) return;
    if (size_t p = s.find("Exited ("); p != std::string_view::npos) {
      ps_row(line, p + 8, out);
      return;
    }
    if (size_t p = s.find("Restarting ("); p != std::string_view::npos && text::contains(s.substr(p), " ago")) {
      ps_row(line, p + 12, out);
      return;
    }
    if (flag_line(line, out)) return;
    if (size_t p = s.find("Max memory usage of this container is"); p != std::string_view::npos) {
      auto v = units::parse_log_size(s.substr(p + 37), nullptr, true);
      if (!v) return;
      Fact f = make_fact(line, FactKind::memory_usage, Family::docker);
      f.usage = v;
      f.detail = "container max_usage_in_bytes";
      out.add(std::move(f));
      return;
    }
    stop(line, out);
  }

  void finish(FactSink& out) override { close_object(out); }

 private:
  // The docker inspect object being read.
  std::vector<Fact> held_;
  std::string name_, id_;
  std::optional<int64_t> started_us_, finished_us_;  // State.StartedAt, State.FinishedAt
  std::vector<std::string> template_fields_;  // an inspect -f template's {{.Paths}}, in order ("" for literal words)
  std::vector<std::pair<std::string, std::string>> template_affixes_;  // each word's text before and after its {{...}}
  std::string template_name_;
  uint64_t template_line_ = 0;
  uint64_t template_lead_ = 0;  // output lines of the commands before the inspect
  uint64_t object_line_ = 0;
  // docker run continued over "\" lines.
  uint64_t run_cont_line_ = 0;
  uint64_t run_bare_unit_ = 1;
  std::string run_name_;
  // Compose: deploy -> resources -> limits -> memory
  uint64_t deploy_line_ = 0, limits_line_ = 0;
  size_t limits_indent_ = 0;
  bool platform_sent_ = false;
  // The last docker oom event, to count a repeated one once.
  std::string last_oom_name_;
  // A `docker events --format` with a template of its own: its rows follow.
  uint64_t events_format_line_ = 0;
  std::string events_container_;
  static constexpr uint64_t kEventRows = 40;
  uint64_t last_oom_line_ = 0;

  // HostConfig.Memory of 0: the container ran with no memory limit of its own.
  static Fact no_limit(const Line& line) {
    Fact f = make_fact(line, FactKind::runtime_setting, Family::docker);
    f.detail = std::string(kNoContainerLimit);
    return f;
  }

  void platform(const Line& line, FactSink& out) {
    if (platform_sent_) return;
    platform_sent_ = true;
    Fact f = make_fact(line, FactKind::platform, Family::docker);
    f.detail = "docker";
    out.add(std::move(f));
  }

  // The flag on its own in a platform's or a script's line, outside an
  // inspect template ("worker container exited: exit code 137,
  // OOMKilled=true", RunPod's and a wrapper's key=value): Docker's field, set.
  bool flag_line(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = text::ifind(s, "oomkilled");
    if (p == std::string_view::npos || p + 9 >= s.size() || (s[p + 9] != '=' && s[p + 9] != ':')) return false;
    std::string_view value = text::trim_left(s.substr(p + 10));
    if (!text::istarts_with(value, "true")) return false;
    if (guards::is_mention(s, p, static_cast<size_t>(value.data() - s.data()) + 4 - p)) return false;
    Fact f = make_fact(line, FactKind::docker_oomkilled, Family::docker);
    f.layer = Layer::container_limit;
    f.strength = 0.85f;
    f.detail = "OOMKilled=true";
    out.add(std::move(f));
    return true;
  }

  // `docker inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}} ...' name`
  // (or `inspect name --format '...'`) and, on one of the next lines, its
  // values in the template's order; a word's literal text around its {{...}}
  // ("OOMKilled={{.State.OOMKilled}}") is printed around the value too.
  bool inspect_template(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (size_t p = s.find("inspect "); p != std::string_view::npos && text::contains(s, "{{") &&
                                         (text::contains(s, "docker") || text::contains(s, "podman"))) {
      std::string_view t = s.substr(p + 8);
      size_t flag = std::string_view::npos;
      for (std::string_view f : {"-f ", "-f=", "--format ", "--format="})
        if (size_t at = t.find(f); at != std::string_view::npos && (at == 0 || t[at - 1] == ' ') && at < flag) flag = at;
      if (flag == std::string_view::npos) return false;
      // A name before the flag: "docker inspect web --format '...'".
      std::string_view before = text::trim(t.substr(0, flag));
      size_t q = t.find_first_of("'\"", flag);
      if (q == std::string_view::npos) return false;
      char quote = t[q];
      size_t end = t.find(quote, q + 1);
      if (end == std::string_view::npos) return false;
      template_fields_.clear();
      template_affixes_.clear();
      for (std::string_view field : platform::words(t.substr(q + 1, end - q - 1), 16)) {
        auto open = field.find("{{");
        auto close = field.find("}}");
        bool templ = open != std::string_view::npos && close != std::string_view::npos && close > open;
        std::string_view path = templ ? text::trim(field.substr(open + 2, close - open - 2)) : std::string_view();
        template_fields_.emplace_back(path.substr(0, 64));
        template_affixes_.emplace_back(templ ? std::string(field.substr(0, open).substr(0, 64)) : std::string(),
                                       templ ? std::string(field.substr(close + 2).substr(0, 64)) : std::string());
      }
      std::string_view name = before.empty() ? text::trim(t.substr(end + 1)) : before;
      template_name_ = std::string(text::first_word(name).substr(0, 128));
      template_line_ = line.number;
      // Commands before it on the line (`nproc; docker inspect ...`) print
      // first, a line each: their lines are not the template's values.
      template_lead_ = platform::commands_before(s.substr(0, p));
      platform(line, out);
      return true;
    }
    if (template_fields_.empty() || line.number > template_line_ + 4 + template_lead_) return false;
    if (line.number <= template_line_ + template_lead_) return false;
    auto values = platform::words(s, 16);
    if (values.size() != template_fields_.size()) return false;
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string& field = template_fields_[i];
      std::string_view value = values[i];
      const auto& [prefix, suffix] = template_affixes_[i];
      if (!text::starts_with(value, prefix) || value.size() < prefix.size() + suffix.size() ||
          value.substr(value.size() - suffix.size()) != suffix)
        return false;  // not this template's output
      value = value.substr(prefix.size(), value.size() - prefix.size() - suffix.size());
      if (field == ".State.OOMKilled" && value == "true") {
        Fact f = make_fact(line, FactKind::docker_oomkilled, Family::docker);
        f.layer = Layer::container_limit;
        f.strength = 0.95f;
        f.detail = "State.OOMKilled";
        f.container = template_name_;
        out.add(std::move(f));
      } else if (field == ".State.ExitCode") {
        if (auto n = text::parse_i64(value)) {
          Fact f = make_fact(line, FactKind::exit_status, Family::docker);
          f.exit_code = static_cast<int>(*n);
          f.strength = 0.3f;
          f.detail = "State.ExitCode";
          f.container = template_name_;
          out.add(std::move(f));
        }
      } else if (field == ".HostConfig.Memory") {
        if (auto n = text::parse_u64(value); n && *n > 0) {
          Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
          f.limit = n;
          f.detail = "HostConfig.Memory";
          f.container = template_name_;
          out.add(std::move(f));
        } else if (n) {
          Fact f = no_limit(line);
          f.container = template_name_;
          out.add(std::move(f));
        }
      }
    }
    template_fields_.clear();
    return true;
  }

  void close_object(FactSink& out) {
    std::string who = !name_.empty() ? name_ : id_;
    // State.StartedAt to State.FinishedAt: how long it ran before the kill.
    std::optional<double> ran;
    if (started_us_ && finished_us_ && *finished_us_ >= *started_us_)
      ran = static_cast<double>(*finished_us_ - *started_us_) / 1e6;
    for (Fact& f : held_) {
      if (f.container.empty()) f.container = who;
      if (ran && f.kind == FactKind::docker_oomkilled) f.uptime_at_failure_s = ran;
      out.add(std::move(f));
    }
    held_.clear();
    name_.clear();
    id_.clear();
    started_us_.reset();
    finished_us_.reset();
  }

  // `"Key": value` anywhere on the line (pretty or compact JSON).
  static std::optional<std::string_view> json_value(std::string_view s, std::string_view key) {
    auto v = text::after(s, key);
    if (!v) return std::nullopt;
    return platform::skip(*v, " \t:");
  }

  bool inspect(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    bool any = false;
    if (auto v = json_value(s, "\"Id\":"); v && text::starts_with(*v, "\"")) {
      std::string_view id = text::take_until(v->substr(1), "\"");
      // A new object (docker inspect of several containers) closes the previous one.
      if (id.size() >= 12 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos) {
        close_object(out);
        id_ = std::string(id.substr(0, 12));
        object_line_ = line.number;
        any = true;
      }
    }
    if (auto v = json_value(s, "\"Name\":"); v && text::starts_with(*v, "\"/")) {
      name_ = std::string(text::take_until(v->substr(2), "\"").substr(0, 128));
      any = true;
    }
    if (auto v = json_value(s, "\"OOMKilled\":")) {
      any = true;
      if (text::starts_with(*v, "true")) {
        Fact f = make_fact(line, FactKind::docker_oomkilled, Family::docker);
        f.layer = Layer::container_limit;
        f.strength = 0.95f;
        f.detail = "State.OOMKilled";
        hold(line, std::move(f), out);
      } else if (text::starts_with(*v, "false")) {
        Fact f = make_fact(line, FactKind::memory_usage, Family::docker);
        f.detail = std::string(kRuntimeNoOomKill);
        hold(line, std::move(f), out);
      }
    }
    for (auto [key, slot] : {std::pair{"\"StartedAt\":", &started_us_}, std::pair{"\"FinishedAt\":", &finished_us_}}) {
      auto v = json_value(s, key);
      if (!v || !text::starts_with(*v, "\"")) continue;
      // "0001-01-01T00:00:00Z" (never finished) parses to no time or a negative one.
      if (auto t = timeutil::parse_datetime(v->substr(1)); t && *t > 0) *slot = t, any = true;
    }
    if (auto v = json_value(s, "\"ExitCode\":")) {
      if (auto n = text::parse_i64(*v)) {
        Fact f = make_fact(line, FactKind::exit_status, Family::docker);
        f.exit_code = static_cast<int>(*n);
        f.strength = 0.3f;
        f.detail = "State.ExitCode";
        hold(line, std::move(f), out);
        any = true;
      }
    }
    if (auto v = json_value(s, "\"Memory\":")) {
      if (auto n = text::parse_u64(*v)) {
        any = true;
        if (*n > 0) {
          Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
          f.limit = *n;
          f.detail = "HostConfig.Memory";
          hold(line, std::move(f), out);
        } else {  // 0: no limit
          hold(line, no_limit(line), out);
        }
      }
    }
    if (any) platform(line, out);
    return any;
  }

  void hold(const Line& line, Fact f, FactSink& out) {
    if (!held_.empty() && line.number > object_line_ + 2000) close_object(out);
    if (held_.empty() && object_line_ == 0) object_line_ = line.number;
    if (held_.size() < 64) held_.push_back(std::move(f));
  }

  // The value of `key` in an event's "(a=1, b=2)" attributes: only where the
  // key starts an attribute ("name=" is not "io.kubernetes.container.name=").
  static std::optional<std::string_view> event_attribute(std::string_view s, std::string_view key) {
    size_t p = s.find('(');
    while (p != std::string_view::npos && (p = s.find(key, p)) != std::string_view::npos) {
      if (p > 0 && (s[p - 1] == '(' || s[p - 1] == ' ')) return s.substr(p + key.size());
      ++p;
    }
    return std::nullopt;
  }

  // docker events, text and JSON.
  bool events(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (text::contains(s, "docker events") && text::contains(s, "--format") && !text::contains(s, "json")) {
      events_format_line_ = line.number;
      // "--filter container=NAME": the rows are that container's.
      events_container_.clear();
      if (auto v = text::after(s, "container=")) events_container_ = std::string(text::take_until(*v, " '\"").substr(0, 128));
      return true;
    }
    bool json = text::contains(s, "\"Action\":\"") || text::contains(s, "\"status\":\"");
    bool oom = false, die = false;
    std::string name;
    std::optional<int64_t> exit;
    if (json) {
      auto field = [&](std::string_view key) -> std::string_view {
        auto v = text::after(s, key);
        return v ? text::take_until(*v, "\"") : std::string_view();
      };
      std::string_view action = field("\"Action\":\"");
      if (action.empty()) action = field("\"status\":\"");
      oom = action == "oom";
      die = action == "die";
      if (!oom && !die) return false;
      if (!text::contains(s, "\"Type\":\"container\"") && !text::contains(s, "\"id\":\"")) return false;
      name = std::string(field("\"name\":\"").substr(0, 128));
      if (name.empty()) name = std::string(field("\"id\":\"").substr(0, 12));
      if (name.empty()) name = std::string(field("\"ID\":\"").substr(0, 12));
      if (auto v = text::after(s, "\"exitCode\":\"")) exit = text::parse_i64(*v);
    } else if (size_t p = s.find(": (from "); p != std::string_view::npos && text::ends_with(text::trim(s), ") oom")) {
      // 1.8: "<time> <id>: (from <image>) oom"
      oom = true;
      std::string_view head = text::trim(s.substr(0, p));
      size_t sp = head.find_last_of(" \t");
      name = std::string(head.substr(sp == std::string_view::npos ? 0 : sp + 1).substr(0, 12));
    } else if (events_format_line_ && line.number > events_format_line_ && line.number <= events_format_line_ + kEventRows &&
               !json) {
      // `docker events --format '{{.Time}} {{.Action}} {{.Actor.Attributes.exitCode}}'`:
      // the template's own words, one event a row ("1783852871 oom", "1783852871 die 137").
      auto w = tokens(s, 16);
      for (size_t i = 0; i < w.size(); ++i) {
        if (w[i] == "oom") oom = true;
        if (w[i] == "die") {
          die = true;
          if (i + 1 < w.size()) exit = text::parse_i64(w[i + 1]);
        }
        // "1776002291 kill 9" ({{.Actor.Attributes.signal}}): the API's kill, as in the text form.
        if ((w[i] == "kill" || w[i] == "stop") && !oom && !die) {
          std::optional<std::string_view> sig;
          if (i + 1 < w.size() && text::parse_u64(w[i + 1])) sig = w[i + 1];
          out.add(api_kill_fact(line, w[i] == "stop", sig, events_container_));
          return true;
        }
      }
      if (!oom && !die) return false;
      name = events_container_;
    } else if (size_t t = s.find("TaskOOM event"); t != std::string_view::npos) {
      // containerd (the runtime under the kubelet and nerdctl): its CRI plugin
      // logs each task's OOM event; the container id by version
      // ("&TaskOOM{ContainerID:<id>,...}", "container_id:\"<id>\"").
      oom = true;
      std::string_view rest = s.substr(t);
      std::optional<std::string_view> id = text::after(rest, "ContainerID:");
      if (!id) id = text::after(rest, "container_id:");
      if (id) {
        std::string_view v = *id;
        while (!v.empty() && (v.front() == '\\' || v.front() == '"' || v.front() == ' ')) v.remove_prefix(1);
        name = std::string(text::take_until(v, ",}\\\" ").substr(0, 12));
      }
    } else {
      oom = text::contains(s, "container oom ");
      die = !oom && text::contains(s, "container die ");
      if (!oom && !die && (text::contains(s, "container kill ") || text::contains(s, "container stop ")))
        return api_kill(line, s, out);
      if (!oom && !die) return false;
      if (auto v = event_attribute(s, "name=")) name = std::string(text::take_until(*v, ",)").substr(0, 128));
      if (auto v = event_attribute(s, "exitCode=")) exit = text::parse_i64(*v);
      if (name.empty()) {
        if (auto v = text::after(s, oom ? "container oom " : "container die ")) name = std::string(text::first_word(*v).substr(0, 12));
      }
    }
    if (oom) {
      // docker repeats the event for one OOM (moby #27247): one fact per container and burst.
      if (last_oom_line_ && name == last_oom_name_ && line.number <= last_oom_line_ + 20) {
        last_oom_line_ = line.number;
        return true;
      }
      last_oom_name_ = name;
      last_oom_line_ = line.number;
      Fact f = make_fact(line, FactKind::docker_oomkilled, Family::docker);
      f.layer = Layer::container_limit;
      f.strength = 0.9f;
      f.detail = text::contains(s, "TaskOOM event") ? std::string(kContainerdTaskOom) : "docker event oom";
      f.container = name;
      // Containers the kubelet runs through dockershim carry their pod's name.
      if (auto v = event_attribute(s, "io.kubernetes.pod.name=")) f.pod = std::string(text::take_until(*v, ",)").substr(0, 253));
      out.add(std::move(f));
    } else if (exit) {
      Fact f = make_fact(line, FactKind::exit_status, Family::docker);
      f.exit_code = static_cast<int>(*exit);
      f.strength = 0.3f;
      f.container = name;
      f.detail = "docker event die";
      out.add(std::move(f));
    }
    platform(line, out);
    return true;
  }

  // "container kill <id> (..., signal=15)" / "container stop <id> (...)":
  // the engine's API killed the container (docker stop's SIGTERM, then its
  // SIGKILL after the grace period; docker kill). The kernel's OOM kill is
  // the "oom" event, never a "kill".
  bool api_kill(const Line& line, std::string_view s, FactSink& out) {
    std::optional<std::string_view> sig;
    if (auto v = event_attribute(s, "signal=")) sig = text::take_until(*v, ",)");
    std::string name;
    if (auto v = event_attribute(s, "name=")) name = std::string(text::take_until(*v, ",)").substr(0, 128));
    out.add(api_kill_fact(line, text::contains(s, "container stop "), sig, name));
    platform(line, out);
    return true;
  }

  // The API's stop or kill of a container (an event's text or a template's row).
  static Fact api_kill_fact(const Line& line, bool stop, std::optional<std::string_view> signal, std::string container) {
    Fact f = make_fact(line, FactKind::stop_or_restart, Family::docker);
    f.detail = stop ? "docker stop" : signal ? "docker kill (signal " + std::string(signal->substr(0, 8)) + ")" : "docker kill";
    f.container = std::move(container);
    return f;
  }

  bool run_command(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = std::string_view::npos;
    uint64_t bare = 1;
    for (std::string_view cmd : {"docker run ", "docker create ", "docker update ", "docker container run ", "podman run ",
                                 "nerdctl run ", "hyper run ", "docker build ", "docker buildx build ", "podman build "}) {
      if (p = s.find(cmd); p != std::string_view::npos) {
        if (cmd == "hyper run ") bare = units::MiB;
        p += cmd.size();
        break;
      }
    }
    std::string_view args;
    if (p != std::string_view::npos) {
      if (guards::is_mention(s, p, 10)) return true;
      args = s.substr(p);
      run_bare_unit_ = bare;
      run_name_.clear();
      platform(line, out);
    } else {
      // "  -m 16g \" on a continuation line of a docker run above.
      std::string_view t = text::trim_left(s);
      bool flag = text::starts_with(t, "-m ") || text::starts_with(t, "-m=") || text::starts_with(t, "--memory");
      if (!flag || !run_cont_line_ || line.number > run_cont_line_ + 30) return false;
      args = t;
    }
    run_cont_line_ = text::ends_with(text::trim(s), "\\") ? line.number : 0;
    auto tok = tokens(args);
    std::vector<uint64_t> limits;
    int positional = 0;
    for (size_t i = 0; i < tok.size(); ++i) {
      std::string_view t = tok[i];
      if (t == "|" || t == "&&" || t == ";" || t == "||") break;
      // The image ends the flags; flags right after it are still read (hyper
      // takes them there), the command after that is not ("python -m x").
      if (t.empty() || t[0] != '-') {
        if (++positional >= 2) break;
        continue;
      }
      std::string_view value;
      bool memory = false;
      if (t == "-m" || t == "--memory") {
        memory = true;
        if (i + 1 < tok.size()) value = tok[++i];
      } else if (text::starts_with(t, "--memory=")) {
        memory = true, value = t.substr(9);
      } else if (text::starts_with(t, "-m") && t.size() > 2 && platform::is_digit(t[2])) {
        memory = true, value = t.substr(2);
      } else if (t == "--name" && i + 1 < tok.size()) {
        run_name_ = std::string(tok[++i].substr(0, 128));
        continue;
      } else if (text::starts_with(t, "--name=")) {
        run_name_ = std::string(t.substr(7, 128));
        continue;
      } else if (t.find('=') == std::string_view::npos && !bool_flag(t) && t != "\\") {
        ++i;  // a flag with its value in the next token
        continue;
      }
      if (!memory) continue;
      std::string_view v = value;
      while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
      auto bytes = platform::parse_binary_size(v, run_bare_unit_);
      if (!bytes || *bytes < 4 * units::MiB) continue;  // docker refuses smaller limits (6 MiB since 20.10, 4 MiB before)
      limits.push_back(*bytes);
    }
    for (uint64_t bytes : limits) {  // after the loop: --name may follow -m
      Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
      f.limit = bytes;
      f.detail = "docker run -m";
      f.container = run_name_;
      out.add(std::move(f));
    }
    return true;
  }

  bool compose(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    if (auto v = text::after(t, "mem_limit:")) {
      if (auto b = platform::parse_binary_size(text::trim(*v)); b && *b > 0) {
        Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
        f.limit = b;
        f.detail = "mem_limit";
        platform(line, out);
        out.add(std::move(f));
      }
      return true;
    }
    if (t == "deploy:") {
      deploy_line_ = line.number;
      return true;
    }
    if (t == "limits:") {
      limits_line_ = deploy_line_ && line.number <= deploy_line_ + 6 ? line.number : 0;
      limits_indent_ = platform::indent_of(s);
      return true;
    }
    if (text::starts_with(t, "memory:")) {
      if (!limits_line_ || line.number > limits_line_ + 4 || platform::indent_of(s) <= limits_indent_) return true;
      std::string_view v = text::trim(t.substr(7));
      while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
      if (auto b = platform::parse_binary_size(v); b && *b > 0) {
        Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
        f.limit = b;
        f.detail = "deploy.resources.limits.memory";
        platform(line, out);
        out.add(std::move(f));
      }
      return true;
    }
    return false;
  }

  // "4f1e2d  img  "cmd"  2 hours ago  Exited (137) 3 minutes ago   vllm", or
  // "Restarting (137) 7 seconds ago" under a restart policy; `code` is where
  // the exit code starts.
  void ps_row(const Line& line, size_t code, FactSink& out) {
    std::string_view s = line.text;
    std::string_view rest;
    auto n = text::parse_i64(s.substr(code), &rest);
    if (!n || !text::starts_with(rest, ")")) return;
    auto tok = tokens(s, 64);
    if (tok.size() < 5) return;
    Fact f = make_fact(line, FactKind::exit_status, Family::docker);
    f.exit_code = static_cast<int>(*n);
    f.strength = 0.3f;
    // NAMES is the last column of `docker ps`, the first of `docker compose ps`.
    f.container = std::string((tok.back() == "ago" ? tok.front() : tok.back()).substr(0, 128));
    f.detail = "docker ps";
    platform(line, out);
    out.add(std::move(f));
  }

  bool stop(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    constexpr std::string_view kOps[] = {"docker stop",     "docker restart",        "docker kill",       "compose restart",
                                         "compose stop",    "supervisorctl restart", "supervisorctl stop"};
    for (std::string_view op : kOps) {
      size_t p = s.find(op);
      if (p == std::string_view::npos) continue;
      if (p + op.size() < s.size() && platform::is_alnum(s[p + op.size()])) continue;  // "docker stopped"
      if (guards::is_mention(s, p, op.size())) return true;
      Fact f = make_fact(line, FactKind::stop_or_restart, Family::docker);
      f.detail = std::string(op);
      out.add(std::move(f));
      return true;
    }
    return false;
  }
};

}  // namespace

const RecognizerEntry kDockerEntry{"docker", Family::docker, kPatterns, [] { return std::unique_ptr<Recognizer>(new Docker); }};

}  // namespace aimem
