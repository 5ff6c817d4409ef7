// What to tell the on-call engineer about one incident: a one-line summary
// with the numbers the evidence holds, the pool, the evidence quoted, fixes
// ranked least destructive first (DESIGN.md §1), and the next commands to run.
//
// Fix order where it applies: fewer concurrent sequences or a smaller batch;
// a shorter maximum context; a smaller or more quantized model (validated on
// the real task); offload layers to system RAM if latency allows; stop other
// GPU processes; a larger GPU or a split across devices. For limits: compare
// the actual peak with requests and limits before raising one, never above the
// node, and leave headroom for a rolling deployment's second copy.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/cgroup_path.h"
#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "diagnose/internal.h"

namespace aimem::detail {
namespace {

using units::format_bytes;

struct Numbers {
  const Fact* head = nullptr;
  std::optional<uint64_t> limit, usage, requested, total, free, reserved_unallocated, others, rss, heap_limit;
  std::optional<uint64_t> max_model_len, kv_tokens, ctx, batch_tokens, sequences, kv_bytes, restarts, host_total;
  std::optional<double> gpu_util, concurrency_x;
  std::optional<int> gpu, exit_code;
  std::optional<int64_t> pid;
  std::string process, cgroup, container, pod, unit, runtime, configured_limit_source;
  std::optional<uint64_t> configured_limit, request;
  std::optional<double> uptime;
  bool node = false;  // the workload is a Node.js process
};

Numbers gather(const Incident& inc, const std::vector<Fact>& facts) {
  Numbers n;
  auto take = [](auto& dst, const auto& src) {
    if (!dst && src) dst = src;
  };
  auto str = [](std::string& dst, const std::string& src) {
    if (dst.empty() && !src.empty()) dst = src;
  };
  std::vector<size_t> all = inc.failures;
  all.insert(all.end(), inc.context.begin(), inc.context.end());
  if (!inc.failures.empty()) n.head = &facts[inc.failures.front()];
  for (size_t i : all) {
    const Fact& f = facts[i];
    if (f.kind == FactKind::memory_limit) {
      if (f.limit && *f.limit > 0 && !n.configured_limit) {
        n.configured_limit = f.limit;
        n.configured_limit_source = f.detail;
      }
      continue;
    }
    if (f.kind == FactKind::memory_request) {
      take(n.request, f.requested ? f.requested : f.limit);
      continue;
    }
    if (f.kind == FactKind::host_state) {
      take(n.host_total, f.total);
      continue;
    }
    if (f.kind == FactKind::restarts) {
      if (f.count) n.restarts = std::max(n.restarts.value_or(0), *f.count);
      continue;
    }
    take(n.limit, f.limit);
    take(n.usage, f.usage);
    take(n.requested, f.requested);
    take(n.total, f.total);
    take(n.free, f.free);
    take(n.reserved_unallocated, f.reserved_unallocated);
    take(n.others, f.other_processes);
    take(n.rss, f.rss);
    take(n.heap_limit, f.heap_limit);
    take(n.max_model_len, f.max_model_len);
    take(n.kv_tokens, f.kv_tokens);
    take(n.ctx, f.ctx);
    take(n.batch_tokens, f.batch_tokens);
    take(n.sequences, f.sequences);
    take(n.kv_bytes, f.kv_bytes);
    take(n.gpu, f.gpu);
    take(n.exit_code, f.exit_code);
    take(n.uptime, f.uptime_at_failure_s);
    if (f.ratio && f.kind == FactKind::runtime_setting && text::contains(f.detail, "gpu_memory_utilization")) take(n.gpu_util, f.ratio);
    if (f.ratio && f.kind == FactKind::kv_capacity) take(n.concurrency_x, f.ratio);
    if (is_failure(f.kind)) {
      take(n.pid, f.pid);
      str(n.process, f.process);
      str(n.cgroup, f.cgroup);
    }
    str(n.container, f.container);
    str(n.pod, f.pod);
    str(n.unit, f.unit);
    if (f.family == Family::node || f.process == "node" || f.process == "nodejs") n.node = true;
    if (f.family == Family::vllm || f.family == Family::llamacpp || f.family == Family::tgi) {
      if (n.runtime.empty()) n.runtime = std::string(to_string(f.family));
    }
  }
  if (!n.limit && n.configured_limit) n.limit = n.configured_limit;
  return n;
}

// Who printed the failure, for a summary without a process name: the
// program its reader knows ("PyTorch", "ONNX Runtime"), or "a process" for
// the generic reader, which knows none.
std::string speaker(const Fact& h) { return h.family == Family::generic ? "a process" : std::string(source_label(h.family)); }

std::string who(const Numbers& n) {
  if (!n.process.empty() && n.pid) return fmt::format("{} (pid {})", n.process, *n.pid);
  if (!n.process.empty()) return n.process;
  if (!n.container.empty()) return "container " + n.container;
  if (n.pid) return fmt::format("pid {}", *n.pid);
  return "a process";
}

uint64_t round_up_mib(double bytes, uint64_t step_mib) {
  uint64_t step = step_mib * units::MiB;
  return static_cast<uint64_t>(std::ceil(bytes / static_cast<double>(step))) * step;
}

std::string k8s_quantity(uint64_t bytes) {
  if (bytes % units::GiB == 0) return fmt::format("{}Gi", bytes / units::GiB);
  return fmt::format("{}Mi", (bytes + units::MiB - 1) / units::MiB);
}

// One sentence per layer and headline fact. Kept whole: a switch read as a table, long
// because the layers are many, not because it does several jobs.
void summarize(Incident& inc, const Numbers& n) {
  const Fact* h = n.head;
  std::string where_gpu = n.gpu ? fmt::format("GPU {}", *n.gpu) : "the GPU";
  switch (inc.layer) {
    case Layer::container_limit:
    case Layer::k8s_pod_limit:
      if (h && h->family == Family::generic && h->kind == FactKind::kernel_oom_kill) {
        inc.summary = fmt::format("{} was stopped at its {} limit ({})", who(n), n.limit ? format_bytes(*n.limit) + " memory" : std::string("memory"),
                                  h->detail);
      } else if (h && h->detail == kPerAppLimitKill) {
        inc.summary = fmt::format("{} was killed at its own memory limit{} (the OS's per-app cap: iOS or macOS jetsam)", who(n),
                                  n.limit ? " of " + format_bytes(*n.limit) : std::string());
      } else if (h && (h->kind == FactKind::kernel_oom_kill || h->kind == FactKind::kernel_oom_event)) {
        std::string cg = n.cgroup.empty() ? "its memory cgroup" : "memory cgroup " + n.cgroup;
        if (n.limit)
          inc.summary = fmt::format("{} was killed when {} reached its {} limit", who(n), cg, format_bytes(*n.limit));
        else
          inc.summary = fmt::format("{} was killed when {} reached its limit", who(n), cg);
      } else if (h && h->kind == FactKind::k8s_oomkilled) {
        std::string name = !n.container.empty() ? "container " + n.container : "the container";
        if (!n.pod.empty()) name += " of pod " + n.pod;
        inc.summary = fmt::format("{} was OOMKilled{}", name, n.limit ? " at its " + format_bytes(*n.limit) + " memory limit" : "");
        if (n.restarts && *n.restarts > 0) inc.summary += fmt::format(" ({} restart{})", *n.restarts, *n.restarts == 1 ? "" : "s");
      } else if (h && h->kind == FactKind::docker_oomkilled) {
        inc.summary = fmt::format("docker container {} was OOM-killed{}", n.container.empty() ? "" : n.container,
                                  n.limit ? " at its " + format_bytes(*n.limit) + " memory limit" : "");
      } else if (h && h->kind == FactKind::systemd_oom_result) {
        inc.summary = fmt::format("the OOM killer killed a process of {} at its {} limit (systemd: result 'oom-kill')",
                                  n.unit.empty() ? "a systemd unit" : n.unit, n.limit ? format_bytes(*n.limit) + " MemoryMax" : std::string("MemoryMax"));
      } else if (h && text::starts_with(h->detail, "/dev/shm")) {
        inc.summary = fmt::format("{} ran out of shared memory: the container's /dev/shm{} is full", who(n),
                                  n.limit ? " (" + format_bytes(*n.limit) + ")" : "");
      } else {
        inc.summary = fmt::format("{} ran out of memory under a {} limit", who(n),
                                  n.limit ? format_bytes(*n.limit) : std::string("memory"));
      }
      break;
    case Layer::host_ram:
      if (h && h->kind == FactKind::host_memory_refused && h->requested)
        inc.summary = fmt::format("the model needs {} of system memory but only {} is available", format_bytes(*h->requested),
                                  h->free ? format_bytes(*h->free) : std::string("less"));
      else if (h && (h->kind == FactKind::kernel_oom_kill || h->kind == FactKind::kernel_oom_event) && h->layer == Layer::container_limit)
        inc.summary = fmt::format("{} was killed when the pods on the node together reached node allocatable memory ({})", who(n), n.cgroup);
      else if (h && h->kind == FactKind::kernel_oom_kill)
        inc.summary = fmt::format("{} was killed by the kernel OOM killer: the host ran out of RAM{}", who(n),
                                  h->rss ? fmt::format(" (victim held {})", format_bytes(*h->rss)) : "");
      else if (h && h->kind == FactKind::systemd_oom_result)
        inc.summary = fmt::format("the OOM killer killed a process of {} (systemd: result 'oom-kill'); the unit shows no MemoryMax, so the host ran out",
                                  n.unit.empty() ? "a systemd unit" : n.unit);
      else if (h && h->kind == FactKind::process_killed && h->detail == kStoppedAfterLargeAllocs)
        inc.summary = h->detail;  // said whole (tcmalloc.cc: Colab's ^C)
      else if (h && h->kind == FactKind::process_killed)
        inc.summary = fmt::format("{} was killed (SIGKILL) with no other reason shown, most likely by the kernel OOM killer", who(n));
      else if (h && (h->kind == FactKind::host_alloc_failure || h->kind == FactKind::jvm_native_oom || h->kind == FactKind::gpu_oom))
        inc.summary = fmt::format("{} could not allocate {}host memory{}", n.process.empty() ? speaker(*h) : who(n),
                                  h->requested ? format_bytes(*h->requested) + " of " : "", h->detail.empty() ? "" : " (" + h->detail + ")");
      else
        inc.summary = fmt::format("{} could not get host memory", who(n));
      break;
    case Layer::k8s_eviction:
      inc.summary = fmt::format("pod {}was evicted by the kubelet: the node was low on memory", n.pod.empty() ? "" : n.pod + " ");
      if (h && h->usage) inc.summary += fmt::format("; {} was using {}", n.container.empty() ? "the container" : n.container, format_bytes(*h->usage));
      if (h && h->requested)
        inc.summary += *h->requested ? fmt::format(" against a request of {}", format_bytes(*h->requested))
                                     : std::string(" with no memory request (0): the first a node under pressure evicts");
      break;
    case Layer::gpu_vram:
      if (h && h->kind == FactKind::kv_cache_shortage && h->kv_tokens && h->max_model_len)
        inc.summary = fmt::format("the KV cache holds {} tokens, fewer than max_model_len {}: not one full-length sequence fits", *h->kv_tokens, *h->max_model_len);
      else if (h && h->kind == FactKind::kv_cache_shortage && text::starts_with(h->detail, kKvStalled))
        inc.summary = text::contains(h->detail, "none of them moving") ? "the service stalled with its KV cache full and its running requests not moving"
                                                                         : "the service stalled with its KV cache full and requests waiting";
      else if (h && h->kind == FactKind::kv_cache_shortage && h->cause == Cause::leak_or_accumulation)
        inc.summary = "the engine's own check found its KV cache pool leaking (slots never given back)";
      else if (h && h->kind == FactKind::kv_cache_shortage)
        inc.summary = "the engine found no GPU memory left for its KV cache";
      else if (h && h->requested)
        inc.summary = fmt::format("{} failed to allocate {} on {}{}", h ? speaker(*h) : "a process",
                                  format_bytes(*h->requested), where_gpu,
                                  h->free && h->total ? fmt::format(" ({} free of {})", format_bytes(*h->free), format_bytes(*h->total)) : "");
      else if (h && (!h->container.empty() || !h->pod.empty()))  // a metric of a pod's GPU (DCGM), not a program's message
        inc.summary = fmt::format("{}{}{} ran out of memory on {}{}", h->container.empty() ? "" : "container " + h->container,
                                  h->container.empty() || h->pod.empty() ? "" : " of ", h->pod.empty() ? "" : "pod " + h->pod, where_gpu,
                                  h->free && h->total ? fmt::format(" ({} free of {})", format_bytes(*h->free), format_bytes(*h->total)) : "");
      else
        inc.summary = fmt::format("{} ran out of memory on {}", h ? speaker(*h) : "a process", where_gpu);
      break;
    case Layer::js_heap:
      inc.summary = fmt::format("Node.js reached its V8 heap limit{}{}", n.heap_limit ? fmt::format(" (~{})", format_bytes(*n.heap_limit)) : "",
                                n.uptime ? " after " + timeutil::format_duration(*n.uptime) : "");
      break;
    case Layer::jvm_heap:
      inc.summary = fmt::format("the JVM ran out of heap ({})", h && !h->detail.empty() ? h->detail : "OutOfMemoryError");
      break;
    case Layer::userspace_oom_killer:
      // The generic readers' facts say the whole of it in their detail (a sentence).
      if (h && h->family == Family::generic && !h->detail.empty()) {
        inc.summary = h->detail;
        break;
      }
      inc.summary = fmt::format("{} killed {} under memory pressure", h && !h->detail.empty() ? h->detail : "a user-space OOM killer",
                                n.process.empty() ? (n.cgroup.empty() ? "a process" : n.cgroup) : n.process);
      break;
    case Layer::not_memory:
      // The kernel's report of an OOM run by hand carries its report's kind, not a sentence.
      if (h && h->family == Family::kernel && text::contains(h->detail, "sysrq")) {
        inc.summary = "not a memory failure: the OOM killer was invoked by hand (SysRq f)";
        break;
      }
      // An exit status's detail names where it was read ("docker ps",
      // "State.ExitCode"), not why: the rules' reason says that.
      if (h && h->kind == FactKind::exit_status && !inc.reasons.empty()) {
        inc.summary = "not a memory failure: " + inc.reasons.front();
        break;
      }
      inc.summary = fmt::format("not a memory failure: {}", h && !h->detail.empty() ? h->detail : "the process stopped for another reason");
      break;
    case Layer::unknown:
      // A pool no layer names, as its reader described it (a program's own cap, WebAssembly memory, a relayed refusal).
      if (h && !h->detail.empty() && (h->cause == Cause::limit_too_low || h->kind == FactKind::host_alloc_failure))
        inc.summary = h->detail;
      else if (h && h->kind == FactKind::process_killed)
        inc.summary = fmt::format("{} was killed (SIGKILL) with no other reason shown: most often a memory kill, but nothing here says whose memory ran out",
                                  who(n));
      else if (h && h->kind == FactKind::restarts)
        inc.summary = fmt::format("{} keeps restarting (CrashLoopBackOff{}) and the evidence does not say why",
                                  n.pod.empty() ? "the pod" : "pod " + n.pod, n.restarts ? fmt::format(", {} restart{}", *n.restarts, *n.restarts == 1 ? "" : "s") : "");
      else if (n.exit_code) inc.summary = fmt::format("exit code {}{}: the evidence does not say which pool, if any, ran out", *n.exit_code,
                                                  *n.exit_code == 137 ? " (SIGKILL)" : "");
      else inc.summary = "a failure was seen but the evidence does not say which pool, if any, ran out";
      break;
    case Layer::none: break;
  }
  inc.process = n.process;
  inc.pid = n.pid;
  // Pool.
  switch (inc.layer) {
    case Layer::container_limit:
    case Layer::k8s_pod_limit:
      inc.pool.name = !n.cgroup.empty()     ? "cgroup " + n.cgroup
                      : !n.container.empty() ? "container " + n.container
                      : inc.layer == Layer::k8s_pod_limit ? "container memory limit (Kubernetes)"
                                                          : "container memory limit";
      inc.pool.limit_bytes = n.limit;
      inc.pool.used_bytes = n.usage;
      break;
    case Layer::host_ram:
      inc.pool.name = (h && h->layer == Layer::container_limit && !n.cgroup.empty()) ? "node allocatable (cgroup " + n.cgroup + ")" : "host RAM";
      // The kubepods cgroup's own limit, as the kernel's report gives it: a
      // container's limit elsewhere in the paste is not the node's.
      inc.pool.limit_bytes = n.host_total ? n.host_total : (h && h->layer == Layer::container_limit ? h->limit : std::nullopt);
      inc.pool.used_bytes = h && h->layer == Layer::container_limit ? n.usage : std::nullopt;
      break;
    case Layer::gpu_vram:
      inc.pool.name = n.gpu ? fmt::format("GPU {}", *n.gpu) : "GPU";
      inc.pool.limit_bytes = n.total;
      // A device with nothing in use (nvidia-smi run after the process ended)
      // is not the pool as it failed: its size only.
      if (n.total && n.free && *n.total > *n.free) inc.pool.used_bytes = *n.total - *n.free;
      break;
    case Layer::js_heap:
      inc.pool.name = "V8 heap";
      inc.pool.limit_bytes = n.heap_limit;
      break;
    case Layer::jvm_heap: inc.pool.name = "Java heap"; break;
    case Layer::k8s_eviction:
      inc.pool.name = "node memory (kubelet eviction)";
      inc.pool.used_bytes = h ? h->usage : std::nullopt;
      break;
    case Layer::userspace_oom_killer: inc.pool.name = "host RAM (user-space killer)"; break;
    default: break;
  }
}

void add(Incident& inc, std::string action, std::string why) { inc.fixes.push_back({std::move(action), std::move(why)}); }

void gpu_fixes(Incident& inc, const Numbers& n) {
  const bool vllm = n.runtime == "vllm" || (n.head && n.head->family == Family::vllm);
  const bool llama = n.runtime == "llamacpp" || (n.head && n.head->family == Family::llamacpp);
  const bool tgi = n.runtime == "tgi" || (n.head && n.head->family == Family::tgi);
  switch (inc.cause) {
    case Cause::fragmentation:
      add(inc, "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and restart the process",
          n.reserved_unallocated ? format_bytes(*n.reserved_unallocated) + " was reserved by PyTorch but unallocated: the free memory is split into pieces too small for the request"
                                 : "memory reserved but unallocated is fragmentation, which expandable segments avoid");
      add(inc, "lower the batch size or concurrent sequences a step", "smaller requests fit in the fragmented pool");
      break;
    case Cause::other_process:
      add(inc, "stop or move the other processes on the GPU (nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv)",
          n.others ? "other processes hold " + format_bytes(*n.others) : "memory outside this process holds the GPU");
      if (vllm) add(inc, "size gpu_memory_utilization to what is really free, or give the model a GPU of its own", "vLLM claims a fraction of the whole GPU");
      break;
    case Cause::kv_cache_context:
      if (n.max_model_len && n.kv_tokens && *n.kv_tokens < *n.max_model_len) {
        uint64_t fit = *n.kv_tokens / 1024 * 1024;
        if (fit == 0) fit = *n.kv_tokens;
        add(inc, fmt::format("lower max_model_len {} -> {} (--max-model-len {})", *n.max_model_len, fit, fit),
            fmt::format("the KV cache holds {} tokens; one sequence of the configured length does not fit", *n.kv_tokens));
        if (n.gpu_util && *n.gpu_util < 0.95 && n.kv_bytes && n.total && *n.total > 0 && *n.kv_tokens > 0) {
          // KV bytes per token from the engine's own figures; the share of the
          // GPU that the missing tokens need, rounded up.
          double per_token = static_cast<double>(*n.kv_bytes) / static_cast<double>(*n.kv_tokens);
          double missing = per_token * static_cast<double>(*n.max_model_len - *n.kv_tokens);
          double needed = std::ceil((*n.gpu_util + missing / static_cast<double>(*n.total)) * 100.0) / 100.0;
          if (needed <= 0.95)
            add(inc, fmt::format("or raise gpu_memory_utilization {:.2f} -> {:.2f} if nothing else uses this GPU", *n.gpu_util, needed),
                fmt::format("{} more KV cache ({} tokens at {} per token) fit in that share", format_bytes(static_cast<uint64_t>(missing)),
                            *n.max_model_len - *n.kv_tokens, format_bytes(static_cast<uint64_t>(per_token))));
        }
        add(inc, "use an FP8 KV cache (--kv-cache-dtype fp8)", "halves the bytes per token, so twice the context fits");
      } else if (llama && n.ctx) {
        // A context of 0 is llama.cpp's "the model's own"; at 2048 or less
        // there is no half worth suggesting.
        if (*n.ctx > 2048) {
          uint64_t half = std::max<uint64_t>(2048, *n.ctx / 2);
          const double kept = static_cast<double>(half) / static_cast<double>(*n.ctx);
          add(inc, fmt::format("lower the context {} -> {} (--ctx-size / num_ctx {})", *n.ctx, half, half),
              n.kv_bytes ? fmt::format("frees about {} of KV cache and shrinks the compute buffer",
                                       format_bytes(static_cast<uint64_t>(static_cast<double>(*n.kv_bytes) * (1.0 - kept))))
                         : "the KV cache and compute buffer grow with the context");
        }
        add(inc, "fewer parallel slots (--parallel / OLLAMA_NUM_PARALLEL)", "each slot holds its own share of the context");
        add(inc, "quantize the KV cache (-ctk q8_0 -ctv q8_0 with flash attention; OLLAMA_KV_CACHE_TYPE=q8_0)", "halves the KV cache");
      } else if (tgi && n.max_model_len) {
        // TGI refuses --max-batch-prefill-tokens below --max-input-tokens:
        // the input length comes down first, the prefill budget with it.
        uint64_t half = std::max<uint64_t>(1024, *n.max_model_len / 2);
        add(inc, fmt::format("lower --max-input-tokens and --max-total-tokens (total {} -> {}), and --max-batch-prefill-tokens with them",
                             *n.max_model_len, half),
            "warm-up prefills one sequence of the longest input; TGI requires the prefill budget to hold it");
        add(inc, "lower --max-concurrent-requests", "each request holds its own KV cache");
        add(inc, "use a quantized KV cache (--kv-cache-dtype fp8)", "halves the bytes per token");
      } else {
        add(inc, "reduce the maximum context length", "the KV cache grows linearly with context");
        add(inc, "reduce concurrent sequences", "each sequence holds its own KV cache");
        add(inc, "use a quantized KV cache (fp8 / q8_0)", "halves the bytes per token");
      }
      break;
    case Cause::concurrency_batch:
      if (vllm) add(inc, fmt::format("lower --max-num-seqs{} and --max-num-batched-tokens", n.sequences ? fmt::format(" {} -> {}", *n.sequences, std::max<uint64_t>(1, *n.sequences / 2)) : ""),
                    "the activation peak grows with the number of sequences and tokens stepped at once");
      else if (tgi) add(inc, fmt::format("lower --max-batch-prefill-tokens{}", n.batch_tokens ? fmt::format(" {} -> {}", *n.batch_tokens, *n.batch_tokens / 2) : ""),
                        "warmup runs one prefill of that many tokens; it must fit beside the weights");
      else if (llama) add(inc, "lower --parallel and --batch-size / --ubatch-size", "the compute buffer grows with the batch");
      else add(inc, "lower the batch size (or micro-batch with gradient accumulation) / the concurrent requests",
               "activations grow with the batch and the input length");
      add(inc, "reduce the maximum input length", "long inputs multiply activation memory");
      break;
    case Cause::model_load:
      add(inc, "load a smaller or more quantized model (validate it on the real task)", "the weights themselves do not fit");
      if (llama) add(inc, "offload fewer layers to the GPU (--n-gpu-layers / num_gpu)", "layers left in system RAM cost speed, not VRAM");
      if (vllm) add(inc, "lower --max-num-seqs / --max-num-batched-tokens and --max-model-len", "the profiling peak and KV budget are sized from them");
      break;
    default:
      add(inc, "lower concurrent sequences or the batch size", "the least destructive change; most GPU OOMs scale with it");
      add(inc, "reduce the maximum context", "KV cache and activations grow with it");
      break;
  }
  if (inc.cause != Cause::model_load) add(inc, "a smaller or more quantized model (validated on the real task)", "frees VRAM for KV cache and activations");
  if (inc.cause != Cause::other_process) add(inc, "stop other processes on the GPU", "anything else resident shrinks the budget");
  add(inc, "a larger GPU, or split the model across GPUs (tensor parallel)", "the most expensive change");
}

// /dev/shm's own size (shared_memory.cc): the memory limit is not what ran out.
void shm_fixes(Incident& inc, const Numbers& n) {
  const std::string size = n.limit ? " (now " + format_bytes(*n.limit) + ")" : "";
  add(inc,
      inc.layer == Layer::k8s_pod_limit
          ? "mount an emptyDir with medium: Memory and a sizeLimit at /dev/shm" + size
          : "give the container more shared memory: docker run --shm-size=8g or --ipc=host" + size,
      "DataLoader workers, NCCL and model servers pass data through /dev/shm; a container gets 64 MiB unless told otherwise");
  add(inc, "or pass less through it: fewer DataLoader workers (num_workers), or NCCL_SHM_DISABLE=1 for NCCL",
      "lowers what the segment must hold, at some cost in speed");
}

void limit_fixes(Incident& inc, const Numbers& n) {
  const bool k8s = inc.layer == Layer::k8s_pod_limit;
  if (n.head && text::starts_with(n.head->detail, "/dev/shm")) return shm_fixes(inc, n);
  std::optional<uint64_t> peak = n.usage;
  if (!peak && n.rss) peak = n.rss;
  if (n.node) {
    // A Node process killed at the container limit: the V8 heap is not the
    // whole process. With the heap ceiling well under the limit, what filled
    // the container lives outside the heap.
    const bool heap_well_under = n.heap_limit && n.limit && *n.heap_limit * 4 < *n.limit * 3;
    if (heap_well_under)
      inc.reasons.push_back(fmt::format("the V8 heap is capped at {} (--max-old-space-size), well under the {} limit: memory outside the heap "
                                        "(Buffers, native libraries, streamed files) filled the container",
                                        format_bytes(*n.heap_limit), format_bytes(*n.limit)));
    add(inc, "bound streams and queues, and do not accumulate every embedding or response in one array",
        heap_well_under ? "the memory that grew is outside the V8 heap: Buffers and native allocations are not limited by --max-old-space-size"
                        : "a Node process's memory is its heap plus Buffers and native allocations");
    add(inc, "limit worker concurrency (worker threads, cluster workers, parallel requests)", "each worker holds its own heap and buffers");
    add(inc, "do not raise --max-old-space-size to fix this", "a bigger heap only postpones a leak and widens its blast radius");
  }
  if (inc.cause == Cause::leak_or_accumulation) {
    add(inc, "find what grows before raising anything (heap profile, memory.stat anon vs file, per-request buffers)",
        "usage kept rising; a higher limit only delays the next kill");
  }
  if (inc.cause == Cause::model_load)
    add(inc, "load with memory-mapped weights (safetensors, low_cpu_mem_usage=True) and avoid converting in RAM",
        "the load-time peak can be twice the weights when a full copy is staged in RAM");
  add(inc, "lower the workload's concurrency (workers, concurrent requests, batch size)", "the least destructive way to lower the peak");
  if (n.limit) {
    uint64_t base = std::max(*n.limit, peak.value_or(0));
    uint64_t step_mib = base >= 16 * units::GiB ? 1024 : base >= units::GiB ? 256 : 16;
    uint64_t proposed = round_up_mib(static_cast<double>(base) * 1.25, step_mib);
    std::string action = k8s ? fmt::format("if the steady need really is higher, raise resources.limits.memory {} -> {} (and set requests.memory equal for a model server)",
                                           k8s_quantity(*n.limit), k8s_quantity(proposed))
                             : fmt::format("if the steady need really is higher, raise the limit {} -> {}", format_bytes(*n.limit), format_bytes(proposed));
    std::string why = fmt::format("{}peak reached the {} limit; 25% headroom covers bursts", peak ? "usage " + format_bytes(*peak) + " at the kill; " : "",
                                  format_bytes(*n.limit));
    if (n.host_total) {
      why += fmt::format("; never above the host's {}", format_bytes(*n.host_total));
      if (proposed > *n.host_total) action = "the workload needs more than this host has: move it to a larger node";
    }
    add(inc, action, why);
  } else {
    add(inc, "compare the actual peak with the limit before raising it (see next checks)", "the evidence does not show the limit's size");
  }
  if (k8s) add(inc, "leave room for a rolling deployment's second copy (maxSurge 0 or node headroom)", "two copies of a model server during a rollout need twice the memory");
}

// An app killed at the OS's per-app cap (kPerAppLimitKill): the cap is the
// device's, raised only by an entitlement; the app's footprint is the lever.
bool per_app_fixes(Incident& inc, const Numbers& n) {
  if (!n.head || n.head->detail != kPerAppLimitKill) return false;
  add(inc, "bring the app's peak footprint down: a smaller or more quantized model, load it once, release buffers between runs",
      n.limit ? "the OS killed it at its " + format_bytes(*n.limit) + " per-app limit" : "the OS killed it at its per-app limit");
  add(inc, "on iOS 15 and later, request the larger per-app limit (the com.apple.developer.kernel.increased-memory-limit entitlement)",
      "the limit is the device's and the OS's; that entitlement is the only way to raise it");
  return true;
}

void fixes_for(Incident& inc, const Numbers& n, const std::vector<Fact>& facts) {
  if (per_app_fixes(inc, n)) return;
  switch (inc.layer) {
    case Layer::gpu_vram: gpu_fixes(inc, n); break;
    case Layer::container_limit:
    case Layer::k8s_pod_limit: limit_fixes(inc, n); break;
    case Layer::host_ram:
      if (inc.cause == Cause::model_load) {
        add(inc, "load with memory-mapped weights and without a full copy in RAM (safetensors, low_cpu_mem_usage=True, llama.cpp mmap)",
            "the load-time peak is often twice the weights");
        add(inc, "a smaller or more quantized model", n.head && n.head->requested ? "it needs " + format_bytes(*n.head->requested) : "the weights do not fit in RAM");
        add(inc, "a host with more RAM", "the most expensive change");
      } else {
        add(inc, "lower the concurrency of the largest consumer (workers, batch, concurrent requests)", "the least destructive way to lower the peak");
        add(inc, "put the workload under its own memory limit (cgroup / container) sized to its peak", "a limit kills the workload, not the host's other services");
        add(inc, "add RAM or move to a larger host", "the most expensive change");
      }
      break;
    case Layer::k8s_eviction:
      add(inc, n.head && n.head->usage ? fmt::format("set requests.memory to the real usage ({} instead of {})", k8s_quantity(round_up_mib(static_cast<double>(*n.head->usage), 64)),
                                                     n.head->requested ? k8s_quantity(*n.head->requested) : std::string("none"))
                                       : "set requests.memory to the container's real usage",
          "the kubelet evicts pods using more than they requested first; requests that match usage keep the scheduler from overpacking the node");
      add(inc, "make a model server Guaranteed (requests = limits)", "Guaranteed pods are evicted last");
      add(inc, "add node memory or move heavy pods to their own nodes", "the node as a whole was short");
      break;
    case Layer::js_heap:
      if (inc.cause == Cause::leak_or_accumulation) {
        add(inc, "bound what accumulates: stream results instead of keeping every response or embedding in one array, cap caches and queues",
            "the heap was full of live objects after a long run");
        add(inc, "take heap snapshots near the limit (node --heapsnapshot-near-heap-limit=2) and compare them", "shows which objects grow");
        add(inc, "raise --max-old-space-size only after finding the growth", "a bigger heap only postpones a leak and widens its blast radius");
      } else {
        uint64_t doubled = n.heap_limit ? round_up_mib(static_cast<double>(*n.heap_limit) * 2, 512) : 0;
        add(inc, n.heap_limit ? fmt::format("raise --max-old-space-size to {} (from ~{}), staying below the container limit minus ~25% for native memory",
                                            doubled / units::MiB, *n.heap_limit / units::MiB)
                              : "raise --max-old-space-size, staying below the container limit minus ~25% for native memory",
            "the work needs more heap than the current ceiling");
        add(inc, "limit worker concurrency and bound in-memory queues", "each worker holds its own heap");
      }
      break;
    case Layer::jvm_heap:
      add(inc, "capture a heap dump at the failure (-XX:+HeapDumpOnOutOfMemoryError) and look for the largest retainers", "tells a leak from a heap that is too small");
      add(inc, "size the heap to the container (-XX:MaxRAMPercentage=75) rather than a fixed -Xmx", "keeps heap and native memory inside the limit");
      break;
    case Layer::userspace_oom_killer:
      add(inc, "lower the memory of the workload it chose (concurrency, batch) or move it to its own limited cgroup", "the killer acts on pressure of the whole host or slice");
      add(inc, "protect a critical unit (ManagedOOMPreference=avoid / earlyoom --avoid) instead of letting it be chosen", "the killer picks by size or pressure, not importance");
      add(inc, "add RAM", "the most expensive change");
      break;
    case Layer::not_memory: {
      const Fact* h = n.head;
      std::string d = h ? h->detail : "";
      if (text::starts_with(d, "the mapping count limit"))
        add(inc, "raise vm.max_map_count (sysctl -w vm.max_map_count=262144, and in /etc/sysctl.d; on Kubernetes the node's sysctl or a privileged init container)",
            "each mapped file or segment is one area; past the count mmap fails though memory is free");
      else if (text::starts_with(d, "the kernel's pid limit"))
        add(inc, "find what spawned the tasks (ps -eo comm= | sort | uniq -c | sort -rn | head) and stop it; raise kernel.pid_max (sysctl -w kernel.pid_max=4194304) if the count is legitimate",
            "every process and thread takes a pid; past the limit fork fails though memory is free");
      else if (text::starts_with(d, "the per-user process limit"))
        add(inc, "raise the process limit (ulimit -u, LimitNPROC= for a systemd unit, nproc in /etc/security/limits.conf) or bound the thread pools",
            "every thread counts against it; more memory changes nothing");
      else if (text::icontains(d, "NCCL")) add(inc, "debug the collective: NCCL_DEBUG=INFO, check for a rank that hung or crashed first, and the network between nodes", "an NCCL timeout is a stalled collective, not memory");
      else if (text::icontains(d, "illegal") || text::icontains(d, "CUDA error")) add(inc, "rerun with CUDA_LAUNCH_BLOCKING=1 to find the kernel, and check driver / CUDA / library versions", "an invalid device memory access is a bug or a version mismatch, not exhaustion");
      else if (text::icontains(d, "Xid") || text::icontains(d, "GPU lost") || text::icontains(d, "bus")) add(inc, "check the GPU's health (nvidia-smi -q, dmesg | grep -i xid), its power and PCIe link; drain the node if it repeats", "a lost GPU or bus error is hardware or driver trouble");
      else if (h && h->family == Family::generic) {
        // A generic failure marker (recognize/families/failure_markers.cc): the error itself is the lead.
        add(inc, "read the error at the line quoted under Evidence and fix what it names", "the evidence holds " + d + " and no memory failure");
        add(inc, "if a client still saw a reset or a 137, collect the kernel log (dmesg -T | grep -i oom) from the same minute",
            "an OOM kill elsewhere would show there, not in this log");
      } else if (text::icontains(d, "probe")) add(inc, "give slow starts time: a startupProbe or a larger initialDelaySeconds / timeoutSeconds on the liveness probe", "the kubelet killed the container because its probe failed, not for memory");
      else if (h && h->kind == FactKind::exit_status && !h->signal && h->exit_code && *h->exit_code > 0 && *h->exit_code < 128)
        add(inc, "read the program's own log for the error it exited with (its last lines before the exit)",
            fmt::format("it exited by itself with code {}: no signal ended it", *h->exit_code));
      else add(inc, "look at why the process was stopped (who sent the signal: a deploy, a stop, a probe)", "the exit was not an out-of-memory kill");
      break;
    }
    case Layer::unknown:
      if (n.head && text::starts_with(n.head->detail, "PHP")) {
        add(inc, "bound the work per request or job: stream or chunk large inputs instead of loading them whole",
            "the cap holds one request's data; less of it at once fits");
        add(inc, n.limit ? fmt::format("raise memory_limit (now {}) for this script: php -d memory_limit=...; COMPOSER_MEMORY_LIMIT=-1 for Composer",
                                       format_bytes(*n.limit))
                         : "raise memory_limit for this script: php -d memory_limit=...; COMPOSER_MEMORY_LIMIT=-1 for Composer",
            "the cap is PHP's own setting; the machine may have room");
        break;
      }
      add(inc, "run the next checks below to find which pool ran out", "the evidence given does not decide it");
      break;
    default: break;
  }
  (void)facts;
}

void next_checks_for(Incident& inc, const Numbers& n, const std::vector<Fact>& facts) {
  auto& c = inc.next_checks;
  if (n.head && n.head->detail == kPerAppLimitKill) {  // the app's own cap: the device's profiler, not a cgroup's files
    c.push_back("xcrun xctrace record --template Allocations --device DEVICE --attach " +
                (n.process.empty() || n.process == "app" ? std::string("APP") : n.process));
    return;
  }
  switch (inc.layer) {
    case Layer::container_limit: {
      CgroupInfo info = parse_cgroup_path(n.cgroup);
      std::string id = !info.container_id.empty() ? info.container_id.substr(0, 12) : n.container;
      std::string unit = !n.unit.empty() ? n.unit : info.unit;
      if (info.kind == CgroupKind::docker || info.kind == CgroupKind::podman || (!n.container.empty() && unit.empty())) {
        std::string tool = info.kind == CgroupKind::podman ? "podman" : "docker";
        c.push_back(tool + " stats --no-stream " + id);
        c.push_back(tool + " inspect " + (id.empty() ? "NAME" : id) + " --format '{{json .HostConfig.Memory}}'");
      } else if (!unit.empty()) {
        c.push_back("systemctl show " + unit + " -p MemoryMax -p MemoryPeak -p MemoryCurrent");
        c.push_back("journalctl -u " + unit + " --since \"20 minutes ago\"");
      } else if (n.cgroup.empty()) {
        c.push_back("docker stats --no-stream");
      }
      if (!n.cgroup.empty())  // v2 names, then v1 names: whichever the host has
        c.push_back("grep -H . /sys/fs/cgroup" + n.cgroup + "/memory.{events,peak,max} /sys/fs/cgroup/memory" + n.cgroup +
                    "/memory.{oom_control,max_usage_in_bytes,limit_in_bytes} 2>/dev/null");
      break;
    }
    case Layer::k8s_pod_limit:
      c.push_back(n.pod.empty() ? "kubectl describe pod POD" : "kubectl describe pod " + n.pod);
      c.push_back(n.pod.empty() ? "kubectl top pod POD --containers" : "kubectl top pod " + n.pod + " --containers");
      break;
    case Layer::k8s_eviction:
      c.push_back("kubectl describe node NODE | grep -A5 -i -E 'pressure|allocatable'");
      c.push_back("kubectl top pod -A --sort-by=memory | head");
      break;
    case Layer::host_ram:
      c.push_back("free -h");
      c.push_back("ps -eo pid,comm,rss --sort=-rss | head");
      c.push_back("dmesg -T | grep -i -E 'out of memory|killed process'");
      break;
    case Layer::gpu_vram:
      c.push_back("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv");
      c.push_back("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv");
      break;
    case Layer::js_heap:
      c.push_back("node --heapsnapshot-near-heap-limit=2 ... (then compare snapshots in Chrome DevTools)");
      break;
    case Layer::userspace_oom_killer:
      c.push_back("journalctl -u systemd-oomd -u earlyoom --since \"1 hour ago\"");
      c.push_back("free -h");
      break;
    case Layer::unknown: {
      auto generic = generic_next_checks(facts);
      c.insert(c.end(), generic.begin(), generic.end());
      break;
    }
    default: break;
  }
}

void evidence_for(Incident& inc, const std::vector<Fact>& facts) {
  // Records of the kernel ring buffer and the journal are numbered as read, not lines of a file.
  auto unit_of = [](const std::string& source) {
    return text::ends_with(source, "/dev/kmsg") || text::starts_with(source, "journal") ? "record" : "line";
  };
  auto item = [&](const Fact& f) {
    EvidenceItem e;
    e.source = std::string(source_label(f.family));
    e.where = f.where.line ? fmt::format("{} {} {}", f.where.source, unit_of(f.where.source), shown_line(f.where)) : f.where.source;
    e.text = f.text;
    return e;
  };
  size_t shown = 0;
  for (size_t i : inc.failures) {
    if (shown >= 6) break;
    const Fact& f = facts[i];
    // Skip repeats of the same line text.
    bool dup = std::any_of(inc.evidence.begin(), inc.evidence.end(), [&](const EvidenceItem& e) { return e.text == f.text; });
    if (dup) continue;
    inc.evidence.push_back(item(f));
    ++shown;
    if (shown == 1) {
      for (auto [line, textline] : f.extra) {
        if (inc.evidence.size() >= 4) break;
        if (f.where.shown_line) line = 0;  // numbered in the order written, not the input's: the source alone
        inc.evidence.push_back({std::string(source_label(f.family)),
                                line ? fmt::format("{} {} {}", f.where.source, unit_of(f.where.source), line) : f.where.source, textline});
      }
    }
  }
  size_t ctx = 0;
  for (size_t i : inc.context) {
    const Fact& f = facts[i];
    bool useful = f.kind == FactKind::memory_limit || f.kind == FactKind::memory_request || f.kind == FactKind::kv_capacity ||
                  f.kind == FactKind::restarts || f.kind == FactKind::stop_or_restart ||
                  (f.kind == FactKind::runtime_setting && (f.ctx || f.max_model_len || f.ratio || f.batch_tokens));
    if (!useful || ctx >= 4 || f.text.empty()) continue;
    bool dup = std::any_of(inc.evidence.begin(), inc.evidence.end(), [&](const EvidenceItem& e) { return e.text == f.text; });
    if (dup) continue;
    inc.evidence.push_back(item(f));
    ++ctx;
  }
}

}  // namespace

std::vector<std::string> generic_next_checks(const std::vector<Fact>& facts) {
  std::vector<std::string> c = {
      "free -h",
      "dmesg -T | grep -i -E 'out of memory|killed process'",
      "nvidia-smi",
      "docker stats --no-stream",
      "docker inspect NAME --format '{{json .HostConfig.Memory}}'",
      "journalctl -u UNIT --since \"20 minutes ago\"",
      "kubectl describe pod POD",
  };
  // Fill in names the evidence gives.
  for (const Fact& f : facts) {
    if (!f.container.empty()) {
      c[3] = "docker stats --no-stream " + f.container;
      c[4] = "docker inspect " + f.container + " --format '{{json .HostConfig.Memory}}'";
    }
    if (!f.unit.empty()) c[5] = "journalctl -u " + f.unit + " --since \"20 minutes ago\"";
    if (!f.pod.empty()) c[6] = "kubectl describe pod " + f.pod;
  }
  return c;
}

// Process, cgroup, container, pod and unit names, file names and the
// recognizers' details come from outside: a process can name itself with
// terminal escapes. The incident is the boundary where they become text for
// people (every renderer prints these fields), so they are made printable here.
void make_printable(Incident& inc) {
  auto p = [](std::string& s) { s = text::printable(s); };
  p(inc.summary);
  p(inc.process);
  p(inc.pool.name);
  for (auto& r : inc.reasons) p(r);
  for (auto& e : inc.evidence) {
    p(e.source);
    p(e.where);
    p(e.text);
  }
  for (auto& f : inc.fixes) {
    p(f.action);
    p(f.why);
  }
  for (auto& c : inc.next_checks) p(c);
}

void advise(Incident& inc, const std::vector<Fact>& facts) {
  Numbers n = gather(inc, facts);
  summarize(inc, n);
  evidence_for(inc, facts);
  fixes_for(inc, n, facts);
  next_checks_for(inc, n, facts);
  if (!inc.time_us && n.head && n.head->where.unix_us) inc.time_us = n.head->where.unix_us;
  make_printable(inc);
}

}  // namespace aimem::detail
