// Hugging Face model folders: config.json plus the safetensors headers,
// sharded through model.safetensors.index.json, read through the caller's
// core/file_system.h view; and a config.json alone.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/doc_reader.h"
#include "core/text.h"
#include "fit/hf.h"
#include "fit/hf_parts.h"

namespace aimem::fit {

using hf::as_u64;
using hf::dtype_label;
using hf::Fields;
using hf::gb;
using hf::json;
using hf::spec_from_config_at;

namespace {

// config.json is a few KB; a model.safetensors.index.json of ~90,000 tensors
// (DeepSeek-V3) about 9 MB.
constexpr size_t kMaxJsonFileBytes = 32u << 20;

Result<std::string> read_json_text(const FileSystem& files, const std::string& path) {
  // A regular file only: a FIFO in a model folder would block the read forever.
  return files.read(path, kMaxJsonFileBytes, "JSON file", /*regular_only=*/true);
}

Result<json> parse_json_text(const std::string& path, const std::string& s) {
  doc::Limits limits;
  limits.max_bytes = kMaxJsonFileBytes;
  return doc::parse_json(s, path, limits);
}

Result<json> read_json_file(const FileSystem& files, const std::string& path) {
  auto s = read_json_text(files, path);
  if (!s) return s.error();
  return parse_json_text(path, *s);
}

// model.safetensors.index.json's weight_map (tensor -> shard file) read by a
// SAX pass that builds no DOM: a 70B model's index has ~700 entries and is
// read on every `aimem fit` of its folder. It takes only an index whose
// weight_map is an object of strings, named once; anything else (invalid
// JSON, another type, a repeated key) gives nullopt and the DOM path reads it
// again to say what is wrong in the usual words.
class WeightMapSax final : public nlohmann::json_sax<json> {
 public:
  std::vector<std::pair<std::string, std::string>> entries;  // as written
  bool found = false;

  bool null() override { return other(); }
  bool boolean(bool) override { return other(); }
  bool number_integer(number_integer_t) override { return other(); }
  bool number_unsigned(number_unsigned_t) override { return other(); }
  bool number_float(number_float_t, const string_t&) override { return other(); }
  bool binary(binary_t&) override { return other(); }
  bool string(string_t& v) override {
    if (skip_ > 0 || (depth_ == 1 && !in_map_key_)) return true;
    if (depth_ != 2) return false;
    entries.back().second = std::move(v);
    return true;
  }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override {
    if (skip_ > 0 || (depth_ == 1 && !in_map_key_)) return ++skip_, true;
    return false;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (skip_ > 0) return true;
    if (depth_ == 1) {
      in_map_key_ = k == "weight_map";
      if (in_map_key_ && found) return false;  // a second weight_map: the DOM keeps the last
      found |= in_map_key_;
      return true;
    }
    if (depth_ != 2) return false;
    entries.emplace_back(std::move(k), std::string());
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // A scalar is ours only as the value of a key other than weight_map.
  bool other() { return skip_ > 0 || (depth_ == 1 && !in_map_key_); }
  bool open() {  // a JSON object or array begins (SAX), not a file
    if (skip_ > 0 || (depth_ == 1 && !in_map_key_)) return ++skip_, true;
    if (depth_ == 0 || depth_ == 1) return ++depth_, true;
    return false;
  }
  bool close() {
    if (skip_ > 0) return --skip_, true;
    if (depth_ == 2) in_map_key_ = false;
    --depth_;
    return true;
  }

  int depth_ = 0;  // 1 inside the index, 2 inside weight_map
  int skip_ = 0;   // nesting depth inside a value being skipped
  bool in_map_key_ = false;
};

// weight_map's entries sorted by tensor name (the DOM's order), or nullopt
// where the DOM path must read the index.
std::optional<std::vector<std::pair<std::string, std::string>>> weight_map_sax(const std::string& text) {
  WeightMapSax sax;
  if (!json::sax_parse(text, &sax) || !sax.found) return std::nullopt;
  auto& e = sax.entries;
  std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < e.size(); ++i)
    if (e[i].first == e[i - 1].first) return std::nullopt;
  return std::move(e);
}

uint64_t elements(const Tensor& t) {
  uint64_t n = 1;
  for (uint64_t v : t.ne) n *= v;
  return n;
}

std::string base_name(const std::string& path) {
  std::filesystem::path p(path);
  std::string s = p.filename().string();
  if (s.empty()) s = p.parent_path().filename().string();
  return s;
}

// Replaces the computed weights with the tensor table's.
void apply_tensors(ModelSpec& m, std::vector<Tensor> tensors, const json& config, bool has_nextn) {
  // Multi-token-prediction blocks (layer >= num_hidden_layers) are not loaded.
  if (has_nextn) {
    uint64_t dropped = 0, n = 0;
    std::vector<Tensor> kept;
    kept.reserve(tensors.size());
    for (auto& t : tensors) {
      if (t.layer >= 0 && static_cast<uint32_t>(t.layer) >= m.n_layer) {
        dropped += t.bytes;
        ++n;
      } else {
        kept.push_back(std::move(t));
      }
    }
    tensors = std::move(kept);
    if (n)
      m.notes.push_back(fmt::format("{} tensors of the multi-token-prediction layer(s) ({:.2f} GiB) "
                                    "left out: not loaded unless speculative decoding uses them",
                                    n, static_cast<double>(dropped) / (1ull << 30)));
  }
  // Packed integer weights: elements per stored element.
  std::string method;
  uint32_t bits = 4;
  for (const char* k : {"quantization_config", "compression_config"})
    if (auto it = config.find(k); it != config.end() && it->is_object()) {
      if (auto mt = it->find("quant_method"); mt != it->end() && mt->is_string())
        method = text::lower(mt->get<std::string>());
      if (auto b = it->find("bits"); b != it->end() && as_u64(*b))
        bits = static_cast<uint32_t>(std::clamp<uint64_t>(*as_u64(*b), 1, 32));
      if (auto g = it->find("config_groups"); g != it->end() && g->is_object())
        for (const auto& grp : *g)
          if (grp.is_object())
            if (auto w = grp.find("weights"); w != grp.end() && w->is_object())
              if (auto nb = w->find("num_bits"); nb != w->end() && as_u64(*nb))
                bits = static_cast<uint32_t>(std::clamp<uint64_t>(*as_u64(*nb), 1, 32));
      break;
    }
  uint64_t bytes = 0, meta = 0, params = 0, expert_params = 0;
  bool unsure = false;
  std::map<std::string, uint64_t> by_dtype;
  for (const auto& t : tensors) {
    bytes += t.bytes;
    if (t.quant_metadata) {
      meta += t.bytes;
      continue;
    }
    uint64_t n = elements(t);
    const bool int_storage = t.dtype == "I32" || t.dtype == "U8" || t.dtype == "I8" || t.dtype == "U32";
    std::string_view name = t.name;
    if (int_storage && (t.dtype == "I32" || t.dtype == "U32") &&
        (text::ends_with(name, ".qweight") || text::ends_with(name, "weight_packed"))) {
      n *= 32 / bits;  // int32 holds 32/bits values
    } else if (t.dtype == "U8" && (method == "bitsandbytes" || method == "mxfp4") &&
               (text::ends_with(name, ".weight") || text::ends_with(name, "_blocks"))) {
      n *= 2;  // two 4-bit values per byte (bnb-8bit stores I8)
    } else if (int_storage && t.dtype != "I8" && n > 1'000'000) {
      unsure = true;
    }
    params += n;
    if (t.expert) expert_params += n;
    by_dtype[t.dtype] += t.bytes;
  }
  m.tensors = std::move(tensors);
  m.weight_bytes = bytes;
  m.quant_metadata_bytes = meta;
  m.weights_exact = true;
  m.source = "safetensors";
  const uint64_t computed = m.n_params;
  m.n_params = params;
  m.n_params_active = params;
  if (m.n_expert > 0 && expert_params > 0)
    m.n_params_active = params - expert_params + expert_params / m.n_expert * m.n_expert_used;
  if (unsure)
    m.notes.push_back("parameter count approximate: packed integer tensors of an unknown layout");
  if (computed && params &&
      (params > computed * 1.05 || params < computed * 0.95))
    m.notes.push_back(fmt::format("config.json shapes give {} parameters, the tensors hold {}",
                                  gb(computed), gb(params)));
  // Drop the "computed from shapes" note: the table is exact.
  m.notes.erase(std::remove_if(m.notes.begin(), m.notes.end(),
                               [](const std::string& s) {
                                 return s.rfind("weights computed from config.json", 0) == 0 ||
                                        s.find("estimated from vision_config") != std::string::npos;
                               }),
                m.notes.end());
  if (m.weights_format.empty() || m.weights_format == dtype_label(m.dtype_bytes)) {
    // Unquantized: name the dominant stored dtype.
    auto best = std::max_element(by_dtype.begin(), by_dtype.end(),
                                 [](const auto& x, const auto& y) { return x.second < y.second; });
    if (best != by_dtype.end()) m.weights_format = best->first;
  }
}

}  // namespace

Result<ModelSpec> read_hf_config(const FileSystem& files, const std::string& path, const std::string& dtype,
                                 const std::string& quant) {
  auto j = read_json_file(files, path);
  if (!j) return make_error(j.error().message);
  std::filesystem::path p(path);
  std::string name = p.has_parent_path() ? p.parent_path().filename().string() : "";
  if (name.empty() || name == ".") name = base_name(path);
  auto m = spec_from_config_at(*j, name, path, dtype, quant);
  if (!m) return m;
  m->path = path;
  m->source = "config";
  return m;
}

Result<ModelSpec> read_hf_folder(const FileSystem& files, const std::string& dir) {
  namespace fs = std::filesystem;  // paths only: the files come from `files`
  fs::path root(dir);
  auto exists = [&](const fs::path& p) { return files.kind(p.string()) != FileKind::missing; };
  if (files.kind(dir) != FileKind::directory)
    return make_error(fmt::format("{}: not a directory", dir));
  const std::string config_path = (root / "config.json").string();
  if (!exists(root / "config.json"))
    return make_error(fmt::format("{}: missing (a Hugging Face model folder has one)", config_path));
  auto cfg = read_json_file(files, config_path);
  if (!cfg) return make_error(cfg.error().message);
  std::string name = base_name(dir);
  auto spec = spec_from_config_at(*cfg, name, config_path, "", "");
  if (!spec) return spec;
  ModelSpec& m = *spec;
  m.path = dir;

  // Shards: the index's weight_map, else model.safetensors, else every
  // *.safetensors in the folder.
  std::vector<std::string> shards;
  const fs::path index_path = root / "model.safetensors.index.json";
  if (exists(index_path)) {
    // One shard file per name, in the order of the tensors that name it.
    std::set<std::string> seen;
    auto take = [&](const std::string& tensor, const std::string& shard) -> std::optional<Error> {
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "..")
        return make_error(fmt::format("{}: weight_map['{}'] names '{}', not a file in the folder",
                                      index_path.string(), tensor, shard));
      if (seen.insert(shard).second) {
        if (!exists(root / shard))
          return make_error(fmt::format("{}: shard '{}' (holding '{}') is missing from {}",
                                        index_path.string(), shard, tensor, dir));
        shards.push_back(shard);
      }
      return std::nullopt;
    };
    auto text = read_json_text(files, index_path.string());
    if (!text) return make_error(text.error().message);
    if (auto entries = weight_map_sax(*text)) {
      for (const auto& [tensor, shard] : *entries)
        if (auto e = take(tensor, shard)) return *e;
    } else {
      auto idx = parse_json_text(index_path.string(), *text);
      if (!idx) return make_error(idx.error().message);
      auto wm = idx->find("weight_map");
      if (!idx->is_object() || wm == idx->end() || !wm->is_object())
        return make_error(fmt::format("{}: missing 'weight_map' object", index_path.string()));
      for (auto it = wm->begin(); it != wm->end(); ++it) {
        if (!it.value().is_string())
          return make_error(fmt::format("{}: weight_map['{}'] is {}, expected a file name",
                                        index_path.string(), it.key(), it.value().type_name()));
        if (auto e = take(it.key(), it.value().get_ref<const std::string&>())) return *e;
      }
    }
    std::sort(shards.begin(), shards.end());
  } else if (exists(root / "model.safetensors")) {
    shards.push_back("model.safetensors");
  } else {
    std::vector<std::string> all, consolidated;
    for (const std::string& fn : files.list(dir)) {
      if (!text::ends_with(fn, ".safetensors")) continue;
      (fn.rfind("consolidated", 0) == 0 ? consolidated : all).push_back(fn);
    }
    // Mistral repos ship both consolidated.safetensors and HF shards.
    if (all.empty()) all = consolidated;
    else if (!consolidated.empty())
      m.notes.push_back("consolidated*.safetensors skipped: the same weights as the HF shards");
    std::sort(all.begin(), all.end());
    shards = all;
  }

  if (shards.empty()) {
    m.notes.push_back(fmt::format("no safetensors files in {}: weights computed from config.json", dir));
    return spec;
  }
  std::vector<Tensor> tensors;
  for (const auto& s : shards) {
    auto r = read_safetensors_header(files, (root / s).string());
    if (!r) return make_error(r.error().message);
    for (auto& t : *r) tensors.push_back(std::move(t));
  }
  bool nextn = false;
  {
    Fields f(*cfg, nullptr, config_path);
    auto n = f.u64({"num_nextn_predict_layers"});
    nextn = n && *n > 0;
  }
  apply_tensors(m, std::move(tensors), *cfg, nextn);
  m.notes.push_back(fmt::format("weights summed from {} safetensors header(s)", shards.size()));
  return spec;
}

}  // namespace aimem::fit
