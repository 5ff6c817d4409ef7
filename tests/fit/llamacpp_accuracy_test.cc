// aimem fit against the real llama.cpp engine. Tiny GGUF models (MHA, GQA,
// MQA; F32, F16, Q8_0; vocabularies 1000 to 32000) are written by the test,
// loaded by llama.cpp through node-llama-cpp (CPU build from npm, installed by
// `make node-deps`) with several settings (context, sequences, batch, flash
// attention, KV types, mmap), and the buffer sizes llama.cpp logs are compared
// with aimem's plan for the same settings: weights and KV within 1%, compute
// within 10%, the total within 3%. node-llama-cpp's own pre-load estimate for
// the same case is printed beside aimem's error as a peer.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fit/inputs.h"
#include "fit/plan.h"
#include "sources/files.h"
#include "support/test_support.h"
#include "support/tiny_model.h"

namespace aimem::fit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Case {
  const char* name;
  test::TinyModelOptions model;
  uint32_t ctx, seqs, batch;  // batch 0: node-llama-cpp's default
  bool fa;
  const char* kv;             // K and V type
  bool mmap;
};

test::TinyModelOptions shape(uint32_t layers, uint32_t embd, uint32_t heads, uint32_t kv, uint32_t ff,
                             uint32_t vocab, const char* type) {
  test::TinyModelOptions o;
  o.n_layer = layers;
  o.n_embd = embd;
  o.n_head = heads;
  o.n_head_kv = kv;
  o.n_ff = ff;
  o.n_vocab = vocab;
  o.n_ctx_train = 8192;
  o.type = type;
  o.seed = 7;
  return o;
}

const Case kCases[] = {
    {"MHA F32, ctx 1000, no FA", shape(3, 128, 2, 2, 256, 1000, "f32"), 1000, 1, 0, false, "f16", true},
    {"GQA F16, ctx 4096, FA", shape(8, 512, 8, 2, 1408, 32000, "f16"), 4096, 1, 0, true, "f16", true},
    {"MQA Q8_0, 2048 x 2 seqs, no FA", shape(4, 256, 4, 1, 768, 2000, "q8_0"), 2048, 2, 0, false, "f16", true},
    {"GQA Q8_0, KV q8_0, FA", shape(2, 1024, 16, 4, 4096, 32000, "q8_0"), 2048, 1, 0, true, "q8_0", true},
    {"MHA F16, 1000 x 4 seqs, FA", shape(4, 256, 4, 4, 768, 1000, "f16"), 1000, 4, 0, true, "f16", true},
    {"GQA F16, batch 128, no FA", shape(6, 384, 12, 4, 1024, 8000, "f16"), 2048, 1, 128, false, "f16", true},
    {"GQA F16, KV q4_0, FA", shape(8, 512, 8, 2, 1408, 32000, "f16"), 2048, 1, 0, true, "q4_0", true},
    {"MQA Q8_0, no mmap, FA", shape(4, 256, 4, 1, 768, 2000, "q8_0"), 1000, 1, 0, true, "f16", false},
};

uint32_t pad256(uint32_t x) { return (x + 255) / 256 * 256; }

double mib_sum(const json& j) {
  double s = 0;
  if (j.is_object())
    for (auto& [k, v] : j.items()) s += v.get<double>();
  return s * 1024 * 1024;
}

TEST(FitLlamaCpp, MatchesTheBuffersTheRealEngineLogs) {
  const std::string modules = AIMEM_NODE_MODULES;
  ASSERT_TRUE(fs::exists(modules + "/node-llama-cpp/package.json"))
      << "node-llama-cpp is not installed under " << modules << ": run `make node-deps`";
  char tmpl[] = "/tmp/aimem-nlc-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const bool amx = test::host_has_amx();
  std::string table = fmt::format("\n{:<34} {:>10} {:>7} {:>10} {:>7} {:>10} {:>7} {:>10} {:>7} {:>9}\n", "case",
                                  "weights", "err", "KV", "err", "compute", "err", "total", "err", "nlc est");
  // Every model is written first and measured in one node process.
  std::vector<test::MeasureJob> jobs;
  for (const Case& c : kCases) {
    std::string path = fmt::format("{}/m{}.gguf", dir, jobs.size());
    ASSERT_TRUE(test::write_tiny_model(c.model, path)) << c.name;
    json settings = {{"contextSize", c.ctx}, {"sequences", c.seqs}, {"flashAttention", c.fa},
                     {"kvCacheKeyType", c.kv}, {"kvCacheValueType", c.kv}, {"gpuLayers", 0}, {"useMmap", c.mmap}};
    if (c.batch) settings["batchSize"] = c.batch;
    jobs.push_back({path, settings, path + ".log"});
  }
  const std::vector<test::Measured> measured = test::measure_batch(AIMEM_SOURCE_DIR, jobs, modules, dir + "/jobs.json");
  for (size_t n = 0; n < jobs.size(); ++n) {
    const Case& c = kCases[n];
    const std::string& path = jobs[n].gguf;
    const std::string& log = jobs[n].log;
    const std::string& cmd = measured[n].command;
    json r = measured[n].result;
    ASSERT_TRUE(r.is_object() && r.contains("engine")) << c.name << ": measure.mjs failed: " << cmd;
    const json& e = r["engine"];

    // aimem, with node-llama-cpp's context rules (docs/fit-llamacpp.md §1).
    auto spec = load_model(local_files(), path, "", "");
    ASSERT_TRUE(spec) << spec.error().message;
    FitSettings s;
    s.runtime = Runtime::kLlamaCpp;
    s.device_cpu = true;
    uint32_t ctx = c.ctx <= c.model.n_ctx_train && pad256(c.ctx) < c.model.n_ctx_train ? pad256(c.ctx) : c.ctx;
    uint32_t batch = std::max(c.batch ? c.batch : std::min(ctx * c.seqs, 512u), c.seqs);
    s.ctx = ctx;
    s.concurrency = c.seqs;
    s.batch = s.ubatch = batch;
    s.unified_kv = false;
    s.flash_attn = c.fa;
    s.kv_type = c.kv;
    s.mmap = c.mmap;
    Hardware hw;
    hw.cpu_amx = amx;
    Plan p = plan_once(*spec, s, hw, {});
    double w = 0, kv = 0, comp = 0, out = 0;
    for (const Term& t : p.terms) {
      if (t.component == "weights") w += double(t.bytes);
      if (t.component == "kv_cache") kv += double(t.bytes);
      if (t.component == "compute") comp += double(t.bytes);
      if (t.what.rfind("output buffer", 0) == 0) out += double(t.bytes);
    }
    double ew = mib_sum(e["model_buffers_mib"]), ekv = mib_sum(e["kv_buffers_mib"]);
    double ec = mib_sum(e.contains("compute_buffers_mib_4dp") && !e["compute_buffers_mib_4dp"].empty()
                            ? e["compute_buffers_mib_4dp"] : e["compute_buffers_mib"]);
    double eo = mib_sum(e["output_buffers_mib"]);
    double etotal = ew + ekv + ec + eo, total = w + kv + comp + out;
    auto err = [](double a, double b) { return (a - b) / b; };
    std::string peer = "-";
    if (r.contains("estimate") && r["estimate"].contains("model") && r["estimate"].contains("context")) {
      double est = r["estimate"]["model"]["cpuRam"].get<double>() + r["estimate"]["context"]["cpuRam"].get<double>();
      peer = fmt::format("{:+.1f}%", err(est, etotal) * 100);
    }
    table += fmt::format("{:<34} {:>8.2f}Mi {:>+6.2f}% {:>8.2f}Mi {:>+6.2f}% {:>8.2f}Mi {:>+6.2f}% {:>8.2f}Mi {:>+6.2f}% {:>9}\n",
                         c.name, ew / 1048576, err(w, ew) * 100, ekv / 1048576, err(kv, ekv) * 100, ec / 1048576,
                         err(comp, ec) * 100, etotal / 1048576, err(total, etotal) * 100, peer);
    EXPECT_LE(std::fabs(err(w, ew)), 0.01) << c.name << ": weights";
    EXPECT_LE(std::fabs(err(kv, ekv)), 0.01) << c.name << ": KV cache";
    EXPECT_LE(std::fabs(err(comp, ec)), 0.10) << c.name << ": compute";
    EXPECT_LE(std::fabs(err(total, etotal)), 0.03) << c.name << ": total";
    // The same check as users run it: `aimem fit --against` on the engine's own log
    // reads the model path and the settings from it and compares per component.
    test::RunResult ag = test::run_aimem({"fit", "--against", log, "--json"});
    EXPECT_EQ(ag.status, 0) << c.name << ": " << ag.out << ag.err;
    json aj = json::parse(ag.out, nullptr, false);
    ASSERT_TRUE(aj.is_object()) << ag.out;
    EXPECT_EQ(aj["within_bands"], true) << c.name;
    EXPECT_EQ(aj["settings"]["concurrency"], c.seqs) << c.name;
  }
  table += "(engine: llama.cpp v0.5.0 via node-llama-cpp 3.22.1, CPU; 'nlc est' = node-llama-cpp's own pre-load "
           "estimate (GgufInsights) against the same logged total)\n";
  std::cout << table;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aimem::fit
