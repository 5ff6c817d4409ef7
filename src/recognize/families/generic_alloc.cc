// The generic layer under the family recognizers: allocation-failure language
// in its many wordings, read when no family knows the program that printed it.
//
// Families are the precise path (they know a message's fields and numbers);
// this recognizer keeps an unseen stack from falling through to "no memory
// failure found". Its facts carry Family::generic and are dropped wherever a
// family's failure fact stands on or near the same lines of the input
// (ShadowingSink in scanner.h), so it only ever speaks when no family did.
//
// Vocabulary (built from the training split of tests/fixtures/corpus, see its
// README; every phrase matched case-insensitively):
//   out of memory / out of device memory / ran out of memory / OutOfMemory / OUT_OF_MEMORY / OOM when allocating
//   failed to allocate / could not allocate / unable to allocate / cannot allocate / can not allocate / can't allocate
//   (and the same before "malloc": Paddle's "Cannot malloc 49.0002 MB GPU memory")
//   (each spelled out: a phrase inside a word, "t allocate" in "Cannot", is no phrase of its own)
//   attempting to allocate (MLX's Metal allocator) / using all available RAM (Colab) /
//   tried to allocate more memory than is available (Kaggle's notebook banner)
//   allocation failed / alloc failed / ALLOC_FAILED / memory allocation of N bytes failed / bad_alloc
//   not enough (GPU|device|system|host|free)? memory / insufficient (GPU|device|system|host|physical)? memory
//   (seastar's "insufficient physical memory: needed N available M", as Scylla prints it at start-up)
//   memory (limit|quota) (exceeded|of N exceeded) / exceeds? (the )?(allowed|available|total) memory / memory exhausted /
//   exceeds (device) memory budget|capacity|cap
//   ENOMEM / MemoryError / RESOURCE_EXHAUSTED
//   (not OUT_OF_RESOURCES: OpenCL's and Level Zero's status is a launch limit as often as memory,
//   oneapi-src/unified-runtime#1322; level_zero_test.cc holds it)
//   memory allocation failure (ptxas) / out of heap space (MSVC) / cannot enlarge memory (Emscripten)
//   errno 12 / errno=12 (a C call's ENOMEM as a number, as InnoDB logs a failed mapping of N bytes)
//   an allocator's name, then "failed" in the same clause: bm_alloc_gmem failed / Alloc Device Memory Failed!
// ("ran out of" and "has run out of" read as a report: "The Bazel server has
// run out of memory"; "not a failure", TensorFlow's own word on a retry, does not)
// A line only counts when it reads as a report, not as prose or advice: it
// carries an error word (error, fatal, failed, exception, abort, panic,
// terminate, killed, E/F log level) or the phrase opens the message, and it is
// not a mention in quotes or help text (guards.h).
//
// Where: the failing pool is read from the line and its neighbours. An
// accelerator named in the line (CUDA, GPU, device N, HIP, ROCm, XPU, MPS, NPU,
// TPU, IPU and Poplar, VRAM, cudaMalloc, cuBLAS, Thrust, a .cuh header) makes it a device allocation (gpu_oom); a host
// allocator named in the line (CPU, host, system memory, RAM, malloc, mmap,
// posix_memalign) makes it a host one; otherwise the nearest device mention
// within a few lines either side (a traceback's frames, "current device: 0"
// after a ggml assert) decides, and none means the host. The decision waits
// until kAfter lines past the failure have been seen (or the input ends).
#include <algorithm>
#include <cctype>
#include <deque>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr unsigned kCi = kRegex | kCaseless;

// Rarer wordings carry kCompanion: in a log large enough to be read through
// the gate (gate.h) they are found only in blocks another gate word made hot.
constexpr Pattern kPatterns[] = {
    {"of memory", kCaseless},
    {"ofmemory", kCaseless},
    {"out of (device|gpu|host|cpu|system|shared|video|graphics) memory", kCi | kCompanion},
    // Several words between: Blender Cycles' "out of GPU and shared host memory", "out of dedicated video memory".
    {"out of ((device|gpu|host|cpu|system|shared|video|graphics|dedicated|physical|virtual|unified|and|or) ){2,5}memory",
     kCi | kCompanion},
    {"out_of_(device_|host_)?memory", kCi | kCompanion},
    {"oom when allocating", kCaseless},
    {"(failed|unable|could ?n[o']?t|can ?not|can't) (to )?allocate", kCi},
    {"(failed|unable|could ?n[o']?t|cannot|can't) (to )?reserve", kCi | kCompanion},  // with a size or "memory" after it (reserve_failed)
    {"(failed|unable|could ?n[o']?t|can ?not|can't) (to )?malloc\\b", kCi | kCompanion},  // Paddle: "Cannot malloc 49.0002 MB GPU memory"
    {"alloc(ation)?[ _]failed", kCi},
    {"memory allocation of [0-9]+ bytes", kCi},
    {"bad_alloc", kLiteral},
    {"not enough memory", kCaseless},
    {"not enough (gpu|device|system|host|free|cuda|video) memory", kCi | kCompanion},
    {"insufficient (gpu |device |system |host |cuda |video |physical )?memory", kCi | kCompanion},
    {"memory (limit|quota)( of [0-9.]+ ?[kmgt]i?b)? (was )?exceeded", kCi | kCompanion},
    {"exceeds? (the )?(allowed|available|total) (gpu |device |system )?memory", kCi | kCompanion},
    {"exceeds? the memory (available|allowed)", kCi | kCompanion},  // "request exceeds the memory available for this context"
    // A budget, cap or capacity named with its memory: "buffer_size (1268776960 B) exceeds device memory budget (693237760 B)".
    {"exceeds? (the )?(gpu |device |system |host )?memory (budget|capacity|cap)\\b", kCi | kCompanion},
    {"memory exhausted", kCaseless},
    {"\\benomem\\b", kCi | kCompanion},
    {"resource_exhausted", kCaseless},
    {"TensorFlow device \\(", kRegex | kContext},  // the device TF just created (its pool reservation follows)
    {"memoryerror", kCaseless},
    // A size that went negative before the allocator saw it: Arrow's "Invalid: negative malloc size",
    // "cannot allocate -7962214583316189184 bytes" (see negative_size).
    {"negative (malloc |allocation |alloc |buffer |memory )?size|allocate -[0-9]", kCi | kCompanion},
    {"paging file is too small", kCaseless | kCompanion},  // Windows error 1455: the commit limit
    {"os error 1455", kCaseless | kCompanion},             // the same in any locale (Rust's io::Error)
    // ... and in the locale's own words (see kCommitLimitWords, kEnomemWords).
    {"(Auslagerungsdatei ist zu klein|fichier de pagination est insuffisant|archivo de paginación es demasiado|arquivo de paginação "
     "é muito|file di paging è troppo|Файл подкачки слишком мал|页面文件太小|頁面檔太小|ページング ファイルが小さすぎる|페이징 파일이 너무)",
     kRegex | kCompanion},
    {"(Nicht genügend Hauptspeicher|Impossible d'allouer de la mémoire|No se puede asignar memoria|Não foi possível alocar memória|"
     "Impossibile allocare memoria|Невозможно выделить память|无法分配内存|メモリを確保できません)",
     kRegex | kCompanion},
    {"killed signal terminated program", kCaseless},     // gcc/clang when the compiler was SIGKILLed
    {"posix_memalign", kCaseless | kCompanion},          // an aligned allocation that returned ENOMEM (12)
    {"attempting to allocate", kCaseless},               // MLX: "[metal::malloc] Attempting to allocate N bytes which is greater than ..."
    {"using all available ram", kCaseless | kCompanion},              // Colab: "Your session crashed after using all available RAM."
    {"allocate more memory than is available", kCaseless | kCompanion},  // Kaggle: "Your notebook tried to allocate more memory than is available. It has restarted."
    // The arithmetic of a refusal: a size asked for over the size on offer (TensorRT's builder: "requires N
    // bytes of scratch space, but only M is available"; a server's memory check: "Prompt (141377 tokens)
    // requires ~29640MB GPU memory but only ~29112MB available").
    {"(requires?|needs?|needed|required) ~?[0-9][0-9.,]* ?([kmgt]i?b|bytes)\\b.{0,80}only ~?[0-9]", kCi | kCompanion},
    {"KV cache is full", kCaseless | kCompanion},                          // MLC/WebLLM's paged cache: "No page can be allocated"
    {"alloc[^.,;!?]{0,40} failed", kCi | kCompanion},      // an allocator's name, then its failure (see alloc_word_failed)
    {"(cuda|hip)Malloc.*\\(2 vs\\.? 0\\)", kRegex | kCompanion},  // a checked call that returned out-of-memory (2)
    {"memory allocation failure", kCaseless | kCompanion},  // ptxas, nvcc: "ptxas fatal   : Memory allocation failure"
    {"out of heap space", kCaseless | kCompanion},          // MSVC: "fatal error C1060: compiler is out of heap space"
    {"cannot enlarge memory", kCaseless | kCompanion},      // Emscripten: "Cannot enlarge memory arrays to size N bytes (OOM)"
    // A C call's failure with its errno as a number (ENOMEM is 12 on Linux and the BSDs),
    // as InnoDB logs a failed mapping ("... failed; errno 12") or "malloc failed (errno=12)".
    {"\\berrno ?[=:]? ?12\\b", kCi | kCompanion},
    // PostgreSQL's SQLSTATE for out of memory, as a client relays the server's error ("code: '53200'").
    {"53200", kContext},
    // Where the memory was: device words, as context.
    {"(cuda|gpu|vram|cudamalloc|cumem|cublas|cudnn|\\bhip\\b|rocm|\\bxpu\\b|\\bmps\\b|\\bnpu\\b|\\btpu\\b|\\bipu\\b|poplar|device ?[0-9]|current device|level.?zero|metal::|dram buffer|tt_metal|vulkan|sycl|\\bhpu\\b|habana|gaudi|synhelper|directml|metal cap|mtlcommandbuffer|iogpu|metalexecution|thrust::|\\.cuh\\()",
     kCi | kContext},
};

bool device_word(std::string_view s) {
  // cuMem*: the CUDA driver API's allocations (cuMemAlloc, cuMemCreate, cuMemAllocManaged).
  static constexpr std::string_view kWords[] = {"cuda", "gpu",  "vram", "cudamalloc", "cumem", "cublas", "cudnn", " hip ", "hip out",
                                                "rocm", " xpu", "xpu ", " mps", "mps ",  " npu",   "npu ",  " tpu",
                                                "tpu ", "current device", "level zero", "level_zero", "device 0", "metal::", "[metal]", "ggml_metal",
                                                "device 1", "device 2", "device 3", "device:0", "device:1", "on device",
                                                "dram buffer", "l1 buffer", "tt_fatal", "tt_metal", "vulkan", "sycl", "opencl",
                                                "[trt]", "tensorrt", "plugin_v2", "webgpu", "kv cache is full",
                                                "maximum allowed buffer size",  // MLX's Metal buffer cap
                                                "device memory", "devmem", "hpu", "habana", "gaudi", "_gmem", "synhelper", "directml",
                                                "metal cap", "unified memory",
                                                // Graphcore's IPUs: Poplar's tile and stream memory ("poplar_stream_memory_allocation_error")
                                                " ipu", "ipu ", "poplar",
                                                // RAPIDS' device memory resources ("RMM failure at: .../rmm/mr/device/...");
                                                // a game engine's or a driver's "out of video memory"
                                                "rmm failure", "/mr/device/", "rmm::", "video memory", "graphics memory",
                                                // Apple's Metal command buffers: "MTLCommandBufferErrorDomain Code=8
                                                // \"Insufficient Memory\"", kIOGPUCommandBufferCallbackErrorOutOfMemory
                                                "mtlcommandbuffer", "iogpu", "metalexecution",
                                                // CUDA's Thrust library and a CUDA header's assert ("device_helpers.cuh(456): out of memory")
                                                "thrust::", ".cuh("};
  for (std::string_view w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

bool host_word(std::string_view s) {
  // "malloc:" too: an allocator's own report of itself ("mkl_malloc: failed
  // to allocate memory", Intel MKL's host allocator); a device allocator's
  // name ("cudaMalloc") is read as the device's before this.
  static constexpr std::string_view kWords[] = {"cpu",    "host memory", "system memory", " ram",  "ram ", "malloc(", "malloc:",
                                                "mmap",   "posix_memalign", "std::bad_alloc", "memoryerror", "heap",
                                                "enomem", "errno 12",       "cannot allocate memory"};
  for (std::string_view w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

// The operating system's own words for the same refusals in the languages it
// ships in (a message text is the locale's; the numbers that would say it in
// any locale are often left out: "ImportError: DLL load failed while importing
// _pywrap_tensorflow_internal: Die Auslagerungsdatei ist zu klein, um diesen
// Vorgang durchzuführen."). Windows' ERROR_COMMITMENT_LIMIT (1455) and glibc's
// strerror(ENOMEM), each as Microsoft's and the GNU translation projects'
// catalogues word it. Written by hand: no Debian library carries Windows'
// message catalogue, and reading glibc's would depend on the locales installed
// on the machine aimem runs on, not the one that failed.
constexpr std::string_view kCommitLimitWords[] = {
    "Die Auslagerungsdatei ist zu klein", "Le fichier de pagination est insuffisant", "El archivo de paginación es demasiado pequeño",
    "O arquivo de paginação é muito pequeno", "Il file di paging è troppo piccolo", "Файл подкачки слишком мал", "页面文件太小",
    "頁面檔太小", "ページング ファイルが小さすぎる", "페이징 파일이 너무 작아"};
constexpr std::string_view kEnomemWords[] = {"Nicht genügend Hauptspeicher verfügbar", "Impossible d'allouer de la mémoire",
                                             "No se puede asignar memoria", "Não foi possível alocar memória",
                                             "Impossibile allocare memoria", "Невозможно выделить память", "无法分配内存",
                                             "メモリを確保できません"};

// Where one of those is in `s`, and whether it is the commit limit's.
std::optional<size_t> localized_refusal(std::string_view s, bool* commit_limit) {
  for (std::string_view w : kCommitLimitWords)
    if (size_t p = s.find(w); p != std::string_view::npos) return *commit_limit = true, p;
  for (std::string_view w : kEnomemWords)
    if (size_t p = s.find(w); p != std::string_view::npos) return *commit_limit = false, p;
  return std::nullopt;
}

// A compiler's own failure ("catastrophic error: out of memory" from NVIDIA's
// front end compiling a .cu file, "LLVM ERROR: out of memory", cicc,
// cc1plus): a compiler runs on the host, whatever device its code is for,
// so the device words of its paths ("cuda", ".cu") say nothing of the pool.
bool compiler_word(std::string_view s) {
  static constexpr std::string_view kWords[] = {"catastrophic error", "llvm error", "cicc", "cc1plus"};
  for (std::string_view w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

// An error word, or a log level that marks an error, anywhere in the line.
bool reads_as_error(std::string_view s) {
  static constexpr std::string_view kWords[] = {"error", "fatal", "failed", "failure", "exception", "abort", "panic",
                                                "terminat", "killed", "crash", "assert", "cannot", "can't", "unable",
                                                "could not", "couldn't", "exceeded", "exhausted", "enomem", "bad_alloc",
                                                "insufficient", "not enough", "enforce"};
  for (std::string_view w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

// Phrases that read "this can happen" or report a recovery, not a failure;
// and a scheduler's refusal to place work ("0/3 nodes are available: 3
// Insufficient memory"): nothing ran out, nothing was allocated.
bool reads_as_hypothetical(std::string_view s) {
  static constexpr std::string_view kWords[] = {"if you ", "to avoid", "to prevent", "may cause", "might ", "could cause",
                                                "can cause", "retrying with", "will retry", "recovered", "fallback to",
                                                "falling back", "attempting without", "trying without", "continuing without", "documentation", "see https://", "e.g.", "for example",
                                                "?", "nodes are available", "failedscheduling", "predicates",
                                                "not a failure", "usually caused", "often caused", "probably caused",
                                                "likely caused", "typically caused"};
  for (std::string_view w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

// Source code that holds the words in a literal: `OOM_MARKERS = ("out of
// memory", ...)`, `patterns = ["failed to allocate"]`.
bool code_literal(std::string_view s) {
  std::string_view t = text::trim_left(s);
  size_t i = 0;
  while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_' || t[i] == '.')) ++i;
  if (i == 0) return false;
  std::string_view rest = text::trim_left(t.substr(i));
  if (rest.empty() || rest[0] != '=') return false;
  rest = text::trim_left(rest.substr(1));
  return !rest.empty() && (rest[0] == '(' || rest[0] == '[' || rest[0] == '{');
}

struct Pending {
  Fact fact;
  bool own_device = false, own_host = false;
};

constexpr uint64_t kBefore = 25;  // frames above an error (a Python traceback)
constexpr uint64_t kAfter = 6;    // lines below it ("current device: 0", the rest of an assert)

constexpr uint64_t kReservationRetries = 3;

class GenericAlloc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    flush(line.number, out);
    std::string_view s = line.text;
    bool dev = device_word(s);
    if (dev) remember_device(line.number);
    if (text::contains(s, "53200")) sqlstate_line_ = line.number;
    if (text::contains(s, "TensorFlow device (")) device_created_ = line.number;  // "Creating/Created TensorFlow device (/device:GPU:0 ..."
    std::optional<size_t> at = phrase_at(s);
    bool localized_commit = false;
    bool localized = !at && (at = localized_refusal(s, &localized_commit)).has_value();
    // As the system prints it: the message after an error's colon or quote
    // ("...: Die Auslagerungsdatei ist zu klein", "error='无法分配内存'"), or alone.
    if (localized) {
      std::string_view before = text::trim(s.substr(0, *at));
      if (!before.empty() && before.back() != ':' && before.back() != '\'' && before.back() != '"' && before.back() != '(')
        localized = false, at.reset();
    }
    if (!at) at = alloc_word_failed(s);
    if (!at) at = allocator_returned_enomem(s);
    // A size asked for over the size on offer is a report in itself, with no
    // error word ("Epoch 441 requires 4.52 GB memory. Only 3.98 GB available on device.").
    bool arithmetic = false;
    if (!at) at = required_over_available(s), arithmetic = at.has_value();
    if (!at) at = reserve_failed(s);
    if (!at) at = device_malloc_returned_2(s);
    const std::optional<size_t> neg = negative_size(s);  // also beside a phrase: "failed to allocate -2147483648 bytes"
    const bool negative = neg.has_value();
    if (!at) at = neg;
    if (!at) return;
    if (guards::is_advice_line(s) || guards::is_mention(s, *at, 3) || reads_as_hypothetical(sentence_at(s, *at)) || code_literal(s))
      return;
    // gRPC's status on a message over its size cap ("[StatusCode.RESOURCE_EXHAUSTED]
    // Received message larger than max (5529648 vs. 4194304)"): no allocation (failure_markers.cc).
    if (text::icontains(s, "message larger than max")) return;
    // TensorFlow's up-front pool reservation ("E tensorflow/stream_executor/
    // rocm/rocm_driver.cc:967] failed to allocate 7.39G (7936025821 bytes)
    // from device: hipError_t(1002)"): it retries smaller and goes on, as
    // with CUDA (gpu_errors.cc). Refused again and again at each smaller
    // size (kReservationRetries lines close together), the device is full.
    // Only right after the device was created: later (an epoch running) it
    // is the allocator's own failure.
    if (text::contains(s, "stream_executor") && text::contains(s, "from device:")) {
      reservations_ = line.number <= last_reservation_ + 3 ? reservations_ + 1 : 1;
      last_reservation_ = line.number;
      if (reservations_ < kReservationRetries && device_created_ && line.number <= device_created_ + 3 + reservations_) return;
    }
    if (guards::is_optional_refusal(s) || other_errno_after(s, *at)) return;
    if (!arithmetic && !localized && !reads_as_error(without_own_error_word(s, *at)) && !opens_message(s, *at) && !ran_out(s, *at)) return;
    if (repeat_.repeated(repeat_key(s), line.number)) return;
    // Windows' commit limit (error 1455) is the host's RAM and page file,
    // whatever device the program was about to use.
    // So is a notebook service's banner for its session's memory (Kaggle's
    // "tried to allocate more memory than is available"), GPU session or not.
    const bool commit_limit =
        text::icontains(s, "paging file is too small") || text::icontains(s, "os error 1455") || kaggle_banner(s) || localized_commit;
    const bool compiler = compiler_word(s);
    Pending p{make_fact(line, FactKind::host_alloc_failure, Family::generic), dev && !commit_limit && !compiler,
              host_word(s) || commit_limit || compiler || localized};
    p.fact.strength = 0.55f;
    p.fact.detail = "allocation failure";
    // A watchdog's own line: the shortage, then the signal it sends
    // ("PumaWorkerKiller: Out of memory. 2 workers consuming total: 502 mb out
    // of max: 501 mb. Sending TERM to pid 3047"): a user-space killer acting on
    // its own budget, not a refused allocation.
    if (size_t send = text::ifind(s, "sending "); send != std::string_view::npos && send > *at) {
      std::string_view sig = s.substr(send + 8, 8);
      if (text::istarts_with(sig, "term") || text::istarts_with(sig, "kill") || text::istarts_with(sig, "sigterm") ||
          text::istarts_with(sig, "sigkill")) {
        Fact k = make_fact(line, FactKind::userspace_kill, Family::generic);
        k.layer = Layer::userspace_oom_killer;
        k.strength = 0.6f;
        k.detail = "the program's own memory watchdog signalled a worker over its budget";
        if (auto pid = text::after(s.substr(send), " pid ")) k.pid = text::parse_i64(*pid);
        out.add(std::move(k));
        return;
      }
    }
    if (text::icontains(s, "killed signal terminated")) {
      // The compiler driver reporting its child's SIGKILL: the kernel OOM killer's usual work.
      p.fact.kind = FactKind::process_killed;
      p.fact.signal = 9;
      p.fact.detail = "compiler killed by SIGKILL";
      p.own_host = true;
    }
    p.fact.requested = requested_bytes(s);
    if (negative) {
      // No machine holds what a negative size reads as unsigned: the size bug of classify.cc.
      p.fact.requested = UINT64_MAX;
      p.fact.detail = "allocation failure: a negative size";
      p.own_host = true;
    }
    pending_.push_back(std::move(p));
    if (pending_.size() > 16) emit(pending_.front(), out), pending_.pop_front();
  }

  void finish(FactSink& out) override { flush(UINT64_MAX, out); }

 private:
  uint64_t reservations_ = 0, last_reservation_ = 0, device_created_ = 0;
  // "requires 56371970048 bytes of scratch space, but only 47245361152 is
  // available" (TensorRT's builder, and other allocators' arithmetic): a size
  // asked for above the size on offer is an allocation that could not be made.
  // The sizes with their units ("~29640MB", "56371970048 bytes", "29.6 GiB");
  // a bare figure after "only" takes the unit of the size asked for.
  static std::optional<size_t> required_over_available(std::string_view s) {
    for (std::string_view verb : {"requires ", "require ", "needs ", "need ", "needed ", "required "}) {
      for (size_t r = text::ifind(s, verb); r != std::string_view::npos; r = text::ifind(s, verb, r + verb.size())) {
        std::string_view after = s.substr(r + verb.size());
        if (!after.empty() && after[0] == '~') after.remove_prefix(1);
        std::string_view rest;
        auto need = units::parse_log_size(after, &rest);
        if (!need || rest.size() + 1 >= after.size() || *need < units::MiB) continue;
        size_t o = text::ifind(rest, "only ");
        if (o == std::string_view::npos || o > 80) continue;
        std::string_view offered = rest.substr(o + 5);
        if (!offered.empty() && offered[0] == '~') offered.remove_prefix(1);
        std::string_view tail;
        auto have = units::parse_log_size(offered, &tail);
        if (!have) {
          // "... 56371970048 bytes ..., but only 47245361152 is available": the unit of the need.
          auto n = text::parse_u64(offered, &tail);
          if (!n || !text::icontains(after.substr(0, after.size() - rest.size()), "byte")) continue;
          have = n;
        }
        std::string_view said = tail.substr(0, 24);
        if (*need <= *have || !(text::icontains(said, "available") || text::icontains(said, "free") || text::icontains(said, "left")))
          continue;
        return r;
      }
    }
    return std::nullopt;
  }

  // "failed to reserve 20.0 GiB of device memory", "could not reserve memory
  // for the sort buffer": reserving is allocating when a size with its unit
  // or the word memory follows in the same clause ("failed to reserve
  // container name" is not).
  static std::optional<size_t> reserve_failed(std::string_view s) {
    size_t lead = text::ifind(s, " to reserve ");
    size_t after = lead == std::string_view::npos ? lead : lead + 12;
    if (lead == std::string_view::npos) {
      lead = text::ifind(s, "not reserve ");
      if (lead == std::string_view::npos) return std::nullopt;
      after = lead + 12;
    }
    std::string_view tail = s.substr(after, 48);
    tail = tail.substr(0, std::min(tail.find(". "), tail.find_first_of(";!?")));
    bool sized = false;
    for (size_t i = 0; i < tail.size() && !sized; ++i)
      if (tail[i] >= '0' && tail[i] <= '9' && (i == 0 || tail[i - 1] == ' ')) {
        std::string_view rest;
        auto v = units::parse_log_size(tail.substr(i), &rest);
        sized = v && *v >= units::MiB && rest.size() < tail.size() - i - 1;  // a unit was read
      }
    if (!sized && !text::icontains(tail, "memory")) return std::nullopt;
    size_t w = lead;
    while (w > 0 && s[w - 1] != ' ') --w;  // the word before: "failed", "could", "unable"
    return w;
  }

  // The allocation's own error, after the phrase, is not ENOMEM: "Unable to
  // allocate pinned system memory, ...: operation not supported" (a virtual
  // GPU without pinned memory), "failed to allocate ...: Invalid argument".
  // The call was refused for another reason; nothing ran out.
  static bool other_errno_after(std::string_view s, size_t at) {
    std::string_view tail = s.substr(at);
    for (std::string_view e : {"operation not supported", "operation not permitted", "permission denied", "invalid argument",
                               "no such file or directory", "no cuda-capable device", "invalid device ordinal"})
      if (size_t p = text::ifind(tail, e); p != std::string_view::npos && p > 0 && text::contains(tail.substr(0, p), ": ") &&
                                           !text::icontains(tail, "out of memory") && !text::icontains(tail, "enomem"))
        return true;
    return false;
  }

  // A size that went negative before an allocation (an overflow in the
  // program's arithmetic): "Invalid: negative malloc size" (Arrow), "negative
  // allocation size", "failed to allocate -2147483648 bytes". No memory ran
  // out; the request was wrong.
  static std::optional<size_t> negative_size(std::string_view s) {
    std::optional<size_t> at;
    if (size_t n = text::ifind(s, "negative "); n != std::string_view::npos) {
      std::string_view rest = s.substr(n + 9, 24);
      for (std::string_view w : {"malloc size", "allocation size", "alloc size", "buffer size", "memory size", "size"})
        if (text::istarts_with(rest, w) && (rest.size() == w.size() || !word_char(rest[w.size()]))) at = n;
    }
    if (size_t a = text::ifind(s, "allocate -"); !at && a != std::string_view::npos && a + 10 < s.size() &&
                                                 std::isdigit(static_cast<unsigned char>(s[a + 10])))
      at = a;
    // A report, not talk of sizes (looked at only where the words are: this runs on every line the reader sees).
    if (at && !reads_as_error(s) && !text::icontains(s, "invalid")) return std::nullopt;
    return at;
  }

  // A checked device allocation that returned error 2 (cudaErrorMemoryAllocation,
  // hipErrorOutOfMemory) without the words: Caffe's "Check failed:
  // (cudaMalloc(&gpu_ptr_, size_)) == cudaSuccess (2 vs. 0)".
  static std::optional<size_t> device_malloc_returned_2(std::string_view s) {
    size_t call = text::ifind(s, "cudaMalloc");
    if (call == std::string_view::npos) call = text::ifind(s, "hipMalloc");
    if (call == std::string_view::npos) return std::nullopt;
    size_t vs = s.find("(2 vs. 0)", call);
    if (vs == std::string_view::npos) vs = s.find("(2 vs 0)", call);
    if (vs == std::string_view::npos) return std::nullopt;
    return call;
  }

  // An allocator's own name followed by "failed" in the same clause:
  // "bm_alloc_gmem failed" (Sophon's bmlib), "Alloc Device Memory Failed!",
  // "PT_DEVMEM Allocation failed", "enforce allocating <= available failed"
  // (Paddle): a word that starts an allocation, then its failure, with no
  // sentence or clause break between them.
  static std::optional<size_t> alloc_word_failed(std::string_view s) {
    size_t a = text::ifind(s, "alloc");
    if (a == std::string_view::npos) return std::nullopt;
    size_t w = a;
    while (w > 0 && word_char(s[w - 1])) --w;
    std::string_view tail = s.substr(a, 48);
    size_t f = text::ifind(tail, " failed");
    if (f == std::string_view::npos) return std::nullopt;
    std::string_view between = tail.substr(0, f);
    if (between.find_first_of(".,;!?") != std::string_view::npos) return std::nullopt;
    return w;
  }

  // Phrases that name no memory of their own ("context deadline exceeded",
  // "not enough disk space", "insufficient permissions"): they count only with
  // a memory word or a size in the same clause.
  static bool bare_phrase(std::string_view p) {
    return p == "not enough" || p == "insufficient" || p == "exceeded" || p == "exceeds" || p == "exceed the";
  }
  static bool memory_nearby(std::string_view s, size_t at) {
    size_t from = at > 80 ? at - 80 : 0;
    std::string_view clause = s.substr(from, 240);
    for (std::string_view w : {"memory", "mem ", "mem:", "ram", "vram", "heap", "alloc", "oom", "bytes", "swap"})
      if (text::icontains(clause, w)) return true;
    for (size_t i = 0; i + 2 < clause.size(); ++i)  // a size with its unit: "4 GiB", "512MB", "3.2G "
      if (std::isdigit(static_cast<unsigned char>(clause[i]))) {
        std::string_view rest;
        if (units::parse_log_size(clause.substr(i), &rest) && rest.size() + 1 < clause.size() - i &&
            !std::isdigit(static_cast<unsigned char>(clause[i + 1])))
          return true;
      }
    return false;
  }

  // Where the first phrase of the vocabulary starts, if any.
  static std::optional<size_t> phrase_at(std::string_view s) {
    static constexpr std::string_view kPhrases[] = {
        "out of memory", "out of device memory", "out of gpu memory", "out of host memory", "out of cpu memory",
        "out of system memory", "out of shared memory", "out of video memory", "outofmemory", "out_of_memory",
        "out_of_device_memory", "out_of_host_memory", "oom when allocating", "to allocate", "allocation failed",
        "alloc failed", "alloc_failed", "allocation_failed", "memory allocation of", "bad_alloc", "not enough",
        "insufficient", "exceeded", "exceeds", "exceed the", "memory exhausted", "enomem", "resource_exhausted",
        "memoryerror", "cannot allocate", "can not allocate", "can't allocate", "could not allocate", "couldn't allocate",
        "cannot malloc", "can not malloc", "can't malloc", "could not malloc", "failed to malloc", "unable to malloc",
        "paging file is too small", "os error 1455", "killed signal terminated", "using all available ram",
        "allocate more memory than is available",
        "kv cache is full", "memory allocation failure", "out of heap space", "cannot enlarge memory",
        "errno 12", "errno=12", "errno: 12", "errno = 12"};
    size_t best = std::string_view::npos;
    for (std::string_view p : kPhrases) {
      for (size_t at = text::ifind(s, p), tries = 0; at != std::string_view::npos && at < best && tries < 4; ++tries) {
        // "errno 12" is ENOMEM; "errno 120" is another error.
        const bool longer_number = text::istarts_with(p, "errno") && at + p.size() < s.size() &&
                                   std::isdigit(static_cast<unsigned char>(s[at + p.size()]));
        if (stands_alone(s, at) && !longer_number && (!bare_phrase(p) || memory_nearby(s, at))) {
          best = at;
          break;
        }
        size_t next = text::ifind(s.substr(at + 1), p);
        at = next == std::string_view::npos ? next : at + 1 + next;
      }
    }
    if (auto q = qualified_out_of(s); q && *q < best) best = *q;
    if (best == std::string_view::npos) return std::nullopt;
    return best;
  }

  // "out of" and "memory" with two to five words between that say whose
  // memory (kPatterns' second wording): "out of GPU and shared host memory".
  static std::optional<size_t> qualified_out_of(std::string_view s) {
    static constexpr std::string_view kWords[] = {"device", "gpu",       "host",     "cpu",     "system", "shared", "video",
                                                  "graphics", "dedicated", "physical", "virtual", "unified", "and", "or"};
    size_t tries = 0;
    for (size_t at = text::ifind(s, "out of "); at != std::string_view::npos && tries < 4; at = text::ifind(s, "out of ", at + 1), ++tries) {
      std::string_view rest = s.substr(at + 7);
      for (int words = 0; words <= 5; ++words) {
        if (text::istarts_with(rest, "memory")) {
          if (words >= 2 && stands_alone(s, at)) return at;
          break;
        }
        size_t sp = rest.find(' ');
        if (sp == std::string_view::npos) break;
        std::string_view w = rest.substr(0, sp);
        if (std::none_of(std::begin(kWords), std::end(kWords), [&](std::string_view k) { return text::iequals(w, k); })) break;
        rest = rest.substr(sp + 1);
      }
    }
    return std::nullopt;
  }

  // The sentence of `s` that holds position `at`: advice a program appends
  // after its report ("... using all available RAM. If you are interested in
  // high-RAM runtimes, ...") does not make the report hypothetical.
  static std::string_view sentence_at(std::string_view s, size_t at) {
    size_t start = s.rfind(". ", at);
    start = start == std::string_view::npos ? 0 : start + 2;
    size_t end = s.find(". ", at);
    return s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  }

  // An allocator call that returned ENOMEM in a checked-call message, without
  // the words: Paddle's "Expected posix_memalign(&p, a, size) == 0, but
  // received posix_memalign(&p, a, size):12 != 0:0", Caffe2's
  // "posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0".
  static std::optional<size_t> allocator_returned_enomem(std::string_view s) {
    size_t call = text::ifind(s, "posix_memalign");
    if (call == std::string_view::npos) return std::nullopt;
    if (!text::icontains(s, "expected") && !text::icontains(s, "enforce") && !text::contains(s, " vs ")) return std::nullopt;
    auto num = [](char c) { return (c >= '0' && c <= '9') || c == '.'; };
    for (size_t p = s.find("12", call); p != std::string_view::npos; p = s.find("12", p + 2)) {
      bool alone = (p == 0 || !num(s[p - 1])) && (p + 2 >= s.size() || !num(s[p + 2]));
      if (alone) return call;
    }
    return std::nullopt;
  }

  static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  // Part of a longer name ("-XX:+HeapDumpOnOutOfMemoryError",
  // "max_out_of_memory_retries") is a mention, unless the name is an
  // exception being thrown: "OutOfDirectMemoryError: failed to allocate ...".
  // A status constant that ends in the phrase is a status being reported:
  // "Reason=CNMEM_STATUS_OUT_OF_MEMORY", "VK_ERROR_OUT_OF_DEVICE_MEMORY",
  // "CUDA_ERROR_OUT_OF_MEMORY" (upper case with underscores, nothing after it).
  static bool stands_alone(std::string_view s, size_t at) {
    if (at == 0 || !word_char(s[at - 1])) return true;
    size_t start = at, end = at;
    while (start > 0 && word_char(s[start - 1])) --start;
    while (end < s.size() && word_char(s[end])) ++end;
    std::string_view name = s.substr(start, end - start);
    bool thrown = text::ends_with(name, "Error") || text::ends_with(name, "Exception");
    if (thrown) return (end < s.size() && s[end] == ':') || bare_exception_line(s, start, end);
    const bool upper = std::none_of(name.begin(), name.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
    return upper && s[at - 1] == '_' && (text::ends_with(name, "OUT_OF_MEMORY") || text::ends_with(name, "OUT_OF_DEVICE_MEMORY") ||
                                          text::ends_with(name, "OUT_OF_HOST_MEMORY"));
  }

  // The last line of a Python traceback for an exception raised without a
  // message: its dotted name alone ("pyarrow.lib.ArrowMemoryError"), nothing
  // before the module path and nothing after the name.
  static bool bare_exception_line(std::string_view s, size_t start, size_t end) {
    if (!text::trim(s.substr(end)).empty()) return false;
    while (start > 0 && (word_char(s[start - 1]) || s[start - 1] == '.')) --start;
    return text::trim(s.substr(0, start)).empty();
  }

  // A phrase that carries its own error word ("cannot allocate", the name
  // "OutOfMemoryError"): the line must read as an error without it ("if the
  // pool cannot allocate, it waits", "OutOfMemoryError can be avoided with a
  // soft limit" do not).
  static std::string without_own_error_word(std::string_view s, size_t at) {
    std::string out(s);
    for (std::string_view w : {"cannot", "can't", "could not", "couldn't"})
      if (text::istarts_with(s.substr(at), w)) {
        out.replace(at, w.size(), w.size(), ' ');
        return out;
      }
    size_t end = at;
    while (end < s.size() && word_char(s[end])) ++end;
    out.replace(at, end - at, end - at, ' ');
    return out;
  }

  // "X ran out of memory", "has run out of memory": a report in the past
  // tense, the program's own word that the memory ran out.
  // Kaggle's banner for its session's memory: "Your notebook tried to
  // allocate more memory than is available. It has restarted."
  static bool kaggle_banner(std::string_view s) { return text::icontains(s, "tried to allocate more memory than is available"); }

  static bool ran_out(std::string_view s, size_t at) {
    if (kaggle_banner(s)) return true;  // says what happened without an error word
    if (at < 4) return false;
    std::string_view last = s.substr(at - 4, 4);
    return text::icontains(last, "ran ") || text::icontains(last, "run ");
  }

  // The phrase is the start of the message: after a log prefix, a level or an
  // exception name ("E0412 ...: Out of memory", "ERROR: Not enough memory").
  static bool opens_message(std::string_view s, size_t at) {
    while (at > 0 && word_char(s[at - 1])) --at;  // the phrase inside a name ("ArrowMemoryError"): the name's start
    std::string_view head = text::trim(s.substr(0, at));
    // An exception's module path before its name ("cupy.cuda.memory.OutOfMemoryError: ..."): the name opens it.
    if (!head.empty() && head.back() == '.') {
      size_t b = head.size();
      while (b > 0 && (word_char(head[b - 1]) || head[b - 1] == '.')) --b;
      head = text::trim(head.substr(0, b));
    }
    return head.empty() || head.back() == ':' || head.back() == ']' || head.back() == '-' || head.back() == '|' || head.back() == '>';
  }

  static std::optional<uint64_t> requested_bytes(std::string_view s) {
    for (std::string_view lead : {"allocate ", "allocating ", "of size ", "allocation of ", "requested ", "tried to allocate "}) {
      size_t p = text::ifind(s, lead);
      if (p == std::string_view::npos) continue;
      // Past what 64 bits hold ("Cannot allocate 1048575.999023PB"): a size
      // computed wrong, kept as the largest there is.
      if (auto v = units::parse_log_size_saturating(s.substr(p + lead.size())); v && *v > 0) return v;
      // "malloc of size 2097152 failed" (FFmpeg's av_malloc, Arrow's
      // allocator): a bare count after "of size" is bytes.
      if (lead == "of size ")
        if (auto v = units::parse_log_size(s.substr(p + lead.size()), nullptr, true); v && *v > 0) return v;
    }
    return std::nullopt;
  }

  void remember_device(uint64_t line) {
    devices_.push_back(line);
    if (devices_.size() > 64) devices_.pop_front();
  }

  bool device_near(uint64_t line) const {
    for (uint64_t d : devices_)
      if (d + kBefore >= line && d <= line + kAfter) return true;
    return false;
  }

  void flush(uint64_t now, FactSink& out) {
    while (!pending_.empty() && (now == UINT64_MAX || pending_.front().fact.where.line + kAfter < now)) {
      emit(pending_.front(), out);
      pending_.pop_front();
    }
  }

  // A database server's out-of-memory error relayed to its client (SQLSTATE
  // 53200 on the line or within a few lines): the server refused an
  // allocation, but in which pool (its host, a cgroup) only its own log says.
  uint64_t sqlstate_line_ = 0;
  bool relayed_by_client(const Fact& f) const {
    return sqlstate_line_ && sqlstate_line_ + kAfter >= f.where.line && sqlstate_line_ <= f.where.line + kAfter;
  }

  void emit(Pending& p, FactSink& out) {
    if (p.fact.kind == FactKind::host_alloc_failure && relayed_by_client(p.fact)) {
      p.fact.layer = Layer::unknown;
      p.fact.detail = std::string(kRelayedServerOom);
      out.add(std::move(p.fact));
      return;
    }
    bool device = p.fact.kind != FactKind::process_killed && (p.own_device || (!p.own_host && device_near(p.fact.where.line)));
    if (device) {
      p.fact.kind = FactKind::gpu_oom;
      p.fact.layer = Layer::gpu_vram;
      p.fact.detail = "device allocation failure";
      // Intel's extension says it outright: "Current platform can NOT allocate
      // memory block with size larger than 4GB!" A per-allocation limit, not a full device.
      // A paged KV cache with no page left (MLC/WebLLM's "The KV cache is full. No page can be
      // allocated."): the cache sized for the context ran out, not the device at large.
      if (text::icontains(p.fact.text, "kv cache is full")) {
        p.fact.cause = Cause::kv_cache_context;
        p.fact.detail = "device allocation failure: the paged KV cache has no page left";
      }
      if (text::icontains(p.fact.text, "allocate memory block with size larger than")) {
        p.fact.cause = Cause::limit_too_low;
        p.fact.detail = "device allocation failure: one block over the platform's per-allocation limit";
      }
    } else {
      p.fact.layer = Layer::host_ram;
    }
    out.add(std::move(p.fact));
  }

  std::deque<Pending> pending_;
  std::deque<uint64_t> devices_;
  RepeatFilter repeat_{200};
};

}  // namespace

const RecognizerEntry kGenericAllocEntry{
    "generic_alloc", Family::generic, kPatterns, [] { return std::unique_ptr<Recognizer>(new GenericAlloc); }};

}  // namespace aimem
