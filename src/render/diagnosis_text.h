// The terminal report of `aimem diagnose`. Colour only when writing to a
// terminal and NO_COLOR is unset.
#pragma once

#include <string>

#include "diagnose/diagnosis.h"

namespace aimem {

struct TextStyle {
  bool color = false;
  bool verbose = false;  // all incidents in full
};

std::string render_text(const Diagnosis& d, const TextStyle& style);

}  // namespace aimem
