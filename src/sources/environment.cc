#include "sources/environment.h"

#include <cstdlib>

namespace aimem {

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace aimem
