// GGUF reader (v2 and v3) and writer. The reader reads the header only
// (metadata and tensor infos), never the tensor data, and caps every count and
// string length by what the file can hold before allocating, so a hostile
// header claiming 2^60 tensors is an error, not an allocation.
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/file_system.h"
#include "core/result.h"
#include "fit/model.h"

namespace aimem::fit {

enum class GgufType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5,
  kFloat32 = 6, kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11,
  kFloat64 = 12,
};

// One metadata value. Scalars keep their value; arrays keep their element
// type, their length and (for numeric and bool arrays up to kMaxKeptArray
// elements, string arrays up to kMaxKeptStrings) their elements; longer
// arrays (a tokenizer's 150k tokens) are skipped with only the length kept.
struct GgufValue {
  GgufType type = GgufType::kUint32;
  GgufType elem_type = GgufType::kUint32;  // arrays
  uint64_t count = 0;                      // arrays: number of elements
  uint64_t u = 0;                          // unsigned ints and bool
  int64_t i = 0;                           // signed ints
  double f = 0;                            // floats
  std::string s;                           // strings
  std::vector<double> nums;                // numeric/bool array elements, if kept
  std::vector<std::string> strs;           // string array elements, if kept
  bool kept = false;                       // array elements were kept

  // Numeric value of any scalar int/float/bool type.
  std::optional<double> number() const;
};

inline constexpr uint64_t kMaxKeptArray = 65536;
inline constexpr uint64_t kMaxKeptStrings = 64;

struct GgufTensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  std::array<uint64_t, 4> ne{1, 1, 1, 1};
  uint32_t type = 0;
  uint64_t offset = 0;  // relative to the data section
  uint64_t bytes = 0;   // from the type's block size
};

struct GgufFile {
  std::string path;
  uint32_t version = 0;
  uint64_t file_size = 0;
  uint32_t alignment = 32;
  uint64_t data_offset = 0;  // absolute offset of the tensor data
  std::map<std::string, GgufValue> kv;
  std::vector<GgufTensorInfo> tensors;
  uint64_t bytes_read = 0;   // read from disk (the header; 0 for parse_gguf)

  const GgufValue* find(const std::string& key) const;
  std::optional<double> number(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;
};

// Errors name the file and the field ("model.gguf: tensor 12 'blk.0.attn_q.weight':
// type 99 is not a ggml type"). The file comes from `files` (sources/files.h
// local_files() for this machine's); anything but a regular file is refused.
Result<GgufFile> read_gguf(const FileSystem& files, const std::string& path);
// The same over a file already opened (name used in messages).
Result<GgufFile> read_gguf(RandomAccessFile& file, const std::string& name);
// The same over bytes in memory (the fuzzer; name used in messages).
Result<GgufFile> parse_gguf(const uint8_t* data, size_t size, const std::string& name);

// Writer, for tests and `aimem probe`'s tiny models: metadata and tensors
// with real data (or zero-filled when data is empty), aligned like llama.cpp.
struct GgufWriteTensor {
  std::string name;
  uint32_t type = 0;                       // ggml type id
  std::vector<uint64_t> ne;                // row length first
  std::vector<uint8_t> data;               // exact bytes, or empty for zeros
};
struct GgufWriter {
  uint32_t version = 3;
  uint32_t alignment = 32;
  std::vector<std::pair<std::string, GgufValue>> kv;  // in order
  std::vector<GgufWriteTensor> tensors;

  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_u64(const std::string& key, uint64_t v);
  void set_f32(const std::string& key, float v);
  void set_bool(const std::string& key, bool v);
  void set_str(const std::string& key, const std::string& v);
  void set_arr_str(const std::string& key, const std::vector<std::string>& v);
  void set_arr_i32(const std::string& key, const std::vector<int32_t>& v);
  void set_arr_f32(const std::string& key, const std::vector<float>& v);
  // Writes the file; with sparse = true tensor data is not written (the file
  // is extended with a hole to its full size), for header-only benchmarks.
  Result<bool> write(const std::string& path, bool sparse = false) const;
};

// A ModelSpec from a GGUF file: architecture keys ({arch}.block_count, ...),
// per-layer head_count_kv arrays, SWA patterns, MoE, MLA, recurrent state,
// and the tensor table (weights summed exactly).
Result<ModelSpec> spec_from_gguf(const GgufFile& f);

}  // namespace aimem::fit
