// Milvus's memory quota: its rootcoord (QuotaCenter) watches each data and
// query node's memory and, past the high water level (a share of the memory
// the node sees: its container limit or the machine), denies writes. The
// node is not out of memory yet: the server's own guard refused first. As
// the client and the rootcoord log it (2.2+):
//
//   <MilvusException: (code=53, message=deny to write, reason: memory quota exhausted, please allocate more resources)>
//   [WARN] [rootcoord/quota_center.go:422] ["QuotaCenter: QueryNode memory to high water level"] [nodeID=417]
//       [memUsage=15581] [totalMem=16384] [memoryWaterLevel=0.95099] [highWaterLevel=0.95]      (MiB)
//   [WARN] [rootcoord/quota_center.go:618] ["QuotaCenter force to deny writing"] [reason=MemoryExhausted]
//
// Like RabbitMQ's alarm the refusal is the server's, at a share of a pool it
// does not name: the layer stays unknown (the node's limit, when the
// evidence gives one, is the diagnosis's to weigh) and the cause is left to
// the evidence around it (growth, a load). usage and total are the water
// level line's, when it came before.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"memory quota exhausted"},
    {"reason=MemoryExhausted", kCompanion},
    {"memory to high water level", kContext},
};

class Milvus final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "memory to high water level") || text::contains(s, "memory to low water level")) {
      // "[memUsage=15581] [totalMem=16384]": MiB, as the QuotaCenter prints them.
      if (auto u = text::after(s, "[memUsage=")) usage_ = text::parse_u64(*u);
      if (auto t = text::after(s, "[totalMem=")) total_ = text::parse_u64(*t);
      return;
    }
    size_t p = s.find("memory quota exhausted");
    if (p == std::string_view::npos) p = s.find("reason=MemoryExhausted");
    if (p == std::string_view::npos || guards::is_advice_line(s) || guards::is_mention(s, p, 6)) return;
    if (denied_) return;  // every denied insert says it again
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::unknown;
    f.process = "milvus";
    f.strength = 0.7f;
    denied_ = std::move(f);  // held for the water level, which the rootcoord's log may print after the client's error
  }

  void finish(FactSink& out) override {
    if (!denied_) return;
    Fact f = std::move(*denied_);
    denied_.reset();
    if (usage_ && total_ && *total_ > 0) {
      f.usage = *usage_ * units::MiB;
      f.total = *total_ * units::MiB;
    }
    f.detail = f.total ? fmt::format("Milvus's memory quota: writes denied with the node at {} of {}, past its high water level ({})",
                                     units::format_bytes(*f.usage), units::format_bytes(*f.total), kServerGuard)
                       : fmt::format("Milvus's memory quota: writes denied past the node's memory high water level ({})", kServerGuard);
    out.add(std::move(f));
  }

 private:
  std::optional<uint64_t> usage_, total_;  // the last water level line's, MiB
  std::optional<Fact> denied_;
};

}  // namespace

const RecognizerEntry kMilvusEntry{"milvus", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Milvus); }};

}  // namespace aimem
