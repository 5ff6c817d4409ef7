#include "render/fit_render.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"

namespace aimem::render {
namespace {

using units::format_bytes;
using namespace fit;

std::string params(uint64_t n) {
  if (n >= 1000000000ULL) return fmt::format("{:.2f}B", double(n) / 1e9);
  if (n >= 1000000ULL) return fmt::format("{:.1f}M", double(n) / 1e6);
  return fmt::format("{}", n);
}

std::string exactness(const Term& t) {
  if (t.exact) return "exact";
  return fmt::format("±{:.0f}%", t.band * 100);
}

const char* kComponents[] = {"weights", "quant_metadata", "kv_cache", "compute", "runtime_overhead",
                             "extra_models", "request_buffers"};

std::string device_title(const DeviceUse& d, const Hardware& hw) {
  if (d.name == "host")
    return d.capacity ? fmt::format("host RAM ({} {})", format_bytes(d.capacity), hw.ram_source)
                      : "host RAM (capacity not given: --ram SIZE)";
  return fmt::format("{} ({}, {}{})", d.name, hw.gpu_name, format_bytes(d.capacity),
                     d.others ? fmt::format(", {} held by other processes", format_bytes(d.others)) : "");
}

std::string settings_line(const Plan& p) {
  std::string s = fmt::format("context {} x {} sequence{}", p.ctx, p.concurrency, p.concurrency == 1 ? "" : "s");
  if (p.runtime == Runtime::kLlamaCpp || p.runtime == Runtime::kOllama) {
    s += fmt::format(", batch {}, ubatch {}, KV {}, flash attention {}, {} of {} layers on GPU", p.batch, p.ubatch,
                     p.kv_type, p.flash_attn ? "on" : "off", p.gpu_layers, p.n_layer_total);
  } else if (p.runtime == Runtime::kVllm) {
    s += fmt::format(", KV {}, gpu_memory_utilization {:.2f}, tensor parallel {}, max_num_batched_tokens {}", p.kv_type,
                     p.gpu_mem_util, p.tp, p.batch);
  } else {
    s += fmt::format(", KV {}{}", p.kv_type, p.tp > 1 ? fmt::format(", {} shards", p.tp) : "");
  }
  return s;
}

void one_plan(std::string& out, const ModelSpec& m, const Hardware& hw, const Plan& p, bool color) {
  out += fmt::format("runtime: {} — rules mirror {}\n", to_string(p.runtime), p.engine);
  out += fmt::format("settings: {}\n\n", settings_line(p));
  for (const DeviceUse& d : p.devices) {
    out += fmt::format("  {}\n", device_title(d, hw));
    for (const char* c : kComponents)
      for (const Term& t : p.terms)
        if (t.device == d.name && t.component == c)
          out += fmt::format("    {:<17} {:<58} {:>11}  {}\n", t.component, t.what.substr(0, 58), format_bytes(t.bytes),
                             exactness(t));
    std::string room = d.capacity ? fmt::format("headroom {}", units::format_bytes_signed(d.headroom())) : "";
    out += fmt::format("    {:<17} {:<58} {:>11}  {}\n", "total", "", format_bytes(d.used), room);
    if (d.name == "host" && p.load_peak_host_bytes > d.used)
      out += fmt::format("    {:<17} {:<58} {:>11}\n", "peak while loading", "", format_bytes(p.load_peak_host_bytes));
    out += "\n";
  }
  const DeviceUse* bind = nullptr;
  for (const DeviceUse& d : p.devices)
    if (p.binding.rfind(d.name, 0) == 0) bind = &d;
  if (p.fits) {
    out += fmt::format("verdict: {}{}\n", text::paint(color, "32;1", "FITS"),
                       bind && bind->capacity ? fmt::format(" — {} of headroom on {} (tightest: {})",
                                                            format_bytes(uint64_t(bind->headroom())), bind->name, p.binding)
                                              : " (no capacity to check against: give --gpu, --vram or --ram)");
  } else {
    out += fmt::format("verdict: {} — {}{}\n", text::paint(color, "31;1", "DOES NOT FIT"), p.binding,
                       bind && bind->capacity && bind->headroom() < 0
                           ? fmt::format(" is {} short", format_bytes(uint64_t(-bind->headroom())))
                           : "");
  }
  out += fmt::format("  largest context at {} sequence{}: {}\n", p.concurrency, p.concurrency == 1 ? "" : "s",
                     p.max_context ? fmt::format("{} tokens", p.max_context) : "none fits");
  out += fmt::format("  largest concurrency at {} tokens: {}\n", p.ctx,
                     p.max_concurrency ? fmt::format("{} sequences", p.max_concurrency) : "none fits");
  out += fmt::format("  KV cache per token: {}", format_bytes(p.kv_bytes_per_token));
  if (p.kv_cache_tokens)
    out += fmt::format("; the KV budget holds {} tokens ('Maximum concurrency for {} tokens per request: {:.2f}x')",
                       *p.kv_cache_tokens, p.ctx, p.kv_max_concurrency.value_or(0));
  out += "\n";
  out += fmt::format("  equivalent flags: {}\n", p.flags);
  if (!p.suggestions.empty()) {
    out += p.fits ? "\nnote:\n" : "\nwhat to change (least destructive first):\n";
    int i = 1;
    for (const Suggestion& s : p.suggestions) {
      std::string effect;
      if (s.saves_bytes > 0) effect = fmt::format(" — saves {}", format_bytes(uint64_t(s.saves_bytes)));
      if (s.flips) effect += effect.empty() ? " — fits" : ", fits";
      else if (!p.fits) effect += effect.empty() ? " — not enough alone" : ", not enough alone";
      out += fmt::format("  {}. {}{}\n", i++, s.action, effect);
    }
  }
  std::vector<std::string> notes = m.notes;
  notes.insert(notes.end(), p.assumptions.begin(), p.assumptions.end());
  if (!notes.empty()) {
    out += "\nassumptions:\n";
    for (const std::string& n : notes) out += "  - " + n + "\n";
  }
}

}  // namespace

std::string fit_text(const ModelSpec& m, const Hardware& hw, const std::vector<Plan>& plans, bool color) {
  std::string out;
  out += fmt::format("model: {} — {}, {} parameters{}, {}, weights {} ({})\n", m.name, m.architecture,
                     params(m.n_params),
                     m.n_params_active && m.n_params_active != m.n_params ? fmt::format(" ({} active)", params(m.n_params_active)) : "",
                     m.weights_format, format_bytes(m.weight_bytes),
                     m.weights_exact ? "exact, from the tensor table" : "approximate, from the architecture");
  out += fmt::format("hardware: {}\n",
                     hw.gpu_count ? fmt::format("{} x {} ({} each; {})", hw.gpu_count, hw.gpu_name,
                                                format_bytes(hw.gpu_total), hw.gpu_source)
                                  : "no GPU (everything in host RAM)");
  if (plans.size() > 1) {
    out += "\n";
    out += fmt::format("  {:<14} {:>12} {:>12} {:>12} {:>12} {:>10} {:>12} {:>8}\n", "runtime", "weights", "KV cache",
                       "compute", "GPU total", "host", "max context", "fits");
    for (const Plan& p : plans) {
      uint64_t b[4] = {0, 0, 0, 0};
      for (const Term& t : p.terms) {
        if (t.component == "weights" || t.component == "quant_metadata") b[0] += t.bytes;
        if (t.component == "kv_cache") b[1] += t.bytes;
        if (t.component == "compute") b[2] += t.bytes;
      }
      uint64_t gpu = 0;
      for (const DeviceUse& d : p.devices)
        if (d.name != "host") gpu += d.used;
      out += fmt::format("  {:<14} {:>12} {:>12} {:>12} {:>12} {:>10} {:>12} {}\n", to_string(p.runtime),
                         format_bytes(b[0]), format_bytes(b[1]), format_bytes(b[2]), gpu ? format_bytes(gpu) : "-",
                         format_bytes(p.host_bytes), p.max_context,
                         text::paint(color, p.fits ? "32" : "31", fmt::format("{:>8}", p.fits ? "yes" : "no")));
    }
  }
  for (const Plan& p : plans) {
    out += "\n";
    one_plan(out, m, hw, p, color);
  }
  return out;
}

nlohmann::json fit_json(const ModelSpec& m, const Hardware& hw, const Plan& p) {
  using nlohmann::json;
  json j;
  j["model"] = {{"name", m.name},
                {"source", m.source},
                {"architecture", m.architecture},
                {"parameters", m.n_params},
                {"active_parameters", m.n_params_active ? json(m.n_params_active) : json(nullptr)},
                {"dtype", m.weights_format},
                {"weights_exact", m.weights_exact},
                {"layers", m.n_layer},
                {"context_train", m.n_ctx_train ? json(m.n_ctx_train) : json(nullptr)}};
  if (!m.citation.empty()) j["model"]["citation"] = m.citation;
  j["runtime"] = std::string(to_string(p.runtime));
  j["engine"] = p.engine;
  json settings = {{"ctx", p.ctx}, {"concurrency", p.concurrency}, {"kv_type", p.kv_type}, {"flash_attn", p.flash_attn}};
  if (p.runtime == Runtime::kLlamaCpp || p.runtime == Runtime::kOllama) {
    settings["batch"] = p.batch;
    settings["ubatch"] = p.ubatch;
    settings["gpu_layers"] = p.gpu_layers;
    settings["kv_cells"] = p.kv_cells;
    settings["kv_streams"] = p.kv_streams;
  } else {
    settings["tp"] = p.tp;
    if (p.runtime == Runtime::kVllm) {
      settings["gpu_mem_util"] = p.gpu_mem_util;
      settings["max_num_batched_tokens"] = p.batch;
    }
  }
  j["settings"] = settings;
  json bd = json::object();
  for (const char* c : kComponents) bd[c] = 0;
  for (const Term& t : p.terms) bd[t.component] = bd[t.component].get<uint64_t>() + t.bytes;
  j["breakdown_bytes"] = bd;
  json terms = json::array();
  for (const Term& t : p.terms)
    terms.push_back({{"device", t.device}, {"component", t.component}, {"what", t.what}, {"bytes", t.bytes},
                     {"exact", t.exact}, {"error_band", t.band}});
  j["terms"] = terms;
  json devs = json::array();
  for (const DeviceUse& d : p.devices) {
    json dj = {{"name", d.name}, {"used_bytes", d.used}, {"others_bytes", d.others}};
    dj["capacity_bytes"] = d.capacity ? json(d.capacity) : json(nullptr);
    dj["headroom_bytes"] = d.capacity ? json(d.headroom()) : json(nullptr);
    if (d.name != "host" && !hw.gpu_name.empty()) dj["gpu"] = hw.gpu_name;
    devs.push_back(dj);
  }
  j["devices"] = devs;
  j["host_bytes"] = p.host_bytes;
  j["load_peak_host_bytes"] = p.load_peak_host_bytes;
  j["total_bytes"] = p.total_bytes;
  j["fits"] = p.fits;
  j["binding"] = p.binding;
  j["kv_bytes_per_token"] = p.kv_bytes_per_token;
  j["kv_cache_tokens"] = p.kv_cache_tokens ? json(*p.kv_cache_tokens) : json(nullptr);
  j["max_context"] = p.max_context;
  j["max_concurrency"] = p.max_concurrency;
  j["flags"] = p.flags;
  json sug = json::array();
  for (const Suggestion& s : p.suggestions)
    sug.push_back({{"action", s.action}, {"saves_bytes", s.saves_bytes}, {"flips", s.flips}});
  j["suggestions"] = sug;
  json notes = m.notes;
  for (const auto& a : p.assumptions) notes.push_back(a);
  j["assumptions"] = notes;
  return j;
}

}  // namespace aimem::render
