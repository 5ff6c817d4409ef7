// GGUF header reader (v2, v3). Reads metadata and tensor infos through a
// small buffered window over a RandomAccessFile (core/file_system.h; the
// caller opens it, sources/files.h for this machine's files), never the
// tensor data, and checks every count and length against the bytes left in
// the file before allocating.
// Layout reference: ggml/src/gguf.cpp (gguf_init_from_file_impl).
#include "fit/gguf.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "fit/ggml_types.h"

namespace aimem::fit {
namespace {

constexpr uint32_t kMaxDims = 4;                     // GGML_MAX_DIMS
constexpr size_t kMaxTensorName = 64;                // GGML_MAX_NAME (with its NUL)
constexpr uint64_t kMaxKeyLen = 65535;               // real keys are < 100 bytes
constexpr uint64_t kMaxString = 16ull << 20;         // one kept string
constexpr uint64_t kMaxKeptBytes = 256ull << 20;     // all kept metadata together
constexpr uint64_t kMaxCount = 1ull << 20;           // n_tensors, n_kv
constexpr uint64_t kMaxWalkedStrings = 1ull << 24;   // string array elements walked
constexpr int kMaxArrayDepth = 3;                    // arrays of arrays of arrays
// Smallest encodings, to cap counts by the bytes left before allocating.
constexpr uint64_t kMinKv = 8 + 4 + 1;               // key length, type, a u8 value
constexpr uint64_t kMinTensorInfo = 8 + 4 + 4 + 8;   // name length, n_dims, type, offset
constexpr uint64_t kBufSize = 256 << 10;

// Bytes of the file (or of a buffer in memory), read forward.
class ByteSource {
 public:
  ByteSource(const uint8_t* data, uint64_t size) : mem_(data), size_(size) {}
  explicit ByteSource(RandomAccessFile& file) : file_(&file), size_(file.size()) {}

  uint64_t size() const { return size_; }
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  uint64_t bytes_read() const { return bytes_read_; }
  int io_errno() const { return io_errno_; }

  // Copies n bytes and advances; false (position unchanged) past the end.
  bool read(void* dst, uint64_t n) {
    if (n > left()) return false;
    if (mem_) {
      if (n) std::memcpy(dst, mem_ + pos_, n);
      pos_ += n;
      return true;
    }
    return read_file(static_cast<uint8_t*>(dst), n);
  }

  bool skip(uint64_t n) {
    if (n > left()) return false;
    pos_ += n;
    return true;
  }

  // The bytes buffered from the position on (at least 8 unless near the end
  // of the file), for loops that walk many short records without copying.
  const uint8_t* span(uint64_t& avail) {
    const uint8_t* p = window(std::min<uint64_t>(8, left()));
    if (!p) return nullptr;
    avail = mem_ ? left() : buf_off_ + buf_.size() - pos_;
    return p;
  }

  // n (<= 8) contiguous bytes at the position, without advancing; the fast
  // path for the counts and lengths that make up most of a header.
  const uint8_t* window(uint64_t n) {
    if (n > left()) return nullptr;
    if (mem_) return mem_ + pos_;
    if (pos_ < buf_off_ || pos_ + n > buf_off_ + buf_.size()) {
      uint64_t len = std::min<uint64_t>(kBufSize, size_ - pos_);
      buf_.resize(len);
      if (!read_all_at(buf_.data(), len, pos_)) {
        buf_.clear();
        return nullptr;
      }
      buf_off_ = pos_;
    }
    return buf_.data() + (pos_ - buf_off_);
  }

 private:
  bool read_file(uint8_t* dst, uint64_t n) {
    uint64_t at = pos_;
    while (n > 0) {
      if (at >= buf_off_ && at < buf_off_ + buf_.size()) {
        uint64_t k = std::min<uint64_t>(n, buf_off_ + buf_.size() - at);
        std::memcpy(dst, buf_.data() + (at - buf_off_), k);
        dst += k, at += k, n -= k;
        continue;
      }
      if (n >= kBufSize) {  // large string: straight into the destination
        if (!read_all_at(dst, n, at)) return false;
        at += n, n = 0;
        break;
      }
      uint64_t len = std::min<uint64_t>(kBufSize, size_ - at);
      buf_.resize(len);
      if (!read_all_at(buf_.data(), len, at)) {
        buf_.clear();
        return false;
      }
      buf_off_ = at;
    }
    pos_ = at;
    return true;
  }

  bool read_all_at(uint8_t* dst, uint64_t n, uint64_t at) {
    while (n > 0) {
      int64_t got = file_->read_at(dst, std::min<uint64_t>(n, 1u << 30), at);
      if (got <= 0) {  // error, or the file shrank under us
        io_errno_ = got < 0 ? int(-got) : 0;
        return false;
      }
      bytes_read_ += static_cast<uint64_t>(got);
      dst += got, at += static_cast<uint64_t>(got), n -= static_cast<uint64_t>(got);
    }
    return true;
  }

  const uint8_t* mem_ = nullptr;
  RandomAccessFile* file_ = nullptr;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
  std::vector<uint8_t> buf_;
  uint64_t buf_off_ = 0;
  uint64_t bytes_read_ = 0;
  int io_errno_ = 0;
};

uint64_t load_le(const uint8_t* b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

// Bytes of one element of a fixed-size type; 0 for string, array, unknown.
uint64_t fixed_size(uint32_t t) {
  switch (static_cast<GgufType>(t)) {
    case GgufType::kUint8: case GgufType::kInt8: case GgufType::kBool: return 1;
    case GgufType::kUint16: case GgufType::kInt16: return 2;
    case GgufType::kUint32: case GgufType::kInt32: case GgufType::kFloat32: return 4;
    case GgufType::kUint64: case GgufType::kInt64: case GgufType::kFloat64: return 8;
    default: return 0;
  }
}

bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

// Decodes one fixed-size little-endian element into the value's fields.
void decode_scalar(GgufType t, const uint8_t* b, GgufValue& v) {
  uint64_t raw = load_le(b, static_cast<int>(fixed_size(static_cast<uint32_t>(t))));
  switch (t) {
    case GgufType::kUint8: case GgufType::kUint16: case GgufType::kUint32:
    case GgufType::kUint64: case GgufType::kBool:
      v.u = raw;
      break;
    case GgufType::kInt8: v.i = static_cast<int8_t>(raw); break;
    case GgufType::kInt16: v.i = static_cast<int16_t>(raw); break;
    case GgufType::kInt32: v.i = static_cast<int32_t>(raw); break;
    case GgufType::kInt64: v.i = static_cast<int64_t>(raw); break;
    case GgufType::kFloat32: {
      uint32_t r32 = static_cast<uint32_t>(raw);
      float f;
      std::memcpy(&f, &r32, 4);
      v.f = f;
      break;
    }
    case GgufType::kFloat64: std::memcpy(&v.f, &raw, 8); break;
    default: break;
  }
}

double element_number(GgufType t, const uint8_t* b) {
  GgufValue v;
  v.type = t;
  decode_scalar(t, b, v);
  return *v.number();
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 80)) out += (c >= 32 && c < 127) ? c : '?';
  if (s.size() > 80) out += "...";
  return out + "'";
}

class Parser {
 public:
  Parser(ByteSource& src, std::string name) : src_(src), name_(std::move(name)) {}

  Result<GgufFile> run() {
    GgufFile f;
    f.file_size = src_.size();
    if (!header(f) || !metadata(f) || !alignment(f) || !tensor_infos(f) || !data_section(f)) {
      return make_error(err_);
    }
    f.bytes_read = src_.bytes_read();
    return f;
  }

 private:
  // --- errors -------------------------------------------------------------
  void set_what(const char* text) {
    what_text_ = text;
    what_kind_ = nullptr;
    what_name_ = nullptr;
  }
  void set_what(const char* kind, uint64_t index) {
    what_kind_ = kind;
    what_index_ = index;
    what_name_ = nullptr;
  }
  std::string what() const {
    if (!what_kind_) return what_text_;
    std::string w = std::string(what_kind_) + " " + std::to_string(what_index_);
    return what_name_ ? w + " " + quoted(*what_name_) : w;
  }

  bool fail(const std::string& msg) {
    if (err_.empty()) err_ = name_ + ": " + msg;
    return false;
  }
  bool truncated(uint64_t need) {
    if (src_.io_errno() != 0) {
      return fail("read error at byte " + std::to_string(src_.pos()) + " while reading " +
                  what() + ": " + std::strerror(src_.io_errno()));
    }
    return fail("truncated at byte " + std::to_string(src_.size()) + " while reading " + what() +
                " (" + std::to_string(need) + " bytes needed at byte " +
                std::to_string(src_.pos()) + ")");
  }

  // --- primitives ---------------------------------------------------------
  bool bytes(void* dst, uint64_t n) { return src_.read(dst, n) || truncated(n); }
  bool u32(uint32_t& v) {
    const uint8_t* b = src_.window(4);
    if (!b) return truncated(4);
    v = static_cast<uint32_t>(load_le(b, 4));
    return src_.skip(4);
  }
  bool u64(uint64_t& v) {
    const uint8_t* b = src_.window(8);
    if (!b) return truncated(8);
    v = load_le(b, 8);
    return src_.skip(8);
  }
  bool skip(uint64_t n) { return src_.skip(n) || truncated(n); }

  // A length that must fit in what is left of the file.
  bool length(uint64_t& n, const char* of) {
    if (!u64(n)) return false;
    if (n > src_.left()) {
      return fail(std::string(of) + " length " + std::to_string(n) + " at byte " +
                  std::to_string(src_.pos() - 8) + " is beyond the end of the file (" +
                  std::to_string(src_.left()) + " bytes left) while reading " + what());
    }
    return true;
  }

  bool take_budget(uint64_t n) {
    if (n > kMaxKeptBytes - kept_bytes_) return false;
    kept_bytes_ += n;
    return true;
  }

  bool string(std::string& s, uint64_t cap, const char* of) {
    uint64_t n;
    if (!length(n, of)) return false;
    if (n > cap) {
      return fail(std::string(of) + " of " + std::to_string(n) + " bytes is longer than the " +
                  std::to_string(cap) + " aimem accepts, while reading " + what());
    }
    if (!take_budget(n)) {
      return fail("metadata larger than " + std::to_string(kMaxKeptBytes >> 20) +
                  " MiB, while reading " + what());
    }
    s.resize(n);
    return bytes(s.data(), n);
  }

  // --- header -------------------------------------------------------------
  bool header(GgufFile& f) {
    set_what("the header");
    uint8_t magic[4];
    if (src_.size() < 4) return truncated(4);
    bytes(magic, 4);
    if (std::memcmp(magic, "GGUF", 4) != 0) {
      std::string m(reinterpret_cast<char*>(magic), 4);
      return fail("not a GGUF file (magic " + quoted(m) + ", expected 'GGUF')");
    }
    if (!u32(f.version)) return false;
    if (f.version != 0 && (f.version & 0xFFFF) == 0) {
      return fail("big-endian GGUF (version field " + std::to_string(f.version) +
                  "); aimem reads little-endian files only");
    }
    if (f.version == 1) {
      return fail("GGUF v1 (32-bit counts) is not supported; re-convert with a current llama.cpp");
    }
    if (f.version < 2 || f.version > 3) {
      return fail("GGUF version " + std::to_string(f.version) + " is not one aimem reads (2 or 3)");
    }
    set_what("the tensor count");
    if (!u64(n_tensors_)) return false;
    set_what("the metadata count");
    if (!u64(n_kv_)) return false;
    return counts_fit();
  }

  // n_kv and n_tensors must fit in the bytes left at their smallest encoding.
  bool counts_fit() {
    const uint64_t left = src_.left();
    if (n_tensors_ > kMaxCount || n_tensors_ > left / kMinTensorInfo) {
      return fail("tensor count " + std::to_string(n_tensors_) +
                  " cannot fit in the file (" + std::to_string(left) + " bytes after the header)");
    }
    if (n_kv_ > kMaxCount || n_kv_ > left / kMinKv) {
      return fail("metadata count " + std::to_string(n_kv_) + " cannot fit in the file (" +
                  std::to_string(left) + " bytes after the header)");
    }
    if (n_kv_ * kMinKv + n_tensors_ * kMinTensorInfo > left) {
      return fail("metadata count " + std::to_string(n_kv_) + " and tensor count " +
                  std::to_string(n_tensors_) + " cannot both fit in the file");
    }
    return true;
  }

  // --- metadata -----------------------------------------------------------
  bool metadata(GgufFile& f) {
    for (uint64_t i = 0; i < n_kv_; ++i) {
      set_what("metadata key", i);
      std::string key;
      if (!string(key, kMaxKeyLen, "key")) return false;
      what_name_ = &key;
      uint32_t t = 0;
      if (!u32(t)) return false;
      GgufValue v;
      if (!value(t, v)) return false;
      if (!f.kv.try_emplace(std::move(key), std::move(v)).second) {  // key kept for the message
        return fail(what() + ": duplicate key");
      }
    }
    return true;
  }

  bool value(uint32_t t, GgufValue& v) {
    if (!valid_type(t)) {
      return fail(what() + ": value type " + std::to_string(t) + " is not a GGUF type");
    }
    v.type = static_cast<GgufType>(t);
    if (v.type == GgufType::kString) return string(v.s, kMaxString, "string");
    if (v.type == GgufType::kArray) return array(v, 1);
    uint8_t b[8];
    if (!bytes(b, fixed_size(t))) return false;
    decode_scalar(v.type, b, v);
    return true;
  }

  // An array header: element type and count, the count checked against the
  // bytes left at the element's smallest size.
  bool array_header(uint32_t& et, uint64_t& count) {
    if (!u32(et) || !u64(count)) return false;
    if (!valid_type(et)) {
      return fail(what() + ": array element type " + std::to_string(et) + " is not a GGUF type");
    }
    uint64_t min = fixed_size(et);
    if (et == static_cast<uint32_t>(GgufType::kString)) min = 8;
    if (et == static_cast<uint32_t>(GgufType::kArray)) min = 12;
    if (count > src_.left() / min) {
      return fail(what() + ": array of " + std::to_string(count) +
                  " elements is beyond the end of the file (" + std::to_string(src_.left()) +
                  " bytes left)");
    }
    return true;
  }

  bool array(GgufValue& v, int depth) {
    uint32_t et;
    if (!array_header(et, v.count)) return false;
    v.elem_type = static_cast<GgufType>(et);
    if (v.elem_type == GgufType::kArray) return skip_nested(v.count, depth);
    if (v.elem_type == GgufType::kString) return string_array(v);
    const uint64_t size = fixed_size(et);
    if (v.count > kMaxKeptArray || !take_budget(v.count * sizeof(double))) {
      return skip(v.count * size);  // a tokenizer's scores: length only
    }
    std::vector<uint8_t> raw(v.count * size);
    if (!bytes(raw.data(), raw.size())) return false;
    v.nums.reserve(v.count);
    for (uint64_t k = 0; k < v.count; ++k) {
      v.nums.push_back(element_number(v.elem_type, raw.data() + k * size));
    }
    v.kept = true;
    return true;
  }

  // Walks every string length (so the array is known to lie in the file),
  // keeping the strings only when the array is short.
  bool string_array(GgufValue& v) {
    if (v.count > kMaxWalkedStrings) {
      return fail(what() + ": string array of " + std::to_string(v.count) +
                  " elements is longer than the " + std::to_string(kMaxWalkedStrings) +
                  " aimem accepts");
    }
    const bool keep = v.count <= kMaxKeptStrings;
    if (keep) v.strs.reserve(v.count);
    if (keep) {
      for (uint64_t k = 0; k < v.count; ++k) {
        v.strs.emplace_back();
        if (!string(v.strs.back(), kMaxString, "string")) return false;
      }
      v.kept = true;
      return true;
    }
    // A tokenizer's 150k tokens: walk the lengths straight over the read
    // buffer (the per-string path costs ~10x more); any length that does not
    // fit goes through length() for its message.
    uint64_t k = 0;
    while (k < v.count) {
      uint64_t avail = 0;
      const uint8_t* p = src_.span(avail);
      uint64_t used = 0;
      const uint64_t left = src_.left();
      while (p && k < v.count && used + 8 <= avail) {
        uint64_t n;
        std::memcpy(&n, p + used, 8);  // GGUF is little-endian, like the hosts we build for
        if (n > left - used - 8) break;
        used += 8 + n;
        ++k;
        if (used > avail) break;
      }
      if (used > 0) {
        if (!skip(used)) return false;
        continue;
      }
      uint64_t n;  // one string by the checked path (it names the error)
      if (!length(n, "string") || !skip(n)) return false;
      ++k;
    }
    v.kept = false;
    return true;
  }

  // Arrays of arrays: validated and skipped, never kept.
  bool skip_nested(uint64_t count, int depth) {
    if (depth >= kMaxArrayDepth) {
      return fail(what() + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    }
    for (uint64_t k = 0; k < count; ++k) {
      uint32_t et;
      uint64_t n;
      if (!array_header(et, n)) return false;
      if (et == static_cast<uint32_t>(GgufType::kArray)) {
        if (!skip_nested(n, depth + 1)) return false;
      } else if (et == static_cast<uint32_t>(GgufType::kString)) {
        if (n > kMaxWalkedStrings) return fail(what() + ": nested string array too long");
        for (uint64_t s = 0; s < n; ++s) {
          uint64_t len;
          if (!length(len, "string") || !skip(len)) return false;
        }
      } else if (!skip(n * fixed_size(et))) {
        return false;
      }
    }
    return true;
  }

  bool alignment(GgufFile& f) {
    auto it = f.kv.find("general.alignment");
    if (it == f.kv.end()) return true;
    const GgufValue& v = it->second;
    if (v.type != GgufType::kUint32) {
      return fail("'general.alignment' must be a uint32");
    }
    if (v.u == 0 || (v.u & (v.u - 1)) != 0) {
      return fail("'general.alignment' " + std::to_string(v.u) + " is not a power of two");
    }
    f.alignment = static_cast<uint32_t>(v.u);
    return true;
  }

  // --- tensor infos -------------------------------------------------------
  bool tensor_infos(GgufFile& f) {
    f.tensors.reserve(std::min<uint64_t>(n_tensors_, 4096));
    std::unordered_set<std::string> names;
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      set_what("tensor", i);
      GgufTensorInfo t;
      if (!string(t.name, kMaxTensorName - 1, "tensor name")) return false;
      what_name_ = &t.name;
      if (!names.insert(t.name).second) return fail(what() + ": duplicate tensor name");
      if (!shape(t) || !u32(t.type) || !tensor_bytes(t) || !u64(t.offset)) return false;
      f.tensors.push_back(std::move(t));
    }
    return true;
  }

  bool shape(GgufTensorInfo& t) {
    if (!u32(t.n_dims)) return false;
    if (t.n_dims > kMaxDims) {
      return fail(what() + ": " + std::to_string(t.n_dims) + " dimensions (ggml allows at most " +
                  std::to_string(kMaxDims) + ")");
    }
    uint64_t elems = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      if (!u64(t.ne[d])) return false;
      // ggml holds ne as int64 and requires the product to fit in it.
      if (t.ne[d] > static_cast<uint64_t>(INT64_MAX)) {
        return fail(what() + ": dimension " + std::to_string(d) + " is negative");
      }
      if (t.ne[d] != 0 && elems > static_cast<uint64_t>(INT64_MAX) / t.ne[d]) {
        return fail(what() + ": element count overflows 64 bits");
      }
      elems *= t.ne[d];
    }
    return true;
  }

  bool tensor_bytes(GgufTensorInfo& t) {
    const GgmlTypeInfo* info = ggml_type_info(t.type);
    if (!info) {
      return fail(what() + ": type " + std::to_string(t.type) +
                  " is not a ggml type this aimem knows");
    }
    auto row = ggml_row_size(t.type, t.ne[0]);
    if (!row) {
      return fail(what() + ": row length " + std::to_string(t.ne[0]) +
                  " is not a multiple of the " + std::string(info->name) + " block size " +
                  std::to_string(info->block_size));
    }
    uint64_t b = *row;
    for (int d = 1; d < 4; ++d) {
      if (t.ne[d] != 0 && b > UINT64_MAX / t.ne[d]) {
        return fail(what() + ": size in bytes overflows 64 bits");
      }
      b *= t.ne[d];
    }
    t.bytes = b;
    return true;
  }

  // The data section starts at the next alignment boundary; every tensor
  // must start aligned and end inside the file.
  bool data_section(GgufFile& f) {
    uint64_t end = src_.pos();
    if (!f.tensors.empty()) {
      uint64_t pad = (f.alignment - end % f.alignment) % f.alignment;
      end += pad;
      if (end > f.file_size) {
        set_what("the padding before the tensor data");
        return fail("truncated at byte " + std::to_string(f.file_size) + " while reading " + what());
      }
    }
    f.data_offset = end;
    for (size_t i = 0; i < f.tensors.size(); ++i) {
      const GgufTensorInfo& t = f.tensors[i];
      auto where = [&] { return "tensor " + std::to_string(i) + " " + quoted(t.name); };
      if (t.offset % f.alignment != 0) {
        return fail(where() + ": offset " + std::to_string(t.offset) +
                    " is not a multiple of the alignment " + std::to_string(f.alignment));
      }
      const uint64_t room = f.file_size - f.data_offset;
      if (t.offset > room || t.bytes > room - t.offset) {
        return fail(where() + ": tensor data extends beyond the end of the file (needs bytes " +
                    std::to_string(f.data_offset) + "+" + std::to_string(t.offset) + "+" +
                    std::to_string(t.bytes) + ", file has " + std::to_string(f.file_size) +
                    "): the file is truncated");
      }
    }
    return true;
  }

  ByteSource& src_;
  std::string name_;
  // What is being read, for messages. Kept as parts and put into words only
  // when a message needs them: a header has hundreds of keys and tensors.
  std::string what_text_;
  const char* what_kind_ = nullptr;  // "metadata key", "tensor"; null: what_text_
  uint64_t what_index_ = 0;
  const std::string* what_name_ = nullptr;
  std::string err_;
  uint64_t n_tensors_ = 0, n_kv_ = 0;
  uint64_t kept_bytes_ = 0;
};

}  // namespace

std::optional<double> GgufValue::number() const {
  switch (type) {
    case GgufType::kUint8: case GgufType::kUint16: case GgufType::kUint32:
    case GgufType::kUint64: case GgufType::kBool:
      return static_cast<double>(u);
    case GgufType::kInt8: case GgufType::kInt16: case GgufType::kInt32: case GgufType::kInt64:
      return static_cast<double>(i);
    case GgufType::kFloat32: case GgufType::kFloat64:
      return f;
    default:
      return std::nullopt;
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = kv.find(key);
  return it == kv.end() ? nullptr : &it->second;
}

std::optional<double> GgufFile::number(const std::string& key) const {
  const GgufValue* v = find(key);
  return v ? v->number() : std::nullopt;
}

std::optional<std::string> GgufFile::string(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v || v->type != GgufType::kString) return std::nullopt;
  return v->s;
}

Result<GgufFile> parse_gguf(const uint8_t* data, size_t size, const std::string& name) {
  ByteSource src(data, size);
  auto r = Parser(src, name).run();
  if (r) r->path = name;
  return r;
}

Result<GgufFile> read_gguf(RandomAccessFile& file, const std::string& name) {
  ByteSource src(file);
  auto r = Parser(src, name).run();
  if (r) r->path = name;
  return r;
}

Result<GgufFile> read_gguf(const FileSystem& files, const std::string& path) {
  auto file = files.open(path);  // the FileSystem view fit is handed (sources/files.h reads), not a system call
  if (!file) return file.error();
  if ((*file)->kind() != FileKind::regular)
    return make_error(path + ": not a regular file (a FIFO, a device or a socket)");
  return read_gguf(**file, path);
}

}  // namespace aimem::fit
