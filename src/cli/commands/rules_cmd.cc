// aimem rules: Prometheus alerting rules from the policy (check/rules_gen.h),
// to stdout or a file that replaces only an earlier output of aimem rules.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "check/policy.h"
#include "check/rules_gen.h"
#include "cli/commands/commands.h"
#include "sources/readfile.h"

namespace aimem::cli {
namespace {

struct RulesArgs {
  std::string policy, out;
  std::vector<std::string> jobs;
  bool force = false, fleet = false;
};

int fail(const std::string& msg) {
  fmt::print(stderr, "aimem rules: {}\n", msg);
  return 2;
}

// Written to a temporary file beside the target and renamed over it, so
// Prometheus reloading the folder never reads half a file.
std::optional<std::string> write_atomically(const std::string& path, const std::string& text) {
  std::filesystem::path target(path);
  std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  std::string tmp = dir + "/." + target.filename().string() + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return fmt::format("cannot create a file in {}: {}", dir, std::strerror(errno));
  auto bail = [&](const char* what) {
    std::string e = fmt::format("cannot {} {}: {}", what, tmp, std::strerror(errno));
    close(fd);
    unlink(tmp.c_str());
    return e;
  };
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bail("write");
    done += static_cast<size_t>(n);
  }
  // mkstemp makes 0600; a rules file is read by Prometheus, often another user.
  if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) return bail("finish");
  if (close(fd) != 0) {
    unlink(tmp.c_str());
    return fmt::format("cannot write {}: {}", tmp, std::strerror(errno));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    std::string e = fmt::format("cannot replace {}: {}", path, std::strerror(errno));
    unlink(tmp.c_str());
    return e;
  }
  return std::nullopt;
}

int run(const RulesArgs& a) {
  check::Policy policy;
  if (!a.policy.empty()) {
    auto p = check::read_policy_file(a.policy);
    if (!p) return fail(p.error().message);
    policy = std::move(*p);
  }
  auto groups = check::build_rules(policy, check::RulesOptions{a.jobs, a.fleet});
  if (!groups) return fail(groups.error().message);
  std::string text = check::render_rules(*groups, policy);
  if (a.out.empty() || a.out == "-") {
    fwrite(text.data(), 1, text.size(), stdout);
    return fflush(stdout) == 0 ? 0 : fail("cannot write to stdout");
  }
  struct stat st {};
  if (stat(a.out.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fail(fmt::format("-o {}: is a folder; name a file", a.out));
    auto head = read_small_file(a.out, 256);
    if (!a.force && !(head && check::is_generated_rules(*head)))
      return fail(fmt::format("-o {}: exists and was not written by aimem rules; refusing to overwrite it (--force replaces it)",
                              a.out));
  }
  if (auto e = write_atomically(a.out, text)) return fail(fmt::format("-o {}: {}", a.out, *e));
  size_t n = 0;
  size_t records = 0;
  for (const auto& g : *groups) n += g.rules.size(), records += g.records.size();
  fmt::print(stderr, "aimem rules: wrote {} ({} alerting{} rules in {} groups); check it with `promtool check rules {}`\n", a.out,
             n, records ? fmt::format(" and {} recording", records) : "", groups->size(), a.out);
  return 0;
}

}  // namespace

Action add_rules(CLI::App& app) {
  auto a = std::make_shared<RulesArgs>();
  CLI::App* sub = app.add_subcommand("rules", "Write Prometheus alerting rules that warn before memory runs out");
  sub->footer(
      "Examples:\n"
      "  aimem rules                                  the default policy's rules, to stdout\n"
      "  aimem rules --policy aimem.yaml -o /etc/prometheus/rules/aimem.yaml\n"
      "  aimem rules --policy aimem.yaml --job aimem --job aimem-gpu\n"
      "  promtool check rules /etc/prometheus/rules/aimem.yaml\n"
      "Each alert is described in docs/rules.md.");
  sub->add_option("--policy", a->policy, "aimem.yaml with the policy: and alerts: sections (default: the defaults in deploy/aimem.yaml)");
  sub->add_option("-o,--output", a->out, "file to write (default: stdout); an existing one is replaced only if aimem rules wrote it");
  sub->add_flag("--fleet", a->fleet, "add the fleet group: per-pod, per-node and per-GPU recording rules and alerts over the DaemonSet's labels and kube-state-metrics");
  sub->add_option("--job", a->jobs, "Prometheus job that scrapes aimem watch (repeatable; default: any job)");
  sub->add_flag("--force", a->force, "replace an existing -o file that aimem rules did not write");
  return [a] { return run(*a); };
}

}  // namespace aimem::cli
