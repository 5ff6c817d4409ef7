// The memory plan of the model a server runs, through `aimem fit`'s planner:
// the model from the policy (or --model) when given, else the one the server's
// flags name (a local path, or a catalog name, tried also by its last path
// component so /models/Llama-3.1-8B-Instruct resolves offline); the GPU from
// the policy, else a node selector naming a catalog GPU; settings from the
// server's flags. Model files are read once per name.
#include "check/model_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/text.h"
#include "fit/catalog.h"
#include "fit/inputs.h"
#include "sources/files.h"

namespace aimem::check {
namespace {

std::optional<fit::Runtime> fit_runtime(Server s) {
  switch (s) {
    case Server::kVllm:
    case Server::kSglang: return fit::Runtime::kVllm;  // SGLang sizes its KV pool from a static fraction like vLLM
    case Server::kLlamaCpp: return fit::Runtime::kLlamaCpp;
    case Server::kOllama: return fit::Runtime::kOllama;
    case Server::kTgi: return fit::Runtime::kTgi;
    case Server::kNone: return std::nullopt;
  }
  return std::nullopt;
}

uint32_t clamp_u32(int64_t v, uint32_t hi) { return uint32_t(std::clamp<int64_t>(v, 0, hi)); }

// A server's quantization flag as fit's --quant names it ("" when the
// checkpoint's own config says it: awq, gptq and fp8 checkpoints are sized
// from their config; a value fit does not know is left to the checkpoint).
std::string fit_quant(std::string_view v) {
  std::string q = text::lower(v);
  if (q == "bitsandbytes-nf4" || q == "bitsandbytes-fp4" || q == "bnb-4bit" || q == "nf4") return "bnb-4bit";
  if (q == "bitsandbytes" || q == "bitsandbytes-8bit" || q == "eetq" || q == "bnb-8bit") return "bnb-8bit";
  if (q == "awq" || q == "awq_marlin") return "awq";
  if (q == "gptq" || q == "gptq_marlin" || q == "marlin") return "gptq";
  if (q == "fp8") return "fp8";
  return "";
}

}  // namespace

Result<fit::ModelSpec> ModelCache::load(const std::string& name, const std::string& quant) {
  const std::string key = name + "\n" + quant;
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  Result<fit::ModelSpec> r = fit::load_model(local_files(), name, "", quant);
  if (!r) {
    // A path that is not here: its last component may be a catalog name.
    std::string base = name;
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
    if (base != name && fit::find_model(base)) {
      r = fit::catalog_spec(base);
      if (r && !quant.empty()) r = fit::load_model(local_files(), base, "", quant);
    }
  }
  cache_.emplace(key, r);
  return r;
}

PlanInfo plan_for(const Workload& w, const Container& c, const ServerConfig& cfg, const Policy& policy,
                  ModelCache& models) {
  PlanInfo info;
  auto runtime = fit_runtime(cfg.server);
  if (!runtime) {
    info.why_not = "no inference server recognised in its command or image";
    return info;
  }
  std::string name = policy.model ? *policy.model : (cfg.model ? cfg.model->value : "");
  if (name.empty()) {
    info.why_not = "the model is unknown (policy model, --model, or a model flag in the manifest)";
    return info;
  }
  // The server's own quantization flag, in fit's spelling: the weights it
  // loads are that size, not the checkpoint's float size (TGI's
  // QUANTIZE=bitsandbytes-nf4 halves Mixtral twice over).
  auto spec = models.load(name, cfg.quantization ? fit_quant(cfg.quantization->value) : "");
  if (!spec) {
    info.why_not = fmt::format("the model '{}' could not be read ({}); name it with --model or policy model",
                               name, spec.error().message);
    return info;
  }
  info.model = spec->name.empty() ? name : spec->name;
  // Hardware: the policy's GPU, else one a node selector names.
  fit::Hardware hw;
  if (policy.gpu) {
    if (const fit::GpuInfo* g = fit::find_gpu(*policy.gpu)) hw.gpu_total = g->memory_bytes, hw.gpu_name = g->name;
  }
  if (policy.gpu_memory_bytes) hw.gpu_total = *policy.gpu_memory_bytes;
  if (!hw.gpu_total)
    for (const std::string& v : w.node_selector)
      if (const fit::GpuInfo* g = fit::find_gpu(v)) {
        hw.gpu_total = g->memory_bytes;
        hw.gpu_name = g->name;
        break;
      }
  info.gpu_known = hw.gpu_total > 0;
  int64_t gpus = c.gpus ? c.gpus->value : 0;
  if (gpus < 0 || (gpus == 0 && (info.gpu_known || w.platform == Platform::kCommand || w.platform == Platform::kSystemd)))
    gpus = policy.gpus;
  hw.gpu_count = uint32_t(std::clamp<int64_t>(gpus, 0, 64));
  hw.gpu_source = "aimem check";
  hw.ram_total = 0;  // host capacity is the rules' business (limits, node memory)
  fit::FitSettings s;
  s.runtime = *runtime;
  if (cfg.context) s.ctx = clamp_u32(cfg.context->value, 1u << 24);
  if (cfg.concurrency) s.concurrency = clamp_u32(cfg.concurrency->value, 65536);
  if (cfg.gpu_fraction && cfg.gpu_fraction->value > 0 && cfg.gpu_fraction->value <= 1) s.gpu_mem_util = cfg.gpu_fraction->value;
  if (cfg.tp && cfg.tp->value > 0) s.tp = clamp_u32(cfg.tp->value, 64);
  // Pipeline stages hold their own layers on their own GPUs: for memory, tp x
  // pp GPUs share the weights and the KV cache (vLLM 405B at tp 8, pp 2 is on
  // 16 GPUs, not 8; ignoring pp made kv-over-budget fire on every multi-node
  // LeaderWorkerSet of the corpus).
  if (cfg.pp && cfg.pp->value > 1) s.tp = clamp_u32(int64_t(s.tp) * cfg.pp->value, 64);
  s.gpus = std::max<uint32_t>(1, std::max(s.tp, hw.gpu_count));
  if (hw.gpu_count < s.tp && hw.gpu_count > 0) hw.gpu_count = s.tp;
  if (cfg.kv_type) s.kv_type = cfg.kv_type->value;
  if (cfg.gpu_layers && cfg.gpu_layers->value >= 0) s.gpu_layers = int(std::min<int64_t>(cfg.gpu_layers->value, 100000));
  s.mmap = !cfg.no_mmap;
  s.device_cpu = hw.gpu_count == 0;
  // With the GPU's size unknown (gpu_total 0) the plan still places the
  // model on GPUs; its host-side figures (load peak, host RAM) hold, and the
  // rules that need the GPU's capacity say they could not check it.
  info.plan = fit::plan_once(*spec, s, hw, {});
  return info;
}

}  // namespace aimem::check
