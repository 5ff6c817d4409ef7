// Every subcommand with a hostile input, each run inside a 128 MiB cgroup v1
// memory cgroup this test creates (a child of its own, removed afterwards):
// JSON and YAML nested 990,000 deep and a list of 3 million values for check,
// rules --policy and watch --config; probe with a million-token context at
// concurrency 256, a 16M-token context, 100,000 requests of a million new
// tokens and a server that never answers; fit on FIFOs in and as a model
// folder; diagnose on the deep text. Each case asserts its exit status and its
// message, and that aimem was not OOM-killed: no SIGKILL, no oom_kill in
// memory.oom_control, memory.failcnt 0 (the limit never reached), and a peak
// (memory.max_usage_in_bytes) under 64 MiB. Skips, saying why, where the
// memory cgroup is not writable.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/endless_server.h"
#include "support/test_support.h"
#include "watch/scratch_cgroup.h"

namespace aimem::test {
namespace {

// 128 MiB and 64 MiB in the release build (see memory_bound for the sanitizer build).
constexpr uint64_t kLimit = memory_bound(128ull << 20);
constexpr uint64_t kPromise = memory_bound(64ull << 20);

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t number(const std::string& path) { return std::strtoull(slurp(path).c_str(), nullptr, 10); }

// "oom_kill N" of memory.oom_control (absent on old kernels: 0).
uint64_t oom_kills(const std::string& dir) {
  std::istringstream in(slurp(dir + "/memory.oom_control"));
  std::string key;
  uint64_t v = 0;
  while (in >> key >> v)
    if (key == "oom_kill") return v;
  return 0;
}

struct Case {
  std::string name;
  std::vector<std::string> args;
  int status;
  std::string message;  // in stderr or stdout
  int timeout_s = 30;
};

class MemoryCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    cg_ = std::make_unique<ScratchCgroup>("bound", kLimit);
    if (!*cg_) GTEST_SKIP() << "no writable cgroup v1 memory controller (/sys/fs/cgroup/memory under this process's own "
                               "memory cgroup): need root and a v1 memory hierarchy";
    // No swap: past the limit the kernel must reclaim or kill, not page out.
    std::ofstream(cg_->dir + "/memory.swappiness") << 0;
  }

  void expect_bounded(const Case& c) {
    SCOPED_TRACE(c.name);
    // Counters from zero for this run.
    std::ofstream(cg_->dir + "/memory.max_usage_in_bytes") << 0;
    std::ofstream(cg_->dir + "/memory.failcnt") << 0;
    const uint64_t kills_before = oom_kills(cg_->dir);
    std::vector<std::string> argv{AIMEM_BINARY};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunOptions o;
    o.cgroup = cg_->dir;
    o.timeout_s = c.timeout_s;
    auto t0 = std::chrono::steady_clock::now();
    RunResult r = run(argv, o);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const uint64_t peak = number(cg_->dir + "/memory.max_usage_in_bytes");
    const uint64_t failcnt = number(cg_->dir + "/memory.failcnt");
    EXPECT_FALSE(r.timed_out) << "still running after " << c.timeout_s << " s";
    EXPECT_NE(r.signal, SIGKILL) << "killed";
    EXPECT_EQ(oom_kills(cg_->dir), kills_before) << "the kernel OOM-killed in the cgroup";
    EXPECT_EQ(failcnt, 0u) << "the cgroup reached its " << (kLimit >> 20) << " MiB limit";
    EXPECT_LT(peak, kPromise) << "cgroup peak " << (peak >> 20) << " MiB";
    EXPECT_EQ(r.status, c.status) << r.err << r.out.substr(0, 2000);
    EXPECT_NE((r.err + r.out).find(c.message), std::string::npos) << "stderr: " << r.err << "\nstdout: " << r.out.substr(0, 2000);
    std::printf("  %-44s exit %d in %.1f s, cgroup peak %.1f MiB, VmHWM %.1f MiB\n", c.name.c_str(), r.status, seconds,
                double(peak) / (1 << 20), double(r.peak_rss_kb) / 1024);
  }

  std::unique_ptr<ScratchCgroup> cg_;
};

TEST_F(MemoryCgroup, DeepAndWideStructuredInputs) {
  const std::string dir = temp_dir("cgroup-structured");
  const std::string deep = std::string(990000, '[') + std::string(990000, ']');
  write_file(dir + "/deep.json", deep);
  write_file(dir + "/deep.yaml", "alerts:\n  repeat: " + deep + "\n");
  std::string wide = "[";
  for (int i = 0; i < 3000000; ++i) wide += "1,";
  wide += "1]";
  write_file(dir + "/wide.yaml", wide);
  const std::string too_deep = "nested too deep (limit 128)";
  for (const Case& c : std::vector<Case>{
           {"check deep.json", {"check", dir + "/deep.json"}, 2, dir + "/deep.json:1:128: " + too_deep},
           {"check deep.yaml", {"check", dir + "/deep.yaml"}, 2, dir + "/deep.yaml:2:"},
           {"check wide.yaml", {"check", dir + "/wide.yaml"}, 2, "more than the 40000"},
           {"rules --policy deep.json", {"rules", "--policy", dir + "/deep.json"}, 2, too_deep},
           {"rules --policy deep.yaml", {"rules", "--policy", dir + "/deep.yaml"}, 2, too_deep},
           {"check --policy deep.json", {"check", "--policy", dir + "/deep.json", dir + "/wide.yaml"}, 2, too_deep},
           {"watch --config deep.json", {"watch", "--config", dir + "/deep.json", "--no-serve", "--no-store"}, 2, too_deep},
           {"watch --config deep.yaml", {"watch", "--config", dir + "/deep.yaml", "--no-serve", "--no-store"}, 2, too_deep},
           {"diagnose deep.json", {"diagnose", dir + "/deep.json"}, 0, "OK"},
       })
    expect_bounded(c);
}

TEST_F(MemoryCgroup, ProbeAgainstServersThatNeverFinish) {
  EndlessServer endless(EndlessServer::Mode::endless), silent(EndlessServer::Mode::silent);
  ASSERT_TRUE(endless.ok() && silent.ok());
  const std::vector<std::string> quiet = {"--no-kernel-log", "--metrics", "none", "--no-gpus"};
  auto probe = [&](const std::string& url, std::vector<std::string> args) {
    std::vector<std::string> a = {"probe", url};
    a.insert(a.end(), args.begin(), args.end());
    a.insert(a.end(), quiet.begin(), quiet.end());
    return a;
  };
  for (const Case& c : std::vector<Case>{
           {"probe 1024k x 256 x 256 requests",
            probe(endless.url(), {"--contexts", "1024k", "--concurrency", "256", "--requests", "256", "--timeout", "5s"}), 1,
            "time bound (5s)"},
           {"probe 16000k x 1", probe(endless.url(), {"--contexts", "16000k", "--concurrency", "1", "--timeout", "5s"}), 1,
            "time bound (5s)"},
           {"probe 100000 requests of 1M new tokens",
            probe(endless.url(), {"--contexts", "2k", "--concurrency", "64", "--requests", "100000", "--max-new-tokens",
                                  "1048576", "--timeout", "5s"}),
            1, "time bound (5s)"},
           {"probe a server that never answers", probe(silent.url(), {"--timeout", "3s"}), 1, "time bound (3s)", 10},
       })
    expect_bounded(c);
}

TEST_F(MemoryCgroup, FitRefusesFifosInsteadOfReadingThemForever) {
  const std::string dir = temp_dir("cgroup-fifo");
  // A model folder whose config.json is a FIFO nobody writes.
  const std::string a = dir + "/fifo-config";
  ASSERT_EQ(mkdir(a.c_str(), 0755), 0);
  ASSERT_EQ(mkfifo((a + "/config.json").c_str(), 0644), 0);
  // One whose config is real and whose weights are a FIFO.
  const std::string b = dir + "/fifo-weights";
  ASSERT_EQ(mkdir(b.c_str(), 0755), 0);
  write_file(b + "/config.json",
             R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":256,"intermediate_size":512,)"
             R"("num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":4,"vocab_size":1000,)"
             R"("max_position_embeddings":2048,"torch_dtype":"float16"})");
  ASSERT_EQ(mkfifo((b + "/model.safetensors").c_str(), 0644), 0);
  // A FIFO named as the model.
  ASSERT_EQ(mkfifo((dir + "/model.gguf").c_str(), 0644), 0);
  for (const Case& c : std::vector<Case>{
           {"fit folder with a FIFO config.json", {"fit", a}, 2, a + "/config.json: a FIFO, not a regular file", 15},
           {"fit folder with FIFO weights", {"fit", b}, 2, b + "/model.safetensors: not a regular file", 15},
           {"fit a FIFO", {"fit", dir + "/model.gguf"}, 2, dir + "/model.gguf: not a regular file", 15},
       })
    expect_bounded(c);
}

TEST_F(MemoryCgroup, ReportAndRunStayBoundedOnHostileInputs) {
  const std::string dir = temp_dir("cgroup-report-run");
  std::string junk(3 << 20, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 2654435761u) >> 13);
  write_file(dir + "/junk.db", junk);
  ASSERT_EQ(mkfifo((dir + "/fifo.db").c_str(), 0644), 0);
  for (const Case& c : std::vector<Case>{
           {"report on random bytes", {"report", dir + "/junk.db", "-o", dir + "/a.html"}, 2, "not an aimem store", 15},
           {"report on a FIFO", {"report", dir + "/fifo.db", "-o", dir + "/b.html"}, 2, "not a regular file", 15},
           // The child fills its own 32 MiB limit and is killed there; aimem records and diagnoses it.
           {"run a child past its own limit",
            {"run", "--memory-limit", "32M", "--", "python3", "-c", "x = bytearray(300 << 20)"}, 137, "killed by signal 9", 30},
       })
    expect_bounded(c);
}

}  // namespace
}  // namespace aimem::test

