// A persistent NVML session for the watch sampler. NVML is loaded and read
// through the binding (nvml_types.h; AIMEM_NVML_LIBRARY overrides the path;
// absent NVML is normal) and every call runs on one worker thread that owns
// the session: nvmlInit has 5 s, each later reading 2 s. A driver that misses
// a deadline is given up on (the thread is left behind, the library never
// unloaded) so a wedged GPU never stalls a sample. Unlike nvml.cc (one scan,
// then shutdown) the session stays open: nvmlInit costs tens of milliseconds
// on real drivers. A device whose memory call is NOT_SUPPORTED or reports
// total 0 has unified memory (GH200, Jetson): its allocations are host RAM.
#include "sources/gpu.h"

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
constexpr auto kInitDeadline = std::chrono::seconds(5), kReadDeadline = std::chrono::seconds(2);

struct Api : nvml::Api {
  int procs_version = 3;  // newest process-list version still worth trying
};

GpuReading read_all(Api& api) {
  Reading r = read_devices(api, api.procs_version);
  GpuReading out;
  for (DeviceReading& d : r.devices) {
    GpuSample& g = out.gpus.emplace_back();
    g.index = d.index;
    g.name = std::move(d.name);
    g.uuid = std::move(d.uuid);
    if (d.memory_result == kSuccess && d.memory.total > 0) {
      g.total = d.memory.total;
      g.used = d.memory.used;
    } else if (d.memory_result == kSuccess || d.memory_result == kNotSupported) {
      g.unified = true;
    }
  }
  for (const ProcessReading& p : r.processes) {
    GpuProcessSample& gp = out.processes.emplace_back();
    gp.gpu = p.gpu;
    gp.pid = static_cast<int>(p.pid);
    gp.used = p.used == kNotAvailable ? 0 : p.used;  // N/A under MIG and WDDM: listed, no size
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
  // Absent NVML is normal: open_api fails only for AIMEM_NVML_LIBRARY.
  auto opened = open_api(api);
  if (!opened) problem = opened.error().message;
  if (opened && *opened) {
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
