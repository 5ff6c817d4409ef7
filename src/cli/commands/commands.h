// One file per subcommand; main.cc holds the table.
#pragma once

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

// The words of the command line as main() received them. CLI11 folds the
// words after `--` into a positional list, so `aimem check FILES -- CMD`
// finds its split here.
void set_command_line(int argc, char** argv);

}  // namespace aimem::cli
