// Writes the seed corpus of tests/fuzz/gguf_corpus/: small GGUF files, each
// named by what is wrong with it (or valid-*). Run once by hand; the files
// are committed:
//   g++ -std=c++20 -I src tests/fuzz/make_gguf_corpus.cc src/fit/ggml_types.cc \
//     -o /tmp/make_gguf_corpus && /tmp/make_gguf_corpus tests/fuzz/gguf_corpus
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "fit/ggml_types.h"

namespace {

enum : uint32_t { kU8, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kStr, kArr, kU64, kI64, kF64 };

struct Bytes {
  std::vector<uint8_t> b;
  template <typename T>
  Bytes& put(T v) {
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
};

struct Gguf {
  uint32_t version = 3, alignment = 32;
  uint64_t n_kv = 0, n_tensors = 0, data_end = 0;
  Bytes kv, ti;

  Bytes& key(const std::string& k, uint32_t t) { return ++n_kv, kv.str(k).put(t); }
  Gguf& u32(const std::string& k, uint32_t v) { return key(k, kU32).put(v), *this; }
  Gguf& f32(const std::string& k, float v) { return key(k, kF32).put(v), *this; }
  Gguf& str(const std::string& k, const std::string& v) { return key(k, kStr).str(v), *this; }
  Gguf& arr_i32(const std::string& k, const std::vector<int32_t>& v) {
    key(k, kArr).put(kI32).put<uint64_t>(v.size());
    for (int32_t x : v) kv.put(x);
    return *this;
  }
  Gguf& tokens(uint64_t n) {
    key("tokenizer.ggml.tokens", kArr).put(kStr).put<uint64_t>(n);
    for (uint64_t i = 0; i < n; ++i) kv.str("t" + std::to_string(i));
    return *this;
  }
  Gguf& tensor(const std::string& name, uint32_t type, std::vector<uint64_t> ne, int64_t off = -1) {
    ++n_tensors;
    ti.str(name).put<uint32_t>(ne.size());
    for (uint64_t x : ne) ti.put(x);
    ti.put(type);
    uint64_t o = off >= 0 ? uint64_t(off) : (data_end + alignment - 1) / alignment * alignment;
    ti.put(o);
    auto row = aimem::fit::ggml_row_size(type, ne[0]);
    uint64_t bytes = row ? *row : 0;
    for (size_t i = 1; i < ne.size(); ++i) bytes *= ne[i];
    if (o < (1u << 20) && bytes < (1u << 20)) data_end = std::max(data_end, o + bytes);
    return *this;
  }
  std::vector<uint8_t> bytes() const {
    Bytes out;
    out.b = {'G', 'G', 'U', 'F'};
    out.put(version).put(n_tensors).put(n_kv);
    out.b.insert(out.b.end(), kv.b.begin(), kv.b.end());
    out.b.insert(out.b.end(), ti.b.begin(), ti.b.end());
    if (n_tensors) {
      while (out.b.size() % alignment) out.b.push_back(0);
      out.b.resize(out.b.size() + data_end, 0);
    }
    return out.b;
  }
};

Gguf tiny_llama() {
  Gguf g;
  g.str("general.architecture", "llama").str("general.name", "tiny").u32("general.file_type", 0);
  g.u32("llama.block_count", 2).u32("llama.embedding_length", 32).u32("llama.context_length", 256);
  g.u32("llama.feed_forward_length", 64).u32("llama.attention.head_count", 4);
  g.u32("llama.attention.head_count_kv", 2).u32("llama.rope.dimension_count", 8);
  g.tokens(16);
  g.tensor("token_embd.weight", 0, {32, 16});
  for (int il = 0; il < 2; ++il) {
    std::string p = "blk." + std::to_string(il) + ".";
    g.tensor(p + "attn_q.weight", 0, {32, 32}).tensor(p + "attn_k.weight", 0, {32, 16});
    g.tensor(p + "attn_v.weight", 1, {32, 16}).tensor(p + "attn_norm.weight", 0, {32});
  }
  return g;
}

Gguf named(const std::string& arch) {
  Gguf g;
  g.str("general.architecture", arch).u32(arch + ".block_count", 4);
  g.u32(arch + ".embedding_length", 64).u32(arch + ".context_length", 1024);
  return g;
}

void write(const std::string& dir, const std::string& name, const std::vector<uint8_t>& b) {
  std::ofstream(dir + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::vector<uint8_t> cut(std::vector<uint8_t> b, size_t n) {
  b.resize(n);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string d = argv[1];
  auto tiny = tiny_llama().bytes();
  write(d, "valid-tiny-llama.gguf", tiny);

  Gguf v2 = tiny_llama();
  v2.version = 2;
  v2.key("every.u8", kU8).put<uint8_t>(1);
  v2.key("every.i16", kI16).put<int16_t>(-2);
  v2.key("every.u64", kU64).put<uint64_t>(3);
  v2.key("every.f64", kF64).put<double>(0.5);
  v2.key("every.bool", kBool).put<uint8_t>(1);
  v2.key("every.arr_f32", kArr).put(kF32).put<uint64_t>(2).put(1.0f).put(2.0f);
  write(d, "valid-v2-every-type.gguf", v2.bytes());

  Gguf gemma = named("gemma2");
  gemma.u32("gemma2.attention.head_count", 4).u32("gemma2.attention.head_count_kv", 2);
  gemma.u32("gemma2.attention.sliding_window", 512);
  write(d, "valid-gemma2-swa.gguf", gemma.bytes());
  write(d, "truncated-in-kv.gguf", cut(gemma.bytes(), 200));

  Gguf g3 = named("gemma3");
  g3.u32("gemma3.attention.head_count", 4).u32("gemma3.attention.sliding_window", 512);
  g3.key("gemma3.attention.sliding_window_pattern", kArr).put(kBool).put<uint64_t>(4)
      .put<uint8_t>(1).put<uint8_t>(1).put<uint8_t>(0).put<uint8_t>(1);
  write(d, "valid-gemma3-swa-pattern-array.gguf", g3.bytes());

  Gguf ds = named("deepseek2");
  ds.u32("deepseek2.attention.head_count", 16).u32("deepseek2.attention.head_count_kv", 1);
  ds.u32("deepseek2.attention.kv_lora_rank", 512).u32("deepseek2.rope.dimension_count", 64);
  ds.u32("deepseek2.attention.key_length", 576).u32("deepseek2.attention.value_length", 512);
  ds.u32("deepseek2.attention.key_length_mla", 192).u32("deepseek2.attention.value_length_mla", 128);
  ds.u32("deepseek2.expert_count", 8).u32("deepseek2.expert_used_count", 2);
  ds.u32("deepseek2.nextn_predict_layers", 1);
  write(d, "valid-deepseek2-mla.gguf", ds.bytes());

  Gguf jamba = named("jamba");
  jamba.u32("jamba.attention.head_count", 4).arr_i32("jamba.attention.head_count_kv", {0, 2, 0, 0});
  jamba.u32("jamba.ssm.conv_kernel", 4).u32("jamba.ssm.inner_size", 128).u32("jamba.ssm.state_size", 16);
  write(d, "valid-jamba-hybrid.gguf", jamba.bytes());

  Gguf q = named("qwen3next");
  q.u32("qwen3next.attention.head_count", 4).u32("qwen3next.full_attention_interval", 2);
  q.u32("qwen3next.ssm.conv_kernel", 4).u32("qwen3next.ssm.inner_size", 128);
  write(d, "valid-qwen3next-interval.gguf", q.bytes());

  Gguf clip;
  clip.str("general.architecture", "clip").u32("clip.vision.block_count", 2);
  clip.tensor("v.blk.0.attn_q.weight", 1, {16, 16}).tensor("mm.0.weight", 1, {16, 32});
  write(d, "valid-clip-mmproj.gguf", clip.bytes());

  Gguf moe = named("qwen3moe");
  moe.u32("qwen3moe.attention.head_count", 4).u32("qwen3moe.expert_count", 4);
  moe.u32("qwen3moe.expert_used_count", 2).u32("qwen3moe.expert_feed_forward_length", 32);
  moe.tensor("blk.0.ffn_up_exps.weight", 8, {64, 32, 4});
  write(d, "valid-moe-experts.gguf", moe.bytes());

  auto bad = tiny;
  std::memcpy(bad.data(), "abcd", 4);
  write(d, "wrong-magic.gguf", bad);
  bad = tiny;
  bad[4] = 0, bad[7] = 3;
  write(d, "big-endian-version.gguf", bad);
  bad = tiny;
  bad[4] = 1;
  write(d, "version-1.gguf", bad);
  write(d, "truncated-in-header.gguf", cut(tiny, 14));

  Gguf t = tiny_llama();
  write(d, "truncated-in-tensor-info.gguf", cut(tiny, 24 + t.kv.b.size() + t.ti.b.size() / 2));
  write(d, "truncated-data.gguf", cut(tiny, tiny.size() - 1));

  Gguf huge;
  huge.n_tensors = 1ull << 60;
  write(d, "n-tensors-2-pow-60.gguf", huge.bytes());
  Gguf kvmax;
  kvmax.n_kv = UINT64_MAX;
  write(d, "n-kv-uint64-max.gguf", kvmax.bytes());

  Gguf s;
  s.key("general.name", kStr).put<uint64_t>(1ull << 40).put<uint32_t>(0);
  write(d, "string-len-beyond-file.gguf", s.bytes());
  Gguf a;
  a.key("tokenizer.ggml.scores", kArr).put(kF32).put<uint64_t>(1ull << 62);
  write(d, "array-count-beyond-file.gguf", a.bytes());
  Gguf sa;
  sa.key("tokenizer.ggml.tokens", kArr).put(kStr).put<uint64_t>(2).str("a").put<uint64_t>(999);
  write(d, "string-array-element-beyond-file.gguf", sa.bytes());

  Gguf t99 = tiny_llama();
  t99.tensor("blk.9.attn_q.weight", 99, {32});
  write(d, "unknown-type-99.gguf", t99.bytes());
  Gguf t4;
  t4.tensor("old", 4, {32});
  write(d, "removed-type-4.gguf", t4.bytes());
  Gguf dims;
  dims.tensor("five", 0, {1, 1, 1, 1, 1});
  write(d, "n-dims-5.gguf", dims.bytes());
  Gguf ovf;
  ovf.tensor("big", 0, {1ull << 32, 1ull << 32});
  write(d, "ne-product-overflow.gguf", ovf.bytes());
  Gguf blk;
  blk.tensor("q", 12, {100, 2});
  write(d, "row-not-block-multiple.gguf", blk.bytes());
  Gguf mis;
  mis.tensor("a", 0, {8}, 0).tensor("b", 0, {8}, 40);
  write(d, "misaligned-offset.gguf", mis.bytes());
  Gguf far;
  far.tensor("far", 0, {8}, 1ll << 40);
  write(d, "tensor-beyond-eof.gguf", far.bytes());
  Gguf dupt;
  dupt.tensor("same", 0, {8}).tensor("same", 0, {8});
  write(d, "duplicate-tensor-name.gguf", dupt.bytes());
  Gguf longname;
  longname.tensor(std::string(100, 'n'), 0, {8});
  write(d, "tensor-name-too-long.gguf", longname.bytes());

  Gguf nest;
  nest.key("nested", kArr).put(kArr).put<uint64_t>(2).put(kI32).put<uint64_t>(1).put<int32_t>(7)
      .put(kStr).put<uint64_t>(1).str("x");
  nest.u32("after", 1);
  write(d, "nested-array.gguf", nest.bytes());
  Gguf deep;
  deep.key("deep", kArr).put(kArr).put<uint64_t>(1).put(kArr).put<uint64_t>(1).put(kArr)
      .put<uint64_t>(1).put(kU8).put<uint64_t>(0);
  write(d, "nested-array-too-deep.gguf", deep.bytes());
  Gguf dup;
  dup.u32("llama.block_count", 1).u32("llama.block_count", 2);
  write(d, "duplicate-key.gguf", dup.bytes());
  Gguf al;
  al.u32("general.alignment", 48);
  write(d, "alignment-not-power-of-two.gguf", al.bytes());
  Gguf alt;
  alt.str("general.alignment", "32");
  write(d, "alignment-wrong-type.gguf", alt.bytes());
  Gguf vt;
  vt.key("k", 13).put<uint32_t>(0);
  write(d, "bad-value-type-13.gguf", vt.bytes());

  Gguf kvlen = named("llama");
  kvlen.arr_i32("llama.attention.head_count_kv", {1, 2});
  write(d, "head-count-kv-wrong-length.gguf", kvlen.bytes());
  Gguf blocks;
  blocks.str("general.architecture", "llama").u32("llama.block_count", 4000000000u);
  blocks.u32("llama.embedding_length", 64).u32("llama.context_length", 8);
  write(d, "block-count-huge.gguf", blocks.bytes());
  Gguf missing;
  missing.str("general.architecture", "llama").u32("llama.embedding_length", 64);
  write(d, "missing-block-count.gguf", missing.bytes());
  Gguf neg;
  neg.str("general.architecture", "llama").f32("llama.block_count", -3.5f);
  write(d, "negative-float-block-count.gguf", neg.bytes());
  Gguf used = named("mixtral");
  used.u32("mixtral.expert_count", 2).u32("mixtral.expert_used_count", 8);
  write(d, "expert-used-more-than-count.gguf", used.bytes());
  return 0;
}
