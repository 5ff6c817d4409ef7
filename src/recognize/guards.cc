#include "recognize/guards.h"

#include "core/text.h"

namespace aimem::guards {
namespace {

constexpr std::string_view kAdviceWords[] = {
    "if you ", "if the ", "if it ", "instead of", "rather than", "when you", "e.g.", "for example", "such as",
    "consider ", "hint:", "tip:", "note:", "means ", "avoid ", "to prevent", "prevents ", "instead", "guard",
    "would ", "might ", "could ", "in case of", "whenever", "help:", "usage:", "example:", "docs", "see https",
};

bool inside_quotes(std::string_view line, size_t pos, size_t len) {
  for (char q : {'\'', '"', '`'}) {
    size_t open = line.rfind(q, pos == 0 ? 0 : pos - 1);
    if (open == std::string_view::npos || open >= pos) continue;
    size_t close = line.find(q, pos + len);
    if (close == std::string_view::npos) continue;
    // A quote that opens a JSON value or a Python repr of an exception
    // ("OutOfMemoryError('CUDA out of memory...") is a report, not a mention.
    std::string_view before = line.substr(0, open);
    while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
    if (!before.empty() && (before.back() == '(' || before.back() == ':' || before.back() == '=')) continue;
    return true;
  }
  return false;
}

}  // namespace

bool is_advice_line(std::string_view line) {
  std::string_view t = text::trim(line);
  for (std::string_view p : {"hint:", "tip:", "note:", "help:", "usage:", "example:", "consider ", "if you ", "# "})
    if (text::istarts_with(t, p)) return true;
  return false;
}

// A quoted message with a placeholder ("'CUDA out of memory. Tried to allocate
// ...'") is documentation quoting the message, whatever surrounds it: a
// program prints its numbers, never an ellipsis in their place.
bool quoted_placeholder(std::string_view line, size_t pos, size_t len) {
  for (char q : {'\'', '"', '`'}) {
    size_t open = line.rfind(q, pos == 0 ? 0 : pos - 1);
    if (open == std::string_view::npos || open >= pos) continue;
    size_t close = line.find(q, pos + len);
    if (close == std::string_view::npos) continue;
    std::string_view quoted = line.substr(open + 1, close - open - 1);
    if (text::contains(quoted, "...") || text::contains(quoted, "\u2026") || text::contains(quoted, "<N>") ||
        text::contains(quoted, "XX")) return true;
  }
  return false;
}

bool is_mention(std::string_view line, size_t pos, size_t len) {
  if (is_advice_line(line)) return true;
  if (!inside_quotes(line, pos, len)) return false;
  if (quoted_placeholder(line, pos, len)) return true;
  for (std::string_view w : kAdviceWords)
    if (text::icontains(line, w)) return true;
  return false;
}

}  // namespace aimem::guards
