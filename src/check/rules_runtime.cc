// Rules about the runtime's own settings: GPU memory fractions of servers
// sharing a GPU, the KV cache budget `aimem fit` computes, and the measured
// envelope (`aimem probe --save-limits`) and the policy's promises.
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <set>

#include "check/rules_impl.h"
#include "core/text.h"

namespace aimem::check {
namespace {

// Each runtime's share of the GPU when its flag is absent: vLLM 0.9
// (gpu_memory_utilization), TGI 1.0 (cuda_memory_fraction), SGLang ~0.88
// (mem_fraction_static, set by GPU size; 0.88 for 80 GB cards). llama.cpp and
// Ollama allocate what they need, no fraction.
// "fraction 0.90", or what the plan sized the budget by when the runtime has
// no such fraction in the plan (TGI's warm-up takes what the GPU has free).
std::string fraction_text(const fit::Plan& p) {
  return p.gpu_mem_util > 0 ? fmt::format("fraction {:.2f}", p.gpu_mem_util) : std::string("what the GPU has free");
}

std::optional<double> gpu_fraction(const ServerConfig& s) {
  if (s.gpu_fraction) return s.gpu_fraction->value;
  switch (s.server) {
    case Server::kVllm: return 0.9;
    case Server::kTgi: return 1.0;
    case Server::kSglang: return 0.88;
    default: return std::nullopt;
  }
}

const char* fraction_flag(Server s) {
  switch (s) {
    case Server::kVllm: return "--gpu-memory-utilization";
    case Server::kTgi: return "--cuda-memory-fraction";
    case Server::kSglang: return "--mem-fraction-static";
    default: return "";
  }
}

// NVIDIA_VISIBLE_DEVICES values that give a container no GPU (nvidia-container-runtime).
bool no_devices(const std::string& v) { return v.empty() || v == "void" || v == "none"; }

// The GPUs a Kubernetes pod's containers were given by the device plugin, in
// container order: "<n> of container '<name>'" for each GPU a container
// requests. A container's own devices are exclusive to it.
std::vector<std::string> pod_devices(const Workload& w) {
  std::vector<std::string> ids;
  for (const Container& c : w.containers)
    if (c.gpus && c.gpus->value > 0)
      for (int64_t i = 0; i < c.gpus->value && i < 64; ++i) ids.push_back(fmt::format("{} of container '{}'", i, c.name));
  return ids;
}

// The GPUs a server may use, as ids ("0", "1"), or {"*"} for all of the host's.
// Empty: it uses no GPU that another server aimem can see may also use.
std::set<std::string> gpu_ids(const Subject& s) {
  const Container& c = *s.container;
  std::set<std::string> ids;
  if (s.workload->platform == Platform::kKubernetes) {
    // A container that requests GPUs has devices of its own; NVIDIA_ / CUDA_VISIBLE_DEVICES
    // inside it only select among them.
    if (c.gpus && c.gpus->value > 0) {
      for (int64_t i = 0; i < c.gpus->value && i < 64; ++i) ids.insert(fmt::format("{} of container '{}'", i, c.name));
      return ids;
    }
    // One that requests none but names devices sees the node's GPUs through the
    // NVIDIA runtime, and so shares those given to its pod's other containers:
    // all of them for "all", the i-th for index i (a node's own GPU where the
    // pod was given fewer).
    if (no_devices(c.gpu_devices)) return ids;
    const std::vector<std::string> pod = pod_devices(*s.workload);
    if (c.gpu_devices == "all") {
      if (pod.empty()) ids.insert("*");
      for (const std::string& d : pod) ids.insert(d);
      return ids;
    }
    for (std::string_view id : text::split(c.gpu_devices, ',')) {
      std::string_view t = text::trim(id);
      if (t.empty()) continue;
      char* end = nullptr;
      const std::string num(t);
      const long i = std::strtol(num.c_str(), &end, 10);
      if (*end == 0 && i >= 0 && size_t(i) < pod.size()) ids.insert(pod[size_t(i)]);
      else ids.insert(num);  // a UUID or an index past the pod's GPUs: that GPU of the node
    }
    return ids;
  }
  if (!c.gpu_devices.empty() && c.gpu_devices != "all") {
    if (no_devices(c.gpu_devices)) return ids;
    for (std::string_view id : text::split(c.gpu_devices, ','))
      if (!text::trim(id).empty()) ids.insert(std::string(text::trim(id)));
    return ids;
  }
  switch (s.workload->platform) {
    case Platform::kKubernetes: return ids;
    case Platform::kCompose:
      // Docker hands `count: N` as the first N GPUs of the host, not exclusive ones.
      if (c.gpus && c.gpus->value > 0)
        for (int64_t i = 0; i < c.gpus->value && i < 64; ++i) ids.insert(std::to_string(i));
      else if ((c.gpus && c.gpus->value < 0) || c.gpu_devices == "all") ids.insert("*");
      return ids;
    case Platform::kSystemd:
    case Platform::kCommand: ids.insert("*"); return ids;
  }
  return ids;
}

// Servers on one host: Compose and systemd files are one host each; a
// Kubernetes pod is one; the command line is its own.
std::string host_of(const Subject& s) {
  const Workload& w = *s.workload;
  if (w.platform == Platform::kKubernetes) return w.at.file + "#" + w.kind + "/" + w.name;
  return (w.platform == Platform::kSystemd ? std::string("systemd:") : w.at.file);
}

}  // namespace

void rule_gpu_util_oversubscribed(const Rule& r, const std::vector<Subject>& subjects, const Context&, Sink& out) {
  // host -> GPU id -> servers on it
  std::map<std::string, std::map<std::string, std::vector<const Subject*>>> hosts;
  for (const Subject& s : subjects) {
    if (!gpu_fraction(s.server)) continue;
    for (const std::string& id : gpu_ids(s)) hosts[host_of(s)][id].push_back(&s);
  }
  std::set<const Subject*> reported;
  for (auto& [host, gpus] : hosts) {
    // "*" servers share every GPU the others name.
    auto all = gpus.count("*") ? gpus["*"] : std::vector<const Subject*>{};
    for (auto& [id, list] : gpus) {
      std::vector<const Subject*> on = list;
      if (id != "*")
        for (const Subject* s : all) on.push_back(s);
      double sum = 0;
      std::vector<std::string> parts;
      for (const Subject* s : on) {
        sum += *gpu_fraction(s->server);
        parts.push_back(fmt::format("{} {} {:.2f}", subject_name(*s), to_string(s->server.server), *gpu_fraction(s->server)));
      }
      if (sum <= 1.0 + 1e-9) continue;
      const Subject* last = on.back();
      if (!reported.insert(last).second) continue;
      const Loc at = last->server.gpu_fraction ? last->server.gpu_fraction->at : last->server.at;
      std::string gpu = id == "*" ? std::string("the same GPUs") : "GPU " + id;
      out.violation(finding(
          r, at,
          on.size() == 1
              ? fmt::format("{} {:.2f} is more than the whole GPU", fraction_flag(last->server.server), sum)
              : fmt::format("GPU memory fractions on {} add up to {:.2f} ({}): each is a share of the whole GPU, so the "
                            "later server finds no memory for its KV cache",
                            gpu, sum, fmt::join(parts, " + ")),
          on.size() == 1 ? fmt::format("set {} to at most 0.95", fraction_flag(last->server.server))
                         : fmt::format("lower the fractions so they add up to at most 0.95 (e.g. {:.2f} each), or put "
                                       "the servers on different GPUs",
                                       0.95 / double(on.size()))));
    }
  }
}

void rule_kv_over_budget(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  for (const Subject& s : subjects) {
    const ServerConfig& cfg = s.server;
    if (cfg.server == Server::kNone) continue;
    if (!s.plan.plan) {
      out.note(r.id, cfg.at, fmt::format("kv-over-budget not checked for {}: {}", subject_name(s), s.plan.why_not));
      continue;
    }
    if (!s.plan.gpu_known) {
      out.note(r.id, cfg.at,
               fmt::format("kv-over-budget not checked for {}: the GPU is unknown (policy gpu / gpu_memory, --gpu, or a "
                           "node selector naming the GPU)",
                           subject_name(s)));
      continue;
    }
    const fit::Plan& p = *s.plan.plan;
    const Loc at = cfg.context ? cfg.context->at : cfg.at;
    const int64_t seqs = cfg.concurrency ? cfg.concurrency->value : ctx.policy.max_concurrency.value_or(0);
    if (p.kv_cache_tokens && p.kv_blocks_per_request && p.kv_max_concurrency) {
      // vLLM's block pool (fit/vllm_kv.h): with sliding-window layers a
      // request needs fewer blocks than ctx tokens, so what decides is
      // 'Maximum concurrency' at ctx, not the token count.
      const double conc = *p.kv_max_concurrency;
      if (conc < 1.0) {
        out.violation(finding(r, at,
                              fmt::format("context {} needs {} KV cache blocks a request; {} leaves {} with {} "
                                          "(maximum concurrency {:.2f}x): the server refuses to start",
                                          p.ctx, p.kv_blocks_per_request, s.plan.model, p.kv_blocks,
                                          fraction_text(p), conc),
                              p.max_context ? fmt::format("lower the context to {} or less, raise the GPU memory fraction, "
                                                          "use an fp8 KV cache, or add GPUs (tensor parallel)",
                                                          p.max_context)
                                            : "raise the GPU memory fraction, use an fp8 KV cache, or add GPUs (tensor parallel)"));
      } else if (seqs > 0 && double(seqs) > conc) {
        Finding f = finding(r, cfg.concurrency ? cfg.concurrency->at : at,
                            fmt::format("{} sequences x {} tokens need {} KV cache blocks; the pool holds {} ({}, "
                                        "maximum concurrency {:.2f}x): full-length requests queue or are preempted",
                                        seqs, p.ctx, uint64_t(seqs) * p.kv_blocks_per_request, p.kv_blocks,
                                        s.plan.model, conc),
                            fmt::format("lower the concurrency to {}{}", uint64_t(conc),
                                        p.kv_max_model_len && int64_t(p.concurrency) == seqs
                                            ? fmt::format(" or the context to {}", p.kv_max_model_len)
                                            : ""));
        f.severity = Severity::kWarning;
        out.violation(f);
      }
      continue;
    }
    if (p.kv_cache_tokens) {  // SGLang, and vLLM without a block pool: the cache fills a budget
      const uint64_t have = *p.kv_cache_tokens;
      if (p.ctx > have) {
        out.violation(finding(r, at,
                              fmt::format("context {} needs more KV cache than {} leaves for it with {}: {} tokens "
                                          "({} per token); the server refuses to start",
                                          p.ctx, s.plan.model, fraction_text(p), have,
                                          bytes(p.kv_bytes_per_token)),
                              fmt::format("lower the context to {} or less, raise the GPU memory fraction, use an fp8 KV "
                                          "cache, or add GPUs (tensor parallel)",
                                          have)));
      } else if (seqs > 0 && uint64_t(p.ctx) * uint64_t(seqs) > have) {
        Finding f = finding(r, cfg.concurrency ? cfg.concurrency->at : at,
                            fmt::format("{} sequences x {} tokens need {} tokens of KV cache; the budget holds {} "
                                        "({}): full-length requests queue or are preempted",
                                        seqs, p.ctx, uint64_t(p.ctx) * uint64_t(seqs), have, s.plan.model),
                            fmt::format("lower the concurrency to {} or the context to {}", have / p.ctx,
                                        have / uint64_t(seqs)));
        f.severity = Severity::kWarning;
        out.violation(f);
      }
      continue;
    }
    // llama.cpp, Ollama, TGI: the KV cache is allocated for the settings; it must fit beside the weights.
    if (p.fits || p.binding.find("kv_cache") == std::string::npos) continue;
    uint64_t kv = 0;
    for (const fit::Term& t : p.terms)
      if (t.component == "kv_cache") kv += t.bytes;
    const fit::DeviceUse* gpu = p.devices.empty() ? nullptr : &p.devices.front();
    out.violation(finding(r, at,
                          fmt::format("the KV cache for context {} x {} sequences ({}) does not fit beside {} on {} "
                                      "({} used of {})",
                                      p.ctx, p.concurrency, bytes(kv), s.plan.model, gpu ? gpu->name : "the GPU",
                                      gpu ? bytes(gpu->used) : "?", gpu ? bytes(gpu->capacity) : "?"),
                          p.max_context ? fmt::format("lower the context to {} or less, or quantize the KV cache", p.max_context)
                                        : "lower the context or the parallel sequences, or quantize the KV cache"));
  }
}

void rule_over_envelope(const Rule& r, const std::vector<Subject>& subjects, const Context& ctx, Sink& out) {
  const Policy& pol = ctx.policy;
  for (const Subject& s : subjects) {
    const ServerConfig& cfg = s.server;
    if (cfg.server == Server::kNone) continue;
    if (!ctx.envelope && !pol.max_context && !pol.max_concurrency) {
      out.note(r.id, cfg.at, "over-envelope not checked: no envelope (policy envelope / --envelope, from aimem probe "
                             "--save-limits) and no max_context / max_concurrency in the policy");
      continue;
    }
    if (pol.max_context && cfg.context && cfg.context->value > *pol.max_context)
      out.violation(finding(r, cfg.context->at,
                            fmt::format("context {} is above the policy's max_context {}", cfg.context->value, *pol.max_context),
                            fmt::format("set the context to {}", *pol.max_context)));
    if (pol.max_concurrency && cfg.concurrency && cfg.concurrency->value > *pol.max_concurrency)
      out.violation(finding(r, cfg.concurrency->at,
                            fmt::format("concurrency {} is above the policy's max_concurrency {}", cfg.concurrency->value,
                                        *pol.max_concurrency),
                            fmt::format("set the concurrency to {}", *pol.max_concurrency)));
    if (!ctx.envelope) continue;
    if (!cfg.context && !cfg.concurrency) {
      out.note(r.id, cfg.at, fmt::format("over-envelope not checked for {}: neither context nor concurrency is set "
                                         "(the runtime's defaults are not measured)",
                                         subject_name(s)));
      continue;
    }
    const int64_t c = cfg.context ? cfg.context->value : 1;
    const int64_t n = cfg.concurrency ? cfg.concurrency->value : 1;
    if (ctx.envelope->covers(c, n)) continue;
    const Loc at = cfg.context ? cfg.context->at : cfg.concurrency->at;
    out.violation(finding(
        r, at,
        fmt::format("context {} x concurrency {}{} is outside the envelope measured in {} (largest safe: context {}, "
                    "concurrency {}{})",
                    c, n, cfg.concurrency ? "" : " (unset, taken as 1)", ctx.envelope_file, ctx.envelope->max_context,
                    ctx.envelope->max_concurrency,
                    ctx.envelope->breaking_point ? fmt::format("; it broke at {} x {}", ctx.envelope->breaking_point->context,
                                                               ctx.envelope->breaking_point->concurrency)
                                                 : ""),
        fmt::format("stay within context {} and concurrency {}, or measure this configuration with aimem probe",
                    ctx.envelope->max_context, ctx.envelope->max_concurrency)));
  }
}

}  // namespace aimem::check
