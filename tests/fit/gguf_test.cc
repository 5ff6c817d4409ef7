// The GGUF reader, the ggml type table and spec_from_gguf. GGUF files are
// built here byte by byte (not with GgufWriter) so the reader is checked
// against the format, not against our own writer.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fit/ggml_types.h"
#include "fit/gguf.h"
#include "sources/files.h"

namespace aimem::fit {
namespace {

// ---- raw GGUF bytes ------------------------------------------------------

enum : uint32_t { kU8, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kStr, kArr, kU64, kI64, kF64 };

struct Bytes {
  std::vector<uint8_t> b;
  template <typename T>
  Bytes& put(T v) {  // little-endian host (x86, arm64)
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b.insert(b.end(), raw, raw + sizeof(T));
    return *this;
  }
  Bytes& str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& raw(const Bytes& o) {
    b.insert(b.end(), o.b.begin(), o.b.end());
    return *this;
  }
};

// A GGUF file assembled from metadata and tensor infos; tensor offsets are
// laid out contiguously (aligned) unless given.
struct GgufBuilder {
  uint32_t version = 3;
  uint32_t alignment = 32;
  uint64_t n_kv = 0, n_tensors = 0;
  Bytes kv, ti;
  uint64_t next_offset = 0;  // aligned end of the data section
  uint64_t data_end = 0;     // end of the last tensor's bytes
  bool write_data = true;    // zero bytes for the tensor data (when small)

  GgufBuilder& u32(const std::string& k, uint32_t v) { return key(k, kU32).put(v), *this; }
  GgufBuilder& i32(const std::string& k, int32_t v) { return key(k, kI32).put(v), *this; }
  GgufBuilder& f32(const std::string& k, float v) { return key(k, kF32).put(v), *this; }
  GgufBuilder& boolean(const std::string& k, bool v) { return key(k, kBool).put<uint8_t>(v), *this; }
  GgufBuilder& str(const std::string& k, const std::string& v) { return key(k, kStr).str(v), *this; }
  GgufBuilder& arr_i32(const std::string& k, const std::vector<int32_t>& v) {
    key(k, kArr).put(kI32).put<uint64_t>(v.size());
    for (int32_t x : v) kv.put(x);
    return *this;
  }
  GgufBuilder& arr_bool(const std::string& k, const std::vector<bool>& v) {
    key(k, kArr).put(kBool).put<uint64_t>(v.size());
    for (bool x : v) kv.put<uint8_t>(x);
    return *this;
  }
  GgufBuilder& arr_str(const std::string& k, const std::vector<std::string>& v) {
    key(k, kArr).put(kStr).put<uint64_t>(v.size());
    for (const auto& s : v) kv.str(s);
    return *this;
  }
  // n strings "t<i>" without building a vector (tokenizer-sized arrays).
  GgufBuilder& tokens(const std::string& k, uint64_t n) {
    key(k, kArr).put(kStr).put<uint64_t>(n);
    for (uint64_t i = 0; i < n; ++i) kv.str("t" + std::to_string(i));
    return *this;
  }
  Bytes& key(const std::string& k, uint32_t type) {
    ++n_kv;
    return kv.str(k).put(type);
  }

  static uint64_t row_bytes(uint32_t type, const std::vector<uint64_t>& ne) {
    uint64_t b = *ggml_row_size(type, ne[0]);
    for (size_t i = 1; i < ne.size(); ++i) b *= ne[i];
    return b;
  }
  GgufBuilder& tensor(const std::string& name, uint32_t type, std::vector<uint64_t> ne,
                      int64_t offset = -1) {
    ++n_tensors;
    ti.str(name).put<uint32_t>(ne.size());
    for (uint64_t x : ne) ti.put(x);
    ti.put(type);
    uint64_t off = offset >= 0 ? static_cast<uint64_t>(offset) : next_offset;
    ti.put(off);
    uint64_t end = off + (ggml_type_info(type) && ne[0] % ggml_type_info(type)->block_size == 0
                              ? row_bytes(type, ne) : 0);
    data_end = std::max(data_end, end);
    next_offset = std::max(next_offset, (end + alignment - 1) / alignment * alignment);
    return *this;
  }

  std::vector<uint8_t> bytes() const {
    Bytes out;
    out.b = {'G', 'G', 'U', 'F'};
    out.put(version);
    if (version == 1) {
      out.put<uint32_t>(n_tensors).put<uint32_t>(n_kv);
    } else {
      out.put(n_tensors).put(n_kv);
    }
    out.raw(kv).raw(ti);
    if (n_tensors > 0) {
      while (out.b.size() % alignment) out.b.push_back(0);
      if (write_data && data_end < (64u << 20)) out.b.resize(out.b.size() + data_end, 0);
    }
    return out.b;
  }
};

Result<GgufFile> parse(const std::vector<uint8_t>& b, const std::string& name = "model.gguf") {
  return parse_gguf(b.data(), b.size(), name);
}

std::string error_of(const std::vector<uint8_t>& b) {
  auto r = parse(b);
  return r ? std::string("(parsed)") : r.error().message;
}

// A decoder-only model shaped like llama.cpp writes it.
GgufBuilder decoder(const std::string& arch, uint32_t layers, uint32_t embd, uint32_t heads,
                    uint32_t kv_heads, bool with_output = true, uint32_t vocab = 300) {
  GgufBuilder g;
  g.str("general.architecture", arch).u32("general.file_type", 15);
  g.u32(arch + ".block_count", layers).u32(arch + ".embedding_length", embd);
  g.u32(arch + ".context_length", 4096).u32(arch + ".feed_forward_length", embd * 4);
  g.u32(arch + ".attention.head_count", heads).u32(arch + ".attention.head_count_kv", kv_heads);
  g.tokens("tokenizer.ggml.tokens", vocab);
  const uint64_t hd = embd / heads;
  g.tensor("token_embd.weight", 12, {embd, vocab});
  for (uint32_t il = 0; il < layers; ++il) {
    std::string p = "blk." + std::to_string(il) + ".";
    g.tensor(p + "attn_q.weight", 12, {embd, heads * hd});
    g.tensor(p + "attn_k.weight", 12, {embd, kv_heads * hd});
    g.tensor(p + "attn_v.weight", 14, {embd, kv_heads * hd});
    g.tensor(p + "attn_norm.weight", 0, {embd});
  }
  if (with_output) g.tensor("output.weight", 14, {embd, vocab});
  return g;
}

ModelSpec spec_of(const GgufBuilder& g) {
  auto f = parse(g.bytes());
  EXPECT_TRUE(f) << f.error().message;
  if (!f) return {};
  auto s = spec_from_gguf(*f);
  EXPECT_TRUE(s) << s.error().message;
  return s ? *s : ModelSpec{};
}

// A fresh directory under /tmp, removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/aimem-gguf-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::vector<uint8_t>& b) const {
    std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
    return p;
  }
};

// Timing limits are for optimized builds; sanitizers and -O0 are ~10x slower.
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__)
#define GGUF_TEST_SLOW_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GGUF_TEST_SLOW_BUILD 1
#endif
#endif
#ifdef GGUF_TEST_SLOW_BUILD
constexpr long kSlack = 25;
#else
constexpr long kSlack = 1;
#endif

// ---- the type table --------------------------------------------------------

// Expected sizes worked out by hand from the block structs of
// ggml/src/ggml-common.h (a ggml_half is 2 bytes, QK_K = 256).
TEST(GgufTypes, BlockSizesMatchGgmlStructs) {
  struct Want { uint32_t id; const char* name; uint32_t block, bytes; };
  const Want want[] = {
      {0, "F32", 1, 4},       {1, "F16", 1, 2},       {30, "BF16", 1, 2},
      {2, "Q4_0", 32, 2 + 16},                        // d + 32 nibbles
      {3, "Q4_1", 32, 2 + 2 + 16},                    // d, m + nibbles
      {6, "Q5_0", 32, 2 + 4 + 16},                    // d + qh bits + nibbles
      {8, "Q8_0", 32, 2 + 32},                        // d + 32 int8
      {9, "Q8_1", 32, 2 + 2 + 32},                    // d, s + 32 int8
      {10, "Q2_K", 256, 2 + 2 + 16 + 64},             // d, dmin, scales, 2-bit quants
      {11, "Q3_K", 256, 2 + 32 + 64 + 12},            // d, hmask, quants, scales
      {12, "Q4_K", 256, 2 + 2 + 12 + 128},            // d, dmin, 12 scale bytes, nibbles
      {13, "Q5_K", 256, 2 + 2 + 12 + 32 + 128},
      {14, "Q6_K", 256, 128 + 64 + 16 + 2},           // ql, qh, scales, d
      {15, "Q8_K", 256, 4 + 256 + 32},                // float d, quants, int16 bsums
      {16, "IQ2_XXS", 256, 2 + 64},                   // d + 32 uint16
      {20, "IQ4_NL", 32, 2 + 16},
      {23, "IQ4_XS", 256, 2 + 2 + 4 + 128},           // d, scales_h, scales_l, nibbles
      {29, "IQ1_M", 256, 32 + 16 + 8},                // qs, qh, scales
      {34, "TQ1_0", 256, 2 + 4 + 48},                 // d, qh, qs (5 trits per byte)
      {35, "TQ2_0", 256, 2 + 64},
      {39, "MXFP4", 32, 1 + 16},                      // e8m0 scale + e2m1 nibbles
      {40, "NVFP4", 64, 4 + 32},                      // 4 ue4m3 scales + nibbles
      {41, "Q1_0", 128, 2 + 16},                      // d + 128 sign bits
      {42, "Q2_0", 64, 2 + 16},
      {24, "I8", 1, 1},       {27, "I64", 1, 8},      {28, "F64", 1, 8},
  };
  for (const Want& w : want) {
    const GgmlTypeInfo* t = ggml_type_info(w.id);
    ASSERT_NE(t, nullptr) << w.name;
    EXPECT_EQ(t->name, w.name);
    EXPECT_EQ(t->block_size, w.block) << w.name;
    EXPECT_EQ(t->type_size, w.bytes) << w.name;
  }
  for (uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 99u, UINT32_MAX}) {
    EXPECT_EQ(ggml_type_info(removed), nullptr) << removed;
  }
}

TEST(GgufTypes, NamesAndRowSizes) {
  EXPECT_EQ(ggml_type_id("q4_k"), 12u);
  EXPECT_EQ(ggml_type_id("Bf16"), 30u);
  EXPECT_EQ(ggml_type_id("Q4_2"), std::nullopt);
  EXPECT_EQ(ggml_type_by_name("mxfp4")->type_size, 17u);
  // 4096 Q4_K elements = 16 blocks of 144 bytes.
  EXPECT_EQ(ggml_row_size(12, 4096), 16u * 144);
  EXPECT_EQ(ggml_row_size(1, 7), 14u);
  EXPECT_EQ(ggml_row_size(12, 100), std::nullopt);  // not a whole block
  EXPECT_EQ(ggml_row_size(4, 32), std::nullopt);    // removed type
  EXPECT_EQ(ggml_row_size(0, UINT64_MAX), std::nullopt);  // would overflow
}

// ---- reading -----------------------------------------------------------------

GgufBuilder every_type(uint32_t version) {
  GgufBuilder g;
  g.version = version;
  g.key("u8", kU8).put<uint8_t>(200);
  g.key("i8", kI8).put<int8_t>(-5);
  g.key("u16", kU16).put<uint16_t>(60000);
  g.key("i16", kI16).put<int16_t>(-30000);
  g.u32("u32", 4000000000u).i32("i32", -2000000000);
  g.f32("f32", 1.5f).boolean("bool", true).str("str", "héllo");
  g.key("u64", kU64).put<uint64_t>(1ull << 40);
  g.key("i64", kI64).put<int64_t>(-(1ll << 40));
  g.key("f64", kF64).put<double>(2.25);
  g.arr_i32("arr.i32", {1, -2, 3}).arr_bool("arr.bool", {true, false});
  g.arr_str("arr.str", {"a", "", "ccc"});
  g.key("arr.f64", kArr).put(kF64).put<uint64_t>(2).put(0.5).put(-0.5);
  g.key("arr.empty", kArr).put(kU16).put<uint64_t>(0);
  g.tensor("a", 0, {8, 2}).tensor("b", 8, {64}).tensor("c", 12, {256, 2, 3});
  return g;
}

void check_every_type(const GgufFile& f) {
  EXPECT_EQ(f.number("u8"), 200);
  EXPECT_EQ(f.number("i8"), -5);
  EXPECT_EQ(f.number("u16"), 60000);
  EXPECT_EQ(f.number("i16"), -30000);
  EXPECT_EQ(f.number("u32"), 4000000000.0);
  EXPECT_EQ(f.number("i32"), -2000000000.0);
  EXPECT_EQ(f.number("f32"), 1.5);
  EXPECT_EQ(f.number("bool"), 1);
  EXPECT_EQ(f.string("str"), "héllo");
  EXPECT_EQ(f.number("str"), std::nullopt);
  EXPECT_EQ(f.number("u64"), double(1ull << 40));
  EXPECT_EQ(f.number("i64"), -double(1ll << 40));
  EXPECT_EQ(f.number("f64"), 2.25);
  EXPECT_EQ(f.find("missing"), nullptr);
  const GgufValue* a = f.find("arr.i32");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type, GgufType::kArray);
  EXPECT_EQ(a->elem_type, GgufType::kInt32);
  EXPECT_TRUE(a->kept);
  EXPECT_EQ(a->nums, (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(f.find("arr.bool")->nums, (std::vector<double>{1, 0}));
  EXPECT_EQ(f.find("arr.str")->strs, (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f.find("arr.f64")->nums, (std::vector<double>{0.5, -0.5}));
  EXPECT_EQ(f.find("arr.empty")->count, 0u);
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.tensors[0].bytes, 8u * 2 * 4);
  EXPECT_EQ(f.tensors[1].bytes, 2u * 34);
  EXPECT_EQ(f.tensors[2].bytes, 144u * 2 * 3);
  EXPECT_EQ(f.tensors[2].n_dims, 3u);
  EXPECT_EQ(f.tensors[2].ne, (std::array<uint64_t, 4>{256, 2, 3, 1}));
  EXPECT_EQ(f.tensors[1].offset, 64u);  // 64 F32 bytes, aligned to 32
  EXPECT_EQ(f.data_offset % 32, 0u);
}

TEST(GgufRead, EveryMetadataTypeV3) {
  auto f = parse(every_type(3).bytes());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->version, 3u);
  check_every_type(*f);
}

TEST(GgufRead, EveryMetadataTypeV2) {
  auto f = parse(every_type(2).bytes());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->version, 2u);
  check_every_type(*f);
}

TEST(GgufRead, FromFileReadsHeaderOnly) {
  TempDir dir;
  auto g = every_type(3);
  std::string p = dir.write("every.gguf", g.bytes());
  auto f = read_gguf(local_files(), p);
  ASSERT_TRUE(f) << f.error().message;
  check_every_type(*f);
  EXPECT_EQ(f->path, p);
  EXPECT_GT(f->bytes_read, 0u);
  auto missing = read_gguf(local_files(), dir.path + "/nope.gguf");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nope.gguf: cannot open"), std::string::npos);
}

// Strings larger than the read buffer, and lengths straddling its edge,
// read from a file the same as from memory.
TEST(GgufRead, FileReaderCrossesBufferEdges) {
  TempDir dir;
  GgufBuilder g;
  std::string big(700 * 1024, 'x');
  for (size_t i = 0; i < big.size(); i += 4093) big[i] = char('a' + i % 26);
  g.str("tokenizer.chat_template", big);
  std::vector<std::string> kept;
  for (uint64_t i = 0; i < kMaxKeptStrings; ++i) kept.push_back(std::string(i * 1000 + 1, 'k'));
  g.arr_str("kept", kept);
  g.tokens("tokenizer.ggml.tokens", 100000).u32("after", 5).tensor("t", 0, {8});
  auto b = g.bytes();
  auto mem = parse(b);
  ASSERT_TRUE(mem) << mem.error().message;
  auto file = read_gguf(local_files(), dir.write("edges.gguf", b));
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->string("tokenizer.chat_template"), big);
  EXPECT_EQ(file->find("kept")->strs, kept);
  EXPECT_EQ(file->find("tokenizer.ggml.tokens")->count, 100000u);
  EXPECT_EQ(file->number("after"), 5);
  EXPECT_EQ(file->data_offset, mem->data_offset);
  EXPECT_EQ(file->tensors[0].offset, mem->tensors[0].offset);
}

TEST(GgufRead, LongArraysKeepOnlyTheirLength) {
  GgufBuilder g;
  g.tokens("tokenizer.ggml.tokens", kMaxKeptStrings + 1);
  g.key("scores", kArr).put(kF32).put<uint64_t>(kMaxKeptArray + 1);
  for (uint64_t i = 0; i <= kMaxKeptArray; ++i) g.kv.put(0.0f);
  g.u32("after", 7);
  auto f = parse(g.bytes());
  ASSERT_TRUE(f) << f.error().message;
  const GgufValue* t = f->find("tokenizer.ggml.tokens");
  EXPECT_EQ(t->count, kMaxKeptStrings + 1);
  EXPECT_FALSE(t->kept);
  EXPECT_TRUE(t->strs.empty());
  EXPECT_EQ(f->find("scores")->count, kMaxKeptArray + 1);
  EXPECT_FALSE(f->find("scores")->kept);
  EXPECT_EQ(f->number("after"), 7);  // the reader stayed in step
}

TEST(GgufRead, NestedArraysAreSkipped) {
  GgufBuilder g;
  Bytes& v = g.key("nested", kArr).put(kArr).put<uint64_t>(2);
  v.put(kI32).put<uint64_t>(2).put<int32_t>(1).put<int32_t>(2);
  v.put(kStr).put<uint64_t>(1).str("x");
  g.u32("after", 9);
  auto f = parse(g.bytes());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->find("nested")->count, 2u);
  EXPECT_FALSE(f->find("nested")->kept);
  EXPECT_EQ(f->number("after"), 9);

  GgufBuilder deep;  // 4 levels: refused, not recursed without end
  deep.key("deep", kArr).put(kArr).put<uint64_t>(1).put(kArr).put<uint64_t>(1)
      .put(kArr).put<uint64_t>(1).put(kU8).put<uint64_t>(0);
  EXPECT_NE(error_of(deep.bytes()).find("nested deeper"), std::string::npos);
}

TEST(GgufRead, CustomAlignment) {
  GgufBuilder g;
  g.alignment = 64;
  g.u32("general.alignment", 64).tensor("a", 0, {3}).tensor("b", 0, {5});
  auto f = parse(g.bytes());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->alignment, 64u);
  EXPECT_EQ(f->data_offset % 64, 0u);
  EXPECT_EQ(f->tensors[1].offset, 64u);

  GgufBuilder odd;
  odd.u32("general.alignment", 48);
  EXPECT_NE(error_of(odd.bytes()).find("'general.alignment' 48 is not a power of two"),
            std::string::npos);
  GgufBuilder typed;
  typed.str("general.alignment", "32");
  EXPECT_NE(error_of(typed.bytes()).find("must be a uint32"), std::string::npos);
}

// ---- hostile and broken input -------------------------------------------

TEST(GgufBad, EveryTruncationFails) {
  auto full = decoder("llama", 2, 256, 4, 4, true, 24).bytes();
  auto ok = parse(full);
  ASSERT_TRUE(ok) << ok.error().message;
  // Every cut in the header, then every 997th byte of the data.
  for (size_t cut = 0; cut < full.size(); cut += cut <= ok->data_offset ? 1 : 997) {
    std::vector<uint8_t> part(full.begin(), full.begin() + cut);
    auto r = parse(part);
    ASSERT_FALSE(r) << "cut at " << cut;
    EXPECT_EQ(r.error().message.rfind("model.gguf: ", 0), 0u) << r.error().message;
  }
}

TEST(GgufBad, TruncationNamesTheField) {
  GgufBuilder g;
  g.str("general.architecture", "llama").u32("llama.block_count", 32);
  auto b = g.bytes();
  b.resize(b.size() - 2);  // inside the block_count value
  std::string e = error_of(b);
  EXPECT_NE(e.find("model.gguf: truncated at byte " + std::to_string(b.size()) +
                   " while reading metadata key 1 'llama.block_count'"),
            std::string::npos) << e;
  auto data = decoder("llama", 1, 256, 4, 4).bytes();
  data.resize(data.size() - 1);  // the last tensor's data
  e = error_of(data);
  EXPECT_NE(e.find("'output.weight': tensor data extends beyond the end of the file"),
            std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos);
}

TEST(GgufBad, WrongMagicVersionEndianness) {
  auto b = decoder("llama", 1, 256, 4, 4).bytes();
  auto bad = b;
  std::memcpy(bad.data(), "abcd", 4);
  EXPECT_EQ(error_of(bad), "model.gguf: not a GGUF file (magic 'abcd', expected 'GGUF')");
  bad = b;
  bad[4] = 0, bad[7] = 3;  // version 3 written big-endian
  EXPECT_NE(error_of(bad).find("big-endian"), std::string::npos);
  GgufBuilder v1;
  v1.version = 1;
  EXPECT_NE(error_of(v1.bytes()).find("GGUF v1"), std::string::npos);
  bad = b;
  bad[4] = 4;
  EXPECT_NE(error_of(bad).find("version 4"), std::string::npos);
  EXPECT_NE(error_of({'G', 'G'}).find("truncated"), std::string::npos);
}

TEST(GgufBad, CountsBeyondTheFileFailBeforeAllocating) {
  GgufBuilder g;
  g.n_tensors = 1ull << 60;
  auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of(g.bytes());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_NE(e.find("tensor count 1152921504606846976 cannot fit in the file"), std::string::npos)
      << e;
  GgufBuilder kv;
  kv.n_kv = UINT64_MAX;
  EXPECT_NE(error_of(kv.bytes()).find("metadata count"), std::string::npos);
  GgufBuilder arr;  // an array claiming 2^61 u64 elements
  arr.key("a", kArr).put(kU64).put<uint64_t>(1ull << 61);
  EXPECT_NE(error_of(arr.bytes()).find("array of 2305843009213693952 elements is beyond"),
            std::string::npos);
  GgufBuilder sarr;  // a string array: every length is walked
  sarr.key("s", kArr).put(kStr).put<uint64_t>(2).str("ok").put<uint64_t>(1ull << 50);
  EXPECT_NE(error_of(sarr.bytes()).find("string length 1125899906842624"), std::string::npos);
}

TEST(GgufBad, StringLengthBeyondFile) {
  GgufBuilder g;
  g.key("k", kStr).put<uint64_t>(1000).put<uint32_t>(0);
  std::string e = error_of(g.bytes());
  EXPECT_NE(e.find("string length 1000 at byte"), std::string::npos) << e;
  EXPECT_NE(e.find("beyond the end of the file"), std::string::npos);
  EXPECT_NE(e.find("metadata key 0 'k'"), std::string::npos);
  GgufBuilder key;
  key.n_kv = 1;
  key.kv.put<uint64_t>(~0ull).put<uint64_t>(0).put<uint64_t>(0);
  EXPECT_NE(error_of(key.bytes()).find("key length"), std::string::npos);
}

TEST(GgufBad, TensorInfoErrors) {
  GgufBuilder unknown;
  unknown.str("x", "y").tensor("blk.0.attn_q.weight", 99, {32});
  EXPECT_EQ(error_of(unknown.bytes()),
            "model.gguf: tensor 0 'blk.0.attn_q.weight': type 99 is not a ggml type this aimem knows");

  GgufBuilder removed;
  removed.tensor("t", 4, {32});
  EXPECT_NE(error_of(removed.bytes()).find("type 4 is not a ggml type"), std::string::npos);

  GgufBuilder dims;
  dims.tensor("five", 0, {1, 1, 1, 1, 1});
  EXPECT_NE(error_of(dims.bytes()).find("'five': 5 dimensions"), std::string::npos);

  GgufBuilder misaligned;
  misaligned.tensor("a", 0, {8}, 0).tensor("b", 0, {8}, 40);
  EXPECT_NE(error_of(misaligned.bytes()).find("'b': offset 40 is not a multiple of the alignment 32"),
            std::string::npos);

  GgufBuilder block;
  block.tensor("q", 12, {100, 2});
  EXPECT_NE(error_of(block.bytes()).find("row length 100 is not a multiple of the Q4_K block size 256"),
            std::string::npos);

  GgufBuilder overflow;
  overflow.tensor("big", 0, {1ull << 32, 1ull << 32});
  EXPECT_NE(error_of(overflow.bytes()).find("overflows"), std::string::npos);

  GgufBuilder far;
  far.tensor("far", 0, {8}, 1ull << 40);
  EXPECT_NE(error_of(far.bytes()).find("'far': tensor data extends beyond the end of the file"),
            std::string::npos);

  GgufBuilder dup;
  dup.tensor("same", 0, {8}).tensor("same", 0, {8});
  EXPECT_NE(error_of(dup.bytes()).find("duplicate tensor name"), std::string::npos);

  GgufBuilder longname;
  longname.tensor(std::string(64, 'n'), 0, {8});
  EXPECT_NE(error_of(longname.bytes()).find("tensor name of 64 bytes"), std::string::npos);
}

TEST(GgufBad, DuplicateKeyAndBadTypes) {
  GgufBuilder g;
  g.u32("llama.block_count", 1).u32("llama.block_count", 2);
  EXPECT_EQ(error_of(g.bytes()), "model.gguf: metadata key 1 'llama.block_count': duplicate key");
  GgufBuilder t;
  t.key("k", 13).put<uint32_t>(0);
  EXPECT_NE(error_of(t.bytes()).find("value type 13 is not a GGUF type"), std::string::npos);
  GgufBuilder et;
  et.key("k", kArr).put<uint32_t>(77).put<uint64_t>(0);
  EXPECT_NE(error_of(et.bytes()).find("array element type 77"), std::string::npos);
}

// A 200 GB sparse file: the header is parsed, the data never read.
TEST(GgufRead, SparseHugeFileReadsOnlyTheHeader) {
  TempDir dir;
  const uint64_t kSize = 200'000'000'000ull;
  GgufBuilder g;
  g.write_data = false;
  g.str("general.architecture", "llama");
  // 40 tensors of 4096 x 600000 BF16 (~4.9 GB each) reaching near the end.
  for (int i = 0; i < 40; ++i) g.tensor("blk." + std::to_string(i) + ".w", 30, {4096, 600000});
  auto b = g.bytes();
  const uint64_t data_end = b.size() + g.data_end;
  ASSERT_LE(data_end, kSize);
  ASSERT_GT(data_end, kSize / 2);
  std::string p = dir.write("huge.gguf", b);
  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(kSize)), 0);

  struct rusage before {}, after {};
  ::getrusage(RUSAGE_SELF, &before);
  auto t0 = std::chrono::steady_clock::now();
  auto f = read_gguf(local_files(), p);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - t0).count();
  ::getrusage(RUSAGE_SELF, &after);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->file_size, kSize);
  EXPECT_EQ(f->tensors.size(), 40u);
  EXPECT_LE(f->bytes_read, 256u * 1024);  // one buffer of header, no data
  EXPECT_LT(ms, 1000 * kSlack);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);  // KiB

  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(data_end - 1)), 0);
  auto cut = read_gguf(local_files(), p);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("'blk.39.w': tensor data extends beyond the end"),
            std::string::npos) << cut.error().message;
}

// A 70B-shaped header (80 layers, 128k-token vocabulary) parses in a few ms.
TEST(GgufRead, SeventyBHeaderIsFast) {
  TempDir dir;
  GgufBuilder g = decoder("llama", 80, 8192, 64, 8);
  g.write_data = false;
  g.tokens("tokenizer.ggml.merges", 280000);
  g.key("tokenizer.ggml.scores", kArr).put(kF32).put<uint64_t>(128256);
  for (int i = 0; i < 128256; ++i) g.kv.put(0.0f);
  auto b = g.bytes();
  std::string p = dir.write("70b.gguf", b);
  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(b.size() + g.data_end)), 0);
  auto t0 = std::chrono::steady_clock::now();
  auto f = read_gguf(local_files(), p);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(f) << f.error().message;
  auto s = spec_from_gguf(*f);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->n_layer, 80u);
  EXPECT_LT(us, 200000 * kSlack) << "header parse took " << us << " us";  // ~8 ms here
  // The buffered file reader and the in-memory parser agree.
  auto m = parse_gguf(b.data(), b.size(), p);
  ASSERT_FALSE(m);  // the in-memory copy lacks the data section
  EXPECT_NE(m.error().message.find("tensor data extends beyond"), std::string::npos);
  RecordProperty("parse_us", static_cast<int>(us));
}

// ---- spec_from_gguf ------------------------------------------------------

TEST(GgufSpec, MhaGqaMqa) {
  const uint64_t E = 1024, H = 8, hd = 128;
  for (uint32_t kv : {8u, 2u, 1u}) {
    ModelSpec s = spec_of(decoder("llama", 4, E, H, kv));
    EXPECT_EQ(s.source, "gguf");
    EXPECT_EQ(s.name, "model.gguf");
    EXPECT_EQ(s.architecture, "llama");
    EXPECT_EQ(s.n_layer, 4u);
    EXPECT_EQ(s.n_embd, E);
    EXPECT_EQ(s.n_head, H);
    EXPECT_EQ(s.n_head_kv, std::vector<uint32_t>(4, kv));
    EXPECT_EQ(s.head_dim_k, 128u);
    EXPECT_EQ(s.head_dim_v, 128u);
    EXPECT_EQ(s.n_rot, 128u);
    EXPECT_EQ(s.n_ctx_train, 4096u);
    EXPECT_EQ(s.n_ff, 4u * E);
    EXPECT_EQ(s.n_vocab, 300u);
    EXPECT_EQ(s.weights_format, "Q4_K - Medium");
    EXPECT_TRUE(s.weights_exact);
    EXPECT_FALSE(s.tied_embeddings);
    EXPECT_TRUE(s.causal);
    EXPECT_EQ(s.n_swa, 0u);
    EXPECT_TRUE(s.recurrent_r.empty());
    EXPECT_EQ(s.swa_layer, std::vector<bool>(4, false));
    // Sum of tensor bytes computed independently: q (Q4_K), k (Q4_K),
    // v (Q6_K), norm (F32) per layer, plus the embeddings and output.
    uint64_t per_layer = E / 256 * 144 * (H * hd) + E / 256 * 144 * (kv * hd) +
                         E / 256 * 210 * (kv * hd) + E * 4;
    uint64_t want = E / 256 * 144 * 300 + 4 * per_layer + E / 256 * 210 * 300;
    EXPECT_EQ(s.weight_bytes, want);
    EXPECT_EQ(s.n_params, E * 300 * 2 + 4 * (E * (H + 2 * kv) * hd + E));
    EXPECT_EQ(s.n_params_active, s.n_params);
    ASSERT_FALSE(s.tensors.empty());
    EXPECT_EQ(s.tensors[1].name, "blk.0.attn_q.weight");
    EXPECT_EQ(s.tensors[1].layer, 0);
    EXPECT_EQ(s.tensors[1].dtype, "Q4_K");
    EXPECT_EQ(s.tensors[0].offset, 0u);
    EXPECT_EQ(s.tensors[1].offset, E / 256 * 144 * 300);  // after token_embd, 32-aligned
    EXPECT_EQ(s.tensors[0].layer, -1);
  }
}

TEST(GgufSpec, PerLayerKvHeadsTiedEmbeddingsAndFallbacks) {
  GgufBuilder h;
  h.str("general.architecture", "newarch").u32("newarch.block_count", 3);
  h.u32("newarch.embedding_length", 256).u32("newarch.context_length", 1024);
  h.u32("newarch.attention.head_count", 4).arr_i32("newarch.attention.head_count_kv", {1, 2, 0});
  h.u32("newarch.attention.key_length", 80).u32("newarch.attention.value_length", 96);
  h.tensor("token_embd.weight", 1, {256, 1000});
  ModelSpec s = spec_of(h);
  EXPECT_EQ(s.n_head_kv, (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(head_kv(s, 2), 0u);
  EXPECT_EQ(s.head_dim_k, 80u);
  EXPECT_EQ(s.head_dim_v, 96u);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.n_vocab, 1000u);         // from token_embd's ne[1]
  EXPECT_EQ(s.weights_format, "F16");  // no general.file_type: the main tensor type

  GgufBuilder wrong;
  wrong.str("general.architecture", "x").u32("x.block_count", 3).u32("x.embedding_length", 8);
  wrong.u32("x.context_length", 8).arr_i32("x.attention.head_count_kv", {1, 2});
  auto ws = spec_from_gguf(*parse(wrong.bytes()));
  ASSERT_FALSE(ws);
  EXPECT_NE(ws.error().message.find("'x.attention.head_count_kv' has 2 elements, expected one "
                                    "number per layer (3)"),
            std::string::npos) << ws.error().message;
}

TEST(GgufSpec, MissingKeysAreNamed) {
  GgufBuilder g;
  g.str("general.architecture", "llama").u32("llama.embedding_length", 64);
  auto s = spec_from_gguf(*parse(g.bytes()));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "model.gguf: missing 'llama.block_count'");
  GgufBuilder none;
  none.u32("x", 1);
  EXPECT_EQ(spec_from_gguf(*parse(none.bytes())).error().message,
            "model.gguf: missing 'general.architecture'");
  GgufBuilder bad;
  bad.str("general.architecture", "llama").f32("llama.block_count", -3.5f);
  EXPECT_NE(spec_from_gguf(*parse(bad.bytes())).error().message.find("is not a count"),
            std::string::npos);
}

TEST(GgufSpec, MixtureOfExperts) {
  GgufBuilder g;
  g.str("general.architecture", "qwen3moe").u32("general.file_type", 7);
  g.u32("qwen3moe.block_count", 2).u32("qwen3moe.embedding_length", 256);
  g.u32("qwen3moe.context_length", 4096).u32("qwen3moe.attention.head_count", 4);
  g.u32("qwen3moe.attention.head_count_kv", 2).u32("qwen3moe.expert_count", 8);
  g.u32("qwen3moe.expert_used_count", 2).u32("qwen3moe.expert_feed_forward_length", 64);
  for (int il = 0; il < 2; ++il) {
    std::string p = "blk." + std::to_string(il) + ".";
    g.tensor(p + "ffn_up_exps.weight", 8, {256, 64, 8});
    g.tensor(p + "ffn_down_exps.weight", 8, {64, 256, 8});
    g.tensor(p + "ffn_gate_inp.weight", 0, {256, 8});
  }
  ModelSpec s = spec_of(g);
  EXPECT_EQ(s.n_expert, 8u);
  EXPECT_EQ(s.n_expert_used, 2u);
  EXPECT_EQ(s.n_ff_exp, 64u);
  EXPECT_EQ(s.n_ff, 0u);
  EXPECT_EQ(s.weights_format, "Q8_0");
  EXPECT_TRUE(s.tensors[0].expert);
  EXPECT_FALSE(s.tensors[2].expert);
  const uint64_t experts = 2 * 2 * 256ull * 64 * 8, router = 2 * 256ull * 8;
  EXPECT_EQ(s.n_params, experts + router);
  EXPECT_EQ(s.n_params_active, experts / 4 + router);  // 2 of 8 experts
}

// DeepSeek-V3-shaped MLA as convert_hf_to_gguf writes it today: key_length
// = kv_lora_rank + rope dims, one KV head, and the *_mla head sizes.
TEST(GgufSpec, MlaDeepSeek) {
  auto mla = [](bool new_style) {
    GgufBuilder g;
    g.str("general.architecture", "deepseek2").u32("deepseek2.block_count", 4);
    g.u32("deepseek2.embedding_length", 7168).u32("deepseek2.context_length", 163840);
    g.u32("deepseek2.attention.head_count", 128);
    g.u32("deepseek2.attention.kv_lora_rank", 512).u32("deepseek2.rope.dimension_count", 64);
    g.u32("deepseek2.nextn_predict_layers", 1).u32("deepseek2.expert_count", 256);
    g.u32("deepseek2.expert_used_count", 8).u32("deepseek2.expert_shared_count", 1);
    if (new_style) {
      g.u32("deepseek2.attention.head_count_kv", 1);
      g.u32("deepseek2.attention.key_length", 576).u32("deepseek2.attention.value_length", 512);
      g.u32("deepseek2.attention.key_length_mla", 192).u32("deepseek2.attention.value_length_mla", 128);
    } else {
      g.u32("deepseek2.attention.head_count_kv", 128);
      g.u32("deepseek2.attention.key_length", 192).u32("deepseek2.attention.value_length", 128);
    }
    return spec_of(g);
  };
  ModelSpec s = mla(true);
  EXPECT_EQ(s.n_layer, 3u);  // the MTP layer does not run
  EXPECT_EQ(s.n_head_kv, std::vector<uint32_t>(3, 1));
  EXPECT_EQ(s.kv_lora_rank, 512u);
  EXPECT_EQ(s.n_rot, 64u);
  EXPECT_EQ(s.head_dim_k, 512u + 64);
  EXPECT_EQ(s.head_dim_v, 512u);
  EXPECT_EQ(s.n_expert_shared, 1u);

  ModelSpec old = mla(false);
  EXPECT_EQ(old.kv_lora_rank, 0u);  // llama.cpp runs these as plain MHA
  EXPECT_EQ(old.n_head_kv, std::vector<uint32_t>(3, 128));
  EXPECT_EQ(old.head_dim_k, 192u);
  bool noted = false;
  for (const auto& n : old.notes) noted |= n.find("key_length_mla") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(GgufSpec, GemmaSlidingWindowPatterns) {
  GgufBuilder g2 = decoder("gemma2", 6, 256, 4, 2);
  ModelSpec s = spec_of(g2);  // no window key: gemma2's default 4096, period 2
  EXPECT_EQ(s.n_swa, 4096u);
  EXPECT_EQ(s.swa_layer, (std::vector<bool>{true, false, true, false, true, false}));

  GgufBuilder g3 = decoder("gemma3", 12, 256, 4, 2);
  g3.u32("gemma3.attention.sliding_window", 1024);
  s = spec_of(g3);  // period 6: five local layers, then a global one
  EXPECT_EQ(s.n_swa, 1024u);
  std::vector<bool> want(12, true);
  want[5] = want[11] = false;
  EXPECT_EQ(s.swa_layer, want);

  GgufBuilder nowin = decoder("gemma3", 12, 256, 4, 2);
  EXPECT_EQ(spec_of(nowin).n_swa, 0u);  // gemma3 without a window: all global

  GgufBuilder arr = decoder("gemma3", 4, 256, 4, 2);
  arr.u32("gemma3.attention.sliding_window", 512);
  arr.arr_bool("gemma3.attention.sliding_window_pattern", {false, true, true, false});
  s = spec_of(arr);
  EXPECT_EQ(s.swa_layer, (std::vector<bool>{false, true, true, false}));

  GgufBuilder oss = decoder("gpt-oss", 4, 256, 4, 2);
  oss.u32("gpt-oss.attention.sliding_window", 128);
  EXPECT_EQ(spec_of(oss).swa_layer, (std::vector<bool>{true, false, true, false}));

  GgufBuilder l4 = decoder("llama4", 8, 256, 4, 2);
  s = spec_of(l4);  // chunked attention, 3 chunked : 1 full
  EXPECT_EQ(s.n_swa, 8192u);
  EXPECT_EQ(s.swa_layer, (std::vector<bool>{true, true, true, false, true, true, true, false}));

  GgufBuilder c2 = decoder("cohere2moe", 5, 256, 4, 2);  // dense first
  c2.u32("cohere2moe.attention.sliding_window", 4096);
  EXPECT_EQ(spec_of(c2).swa_layer, (std::vector<bool>{false, true, true, true, false}));

  GgufBuilder plain = decoder("llama", 2, 256, 4, 2);  // llama.cpp ignores it for llama
  plain.u32("llama.attention.sliding_window", 4096);
  EXPECT_EQ(spec_of(plain).n_swa, 0u);
}

TEST(GgufSpec, GemmaSharedKvAndSwaHeadDims) {
  GgufBuilder g = decoder("gemma4", 6, 256, 4, 2);
  g.u32("gemma4.attention.sliding_window", 512).u32("gemma4.attention.shared_kv_layers", 2);
  g.u32("gemma4.attention.key_length", 128).u32("gemma4.attention.value_length", 128);
  g.u32("gemma4.attention.key_length_swa", 64).u32("gemma4.attention.value_length_swa", 64);
  g.arr_bool("gemma4.attention.sliding_window_pattern", {true, true, false, true, true, false});
  ModelSpec s = spec_of(g);
  EXPECT_EQ(s.n_head_kv, (std::vector<uint32_t>{2, 2, 2, 2, 0, 0}));
  EXPECT_EQ(s.head_dim_k, 128u);
  EXPECT_EQ(s.head_dim_k_swa, 64u);
  EXPECT_EQ(s.head_dim_v_swa, 64u);
  EXPECT_EQ(s.swa_layer, (std::vector<bool>{true, true, false, true, true, false}));
}

TEST(GgufSpec, RecurrentStateSizes) {
  GgufBuilder m;
  m.str("general.architecture", "mamba").u32("mamba.block_count", 2);
  m.u32("mamba.embedding_length", 768).u32("mamba.context_length", 1048576);
  m.u32("mamba.ssm.conv_kernel", 4).u32("mamba.ssm.inner_size", 1536);
  m.u32("mamba.ssm.state_size", 16);
  ModelSpec s = spec_of(m);
  EXPECT_EQ(s.n_head_kv, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(s.recurrent_r, (std::vector<uint64_t>{3 * 1536, 3 * 1536}));  // (d_conv-1)*d_inner
  EXPECT_EQ(s.recurrent_s, (std::vector<uint64_t>{16 * 1536, 16 * 1536}));

  GgufBuilder r;
  r.str("general.architecture", "rwkv6").u32("rwkv6.block_count", 1);
  r.u32("rwkv6.embedding_length", 2048).u32("rwkv6.context_length", 1048576);
  r.u32("rwkv6.wkv.head_size", 64);
  s = spec_of(r);
  EXPECT_EQ(s.recurrent_r, (std::vector<uint64_t>{2 * 2048}));  // token_shift_count 2
  EXPECT_EQ(s.recurrent_s, (std::vector<uint64_t>{2048 * 64}));

  GgufBuilder j;  // Jamba: attention where head_count_kv > 0, Mamba elsewhere
  j.str("general.architecture", "jamba").u32("jamba.block_count", 4);
  j.u32("jamba.embedding_length", 4096).u32("jamba.context_length", 262144);
  j.u32("jamba.attention.head_count", 32).arr_i32("jamba.attention.head_count_kv", {0, 0, 8, 0});
  j.u32("jamba.ssm.conv_kernel", 4).u32("jamba.ssm.inner_size", 8192).u32("jamba.ssm.state_size", 16);
  s = spec_of(j);
  EXPECT_EQ(s.n_head_kv, (std::vector<uint32_t>{0, 0, 8, 0}));
  EXPECT_EQ(s.recurrent_s, (std::vector<uint64_t>{16 * 8192, 16 * 8192, 0, 16 * 8192}));

  GgufBuilder q;  // Qwen3-Next: every 4th layer is full attention
  q.str("general.architecture", "qwen3next").u32("qwen3next.block_count", 8);
  q.u32("qwen3next.embedding_length", 2048).u32("qwen3next.context_length", 262144);
  q.u32("qwen3next.attention.head_count", 16).u32("qwen3next.attention.head_count_kv", 2);
  q.u32("qwen3next.ssm.conv_kernel", 4).u32("qwen3next.ssm.inner_size", 4096);
  q.u32("qwen3next.ssm.state_size", 128).u32("qwen3next.ssm.group_count", 16);
  s = spec_of(q);
  EXPECT_EQ(s.n_head_kv, (std::vector<uint32_t>{0, 0, 0, 2, 0, 0, 0, 2}));
  EXPECT_EQ(s.recurrent_r[0], 3u * (4096 + 2 * 16 * 128));
  EXPECT_EQ(s.recurrent_r[3], 0u);
}

TEST(GgufSpec, ProjectorsEncodersAndFileTypes) {
  GgufBuilder c;
  c.str("general.architecture", "clip").u32("clip.vision.block_count", 27);
  c.tensor("v.blk.0.attn_q.weight", 1, {1152, 1152}).tensor("mm.0.weight", 1, {1152, 4096});
  ModelSpec s = spec_of(c);
  EXPECT_TRUE(s.is_projector);
  EXPECT_EQ(s.n_layer, 27u);
  EXPECT_TRUE(s.tensors[0].vision && s.tensors[1].vision);
  EXPECT_EQ(s.weight_bytes, 2u * 1152 * (1152 + 4096));

  GgufBuilder b = decoder("bert", 2, 512, 8, 8);
  b.boolean("bert.attention.causal", false).u32("bert.pooling_type", 1);
  EXPECT_FALSE(spec_of(b).causal);
  GgufBuilder e = decoder("qwen3", 2, 256, 4, 2);  // last-token pooling, still a decoder
  e.u32("qwen3.pooling_type", 3);
  EXPECT_TRUE(spec_of(e).causal);

  GgufBuilder ft = decoder("llama", 1, 256, 4, 4);
  ft.kv = {};
  ft.n_kv = 0;
  ft.str("general.architecture", "llama").u32("general.file_type", 1024 | 30);
  ft.u32("llama.block_count", 1).u32("llama.embedding_length", 256).u32("llama.context_length", 8);
  EXPECT_EQ(spec_of(ft).weights_format, "IQ4_XS - 4.25 bpw");
}

}  // namespace
}  // namespace aimem::fit
