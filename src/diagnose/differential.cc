// The cause differential of one incident: every cause the evidence supports,
// ranked, each with its confidence, what supports it, and the check that
// would tell it from the next one (diagnose --json `causes`).
//
// The rules in classify.cc choose the cause; this file lists the rivals. Each
// signal in the incident's facts speaks for one cause with a weight:
//   a phase near the failure: loading (model_load), a training step, a
//     profile run, CUDA-graph capture or serving a batch (concurrency_batch),
//     KV-cache sizing (kv_cache_context);
//   the arithmetic of the message: reserved-but-unallocated memory
//     (fragmentation), memory held by other processes (other_process);
//   settings: a long context (kv_cache_context), many sequences or a large
//     batch (concurrency_batch);
//   a memory series that only grew (leak_or_accumulation);
//   a configured limit or repeated kills at it (limit_too_low).
// Where no signal speaks, the layer's usual causes are listed at a low
// confidence, so the reader sees what to rule out. When the rules found no
// cause, "unknown" stays first: nothing is invented, and the check that would
// decide comes with it.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "diagnose/internal.h"

namespace aimem::detail {
namespace {

// The check that confirms a cause, written for the reader of the incident.
std::string_view check_for(Cause c) {
  switch (c) {
    case Cause::model_load:
      return "whether the failure came before the first request or step (the load lines: 'Loading weights', 'Model loading took', from_pretrained in the traceback)";
    case Cause::kv_cache_context:
      return "the same start with a shorter maximum context (max_model_len / n_ctx / --max-total-tokens halved): if it then fits, the context drove it";
    case Cause::concurrency_batch:
      return "the same run with one sequence or half the batch (--max-num-seqs, --batch-size, --parallel): if it then fits, the batch drove it";
    case Cause::leak_or_accumulation:
      return "memory over time (aimem watch, the process RSS or heap every minute): growth that never falls back is a leak or an accumulation";
    case Cause::fragmentation:
      return "torch.cuda.memory_summary() at the failure: reserved minus allocated; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True removes most of it";
    case Cause::other_process:
      return "nvidia-smi --query-compute-apps=pid,used_memory --format=csv (or free / ps for the host) just before the start: what else holds the memory";
    case Cause::limit_too_low:
      return "the peak of a successful run against the limit (kubectl top pod, docker stats, memory.peak): a steady need above the limit means the limit is too low";
    case Cause::deployment_overlap:
      return "whether two copies of the workload ran at the time (kubectl rollout history, the deployment's events)";
    default:
      return "";
  }
}

struct Board {
  std::vector<CauseCandidate> rows;
  void add(Cause c, double confidence, std::string evidence) {
    for (auto& r : rows) {
      if (r.cause != c) continue;
      r.confidence = std::max(r.confidence, confidence);
      if (!evidence.empty() && r.evidence.size() < 4 &&
          std::find(r.evidence.begin(), r.evidence.end(), evidence) == r.evidence.end())
        r.evidence.push_back(std::move(evidence));
      return;
    }
    CauseCandidate r;
    r.cause = c;
    r.confidence = confidence;
    if (!evidence.empty()) r.evidence.push_back(std::move(evidence));
    rows.push_back(std::move(r));
  }
};

std::string where(const Fact& f) {
  if (f.where.line) return fmt::format("line {}: {}", shown_line(f.where), f.detail.empty() ? f.text : f.detail);
  return f.detail.empty() ? f.text : f.detail;
}

void signals(const Incident& inc, const std::vector<Fact>& facts, Board& b) {
  const Fact* head = inc.failures.empty() ? nullptr : &facts[inc.failures.front()];
  auto consider = [&](const Fact& f) {
    switch (f.kind) {
      case FactKind::phase_load:
        if (f.detail == kLoadFinished || f.detail == kCommandEnded) break;  // marks a load or a run as over; supports nothing
        if (!head || near_in_source(f, *head, 400)) b.add(Cause::model_load, 0.5, where(f));
        break;
      case FactKind::phase_serve:
        if (f.detail == kBatchOfOne) break;  // a mark read beside a step's cues; supports nothing alone
        // A step's cue, or what the cue names (the KV cache, a list kept).
        if (!head || near_in_source(f, *head, 80))
          b.add(f.cause != Cause::unknown && f.cause != Cause::model_load ? f.cause : Cause::concurrency_batch, 0.45, where(f));
        break;
      case FactKind::memory_usage:
        if (text::starts_with(f.detail, "growing")) b.add(Cause::leak_or_accumulation, 0.6, where(f));
        if (text::starts_with(f.detail, "jumped")) b.add(Cause::concurrency_batch, 0.55, where(f));
        break;
      case FactKind::memory_limit:
        if (f.limit && *f.limit > 0) b.add(Cause::limit_too_low, 0.35, "a configured limit of " + units::format_bytes(*f.limit));
        break;
      case FactKind::restarts:
        if (f.count && *f.count >= 3) b.add(Cause::limit_too_low, 0.4, fmt::format("killed again after {} restarts", *f.count));
        break;
      case FactKind::runtime_setting:
      case FactKind::kv_capacity:
        if ((f.max_model_len && *f.max_model_len >= 32768) || (f.ctx && *f.ctx >= 32768))
          b.add(Cause::kv_cache_context, 0.35, fmt::format("a context of {} tokens", f.max_model_len ? *f.max_model_len : *f.ctx));
        if ((f.sequences && *f.sequences >= 16) || (f.batch_tokens && *f.batch_tokens >= 8192))
          b.add(Cause::concurrency_batch, 0.3,
                f.sequences ? fmt::format("{} concurrent sequences", *f.sequences) : fmt::format("{} batched tokens", *f.batch_tokens));
        break;
      default:
        break;
    }
    if (f.kind == FactKind::gpu_oom || f.kind == FactKind::gpu_state) {
      if (f.reserved_unallocated && *f.reserved_unallocated >= 256 * units::MiB)
        b.add(Cause::fragmentation, f.total && *f.reserved_unallocated * 10 >= *f.total ? 0.55 : 0.35,
              units::format_bytes(*f.reserved_unallocated) + " reserved by PyTorch but unallocated");
      if (f.other_processes && *f.other_processes > 0)
        b.add(Cause::other_process, f.total && *f.other_processes * 4 >= *f.total ? 0.6 : 0.3,
              units::format_bytes(*f.other_processes) + " held by other processes on the device");
    }
  };
  for (size_t i : inc.failures) consider(facts[i]);
  for (size_t i : inc.context) consider(facts[i]);
}

// The usual causes of a layer, for when no signal names a rival.
void priors(Layer layer, Board& b) {
  auto add = [&](Cause c, double p) { b.add(c, p, ""); };
  switch (layer) {
    case Layer::gpu_vram:
      add(Cause::concurrency_batch, 0.2), add(Cause::kv_cache_context, 0.15), add(Cause::model_load, 0.15);
      break;
    case Layer::host_ram:
      add(Cause::model_load, 0.15), add(Cause::leak_or_accumulation, 0.15), add(Cause::concurrency_batch, 0.1);
      break;
    case Layer::container_limit:
    case Layer::k8s_pod_limit:
      add(Cause::limit_too_low, 0.2), add(Cause::leak_or_accumulation, 0.15), add(Cause::model_load, 0.1);
      break;
    case Layer::js_heap:
    case Layer::jvm_heap:
      add(Cause::leak_or_accumulation, 0.2), add(Cause::limit_too_low, 0.2);
      break;
    case Layer::k8s_eviction:
    case Layer::userspace_oom_killer:
      add(Cause::leak_or_accumulation, 0.15), add(Cause::other_process, 0.15), add(Cause::limit_too_low, 0.1);
      break;
    default:
      break;
  }
}

}  // namespace

void differential(Incident& inc, const std::vector<Fact>& facts, float strength, const std::string& why) {
  inc.causes.clear();
  if (inc.cause == Cause::not_memory || inc.layer == Layer::not_memory) {
    inc.causes.push_back({Cause::not_memory, inc.confidence, {why.empty() ? "not a memory failure" : why}, ""});
    return;
  }
  Board b;
  signals(inc, facts, b);
  priors(inc.layer, b);
  std::erase_if(b.rows, [&](const CauseCandidate& r) { return r.cause == inc.cause; });
  std::stable_sort(b.rows.begin(), b.rows.end(), [](const auto& x, const auto& y) { return x.confidence > y.confidence; });
  if (b.rows.size() > 4) b.rows.resize(4);

  CauseCandidate first;
  first.cause = inc.cause;
  first.confidence = inc.confidence;
  if (!why.empty()) first.evidence.push_back(why);
  if (inc.cause == Cause::unknown) {
    first.evidence.push_back("nothing in the evidence shows what drove the memory up");
    first.confidence = inc.confidence;
  }
  // A rival can never outrank the rules' choice: cap it below.
  double cap = inc.cause == Cause::unknown ? 0.6 : std::max(0.05, static_cast<double>(strength) - 0.05);
  for (auto& r : b.rows) r.confidence = std::round(std::min(r.confidence, cap) * 100.0) / 100.0;

  // What would decide between the first and the runner-up.
  if (!b.rows.empty()) {
    const CauseCandidate& next = b.rows.front();
    if (inc.cause == Cause::unknown)
      first.decide_with = fmt::format("to confirm {}: {}", to_string(next.cause), check_for(next.cause));
    else
      first.decide_with = fmt::format("to rule out {}: {}", to_string(next.cause), check_for(next.cause));
  } else if (inc.cause != Cause::unknown) {
    first.decide_with = std::string(check_for(inc.cause));
  }
  for (size_t k = 0; k < b.rows.size(); ++k) {
    Cause other = k == 0 ? inc.cause : b.rows[k - 1].cause;
    if (other == Cause::unknown) b.rows[k].decide_with = std::string(check_for(b.rows[k].cause));
    else b.rows[k].decide_with = fmt::format("{} (against {})", check_for(b.rows[k].cause), to_string(other));
  }
  inc.causes.push_back(std::move(first));
  for (auto& r : b.rows) inc.causes.push_back(std::move(r));
}

}  // namespace aimem::detail
