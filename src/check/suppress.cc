#include "check/suppress.h"

#include <fmt/format.h>

#include "core/text.h"

namespace aimem::check {
namespace {

bool comment_only(std::string_view line) {
  line = text::trim(line);
  return !line.empty() && (line[0] == '#' || line[0] == ';');
}

bool document_separator(std::string_view line) {
  return (text::starts_with(line, "---") || text::starts_with(line, "...")) &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
}

}  // namespace

std::optional<std::string> Suppressions::covers(const Finding& f) const {
  for (const Suppression& s : items) {
    if (f.at.line < s.first || f.at.line > s.last) continue;
    for (const std::string& r : s.rules)
      if (r == f.rule) return s.reason;
  }
  return std::nullopt;
}

Suppressions parse_suppressions(const std::string& text, const std::string& file) {
  Suppressions out;
  const std::vector<std::string_view> lines = text::split(text, '\n');
  // Where each line's document starts and ends, and whether the line is in
  // the document's leading comment block.
  std::vector<int> doc_end(lines.size() + 2, int(lines.size()));
  std::vector<bool> header(lines.size() + 2, false);
  {
    size_t start = 0;
    bool in_header = true;
    for (size_t i = 0; i <= lines.size(); ++i) {
      bool sep = i == lines.size() || document_separator(lines[i]);
      if (sep) {
        for (size_t k = start; k < i; ++k) doc_end[k] = int(i);  // 1-based last line = i
        start = i + 1;
        in_header = true;
        continue;
      }
      std::string_view t = text::trim(lines[i]);
      if (!t.empty() && !comment_only(t) && t[0] != '%') in_header = false;
      header[i] = in_header && comment_only(t);
    }
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t hash = line.find_first_of("#;");
    if (hash == std::string_view::npos) continue;
    size_t tag = line.find("aimem:", hash);
    if (tag == std::string_view::npos) continue;
    std::string_view rest = text::trim(line.substr(tag + 6));
    if (!text::starts_with(rest, "ignore")) continue;
    rest = text::trim(rest.substr(6));
    const int line_no = int(i) + 1;
    const Loc at{file, line_no, int(tag) + 1};
    std::string_view ids = rest, reason;
    size_t because = rest.find(" because");
    if (text::starts_with(rest, "because")) because = 0;
    if (because != std::string_view::npos) {
      ids = text::trim(rest.substr(0, because));
      reason = text::trim(rest.substr(because + (because == 0 ? 7 : 8)));
    }
    Suppression s;
    s.line = line_no;
    s.reason = std::string(reason);
    for (std::string_view id : text::split(ids, ','))
      for (std::string_view word : text::split(text::trim(id), ' '))
        if (!text::trim(word).empty()) s.rules.emplace_back(text::trim(word));
    const Rule* invalid = find_rule("invalid-suppression");
    auto problem = [&](const std::string& msg) {
      out.problems.push_back(Finding{invalid->id, invalid->severity, at, msg,
                                     "write it as '# aimem: ignore RULE-ID because REASON' (aimem check --help lists the rules)", ""});
    };
    if (s.rules.empty()) {
      problem("suppression names no rule");
      continue;
    }
    bool ok = true;
    for (const std::string& r : s.rules)
      if (!find_rule(r) || r == "invalid-suppression") {
        problem(fmt::format("suppression names an unknown rule '{}'", r));
        ok = false;
      }
    if (s.reason.empty()) {
      problem(fmt::format("suppression of {} gives no reason ('because ...'); it suppresses nothing", fmt::join(s.rules, ",")));
      ok = false;
    }
    if (!ok) continue;
    if (header[i]) {
      s.first = line_no;
      s.last = doc_end[i];
    } else if (comment_only(line)) {
      size_t next = i + 1;  // the next line that is not a comment
      while (next < lines.size() && (comment_only(lines[next]) || text::trim(lines[next]).empty())) ++next;
      s.first = s.last = int(next) + 1;
    } else {
      s.first = s.last = line_no;
    }
    out.items.push_back(std::move(s));
  }
  return out;
}

}  // namespace aimem::check
