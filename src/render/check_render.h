// The three outputs of aimem check: compiler-style lines for the terminal,
// JSON (DESIGN §2 check --json) and SARIF 2.1.0 for code scanning.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "check/check.h"

namespace aimem::check {

// The tool as SARIF names it.
inline constexpr const char* kToolVersion = "0.1.0";  // as `aimem --version` prints it
inline constexpr const char* kInformationUri = "https://github.com/aimem/aimem";

// `color`: severities in colour, for a terminal.
std::string render_text(const Report& r, bool color = false);
nlohmann::json render_json(const Report& r);
nlohmann::json render_sarif(const Report& r);

}  // namespace aimem::check
