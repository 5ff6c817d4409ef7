#include "support/tiny_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <vector>

namespace aimem::test {
namespace {

constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8;

// splitmix64: small, seedable, the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float uniform() { return static_cast<float>((next() >> 40) * (1.0 / (1ULL << 23)) - 1.0); }

 private:
  uint64_t s_;
};

// IEEE half from float, round to nearest even (values here are small and
// finite; overflow saturates to infinity, tiny values go subnormal or zero).
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | h);
}
float from_half(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    f = mant ? NAN : INFINITY;
  } else {
    f = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  return sign ? -f : f;
}

template <typename T>
void put(uint8_t*& at, T v) {
  std::memcpy(at, &v, sizeof v);
  at += sizeof v;
}

// Encodes values (row-major, rows of ne0) in the ggml type, into a buffer
// sized once: the engine tests write models of up to 150 MiB, and a byte-wise
// insert made writing them most of those tests' time under the sanitizers.
std::vector<uint8_t> encode(const std::vector<float>& v, uint32_t type) {
  std::vector<uint8_t> out;
  if (type == kF32) {
    out.resize(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
  } else if (type == kF16) {
    out.resize(v.size() * 2);
    uint8_t* at = out.data();
    for (float f : v) put<uint16_t>(at, to_half(f));
  } else {  // Q8_0: per 32 values, half d = amax / 127 and 32 int8 q = round(x / d)
    out.resize(v.size() / 32 * 34);
    uint8_t* at = out.data();
    for (size_t b = 0; b + 32 <= v.size(); b += 32) {
      float amax = 0;
      for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(v[b + j]));
      const uint16_t dh = to_half(amax / 127.0f);
      const float d = from_half(dh);
      const float id = d != 0 ? 1.0f / d : 0.0f;
      put<uint16_t>(at, dh);
      for (size_t j = 0; j < 32; ++j) {
        const long q = std::lround(v[b + j] * id);
        put<int8_t>(at, static_cast<int8_t>(std::clamp(q, -127L, 127L)));
      }
    }
  }
  return out;
}

// The tokens: <unk> <s> </s>, the 256 byte tokens, then ordinary pieces
// (single characters, "▁x", then pairs and triples of characters) up to n.
struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
};
Vocab make_vocab(uint32_t n) {
  Vocab v;
  auto add = [&](std::string t, float score, int32_t type) {
    v.tokens.push_back(std::move(t));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, 2);  // UNKNOWN
  add("<s>", 0, 3);    // CONTROL
  add("</s>", 0, 3);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0, 6);  // BYTE
  }
  const std::string space = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  std::string chars;
  for (char c = 'a'; c <= 'z'; ++c) chars += c;
  for (char c = 'A'; c <= 'Z'; ++c) chars += c;
  for (char c = '0'; c <= '9'; ++c) chars += c;
  chars += ".,!?;:'\"-()";
  std::vector<std::string> pieces;
  pieces.push_back(space);
  for (char c : chars) pieces.push_back(std::string(1, c));
  for (char c : chars) pieces.push_back(space + c);
  for (char a : chars)
    for (char b : chars) pieces.push_back(std::string{a, b});
  for (size_t i = 0; v.tokens.size() < n; ++i) {
    std::string p;
    if (i < pieces.size()) {
      p = pieces[i];
    } else {  // triples, as many as needed
      size_t k = i - pieces.size();
      const size_t m = chars.size();
      p = std::string{chars[(k / (m * m)) % m], chars[(k / m) % m], chars[k % m]};
      if (k >= m * m * m) p += std::to_string(k / (m * m * m));
    }
    add(p, -static_cast<float>(v.tokens.size()), 1);  // NORMAL; shorter pieces score higher
  }
  return v;
}

}  // namespace

Result<uint32_t> tiny_weight_type(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "f32") return kF32;
  if (n == "f16") return kF16;
  if (n == "q8_0") return kQ8_0;
  return make_error("weight type '" + name + "' is not one of f32, f16, q8_0");
}

Result<fit::GgufWriter> tiny_model(const TinyModelOptions& o) {
  auto type = tiny_weight_type(o.type);
  if (!type) return type.error();
  if (o.n_layer == 0 || o.n_embd == 0 || o.n_head == 0 || o.n_head_kv == 0 || o.n_ff == 0)
    return make_error("tiny model: layers, embd, heads, kv-heads and ff must be positive");
  if (o.n_embd % o.n_head != 0)
    return make_error("tiny model: n_embd " + std::to_string(o.n_embd) +
                      " is not a multiple of n_head " + std::to_string(o.n_head));
  if (o.n_head % o.n_head_kv != 0)
    return make_error("tiny model: n_head " + std::to_string(o.n_head) +
                      " is not a multiple of n_head_kv " + std::to_string(o.n_head_kv));
  if ((o.n_embd / o.n_head) % 2 != 0)
    return make_error("tiny model: head size " + std::to_string(o.n_embd / o.n_head) +
                      " must be even (RoPE)");
  if (o.n_vocab < 259)
    return make_error("tiny model: n_vocab " + std::to_string(o.n_vocab) +
                      " is below 259 (3 control and 256 byte tokens)");
  if (*type == kQ8_0 && (o.n_embd % 32 != 0 || o.n_ff % 32 != 0))
    return make_error("tiny model: q8_0 needs n_embd and n_ff to be multiples of 32");

  const uint32_t head_dim = o.n_embd / o.n_head;
  const uint64_t n_embd_kv = static_cast<uint64_t>(head_dim) * o.n_head_kv;

  fit::GgufWriter w;
  w.set_str("general.architecture", "llama");
  w.set_str("general.name", "aimem-tiny-llama");
  w.set_u32("general.file_type", *type == kF32 ? 0 : *type == kF16 ? 1 : 7);  // LLAMA_FTYPE_*
  w.set_u32("llama.vocab_size", o.n_vocab);
  w.set_u32("llama.context_length", o.n_ctx_train);
  w.set_u32("llama.embedding_length", o.n_embd);
  w.set_u32("llama.block_count", o.n_layer);
  w.set_u32("llama.feed_forward_length", o.n_ff);
  w.set_u32("llama.attention.head_count", o.n_head);
  w.set_u32("llama.attention.head_count_kv", o.n_head_kv);
  w.set_u32("llama.rope.dimension_count", head_dim);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);

  Vocab v = make_vocab(o.n_vocab);
  w.set_str("tokenizer.ggml.model", "llama");
  w.set_arr_str("tokenizer.ggml.tokens", v.tokens);
  w.set_arr_f32("tokenizer.ggml.scores", v.scores);
  w.set_arr_i32("tokenizer.ggml.token_type", v.types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);

  Rng rng(o.seed);
  auto random = [&](uint64_t n) {
    std::vector<float> x(n);
    for (auto& f : x) f = rng.uniform() * o.scale;
    return x;
  };
  auto matrix = [&](const std::string& name, uint64_t ne0, uint64_t ne1) {
    w.tensors.push_back({name, *type, {ne0, ne1}, encode(random(ne0 * ne1), *type)});
  };
  auto norm = [&](const std::string& name) {
    w.tensors.push_back({name, kF32, {o.n_embd}, encode(std::vector<float>(o.n_embd, 1.0f), kF32)});
  };

  matrix("token_embd.weight", o.n_embd, o.n_vocab);
  for (uint32_t i = 0; i < o.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    norm(b + "attn_norm.weight");
    matrix(b + "attn_q.weight", o.n_embd, o.n_embd);
    matrix(b + "attn_k.weight", o.n_embd, n_embd_kv);
    matrix(b + "attn_v.weight", o.n_embd, n_embd_kv);
    matrix(b + "attn_output.weight", o.n_embd, o.n_embd);
    norm(b + "ffn_norm.weight");
    matrix(b + "ffn_gate.weight", o.n_embd, o.n_ff);
    matrix(b + "ffn_up.weight", o.n_embd, o.n_ff);
    matrix(b + "ffn_down.weight", o.n_ff, o.n_embd);
  }
  norm("output_norm.weight");
  if (!o.tied_output) matrix("output.weight", o.n_embd, o.n_vocab);
  return w;
}

Result<bool> write_tiny_model(const TinyModelOptions& options, const std::string& path) {
  auto w = tiny_model(options);
  if (!w) return w.error();
  return w->write(path);
}

fit::GgufWriter tiny_writer(const std::string& arch, uint32_t n_vocab) {
  TinyModelOptions o;
  o.n_vocab = n_vocab;
  auto tiny = tiny_model(o);
  fit::GgufWriter w;
  w.set_str("general.architecture", arch);
  w.set_str("general.name", "aimem-tiny-" + arch);
  w.set_u32("general.file_type", 0);  // all F32
  if (tiny) {
    for (auto& kv : tiny->kv)
      if (kv.first.rfind("tokenizer.", 0) == 0) w.kv.push_back(kv);
  }
  return w;
}

void TensorFiller::add(const std::string& name, std::vector<uint64_t> ne, float constant) {
  uint64_t n = 1;
  for (uint64_t d : ne) n *= d;
  std::vector<uint8_t> data(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    float f = constant;
    if (std::isnan(constant)) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      f = (float((state >> 40) & 0xffffff) / float(1 << 24) - 0.5f) * 0.04f;
    }
    std::memcpy(&data[i * 4], &f, 4);
  }
  w.tensors.push_back({name, 0 /* F32 */, std::move(ne), std::move(data)});
}

std::string shell_output(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string measure_command(const std::string& source_dir, const std::string& gguf, const std::string& settings,
                            const std::string& modules, const std::string& log) {
  return "node " + source_dir + "/tests/llamacpp/measure.mjs " + gguf + " '" + settings +
         "' --modules " + modules + " --timeout 90 --log " + log + " 2>/dev/null";
}

std::vector<Measured> measure_batch(const std::string& source_dir, const std::vector<MeasureJob>& jobs,
                                    const std::string& modules, const std::string& jobs_file) {
  nlohmann::json list = nlohmann::json::array();
  for (const MeasureJob& j : jobs) list.push_back({{"model", j.gguf}, {"settings", j.settings}, {"log", j.log}});
  const std::string cmd = "node " + source_dir + "/tests/llamacpp/measure.mjs --batch " + jobs_file + " --modules " +
                          modules + " --timeout 90 2>/dev/null";
  std::vector<Measured> out(jobs.size());
  {
    std::ofstream f(jobs_file);
    f << list.dump() << "\n";
    if (!f) {  // no batch: every job says why
      for (size_t i = 0; i < jobs.size(); ++i) out[i].command = "cannot write the jobs file " + jobs_file;
      return out;
    }
  }
  std::istringstream lines(shell_output(cmd));
  std::string line;
  for (size_t i = 0; i < jobs.size(); ++i) {
    out[i].result = std::getline(lines, line) ? nlohmann::json::parse(line, nullptr, false)
                                              : nlohmann::json(nlohmann::json::value_t::discarded);
    out[i].command = cmd + " (job " + std::to_string(i) + " of " + std::to_string(jobs.size()) + ", counted from 0" +
                     (out[i].result.is_discarded() ? ", which printed no line" : "") + "; alone: " +
                     measure_command(source_dir, jobs[i].gguf, jobs[i].settings.dump(), modules, jobs[i].log) + ")";
  }
  return out;
}

EngineLog read_engine_log(const std::string& path) {
  EngineLog e;
  std::ifstream in(path);
  std::string line;
  const std::regex rs_buf(R"(llama_memory_recurrent:\s+\S+ RS buffer size =\s+([\d.]+) MiB)");
  const std::regex rs_size(
      R"(llama_memory_recurrent: size =\s+[\d.]+ MiB \(\s*(\d+) cells,\s+\d+ layers,\s+\d+ seqs\s+(\d+) rs_seq\), R \(f32\):\s+([\d.]+) MiB, S \(f32\):\s+([\d.]+) MiB)");
  const std::regex kv_buf(R"(llama_kv_cache:\s+\S+ KV buffer size =\s+([\d.]+) MiB)");
  const std::regex nodes(R"(sched_reserve: max_nodes = (\d+))");
  const std::regex model(R"(load_tensors:\s+\S+ model buffer size =\s+([\d.]+) MiB)");
  auto add = [](std::optional<double>& v, const std::string& x) { v = v.value_or(0) + std::stod(x); };
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, rs_buf)) add(e.rs_mib, m[1]);
    else if (std::regex_search(line, m, rs_size)) {
      e.rs_cells = uint32_t(std::stoul(m[1]));
      e.n_rs_seq = uint32_t(std::stoul(m[2]));
      e.r_mib = std::stod(m[3]);
      e.s_mib = std::stod(m[4]);
    } else if (std::regex_search(line, m, kv_buf)) add(e.kv_mib, m[1]);
    else if (std::regex_search(line, m, nodes)) e.max_nodes = uint32_t(std::stoul(m[1]));
    else if (std::regex_search(line, m, model)) add(e.model_mib, m[1]);
  }
  return e;
}

bool host_has_amx() {
  std::ifstream in("/proc/cpuinfo");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.find(" amx_int8") != std::string::npos && all.find(" amx_tile") != std::string::npos;
}

}  // namespace aimem::test
