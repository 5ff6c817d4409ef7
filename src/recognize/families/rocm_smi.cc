// AMD's rocm-smi memory report, as `rocm-smi --showmeminfo vram` prints it:
//
//   ============================ ROCm System Management Interface ============================
//   GPU[0]		: VRAM Total Memory (B): 25753026560
//   GPU[0]		: VRAM Total Used Memory (B): 3621781504
// (older releases print "vram" in lower case.)
//
// A snapshot of the device (gpu_state with total and usage). Pasted beside a
// failure, it was taken by another command, when the failing process had not
// started yet or had already died: the memory it shows in use is held by
// other processes (other_processes), as nvidia-smi's process list is read.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"GPU\\[[0-9]+\\]\\s*: (VRAM|vram) Total (Used )?Memory \\(B\\)", kRegex | kContext},
};

class RocmSmi final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    auto idx = text::after(s, "GPU[");
    if (!idx) return;
    auto gpu = text::parse_u64(*idx);
    if (!gpu || *gpu > 1024) return;
    bool used = text::icontains(s, "Total Used Memory (B):");
    size_t colon = s.rfind(':');
    auto bytes = colon == std::string_view::npos ? std::nullopt : text::parse_u64(text::trim_left(s.substr(colon + 1)));
    if (!bytes) return;
    // Another device, a reading far below, or a figure the pending reading
    // already has (a loop printing the used memory again) starts a new one.
    if (pending_ && (pending_->gpu != static_cast<int>(*gpu) || line.number > pending_->where.line + 4 ||
                     (used ? pending_->usage.has_value() : pending_->total.has_value())))
      flush(out);
    if (!pending_) {
      pending_ = make_fact(line, FactKind::gpu_state, Family::nvidia);
      pending_->gpu = static_cast<int>(*gpu);
      pending_->detail = "rocm-smi";
    }
    if (used) pending_->usage = bytes;
    else pending_->total = bytes;
    if (pending_->usage && pending_->total) flush(out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  std::optional<Fact> pending_;

  // The device's size as last printed, per device: a later reading of the
  // used memory alone (`grep Used` in a loop) is of the same device.
  std::vector<std::pair<int, uint64_t>> totals_;

  void flush(FactSink& out) {
    if (!pending_) return;
    Fact f = std::move(*pending_);
    pending_.reset();
    const int gpu = f.gpu.value_or(-1);
    auto known = std::find_if(totals_.begin(), totals_.end(), [gpu](const auto& t) { return t.first == gpu; });
    if (f.total && known != totals_.end()) known->second = *f.total;
    else if (f.total && totals_.size() < 64) totals_.emplace_back(gpu, *f.total);
    else if (!f.total && known != totals_.end()) f.total = known->second;
    if (f.usage && f.total && *f.total >= *f.usage) {
      f.free = *f.total - *f.usage;
      if (*f.usage > 0) {
        f.other_processes = f.usage;
        f.detail = fmt::format("rocm-smi: {} of {} in use by other processes", units::format_bytes(*f.usage), units::format_bytes(*f.total));
      }
    }
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kRocmSmiEntry{"rocm_smi", Family::nvidia, kPatterns, [] { return std::unique_ptr<Recognizer>(new RocmSmi); }};

}  // namespace aimem
