// RabbitMQ's memory alarm: the broker blocks its publishers when the Erlang
// VM's memory passes vm_memory_high_watermark (0.4 of the RAM it sees by
// default, or an absolute figure). As the broker logs it, by version:
//
//   Memory limit set to 406MB of 1016MB total.                                       2.x-3.6 (the cap, at start)
//   Memory high watermark set to 819 MiB (858993459 bytes) of 2048 MiB (2147483648 bytes) total   3.7+
//   vm_memory_high_watermark set. Memory used:861143040 allowed:858993459           the alarm's figures
//   memory resource limit alarm set on node 'rabbit@mq-1'.                          the alarm itself
//   *** Publishers will be blocked until this alarm clears ***
//   memory resource limit alarm cleared on node 'rabbit@mq-1'                        (the alarm handled: recovered)
//   disk resource limit alarm set on node 'rabbit@mq-1'.      the free-disk alarm: a look-alike (not_memory_failure)
// and `rabbitmqctl status` with the alarm raised:
//   {alarms,[{{resource_limit,memory,'rabbit@mq-1'},[]}]}                            3.6
//   Memory alarm on node rabbit@mq-1                                                  3.8+ ("Alarms" section)
//
// Like Redis's maxmemory, the pool is the broker's own setting, not one of the
// machine's: the layer stays unknown and the cause is the cap (limit_too_low)
// unless the diagnosis finds growth, as for Redis, DuckDB and PHP; the
// alarm itself does not say why the VM grew (queues kept in memory, the
// allocator's unused blocks). limit is the watermark, usage the memory used. A watermark of 0 bytes (RABBITMQ_VM_MEMORY_HIGH_WATERMARK
// =0, used to block publishers on purpose) raises the alarm from start-up:
// that is a setting, not a memory shortage (not_memory_failure).
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"memory resource limit alarm set"},
    {"alarms,\\[\\{\\{resource_limit,memory,", kRegex},
    {"Memory alarm on node "},
    {"disk resource limit alarm set", kCompanion},  // the disk alarm: blocks publishers the same way, for disk
    {"vm_memory_high_watermark set\\. Memory used: ?[0-9]+ allowed: ?[0-9]+", kRegex | kContext},
    {"Memory high watermark set to ", kContext},
    {"Memory limit set to [0-9]+MB of [0-9]+MB total", kRegex | kContext},
    {"memory resource limit alarm cleared", kContext},
    {"node '[^']+' down", kRegex | kContext},  // a peer's word that the node died
};

class RabbitMq final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (auto v = text::after(s, "Memory used:")) {  // the alarm's figures: used, then the watermark
      used_ = text::parse_u64(text::trim_left(*v));
      if (auto a = text::after(s, "allowed:")) watermark_ = text::parse_u64(text::trim_left(*a));
      return;
    }
    if (auto v = text::after(s, "Memory high watermark set to ")) {  // "819 MiB (858993459 bytes) of ..."
      if (auto b = text::after(*v, "(")) watermark_ = text::parse_u64(*b);
      return;
    }
    if (auto v = text::after(s, "Memory limit set to ")) {  // "406MB of 1016MB total."
      if (auto mb = text::parse_u64(*v)) watermark_ = *mb * units::MiB;
      return;
    }
    if (cleared_ && line.number > cleared_->where.line + kDeathLines) release(out);
    // The alarm cleared: the broker's memory fell back under the watermark
    // and publishers went on (a failure handled, diagnose.cc's recovered),
    // unless the node went down right after it (a peer's "node 'rabbit@x'
    // down"): then the clear was its death.
    if (size_t c = s.find("memory resource limit alarm cleared"); c != std::string_view::npos && seen_ && !guards::is_mention(s, c, 3)) {
      if (cleared_) return;
      Fact f = make_fact(line, FactKind::recovered, Family::runtime);
      f.detail = std::string(kAlarmCleared);
      f.process = "beam.smp";
      cleared_ = std::move(f);
      return;
    }
    if (text::contains(s, "' down") && text::contains(s, "node '")) {
      cleared_.reset();
      return;
    }
    // The free-disk alarm blocks publishers the same way: a look-alike.
    if (size_t d = s.find("disk resource limit alarm set"); d != std::string_view::npos && !guards::is_mention(s, d, 3)) {
      if (seen_disk_) return;
      seen_disk_ = true;
      return look_alike(line, "RabbitMQ's free-disk alarm: publishers are blocked for disk space, not memory", 0.75f, out);
    }
    size_t p = s.find("memory resource limit alarm set");
    if (p == std::string_view::npos) p = s.find("resource_limit,memory,");
    if (p == std::string_view::npos) p = s.find("Memory alarm on node ");
    if (p == std::string_view::npos || guards::is_advice_line(s) || guards::is_mention(s, p, 3)) return;
    if (seen_ && line.number <= seen_ + 40) return;  // set on one node, then reported across the cluster
    seen_ = line.number;
    if (watermark_ && *watermark_ == 0)
      return look_alike(line, "RabbitMQ's memory alarm under a watermark of 0 bytes: a setting that blocks publishers, not a shortage",
                        0.7f, out);
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::unknown;
    f.cause = Cause::limit_too_low;
    f.limit = watermark_;
    f.usage = used_;
    f.process = "beam.smp";
    f.detail = watermark_ ? fmt::format("RabbitMQ's memory alarm: the broker passed its vm_memory_high_watermark ({}) and blocks "
                                        "publishers: a cap of the broker, not a pool of the machine",
                                        units::format_bytes(*watermark_))
                          : std::string("RabbitMQ's memory alarm: the broker passed its vm_memory_high_watermark and blocks "
                                        "publishers: a cap of the broker, not a pool of the machine");
    f.strength = 0.7f;
    out.add(std::move(f));
  }

  void finish(FactSink& out) override { release(out); }

 private:
  // An alarm that blocks publishers for something other than a memory shortage.
  static void look_alike(const Line& line, std::string_view detail, float strength, FactSink& out) {
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
    f.detail = std::string(detail);
    f.process = "beam.smp";
    f.strength = strength;
    out.add(std::move(f));
  }

  void release(FactSink& out) {
    if (cleared_) out.add(std::move(*cleared_));
    cleared_.reset();
  }

  // A clear held this many lines for a node's death after it.
  static constexpr uint64_t kDeathLines = 40;
  std::optional<Fact> cleared_;
  std::optional<uint64_t> watermark_;
  std::optional<uint64_t> used_;
  uint64_t seen_ = 0;
  bool seen_disk_ = false;
};

}  // namespace

const RecognizerEntry kRabbitMqEntry{"rabbitmq", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new RabbitMq); }};

}  // namespace aimem
