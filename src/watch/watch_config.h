// The YAML configuration of `aimem watch` (--config; every key is documented
// in deploy/aimem.yaml): text in, options out, apart from the reading of the
// file (the command's) so that the fuzz target can feed it. Unknown keys are
// errors (a typo must not pass silently as a default); the text goes through
// the bounded reader (core/doc_reader.h) first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"
#include "watch/watcher.h"

namespace aimem::watch {

inline constexpr size_t kMaxConfigBytes = 4 << 20;  // as a policy file (the same keys may share one file)

// Sets in `o` what the text names. Errors name the file, the line and the key.
Result<bool> apply_watch_config(std::string_view text, const std::string& path, WatchOptions& o);

// The value readers the configuration and `aimem watch`'s flags share. They
// throw Bad (its message names `what` and the value), which
// apply_watch_config and the command turn into their error.
struct Bad {
  std::string message;
};
int64_t duration_of(const std::string& v, const std::string& what);
uint64_t size_of(const std::string& v, const std::string& what);

}  // namespace aimem::watch
