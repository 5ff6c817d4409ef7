#include "recognize/guards.h"

#include "core/text.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace aimem::guards {
namespace {

constexpr std::string_view kAdviceWords[] = {
    "if you ", "if the ", "if it ", "instead of", "rather than", "when you", "e.g.", "for example", "such as",
    "consider ", "hint:", "tip:", "note:", "means ", "avoid ", "to prevent", "prevents ", "instead", "guard",
    "would ", "might ", "could ", "in case of", "whenever", "help:", "usage:", "example:", "docs", "see https",
};

// The quotes around pos..pos+len, as [open, close], when the text there is
// quoted as a mention would quote it.
std::optional<std::pair<size_t, size_t>> quoted_span(std::string_view line, size_t pos, size_t len) {
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
    return std::pair{open, close};
  }
  return std::nullopt;
}

}  // namespace

bool is_command_line(std::string_view line) {
  std::string_view t = text::trim(line);
  // Not "# " nor "> " alone: hs_err frames its report with "# ", and pasted
  // logs are often quoted with "> ".
  if (text::starts_with(t, "$ ")) return true;
  if (text::starts_with(t, "PS ") && t.find("> ") != std::string_view::npos && t.find("> ") < 80) return true;
  // "[(env) ]user@host:path$ " or "...# ": the prompt ends at the first "$ " / "# "
  // after a user@host: within the first 120 bytes.
  size_t at = t.find('@');
  if (at == std::string_view::npos || at > 80) return false;
  size_t colon = t.find(':', at);
  if (colon == std::string_view::npos || colon > 120) return false;
  for (size_t i = colon; i + 1 < t.size() && i < 160; ++i) {
    if ((t[i] == '$' || t[i] == '#') && t[i + 1] == ' ') {
      // user and host are one word each: no blanks between the start of the
      // prompt's user and the prompt sign, apart from a "(venv) " prefix.
      std::string_view head = t.substr(0, i);
      if (text::starts_with(head, "(")) {
        size_t close = head.find(") ");
        if (close == std::string_view::npos) return false;
        head = head.substr(close + 2);
      }
      return head.find(' ') == std::string_view::npos;
    }
  }
  return false;
}

bool is_mlock_refusal(std::string_view line) { return text::icontains(line, "mlock"); }

bool is_optional_refusal(std::string_view line) {
  if (is_mlock_refusal(line) || text::contains(line, "MAP_HUGETLB") || text::icontains(line, "huge pages disabled")) return true;
  // The level as loggers print it: "DEBUG:  ", " DEBUG ", "[DEBUG]", "level=debug", "TRACE".
  for (std::string_view level : {"DEBUG:", " DEBUG ", "[DEBUG]", "level=debug", "level=trace", " TRACE ", "[TRACE]", "TRACE:"})
    if (text::contains(line, level)) return true;
  return false;
}

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
    // Near the phrase: an ellipsis in a stack frame's path further along
    // (a paste shortened by hand) does not stand for the message's numbers.
    constexpr size_t kNear = 160;
    const size_t from = std::max(open + 1, pos > kNear ? pos - kNear : 0), to = std::min(close, pos + len + kNear);
    std::string_view quoted = line.substr(from, to - from);
    if (text::contains(quoted, "...") || text::contains(quoted, "\u2026") || text::contains(quoted, "<N>") ||
        text::contains(quoted, "XX")) return true;
  }
  return false;
}

bool is_mention(std::string_view line, size_t pos, size_t len) {
  if (is_advice_line(line)) return true;
  auto span = quoted_span(line, pos, len);
  if (!span) return false;
  if (quoted_placeholder(line, pos, len)) return true;
  // Advice around the quote makes it a mention; advice inside it is the
  // message's own (PyTorch's "... to avoid fragmentation" in a wrapper's
  // "Worker failed with error 'CUDA out of memory. Tried to allocate ...'").
  // Around it: the words next to the quote, not a stack dump further along
  // the line (a C++ frame's "...Guard" is no advice).
  constexpr size_t kAround = 80;
  const std::string_view before = line.substr(span->first > kAround ? span->first - kAround : 0, std::min(span->first, kAround)),
                         after = line.substr(span->second + 1, kAround);
  for (std::string_view w : kAdviceWords)
    if (text::icontains(before, w) || text::icontains(after, w)) return true;
  return false;
}

bool names_pinned_host_memory(std::string_view line) {
  // "..., falling back to pinned system memory" (Triton's CUDA pool) names
  // where the buffer goes next, not what failed: that occurrence is skipped.
  const std::string lower = text::lower(line.substr(0, 4096));
  for (std::string_view w : {"pinned", "page-locked", "page locked", "cudahostalloc", "cudamallochost", "hiphostmalloc"}) {
    for (size_t p = lower.find(w); p != std::string::npos; p = lower.find(w, p + 1)) {
      std::string_view before = std::string_view(lower).substr(0, p);
      if (before.ends_with("back to ")) continue;
      return true;
    }
  }
  return false;
}

bool names_device_memory(std::string_view line) {
  const std::string lower = text::lower(line.substr(0, 4096));
  for (std::string_view w : {"of device memory", "device memory (out of memory)", "of gpu memory", "gpu memory exhausted", "of vram"})
    if (lower.find(w) != std::string::npos) return !names_pinned_host_memory(line);
  return false;
}

}  // namespace aimem::guards
