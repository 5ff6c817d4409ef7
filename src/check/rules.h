// The rules of `aimem check`: one table (rules.cc), each row a stable id
// (DESIGN §2), a severity, a one-line title, the help text SARIF carries, and
// the function that finds violations. A new rule is one row, its function
// and its pass/fail fixtures (tests/fixtures/check/rules/<id>/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/policy.h"
#include "check/server.h"
#include "check/workload.h"
#include "fit/plan.h"
#include "probe/limits.h"

namespace aimem::check {

enum class Severity { kError, kWarning, kNote };
std::string_view to_string(Severity s);

struct Finding {
  std::string rule;
  Severity severity = Severity::kError;
  Loc at;
  std::string message;
  std::string fix;
  std::string suppressed_because;  // set when an inline comment suppressed it
};

// Something a rule could not check, or a reader skipped: never a violation.
struct Note {
  std::string rule;  // "" for a reader's note
  Loc at;
  std::string message;
};

// The model's memory plan for one server, as `aimem fit` computes it.
struct PlanInfo {
  std::optional<fit::Plan> plan;
  std::string model;      // the name it was resolved from
  std::string why_not;    // when there is no plan: what was missing
  bool gpu_known = false; // GPU capacity came from the policy, a flag or a node selector
};

// One container with what the rules need about it.
struct Subject {
  const Workload* workload = nullptr;
  const Container* container = nullptr;
  ServerConfig server;
  PlanInfo plan;
  bool model_server() const { return server.server != Server::kNone || (container->gpus && container->gpus->value != 0); }
};

struct Context {
  Policy policy;
  std::optional<probe::Limits> envelope;
  std::string envelope_file;
};

class Sink {
 public:
  void violation(const Finding& f) { findings.push_back(f); }
  void note(const std::string& rule, const Loc& at, const std::string& message);
  std::vector<Finding> findings;
  std::vector<Note> notes;
};

struct Rule {
  const char* id;
  Severity severity;
  const char* title;  // one line: what is wrong
  const char* help;   // why it matters and how to fix it (SARIF help)
  bool needs_plan;
  void (*run)(const Rule& self, const std::vector<Subject>& subjects, const Context& ctx, Sink& out);
};

const std::vector<Rule>& rule_table();
const Rule* find_rule(std::string_view id);

// Runs every rule over the subjects.
void run_rules(const std::vector<Subject>& subjects, const Context& ctx, Sink& out);

}  // namespace aimem::check
