// The SAX readers of safetensors headers and model.safetensors.index.json
// (issue #3's speed work) must give what the DOM reading gave: tensors in
// name order, unknown fields and __metadata__ of any shape skipped, the last
// of a repeated key kept, and every malformed input named as before (those
// go back through the DOM path). Raw JSON text here, so that order and
// repetition are what the test writes.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fit/hf.h"
#include "sources/files.h"
#include "support/test_support.h"

namespace aimem::fit {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

Result<std::vector<Tensor>> parse(const std::string& header, uint64_t data, const std::string& name = "s.safetensors") {
  std::string b = le64(header.size()) + header + std::string(data, '\0');
  return parse_safetensors_header(reinterpret_cast<const uint8_t*>(b.data()), b.size(), name);
}

std::vector<std::string> names(const std::vector<Tensor>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) out.push_back(t.name);
  return out;
}

TEST(SafetensorsSax, NameOrderAndSkippedFields) {
  // Written out of order, with nested metadata and an unknown nested field.
  auto r = parse(R"({"z.weight":{"dtype":"F32","shape":[2],"data_offsets":[8,16],"extra":{"a":[1,{"b":null}],"c":-1.5}},)"
                 R"("__metadata__":{"format":"pt","nested":[[1,2],{"x":true}]},)"
                 R"("a.weight":{"shape":[2,2],"data_offsets":[0,8],"dtype":"BF16"}})",
                 16);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(names(*r), (std::vector<std::string>{"a.weight", "z.weight"}));
  EXPECT_EQ((*r)[0].dtype, "BF16");
  EXPECT_EQ((*r)[0].bytes, 8u);
  EXPECT_EQ((*r)[1].offset, 8u);
  EXPECT_EQ((*r)[1].n_dims, 1u);
}

TEST(SafetensorsSax, RepeatedKeysKeepTheLast) {
  // A repeated tensor: the second entry (8 bytes of F32) is the one kept.
  auto t = parse(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                 R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                 8);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ((*t)[0].dtype, "F32");
  EXPECT_EQ((*t)[0].bytes, 8u);
  // A repeated field inside an entry: the last dtype counts.
  auto f = parse(R"({"w":{"dtype":"F16","shape":[2],"dtype":"F32","data_offsets":[0,8]}})", 8);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ((*f)[0].dtype, "F32");
}

TEST(SafetensorsSax, MalformedEntriesNamedAsBefore) {
  struct Case {
    const char* header;
    const char* message;
  };
  const Case cases[] = {
      {R"({"w":{"dtype":"F16","shape":[-2],"data_offsets":[0,4]}})", "tensor 'w': negative dimension -2 in 'shape'"},
      {R"({"w":{"dtype":"F16","shape":[2.5],"data_offsets":[0,4]}})", "tensor 'w': 'shape' holds JSON number, expected non-negative integers"},
      {R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,4]}})", "tensor 'w': 'dtype' is JSON number, expected a string"},
      {R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4,8]}})", "tensor 'w': 'data_offsets' is [0,4,8], expected [begin, end]"},
      {R"({"w":{"dtype":"F16","shape":[2]}})", "tensor 'w': missing 'data_offsets'"},
      {R"({"w":[1,2]})", "tensor 'w': entry is JSON array, expected an object"},
      {R"({"w":{"dtype":"Q9","shape":[2],"data_offsets":[0,4]}})", "tensor 'w': unknown dtype 'Q9'"},
      {R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,6]}})", "tensor 'w': data_offsets [0, 6] but F16 [2] needs 4 bytes"},
      {R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[2,6]}})",
       "tensors 'a' [0, 4] and 'b' [2, 6] overlap"},
      {R"([1,2])", "the header is JSON array but must be an object of tensors"},
      {R"({"w":{"dtype":"F16",)", "the header is not valid JSON"},
  };
  for (const Case& c : cases) {
    auto r = parse(c.header, 8, "m.safetensors");
    ASSERT_FALSE(r) << c.header;
    EXPECT_TRUE(has(r.error().message, std::string("m.safetensors: ") + c.message)) << c.header << "\n" << r.error().message;
  }
}

// A folder of two one-tensor shards and the given index text.
struct Folder {
  std::string dir = test::temp_dir("hfsax");
  explicit Folder(const std::string& index) {
    test::write_file(dir + "/config.json",
                     R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":8,)"
                     R"("num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":2,)"
                     R"("intermediate_size":16,"vocab_size":32,"torch_dtype":"bfloat16"})");
    write_shard("a.safetensors", "model.embed_tokens.weight");
    write_shard("b.safetensors", "lm_head.weight");
    test::write_file(dir + "/model.safetensors.index.json", index);
  }
  ~Folder() { std::filesystem::remove_all(dir); }
  void write_shard(const std::string& file, const std::string& tensor) {
    std::string h = R"({")" + tensor + R"(":{"dtype":"BF16","shape":[32,8],"data_offsets":[0,512]}})";
    test::write_file(dir + "/" + file, le64(h.size()) + h + std::string(512, '\0'));
  }
};

TEST(SafetensorsIndexSax, SkipsOtherKeysAndKeepsTheLastRepeat) {
  Folder f(R"({"metadata":{"total_size":1024,"nested":[{"a":[1,2]},null]},"format":"x",)"
           R"("weight_map":{"lm_head.weight":"b.safetensors","model.embed_tokens.weight":"b.safetensors",)"
           R"("model.embed_tokens.weight":"a.safetensors"},"trailer":[true]})");
  auto r = read_hf_folder(local_files(), f.dir);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->weight_bytes, 1024u);
  EXPECT_EQ(r->tensors.size(), 2u);
  EXPECT_TRUE(has(r->notes.back(), "2 safetensors header(s)")) << r->notes.back();
}

TEST(SafetensorsIndexSax, MalformedIndexNamedAsBefore) {
  struct Case {
    const char* index;
    const char* message;
  };
  const Case cases[] = {
      {R"({"weight_map":{"lm_head.weight":"b.safetensors","model.embed_tokens.weight":3}})",
       "weight_map['model.embed_tokens.weight'] is number, expected a file name"},
      {R"({"weight_map":["a.safetensors"]})", "missing 'weight_map' object"},
      {R"({"metadata":{}})", "missing 'weight_map' object"},
      {R"({"weight_map":{"lm_head.weight":"../b.safetensors"}})",
       "weight_map['lm_head.weight'] names '../b.safetensors', not a file in the folder"},
      {R"({"weight_map":{"lm_head.weight":"c.safetensors"}})", "shard 'c.safetensors' (holding 'lm_head.weight') is missing"},
      {R"({"weight_map":{"lm_head.weight":"b.safetensors")", "not valid JSON"},
  };
  for (const Case& c : cases) {
    Folder f(c.index);
    auto r = read_hf_folder(local_files(), f.dir);
    ASSERT_FALSE(r) << c.index;
    EXPECT_TRUE(has(r.error().message, "model.safetensors.index.json: " + std::string(c.message)))
        << c.index << "\n" << r.error().message;
  }
}

}  // namespace
}  // namespace aimem::fit
