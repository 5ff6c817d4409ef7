// Managed container platforms that kill (or flag) a container over its memory
// size and say so in their own words. Each is a limit of the workload's own
// memory pool, read as the kernel's memcg kill would be (a kernel_oom_kill of
// family runtime, layer container_limit; hpc.cc does the same for Slurm and
// YARN), with the limit and usage the message gives, and the limit also as a
// memory_limit fact so the diagnosis can reason from it.
//
// AWS ECS / Batch (stopped reason; console, ecs-cli ps, describe-tasks JSON):
//   Status reason   OutOfMemoryError: Container killed due to memory usage   Exit Code 137
//   .../eureka  STOPPED ExitCode: 137 Reason: OutOfMemoryError: Container killed due to memory usage  ...
//   [INFO] DockerGoClient: process within container 9f8e.. (name: "ecs-app-3-web-c8e2..") died due to OOM
// runc (docker run, ECS CannotStartContainerError, containerd):
//   ... starting container process caused: container init was OOM-killed (memory limit too low?): unknown
//   Error: OCI runtime error: crun: OOM: the memory limit could be too low: read from the init process
//   (both before the command ran: cause limit_too_low)
// Google Cloud Run / Cloud Functions gen2, App Engine, Cloud Functions gen1:
//   Memory limit of 512 MiB exceeded with 530 MiB used. Consider increasing the memory limit, see https://...
//   Memory limit of 512M exceeded with 526M used. ...            (older: M = MiB)
//   Exceeded soft memory limit of 256 MB with 270 MB after servicing 12 requests total. Consider ...
//   Exceeded soft private memory limit of 128 MB with 133 MB after servicing 3 requests total   (older)
//   Exceeded soft private memory limit with 131.207 MB after servicing 1342 requests total       (before 2014: no limit)
//   Error: memory limit exceeded. Function invocation was interrupted.
// Heroku (router and dyno log lines; also through syslog drains as "heroku web.1 - - ..."):
//   2025-01-02T00:51:32.759454+00:00 heroku[web.1]: Process running mem=807M(157.7%)
//   2025-01-02T00:51:32.761835+00:00 heroku[web.1]: Error R14 (Memory quota exceeded)
//   ... heroku[worker.1]: Error R15 (Memory quota vastly exceeded) / Stopping process with SIGKILL
//   ... heroku[web.1]: Error R12 (Exit timeout) -> At least one process failed to exit within 10 seconds of SIGTERM
//   (R12: the SIGKILL after a restart's SIGTERM, status 137: a stop_or_restart, not memory)
//   "stoppedReason": "Scaling activity initiated by (deployment ecs-svc/...)", "stopCode": "ServiceSchedulerInitiated"
//   (ECS stopping the task itself: its exit 137 is the SIGKILL after stopTimeout, a stop_or_restart)
//   ... heroku/web.1: source=web.1 ... sample#memory_total=1210.76MB ... sample#memory_quota=512.00MB
//   R14 is the dyno over its quota and paging to swap, not killed: a kernel_oom_event (the limit
//   was reached); R15 is the kill. The quota is usage / percentage, set to the dyno size it rounds to.
// Vercel's build report after a build killed in its container (the
// machine's size printed at the build's start):
//   [14:02:11.302] Build machine configuration: 4 cores, 8 GB
//   [14:07:41.912] • At least one "Out of Memory" ("OOM") event was detected during the build.
// AWS Lambda (the REPORT line the runtime writes after every invocation, in
// CloudWatch and in `sam local` / `dotnet lambda invoke-function` tails):
//   REPORT RequestId: 2b0d..  Duration: 588.20 ms  Billed Duration: 600 ms  Memory Size: 256 MB  Max Memory Used: 19 MB
//   Memory Size is the function's whole memory (its limit); Max Memory Used the invocation's peak,
//   except under the local emulator (`sam local invoke`, aws-lambda-rie), which prints the size as the peak.
//   A peak at the size is the function killed at its limit (the runtime then reports
//   "Runtime exited with error: signal: killed"); the size is a memory_limit either way,
//   and the peak a memory_usage "peak" fact the diagnosis weighs against it.
// HashiCorp Nomad (task events and the docker driver's client log):
//   2024-05-01T10:00:03Z  Terminated  Exit Code: 137, Exit Message: "OOM Killed"
//   2024-05-01T10:00:03.120Z [ERROR] client.driver_mgr.docker: OOM Killed: container_id=4f2c.. nomad_task_name=worker ...
//   and the task's size in `nomad alloc status` (a memory_limit with its usage), or the job's
//   resources block ("memory_max = 640", MB):
//     CPU        Memory           Disk     Addresses
//     3/500 MHz  251 MiB/256 MiB  300 MiB          (a task that died at once: "0/1024 MHz  0 B/256 MiB")
// Cloud Foundry (Diego's crash event, `cf events` and the app log; the app's
// memory quota is its container's limit):
//   audit.app.process.crash  web  index: 0, reason: CRASHED, ..., exit_description: APP/PROC/WEB: Exited with status 137 (out of memory)
//   [API/0] App instance exited with guid ... payload: {..."reason"=>"CRASHED", "exit_description"=>"out of memory", ...}   (DEA)
//   2015-03-11T14:27:33.00-0400   app.crash   orders-api   index: 0, reason: CRASHED, exit_description: out of memory, exit_status: 255   (`cf events`)
// CircleCI (a step's summary; the container's size is its resource class):
//   Your build has exceeded the memory limit of 4G on 1 container.
// Render (the service's event in its log; the size is the instance type's):
//   ==> Ran out of memory (used over 512MB) while running your code.
// Fly.io (`fly scale show`; the machine is a whole VM, so its memory is the host's RAM,
// a host_state "host RAM" total as `free` gives):
//   VM Memory: 256 MB                                  (flyctl before 0.1)
//   NAME    COUNT   KIND    CPUS    MEMORY  REGIONS    (flyctl 0.1+, Machines: the group's row)
//   app     1       shared  1       256 MB  iad
#include <cctype>
#include <cmath>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Container killed due to memory usage"},
    // The job's or container's own memory in the JSON that AWS Batch's and
    // ECS's describe calls print beside the reason ("memory": 1024, MiB).
    {"^[ \t]*\"memory\": ?[0-9]+,?[ \t]*$", kRegex | kContext},
    {") died due to OOM"},
    {"container init was OOM-killed"},
    {"OOM: the memory limit could be too low"},
    // kCompanion: "exceeded" as a gate word cost a third of the large-log scan
    // (bench/diagnose_vs_grep.sh); pasted evidence is always scanned in full.
    {"Memory limit of [0-9.]+ ?[A-Za-z]* exceeded", kRegex | kCompanion},
    {"Exceeded (soft|hard) (private )?memory limit (of |with [0-9])", kRegex | kCompanion},
    {"memory limit exceeded", kCompanion},
    {"Error R14 (Memory quota exceeded)", kCompanion},
    {"Error R15 (Memory quota vastly exceeded)", kCompanion},
    {"Error R12 (Exit timeout)", kContext},
    // ECS stopping a task itself (a deployment's scale-in, a user's stop): the
    // SIGKILL after its stopTimeout is a stop, not a memory kill.
    {"ServiceSchedulerInitiated", kContext},
    {"Scaling activity initiated by (deployment", kContext},
    {"Process running mem=", kContext},
    {"sample#memory_quota=", kContext},
    {"OOM Killed"},
    {"Max Memory Used: ", kContext},
    {"sam local ", kContext},
    {"aws-lambda-rie", kContext},
    {"MHz +[0-9.]+ ?[KMGT]?i?B/[0-9.]+ ?[KMGT]iB", kRegex | kContext},
    {"^[ \t]*memory_max\\s*=\\s*[0-9]+\\s*$", kRegex | kContext},  // a Nomad job's resources block (MB)
    {"exceeded the memory limit of [0-9.]+ ?[KMGT]", kRegex | kCompanion},
    {"Ran out of memory \\(used over [0-9.]+ ?[KMGT]i?B\\)", kRegex | kCompanion},
    {"VM Memory: ", kContext},
    {"(shared|performance)\\s+[0-9]+\\s+[0-9]+ (MB|GB)\\s", kRegex | kContext},  // `fly scale show` rows
    {"Exited with status [0-9]+ \\(out of memory\\)", kRegex},
    {"\"Out of Memory\" (\"OOM\") event was detected during the build", kCompanion},
    {"Build machine configuration: ", kContext},
    {"exit_description\"?(=>|: ?)\"?out of memory", kRegex},  // the payload's quoted value, or `cf events`' plain one
};

// "web.1" from "heroku[web.1]:", "heroku/web.1:" or "heroku web.1 - -".
std::string dyno_of(std::string_view s) {
  for (std::string_view open : {"heroku[", "heroku/", "heroku "}) {
    if (auto v = text::after(s, open)) {
      std::string_view name = text::take_until(*v, "]: ");
      if (!name.empty() && name.size() < 64) return std::string(name);
    }
  }
  return {};
}

// A Heroku quota from usage and percentage, rounded to the 512 MiB steps of
// dyno sizes (512 MiB, 1 GiB, 2.5 GiB, 14 GiB) when it is within 3% of one.
std::optional<uint64_t> quota_of(uint64_t usage, double percent) {
  if (percent <= 1.0) return std::nullopt;
  double q = static_cast<double>(usage) * 100.0 / percent;
  double step = 512.0 * units::MiB;
  double snapped = std::round(q / step) * step;
  if (snapped > 0 && std::fabs(q - snapped) <= 0.03 * snapped) q = snapped;
  return static_cast<uint64_t>(q);
}

class CloudPlatforms final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    if (std::string_view t = text::trim_left(s); text::starts_with(t, "\"memory\":")) {
      if (auto mib = text::parse_u64(text::trim_left(t.substr(9))); mib && *mib > 0 && *mib < (1ULL << 30)) {
        memory_mib_ = *mib;
        memory_line_ = line.number;
      }
      return;
    }
    if (text::contains(s, "Container killed due to memory usage")) return ecs(line, out);
    if (text::contains(s, "ServiceSchedulerInitiated") || text::contains(s, "Scaling activity initiated by (deployment")) {
      if (ecs_stop_sent_) return;
      ecs_stop_sent_ = true;
      Fact f = make_fact(line, FactKind::stop_or_restart, Family::runtime);
      f.detail = "ECS stopped the task itself (a deployment's scale-in): its exit 137 is the SIGKILL after the stop timeout";
      out.add(std::move(f));
      return;
    }
    if (text::contains(s, ") died due to OOM")) return ecs(line, out);
    if (text::contains(s, "container init was OOM-killed")) {
      Fact f = kill(line, std::string(kRuntimeLimitKill) + " (runc: container init was OOM-killed)", "");
      f.cause = Cause::limit_too_low;  // killed before the command ran: starting needs more
      return emit(line, std::move(f), "", out);
    }
    if (text::contains(s, "OOM: the memory limit could be too low")) {
      Fact f = kill(line, std::string(kRuntimeLimitKill) + " (crun: OOM before the command ran)", "");
      f.cause = Cause::limit_too_low;
      return emit(line, std::move(f), "", out);
    }
    if (auto v = text::after(s, "exceeded the memory limit of ")) return circleci(line, *v, out);
    if (auto v = text::after(s, "Ran out of memory (used over ")) return render(line, *v, out);
    if (auto v = text::after(s, "Build machine configuration: ")) {
      // "4 cores, 8 GB": the build container's memory (GB as Vercel sizes its machines: GiB).
      if (auto comma = text::after(*v, ", ")) build_machine_ = units::parse_log_size(*comma);
      return;
    }
    if (text::contains(s, "(\"OOM\") event was detected during the build")) {
      if (guards::is_advice_line(s)) return;
      Fact f = kill(line, "Vercel build container memory (its build system detected an OOM kill)", "");
      f.limit = build_machine_;
      return emit(line, std::move(f), "vercel", out);
    }
    if (text::contains(s, "Memory limit of ") || text::contains(s, "Exceeded soft ") || text::contains(s, "Exceeded hard ") ||
        text::contains(s, "memory limit exceeded"))
      return google(line, out);
    if (text::contains(s, "Process running mem=") || text::contains(s, "sample#memory_quota=") || text::contains(s, "Error R1"))
      return heroku(line, out);
    if (size_t p = s.find("OOM Killed"); p != std::string_view::npos) return nomad(line, p, out);
    if (text::contains(s, "sam local ") || text::contains(s, "aws-lambda-rie")) emulator_ = true;
    if (text::contains(s, "Max Memory Used: ")) return lambda(line, out);
    if (text::contains(s, "(out of memory)") || text::contains(s, "\"out of memory") || text::contains(s, "exit_description: out of memory")) {
      if (!text::contains(s, "Exited with status") && !text::contains(s, "exit_description")) return;
      return emit(line, kill(line, "Cloud Foundry app memory quota (the instance exited out of memory)", ""), "cloudfoundry", out);
    }
    if (auto v = text::after(s, "MHz ")) return nomad_resources(line, *v, out);
    if (auto v = text::after(s, "memory_max")) return nomad_memory_max(line, *v, out);
    if (auto v = text::after(s, "VM Memory: ")) return fly_size(line, *v, out);
    // `fly scale show` (Machines): "app  1  shared  1  256 MB  iad": KIND, CPUS, then MEMORY.
    for (std::string_view kind : {"shared", "performance"}) {
      size_t p = s.find(kind);
      if (p == std::string_view::npos || (p > 0 && !std::isspace(static_cast<unsigned char>(s[p - 1])))) continue;
      std::string_view rest = text::trim_left(s.substr(p + kind.size()));
      if (!text::parse_u64(rest, &rest)) return;  // CPUS
      return fly_size(line, text::trim_left(rest), out);
    }
  }

 private:
  static constexpr uint64_t kJsonGap = 12;  // lines from the "memory" field to the reason in one describe call's JSON
  uint64_t memory_mib_ = 0, memory_line_ = 0;
  // A Fly machine's memory ("256 MB", "2 GB"): the machine is a whole VM, so
  // its size is the host's RAM, as `free` would give it.
  static void fly_size(const Line& line, std::string_view v, FactSink& out) {
    std::string_view rest;
    auto n = text::parse_u64(text::trim_left(v), &rest);
    rest = text::trim_left(rest);
    const bool gb = text::starts_with(rest, "GB");
    if (!n || *n == 0 || (!gb && !text::starts_with(rest, "MB"))) return;
    Fact f = make_fact(line, FactKind::host_state, Family::runtime);
    f.detail = "host RAM";
    f.total = *n * (gb ? units::GiB : units::MiB);  // Fly sizes machines in binary steps (256 MB is 268,435,456 bytes)
    out.add(std::move(f));
  }

  bool platform_sent_ = false;
  bool ecs_stop_sent_ = false;
  bool emulator_ = false;  // the input ran under sam local or the Runtime Interface Emulator
  uint64_t last_line_ = 0;
  std::string last_key_;
  // Heroku: the last "Process running mem=" of a dyno.
  std::string mem_dyno_;
  uint64_t mem_line_ = 0, mem_usage_ = 0;
  std::optional<uint64_t> mem_quota_;

  std::optional<uint64_t> build_machine_;  // Vercel's "Build machine configuration: 4 cores, 8 GB"

  Fact kill(const Line& line, std::string_view detail, std::string_view who, FactKind kind = FactKind::kernel_oom_kill) {
    Fact f = make_fact(line, kind, Family::runtime);
    f.layer = Layer::container_limit;
    f.strength = 0.9f;
    f.detail = std::string(detail);
    f.process = std::string(who);
    return f;
  }

  // One failure repeats its line (a retry loop, R14 every 20 s): once per
  // key within 100 lines.
  bool repeated(const Line& line, const std::string& key) {
    bool same = last_line_ && key == last_key_ && line.number <= last_line_ + 100;
    last_line_ = line.number;
    last_key_ = key;
    return same;
  }

  void emit(const Line& line, Fact f, const char* platform_name, FactSink& out) {
    if (repeated(line, f.detail + "|" + f.process + "|" + f.container)) return;
    if (f.limit) {
      Fact l = make_fact(line, FactKind::memory_limit, Family::runtime);
      l.limit = f.limit;
      l.container = f.container;
      l.process = f.process;
      l.detail = f.detail;
      out.add(std::move(l));
    }
    out.add(std::move(f));
    if (*platform_name && !platform_sent_) {
      platform_sent_ = true;
      Fact p = make_fact(line, FactKind::platform, Family::runtime);
      p.detail = platform_name;
      out.add(std::move(p));
    }
  }

  // CircleCI's step summary: "Your build has exceeded the memory limit of 4G
  // on 1 container." The container's size is its resource class's (G = GiB).
  void circleci(const Line& line, std::string_view v, FactSink& out) {
    if (guards::is_advice_line(line.text) || guards::is_command_line(line.text)) return;
    auto limit = units::parse_log_size(v);  // "4G": binary units, as CircleCI sizes its classes
    if (!limit || *limit == 0) return;
    Fact f = kill(line, "CircleCI container memory limit (the build exceeded it)", "");
    f.limit = limit;
    emit(line, std::move(f), "", out);
  }

  // Render: "==> Ran out of memory (used over 512MB) while running your
  // code." The instance type's size (MB as Render sizes its plans: MiB).
  void render(const Line& line, std::string_view v, FactSink& out) {
    if (guards::is_advice_line(line.text) || guards::is_command_line(line.text)) return;
    auto limit = units::parse_log_size(v);
    if (!limit || *limit == 0) return;
    Fact f = kill(line, "Render instance memory limit (the service used more)", "");
    f.limit = limit;
    emit(line, std::move(f), "render", out);
  }

  // Nomad's "Task Resources" row: "3/500 MHz  251 MiB/256 MiB  300 MiB".
  void nomad_resources(const Line& line, std::string_view v, FactSink& out) {
    std::string_view rest;
    auto used = units::parse_log_size(text::trim_left(v), &rest);
    if (!used || rest.empty() || rest[0] != '/') return;
    auto size = units::parse_log_size(rest.substr(1));
    if (!size || *size == 0) return;
    Fact l = make_fact(line, FactKind::memory_limit, Family::runtime);
    l.limit = size;
    l.usage = used;
    l.detail = "Nomad task memory";
    out.add(std::move(l));
  }

  // A Nomad job's resources block: "memory_max = 640", the task's hard
  // limit in MB when memory oversubscription is on (memory = N its reservation).
  void nomad_memory_max(const Line& line, std::string_view v, FactSink& out) {
    auto mb = text::parse_u64(platform::skip(v, " \t="));
    if (!mb || *mb == 0 || *mb > (1ULL << 24)) return;
    Fact l = make_fact(line, FactKind::memory_limit, Family::runtime);
    l.limit = *mb * units::MiB;
    l.detail = "Nomad task memory_max";
    out.add(std::move(l));
  }

  // "Memory Size: 256 MB  Max Memory Used: 19 MB" (MB here are MiB: Lambda
  // sizes are set in MB steps of 1,048,576 bytes).
  void lambda(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    auto mb = [&](std::string_view key) -> std::optional<uint64_t> {
      auto v = text::after(s, key);
      if (!v) return std::nullopt;
      std::string_view rest;
      auto n = text::parse_u64(text::trim_left(*v), &rest);
      if (!n || !text::starts_with(text::trim_left(rest), "MB")) return std::nullopt;
      return *n * units::MiB;
    };
    auto size = mb("Memory Size: "), peak = mb("Max Memory Used: ");
    if (!size || !peak || *size == 0) return;
    Fact l = make_fact(line, FactKind::memory_limit, Family::runtime);
    l.limit = size;
    l.detail = "AWS Lambda memory size";
    out.add(std::move(l));
    // The local emulator (sam local, the Runtime Interface Emulator) reports
    // the memory size as the peak: no measurement at all.
    if (emulator_) return;
    Fact u = make_fact(line, FactKind::memory_usage, Family::runtime);
    u.usage = peak;
    u.limit = size;
    u.detail = "peak (Lambda Max Memory Used)";
    out.add(std::move(u));
    if (*peak >= *size) {
      Fact f = kill(line, "AWS Lambda memory size (the invocation's peak reached it)", "");
      f.limit = size;
      f.usage = peak;
      f.strength = 0.8f;
      emit(line, std::move(f), "aws-lambda", out);
    }
  }

  void ecs(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string container;
    if (auto v = text::after(s, "(name: \"")) container = std::string(text::take_until(*v, "\"").substr(0, 128));
    // ecs-cli ps: "<task id>/<container>  STOPPED ExitCode: 137 Reason: ..."
    if (container.empty() && text::contains(s, " STOPPED ")) {
      std::string_view first = text::first_word(text::trim_left(s));
      if (size_t slash = first.rfind('/'); slash != std::string_view::npos) container = std::string(first.substr(slash + 1, 128));
    }
    Fact f = kill(line, "ECS task memory limit", "");
    f.container = container;
    // The container's memory from the describe call's JSON just above (MiB).
    if (memory_line_ && line.number <= memory_line_ + kJsonGap) f.limit = memory_mib_ * units::MiB;
    if (auto v = text::after(s, "Exit Code")) {
      if (auto n = text::parse_i64(platform::skip(*v, " \t:"))) f.exit_code = static_cast<int>(*n);
    } else if (auto v2 = text::after(s, "ExitCode:")) {
      if (auto n = text::parse_i64(platform::skip(*v2))) f.exit_code = static_cast<int>(*n);
    }
    emit(line, std::move(f), "ecs", out);
  }

  void google(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    Fact f = kill(line, "Cloud Run memory limit", "");
    const char* name = "cloud run";
    if (auto v = text::after(s, "Memory limit of ")) {
      // "Memory limit of 512 MiB exceeded with 530 MiB used."
      std::string_view rest;
      f.limit = units::parse_log_size(*v, &rest);
      if (!f.limit || !text::starts_with(rest, " exceeded")) return;
      if (auto u = text::after(rest, "exceeded with ")) f.usage = units::parse_log_size(*u);
    } else if (auto v2 = text::after(s, "memory limit of ")) {
      // App Engine: "Exceeded soft memory limit of 256 MB with 270 MB after servicing N requests total."
      std::string_view rest;
      f.limit = units::parse_log_size(*v2, &rest);
      if (!f.limit || !text::starts_with(rest, " with ")) return;
      f.usage = units::parse_log_size(rest.substr(6));
      f.detail = text::contains(s, "Exceeded soft ") ? "App Engine soft memory limit" : "App Engine hard memory limit";
      name = "app engine";
    } else if (auto v3 = text::after(s, "Exceeded soft private memory limit with ")) {
      // App Engine before 2014, without the limit: "Exceeded soft private memory limit with 131.207 MB after servicing 1342 requests total".
      f.usage = units::parse_log_size(*v3);
      if (!f.usage) return;
      f.detail = "App Engine soft memory limit";
      name = "app engine";
    } else {
      // Cloud Functions (1st gen): "Error: memory limit exceeded. Function invocation was interrupted."
      if (!text::contains(s, "Function invocation was interrupted") && !text::icontains(s, "Error: memory limit exceeded")) return;
      f.detail = "Cloud Functions memory limit";
      name = "cloud functions";
    }
    emit(line, std::move(f), name, out);
  }

  void heroku(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string dyno = dyno_of(s);
    if (auto v = text::after(s, "Process running mem=")) {
      // "Process running mem=807M(157.7%)"
      std::string_view rest;
      auto usage = units::parse_log_size(*v, &rest);
      if (!usage) return;
      mem_dyno_ = dyno;
      mem_line_ = line.number;
      mem_usage_ = *usage;
      mem_quota_.reset();
      if (text::starts_with(rest, "(")) {
        if (auto pct = text::parse_double(rest.substr(1))) mem_quota_ = quota_of(*usage, *pct);
      }
      return;
    }
    if (auto v = text::after(s, "sample#memory_quota=")) {
      // log-runtime-metrics: the quota itself.
      if (auto q = units::parse_log_size(*v); q && *q > 0) {
        Fact l = make_fact(line, FactKind::memory_limit, Family::runtime);
        l.limit = q;
        l.process = dyno;
        l.detail = "Heroku dyno memory quota";
        out.add(std::move(l));
      }
      return;
    }
    // R12: a process did not exit within 10 s of the SIGTERM a restart or a
    // deploy sent, and the dyno manager killed it (SIGKILL, status 137): a
    // stop, not a memory kill.
    if (text::contains(s, "Error R12 (Exit timeout)")) {
      Fact f = make_fact(line, FactKind::stop_or_restart, Family::runtime);
      f.process = dyno;
      f.detail = "Heroku R12: a process did not exit within 10 s of SIGTERM and was killed";
      out.add(std::move(f));
      return;
    }
    bool r15 = text::contains(s, "Error R15 (Memory quota vastly exceeded)");
    if (!r15 && !text::contains(s, "Error R14 (Memory quota exceeded)")) return;
    // R14: over the quota and swapping; R15: killed.
    Fact f = kill(line, r15 ? "Heroku R15: dyno killed over its memory quota" : "Heroku R14: dyno over its memory quota (swapping, not killed)",
                  dyno, r15 ? FactKind::kernel_oom_kill : FactKind::kernel_oom_event);
    if (!r15) f.strength = 0.75f;
    if (mem_line_ && line.number <= mem_line_ + 3 && mem_dyno_ == dyno) {
      f.usage = mem_usage_;
      f.limit = mem_quota_;
    }
    emit(line, std::move(f), "heroku", out);
  }

  void nomad(const Line& line, size_t p, FactSink& out) {
    std::string_view s = line.text;
    // Task event: "Terminated  Exit Code: 137, Exit Message: \"OOM Killed\""; driver log:
    // "client.driver_mgr.docker: OOM Killed: container_id=..."
    bool event = text::contains(s, "Exit Code:") || text::contains(s, "Exit Message:");
    bool driver = text::contains(s, "driver_mgr") || text::contains(s, "nomad_alloc_id=") || text::contains(s, "nomad_task_name=");
    if (!event && !driver) return;
    if (guards::is_mention(s, p, 10)) return;
    std::string task;
    if (auto v = text::after(s, "nomad_task_name=")) task = std::string(text::take_until(*v, " \t,").substr(0, 128));
    Fact f = kill(line, "Nomad task memory limit", task);
    if (auto v = text::after(s, "container_id=")) f.container = std::string(text::take_until(*v, " \t,").substr(0, 12));
    if (auto v = text::after(s, "Exit Code:")) {
      if (auto n = text::parse_i64(platform::skip(*v))) f.exit_code = static_cast<int>(*n);
    }
    emit(line, std::move(f), "nomad", out);
  }
};

}  // namespace

const RecognizerEntry kCloudPlatformsEntry{"cloud_platforms", Family::runtime, kPatterns,
                                           [] { return std::unique_ptr<Recognizer>(new CloudPlatforms); }};

}  // namespace aimem
