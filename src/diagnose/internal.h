// Internals of the diagnosis shared by its files (not a public interface).
#pragma once

#include <vector>

#include "diagnose/diagnosis.h"

namespace aimem::detail {

std::vector<Incident> group_facts(const std::vector<Fact>& facts);
void classify(Incident& incident, const std::vector<Fact>& facts);
void advise(Incident& incident, const std::vector<Fact>& facts);
// Checks that would decide an incident whose evidence leaves the layer open.
std::vector<std::string> generic_next_checks(const std::vector<Fact>& facts);
// The ranked differential of causes (differential.cc): the rules' choice
// first, with `strength` (how firmly the evidence decides it), then every
// other cause the evidence supports; each with the check that would decide.
void differential(Incident& incident, const std::vector<Fact>& facts, float strength, const std::string& why);

// Two facts of one input within `lines` lines of each other.
inline bool near_in_source(const Fact& a, const Fact& b, uint64_t lines) {
  if (a.where.source_index != b.where.source_index) return false;
  uint64_t d = a.where.line > b.where.line ? a.where.line - b.where.line : b.where.line - a.where.line;
  return d <= lines;
}

}  // namespace aimem::detail
