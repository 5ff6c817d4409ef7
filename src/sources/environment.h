// The environment, read in one place: the parts that honour a variable
// receive its value (only sources read the system; docs/ARCHITECTURE.md).
#pragma once

#include <optional>
#include <string>

namespace aimem {

// The value of the variable `name` (possibly empty), or nullopt when it is not set.
std::optional<std::string> environment_variable(const char* name);

// The user's home: $HOME when set and not empty, else the password database's
// entry for this user, else "".
std::string home_directory();

}  // namespace aimem
