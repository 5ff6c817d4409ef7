// aimem check: lints deployment files (Kubernetes manifests, Compose files,
// systemd units) and runtime command lines against the model's memory plan
// (aimem fit), the measured envelope (aimem probe --save-limits) and a
// policy. The pipeline: read each file into workloads (readers.h), recognise
// the server in each container (server.h), plan its memory, run the rule
// table (rules.h), apply inline suppressions (suppress.h), render.
#pragma once

#include <string>
#include <vector>

#include "check/policy.h"
#include "check/rules.h"
#include "core/result.h"

namespace aimem::check {

struct Report {
  std::vector<Finding> violations;   // not suppressed, in file / line order
  std::vector<Finding> suppressed;   // with suppressed_because
  std::vector<Note> notes;
  std::vector<std::string> files_checked;
  int errors() const;
  int warnings() const;
  // 0 clean, 1 an error or warning; notes never fail the check.
  int exit_code() const { return violations.empty() ? 0 : 1; }
};

struct Input {
  std::string name;  // as named on the command line; "-" for stdin
  std::string text;
};

// Checks in-memory inputs (pure apart from model files the policy names).
// An unusable input (malformed YAML, an alias bomb, a file too large, a bad
// envelope file) is an Error naming the file and line: exit 2.
Result<Report> check_inputs(const std::vector<Input>& inputs, const std::vector<std::string>& command,
                            const Policy& policy);

// Reads the files (size-capped before reading), then check_inputs. A folder
// stands for the *.yaml, *.yml and *.service files under it (sorted; hidden
// folders skipped; at most 2,000 files, 16 levels).
Result<Report> check_files(const std::vector<std::string>& paths, const std::vector<std::string>& command,
                           const Policy& policy);

}  // namespace aimem::check
