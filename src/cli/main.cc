// aimem: which memory pool failed, and why. The subcommand table is here;
// each subcommand lives in its own file under cli/commands/.
#include <cstdio>
#include <exception>
#include <fmt/format.h>

#include "cli/commands/commands.h"

namespace {

struct Planned {
  const char* name;
  const char* job;
  const char* issue;
};

// Commands DESIGN.md names that later issues build; until then they say so.
constexpr Planned kPlanned[] = {
    {"probe", "Find a server's memory envelope across context and concurrency", "#5"},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"aimem: which memory pool failed, and why (host RAM, cgroup and Kubernetes limits, GPU VRAM, language heaps)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "aimem 0.1.0");
  aimem::cli::Action action;
  auto diagnose = aimem::cli::add_diagnose(app);
  auto fit = aimem::cli::add_fit(app);
  auto run = aimem::cli::add_run(app);
  auto watch = aimem::cli::add_watch(app);
  auto report = aimem::cli::add_report(app);
  auto check = aimem::cli::add_check(app);
  std::vector<std::pair<CLI::App*, aimem::cli::Action>> table = {{app.get_subcommand("diagnose"), diagnose},
                                                                 {app.get_subcommand("fit"), fit},
                                                                 {app.get_subcommand("run"), run},
                                                                 {app.get_subcommand("watch"), watch},
                                                                 {app.get_subcommand("report"), report},
                                                                 {app.get_subcommand("check"), check}};
  for (const auto& p : kPlanned) {
    CLI::App* sub = app.add_subcommand(p.name, std::string(p.job) + " (not yet implemented)");
    sub->allow_extras();
    std::string name = p.name, issue = p.issue;
    table.emplace_back(sub, [name, issue] {
      fmt::print(stderr, "aimem {}: not implemented yet in this version (planned in issue {}); `aimem diagnose`, `fit`, `run`, `watch` and `report` are real today\n", name, issue);
      return 2;
    });
  }
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
