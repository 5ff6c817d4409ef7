// Who holds the device when a process fails for want of GPU memory: an
// earlier copy of the same service, left running, rather than a stranger.
//
// The holders, as the evidence lists them:
//   |    0   N/A  N/A     48377      C   VLLM::EngineCore          104277MiB |   nvidia-smi's process table
//   pid, process_name, used_memory [MiB]                                            --query-compute-apps, as CSV:
//   27, /usr/local/bin/python3.8, 14602 MiB                                          rows right after the header or
//   1920455, 128618 MiB                                                              the command (pid,used_memory)
//   ... Process 221904 has 61.37 GiB memory in use. ...                              PyTorch's OOM message (1.13+)
//
// A holder of 512 MiB or more is an earlier copy of the failing service when
//   1. the log says that PID went away before the failure: it exited, was
//      aborted, timed out or was killed ("WORKER TIMEOUT (pid:27)", gunicorn's
//      "worker abort. worker pid: 27", RETURNN's "proc python(221904)
//      exited", "$ kill -9 31877"), yet it still holds the device;
//   2. its command line (a ps row naming the PID, with its elapsed time or
//      start date) serves the model the failing start names ("$ vllm serve
//      Qwen/Qwen2.5-7B-Instruct" failing; "2318817 Wed Jun 11 17:21:09 2025
//      python3 -m vllm.entrypoints.openai.api_server --model
//      Qwen/Qwen2.5-7B-Instruct" holding);
//      or runs the very command typed at the prompt before the failure
//      ("$ python train.py --arch resnet50 ..." failing, then a prompt again
//      (the command ended), and a ps row of the holder running
//      "python train.py --arch resnet50 ..."): an earlier run of it;
//      (or typed again after the holder's row, before the failure);
//      or its ps row shows it dead or orphaned: a zombie ("<defunct>", STAT
//      Z) or a Python multiprocessing worker whose parent died (PPID 1);
//   3. it is a process of the engine that failed (nvidia-smi's or ps's
//      "VLLM::EngineCore" beside failure lines tagged "(EngineCore_0
//      pid=49102)") under another PID, and the evidence shows an earlier
//      instance stopped before the failure ("$ kill 48211", "Deleted vLLM
//      instance"): the stop left the engine's child behind.
// The failing process itself (the PID on the failure's own lines) is never
// its own holder, and a holder of the same engine with no stop before the
// failure stays a neighbour: two instances of one engine may share a device
// by design.
//
// Modelled on benoitc/gunicorn#2646, rwth-i6/returnn#1649,
// PrimeIntellect-ai/verifiers#85, llm-d-incubation/llm-d-fast-model-actuation#720
// and vllm-project/vllm issues on orphaned EngineCore processes.
//
// One context fact: runtime_setting with cause deployment_overlap, as
// rollout.cc gives; the diagnosis reads it where the device's other holders
// decided the failure (classify.cc, gpu_vram with other_process).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // Holders: nvidia-smi's process rows, the compute-apps CSV, PyTorch's list.
    {"^\\|\\s+[0-9]+\\s+.*[0-9]+\\s+(C|G|C\\+G|M|M\\+C)\\s+[^\\s].*[0-9]+MiB\\s*\\|", kRegex | kContext},
    {"--query-compute-apps=", kContext},
    {"^[ \t]*pid\\s*,", kRegex | kContext},
    {"^[ \t]*[0-9]+\\s*,\\s*([^,]*,\\s*)?[0-9]+\\s*MiB\\s*$", kRegex | kContext},
    {"Process [0-9]+ has [0-9]", kRegex | kContext},
    // A PID said to have gone away.
    {"\\b(exited|aborted|abort|timeout|terminated|died|defunct|zombie)\\b.*\\bpid\\b", kRegex | kCaseless | kContext},
    {"\\bpid\\b.*\\b(exited|aborted|timed out|terminated|died|defunct)\\b", kRegex | kCaseless | kContext},
    {"[a-z]\\([0-9]+\\),? (exited|died|terminated)", kRegex | kContext},
    // A stop: the shell's kill or docker stop, an instance deleted or stopped.
    {"^[ \t]*[$#]\\s*(sudo\\s+)?(kill|pkill|docker (stop|rm|kill)|systemctl (stop|restart))\\s", kRegex | kContext},
    {"\\b(deleted|stopped|stopping|shutting down)\\b.*\\b(instance|server|engine|worker|replica)", kRegex | kCaseless | kContext},
    // ps rows with an elapsed time or a start date, then the command.
    {"^[ \t]*[0-9]{2,}\\s+(([0-9]+|[A-Z][a-z+<]*|[a-z_][a-z0-9_]*)\\s+)*([0-9]+-)?[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?\\s+[^\\s]", kRegex | kContext},
    {"^[ \t]*[0-9]{2,}\\s+.*(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]{1,2} [0-9:]{8} [0-9]{4}\\s+[^\\s]", kRegex | kContext},
    // The failure, and the failing process's own tagged lines.
    {"out of memory|OutOfMemoryError|Free memory on device|CUDA_ERROR_OUT_OF_MEMORY", kRegex | kCaseless | kContext},
    {"\\([A-Za-z_][A-Za-z0-9_]* pid=[0-9]+[,)].*\\bERROR\\b", kRegex | kContext},
    // The model the failing start serves; the commands typed at a prompt.
    {"\\bserve\\s+[^\\s-]|--model[ =]|\\bmodel='|'model': '", kRegex | kContext},
    {"^[ \t]*[$#] +[a-z./]", kRegex | kContext},
};

constexpr size_t kMaxRows = 256, kMaxHolders = 32, kMaxNotes = 64, kRowChars = 256;
constexpr uint64_t kMinHeld = 512 * units::MiB;

struct Holder {
  int64_t pid;
  std::string name;
  uint64_t bytes;
  Fact fact;
};

// A PID and the line that named it: a ps row keeps its text (the command
// line read for the model), a statement that the PID went away needs none.
struct PidLine {
  int64_t pid;
  uint64_t line;
  std::string text;
};

bool digit(char c) { return c >= '0' && c <= '9'; }

std::optional<int64_t> pid_at(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && digit(s[n])) ++n;
  if (n == 0 || n > 9 || (n < s.size() && (s[n] == '.' || digit(s[n])))) return std::nullopt;
  return text::parse_i64(s.substr(0, n));
}

// The command of a line pasted with its shell prompt ("$ kill -9 31877",
// "# sudo docker stop api"): the text after the prompt and a leading sudo;
// empty when the line has no prompt.
std::string_view prompt_command(std::string_view s) {
  std::string_view t = text::trim_left(s);
  if (t.empty() || (t.front() != '$' && t.front() != '#')) return {};
  while (!t.empty() && (t.front() == '$' || t.front() == '#' || t.front() == ' ')) t.remove_prefix(1);
  if (text::starts_with(t, "sudo ")) t = text::trim_left(t.substr(5));
  return t;
}

// The PIDs a line names as PIDs: after "pid" (":", "=", " "), inside a
// program's parentheses ("python(221904)"), after the shell's kill.
std::vector<int64_t> named_pids(std::string_view s) {
  std::vector<int64_t> out;
  for (size_t at = text::ifind(s, "pid"); at != std::string_view::npos && out.size() < 8; at = text::ifind(s, "pid", at + 3)) {
    size_t i = at + 3;
    while (i < s.size() && (s[i] == ':' || s[i] == '=' || s[i] == ' ' || s[i] == '#')) ++i;
    if (auto p = pid_at(s.substr(i))) out.push_back(*p);
  }
  for (size_t i = 1; i < s.size() && out.size() < 8; ++i)
    if (s[i] == '(' && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))
      if (auto p = pid_at(s.substr(i + 1)); p && i + 1 < s.size()) {
        size_t j = i + 1;
        while (j < s.size() && digit(s[j])) ++j;
        if (j < s.size() && s[j] == ')') out.push_back(*p);
      }
  // The shell's kill: "$ kill -9 31877 31880".
  if (std::string_view c = prompt_command(s); text::starts_with(c, "kill "))
    for (auto w : platform::words(c.substr(5), 8))
      if (auto p = pid_at(w); p && out.size() < 8) out.push_back(*p);
  return out;
}

// "EngineCore" of "VLLM::EngineCore", "ray::RayWorkerWrapper.execute_method": an engine's process title.
std::string title_of(std::string_view name) {
  size_t at = name.rfind("::");
  if (at == std::string_view::npos) return {};
  std::string_view t = name.substr(at + 2);
  t = text::take_until(t, ". ");
  return t.size() >= 4 ? std::string(t) : std::string();
}

class DeviceHolders final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink&) override {
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    holders(line, s);
    if (text::icontains(s, "out of memory") || text::contains(s, "OutOfMemoryError") || text::contains(s, "Free memory on device") ||
        text::contains(s, "CUDA_ERROR_OUT_OF_MEMORY"))
      if (!first_failure_) first_failure_ = line.number;
    failing_tag(s);
    gone(line, s);
    stop(line, s);
    ps_row(line, s);
    model(line, s);
    if (std::string_view c = text::trim(prompt_command(s)); !c.empty() && prompts_.size() < kMaxNotes)
      prompts_.emplace_back(std::string(c.substr(0, kRowChars)), line.number);
  }

  void finish(FactSink& out) override {
    if (!first_failure_) return;
    for (Holder& h : holders_) {
      if (h.bytes < kMinHeld || is_failing(h.pid)) continue;
      std::string why = earlier_copy(h);
      if (why.empty()) continue;
      Fact f = std::move(h.fact);
      f.kind = FactKind::runtime_setting;
      f.cause = Cause::deployment_overlap;
      f.pid = h.pid;
      f.usage = h.bytes;
      f.process = h.name.substr(0, 96);
      f.detail = fmt::format("PID {}{} still holds {} of the device: {}", h.pid, h.name.empty() ? "" : " (" + f.process + ")",
                             units::format_bytes(h.bytes), why);
      out.add(std::move(f));
      return;
    }
  }

 private:
  std::vector<Holder> holders_;
  std::vector<PidLine> gone_, rows_;
  std::vector<uint64_t> stops_;
  std::vector<std::pair<std::string, uint64_t>> models_;
  std::vector<std::pair<std::string, uint64_t>> prompts_;  // commands typed at a prompt, and their lines
  std::vector<std::pair<std::string, int64_t>> failing_;  // the failing lines' tag and PID
  std::optional<uint64_t> first_failure_;
  uint64_t apps_line_ = 0;  // the compute-apps header or command, or its last row

  bool is_failing(int64_t pid) const {
    for (const auto& [tag, p] : failing_)
      if (p == pid) return true;
    return false;
  }

  void add_holder(const Line& line, int64_t pid, std::string name, uint64_t bytes) {
    for (Holder& h : holders_)
      if (h.pid == pid) {
        h.bytes = std::max(h.bytes, bytes);
        if (h.name.empty()) h.name = std::move(name);
        return;
      }
    if (holders_.size() >= kMaxHolders) return;
    holders_.push_back({pid, std::move(name), bytes, make_fact(line, FactKind::runtime_setting, Family::nvidia)});
  }

  void holders(const Line& line, std::string_view s) {
    std::string_view t = text::trim(s);
    // PyTorch: "Process N has X memory in use" (several in one message).
    for (size_t at = s.find("Process "); at != std::string_view::npos; at = s.find("Process ", at + 8)) {
      std::string_view rest = s.substr(at + 8);
      auto pid = pid_at(rest);
      auto has = text::after(rest, " has ");
      if (!pid || !has || has->data() - rest.data() > 16) continue;
      if (auto b = units::parse_log_size(*has)) add_holder(line, *pid, "", *b);
    }
    // nvidia-smi's table row: GPU [GI CI] PID Type Name... NNNMiB.
    if (!t.empty() && t.front() == '|' && text::ends_with(t, "|") && text::contains(t, "MiB")) {
      auto w = platform::words(t.substr(1, t.size() - 2), 16);
      if (w.size() >= 4 && text::ends_with(w.back(), "MiB"))
        for (size_t k = 1; k + 1 < w.size(); ++k)
          if (w[k] == "C" || w[k] == "G" || w[k] == "C+G" || w[k] == "M" || w[k] == "M+C") {
            auto pid = pid_at(w[k - 1]);
            auto mib = text::parse_u64(w.back());
            std::string name;
            for (size_t j = k + 1; j + 1 < w.size(); ++j) name += (name.empty() ? "" : " ") + std::string(w[j]);
            if (pid && mib) add_holder(line, *pid, name, *mib * units::MiB);
            break;
          }
      return;
    }
    // The compute-apps CSV: rows right after its header or command.
    if (text::contains(s, "--query-compute-apps=") || (text::istarts_with(t, "pid") && text::contains(t, ","))) {
      apps_line_ = line.number;
      return;
    }
    if (apps_line_ && line.number == apps_line_ + 1 && text::ends_with(t, "MiB")) {
      auto cells = text::split(t, ',');
      if (cells.size() >= 2 && cells.size() <= 3) {
        auto pid = pid_at(text::trim(cells.front()));
        auto mib = text::parse_u64(text::trim(cells.back()));
        if (pid && mib) {
          add_holder(line, *pid, cells.size() == 3 ? std::string(text::trim(cells[1]).substr(0, 128)) : "", *mib * units::MiB);
          apps_line_ = line.number;
        }
      }
    }
  }

  void failing_tag(std::string_view s) {
    // "(EngineCore_0 pid=49102) ERROR ...": the engine's process and its PID.
    auto open = s.find('(');
    auto eq = s.find(" pid=");
    if (open == std::string_view::npos || eq == std::string_view::npos || eq < open || !text::contains(s, "ERROR")) return;
    auto pid = pid_at(s.substr(eq + 5));
    if (!pid || failing_.size() >= 8) return;
    std::string tag(s.substr(open + 1, eq - open - 1));
    for (const auto& [t, p] : failing_)
      if (p == *pid) return;
    failing_.emplace_back(tag.substr(0, 64), *pid);
  }

  void gone(const Line& line, std::string_view s) {
    static constexpr std::string_view kWords[] = {"exited", "abort", "timeout", "timed out", "terminated", "died", "defunct", "zombie"};
    bool said = std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return text::icontains(s, w); });
    if (!said && !text::starts_with(prompt_command(s), "kill ")) return;
    for (int64_t p : named_pids(s))
      if (gone_.size() < kMaxNotes) gone_.push_back({p, line.number, {}});
  }

  void stop(const Line& line, std::string_view s) {
    std::string_view c = prompt_command(s);
    bool shell = text::contains(c, "kill") || text::contains(c, "docker stop") || text::contains(c, "docker rm") ||
                 text::contains(c, "systemctl stop") || text::contains(c, "systemctl restart");
    bool said = (text::icontains(s, "deleted") || text::icontains(s, "stopped") || text::icontains(s, "stopping") ||
                 text::icontains(s, "shutting down")) &&
                (text::icontains(s, "instance") || text::icontains(s, "server") || text::icontains(s, "engine") ||
                 text::icontains(s, "worker") || text::icontains(s, "replica"));
    if ((shell || said) && stops_.size() < kMaxNotes) stops_.push_back(line.number);
  }

  void ps_row(const Line& line, std::string_view s) {
    std::string_view t = text::trim_left(s);
    auto pid = pid_at(t);
    size_t n = t.find_first_not_of("0123456789");
    if (!pid || rows_.size() >= kMaxRows || n == std::string_view::npos || (t[n] != ' ' && t[n] != '\t')) return;
    rows_.push_back({*pid, line.number, std::string(t.substr(0, kRowChars))});
  }

  void model(const Line& line, std::string_view s) {
    if (models_.size() >= 16) return;
    for (std::string_view label : {"serve ", "--model ", "--model=", "model='", "'model': '"}) {
      auto v = text::after(s, label);
      if (!v) continue;
      std::string_view id = text::take_until(text::trim_left(*v), " '\",}");
      // A model's id: a hub name or a path ("Qwen/Qwen2.5-7B-Instruct", "/models/x.gguf").
      if (id.size() >= 5 && id.size() <= 160 && text::contains(id, "/")) models_.emplace_back(std::string(id), line.number);
    }
  }

  bool row_at(uint64_t line) const {
    return std::any_of(rows_.begin(), rows_.end(), [&](const PidLine& r) { return r.line == line; });
  }

  const PidLine* row_of(int64_t pid) const {
    for (const PidLine& r : rows_)
      if (r.pid == pid) return &r;
    return nullptr;
  }

  std::string earlier_copy(const Holder& h) const {
    // 1. The log says it went away before the failure.
    for (const PidLine& g : gone_)
      if (g.pid == h.pid && g.line < *first_failure_)
        return fmt::format("the log says it went away (line {}) before the failure (line {}), so it is a copy left over", g.line,
                           *first_failure_);
    const PidLine* row = row_of(h.pid);
    // 2. Its command line serves the model the failing start names (a ps
    // row of another holder is no start: two rows of one server name one model).
    if (row)
      for (const auto& [id, at] : models_)
        if (at != row->line && !row_at(at) && text::contains(row->text, id))
          return fmt::format("its command line (line {}) serves {}, the model the failing start names (line {})", row->line,
                             id.substr(0, 96), at);
    // 2b. It runs the command typed before the failure, which has ended
    // since (a prompt came back after the failure, before the row), or the
    // command typed after the row and before the failure (run again while
    // the earlier run was alive).
    if (row) {
      bool returned = std::any_of(prompts_.begin(), prompts_.end(),
                                  [&](const auto& p) { return p.second > *first_failure_ && p.second < row->line; });
      for (const auto& [cmd, at] : prompts_) {
        if (cmd.size() < 12 || !text::contains(cmd, " ") || !text::contains(row->text, cmd) || at >= *first_failure_) continue;
        if (returned)
          return fmt::format("its command line (line {}) is the command typed before the failure (line {}), which had ended: an "
                             "earlier run of it",
                             row->line, at);
        if (row->line < at)
          return fmt::format("its command line (line {}) is the command typed again after it (line {}) that then failed: an "
                             "earlier run of it, still alive",
                             row->line, at);
      }
      // 2c. Dead or orphaned: a zombie (STAT Z, "<defunct>") whose memory
      // the driver has not given back, or a Python worker (multiprocessing's
      // spawn_main) whose parent died (PPID 1): left by an earlier run.
      auto w = platform::words(row->text, 4);
      const bool zombie_stat = w.size() >= 3 && w[2].size() <= 5 && !w[2].empty() && w[2][0] == 'Z' &&
                               w[2].find_first_not_of("Z<NLsl+") == std::string_view::npos;  // ps's STAT flags after Z
      if (text::contains(row->text, "<defunct>") || zombie_stat)
        return fmt::format("its ps row (line {}) shows it a zombie (exited, not reaped), still holding the device: left by an "
                           "earlier run",
                           row->line);
      if (w.size() >= 2 && w[1] == "1" && (text::contains(row->text, "--multiprocessing-fork") || text::contains(row->text, "spawn_main")))
        return fmt::format("its ps row (line {}) shows a Python worker whose parent died (PPID 1): an orphan of an earlier run",
                           row->line);
    }
    // 3. A process of the failing engine, left behind by an earlier stop.
    std::string title = title_of(h.name);
    if (title.empty() && row) title = title_of(row->text);
    if (title.empty()) return {};
    bool same_engine = std::any_of(failing_.begin(), failing_.end(),
                                   [&](const auto& f) { return text::starts_with(f.first, title) && f.second != h.pid; });
    bool stopped = std::any_of(stops_.begin(), stops_.end(), [&](uint64_t at) { return at < *first_failure_; });
    if (same_engine && stopped)
      return fmt::format("it is a process of the engine that failed ({}) under another PID, and an earlier instance was stopped "
                         "before the failure",
                         title.substr(0, 64));
    return {};
  }
};

}  // namespace

const RecognizerEntry kDeviceHoldersEntry{"device_holders", Family::nvidia, kPatterns,
                                          [] { return std::unique_ptr<Recognizer>(new DeviceHolders); }};

}  // namespace aimem
