// Kills for running too long (src/recognize/families/time_limits.cc): a look-alike
// of an OOM kill, decided not_memory.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> look_alikes(const std::string& text) { return test::facts_of_kind(text, FactKind::not_memory_failure); }

// An evaluator killed by timeout(1): the verbose line, then the shell's
// "Killed" (modelled on scraperwiki/code-scraper-in-browser-tool#136, whose
// killed command was a timeout, and coreutils' message; values ours).
TEST(TimeLimits, TimeoutKillBesideAShellKilledIsNotMemory) {
  const char* log = R"(+ timeout --verbose -s KILL 1800 python3 eval_humaneval.py --n 164
timeout: sending signal KILL to command 'python3'
./run_eval.sh: line 7: 30117 Killed                  timeout --verbose -s KILL 1800 python3 eval_humaneval.py --n 164
)";
  auto n = look_alikes(log);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].layer, Layer::not_memory);
  EXPECT_EQ(n[0].process, "python3");
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  // Alone it is still an answer, not "no failure".
  EXPECT_EQ(test::diagnose_text("timeout: sending signal TERM to command \xe2\x80\x98llama-bench\xe2\x80\x99\n").layer, Layer::not_memory);
}

// Judges and sandboxes (modelled on judge0/judge0#463 for the JSON verdict,
// engineer-man/piston#679 for a killed run, UiPath/coder_eval#117 for a
// harness's TIMEOUT status; values ours), Celery's hard limit, the shell on
// SIGXCPU, Slurm, a Kubernetes Job deadline and a CI job.
TEST(TimeLimits, JudgeVerdictsAndSchedulerDeadlinesAreNotMemory) {
  for (const char* line : {
           "Killed: time limit exceeded\n",
           "  \"message\": \"Time limit exceeded (wall clock)\",\n",
           "test 14 ... Time Limit Exceeded\n",
           "verdict=TIME_LIMIT_EXCEEDED test=7 time=2.004s\n",
           "[2024-05-01 10:00:00,120: ERROR/MainProcess] Hard time limit (300s) exceeded for tasks.score[6d1f0c2a-3b4e]\n",
           "CPU time limit exceeded (core dumped)\n",
           "slurmstepd: error: *** JOB 4242 ON gpu07 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\n",
           "  Warning  DeadlineExceeded  3m    job-controller  Job was active longer than specified deadline\n",
           "##[error]The job running on runner gpu-runner-3 has exceeded the maximum execution time of 360 minutes.\n",
           "{\"task_id\": \"HumanEval/132\", \"status\": \"TIMEOUT\", \"elapsed_s\": 10.0}\n",
       }) {
    auto n = look_alikes(line);
    ASSERT_EQ(n.size(), 1u) << line;
    EXPECT_EQ(test::diagnose_text(line).layer, Layer::not_memory) << line;
  }
  // The verdict beside a bare "Killed" decides it.
  EXPECT_EQ(test::diagnose_text("running sample 88\nKilled\nresult: TIMEOUT\n").layer, Layer::not_memory);
}

// A memory failure next to a time limit is still the memory failure.
TEST(TimeLimits, RealOomBesideATimeLimitStaysMemory) {
  Diagnosis d = test::diagnose_text(
      "[ 812.440211] Out of memory: Killed process 30117 (python3) total-vm:33709852kB, anon-rss:31457280kB, file-rss:0kB, shmem-rss:0kB\n"
      "result: TIMEOUT\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
}

TEST(TimeLimits, SoftLimitsSettingsAndProseAreNoFailure) {
  const char* log = R"(celery.exceptions.SoftTimeLimitExceeded: SoftTimeLimitExceeded()
[WARNING] soft time limit exceeded for tasks.score, cleaning up
If the time limit is exceeded the judge reports TLE.
Increase the time limit: --time-limit 60 (default 10)
#SBATCH --time=24:00:00   # jobs are cancelled DUE TO TIME LIMIT after this
request_timeout=30 connect_timeout=5
TIMEOUT_SECONDS = 30
)";
  EXPECT_TRUE(look_alikes(log).empty());
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::none);
}

// A test runner's verdict with the kill it made (modelled on a bun test
// wrapper with `timeout -k`); the test names' memory words do not count.
TEST(TimeLimits, RunnerTimeoutVerdictWithItsKillIsNotMemory) {
  Diagnosis d = test::diagnose_text(
      "  ✓ evicts least-recent entries past the cap (7 ms)\n"
      "✗ src/__tests__/cache.test.ts: TIMEOUT (exit 137: SIGKILL from timeout -k 10 after SIGTERM was ignored)\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
}


// LSF's job report for a run-time kill (modelled on an LSF user's mailed job
// report on a DTU HPC thread; values ours): Max Memory near the request is
// not what ended it.
TEST(TimeLimits, LsfsRunLimitIsALookAlike) {
  const char* text = R"(TERM_RUNLIMIT: job killed after reaching LSF run time limit.
Exited with exit code 140.

Resource usage summary:

    Max Memory :                                 20471 MB
    Total Requested Memory :                     20480.00 MB
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
}

}  // namespace
}  // namespace aimem
