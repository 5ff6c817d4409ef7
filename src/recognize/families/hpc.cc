// Batch and data-platform schedulers that enforce memory limits themselves.
//
// Slurm (the job's cgroup, sized by --mem / --mem-per-cpu):
//   slurmstepd: error: Detected 1 oom_kill event in StepId=647226.batch. Some of the step tasks have been OOM Killed.
//   slurmstepd: error: Detected 1 oom-kill event(s) in step 123.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.
//   slurmstepd: error: Exceeded job memory limit at some point.      (older: step / job)
//     This one is printed at the step's end when usage touched the limit; the step may have gone on
//     (pages swapped out). Beside sacct's "COMPLETED 0:0" for the job it is a warning, not a failure.
//   srun: error: nid002680: task 0: Out Of Memory
//   2260417      OUT_OF_ME+    0:125      1000M       sacct's State column (and seff's "State: OUT_OF_MEMORY (exit code 0)"):
//                                                     the state Slurm records for a job its cgroup's OOM killer ended
// YARN (Hadoop / Spark executors; the NodeManager kills the container):
//   Container killed by YARN for exceeding memory limits. 10.4 GB of 10 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.
//   Container killed by YARN for exceeding physical memory limits. 27.4 GB of 26 GB physical memory used. ...  (Spark 3.x)
//   Container [pid=1234,containerID=container_1_0001_01_000002] is running beyond physical memory limits.
//     Current usage: 2.1 GB of 2 GB physical memory used; 3.5 GB of 4.2 GB virtual memory used. Killing container.
// Slurm's accounting poll (jobacct_gather, no cgroup), in kB:
//   slurmstepd: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed
//   slurmstepd: error: Job 4411 exceeded memory limit (7340032 > 6291456), being killed
// PBS Pro / Torque (the MOM's poll), in kb:
//   =>> PBS: job killed: mem 36120508kb exceeded limit 33554432kb      (also vmem, pmem)
//   job 3187241 exceeded MEM usage hard limit (2871 > 1126)             (Moab over Torque, in MB)
//   =>> PBS: job killed: walltime 3630 exceeded limit 3600              (not memory: a look-alike, as are
//   Job 98311742.gadi-pbs killed due to exceeding jobfs quota. Quota: 20.0GB, Used: 20.0GB   CPU time and disk quotas)
// LSF (the job report mailed or written to the output file):
//   TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.
//   Max Memory :  98304 MB    Total Requested Memory :  98304.00 MB   (the report's summary)
// Grid Engine (SGE, UGE, Son of Grid Engine: the execd polls and enforces h_vmem / h_rss):
//   failed execd enforced h_vmem limit because:            (the job mail; "Max vmem = 192.113G" in it)
//   job 7921630.1 died through signal KILL (9).
//   job 4321.1 exceeds job hard limit "h_vmem" of queue "all.q@node07" (8589934592.00000 > limit:8589934592.00000) - sending SIGKILL
//                                                           (the execd's messages file)
// HTCondor's hold for a policy expression that evaluated to UNDEFINED
// (HoldReasonCode 5) is a look-alike: its text quotes the expression, memory
// terms and all (modelled on dmwm/CRABServer#5165).
// HTCondor (the starter's hold reason, in condor_q -hold and the job log; HoldReasonCode 34):
//   Error from slot1_7@node412: Job has gone over memory limit of 2048 megabytes. Peak usage: 2302 megabytes.
//   Error from slot1_7@node412: Job has gone over cgroup memory limit of 2048 megabytes. Last measured usage: 2113 megabytes.
//   2207714.0  alice  11/9 01:58 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 2710000.
//     (a pool's periodic-hold policy over RequestMemory; "RequestMemory = 2000" in condor_q -long, MB)
// Mesos (the agent's containerizer, memory limit in MB):
//   I0906 14:09:42.121455  2209 containerizer.cpp:1054] Container 5b0f... has reached its limit for resource mem(*):64 and will be terminated
//   ... has reached its limit for resource [{"name":"mem","scalar":{"value":192.0},"type":"SCALAR"}] and will be terminated   (1.x: JSON)
// All are a limit of the job's own memory pool, the container_limit layer.
// The job's size as the user set it (memory_limit facts, context only):
//   #SBATCH --mem=24G           sbatch --mem=16000 train.sh   (bare numbers are MB, suffixes K M G T)
//   Memory Efficiency: 99.19% of 16.00 GB                      (seff's summary; "Memory Utilized: 15.87 GB")
//   resources: mem_mb=8000, mem_mib=7630, disk_mb=1000, ...    (Snakemake's job resources, Slurm executor)
//   $ sacct -j 2260417 --format=JobID,State,ExitCode,ReqMem,MaxRSS   (sacct's table: the ReqMem column
//          JobID      State ExitCode     ReqMem     MaxRSS            under its header, cut by the dashes
//   ------------ ---------- -------- ---------- ----------            line, as cells may be empty; or
//   2260417      OUT_OF_ME+    0:125      1000M                       --parsable's "|" fields. "16G" or
//   2260417.bat+ OUT_OF_ME+    0:125      1000M   1023788K            "4Gn" is the job's per node; "256Mc"
//                                                                     per CPU, times AllocCPUS where shown;
//                                                                     without the dashes, rows whose every
//                                                                     cell is filled)
#include <cctype>
#include <optional>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"oom_kill event"},
    {"oom-kill event"},
    {"Exceeded job memory limit", kCompanion},
    // Slurm's job state for a step the cgroup's OOM killer ended, in sacct's
    // State column (cut to "OUT_OF_ME+" at its default width) and seff's "State:".
    {"(^|[ \t|])OUT_OF_ME(MORY|\\+)([ \t|(]|$)", kRegex | kCompanion},
    {"Exceeded step memory limit", kCompanion},
    {"COMPLETED ", kContext},
    {": Out Of Memory"},
    {"Container killed by YARN for exceeding memory limits"},
    {"Container killed by YARN for exceeding physical memory limits"},  // Spark 3.x's wording
    {"is running beyond physical memory limits", kCompanion},
    {"is running beyond virtual memory limits", kCompanion},
    {"--mem=", kContext},
    {"Memory Efficiency:", kContext},
    {"resources: mem_mb=", kContext},
    {"exceeded memory limit (", kCompanion},          // Slurm's jobacct kill ("being killed": the gate's "kill")
    {"PBS: job killed: ", kCompanion},
    {"exceeded MEM usage hard limit (", kCompanion},  // Moab over Torque: "job N exceeded MEM usage hard limit (2871 > 1126)" (MB)
    {"TERM_MEMLIMIT", kCompanion},                   // the report's "Exited with exit code" makes it hot
    {"enforced h_vmem limit", kCompanion},
    {"enforced h_rss limit", kCompanion},
    {"exceeds job hard limit \"h_(vmem|rss|data)\"", kRegex | kCompanion},  // its line's "sending SIGKILL" is gated
    {"has gone over (cgroup )?memory limit of ", kRegex | kCompanion},  // no gate word: read in pasted evidence, and near other failures in a large log
    {"PERIODIC_HOLD due to memory usage", kCompanion},  // HTCondor's periodic hold policy over the job's request
    {"Job was held\\.", kRegex | kContext},              // HTCondor's job log (event 012), its reason on the next lines
    {"^[ \t]+[A-Z ]*MEMORY[A-Z ]*$", kRegex | kCompanion}, // ... a pool's PeriodicHold reason, "\tMEMORY EXCEEDED"
    {"killed by HTCondor due to excessive memory us", kCompanion},  // CMS CRAB's PostJob: "Job killed by HTCondor due to excessive memory use (RSS=2614 MB)"
    {"has reached its limit for resource (mem|\\[\\{\"name\":\"mem\")", kRegex | kCompanion},  // Mesos's containerizer ("... and will be terminated")
    {"RequestMemory = ", kContext},
    {"(HoldReasonCode = 5\\b|evaluated to UNDEFINED)", kRegex | kContext},  // HTCondor: a policy expression undefined
    {"killed due to exceeding (jobfs|walltime|cput|ncpus|disk)", kRegex | kCompanion},  // PBS Pro (NCI Gadi): not memory
    {"Total Requested Memory :", kContext},
    {"h_vmem=", kContext},
    {"ReqMem", kContext},
    {"^[ \t]*-{4,}( +-{2,})+ *$", kRegex | kContext},  // sacct's dashes under its header
    {"^[ \t]*[0-9]+(_[0-9]+)?(\\.[A-Za-z0-9+]+)?[ |]", kRegex | kContext},  // its rows: a job id first
};

// "--mem=24G", "--mem=16000" (MB): Slurm's size, a bare number in MB.
std::optional<uint64_t> slurm_mem(std::string_view v) {
  std::string_view rest;
  auto n = text::parse_u64(v, &rest);
  if (!n || *n == 0 || *n > (1ULL << 30)) return std::nullopt;  // 2^30 of any unit up to G, and of T below: no product overflows
  char u = rest.empty() ? 'M' : rest[0];
  if ((u == 'T' || u == 't') && *n > (1ULL << 20)) return std::nullopt;
  switch (u) {
    case 'K': case 'k': return *n * units::KiB;
    case 'G': case 'g': return *n * units::GiB;
    case 'T': case 't': return *n * units::TiB;
    case 'M': case 'm': return *n * units::MiB;
    default: return rest.empty() || rest[0] == ' ' || rest[0] == '\t' ? std::optional<uint64_t>(*n * units::MiB) : std::nullopt;
  }
}

// "10.4 GB of 10 GB physical memory used" -> usage, limit.
void yarn_sizes(std::string_view s, Fact& f) {
  size_t p = s.find(" physical memory used");
  if (p == std::string_view::npos) p = s.find(" virtual memory used");
  if (p == std::string_view::npos) return;
  std::string_view head = s.substr(0, p);
  size_t of = head.rfind(" of ");
  if (of == std::string_view::npos) return;
  f.limit = units::parse_log_size(head.substr(of + 4));
  // The usage figure is the last "<number> <unit>" (or "<number><unit>") before " of ".
  std::string_view before = text::trim(head.substr(0, of));
  size_t sp = before.rfind(' ');
  if (sp != std::string_view::npos) {
    std::string_view last = before.substr(sp + 1);
    if (!last.empty() && (last[0] < '0' || last[0] > '9')) {  // a unit: back up over the number too
      size_t sp2 = before.rfind(' ', sp - 1);
      if (sp2 != std::string_view::npos) f.usage = units::parse_log_size(before.substr(sp2 + 1));
    } else {
      f.usage = units::parse_log_size(last);
    }
  }
}

class Hpc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (job_size(line, out)) return;
    if (text::contains(s, "Job was held.")) held_line_ = line.number;  // HTCondor's job log event 012; its reason follows
    // HTCondor held the job because a policy expression (PeriodicRemove,
    // PeriodicHold) evaluated to UNDEFINED, HoldReasonCode 5: the hold names
    // the expression, memory terms and all, but memory did not run out.
    const bool undefined = text::contains(s, "evaluated to UNDEFINED") || text::trim(s) == "HoldReasonCode = 5";
    if (undefined && !undefined_policy_ && !guards::is_advice_line(s)) {
      undefined_policy_ = true;
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.55f;
      f.detail = "HTCondor held the job because a policy expression evaluated to UNDEFINED (HoldReasonCode 5), not for memory";
      return out.add(std::move(f));
    }
    if (text::contains(s, "by YARN for exceeding memory limits") || text::contains(s, "by YARN for exceeding physical memory limits") ||
        text::contains(s, "is running beyond physical memory limits") ||
        text::contains(s, "is running beyond virtual memory limits")) {
      std::string container;
      if (auto c = text::after(s, "containerID=")) container = std::string(text::take_until(*c, "] ,").substr(0, 64));
      // One report, several lines (Spark repeats it for each lost task); another container's is another kill.
      if (last_yarn_ && line.number <= last_yarn_ + 3 && container == last_yarn_container_) return;
      last_yarn_ = line.number;
      last_yarn_container_ = container;
      // The NodeManager's own kill of a container over its size: a cgroup-like
      // limit kill, read as the kernel's would be.
      Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::runtime);
      f.layer = Layer::container_limit;
      // No cause of its own: a kill at the limit does not say whether the
      // limit is too low or the usage kept growing (the diagnosis weighs that).
      f.strength = 0.9f;
      f.detail = text::contains(s, "virtual memory") && !text::contains(s, "physical memory") ? "YARN virtual-memory limit" : "YARN memory limit";
      f.process = "YARN container";
      f.container = std::move(container);
      yarn_sizes(s, f);
      out.add(std::move(f));
      platform(line, out, "yarn");
      return;
    }
    if (scheduler_poll_kill(line, out)) return;
    if (out_of_memory_state(line, out)) return;
    // sacct's row for a job that ended well: "4102877  COMPLETED  0:0  8Gn".
    if (text::contains(s, " COMPLETED ") && text::contains(s, " 0:0")) completed_ = true;
    if (text::contains(s, "oom_kill event") || text::contains(s, "oom-kill event") || text::contains(s, "Exceeded job memory limit") ||
        text::contains(s, "Exceeded step memory limit") || (text::contains(s, ": Out Of Memory") && text::contains(s, "srun"))) {
      if (last_slurm_ && line.number <= last_slurm_ + 3) return;
      last_slurm_ = line.number;
      Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::runtime);
      f.layer = Layer::container_limit;
      f.detail = "Slurm job memory cgroup";
      f.strength = text::contains(s, "srun") ? 0.75f : 0.9f;
      if (auto step = text::after(s, "StepId=")) {
        // "StepId=647226.batch. Some of ...": the id ends at the blank, less the sentence's full stop.
        std::string_view id = text::take_until(*step, " \t,");
        while (!id.empty() && id.back() == '.') id.remove_suffix(1);
        f.container = "slurm step " + std::string(id.substr(0, 48));
      }
      else if (auto st = text::after(s, " in step ")) f.container = "slurm step " + std::string(text::first_word(*st).substr(0, 48));
      if (auto n = text::after(s, "Detected ")) f.count = text::parse_u64(*n);
      f.process = "Slurm job step";
      if (text::contains(s, "at some point")) {
        warned_ = std::move(f);  // judged at the end, against the job's final state
        platform(line, out, "slurm");
        return;
      }
      out.add(std::move(f));
      platform(line, out, "slurm");
    }
  }

  // sacct's or seff's state OUT_OF_MEMORY for the job or a step: Slurm
  // recorded an OOM kill in the job's cgroup (once; not in a command that
  // filters or greps for the state).
  bool out_of_memory_state(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = s.find("OUT_OF_ME");
    if (p == std::string_view::npos) return false;
    const size_t end = p + 9;
    const bool word = (p == 0 || s[p - 1] == ' ' || s[p - 1] == '\t' || s[p - 1] == '|') &&
                      (text::starts_with(s.substr(end), "MORY") || text::starts_with(s.substr(end), "+"));
    if (!word || text::starts_with(text::trim_left(s), "$") || text::contains(s, "grep") || text::icontains(s, "state=") ||
        text::contains(s, "--state") || guards::is_mention(s, p, 9))
      return false;
    rss_against_request(s);
    if (oom_state_fact_) return true;
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::runtime);
    f.layer = Layer::container_limit;
    f.detail = "Slurm job memory cgroup";
    f.strength = 0.85f;
    f.process = "Slurm job step";
    oom_state_fact_ = std::move(f);  // judged at the end, against the rows' MaxRSS
    platform(line, out, "slurm");
    return true;
  }
  // A row of sacct's table in that state, its MaxRSS against its ReqMem: Slurm
  // also flags a step OUT_OF_MEMORY when any OOM kill happened in its cgroup,
  // and a step whose peak stayed well under its request (60%: MaxRSS is
  // sampled, so a real kill's peak reads a little low) was not stopped by it.
  void rss_against_request(std::string_view s) {
    if (sacct_.names.empty() || (sacct_.spans.empty() && !sacct_.parsable)) return;
    const size_t rss = sacct_col("MaxRSS"), req = sacct_col("ReqMem");
    auto cells = sacct_cells(s);
    if (rss == kNoCol || req == kNoCol || rss >= cells.size() || req >= cells.size()) return;
    // A step's row leaves ReqMem empty under the job's: the job's is its request too.
    std::string_view r = cells[req];
    if (!r.empty() && r.back() == 'c') return;  // per CPU
    if (!r.empty() && r.back() == 'n') r.remove_suffix(1);
    auto asked = r.empty() ? job_request_ : slurm_mem(r);
    if (!r.empty() && asked) job_request_ = asked;
    auto used = slurm_mem(cells[rss]);
    if (!used || !asked) return;
    (*used * 5 < *asked * 3 ? rss_low_ : rss_high_) = true;  // under 60% of the request
  }
  bool rss_low_ = false, rss_high_ = false;
  std::optional<uint64_t> job_request_;
  std::optional<Fact> oom_state_fact_;

  void finish(FactSink& out) override {
    // (slurmstepd's own line, when present, said it already: last_slurm_.)
    if (oom_state_fact_ && !last_slurm_ && !(rss_low_ && !rss_high_)) out.add(std::move(*oom_state_fact_));
    oom_state_fact_.reset();
    if (warned_ && !completed_) out.add(std::move(*warned_));
    warned_.reset();
  }

 private:
  bool undefined_policy_ = false;  // an HTCondor policy expression was said undefined (one fact)
  uint64_t held_line_ = 0;          // HTCondor's job log: the last "Job was held." event
  std::optional<Fact> warned_;  // "Exceeded ... memory limit at some point", until the job's end is known
  bool completed_ = false;

  // A scheduler that polls the job's usage and kills it over its size
  // (Slurm's jobacct, PBS/Torque's MOM, LSF): the figures where printed.
  bool scheduler_poll_kill(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    const char* detail = nullptr;
    const char* name = nullptr;
    std::optional<uint64_t> usage, limit;
    if (auto v = text::after(s, "exceeded memory limit ("); v && text::contains(s, "being killed")) {
      std::string_view rest;
      usage = text::parse_u64(*v, &rest);
      if (auto gt = text::after(rest, "> ")) limit = text::parse_u64(*gt);
      if (usage) *usage *= units::KiB;
      if (limit) *limit *= units::KiB;
      detail = "Slurm job memory limit (accounting)", name = "slurm";
    } else if (auto v = text::after(s, "exceeded MEM usage hard limit (")) {
      // Moab's policy over Torque deletes the job: "job 3187241 exceeded MEM usage hard limit (2871 > 1126)", in MB.
      if (guards::is_advice_line(s)) return false;
      std::string_view rest;
      if (auto mb = text::parse_u64(*v, &rest)) usage = *mb * units::MiB;
      if (auto gt = text::after(rest, "> ")) {
        if (auto mb = text::parse_u64(*gt)) limit = *mb * units::MiB;
      }
      detail = "Moab job memory limit (MEM hard limit)", name = "pbs";
    } else if (auto v = text::after(s, "PBS: job killed: ")) {
      std::string_view w = text::first_word(*v);
      if (w == "walltime" || w == "cput" || w == "ncpus" || w == "jobfs") return not_memory_kill(line, w, out);
      if (w != "mem" && w != "vmem" && w != "pmem" && w != "pvmem") return false;
      std::string_view rest = v->substr(w.size());
      usage = units::parse_log_size(text::trim_left(rest));
      if (auto l = text::after(rest, "exceeded limit ")) limit = units::parse_log_size(*l);
      detail = "PBS job memory limit", name = "pbs";
    } else if (text::contains(s, "TERM_MEMLIMIT")) {
      if (guards::is_advice_line(s)) return false;
      detail = "LSF job memory limit", name = "lsf";
    } else if (auto v = text::after(s, "memory limit of "); v && text::contains(s, "has gone over ")) {
      std::string_view rest;
      if (auto mb = text::parse_u64(*v, &rest); mb && text::starts_with(rest, " megabytes")) limit = *mb * units::MiB;
      // "Peak usage: 2302 megabytes", or (the cgroup form) "Last measured usage: 2113 megabytes"
      auto peak = text::after(rest, "Peak usage: ");
      if (!peak) peak = text::after(rest, "measured usage: ");
      if (peak) {
        std::string_view after;
        if (auto mb = text::parse_u64(*peak, &after); mb && text::starts_with(after, " megabytes")) usage = *mb * units::MiB;
      }
      detail = "HTCondor job memory limit (request_memory)", name = "htcondor";
    } else if (auto m = text::after(s, "has reached its limit for resource ");
               m && (text::starts_with(*m, "mem(") || text::starts_with(*m, "[{\"name\":\"mem\""))) {
      // Mesos: "... has reached its limit for resource mem(*):64 and will be terminated" (MB), and
      // 1.x's JSON: [{"name":"mem","scalar":{"value":192.0},...}] (MB).
      std::optional<std::string_view> mb_text = text::starts_with(*m, "mem(") ? text::after(*m, "):") : text::after(*m, "\"value\":");
      if (mb_text) {
        if (auto mb = text::parse_double(*mb_text); mb && *mb > 0 && *mb < 1e9) limit = static_cast<uint64_t>(*mb * static_cast<double>(units::MiB));
      }
      detail = "Mesos container memory limit", name = "mesos";
    } else if (auto v = text::after(s, "killed by HTCondor due to excessive memory us")) {
      // CMS CRAB's retry handler, from the job's exit: "(RSS=2614 MB)".
      if (guards::is_advice_line(s)) return false;
      if (auto rss = text::after(*v, "RSS=")) {
        std::string_view rest;
        if (auto mb = text::parse_u64(*rss, &rest); mb && text::starts_with(rest, " MB")) usage = *mb * units::MiB;
      }
      detail = "HTCondor job memory limit (excessive memory use)", name = "htcondor";
    } else if (held_line_ && line.number <= held_line_ + 2 && text::icontains(s, "memory") && line.text.size() < 160 &&
               !text::contains(s, "Job was held")) {
      // The job log's hold event, its reason on the lines under it: "012 (58211.000.000) ... Job was held.",
      // then "\tMEMORY EXCEEDED" (a pool's PeriodicHold reason) or "\tError from slot1_7@...: Job has gone over memory limit ...".
      held_line_ = 0;
      detail = "HTCondor job memory limit (held for its memory)", name = "htcondor";
    } else if (text::contains(s, "PERIODIC_HOLD due to memory usage")) {
      // "Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 2710000." (condor_q -hold):
      // the pool's policy holds (stops) a job whose usage passed its RequestMemory.
      if (guards::is_advice_line(s)) return false;
      detail = "HTCondor job memory limit (periodic hold over RequestMemory)", name = "htcondor";
    } else if (text::contains(s, "enforced h_vmem limit") || text::contains(s, "enforced h_rss limit")) {
      if (guards::is_advice_line(s)) return false;
      detail = text::contains(s, "h_vmem") ? "Grid Engine h_vmem limit" : "Grid Engine h_rss limit", name = "sge";
    } else if (auto h = text::after(s, "exceeds job hard limit \"h_")) {
      // The execd's own log: 'job 4321.1 exceeds job hard limit "h_vmem" of queue "all.q@node07"
      // (8589934592.00000 > limit:8589934592.00000) - sending SIGKILL' (bytes, as doubles).
      if (guards::is_advice_line(s)) return false;
      detail = text::starts_with(*h, "rss") ? "Grid Engine h_rss limit" : "Grid Engine h_vmem limit", name = "sge";
      if (auto u = text::after(*h, "(")) {
        std::string_view rest;
        if (auto used = text::parse_u64(*u, &rest)) usage = *used;
        if (auto l = text::after(*h, "limit:"))
          if (auto cap = text::parse_u64(*l)) limit = *cap;
      }
    } else if (auto v = text::after(s, "killed due to exceeding ")) {
      // PBS Pro's own kill over a resource that is not memory: "Job 98311742.gadi-pbs killed due to
      // exceeding jobfs quota. Quota: 20.0GB, Used: 20.0GB" (a local-disk quota), walltime, CPU time.
      std::string_view w = text::first_word(*v);
      if (w == "jobfs" || w == "walltime" || w == "cput" || w == "ncpus" || w == "disk") return not_memory_kill(line, w, out);
      return false;
    } else {
      return false;
    }
    if (last_poll_ && line.number <= last_poll_ + 3) return true;
    last_poll_ = line.number;
    Fact f = make_fact(line, FactKind::kernel_oom_kill, Family::runtime);
    f.layer = Layer::container_limit;
    f.strength = 0.9f;
    f.detail = detail;
    f.process = "batch job";
    f.usage = usage;
    f.limit = limit;
    out.add(std::move(f));
    platform(line, out, name);
    return true;
  }

  // A scheduler's kill over a resource that is not memory (walltime, CPU
  // time, a local-disk quota): the job dies as an OOM victim would, and the
  // line says why: a look-alike.
  bool not_memory_kill(const Line& line, std::string_view what, FactSink& out) {
    if (guards::is_advice_line(line.text)) return false;
    if (last_poll_ && line.number <= last_poll_ + 3) return true;
    last_poll_ = line.number;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
    f.layer = Layer::not_memory;
    f.strength = 0.85f;
    f.detail = "the batch scheduler killed the job over its " + std::string(what.substr(0, 16)) + " limit, not memory";
    f.process = "batch job";
    out.add(std::move(f));
    return true;
  }

  // The job's configured size: sbatch's --mem (on an #SBATCH line or the
  // submitting command), seff's summary, Snakemake's mem_mb resource, LSF's
  // requested memory.
  // sacct's table (see the top of the file): its header's columns, then the
  // spans the dashes line gives them, then its rows' ReqMem.
  struct Sacct {
    std::vector<std::string> names;
    std::vector<std::pair<size_t, size_t>> spans;  // from the dashes line
    bool parsable = false;
    uint64_t line = 0;
    bool said = false;
  };
  Sacct sacct_;

  static constexpr size_t kNoCol = size_t(-1);
  size_t sacct_col(std::string_view name) const {
    for (size_t k = 0; k < sacct_.names.size(); ++k)
      if (sacct_.names[k] == name) return k;
    return kNoCol;
  }
  // The cells of one row: by the dashes' spans, or by "|" for --parsable.
  std::vector<std::string_view> sacct_cells(std::string_view s) const {
    std::vector<std::string_view> cells;
    if (sacct_.parsable) {
      while (cells.size() < 32) {
        size_t bar = s.find('|');
        cells.push_back(text::trim(s.substr(0, bar)));
        if (bar == std::string_view::npos) break;
        s.remove_prefix(bar + 1);
      }
      return cells;
    }
    // A cell is the word its span overlaps most: a paste whose row slid a
    // few columns off its dashes keeps "12401224K" whole and in its column.
    for (auto [from, to] : sacct_.spans) {
      std::string_view best;
      size_t best_overlap = 0;
      for (size_t i = 0; i < s.size() && i < to + 16;) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        size_t b = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
        if (i == b) break;
        const size_t lo = std::max(b, from), hi = std::min(i, to);
        if (hi > lo && hi - lo >= best_overlap) best_overlap = hi - lo, best = s.substr(b, i - b);
      }
      cells.push_back(best);
    }
    if (sacct_.spans.empty()) {
      // No dashes pasted: the row's words, when every cell is filled.
      cells = split_cells(text::trim(s), false);
      if (cells.size() != sacct_.names.size()) cells.clear();
    }
    return cells;
  }
  // Returns true when the line belonged to the table.
  bool sacct_line(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    if (text::contains(s, "ReqMem") && text::contains(s, "JobID") && !text::contains(s, "--format") && !text::contains(s, "-o ")) {
      sacct_ = Sacct{};
      sacct_.parsable = text::contains(s, "|");
      for (std::string_view w : split_cells(t, sacct_.parsable)) sacct_.names.emplace_back(w);
      sacct_.line = line.number;
      return true;
    }
    if (!sacct_.line || sacct_.said) return false;
    if (line.number != sacct_.line + 1) {
      sacct_.line = 0;
      return false;
    }
    sacct_.line = line.number;
    const bool dashes = !t.empty() && t.find_first_not_of("- ") == std::string_view::npos;
    if (!sacct_.parsable && sacct_.spans.empty() && dashes) {
      // The dashes: each run of '-' is one column's width.
      for (size_t i = 0; i < s.size() && sacct_.spans.size() < 32;) {
        if (s[i] != '-') { ++i; continue; }
        size_t j = i;
        while (j < s.size() && s[j] == '-') ++j;
        sacct_.spans.emplace_back(i, j);
        i = j;
      }
      if (sacct_.spans.size() != sacct_.names.size()) sacct_.line = 0;
      return true;
    }
    const size_t req = sacct_col("ReqMem");
    auto cells = sacct_cells(s);
    if (req == kNoCol || req >= cells.size() || cells[req].empty()) return true;
    std::string_view v = cells[req];
    char per = v.back();
    if (per == 'n' || per == 'c') v.remove_suffix(1);
    auto bytes = slurm_mem(v);
    if (!bytes) return true;
    if (per == 'c') {
      const size_t cpus = sacct_col("AllocCPUS") != kNoCol ? sacct_col("AllocCPUS") : sacct_col("NCPUS");
      auto n = cpus != kNoCol && cpus < cells.size() ? text::parse_u64(cells[cpus]) : std::nullopt;
      if (!n || *n == 0 || *n > 4096 || *bytes > (uint64_t(1) << 50)) return true;  // per CPU, and the CPUs not shown: not the job's size
      *bytes *= *n;
    }
    sacct_.said = true;
    Fact f = make_fact(line, FactKind::memory_limit, Family::runtime);
    f.limit = bytes;
    f.detail = "Slurm ReqMem (sacct)";
    out.add(std::move(f));
    return true;
  }
  static std::vector<std::string_view> split_cells(std::string_view t, bool parsable) {
    std::vector<std::string_view> out;
    while (!t.empty() && out.size() < 32) {
      size_t end = parsable ? t.find('|') : t.find_first_of(" \t");
      out.push_back(text::trim(t.substr(0, end)));
      if (end == std::string_view::npos) break;
      t = text::trim_left(t.substr(end + 1));
    }
    return out;
  }

  bool job_size(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    sacct_line(line, out);  // its rows are also read below (a COMPLETED job)
    std::optional<uint64_t> limit;
    const char* detail = nullptr;
    if (auto v = text::after(s, "--mem="); v && (text::contains(s, "SBATCH") || text::contains(s, "sbatch") || text::contains(s, "srun") ||
                                                 text::contains(s, "salloc"))) {
      limit = slurm_mem(*v), detail = "Slurm --mem";
    } else if (auto r = text::after(s, "RequestMemory = "); r && text::starts_with(text::trim_left(s), "RequestMemory = ")) {
      // HTCondor's job ad (condor_q -long): RequestMemory in MB.
      if (auto n = text::parse_u64(*r); n && *n > 0 && *n < (1ULL << 30)) limit = *n * units::MiB, detail = "HTCondor RequestMemory";
    } else if (auto e = text::after(s, "Memory Efficiency:")) {
      if (auto of = text::after(*e, "% of ")) limit = units::parse_log_size(*of), detail = "Slurm job memory (seff)";
    } else if (auto m = text::after(s, "resources: mem_mb=")) {
      if (auto n = text::parse_u64(*m); n && *n > 0 && *n < (1ULL << 30)) limit = *n * 1000 * 1000, detail = "Snakemake mem_mb";
    } else if (auto v = text::after(s, "h_vmem="); v && (text::contains(s, "resource_list") || text::contains(s, "#$") || text::contains(s, "qsub") ||
                                                          text::contains(s, "-l h_vmem="))) {
      // Grid Engine's per-slot hard limit: "hard resource_list: h_data=16G,h_vmem=16G", "#$ -l h_vmem=8G".
      // Its units are K/M/G either case ("1300m"); a bare number is bytes.
      limit = units::parse_log_size(*v), detail = "Grid Engine h_vmem (per slot)";
      std::string_view unit;
      if (!limit && text::parse_u64(*v, &unit) && !unit.empty() && std::isalpha(static_cast<unsigned char>(unit[0]))) limit = slurm_mem(*v);
    } else if (auto v = text::after(s, "Total Requested Memory :")) {
      // LSF's job report summary, in MB.
      if (auto mb = text::parse_double(text::trim_left(*v)); mb && *mb > 0 && *mb < 1e12)
        limit = static_cast<uint64_t>(*mb * static_cast<double>(units::MiB)), detail = "LSF requested memory";
    } else {
      return false;
    }
    if (!limit || *limit == 0) return true;
    Fact f = make_fact(line, FactKind::memory_limit, Family::runtime);
    f.limit = limit;
    f.detail = detail;
    out.add(std::move(f));
    return true;
  }

  void platform(const Line& line, FactSink& out, const char* name) {
    if (platform_done_) return;
    platform_done_ = true;
    Fact p = make_fact(line, FactKind::platform, Family::runtime);
    p.detail = name;
    out.add(std::move(p));
  }
  uint64_t last_yarn_ = 0, last_slurm_ = 0, last_poll_ = 0;
  std::string last_yarn_container_;
  bool platform_done_ = false;
};

}  // namespace

const RecognizerEntry kHpcEntry{"hpc", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Hpc); }};

}  // namespace aimem
