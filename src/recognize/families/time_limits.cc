// Kills for running too long. An evaluator, a judge, a CI job or a batch step
// killed at its time limit dies with SIGKILL (exit 137) or SIGTERM just like an
// OOM victim, and its log says "Killed"; the line that says why makes it a
// look-alike: not_memory_failure, layer not_memory (with a bare "Killed" beside
// it the diagnosis reads not_memory, and a real memory failure still wins).
//
//   timeout: sending signal KILL to command 'python3'              GNU timeout --verbose (also TERM, INT)
//   Killed: time limit exceeded   /   Time Limit Exceeded   /   TIME_LIMIT_EXCEEDED   (sandboxes, judges)
//   "message": "Time limit exceeded (wall clock)"                 judge0
//   CPU time limit exceeded (core dumped)                          the shell on SIGXCPU (ulimit -t)
//   [ERROR/MainProcess] Hard time limit (300s) exceeded for tasks.score[6d1f..]   Celery
//   slurmstepd: error: *** JOB 4242 ON gpu07 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***
//   Warning  DeadlineExceeded  job/eval  Job was active longer than specified deadline   Kubernetes Job
//   ##[error]The job running on runner r-12 has exceeded the maximum execution time of 360 minutes.
//   TIMEOUT   /   status: TIMEOUT   /   "result": "TIMEOUT"       an evaluation harness's verdict
//   x.test.ts: TIMEOUT (exit 137: SIGKILL from timeout -k 10 ...)   a test runner's verdict with its kill
//   $ timeout -s KILL 50m ant test   /  timeout --signal=KILL 1h ./run  /  timeout -k 10 300 cmd
//     a command run under timeout(1) with SIGKILL: stop_or_restart (the kill a bare "Killed" or an
//     exit 137 beside it may be; a kernel report still wins)
//   TERM_RUNLIMIT: job killed after reaching LSF run time limit.   LSF's job report (TERM_CPULIMIT alike)
// A soft time limit (Celery's SoftTimeLimitExceeded, a warning) kills nothing
// and is left alone, as is prose about limits.
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"timeout: sending signal (KILL|TERM|INT|HUP|SIGKILL|SIGTERM)", kRegex},
    {"time limit( \\([0-9.]+ ?[a-z]*\\))? exceeded", kRegex | kCaseless},
    {"TIME_LIMIT_EXCEEDED", kCompanion},
    {"TERM_(RUN|CPU)LIMIT", kRegex | kCompanion},  // LSF's job report; its "Exited with exit code" makes it hot
    {"TimeLimitExceeded", kCompanion},
    {"DUE TO TIME LIMIT"},
    {"timeout (-s ?(KILL|SIGKILL|9)|--signal[= ](KILL|SIGKILL|9)|-k ?[0-9])", kRegex},
    {"DeadlineExceeded", kCompanion},
    {"exceeded the maximum execution time", kCompanion},
    {"^[ \t]*TIMEOUT\\s*$", kRegex | kCompanion},
    {"\\bTIMEOUT \\((exit|signal|killed|SIGKILL|SIGTERM)", kRegex | kCompanion},
    {"(status|result|verdict|outcome)[\"']?\\s*[:=]\\s*[\"']?TIMEOUT\\b", kRegex | kCaseless | kCompanion},
};

class TimeLimits final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    if (auto v = text::after(s, "timeout: sending signal ")) {
      // "timeout: sending signal KILL to command 'python3'" (quotes vary with the locale)
      std::string process;
      if (auto c = text::after(*v, " to command ")) {
        std::string_view name = platform::skip(*c, "'\"`\xe2\x80\x98");
        name = text::take_until(name, "'\"`\xe2 ");
        process = std::string(name.substr(0, 64));
      }
      return emit(line, 0, "a kill by timeout(1) at its time limit", process, 0.8f, out);
    }
    if (size_t t = s.find("timeout "); t != std::string_view::npos && !text::contains(s, "timeout: ")) {
      std::string_view rest = s.substr(t + 8);
      bool kill = text::starts_with(rest, "-s") || text::starts_with(rest, "--signal") || text::starts_with(rest, "-k");
      // The command itself: at the start, after a prompt, a separator or a quote.
      std::string_view before = text::trim(s.substr(0, t));
      bool command = before.empty() || text::ends_with(before, "$") || text::ends_with(before, "#") ||
                     text::ends_with(before, ";") || text::ends_with(before, "&&") || text::ends_with(before, "|") ||
                     text::ends_with(before, "\"") || text::ends_with(before, "command");
      if (kill && command && !guards::is_mention(s, t, 10)) {
        Fact f = make_fact(line, FactKind::stop_or_restart, Family::exit_status);
        f.detail = "the command ran under timeout(1), which kills it at its time limit";
        out.add(std::move(f));
        return;
      }
    }
    // LSF's report: "TERM_RUNLIMIT: job killed after reaching LSF run time limit." (TERM_CPULIMIT: its CPU time).
    if (size_t p = s.find("TERM_RUNLIMIT"); p != std::string_view::npos)
      return emit(line, p, "LSF killed the job at its run time limit (TERM_RUNLIMIT)", "", 0.85f, out);
    if (size_t p = s.find("TERM_CPULIMIT"); p != std::string_view::npos)
      return emit(line, p, "LSF killed the job at its CPU time limit (TERM_CPULIMIT)", "", 0.85f, out);
    if (text::contains(s, "DUE TO TIME LIMIT")) {
      if (!text::contains(s, "CANCELLED")) return;  // "*** JOB 42 ON n1 CANCELLED AT <time> DUE TO TIME LIMIT ***"
      return emit(line, 0, "Slurm cancelled the job at its time limit", "", 0.85f, out);
    }
    if (size_t p = s.find("DeadlineExceeded"); p != std::string_view::npos) {
      if (!text::contains(s, "longer than specified deadline") && !text::icontains(s, "reason")) return;
      return emit(line, p, "a Kubernetes Job killed at its activeDeadlineSeconds", "", 0.8f, out);
    }
    if (size_t p = s.find("exceeded the maximum execution time"); p != std::string_view::npos)
      return emit(line, p, "a CI job cancelled at its maximum execution time", "", 0.8f, out);
    if (text::icontains(s, "soft time limit") || text::contains(s, "SoftTimeLimit")) return;
    size_t p = text::ifind(s, "time limit");
    if (p == std::string_view::npos) p = s.find("TIME_LIMIT_EXCEEDED");
    if (p == std::string_view::npos) p = s.find("TimeLimitExceeded");
    if (p != std::string_view::npos) {
      // Prose that talks about limits ("increase the time limit if it is exceeded") is
      // advice; a verdict or a kill report is short and says so.
      if (text::icontains(s, "if ") || text::icontains(s, "increase ") || text::icontains(s, "raise ")) return;
      return emit(line, p, "a kill for exceeding a time limit", "", 0.8f, out);
    }
    if (size_t q = s.find("TIMEOUT"); q != std::string_view::npos)
      return emit(line, q, "the evaluator's TIMEOUT verdict (a time limit, not memory)", "", 0.65f, out);
  }

 private:
  RepeatFilter repeats_{50};

  void emit(const Line& line, size_t at, std::string_view detail, std::string process, float strength, FactSink& out) {
    if (guards::is_mention(line.text, at, 10)) return;
    if (repeats_.repeated(detail, line.number)) return;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::exit_status);
    f.layer = Layer::not_memory;
    f.cause = Cause::not_memory;
    f.strength = strength;
    f.detail = std::string(detail);
    f.process = std::move(process);
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kTimeLimitsEntry{"time_limits", Family::exit_status, kPatterns,
                                       [] { return std::unique_ptr<Recognizer>(new TimeLimits); }};

}  // namespace aimem
