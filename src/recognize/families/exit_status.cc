// Exit codes and signals wherever they are printed (exit_status facts), and
// the shell's report of a SIGKILL (process_killed).
//
//   exit code 137 / Exit code: 137 / exit status 137 / exit_status=0 / exitcode: -9 / return code: 137 / returncode=137
//   web-1 exited with code 137 (compose) / Exited with code 137 / Exited with code exit status 137 (CI)
//   heroku[web.1]: Process exited with status 137   (Heroku's dyno manager)
//   Command '[...]' returned non-zero exit status 137.   /   died with <Signals.SIGKILL: 9>.   (Python)
//   The command '/bin/sh -c ./setup.sh' returned a non-zero code: 137   (docker build, the classic builder)
//   Process `align (3)` terminated with an error exit status (137)   (Nextflow)
//   failed (exitcode: -9) local_rank: 0 (pid: 2918) of binary: ...   (torch elastic: negative = signal)
//   signal: killed / signal: terminated / signal: segmentation fault (core dumped)   (Go os/exec)
//   killed by signal 9 / terminated by signal SIGKILL / is killed by signal: Killed.
//   [WARNING] Worker with pid 9 was terminated due to signal 9    gunicorn 20.1+
//   mpirun noticed that process rank 2 with PID 30417 on node cn03 exited on signal 9 (Killed).   Open MPI
//   collect2: fatal error: ld terminated with signal 9 [Killed]    gcc's driver
//   g++: internal compiler error: Killed (program cc1plus)         gcc's driver (its strsignal(SIGKILL))
//   c++: internal compiler error: Segmentation fault (program cc1plus)   the compiler crashed: a look-alike
//   stress: FAIL: [23] (415) <-- worker 24 got signal 9            stress and others: "got signal N"
//   Killed                                       a bare line: sh/dash reporting its child's SIGKILL
//   bash: line 1:  2079 Killed   python3 x.py    bash (non-interactive), also "./run.sh: line 3: ..."
//   [1]+  Killed                  python3 x.py   job control        zsh: killed  python3 x.py
//   [1]    12345 killed     python3 x.py         zsh job control (with the pid; "[1]  + 12345 killed ...";
//                                                also right after a progress bar's "]" on the same line)
//   fish: Job 1, 'python3 x.py' terminated by signal SIGKILL (Forced quit)
//   Gradle build daemon disappeared unexpectedly (it may have been killed or may have crashed)   (no code)
//   The forked VM terminated without properly saying goodbye. VM crash or System.exit called?  (Surefire; no code)
//   Server terminated abruptly (error code: 14, error message: 'Socket closed', ...)          (Bazel; no code)
//   nvcc error   : 'cicc' died due to signal 9 (Kill signal)     nvcc's driver
//   INFO exited: worker (terminated by SIGKILL; not expected)    supervisord
//   ... The exit codes of the workers are {SIGKILL(-9)}    loky (joblib): a signal name with its negative code
//   [2048311] signal (15): Terminated                      Julia
//   INFO - Task exited with return code Negsignal.SIGKILL   Airflow's task runner
//   panic(main thread): Segmentation fault at address 0x0  Bun, Zig (a crash)
//   Segmentation fault (core dumped)  /  Aborted (core dumped)  /  Terminated
//   Floating point exception (core dumped)   SIGFPE (a division by zero): a crash
//   F libc    : Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4350 (x), pid 4321 (y)   Android
//   signal 11 (SIGSEGV), code 9 (SEGV_MTESERR), fault addr 0xe00b...   Android's tombstone
// A shell "Killed" is the usual sign of the kernel OOM killer when nothing else
// was captured: process_killed with layer host_ram, strength 0.5 (the diagnosis
// overrides it with a limit, a probe kill or a stop in evidence). Other SIGKILLs
// (Go, Python, torch elastic) say nothing of the sender: layer unknown.
// Only codes that encode a signal (129-255, or -N) are reported from free text:
// 0 is success, and 1, 2, 127 are a program's own errors that say nothing about
// memory and that prose mentions constantly.
// A task-count limit refusing a new thread or process ("cgroup: fork rejected
// by pids controller in /docker/..."), or a thread refused with EPERM (the JVM's
// "Failed to start thread ... - pthread_create failed (EPERM)"): runtimes report the refused thread as
// out of memory (.NET's OutOfMemoryException from Thread.StartCore, the JVM's
// "unable to create native thread"), but no memory ran out: a look-alike
// (not_memory_failure), which the diagnosis prefers to the allocation failure
// it explains.
// Kubernetes "Exit Code:" / "exitCode:" and docker's "ExitCode" are read by
// their own recognizers (the case-sensitive patterns here do not match them).
#include <cctype>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

// Windows ends a crashed process with an NTSTATUS code as its exit status
// ("exit status 0xc0000139", "exited with code -1073741819", the event log's
// "Exception code: 0xc000001d"). Those of a crash or a broken install are
// look-alikes; STATUS_NO_MEMORY and STATUS_COMMITMENT_LIMIT are not read here
// (the commit limit's own reader and the allocation-failure readers say
// more), nor is 0xc0000409, the fail-fast that follows an abort of any kind.
// (As a signed 32-bit number, and unsigned as .NET and VS Code's Jupyter
// print it: "kernel process died ExitCode: 3221225477".)
struct NtStatus {
  std::string_view hex, decimal, unsigned_decimal, detail;
};
constexpr NtStatus kNtStatus[] = {
    {"0xc0000139", "-1073741511", "3221225785", "a DLL's entry point was not found (STATUS_ENTRYPOINT_NOT_FOUND: a mismatched build or install)"},
    {"0xc0000135", "-1073741515", "3221225781", "a DLL was not found (STATUS_DLL_NOT_FOUND: a missing runtime or install)"},
    {"0xc000001d", "-1073741795", "3221225501", "an instruction this CPU lacks (STATUS_ILLEGAL_INSTRUCTION: a build for a newer CPU)"},
    {"0xc0000005", "-1073741819", "3221225477", "an access violation (STATUS_ACCESS_VIOLATION: a crash)"},
};

constexpr Pattern kPatterns[] = {
    {"(exit ?(status|code)|exited with code|Exception code):? (0x[cC]0000(139|135|01[dD]|005)|-10737415(11|15)|-10737417(95|819)|"
     "32212257(85|81)|3221225501|3221225477)",
     kRegex | kCaseless | kCompanion},
    {"exit code"},
    {"non-zero code", kCompanion},  // docker build: "The command '/bin/sh -c make' returned a non-zero code: 137"
    {"Exit code"},
    {"exit status"},
    {"Exit status"},
    {"exited with code"},
    {"Exited with code"},
    {"exited with status"},  // Heroku: "Process exited with status 137"
    {"(return ?code|exit_code)[ :=]+1[2-9][0-9]", kRegex | kCaseless | kCompanion},  // "Subprocess return code: 137", "returncode=137"
    {"exitcode"},
    {"exit_status"},
    {"exitCode\"?:", kRegex},  // Kubernetes' container state as JSON or YAML: "exitCode":137, exitCode: 137
    {"died with <Signals."},
    {"(return ?code|exit ?status|exit_?code|exit code)\\s*[:=]?\\s*-[0-9]", kRegex | kCaseless | kCompanion},  // Airflow's supervisor: exit_code=-9
    {"signal: killed"},
    {"signal: terminated"},
    {"signal: aborted"},
    {"signal: segmentation fault"},
    {"signal: illegal instruction"},
    {"signal: bus error", kCompanion},
    {"(SIGKILL)"},
    {"exit codes of the workers are \\{SIG", kRegex},  // loky/joblib: "{SIGKILL(-9)}", "{SIGSEGV(-11)}"
    {"signal \\([0-9]+\\): (Terminated|Killed|Aborted|Segmentation fault)", kRegex},  // Julia: "[2048311] signal (15): Terminated"
    {"SIGKILL: kill)"},  // cargo: "(signal: 9, SIGKILL: kill)"
    {"return code Negsignal.SIG", kCompanion},  // Airflow: "Task exited with return code Negsignal.SIGKILL"
    {"Segmentation fault at address ", kCompanion},  // Bun, Zig: "panic(main thread): Segmentation fault at address 0x0"
    {"Received SIGTERM", kCompanion},  // Airflow, Celery: "ERROR - Received SIGTERM. Terminating subprocesses."
    {"received signal 15, stopping", kCompanion},  // Jupyter's server: "[C ... notebookapp:2046] received signal 15, stopping"
    {"was sent SIGKILL"},
    {"was terminated due to signal [0-9]+", kRegex},  // gunicorn 20.1+: "Worker with pid 9 was terminated due to signal 9"
    {"exited on signal [0-9]+", kRegex},  // Open MPI's mpirun
    {"The runner has received a shutdown signal", kCompanion},  // GitHub Actions: the runner's VM went away
    {"lost communication with the server", kCompanion},          // GitHub Actions: the runner stopped answering
    {"render-process-gone.*oom", kRegex},  // Electron: the renderer died of memory, which pool not said
    // Chromium's own out-of-memory exit anywhere it is printed: "renderer process gone (reason: oom, code:
    // -536870904)", a crash report's "Reason: oom", minidump's "Crash reason:  0xe0000008".
    {"[Rr]eason:? ?['\"]?oom['\"]?([,;)} ]|$)", kRegex},
    {"(-536870904|0xe0000008)\\b", kRegex | kCaseless | kCompanion},
    {"pool was terminated abruptly"},       // Python's BrokenProcessPool: a worker died, no signal or code given
    {"executor was terminated abruptly"},   // joblib/loky's BrokenProcessPool, likewise
    {"exit codes of the workers are {EXIT("},  // loky's TerminatedWorkerError: the workers exited by themselves
    {"daemon disappeared unexpectedly", kCompanion},  // Gradle's build daemon gone: no signal or code given
    {"terminated with signal [0-9]+", kRegex},  // gcc's collect2: "ld terminated with signal 9 [Killed]"
    {"died due to signal [0-9]+", kRegex},      // nvcc: "nvcc error   : 'cicc' died due to signal 9 (Kill signal)"
    {"terminated by SIGKILL"},                  // supervisord: "exited: worker (terminated by SIGKILL; not expected)"
    // A forked or server JVM gone without a signal or code: Maven Surefire's
    // "The forked VM terminated without properly saying goodbye", Bazel's
    // "Server terminated abruptly (error code: 14, ...)".
    {"terminated without properly saying goodbye", kCompanion},
    {"Server terminated abruptly", kCompanion},
    {"internal compiler error: Killed \\(program ", kRegex},  // gcc's driver: its compiler proper died by SIGKILL
    {"internal compiler error: Segmentation fault \\(program ", kRegex | kCompanion},  // a compiler crash, a look-alike
    {"got signal [0-9]+", kRegex | kCompanion},  // stress: "<-- worker 24 got signal 9"
    {"WORKER TIMEOUT", kCompanion},
    {"*** HARAKIRI ON WORKER ", kCompanion},  // uWSGI's request timeout (harakiri = N), then SIGKILL
    {"fork rejected by pids controller", kCompanion},
    {"The kernel (for [^ ]+ )?appears to have died", kRegex | kCompanion},  // JupyterLab names the notebook
    // The Jupyter server's own word that a kernel died: its restarter brings
    // it back ("AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep
    // random ports"; a restart the user asked for logs "Kernel restarted"),
    // and Colab's notice of a crash it does not explain.
    {"KernelRestarter: restarting kernel", kCompanion},
    // VS Code's Jupyter extension: "The Kernel crashed while executing code in the current cell or a
    // previous cell." and in its log "Disposing session as kernel process died ExitCode: undefined".
    {"The Kernel crashed while executing code", kCompanion},
    {"kernel process died ExitCode: undefined"},
    {"terminated unexpectedly. Code:", kCompanion},  // VS Code's extension host: "... Code:  3221225477  Signal:  null"
    {"session crashed for an unknown reason", kCaseless | kCompanion},
    {"backend worker process died", kCaseless | kCompanion},                 // TorchServe
    {"pthread_create failed \\(EPERM\\)", kRegex | kCompanion},
    {" by signal", kCompanion},
    {"(by signal", kCompanion},
    // A signal named after "signal": yarn's 'Command failed with signal "SIGKILL"', Node's
    // "exited with signal SIGKILL", "signal: SIGKILL".
    {"signal:? \"?SIG(KILL|TERM|ABRT|SEGV|BUS)\\b", kRegex},
    {"^[ \t]*(Killed|Aborted|Terminated|Segmentation fault)(: [0-9]+)?\\s*$", kRegex},
    {"[0-9] +(Killed|Aborted|Terminated|Segmentation fault)(: [0-9]+)? ", kRegex},
    {"^\\[[0-9]+\\][+-]? +(Killed|Aborted|Terminated|Segmentation fault)", kRegex},
    {"^\\[[0-9]+\\] *[+-]? +([0-9]+ +)?(killed|abort|terminated|segmentation fault|illegal hardware instruction|bus error|Killed|Aborted|Terminated) ", kRegex},
    {"^\\[[0-9]+\\] *[+-]? +([0-9]+ +)?floating point exception ", kRegex | kCompanion},
    // The same after a progress bar's last redraw on the line (tqdm ends
    // without a newline): "... 6/8 [00:11<00:03,  1.91s/it][1]    20417 killed     python main.py".
    {"\\]\\[[0-9]+\\] *[+-]? +([0-9]+ +)?(killed|Killed) ", kRegex},
    {"zsh: (killed|abort|segmentation fault|terminated|illegal hardware instruction|bus error) ", kRegex},
    {"zsh: floating point exception ", kCompanion},
    {"(Segmentation fault|Aborted) \\(core dumped\\)", kRegex},
    // A crash's words without a gate word of their own (a gate word costs every large log's scan):
    // read whole in a paste, and near another failure in a large log.
    {"Floating point exception \\(core dumped\\)", kRegex | kCompanion},
    // Android's native crash: libc's "Fatal signal 11 (SIGSEGV), code 1 ..." and the tombstone's "signal 11 (SIGSEGV), code 9".
    {"Fatal signal [0-9]+ \\(SIG[A-Z]+\\)", kRegex | kCompanion},
    {"signal:? [0-9]+ \\(SIG[A-Z]+\\), code ", kRegex | kCompanion},  // a tombstone: read whole in a paste
    // A build step's line after BuildKit's elapsed seconds: "#15 142.7 Killed", "1588.1 Killed".
    {"^(#[0-9]+ )?[0-9]+\\.[0-9]+ +(Killed|Aborted|Terminated|Segmentation fault)\\s*$", kRegex},
    // SIGFPE as the shell reports it (an integer division by zero, a crash):
    // "Floating point exception (core dumped)", "Floating point exception: 8" (macOS).
    {"^[ \t]*Floating point exception(: 8)?\\s*$", kRegex | kCompanion},
    // A progress bar the shell's word lands after (tqdm redraws with \r): "... 5.15s/it]Killed",
    // a figure or a bar ("accuracy: 0.6588Killed", "0:00:11Killed"), a spinner's frame ("... / Killed").
    {"(\\]|\\)|%|\\||[0-9]|\\.\\.\\.| [-/\\\\|] )(Killed|Aborted|Terminated)\\s*$", kRegex},
    // The shell's status echoed after the command: "$ echo $?" then "137".
    {"echo \\$\\?\\s*$", kRegex | kCompanion},
    {"^[ \t]*1[3-9][0-9]\\s*$", kRegex | kCompanion},
    {"^[ \t]*Illegal instruction( \\(core dumped\\))?\\s*$", kRegex},
    {"was sent code [0-9]+", kRegex | kCompanion},  // gunicorn: "Worker (pid:54) was sent code 139!"
    // A runtime's crash report (the JVM's hs_err header, as on stdout):
    // "#  SIGSEGV (0xb) at pc=0x00007f8e650b3cd7, pid=21172, tid=..."; Windows: EXCEPTION_ACCESS_VIOLATION (0xc0000005).
    // Companions: no gate word in them, so a large log is read around them only near another failure.
    {"(SIGSEGV|SIGBUS|SIGILL) \\(0x[0-9a-f]+\\) at pc=", kRegex | kCompanion},
    {"EXCEPTION_ACCESS_VIOLATION \\(0xc0000005\\) at pc=", kRegex | kCompanion},
    // An operator's kill: "$ kill -9 4821", sudo's "COMMAND=/usr/bin/kill -9 4821", "pkill -KILL -f train".
    {"(^|[ =/$#])p?kill -(9|KILL|SIGKILL|s KILL|s 9) ", kRegex},
};

struct SignalName {
  std::string_view name;
  int number;
};
constexpr SignalName kShellWords[] = {
    {"Killed", 9}, {"Aborted", 6}, {"Terminated", 15}, {"Segmentation fault", 11}, {"Illegal instruction", 4},
    {"killed", 9}, {"abort", 6},   {"terminated", 15}, {"segmentation fault", 11},
    // zsh's words for SIGILL and SIGBUS: "[1]    122549 illegal hardware instruction (core dumped)  python x.py".
    {"illegal hardware instruction", 4}, {"bus error", 7},
    {"Floating point exception", 8}, {"floating point exception", 8},  // SIGFPE: bash's and zsh's words
};
constexpr SignalName kSignalNames[] = {{"SIGKILL", 9}, {"SIGTERM", 15}, {"SIGABRT", 6}, {"SIGSEGV", 11}, {"SIGBUS", 7},
                                       {"SIGINT", 2},  {"SIGHUP", 1},   {"Killed", 9},  {"KILL", 9},    {"TERM", 15}};

// BuildKit's prefix of a step's output line: "#15 142.7" (plain progress,
// the step's number and elapsed seconds) or "1588.1" (the error summary).
bool buildkit_elapsed(std::string_view s) {
  if (!s.empty() && s[0] == '#') {
    size_t i = 1;
    while (i < s.size() && platform::is_digit(s[i])) ++i;
    if (i == 1 || i >= s.size() || s[i] != ' ') return false;
    s = s.substr(i + 1);
  }
  size_t i = 0;
  while (i < s.size() && platform::is_digit(s[i])) ++i;
  if (i == 0 || i + 1 >= s.size() || s[i] != '.') return false;
  for (++i; i < s.size(); ++i)
    if (!platform::is_digit(s[i])) return false;
  return true;
}

// The command's program name from "python3 /x/train.py --a" -> "python3".
std::string program_of(std::string_view cmd) {
  std::string_view w = text::first_word(cmd);
  if (size_t slash = w.rfind('/'); slash != std::string_view::npos) w = w.substr(slash + 1);
  return std::string(w.substr(0, 64));
}

// "[1]", "[2]+", "[3]-": a job-control job number.
bool is_job_spec(std::string_view s) {
  if (s.size() < 3 || s[0] != '[') return false;
  size_t i = 1;
  while (i < s.size() && platform::is_digit(s[i])) ++i;
  if (i == 1 || i >= s.size() || s[i] != ']') return false;
  ++i;
  return i == s.size() || (i + 1 == s.size() && (s[i] == '+' || s[i] == '-'));
}

// zsh (and bash's `jobs -l`) put the current-job mark apart and the pid before
// the status: "[1]    12345", "[1]  + 12345", "[2]  -", "[1]+ 12345". True
// when `s` is such a head; the pid, when present, goes to *pid.
bool is_job_head(std::string_view s, std::optional<int64_t>* pid) {
  size_t close = s.find(']');
  if (close == std::string_view::npos || !is_job_spec(s.substr(0, close + 1))) return false;
  std::string_view rest = s.substr(close + 1);
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) rest.remove_prefix(1);
  rest = text::trim_left(rest);
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) rest = text::trim_left(rest.substr(1));
  if (rest.empty()) return true;
  if (rest.find_first_not_of("0123456789") != std::string_view::npos) return false;
  *pid = text::parse_i64(rest);
  return true;
}

class ExitStatus final : public Recognizer {
 public:
  // "return code = -9", "exitcode  : -9", "exit status -9": where the code
  // starts and the signal it names (1-64), if the line has one.
  static std::optional<std::pair<size_t, int>> negative_code(std::string_view s) {
    for (std::string_view key : {"return code", "returncode", "exit status", "exitcode", "exit code", "exit_code"}) {
      size_t p = text::ifind(s, key);
      if (p == std::string_view::npos) continue;
      size_t i = p + key.size();
      while (i < s.size() && (s[i] == ' ' || s[i] == '=' || s[i] == ':')) ++i;
      if (i + 1 >= s.size() || s[i] != '-' || !platform::is_digit(s[i + 1])) continue;
      auto n = text::parse_u64(s.substr(i + 1));
      if (n && *n >= 1 && *n <= 64) return std::pair<size_t, int>{p, static_cast<int>(*n)};
    }
    return std::nullopt;
  }

  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (nt_status(line, out)) return;
    if (echoed_status(line, out)) return;
    if (shell(line, out)) return;
    // A runtime's crash report: the signal that crashed it, at a program counter
    // (before the advice check: the JVM prefixes its header lines with "# ").
    if (size_t p = s.find(") at pc=0x"); p != std::string_view::npos) {
      constexpr SignalName kCrash[] = {{"SIGSEGV (", 11}, {"SIGBUS (", 7}, {"SIGILL (", 4}, {"EXCEPTION_ACCESS_VIOLATION (", 11}};
      for (const SignalName& c : kCrash)
        if (size_t q = s.find(c.name); q != std::string_view::npos && q < p) {
          std::optional<int64_t> pid;
          if (auto v = text::after(s, "pid=")) pid = text::parse_i64(*v);
          return signal(line, q, c.number, pid, out, /*framed=*/true);
        }
      return;
    }
    if (guards::is_advice_line(s)) return;
    if (operator_kill(line, out)) return;
    if (auto p = s.find("died with <Signals."); p != std::string_view::npos) {
      // "died with <Signals.SIGKILL: 9>."
      std::string_view rest;
      auto v = text::after(s.substr(p), ": ");
      if (auto n = v ? text::parse_i64(*v, &rest) : std::nullopt) signal(line, p, static_cast<int>(*n), std::nullopt, out);
      return;
    }
    // Python's negative return code is the signal that ended the child:
    // DeepSpeed's launcher "exits with return code = -9", torch elastic's
    // "exitcode  : -9 (pid: 4117)", subprocess's "returned non-zero exit status -9".
    if (auto n = negative_code(s)) {
      std::optional<int64_t> pid;
      if (auto v = text::after(s, "pid: ")) pid = text::parse_i64(*v);
      signal(line, n->first, n->second, pid, out);
      return;
    }
    // Go's os/exec: "signal: killed", "signal: illegal instruction (core dumped)".
    constexpr SignalName kGo[] = {{"signal: killed", 9},  {"signal: terminated", 15},          {"signal: aborted", 6},
                                  {"signal: segmentation fault", 11}, {"signal: illegal instruction", 4}, {"signal: bus error", 7}};
    for (const SignalName& go : kGo) {
      if (size_t p = s.find(go.name); p != std::string_view::npos) {
        int sig = go.number;
        signal(line, p, sig, std::nullopt, out);
        return;
      }
    }
    // Julia's signal report: "[2048311] signal (15): Terminated" (the pid in brackets).
    if (size_t p = s.find("signal ("); p != std::string_view::npos) {
      std::string_view after;
      if (auto n = text::parse_i64(s.substr(p + 8), &after); n && *n > 0 && *n < 65 && text::starts_with(after, "): ")) {
        std::optional<int64_t> pid;
        if (std::string_view t = text::trim_left(s); text::starts_with(t, "[")) pid = text::parse_i64(t.substr(1));
        signal(line, p, static_cast<int>(*n), pid, out);
        return;
      }
    }
    if (android_signal(line, s, out)) return;
    if (refused_or_gone(line, s, out)) return;
    const bool harakiri = text::contains(s, "*** HARAKIRI ON WORKER ");
    if (size_t p = s.find("WORKER TIMEOUT"); p != std::string_view::npos || harakiri) {
      // gunicorn killing a worker that did not answer in time (its next line
      // says "was sent SIGKILL! Perhaps out of memory?", which it was not),
      // and uWSGI's harakiri ("*** HARAKIRI ON WORKER 4 (pid: 22817, try: 1) ***",
      // then "worker 4 ... died, killed by signal 9").
      // The worker's death is the failure a client sees, and it is not memory:
      // a look-alike with its own cause, not context.
      Fact f = look_alike(line, Family::exit_status, 0.7f,
                          harakiri ? "uWSGI killed a worker whose request ran past its harakiri timeout"
                                   : "gunicorn killed a worker that timed out (WORKER TIMEOUT)");
      if (auto pid = text::after(s, harakiri ? "(pid: " : "(pid:")) f.pid = text::parse_i64(*pid);
      out.add(std::move(f));
      return;
    }
    if (size_t p = s.find("was sent code "); p != std::string_view::npos) {
      // gunicorn: "Worker (pid:54) was sent code 139!" (an exit status, 128 + signal)
      std::optional<int64_t> pid;
      if (auto v = text::after(s, "(pid:")) pid = text::parse_i64(*v);
      if (auto code = text::parse_i64(s.substr(p + 14)); code && *code > 128 && *code < 160)
        signal(line, p, static_cast<int>(*code - 128), pid, out);
      return;
    }
    if (size_t p = s.find("was sent SIGKILL"); p != std::string_view::npos) {
      // gunicorn: "Worker (pid:42) was sent SIGKILL! Perhaps out of memory?"
      std::optional<int64_t> pid;
      if (auto v = text::after(s, "(pid:")) pid = text::parse_i64(*v);
      signal(line, p, 9, pid, out);
      return;
    }
    if (worded_signal(line, out)) return;
    if (size_t p = s.find("SIGKILL: kill)"); p != std::string_view::npos) {
      // Rust's ExitStatus: "process didn't exit successfully: `rustc ...` (signal: 9, SIGKILL: kill)"
      signal(line, p, 9, std::nullopt, out);
      return;
    }
    if (loky_signal(line, out)) return;
    if (size_t p = s.find("(SIGKILL)"); p != std::string_view::npos) {
      // Celery "exited with 'signal 9 (SIGKILL)'", torch elastic "Signal 9 (SIGKILL) received by PID 1234".
      std::optional<int64_t> pid;
      if (auto v = text::after(s, "received by PID ")) pid = text::parse_i64(*v);
      else if (auto v2 = text::after(s, "pid:")) pid = text::parse_i64(*v2);
      signal(line, p, 9, pid, out);
      return;
    }
    if (tool_signal(line, out)) return;
    if (size_t p = s.find(" by signal"); p != std::string_view::npos && fish(line, s, p, out)) return;
    if (size_t p = named_signal(s); p != std::string_view::npos && s.find(" by signal") == std::string_view::npos) {
      std::string_view rest = platform::skip(s.substr(p + 6), ": \"");
      for (const auto& n : kSignalNames)
        if (text::starts_with(rest, n.name)) return signal(line, p, n.number, std::nullopt, out);
    }
    if (by_signal(line, out)) return;
    code(line, out);
  }

 private:
  bool ice_segv_sent_ = false;

  RepeatFilter repeats_{40};
  bool repeated(const Line& line, const std::string& key) { return repeats_.repeated(key, line.number); }

  // "kill -9 4821" typed or logged (sudo's COMMAND=): an operator's SIGKILL,
  // which a bare "Killed" or exit 137 nearby may be.
  bool operator_kill(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = s.find("kill -");
    if (p == std::string_view::npos) return false;
    std::string_view flag = s.substr(p + 6);
    bool sigkill = text::starts_with(flag, "9 ") || text::starts_with(flag, "KILL ") || text::starts_with(flag, "SIGKILL ") ||
                   text::starts_with(flag, "s KILL ") || text::starts_with(flag, "s 9 ");
    if (!sigkill) return false;
    size_t start = p > 0 && s[p - 1] == 'p' ? p - 1 : p;
    if (start > 0 && !(s[start - 1] == ' ' || s[start - 1] == '=' || s[start - 1] == '/' || s[start - 1] == '$' || s[start - 1] == '#'))
      return false;
    if (guards::is_mention(s, p, 8)) return false;
    // A kill that was run names its target: a pid (kill) or a pattern
    // (pkill); "kill -9 <pid>" in advice names neither.
    std::string_view target = text::trim(flag.substr(flag.find(' ')));
    if (target.empty() || target[0] == '<') return false;
    auto pid = text::parse_i64(target);
    if (!pid && start == p) return false;
    Fact f = make_fact(line, FactKind::stop_or_restart, Family::exit_status);
    f.detail = "an operator sent SIGKILL (kill -9)";
    f.pid = pid;
    out.add(std::move(f));
    return true;
  }

  // loky (joblib's process pool) names each dead worker's signal with its
  // negative code: "The exit codes of the workers are {SIGKILL(-9)}" (also
  // {SIGSEGV(-11)}, {EXIT(1)}). The name and the code must agree.
  bool loky_signal(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    for (size_t p = s.find("(-"); p != std::string_view::npos; p = s.find("(-", p + 2)) {
      size_t b = p;
      while (b > 0 && s[b - 1] >= 'A' && s[b - 1] <= 'Z') --b;
      std::string_view name = s.substr(b, p - b);
      std::string_view rest;
      auto code = text::parse_i64(s.substr(p + 2), &rest);
      if (!code || !text::starts_with(rest, ")")) continue;
      for (const SignalName& n : kSignalNames)
        if (text::starts_with(n.name, "SIG") && name == n.name && *code == n.number) {
          signal(line, b, n.number, std::nullopt, out);
          return true;
        }
    }
    return false;
  }

  // A signal a launcher or a driver names in words: gunicorn 20.1+'s "Worker
  // with pid 9 was terminated due to signal 9", gcc's "ld terminated with
  // signal 9 [Killed]", Open MPI's "... exited on signal 9 (Killed).".
  // A tool's own words for its child's signal: nvcc's driver ("nvcc error   :
  // 'cicc' died due to signal 9 (Kill signal)"), supervisord ("INFO exited:
  // worker (terminated by SIGKILL; not expected)").
  bool tool_signal(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (size_t p = s.find("died due to signal "); p != std::string_view::npos) {
      if (auto n = text::parse_i64(s.substr(p + 19)); n && *n > 0 && *n < 65) signal(line, p, static_cast<int>(*n), std::nullopt, out);
      return true;
    }
    if (size_t p = s.find("terminated by SIGKILL"); p != std::string_view::npos) {
      signal(line, p, 9, std::nullopt, out);
      return true;
    }
    return false;
  }

  // Chromium's out-of-memory exit (Electron's render-process-gone, VS Code's
  // "renderer process gone (reason: oom, code: -536870904)", a crash
  // report's "Reason: oom", a minidump's "Crash reason:  0xe0000008"): its
  // reason word in lower case after "reason", or its exception code
  // (0xE0000008, -536870904 as a signed exit code).
  static bool chromium_oom(std::string_view s) {
    if (text::contains(s, "-536870904") || text::icontains(s, "0xe0000008")) return true;
    if (text::contains(s, "render-process-gone") && text::contains(s, "oom")) return true;
    for (std::string_view r : {"reason", "Reason"}) {
      for (size_t p = s.find(r); p != std::string_view::npos; p = s.find(r, p + 1)) {
        std::string_view rest = platform::skip(s.substr(p + r.size()), ":='\" ");
        if (text::starts_with(rest, "oom") && (rest.size() == 3 || std::string_view(",;)} '\"").find(rest[3]) != std::string_view::npos))
          return true;
      }
    }
    return false;
  }

  // loky's TerminatedWorkerError ends "The exit codes of the workers are
  // {EXIT(1), EXIT(1)}" when the workers exited with a status of their own
  // (an error at their start, often Windows' spawn): no kill. A signal
  // there ("{SIGKILL(-9)}") is read where the codes are (loky_signal).
  bool loky_exited(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (s.find("exit codes of the workers are {EXIT(") == std::string_view::npos) return false;
    if (guards::is_advice_line(s) || repeated(line, "pool-exit")) return true;
    out.add(look_alike(line, Family::exit_status, 0.5f,
                       "the pool's workers exited with a status of their own (EXIT(n)), not killed by a signal: an error, not memory"));
    return true;
  }

  bool worded_signal(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    // A process that ended without a signal or a pool named: GitHub Actions'
    // runner losing its VM mid-job ("##[error]The runner has received a
    // shutdown signal. ..." : a hosted runner's VM running out of memory is a
    // common reason, and others are too); Chromium's out-of-memory exit
    // (chromium_oom above: V8's heap or the process's memory, it does not
    // say). An exit status without a code: a failure whose pool is not decided. So is
    // Python's BrokenProcessPool ("A process in the process pool was
    // terminated abruptly while the future was running or pending."): a
    // worker that died without a word, most often killed for memory.
    // Gradle: "Gradle build daemon disappeared unexpectedly (it may have been
    // killed or may have crashed)"; Maven Surefire's forked test JVM and
    // Bazel's server: gone, no signal or code given.
    struct Gone {
      std::string_view phrase, also, key, detail;
    };
    static constexpr Gone kGone[] = {
        {"The runner has received a shutdown signal", "", "runner-shutdown",
         "the CI runner received a shutdown signal (its machine stopped or was lost)"},
        // GitHub Actions when the runner's machine stops answering: "The hosted runner: GitHub Actions 17
        // lost communication with the server. Anything in your workflow that ... starves it for CPU/Memory ...".
        {"lost communication with the server", "runner", "runner-lost",
         "the CI runner lost communication with the server (its machine stopped answering: starved or lost)"},
        {"pool was terminated abruptly", "", "pool-broken",
         "a worker of a Python process pool was terminated abruptly (no signal or exit code given)"},
        {"executor was terminated abruptly", "", "pool-broken",
         "a worker of a Python process pool (joblib/loky) was terminated abruptly (no signal or exit code given)"},
        {"terminated without properly saying goodbye", "", "fork-gone",
         "Maven Surefire's forked JVM ended without a word (killed or crashed; no signal or exit code given)"},
        {"Server terminated abruptly", "", "server-gone",
         "the Bazel server terminated abruptly (killed or crashed; no signal or exit code given)"},
        {"daemon disappeared unexpectedly", "", "daemon-gone",
         "the Gradle build daemon disappeared (killed or crashed; no signal or exit code given)"},
    };
    if (chromium_oom(s)) {
      if (guards::is_advice_line(s) || repeated(line, "chromium-oom")) return true;
      Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
      e.strength = 0.3f;
      e.detail = std::string(kChromiumOom);
      if (auto c = text::after(s, "exitCode")) e.exit_code = text::parse_i64(platform::skip(*c, "\":' "));
      else if (text::contains(s, "-536870904")) e.exit_code = -536870904;
      out.add(std::move(e));
      return true;
    }
    if (loky_exited(line, out)) return true;
    for (const Gone& g : kGone) {
      if (!text::contains(s, g.phrase) || (!g.also.empty() && !text::contains(s, g.also))) continue;
      if (guards::is_advice_line(s) || repeated(line, std::string(g.key))) return true;
      Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
      e.strength = 0.3f;
      e.detail = std::string(g.detail);
      out.add(std::move(e));
      return true;
    }
    // "<phrase> N": the signal number after the phrase, the pid after its own prefix where the line has one.
    struct Worded {
      std::string_view phrase, pid_prefix;
    };
    if (size_t p = s.find("return code Negsignal.SIG"); p != std::string_view::npos) {
      // Airflow's task runner: the task process's negative return code as a
      // signal name ("Negsignal.SIGKILL", "Negsignal.SIGTERM", ...).
      std::string_view name = s.substr(p + 22);
      for (const SignalName& n : kSignalNames)
        if (text::starts_with(name, n.name) && (name.size() == n.name.size() || !std::isalnum(static_cast<unsigned char>(name[n.name.size()])))) {
          signal(line, p, n.number, std::nullopt, out);
          break;
        }
      return true;
    }
    if (size_t p = s.find("received signal 15, stopping"); p != std::string_view::npos) {
      // Jupyter's server asked to stop (its kernels are shut down after it).
      signal(line, p, 15, std::nullopt, out);
      return true;
    }
    if (size_t p = s.find("Received SIGTERM"); p != std::string_view::npos) {
      // Airflow's and Celery's handler: the process was asked to stop.
      signal(line, p, 15, std::nullopt, out);
      return true;
    }
    if (size_t p = s.find("Segmentation fault at address "); p != std::string_view::npos) {
      // Bun's and Zig's panic handler: a crash, signal 11.
      signal(line, p, 11, std::nullopt, out);
      return true;
    }
    // gcc's driver names the signal by its strsignal() text: "Killed" is SIGKILL;
    // "Segmentation fault" is the compiler crashing on its own (a compiler bug,
    // a corrupt input or precompiled header): no kill for memory.
    if (size_t p = s.find("internal compiler error: Segmentation fault (program "); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 40) || ice_segv_sent_) return true;
      ice_segv_sent_ = true;
      out.add(look_alike(line, Family::exit_status, 0.6f,
                         "the compiler crashed (internal compiler error: Segmentation fault), a bug or a corrupt input, not a kill for memory"));
      return true;
    }
    if (size_t p = s.find("internal compiler error: Killed (program "); p != std::string_view::npos) {
      signal(line, p, 9, std::nullopt, out);
      return true;
    }
    constexpr Worded kWorded[] = {
        {"was terminated due to signal ", "Worker with pid "},  // gunicorn 20.1+: "Worker with pid 9 was terminated due to signal 9"
        {" got signal ", ""},                                   // stress: "<-- worker 24 got signal 9"
        {" terminated with signal ", ""},                      // gcc: "collect2: fatal error: ld terminated with signal 9 [Killed]"
        {" exited on signal ", "with PID "},                    // Open MPI: "... with PID 30417 on node cn03 exited on signal 9 (Killed)."
    };
    for (const Worded& w : kWorded) {
      size_t p = s.find(w.phrase);
      if (p == std::string_view::npos) continue;
      std::optional<int64_t> pid;
      if (!w.pid_prefix.empty())
        if (auto v = text::after(s, w.pid_prefix)) pid = text::parse_i64(*v);
      if (auto sig = text::parse_i64(s.substr(p + w.phrase.size())); sig && *sig > 0 && *sig < 65)
        signal(line, p, static_cast<int>(*sig), pid, out);
      return true;
    }
    return false;
  }

  // A native crash as Android reports it: libc's "Fatal signal 11 (SIGSEGV),
  // code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4350 (inference), pid 4321
  // (com.example.app)" and debuggerd's tombstone "signal 11 (SIGSEGV), code 9
  // (SEGV_MTESERR), fault addr ...". The signal, read as a shell's.
  bool android_signal(const Line& line, std::string_view s, FactSink& out) {
    size_t p = s.find("Fatal signal ");
    size_t at = p == std::string_view::npos ? std::string_view::npos : p + 13;
    if (at == std::string_view::npos) {
      p = s.find("signal");
      if (p == std::string_view::npos || (p > 0 && std::isalnum(static_cast<unsigned char>(s[p - 1])))) return false;
      at = p + 6;
      if (at < s.size() && s[at] == ':') ++at;
      if (at >= s.size() || s[at] != ' ') return false;
      ++at;
    }
    std::string_view after;
    auto n = text::parse_i64(s.substr(at), &after);
    if (!n || *n <= 0 || *n >= 65 || !text::starts_with(after, " (SIG")) return false;
    // The tombstone's form without "Fatal" carries the code that follows it.
    if (s.substr(p, 6) != "Fatal " && !text::contains(after, "), code ")) return false;
    std::optional<int64_t> pid;
    if (auto v = text::after(s, ", pid ")) pid = text::parse_i64(*v);
    signal(line, p, static_cast<int>(*n), pid, out);
    return true;
  }

  // A SIGKILL / other signal reported by a runtime (not the shell).
  // Threads refused by a task limit or EPERM (not memory), and a Jupyter
  // kernel gone without a word of why: true when the line was one of them.
  bool refused_or_gone(const Line& line, std::string_view s, FactSink& out) {
    if (text::contains(s, "fork rejected by pids controller")) {
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::exit_status);
      f.layer = Layer::not_memory;
      f.strength = 0.85f;
      f.detail = "a pids limit refusing a new thread or process (the pids controller), not memory";
      if (auto cg = text::after(s, "pids controller in ")) f.cgroup = std::string(text::take_until(*cg, " \t").substr(0, 256));
      out.add(std::move(f));
      return true;
    }
    if (text::contains(s, "The kernel appears to have died") ||
        (text::contains(s, "The kernel for ") && text::contains(s, " appears to have died")) ||
        text::contains(s, "KernelRestarter: restarting kernel") || text::icontains(s, "session crashed for an unknown reason") ||
        text::contains(s, "The Kernel crashed while executing code") || text::contains(s, "kernel process died ExitCode: undefined")) {
      // Jupyter's notice that the notebook's kernel process is gone: it names
      // no signal and no pool (a memory kill is the common reason, not the
      // only one): an exit whose pool the evidence must decide.
      if (repeated(line, "jupyter kernel died")) return true;
      Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
      e.strength = 0.3f;
      e.detail = "the Jupyter kernel died (no signal or pool named)";
      out.add(std::move(e));
      return true;
    }
    if (text::icontains(s, "backend worker process died")) {
      // TorchServe's frontend losing its Python backend worker ("Backend
      // worker monitoring thread interrupted or backend worker process
      // died."): the worker is gone, and nothing here says why (a memory
      // kill is one reason; a crash in the handler another).
      if (repeated(line, "torchserve worker died")) return true;
      Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
      e.strength = 0.3f;
      e.detail = "the TorchServe backend worker died (no signal or pool named)";
      out.add(std::move(e));
      return true;
    }
    if (text::contains(s, "pthread_create failed (EPERM)")) {
      // The JVM's "Failed to start thread ... - pthread_create failed (EPERM)":
      // thread creation forbidden (an old runtime's seccomp profile without
      // clone3, a task limit), which it then reports as insufficient memory.
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::exit_status);
      f.layer = Layer::not_memory;
      f.strength = 0.8f;
      f.detail = "thread creation refused with EPERM (a seccomp profile or a task limit), not memory";
      out.add(std::move(f));
      return true;
    }
    return false;
  }

  // `framed`: a line whose "# " prefix is the report's frame, not advice.
  void signal(const Line& line, size_t at, int sig, std::optional<int64_t> pid, FactSink& out, bool framed = false) {
    if (!framed && guards::is_mention(line.text, at, 10)) return;
    if (repeated(line, "sig" + std::to_string(sig) + (pid ? ":" + std::to_string(*pid) : std::string()))) return;
    Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
    e.signal = sig;
    e.pid = pid;
    e.strength = 0.3f;
    if (sig == 9) {
      Fact k = make_fact(line, FactKind::process_killed, Family::exit_status);
      k.pid = pid;
      k.layer = Layer::unknown;
      k.strength = 0.4f;
      k.detail = "SIGKILL";
      out.add(std::move(k));
    }
    out.add(std::move(e));
  }

  // fish: "fish: Job 1, 'python3 x.py' terminated by signal SIGKILL (Forced quit)":
  // the shell's report, like bash's "Killed", with the command in quotes.
  // Where "signal" is followed by a signal's name (after a colon, spaces or a
  // quote): 'failed with signal "SIGKILL"', "exited with signal SIGKILL".
  static size_t named_signal(std::string_view s) {
    for (size_t p = s.find("signal"); p != std::string_view::npos; p = s.find("signal", p + 6)) {
      std::string_view rest = platform::skip(s.substr(p + 6), ": \"");
      if (text::starts_with(rest, "SIG")) return p;
    }
    return std::string_view::npos;
  }

  bool fish(const Line& line, std::string_view s, size_t p, FactSink& out) {
    auto job = text::after(s, "fish: Job ");
    if (!job || !text::contains(s.substr(p), "SIGKILL")) return false;
    std::string program;
    if (size_t q = job->find('\''); q != std::string_view::npos && q < p) program = program_of(text::take_until(job->substr(q + 1), "'"));
    if (repeated(line, "shell9")) return true;
    Fact k = make_fact(line, FactKind::process_killed, Family::exit_status);
    k.layer = Layer::host_ram;
    k.strength = 0.5f;
    k.process = program;
    k.detail = "shell reported Killed";
    out.add(std::move(k));
    Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
    e.signal = 9;
    e.process = program;
    e.strength = 0.3f;
    out.add(std::move(e));
    return true;
  }

  // The shell's word written onto the end of a line a program redrew with a
  // carriage return and never ended (the shell starts its report where the
  // cursor is): after a bar's bracket or bar, a figure ("... accuracy:
  // 0.6588Killed", rich's "0:00:11Killed"), a message's dots, or a spinner's
  // last frame ("Solving environment: / Killed"). Glued to a figure or a
  // bracket it is no word of prose.
  static bool after_redraw(std::string_view s, size_t p) {
    if (p == 0) return false;
    const char c = s[p - 1];
    if (c == ']' || c == ')' || c == '%' || c == '|' || platform::is_digit(c)) return true;
    if (p >= 3 && s.substr(p - 3, 3) == "...") return true;
    return p >= 3 && c == ' ' && (s[p - 2] == '/' || s[p - 2] == '\\' || s[p - 2] == '-' || s[p - 2] == '|') && s[p - 3] == ' ';
  }

  // The shell's own reports. Returns true when the line was one.
  bool shell(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    for (const auto& w : kShellWords) {
      size_t p = s.find(w.name);
      if (p == std::string_view::npos) continue;
      std::string_view before = text::trim(s.substr(0, p));
      std::string_view after = s.substr(p + w.name.size());
      std::optional<int64_t> pid;
      std::string program;
      bool ok = false;
      if (t == w.name || (text::starts_with(t, w.name) && text::starts_with(text::trim(after), ": ") && t.size() < w.name.size() + 6)) {
        ok = true;  // "Killed" / "Killed: 9"
      } else if (text::starts_with(after, " (core dumped)") && (before.empty() || before.back() == ':')) {
        ok = true;  // "Segmentation fault (core dumped)", "./x.sh: line 2: 12 Segmentation fault (core dumped) ./a"
      } else if (text::trim(after).empty() && after_redraw(s, p) && w.name[0] >= 'A' && w.name[0] <= 'Z') {
        ok = true;  // after a progress bar's last redraw: " 42%|####| 840/2000 [1:12:05<1:39:33, 5.15s/it]Killed"
                    // or a progress message with no newline: "Loading database information...Killed"
      }
      // A build step's output as BuildKit prints it, each line after the
      // step's elapsed seconds (plain progress: "#15 142.7 Killed"; the
      // error summary: "1588.1 Killed"): the shell's word of a compiler or a
      // script that the build ran.
      if (!ok && text::trim(after).empty() && w.name[0] >= 'A' && w.name[0] <= 'Z' && buildkit_elapsed(before)) ok = true;
      // bash on macOS writes the signal number: "line 212: 48211 Killed: 9   python ..."
      if (text::starts_with(after, ": ") && after.size() > 2 && platform::is_digit(after[2])) {
        size_t i = 2;
        while (i < after.size() && platform::is_digit(after[i])) ++i;
        after = after.substr(i);
      }
      std::string_view command = after;
      if (text::starts_with(command, " (core dumped)")) command = command.substr(14);
      // "<shell>: line N:  PID Word   command" / "bash:  PID Word   command"
      if (!ok && !before.empty() && platform::is_digit(before.back()) && !after.empty() && after[0] == ' ') {
        size_t b = before.size();
        while (b > 0 && platform::is_digit(before[b - 1])) --b;
        std::string_view head = text::trim(before.substr(0, b));
        // Not a timestamp's "+02:" ("2023-06-22T09:41:02+02:00  Terminated  Exit Code: 137", Nomad's task events).
        bool shell_head = !head.empty() && head.back() == ':' &&
                          (head.find(' ') == std::string_view::npos || text::contains(head, ": line ")) &&
                          (text::contains(head, ": line ") || head.size() < 2 || !platform::is_digit(head[head.size() - 2]));
        if (shell_head) {
          ok = true;
          pid = text::parse_i64(before.substr(b));
          program = program_of(command);
        }
      }
      // "[1]+  Killed   cmd" / "zsh: killed   cmd" / "[1]    12345 killed   cmd"
      // A job head right after a progress bar's "]" on the same line.
      std::string_view job = before;
      if (size_t bar = before.rfind("]["); bar != std::string_view::npos && !is_job_head(before, &pid)) job = before.substr(bar + 1);
      if (!ok && !after.empty() && after[0] == ' ' && (before == "zsh:" || is_job_head(job, &pid))) {
        ok = true;
        program = program_of(command);
      }
      if (!ok) continue;
      if (repeated(line, "shell" + std::to_string(w.number))) return true;
      if (w.number == 9) {
        Fact k = make_fact(line, FactKind::process_killed, Family::exit_status);
        k.layer = Layer::host_ram;
        k.strength = 0.5f;
        k.pid = pid;
        k.process = program;
        k.detail = "shell reported Killed";
        out.add(std::move(k));
      }
      Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
      e.signal = w.number;
      e.pid = pid;
      e.process = program;
      e.strength = 0.3f;
      out.add(std::move(e));
      return true;
    }
    return false;
  }

  // Numeric exit codes after one of the phrases.
  // "$ echo $?" and, on the next line, the status the shell kept: 137 is
  // SIGKILL (128 + 9) as surely as "exit code 137" is.
  bool echoed_status(const Line& line, FactSink& out) {
    std::string_view t = text::trim(line.text);
    if (text::ends_with(t, "echo $?") && guards::is_command_line(line.text)) {
      echo_line_ = line.number;
      return true;
    }
    if (echo_line_ == 0 || line.number != echo_line_ + 1 || t.empty() || t.find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    echo_line_ = 0;
    auto n = text::parse_i64(t);
    if (!n || *n <= 128 || *n > 192) return true;
    Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
    e.strength = 0.3f;
    e.exit_code = static_cast<int>(*n);
    if (*n == 137) {
      Fact k = make_fact(line, FactKind::process_killed, Family::exit_status);
      k.layer = Layer::unknown;
      k.strength = 0.4f;
      k.detail = "SIGKILL";
      out.add(std::move(k));
    }
    out.add(std::move(e));
    return true;
  }
  uint64_t echo_line_ = 0;

  // "killed by signal 9", "terminated by signal SIGKILL", "is killed by
  // signal: Killed.", and s6-overlay's supervisor: "Service exited with code
  // 256 (by signal 4)".
  bool by_signal(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = s.find(" by signal");
    if (p == std::string_view::npos) p = s.find("(by signal");
    if (p == std::string_view::npos) return false;
    std::string_view rest = platform::skip(s.substr(p + 10), ": ");
    std::optional<int> sig;
    if (auto n = text::parse_i64(rest)) sig = static_cast<int>(*n);
    for (const auto& n : kSignalNames)
      if (!sig && text::starts_with(rest, n.name)) sig = n.number;
    if (sig && *sig > 0 && *sig < 65) signal(line, p, *sig, std::nullopt, out);
    return true;
  }

  // A Windows crash's NTSTATUS as the exit status (kNtStatus): a look-alike.
  bool nt_status(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    // VS Code's "Extension host terminated unexpectedly. Code:  3221225477  Signal:  null" too.
    for (std::string_view lead : {"exit status ", "exit code ", "exited with code ", "Exception code: ", "exit code: ", "exit status: ",
                                  "exitcode: ", "terminated unexpectedly. Code:"}) {
      size_t p = text::ifind(s, lead);
      if (p == std::string_view::npos) continue;
      std::string_view v = text::trim_left(s.substr(p + lead.size()));
      for (const NtStatus& n : kNtStatus) {
        if (!text::istarts_with(v, n.hex) && !text::starts_with(v, n.decimal) && !text::starts_with(v, n.unsigned_decimal)) continue;
        if (guards::is_mention(s, p, lead.size()) || repeated(line, std::string(n.hex))) return true;
        out.add(look_alike(line, Family::exit_status, 0.7f, "the process crashed on Windows: " + std::string(n.detail) + ", not memory"));
        return true;
      }
    }
    return false;
  }

  void code(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    if (text::contains(s, "died, exit code:")) return;  // vLLM's worker report: the vLLM recognizer reads it
    constexpr std::string_view kPhrases[] = {"exited with code", "Exited with code", "exit code",   "Exit code",
                                             "exit status",      "Exit status",      "exitcode",    "exit_status",
                                             "non-zero code",    "exitCode",         "exited with status",
                                             "return code",      "Return code",      "returncode",  "exit_code"};
    for (std::string_view phrase : kPhrases) {
      size_t p = s.find(phrase);
      if (p == std::string_view::npos) continue;
      // Kubernetes' state has a number ("exitCode":137, exitCode: 137); docker
      // events' attributes a string ("exitCode":"137"), which the docker reader reads.
      if (phrase == "exitCode" && text::starts_with(s.substr(p + phrase.size()), "\":\"")) return;
      // "exit status (137)" (Nextflow): the code in parentheses.
      std::string_view rest = platform::skip(s.substr(p + phrase.size()), " \t:=\"'(");
      if (text::starts_with(rest, "exit status ")) rest = rest.substr(12);  // "Exited with code exit status 137"
      if (text::starts_with(rest, "is ")) rest = rest.substr(3);
      if (text::starts_with(rest, "of ")) rest = rest.substr(3);
      std::string_view after;
      auto n = text::parse_i64(rest, &after);
      if (!n) continue;
      if (!after.empty() && (platform::is_alnum(after[0]) || after[0] == '.') && !text::starts_with(after, ".\"") &&
          !(after[0] == '.' && (after.size() == 1 || after[1] == ' ')))
        continue;  // "exit code 1a", "exit status 1.5"
      if (guards::is_mention(s, p, phrase.size())) return;
      // Only codes that encode a signal (128+N, or -N) say anything about memory;
      // 0 is success and 1, 2, 127 are the program's own errors, which prose and
      // changelogs mention all the time.
      if (*n < -64 || (*n >= 0 && *n <= 128) || *n > 255) return;
      Fact e = make_fact(line, FactKind::exit_status, Family::exit_status);
      e.strength = 0.3f;
      if (*n < 0) e.signal = static_cast<int>(-*n);  // torch elastic / multiprocessing: -9 is SIGKILL
      else e.exit_code = static_cast<int>(*n);
      if (phrase == "non-zero code" || text::contains(s, "did not complete successfully")) e.detail = std::string(kBuildStepExit);
      if (auto pid = text::after(s, "(pid: ")) {
        if (auto v = text::parse_i64(*pid)) e.pid = *v;
      }
      // "web-1  exited with code 137" (compose): the service is the word before.
      if (phrase == "exited with code") {
        std::string_view head = text::trim(s.substr(0, p));
        size_t sp = head.find_last_of(" \t|");
        std::string_view name = sp == std::string_view::npos ? head : head.substr(sp + 1);
        if (!name.empty() && name.size() < 128) e.container = std::string(name);
      }
      std::string key = "code" + std::to_string(*n) + (e.pid ? ":" + std::to_string(*e.pid) : std::string());
      if (repeated(line, key)) return;
      if (e.signal == 9) {
        Fact k = make_fact(line, FactKind::process_killed, Family::exit_status);
        k.pid = e.pid;
        k.layer = Layer::unknown;
        k.strength = 0.4f;
        k.detail = "SIGKILL";
        out.add(std::move(k));
      }
      out.add(std::move(e));
      return;
    }
  }
};

}  // namespace

const RecognizerEntry kExitStatusEntry{"exit_status", Family::exit_status, kPatterns,
                                       [] { return std::unique_ptr<Recognizer>(new ExitStatus); }};

}  // namespace aimem
