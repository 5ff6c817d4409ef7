// `aimem diagnose --json`, exactly as DESIGN.md §2 fixes it, plus additive
// fields: "reasons" per incident, "headroom", "since", "warnings".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "diagnose/diagnosis.h"

namespace aimem {

nlohmann::json diagnosis_to_json(const Diagnosis& d);
std::string render_json(const nlohmann::json& j);  // pretty, invalid UTF-8 replaced

}  // namespace aimem
