// NVIDIA GPUs through NVML, loaded with dlopen so the binary runs on hosts
// without a driver (absent NVML is normal, not an error). AIMEM_NVML_LIBRARY
// names another library (tests use a stand-in with scripted values). Structs
// are declared here, as nvtop does, so there is no build dependency on nvml.h;
// the process-list functions are tried newest first (_v3, _v2, v1) because
// their struct layouts differ across drivers (nvitop#75). The whole scan runs
// with a deadline: a wedged driver must not hang the diagnosis.

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <fmt/format.h>

#include "core/units.h"
#include "sources/live.h"
#include "sources/nvml_types.h"

namespace aimem {
namespace {

using namespace nvml;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;

const unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

GpuScan scan(FactSink& sink) {
  GpuScan result;
  Api api;
  if (!open_api(api, &result.problem)) {
    if (result.problem.empty()) result.problem = "no NVIDIA driver (libnvidia-ml.so.1 not found): GPU memory not checked";
    return result;
  }
  // Both the _v3 and the _v2 process lists fill the v2 struct.
  ProcsV2Fn procs_v2 = api.procs_v3 ? api.procs_v3 : api.procs_v2;
  auto err = [&](nvmlReturn_t r) { return api.error ? std::string(api.error(r)) : fmt::format("NVML error {}", r); };
  if (!api.init || !api.count || !api.by_index || !api.memory) {
    result.problem = "NVML library lacks nvmlInit / nvmlDeviceGetCount / nvmlDeviceGetMemoryInfo";
    return result;  // the handle stays loaded: unloading a half-used driver library is not safe
  }
  if (nvmlReturn_t r = api.init(); r != NVML_SUCCESS) {
    result.problem = "NVML did not initialise: " + err(r);
    return result;
  }
  result.library = true;
  unsigned n = 0;
  api.count(&n);
  result.devices = n;
  for (unsigned i = 0; i < n && i < 64; ++i) {
    nvmlDevice_t dev = nullptr;
    if (api.by_index(i, &dev) != NVML_SUCCESS) continue;
    char name[96] = {0};
    if (api.name) api.name(dev, name, sizeof name - 1);
    nvmlMemory_t mem{};
    Fact f;
    f.kind = FactKind::gpu_state;
    f.family = Family::nvidia;
    f.where.source = "NVML";
    f.gpu = static_cast<int>(i);
    f.process = name;
    nvmlReturn_t mr = api.memory(dev, &mem);
    if (mr == NVML_SUCCESS && mem.total > 0) {
      f.total = mem.total;
      f.usage = mem.used;
      f.free = mem.free;
    } else {
      f.detail = "memory not reported (unified-memory GPU: its memory is host RAM)";
    }
    // Per-process use.
    unsigned cnt = 0;
    uint64_t sum = 0;
    if (procs_v2) {
      std::vector<ProcV2> procs(64);
      cnt = static_cast<unsigned>(procs.size());
      nvmlReturn_t r = procs_v2(dev, &cnt, procs.data());
      if (r == NVML_ERROR_INSUFFICIENT_SIZE && cnt < 4096) {
        procs.resize(cnt + 8);
        cnt = static_cast<unsigned>(procs.size());
        r = procs_v2(dev, &cnt, procs.data());
      }
      if (r != NVML_SUCCESS) cnt = 0;
      for (unsigned k = 0; k < cnt && k < procs.size(); ++k)
        if (procs[k].usedGpuMemory != kNotAvailable) sum += procs[k].usedGpuMemory;
    } else if (api.procs_v1) {
      std::vector<ProcV1> procs(64);
      cnt = static_cast<unsigned>(procs.size());
      if (api.procs_v1(dev, &cnt, procs.data()) != NVML_SUCCESS) cnt = 0;
      for (unsigned k = 0; k < cnt && k < procs.size(); ++k)
        if (procs[k].usedGpuMemory != kNotAvailable) sum += procs[k].usedGpuMemory;
    }
    f.count = cnt;
    f.text = fmt::format("GPU {} {}: {} used of {}, {} compute processes", i, name, f.usage ? units::format_bytes(*f.usage) : "?",
                         f.total ? units::format_bytes(*f.total) : "?", cnt);
    sink.add(std::move(f));
  }
  if (api.shutdown) api.shutdown();
  return result;
}

// Facts produced on the NVML thread, handed over only if it finished in time.
class Buffer final : public FactSink {
 public:
  void add(Fact f) override { facts.push_back(std::move(f)); }
  std::vector<Fact> facts;
};

}  // namespace

GpuScan scan_gpus(FactSink& sink) {
  auto buffer = std::make_shared<Buffer>();
  auto task = std::make_shared<std::packaged_task<GpuScan()>>([buffer] { return scan(*buffer); });
  auto future = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    GpuScan r;
    r.problem = "NVML did not answer within 5 s (driver busy or wedged): GPU memory not checked";
    return r;
  }
  GpuScan r = future.get();
  for (auto& f : buffer->facts) sink.add(std::move(f));
  return r;
}

}  // namespace aimem
