// aimem fit's recurrent-state and graph-metadata terms against the real
// llama.cpp engine (node-llama-cpp 3.22.1, CPU; `make node-deps`).
//
// Tiny Mamba, Mamba-2 and Jamba (hybrid: Mamba layers and attention layers)
// GGUF files with random weights are written here, loaded by the engine with
// several context sizes and sequence counts, and the engine's own log lines
// are read back:
//   llama_memory_recurrent:        CPU RS buffer size =     0.59 MiB
//   llama_memory_recurrent: size = 0.59 MiB (4 cells, 2 layers, 4 seqs 0 rs_seq), R (f32): 0.09 MiB, S (f32): 0.50 MiB, ...
//   llama_kv_cache:        CPU KV buffer size =     4.00 MiB
//   sched_reserve: max_nodes = 1184
// aimem's recurrent-state term must equal the RS buffer, and its conv (R) and
// state (S) parts the R and S figures, to the printed precision (0.01 MiB);
// its KV term must equal the KV buffer likewise; its graph-metadata term
// must use the engine's max_nodes, and its struct sizes must be those of the
// engine's own libggml-base.so (ggml_tensor_overhead,
// ggml_graph_overhead_custom), called here through dlopen.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fit/inputs.h"
#include "fit/plan.h"
#include "fit/runtime.h"
#include "sources/files.h"
#include "support/test_support.h"
#include "support/tiny_model.h"

namespace aimem::fit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

GgufWriter with_tokenizer(const std::string& arch, uint32_t n_vocab) { return test::tiny_writer(arch, n_vocab); }
using Tensors = test::TensorFiller;

struct Shape {
  uint32_t n_layer, n_embd, d_inner, d_state, d_conv, dt_rank, n_group = 1;
  uint32_t n_vocab = 300;
  // Jamba: attention heads, KV heads per layer (0 = Mamba layer), FFN width
  uint32_t n_head = 0, n_ff = 0;
  std::vector<int32_t> head_kv;
};

void common_keys(GgufWriter& w, const std::string& a, const Shape& s) {
  w.set_u32(a + ".context_length", 8192);
  w.set_u32(a + ".embedding_length", s.n_embd);
  w.set_u32(a + ".block_count", s.n_layer);
  w.set_u32(a + ".vocab_size", s.n_vocab);
  w.set_u32(a + ".ssm.conv_kernel", s.d_conv);
  w.set_u32(a + ".ssm.inner_size", s.d_inner);
  w.set_u32(a + ".ssm.state_size", s.d_state);
  w.set_u32(a + ".ssm.time_step_rank", s.dt_rank);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
}

// src/models/mamba.cpp load_arch_tensors (and jamba.cpp's Mamba layers).
void mamba_layer(Tensors& t, const std::string& b, const Shape& s, bool jamba) {
  t.add(b + "ssm_in.weight", {s.n_embd, 2ull * s.d_inner});
  t.add(b + "ssm_conv1d.weight", {s.d_conv, s.d_inner});
  t.add(b + "ssm_conv1d.bias", {s.d_inner});
  t.add(b + "ssm_x.weight", {s.d_inner, s.dt_rank + 2ull * s.d_state});
  if (jamba) t.add(b + "ssm_dt_norm.weight", {s.dt_rank}, 1.0f);
  t.add(b + "ssm_dt.weight", {s.dt_rank, s.d_inner});
  t.add(b + "ssm_dt.bias", {s.d_inner});
  if (jamba) {
    t.add(b + "ssm_b_norm.weight", {s.d_state}, 1.0f);
    t.add(b + "ssm_c_norm.weight", {s.d_state}, 1.0f);
  }
  t.add(b + "ssm_a", {s.d_state, s.d_inner}, -1.0f);
  t.add(b + "ssm_d", {s.d_inner}, 1.0f);
  t.add(b + "ssm_out.weight", {s.d_inner, s.n_embd});
}

GgufWriter mamba(const Shape& s) {
  GgufWriter w = with_tokenizer("mamba", s.n_vocab);
  common_keys(w, "mamba", s);
  Tensors t{w};
  t.add("token_embd.weight", {s.n_embd, s.n_vocab});
  for (uint32_t i = 0; i < s.n_layer; ++i) {
    std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {s.n_embd}, 1.0f);
    mamba_layer(t, b, s, false);
  }
  t.add("output_norm.weight", {s.n_embd}, 1.0f);
  t.add("output.weight", {s.n_embd, s.n_vocab});
  return w;
}

// src/models/mamba2.cpp: dt_rank is the head count; one conv over x, B and C.
GgufWriter mamba2(const Shape& s) {
  GgufWriter w = with_tokenizer("mamba2", s.n_vocab);
  common_keys(w, "mamba2", s);
  w.set_u32("mamba2.ssm.group_count", s.n_group);
  Tensors t{w};
  const uint64_t conv_dim = s.d_inner + 2ull * s.n_group * s.d_state;
  t.add("token_embd.weight", {s.n_embd, s.n_vocab});
  for (uint32_t i = 0; i < s.n_layer; ++i) {
    std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {s.n_embd}, 1.0f);
    t.add(b + "ssm_in.weight", {s.n_embd, s.d_inner + conv_dim + s.dt_rank});
    t.add(b + "ssm_conv1d.weight", {s.d_conv, conv_dim});
    t.add(b + "ssm_conv1d.bias", {conv_dim});
    t.add(b + "ssm_dt.bias", {s.dt_rank});
    t.add(b + "ssm_a", {1, s.dt_rank}, -1.0f);
    t.add(b + "ssm_d", {1, s.dt_rank}, 1.0f);
    t.add(b + "ssm_norm.weight", {s.d_inner / s.n_group, s.n_group}, 1.0f);
    t.add(b + "ssm_out.weight", {s.d_inner, s.n_embd});
  }
  t.add("output_norm.weight", {s.n_embd}, 1.0f);
  t.add("output.weight", {s.n_embd, s.n_vocab});
  return w;
}

// src/models/jamba.cpp: a layer with head_count_kv 0 is a Mamba layer, the
// others attention; every layer has a dense FFN (no experts here).
GgufWriter jamba(const Shape& s) {
  GgufWriter w = with_tokenizer("jamba", s.n_vocab);
  common_keys(w, "jamba", s);
  w.set_u32("jamba.attention.head_count", s.n_head);
  w.set_arr_i32("jamba.attention.head_count_kv", s.head_kv);
  w.set_u32("jamba.feed_forward_length", s.n_ff);
  Tensors t{w};
  const uint64_t head_dim = s.n_embd / s.n_head;
  t.add("token_embd.weight", {s.n_embd, s.n_vocab});
  for (uint32_t i = 0; i < s.n_layer; ++i) {
    std::string b = fmt::format("blk.{}.", i);
    t.add(b + "attn_norm.weight", {s.n_embd}, 1.0f);
    if (s.head_kv[i] == 0) {
      mamba_layer(t, b, s, true);
    } else {
      t.add(b + "attn_q.weight", {s.n_embd, s.n_embd});
      t.add(b + "attn_k.weight", {s.n_embd, head_dim * s.head_kv[i]});
      t.add(b + "attn_v.weight", {s.n_embd, head_dim * s.head_kv[i]});
      t.add(b + "attn_output.weight", {s.n_embd, s.n_embd});
    }
    t.add(b + "ffn_norm.weight", {s.n_embd}, 1.0f);
    t.add(b + "ffn_gate.weight", {s.n_embd, s.n_ff});
    t.add(b + "ffn_down.weight", {s.n_ff, s.n_embd});
    t.add(b + "ffn_up.weight", {s.n_embd, s.n_ff});
  }
  t.add("output_norm.weight", {s.n_embd}, 1.0f);
  t.add("output.weight", {s.n_embd, s.n_vocab});
  return w;
}

using test::EngineLog;
using test::read_engine_log;

// node-llama-cpp's context rules (docs/fit-llamacpp.md §1) as aimem settings.
FitSettings nlc_settings(uint32_t ctx, uint32_t seqs, uint32_t n_ctx_train) {
  auto pad256 = [](uint32_t x) { return (x + 255) / 256 * 256; };
  FitSettings s;
  s.runtime = Runtime::kLlamaCpp;
  s.device_cpu = true;
  s.ctx = ctx <= n_ctx_train && pad256(ctx) < n_ctx_train ? pad256(ctx) : ctx;
  s.concurrency = seqs;
  s.batch = s.ubatch = std::max(std::min(s.ctx * seqs, 512u), seqs);
  s.unified_kv = false;
  s.flash_attn = true;  // "auto" resolves to enabled on the CPU
  s.kv_type = "f16";
  return s;
}

double term_sum(const Plan& p, const std::string& component, const std::string& prefix = "") {
  double b = 0;
  for (const Term& t : p.terms)
    if (t.component == component && t.what.rfind(prefix, 0) == 0) b += double(t.bytes);
  return b;
}

const Term* term_named(const Plan& p, const std::string& prefix) {
  for (const Term& t : p.terms)
    if (t.what.rfind(prefix, 0) == 0) return &t;
  return nullptr;
}

constexpr double kMiBd = 1024.0 * 1024.0;
// A figure printed with "%8.2f MiB" is within half a unit of the last digit.
constexpr double kPrinted = 0.005 + 1e-9;

struct Model {
  const char* name;
  GgufWriter (*make)(const Shape&);
  Shape shape;
};

TEST(FitLlamaCppRecurrent, StateAndKvEqualTheBuffersTheRealEngineLogs) {
  const std::string modules = AIMEM_NODE_MODULES;
  ASSERT_TRUE(fs::exists(modules + "/node-llama-cpp/package.json"))
      << "node-llama-cpp is not installed under " << modules << ": run `make node-deps`";
  char tmpl[] = "/tmp/aimem-nlc-rs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const Model models[] = {
      {"mamba", mamba, {2, 512, 1024, 16, 4, 32, 1, 300, 0, 0, {}}},
      {"mamba2", mamba2, {2, 256, 512, 64, 4, 8, 2, 300, 0, 0, {}}},
      {"jamba (2 Mamba + 2 attention)", jamba, {4, 256, 512, 16, 4, 16, 1, 300, 4, 512, {0, 2, 0, 2}}},
  };
  const uint32_t settings[][2] = {{512, 1}, {2048, 3}, {1000, 4}};  // context, sequences
  Hardware hw;
  hw.cpu_amx = test::host_has_amx();
  std::string table = fmt::format("\n{:<32} {:>5} {:>4} | {:>9} {:>9} | {:>7} {:>7} {:>7} {:>7} | {:>8} {:>8}\n",
                                  "model", "ctx", "seqs", "RS engine", "RS aimem", "R eng", "R aimem", "S eng",
                                  "S aimem", "KV eng", "KV aimem");
  // Every model is written first and every load measured in one node process.
  std::vector<test::MeasureJob> jobs;
  int n = 0;
  for (const Model& model : models) {
    const std::string path = fmt::format("{}/{}.gguf", dir, n++);
    auto written = model.make(model.shape).write(path);
    ASSERT_TRUE(written) << model.name << ": " << written.error().message;
    for (const auto& [ctx, seqs] : settings)
      jobs.push_back({path, json{{"contextSize", ctx}, {"sequences", seqs}, {"gpuLayers", 0}},
                      fmt::format("{}.{}x{}.log", path, ctx, seqs)});
  }
  const std::vector<test::Measured> measured = test::measure_batch(AIMEM_SOURCE_DIR, jobs, modules, dir + "/jobs.json");
  size_t job = 0;
  n = 0;
  for (const Model& model : models) {
    const std::string path = fmt::format("{}/{}.gguf", dir, n++);
    auto spec = load_model(local_files(), path, "", "");
    ASSERT_TRUE(spec) << model.name << ": " << spec.error().message;
    ASSERT_FALSE(spec->recurrent_r.empty()) << model.name << ": aimem found no recurrent layers";
    for (const auto& [ctx, seqs] : settings) {
      const std::string label = fmt::format("{} ctx {} x {}", model.name, ctx, seqs);
      const std::string& log = jobs[job].log;
      const std::string& cmd = measured[job].command;
      json r = measured[job++].result;
      ASSERT_TRUE(r.is_object() && r.contains("engine")) << label << ": measure.mjs failed: " << cmd << "\n"
                                                         << (r.is_object() ? r.dump() : "");
      EngineLog e = read_engine_log(log);
      ASSERT_TRUE(e.rs_mib && e.r_mib && e.s_mib) << label << ": no RS buffer in the engine's log " << log;
      EXPECT_EQ(e.n_rs_seq.value_or(99), 0u) << label;
      EXPECT_EQ(e.rs_cells.value_or(0), seqs) << label << ": RS cells are one per sequence";

      Plan p = plan_once(*spec, nlc_settings(ctx, seqs, spec->n_ctx_train), hw, {});
      const Term* rs = term_named(p, "recurrent state");
      ASSERT_NE(rs, nullptr) << label;
      EXPECT_TRUE(rs->exact) << label;
      double r_bytes = 0, s_bytes = 0;
      for (size_t il = 0; il < spec->recurrent_r.size(); ++il) {
        r_bytes += double(spec->recurrent_r[il]) * 4 * seqs;
        s_bytes += double(spec->recurrent_s[il]) * 4 * seqs;
      }
      EXPECT_EQ(double(rs->bytes), r_bytes + s_bytes) << label;
      EXPECT_NEAR(double(rs->bytes) / kMiBd, *e.rs_mib, kPrinted) << label << ": RS buffer";
      EXPECT_NEAR(r_bytes / kMiBd, *e.r_mib, kPrinted) << label << ": R (conv state)";
      EXPECT_NEAR(s_bytes / kMiBd, *e.s_mib, kPrinted) << label << ": S (SSM state)";
      const double kv = term_sum(p, "kv_cache", "KV cache");
      if (e.kv_mib) {
        EXPECT_NEAR(kv / kMiBd, *e.kv_mib, kPrinted) << label << ": KV buffer";
      } else {
        EXPECT_EQ(kv, 0) << label << ": aimem counts a KV cache the engine did not allocate";
      }
      if (e.model_mib) {
        EXPECT_NEAR(term_sum(p, "weights") / kMiBd, *e.model_mib, 0.011) << label << ": weights";
      }
      if (e.max_nodes) {
        const Term* meta = term_named(p, "graph metadata");
        ASSERT_NE(meta, nullptr) << label;
        EXPECT_EQ(meta->bytes, kLlamaCppGraphResults * llamacpp_graph_meta_bytes(*e.max_nodes)) << label;
      }
      table += fmt::format("{:<32} {:>5} {:>4} | {:>7.2f}Mi {:>7.3f}Mi | {:>7.2f} {:>7.3f} {:>7.2f} {:>7.3f} | {:>8} {:>8}\n",
                           model.name, ctx, seqs, *e.rs_mib, rs->bytes / kMiBd, *e.r_mib, r_bytes / kMiBd, *e.s_mib,
                           s_bytes / kMiBd, e.kv_mib ? fmt::format("{:.2f}", *e.kv_mib) : "-",
                           kv ? fmt::format("{:.3f}", kv / kMiBd) : "-");
    }
  }
  table += "(engine: llama.cpp v0.5.0 via node-llama-cpp 3.22.1, CPU; MiB as the engine prints them, aimem to 3 decimals)\n";
  std::cout << table;
  fs::remove_all(dir);
}

// ggml's own functions, from the engine's libggml-base.so.
struct Ggml {
  void* lib = nullptr;
  size_t (*tensor_overhead)() = nullptr;
  size_t (*graph_overhead_custom)(size_t, bool) = nullptr;
};

Ggml open_ggml(const std::string& modules) {
  Ggml g;
  std::error_code ec;
  const fs::path root = fs::path(modules) / "@node-llama-cpp";
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() != "libggml-base.so") continue;
    g.lib = dlopen(it->path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!g.lib) continue;
    g.tensor_overhead = reinterpret_cast<size_t (*)()>(dlsym(g.lib, "ggml_tensor_overhead"));
    g.graph_overhead_custom = reinterpret_cast<size_t (*)(size_t, bool)>(dlsym(g.lib, "ggml_graph_overhead_custom"));
    if (g.tensor_overhead && g.graph_overhead_custom) return g;
  }
  return g;
}

TEST(FitLlamaCppGraphMetadata, StructSizesAreTheEngines) {
  Ggml g = open_ggml(AIMEM_NODE_MODULES);
  ASSERT_TRUE(g.tensor_overhead && g.graph_overhead_custom)
      << "no libggml-base.so with ggml_tensor_overhead under " << AIMEM_NODE_MODULES << "/@node-llama-cpp: run `make node-deps`";
  EXPECT_EQ(ggml_tensor_overhead_bytes(), g.tensor_overhead());
  // Sizes around the hash-table steps (2 x size crosses a prime) and real
  // models' max_nodes (1024; 70B llama: 8 x 723 = 5784; 64 x many tensors).
  for (size_t size : {1ul, 1024ul, 1184ul, 2049ul, 4105ul, 5784ul, 8208ul, 65536ul, 200000ul, 1100000000ul})
    EXPECT_EQ(ggml_graph_overhead_bytes(size), g.graph_overhead_custom(size, false)) << "size " << size;
}

TEST(FitLlamaCppGraphMetadata, HandComputation) {
  // max_nodes 1024: 368 bytes of ggml_object + ggml_tensor per node;
  // the cgraph: 96 + 1024 x 8 (nodes) + 1024 x 8 (leafs), hash size 2053
  // (the prime after 2048): 2053 x 4 (use counts) + 4 bytes of alignment +
  // 2053 x 8 (keys) + 65 x 4 (bitset) = 41380, padded to 16 = 41392, + 32
  // for its ggml_object.
  EXPECT_EQ(llamacpp_graph_meta_bytes(1024), 368u * 1024 + 41424u);
  EXPECT_EQ(llamacpp_max_nodes("llama", 100, 512), 1024u);
  EXPECT_EQ(llamacpp_max_nodes("llama", 723, 512), 5784u);
  EXPECT_EQ(llamacpp_max_nodes("qwen3next", 100, 512), 20480u);   // 40 x n_tokens
  EXPECT_EQ(llamacpp_max_nodes("qwen3next", 1000, 512), 32000u);  // 32 x n_tensors
  EXPECT_EQ(llamacpp_max_nodes("kimi-k3", 10, 512), 81920u);
}

// max_nodes against the engine's "sched_reserve: max_nodes = N" for a model
// over the 1024 floor (16 blocks, 147 tensors; 146 with a tied output, which
// llama.cpp's n_tensors() does not count twice), and the plan's term built on it.
TEST(FitLlamaCppGraphMetadata, MaxNodesIsTheEnginesAndNotInTheBaseline) {
  const std::string modules = AIMEM_NODE_MODULES;
  ASSERT_TRUE(fs::exists(modules + "/node-llama-cpp/package.json")) << "run `make node-deps`";
  char tmpl[] = "/tmp/aimem-nlc-meta-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  struct Case {
    uint32_t layers;
    bool tied;
  };
  const Case cases[] = {{16, true}, {16, false}, {2, false}};
  // Every model is written first and measured in one node process.
  std::vector<test::MeasureJob> jobs;
  for (Case c : cases) {
    test::TinyModelOptions o;
    o.n_layer = c.layers;
    o.n_embd = 64;
    o.n_head = 4;
    o.n_head_kv = 4;
    o.n_ff = 128;
    o.n_vocab = 300;
    o.tied_output = c.tied;
    const std::string path = fmt::format("{}/l{}{}.gguf", dir, c.layers, c.tied ? "t" : "");
    ASSERT_TRUE(test::write_tiny_model(o, path));
    jobs.push_back({path, json{{"contextSize", 512}, {"gpuLayers", 0}}, path + ".log"});
  }
  const std::vector<test::Measured> measured = test::measure_batch(AIMEM_SOURCE_DIR, jobs, modules, dir + "/jobs.json");
  for (size_t job = 0; job < jobs.size(); ++job) {
    const Case c = cases[job];
    const std::string& path = jobs[job].gguf;
    const std::string& log = jobs[job].log;
    const std::string& cmd = measured[job].command;
    json r = measured[job].result;
    ASSERT_TRUE(r.is_object() && r.contains("engine")) << cmd;
    EngineLog e = read_engine_log(log);
    ASSERT_TRUE(e.max_nodes) << "no max_nodes line in " << log;
    auto spec = load_model(local_files(), path, "", "");
    ASSERT_TRUE(spec) << spec.error().message;
    Plan p = plan_once(*spec, nlc_settings(512, 1, spec->n_ctx_train), Hardware{}, {});
    const Term* meta = term_named(p, "graph metadata");
    ASSERT_NE(meta, nullptr);
    EXPECT_TRUE(meta->exact);
    EXPECT_EQ(meta->component, "runtime_overhead");
    EXPECT_EQ(meta->bytes, kLlamaCppGraphResults * llamacpp_graph_meta_bytes(*e.max_nodes))
        << c.layers << " layers" << (c.tied ? ", tied" : "") << ": engine max_nodes " << *e.max_nodes;
    EXPECT_NE(meta->what.find(fmt::format("{} nodes", *e.max_nodes)), std::string::npos) << meta->what;
    const Term* base = term_named(p, "process baseline");
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(base->what.find("graph"), std::string::npos) << "graph metadata is its own term: " << base->what;
    std::cout << fmt::format("{} layers{}: engine max_nodes {}, aimem term {} bytes\n", c.layers, c.tied ? " (tied)" : "",
                             *e.max_nodes, meta->bytes);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aimem::fit
