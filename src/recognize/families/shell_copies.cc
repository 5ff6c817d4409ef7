// Copies started at once by a shell loop that puts each in the background,
// as a reproduction or a load script is pasted beside a kill:
//
//   for (( i = 1; i <= 512; i++ )); do          for i in $(seq 1 64); do        for i in {1..32}; do
//       mc cp obj s3/bench/obj-$i &                 python worker.py $i &           ./client & done
//   done                                        done
//
// The loop's bound is the number of copies alive together (each command ends
// with a lone "&", not "&&"); a body without one runs them one after another
// and is not read. A count of 4 or more, as for the other worker counts
// (ml_phase.cc): a phase_serve fact with cause concurrency_batch, the count in
// `sequences`, so the diagnosis weighs it like "xargs -P N".
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"for\\s*\\(\\(.*<=?\\s*[0-9]+", kRegex | kContext},
    {"for [A-Za-z_]+ in (\\$\\(seq |`seq |\\{[0-9]+\\.\\.)", kRegex | kContext},
    {"&\\s*(done)?\\s*$", kRegex | kContext},
    {"wc -l", kContext},
    {"grep -c", kContext},
    {"^[ \t]*[0-9]+\\s*$", kRegex | kContext},  // a count on its own line
};

constexpr uint64_t kBodyLines = 3;

// The loop's count from its header, or nullopt: "(( i = 1; i <= 512; i++ ))",
// "(( i = 0; i < 8; i++ ))", "$(seq 1 64)", "`seq 64`", "{1..32}".
std::optional<uint64_t> loop_count(std::string_view s) {
  if (size_t p = s.find("(("); p != std::string_view::npos && text::contains(s, "for")) {
    std::string_view h = s.substr(p + 2);
    h = h.substr(0, h.find("))"));
    size_t lt = h.find('<');
    if (lt == std::string_view::npos) return std::nullopt;
    bool inclusive = lt + 1 < h.size() && h[lt + 1] == '=';
    std::string_view rest = text::trim_left(h.substr(lt + (inclusive ? 2 : 1)));
    auto n = text::parse_u64(rest);
    auto start = text::after(h, "=");
    auto from = start ? text::parse_u64(text::trim_left(*start)) : std::nullopt;
    if (!n || !from || *from > *n) return std::nullopt;
    return *n - *from + (inclusive ? 1 : 0);
  }
  for (std::string_view w : {"$(seq ", "`seq "}) {
    if (auto v = text::after(s, w)) {
      std::string_view rest;
      auto a = text::parse_u64(*v, &rest);
      if (!a) return std::nullopt;
      if (auto b = text::parse_u64(text::trim_left(rest)); b && *b >= *a) return *b - *a + 1;
      return a;
    }
  }
  if (auto v = text::after(s, "{")) {
    std::string_view rest;
    auto a = text::parse_u64(*v, &rest);
    if (a && text::starts_with(rest, "..")) {
      if (auto b = text::parse_u64(rest.substr(2)); b && *b >= *a) return *b - *a + 1;
    }
  }
  return std::nullopt;
}

// A command sent to the background: a lone "&" ending the line, or before
// "done" on a one-line loop ("... & done").
bool backgrounds(std::string_view s) {
  std::string_view t = text::trim(s);
  if (text::ends_with(t, "done")) t = text::trim(t.substr(0, t.size() - 4));
  if (text::ends_with(t, ";")) t = text::trim(t.substr(0, t.size() - 1));
  return t.size() >= 2 && t.back() == '&' && t[t.size() - 2] != '&' && t[t.size() - 2] != '>';
}

class ShellCopies final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (line.number == last_line_) return;  // a line several patterns matched
    last_line_ = line.number;
    if (text::contains(s, "for") && (text::contains(s, "((") || text::contains(s, " in "))) {
      if (auto n = loop_count(s); n && text::contains(s, "do")) {
        header_ = line.number;
        count_ = *n;
        // A one-line loop: "for i in {1..8}; do ./client & done".
        std::string_view body = s.substr(s.find("do") + 2);
        if (!text::trim(body).empty() && backgrounds(body)) emit(line, out);
        return;
      }
    }
    if (header_ && line.number > header_ && line.number <= header_ + kBodyLines && backgrounds(s)) emit(line, out);
    counted(line, out);
  }

 private:
  uint64_t header_ = 0;
  uint64_t count_ = 0;
  uint64_t last_line_ = 0;

  uint64_t count_line_ = 0;

  // "ps -C httpd --no-headers | wc -l", "pgrep -f worker.py | wc -l",
  // "pgrep -c cc1plus", "ps aux | grep -c '[g]unicorn'": the number on the
  // next line or two is how many copies of one program ran. Threads (ps -L,
  // -T, /proc/PID/task) are not copies.
  void counted(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    const bool counts = text::contains(s, "wc -l") || text::contains(s, "pgrep -c") || text::contains(s, "grep -c");
    // A process listing filtered to one program; a grep -c of a log counts lines, not processes.
    const bool listing = text::contains(s, "ps -") || text::contains(s, "ps aux") || text::contains(s, "ps ax");
    const bool named = text::contains(s, "ps -C ") || text::contains(s, "pgrep ") || (listing && text::contains(s, "| grep "));
    if (counts && named) {
      const bool threads = text::contains(s, "/task") || text::contains(s, " -L") || text::contains(s, " -T") || text::contains(s, "eLf") ||
                           text::contains(s, "thread");
      count_line_ = threads ? 0 : line.number;
      return;
    }
    if (!count_line_ || line.number > count_line_ + 2) return;
    std::string_view t = text::trim(s);
    auto n = text::parse_u64(t);
    if (!n || t.find_first_not_of("0123456789") != std::string_view::npos) return;
    count_line_ = 0;
    if (*n < 4 || *n > 100000) return;
    Fact f = make_fact(line, FactKind::phase_serve, Family::runtime);
    f.cause = Cause::concurrency_batch;
    f.strength = 0.7f;
    f.sequences = *n;
    f.detail = "copies of one program counted running";
    out.add(std::move(f));
  }

  void emit(const Line& line, FactSink& out) {
    header_ = 0;
    if (count_ < 4 || count_ > 100000) return;
    Fact f = make_fact(line, FactKind::phase_serve, Family::runtime);
    f.cause = Cause::concurrency_batch;
    f.strength = 0.8f;
    f.sequences = count_;
    f.detail = "copies started in the background by a shell loop";
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kShellCopiesEntry{"shell_copies", Family::runtime, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new ShellCopies); }};

}  // namespace aimem
