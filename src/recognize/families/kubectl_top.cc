// One `kubectl top pods` (or OpenShift's `oc adm top pods`) table: what each
// pod held at one moment, as users paste it beside an eviction or a node's
// OOM kill.
//
//   $ kubectl top pods -A --sort-by=memory | head -4
//   NAMESPACE    NAME                               CPU(cores)   MEMORY(bytes)
//   loadtest     ingest-simulator-7f6d9c5b8-wq4kz   3410m        9874Mi
//   kafka        kafka-2-pp7lr                      812m         3402Mi
//   $ kubectl top pod -n ai --containers               (one row per container: POD NAME CPU MEMORY)
//   POD                        NAME          CPU(cores)   MEMORY(bytes)
//   comfyui-5b7d9c8f6d-q2xkn   comfyui       6120m        21874Mi     (a pod's containers summed)
//
// `kubectl top nodes` (its MEMORY% column) is the node's, not a pod's, and is
// left out. The rows become memory_usage facts (family kubernetes, detail
// kPodTableDetail, pod = the row's pod, usage), all carrying the header's
// line. A pod seen twice in one table is not a snapshot (a loop of
// `kubectl top` taken over time: memory_series.cc reads that) and the table
// is dropped. The diagnosis weighs the largest pod against the one that
// failed (classify.cc, cause_from_pod_table).
#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"MEMORY(bytes)", kContext},
    // Its rows: CPU in millicores (or cores), then memory with a binary suffix.
    {"[0-9]m? +[0-9]+(Mi|Gi|Ki)\\s*$", kRegex | kContext},
};

constexpr size_t kMaxRows = 64;
constexpr size_t kNoColumn = size_t(-1);

class KubectlTop final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = text::trim(line.text);
    if (text::contains(s, "MEMORY(bytes)")) {
      flush(out);
      auto w = platform::words(s, 8);
      pod_col_ = mem_col_ = kNoColumn;
      for (size_t k = 0; k < w.size(); ++k) {
        if (w[k] == "POD" || (w[k] == "NAME" && pod_col_ == kNoColumn)) pod_col_ = k;
        else if (w[k] == "MEMORY(bytes)") mem_col_ = k;
        else if (w[k] == "MEMORY%") mem_col_ = kNoColumn, pod_col_ = kNoColumn;  // kubectl top nodes
      }
      if (pod_col_ == kNoColumn || mem_col_ == kNoColumn || text::contains(s, "MEMORY%")) return;
      containers_ = !w.empty() && (w[0] == "POD" || (w.size() > 1 && w[1] == "POD"));
      header_ = line;
      header_text_ = std::string(line.text.substr(0, 256));
      header_->text = header_text_;
      last_line_ = line.number;
      return;
    }
    if (!header_) return;
    if (line.number != last_line_ + 1) return flush(out);
    auto w = platform::words(s, 8);
    std::optional<uint64_t> bytes;
    if (mem_col_ < w.size()) {
      std::string_view rest;
      auto n = text::parse_u64(w[mem_col_], &rest);
      if (n && *n >= (uint64_t(1) << 32)) n.reset();  // no pod holds 4 Gi of units (and the product would overflow)
      if (n && rest == "Ki") bytes = *n * units::KiB;
      else if (n && rest == "Mi") bytes = *n * units::MiB;
      else if (n && rest == "Gi") bytes = *n * units::GiB;
    }
    if (!bytes || pod_col_ >= w.size()) return flush(out);
    last_line_ = line.number;
    std::string pod(w[pod_col_].substr(0, 128));
    for (auto& r : rows_)
      if (r.first == pod) {
        // --containers: a pod's containers are summed; else a pod twice is no snapshot.
        if (containers_) r.second += *bytes;
        else broken_ = true;
        return;
      }
    if (rows_.size() < kMaxRows) rows_.emplace_back(std::move(pod), *bytes);
  }
  void finish(FactSink& out) override { flush(out); }

 private:
  std::optional<Line> header_;
  std::string header_text_;
  size_t pod_col_ = kNoColumn, mem_col_ = kNoColumn;
  uint64_t last_line_ = 0;
  bool containers_ = false, broken_ = false;
  std::vector<std::pair<std::string, uint64_t>> rows_;

  void flush(FactSink& out) {
    if (header_ && !broken_) {
      for (auto& [pod, bytes] : rows_) {
        Fact f = make_fact(*header_, FactKind::memory_usage, Family::kubernetes);
        f.detail = std::string(kPodTableDetail);
        f.pod = pod;
        f.usage = bytes;
        out.add(std::move(f));
      }
    }
    header_.reset();
    rows_.clear();
    broken_ = false;
  }
};

}  // namespace

const RecognizerEntry kKubectlTopEntry{"kubectl_top", Family::kubernetes, kPatterns,
                                       [] { return std::unique_ptr<Recognizer>(new KubectlTop); }};

}  // namespace aimem
