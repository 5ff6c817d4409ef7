// Ollama's scheduler when a model it unloaded does not give its GPU memory
// back (server/sched.go): it waits for the free VRAM to recover, warns, and
// the next model is placed in what is left, part of it on the CPU or after
// evicting another model:
//
//   level=WARN source=sched.go:685 msg="gpu VRAM usage didn't recover within timeout" seconds=5.25 runner.size="20.1 GiB" ...
//   level=INFO source=server.go:220 msg="model requires more gpu memory than is currently available, evicting a model to make space"
//   level=INFO source=server.go:1244 msg="offloaded 18/41 layers to GPU"
//
// The warning alone is a slow release that may still recover: nothing. With
// a placement squeezed after it (more memory needed than is available, or a
// partial offload), the GPU's memory was held by what should have been freed:
// a device failure (gpu_oom, layer gpu_vram) whose cause is that retention
// (leak_or_accumulation), at the squeezed placement's line.
//
//   level=ERROR source=sched.go:344 msg="error loading llama server" error="timed out waiting for llama runner to start - progress 0.00 - "
//
// is the load outlasting Ollama's load timeout (OLLAMA_LOAD_TIMEOUT, 5 minutes
// by default; a model read from a slow disk, a large CPU share): a look-alike.
//
//   error="input (2861 tokens) is too large to process. increase the physical batch size (current batch size: 2048)"
//
// (llama.cpp's server, through Ollama's embed and rerank: an embedding or
// rerank input must fit one physical batch, n_ubatch) is a request refused
// by its length before anything was allocated: a look-alike too.
// A runner killed for memory says so ("llama runner process has terminated:
// signal: killed"), which the exit-status reader reads and which wins.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"VRAM usage didn't recover", kCompanion},
    {"requires more gpu memory than is currently available", kCompanion},
    {"layers to GPU", kContext},
    {"timed out waiting for llama runner to start", kCompanion},
    {"too large to process. increase the physical batch size", kCompanion},
};

class OllamaSched final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "VRAM usage didn't recover")) {
      if (!guards::is_advice_line(s)) ++warnings_;
      return;
    }
    if (text::contains(s, "timed out waiting for llama runner to start")) {
      if (timeout_sent_ || guards::is_advice_line(s)) return;
      timeout_sent_ = true;
      out.add(look_alike(line, Family::llamacpp, 0.6f,
                         "Ollama's model load outlasted its load timeout (OLLAMA_LOAD_TIMEOUT): a slow load, not memory running out"));
      return;
    }
    if (text::contains(s, "too large to process. increase the physical batch size")) {
      if (batch_sent_ || guards::is_advice_line(s)) return;
      batch_sent_ = true;
      out.add(look_alike(line, Family::llamacpp, 0.7f,
                         "an input longer than the engine's physical batch (n_ubatch), refused by its length before any "
                         "allocation: a request check, not memory running out"));
      return;
    }
    if (warnings_ == 0 || reported_) return;
    bool squeezed = text::contains(s, "requires more gpu memory than is currently available");
    if (auto o = text::after(s, "offloaded ")) {
      std::string_view rest;
      auto on = text::parse_u64(*o, &rest);
      auto of = text::starts_with(rest, "/") ? text::parse_u64(rest.substr(1)) : std::nullopt;
      squeezed = squeezed || (on && of && *on < *of && text::contains(s, "layers to GPU"));
    }
    if (!squeezed) return;
    reported_ = true;
    Fact f = make_fact(line, FactKind::gpu_oom, Family::llamacpp);
    f.layer = Layer::gpu_vram;
    f.cause = Cause::leak_or_accumulation;
    f.strength = 0.6f;
    f.detail = fmt::format("Ollama: GPU memory of unloaded models not given back ({} warning{}), the next model squeezed",
                           warnings_, warnings_ == 1 ? "" : "s");
    out.add(std::move(f));
  }

 private:
  uint64_t warnings_ = 0;
  bool reported_ = false, timeout_sent_ = false, batch_sent_ = false;
};

}  // namespace

const RecognizerEntry kOllamaSchedEntry{"ollama_sched", Family::llamacpp, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new OllamaSched); }};

}  // namespace aimem
