// Ray: its memory monitor's kills, workers that died by SIGKILL, and the
// platform itself.
//
//   ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.
//   Memory on the node (IP: 10.0.0.5, ID: 9c1f...) where the task (task ID: ..., name=train, pid=1234,
//       memory used=12.01GB) was running was 29.90GB / 31.30GB (0.955258), which exceeds the memory usage
//       threshold of 0.95. Ray killed this worker (ID: ...) because it was the most recently scheduled task; ...
//   (raylet) 3 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other
//       reasons at node (ID: ..., IP: ...) over the last time period. ...
//   ... Worker exit type: NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low ...
//   ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node ip-172-31-7-88 is used
//       (14.9 / 15.6 GB). The top 5 memory consumers are: ...          (Ray before 1.0: raised in the task)
//   (raylet) node_manager.cc:2966: System memory low at node with IP 10.0.3.7. Used memory (216.78GB) / total
//       capacity (219.60GB) (0.98715) exceeds threshold 0.95, killing latest task with name ...   (Ray 2.0-2.1)
//   The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail:
//       Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root
//       causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop
//       --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.
//   The actor never ran - it was cancelled before it started running.
//   The actor is dead because all references to the actor were removed.   (Ray's ownership, a look-alike)
//   The actor is dead because it was killed by `ray.kill`.                 (an operator's kill, a look-alike)
//
// Ray's memory monitor kills a worker when the node's memory use crosses a
// threshold (RAY_memory_usage_threshold, 0.95 by default), before the kernel
// would: a pressure-based user-space killer, so userspace_kill with layer
// userspace_oom_killer, detail naming the killer and `process` the victim (the
// form advise.cc's summary reads: "<detail> killed <process>").
//
// A worker that died by SIGKILL without the monitor's message is a process_killed:
// Ray lists the kernel OOM killer first among the possible senders, and the
// other two (ray stop --force, a crash) leave their own traces, so layer
// host_ram with the low strength of a bare "Killed". An actor that "never ran"
// died while starting, which for model workers is loading the model: a
// phase_load marker.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Task was killed due to the node running low on memory"},
    {"killed due to memory pressure (OOM)"},
    {"Worker exit type: NODE_OUT_OF_MEMORY"},
    {"Memory on the node (IP:", kCompanion},
    {"System memory low at node", kCompanion},
    {"RayOutOfMemoryError: More than ", kCompanion},
    {"by OOM killer due to high memory usage", kCompanion},
    {"The actor never ran", kContext},
    {"available for tasks and actors (-", kCompanion},
    {"(all references to the actor were removed|was killed by `ray\\.kill`)", kRegex | kContext},
    {"(raylet)", kContext},
    {"ray.exceptions.", kContext},
    {"RayWorkerWrapper", kContext},
    {"RAY_memory_", kContext},
};

constexpr uint64_t kDetailWindow = 6;     // the monitor's detail line follows its headline
constexpr uint64_t kRepeatWindow = 300;   // the driver and the worker log repeat one kill

class Ray final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    platform(line, out);
    if (pending_ && line.number > pending_line_ + kDetailWindow) flush(out);

    if (auto p = s.find("Memory on the node (IP:"); p != std::string_view::npos) return node_detail(line, s.substr(p), out);
    // An actor Ray itself ended on purpose: its owner let go of it, or
    // ray.kill. Its callers see RayActorError as they would after an OOM kill.
    if (!look_alike_ && (text::contains(s, "all references to the actor were removed") || text::contains(s, "was killed by `ray.kill`"))) {
      look_alike_ = true;
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::ray);
      f.layer = Layer::not_memory;
      f.strength = 0.55f;
      f.detail = text::contains(s, "ray.kill") ? "Ray's actor was killed by ray.kill, not for memory"
                                               : "Ray ended the actor because all references to it were removed (its owner let go), "
                                                 "not for memory";
      return out.add(std::move(f));
    }
    if (text::contains(s, "Task was killed due to the node running low on memory") ||
        text::contains(s, "Worker exit type: NODE_OUT_OF_MEMORY")) {
      size_t p = s.find("killed due to the node running low");
      if (p != std::string_view::npos && guards::is_mention(s, p, 34)) return;
      if (!pending_) start(line);
      return;
    }
    if (auto p = s.find("System memory low at node"); p != std::string_view::npos && text::contains(s, "killing"))
      return legacy_monitor(line, s.substr(p), out);
    if (auto p = s.find("RayOutOfMemoryError: More than "); p != std::string_view::npos) return raised_error(line, s.substr(p), out);
    if (auto p = s.find("killed due to memory pressure (OOM)"); p != std::string_view::npos) return raylet_summary(line, s, p, out);
    if (text::contains(s, "by OOM killer due to high memory usage")) return worker_died(line, s, out);
    if (auto p = s.find("available for tasks and actors (-"); p != std::string_view::npos) return no_room(line, s.substr(p), out);
    if (text::contains(s, "The actor never ran")) {
      Fact f = make_fact(line, FactKind::phase_load, Family::ray);
      f.detail = "Ray actor died while starting (initialising or loading its model)";
      f.strength = 0.8f;  // it never ran: it died initialising
      out.add(std::move(f));
    }
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  bool look_alike_ = false;  // an actor ended on purpose was reported (one fact)
  bool platform_seen_ = false;
  bool pending_ = false;
  uint64_t pending_line_ = 0;
  Fact pending_fact_;
  uint64_t last_kill_line_ = 0;
  bool have_kill_ = false;
  uint64_t last_died_line_ = 0;
  bool have_died_ = false;

  void platform(const Line& line, FactSink& out) {
    if (platform_seen_) return;
    platform_seen_ = true;
    Fact f = make_fact(line, FactKind::platform, Family::ray);
    f.detail = "ray";
    out.add(std::move(f));
  }

  // `ray start` sizing itself from the node's (or container's) memory and
  // finding nothing left for tasks once the object store and redis are set
  // aside: "ValueError: After taking into account object store and redis
  // memory usage, the amount of memory on this node available for tasks and
  // actors (-0.03 GB) is less than -6% of total." The memory it was given is
  // below what an empty Ray node needs: it refused to start.
  void no_room(const Line& line, std::string_view s, FactSink& out) {
    Fact f = make_fact(line, FactKind::host_memory_refused, Family::ray);
    f.layer = Layer::host_ram;
    f.cause = Cause::limit_too_low;
    f.strength = 0.8f;
    std::string_view figure = text::take_until(s.substr(std::string_view("available for tasks and actors (").size()), ")");
    f.detail = "Ray refused to start: after its object store, the memory it was given leaves " + text::printable(figure) +
               " for tasks and actors, below what a Ray node needs";
    out.add(std::move(f));
  }

  bool recent_kill(uint64_t line_no) const { return have_kill_ && line_no <= last_kill_line_ + kRepeatWindow; }

  void start(const Line& line) {
    pending_ = true;
    pending_line_ = line.number;
    pending_fact_ = make_fact(line, FactKind::userspace_kill, Family::ray);
    pending_fact_.layer = Layer::userspace_oom_killer;
    pending_fact_.strength = 0.9f;
    pending_fact_.detail = "Ray memory monitor";
  }

  void flush(FactSink& out) {
    if (!pending_) return;
    pending_ = false;
    if (recent_kill(pending_fact_.where.line)) return;
    have_kill_ = true;
    last_kill_line_ = pending_fact_.where.line;
    out.add(std::move(pending_fact_));
  }

  // "Memory on the node (IP: ..., ID: ...) where the task (task ID: ..., name=train, pid=1234, memory
  // used=12.01GB) was running was 29.90GB / 31.30GB (0.955258), which exceeds the memory usage threshold of 0.95."
  void node_detail(const Line& line, std::string_view s, FactSink& out) {
    if (!pending_) start(line);
    Fact& f = pending_fact_;
    if (auto n = text::after(s, "name=")) f.process = std::string(text::take_until(*n, ",)").substr(0, 64));
    if (auto p = text::after(s, "pid=")) {
      if (auto v = text::parse_i64(*p); v && *v > 0) f.pid = v;
    }
    if (auto m = text::after(s, "memory used=")) f.rss = units::parse_log_size(*m);
    if (auto w = text::after(s, "was running was ")) {
      std::string_view rest;
      f.usage = units::parse_log_size(*w, &rest);
      if (auto t = text::after(rest, "/ ")) f.total = units::parse_log_size(*t);
    }
    if (auto t = text::after(s, "threshold of ")) {
      if (auto r = text::parse_double(*t); r && *r > 0 && *r <= 1.0) {
        f.ratio = r;
        f.detail = fmt::format("Ray memory monitor (threshold {:g})", *r);
      }
    }
    flush(out);
  }

  // Ray 2.0-2.1's raylet: "System memory low at node with IP 10.0.3.7. Used memory (216.78GB) / total
  // capacity (219.60GB) (0.98715) exceeds threshold 0.95, killing latest task with name f". Each kill
  // repeats the headline; one fact stands for the run of them.
  void legacy_monitor(const Line& line, std::string_view s, FactSink& out) {
    if (pending_ || recent_kill(line.number)) return;
    start(line);
    Fact& f = pending_fact_;
    if (auto u = text::after(s, "Used memory (")) f.usage = units::parse_log_size(*u);
    if (auto t = text::after(s, "total capacity (")) f.total = units::parse_log_size(*t);
    if (auto t = text::after(s, "exceeds threshold ")) {
      if (auto r = text::parse_double(*t); r && *r > 0 && *r <= 1.0) {
        f.ratio = r;
        f.detail = fmt::format("Ray memory monitor (threshold {:g})", *r);
      }
    }
    if (auto n = text::after(s, "task with name ")) f.process = std::string(text::take_until(*n, ",(").substr(0, 64));
    flush(out);
  }

  // Ray before 1.0 raised in the task itself once the node passed its
  // threshold: "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the
  // memory on node ip-172-31-7-88 is used (14.9 / 15.6 GB). The top 5 memory
  // consumers are: ..." The same guard, before the kernel acts.
  void raised_error(const Line& line, std::string_view s, FactSink& out) {
    if (guards::is_advice_line(line.text) || pending_ || recent_kill(line.number)) return;
    start(line);
    Fact& f = pending_fact_;
    if (auto pct = text::parse_double(s.substr(31)); pct && *pct > 0 && *pct <= 100) {
      f.ratio = *pct / 100.0;
      f.detail = fmt::format("Ray memory monitor (threshold {:g})", *f.ratio);
    }
    if (auto u = text::after(s, " is used (")) {
      // "(14.9 / 15.6 GB)": the used figure is in the total's unit.
      std::string_view rest;
      auto used = text::parse_double(*u, &rest);
      std::string_view of = platform::skip(rest, " /");
      auto total = units::parse_log_size(of);
      auto total_figure = text::parse_double(of);
      if (used && total && total_figure && *total_figure > 0) {
        f.total = total;
        f.usage = static_cast<uint64_t>(*used / *total_figure * static_cast<double>(*total));
      }
    }
    flush(out);
  }

  void raylet_summary(const Line& line, std::string_view s, size_t p, FactSink& out) {
    // "(raylet) 3 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed ..."
    std::string_view head = text::trim(s.substr(0, p));
    size_t w = head.rfind(" Workers");
    if (w == std::string_view::npos) return;
    std::string_view before = text::trim(head.substr(0, w));
    size_t sp = before.find_last_of(" ]");
    auto n = text::parse_u64(before.substr(sp == std::string_view::npos ? 0 : sp + 1));
    if (!n || *n == 0) return;
    if (pending_ || recent_kill(line.number)) return;  // the kill itself is already reported
    Fact f = make_fact(line, FactKind::userspace_kill, Family::ray);
    f.layer = Layer::userspace_oom_killer;
    f.strength = 0.85f;
    f.detail = "Ray memory monitor";
    f.count = n;
    have_kill_ = true;
    last_kill_line_ = line.number;
    out.add(std::move(f));
  }

  void worker_died(const Line& line, std::string_view s, FactSink& out) {
    if (guards::is_advice_line(s)) return;
    if (have_died_ && line.number <= last_died_line_ + kRepeatWindow) return;
    if (recent_kill(line.number) || pending_) return;  // the monitor's own kill explains it
    have_died_ = true;
    last_died_line_ = line.number;
    // Ray lists the kernel OOM killer as one of three possible causes (with
    // `ray stop --force` and a crash): a SIGKILL whose sender is not shown,
    // read as the shell's bare "Killed" is (the pool only where host figures
    // or a load are in view).
    Fact f = make_fact(line, FactKind::process_killed, Family::ray);
    f.layer = Layer::unknown;
    f.strength = 0.5f;
    f.signal = 9;
    f.detail = "Ray worker died; Ray names the kernel OOM killer (SIGKILL) as the first likely cause";
    if (auto pid = text::after(s, "pid=")) {
      if (auto v = text::parse_i64(*pid); v && *v > 0) f.pid = v;
    }
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kRayEntry{"ray", Family::ray, kPatterns, [] { return std::unique_ptr<Recognizer>(new Ray); }};

}  // namespace aimem
