// Whether a subcommand colours what it prints: only on a terminal, never
// with NO_COLOR set to anything (https://no-color.org: an empty NO_COLOR is
// unset), never on TERM=dumb (a terminal that understands no escapes: Emacs'
// shell, some CI logs).
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cli/commands/commands.h"

namespace aimem::cli {

bool color_for(int fd) {
  if (!::isatty(fd)) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace aimem::cli
