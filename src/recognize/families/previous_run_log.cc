// A command that prints the log of a run that has ended, pasted with its
// output under it, often below the status that says how the run ended:
//
//   $ kubectl -n llm describe pod vllm-0        ...  Reason: OOMKilled
//   $ kubectl -n llm logs vllm-0 --previous | tail -4       (also -p, oc logs)
//   Loading safetensors checkpoint shards:  50% Completed | 2/4 [01:02<01:02, 31.1s/it]
//   $ docker logs --tail 20 worker-3                         (docker compose logs)
//   Container logs:                                          (a platform's error page: Hugging Face
//                                                             Spaces prints the status, then the log)
//
// The output is what the run printed before it ended, so its last lines are
// what it was doing when it was killed, though they stand after the kill's
// report in the paste. One platform fact (detail kPreviousRunLog) per such
// command, on its line; `count` holds the section's last line (the line before
// the next command; unset when the paste ends first).
#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless | kContext;

constexpr Pattern kPatterns[] = {
    // The log command itself.
    {"\\b(kubectl|oc)\\b.*\\blogs\\b.*(--previous|\\s-p\\b)", kCi},
    {"\\bdocker(-compose| compose)?\\s+(container\\s+)?logs\\b", kCi},
    // Any command with its prompt: the end of the section.
    {"^\\$ ", kRegex | kContext},  // not "^\\s*": vectorscan's set then lost this pattern's lines
    {"^\\S+@[^\\s:]+:\\S*[$#] ", kRegex | kContext},
    // A platform's error page that shows the status first and the run's log
    // under a heading (Hugging Face Spaces: "Runtime error", "Memory limit
    // exceeded (46Gi)", then "Container logs:").
    {"^[ \t]*Container logs:[ \t]*$", kRegex | kContext},
};

class PreviousRunLog final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::trim(s) == "Container logs:") {
      close(line.number, out);
      open(line);  // a section of the log opens here, not a file
      return;
    }
    if (!guards::is_command_line(s)) return;
    close(line.number, out);
    const bool kube = (text::contains(s, "kubectl") || text::contains(s, "oc ")) && text::contains(s, " logs") &&
                      (text::contains(s, "--previous") || text::contains(s, " -p"));
    const bool docker = text::contains(s, "docker") && text::contains(s, " logs");
    if (!kube && !docker) return;
    open(line);
  }

  void finish(FactSink& out) override {
    if (open_) out.add(std::move(*open_));
    open_.reset();
  }

 private:
  // A section of a run's log starts on this line.
  void open(const Line& line) {
    open_ = make_fact(line, FactKind::platform, Family::cli);
    open_->detail = std::string(kPreviousRunLog);
  }

  void close(uint64_t next_command, FactSink& out) {
    if (!open_) return;
    if (next_command > open_->where.line + 1) {
      open_->count = next_command - 1;
      out.add(std::move(*open_));
    }
    open_.reset();
  }

  std::optional<Fact> open_;
};

}  // namespace

const RecognizerEntry kPreviousRunLogEntry{
    "previous_run_log", Family::cli, kPatterns, [] { return std::unique_ptr<Recognizer>(new PreviousRunLog); }};

}  // namespace aimem
