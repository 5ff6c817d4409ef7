// This machine's files and folders as a core/file_system.h view, for the pure
// readers that take one (fit's model readers). Paths are used as given.
#pragma once

#include "core/file_system.h"

namespace aimem {

const FileSystem& local_files();

}  // namespace aimem
