// Gives back the pages of code and read-only data that only start-up touched.
// A long-running aimem watch maps the same shared libraries (libc, libstdc++,
// SQLite, vectorscan) and its own binary as every other command, and the
// kernel maps their file pages in 64 KiB batches as they are first run: after
// start-up (option parsing, pattern databases, SQLite's schema) about 5 MiB of
// them sit in its RSS though the sampling loop runs a fraction of that code.
// Unmapping the clean file pages of its read-only and executable mappings
// (madvise MADV_DONTNEED; the pages stay in the page cache, shared with other
// processes) lets the loop fault back in only what it runs. Mappings with
// private dirty or anonymous pages (RELRO after relocation, a debugger's
// breakpoints) are left alone: for those DONTNEED would drop the changes.
#pragma once

#include <cstddef>
#include <string>

namespace aimem::watch {

struct TrimResult {
  size_t mappings = 0;  // mappings advised
  size_t bytes = 0;     // their resident bytes before
};

// Reads /proc/self/smaps; a failure to read it trims nothing.
TrimResult trim_startup_pages();

}  // namespace aimem::watch
