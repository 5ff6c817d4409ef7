// aimem: which memory pool failed, and why. The subcommand table is here;
// each subcommand lives in its own file under cli/commands/.
#include <cstdio>
#include <exception>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "recognize/scanner.h"
#include "sources/environment.h"

int main(int argc, char** argv) {
  aimem::set_scan_switches({
      .compile_patterns = aimem::environment_variable("AIMEM_COMPILE_PATTERNS").has_value(),
      .stats = aimem::environment_variable("AIMEM_SCAN_STATS").has_value(),
      .no_gate = aimem::environment_variable("AIMEM_NO_GATE").has_value(),
  });
  CLI::App app{"aimem: which memory pool failed, and why (host RAM, cgroup and Kubernetes limits, GPU VRAM, language heaps)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "aimem 0.1.0");
  using Add = aimem::cli::Action (*)(CLI::App&);
  constexpr std::pair<const char*, Add> kCommands[] = {
      {"diagnose", aimem::cli::add_diagnose}, {"fit", aimem::cli::add_fit},     {"run", aimem::cli::add_run},
      {"watch", aimem::cli::add_watch},       {"report", aimem::cli::add_report}, {"probe", aimem::cli::add_probe},
      {"check", aimem::cli::add_check},       {"rules", aimem::cli::add_rules},
  };
  std::vector<std::pair<CLI::App*, aimem::cli::Action>> table;
  for (const auto& [name, add] : kCommands) {
    if (!aimem::cli::registers(name, kCommands, argc, argv)) continue;
    aimem::cli::Action action = add(app);
    table.emplace_back(app.get_subcommand(name), std::move(action));
  }
  aimem::cli::set_command_line(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    for (auto& [sub, act] : table)
      if (sub->parsed()) return act();
  } catch (const std::exception& e) {
    fmt::print(stderr, "aimem: {}\n", e.what());
    return 2;
  }
  return 2;
}
