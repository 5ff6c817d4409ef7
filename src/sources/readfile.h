// Small files under /proc and /sys: read whole, bounded, never blocking on a
// file that vanished between listing and reading ("gone" is not an error).
// And files a user named (a configuration, a policy, a model's config.json):
// read whole up to a bound, or an error that names the file.
#pragma once

#include <optional>
#include <string>

#include "core/result.h"

namespace aimem {

std::optional<std::string> read_small_file(const std::string& path, size_t max_bytes = 1 << 20);

// A file the user named, `what` it is for the messages ("configuration").
// Errors: cannot open (the system's words), a directory, more than max_bytes
// (nothing beyond max_bytes + 1 is read, so /dev/zero or an endless pipe ends
// there), and with regular_only anything but a regular file: a FIFO in a model
// folder is refused at once instead of blocking the open or the read forever.
// Without it a pipe is read (`--config <(...)`).
Result<std::string> read_user_file(const std::string& path, size_t max_bytes, const std::string& what,
                                   bool regular_only = false);

}  // namespace aimem
