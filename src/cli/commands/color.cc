// Whether a subcommand colours what it prints: only on a terminal, never
// with NO_COLOR set to anything (https://no-color.org: an empty NO_COLOR is
// unset), never on TERM=dumb (a terminal that understands no escapes: Emacs'
// shell, some CI logs).
#include <unistd.h>

#include "cli/commands/commands.h"
#include "sources/environment.h"

namespace aimem::cli {

bool color_for(int fd) {
  if (!::isatty(fd)) return false;
  auto no_color = environment_variable("NO_COLOR");
  if (no_color && !no_color->empty()) return false;
  return environment_variable("TERM") != "dumb";
}

}  // namespace aimem::cli
