// One file per subcommand; main.cc holds the table.
#pragma once

#include <string_view>

#include <CLI/CLI.hpp>

namespace aimem::cli {

// Each registers its options on `app` and returns the action to run after parsing.
using Action = std::function<int()>;
Action add_diagnose(CLI::App& app);
Action add_fit(CLI::App& app);
Action add_run(CLI::App& app);
Action add_watch(CLI::App& app);
Action add_report(CLI::App& app);
Action add_probe(CLI::App& app);
Action add_check(CLI::App& app);
Action add_rules(CLI::App& app);

// Colour on file descriptor fd: a terminal, NO_COLOR unset or empty, TERM not dumb.
bool color_for(int fd);

// The words of the command line as main() received them. CLI11 folds the
// words after `--` into a positional list, so `aimem check FILES -- CMD`
// finds its split here.
void set_command_line(int argc, char** argv);

// Whether main() registers subcommand `name` of `table` (its {name, add}
// rows) for this command line: all of them, unless the first word names one,
// then only that one. Building every subcommand's options costs a good part
// of a small `aimem fit`, and with require_subcommand(1) CLI11 reads the
// words after a subcommand the same whether its siblings exist or not; a
// first word that names none (an option, a typo) gets the whole table, so
// help and errors list them all.
template <class Table>
bool registers(std::string_view name, const Table& table, int argc, char** argv) {
  if (argc < 2 || !argv[1]) return true;
  const std::string_view first = argv[1];
  for (const auto& row : table)
    if (first == row.first) return first == name;
  return true;
}

}  // namespace aimem::cli
