// Memory budgets a JVM service keeps inside its own heap, refusing work before
// the heap itself runs out (jvm_heap_oom facts: the pool is the Java heap).
//
// Elasticsearch's circuit breakers (6.x-8.x), as the exception or its JSON
// reason prints them:
//   [parent] Data too large, data for [<http_request>] would be [1031203624/983.4mb], which is larger than
//   the limit of [1020054732/972.7mb], real usage: [1031203624/983.4mb], new bytes reserved: [0/0b], usages [...]
//   [fielddata] Data too large, data for [_id] would be [...], which is larger than the limit of [...]
//   (1.x-6.x) [parent] Data too large, data for [<http_request>] would be larger than limit of [22548578304/21gb]
// (limit = the breaker's limit, usage = what the heap would hold, requested =
// the new bytes reserved; the parent breaker's "real usage" is the heap's own
// use before the request.)
// Trino and Presto, per query:
//   Query exceeded per-node user memory limit of 1.20GB [Allocated: 1.20GB, Delta: 4.02MB, Top Consumers: {...}]
//   Query exceeded per-node total memory limit of 2GB / Query exceeded distributed user memory limit of 20GB
//   Query exceeded local memory limit of 1GB / EXCEEDED_LOCAL_MEMORY_LIMIT / EXCEEDED_GLOBAL_MEMORY_LIMIT
// A query over its configured budget is the budget against the work: cause
// limit_too_low unless the diagnosis finds more (the request's share).
// Spark's driver, which refuses task results past spark.driver.maxResultSize
// (1g by default) to keep its heap whole:
//   Total size of serialized results of 2569 tasks (1024.3 MB) is bigger than spark.driver.maxResultSize (1024.0 MB)
// Results just over the budget are the budget (limit_too_low); results
// several times it are one collect() pulling far more than a driver should
// hold (concurrency_batch: one request too large).
#include <optional>
#include <string>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

// Companions (gate.h): in a log large enough to be read through the gate they
// are found in blocks a gate word made hot (a client's "exited with code",
// a query's "abort"); a pasted excerpt is read whole.
constexpr Pattern kPatterns[] = {
    {"Data too large, data for", kCompanion},
    {"exceeded per-node", kCompanion},
    {"exceeded distributed", kCompanion},
    {"exceeded local memory limit", kCompanion},
    {"EXCEEDED_LOCAL_MEMORY_LIMIT", kCompanion},
    {"EXCEEDED_GLOBAL_MEMORY_LIMIT", kCompanion},
    {"bigger than spark.driver.maxResultSize", kCompanion},
};

// "[1020054732/972.7mb]" -> 1020054732: the exact byte count before the slash.
std::optional<uint64_t> bracketed_bytes(std::string_view s, std::string_view lead) {
  size_t at = s.find(lead);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = s.substr(at + lead.size());
  size_t open = rest.find('[');
  if (open == std::string_view::npos || open > 2) return std::nullopt;
  return platform::parse_binary_size(rest.substr(open + 1));
}

class JvmBudgets final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (repeat_ + 3 > line.number && repeat_) return;  // the same refusal echoed (a client wrapping the server's error)
    if (text::contains(s, "Data too large, data for")) return breaker(line, out);
    if (text::contains(s, "bigger than spark.driver.maxResultSize")) return spark_results(line, out);
    query(line, out);
  }

 private:
  void breaker(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    auto limit = bracketed_bytes(s, "the limit of");
    if (!limit) limit = bracketed_bytes(s, "than limit of");  // 1.x-6.x: "would be larger than limit of [N/21gb]"
    if (!limit) return;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    size_t open = s.rfind('[', s.find("] Data too large"));
    std::string name = open == std::string_view::npos ? "" : std::string(s.substr(open + 1, s.find("] Data too large") - open - 1));
    f.detail = "Elasticsearch circuit breaker" + (name.empty() || name.size() > 32 ? std::string() : " [" + name + "]");
    f.limit = limit;
    f.usage = bracketed_bytes(s, "would be");
    f.requested = bracketed_bytes(s, "new bytes reserved:");
    f.heap_limit = limit;
    f.strength = 0.8f;
    repeat_ = line.number;
    out.add(std::move(f));
  }

  void spark_results(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    auto results = text::after(s, " tasks (");
    auto budget = text::after(s, "spark.driver.maxResultSize (");
    if (!results || !budget) return;
    auto used = units::parse_log_size(*results), limit = units::parse_log_size(*budget);
    if (!used || !limit || *limit == 0) return;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.detail = "Spark driver result budget (spark.driver.maxResultSize)";
    f.usage = used;
    f.limit = limit;
    f.cause = *used <= 2 * *limit ? Cause::limit_too_low : Cause::concurrency_batch;
    f.strength = 0.8f;
    repeat_ = line.number;
    out.add(std::move(f));
  }

  void query(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    Fact f = make_fact(line, FactKind::jvm_heap_oom, Family::jvm);
    f.detail = "query memory limit (Trino/Presto)";
    size_t of = s.find("memory limit of ");
    if (of != std::string_view::npos) f.limit = platform::parse_binary_size(platform::token(s.substr(of + 16)));
    f.strength = 0.75f;
    repeat_ = line.number;
    out.add(std::move(f));
  }

  uint64_t repeat_ = 0;
};

}  // namespace

const RecognizerEntry kJvmBudgetsEntry{"jvm_budgets", Family::jvm, kPatterns,
                                       [] { return std::unique_ptr<Recognizer>(new JvmBudgets); }};

}  // namespace aimem
