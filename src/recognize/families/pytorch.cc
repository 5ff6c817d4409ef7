// PyTorch allocator failures, every message generation (the messages of
// c10/cuda/CUDACachingAllocator.cpp across releases). One line each:
//
//   2.2+   [torch.]OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of
//          44.53 GiB of which 263.25 MiB is free. [Process P has M memory in use. ...] [Including non-PyTorch memory,
//          this process has M memory in use.] [X allowed; ]Of the allocated memory A is allocated by PyTorch,
//          [with S allocated in private pools (e.g., CUDA Graphs),] and R is reserved by PyTorch but unallocated. ...
//   2.1    same with the typo "total capacty"
//   1.x    RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.40 GiB
//          already allocated; 0 bytes free; 3.46 GiB reserved in total by PyTorch)
//   oldest ... (GPU 0; 15.90 GiB total capacity; 10.38 GiB already allocated; 1.83 GiB free; 2.99 GiB cached)
//   HIP / XPU / MTIA / MUSA: "<dev> out of memory." with either body; torch_npu: "NPU out of memory. ... (NPU 0;
//          60.97 GiB total capacity; 58.29 GiB already allocated; 58.29 GiB current active; 291.08 MiB free; ...)"
//   MPS    MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.50 GB, max allowed: 18.13 GB).
//          Tried to allocate 256 bytes on shared pool.
//   THC    THCudaCheck FAIL file=... line=66 error=2 : out of memory
//          RuntimeError: cuda runtime error (2) : out of memory at .../THCStorage.cu:66
//   cuBLAS RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`
//          (ONNX Runtime: CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=... ; expr=cublasCreate(...))
//   fraction  torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)
//          Currently allocated     : 16.08 GiB
//          Requested               : 4.83 GiB
//          Device limit            : 22.20 GiB
//          Free (according to CUDA): 11.12 MiB
//          PyTorch limit (set by user-supplied memory fraction)
//                                  : 22.20 GiB
//          (TGI's router repeats it on one line with the newlines escaped: 'Unable to warmup model:
//          Generation("Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated
//          : ...")'; ComfyUI prints "!!! Exception during processing !!! Allocation on device". The limit line
//          shows 17179869184.00 GiB when no fraction is set.)
//   CPU    DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes. Error code 12 (...)
//          DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.   (Windows)
//   1.0-1.4 [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0
//          (12 is ENOMEM; this generation does not print the size; also libtorch / tch-rs)
//
// Device failures become gpu_oom (layer gpu_vram). The CPU allocator's failure
// becomes host_alloc_failure (layer host_ram): that kind is the one fact.h
// reserves for allocations that fail inside a process on the host, and the
// diagnosis turns it into a container or pod limit when the evidence shows one.
//
// "Process P has M memory in use" is printed for every process on the device
// except the one raising, which prints "this process has M". Two or more
// others holding about what this one holds are its copies (`peers`). Inside a container
// the raising process does not recognise its own host PID, so without the
// "this process" phrase one entry is this process, and with several entries at
// least (sum - largest) belongs to others: that lower bound is what we record.
// One entry far above all this process's PyTorch memory is another process.
//
// A traceback repeats its error; the same message within a few hundred lines
// gives one fact. Which phase the allocation was for (load, forward, sampler)
// comes from ml_phase's markers, not from here.
#include <cstdint>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {


constexpr Pattern kPatterns[] = {
    {"out of memory. Tried to allocate"},
    {"CUDA out of memory"},
    {"HIP out of memory"},
    {"NPU out of memory"},
    {"XPU out of memory"},
    {"MPS backend out of memory"},
    {"runtime error (2) : out of memory"},
    {"error=2 : out of memory"},
    {"CUBLAS_STATUS_ALLOC_FAILED"},
    {"DefaultCPUAllocator: "},
    {"(CPUAllocator|alloc_cpu)\\.cpp:[0-9]+\\] posix_memalign", kRegex},
    {"Allocation on device"},
    // The lines of the "Allocation on device" report after the first.
    {"Currently allocated", kContext},
    {"^[ \t]*Requested\\s+: [0-9]", kRegex | kContext},
    {"Device limit", kContext},
    {"Free (according to CUDA)", kContext},
    {"PyTorch limit (set by user-supplied memory fraction)", kContext},
    {"^[ \t]+: [0-9][0-9.]* [KMGTP]?i?B", kRegex | kContext},
    // A cap the user sets on the caching allocator (runtime_setting "device cap"):
    //   torch.cuda.set_per_process_memory_fraction(0.4[, device])
    {"set_per_process_memory_fraction(", kContext},
};

constexpr std::string_view kDevices[] = {"CUDA", "HIP", "NPU", "XPU", "MTIA", "MUSA"};
constexpr uint64_t kRepeatWindow = 300;  // lines within which the same message is one failure
constexpr uint64_t kReportLines = 8;     // lines of the "Allocation on device" report

std::optional<uint64_t> size_at(std::string_view s, std::string_view label) {
  auto v = text::after(s, label);
  if (!v) return std::nullopt;
  return units::parse_log_size(*v);
}

// The size printed just before `pos` ("1.57 GiB| is reserved ..."): walks back
// over the unit and the number.
std::optional<uint64_t> size_before(std::string_view s, size_t pos) {
  if (pos == std::string_view::npos || pos > s.size()) return std::nullopt;
  size_t i = pos;
  while (i > 0 && s[i - 1] == ' ') --i;
  size_t unit_start = i;
  while (unit_start > 0 && ((s[unit_start - 1] >= 'a' && s[unit_start - 1] <= 'z') || (s[unit_start - 1] >= 'A' && s[unit_start - 1] <= 'Z')))
    --unit_start;
  if (unit_start == i || i - unit_start > 5) return std::nullopt;
  size_t num_start = unit_start;
  if (num_start > 0 && s[num_start - 1] == ' ') --num_start;
  size_t digits_end = num_start;
  while (num_start > 0 && ((s[num_start - 1] >= '0' && s[num_start - 1] <= '9') || s[num_start - 1] == '.')) --num_start;
  if (num_start == digits_end) return std::nullopt;
  return units::parse_log_size(s.substr(num_start, i - num_start));
}

// "Process 6324 has 8.06 GiB memory in use." entries (capital P: other
// processes; "this process has" is the raiser itself).
void parse_processes(std::string_view body, Fact& f) {
  uint64_t sum = 0, largest = 0, smallest = UINT64_MAX;
  int entries = 0;
  size_t p = 0;
  while ((p = body.find("Process ", p)) != std::string_view::npos && entries < 256) {
    std::string_view rest = body.substr(p + 8);
    p += 8;
    std::string_view after_pid;
    if (!text::parse_u64(rest, &after_pid) || !text::starts_with(after_pid, " has ")) continue;
    std::string_view after_size;
    auto m = units::parse_log_size(after_pid.substr(5), &after_size);
    if (!m || !text::starts_with(after_size, " memory in use")) continue;
    sum += *m;
    largest = std::max(largest, *m);
    smallest = std::min(smallest, *m);
    ++entries;
  }
  if (auto own = size_at(body, "this process has ")) {
    f.this_process = own;
    if (entries > 0) f.other_processes = sum;
    // Two or more others each within 15% of this process's own share (of
    // 256 MiB at least): copies of one workload (a server's workers, a
    // model's instances), each holding its own copy.
    if (entries >= 2 && *own >= 256 * units::MiB && largest * 100 <= *own * 115 && smallest * 100 >= *own * 85)
      f.peers = static_cast<uint32_t>(entries);
  } else if (entries == 1) {
    f.this_process = sum;  // in a container the raiser sees its own host PID as "Process N"
  } else if (entries > 1) {
    f.other_processes = sum - largest;  // at least this much is someone else's
  }
}

// "(GPU 0; 4.00 GiB total capacity; 3.40 GiB already allocated; 0 bytes free; 3.46 GiB reserved in total by PyTorch)"
// and with a per-process fraction set: "...; 21.98 GiB free; 22.26 GiB allowed; 22.26 GiB reserved in total by PyTorch)"
void parse_old_body(std::string_view body, Fact& f) {
  size_t open = std::string_view::npos;
  for (std::string_view dev : {"(GPU ", "(NPU ", "(XPU "}) {
    open = body.find(dev);
    if (open != std::string_view::npos) break;
  }
  if (open == std::string_view::npos) return;
  std::string_view inner = body.substr(open + 5);
  inner = inner.substr(0, std::min<size_t>(inner.find(')'), 512));
  bool first = true;
  for (std::string_view item : text::split(inner, ';')) {
    item = text::trim(item);
    if (first) {
      first = false;
      if (auto g = text::parse_u64(item); g && *g < 1024) f.gpu = static_cast<int>(*g);
      continue;
    }
    std::string_view label;
    auto v = units::parse_log_size(item, &label);
    if (!v) continue;
    label = text::trim(label);
    if (label == "total capacity") f.total = v;
    else if (label == "already allocated") f.allocated = v;
    else if (label == "free") f.free = v;
    else if (label == "reserved in total by PyTorch" || label == "cached") f.reserved = v;
    else if (label == "allowed") f.limit = v;  // set_per_process_memory_fraction (1.x-era form: "22.26 GiB allowed")
  }
}

void parse_new_body(std::string_view body, Fact& f) {
  // "GPU 0 has a total capacity of T of which F is free."
  for (std::string_view dev : {"GPU ", "NPU ", "XPU ", "Device "}) {
    size_t p = body.find(dev);
    while (p != std::string_view::npos) {
      std::string_view rest;
      auto idx = text::parse_u64(body.substr(p + dev.size()), &rest);
      if (idx && text::starts_with(rest, " has a total capac")) {
        if (*idx < 1024) f.gpu = static_cast<int>(*idx);
        break;
      }
      p = body.find(dev, p + 1);
    }
    if (f.gpu) break;
  }
  if (auto t = size_at(body, "total capacity of ")) f.total = t;
  else if (auto t2 = size_at(body, "total capacty of ")) f.total = t2;
  if (auto fr = size_at(body, " of which ")) f.free = fr;
  parse_processes(body, f);
  if (auto a = size_at(body, "Of the allocated memory ")) f.allocated = a;
  f.reserved_unallocated = size_before(body, body.find(" is reserved by PyTorch but unallocated"));
  // One "Process N has M" entry and no "this process" phrase was taken for
  // the raiser seen from a container; but an entry that holds far more than
  // all this process's PyTorch reserved (allocated plus cached, with a
  // context's GiB to spare, and twice over) is another process: a CPU job's
  // stray CUDA context next to a training run that fills the card.
  if (f.this_process && !f.other_processes && f.allocated && f.reserved_unallocated && !size_at(body, "this process has ")) {
    const uint64_t ours = *f.allocated + *f.reserved_unallocated;
    if (*f.this_process > ours + units::GiB && *f.this_process > 2 * ours) {
      f.other_processes = f.this_process;
      f.this_process.reset();
    }
  }
  // set_per_process_memory_fraction: "35.00 GiB allowed; "
  f.limit = size_before(body, body.find(" allowed; "));
}

class PyTorch final : public Recognizer {
 public:
  // The fraction of the device the caching allocator may use.
  static void fraction(const Line& line, std::string_view v, FactSink& out) {
    auto r = text::parse_fraction(v);
    if (!r) return;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::pytorch);
    f.ratio = r;
    f.detail = "device cap (set_per_process_memory_fraction)";
    out.add(std::move(f));
  }

  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_) {
      if (line.number <= pending_line_ + kReportLines && report_line(line, s)) return;
      flush(out);
    }
    if (auto p = s.find("DefaultCPUAllocator: "); p != std::string_view::npos) return cpu(line, s, p, out);
    if (auto p = s.find("] posix_memalign(&data"); p != std::string_view::npos) return memalign(line, s, p, out);
    if (auto p = s.find("MPS backend out of memory"); p != std::string_view::npos) return mps(line, s, p, out);
    if (auto p = s.find("CUBLAS_STATUS_ALLOC_FAILED"); p != std::string_view::npos) {
      if (guards::is_mention(s, p, 26) || repeated("cublas", line)) return;
      Fact f = make_fact(line, FactKind::gpu_oom, Family::pytorch);
      f.layer = Layer::gpu_vram;
      f.strength = 0.7f;
      f.detail = "cuBLAS handle or workspace allocation failed";
      if (auto g = text::after(s, "; GPU="))  // ONNX Runtime's CudaCall form
        if (auto n = text::parse_u64(*g); n && *n < 1024) f.gpu = static_cast<int>(*n);
      return out.add(std::move(f));
    }
    if (auto p = s.find("Allocation on device"); p != std::string_view::npos) return allocation(line, s, p, out);
    if (auto v = text::after(s, "set_per_process_memory_fraction(")) return fraction(line, *v, out);
    size_t thc = s.find("error=2 : out of memory");
    if (thc == std::string_view::npos) thc = s.find("runtime error (2) : out of memory");
    if (thc != std::string_view::npos) {
      if (guards::is_mention(s, thc, 20) || repeated("THC", line)) return;
      Fact f = make_fact(line, FactKind::gpu_oom, Family::pytorch);
      f.layer = Layer::gpu_vram;
      f.strength = 0.85f;
      f.detail = "CUDA (THC)";
      return out.add(std::move(f));
    }
    device_oom(line, s, out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  // An "Allocation on device" report waiting for its figures on the next lines.
  bool pending_ = false;
  uint64_t pending_line_ = 0;
  bool limit_next_ = false;  // the limit's value is on the line after its label
  Fact fact_;

  // The same message again within a traceback or a repeated log line.
  RepeatFilter repeats_{kRepeatWindow};
  bool repeated(std::string_view key, const Line& line) { return repeats_.repeated(key, line.number); }

  // "Allocation on device 0 would exceed allowed memory. (out of memory)": the
  // caching allocator's refusal when an allocation would pass the device's
  // memory or the fraction set with set_per_process_memory_fraction.
  void allocation(const Line& line, std::string_view s, size_t p, FactSink& out) {
    std::string_view after = s.substr(p + 20);
    std::string_view before = s.substr(0, p);
    std::string_view rest;
    auto device = text::parse_u64(text::trim_left(after), &rest);
    bool report = (device && text::starts_with(rest, " would exceed allowed memory")) || text::contains(before, "OutOfMemoryError: ") ||
                  text::contains(before, "Exception during processing") || text::contains(after, "ran out of memory on your GPU");
    if (!report) return;
    // The message's own "would exceed" is not advice ("... panicked at 'Unable to warmup model:
    // Generation(\"Allocation on device 0 would exceed ...\")'" quotes it in a report).
    std::string probe(s);
    if (size_t w = probe.find("would exceed allowed memory"); w != std::string::npos) probe.replace(w, 5, "-----");
    if (guards::is_mention(probe, p, 20) || repeated("allocation on device", line)) return;
    flush(out);
    fact_ = make_fact(line, FactKind::gpu_oom, Family::pytorch);
    fact_.layer = Layer::gpu_vram;
    fact_.strength = 0.85f;
    fact_.detail = "allocation on device exceeded the allowed memory";
    // TGI's router: the warmup prefill of --max-batch-prefill-tokens is what failed.
    if (text::contains(before, "warmup")) fact_.detail += " during the TGI warmup prefill";
    if (device && *device < 1024) fact_.gpu = static_cast<int>(*device);
    // The figures, when a wrapper printed the report on one line ("\nCurrently allocated     : 16.08 GiB\n...").
    report_fields(after);
    pending_ = true;
    pending_line_ = line.number;
    limit_next_ = false;
    if (fact_.total && fact_.free) flush(out);
  }

  // Reads the report's "Label : size" figures found in `s`.
  void report_fields(std::string_view s) {
    auto field = [&](std::string_view label) -> std::optional<uint64_t> {
      auto v = text::after(s, label);
      if (!v) return std::nullopt;
      std::string_view t = text::trim_left(*v);
      if (t.empty() || t[0] != ':') return std::nullopt;
      return units::parse_log_size(t.substr(1));
    };
    if (auto v = field("Currently allocated")) fact_.allocated = v;
    if (auto v = field("Requested")) fact_.requested = v;
    if (auto v = field("Device limit")) fact_.total = v;
    if (auto v = field("Free (according to CUDA)")) fact_.free = v;
    if (auto v = text::after(s, "PyTorch limit (set by user-supplied memory fraction)")) {
      std::string_view t = text::trim_left(*v);
      if (text::starts_with(t, "\\n")) t = text::trim_left(t.substr(2));
      if (!t.empty() && t[0] == ':') set_limit(units::parse_log_size(t.substr(1)));
      else limit_next_ = true;
    }
  }

  void set_limit(std::optional<uint64_t> limit) {
    // 17179869184.00 GiB (2^64 bytes) is "no fraction set".
    if (!limit || *limit >= (1ULL << 60)) return;
    fact_.limit = limit;
  }

  // One of the report's own lines: true when it was read.
  bool report_line(const Line& line, std::string_view s) {
    std::string_view t = text::trim_left(s);
    if (limit_next_ && !t.empty() && t[0] == ':') {
      set_limit(units::parse_log_size(t.substr(1)));
      limit_next_ = false;
      pending_line_ = line.number;
      return true;
    }
    for (std::string_view label : {"Currently allocated", "Requested", "Device limit", "Free (according to CUDA)",
                                   "PyTorch limit (set by user-supplied memory fraction)"}) {
      if (!text::starts_with(t, label)) continue;
      report_fields(t);
      pending_line_ = line.number;
      return true;
    }
    return false;
  }

  void flush(FactSink& out) {
    if (!pending_) return;
    pending_ = false;
    limit_next_ = false;
    // A fraction below the device, reached while the device still had room
    // for the request: the configured limit is what ran out.
    if (fact_.limit && fact_.total && *fact_.limit < *fact_.total && fact_.free && fact_.requested &&
        *fact_.free >= *fact_.requested && fact_.allocated && *fact_.allocated + *fact_.requested > *fact_.limit)
      fact_.cause = Cause::limit_too_low;
    if (fact_.total) fact_.strength = 0.9f;
    out.add(std::move(fact_));
    fact_ = Fact{};
  }

  void device_oom(const Line& line, std::string_view s, FactSink& out) {
    // "<DEV> out of memory" with DEV one of the accelerator names.
    auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
    size_t p = 0, at = std::string_view::npos;
    std::string_view dev;
    while ((p = s.find(" out of memory", p)) != std::string_view::npos) {
      for (std::string_view d : kDevices) {
        if (p < d.size() || s.substr(p - d.size(), d.size()) != d) continue;
        size_t start = p - d.size();
        if (start > 0 && letter(s[start - 1])) continue;  // "SOMECUDA out of memory"
        at = start;
        dev = d;
        break;
      }
      if (at != std::string_view::npos) break;
      p += 14;
    }
    if (at == std::string_view::npos) return;
    std::string_view body = s.substr(at);
    // A message that only mentions the error ("if you see CUDA out of memory, ...")
    // is advice, not a failure.
    if (guards::is_mention(s, at, dev.size() + 14)) return;
    // "I get a CUDA out of memory error" is prose; the exception never says "error" there.
    if (text::starts_with(text::trim_left(body.substr(dev.size() + 14)), "error") && !text::contains(body, "Tried to allocate"))
      return;
    if (repeated(body.substr(0, 160), line)) return;

    // A request no device could hold ("Tried to allocate more than 1EB
    // memory", or kImpossibleRequest and more): a corrupt or overflowed size (a
    // garbage shape, an aborted collective's buffer), not memory running out.
    if (auto r = size_at(body, "Tried to allocate "); text::contains(body, "Tried to allocate more than 1EB") || (r && *r >= kImpossibleRequest)) {
      out.add(look_alike(line, Family::pytorch, 0.8f,
                         "an impossible request (" + std::string(text::contains(body, "more than 1EB") ? "more than 1 EB" : units::format_bytes(*r)) +
                             "): a corrupt or overflowed size, not memory running out"));
      return;
    }
    Fact f = make_fact(line, FactKind::gpu_oom, Family::pytorch);
    f.layer = Layer::gpu_vram;
    f.detail = std::string(dev);
    if (auto r = size_at(body, "Tried to allocate ")) f.requested = r;
    if (text::contains(body, " has a total capac")) parse_new_body(body, f);
    else parse_old_body(body, f);
    f.strength = f.total ? 0.95f : 0.9f;
    out.add(std::move(f));
  }

  void mps(const Line& line, std::string_view s, size_t p, FactSink& out) {
    if (guards::is_mention(s, p, 25) || repeated(s.substr(p, 160), line)) return;
    std::string_view body = s.substr(p);
    Fact f = make_fact(line, FactKind::gpu_oom, Family::pytorch);
    f.layer = Layer::gpu_vram;
    f.detail = "MPS";
    f.strength = 0.9f;
    f.allocated = size_at(body, "MPS allocated: ");
    auto other = size_at(body, "other allocations: ");  // this process's non-PyTorch Metal allocations
    if (f.allocated && other) f.this_process = *f.allocated + *other;
    f.limit = size_at(body, "max allowed: ");
    f.requested = size_at(body, "Tried to allocate ");
    out.add(std::move(f));
  }

  void cpu(const Line& line, std::string_view s, size_t p, FactSink& out) {
    std::string_view body = s.substr(p + 21);
    if (!text::starts_with(body, "can't allocate memory") && !text::starts_with(body, "not enough memory")) return;
    if (guards::is_mention(s, p, 40) || repeated(s.substr(p, 160), line)) return;
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::pytorch);
    f.layer = Layer::host_ram;
    f.strength = 0.85f;
    f.detail = "PyTorch CPU allocator";
    if (auto v = text::after(body, "you tried to allocate ")) {
      std::string_view rest;
      if (auto n = text::parse_u64(*v, &rest); n && text::starts_with(rest, " bytes")) f.requested = n;
    }
    out.add(std::move(f));
  }

  // "[enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0":
  // the enforce prints the call's return value; 12 is ENOMEM (22, EINVAL, would
  // be a bad alignment, not memory). A line cut before "vs" (a wrapped paste)
  // still counts, a little less surely.
  void memalign(const Line& line, std::string_view s, size_t p, FactSink& out) {
    std::string_view body = s.substr(p);
    float strength = 0.7f;
    if (auto v = text::after(body, "== 0. ")) {
      std::string_view rest;
      auto code = text::parse_u64(*v, &rest);
      if (!code || *code != 12 || !text::starts_with(rest, " vs 0")) return;
      strength = 0.85f;
    } else if (text::contains(body, " vs ")) {
      return;
    }
    if (guards::is_mention(s, p, 22) || repeated("posix_memalign", line)) return;
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::pytorch);
    f.layer = Layer::host_ram;
    f.strength = strength;
    f.detail = "PyTorch CPU allocator (posix_memalign ENOMEM)";
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kPyTorchEntry{
    "pytorch", Family::pytorch, kPatterns, [] { return std::unique_ptr<Recognizer>(new PyTorch); }};

}  // namespace aimem
