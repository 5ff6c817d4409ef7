// A tiny but real llama-architecture GGUF that llama.cpp loads and runs:
// random weights from a seeded PRNG (small, so inference stays finite) and a
// byte-level SentencePiece ("llama") tokenizer that can encode any text.
// Used by tests, by `make_tiny_gguf` and by the llama.cpp calibration study
// (docs/fit-llamacpp.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "fit/gguf.h"

namespace aimem::test {

struct TinyModelOptions {
  uint32_t n_layer = 2;
  uint32_t n_embd = 64;
  uint32_t n_head = 4;
  uint32_t n_head_kv = 4;      // = n_head: MHA; < n_head: GQA; 1: MQA
  uint32_t n_ff = 128;
  uint32_t n_vocab = 300;      // at least 259 (3 control + 256 byte tokens)
  uint32_t n_ctx_train = 2048;
  std::string type = "f32";    // weight type of the 2-D tensors: f32, f16, q8_0
  uint64_t seed = 1;
  float scale = 0.02f;         // weights are uniform in [-scale, scale]
  bool tied_output = false;    // true: no output.weight (llama.cpp reuses token_embd)
};

// The ggml type id of "f32" / "f16" / "q8_0"; an error names the option.
Result<uint32_t> tiny_weight_type(const std::string& name);

// The writer holding the model (metadata and tensors with data); errors for
// shapes llama.cpp or the weight type cannot take (n_embd % n_head, n_head %
// n_head_kv, Q8_0 rows not a multiple of 32, n_vocab < 259).
Result<fit::GgufWriter> tiny_model(const TinyModelOptions& options);

// Builds and writes the model to path.
Result<bool> write_tiny_model(const TinyModelOptions& options, const std::string& path);

// The tokenizer keys of the tiny llama model (a byte-level SentencePiece
// vocabulary llama.cpp loads for any architecture) under another
// architecture, with general.file_type all F32; the engine tests of other
// architectures add their own keys and tensors to it.
fit::GgufWriter tiny_writer(const std::string& arch, uint32_t n_vocab);

// Adds F32 tensors to a writer: small uniform values from a fixed LCG (so
// inference stays finite), or a constant (norm weights 1, decays -1).
struct TensorFiller {
  fit::GgufWriter& w;
  uint64_t state = 12345;
  void add(const std::string& name, std::vector<uint64_t> ne, float constant = NAN);
};

// The engine tests' helpers: the standard output of a shell command (the
// node-llama-cpp measuring scripts print one JSON document), and whether this
// CPU has AMX (llama.cpp then repacks weights into an AMX buffer).
std::string shell_output(const std::string& cmd);
bool host_has_amx();

// The command that loads a GGUF in the real engine (measure.mjs under the
// source tree's tests/llamacpp, with node-llama-cpp from `modules`),
// `settings` a JSON object of its options, the engine's own log written to
// `log`; it prints one JSON document.
std::string measure_command(const std::string& source_dir, const std::string& gguf, const std::string& settings, const std::string& modules,
                            const std::string& log);

// Many loads in one node process (measure.mjs --batch: node-llama-cpp is
// imported and getLlama() runs once, most of a single run's time). A job is
// what measure_command takes: the GGUF, its settings and the log file.
struct MeasureJob {
  std::string gguf;
  nlohmann::json settings;  // a JSON object of measure.mjs's options
  std::string log;
};
// One job's outcome: the JSON object measure.mjs printed for it (the same as
// a single run prints, an {"error": ...} object included; discarded when no
// line came back for it, e.g. the engine aborted the process), and the
// command for failure messages: the batch, the job's place in it, and the
// single command that measures that job alone.
struct Measured {
  nlohmann::json result;
  std::string command;
};
// Writes the jobs to `jobs_file`, runs the batch and returns one Measured per
// job, in the jobs' order.
std::vector<Measured> measure_batch(const std::string& source_dir, const std::vector<MeasureJob>& jobs,
                                    const std::string& modules, const std::string& jobs_file);

// What the engine logged for one load, from measure.mjs's --log file:
//   load_tensors:   CPU model buffer size =  0.50 MiB
//   llama_kv_cache:        CPU KV buffer size =  0.25 MiB
//   llama_memory_recurrent:        CPU RS buffer size =     0.13 MiB
//   llama_memory_recurrent: size =    0.13 MiB (     1 cells,   2 layers,  1 seqs 0 rs_seq), R (f32):   0.00 MiB, S (f32):   0.12 MiB
//   sched_reserve: max_nodes = 1024
// Buffers on several devices are summed.
struct EngineLog {
  std::optional<double> rs_mib, r_mib, s_mib, kv_mib, model_mib;
  std::optional<uint32_t> max_nodes, rs_cells, n_rs_seq;
};
EngineLog read_engine_log(const std::string& path);

}  // namespace aimem::test
