// Kernel OOM killer reports, every format since 2.6 (Linux mm/oom_kill.c:
// dump_header, dump_tasks, __oom_kill_process; mm/memcontrol.c:
// mem_cgroup_print_oom_context). One kill prints, in order:
//
//   <comm> invoked oom-killer: gfp_mask=..., [nodemask=...,] order=N, oom_score_adj=N
//   CPU: .. PID: .. Comm: ..  / Call Trace: ... (mem_cgroup_out_of_memory+.. for a memcg OOM)
//   memcg OOM:  memory: usage NkB, limit NkB, failcnt N
//               Memory cgroup stats for /path[: v1 one-line stats]
//               Task in /A killed as a result of limit of /B          (<= 4.19)
//   global OOM: Mem-Info: ... / N pages RAM
//     ( slab_reclaimable:281405 slab_unreclaimable:1609330 in Mem-Info: the kernel's own memory, pages)
//   Tasks state (memory values in pages): + task table (pages), one row per task:
//     [  pid  ]   uid  tgid total_vm      rss [rss_anon rss_file rss_shmem] pgtables_bytes swapents oom_score_adj name
//     [  25635]  1000 25635  2390112   784411 ...                                         0 java
//   (rss is the fourth figure after the bracket in every version; pages of 4 KiB)
//   oom-kill:constraint=CONSTRAINT_MEMCG|NONE,...,oom_memcg=/B|global_oom,task_memcg=/A,task=comm,pid=N,uid=N  (>= ~5.0)
//   [Memory cgroup out of memory|Out of memory]: Kill process N (comm) score N or sacrifice child   (<= ~5.0)
//   [Memory cgroup out of memory: |Out of memory: ]Killed process N[, UID n,] (comm) total-vm:NkB, anon-rss:NkB, ...
//   oom_reaper: reaped process N (comm), now anon-rss:0kB, ...
//
// A global report also lists each zone's free blocks by size (show_free_areas):
//   Normal: 140322*4kB (UM) 81211*8kB (UM) 2*16kB (M) 0*32kB 0*64kB ... 0*4096kB = 1211008kB
// A request of order N (2^N contiguous pages, from the header's order=N) that
// finds no free block of that size in any zone, while megabytes lie free in
// smaller ones, failed for fragmentation, not for want of memory: the fact
// carries cause fragmentation and says so in its detail.
//
// The header, task table and summary are rate-limited; the victim line is not,
// so a lone victim line is a whole incident. The summary line can be split by a
// KERN_CONT bug (",global_oom,task_memcg=..." on its own line), and a paste from
// a narrow terminal wraps it anywhere ("...,oom_memcg=/kubepods/burstable/pod1234-"
// then "5678/abcd...,task_memcg=...,task=python3,pid=4242,uid=0" with no prefix):
// the summary always ends with ",uid=N", so a summary line without that end is
// joined with the prefix-less line right after it. This recognizer
// assembles the lines of one report (by line distance and time) and emits one
// kernel_oom_kill fact per victim, or a kernel_oom_event for a report whose
// victim line is missing. Each victim carries what the task table says of its
// program: how many tasks of that name there were (sequences), their resident
// memory together (this_process), and the largest other program's
// (other_processes, with its name in the detail): ten copies of one worker, or
// one other program holding most of the host, are the cause.
#include <string>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"invoked oom-killer"},
    {"oom-kill:constraint="},
    {",global_oom", kCompanion},
    {",oom_memcg=", kCompanion},
    // pieces of a wrapped summary line (see above)
    {"task_memcg=", kCompanion},
    {",task=", kCompanion},
    {",uid=", kCompanion},
    {"mems_allowed=", kCompanion},
    {"Killed process"},
    {"Kill process"},
    {"Memory cgroup out of memory"},
    {"memory: usage ", kCompanion},
    {"Memory cgroup stats for", kCompanion},
    {"killed as a result of limit of"},
    {"Memory limit reached of cgroup", kCompanion},
    {"out_of_memory", kCompanion},
    {"are going to be killed due to memory.oom.group"},
    {"Mem-Info:", kCompanion},
    {"System is deadlocked on memory", kCompanion},
    {"panic_on_oom", kCompanion},
    {"Manual OOM execution", kCompanion},  // SysRq f: the OOM killer invoked by hand
    {"Out of memory and no killable processes"},
    {"Skip killing the task"},
    {"cpuset=", kContext},
    {"PID: [0-9]+ Comm: ", kRegex | kContext},
    {"^.{0,80}\\[ *[0-9]+\\] +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ", kRegex | kContext},  // a task table row
    {"[0-9]\\*4kB ", kRegex | kContext},  // a zone's free blocks by size
    {"Tasks state (memory values in pages)", kCompanion},
    {"\\[ *pid *\\] +uid +tgid +total_vm", kRegex | kCompanion},  // the task table's column header
    {"slab_unreclaimable:", kContext},      // Mem-Info: the kernel's own unreclaimable memory (pages)
    {" pages RAM", kContext},               // Mem-Info: the machine's RAM (pages)
};

constexpr uint64_t kFragmentedFreeKiB = 16 * 1024;  // free in small blocks for an order>0 failure to be fragmentation

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMaxPages = 1ULL << 40;  // 4 PiB of pages: more is a garbled figure
constexpr size_t kTablePrograms = 256;  // distinct names counted per report

struct Program {
  std::string name;
  uint64_t tasks = 0, rss_pages = 0;
};

// Kernel page_counter "unlimited" (PAGE_COUNTER_MAX) prints as ~2^53 kB.
constexpr uint64_t kUnlimitedKiB = 1ULL << 50;

struct Victim {
  Provenance where;
  std::string text, process, detail;
  uint64_t line = 0;
  int64_t pid = 0;
  std::optional<uint64_t> rss;
  bool same_report = false;
};

struct Report {
  bool open = false;
  uint64_t first_line = 0, last_line = 0;
  std::optional<int64_t> unix_us;
  std::optional<double> uptime_s;
  std::string trigger;  // comm that invoked the OOM killer
  bool memcg = false, global = false, sysrq = false;
  bool panicked = false;  // the kernel panicked on the OOM (panic_on_oom, or deadlocked on memory)
  std::string constraint, oom_memcg, task_memcg, limit_of, task_in, stats_cgroup;
  std::optional<uint64_t> usage, limit;
  std::optional<int64_t> summary_pid;
  std::string summary_task;
  int order = 0;                    // the request's order (2^order pages)
  uint64_t free_kib = 0;            // free in every zone's blocks
  uint64_t free_at_order_kib = 0;   // free in blocks of the request's size or larger
  bool buddy = false;               // a zone's free-block line was read
  uint64_t slab_unreclaimable_pages = 0, ram_pages = 0;  // Mem-Info
  int victims = 0;
  std::vector<std::pair<uint64_t, std::string>> lines;  // evidence, bounded
  std::vector<Victim> pending;  // victims of this report, emitted when it ends
  std::vector<Program> table;   // the task table, by program name
  Fact base;  // provenance of the first line
};

class KernelOom final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (!partial_.empty()) {
      if (line.number == partial_line_ + 1 && continues_summary(line)) return join_summary(line);
      partial_.clear();
    }
    if (auto c = text::after(s, " Comm: "); c && text::contains(s, "PID: ")) {
      // "CPU: 0 PID: 5117 Comm: stress Not tainted ..." starts a dump_stack;
      // it names the task that ran into the OOM when the header is missing.
      last_comm_ = std::string(text::first_word(*c).substr(0, 64));
      last_comm_line_ = line.number;
      return;
    }
    if (auto p = s.find("invoked oom-killer"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 18)) return;
      close(out);
      start(line);
      r_.trigger = trigger_comm(s);
      if (text::contains(s, "order=-1")) r_.sysrq = true;
      if (auto o = text::after(s, "order=")) r_.order = static_cast<int>(text::parse_u64(*o).value_or(0) & 15);
      keep(line);
      return;
    }
    if (r_.open && near(line) && text::contains(s, "*4kB ")) return free_blocks(s);
    if (r_.open && near(line) && mem_info(s)) return;
    if (auto p = s.find("oom-kill:"); p != std::string_view::npos && text::contains(s, "constraint=")) {
      ensure(line, out);
      std::string_view summary = text::trim(s.substr(p + 9));
      parse_summary(summary);
      keep(line);
      if (!summary_complete(summary)) {
        partial_.assign(summary.substr(0, 4096));
        partial_line_ = line.number;
      }
      return;
    }
    if (!text::contains(s, "oom-kill:") && (text::contains(s, ",global_oom") || text::contains(s, ",oom_memcg=") ||
                                            (text::contains(s, ",task_memcg=") && r_.open && near(line)))) {
      // KERN_CONT fragment of the summary line.
      ensure(line, out);
      parse_summary(s.substr(s.find(',')));
      keep(line);
      return;
    }
    // The task table's heading or its column header, with the report's own
    // header cut from the excerpt (`dmesg | grep -A12 'Tasks state'`): only
    // the OOM killer prints this table, so it opens a report of its own.
    if (text::contains(s, "Tasks state (memory values in pages)") ||
        (text::contains(s, " tgid ") && text::contains(s, "total_vm") && text::contains(s, "pid"))) {
      ensure(line, out);
      r_.last_line = line.number;
      return;
    }
    if (r_.open && near(line) && table_row(s)) return;
    // Rows a grep kept without their heading ("dmesg | grep -E '\] +\[ *[0-9]+\] .* rustc$|Killed
    // process'"): a row of the table's own shape, every figure a number,
    // opens the report its victim line will close.
    if (bare_row(s)) {
      ensure(line, out);
      r_.last_line = line.number;
      if (table_row(s)) return;
    }
    if (auto p = s.find("Killed process"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 14)) return;  // help text quoting the kernel
      victim(line, s, p, out);
      return;
    }
    if (auto p = s.find("Kill process"); p != std::string_view::npos) {
      // Selection line (<= 5.0): its prefix says global or memcg.
      ensure(line, out);
      classify_prefix(s.substr(0, p));
      keep(line);
      return;
    }
    if (memcg_line(line, s, out)) return;
    if (text::contains(s, "out_of_memory")) {
      // Call-trace frames: mem_cgroup_out_of_memory+0x.. (memcg) or
      // out_of_memory+0x.. / pagefault_out_of_memory (global or memcg).
      if (!looks_like_frame(s)) return;
      // A call trace through the OOM killer is a report even when its header
      // was cut from the excerpt.
      const bool fresh = !(r_.open && near(line));
      ensure(line, out);
      if (fresh && r_.trigger.empty() && !last_comm_.empty() && line.number <= last_comm_line_ + 40) r_.trigger = last_comm_;
      if (text::contains(s, "mem_cgroup_out_of_memory") || text::contains(s, "mem_cgroup_oom")) r_.memcg = true;
      r_.last_line = line.number;
      return;
    }
    if (text::contains(s, "Mem-Info:")) {
      if (r_.open && near(line)) {
        r_.global = true;
        r_.last_line = line.number;
      }
      return;
    }
    if (text::contains(s, "cpuset=") && text::contains(s, "mems_allowed=")) {
      // 4.x: "<comm> cpuset=<cg> mems_allowed=0" right after the header.
      if (r_.open && near(line)) r_.last_line = line.number;
      return;
    }
    if (text::contains(s, "Manual OOM execution")) {  // "sysrq: SysRq : Manual OOM execution": the report that follows is by hand
      manual_line_ = line.number;
      return;
    }
    if (text::contains(s, "System is deadlocked on memory") || text::contains(s, "panic_on_oom") ||
        text::contains(s, "Out of memory and no killable processes")) {
      if (text::contains(s, "panic_on_oom") && !text::contains(s, "Out of memory")) return;  // sysctl echo
      ensure(line, out);
      r_.global = !text::contains(s, "compulsory") || r_.global;
      r_.panicked = true;
      keep(line);
      return;
    }
    if (text::contains(s, "Skip killing the task")) {
      ensure(line, out);
      keep(line);
    }
  }

  // The lines of a memory-cgroup report: usage and limit, the stats header,
  // the limit's owner (4.x "killed as a result of limit of", 5.x+ "Memory
  // limit reached of cgroup"), oom.group. True when the line was one of them.
  bool memcg_line(const Line& line, std::string_view s, FactSink& out) {
    if (text::contains(s, "Memory cgroup out of memory")) {
      // "Memory cgroup out of memory: OOM victim N (x) is already exiting. Skip killing the task"
      ensure(line, out);
      r_.memcg = true;
      keep(line);
      return true;
    }
    if (auto v = text::after(s, "memory: usage ")) {
      // "memory: usage 32768kB, limit 32768kB, failcnt 307" (but not "memory+swap:" / "kmem:")
      size_t p = s.find("memory: usage ");
      if (p > 0 && (s[p - 1] == '+' || s[p - 1] == 'k')) return true;
      ensure(line, out);
      r_.memcg = true;
      std::string_view rest;
      if (auto u = text::parse_u64(*v, &rest); u && text::starts_with(rest, "kB")) r_.usage = *u * 1024;
      if (auto l = text::after(*v, "limit ")) {
        if (auto lim = text::parse_u64(*l, &rest); lim && text::starts_with(rest, "kB") && *lim < kUnlimitedKiB)
          r_.limit = *lim * 1024;
      }
      keep(line);
      return true;
    }
    if (auto v = text::after(s, "Memory cgroup stats for ")) {
      ensure(line, out);
      r_.memcg = true;
      std::string_view path = *v;
      // v1 one-line form: "/path: cache:24KB rss:..."; plain form "/path:"
      if (auto colon = path.find(": "); colon != std::string_view::npos) path = path.substr(0, colon);
      path = text::trim(path);
      if (!path.empty() && path.back() == ':') path.remove_suffix(1);
      r_.stats_cgroup = std::string(path.substr(0, 512));
      keep(line);
      return true;
    }
    if (auto v = text::after(s, "killed as a result of limit of ")) {
      ensure(line, out);
      r_.memcg = true;
      r_.limit_of = std::string(text::first_word(*v).substr(0, 512));
      if (auto t = text::after(s, "Task in ")) r_.task_in = std::string(text::first_word(*t).substr(0, 512));
      // A terminal wrapped the line inside the limit's path ("limit of /docker/" then the id on
      // the next line): the task's own path, which it begins, is the rest of it.
      if (!r_.limit_of.empty() && r_.limit_of.back() == '/' && r_.task_in.size() > r_.limit_of.size() &&
          text::starts_with(r_.task_in, r_.limit_of))
        r_.limit_of = r_.task_in;
      keep(line);
      return true;
    }
    if (auto v = text::after(s, "Memory limit reached of cgroup ")) {
      ensure(line, out);
      r_.memcg = true;
      r_.limit_of = std::string(text::first_word(*v).substr(0, 512));
      keep(line);
      return true;
    }
    if (text::contains(s, "are going to be killed due to memory.oom.group")) {
      ensure(line, out);
      r_.memcg = true;
      keep(line);
      return true;
    }
    return false;
  }

  void finish(FactSink& out) override { close(out); }

 private:
  Report r_;
  uint64_t manual_line_ = 0;  // SysRq's "Manual OOM execution": the report that follows is by hand
  static constexpr uint64_t kManualWindow = 8;
  // A summary line cut before its ",uid=N" end, waiting for its continuation.
  std::string partial_;
  uint64_t partial_line_ = 0;
  std::string last_comm_;
  uint64_t last_comm_line_ = 0;

  static bool summary_complete(std::string_view summary) {
    size_t u = summary.rfind(",uid=");
    if (u == std::string_view::npos) return false;
    std::string_view n = summary.substr(u + 5);
    return !n.empty() && n.find_first_not_of("0123456789") == std::string_view::npos;
  }

  // The rest of a wrapped summary: the very next line, with no prefix of its
  // own (a KERN_CONT fragment has one and is read as such), carrying one of the
  // summary's keys.
  bool continues_summary(const Line& line) const {
    if (line.time.unix_us || line.time.uptime_s) return false;
    std::string_view t = text::trim(line.text);
    if (t.empty() || t[0] == '[' || text::contains(t, "oom-kill:") || text::contains(t, " kernel: ")) return false;
    for (std::string_view key : {"task_memcg=", "task=", "pid=", "uid=", "mems_allowed=", "oom_memcg=", "global_oom"})
      if (text::contains(t, key)) return true;
    return false;
  }

  void join_summary(const Line& line) {
    partial_ += text::trim(line.text).substr(0, 4096);
    parse_summary(partial_);
    keep(line);
    if (summary_complete(partial_) || partial_.size() > 8192) {
      partial_.clear();
    } else {
      partial_line_ = line.number;
    }
  }

  bool near(const Line& line) const {
    if (!r_.open) return false;
    if (line.number > r_.last_line + 8000) return false;
    if (line.time.uptime_s && r_.uptime_s) return *line.time.uptime_s - *r_.uptime_s < 10.0;
    if (line.time.unix_us && r_.unix_us) return *line.time.unix_us - *r_.unix_us < 10'000'000;
    return line.number <= r_.last_line + 400;
  }

  void start(const Line& line) {
    r_ = Report{};
    r_.open = true;
    r_.first_line = r_.last_line = line.number;
    r_.unix_us = line.time.unix_us;
    r_.uptime_s = line.time.uptime_s;
    r_.base = make_fact(line, FactKind::kernel_oom_event, Family::kernel);
  }

  // Continue the open report if this line belongs to it, else start a new one.
  void ensure(const Line& line, FactSink& out) {
    if (r_.open && near(line)) return;
    close(out);
    start(line);
    if (manual_line_ && line.number <= manual_line_ + kManualWindow) r_.sysrq = true;
  }

  void keep(const Line& line) {
    r_.last_line = line.number;
    if (r_.lines.size() < 4) r_.lines.emplace_back(line.number, text::quote_line(line.text, 240));
  }

  static bool looks_like_frame(std::string_view s) {
    // " mem_cgroup_out_of_memory+0x36/0x50" or "out_of_memory.cold+0xa/0x7e"
    size_t p = s.find("out_of_memory");
    std::string_view rest = s.substr(p + 13);
    return text::starts_with(rest, "+0x") || text::starts_with(rest, ".cold+") || text::starts_with(rest, ".part") ||
           text::starts_with(rest, ".isra");
  }

  static std::string trigger_comm(std::string_view s) {
    size_t p = s.find(" invoked oom-killer");
    std::string_view head = s.substr(0, p);
    size_t cut = head.rfind("] ");
    if (size_t k = head.rfind("kernel: "); k != std::string_view::npos && (cut == std::string_view::npos || k + 6 > cut))
      cut = k + 6;
    if (cut != std::string_view::npos) head = head.substr(cut + 2);
    return std::string(text::trim(head).substr(0, 64));
  }

  void classify_prefix(std::string_view prefix) {
    if (text::contains(prefix, "Memory cgroup out of memory")) r_.memcg = true;
    else if (text::contains(prefix, "Out of memory")) r_.global = true;
  }

  void parse_summary(std::string_view s) {
    for (std::string_view item : text::split(s, ',')) {
      item = text::trim(item);
      if (item.empty()) continue;
      size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        if (item == "global_oom") r_.global = true;
        continue;
      }
      std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
      if (key == "constraint") {
        r_.constraint = std::string(value.substr(0, 40));
        if (value == "CONSTRAINT_MEMCG") r_.memcg = true;
        else if (value == "CONSTRAINT_NONE") r_.global = true;
      } else if (key == "oom_memcg") {
        r_.oom_memcg = std::string(value.substr(0, 512));
        r_.memcg = true;
      } else if (key == "task_memcg") {
        r_.task_memcg = std::string(value.substr(0, 512));
      } else if (key == "task") {
        r_.summary_task = std::string(value.substr(0, 64));
      } else if (key == "pid") {
        if (auto v = text::parse_i64(value)) r_.summary_pid = *v;
      }
    }
  }

  // Mem-Info's " slab_reclaimable:281405 slab_unreclaimable:1609330" and
  // "4194304 pages RAM" (pages, the whole machine).
  bool mem_info(std::string_view s) {
    if (auto v = text::after(s, "slab_unreclaimable:")) {
      if (auto n = text::parse_u64(*v); n && *n < kMaxPages) r_.slab_unreclaimable_pages = *n;
      return true;
    }
    if (size_t p = s.find(" pages RAM"); p != std::string_view::npos) {
      size_t b = p;
      while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9') --b;
      if (auto n = text::parse_u64(s.substr(b, p - b)); n && *n < kMaxPages) r_.ram_pages = *n;
      return true;
    }
    return false;
  }

  // "Normal: 1524*4kB (UME) 1020*8kB (UME) 1*16kB (M) 0*32kB ... = 14272kB": the free
  // blocks per size, summed over zones, and those of the request's size or larger.
  void free_blocks(std::string_view s) {
    r_.buddy = true;
    for (size_t p = s.find("kB"); p != std::string_view::npos; p = s.find("kB", p + 2)) {
      size_t star = s.rfind('*', p);
      if (star == std::string_view::npos || p - star > 8) continue;
      auto size = text::parse_u64(s.substr(star + 1));
      size_t b = star;
      while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9') --b;
      auto count = text::parse_u64(s.substr(b, star - b));
      if (!size || !count || *size == 0 || *count > (1ULL << 40)) continue;
      r_.free_kib += *count * *size;
      if (*size >= (4ULL << r_.order)) r_.free_at_order_kib += *count * *size;
    }
  }

  Fact fact_from_report(FactKind kind) const {
    Fact f = r_.base;
    f.kind = kind;
    f.family = Family::kernel;
    f.usage = r_.usage;
    f.limit = r_.limit;
    f.cgroup = !r_.oom_memcg.empty() ? r_.oom_memcg : !r_.limit_of.empty() ? r_.limit_of : r_.stats_cgroup;
    f.task_cgroup = !r_.task_memcg.empty() ? r_.task_memcg : r_.task_in;
    if (r_.memcg && !(r_.global && r_.oom_memcg.empty() && r_.constraint == "CONSTRAINT_NONE")) {
      f.layer = Layer::container_limit;  // refined by the cgroup path in the diagnosis
      f.detail = r_.constraint.empty() ? "memcg" : r_.constraint;
    } else if (r_.global) {
      f.layer = Layer::host_ram;
      f.detail = r_.constraint.empty() ? "global" : r_.constraint;
    } else {
      f.layer = Layer::unknown;
      f.detail = "unqualified";
    }
    if (r_.sysrq) f.detail += ",sysrq";
    if (!r_.memcg && r_.order > 0 && r_.buddy && r_.free_at_order_kib == 0 && r_.free_kib >= kFragmentedFreeKiB) {
      f.cause = Cause::fragmentation;
      f.detail += ",fragmented: order=" + std::to_string(r_.order) + " found no free block of " + std::to_string(4 << r_.order) +
                  " kB with " + units::format_bytes(r_.free_kib * 1024) + " free in smaller ones";
    }
    // A global OOM where the kernel's own unreclaimable slab holds half the
    // machine: kernel memory accumulated (a driver's or a subsystem's leak,
    // pipe buffers, dentries), not what processes hold.
    if (r_.global && !r_.memcg && r_.ram_pages && r_.slab_unreclaimable_pages * 2 >= r_.ram_pages && f.cause == Cause::unknown) {
      f.cause = Cause::leak_or_accumulation;
      f.detail += ",kernel slab: " + units::format_bytes(r_.slab_unreclaimable_pages * kPage) + " of " +
                  units::format_bytes(r_.ram_pages * kPage) + " RAM in unreclaimable kernel slab";
    }
    f.extra = r_.lines;
    return f;
  }

  void victim(const Line& line, std::string_view s, size_t p, FactSink& out) {
    std::string_view prefix = s.substr(0, p);
    std::string_view rest = s.substr(p + 14);
    // pid, optional ", UID n," (RHEL backports), "(comm)"
    rest = text::trim_left(rest);
    std::string_view after_pid;
    auto pid = text::parse_i64(rest, &after_pid);
    if (!pid) return;  // "Killed process" in prose
    size_t open_paren = after_pid.find('(');
    if (open_paren == std::string_view::npos || open_paren > 24) return;
    std::string_view body = after_pid.substr(open_paren + 1);
    size_t tv = body.find(" total-vm:");
    size_t close_paren = tv != std::string_view::npos ? body.rfind(')', tv) : body.substr(0, 80).rfind(')');
    if (close_paren == std::string_view::npos) return;
    std::string comm(body.substr(0, close_paren).substr(0, 64));

    // Reaper lines repeat the victim; they are not new kills.
    if (text::contains(prefix, "oom_reaper")) return;

    const bool same_report = r_.open && near(line);
    if (!same_report) {
      close(out);
      start(line);
    }
    classify_prefix(prefix);
    // The victim is held until the report ends: lines after it ("Task in ...
    // killed as a result of limit of ...", the summary on some kernels) still
    // say which limit was hit.
    Victim v;
    Fact head = make_fact(line, FactKind::kernel_oom_kill, Family::kernel);
    v.where = head.where;
    v.text = head.text;
    v.line = line.number;
    v.pid = *pid;
    v.process = comm;
    v.same_report = same_report;
    uint64_t rss = 0;
    bool any = false;
    for (std::string_view key : {"anon-rss:", "file-rss:", "shmem-rss:"}) {
      if (auto val = text::after(body, key)) {
        if (auto kb = text::parse_u64(*val)) rss += *kb * 1024, any = true;
      }
    }
    if (any) v.rss = rss;
    if (auto adj = text::after(body, "oom_score_adj:")) {
      if (auto val = text::parse_i64(*adj)) v.detail = ",oom_score_adj=" + std::to_string(*val);
    }
    r_.pending.push_back(std::move(v));
    ++r_.victims;
    r_.last_line = line.number;
    if (r_.pending.size() >= 64) emit_victims(out);  // a long group kill: bounded
  }

  // A task table row outside an open report: "[time] [  pid]" then seven
  // or more numbers (uid tgid total_vm rss [...] pgtables swapents
  // oom_score_adj, all of them figures) and the name.
  static bool bare_row(std::string_view s) {
    size_t b = s.find("] [");
    if (b == std::string_view::npos || b > 40) return false;
    size_t close = s.find(']', b + 3);
    if (close == std::string_view::npos) return false;
    std::string_view pid = text::trim(s.substr(b + 3, close - b - 3));
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string_view::npos) return false;
    size_t numbers = 0;
    std::string_view rest = s.substr(close + 1);
    for (size_t i = 0; i < rest.size();) {
      while (i < rest.size() && rest[i] == ' ') ++i;
      size_t w = i;
      while (i < rest.size() && rest[i] != ' ') ++i;
      std::string_view word = rest.substr(w, i - w);
      if (word.empty()) break;
      if (word.find_first_not_of("-0123456789") != std::string_view::npos) return i >= rest.size() && numbers >= 7;  // the name, last
      ++numbers;
    }
    return false;
  }

  // "[  25635]  1000 25635  2390112   784411 ... 0 java": counted by name.
  bool table_row(std::string_view s) {
    // The pid's bracket, after any "[ 7097.005236]" time prefix.
    size_t open = 0, close = std::string_view::npos;
    while ((open = s.find('[', open)) != std::string_view::npos && open < 120) {
      close = s.find(']', open);
      if (close == std::string_view::npos) return false;
      std::string_view pid = text::trim(s.substr(open + 1, close - open - 1));
      if (!pid.empty() && pid.find_first_not_of("0123456789") == std::string_view::npos) break;
      open = close;
      close = std::string_view::npos;
    }
    if (close == std::string_view::npos) return false;
    std::vector<std::string_view> w;
    std::string_view rest = s.substr(close + 1);
    for (size_t i = 0; i < rest.size() && w.size() < 16;) {
      while (i < rest.size() && rest[i] == ' ') ++i;
      size_t b = i;
      while (i < rest.size() && rest[i] != ' ') ++i;
      if (i > b) w.push_back(rest.substr(b, i - b));
    }
    if (w.size() < 6) return false;
    auto rss = text::parse_u64(w[3]);
    if (!rss || w[3].find_first_not_of("0123456789") != std::string_view::npos) return false;
    std::string_view name = w.back().substr(0, 64);
    for (Program& p : r_.table) {
      if (p.name == name) {
        ++p.tasks;
        p.rss_pages += *rss;
        return true;
      }
    }
    if (r_.table.size() < kTablePrograms) r_.table.push_back({std::string(name), 1, *rss});
    return true;
  }

  // What the task table says of the victim's program (see the top).
  void table_figures(Fact& f) const {
    const Program* own = nullptr;
    const Program* other = nullptr;
    for (const Program& p : r_.table) {
      // The kernel's comm is cut at 15 characters; the table's name is too.
      if (!f.process.empty() && p.name == std::string_view(f.process).substr(0, 15)) own = &p;
      else if (!other || p.rss_pages > other->rss_pages) other = &p;
    }
    if (!own) return;
    f.sequences = own->tasks;
    f.this_process = own->rss_pages * kPage;
    if (r_.global && !r_.memcg && r_.ram_pages) f.total = r_.ram_pages * kPage;  // the machine's RAM, from Mem-Info
    uint64_t others = 0;
    for (const Program& p : r_.table)
      if (&p != own) others += p.rss_pages;
    if (other) {
      f.other_processes = other->rss_pages * kPage;
      f.detail += ",others_total=" + std::to_string(others * kPage);
      f.detail += ",largest_other=" + other->name;
      // The program whose allocation invoked the killer, when it is that
      // other program: it was growing when the memory ran out.
      if (!r_.trigger.empty() && std::string_view(r_.trigger).substr(0, 15) == other->name) f.detail += ",invoked_by_it";
    }
  }

  void emit_victims(FactSink& out) {
    for (auto& v : r_.pending) {
      Fact f = fact_from_report(FactKind::kernel_oom_kill);
      f.where = v.where;
      f.text = v.text;
      if (!f.where.unix_us) f.where.unix_us = r_.unix_us;
      f.pid = v.pid;
      f.process = v.process;
      f.rss = v.rss;
      f.detail += v.detail;
      table_figures(f);
      f.strength = v.same_report ? 0.95f : (f.layer == Layer::unknown ? 0.7f : 0.85f);
      f.extra.clear();
      for (auto& l : r_.lines)
        if (l.first != v.line) f.extra.push_back(l);
      out.add(std::move(f));
    }
    r_.pending.clear();
  }

  void close(FactSink& out) {
    if (!r_.open) return;
    emit_victims(out);
    // A panic on the OOM (panic_on_oom=2, "compulsory", panics for a cgroup's
    // OOM too) with no header in view is still the kernel's OOM: its pool unqualified.
    if (r_.victims == 0 && (r_.memcg || r_.global || r_.panicked || !r_.summary_task.empty() || !r_.trigger.empty())) {
      // A report whose victim line we never saw (cut excerpt, or rate-limited).
      bool killed = r_.summary_pid.has_value() || !r_.task_in.empty();
      Fact f = fact_from_report(killed ? FactKind::kernel_oom_kill : FactKind::kernel_oom_event);
      if (r_.summary_pid) {
        f.pid = r_.summary_pid;
        f.process = r_.summary_task;
      } else {
        f.process = r_.trigger;
      }
      f.strength = (r_.memcg || r_.global) ? 0.85f : 0.6f;
      // The report's first line is the fact's own text: not again as a supporting line.
      std::erase_if(f.extra, [&](const auto& e) { return e.first == f.where.line; });
      out.add(std::move(f));
    }
    r_ = Report{};
  }
};

}  // namespace

const RecognizerEntry kKernelOomEntry{
    "kernel_oom", Family::kernel, kPatterns, [] { return std::unique_ptr<Recognizer>(new KernelOom); }};

}  // namespace aimem
