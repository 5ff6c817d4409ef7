// TensorFlow and JAX / XLA allocation failures (both use the BFC allocator and
// the RESOURCE_EXHAUSTED status, so one recognizer sees both).
//
// TensorFlow 1.x / 2.x:
//   ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on
//       /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc [Op:...]
//   ResourceExhaustedError: OOM when allocating tensor of shape [563354,256] and type float
//   	 [[Node: embeddings/Adam/Initializer/zeros = Const[...]]]      (the op on the next line, 1.x)
//   	 [[{{node model/conv2d/Conv2D}}]]                               (2.x)
//   Resource exhausted: OOM when allocating tensor ...                 (C++ status text)
//   W bfc_allocator.cc] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB [(rounded to N)]
//       [The caller indicates that this is not a failure, ...]        (a warning then: no failure)
//   ResourceExhaustedError: failed to allocate memory [Op:AddV2]       (2.x eager)
//   InternalError: Dst tensor is not initialized.  [[node save/RestoreV2 ...]]
//       (the copy of a tensor to the device found no room for its destination: TensorFlow's
//        GPU out-of-memory under another name; stronger beside a BFC Stats block at its Limit)
// JAX / XLA:
//   RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.
//   XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 1234 bytes. / ... trying to allocate 5.24GiB.
//   RESOURCE_EXHAUSTED: Failed to allocate request for 1.00GiB (1073741824B) on device ordinal 0
//   RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 1.62G. That was not possible.
//       There are 1.03G free.                                          (TPU)
//   Resource exhausted: Attempting to allocate 180.59M. That was not possible. There are 142.58M free.; (0x3x0_HBM1)
//   Resource exhausted: From /job:tpu_worker/replica:0/task:0:         (torch_xla: the status, then the refusal
//   Attempting to reserve 5.31G at the bottom of memory. That was not possible. There are 4.61G free, ...   below it)
//   RESOURCE_EXHAUSTED: Error loading program 'jit__multi_slice': Attempting to reserve 6.14G at the bottom of
//       memory. That was not possible. There are 5.38G free, 0B reserved, and 5.38G reservable.   (TPU, a program's load)
//   (in memory space vmem, smem or sflag, a TPU core's on-chip scratch, it is a compiler limit: a look-alike)
//   RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Compilation failure: Aborting compilation early because it's
//       unlikely to have enough memory. Requires 2.22E, has 15.48G available.   (a request past any device: a size bug)
//   RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 17.70G of
//       15.48G hbm. Exceeded hbm capacity by 2.22G.
//   XLA_PYTHON_CLIENT_MEM_FRACTION=.75: preallocating 75% of GPU memory (60.0 GiB of 80.0 GiB)   (healthy)
// Caps the user puts on the pool (runtime_setting, detail "device cap ..."):
//   XLA_PYTHON_CLIENT_MEM_FRACTION=.10 python train.py          (a fraction of the device, on the command line)
//   info(pjrt): CUDA client: preallocate=true memory_fraction=0.75   (a PJRT client's pool, as ZML prints it)
//   tf.config.experimental.set_virtual_device_configuration(gpus[0], [...VirtualDeviceConfiguration(memory_limit=1024)])
//   tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=4096)])  (MB)
//   config.gpu_options.per_process_gpu_memory_fraction = 0.3   (TF 1.x; also tf.GPUOptions(per_process_gpu_memory_fraction=0.3))
//   export FLAGS_fraction_of_gpu_memory_to_use=0.3            (PaddlePaddle's pool; its own OOM report states the
//   2) FLAGS_fraction_of_gpu_memory_to_use is 0.50 now, ...     value in use: "... is 0.50 now, please set it higher")
//
// For a TF tensor the failed size is shape x dtype size. A tensor of rank >= 3
// whose first dimension is > 1 is a batch of activations (detail "batch"); a
// variable or its initializer (the op line names Initializer / Variable /
// Assign) is not. A JAX failure inside an execute call of a compiled program
// (frames _execute_compiled, compiled.execute, ExecuteReplicated, pjit...) is
// an activation peak (detail "activation").
//
// The BFC allocator's "ran out of memory" line comes before the exception; it
// is held and replaced by the exception's fact when one follows, so the
// incident's first fact carries the shape. Between them the allocator prints
// its pool's figures:
//   Stats:
//   Limit:                 10468941005        -> total (the allocator's pool, not the device); beside TF 1.x's
//     "totalMemory: 5.93GiB freeMemory: 5.52GiB", a pool under half the free memory was capped: limit, and
//     the device's total
//   InUse:                  6646531840        -> allocated
// so the diagnosis can tell a pool with room in pieces (fragmentation) from a full one.
#include <string>
#include <utility>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"OOM when allocating tensor"},
    {"ran out of memory trying to allocate"},
    {"failed to allocate memory [Op:"},
    {"Dst tensor is not initialized", kCompanion},
    {"RESOURCE_EXHAUSTED: "},
    {"Resource exhausted: ", kCompanion},
    // The TPU runtime's refusal, after its status or on the line below it (torch_xla, old jaxlib):
    // "Attempting to reserve 5.31G at the bottom of memory. That was not possible. There are 4.61G free, ..."
    {"Attempting to (allocate|reserve) [0-9.]+ ?[KMGTP]?i?B?[. ].*That was not possible", kRegex},
    {"Ran out of memory trying to allocate"},
    {"Ran out of memory in memory space "},
    {"[[Node: ", kContext},
    {"[[{{node ", kContext},
    {"_execute_compiled", kContext},
    {"compiled.execute", kContext},
    {"ExecuteReplicated", kContext},
    {"execute_sharded", kContext},
    {"_pjit_call_impl", kContext},
    {"XLA_PYTHON_CLIENT_MEM_FRACTION", kContext},
    {"FLAGS_fraction_of_gpu_memory_to_use", kContext},
    {"client: preallocate=", kContext},  // a PJRT client's own line (ZML): "CUDA client: preallocate=true memory_fraction=0.75"
    {"DeviceConfiguration(memory_limit", kContext},
    {"per_process_gpu_memory_fraction", kContext},
    {"^[ \t]*(Limit|InUse):\\s+[0-9]+\\s*$", kRegex | kContext},
    {"totalMemory: [0-9.]+[KMGT]i?B freeMemory: ", kRegex | kContext},
    // TensorFlow 2's device properties and the device it created from what was free:
    // "... coreCount: 40 deviceMemorySize: 14.75GiB deviceMemoryBandwidth: ...",
    // "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 13 MB memory: -> device: 0, ..."
    {"deviceMemorySize: [0-9.]+[KMGT]i?B", kRegex | kContext},
    {"Created (TensorFlow )?device .*GPU:[0-9]+.* with [0-9]+ MB memory", kRegex | kContext},
    // TensorFlow 1.0's properties, one per line ("Total memory: 3.94GiB", "Free memory: 212.06MiB").
    {"^[ \t]*(Total|Free) memory: [0-9.]+[KMGT]i?B[ \t]*$", kRegex | kContext},
};

constexpr uint64_t kRepeatWindow = 300;
constexpr uint64_t kNodeWindow = 4;        // the op line follows the OOM line
constexpr uint64_t kAllocatorWindow = 3000;  // BFC dump between the allocator warning and the exception
constexpr uint64_t kExecuteWindow = 40;    // execute frames shortly before a JAX OOM

std::optional<uint64_t> dtype_size(std::string_view t) {
  struct D {
    std::string_view name;
    uint64_t size;
  };
  static constexpr D kTypes[] = {
      {"float", 4},   {"float32", 4}, {"half", 2},    {"float16", 2}, {"bfloat16", 2}, {"double", 8},
      {"float64", 8}, {"int32", 4},   {"int64", 8},   {"int16", 2},   {"int8", 1},     {"uint8", 1},
      {"uint16", 2},  {"uint32", 4},  {"uint64", 8},  {"bool", 1},    {"complex64", 8}, {"complex128", 16},
      {"qint8", 1},   {"quint8", 1},  {"qint32", 4},
  };
  for (const D& d : kTypes)
    if (t == d.name) return d.size;
  return std::nullopt;
}

struct Shape {
  std::vector<uint64_t> dims;
  bool ok = false;
};

// "shape[128,128,109,109]" or "shape [563354,256]".
Shape parse_shape(std::string_view s) {
  Shape sh;
  auto v = text::after(s, "shape");
  if (!v) return sh;
  std::string_view t = text::trim_left(*v);
  if (t.empty() || t[0] != '[') return sh;
  t.remove_prefix(1);
  size_t close = t.find(']');
  if (close == std::string_view::npos || close > 256) return sh;
  std::string_view inner = t.substr(0, close);
  if (text::trim(inner).empty()) {
    sh.ok = true;  // a scalar
    return sh;
  }
  for (std::string_view d : text::split(inner, ',')) {
    auto n = text::parse_u64(text::trim(d));
    if (!n || sh.dims.size() >= 16) return sh;
    sh.dims.push_back(*n);
  }
  sh.ok = true;
  return sh;
}

std::optional<uint64_t> bytes_of(const Shape& sh, uint64_t elem) {
  uint64_t n = elem;
  for (uint64_t d : sh.dims) {
    if (d != 0 && n > UINT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

bool is_variable_op(std::string_view s) {
  return text::contains(s, "Initializer") || text::contains(s, "Variable") || text::contains(s, "/Assign") ||
         text::contains(s, "VarHandleOp");
}

class TensorflowJax final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "_execute_compiled") || text::contains(s, "compiled.execute") ||
        text::contains(s, "ExecuteReplicated") || text::contains(s, "execute_sharded") || text::contains(s, "_pjit_call_impl")) {
      last_execute_ = line.number;
      have_execute_ = true;
    }
    if (pending_ && line.number > pending_line_ + (pending_is_allocator_ ? kAllocatorWindow : kNodeWindow)) flush(out);
    if (bfc_stat(line, s)) return;
    if (device_memory(line, s, out)) return;
    if (created_device(line, s, out)) return;

    if (auto p = s.find("OOM when allocating tensor"); p != std::string_view::npos) return tf_tensor(line, s, p, out);
    if (auto p = text::ifind(s, "ran out of memory trying to allocate"); p != std::string_view::npos) {
      // "The caller indicates that this is not a failure" (a convolution
      // workspace the op can do without): a warning, never the failure.
      if (text::contains(s, "this is not a failure")) return;
      return allocator(line, s, p, out);
    }
    if (auto p = s.find("failed to allocate memory [Op:"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 20) || repeated("eager", line)) return;
      Fact f = make_fact(line, FactKind::gpu_oom, Family::tensorflow);
      f.layer = Layer::gpu_vram;
      f.strength = 0.8f;
      f.detail = "TensorFlow eager op";
      return replace_pending_with(std::move(f), out);
    }
    if (auto p = s.find("Dst tensor is not initialized"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 20) || repeated("dst", line)) return;
      Fact f = make_fact(line, FactKind::gpu_oom, Family::tensorflow);
      f.layer = Layer::gpu_vram;
      // The allocator's pool full (InUse at its Limit) in the Stats block above says so outright.
      const bool full = bfc_limit_ && bfc_in_use_ && *bfc_in_use_ * 100 >= *bfc_limit_ * 99;
      f.strength = full ? 0.85f : 0.7f;
      f.detail = "TensorFlow could not place a tensor on the device (Dst tensor is not initialized)";
      return replace_pending_with(std::move(f), out);
    }
    if (auto p = s.find("RESOURCE_EXHAUSTED: "); p != std::string_view::npos) return xla(line, s, p, out);
    // TensorFlow 1.x / early jaxlib spelled the status "Resource exhausted: ".
    if (auto p = s.find("Resource exhausted: "); p != std::string_view::npos && text::icontains(s, "of memory")) return xla(line, s, p, out);
    if (auto p = s.find("Resource exhausted: "); p != std::string_view::npos && text::contains(s, "That was not possible"))
      return xla(line, s, p, out);
    // TPUEstimator's wording (TensorFlow 1.x): "ResourceExhaustedError: Compilation failure: Ran out of memory in memory space vmem."
    if (auto p = s.find("Ran out of memory in memory space "); p != std::string_view::npos) return xla(line, s, p, out, /*bare=*/true);
    // The TPU's refusal on a line of its own, below "Resource exhausted: From /job:tpu_worker/...".
    if (auto p = s.find("Attempting to "); p != std::string_view::npos && text::contains(s, "That was not possible") &&
                                            !text::contains(s, "RESOURCE_EXHAUSTED"))
      return xla(line, s, p, out, /*bare=*/true);
    if (text::contains(s, "[[Node: ") || text::contains(s, "[[{{node ")) return node_line(line, s, out);
    if (text::contains(s, "XLA_PYTHON_CLIENT_MEM_FRACTION")) return preallocation(line, s, out);
    if (text::contains(s, "FLAGS_fraction_of_gpu_memory_to_use")) return paddle_fraction(line, s, out);
    if (text::contains(s, "client: preallocate=") && text::contains(s, "memory_fraction=")) return pjrt_client(line, s, out);
    if (text::contains(s, "DeviceConfiguration(memory_limit") || text::contains(s, "per_process_gpu_memory_fraction")) return cap(line, s, out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  bool pending_ = false, pending_is_allocator_ = false;
  uint64_t pending_line_ = 0;
  Fact pending_fact_;
  Shape pending_shape_;
  uint64_t last_execute_ = 0;
  bool have_execute_ = false;

  RepeatFilter repeats_{kRepeatWindow};
  bool repeated(std::string_view key, const Line& line) { return repeats_.repeated(key, line.number); }

  // "Limit: N" / "InUse: N" of the BFC allocator's Stats block.
  std::optional<uint64_t> bfc_limit_, bfc_in_use_;
  uint64_t bfc_line_ = 0;
  bool bfc_stat(const Line& line, std::string_view s) {
    std::string_view t = text::trim(s);
    bool limit = text::starts_with(t, "Limit:");
    if (!limit && !text::starts_with(t, "InUse:")) return false;
    auto n = text::parse_u64(text::trim(t.substr(6)));  // "Limit:" and "InUse:" are both 6 bytes
    if (!n) return true;
    (limit ? bfc_limit_ : bfc_in_use_) = n;
    bfc_line_ = line.number;
    return true;
  }
  // TensorFlow 1.x's device properties: "totalMemory: 5.93GiB freeMemory: 5.52GiB"
  // (1.0: "Total memory: 3.94GiB" and "Free memory: 212.06MiB" on the next line).
  std::optional<uint64_t> device_total_, device_free_;
  // Printed before TensorFlow allocates anything: a quarter of the device
  // and a GiB at least already gone is held by other processes (another
  // job's, an earlier notebook kernel's), a context for the diagnosis.
  bool device_memory(const Line& line, std::string_view s, FactSink& out) {
    auto t = text::after(s, "totalMemory: ");
    auto f = text::after(s, "freeMemory: ");
    // TensorFlow 1.0 printed them on lines of their own, total first.
    std::string_view trimmed = text::trim(s);
    if (!t && !f && text::starts_with(trimmed, "Total memory: ")) {
      total_line_ = line.number;
      total_text_ = std::string(trimmed.substr(14, 24));
      return true;
    }
    if (!t && !f && text::starts_with(trimmed, "Free memory: ") && total_line_ && line.number <= total_line_ + 2) {
      t = std::string_view(total_text_);
      f = trimmed.substr(13);
    }
    if (!t || !f) return false;
    device_total_ = units::parse_log_size(*t);
    device_free_ = units::parse_log_size(*f);
    if (device_total_ && device_free_ && *device_free_ <= *device_total_ && !held_outside_reported_) {
      const uint64_t held = *device_total_ - *device_free_;
      if (held * 4 >= *device_total_ && held >= units::GiB) {
        Fact g = make_fact(line, FactKind::gpu_state, Family::tensorflow);
        g.total = device_total_;
        g.free = device_free_;
        g.usage = held;
        g.other_processes = held;
        g.detail = "TensorFlow found " + units::format_bytes(*device_free_) + " of " + units::format_bytes(*device_total_) +
                   " free before allocating anything";
        out.add(std::move(g));
        held_outside_reported_ = true;
      }
    }
    return true;
  }
  bool held_outside_reported_ = false;
  uint64_t total_line_ = 0;

  // TensorFlow creates its GPU device with what is free when it starts (less
  // a margin, unless a cap says otherwise): a device far smaller than the
  // card ("with 13 MB memory" on a 14.75 GiB T4), or than the device an
  // earlier process created on the same GPU in the same log (a second
  // runner's 664 MB after the first's 13792 MB), says other processes held
  // the rest before it started. Not where a cap was set (memory_limit, a
  // fraction): that is the cap's size. On the training split every such
  // device with no cap in view was labelled another process's (2026-12-07).
  bool created_device(const Line& line, std::string_view s, FactSink& out) {
    if (auto d = text::after(s, "deviceMemorySize: ")) {
      if (!device_total_) device_total_ = units::parse_log_size(*d);
      return true;
    }
    auto c = text::after(s, "Created ");
    auto w = c ? text::after(*c, " with ") : std::nullopt;
    if (!w || !text::contains(*c, "device") || !text::contains(*w, "MB memory")) return false;
    auto mb = text::parse_u64(*w);
    size_t g = c->find("GPU:");
    if (!mb || g == std::string_view::npos) return true;
    const std::string gpu(c->substr(g, c->find_first_not_of("0123456789", g + 4) - g));
    const uint64_t bytes = *mb * units::MiB;
    uint64_t earlier = 0;
    for (const auto& [name, size] : created_)
      if (name == gpu) earlier = std::max(earlier, size);
    if (created_.size() < 16) created_.emplace_back(gpu, bytes);
    if (held_outside_reported_ || capped_) return true;
    Fact f = make_fact(line, FactKind::gpu_state, Family::tensorflow);
    if (device_total_ && bytes < *device_total_ && (*device_total_ - bytes) * 4 >= *device_total_ &&
        *device_total_ - bytes >= units::GiB) {
      f.total = device_total_;
      f.free = bytes;
      f.usage = f.other_processes = *device_total_ - bytes;
      f.detail = "TensorFlow could create its " + gpu + " device with only " + units::format_bytes(bytes) + " of " +
                 units::format_bytes(*device_total_) + ": the rest was held before it started";
    } else if (earlier >= units::GiB && bytes * 4 <= earlier) {
      f.free = bytes;
      f.usage = f.other_processes = earlier;
      f.detail = "TensorFlow could create its " + gpu + " device with only " + units::format_bytes(bytes) + " after another process's " +
                 units::format_bytes(earlier) + " on the same GPU";
    } else {
      return true;
    }
    out.add(std::move(f));
    held_outside_reported_ = true;
    return true;
  }
  std::vector<std::pair<std::string, uint64_t>> created_;
  bool capped_ = false;  // a cap on the pool was set (cap(), a fraction)
  std::string total_text_;

  // The pool's figures, when they were printed for this failure. A pool under
  // half of what the device had free when TensorFlow took it was capped
  // (per_process_gpu_memory_fraction, memory_limit): the pool is the limit,
  // the device the total.
  void attach_bfc(Fact& f, uint64_t line) {
    if (!bfc_limit_ || !bfc_in_use_ || f.layer != Layer::gpu_vram) return;
    if ((line > bfc_line_ ? line - bfc_line_ : bfc_line_ - line) > kAllocatorWindow) return;
    if (device_total_ && device_free_ && *bfc_limit_ * 2 < *device_free_ && *device_free_ <= *device_total_) {
      f.limit = bfc_limit_;
      f.total = device_total_;
      f.free = device_free_;
    }
    if (!f.total) f.total = bfc_limit_;
    if (!f.allocated) f.allocated = bfc_in_use_;
    bfc_limit_.reset();
    bfc_in_use_.reset();
  }

  void flush(FactSink& out) {
    if (pending_) attach_bfc(pending_fact_, pending_line_);
    if (pending_) out.add(std::move(pending_fact_));
    pending_ = false;
    pending_is_allocator_ = false;
    pending_fact_ = Fact{};
  }

  // An exception that follows the allocator's warning replaces it.
  void replace_pending_with(Fact f, FactSink& out) {
    attach_bfc(f, f.where.line);
    if (pending_ && pending_is_allocator_) {
      if (!f.requested) f.requested = pending_fact_.requested;
      if (!f.gpu) f.gpu = pending_fact_.gpu;
      pending_ = false;
    } else {
      flush(out);
    }
    out.add(std::move(f));
  }

  void tf_tensor(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 26)) return;
    std::string_view body = s.substr(p);
    // "(see above for traceback)" repeats of the same tensor.
    if (repeated(body.substr(0, std::min<size_t>(body.size(), 120)), line)) return;
    Shape sh = parse_shape(body);
    std::string_view dtype;
    if (auto t = text::after(body, " and type ")) dtype = text::take_until(text::trim_left(*t), " ,");
    bool host = false;
    std::optional<int> gpu;
    if (auto d = text::after(body, "device:GPU:")) {
      if (auto n = text::parse_u64(*d); n && *n < 1024) gpu = static_cast<int>(*n);
    } else if (text::contains(body, "device:CPU:")) {
      host = true;
    }
    if (auto a = text::after(body, "by allocator ")) {
      std::string_view name = text::take_until(*a, " [\t");
      if (text::starts_with(name, "GPU_")) {
        if (auto n = text::parse_u64(name.substr(4)); n && *n < 1024 && !gpu) gpu = static_cast<int>(*n);
      } else if (text::icontains(name, "cpu")) {
        host = true;
      }
    }
    Fact f = make_fact(line, host ? FactKind::host_alloc_failure : FactKind::gpu_oom, Family::tensorflow);
    f.layer = host ? Layer::host_ram : Layer::gpu_vram;
    f.strength = 0.9f;
    f.gpu = gpu;
    f.detail = host ? "TensorFlow CPU allocator" : "TensorFlow tensor";
    if (sh.ok) {
      if (auto size = dtype_size(dtype)) f.requested = bytes_of(sh, *size);
    }
    bool has_node = text::contains(body, "[[") || text::contains(body, "{{node");
    if (has_node || !sh.ok) {
      classify_tensor(f, sh, body);
      return replace_pending_with(std::move(f), out);
    }
    // Wait a few lines for the op that allocated it.
    if (pending_ && pending_is_allocator_) {
      if (!f.requested) f.requested = pending_fact_.requested;
      if (!f.gpu) f.gpu = pending_fact_.gpu;
    } else {
      flush(out);
    }
    pending_ = true;
    pending_is_allocator_ = false;
    pending_line_ = line.number;
    pending_shape_ = sh;
    classify_tensor(f, sh, {});
    pending_fact_ = std::move(f);
  }

  static void classify_tensor(Fact& f, const Shape& sh, std::string_view op) {
    if (!op.empty() && is_variable_op(op)) {
      f.detail += ", variable initialization";
      return;
    }
    if (sh.dims.size() >= 3 && sh.dims[0] > 1) f.detail += ", batch of activations";
  }

  void node_line(const Line& line, std::string_view s, FactSink& out) {
    if (!pending_ || pending_is_allocator_) return;
    if (is_variable_op(s)) {
      // Undo the batch guess: a variable's shape is not a batch.
      pending_fact_.detail = pending_fact_.kind == FactKind::host_alloc_failure ? "TensorFlow CPU allocator" : "TensorFlow tensor";
      pending_fact_.detail += ", variable initialization";
    }
    flush(out);
  }

  void allocator(const Line& line, std::string_view s, size_t p, FactSink& out) {
    // "The caller indicates that this is not a failure": TF retries with less.
    if (text::contains(s, "not a failure")) return;
    if (guards::is_mention(s, p, 36)) return;
    bool xla = text::contains(s, "xla");
    Fact f = make_fact(line, FactKind::gpu_oom, xla ? Family::jax : Family::tensorflow);
    f.layer = Layer::gpu_vram;
    f.strength = 0.85f;
    f.detail = "BFC allocator";
    f.requested = units::parse_log_size(s.substr(p + 36));
    if (auto a = text::after(s, "Allocator (")) {
      std::string_view name = text::take_until(*a, ")");
      if (text::starts_with(name, "GPU_")) {
        if (auto n = text::parse_u64(name.substr(4)); n && *n < 1024) f.gpu = static_cast<int>(*n);
      } else if (text::icontains(name, "cpu")) {
        f.kind = FactKind::host_alloc_failure;
        f.layer = Layer::host_ram;
        f.detail = "CPU BFC allocator";
      }
    }
    if (pending_ && pending_is_allocator_ && line.number <= pending_line_ + kAllocatorWindow) {
      pending_line_ = line.number;  // the allocator retries; keep the first warning
      return;
    }
    flush(out);
    pending_ = true;
    pending_is_allocator_ = true;
    pending_line_ = line.number;
    pending_fact_ = std::move(f);
  }

  // XLA's human-readable size ("15.48G", "2.22E"; tsl's HumanReadableNumBytes:
  // K, M, G, T, P, E, each 1024 times the last). Past 64 bits: the largest.
  static std::optional<uint64_t> xla_bytes(std::string_view v) {
    std::string_view rest;
    auto n = text::parse_double(v, &rest);
    if (!n || *n < 0 || rest.empty()) return std::nullopt;
    static constexpr std::string_view kUnits = "KMGTPE";
    size_t u = kUnits.find(rest[0]);
    if (u == std::string_view::npos) return std::nullopt;
    double bytes = *n;
    for (size_t i = 0; i <= u; ++i) bytes *= 1024.0;
    return bytes >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(bytes);
  }

  // `bare`: the TPU runtime's "Attempting to allocate/reserve N. That was not
  // possible." without the status before it (s.substr(p) is the message).
  void xla(const Line& line, std::string_view s, size_t p, FactSink& out, bool bare = false) {
    std::string_view body = s.substr(bare ? p : p + 20);
    bool oom = text::istarts_with(body, "Out of memory") || text::starts_with(body, "Failed to allocate") ||
               text::starts_with(body, "Error allocating device buffer") || text::contains(body, "Ran out of memory in memory space") ||
               // also after what it was doing: "Error loading program 'jit_f': Attempting to reserve 6.14G ..."
               ((text::contains(body, "Attempting to allocate ") || text::contains(body, "Attempting to reserve ")) &&
                text::contains(body, "That was not possible")) ||
               // The TPU compiler giving up before it runs out: "Aborting compilation early because it's
               // unlikely to have enough memory. Requires 2.22E, has 15.48G available."
               text::contains(body, "unlikely to have enough memory");
    if (!oom) return;  // RESOURCE_EXHAUSTED is also used for quotas and rate limits
    if (text::contains(s, "OOM when allocating")) return;  // TF's text, handled above
    if (guards::is_mention(s, p, 20)) return;
    if (repeated(body.substr(0, std::min<size_t>(body.size(), 120)), line)) return;
    if (auto space = text::after(body, "Ran out of memory in memory space "); space && !text::starts_with(*space, "hbm")) {
      // A TPU core's on-chip scratch (vmem, smem, sflag) that one compiled
      // program's fusion outgrew: "It should not be possible to run out of
      // vmem - please file a bug against XLA." The device's HBM did not run out.
      out.add(look_alike(line, Family::jax, 0.7f,
                         "XLA ran out of a TPU core's on-chip scratch memory compiling a program (" +
                             std::string(text::take_until(*space, ". ,")).substr(0, 16) + "): a compiler limit, not the device's HBM"));
      return;
    }
    Fact f = make_fact(line, FactKind::gpu_oom, Family::jax);
    f.layer = Layer::gpu_vram;
    f.strength = 0.9f;
    f.detail = "XLA";
    if (auto v = text::after(body, "trying to allocate ")) f.requested = units::parse_log_size(*v, nullptr, true);
    else if (auto v2 = text::after(body, "Out of memory allocating ")) f.requested = units::parse_log_size(*v2, nullptr, true);
    else if (auto v3 = text::after(body, "allocate request for ")) f.requested = units::parse_log_size(*v3);
    else if (auto v4 = text::after(body, "Attempting to allocate ")) f.requested = units::parse_log_size(*v4);
    else if (auto v5 = text::after(body, "Attempting to reserve ")) f.requested = units::parse_log_size(*v5);
    else if (auto v6 = text::after(body, "Requires ")) f.requested = xla_bytes(*v6);
    if (auto h = text::after(body, ", has "); h && text::contains(body, "Requires ")) f.free = xla_bytes(*h);
    if (auto fr = text::after(body, "There are ")) f.free = units::parse_log_size(*fr);
    if (auto o = text::after(body, "device ordinal ")) {
      if (auto n = text::parse_u64(*o); n && *n < 1024) f.gpu = static_cast<int>(*n);
    }
    if (auto used = text::after(body, "Ran out of memory in memory space")) {
      // "hbm. Used 17.70G of 15.48G hbm."
      if (auto of = text::after(*used, " of ")) f.total = units::parse_log_size(*of);
      f.detail = "XLA compiled program";
    } else if (have_execute_ && line.number <= last_execute_ + kExecuteWindow) {
      f.detail = "XLA activation while executing a compiled step";
    }
    replace_pending_with(std::move(f), out);
  }

  // A cap the user set on TensorFlow's pool: memory_limit in MB, or a fraction.
  void cap(const Line& line, std::string_view s, FactSink& out) {
    capped_ = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::tensorflow);
    if (auto v = text::after(s, "memory_limit")) {
      auto mb = text::parse_u64(text::trim(text::after(*v, "=").value_or("")));
      if (!mb || *mb == 0 || *mb > (uint64_t{1} << 30)) return;
      f.limit = *mb * units::MiB;
      f.detail = "device cap (memory_limit)";
    } else if (auto w = text::after(s, "per_process_gpu_memory_fraction")) {
      std::string_view t = *w;
      while (!t.empty() && (t.front() == ' ' || t.front() == '=' || t.front() == ':')) t.remove_prefix(1);
      auto r = text::parse_fraction(t);
      if (!r) return;
      f.ratio = r;
      f.detail = "device cap (per_process_gpu_memory_fraction)";
    }
    out.add(std::move(f));
  }

  // "CUDA client: preallocate=true memory_fraction=0.75": the client's pool is
  // that fraction of the device, and the BFC allocator's Limit is its size.
  void pjrt_client(const Line& line, std::string_view s, FactSink& out) {
    auto v = text::after(s, "memory_fraction=");
    auto r = v ? text::parse_fraction(*v) : std::nullopt;
    if (!r || *r <= 0 || *r > 1) return;
    out.add(device_fraction(line, Family::jax, *r, "PJRT client memory_fraction"));
  }

  // A framework's pool set to a fraction of the device: runtime_setting "device cap (<setting>)".
  static Fact device_fraction(const Line& line, Family family, double ratio, std::string_view setting) {
    Fact f = make_fact(line, FactKind::runtime_setting, family);
    f.ratio = ratio;
    f.detail = "device cap (" + std::string(setting) + ")";
    return f;
  }

  // PaddlePaddle's pool: the flag set ("FLAGS_fraction_of_gpu_memory_to_use=0.3"), or its OOM
  // report's statement of the value in use ("... is 0.50 now, please set it to a higher value").
  // Not a placeholder in advice ("=xxx").
  void paddle_fraction(const Line& line, std::string_view s, FactSink& out) {
    auto v = text::after(s, "FLAGS_fraction_of_gpu_memory_to_use");
    if (!v) return;
    std::string_view rest = *v;
    if (text::starts_with(rest, " is ")) rest.remove_prefix(4);
    else if (text::starts_with(rest, "=")) rest.remove_prefix(1);
    else return;
    auto r = text::parse_fraction(rest);
    if (!r) return;
    out.add(device_fraction(line, Family::runtime, *r, "FLAGS_fraction_of_gpu_memory_to_use"));
  }

  void preallocation(const Line& line, std::string_view s, FactSink& out) {
    // "XLA_PYTHON_CLIENT_MEM_FRACTION=.75: preallocating 75% of GPU memory (60.0 GiB of 80.0 GiB)"
    auto v = text::after(s, "XLA_PYTHON_CLIENT_MEM_FRACTION=");
    if (!v) return;
    auto r = text::parse_fraction(*v);
    if (!r) return;
    out.add(device_fraction(line, Family::jax, *r, "XLA_PYTHON_CLIENT_MEM_FRACTION"));
    if (auto of = text::after(s, " of ")) {
      if (auto total_at = text::after(*of, " of ")) {
        if (auto total = units::parse_log_size(*total_at)) {
          Fact g = make_fact(line, FactKind::gpu_state, Family::jax);
          g.total = total;
          g.detail = "JAX preallocation";
          out.add(std::move(g));
        }
      }
    }
  }
};

}  // namespace

const RecognizerEntry kTensorflowJaxEntry{
    "tensorflow_jax", Family::tensorflow, kPatterns, [] { return std::unique_ptr<Recognizer>(new TensorflowJax); }};

}  // namespace aimem
