// /dev/shm ran out: the shared-memory tmpfs a container is given (Docker's
// and containerd's default is 64 MiB unless --shm-size, --ipc=host or a
// memory-backed volume at /dev/shm says otherwise). PyTorch's DataLoader
// passes batches between worker processes through it, NCCL its intra-node
// buffers, TGI and Chrome their segments; when it is full a write into a
// mapped segment takes SIGBUS, or the segment cannot be made:
//
//   ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
//   RuntimeError: DataLoader worker (pid 572) is killed by signal: Bus error. It is possible that dataloader's
//       workers are out of shared memory. Please try to raise your shared memory limit.
//   NCCL WARN Error while creating shared memory segment /dev/shm/nccl-6QYjBa (size 9637888)
//   NCCL WARN Call to posix_fallocate failed : No space left on device
//   OSError: [Errno 28] No space left on device: '/dev/shm/...'
//   RuntimeError: unable to write to file </torch_40127_3310974821_213>: No space left on device (28)
//                                                                      (PyTorch's shared-memory files live in /dev/shm)
//   Download process was signaled to shutdown with signal 7            (TGI: SIGBUS, with df below)
//   Failed to increase the shared memory pool size for key 'triton_python_backend_shm_region_2' to 67108864 bytes.
//   UNAVAILABLE: Internal: Unable to initialize shared memory key 'triton_python_backend_shm_region_3' to requested size
//       (67108864 bytes). ...  (at a model instance's start; in `tritonserver`'s model table, wrapped)
//       If you are running Triton inside docker, use '--shm-size' flag ... Error: No space left on device
//                                                                      (Triton's Python backend: each model instance's region)
//   shm              64M     0   64M   0% /dev/shm                     (df: the segment's size)
//
// A SIGBUS ("Bus error", "signal 7") is read as this only beside a df row
// that shows a small /dev/shm; alone it is a bad mapping (exit_status.cc).
// PostgreSQL's "out of shared memory" is its lock table, not /dev/shm: with
// its hint ("HINT:  You might need to increase max_locks_per_transaction.")
// it is a look-alike (not_memory): too many objects locked in one
// transaction (pg_dump of a schema with thousands of tables). Its "invalid
// memory alloc request size 1073741824" (PostgreSQL, Greenplum) is its 1 GB
// cap on one allocation (MaxAllocSize): a value, a row or a sort too large for
// one chunk, or a corrupt length read from disk; a look-alike too. So is its
// "out of memory" with "DETAIL:  Cannot enlarge string buffer containing 0
// bytes by 1588921344 more bytes." when the two sizes reach that cap: one
// value (a COPY row, a JSON document) too large for a string, not RAM.
//
// The layer is the container's limit on that tmpfs (the classifier moves it to
// the pod's where Kubernetes limits are in view); the cause is that limit:
// the workload needs more shared memory than it was given.
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"insufficient shared memory", kCompanion},
    {"out of shared memory", kCompanion},
    {"shared memory segment", kCompanion},
    {"/dev/shm", kCompanion},
    {"shm_open", kCompanion},  // NCCL's "Call to shm_open failed : Permission denied"
    {"</torch_", kCompanion},  // PyTorch's shared-memory files
    {"shared memory pool size", kCompanion},  // Triton's Python backend
    {"Unable to initialize shared memory key", kCompanion},  // ... at a model instance's start
    {"Bus error", kContext},
    {"signal 7", kContext},
    {"SIGBUS", kContext},
    {"increase max_locks_per_transaction", kCompanion},
    {"invalid memory alloc request size", kCompanion},
    {"Cannot enlarge string buffer containing ", kCompanion},
};

constexpr uint64_t kSmallShm = uint64_t{1} << 30;
constexpr uint64_t kMaxAllocSize = 0x3fffffff;      // PostgreSQL's MaxAllocSize: 1 GB less one byte  // a /dev/shm of 1 GiB or less was sized for a container

class SharedMemory final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "increase max_locks_per_transaction")) return lock_table(line, out);
    if (text::contains(s, "invalid memory alloc request size") && !alloc_cap_sent_ && !guards::is_advice_line(s)) {
      alloc_cap_sent_ = true;
      out.add(look_alike(line, Family::runtime, 0.7f,
                         "PostgreSQL's cap on one allocation (MaxAllocSize, 1 GB): one value, row or sort too large for a single "
                         "chunk, or a corrupt length read from disk, not memory running out"));
      return;
    }
    if (auto p = s.find("Cannot enlarge string buffer containing "); p != std::string_view::npos && !alloc_cap_sent_) {
      std::string_view rest;
      auto held = text::parse_u64(s.substr(p + 40), &rest);
      auto more = text::starts_with(rest, " bytes by ") ? text::parse_u64(rest.substr(10)) : std::nullopt;
      if (held && more && *held + *more >= kMaxAllocSize) {
        alloc_cap_sent_ = true;
        out.add(look_alike(line, Family::runtime, 0.75f,
                           "PostgreSQL's cap on one string (MaxAllocSize, 1 GB): a single value or row of " +
                               units::format_bytes(*held + *more) + " is too large for it, not memory running out"));
      }
      return;
    }
    if (auto size = df_row(s)) {
      shm_size_ = size;
      return;
    }
    // The segment refused for its permissions, not its space (NCCL: "Call to
    // shm_open failed : Permission denied", a /dev/shm mounted 755).
    if ((text::contains(s, "shm_open") || text::contains(s, "/dev/shm")) && text::contains(s, "Permission denied")) denied_ = true;
    if (text::contains(s, "No space left on device")) no_space_ = true;
    if (pending_) return;
    // Triton's message carries its own advice ("use '--shm-size' flag") after the failure.
    // At an instance's start it says "Unable to initialize shared memory key
    // '...' to requested size (67108864 bytes)", its error on a later line
    // where a model table wraps it: the failure either way.
    const bool triton = (text::contains(s, "shared memory pool size") && text::contains(s, "No space left on device")) ||
                        text::contains(s, "Unable to initialize shared memory key");
    if (guards::is_advice_line(s) && !text::contains(s, "shared memory (shm)") && !triton) return;
    const bool dataloader = text::contains(s, "insufficient shared memory (shm)") ||
                            text::contains(s, "workers are out of shared memory");
    const bool segment = text::contains(s, "shared memory segment") &&
                         (text::icontains(s, "error") || text::icontains(s, "fail") || text::icontains(s, "unable"));
    // PyTorch names its shared-memory files "/torch_<pid>_<n>_<n>" in /dev/shm:
    // "RuntimeError: unable to write to file </torch_40127_3310974821_213>: No space left on device (28)".
    const bool shm_full = (text::contains(s, "/dev/shm") || text::contains(s, "</torch_")) && text::contains(s, "No space left on device");
    const bool bus = text::contains(s, "Bus error") || text::contains(s, "signal 7") || text::contains(s, "SIGBUS");
    if (dataloader || segment || shm_full || triton) {
      hold(line, 0.75f);
    } else if (bus && !bus_) {
      hold(line, 0.7f);  // decided at the end: a small /dev/shm anywhere in the input makes it this
      bus_ = std::move(pending_);
      pending_.reset();
    }
  }

  // PostgreSQL's lock table, once per input.
  void lock_table(const Line& line, FactSink& out) {
    if (lock_table_sent_) return;
    lock_table_sent_ = true;
    out.add(look_alike(line, Family::runtime, 0.75f,
                       "PostgreSQL's lock table is full (max_locks_per_transaction), not memory: \"out of shared memory\" is its wording for it"));
  }
  bool lock_table_sent_ = false, alloc_cap_sent_ = false;

  void finish(FactSink& out) override {
    if (!pending_ && bus_ && shm_size_ && *shm_size_ <= kSmallShm) pending_ = std::move(bus_);
    if (!pending_) return;
    // Refused for its permissions, with no "No space left" anywhere: the
    // segment failed for another reason than a full /dev/shm. (A df showing
    // /dev/shm empty says nothing: it is usually taken after the failure,
    // when the dead workers' segments are gone.)
    if (denied_ && !no_space_) {
      std::string why = "a shared-memory segment was refused for its permissions (Permission denied), not for space";
      Fact f = std::move(*pending_);  // the failure's own line and provenance, read as a look-alike
      pending_.reset();
      f.kind = FactKind::not_memory_failure;
      f.layer = Layer::not_memory;
      f.cause = Cause::unknown;
      f.strength = 0.7f;
      f.detail = why;
      out.add(std::move(f));
      return;
    }
    Fact& f = *pending_;
    if (shm_size_) f.limit = shm_size_;
    f.detail = shm_size_ ? "/dev/shm (" + units::format_bytes(*shm_size_) + ") is full: the shared memory the container was given"
                         : "/dev/shm is full: the shared memory the container was given";
    out.add(std::move(f));
    pending_.reset();
  }

 private:
  std::optional<Fact> pending_;
  std::optional<Fact> bus_;
  std::optional<uint64_t> shm_size_;
  bool denied_ = false, no_space_ = false;

  void hold(const Line& line, float strength) {
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::container_limit;
    f.cause = Cause::limit_too_low;
    f.strength = strength;
    pending_ = std::move(f);
  }

  // df's row for the tmpfs: "shm  64M  0  64M  0% /dev/shm" (or its -B1 bytes).
  static std::optional<uint64_t> df_row(std::string_view s) {
    if (!text::ends_with(text::trim(s), "/dev/shm")) return std::nullopt;
    auto w = platform::words(s, 8);
    if (w.size() != 6 || w[4].empty() || w[4].back() != '%') return std::nullopt;
    std::string_view size = w[1];
    if (!size.empty() && platform::is_digit(size[0]) && platform::is_digit(size.back())) return text::parse_u64(size);
    return units::parse_log_size(size);
  }
};

}  // namespace

const RecognizerEntry kSharedMemoryEntry{"shared_memory", Family::runtime, kPatterns,
                                         [] { return std::unique_ptr<Recognizer>(new SharedMemory); }};

}  // namespace aimem
