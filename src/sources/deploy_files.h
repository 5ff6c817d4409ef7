// The files `aimem check` reads: a deployment file the user names, read whole
// and bounded, and a folder standing for the deployment files under it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace aimem {

// Whether `path` names a folder (not "-", which is standard input).
bool is_folder(const std::string& path);

// The deployment files under a folder: *.yaml, *.yml (manifests, Compose, helm
// output) and *.service (systemd units), sorted, hidden folders (.git)
// skipped; bounded in count and depth so a wrong argument (/) ends fast. An
// error when the folder cannot be read or holds none.
Result<std::vector<std::string>> deployment_files_under(const std::string& folder);

// A file read whole: an error naming it when it cannot be read, is a folder,
// or is larger than max_bytes; at most max_bytes + 1 bytes are read from what
// has no size (a FIFO, /dev/zero), so too much is the caller's error, not memory.
Result<std::string> read_deployment_file(const std::string& path, uint64_t max_bytes);

}  // namespace aimem
