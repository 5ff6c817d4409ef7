// `aimem fit` end to end through the real binary: verdicts and exit codes,
// the JSON contract (DESIGN §2), every runtime side by side, the engine logs
// of the corpus through --against, and bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fit/gguf.h"
#include "support/test_support.h"
#include "support/tiny_model.h"

namespace aimem {
namespace {

using nlohmann::json;
using test::run_aimem;

TEST(FitCli, CatalogModelVerdictAndExitCode) {
  // Llama 3.1 8B in bf16 (16 GB) on an L4 (22.5 GiB) with vLLM's default
  // max_model_len of 131072: the KV budget cannot hold one sequence.
  auto r = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cap the context"), std::string::npos) << r.out;
  // At 8192 tokens it fits.
  r = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4", "--ctx", "8192"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: FITS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192"), std::string::npos);
}

TEST(FitCli, JsonHasTheContractFields) {
  auto r = run_aimem({"fit", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "A10G", "--ctx", "16384", "--concurrency", "4",
                      "--json"});
  ASSERT_LE(r.status, 1) << r.err;
  json j = json::parse(r.out);
  for (const char* k : {"model", "runtime", "settings", "breakdown_bytes", "devices", "host_bytes",
                        "load_peak_host_bytes", "total_bytes", "fits", "kv_bytes_per_token", "kv_cache_tokens",
                        "max_context", "max_concurrency", "suggestions"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* c : {"weights", "quant_metadata", "kv_cache", "compute", "runtime_overhead", "extra_models",
                        "request_buffers"})
    EXPECT_TRUE(j["breakdown_bytes"].contains(c)) << c;
  EXPECT_EQ(j["runtime"], "vllm");
  EXPECT_EQ(j["settings"]["concurrency"], 4);
  // Qwen2.5-7B: 28 layers x 2 x 4 KV heads x 128 x 2 B = 57344 B per token.
  EXPECT_EQ(j["kv_bytes_per_token"], 57344);
  EXPECT_EQ(j["fits"].get<bool>(), r.status == 0);
}

TEST(FitCli, EveryRuntimeSideBySide) {
  auto r = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "RTX 4090", "--quant", "q4_k_m",
                      "--ctx", "8192", "--runtime", "all", "--json"});
  ASSERT_LE(r.status, 1) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["runtimes"].size(), 6u);
  std::vector<std::string> names;
  for (const auto& p : j["runtimes"]) names.push_back(p["runtime"]);
  EXPECT_EQ(names, (std::vector<std::string>{"llama.cpp", "ollama", "vllm", "sglang", "tgi", "transformers"}));
  auto t = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "RTX 4090", "--ctx", "8192", "--runtime", "all"});
  EXPECT_NE(t.out.find("runtime             weights"), std::string::npos) << t.out;
}

TEST(FitCli, GgufFileIsReadExactlyAndFitsOnTheCpu) {
  std::string dir = test::temp_dir("fit-cli");
  test::TinyModelOptions o;
  o.n_layer = 4;
  o.n_embd = 256;
  o.n_head = 4;
  o.n_head_kv = 1;
  o.n_ff = 768;
  o.n_vocab = 2000;
  o.type = "q8_0";
  ASSERT_TRUE(test::write_tiny_model(o, dir + "/tiny.gguf"));
  auto r = run_aimem({"fit", dir + "/tiny.gguf", "--device", "cpu", "--ram", "1GiB", "--ctx", "2048", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["runtime"], "llama.cpp");
  EXPECT_EQ(j["model"]["weights_exact"], true);
  // MQA, 4 layers, 1 KV head of 64, f16: 4 x 2 x 64 x 2 B = 1024 B per token; 2048 cells.
  EXPECT_EQ(j["breakdown_bytes"]["kv_cache"], 1024 * 2048);
  auto big = run_aimem({"fit", dir + "/tiny.gguf", "--device", "cpu", "--ram", "8MiB", "--ctx", "2048"});
  EXPECT_EQ(big.status, 1) << big.out;
  std::filesystem::remove_all(dir);
}

// The corpus's engine logs through --against: aimem's prediction beside what
// vLLM and llama.cpp printed (tests/fixtures/corpus/fit_cases.jsonl).
TEST(FitCli, AgainstTheCorpusLogs) {
  std::ifstream in(test::source_dir() + "/tests/fixtures/corpus/fit_cases.jsonl");
  std::string line;
  std::string dir = test::temp_dir("fit-against");
  int checked = 0;
  while (std::getline(in, line)) {
    json c = json::parse(line);
    std::string id = c["id"], model;
    if (id == "e005") model = "meta-llama/Llama-3.1-8B-Instruct";
    if (id == "e011") model = "microsoft/phi-4";
    if (model.empty()) continue;
    std::string log = dir + "/" + id + ".log";
    test::write_file(log, c["log_excerpt"].get<std::string>() + "\n");
    auto r = run_aimem({"fit", model, "--against", log, "--json"});
    EXPECT_EQ(r.status, 0) << id << ": " << r.out << r.err;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    int compared = 0;
    for (const auto& comp : j["components"])
      if (!comp["error"].is_null()) ++compared;
    EXPECT_GE(compared, 4) << id << ": " << r.out;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
  std::filesystem::remove_all(dir);
}

// With no --gpu/--vram, fit reads this machine: NVML (here the stand-in
// library with a scripted L4 that other processes already hold 6 GiB of).
TEST(FitCli, ThisMachinesGpuThroughNvml) {
  auto r = run_aimem({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--ctx", "8192", "--json"}, "",
                     {"AIMEM_NVML_LIBRARY=" AIMEM_FAKE_NVML, "AIMEM_FAKE_NVML_DEVICES=NVIDIA L4:23034:6144:1"});
  ASSERT_LE(r.status, 1) << r.err;
  json j = json::parse(r.out);
  const json& gpu = j["devices"][0];
  EXPECT_EQ(gpu["name"], "GPU0");
  EXPECT_EQ(gpu["capacity_bytes"], 23034ULL << 20);
  EXPECT_EQ(gpu["others_bytes"], 6144ULL << 20);
  EXPECT_EQ(gpu["gpu"], "NVIDIA L4");
  // 16 GB of weights next to 6 GiB held by others on a 22.5 GiB card: vLLM cannot start.
  EXPECT_FALSE(j["fits"].get<bool>());
}

TEST(FitCli, BadInputIsAClearErrorWithExit2) {
  std::string dir = test::temp_dir("fit-bad");
  test::write_file(dir + "/broken.gguf", std::string("GGUF\x03\x00\x00\x00", 8));
  test::write_file(dir + "/config.json", "{\"model_type\": \"llama\", \"hidden_size\": 4096}");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"fit", dir + "/broken.gguf"}, "broken.gguf"},
      {{"fit", dir + "/nope.gguf"}, "nope.gguf"},
      {{"fit", "no-such/model-anywhere"}, "not a model in the built-in catalog"},
      {{"fit", dir + "/config.json"}, "num_hidden_layers"},
      {{"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "Z9000"}, "--gpu Z9000"},
      {{"fit", "meta-llama/Llama-3.1-8B-Instruct", "--kv-type", "q3_z"}, "--kv-type q3_z"},
      {{"fit", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "magic"}, "--runtime magic"},
      {{"fit", "meta-llama/Llama-3.1-8B-Instruct", "--vram", "lots"}, "--vram"},
      {{"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-layers", "many"}, "--gpu-layers many"},
      {{"fit", "--against", dir + "/config.json"}, "no llama.cpp, Ollama, vLLM or SGLang memory lines"},
  };
  for (const Case& c : cases) {
    auto r = run_aimem(c.args);
    EXPECT_EQ(r.status, 2) << c.args[1] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aimem
