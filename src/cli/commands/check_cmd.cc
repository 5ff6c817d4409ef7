// aimem check FILES... [-- COMMAND...]: lint deployment files and runtime
// command lines against the model's memory plan, the measured envelope and
// a policy.
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "check/check.h"
#include "check/policy.h"
#include "render/check_render.h"
#include "cli/commands/commands.h"
#include "core/units.h"

namespace aimem::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> files;
  std::vector<std::string> command;
  std::string policy, model, gpu, gpu_memory, node_memory, envelope;
  int gpus = 0;
  double headroom = -1;
  bool json = false, sarif = false, list_rules = false;
};

std::vector<std::string>& command_line_words() {
  static std::vector<std::string> words;
  return words;
}

// CLI11 hands every word after `--` to the positional file list (and eats
// the `--`), so the split is found on the command line main() recorded: the
// words after the first `--` that follows `check` are the command to check,
// and they are the last words of that list.
size_t words_after_dashes() {
  const std::vector<std::string>& argv = command_line_words();
  size_t i = 1;
  while (i < argv.size() && argv[i] != "check") ++i;
  while (i < argv.size() && argv[i] != "--") ++i;
  return i < argv.size() ? argv.size() - i - 1 : 0;
}

int fail(const std::string& msg) {
  fmt::print(stderr, "aimem check: {}\n", msg);
  return 2;
}

int list_rules() {
  for (const check::Rule& r : check::rule_table())
    fmt::print("{:<26} {:<8} {}{}\n", r.id, check::to_string(r.severity), r.title,
               r.needs_plan ? " (needs the model's plan)" : "");
  return 0;
}

int run(CheckArgs& a) {
  if (a.list_rules) return list_rules();
  if (a.json && a.sarif) return fail("--json and --sarif: choose one");
  if (a.files.empty() && a.command.empty())
    return fail("name the files to check (manifests, Compose files, systemd units; - for stdin) or a command after --");
  check::Policy policy;
  std::string policy_path = a.policy;
  std::error_code ec;
  if (policy_path.empty() && std::filesystem::is_regular_file("aimem.yaml", ec)) policy_path = "aimem.yaml";
  if (!policy_path.empty()) {
    auto p = check::read_policy_file(policy_path);
    if (!p) return fail(p.error().message);
    policy = *p;
  }
  // Flags override the policy file.
  if (!a.model.empty()) policy.model = a.model;
  if (!a.gpu.empty()) policy.gpu = a.gpu;
  if (a.gpus > 0) policy.gpus = a.gpus;
  if (!a.gpu_memory.empty()) {
    auto v = units::parse_size(a.gpu_memory);
    if (!v) return fail("--gpu-memory " + v.error().message);
    policy.gpu_memory_bytes = *v;
  }
  if (!a.node_memory.empty()) {
    auto v = units::parse_size(a.node_memory);
    if (!v) return fail("--node-memory " + v.error().message);
    policy.node_memory_bytes = *v;
  }
  if (!a.envelope.empty()) policy.envelope_path = a.envelope;
  if (a.headroom >= 0) {
    if (a.headroom > 100) return fail(fmt::format("--headroom {}: expected a percentage from 0 to 100", a.headroom));
    policy.headroom_pct = a.headroom;
  }
  auto report = check::check_files(a.files, a.command, policy);
  if (!report) return fail(report.error().message);
  if (a.json) fmt::print("{}\n", check::render_json(*report).dump(2));
  else if (a.sarif) fmt::print("{}\n", check::render_sarif(*report).dump(2));
  else fmt::print("{}", check::render_text(*report, color_for(1)));
  return report->exit_code();
}

}  // namespace

void set_command_line(int argc, char** argv) { command_line_words().assign(argv, argv + argc); }

Action add_check(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand("check", "Lint deployment configs against the memory plan, the envelope and a policy");
  sub->footer(
      "Examples:\n"
      "  aimem check deploy/vllm.yaml                      # Kubernetes manifests (also helm template | aimem check -)\n"
      "  aimem check compose.yaml llm.service --node-memory 64GiB\n"
      "  aimem check k8s.yaml --model meta-llama/Llama-3.1-8B-Instruct --gpu L4 --envelope limits.json\n"
      "  aimem check -- vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768 --gpu-memory-utilization 0.9\n"
      "  aimem check --sarif k8s/*.yaml > aimem.sarif      # for code scanning\n"
      "Policy: --policy FILE, else ./aimem.yaml when present (its policy: section).\n"
      "Suppress one finding with a reason on its line or the line above:\n"
      "  # aimem: ignore RULE-ID because REASON\n"
      "(in a document's leading comments it covers the whole document). --list-rules shows the rules.\n"
      "Exit status: 0 no violation, 1 errors or warnings (notes never fail), 2 unusable input.");
  sub->add_option("files", a->files, "Kubernetes manifests, Compose files, systemd units; - for stdin");
  sub->add_option("--policy", a->policy, "policy file (default ./aimem.yaml when it exists)");
  sub->add_option("--model", a->model, "the model served: a GGUF file, a model folder, or a catalog name (overrides the policy)");
  sub->add_option("--gpu", a->gpu, "GPU type from the catalog (L4, A100-80GB, H100, ...)");
  sub->add_option("--gpus", a->gpus, "GPUs per node");
  sub->add_option("--gpu-memory", a->gpu_memory, "GPU memory per device (24GiB)");
  sub->add_option("--node-memory", a->node_memory, "allocatable host memory of a node (64GiB)");
  sub->add_option("--envelope", a->envelope, "limits file from aimem probe --save-limits");
  sub->add_option("--headroom", a->headroom, "percent kept free in every pool (default: the policy's, else 10)");
  sub->add_flag("--json", a->json, "machine-readable output (docs/contracts.md)");
  sub->add_flag("--sarif", a->sarif, "SARIF 2.1.0 for code scanning");
  sub->add_flag("--list-rules", a->list_rules, "the rules, their ids and severities");
  return [a] {
    const size_t n = std::min(words_after_dashes(), a->files.size());
    a->command.assign(a->files.end() - long(n), a->files.end());
    a->files.resize(a->files.size() - n);
    return run(*a);
  };
}

}  // namespace aimem::cli
