// Small files under /proc and /sys: read whole, bounded, never blocking on a
// file that vanished between listing and reading ("gone" is not an error).
#pragma once

#include <optional>
#include <string>

namespace aimem {

std::optional<std::string> read_small_file(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace aimem
