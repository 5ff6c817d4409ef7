// Pasted evidence that a terminal, `fold` or an issue form hard-wrapped at a
// fixed width: a kernel report whose cgroup path runs onto the next line, a
// vLLM error cut every 120 columns ("_initialize_k" / "v_caches"). Phrase
// matching cannot see "out of\nmemory" or a path cut in two, so the scanner
// rejoins such lines before it reads a small input (scanner.cc, finish()),
// and numbers facts by the rejoined lines (each shows its input line,
// Provenance::shown_line): nearness and order then read as in the plain log.
//
// The signature of a hard wrap is a width W that several lines reach exactly
// and none passes. A line of W columns is joined to the next unless the next
// reads as a record of its own: a timestamp, a bracket or a log level at its
// start, indentation, or the same opening as the line before it. Fixed-width
// tables (runs of column padding) are never joined, unless each row opens a
// timed record (the kernel's task table in a syslog or dmesg paste).
//
// Python's rich log handler wraps inside its own columns instead: a record
// with its source flush right ("batch_handler.py:574") continues on lines
// indented to its message's column. Those lines are rejoined first, and the
// source column dropped (unwrap.cc, unwrap_rich_columns).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aimem {

struct Unwrapped {
  std::string text;                // the input with wrapped lines joined
  std::vector<uint64_t> first_line;  // for each line of text, the 1-based input line it starts on
  uint64_t input_lines = 0;
  size_t joins = 0;
};

// Nothing when the input does not look hard-wrapped. Pure; linear in the input.
std::optional<Unwrapped> unwrap_hard_wrapped(std::string_view input);

}  // namespace aimem
