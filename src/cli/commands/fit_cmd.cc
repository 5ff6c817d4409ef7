// aimem fit MODEL: will this model fit, and with how much headroom.
#include <cstdio>
#include <optional>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "core/units.h"
#include "fit/against.h"
#include "fit/catalog.h"
#include "fit/inputs.h"
#include "fit/plan.h"
#include "fit/runtime.h"
#include "render/fit_render.h"
#include "sources/files.h"
#include "sources/machine.h"
#include "sources/readfile.h"

namespace aimem::cli {
namespace {

struct FitArgs {
  std::string model;
  std::string runtime;
  uint32_t ctx = 0, concurrency = 0, batch = 0, ubatch = 0, gpus = 0, tp = 0, n_cpu_moe = 0;
  std::string ctx_text, concurrency_text;  // "8192", "8k"; empty: the runtime's default
  std::string kv_type, flash_attn, gpu_layers, device, dtype, quant, against;
  double gpu_mem_util = 0, mem_fraction = 0, cuda_memory_fraction = 0;
  uint32_t max_total_tokens = 0, max_num_seqs = 0;
  std::string chunked_prefill;
  std::vector<std::string> also;
  fit::HardwareArgs hw;
  bool json = false, rolling = false, no_mmap = false, no_kv_unified = false, no_hybrid_kv = false;
  bool list_models = false, list_gpus = false;
};

int fail(const std::string& msg) {
  fmt::print(stderr, "aimem fit: {}\n", msg);
  return 2;
}

int list(const FitArgs& a) {
  if (a.list_gpus)
    for (const auto& g : fit::gpu_catalog())
      fmt::print("{:<24} {:>12}  {}\n", g.name, units::format_bytes(g.memory_bytes), g.citation);
  if (a.list_models)
    for (const auto& m : fit::model_catalog()) fmt::print("{:<48} {:<6} {}\n", m.id, m.dtype, m.citation);
  return 0;
}

// This machine's memory for the plan, read only when no --gpu, --vram or
// --ram says what to plan for (and NVML only without --device cpu).
fit::MachineReading read_this_machine(const fit::HardwareArgs& hw) {
  fit::MachineReading m;
  if (!fit::reads_this_machine(hw)) return m;
  if (!hw.device_cpu)
    for (GpuMemory& g : gpu_memory()) m.gpus.push_back({std::move(g.name), g.total, g.used});
  m.cpu_amx = cpu_has_amx("/");
  m.mem_available = host_mem_available("/");
  m.cgroup_room = own_cgroup_room("/");
  return m;
}

int against(const FitArgs& a) {
  auto text = read_small_file(a.against, 256u << 20);
  if (!text) {
    fmt::print(stderr, "aimem fit: {}: cannot read the log\n", a.against);
    return 2;
  }
  // --gpu / --vram name the GPU when the log does not print its size.
  std::optional<fit::Hardware> hw;
  if (!a.hw.gpu.empty() || !a.hw.vram.empty()) {
    fit::HardwareArgs h = a.hw;
    h.gpus = std::max(a.gpus, a.tp);
    auto r = fit::resolve_hardware(h, fit::MachineReading{});
    if (!r) return fail(r.error().message);
    hw = *r;
  }
  return fit::run_against(local_files(), a.against, *text, a.model, a.json, hw ? &*hw : nullptr);
}

int run(FitArgs& a) {
  if (a.list_gpus || a.list_models) return list(a);
  if (!a.against.empty()) return against(a);
  if (a.model.empty()) return fail("name a model: a GGUF file, a model folder, a config.json or a catalog name");
  // Counts as `aimem probe --contexts` reads them (8k = 8192); 0 is no
  // context and no sequence, not "the default": leave the option out for that.
  if (!a.ctx_text.empty()) {
    auto v = units::parse_count(a.ctx_text, "--ctx", 1u << 24);
    if (!v) return fail(v.error().message);
    a.ctx = uint32_t(*v);
  }
  if (!a.concurrency_text.empty()) {
    auto v = units::parse_count(a.concurrency_text, "--concurrency", 65536);
    if (!v) return fail(v.error().message);
    a.concurrency = uint32_t(*v);
  }
  fit::FitSettings s;
  std::vector<fit::Runtime> runtimes;
  if (a.device == "cpu") {
    s.device_cpu = true;
    a.hw.device_cpu = true;
  } else if (!a.device.empty() && a.device != "gpu") {
    return fail(fmt::format("--device {}: expected cpu or gpu", a.device));
  }
  const FileSystem& files = local_files();
  auto model = fit::load_model(files, a.model, a.dtype, a.quant);
  if (!model) return fail(model.error().message);
  if (a.runtime.empty()) {
    runtimes.push_back(model->source == "gguf" ? fit::Runtime::kLlamaCpp : fit::Runtime::kVllm);
  } else if (a.runtime == "all") {
    runtimes = {fit::Runtime::kLlamaCpp, fit::Runtime::kOllama, fit::Runtime::kVllm, fit::Runtime::kSglang,
                fit::Runtime::kTgi, fit::Runtime::kTransformers};
  } else {
    auto spec = fit::parse_runtime_spec(a.runtime);
    if (!spec) return fail(spec.error().message);
    runtimes.push_back(spec->runtime);
    s.engine_version = spec->version;
  }
  if (a.mem_fraction < 0 || a.mem_fraction > 1)
    return fail(fmt::format("--mem-fraction-static {}: expected a fraction in (0, 1]", a.mem_fraction));
  if (a.cuda_memory_fraction < 0 || a.cuda_memory_fraction > 1)
    return fail(fmt::format("--cuda-memory-fraction {}: expected a fraction in (0, 1]", a.cuda_memory_fraction));
  if (!a.chunked_prefill.empty()) {
    if (a.chunked_prefill == "on" || a.chunked_prefill == "true" || a.chunked_prefill == "1") s.chunked_prefill = true;
    else if (a.chunked_prefill == "off" || a.chunked_prefill == "false" || a.chunked_prefill == "0") s.chunked_prefill = false;
    else return fail(fmt::format("--chunked-prefill {}: expected on or off", a.chunked_prefill));
  }
  s.mem_fraction = a.mem_fraction > 0 ? a.mem_fraction : a.cuda_memory_fraction;
  s.max_total_tokens = a.max_total_tokens;
  s.max_seqs = a.max_num_seqs;
  if (model->is_projector) return fail(fmt::format("{}: a vision projector (mmproj); fit the language model and pass this with --also", a.model));
  if (!a.kv_type.empty() && !fit::kv_type_known(a.kv_type))
    return fail(fmt::format("--kv-type {}: expected f16, bf16, f32, fp8, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl or auto", a.kv_type));
  if (a.gpu_mem_util < 0 || a.gpu_mem_util > 1) return fail(fmt::format("--gpu-mem-util {}: expected a fraction in (0, 1]", a.gpu_mem_util));
  if (!a.flash_attn.empty()) {
    if (a.flash_attn == "on" || a.flash_attn == "1" || a.flash_attn == "true") s.flash_attn = true;
    else if (a.flash_attn == "off" || a.flash_attn == "0" || a.flash_attn == "false") s.flash_attn = false;
    else if (a.flash_attn != "auto") return fail(fmt::format("--flash-attn {}: expected on, off or auto", a.flash_attn));
  }
  if (!a.gpu_layers.empty() && a.gpu_layers != "auto" && a.gpu_layers != "all") {
    try {
      size_t used = 0;
      int n = std::stoi(a.gpu_layers, &used);
      if (used != a.gpu_layers.size() || n < 0) throw std::invalid_argument("");
      s.gpu_layers = n;
    } catch (...) {
      return fail(fmt::format("--gpu-layers {}: expected a number of layers, auto or all", a.gpu_layers));
    }
  }
  s.ctx = a.ctx;
  s.concurrency = a.concurrency;
  s.batch = a.batch;
  s.ubatch = a.ubatch;
  s.kv_type = a.kv_type;
  s.n_cpu_moe = a.n_cpu_moe;
  s.tp = a.tp ? a.tp : (a.gpus ? a.gpus : 1);
  s.gpus = a.gpus ? a.gpus : 1;
  s.gpu_mem_util = a.gpu_mem_util;
  s.rolling = a.rolling;
  s.mmap = !a.no_mmap;
  s.unified_kv = !a.no_kv_unified;
  s.vllm_no_hybrid_kv = a.no_hybrid_kv;
  a.hw.gpus = std::max(a.gpus, a.tp);
  auto hw = fit::resolve_hardware(a.hw, read_this_machine(a.hw));
  if (!hw) return fail(hw.error().message);
  std::vector<fit::Extra> extras;
  for (const std::string& x : a.also) {
    auto e = fit::load_model(files, x, "", "");
    if (!e) return fail("--also " + e.error().message);
    extras.push_back({*e, e->is_projector ? "projector" : "loaded beside it"});
  }
  std::vector<fit::Plan> plans;
  for (fit::Runtime r : runtimes) {
    fit::FitSettings t = s;
    t.runtime = r;
    if (r == fit::Runtime::kTgi && a.cuda_memory_fraction > 0) t.mem_fraction = a.cuda_memory_fraction;
    if (r == fit::Runtime::kSglang && a.mem_fraction > 0) t.mem_fraction = a.mem_fraction;
    plans.push_back(fit::plan(*model, t, *hw, extras));
  }
  bool any_fits = false;
  for (const auto& p : plans) any_fits |= p.fits;
  if (a.json) {
    if (plans.size() == 1) {
      fmt::print("{}\n", render::fit_json(*model, *hw, plans[0]).dump(2));
    } else {
      nlohmann::json all = nlohmann::json::object();
      all["runtimes"] = nlohmann::json::array();
      for (const auto& p : plans) all["runtimes"].push_back(render::fit_json(*model, *hw, p));
      all["fits"] = any_fits;
      fmt::print("{}\n", all.dump(2));
    }
  } else {
    fmt::print("{}", render::fit_text(*model, *hw, plans, color_for(1)));
  }
  return any_fits ? 0 : 1;
}

}  // namespace

Action add_fit(CLI::App& app) {
  auto a = std::make_shared<FitArgs>();
  CLI::App* sub = app.add_subcommand("fit", "Will this model fit, and with how much headroom");
  sub->footer(
      "Examples:\n"
      "  aimem fit model.gguf --ctx 8192 --concurrency 4        # this machine's GPU and RAM\n"
      "  aimem fit meta-llama/Llama-3.1-8B-Instruct --gpu L4    # from the built-in catalog, offline\n"
      "  aimem fit ./Qwen2.5-7B-Instruct --runtime all --gpu A10G --ctx 32768\n"
      "  aimem fit Qwen/Qwen2.5-7B-Instruct --runtime vllm@0.6 --gpu A100-80GB --ctx 32768  # V0 engine rules\n"
      "  aimem fit Qwen/Qwen2.5-7B-Instruct --runtime sglang --gpu H100 --mem-fraction-static 0.85\n"
      "  aimem fit --against llama-server.log                   # aimem's prediction beside the engine's\n"
      "  aimem fit Qwen/Qwen2.5-32B-Instruct --against vllm.log # the model when the log does not name it\n"
      "Runtime versions: --runtime NAME@VERSION picks that version's rules (vllm@0.4 = V0 engine 0.2-0.5.2,\n"
      "vllm@0.6 = V0 0.5.3-0.7, vllm@0.8 = V1 0.8-0.9, vllm@0.11 = V1 0.10+ with the hybrid KV cache manager;\n"
      "sglang@0.4; tgi@1 = 0.9-1.0, tgi@2 = 1.1-2.x, tgi@3).\n"
      "A release number works too (vllm@0.6.4). Without a version the newest rules apply; the plan names them.\n"
      "Exit status: 0 fits, 1 does not fit, 2 bad input.");
  sub->add_option("model", a->model, "GGUF file, Hugging Face model folder, config.json, or catalog name");
  sub->add_option("--runtime", a->runtime,
                  "llama.cpp, ollama, vllm, sglang, tgi, transformers, or all; NAME@VERSION for a version's rules "
                  "(vllm@0.6, vllm@0.11, sglang@0.4, tgi@2) (default: llama.cpp for GGUF, vllm otherwise)");
  sub->add_option("--ctx", a->ctx_text, "tokens per sequence, 8192 or 8k (default: the runtime's)");
  sub->add_option("--concurrency", a->concurrency_text, "sequences served at once (default 1)");
  sub->add_option("--batch", a->batch, "llama.cpp n_batch; vLLM max_num_batched_tokens; TGI max_batch_prefill_tokens");
  sub->add_option("--ubatch", a->ubatch, "llama.cpp n_ubatch (default 512)");
  sub->add_option("--kv-type", a->kv_type, "KV cache type: f16, bf16, fp8, q8_0, q4_0, ... (default f16 / auto)");
  sub->add_option("--flash-attn", a->flash_attn, "on, off or auto");
  sub->add_option("--gpu-layers", a->gpu_layers, "layers on the GPU (llama.cpp -ngl), a number, auto or all");
  sub->add_option("--n-cpu-moe", a->n_cpu_moe, "llama.cpp: keep the experts of the first N layers on the CPU");
  sub->add_option("--gpus", a->gpus, "GPUs in use");
  sub->add_option("--tp", a->tp, "tensor-parallel ranks (vLLM, SGLang --tp, TGI --num-shard)");
  sub->add_option("--gpu-mem-util", a->gpu_mem_util, "vLLM gpu_memory_utilization (default 0.9)");
  sub->add_option("--mem-fraction-static", a->mem_fraction, "SGLang: share of GPU memory for weights and the KV pool");
  sub->add_option("--cuda-memory-fraction", a->cuda_memory_fraction, "TGI: share of GPU memory it may use (default 1.0)");
  sub->add_option("--max-total-tokens", a->max_total_tokens,
                  "SGLang --max-total-tokens / TGI --max-batch-total-tokens: cap on the KV pool in tokens");
  sub->add_option("--max-num-seqs", a->max_num_seqs, "vLLM max_num_seqs (rows of the profile run's sampler)");
  sub->add_option("--chunked-prefill", a->chunked_prefill,
                  "vLLM: on or off (default: the version's; V0 turns it on above 32K tokens, V1 always)");
  sub->add_option("--also", a->also, "a model loaded beside it on the same GPU (embedding, reranker, draft, mmproj)");
  sub->add_option("--device", a->device, "cpu: everything in host RAM");
  sub->add_option("--gpu", a->hw.gpu, "a GPU from the catalog (H100, A100-80GB, L4, RTX 4090, ...; --list-gpus)");
  sub->add_option("--vram", a->hw.vram, "GPU memory per device (24GiB, 80GB)");
  sub->add_option("--ram", a->hw.ram, "host RAM available to the server");
  sub->add_option("--dtype", a->dtype, "storage dtype for a config.json or catalog model (bf16, fp16, fp8)");
  sub->add_option("--quant", a->quant, "quantization for a config.json or catalog model (awq, gptq, bnb-4bit, fp8, q4_k_m, q8_0, ...)");
  sub->add_flag("--rolling", a->rolling, "two copies on the host at once (rolling deployment)");
  sub->add_flag("--no-mmap", a->no_mmap, "llama.cpp --no-mmap: weights kept on the CPU are a private copy");
  sub->add_flag("--no-kv-unified", a->no_kv_unified, "llama.cpp: one KV stream per sequence instead of a unified cache");
  sub->add_flag("--disable-hybrid-kv-cache-manager", a->no_hybrid_kv,
                "vLLM: one KV cache group; sliding-window layers keep the whole context");
  sub->add_option("--against", a->against, "a llama.cpp, Ollama, vLLM, SGLang or TGI log: aimem's prediction, with the rules of the version the log names, beside what the engine reported");
  sub->add_flag("--json", a->json, "machine-readable output (docs/contracts.md)");
  sub->add_flag("--list-models", a->list_models, "the built-in model catalog");
  sub->add_flag("--list-gpus", a->list_gpus, "the built-in GPU catalog");
  return [a] { return run(*a); };
}

}  // namespace aimem::cli
