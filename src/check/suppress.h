// Inline suppressions in deployment files:
//
//   # aimem: ignore RULE-ID[,RULE-ID...] because REASON
//
// A suppression applies to findings on its own line (a trailing comment) and
// on the next line that is not a comment (a comment on a line of its own). Written in the
// comment block at the top of a YAML document (before its first key), it
// applies to the whole document; at the top of a systemd unit, to the unit.
// A suppression without a reason, or naming an unknown rule, suppresses
// nothing and is itself reported (rule invalid-suppression).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/rules.h"

namespace aimem::check {

struct Suppression {
  std::vector<std::string> rules;
  std::string reason;
  int line = 0;               // where it is written
  int first = 0, last = 0;    // the lines it covers
};

struct Suppressions {
  std::vector<Suppression> items;
  std::vector<Finding> problems;  // invalid-suppression findings
  // The reason when a suppression covers this finding.
  std::optional<std::string> covers(const Finding& f) const;
};

Suppressions parse_suppressions(const std::string& text, const std::string& file);

}  // namespace aimem::check
