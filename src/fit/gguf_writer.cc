// GgufWriter: writes a GGUF v2/v3 little-endian file the way ggml's
// gguf_write_to_file does (ggml/src/gguf.cpp): header, metadata, tensor
// infos, padding to the alignment, then each tensor's data padded to the
// alignment. v2 and v3 share the layout (v3 only allows big-endian files).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "fit/ggml_types.h"
#include "fit/gguf.h"

namespace aimem::fit {
namespace {

uint64_t pad_to(uint64_t x, uint64_t align) { return (x + align - 1) / align * align; }

class Buf {
 public:
  void raw(const void* p, size_t n) { s_.append(static_cast<const char*>(p), n); }
  template <typename T>
  void put(T v) {
    // The hosts we build for are little-endian, like GGUF.
    raw(&v, sizeof v);
  }
  void str(const std::string& v) {
    put<uint64_t>(v.size());
    raw(v.data(), v.size());
  }
  void zeros(size_t n) { s_.append(n, '\0'); }
  size_t size() const { return s_.size(); }
  const std::string& data() const { return s_; }

 private:
  std::string s_;
};

bool is_scalar_numeric(GgufType t) {
  switch (t) {
    case GgufType::kString:
    case GgufType::kArray:
      return false;
    default:
      return static_cast<uint32_t>(t) <= static_cast<uint32_t>(GgufType::kFloat64);
  }
}

// One element of type t from a double (arrays keep numbers as doubles).
bool put_number(Buf& b, GgufType t, double d) {
  switch (t) {
    case GgufType::kUint8: b.put<uint8_t>(static_cast<uint8_t>(d)); return true;
    case GgufType::kInt8: b.put<int8_t>(static_cast<int8_t>(d)); return true;
    case GgufType::kUint16: b.put<uint16_t>(static_cast<uint16_t>(d)); return true;
    case GgufType::kInt16: b.put<int16_t>(static_cast<int16_t>(d)); return true;
    case GgufType::kUint32: b.put<uint32_t>(static_cast<uint32_t>(d)); return true;
    case GgufType::kInt32: b.put<int32_t>(static_cast<int32_t>(d)); return true;
    case GgufType::kFloat32: b.put<float>(static_cast<float>(d)); return true;
    case GgufType::kBool: b.put<uint8_t>(d != 0 ? 1 : 0); return true;
    case GgufType::kUint64: b.put<uint64_t>(static_cast<uint64_t>(d)); return true;
    case GgufType::kInt64: b.put<int64_t>(static_cast<int64_t>(d)); return true;
    case GgufType::kFloat64: b.put<double>(d); return true;
    default: return false;
  }
}

// A scalar from the field that holds it (u for unsigned and bool, i for
// signed, f for floats).
void put_scalar(Buf& b, const GgufValue& v) {
  switch (v.type) {
    case GgufType::kUint8: b.put<uint8_t>(static_cast<uint8_t>(v.u)); break;
    case GgufType::kInt8: b.put<int8_t>(static_cast<int8_t>(v.i)); break;
    case GgufType::kUint16: b.put<uint16_t>(static_cast<uint16_t>(v.u)); break;
    case GgufType::kInt16: b.put<int16_t>(static_cast<int16_t>(v.i)); break;
    case GgufType::kUint32: b.put<uint32_t>(static_cast<uint32_t>(v.u)); break;
    case GgufType::kInt32: b.put<int32_t>(static_cast<int32_t>(v.i)); break;
    case GgufType::kFloat32: b.put<float>(static_cast<float>(v.f)); break;
    case GgufType::kBool: b.put<uint8_t>(v.u ? 1 : 0); break;
    case GgufType::kUint64: b.put<uint64_t>(v.u); break;
    case GgufType::kInt64: b.put<int64_t>(v.i); break;
    case GgufType::kFloat64: b.put<double>(v.f); break;
    default: break;
  }
}

Result<bool> put_value(Buf& b, const std::string& path, const std::string& key,
                       const GgufValue& v) {
  b.put<uint32_t>(static_cast<uint32_t>(v.type));
  if (v.type == GgufType::kString) {
    b.str(v.s);
    return true;
  }
  if (is_scalar_numeric(v.type)) {
    put_scalar(b, v);
    return true;
  }
  if (v.type != GgufType::kArray)
    return make_error(path + ": key '" + key + "': type " +
                      std::to_string(static_cast<uint32_t>(v.type)) + " is not a GGUF type");
  b.put<uint32_t>(static_cast<uint32_t>(v.elem_type));
  if (v.elem_type == GgufType::kString) {
    b.put<uint64_t>(v.strs.size());
    for (const auto& s : v.strs) b.str(s);
    return true;
  }
  if (!is_scalar_numeric(v.elem_type))
    return make_error(path + ": key '" + key + "': arrays of type " +
                      std::to_string(static_cast<uint32_t>(v.elem_type)) +
                      " cannot be written");
  b.put<uint64_t>(v.nums.size());
  for (double d : v.nums) put_number(b, v.elem_type, d);
  return true;
}

struct Planned {
  uint64_t bytes = 0;
  uint64_t offset = 0;  // relative to the data section
};

}  // namespace

void GgufWriter::set_u32(const std::string& key, uint32_t v) {
  GgufValue g;
  g.type = GgufType::kUint32;
  g.u = v;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_i32(const std::string& key, int32_t v) {
  GgufValue g;
  g.type = GgufType::kInt32;
  g.i = v;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_u64(const std::string& key, uint64_t v) {
  GgufValue g;
  g.type = GgufType::kUint64;
  g.u = v;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_f32(const std::string& key, float v) {
  GgufValue g;
  g.type = GgufType::kFloat32;
  g.f = v;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_bool(const std::string& key, bool v) {
  GgufValue g;
  g.type = GgufType::kBool;
  g.u = v ? 1 : 0;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_str(const std::string& key, const std::string& v) {
  GgufValue g;
  g.type = GgufType::kString;
  g.s = v;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_arr_str(const std::string& key, const std::vector<std::string>& v) {
  GgufValue g;
  g.type = GgufType::kArray;
  g.elem_type = GgufType::kString;
  g.count = v.size();
  g.strs = v;
  g.kept = true;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_arr_i32(const std::string& key, const std::vector<int32_t>& v) {
  GgufValue g;
  g.type = GgufType::kArray;
  g.elem_type = GgufType::kInt32;
  g.count = v.size();
  g.nums.assign(v.begin(), v.end());
  g.kept = true;
  kv.emplace_back(key, std::move(g));
}
void GgufWriter::set_arr_f32(const std::string& key, const std::vector<float>& v) {
  GgufValue g;
  g.type = GgufType::kArray;
  g.elem_type = GgufType::kFloat32;
  g.count = v.size();
  g.nums.assign(v.begin(), v.end());
  g.kept = true;
  kv.emplace_back(key, std::move(g));
}

Result<bool> GgufWriter::write(const std::string& path, bool sparse) const {
  if (version != 2 && version != 3)
    return make_error(path + ": GGUF version " + std::to_string(version) +
                      " cannot be written (2 or 3)");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return make_error(path + ": alignment " + std::to_string(alignment) +
                      " is not a power of two");

  bool has_alignment_key = false;
  for (const auto& [k, v] : kv) has_alignment_key |= (k == "general.alignment");
  const bool add_alignment_key = alignment != 32 && !has_alignment_key;

  // Sizes and offsets first, so errors come before the file is touched.
  std::vector<Planned> plan(tensors.size());
  uint64_t data_size = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const GgufWriteTensor& t = tensors[i];
    const std::string where = path + ": tensor " + std::to_string(i) + " '" + t.name + "'";
    if (t.ne.empty() || t.ne.size() > 4)
      return make_error(where + ": " + std::to_string(t.ne.size()) +
                        " dimensions (1 to 4 allowed)");
    auto row = ggml_row_size(t.type, t.ne[0]);
    if (!row)
      return make_error(where + ": type " + std::to_string(t.type) +
                        " is unknown or row length " + std::to_string(t.ne[0]) +
                        " is not a multiple of its block size");
    uint64_t bytes = *row;
    for (size_t d = 1; d < t.ne.size(); ++d) {
      if (t.ne[d] != 0 && bytes > UINT64_MAX / t.ne[d])
        return make_error(where + ": size overflows");
      bytes *= t.ne[d];
    }
    if (!t.data.empty() && t.data.size() != bytes)
      return make_error(where + ": " + std::to_string(t.data.size()) +
                        " data bytes given, the shape needs " + std::to_string(bytes));
    plan[i].bytes = bytes;
    plan[i].offset = data_size;
    data_size += pad_to(bytes, alignment);
  }

  Buf b;
  b.raw("GGUF", 4);
  b.put<uint32_t>(version);
  b.put<uint64_t>(tensors.size());
  b.put<uint64_t>(kv.size() + (add_alignment_key ? 1 : 0));
  if (add_alignment_key) {
    b.str("general.alignment");
    b.put<uint32_t>(static_cast<uint32_t>(GgufType::kUint32));
    b.put<uint32_t>(alignment);
  }
  for (const auto& [k, v] : kv) {
    b.str(k);
    auto r = put_value(b, path, k, v);
    if (!r) return r.error();
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const GgufWriteTensor& t = tensors[i];
    b.str(t.name);
    b.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t n : t.ne) b.put<uint64_t>(n);
    b.put<uint32_t>(t.type);
    b.put<uint64_t>(plan[i].offset);
  }
  b.zeros(pad_to(b.size(), alignment) - b.size());
  const uint64_t total = b.size() + data_size;

  // Output, not a read of the system: the file the caller asked to write.
  std::FILE* f = std::fopen(path.c_str(), "wb");  // OUTPUT: writes a file (allowlisted in cmake/layers.cmake), reads nothing
  if (!f) return make_error(path + ": cannot create: " + std::strerror(errno));
  auto fail = [&](const std::string& what) -> Error {
    std::string msg = path + ": " + what + ": " + std::strerror(errno);
    std::fclose(f);
    return make_error(msg);
  };
  if (std::fwrite(b.data().data(), 1, b.size(), f) != b.size()) return fail("write failed");
  if (!sparse) {
    static const char kZeros[4096] = {};
    auto put_zeros = [&](uint64_t n) {
      while (n > 0) {
        size_t k = n < sizeof kZeros ? static_cast<size_t>(n) : sizeof kZeros;
        if (std::fwrite(kZeros, 1, k, f) != k) return false;
        n -= k;
      }
      return true;
    };
    for (size_t i = 0; i < tensors.size(); ++i) {
      const auto& t = tensors[i];
      if (!t.data.empty()) {
        if (std::fwrite(t.data.data(), 1, t.data.size(), f) != t.data.size())
          return fail("write failed");
      } else if (!put_zeros(plan[i].bytes)) {
        return fail("write failed");
      }
      if (!put_zeros(pad_to(plan[i].bytes, alignment) - plan[i].bytes))
        return fail("write failed");
    }
  }
  if (std::fclose(f) != 0) return make_error(path + ": write failed: " + std::strerror(errno));
  if (sparse) {
    std::error_code ec;
    std::filesystem::resize_file(path, total, ec);
    if (ec) return make_error(path + ": cannot extend to " + std::to_string(total) +
                              " bytes: " + ec.message());
  }
  return true;
}

}  // namespace aimem::fit
