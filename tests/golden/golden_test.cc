// Golden outputs: what users read, compared byte for byte, so that a change
// meant to move code (a refactor, a split file, a new library boundary)
// cannot change behaviour unnoticed. Each case runs the real binary from the
// source folder (so the paths it prints are the repository's) or, for
// /metrics, renders a fixed sample; the expected text (after a first line
// with the exit status) lives in tests/golden/<name>.golden.
//
// A change that is meant to alter an output: run the suite with
// AIMEM_UPDATE_GOLDEN=1 (it rewrites the files it compares and says which),
// read the diff in git, and commit the files with the change. The README's
// examples are among these cases, so README and program agree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "support/watch_example.h"
#include "watch/exporter.h"

namespace aimem::test {
namespace {

struct Golden {
  std::string name;               // tests/golden/<name>.golden
  std::vector<std::string> args;  // aimem's arguments, run in the source folder
};

const std::vector<Golden> kCases = {
    // diagnose: the README's three file examples, as text and as JSON.
    {"diagnose-vllm-kv-cache", {"diagnose", "docs/examples/vllm-kv-cache.log"}},
    {"diagnose-describe-pod", {"diagnose", "--exit-code", "137", "docs/examples/describe-pod.txt"}},
    {"diagnose-train-step-oom", {"diagnose", "docs/examples/train-step-oom.log"}},
    {"diagnose-vllm-kv-cache-json", {"diagnose", "--json", "docs/examples/vllm-kv-cache.log"}},
    {"diagnose-describe-pod-json", {"diagnose", "--json", "--exit-code", "137", "docs/examples/describe-pod.txt"}},
    {"diagnose-train-step-oom-json", {"diagnose", "--json", "docs/examples/train-step-oom.log"}},
    // fit: plans from the built-in catalogue, per runtime, as text and JSON.
    {"fit-llama-8b-l4", {"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4"}},
    {"fit-llama-8b-l4-all-runtimes",
     {"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4", "--ctx", "8192", "--runtime", "all", "--quant", "q4_k_m"}},
    {"fit-llama-8b-l4-json", {"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4", "--json"}},
    {"fit-phi-4-llamacpp", {"fit", "microsoft/phi-4", "--gpu", "L4", "--runtime", "llamacpp", "--ctx", "16384", "--concurrency", "2"}},
};

// gtest names a failing case by its parameter: the golden's name.
void PrintTo(const Golden& g, std::ostream* os) { *os << g.name; }

std::string golden_path(const std::string& name) { return source_dir() + "/tests/golden/" + name + ".golden"; }

bool updating() {
  const char* v = std::getenv("AIMEM_UPDATE_GOLDEN");
  return v && *v && std::string(v) != "0";
}

// The first line where the two differ, both sides, for the failure message.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ha = static_cast<bool>(std::getline(a, la)), hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "same lines, different line ends";
    if (!ha || !hb || la != lb)
      return "line " + std::to_string(line) + "\n  golden: " + (ha ? la : "<end>") + "\n  now:    " + (hb ? lb : "<end>");
  }
}

void compare(const std::string& name, const std::string& got) {
  const std::string path = golden_path(name);
  if (updating()) {
    std::ofstream(path, std::ios::binary) << got;
    std::printf("  rewrote %s\n", path.c_str());
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing: run the suite once with AIMEM_UPDATE_GOLDEN=1 and commit it";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_TRUE(want.str() == got) << name << " changed (" << path << "), first difference at " << first_difference(want.str(), got)
                                 << "\nIf the change is meant, run with AIMEM_UPDATE_GOLDEN=1 and commit the new file.";
}

class GoldenOutput : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenOutput, IsUnchanged) {
  const Golden& g = GetParam();
  std::vector<std::string> argv{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", source_dir(), AIMEM_BINARY};
  argv.insert(argv.end(), g.args.begin(), g.args.end());
  RunOptions o;
  o.timeout_s = 60;
  // Colour and the terminal width never apply: stdout is a pipe. No NVML.
  o.env = {"NO_COLOR=1", "AIMEM_NVML_LIBRARY=/nonexistent"};
  RunResult r = run(argv, o);
  ASSERT_GE(r.status, 0) << r.err;
  ASSERT_LT(r.status, 2) << r.err;  // 0, or 1 where a plan does not fit
  // The exit status is part of what users get: the golden's first line.
  compare(g.name, "# exit " + std::to_string(r.status) + "\n" + r.out);
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenOutput, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Golden>& i) {
                           std::string n;
                           for (char c : i.param.name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

// /metrics for a fixed sample (the exporter's own example: every kind of
// series, odd cgroup names, servers up and down).
TEST(GoldenMetrics, ExporterTextIsUnchanged) {
  const std::string text = watch::render_metrics(watch::example_sample(), watch::example_extras());
  EXPECT_NE(text.find("aimem_memory_used_bytes"), std::string::npos);
  compare("metrics-example", text);
}

}  // namespace
}  // namespace aimem::test
