// Code in the evidence that allocates without end: the reproduction people
// paste beside a kill (a memory hog run to test a limit, a loop that keeps
// every item). Whatever limit it meets, it fills it; more memory only delays
// the kill. The forms, as they are pasted (a file's lines, a one-liner, or a
// command embedded in a manifest with "\n" in one JSON string):
//
//   x = []                                      Python: an endless loop, and an
//   while True:                                 allocation in its body (the next
//       x.append(' ' * 1048576)                 few lines, or the same line)
//   "command": ["python", "-c", "x = []\nwhile True:\n    x.append(' ' * 1048576)"]
//   while (1) { p = malloc(1 << 20); memset(p, 1, 1 << 20); }        C
//   for (;;) { v.push_back(new char[4096]); }                        C++
//   while (true) { leak.push(Buffer.alloc(1e6)); }                   JavaScript
//   while (true) { list.add(new byte[1024 * 1024]); }                Java
//   while true; do var+=$chunk; done                                 shell (also "while :; do")
//   sh -c "tail /dev/zero"                      tail keeps its one endless line
//
// A loop with a break or a return in its body is bounded: not read. The fact
// is context (memory_usage with detail "growing: ..."), as a series that only
// grew is: the diagnosis reads it as accumulation, weaker than a measured
// series.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"while\\s*\\(?\\s*(True|true|1)\\s*\\)?\\s*([:{]|;\\s*do)", kRegex | kContext},
    {"while :;\\s*do", kRegex | kContext},
    {"for\\s*\\(\\s*;\\s*;\\s*\\)", kRegex | kContext},
    {"tail /dev/zero", kContext},
    {"\\b(break|return|sleep)\\b", kRegex | kContext},
    // The body's allocations: read only within kBodyLines of a loop header.
    {"\\.(append|push|push_back|add|extend)\\(|malloc\\(|calloc\\(|new (byte|char|int|long)\\[|bytearray\\(|Buffer\\.alloc|\\+= ?[$\\[]",
     kRegex | kContext},
};

constexpr uint64_t kBodyLines = 4;

bool allocates(std::string_view s) {
  for (std::string_view w : {".append(", ".push(", ".push_back(", ".add(", ".extend(", "malloc(", "calloc(", "new byte[",
                             "new char[", "new int[", "new long[", "bytearray(", "Buffer.alloc", "+=$", "+= [", "+=["})
    if (text::contains(s, w)) return true;
  return false;
}

bool bounded(std::string_view s) { return text::contains(s, "break") || text::contains(s, "return") || text::contains(s, "sleep"); }

// Where an endless loop's header starts on the line, or npos.
size_t loop_header(std::string_view s) {
  for (std::string_view w : {"while True", "while true", "while(true)", "while (true)", "while 1:", "while(1)", "while (1)", "while :;",
                             "for(;;)", "for (;;)", "for ( ; ; )"})
    if (size_t p = s.find(w); p != std::string_view::npos) return p;
  return std::string_view::npos;
}

class EndlessAlloc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (said_) return;
    std::string_view s = line.text;
    if (pending_ && (line.source != header_source_ || line.number > header_ + kBodyLines)) flush(out);
    if (said_) return;
    if (s.find("tail /dev/zero") != std::string_view::npos) {
      pending_.reset();
      emit(line.source, line.number, line.text, "tail /dev/zero", out);
      return;
    }
    if (size_t p = loop_header(s); p != std::string_view::npos) {
      header_ = line.number;
      header_source_ = line.source;
      pending_.reset();
      std::string_view body = s.substr(p);
      if (bounded(body)) header_ = 0;
      else if (allocates(body)) pend(line);
      return;
    }
    if (!header_ || line.source != header_source_ || line.number > header_ + kBodyLines) return;
    if (bounded(s)) {
      header_ = 0;
      pending_.reset();
      return;
    }
    if (!pending_ && allocates(s)) pend(line);
  }

  void finish(FactSink& out) override {
    if (pending_) flush(out);
  }

 private:
  struct Pending {
    uint64_t number;
    std::string text;
  };
  uint64_t header_ = 0;
  const SourceContext* header_source_ = nullptr;
  std::optional<Pending> pending_;  // an allocation in the body of the loop at header_, until the body is past without a break
  bool said_ = false;

  void pend(const Line& line) { pending_ = Pending{line.number, std::string(line.text.substr(0, 512))}; }

  void flush(FactSink& out) {
    Pending p = std::move(*pending_);
    pending_.reset();
    header_ = 0;
    emit(header_source_, p.number, p.text, "an endless loop", out);
  }

  void emit(const SourceContext* source, uint64_t number, std::string_view text, std::string_view what, FactSink& out) {
    said_ = true;
    Line at{text, number, {}, source};
    Fact f = make_fact(at, FactKind::memory_usage, Family::runtime);
    f.strength = 0.6f;
    f.detail = fmt::format("growing: the pasted code allocates in {} (line {})", what, number);
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kEndlessAllocEntry{"endless_alloc", Family::runtime, kPatterns,
                                         [] { return std::unique_ptr<Recognizer>(new EndlessAlloc); }};

}  // namespace aimem
