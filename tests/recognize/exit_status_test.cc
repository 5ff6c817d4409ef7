// Exit codes, signals and shell kill reports (src/recognize/families/exit_status.cc).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(ExitStatus, ShellKilledIsAHostSigkill) {
  for (const char* line : {"Killed\n", "bash: line 1:  2079 Killed                  python3 train.py\n",
                           "./run.sh: line 3: 1234 Killed                  python serve.py --port 8000\n",
                           "[1]+  Killed                  python3 x.py\n", "zsh: killed     python3 x.py\n"}) {
    auto k = of_kind(line, FactKind::process_killed);
    ASSERT_EQ(k.size(), 1u) << line;
    EXPECT_EQ(k[0].layer, Layer::host_ram);
    EXPECT_FLOAT_EQ(k[0].strength, 0.5f);
    auto e = of_kind(line, FactKind::exit_status);
    ASSERT_EQ(e.size(), 1u) << line;
    EXPECT_EQ(e[0].signal, 9);
  }
  auto k = of_kind("bash: line 1:  2079 Killed                  python3 /srv/train.py --epochs 3\n", FactKind::process_killed);
  EXPECT_EQ(k.at(0).pid, 2079);
  EXPECT_EQ(k.at(0).process, "python3");
  EXPECT_EQ(test::diagnose_text("-- loading /data/models/q4f16/params/\nKilled\n").layer, Layer::host_ram);
}

// Job-control reports with the pid, as zsh prints them (modelled on
// naturalstupid/PyJHora#15 and mazen160/shennina#9 for zsh's wording), fish's
// report, and macOS bash's "Killed: 9" (scraperwiki/code-scraper-in-browser-tool#136
// for bash's form with the pid). Values are ours.
TEST(ExitStatus, ZshJobLinesFishAndMacKilledGiveThePidAndProgram) {
  struct Case {
    const char* line;
    std::optional<int64_t> pid;
    const char* program;
  } cases[] = {
      {"[1]    48213 killed     python3 train.py --x 4\n", 48213, "python3"},
      {"[1]  + 48213 killed     python3 train.py\n", 48213, "python3"},
      {"[2]  - 7731 killed     ./bin/llama-server -m q4.gguf\n", 7731, "llama-server"},
      {"[1]  + killed     python3 train.py\n", std::nullopt, "python3"},
      {"[3]+ 9120 Killed                  python3 eval.py\n", 9120, "python3"},
      {"zsh: killed     python3 -m lm_eval --tasks gsm8k\n", std::nullopt, "python3"},
      {"fish: Job 1, 'python3 train.py --bf16' terminated by signal SIGKILL (Forced quit)\n", std::nullopt, "python3"},
      {"tool/run: line 11: 12743 Killed                  ./code/scraper --all\n", 12743, "scraper"},
      {"Killed: 9\n", std::nullopt, ""},
  };
  for (const auto& c : cases) {
    auto k = of_kind(c.line, FactKind::process_killed);
    ASSERT_EQ(k.size(), 1u) << c.line;
    EXPECT_EQ(k[0].layer, Layer::host_ram) << c.line;
    EXPECT_EQ(k[0].pid, c.pid) << c.line;
    EXPECT_EQ(k[0].process, c.program) << c.line;
    auto e = of_kind(c.line, FactKind::exit_status);
    ASSERT_EQ(e.size(), 1u) << c.line;
    EXPECT_EQ(e[0].signal, 9) << c.line;
    EXPECT_EQ(test::diagnose_text(c.line).layer, Layer::host_ram) << c.line;
  }
  // Other signals in the same job-control form are exits, not kills.
  EXPECT_TRUE(of_kind("[1]  + 48213 terminated  python3 serve.py\n", FactKind::process_killed).empty());
  EXPECT_EQ(of_kind("[1]  + 48213 terminated  python3 serve.py\n", FactKind::exit_status).at(0).signal, 15);
}

// The JVM's crash header (hs_err, as printed on stdout): a SIGSEGV at a
// program counter is a crash, a look-alike, not a memory failure (modelled
// on elastic/elasticsearch#17371; values ours).
TEST(ExitStatus, RuntimeCrashHeaderIsASignalNotAMemoryFailure) {
  const char* text = "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
                     "#  SIGSEGV (0xb) at pc=0x00007f3a11c2d0e1, pid=4242, tid=139881\n#\n"
                     "# Problematic frame:\n# J 1201 C2 org.example.Reader.get(J)J (43 bytes) @ 0x00007f3a11c2d0e1\n";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents[0].pid, 4242);
}

TEST(ExitStatus, ProseAboutKilledProcessesIsNoFailure) {
  const char* log = R"(The training process got killed after 3 epochs, any idea?
Killed processes are restarted by the supervisor.
[1] I killed the job myself with kill -9
we saw 3 Killed workers in the last hour
zsh completion: killed-process list refreshed
)";
  EXPECT_TRUE(of_kind(log, FactKind::process_killed).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

TEST(ExitStatus, KilledInsideALimitedContainerIsThatLimit) {
  Diagnosis d = test::diagnose_text("docker run --rm -ti -m 512m --name stress img ash\n/home # ./mem 520000\nKilled\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

TEST(ExitStatus, CodesAndSignalsInTheirCommonForms) {
  struct Case {
    const char* line;
    std::optional<int> code, signal;
  } cases[] = {
      {"Error: process exited with exit code 137\n", 137, std::nullopt},
      {"vllm-1 exited with code 137\n", 137, std::nullopt},
      {"Exited with code exit status 137\n", 137, std::nullopt},
      {"subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit status 137.\n", 137, std::nullopt},
      {"Command '['python']' died with <Signals.SIGKILL: 9>.\n", std::nullopt, 9},
      {"torch.distributed.elastic.multiprocessing.api: failed (exitcode: -9) local_rank: 0 (pid: 2918) of binary: /usr/bin/python3\n", std::nullopt, 9},
      {"Error: signal: killed\n", std::nullopt, 9},
      {"Segmentation fault (core dumped)\n", std::nullopt, 11},
      {"Aborted (core dumped)\n", std::nullopt, 6},
      {"exit status 143\n", 143, std::nullopt},
  };
  for (const auto& c : cases) {
    auto e = of_kind(c.line, FactKind::exit_status);
    ASSERT_EQ(e.size(), 1u) << c.line;
    EXPECT_EQ(e[0].exit_code, c.code) << c.line;
    EXPECT_EQ(e[0].signal, c.signal) << c.line;
  }
  EXPECT_EQ(of_kind("vllm-1 exited with code 137\n", FactKind::exit_status).at(0).container, "vllm-1");
  EXPECT_EQ(of_kind("failed (exitcode: -9) local_rank: 0 (pid: 2918) of binary: x\n", FactKind::exit_status).at(0).pid, 2918);
  // Alone, these decide little: SIGTERM and SIGSEGV are not memory, SIGKILL is unknown.
  EXPECT_EQ(test::diagnose_text("exit status 143\n").layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("Segmentation fault (core dumped)\n").layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("Error: exit code 137\n").layer, Layer::unknown);
}

TEST(ExitStatus, ExitZeroAndAdviceAreNoFailure) {
  const char* log = R"(Nov 24 22:10:05 node-7 containerd[1022]: time="2026-11-24T22:10:05Z" level=info msg="shim disconnected" id=4f1e2d exit_status=0
Process completed with exit code 0.
Hint: Exit code 137 typically means the process is killed because it was running out of memory
Killed process 1234 is not a shell report
    Reason:       Completed
      Exit Code:    0
)";
  EXPECT_TRUE(of_kind(log, FactKind::process_killed).empty());
  for (const auto& e : of_kind(log, FactKind::exit_status)) EXPECT_EQ(e.exit_code, 0) << e.text;
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// Go's os/exec names every signal (modelled on ollama's runner on a CPU without AVX).
TEST(ExitStatus, GoSignalWordsAreNotMemory) {
  Diagnosis ill = test::diagnose_text("Error: llama runner process has terminated: signal: illegal instruction (core dumped)\n");
  EXPECT_EQ(ill.layer, Layer::not_memory);
  Diagnosis bus = test::diagnose_text("Error: llama runner process has terminated: signal: bus error\n");
  EXPECT_EQ(bus.layer, Layer::not_memory);
}

// Rust's ExitStatus as cargo prints it (modelled on a cargo build on a 1 GB VPS).
TEST(ExitStatus, CargoSignalNineIsASigkill) {
  Diagnosis d = test::diagnose_text(
      "error: Could not compile `http`.\n\nCaused by:\n  process didn't exit successfully: `rustc --crate-name http src/lib.rs "
      "--crate-type lib -C opt-level=3` (signal: 9, SIGKILL: kill)\n");
  // A kill, so a failure; whose memory (the VPS's, a build container's), the
  // line does not say.
  EXPECT_EQ(d.layer, Layer::unknown);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(test::facts_of_kind("  process didn't exit successfully: `rustc x.rs` (signal: 9, SIGKILL: kill)\n", FactKind::process_killed).size(), 1u);
}

// tqdm redraws its bar with \r, so the shell's "Killed" lands after the last
// redraw on the same line (modelled on a Hugging Face shard load).
TEST(ExitStatus, KilledAfterAProgressBarIsTheShellsWord) {
  Diagnosis d = test::diagnose_text("Loading checkpoint shards:  32%|###       | 6/19 [01:12<02:38, 12.18s/it]Killed\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
  // A word in a sentence is not it.
  EXPECT_EQ(test::diagnose_text("[INFO] worker [3] was Killed by the supervisor? no, it exited\n").layer, Layer::none);
}

// Any redrawn line the program never ended takes the shell's word at its end:
// Keras's bar after its last figure, rich's bar after its clock, conda's
// spinner after its frame (our lines, in those programs' shapes). Glued to a
// word it is a word ("OOMKilled"), and "status=Killed" is a field.
TEST(ExitStatus, KilledAfterAnyRedrawIsTheShellsWord) {
  for (const char* line : {" 311/1250 [======>.......] - ETA: 6:13 - loss: 0.0023 - accuracy: 0.6588Killed\n",
                           "Downloading ━━━━━━━━━━━━━━━━━━━━━━━━   0% -:--:-- 0:00:11Killed\n",
                           "Solving environment: / Killed\n"}) {
    Diagnosis d = test::diagnose_text(line);
    EXPECT_EQ(d.layer, Layer::host_ram) << line;
    EXPECT_EQ(test::facts_of_kind(line, FactKind::process_killed).size(), 1u) << line;
  }
  EXPECT_TRUE(test::facts_of_kind("task state=Killed\n", FactKind::process_killed).empty());
  EXPECT_TRUE(test::facts_of_kind("a word about it: see Killed\n", FactKind::process_killed).empty());
}


// A child's negative return code is the signal that ended it (modelled on
// DeepSpeed's launcher and torch elastic's failure summary; ours): -9 is a
// SIGKILL, -11 a crash; a positive code is neither.
TEST(ExitStatus, ANegativeReturnCodeIsTheSignal) {
  Diagnosis d = test::diagnose_text(
      "[2024-07-01 10:06:58,772] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
      "'--local_rank=0'] exits with return code = -9\n");
  EXPECT_EQ(d.layer, Layer::unknown);  // a kill; the pool is not named
  EXPECT_EQ(test::facts_of_kind("[ERROR] [launch.py:325:sigkill_handler] ['python3'] exits with return code = -9\n", FactKind::process_killed).size(), 1u);
  Diagnosis segv = test::diagnose_text("  exitcode  : -11 (pid: 4117)\n  error_file: <N/A>\n");
  EXPECT_EQ(segv.layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("  exitcode  : 1 (pid: 4117)\n").layer, Layer::none);
  // Airflow 3's task supervisor, structlog's key=value (modelled on apache/airflow#61521; ours).
  auto airflow = test::facts_of_kind("2026-03-02T11:20:05.118Z [warning  ] Process exited abnormally [supervisor] exit_code=-9\n",
                                     FactKind::process_killed);
  ASSERT_EQ(airflow.size(), 1u);
  EXPECT_EQ(test::diagnose_text("2026-03-02T11:20:05.120Z [info     ] Task finished [supervisor] duration=12.4 exit_code=0 final_state=success\n").layer,
            Layer::none);
}

// Modelled on Open MPI's report of a rank killed by a signal
// (open-mpi/ompi#2661); our own node, rank and pid.
TEST(ExitStatus, OpenMpisRankKilledBySignalNineIsAKill) {
  const std::string log =
      "--------------------------------------------------------------------------\n"
      "mpirun noticed that process rank 5 with PID 48113 on node c107 exited on signal 9 (Killed).\n"
      "--------------------------------------------------------------------------\n";
  auto k = test::facts_of_kind(log, FactKind::process_killed);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].pid, 48113);
  EXPECT_NE(test::diagnose_text(log).layer, Layer::none);
  // A segmentation fault is a signal too, not a kill.
  EXPECT_TRUE(test::facts_of_kind("mpirun noticed that process rank 0 with PID 811 on node c1 exited on signal 11 (Segmentation fault).\n",
                                  FactKind::process_killed)
                  .empty());
}

// Modelled on a Rust release build whose link step was killed
// (solana-labs/solana#16473): gcc's driver names the signal; our own paths.
TEST(ExitStatus, TheLinkerTerminatedWithSignalNineIsAKill) {
  const std::string log =
      "  = note: collect2: fatal error: ld terminated with signal 9 [Killed]\n"
      "          compilation terminated.\n";
  EXPECT_EQ(of_kind(log, FactKind::process_killed).size(), 1u);
  EXPECT_NE(test::diagnose_text(log).layer, Layer::none);
}

// gcc's driver naming its compiler proper's death by strsignal() ("Killed" is
// SIGKILL), modelled on Linuxbrew/homebrew-science#12 and the many builds
// that print it; stress's "got signal 9" beside the limit it ran under
// (hashicorp/nomad#10570's shape). Our own paths and pids.
TEST(ExitStatus, GccsInternalCompilerErrorKilledAndGotSignalNineAreKills) {
  const std::string ice =
      "g++ -std=gnu++17 -O2 -c src/planner/search.cpp -o build/search.o\n"
      "g++: internal compiler error: Killed (program cc1plus)\n"
      "Please submit a full bug report,\n";
  EXPECT_EQ(of_kind(ice, FactKind::process_killed).size(), 1u);
  EXPECT_NE(test::diagnose_text(ice).layer, Layer::none);
  // Another signal is not a kill (an ICE from a segfault is a compiler bug).
  EXPECT_TRUE(of_kind("g++: internal compiler error: Segmentation fault (program cc1plus)\n", FactKind::process_killed).empty());
  const std::string stress =
      "CPU         Memory       Disk     Addresses\n"
      "0/1024 MHz  0 B/512 MiB  300 MiB\n"
      "stress: info: [31] dispatching hogs: 0 cpu, 0 io, 1 vm, 0 hdd\n"
      "stress: FAIL: [31] (415) <-- worker 32 got signal 9\n";
  EXPECT_EQ(of_kind(stress, FactKind::process_killed).size(), 1u);
  Diagnosis d = test::diagnose_text(stress);
  EXPECT_EQ(d.layer, Layer::container_limit);
  // A "got signal 15" is a stop, not a kill.
  EXPECT_TRUE(of_kind("stress: FAIL: [31] (415) <-- worker 32 got signal 15\n", FactKind::process_killed).empty());
}

// Gradle's daemon gone without a code (modelled on
// gradle/android-cache-fix-gradle-plugin#438; our own sizes): a failure of
// undecided pool, unless a snapshot of the host beside it shows almost
// nothing available (under 3%), which is the host's memory running out.
TEST(ExitStatus, ADaemonGoneWhileTheHostHadNothingAvailableIsTheHosts) {
  const std::string gone =
      "    org.gradle.testkit.runner.UnexpectedBuildFailure: Unexpected build execution failure\n"
      "        Gradle build daemon disappeared unexpectedly (it may have been killed or may have crashed)\n";
  EXPECT_EQ(test::diagnose_text(gone).layer, Layer::unknown);
  auto free_m = [](int available) {
    return "$ free -m\n              total        used        free      shared  buff/cache   available\n"
           "Mem:           7940        7811          40           2          89           " +
           std::to_string(available) + "\n";
  };
  Diagnosis full = test::diagnose_text(gone + free_m(52));
  EXPECT_EQ(full.layer, Layer::host_ram);
  EXPECT_EQ(test::diagnose_text(gone + free_m(2900)).layer, Layer::unknown);
  // A limit in sight is that limit's business, not the host's.
  EXPECT_NE(test::diagnose_text("$ docker run -m 4g builder ./gradlew test\n" + gone + free_m(52)).layer, Layer::host_ram);
}

// Airflow's task runner names the signal ("Negsignal.SIGKILL", modelled on
// apache/airflow#27741) and Bun's panic handler its segfault (modelled on
// oven-sh/bun#19539); our own tasks and addresses.
TEST(ExitStatus, AirflowsNegsignalAndBunsSegfaultAreSignals) {
  const std::string airflow =
      "[2024-05-02, 03:11:40 UTC] {local_task_job_runner.py:234} INFO - Task exited with return code Negsignal.SIGKILL\n";
  EXPECT_EQ(of_kind(airflow, FactKind::process_killed).size(), 1u);
  EXPECT_NE(test::diagnose_text(airflow).layer, Layer::none);
  auto term = of_kind("[2024-05-02, 03:11:40 UTC] {local_task_job_runner.py:234} INFO - Task exited with return code Negsignal.SIGTERM\n",
                      FactKind::exit_status);
  ASSERT_EQ(term.size(), 1u);
  EXPECT_EQ(term[0].signal, 15);
  const std::string bun =
      "RSS: 0.31GB | Peak: 0.52GB | Commit: 0.31GB | Faults: 0\n"
      "panic(main thread): Segmentation fault at address 0x10\n"
      "oh no: Bun has crashed. This indicates a bug in Bun, not your code.\n";
  EXPECT_EQ(test::diagnose_text(bun).layer, Layer::not_memory);
  // Airflow's "Received SIGTERM" (modelled on ministryofjustice/analytics-platform#118): a stop.
  EXPECT_EQ(test::diagnose_text("[2024-05-02 07:31:52,314] {jobs.py:2536} ERROR - Received SIGTERM. Terminating subprocesses\n").layer,
            Layer::not_memory);
}

// A process gone without a pool named: a GitHub-hosted runner's VM lost mid-job
// (actions/runner-images#6709's shape) and Electron's renderer gone with reason
// 'oom' (electron/electron#36841's); our own timestamps and codes. A failure,
// pool undecided: not "none", and not a guess.
TEST(ExitStatus, AProcessGoneWithoutItsPoolNamedIsAFailureOfUnknownPool) {
  Diagnosis runner = test::diagnose_text(
      "2024-03-01T10:18:10.5771753Z ##[error]The runner has received a shutdown signal. This can happen when the runner service "
      "is stopped, or a manually started runner is canceled.\n"
      "2024-03-01T10:18:10.7098386Z ##[error]The operation was canceled.\n");
  EXPECT_EQ(runner.layer, Layer::unknown);
  Diagnosis renderer = test::diagnose_text(
      "2024-02-06T03:12:44.118Z [main] render-process-gone {\"reason\":\"oom\",\"exitCode\":-536870904}\n");
  EXPECT_EQ(renderer.layer, Layer::unknown);
  auto e = of_kind("[main] render-process-gone { reason: 'oom', exitCode: -536870904 }\n", FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].exit_code, -536870904);
  // Python's BrokenProcessPool (modelled on python/cpython threads of
  // concurrent.futures; the message is the standard library's own).
  Diagnosis pool = test::diagnose_text(
      "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the future "
      "was running or pending.\n");
  EXPECT_EQ(pool.layer, Layer::unknown);
  // joblib's loky: its BrokenProcessPool, and its TerminatedWorkerError with
  // the workers' exit codes (modelled on joblib/joblib threads; the messages
  // are loky's own): SIGKILL is a kill; EXIT(1) is the workers' own error.
  EXPECT_EQ(test::diagnose_text("joblib.externals.loky.process_executor.BrokenProcessPool: A process in the executor was terminated "
                                "abruptly, the pool is not usable anymore.\n")
                .layer,
            Layer::unknown);
  const std::string loky =
      "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly "
      "terminated. This could be caused by a segmentation fault while calling the function or by an excessive memory usage causing "
      "the Operating System to kill the worker. The exit codes of the workers are ";
  auto killed = of_kind(loky + "{SIGKILL(-9)}\n", FactKind::exit_status);
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_EQ(killed[0].signal, 9);
  EXPECT_EQ(test::diagnose_text(loky + "{EXIT(1), EXIT(1)}\n").layer, Layer::not_memory);
  // Another reason is not read as this one.
  EXPECT_EQ(test::diagnose_text("[main] render-process-gone {\"reason\":\"crashed\",\"exitCode\":11}\n").layer, Layer::none);
}

// Chromium's out-of-memory exit wherever an Electron app prints it: VS
// Code's main log (modelled on microsoft/vscode threads of "The window
// terminated unexpectedly (reason: 'oom', code: '-536870904')"), a crash
// report's "Reason: oom" beside its exit code, a minidump's crash reason.
// Alone it names no pool; with the renderer's JS heap series climbing before
// it (Electron's usedHeapMB samples), V8's heap is what ran out. Kubernetes'
// "Reason: OOMKilled" and a reason that is not oom are not this.
TEST(ExitStatus, ChromiumsOomExitNamesTheHeapOnlyWithItsSeries) {
  const std::string vscode =
      "[main 2025-03-11T09:02:41.511Z] CodeWindow: renderer process gone (reason: oom, code: -536870904)\n"
      "The window terminated unexpectedly (reason: 'oom', code: '-536870904')\n";
  auto e = of_kind(vscode, FactKind::exit_status);
  ASSERT_GE(e.size(), 1u);
  EXPECT_EQ(e[0].detail, kChromiumOom);
  EXPECT_EQ(e[0].exit_code, -536870904);
  EXPECT_EQ(test::diagnose_text(vscode).layer, Layer::unknown);
  EXPECT_EQ(of_kind("Crash reason:  0xe0000008 / 0x00000001\n", FactKind::exit_status).size(), 1u);
  std::string report;
  for (int used : {900, 1400, 1900, 2500, 3100, 3580})
    report += "- renderer_memory (reason=interval, usedHeapMB=" + std::to_string(used) + ", heapLimitMB=3584)\n";
  report += "Source: renderer\nReason: oom\nExit code: -536870904\n";
  Diagnosis heap = test::diagnose_text(report);
  EXPECT_EQ(heap.layer, Layer::js_heap);
  // A series named "used" on a line about the renderer's heap says the same
  // (an app's own "renderer heap: used=412.6MB total=..." samples).
  std::string app;
  for (int used : {412, 1288, 2310, 3377})
    app += "[info]  renderer heap: used=" + std::to_string(used) + ".6MB total=" + std::to_string(used + 19) + ".0MB limit=4096.0MB\n";
  app += "[error] render-process-gone {\"reason\":\"oom\",\"exitCode\":-536870904}\n";
  EXPECT_EQ(test::diagnose_text(app).layer, Layer::js_heap);
  EXPECT_TRUE(of_kind("Reason: OOMKilled\n", FactKind::exit_status).empty());
  EXPECT_TRUE(of_kind("dropped (reason: oomph)\n", FactKind::exit_status).empty());
}

// loky, joblib's process pool, names a dead worker's signal with its negative
// code (modelled on joblib/joblib threads of TerminatedWorkerError; our own
// pids). SIGKILL(-9) is a kill; a name and code that disagree are not read.
TEST(ExitStatus, LokysSignalWithItsNegativeCodeIsAKill) {
  const std::string log =
      "joblib.externally.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was "
      "unexpectedly terminated. This could be caused by a segmentation fault while calling the function or by an excessive "
      "memory usage causing the Operating System to kill the worker.\n"
      "\n"
      "The exit codes of the workers are {SIGKILL(-9)}\n";
  auto e = of_kind(log, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].signal, 9);
  EXPECT_NE(test::diagnose_text(log).layer, Layer::none);
  auto segv = of_kind("The exit codes of the workers are {SIGSEGV(-11)}\n", FactKind::exit_status);
  ASSERT_EQ(segv.size(), 1u);
  EXPECT_EQ(segv[0].signal, 11);
  EXPECT_TRUE(of_kind("The exit codes of the workers are {SIGKILL(-11)}\n", FactKind::exit_status).empty());
}

// A docker build step killed (modelled on twosigma/beakerx#7282 for the
// classic builder and libreddit/libreddit#641 for BuildKit; our own steps):
// build containers have no memory limit unless --memory is given, so the
// host's OOM killer is the sender. Nextflow's "(137)" is read as an exit code.
TEST(ExitStatus, ADockerBuildStepKilledIsTheHosts) {
  Diagnosis classic = test::diagnose_text(
      "Step 14/19 : RUN /home/app/setup.sh\n"
      " ---> Running in 3f9c1e7a2b64\n"
      "The command '/bin/sh -c /home/app/setup.sh' returned a non-zero code: 137\n");
  EXPECT_EQ(classic.layer, Layer::host_ram);
  Diagnosis buildkit = test::diagnose_text(
      "#14 1611.9    Compiling hyper v0.14.23\n"
      "ERROR: failed to solve: process \"/bin/sh -c cargo build --release\" did not complete successfully: exit code: 137\n");
  EXPECT_EQ(buildkit.layer, Layer::host_ram);
  // Given a limit, the step's own container has one: no longer the host's.
  Diagnosis limited = test::diagnose_text(
      "$ docker build --memory 2g -t app .\n"
      "The command '/bin/sh -c make' returned a non-zero code: 137\n");
  EXPECT_NE(limited.layer, Layer::host_ram);
  // Any other exit code of a build is not a kill.
  EXPECT_EQ(test::diagnose_text("The command '/bin/sh -c make' returned a non-zero code: 2\n").layer, Layer::none);
  auto nf = of_kind("  Process `align (3)` terminated with an error exit status (137)\n", FactKind::exit_status);
  ASSERT_EQ(nf.size(), 1u);
  EXPECT_EQ(nf[0].exit_code, 137);
}

// Thread creation refused with EPERM (an old runtime's seccomp profile;
// modelled on bitnami/containers#69384) and a pids limit the JVM reports as
// memory (systemd's "Tasks: 512 (limit: 512)" and the kernel's refusal,
// modelled on sonatype-nexus-community/nexus-repository-installer#18): not
// memory. Jupyter's dead kernel names no pool (jupyter/notebook#4097).
TEST(ExitStatus, RefusedThreadsAreNotMemoryAndADeadJupyterKernelNamesNoPool) {
  Diagnosis eperm = test::diagnose_text(
      "[0.003s][warning][os,thread] Failed to start thread \"GC Thread#0\" - pthread_create failed (EPERM) for attributes: "
      "stacksize: 1024k, guardsize: 4k, detached.\n"
      "# There is insufficient memory for the Java Runtime Environment to continue.\n"
      "# Cannot create worker GC thread. Out of system resources.\n");
  EXPECT_EQ(eperm.layer, Layer::not_memory);
  Diagnosis pids = test::diagnose_text(
      "java.lang.OutOfMemoryError: unable to create new native thread\n"
      "[ 1107.482214] cgroup: fork rejected by pids controller in /system.slice/repo.service\n");
  EXPECT_EQ(pids.layer, Layer::not_memory);
  Diagnosis died = test::diagnose_text(
      "[I 14:09:12.877 NotebookApp] KernelRestarter: restarting kernel (1/5), keep random ports\n"
      "The kernel appears to have died. It will restart automatically.\n");
  EXPECT_EQ(died.layer, Layer::unknown);
  // The server's restarter alone, or Colab's crash it does not explain
  // (modelled on googlecolab/colabtools#5899; our ids), says the same; a
  // restart the user asked for is no death.
  for (const char* line : {"[I 2026-03-07 11:02:41.118 ServerApp] AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random "
                           "ports\n",
                           "  -> \"Your session crashed for an unknown reason.\"\n"}) {
    EXPECT_EQ(test::facts_of_kind(line, FactKind::exit_status).size(), 1u) << line;
    EXPECT_EQ(test::diagnose_text(line).layer, Layer::unknown) << line;
  }
  EXPECT_EQ(test::diagnose_text("[I 2026-03-07 11:04:02.310 ServerApp] Kernel restarted: d33683fd-96a0-488c-abe0-ba11c0359a20\n").layer,
            Layer::none);
}

// yarn 1.x's report of its child's signal (modelled on
// firefox-devtools/devtools-core#776; the jest lines ours), and Node's
// "exited with signal": a SIGKILL by name after "signal".
TEST(ExitStatus, ASignalNamedAfterTheWordSignalIsRead) {
  for (const char* line : {"error Command failed with signal \"SIGKILL\".\n", "worker exited with signal SIGKILL\n",
                           "child process terminated: signal: SIGKILL\n"}) {
    auto kills = test::facts_of_kind(std::string(" PASS  src/reps/tests/string.js\n") + line, FactKind::process_killed);
    ASSERT_EQ(kills.size(), 1u) << line;
  }
  // SIGTERM named the same way is a stop, not a kill.
  EXPECT_TRUE(test::facts_of_kind("error Command failed with signal \"SIGTERM\".\n", FactKind::process_killed).empty());
}

// uWSGI's harakiri (modelled on baifendian/Sirius#1; pids and paths ours):
// the request ran past its timeout and the master killed the worker with
// SIGKILL, which the next line reports. Not memory.
TEST(ExitStatus, UwsgiHarakiriIsATimeoutNotMemory) {
  Diagnosis d = test::diagnose_text(
      "Thu Jul 28 09:14:02 2016 - *** HARAKIRI ON WORKER 4 (pid: 22817, try: 1) ***\n"
      "Thu Jul 28 09:14:02 2016 - HARAKIRI [core 0] 10.31.6.20 - GET /report/usage since 1469668382\n"
      "DAMN ! worker 4 (pid: 22817) died, killed by signal 9 :( trying respawn ...\n"
      "Respawned uWSGI worker 4 (new pid: 23154)\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
}

// The shell's "Killed" after a progress message with no newline, and the
// status echoed after it (modelled on DerrickWood/kraken2#692; our paths):
// a SIGKILL, not "no failure".
TEST(ExitStatus, KilledAfterAnUnfinishedLineAndAnEchoedStatus) {
  Diagnosis d = test::diagnose_text(
      "# kraken2 --db /data/k2_standard --threads 8 --paired r1.fq r2.fq --output out.kraken\n"
      "Loading database information...Killed\n"
      "# echo $?\n"
      "137\n");
  EXPECT_NE(d.layer, Layer::none);
  EXPECT_FALSE(of_kind("$ ./run.sh\n$ echo $?\n137\n", FactKind::exit_status).empty());
  EXPECT_TRUE(of_kind("$ ./run.sh\n$ echo $?\n1\n", FactKind::exit_status).empty()) << "1 is the program's own error";
  EXPECT_TRUE(of_kind("step 137\n137\n", FactKind::exit_status).empty()) << "a number with no echo before it";
}

// A container's state as `kubectl get pod -o jsonpath` prints it, exit 137
// with reason Error, and the operator's own kill before it (modelled on
// tektoncd/pipeline#10371; our names and pids): a stop, not memory. Without
// the kill, a SIGKILL whose pool nothing names.
TEST(ExitStatus, AContainerStatesExitCodeAsJsonIsRead) {
  const std::string state =
      "step-fetch {\"terminated\":{\"containerID\":\"containerd://9c1e2a\",\"exitCode\":137,\"finishedAt\":\"2026-02-03T10:04:52Z\","
      "\"reason\":\"Error\",\"startedAt\":\"2026-02-03T10:03:07Z\"}}\n";
  EXPECT_FALSE(of_kind(state, FactKind::exit_status).empty());
  Diagnosis stopped = test::diagnose_text("root@kind-worker:/# kill -KILL 77120\n" + state);
  EXPECT_EQ(stopped.layer, Layer::not_memory);
  EXPECT_TRUE(of_kind("{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}\n", FactKind::exit_status).empty());
}


// zsh's job line glued to tqdm's last redraw (no newline after the bar):
// modelled on a Hugging Face loading thread; values ours.
TEST(ExitStatus, ZshsKilledJobAfterAProgressBarOnTheSameLine) {
  const char* text =
      "Loading checkpoint shards:  60%|######    | 3/5 [00:09<00:06,  3.02s/it][1]    31877 killed     python serve.py --model m\n";
  auto k = test::facts_of_kind(text, FactKind::process_killed);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].pid, 31877);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
  // A bar with no job line after it is nothing.
  EXPECT_TRUE(test::facts_of_kind("Loading checkpoint shards:  60%|######    | 3/5 [00:09<00:06,  3.02s/it][1] done\n",
                                  FactKind::process_killed).empty());
}

// A compiler that crashed on its own (gcc's "internal compiler error:
// Segmentation fault", modelled on otland/forgottenserver#1569) is a
// look-alike; killed ("Killed (program cc1plus)") it is a SIGKILL. A Python
// tool's "return code: 137" is an exit status.
TEST(ExitStatus, ACompilerCrashIsALookAlikeAndAReturnCodeIsAnExitStatus) {
  Diagnosis segv = test::diagnose_text("c++: internal compiler error: Segmentation fault (program cc1plus)\n"
                                       "Please submit a full bug report,\n");
  EXPECT_EQ(segv.layer, Layer::not_memory);
  EXPECT_NE(test::diagnose_text("g++: internal compiler error: Killed (program cc1plus)\n").layer, Layer::not_memory);
  auto e = of_kind("Build failed running pavelib.assets.update_assets: Subprocess return code: 137\n", FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].exit_code, 137);
  EXPECT_TRUE(of_kind("Subprocess return code: 1\n", FactKind::exit_status).empty());
}

// zsh's job line for SIGILL ("illegal hardware instruction", modelled on a
// thread where a wheel built for a newer CPU crashed; own pid and paths) is
// not the "killed" it resembles: a look-alike.
TEST(ExitStatus, ZshsIllegalHardwareInstructionIsALookAlike) {
  Diagnosis d = test::diagnose_text(
      "=> loaded model params 'model.pth.tar'\n"
      "[1]    122549 illegal hardware instruction (core dumped)  python predict.py model.pth.tar\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
}

// SIGFPE as bash, zsh and the kernel report it (an integer division by zero
// in a native library, modelled on a PyTorch issue where a notebook's
// "kernel died" ran as a script shows it; our own pids and addresses): a
// crash, not memory. Its number is read as 8.
TEST(ExitStatus, AFloatingPointExceptionIsACrash) {
  for (const char* line : {"Floating point exception (core dumped)\n", "Floating point exception\n",
                           "./run.sh: line 4: 31822 Floating point exception (core dumped) python3 train.py\n",
                           "[1]    2931 floating point exception  python x.py\n", "zsh: floating point exception  python x.py\n",
                           "[ 8812.113] traps: python[4120] trap divide error ip:7f2c41a3b2e1 sp:7ffd3c2a1b90 error:0 in "
                           "libtorch_cpu.so[7f2c3d000000+1c5e2000]\n"}) {
    Diagnosis d = test::diagnose_text(std::string("Epoch 1/10\n") + line);
    EXPECT_EQ(d.layer, Layer::not_memory) << line << test::reason_text(d);
  }
  auto e = of_kind("Floating point exception (core dumped)\n", FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].signal, 8);
  // In advice it is no failure.
  EXPECT_EQ(test::diagnose_text("If you see \"Floating point exception\", check for an empty batch.\n").layer, Layer::none);
}

// VS Code's Jupyter extension says a kernel died in its own words: the
// cell's notice and its log's "Disposing session as kernel process died
// ExitCode: undefined". A death whose pool the evidence must decide, as
// JupyterLab's "appears to have died"; it read as no failure at all.
TEST(ExitStatus, VsCodesKernelCrashIsADeathOfUnknownPool) {
  for (const char* text : {"The Kernel crashed while executing code in the current cell or a previous cell.\n"
                           "Please review the code in the cell(s) to identify a possible cause of the failure.\n",
                           "12:22:51.402 [error] Disposing session as kernel process died ExitCode: undefined, Reason: \n"}) {
    Diagnosis d = test::diagnose_text(text);
    EXPECT_EQ(d.layer, Layer::unknown) << text;
    EXPECT_EQ(of_kind(text, FactKind::exit_status).size(), 1u) << text;
  }
}

// A native crash as Android reports it: libc's "Fatal signal 11 (SIGSEGV)"
// in logcat and debuggerd's tombstone "signal 11 (SIGSEGV), code 9
// (SEGV_MTESERR)" (modelled on an on-device diffusion app's crash report; our
// own pids and addresses). A crash; a signal named in prose is not this.
TEST(ExitStatus, AndroidsFatalSignalAndTombstoneAreCrashes) {
  const char* logcat =
      "03-04 10:00:00.123  4321  4350 F libc    : Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4350 "
      "(inference), pid 4321 (com.example.sd)\n";
  auto e = of_kind(logcat, FactKind::exit_status);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].signal, 11);
  EXPECT_EQ(e[0].pid, 4321);
  EXPECT_EQ(test::diagnose_text(logcat).layer, Layer::not_memory);
  const char* tombstone =
      "cmdline: com.example.gallery\nsignal: 11 (SIGSEGV), code 9 (SEGV_MTESERR), faultAddr e00b73c1a2f4410\n"
      "backtrace:\n    /data/app/base.apk!libsd_jni.so (pc 4c81f0)\n";
  EXPECT_EQ(test::diagnose_text(tombstone).layer, Layer::not_memory);
  EXPECT_TRUE(of_kind("the handler for signal 11 (SIGSEGV) is installed\n", FactKind::exit_status).empty());
}

// A notebook's kernel restarted after the kernel printed its own crash
// (Python's faulthandler: "Fatal Python error: Segmentation fault"): the crash
// is why it died, not memory. Restarted with no crash before it, the pool
// stays open. Modelled on a ctypes memmove to address 0 in IPython; our ids.
TEST(ExitStatus, AKernelRestartAfterItsOwnCrashReportIsTheCrash) {
  const std::string restart =
      "[I 14:22:07.118 NotebookApp] KernelRestarter: restarting kernel (1/5), keep random ports\n"
      "WARNING:root:kernel 3c1d9e52-0b7a-4f2e-9a41-7d0c55e2b8f6 restarted\n";
  const std::string crash =
      "Fatal Python error: Segmentation fault\n\nCurrent thread 0x000000010ba5c5c0 (most recent call first):\n"
      "  File \"<ipython-input-3-7f6a2f51c0de>\", line 2 in <module>\n\n";
  Diagnosis d = test::diagnose_text(crash + restart);
  EXPECT_EQ(d.layer, Layer::not_memory) << test::reason_text(d);
  EXPECT_EQ(test::diagnose_text(restart).layer, Layer::unknown);
}

// A compiler killed inside a docker build, as BuildKit prints the step's
// output after its elapsed seconds: "#15 142.7 Killed" in plain progress,
// "1588.1 Killed" in the error summary (modelled on flash-attention builds
// under ninja; our own step numbers and times). A kill like the shell's; a
// figure before any other word is not.
TEST(ExitStatus, AKillInsideABuildKitStepIsRead) {
  for (const char* line : {"#15 142.7 Killed\n", "1588.1 Killed\n", "#7 0.452 Killed\n"}) {
    std::string text = std::string("#15 91.06 [1/25] /usr/local/cuda/bin/nvcc -c flash_fwd.cu -o flash_fwd.o --threads 4\n") + line +
                       "#15 187.4 ninja: build stopped: subcommand failed.\n";
    EXPECT_EQ(of_kind(text, FactKind::process_killed).size(), 1u) << line;
    EXPECT_EQ(test::diagnose_text(text).layer, Layer::host_ram) << line;
  }
  EXPECT_TRUE(of_kind("v1.5 Killed\n", FactKind::process_killed).empty());
  EXPECT_TRUE(of_kind("#15 142.7 the worker was Killed\n", FactKind::process_killed).empty());
}

// s6-overlay's supervisor puts the signal in parentheses after a code of 256
// ("Service exited with code 256 (by signal 4)", modelled on a Home
// Assistant add-on's log; our times): the signal is read, SIGILL a
// look-alike and SIGKILL a kill.
TEST(ExitStatus, SixOverlaysSignalInParenthesesIsRead) {
  Diagnosis ill = test::diagnose_text("[09:14:02] INFO: Service exited with code 256 (by signal 4)\n");
  EXPECT_EQ(ill.layer, Layer::not_memory) << test::reason_text(ill);
  auto e = of_kind("[09:14:02] INFO: Service exited with code 256 (by signal 9)\n", FactKind::process_killed);
  EXPECT_EQ(e.size(), 1u);
}

// Windows ends a crashed process with an NTSTATUS as its exit status
// (modelled on Ollama runners on Windows and the event log's application
// error; our paths): a DLL's missing entry point or an illegal instruction is
// a look-alike, in hex or in the signed decimal a launcher prints. The
// fail-fast code that follows any abort (0xc0000409) decides nothing.
TEST(ExitStatus, WindowsCrashStatusesAreLookAlikes) {
  Diagnosis dll = test::diagnose_text(
      "time=2024-07-23T10:48:54.102+08:00 level=ERROR source=sched.go:443 msg=\"error loading llama server\" error=\"llama runner "
      "process has terminated: exit status 0xc0000139\"\n");
  EXPECT_EQ(dll.layer, Layer::not_memory) << test::reason_text(dll);
  EXPECT_NE(test::reason_text(dll).find("ENTRYPOINT_NOT_FOUND"), std::string::npos);
  Diagnosis ill = test::diagnose_text("Faulting module name: llmodel.dll, version: 0.0.0.0\nException code: 0xc000001d\n");
  EXPECT_EQ(ill.layer, Layer::not_memory);
  EXPECT_EQ(test::diagnose_text("Process exited with code -1073741795\n").layer, Layer::not_memory);
  // VS Code's extension host, the code padded (modelled on a language
  // server's crash on start; our own port): an access violation.
  EXPECT_EQ(test::diagnose_text("[Extension Host] debugger listening on port 9340\n"
                                "Extension host terminated unexpectedly. Code:  3221225477  Signal:  null\n")
                .layer,
            Layer::not_memory);
  EXPECT_EQ(test::reason_text(test::diagnose_text("llama runner process has terminated: exit status 0xc0000409\n")).find("crashed on Windows"),
            std::string::npos);
}

// NTSTATUS as an unsigned exit code (modelled on microsoft/vscode-jupyter's
// "kernel process died ExitCode: 3221225477"), and Jupyter's server asked to
// stop ("received signal 15, stopping", jupyter/notebook's notebookapp):
// neither is a kill for memory. Our own times and ids.
TEST(ExitStatus, AnUnsignedNtStatusAndAServersSigtermAreNotMemory) {
  Diagnosis crash = test::diagnose_text(
      "09:12:38.905 [error] Disposing session as kernel process died ExitCode: 3221225477, Reason: \n"
      "09:12:38.915 [error] Error in execution (get message for cell) Error: The kernel died.\n");
  EXPECT_EQ(crash.layer, Layer::not_memory) << test::reason_text(crash);
  EXPECT_NE(test::reason_text(crash).find("ACCESS_VIOLATION"), std::string::npos);
  Diagnosis stop = test::diagnose_text(
      "[C 2023-04-02 01:12:40.118 ServerApp] received signal 15, stopping\n"
      "[I 2023-04-02 01:12:40.119 ServerApp] Shutting down 3 kernels\n");
  EXPECT_EQ(stop.layer, Layer::not_memory) << test::reason_text(stop);
}

}  // namespace
}  // namespace aimem
