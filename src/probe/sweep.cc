#include "probe/sweep.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/time.h"
#include "core/units.h"

namespace aimem::probe {

namespace {

constexpr int kMaxDistinctPrompts = 64;   // per step; requests beyond reuse them in turn
constexpr int kMaxRequestsPerStep = 100000;
constexpr int64_t kMaxConcurrency = 1024;
constexpr size_t kMaxStepItlSamples = 1 << 16;

// What a step's requests gave, gathered as they end (under a mutex): per
// request a few numbers, and a bounded sample of inter-token gaps, so that a
// step of 100,000 requests of a million tokens each holds a few MB.
struct Tally {
  std::mutex mu;
  StepResult* step = nullptr;
  std::vector<double> ttft;
  std::vector<std::pair<double, double>> started_ttft;  // (start, ttft) for the pressure split
  std::vector<double> itl;
  uint64_t itl_seen = 0, rng = 0x853C49E6748FEA9Bull;
  uint64_t tokens = 0;

  void add(double start_s, const RequestResult& r) {
    std::lock_guard<std::mutex> lock(mu);
    ++step->requests;
    if (!r.ok) {
      ++step->errors;
      ++step->error_kinds[r.error_kind.empty() ? "error" : r.error_kind];
      if (step->first_error.empty()) step->first_error = r.error;
      return;
    }
    if (r.ttft_s >= 0) {
      ttft.push_back(r.ttft_s);
      started_ttft.emplace_back(start_s, r.ttft_s);
    }
    // A request's sample stands for all of its gaps: each is offered to the
    // step's reservoir as often as the gaps it stands for, capped.
    for (double gap : r.itl_s) {
      ++itl_seen;
      if (itl.size() < kMaxStepItlSamples) {
        itl.push_back(gap);
        continue;
      }
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t j = (rng >> 17) % itl_seen;
      if (j < kMaxStepItlSamples) itl[j] = gap;
    }
    tokens += static_cast<uint64_t>(std::max(0, r.completion_tokens));
  }

  void finish(double wall_s) {
    step->ttft_p50_s = percentile(ttft, 50);
    step->ttft_p95_s = percentile(ttft, 95);
    step->itl_p50_s = percentile(itl, 50);
    if (wall_s > 0 && step->requests > step->errors) step->tokens_per_s = double(tokens) / wall_s;
    step->duration_s = wall_s;
  }
};

}  // namespace

std::vector<watch::TrendFinding> load_findings(const SweepResult& r, const std::string& pool_id) {
  if (!r.breaking_point) return {};
  const Point bp = *r.breaking_point;
  const StepResult *by_conc = nullptr, *by_ctx = nullptr, *broke = nullptr;
  for (const auto& s : r.steps) {
    if (s.context == bp.context && s.concurrency == bp.concurrency) broke = &s;
    if (s.status != "ok") continue;
    if (s.context == bp.context && s.concurrency < bp.concurrency && (!by_conc || s.concurrency > by_conc->concurrency)) by_conc = &s;
    if (s.concurrency == bp.concurrency && s.context < bp.context && (!by_ctx || s.context > by_ctx->context)) by_ctx = &s;
  }
  const StepResult* base = by_conc ? by_conc : by_ctx;
  if (!base) return {};
  auto peak = [](const StepResult* s) {
    return s ? (s->peaks.cgroup ? s->peaks.cgroup : s->peaks.process) : std::nullopt;
  };
  watch::TrendFinding f;
  f.pool_id = pool_id;
  f.shape = watch::Shape::load_step;
  f.dimension = by_conc ? "concurrency" : "context_tokens";
  f.correlation = 1.0;
  if (auto p = peak(base)) f.start_bytes = *p;
  if (auto p = peak(broke)) f.peak_bytes = *p;
  std::string base_peak = peak(base) ? fmt::format(" (peak {})", units::format_bytes(*peak(base))) : "";
  if (by_conc)
    f.summary = fmt::format("aimem probe: context {} passed at concurrency {}{} and the server died at concurrency {}: memory grows with concurrent sequences",
                            bp.context, base->concurrency, base_peak, bp.concurrency);
  else
    f.summary = fmt::format("aimem probe: concurrency {} passed at context {}{} and the server died at context {}: memory grows with context length",
                            bp.concurrency, base->context, base_peak, bp.context);
  return {f};
}

bool closed_by(const std::vector<Point>& failures, int64_t context, int64_t concurrency) {
  for (const auto& f : failures)
    if (context >= f.context && concurrency >= f.concurrency) return true;
  return false;
}

std::optional<Point> safe_limits(const std::vector<StepResult>& steps, double headroom_pct) {
  const StepResult* best = nullptr;
  for (const auto& s : steps) {
    if (s.status != "ok") continue;
    if (!best || s.context * s.concurrency > best->context * best->concurrency ||
        (s.context * s.concurrency == best->context * best->concurrency && s.context > best->context))
      best = &s;
  }
  if (!best) return std::nullopt;
  const double keep = std::clamp(1.0 - headroom_pct / 100.0, 0.0, 1.0);
  int64_t ctx = static_cast<int64_t>(std::floor(double(best->context) * keep));
  if (ctx > 1024) ctx -= ctx % 256;
  int64_t conc = std::max<int64_t>(1, static_cast<int64_t>(std::floor(double(best->concurrency) * keep)));
  return Point{std::max<int64_t>(1, ctx), conc};
}

namespace {

// The requests of one step, made before the clock starts: tokenize calls are
// not load. A prepared request holds its prompt's size, not its text
// (PromptText): the text is written as it is sent. Stops at the first prompt
// that cannot be made (prompt_error) or at the sweep's deadline (out_of_time).
struct Prepared {
  std::vector<PreparedRequest> requests;
  std::string prompt_error;
  bool out_of_time = false;
};
Prepared prepare_requests(const Client& client, PromptMaker& prompts, const SweepOptions& o, const std::string& model,
                          int prompt_tokens, int max_new, int distinct, int first_index, double deadline) {
  Prepared out;
  for (int i = 0; i < distinct; ++i) {
    if (steady_seconds() >= deadline) {
      out.out_of_time = true;
      break;
    }
    auto p = prompts.make(prompt_tokens, first_index + i);
    if (!p) {
      out.prompt_error = p.error().message;
      break;
    }
    RequestSpec spec;
    spec.api = o.api;
    spec.model = model;
    spec.prompt = std::move(*p);
    spec.max_tokens = max_new;
    out.requests.push_back(client.prepare(spec));
  }
  return out;
}

// Sends a step's `requests` from `threads` workers, each with its own
// connection (kept alive for the step, ClientOptions::keep_alive). The first
// wave always goes; later requests stop at the step's or the sweep's deadline.
void send_requests(const Client& client, const std::vector<PreparedRequest>& prepared, int requests, int threads,
                   double deadline, double step_deadline, Tally& tally) {
  std::atomic<int> next{0};
  auto worker = [&] {
    Connection connection(client);
    for (;;) {
      int i = next.fetch_add(1);
      if (i >= requests) return;
      double now = steady_seconds();
      if (now >= deadline) return;
      if (i >= threads && now >= step_deadline) return;
      const double start = steady_seconds();
      RequestResult r = connection.send(prepared[static_cast<size_t>(i) % prepared.size()]);
      tally.add(start, r);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
}

// Runs a step's requests while the monitor measures the server's memory;
// each request's TTFT goes to `below` or `above` by the memory pressure at
// its start. A prompt that could not be made is the step's one failure.
void measure_step(const Client& client, Monitor& monitor, const SweepOptions& o, const Prepared& ready, int requests,
                  int threads, int64_t prompt_tokens, double deadline, StepResult& step, std::vector<double>& below,
                  std::vector<double>& above) {
  const std::string& prompt_error = ready.prompt_error;
  Tally tally;
  tally.step = &step;
  monitor.begin_step();
  const double s0 = steady_seconds();
  if (!prompt_error.empty()) {
    RequestResult r;
    r.ok = false;
    r.error_kind = prompt_error.find("connect") != std::string::npos ? "connect"
                   : prompt_error.find("time bound") != std::string::npos ? "time_bound" : "prompt";
    r.error = fmt::format("could not build a {}-token prompt: {}", prompt_tokens, prompt_error);
    tally.add(s0, r);
  } else {
    const double step_deadline = o.step_duration_s > 0 ? s0 + o.step_duration_s : deadline;
    send_requests(client, ready.requests, requests, threads, deadline, step_deadline, tally);
  }
  const double wall = steady_seconds() - s0;
  step.peaks = monitor.end_step();
  tally.finish(wall);
  for (const auto& [start, ttft] : tally.started_ttft) {
    auto ratio = monitor.used_ratio_at(start);
    if (!ratio) continue;
    (*ratio >= o.pressure_ratio ? above : below).push_back(ttft);
  }
  if (!monitor.server_alive()) step.server_died = true;
}

// The envelope once every step ran or was skipped: the last good step, the
// limits with the headroom, and TTFT below and above the memory pressure.
void finish_sweep(const SweepOptions& o, std::vector<StepResult> skipped, std::vector<double>& below,
                  std::vector<double>& above, SweepResult& out) {
  if (!out.breaking_point) {
    // No failure: the last good step is the largest that passed.
    auto lim = safe_limits(out.steps, 0);
    if (lim) out.last_good = lim;
  }
  for (auto& s : skipped) out.steps.push_back(std::move(s));
  out.limits = safe_limits(out.steps, o.headroom_pct);
  out.ttft_split.below_requests = static_cast<int>(below.size());
  out.ttft_split.above_requests = static_cast<int>(above.size());
  out.ttft_split.below_p50_s = percentile(below, 50);
  out.ttft_split.above_p50_s = percentile(above, 50);
}

}  // namespace

SweepResult run_sweep(const Client& client, Monitor& monitor, const SweepOptions& o,
                      const std::function<void(const StepResult&)>& progress,
                      const std::function<void(const StepStart&)>& starting) {
  SweepResult out;
  out.ttft_split.threshold = o.pressure_ratio;
  const double t0 = o.started_s > 0 ? o.started_s : steady_seconds();
  const double deadline = t0 + o.total_timeout_s;
  const std::string time_bound = fmt::format("the sweep's time bound ({}) was reached", timeutil::format_duration(o.total_timeout_s));

  std::vector<int64_t> contexts = o.contexts, conc = o.concurrency;
  std::sort(contexts.begin(), contexts.end());
  contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());
  std::sort(conc.begin(), conc.end());
  conc.erase(std::unique(conc.begin(), conc.end()), conc.end());

  out.model = o.model;
  if (out.model.empty()) {
    auto m = client.first_model();
    if (m) out.model = *m;
    else out.notes.push_back(fmt::format("the server named no model ({}); requests name none", m.error().message));
  }
  PromptMaker prompts(client, out.model);

  std::vector<Point> failures;
  std::vector<double> below, above;
  bool stop_all = false;
  std::string stop_why;
  std::optional<Point> last_ok_run;
  std::vector<StepResult> skipped;
  const int planned = static_cast<int>(contexts.size() * conc.size());
  int step_index = 0;
  // The time bound ends the sweep: this step and every later one are skipped.
  auto stop_at_time_bound = [&](StepResult& step, bool report) {
    stop_all = true;
    stop_why = time_bound;
    out.complete = false;
    out.incomplete_why = stop_why;
    step.status = "skipped";
    step.skipped_why = stop_why;
    if (report && progress) progress(step);
    skipped.push_back(step);
  };

  for (int64_t ctx : contexts) {
    for (int64_t n : conc) {
      ++step_index;
      StepResult step;
      step.context = ctx;
      step.concurrency = n;
      if (stop_all) {
        step.status = "skipped";
        step.skipped_why = stop_why;
        skipped.push_back(step);
        continue;
      }
      if (closed_by(failures, ctx, n)) {
        step.status = "skipped";
        step.skipped_why = "beyond a failed step";
        skipped.push_back(step);
        continue;
      }
      if (steady_seconds() >= deadline) {
        stop_at_time_bound(step, false);
        continue;
      }
      const int threads = static_cast<int>(std::clamp<int64_t>(n, 1, kMaxConcurrency));
      const int requests = std::clamp(o.requests_per_step > 0 ? o.requests_per_step : 2 * threads, threads, kMaxRequestsPerStep);
      int max_new = o.max_new_tokens;
      int64_t prompt_tokens = ctx - max_new;
      if (prompt_tokens < 1) {
        prompt_tokens = std::max<int64_t>(1, ctx / 2);
        max_new = static_cast<int>(std::max<int64_t>(1, ctx - prompt_tokens));
      }
      step.prompt_tokens = static_cast<int>(prompt_tokens);
      if (starting) starting(StepStart{step_index, planned, ctx, n, requests, step.prompt_tokens});

      // Prompts and their request bodies are made before the clock starts.
      const int distinct = std::min(requests, std::max(threads, kMaxDistinctPrompts));
      Prepared ready = prepare_requests(client, prompts, o, out.model, static_cast<int>(prompt_tokens), max_new, distinct,
                                        static_cast<int>(out.steps.size()) * kMaxDistinctPrompts, deadline);
      std::vector<PreparedRequest>& prepared = ready.requests;
      const std::string& prompt_error = ready.prompt_error;
      if (!prompts.how().empty()) out.prompt_how = prompts.how();
      if (ready.out_of_time || (prepared.empty() && prompt_error.empty())) {
        // The time bound came while the prompts were being made: the step did not run.
        stop_at_time_bound(step, true);
        continue;
      }

      measure_step(client, monitor, o, ready, requests, threads, prompt_tokens, deadline, step, below, above);
      if (step.server_died) out.server_died = true;
      const auto cut = step.error_kinds.find("time_bound");
      if (!step.server_died && (step.requests == 0 || (cut != step.error_kinds.end() && cut->second == step.errors))) {
        // The time bound came before any request of the step went, or ended
        // requests that had not failed: the step says nothing of the server.
        stop_at_time_bound(step, true);
        continue;
      }
      if (step.errors > 0 || step.server_died) {
        step.status = "failed";
        failures.push_back(Point{ctx, n});
        if (!out.breaking_point) {
          out.breaking_point = Point{ctx, n};
          out.last_good = last_ok_run;
        }
      } else if (step.ttft_p95_s && *step.ttft_p95_s > o.slow_ttft_s) {
        step.status = "slow";
      } else {
        step.status = "ok";
      }
      out.steps.push_back(step);
      if (step.status == "ok") last_ok_run = Point{ctx, n};
      if (progress) progress(out.steps.back());
      if (step.server_died) {
        stop_all = true;
        stop_why = "the server died";
      }
    }
  }
  finish_sweep(o, std::move(skipped), below, above, out);
  return out;
}

}  // namespace aimem::probe

namespace aimem::probe {

Result<std::vector<int64_t>> parse_count_list(const std::string& text, const std::string& flag, int64_t max) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    pos = comma + 1;
    if (item.empty()) return make_error(fmt::format("{} '{}': an empty item (write e.g. 512,2k,8k)", flag, text));
    int64_t mult = 1;
    if (item.back() == 'k' || item.back() == 'K') {
      mult = 1024;
      item.pop_back();
    }
    if (item.empty() || item.size() > 9 || !std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      return make_error(fmt::format("{} '{}': '{}' is not a count (write e.g. 512,2k,8k)", flag, text, text.substr(0, 0) + item));
    int64_t v = std::stoll(item) * mult;
    if (v < 1 || v > max) return make_error(fmt::format("{} '{}': {} is outside 1..{}", flag, text, v, max));
    out.push_back(v);
    if (out.size() > 64) return make_error(fmt::format("{}: more than 64 values", flag));
    if (comma == text.size()) break;
  }
  return out;
}

Limits to_limits(const ProbeContext& c, const SweepResult& r) {
  Limits l;
  l.measured_at = timeutil::format_iso(timeutil::now_us());
  l.url = c.url;
  l.model = r.model;
  l.max_new_tokens = c.options.max_new_tokens;
  l.headroom_pct = c.options.headroom_pct;
  for (const auto& s : r.steps)
    if (s.status == "ok") l.safe.push_back(Point{s.context, s.concurrency});
  l.breaking_point = r.breaking_point;
  if (r.limits) {
    l.max_context = r.limits->context;
    l.max_concurrency = r.limits->concurrency;
  }
  for (const auto& s : r.steps) {
    auto up = [](std::optional<uint64_t>& dst, const std::optional<uint64_t>& v) {
      if (v && (!dst || *v > *dst)) dst = v;
    };
    if (s.status != "ok") continue;
    up(l.peak_process_bytes, s.peaks.process);
    up(l.peak_cgroup_bytes, s.peaks.cgroup);
    up(l.peak_gpu_bytes, s.peaks.gpu);
  }
  return l;
}

}  // namespace aimem::probe
