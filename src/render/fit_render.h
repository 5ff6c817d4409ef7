// `aimem fit` output: the terminal table and the JSON of DESIGN §2.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/model.h"
#include "fit/plan.h"

namespace aimem::render {

// `color`: the verdicts in colour, for a terminal.
std::string fit_text(const fit::ModelSpec& m, const fit::Hardware& hw, const std::vector<fit::Plan>& plans,
                     bool color = false);
nlohmann::json fit_json(const fit::ModelSpec& m, const fit::Hardware& hw, const fit::Plan& p);

}  // namespace aimem::render
