#include "fit/inputs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "fit/layout.h"
#include "fit/catalog.h"
#include "fit/gguf.h"
#include "fit/hf.h"
#include "fit/hf_parts.h"

namespace aimem::fit {
namespace {

namespace fs = std::filesystem;

bool starts_with_gguf_magic(const FileSystem& files, const std::string& path) {
  auto file = files.open(path);  // the FileSystem view fit is handed (sources/files.h reads), not a system call
  if (!file) return false;
  char magic[4] = {0};
  size_t got = 0;
  while (got < 4) {
    int64_t n = (*file)->read_at(magic + got, 4 - got, got);
    if (n <= 0) return false;
    got += size_t(n);
  }
  return std::string_view(magic, 4) == "GGUF";
}

// Effective bits per weight of llama.cpp's quantization mixtures for the
// repeating layers (llama-quant.cpp: attn_v / ffn_down get more bits in some
// layers under the _M mixes), and the type of output.weight.
struct Ftype {
  const char* name;
  double bpw;         // repeating layers, averaged over the mix
  double output_bpw;  // output.weight
  double embd_bpw;    // token_embd
};
constexpr Ftype kFtypes[] = {
    {"f32", 32, 32, 32},           {"f16", 16, 16, 16},            {"bf16", 16, 16, 16},
    {"q8_0", 8.5, 8.5, 8.5},       {"q6_k", 6.5625, 6.5625, 6.5625}, {"q5_k_m", 5.69, 6.5625, 5.5},
    {"q5_k_s", 5.54, 6.5625, 5.5}, {"q5_0", 5.5, 6.5625, 5.5},     {"q5_1", 6.0, 6.5625, 6.0},
    {"q4_k_m", 4.85, 6.5625, 4.5}, {"q4_k_s", 4.58, 6.5625, 4.5},  {"q4_0", 4.5, 6.5625, 4.5},
    {"q4_1", 5.0, 6.5625, 5.0},    {"iq4_xs", 4.25, 6.5625, 4.25}, {"iq4_nl", 4.5, 6.5625, 4.5},
    {"q3_k_l", 4.27, 6.5625, 3.4375}, {"q3_k_m", 3.91, 6.5625, 3.4375}, {"q3_k_s", 3.5, 6.5625, 3.4375},
    {"iq3_xxs", 3.06, 4.5, 3.06},  {"q2_k", 3.35, 6.5625, 2.625},  {"iq2_xs", 2.31, 4.5, 2.31},
    {"iq2_xxs", 2.06, 4.5, 2.06},  {"iq1_s", 1.56, 4.5, 1.56},     {"mxfp4", 4.25, 8.5, 8.5},
};


const Ftype* find_ftype(std::string_view name) {
  const std::string f = normalize_ftype(name);
  for (const Ftype& x : kFtypes)
    if (f == x.name) return &x;
  return nullptr;
}

}  // namespace

std::string normalize_ftype(std::string_view name) {
  // "Q4_K - Medium" (llama.cpp's file type name) -> q4_k_m; "q4-k-m" -> q4_k_m.
  std::string f;
  for (char c : text::lower(name))
    if (c != ' ') f += c == '-' ? '_' : c;
  for (auto [from, to] : {std::pair{"_medium", "_m"}, {"_small", "_s"}, {"_large", "_l"}})
    if (f.size() > std::strlen(from) && f.compare(f.size() - std::strlen(from), std::string::npos, from) == 0)
      f = f.substr(0, f.size() - std::strlen(from)) + to;
  f.erase(std::unique(f.begin(), f.end(), [](char a, char b) { return a == '_' && b == '_'; }), f.end());
  return f;
}

bool apply_gguf_ftype(ModelSpec& m, const std::string& ftype) {
  const Ftype* ft = find_ftype(ftype);
  if (!ft || !m.tensors.empty()) return ft != nullptr;
  // Embedding (token_embd) at the mix's base type, output matrix as above,
  // everything else at the mix's average.
  // llama-quant.cpp: the output matrix gets the mix's output type; with tied
  // embeddings token_embd is that matrix, so it gets the output type too.
  double embd = double(m.n_vocab) * m.n_embd;
  double params = double(m.n_params);
  double rest = std::max(0.0, params - embd * (m.tied_embeddings ? 1 : 2));
  double input_bits = embd * (m.tied_embeddings ? ft->output_bpw : ft->embd_bpw);
  double output_bits = m.tied_embeddings ? 0 : embd * ft->output_bpw;
  m.input_bytes = uint64_t(input_bits / 8);
  m.output_bytes = uint64_t(output_bits / 8);
  m.weight_bytes = uint64_t((rest * ft->bpw + input_bits + output_bits) / 8);
  m.quant_metadata_bytes = 0;
  m.weights_format = fmt::format("{} (GGUF mix, ~{:.2f} bits per weight)", ftype, ft->bpw);
  // The k-quant mixes tensor by tensor, with llama-quant.cpp's fallback types
  // for rows not a multiple of 256 (layout.h).
  if (auto mix = llamacpp_kquant_mix_bytes(m, ft->name)) {
    m.input_bytes = mix->input;
    m.output_bytes = mix->output;
    m.weight_bytes = mix->total;
    m.weights_format = fmt::format("{} (GGUF mix, ~{:.2f} bits per weight)", ftype,
                                   m.n_params ? 8.0 * double(mix->total) / double(m.n_params) : ft->bpw);
    m.weights_exact = false;
    m.notes.push_back(fmt::format("weights sized as llama.cpp's {} mix tensor by tensor from the architecture{}", ftype,
                                  mix->fallback_tensors
                                      ? fmt::format(" ({} tensors fall back to another type: rows not a multiple of 256)",
                                                    mix->fallback_tensors)
                                      : ""));
    return true;
  }
  m.weights_exact = false;
  m.notes.push_back(fmt::format("weights sized as llama.cpp's {} mix from the parameter count (+/-3%)", ftype));
  return true;
}

Result<ModelSpec> load_model(const FileSystem& files, const std::string& arg, const std::string& dtype,
                             const std::string& quant) {
  fs::path p(arg);  // a path only: what is there comes from `files`
  const FileKind kind = files.kind(arg);
  const Ftype* ft = find_ftype(quant);
  const bool gguf_quant = ft && ft->bpw < 16;  // f16/bf16/f32 are checkpoint dtypes, not a GGUF mix
  // --quant names a quantization; a float type is a dtype, and an unknown name
  // gets the whole list of what is accepted.
  if (!quant.empty() && !gguf_quant && !hf::quant_from_name(quant)) {
    static const std::string kFloats[] = {"f16", "fp16", "float16", "half", "bf16", "bfloat16", "f32", "fp32", "float32"};
    const std::string q = text::lower(quant);
    std::string accepted = "checkpoint quantizations awq, gptq, int4, int8, fp8, bnb-4bit, bnb-8bit, mxfp4, none; "
                           "llama.cpp GGUF mixes";
    for (const Ftype& x : kFtypes)
      if (x.bpw < 16) accepted += std::string(" ") + x.name;
    if (std::find(std::begin(kFloats), std::end(kFloats), q) != std::end(kFloats))
      return make_error(fmt::format("--quant {}: {} is a float dtype, not a quantization; use --dtype {} for "
                                    "16- or 32-bit weights (--quant accepts {})",
                                    quant, quant, q.find("bf") == 0 ? "bf16" : q.find("32") != std::string::npos ? "fp32" : "fp16",
                                    accepted));
    return make_error(fmt::format("--quant {}: unknown quantization (accepted: {}; float weights: --dtype fp16, bf16 "
                                  "or fp32)", quant, accepted));
  }
  const std::string hf_quant = gguf_quant ? "" : quant;
  Result<ModelSpec> spec = make_error("");
  if (kind == FileKind::directory) {
    if (files.kind((p / "config.json").string()) == FileKind::missing) {
      for (const std::string& name : files.list(arg))
        if (fs::path(name).extension() == ".gguf")
          return make_error(fmt::format("{}: a folder of GGUF files; name the file to fit (e.g. {})", arg,
                                        (p / name).string()));
      return make_error(fmt::format("{}: no config.json in this folder (a Hugging Face model folder needs one)", arg));
    }
    spec = read_hf_folder(files, arg);
  } else if (kind != FileKind::missing) {
    // A FIFO or a device would block the open or the read forever.
    if (kind != FileKind::regular)
      return make_error(fmt::format("{}: not a regular file (a FIFO, a device or a socket); name a GGUF file, a model "
                                    "folder or a config.json", arg));
    if (starts_with_gguf_magic(files, arg)) {
      auto g = read_gguf(files, arg);
      if (!g) return g.error();
      spec = spec_from_gguf(*g);
    } else if (p.extension() == ".gguf") {
      auto g = read_gguf(files, arg);  // names the wrong magic
      if (!g) return g.error();
      spec = spec_from_gguf(*g);
    } else if (p.extension() == ".safetensors") {
      return make_error(fmt::format("{}: name the model folder (with config.json), not one safetensors file",
                                    arg));
    } else {
      spec = read_hf_config(files, arg, dtype, hf_quant);
    }
  } else {
    if (!find_model(arg))
      return make_error(fmt::format("{}: no such file or folder, and not a model in the built-in catalog "
                                    "(`aimem fit --list-models` shows it)", arg));
    spec = catalog_spec(arg, dtype, hf_quant);
  }
  if (!spec) return spec;
  if (spec->path.empty() && kind != FileKind::missing) spec->path = arg;
  if (gguf_quant) {
    if (!spec->tensors.empty() && spec->source == "gguf")
      return make_error(fmt::format("{}: --quant {} only applies to a checkpoint; a GGUF file is already quantized",
                                    arg, quant));
    spec->tensors.clear();
    apply_gguf_ftype(*spec, quant);
  }
  // Names and notes read from a model file come from the internet: a GGUF
  // general.name can hold terminal escapes. Everything shown from here on
  // (the table, the verdict, --json) is made of printable text.
  spec->name = text::printable(spec->name);
  spec->path = text::printable(spec->path);
  spec->architecture = text::printable(spec->architecture);
  spec->weights_format = text::printable(spec->weights_format);
  for (auto& n : spec->notes) n = text::printable(n);
  return spec;
}

bool reads_this_machine(const HardwareArgs& a) { return a.gpu.empty() && a.vram.empty() && a.ram.empty(); }

Result<Hardware> resolve_hardware(const HardwareArgs& a, const MachineReading& machine) {
  Hardware hw;
  if (!a.ram.empty()) {
    auto r = units::parse_size(a.ram);
    if (!r) return make_error("--ram: " + r.error().message);
    hw.ram_total = *r;
    hw.ram_source = "--ram " + a.ram;
  }
  if (a.device_cpu) {
    hw.gpu_count = 0;
  } else if (!a.gpu.empty()) {
    const GpuInfo* g = find_gpu(a.gpu);
    if (!g) {
      std::string known;
      for (const GpuInfo& x : gpu_catalog()) known += (known.empty() ? "" : ", ") + x.name;
      return make_error(fmt::format("--gpu {}: not in the GPU catalog (known: {}); use --vram SIZE", a.gpu, known));
    }
    hw.gpu_name = g->name;
    hw.gpu_total = g->memory_bytes;
    hw.gpu_count = a.gpus ? a.gpus : 1;
    hw.gpu_source = "catalog: " + g->name;
  }
  if (!a.vram.empty() && !a.device_cpu) {
    auto v = units::parse_size(a.vram);
    if (!v) return make_error("--vram: " + v.error().message);
    if (*v == 0) return make_error("--vram: must be more than 0");
    hw.gpu_total = *v;
    hw.gpu_count = a.gpus ? a.gpus : 1;
    if (hw.gpu_name.empty()) hw.gpu_name = units::format_bytes(*v) + " GPU";
    hw.gpu_source = "--vram " + a.vram;
  }
  if (reads_this_machine(a)) {
    // This machine: NVML for GPUs, /proc/meminfo and our cgroup for RAM.
    if (!a.device_cpu) {
      for (const MachineReading::Gpu& g : machine.gpus) {
        if (!g.total) continue;
        if (hw.gpu_count == 0) {
          hw.gpu_name = g.name.empty() ? "GPU" : text::printable(g.name);  // the driver's name for it
          hw.gpu_total = g.total;
          hw.gpu_in_use = g.used;
        }
        hw.gpu_count++;
      }
      if (hw.gpu_count) hw.gpu_source = "NVML (this machine)";
      if (a.gpus) hw.gpu_count = std::min(hw.gpu_count, a.gpus);
    }
    hw.cpu_amx = machine.cpu_amx;
    if (machine.mem_available && hw.ram_total == 0) {
      hw.ram_total = *machine.mem_available;
      hw.ram_source = "MemAvailable (this machine)";
    }
    if (auto room = machine.cgroup_room; room && (*room < hw.ram_total || hw.ram_total == 0)) {
      hw.ram_total = *room;
      hw.ram_source = "this cgroup's memory limit";
    }
  }
  return hw;
}

}  // namespace aimem::fit
