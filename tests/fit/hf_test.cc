// Hugging Face readers: safetensors headers (real files written here),
// sharded folders, quantized checkpoints, hostile headers, and config.json
// mapping for the architectures whose memory differs (MoE, MLA, SWA).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fit/hf.h"
#include "sources/files.h"
#include "support/test_support.h"

namespace aimem::fit {
namespace {

using json = nlohmann::json;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// 8-byte length + header JSON + data bytes.
std::string safetensors_bytes(const std::string& header, uint64_t data_bytes) {
  return le64(header.size()) + header + std::string(data_bytes, '\0');
}

uint64_t dtype_size(const std::string& d) {
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16") return 2;
  if (d == "F64" || d == "I64") return 8;
  return 1;
}

// Builds a consistent header for tensors laid out back to back.
struct Builder {
  json header = json::object();
  uint64_t offset = 0;
  Builder& add(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape) {
    uint64_t n = dtype_size(dtype);
    for (auto d : shape) n *= d;
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
    return *this;
  }
  std::string bytes() const { return safetensors_bytes(header.dump(), offset); }
  void write(const std::string& path) const { test::write_file(path, bytes()); }
};

Result<std::vector<Tensor>> parse(const std::string& bytes, const std::string& name = "x.safetensors") {
  return parse_safetensors_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
}

const Tensor* find(const std::vector<Tensor>& ts, const std::string& name) {
  for (const auto& t : ts)
    if (t.name == name) return &t;
  return nullptr;
}

// ---------------------------------------------------------------- headers

TEST(SafetensorsHeader, RoundTripOfARealFile) {
  std::string dir = test::temp_dir("st");
  Builder b;
  b.add("model.layers.3.mlp.up_proj.weight", "BF16", {16, 8}).add("model.norm.weight", "F32", {8});
  b.header["__metadata__"] = {{"format", "pt"}};
  b.write(dir + "/model.safetensors");

  auto r = read_safetensors_header(local_files(), dir + "/model.safetensors");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);  // __metadata__ is not a tensor
  const Tensor* up = find(*r, "model.layers.3.mlp.up_proj.weight");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->dtype, "BF16");
  EXPECT_EQ(up->n_dims, 2u);
  EXPECT_EQ(up->ne[0], 8u);   // GGUF order: the last dimension first
  EXPECT_EQ(up->ne[1], 16u);
  EXPECT_EQ(up->bytes, 16u * 8 * 2);
  EXPECT_EQ(up->layer, 3);
  EXPECT_FALSE(up->expert);
  EXPECT_FALSE(up->quant_metadata);
  const Tensor* norm = find(*r, "model.norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->layer, -1);
  EXPECT_EQ(norm->bytes, 32u);
  EXPECT_EQ(norm->offset, 16u * 8 * 2);  // after the first tensor in the data section
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsHeader, ClassifiesTensorsByName) {
  Builder b;
  b.add("model.layers.7.block_sparse_moe.experts.3.w1.weight", "BF16", {4, 4})
      .add("model.layers.2.mlp.shared_experts.gate_proj.weight", "BF16", {4, 4})
      .add("model.layers.1.self_attn.q_proj.scales", "F16", {1, 4})
      .add("model.layers.1.self_attn.q_proj.qzeros", "I32", {1, 1})
      .add("model.layers.1.self_attn.q_proj.g_idx", "I32", {4})
      .add("model.layers.0.mlp.down_proj.weight_scale_inv", "F32", {1, 1})
      .add("model.layers.0.mlp.down_proj.weight.absmax", "F32", {2})
      .add("model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__nf4", "U8", {8})
      .add("model.layers.5.mlp.experts.gate_up_proj_scales", "U8", {4, 4})
      .add("model.layers.5.mlp.experts.gate_up_proj_blocks", "U8", {4, 16})
      .add("vision_tower.vision_model.encoder.layers.1.mlp.fc1.weight", "BF16", {4, 4})
      .add("visual.blocks.0.attn.qkv.weight", "BF16", {4, 4})
      .add("multi_modal_projector.linear_1.weight", "BF16", {4, 4})
      .add("transformer.h.5.attn.c_attn.weight", "F16", {4, 4})
      .add("model.language_model.layers.9.self_attn.o_proj.weight", "BF16", {4, 4});
  auto r = parse(b.bytes());
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto get = [&](const char* n) {
    const Tensor* t = find(*r, n);
    EXPECT_NE(t, nullptr) << n;
    return t ? *t : Tensor{};
  };
  auto e = get("model.layers.7.block_sparse_moe.experts.3.w1.weight");
  EXPECT_TRUE(e.expert);
  EXPECT_EQ(e.layer, 7);
  EXPECT_FALSE(get("model.layers.2.mlp.shared_experts.gate_proj.weight").expert);  // always active
  for (const char* n : {"model.layers.1.self_attn.q_proj.scales", "model.layers.1.self_attn.q_proj.qzeros",
                        "model.layers.1.self_attn.q_proj.g_idx", "model.layers.0.mlp.down_proj.weight_scale_inv",
                        "model.layers.0.mlp.down_proj.weight.absmax",
                        "model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__nf4",
                        "model.layers.5.mlp.experts.gate_up_proj_scales"})
    EXPECT_TRUE(get(n).quant_metadata) << n;
  auto blocks = get("model.layers.5.mlp.experts.gate_up_proj_blocks");
  EXPECT_FALSE(blocks.quant_metadata);
  EXPECT_TRUE(blocks.expert);
  for (const char* n : {"vision_tower.vision_model.encoder.layers.1.mlp.fc1.weight",
                        "visual.blocks.0.attn.qkv.weight", "multi_modal_projector.linear_1.weight"}) {
    EXPECT_TRUE(get(n).vision) << n;
    EXPECT_EQ(get(n).layer, -1) << n;  // a vision block is not a decoder block
  }
  EXPECT_EQ(get("transformer.h.5.attn.c_attn.weight").layer, 5);
  EXPECT_EQ(get("model.language_model.layers.9.self_attn.o_proj.weight").layer, 9);
}

TEST(SafetensorsHeader, SubByteAndScalarShapes) {
  std::string h = R"({"a":{"dtype":"F4","shape":[4,8],"data_offsets":[0,16]},)"
                  R"("s":{"dtype":"F32","shape":[],"data_offsets":[16,20]},)"
                  R"("z":{"dtype":"BF16","shape":[0,5],"data_offsets":[20,20]}})";
  auto r = parse(safetensors_bytes(h, 20));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(find(*r, "a")->bytes, 16u);  // 32 values of 4 bits
  EXPECT_EQ(find(*r, "s")->n_dims, 0u);
  EXPECT_EQ(find(*r, "s")->bytes, 4u);
  EXPECT_EQ(find(*r, "z")->bytes, 0u);
  // An odd number of 4-bit values is not a whole number of bytes.
  auto odd = parse(safetensors_bytes(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})", 1));
  ASSERT_FALSE(odd.ok());
  EXPECT_TRUE(has(odd.error().message, "'a'")) << odd.error().message;
}

TEST(SafetensorsHeader, HeaderLengthBeyondTheFile) {
  std::string bytes = le64(4096) + R"({"a":{}})";
  auto r = parse(bytes, "short.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "short.safetensors")) << r.error().message;
  EXPECT_TRUE(has(r.error().message, "header length 4096")) << r.error().message;
  EXPECT_TRUE(has(r.error().message, "past the end")) << r.error().message;

  // The same through the file reader: checked before anything is allocated.
  std::string dir = test::temp_dir("st");
  test::write_file(dir + "/short.safetensors", bytes);
  auto f = read_safetensors_header(local_files(), dir + "/short.safetensors");
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(has(f.error().message, dir + "/short.safetensors")) << f.error().message;
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsHeader, HeaderLengthTwoToThe63) {
  std::string bytes = le64(1ull << 63) + std::string(64, ' ');
  auto r = parse(bytes, "huge.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "huge.safetensors: header length 9223372036854775808"))
      << r.error().message;
  std::string dir = test::temp_dir("st");
  test::write_file(dir + "/huge.safetensors", bytes);
  EXPECT_FALSE(read_safetensors_header(local_files(), dir + "/huge.safetensors").ok());
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsHeader, InvalidJsonNamesFileAndByte) {
  std::string h = R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]} oops})";
  auto r = parse(safetensors_bytes(h, 4), "bad.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "bad.safetensors")) << r.error().message;
  EXPECT_TRUE(has(r.error().message, "not valid JSON (at byte ")) << r.error().message;
  // The byte is counted in the file: 8 + position of "oops".
  EXPECT_TRUE(has(r.error().message, "byte " + std::to_string(8 + h.find("oops")))) << r.error().message;
}

TEST(SafetensorsHeader, LyingOffsetsNameTheTensor) {
  std::string h = R"({"model.layers.3.mlp.up_proj.weight":{"dtype":"BF16","shape":[4096,14336],)"
                  R"("data_offsets":[0,12]}})";
  auto r = parse(safetensors_bytes(h, 12), "model-00002-of-00004.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "model-00002-of-00004.safetensors: tensor 'model.layers.3.mlp.up_proj.weight': "
            "data_offsets [0, 12] but BF16 [4096, 14336] needs 117440512 bytes");
}

TEST(SafetensorsHeader, RejectsBadEntries) {
  struct Case {
    const char* header;
    uint64_t data;
    const char* expect;
  } cases[] = {
      {R"({"t":{"dtype":"Q4_K","shape":[2],"data_offsets":[0,2]}})", 2, "tensor 't': unknown dtype 'Q4_K'"},
      {R"({"t":{"shape":[2],"data_offsets":[0,2]}})", 2, "tensor 't': missing 'dtype'"},
      {R"({"t":{"dtype":7,"shape":[2],"data_offsets":[0,2]}})", 2, "tensor 't': 'dtype' is JSON number"},
      {R"({"t":{"dtype":"U8","shape":"2","data_offsets":[0,2]}})", 2, "tensor 't': 'shape' is JSON string"},
      {R"({"t":{"dtype":"U8","shape":[2,-3],"data_offsets":[0,2]}})", 2, "tensor 't': negative dimension -3"},
      {R"({"t":{"dtype":"U8","shape":[2.5],"data_offsets":[0,2]}})", 2, "tensor 't': 'shape' holds JSON number"},
      {R"({"t":{"dtype":"U8","shape":[2]}})", 2, "tensor 't': missing 'data_offsets'"},
      {R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[0]}})", 2, "tensor 't': 'data_offsets' is [0]"},
      {R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[4,2]}})", 4, "end before they begin"},
      {R"({"t":{"dtype":"U8","shape":[4294967296,4294967296,16],"data_offsets":[0,2]}})", 2,
       "overflows 64 bits"},
      {R"({"t":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})", 4, "truncated"},
      {R"({"t":[1,2]})", 0, "tensor 't': entry is JSON array"},
      {R"([1,2])", 0, "must be an object of tensors"},
      {R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
       6, "overlap"},
  };
  for (const auto& c : cases) {
    auto r = parse(safetensors_bytes(c.header, c.data), "f.safetensors");
    ASSERT_FALSE(r.ok()) << c.header;
    EXPECT_TRUE(has(r.error().message, "f.safetensors: ")) << r.error().message;
    EXPECT_TRUE(has(r.error().message, c.expect)) << c.header << " -> " << r.error().message;
  }
  EXPECT_FALSE(parse("1234567", "tiny").ok());
  EXPECT_TRUE(has(read_safetensors_header(local_files(), "/nonexistent/x.safetensors").error().message,
                  "/nonexistent/x.safetensors"));
}

// A 200 GB shard as a sparse file: only the header may be read.
TEST(SafetensorsHeader, SparseTwoHundredGigabyteFileReadsOnlyTheHeader) {
  const uint64_t file_size = 200'000'000'000ull;
  const uint64_t header_len = 256;  // padded with spaces, so the numbers' digits do not move it
  const uint64_t data = file_size - 8 - header_len;
  json h;
  h["__metadata__"] = {{"format", "pt"}};
  h["model.embed_tokens.weight"] = {{"dtype", "U8"}, {"shape", {data}}, {"data_offsets", {0, data}}};
  std::string text = h.dump();
  ASSERT_LT(text.size(), header_len);
  text.resize(header_len, ' ');
  std::string dir = test::temp_dir("st");
  std::string path = dir + "/model-00001-of-00001.safetensors";
  test::write_file(path, le64(header_len) + text);
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  if (::ftruncate(fd, static_cast<off_t>(file_size)) != 0) {
    ::close(fd);
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "this filesystem cannot hold a sparse 200 GB file";
  }
  ::close(fd);
  auto r = read_safetensors_header(local_files(), path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].bytes, data);
  // One byte short: the tensor runs past the end.
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(file_size - 1)), 0);
  auto t = read_safetensors_header(local_files(), path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(has(t.error().message, "truncated")) << t.error().message;
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------- folders

json tiny_llama_config() {
  return {{"model_type", "llama"}, {"hidden_size", 8},        {"num_hidden_layers", 2},
          {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"intermediate_size", 16},
          {"vocab_size", 32},         {"max_position_embeddings", 64},
          {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
}

// Every tensor of the tiny Llama above, in BF16.
void add_tiny_llama(Builder& b, int layer_from, int layer_to, bool embed, bool head) {
  if (embed) b.add("model.embed_tokens.weight", "BF16", {32, 8});
  for (int il = layer_from; il < layer_to; ++il) {
    std::string p = "model.layers." + std::to_string(il) + ".";
    b.add(p + "input_layernorm.weight", "BF16", {8});
    b.add(p + "self_attn.q_proj.weight", "BF16", {8, 8});
    b.add(p + "self_attn.k_proj.weight", "BF16", {4, 8});
    b.add(p + "self_attn.v_proj.weight", "BF16", {4, 8});
    b.add(p + "self_attn.o_proj.weight", "BF16", {8, 8});
    b.add(p + "post_attention_layernorm.weight", "BF16", {8});
    b.add(p + "mlp.gate_proj.weight", "BF16", {16, 8});
    b.add(p + "mlp.up_proj.weight", "BF16", {16, 8});
    b.add(p + "mlp.down_proj.weight", "BF16", {8, 16});
  }
  if (head) {
    b.add("model.norm.weight", "BF16", {8});
    b.add("lm_head.weight", "BF16", {32, 8});
  }
}

TEST(HfFolder, ShardedThroughTheIndex) {
  std::string dir = test::temp_dir("hf");
  test::write_file(dir + "/config.json", tiny_llama_config().dump());
  Builder a, b;
  add_tiny_llama(a, 0, 1, true, false);
  add_tiny_llama(b, 1, 2, false, true);
  a.write(dir + "/model-00001-of-00002.safetensors");
  b.write(dir + "/model-00002-of-00002.safetensors");
  json wm = json::object();
  for (auto& [k, v] : a.header.items()) wm[k] = "model-00001-of-00002.safetensors";
  for (auto& [k, v] : b.header.items()) wm[k] = "model-00002-of-00002.safetensors";
  test::write_file(dir + "/model.safetensors.index.json",
                   json{{"metadata", {{"total_size", a.offset + b.offset}}}, {"weight_map", wm}}.dump());

  auto r = read_hf_folder(local_files(), dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, "safetensors");
  EXPECT_TRUE(r->weights_exact);
  EXPECT_EQ(r->weight_bytes, a.offset + b.offset);
  EXPECT_EQ(r->quant_metadata_bytes, 0u);
  EXPECT_EQ(r->tensors.size(), a.header.size() + b.header.size());
  EXPECT_EQ(r->n_layer, 2u);
  EXPECT_EQ(r->weights_format, "BF16");
  // Shapes from config.json count the same parameters as the tensors.
  auto c = spec_from_config(tiny_llama_config(), "tiny");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(r->n_params, c->n_params);
  EXPECT_EQ(c->weight_bytes, r->weight_bytes);
  std::filesystem::remove_all(dir);
}

TEST(HfFolder, MissingShardIsNamed) {
  std::string dir = test::temp_dir("hf");
  test::write_file(dir + "/config.json", tiny_llama_config().dump());
  Builder a;
  add_tiny_llama(a, 0, 2, true, true);
  a.write(dir + "/model-00001-of-00002.safetensors");
  json wm = {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
             {"lm_head.weight", "model-00002-of-00002.safetensors"}};
  test::write_file(dir + "/model.safetensors.index.json", json{{"weight_map", wm}}.dump());
  auto r = read_hf_folder(local_files(), dir);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "model-00002-of-00002.safetensors")) << r.error().message;
  EXPECT_TRUE(has(r.error().message, "missing")) << r.error().message;
  EXPECT_TRUE(has(r.error().message, "model.safetensors.index.json")) << r.error().message;
  std::filesystem::remove_all(dir);
}

TEST(HfFolder, ShardsWithoutAnIndexAndABadShard) {
  std::string dir = test::temp_dir("hf");
  test::write_file(dir + "/config.json", tiny_llama_config().dump());
  Builder a, b;
  add_tiny_llama(a, 0, 1, true, false);
  add_tiny_llama(b, 1, 2, false, true);
  a.write(dir + "/part-a.safetensors");
  b.write(dir + "/part-b.safetensors");
  auto r = read_hf_folder(local_files(), dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weight_bytes, a.offset + b.offset);

  // A shard whose header lies is reported with its file name.
  std::string h = R"({"model.layers.3.mlp.up_proj.weight":{"dtype":"BF16","shape":[4096,14336],"data_offsets":[0,12]}})";
  test::write_file(dir + "/part-b.safetensors", safetensors_bytes(h, 12));
  auto bad = read_hf_folder(local_files(), dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error().message, "part-b.safetensors: tensor 'model.layers.3.mlp.up_proj.weight'"))
      << bad.error().message;
  std::filesystem::remove_all(dir);
}

TEST(HfFolder, ConfigOnlyFolderComputesWeights) {
  std::string dir = test::temp_dir("hf");
  test::write_file(dir + "/config.json", tiny_llama_config().dump());
  auto r = read_hf_folder(local_files(), dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->weights_exact);
  EXPECT_GT(r->weight_bytes, 0u);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(has(read_hf_folder(local_files(), dir).error().message, dir));
}

// A GPTQ int4 g4 layer: qweight int32 [in/8, out], qzeros int32 [groups, out/8],
// scales fp16 [groups, out], g_idx int32 [in].
TEST(HfFolder, GptqScalesAndZerosAreQuantMetadata) {
  std::string dir = test::temp_dir("hf");
  json cfg = tiny_llama_config();
  cfg["num_hidden_layers"] = 1;
  cfg["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 4}, {"desc_act", false}};
  test::write_file(dir + "/config.json", cfg.dump());
  Builder b;
  b.add("model.embed_tokens.weight", "F16", {32, 8});
  for (const char* proj : {"q_proj", "o_proj"}) {  // out 8, in 8
    std::string p = std::string("model.layers.0.self_attn.") + proj;
    b.add(p + ".qweight", "I32", {1, 8});
    b.add(p + ".qzeros", "I32", {2, 1});
    b.add(p + ".scales", "F16", {2, 8});
    b.add(p + ".g_idx", "I32", {8});
  }
  b.add("lm_head.weight", "F16", {32, 8});
  b.write(dir + "/model.safetensors");
  auto r = read_hf_folder(local_files(), dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const uint64_t meta_per_proj = 2 * 1 * 4 + 2 * 8 * 2 + 8 * 4;
  EXPECT_EQ(r->quant_metadata_bytes, 2 * meta_per_proj);
  EXPECT_EQ(r->weight_bytes, b.offset);
  EXPECT_EQ(r->weights_format, "GPTQ int4 g4");
  // Each int32 of qweight packs 8 values: 8 x 8 per projection.
  EXPECT_EQ(r->n_params, 2 * 32 * 8 + 2 * 64u);
  std::filesystem::remove_all(dir);
}

TEST(HfFolder, AwqAndFp8MetadataLandInQuantMetadata) {
  std::string dir = test::temp_dir("hf");
  json cfg = tiny_llama_config();
  cfg["num_hidden_layers"] = 1;
  cfg["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 8}, {"zero_point", true}};
  test::write_file(dir + "/config.json", cfg.dump());
  Builder b;
  b.add("model.layers.0.mlp.down_proj.qweight", "I32", {16, 1});
  b.add("model.layers.0.mlp.down_proj.qzeros", "I32", {2, 1});
  b.add("model.layers.0.mlp.down_proj.scales", "F16", {2, 8});
  b.write(dir + "/model.safetensors");
  auto r = read_hf_folder(local_files(), dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->quant_metadata_bytes, 2u * 4 + 2 * 8 * 2);
  EXPECT_TRUE(has(r->weights_format, "AWQ int4"));

  cfg["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  test::write_file(dir + "/config.json", cfg.dump());
  Builder f;
  f.add("model.layers.0.mlp.down_proj.weight", "F8_E4M3", {256, 256});
  f.add("model.layers.0.mlp.down_proj.weight_scale_inv", "F32", {2, 2});
  f.write(dir + "/model.safetensors");
  auto r8 = read_hf_folder(local_files(), dir);
  ASSERT_TRUE(r8.ok()) << r8.error().message;
  EXPECT_EQ(r8->quant_metadata_bytes, 16u);
  EXPECT_EQ(r8->weight_bytes, 256u * 256 + 16);
  EXPECT_EQ(r8->n_params, 256u * 256);
  EXPECT_EQ(r8->weights_format, "FP8 (block 128x128 scales)");
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------- config.json

TEST(HfConfig, MissingAndMistypedFieldsAreNamed) {
  json c = tiny_llama_config();
  c.erase("num_hidden_layers");
  auto r = spec_from_config(c, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "config.json: missing 'num_hidden_layers'");

  c = tiny_llama_config();
  c["hidden_size"] = "4096";
  r = spec_from_config(c, "");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "config.json: 'hidden_size' is string")) << r.error().message;

  c = tiny_llama_config();
  c["tie_word_embeddings"] = 1;
  EXPECT_TRUE(has(spec_from_config(c, "").error().message, "'tie_word_embeddings'"));
  c = tiny_llama_config();
  c["num_hidden_layers"] = -2;
  EXPECT_TRUE(has(spec_from_config(c, "").error().message, "'num_hidden_layers'"));
  c = tiny_llama_config();
  c["num_hidden_layers"] = 1ull << 40;  // would size per-layer vectors
  EXPECT_TRUE(has(spec_from_config(c, "").error().message, "'num_hidden_layers'"));
  c = tiny_llama_config();
  c["layer_types"] = {"full_attention"};
  EXPECT_TRUE(has(spec_from_config(c, "").error().message, "'layer_types'"));
  EXPECT_FALSE(spec_from_config(json::array(), "").ok());

  std::string dir = test::temp_dir("hf");
  test::write_file(dir + "/config.json", "{\"hidden_size\": 8,, }");
  auto f = read_hf_config(local_files(), dir + "/config.json", "", "");
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(has(f.error().message, dir + "/config.json: not valid JSON (at byte")) << f.error().message;
  test::write_file(dir + "/config.json", json{{"hidden_size", 8}}.dump());
  f = read_hf_config(local_files(), dir + "/config.json", "", "");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, dir + "/config.json: missing 'num_hidden_layers'");
  std::filesystem::remove_all(dir);
}

json llama31_8b() {
  return {{"model_type", "llama"},          {"hidden_size", 4096},
          {"num_hidden_layers", 32},        {"num_attention_heads", 32},
          {"num_key_value_heads", 8},       {"intermediate_size", 14336},
          {"vocab_size", 128256},           {"max_position_embeddings", 131072},
          {"tie_word_embeddings", false},   {"torch_dtype", "bfloat16"},
          {"rope_scaling", {{"factor", 8.0}, {"rope_type", "llama3"}}}};
}

TEST(HfConfig, Llama31_8B) {
  auto r = spec_from_config(llama31_8b(), "meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(r.ok()) << r.error().message;
  // By hand: embeddings and lm_head 2 x 128256 x 4096 = 1,050,673,152;
  // per layer q 4096^2 + k,v 2 x 1024 x 4096 + o 4096^2 = 41,943,040,
  // MLP 3 x 4096 x 14336 = 176,160,768, two norms 8,192 -> 218,112,000;
  // x 32 = 6,979,584,000; + final norm 4,096 = 8,030,261,248.
  EXPECT_EQ(r->n_params, 8'030'261'248ull);
  EXPECT_NEAR(static_cast<double>(r->n_params), 8.03e9, 0.01 * 8.03e9);
  EXPECT_EQ(r->weight_bytes, 2 * r->n_params);
  EXPECT_EQ(r->n_layer, 32u);
  EXPECT_EQ(r->head_dim_k, 128u);
  EXPECT_EQ(r->n_head_kv, std::vector<uint32_t>(32, 8));
  EXPECT_EQ(r->n_ctx_train, 131072u);
  EXPECT_EQ(r->n_ff, 14336u);
  EXPECT_EQ(r->n_swa, 0u);
  EXPECT_FALSE(r->weights_exact);
  EXPECT_EQ(r->source, "config");
  EXPECT_EQ(r->weights_format, "BF16");
  bool noted = false;
  for (const auto& n : r->notes) noted |= has(n, "approximate");
  EXPECT_TRUE(noted);
}

TEST(HfConfig, QuantAndDtypeOverrides) {
  auto awq = spec_from_config(llama31_8b(), "x", "", "awq");
  ASSERT_TRUE(awq.ok()) << awq.error().message;
  EXPECT_EQ(awq->weights_format, "AWQ int4 g128");
  EXPECT_GT(awq->quant_metadata_bytes, 0u);
  // Linear layers at ~4.25 bits, embeddings and lm_head still BF16: ~5.7 GB.
  EXPECT_GT(awq->weight_bytes, 5'300'000'000ull);
  EXPECT_LT(awq->weight_bytes, 6'000'000'000ull);
  auto fp32 = spec_from_config(llama31_8b(), "x", "fp32", "");
  ASSERT_TRUE(fp32.ok());
  EXPECT_EQ(fp32->weight_bytes, 4 * fp32->n_params);
  EXPECT_EQ(fp32->dtype_bytes, 4u);
  auto fp8 = spec_from_config(llama31_8b(), "x", "fp8", "");
  ASSERT_TRUE(fp8.ok());
  EXPECT_TRUE(has(fp8->weights_format, "FP8"));
  EXPECT_LT(fp8->weight_bytes, 9'200'000'000ull);
  for (const char* q : {"gptq", "int4", "int8", "bnb-4bit", "bnb-8bit", "mxfp4"})
    EXPECT_TRUE(spec_from_config(llama31_8b(), "x", "", q).ok()) << q;
  auto bad = spec_from_config(llama31_8b(), "x", "", "q4_k");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error().message, "'q4_k'"));
  EXPECT_FALSE(spec_from_config(llama31_8b(), "x", "int3", "").ok());
}

TEST(HfConfig, BitsandbytesFromConfig) {
  json c = llama31_8b();
  c["quantization_config"] = {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                              {"bnb_4bit_quant_type", "nf4"}, {"bnb_4bit_use_double_quant", true}};
  auto r = spec_from_config(c, "x");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weights_format, "bitsandbytes nf4 (double quant)");
  // 6.98B quantized params at ~4.13 bits plus 1.05B BF16 params.
  EXPECT_NEAR(static_cast<double>(r->weight_bytes), 5.72e9, 0.2e9);
}

TEST(HfConfig, MixtralIsMoE) {
  json c = {{"model_type", "mixtral"},       {"hidden_size", 4096},      {"num_hidden_layers", 32},
            {"num_attention_heads", 32},     {"num_key_value_heads", 8}, {"intermediate_size", 14336},
            {"num_local_experts", 8},        {"num_experts_per_tok", 2}, {"vocab_size", 32000},
            {"max_position_embeddings", 32768}, {"sliding_window", nullptr},
            {"tie_word_embeddings", false},  {"torch_dtype", "bfloat16"}};
  auto r = spec_from_config(c, "mixtral");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n_expert, 8u);
  EXPECT_EQ(r->n_expert_used, 2u);
  EXPECT_EQ(r->n_ff_exp, 14336u);
  EXPECT_EQ(r->n_ff, 0u);  // every layer is MoE
  EXPECT_NEAR(r->n_params / 1e9, 46.7, 0.3);
  EXPECT_NEAR(r->n_params_active / 1e9, 12.9, 0.2);
  EXPECT_EQ(r->n_swa, 0u);
}

json deepseek_v3() {
  return {{"model_type", "deepseek_v3"}, {"hidden_size", 7168}, {"num_hidden_layers", 61},
          {"num_attention_heads", 128}, {"num_key_value_heads", 128}, {"intermediate_size", 18432},
          {"moe_intermediate_size", 2048}, {"n_routed_experts", 256}, {"n_shared_experts", 1},
          {"num_experts_per_tok", 8}, {"first_k_dense_replace", 3}, {"moe_layer_freq", 1},
          {"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
          {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"vocab_size", 129280},
          {"max_position_embeddings", 163840}, {"num_nextn_predict_layers", 1},
          {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"},
          {"quantization_config", {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"},
                                   {"weight_block_size", {128, 128}}}}};
}

TEST(HfConfig, DeepSeekV3Mla) {
  auto r = spec_from_config(deepseek_v3(), "deepseek-ai/DeepSeek-V3");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n_layer, 61u);  // the MTP layer is not a decoder block
  EXPECT_EQ(r->kv_lora_rank, 512u);
  EXPECT_EQ(r->n_rot, 64u);
  EXPECT_EQ(r->head_dim_k, 192u);
  EXPECT_EQ(r->head_dim_v, 128u);
  EXPECT_EQ(r->n_expert, 256u);
  EXPECT_EQ(r->n_expert_used, 8u);
  EXPECT_EQ(r->n_expert_shared, 1u);
  EXPECT_EQ(r->n_ff_exp, 2048u);
  EXPECT_EQ(r->n_ff, 18432u);  // the first 3 layers are dense
  // 671B without the MTP layer (the checkpoint's 685B includes it).
  EXPECT_NEAR(r->n_params / 1e9, 671.0, 3.0);
  EXPECT_NEAR(r->n_params_active / 1e9, 37.5, 1.0);
  EXPECT_EQ(r->weights_format, "FP8 (block 128x128 scales)");
  EXPECT_GT(r->quant_metadata_bytes, 0u);
  // ~1 byte per routed parameter plus BF16 embeddings: about 673 GB.
  EXPECT_NEAR(r->weight_bytes / 1e9, 673.0, 10.0);
  bool mtp = false;
  for (const auto& n : r->notes) mtp |= has(n, "multi-token-prediction");
  EXPECT_TRUE(mtp);
}

json gemma3_27b() {
  return {{"model_type", "gemma3"}, {"torch_dtype", "bfloat16"},
          {"text_config", {{"model_type", "gemma3_text"}, {"hidden_size", 5376}, {"num_hidden_layers", 62},
                           {"num_attention_heads", 32}, {"num_key_value_heads", 16}, {"head_dim", 128},
                           {"intermediate_size", 21504}, {"sliding_window", 1024},
                           {"sliding_window_pattern", 6}}},
          {"vision_config", {{"hidden_size", 1152}, {"intermediate_size", 4304}, {"num_hidden_layers", 27},
                             {"patch_size", 14}, {"image_size", 896}}}};
}

TEST(HfConfig, Gemma3SlidingPatternFromThePatternNumber) {
  auto r = spec_from_config(gemma3_27b(), "gemma-3-27b");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n_layer, 62u);
  EXPECT_EQ(r->n_vocab, 262208u);  // Gemma3TextConfig default
  EXPECT_TRUE(r->tied_embeddings);
  EXPECT_EQ(r->n_swa, 1024u);
  ASSERT_EQ(r->swa_layer.size(), 62u);
  int global = 0;
  for (uint32_t il = 0; il < 62; ++il) {
    EXPECT_EQ(r->swa_layer[il], (il + 1) % 6 != 0) << il;  // 5 local : 1 global
    global += !r->swa_layer[il];
  }
  EXPECT_EQ(global, 10);
  EXPECT_NEAR(r->n_params / 1e9, 27.4, 0.4);  // incl. the ~0.4B SigLIP tower
}

TEST(HfConfig, LayerTypesWinOverThePattern) {
  json c = gemma3_27b();
  c["text_config"]["num_hidden_layers"] = 6;
  // A pattern the number 6 would not produce: layer_types must be used.
  c["text_config"]["layer_types"] = {"full_attention", "sliding_attention", "sliding_attention",
                                     "full_attention", "sliding_attention", "sliding_attention"};
  auto r = spec_from_config(c, "g");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->swa_layer, (std::vector<bool>{false, true, true, false, true, true}));
}

TEST(HfConfig, GptOssAlternatesAndIsMxfp4) {
  json c = {{"model_type", "gpt_oss"}, {"hidden_size", 2880}, {"num_hidden_layers", 24},
            {"num_attention_heads", 64}, {"num_key_value_heads", 8}, {"head_dim", 64},
            {"intermediate_size", 2880}, {"num_local_experts", 32}, {"num_experts_per_tok", 4},
            {"vocab_size", 201088}, {"max_position_embeddings", 131072}, {"sliding_window", 128},
            {"attention_bias", true}, {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"},
            {"quantization_config", {{"quant_method", "mxfp4"}}}};
  json types = json::array();
  for (int i = 0; i < 24; ++i) types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  auto r = spec_from_config(c, "gpt-oss-20b");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n_swa, 128u);
  for (uint32_t il = 0; il < 24; ++il) EXPECT_EQ(r->swa_layer[il], il % 2 == 0) << il;
  EXPECT_NEAR(r->n_params / 1e9, 20.9, 0.3);
  // MXFP4 experts (4.25 bits) and BF16 attention/embeddings: the 13.8 GB checkpoint.
  EXPECT_NEAR(r->weight_bytes / 1e9, 13.8, 0.5);
  EXPECT_GT(r->quant_metadata_bytes, 0u);
}

TEST(HfConfig, SlidingWindowFamilies) {
  json mistral = {{"model_type", "mistral"}, {"hidden_size", 4096}, {"num_hidden_layers", 32},
                  {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"intermediate_size", 14336},
                  {"vocab_size", 32000}, {"max_position_embeddings", 32768}, {"sliding_window", 4096},
                  {"torch_dtype", "bfloat16"}};
  auto m = spec_from_config(mistral, "mistral-v0.1");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->n_swa, 4096u);
  EXPECT_EQ(m->swa_layer, std::vector<bool>(32, true));  // v0.1: every layer

  json gemma2 = mistral;
  gemma2["model_type"] = "gemma2";
  gemma2["head_dim"] = 256;
  auto g = spec_from_config(gemma2, "gemma2");
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->swa_layer[0]);  // even layers local
  EXPECT_FALSE(g->swa_layer[1]);
  EXPECT_TRUE(g->tied_embeddings);

  json qwen = mistral;
  qwen["model_type"] = "qwen2";
  qwen["sliding_window"] = 131072;
  qwen["use_sliding_window"] = false;
  auto q = spec_from_config(qwen, "qwen2");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->n_swa, 0u);
  EXPECT_EQ(q->swa_layer, std::vector<bool>(32, false));

  json falcon = {{"model_type", "falcon"}, {"hidden_size", 4544}, {"num_hidden_layers", 32},
                 {"num_attention_heads", 71}, {"multi_query", true}, {"vocab_size", 65024}};
  auto f = spec_from_config(falcon, "falcon-7b");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->n_head_kv[0], 1u);
  EXPECT_EQ(f->head_dim_k, 64u);
  EXPECT_NEAR(f->n_params / 1e9, 6.9, 0.3);  // 2-matrix MLP of 4 x hidden
}

TEST(HfConfig, MultimodalTextConfigAndQwenMoeLayers) {
  json qvl = {{"model_type", "qwen2_5_vl"}, {"torch_dtype", "bfloat16"},
              {"text_config", {{"hidden_size", 3584}, {"num_hidden_layers", 28}, {"num_attention_heads", 28},
                               {"num_key_value_heads", 4}, {"intermediate_size", 18944},
                               {"vocab_size", 152064}, {"tie_word_embeddings", false}}}};
  auto r = spec_from_config(qvl, "qwen2.5-vl");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n_layer, 28u);
  EXPECT_EQ(r->architecture, "qwen2_5_vl");

  json moe = {{"model_type", "qwen2_moe"}, {"hidden_size", 64}, {"num_hidden_layers", 4},
              {"num_attention_heads", 4}, {"intermediate_size", 128}, {"moe_intermediate_size", 32},
              {"shared_expert_intermediate_size", 64}, {"num_experts", 4}, {"num_experts_per_tok", 2},
              {"decoder_sparse_step", 2}, {"mlp_only_layers", {3}}, {"vocab_size", 100}};
  auto q = spec_from_config(moe, "qmoe");
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->n_ff, 128u);  // layers 0 and 2 (and 3, listed) stay dense
  EXPECT_EQ(q->n_expert_shared, 2u);
}

}  // namespace
}  // namespace aimem::fit
