// A persistent NVML session for the watch sampler. NVML is dlopen'ed
// (AIMEM_NVML_LIBRARY overrides the path; absent NVML is normal) and every call
// runs on one worker thread that owns the session: nvmlInit has 5 s, each later
// reading 2 s. A driver that misses a deadline is given up on (the thread is
// left behind, the library never unloaded) so a wedged GPU never stalls a
// sample. Unlike sources/nvml.cc (one scan, then shutdown) the session stays
// open: nvmlInit costs tens of milliseconds on real drivers.
//
// Per-process lists: nvmlDeviceGetComputeRunningProcesses_v3 / _v2 fill
// nvmlProcessInfo_v2_t {pid, usedGpuMemory, gpuInstanceId, computeInstanceId};
// the unversioned v1 fills {pid, usedGpuMemory}. The newest that the driver
// answers is remembered. NVML_ERROR_INSUFFICIENT_SIZE returns the count
// needed; the list can grow between calls, so at most 3 tries, 4096 entries.
// A device whose memory call is NOT_SUPPORTED or reports total 0 has unified
// memory (GH200, Jetson): its allocations are host RAM.
#include "watch/gpu.h"

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <fmt/format.h>

#include "sources/nvml_types.h"

namespace aimem::watch {
namespace {

using namespace nvml;
constexpr nvmlReturn_t kSuccess = 0, kNotSupported = 3, kInsufficientSize = 7, kFunctionNotFound = 13;
constexpr unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
constexpr unsigned kMaxDevices = 64, kMaxProcs = 4096;
constexpr auto kInitDeadline = std::chrono::seconds(5), kReadDeadline = std::chrono::seconds(2);

struct Api : nvml::Api {
  int procs_version = 3;  // newest process-list version still worth trying
};

// Calls a process-list function with the bounded INSUFFICIENT_SIZE retry.
template <typename P, typename Fn>
nvmlReturn_t list(Fn fn, nvmlDevice_t dev, std::vector<std::pair<unsigned, unsigned long long>>& out) {
  std::vector<P> buf(32);
  nvmlReturn_t r = kInsufficientSize;
  for (int attempt = 0; attempt < 3 && r == kInsufficientSize; ++attempt) {
    unsigned cnt = static_cast<unsigned>(buf.size());
    r = fn(dev, &cnt, buf.data());
    if (r == kSuccess) {
      for (unsigned k = 0; k < cnt && k < buf.size(); ++k) out.emplace_back(buf[k].pid, buf[k].usedGpuMemory);
    } else if (r == kInsufficientSize) {
      if (cnt > kMaxProcs) return r;
      buf.resize(std::max<size_t>(cnt + 8, buf.size()));  // + 8: the list may grow before the next call
    }
  }
  return r;
}

GpuReading read_all(Api& api) {
  GpuReading out;
  unsigned n = 0;
  if (api.count(&n) != kSuccess) return out;
  for (unsigned i = 0; i < n && i < kMaxDevices; ++i) {
    nvmlDevice_t dev = nullptr;
    if (api.by_index(i, &dev) != kSuccess) continue;
    GpuSample g;
    g.index = i;
    char buf[96] = {0};
    if (api.name && api.name(dev, buf, sizeof buf - 1) == kSuccess) g.name = buf;
    char ubuf[96] = {0};
    if (api.uuid && api.uuid(dev, ubuf, sizeof ubuf - 1) == kSuccess) g.uuid = ubuf;
    nvmlMemory_t mem{};
    nvmlReturn_t mr = api.memory(dev, &mem);
    if (mr == kSuccess && mem.total > 0) {
      g.total = mem.total;
      g.used = mem.used;
    } else if (mr == kSuccess || mr == kNotSupported) {
      g.unified = true;
    }
    out.gpus.push_back(std::move(g));

    std::vector<std::pair<unsigned, unsigned long long>> procs;
    // Newest first; a version the driver lacks is not tried again.
    nvmlReturn_t r = kFunctionNotFound;
    if (api.procs_version == 3) {
      if (api.procs_v3) r = list<ProcV2>(api.procs_v3, dev, procs);
      if (r == kFunctionNotFound) api.procs_version = 2;
    }
    if (api.procs_version == 2) {
      if (api.procs_v2) r = list<ProcV2>(api.procs_v2, dev, procs);
      if (r == kFunctionNotFound) api.procs_version = 1;
    }
    if (api.procs_version == 1 && api.procs_v1) list<ProcV1>(api.procs_v1, dev, procs);
    for (auto [pid, used] : procs) {
      GpuProcessSample p;
      p.gpu = i;
      p.pid = static_cast<int>(pid);
      p.used = used == kNotAvailable ? 0 : used;  // N/A under MIG and WDDM: listed, no size
      out.processes.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace

struct GpuReader::State {
  std::mutex m;
  std::condition_variable cv;
  enum Phase { starting, ready, failed } phase = starting;
  bool wedged = false, stop = false, exited = false;
  std::string problem;
  uint64_t requested = 0, answered = 0;
  GpuReading result;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

namespace {

void worker(std::shared_ptr<GpuReader::State> s) {
  Api api;
  std::string problem;
  // Absent NVML is normal: open_api sets `problem` only for AIMEM_NVML_LIBRARY.
  if (open_api(api, &problem)) {
    if (!api.init || !api.count || !api.by_index || !api.memory) {
      problem = "NVML library lacks nvmlInit / nvmlDeviceGetCount / nvmlDeviceGetMemoryInfo: GPUs not sampled";
    } else if (nvmlReturn_t r = api.init(); r != kSuccess) {
      problem = fmt::format("NVML did not initialise: {}: GPUs not sampled",
                            api.error ? api.error(r) : fmt::format("error {}", r).c_str());
    }
  }
  bool ok = api.handle && problem.empty();
  {
    std::lock_guard lock(s->m);
    s->phase = ok ? GpuReader::State::ready : GpuReader::State::failed;
    if (!s->wedged) s->problem = problem;
    if (!ok) s->exited = true;
  }
  s->cv.notify_all();
  if (!ok) return;  // a library that loaded stays loaded: unloading a half-used driver is not safe
  std::unique_lock lock(s->m);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stop || s->requested > s->answered; });
    if (s->stop) break;
    uint64_t want = s->requested;
    lock.unlock();
    GpuReading r = read_all(api);
    lock.lock();
    s->result = std::move(r);
    s->answered = want;
    s->cv.notify_all();
  }
  lock.unlock();
  if (api.shutdown) api.shutdown();
  dlclose(api.handle);
  lock.lock();
  s->exited = true;
  s->cv.notify_all();
}

}  // namespace

GpuReader::GpuReader() : state_(std::make_shared<State>()) {
  std::thread(worker, state_).detach();  // joined in spirit: ~GpuReader waits for `exited`
}

GpuReader::~GpuReader() {
  std::unique_lock lock(state_->m);
  state_->stop = true;
  state_->cv.notify_all();
  // A wedged worker is left behind; it holds its own reference to the state.
  if (!state_->wedged) state_->cv.wait_for(lock, kReadDeadline, [&] { return state_->exited; });
}

std::optional<GpuReading> GpuReader::read(std::string& problem) {
  State& s = *state_;
  std::unique_lock lock(s.m);
  if (!s.wedged && s.phase == State::starting &&
      !s.cv.wait_until(lock, s.started + kInitDeadline, [&] { return s.phase != State::starting; })) {
    s.wedged = true;
    s.problem = "NVML did not initialise within 5 s (driver busy or wedged): GPUs not sampled";
  }
  if (s.wedged || s.phase == State::failed) {
    problem = s.problem;
    return std::nullopt;
  }
  uint64_t want = ++s.requested;
  s.cv.notify_all();
  if (!s.cv.wait_for(lock, kReadDeadline, [&] { return s.answered >= want; })) {
    s.wedged = true;
    s.problem = "NVML did not answer within 2 s (driver busy or wedged): GPUs no longer sampled";
    problem = s.problem;
    return std::nullopt;
  }
  return s.result;
}

}  // namespace aimem::watch
