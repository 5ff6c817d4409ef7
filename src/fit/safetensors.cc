// safetensors headers: 8-byte little-endian length N, then N bytes of JSON
// naming every tensor's dtype, shape and byte range in the data section that
// follows. Only the header is read (at offsets, through the caller's
// core/file_system.h view), so a 200 GB shard costs one small read; every
// number in it is checked against the file before it is trusted.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/doc_reader.h"
#include "fit/hf.h"

namespace aimem::fit {
namespace {

// safetensors itself refuses headers over 100 MB (MAX_HEADER_SIZE); the
// largest real ones (DeepSeek-V3 shards) are a few hundred KiB. aimem reads at
// most 16 MB, which keeps `aimem fit` under 64 MiB on any file.
constexpr uint64_t kMaxHeader = 16'000'000;

struct DtypeBits {
  std::string_view name;
  uint32_t bits;
};

// The safetensors Dtype enum (safetensors/src/tensor.rs); sub-byte types are
// packed and a tensor's bit count must be a whole number of bytes.
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8},    {"F4", 4},          {"F6_E2M3", 6},     {"F6_E3M2", 6},
    {"U8", 8},      {"I8", 8},          {"F8_E5M2", 8},     {"F8_E4M3", 8},
    {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},
    {"U16", 16},    {"F16", 16},        {"BF16", 16},       {"I32", 32},
    {"U32", 32},    {"F32", 32},        {"C64", 64},        {"F64", 64},
    {"I64", 64},    {"U64", 64},
};

const DtypeBits* find_dtype(std::string_view s) {
  for (const auto& d : kDtypes)
    if (d.name == s) return &d;
  return nullptr;
}

std::vector<std::string_view> segments(std::string_view name) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    out.push_back(name.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_vision(std::string_view name) {
  for (std::string_view key : {"vision_tower", "multi_modal_projector", "vision_model",
                               "vision_encoder", "mm_projector", "vision_embed"})
    if (name.find(key) != std::string_view::npos) return true;
  return name.rfind("visual.", 0) == 0 || name.find(".visual.") != std::string_view::npos;
}

// Scales, zero points, group indices and bitsandbytes state: storage that
// belongs to a quantized weight but is not itself a weight.
bool is_quant_metadata(const std::vector<std::string_view>& seg) {
  for (size_t i = 0; i + 1 < seg.size(); ++i)
    if (seg[i] == "quant_state") return true;  // bnb: weight.quant_state.bitsandbytes__nf4
  std::string_view last = seg.back();
  for (std::string_view s : {"scales", "qzeros", "g_idx", "weight_scale", "weight_scale_inv",
                             "input_scale", "absmax", "quant_map", "nested_absmax",
                             "nested_quant_map", "weight_zero_point", "zeros", "SCB",
                             "weight_g_idx", "weight_shape", "weight_scale_2",
                             "weight_global_scale", "input_global_scale", "k_scale",
                             "v_scale", "output_scale", "input_zero_point"})
    if (last == s) return true;
  // gpt-oss MXFP4: gate_up_proj_scales next to gate_up_proj_blocks.
  return ends_with(last, "_scales");
}

// model.layers.N. / layers.N. / transformer.h.N. / blocks.N. (and BERT's
// layer.N.) anywhere in the name.
int layer_of(const std::vector<std::string_view>& seg) {
  for (size_t i = 0; i + 1 < seg.size(); ++i) {
    std::string_view s = seg[i];
    if ((s == "layers" || s == "h" || s == "blocks" || s == "layer") && all_digits(seg[i + 1]))
      return std::stoi(std::string(seg[i + 1]));
  }
  return -1;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// A header's position in its file: tensor data follows the JSON.
struct Where {
  const std::string& name;  // the file, for messages
  uint64_t file_size;
  uint64_t data_start;
};

Error bad_tensor(const Where& w, const std::string& tname, const std::string& what) {
  return make_error(fmt::format("{}: tensor '{}': {}", w.name, tname, what));
}

// The bytes a dtype and shape need; the shape's JSON types already checked.
Result<uint64_t> tensor_bytes(const Where& w, const std::string& tname, const std::string& dtype,
                              const DtypeBits& info, const std::vector<uint64_t>& shape) {
  uint64_t elems = 1;
  bool overflow = false;
  for (uint64_t v : shape) {
    if (v != 0 && elems > UINT64_MAX / v) overflow = true;
    else elems *= v;
  }
  if (overflow || elems > UINT64_MAX / info.bits)
    return bad_tensor(w, tname, fmt::format("shape {} overflows 64 bits", shape_text(shape)));
  uint64_t bits = elems * info.bits;
  if (bits % 8 != 0)
    return bad_tensor(w, tname, fmt::format("{} {} is {} bits, not a whole number of bytes", dtype,
                                            shape_text(shape), bits));
  return bits / 8;
}

// Checks data_offsets [begin, end) against the size and the file, and makes
// the Tensor.
Result<Tensor> place_tensor(const Where& w, const std::string& tname, const std::string& dtype,
                            const std::vector<uint64_t>& shape, uint64_t need, uint64_t begin,
                            uint64_t end) {
  if (end < begin)
    return bad_tensor(w, tname, fmt::format("data_offsets [{}, {}] end before they begin", begin, end));
  if (end - begin != need)
    return bad_tensor(w, tname, fmt::format("data_offsets [{}, {}] but {} {} needs {} bytes", begin,
                                            end, dtype, shape_text(shape), need));
  if (end > w.file_size - w.data_start)
    return bad_tensor(w, tname, fmt::format("data_offsets [{}, {}] run past the end of the file ({} "
                                            "bytes, data from byte {}): the file is truncated",
                                            begin, end, w.file_size, w.data_start));
  Tensor t;
  t.name = tname;
  t.dtype = dtype;
  t.bytes = need;
  t.offset = begin;  // within the data section, as for GGUF
  // GGUF order: ne[0] is the last (contiguous) dimension. Shapes of more
  // than 4 dims (conv kernels) fold their outer dims into ne[3].
  size_t nd = shape.size();
  t.n_dims = static_cast<uint32_t>(std::min<size_t>(nd, 4));
  for (size_t i = 0; i < nd; ++i) {
    size_t k = std::min<size_t>(i, 3);
    uint64_t v = shape[nd - 1 - i];
    if (i < 4) t.ne[k] = v;
    else t.ne[3] *= v;  // cannot overflow: the whole product did not
  }
  auto seg = segments(tname);
  t.vision = is_vision(tname);
  t.layer = t.vision ? -1 : layer_of(seg);  // a vision block is not a decoder block
  t.quant_metadata = is_quant_metadata(seg);
  t.expert = std::find(seg.begin(), seg.end(), std::string_view("experts")) != seg.end();
  return t;
}

struct Range { uint64_t begin, end; size_t index; };

// Overlapping ranges would count the same bytes twice.
Result<std::vector<Tensor>> without_overlaps(std::vector<Tensor> out, std::vector<Range> ranges,
                                             const std::string& name) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  for (size_t i = 1; i < ranges.size(); ++i) {
    const Range& p = ranges[i - 1];
    const Range& r = ranges[i];
    if (r.begin < p.end && r.end > r.begin)
      return make_error(fmt::format("{}: tensors '{}' [{}, {}] and '{}' [{}, {}] overlap", name,
                                    out[p.index].name, p.begin, p.end, out[r.index].name,
                                    r.begin, r.end));
  }
  return out;
}

// One tensor's entry as the fast path reads it.
struct Entry {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
};

// The fast path: a SAX pass over the JSON that keeps each tensor's dtype,
// shape and data_offsets and builds no DOM (30 shards of a 70B model cost
// half as much). It accepts only a header whose every field has the JSON
// type the format asks for; anything else (invalid JSON, a wrong type, a
// negative or fractional number, a missing field, a repeated key) stops it,
// and the DOM path below reads the header again to put the problem in the
// same words as always.
class EntrySax final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<Entry> entries;

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }  // negative: not ours
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool number_unsigned(number_unsigned_t v) override {
    if (skip_ > 0) return true;
    if (depth_ != 3) return false;
    if (field_ == Field::kShape) {
      cur_.shape.push_back(v);
      return true;
    }
    if (field_ == Field::kOffsets && n_offsets_ < 2) {
      (n_offsets_++ == 0 ? cur_.begin : cur_.end) = v;
      return true;
    }
    return false;
  }
  bool string(string_t& v) override {
    if (depth_ != 2 || field_ != Field::kDtype || skip_ > 0) return scalar();
    cur_.dtype = std::move(v);
    return true;
  }
  bool start_object(std::size_t) override {
    if (skip_ > 0) return ++skip_, true;
    if (depth_ == 0 || (depth_ == 1 && !metadata_)) return ++depth_, true;
    if (depth_ == 1 && metadata_) return skip_ = 1, true;
    return depth_ == 2 && field_ == Field::kOther ? (skip_ = 1, true) : false;
  }
  bool end_object() override {
    if (skip_ > 0) return end_skipped();
    if (depth_ == 2) {
      if (seen_ != kAll) return false;  // a field missing: the DOM path names it
      entries.push_back(std::move(cur_));
      cur_ = Entry{};
      seen_ = 0;
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (skip_ > 0) return ++skip_, true;
    if (depth_ == 1 && metadata_) return skip_ = 1, true;
    if (depth_ != 2) return false;
    if (field_ == Field::kOther) return skip_ = 1, true;
    if (field_ != Field::kShape && field_ != Field::kOffsets) return false;
    n_offsets_ = 0;
    ++depth_;
    return true;
  }
  bool end_array() override {
    if (skip_ > 0) return end_skipped();
    if (depth_ != 3 || (field_ == Field::kOffsets && n_offsets_ != 2)) return false;
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (skip_ > 0) return true;
    if (depth_ == 1) {
      metadata_ = k == "__metadata__";
      cur_.name = std::move(k);
      return true;
    }
    if (depth_ != 2) return false;
    field_ = k == "dtype" ? Field::kDtype : k == "shape" ? Field::kShape
           : k == "data_offsets" ? Field::kOffsets : Field::kOther;
    const unsigned bit = field_ == Field::kOther ? 0 : 1u << static_cast<int>(field_);
    if (seen_ & bit) return false;  // a repeated field: the DOM keeps the last
    seen_ |= bit;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  enum class Field { kDtype, kShape, kOffsets, kOther };
  static constexpr unsigned kAll = 7;

  // A scalar is ours only as a skipped value (metadata, an unknown field).
  bool scalar() {
    if (skip_ > 0) return true;
    if (depth_ == 1 && metadata_) return true;
    return depth_ == 2 && field_ == Field::kOther;
  }
  bool end_skipped() {
    --skip_;
    return true;
  }
  int depth_ = 0;  // 1 inside the header object, 2 inside an entry, 3 in its array
  int skip_ = 0;   // nesting depth inside a value being skipped
  bool metadata_ = false;
  Field field_ = Field::kOther;
  unsigned seen_ = 0;
  int n_offsets_ = 0;
  Entry cur_;
};

// The fast path's tensors, or nullopt where the DOM path must read it.
std::optional<Result<std::vector<Tensor>>> parse_sax(std::string_view text, const Where& w) {
  EntrySax sax;
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &sax)) return std::nullopt;
  auto& entries = sax.entries;
  // The DOM holds an object's members sorted by key, and keeps the last of
  // a repeated one; the tensors come out in that order.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i].name == entries[i - 1].name) return std::nullopt;
  std::vector<Tensor> out;
  out.reserve(entries.size());
  std::vector<Range> ranges;
  ranges.reserve(entries.size());
  for (const Entry& e : entries) {
    const DtypeBits* info = find_dtype(e.dtype);
    if (!info) return Result<std::vector<Tensor>>(bad_tensor(w, e.name, fmt::format("unknown dtype '{}'", e.dtype.substr(0, 40))));
    auto need = tensor_bytes(w, e.name, e.dtype, *info, e.shape);
    if (!need) return Result<std::vector<Tensor>>(need.error());
    auto t = place_tensor(w, e.name, e.dtype, e.shape, *need, e.begin, e.end);
    if (!t) return Result<std::vector<Tensor>>(t.error());
    ranges.push_back({e.begin, e.end, out.size()});
    out.push_back(std::move(*t));
  }
  return without_overlaps(std::move(out), std::move(ranges), w.name);
}

// Parses the JSON of a header of `n` bytes from a file of `file_size` bytes.
Result<std::vector<Tensor>> parse_json(std::string_view text, uint64_t file_size,
                                       const std::string& name) {
  const Where w{name, file_size, 8 + text.size()};  // tensor data follows the header
  // Writers pad the header to 8 bytes with spaces; some older ones with NULs.
  while (!text.empty() && (text.back() == ' ' || text.back() == '\0' || text.back() == '\n'))
    text.remove_suffix(1);
  if (auto fast = parse_sax(text, w)) return std::move(*fast);
  // The DOM path (odd headers, and errors in the usual words) is bounded
  // before it allocates (core/doc_reader.h).
  const doc::Shape shape = doc::scan_json(text);
  if (shape.deep_line > 0)
    return make_error(fmt::format("{}: the header is nested too deep (limit {}; line {}, column {} of the JSON)", name,
                                  doc::kMaxDepth, shape.deep_line, shape.deep_column));
  if (shape.nodes > doc::kMaxJsonNodes)
    return make_error(fmt::format("{}: the header holds about {} JSON values in a shape aimem reads only up to {} of",
                                  name, shape.nodes, doc::kMaxJsonNodes));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1 within the JSON; the file adds the 8-byte length.
    return make_error(fmt::format("{}: the header is not valid JSON (at byte {} of the file): {}",
                                  name, 8 + (e.byte > 0 ? e.byte - 1 : 0), e.what()));
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: the header is not valid JSON: {}", name, e.what()));
  }
  if (!j.is_object())
    return make_error(fmt::format("{}: the header is JSON {} but must be an object of tensors",
                                  name, j.type_name()));

  std::vector<Tensor> out;
  out.reserve(j.size());
  std::vector<Range> ranges;
  ranges.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& tname = it.key();
    if (tname == "__metadata__") continue;
    const auto& e = it.value();
    auto bad = [&](const std::string& what) { return bad_tensor(w, tname, what); };
    if (!e.is_object()) return bad(fmt::format("entry is JSON {}, expected an object", e.type_name()));
    auto dt = e.find("dtype");
    if (dt == e.end()) return bad("missing 'dtype'");
    if (!dt->is_string()) return bad(fmt::format("'dtype' is JSON {}, expected a string", dt->type_name()));
    const std::string& dtype = dt->get_ref<const std::string&>();
    const DtypeBits* info = find_dtype(dtype);
    if (!info) return bad(fmt::format("unknown dtype '{}'", dtype.substr(0, 40)));

    auto sh = e.find("shape");
    if (sh == e.end()) return bad("missing 'shape'");
    if (!sh->is_array()) return bad(fmt::format("'shape' is JSON {}, expected an array", sh->type_name()));
    std::vector<uint64_t> shape;
    shape.reserve(sh->size());
    for (const auto& d : *sh) {
      if (d.is_number_integer() && !d.is_number_unsigned() && d.get<int64_t>() < 0)
        return bad(fmt::format("negative dimension {} in 'shape'", d.get<int64_t>()));
      if (!d.is_number_unsigned())
        return bad(fmt::format("'shape' holds JSON {}, expected non-negative integers", d.type_name()));
      shape.push_back(d.get<uint64_t>());
    }
    auto need = tensor_bytes(w, tname, dtype, *info, shape);
    if (!need) return need.error();

    auto off = e.find("data_offsets");
    if (off == e.end()) return bad("missing 'data_offsets'");
    if (!off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      return bad(fmt::format("'data_offsets' is {}, expected [begin, end] (two non-negative integers)",
                             off->dump().substr(0, 60)));
    uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    auto t = place_tensor(w, tname, dtype, shape, *need, begin, end);
    if (!t) return t.error();
    ranges.push_back({begin, end, out.size()});
    out.push_back(std::move(*t));
  }
  return without_overlaps(std::move(out), std::move(ranges), name);
}

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Error header_length_error(const std::string& name, uint64_t n, uint64_t file_size) {
  if (n > kMaxHeader)
    return make_error(fmt::format(
        "{}: header length {} is over the {} byte limit (not a safetensors file, or corrupt)",
        name, n, kMaxHeader));
  return make_error(fmt::format(
      "{}: header length {} runs past the end of the file ({} bytes): truncated or not a "
      "safetensors file",
      name, n, file_size));
}

}  // namespace

Result<std::vector<Tensor>> parse_safetensors_header(const uint8_t* data, size_t size,
                                                     const std::string& name) {
  if (size < 8)
    return make_error(fmt::format("{}: {} bytes, too short for the 8-byte header length", name, size));
  uint64_t n = le64(data);
  if (n > kMaxHeader || n > size - 8) return header_length_error(name, n, size);
  std::string_view text(reinterpret_cast<const char*>(data) + 8, n);
  return parse_json(text, size, name);
}

Result<std::vector<Tensor>> read_safetensors_header(const FileSystem& files, const std::string& path) {
  auto opened = files.open(path);  // the FileSystem view fit is handed (sources/files.h reads), not a system call
  if (!opened) return opened.error();
  RandomAccessFile& file = **opened;
  if (file.kind() == FileKind::directory)
    return make_error(fmt::format("{}: is a directory, not a safetensors file", path));
  if (file.kind() != FileKind::regular)
    return make_error(fmt::format("{}: not a regular file (a FIFO, a device or a socket), not a safetensors file", path));
  const uint64_t size = file.size();

  // 0 when all len bytes were read, else the errno of the failure (0 too for
  // a file that ended early: "short read").
  int read_errno = 0;
  auto read_at = [&](uint8_t* buf, size_t len, uint64_t off) -> bool {
    size_t done = 0;
    while (done < len) {
      int64_t r = file.read_at(buf + done, len - done, off + done);
      if (r <= 0) {
        read_errno = r < 0 ? int(-r) : 0;
        return false;
      }
      done += static_cast<size_t>(r);
    }
    return true;
  };

  if (size < 8)
    return make_error(fmt::format("{}: {} bytes, too short for the 8-byte header length", path, size));
  uint8_t head[8];
  if (!read_at(head, 8, 0))
    return make_error(fmt::format("{}: cannot read the header length: {}", path,
                                  read_errno ? std::strerror(read_errno) : "short read"));
  uint64_t n = le64(head);
  // Checked before allocating: a hostile length must not become an allocation.
  if (n > kMaxHeader || n > size - 8) return header_length_error(path, n, size);
  std::string text(n, '\0');
  if (!read_at(reinterpret_cast<uint8_t*>(text.data()), n, 8))
    return make_error(fmt::format("{}: cannot read the {} byte header: {}", path, n,
                                  read_errno ? std::strerror(read_errno) : "short read"));
  return parse_json(text, size, path);
}

}  // namespace aimem::fit
