// torch.cuda.memory_summary() tables, which training scripts and ComfyUI
// print after an OOM:
//   |===========================================================================|
//   |                  PyTorch CUDA memory summary, device ID 0                 |
//   |---------------------------------------------------------------------------|
//   |            CUDA OOMs: 1            |        cudaMalloc retries: 12        |
//   |===========================================================================|
//   |        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
//   |---------------------------------------------------------------------------|
//   | Allocated memory      |   10344 MiB |  14441 MiB |  45674 MiB |  35330 MiB |
//   |       from large pool | ...
//   | GPU reserved memory   |   12420 MiB |  12420 MiB |  16924 MiB |   4504 MiB |
// (older versions print "MB"/"GB" for the same binary units; ComfyUI prefixes "Memory summary: ").
//
// A table whose OOM counter is above zero records a failed device allocation
// (gpu_oom); the current reserved minus allocated is memory the caching
// allocator holds but cannot use for the failed request (reserved_unallocated),
// and the cudaMalloc retries (count) say how often it had to free its cache
// and try again before giving up. A table with no OOM is context.
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"CUDA OOMs:"},
    {"memory summary, device ID", kContext},
    {"| Allocated memory", kContext},
    {"| GPU reserved memory", kContext},
};

constexpr uint64_t kTableWindow = 30;  // lines from the header to the reserved row
constexpr uint64_t kRepeatWindow = 300;

// The "Cur Usage" cell of a row: the first size after the label's cell.
std::optional<uint64_t> current_cell(std::string_view s, std::string_view label) {
  size_t p = s.find(label);
  if (p == std::string_view::npos) return std::nullopt;
  size_t bar = s.find('|', p + label.size());
  if (bar == std::string_view::npos) return std::nullopt;
  return units::parse_log_size(s.substr(bar + 1));
}

class TorchMemorySummary final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (open_ && line.number > last_line_ + kTableWindow) close(out);
    if (auto v = text::after(s, "memory summary, device ID ")) {
      close(out);
      open_ = true;
      last_line_ = line.number;
      if (auto d = text::parse_u64(*v); d && *d < 1024) gpu_ = static_cast<int>(*d);
      return;
    }
    if (auto v = text::after(s, "CUDA OOMs:")) {
      // "|            CUDA OOMs: 1            |        cudaMalloc retries: 12        |"
      auto retries = text::after(s, "cudaMalloc retries:");
      auto ooms = text::parse_u64(text::trim_left(*v));
      if (!ooms || !retries) return;
      if (!open_ || have_counters_) {
        close(out);
        open_ = true;
      }
      // The table's failing line is the OOM counter's: that is what it reports.
      fact_ = make_fact(line, *ooms > 0 ? FactKind::gpu_oom : FactKind::gpu_state, Family::pytorch);
      fact_.count = text::parse_u64(text::trim_left(*retries));
      ooms_ = *ooms;
      have_counters_ = true;
      last_line_ = line.number;
      return;
    }
    if (!open_) return;
    if (auto a = current_cell(s, "| Allocated memory")) {
      allocated_ = a;
      last_line_ = line.number;
      return;
    }
    if (auto r = current_cell(s, "| GPU reserved memory")) {
      reserved_ = r;
      last_line_ = line.number;
      close(out);  // the rows after it add nothing the diagnosis reads
    }
  }

  void finish(FactSink& out) override { close(out); }

 private:
  bool open_ = false, have_counters_ = false;
  uint64_t last_line_ = 0;
  uint64_t ooms_ = 0;
  std::optional<int> gpu_;
  std::optional<uint64_t> allocated_, reserved_;
  Fact fact_;
  RepeatFilter repeats_{kRepeatWindow};

  void close(FactSink& out) {
    bool emit = open_ && have_counters_;  // a header without its counters is not a table
    Fact f = std::move(fact_);
    f.gpu = gpu_;
    f.allocated = allocated_;
    f.reserved = reserved_;
    open_ = have_counters_ = false;
    fact_ = Fact{};
    gpu_.reset();
    allocated_.reset();
    reserved_.reset();
    if (!emit) return;
    if (f.allocated && f.reserved && *f.reserved >= *f.allocated) f.reserved_unallocated = *f.reserved - *f.allocated;
    if (ooms_ > 0) {
      f.layer = Layer::gpu_vram;
      f.strength = 0.8f;
      f.detail = "PyTorch memory summary: " + std::to_string(ooms_) + " CUDA OOM" + (ooms_ == 1 ? "" : "s");
      if (f.count) f.detail += " after " + std::to_string(*f.count) + " cudaMalloc retries";
      // A script that prints the table after every failed step: one failure.
      if (repeats_.repeated("summary-oom", f.where.line)) return;
    } else {
      f.detail = "PyTorch memory summary (no OOM recorded)";
    }
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kTorchMemorySummaryEntry{"torch_memory_summary", Family::pytorch, kPatterns,
                                               [] { return std::unique_ptr<Recognizer>(new TorchMemorySummary); }};

}  // namespace aimem
