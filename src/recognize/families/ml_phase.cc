// What an ML workload was doing when it failed: loading a model, or stepping
// a batch. These markers are context; the diagnosis reads them to tell a
// model_load failure from a concurrency_batch one when the failure message
// itself does not say (a PyTorch OOM is the same text in both).
//
// Loading (phase_load), from log lines and traceback frames:
//   Loading checkpoint shards: 100%|...|  (transformers)      Loading safetensors checkpoint shards (vLLM)
//   Starting to load model ... / Loading model weights took 14.99 GB / Model loading took 15.2 GiB (vLLM)
//   llama_model_load: ... / llm_load_tensors: / load_tensors: (llama.cpp)   {"function":"load_model",...}
//   File "...", line N, in load_model / from_pretrained / load_state_dict / load_checkpoint
//   -- loading /data/models/... (MLC)    Loading model from ... / Loading weights ...
// Serving or stepping (phase_serve):
//   engine_step, execute_model, run_engine_loop (vLLM); generate_token, in warmup (TGI); sampler frames,
//   logits.sort / logits = ... (sampling); traceback frames "in forward", "in generate", "in _sample";
//   training steps: ".backward(", "in train_step", "in training_step", "optimizer.step(";
//   vLLM's start-up profile of a max-size batch (profile_run, _dummy_run) and CUDA graph capture
//   (capture_model, "Capturing cudagraphs", "Capturing CUDA graph"): both size a batch of max_num_seqs /
//   max_num_batched_tokens, so an OOM there is the batch, not the weights.
//
// One marker of a kind per few lines is enough (a traceback has many frames).
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

struct Marker {
  std::string_view literal;
  FactKind kind;
  std::string_view detail;
};

constexpr Marker kMarkers[] = {
    {"checkpoint shards", FactKind::phase_load, "loading checkpoint shards"},
    {"Starting to load model", FactKind::phase_load, "loading model weights"},
    {"Loading model weights", FactKind::phase_load, "loading model weights"},
    {"Model loading took", FactKind::phase_load, "loading model weights"},
    {"llama_model_load", FactKind::phase_load, "llama.cpp loading the model"},
    {"load_tensors:", FactKind::phase_load, "llama.cpp loading tensors"},
    {"load_model", FactKind::phase_load, "load_model"},
    {"from_pretrained", FactKind::phase_load, "from_pretrained"},
    {"load_state_dict", FactKind::phase_load, "load_state_dict"},
    {"load_checkpoint", FactKind::phase_load, "loading a checkpoint"},
    {"-- loading ", FactKind::phase_load, "loading model parameters"},
    {"Loading model from", FactKind::phase_load, "loading the model"},
    {"Loading weights", FactKind::phase_load, "loading weights"},
    // Serving / stepping.
    {"engine_step", FactKind::phase_serve, "engine step"},
    {"execute_model", FactKind::phase_serve, "executing the model on a batch"},
    {"run_engine_loop", FactKind::phase_serve, "engine loop"},
    {"generate_token", FactKind::phase_serve, "generating tokens"},
    {", in warmup", FactKind::phase_serve, "warmup of a max-size prefill batch"},
    {"sampler", FactKind::phase_serve, "sampling"},
    {"logits", FactKind::phase_serve, "computing or sorting logits"},
    {", in forward", FactKind::phase_serve, "forward pass"},
    {", in _forward", FactKind::phase_serve, "forward pass"},
    {", in generate", FactKind::phase_serve, "generation"},
    {", in _sample", FactKind::phase_serve, "sampling"},
    {".backward(", FactKind::phase_serve, "training step (backward)"},
    {", in backward", FactKind::phase_serve, "training step (backward)"},
    {", in train_step", FactKind::phase_serve, "training step"},
    {", in training_step", FactKind::phase_serve, "training step"},
    {"optimizer.step(", FactKind::phase_serve, "training step (optimizer)"},
    {"profile_run", FactKind::phase_serve, "profiling a max-size batch"},
    {"_dummy_run", FactKind::phase_serve, "profiling a max-size batch"},
    {"capture_model", FactKind::phase_serve, "CUDA graph capture"},
    {"Capturing cudagraphs", FactKind::phase_serve, "CUDA graph capture"},
    {"Capturing CUDA graph", FactKind::phase_serve, "CUDA graph capture"},
};

constexpr Pattern kPatterns[] = {
    {"checkpoint shards", kContext}, {"Starting to load model", kContext}, {"Loading model weights", kContext}, {"Model loading took", kContext},
    {"llama_model_load", kContext},  {"load_tensors:", kContext},          {"load_model", kContext},            {"from_pretrained", kContext},
    {"load_state_dict", kContext},   {"load_checkpoint", kContext},        {"-- loading ", kContext},           {"Loading model from", kContext},
    {"Loading weights", kContext},   {"engine_step", kContext},            {"execute_model", kContext},         {"run_engine_loop", kContext},
    {"generate_token", kContext},    {", in warmup", kContext},            {"sampler", kContext},               {"logits", kContext},
    {", in forward", kContext},      {", in _forward", kContext},          {", in generate", kContext},         {", in _sample", kContext},
    {".backward(", kContext},        {", in backward", kContext},          {", in train_step", kContext},       {", in training_step", kContext},
    {"optimizer.step(", kContext},   {"profile_run", kContext},            {"_dummy_run", kContext},            {"capture_model", kContext},
    {"Capturing cudagraphs", kContext}, {"Capturing CUDA graph", kContext},
};
static_assert(std::size(kPatterns) == std::size(kMarkers), "one pattern per marker");

constexpr uint64_t kQuietLines = 8;  // one marker of a kind per this many lines

class MlPhase final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    // Serving markers first: "execute_model" inside a load_model traceback line
    // is rare, a profile_run frame below load lines is not.
    const Marker* hit = nullptr;
    for (const Marker& m : kMarkers) {
      if (!text::contains(s, m.literal)) continue;
      if (!hit || (m.kind == FactKind::phase_serve && hit->kind == FactKind::phase_load)) hit = &m;
      if (hit->kind == FactKind::phase_serve) break;
    }
    if (!hit) return;
    // "-- loading" only as the start of a line (MLC's own progress line).
    if (hit->literal == "-- loading " && !text::starts_with(text::trim_left(s), "-- loading ")) return;
    bool load = hit->kind == FactKind::phase_load;
    uint64_t& last = load ? last_load_ : last_serve_;
    if (last && line.number <= last + kQuietLines) return;
    last = line.number;
    Fact f = make_fact(line, hit->kind, Family::runtime);
    f.detail = std::string(hit->detail);
    out.add(std::move(f));
  }

 private:
  uint64_t last_load_ = 0, last_serve_ = 0;
};

}  // namespace

const RecognizerEntry kMlPhaseEntry{
    "ml_phase", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new MlPhase); }};

}  // namespace aimem
