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

}  // namespace aimem::detail
