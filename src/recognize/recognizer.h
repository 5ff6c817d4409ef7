// A recognizer turns the lines of one family of evidence (kernel OOM reports,
// PyTorch errors, kubectl output, ...) into facts. Each declares the patterns
// that can start a match; one multi-pattern pass (vectorscan) over the input
// finds candidate lines and only those reach the recognizer, so a recognizer
// never sees the bulk of a large log.
//
// Adding a recognizer: one file under families/, one row in registry.cc, a
// test with inline lines, and a fixture if the family has a real example.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "evidence/fact.h"
#include "evidence/line.h"
#include "evidence/sink.h"

namespace aimem {

// Pattern flags.
inline constexpr unsigned kLiteral = 0;     // the expression is plain text
inline constexpr unsigned kRegex = 1u << 0; // the expression is a vectorscan regex (PCRE subset)
inline constexpr unsigned kCaseless = 1u << 1;
// The pattern only ever gives context (settings, tables, sizes), never starts a
// failure; such patterns need no gate word (see gate.h).
inline constexpr unsigned kContext = 1u << 2;
// The pattern can start a failure, but only as one line of a report whose
// other lines carry a gate word (the kernel's "memory: usage" line of an OOM
// report, vLLM's negative KV budget before its ValueError).
inline constexpr unsigned kCompanion = 1u << 3;
// A wording other programs print too ("failed to allocate", "MemoryError"): a
// match does not claim the line for the family, so the generic reader
// (families/generic_alloc.cc) still reads it when the family finds nothing.
// Every other failure pattern claims its line (PatternSet::bits).
inline constexpr unsigned kShared = 1u << 4;

struct Pattern {
  const char* expr;
  unsigned flags = kLiteral;
};

class Recognizer {
 public:
  virtual ~Recognizer() = default;
  virtual void on_line(const Line& line, FactSink& out) = 0;
  // End of the input: flush anything held back (a kernel report without victim).
  virtual void finish(FactSink& out) {}
};

struct RecognizerEntry {
  std::string_view name;
  Family family;
  std::span<const Pattern> patterns;
  std::unique_ptr<Recognizer> (*make)();
};

// The registry: every recognizer, in one table (registry.cc).
std::span<const RecognizerEntry* const> all_recognizers();

// The key of a line for RepeatFilter: its first 200 bytes without digits
// (pids, sizes and hex ids vary between repeats of one failure; the words do not).
inline std::string repeat_key(std::string_view s) {
  std::string k;
  for (char c : s.substr(0, 200))
    if (!(c >= '0' && c <= '9')) k += c;
  return k;
}

// "The same message again": a traceback or a retry loop repeats one failure
// line; recognizers count it once. True when `key` was the last key seen and
// within `window` lines of it; every call records the key.
class RepeatFilter {
 public:
  explicit RepeatFilter(uint64_t window) : window_(window) {}
  bool repeated(std::string_view key, uint64_t line) {
    bool same = seen_ && key == last_key_ && line <= last_line_ + window_;
    seen_ = true;
    last_key_.assign(key.substr(0, 200));
    last_line_ = line;
    return same;
  }

 private:
  uint64_t window_;
  bool seen_ = false;
  std::string last_key_;
  uint64_t last_line_ = 0;
};

}  // namespace aimem
