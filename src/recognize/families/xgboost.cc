// XGBoost's device allocation failure (src/common/device_helpers.cuh,
// dh::detail::ThrowOOMError; the same text from the Python, R and JVM
// packages, inside their XGBoostError), in two forms across versions:
//
//   xgboost.core.XGBoostError: [10:02:11] /workspace/src/common/device_helpers.cuh:428: Memory allocation error on worker 0: Caching allocator
//   - Free memory: 187695104
//   - Requested memory: 893386752
//
//   ... device_helpers.cuh:393: Memory allocation error on worker 2: std::bad_alloc: cudaErrorMemoryAllocation: out of memory
//   - Free memory: 1048576
//   - Requested memory: 268435456
//
// One gpu_oom fact with the free and requested bytes (read from the two
// lines under the message, at most four lines on). Free memory is the
// device's as the driver reports it; the request the allocation that failed.
#include <optional>
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Memory allocation error on worker"},
    {"- Free memory: ", kCompanion},
    {"- Requested memory: ", kCompanion},
};

constexpr uint64_t kFollowLines = 4;

class XgBoost final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (pending_ && line.number > pending_->where.line + kFollowLines) flush(out);
    if (size_t p = s.find("Memory allocation error on worker"); p != std::string_view::npos) {
      if (guards::is_advice_line(s)) return;
      flush(out);
      Fact f = make_fact(line, FactKind::gpu_oom, Family::cuda);
      f.layer = Layer::gpu_vram;
      f.strength = 0.9f;
      std::string_view what = s.substr(p);
      f.detail = "XGBoost: " + std::string(what.substr(0, 120));
      pending_ = std::move(f);
      return;
    }
    if (!pending_) return;
    if (auto v = text::after(s, "- Free memory: ")) {
      if (auto b = text::parse_u64(*v)) pending_->free = b;
    } else if (auto r = text::after(s, "- Requested memory: ")) {
      if (auto b = text::parse_u64(*r)) pending_->requested = b;
      flush(out);
    }
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  void flush(FactSink& out) {
    if (pending_) out.add(std::move(*pending_));
    pending_.reset();
  }
  std::optional<Fact> pending_;
};

}  // namespace

const RecognizerEntry kXgBoostEntry{"xgboost", Family::cuda, kPatterns, [] { return std::unique_ptr<Recognizer>(new XgBoost); }};

}  // namespace aimem
